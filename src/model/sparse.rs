//! Sparse filters (`bf-sparse-max-bytes`): the items' hash pairs until the sparse form would be
//! larger than its limit, then promoted to the dense chain the commands keep adding to, as the
//! server's sparse kind does. Its SCANDUMP is the dense chain's (what RedisBloom can load), its
//! AOF rewrite its own chunks: both must load back what it is.

use super::codec::{chunks_round_trip, decode_value, Codec};
use super::{rdb_round_trip, Kind, Params};
use crate::bloom::Chain;
use crate::sparse::{Added, Sparse};

/// The setting a decoded value runs under.
const DEFAULT_LIMIT: u64 = 2048;

#[derive(Debug, Clone, PartialEq)]
pub enum Form {
    Sparse(Sparse),
    Dense(Chain),
}

/// A sparse filter and the `bf-sparse-max-bytes` it runs under; `variant` bit 0 makes it
/// non-scaling, bits 1-2 pick the limit.
#[derive(Debug, Clone, PartialEq)]
pub struct SparseKind {
    pub form: Form,
    pub limit: u64,
}

impl SparseKind {
    fn with(&self, form: Form) -> Self {
        SparseKind {
            form,
            limit: self.limit,
        }
    }
}

impl Kind for SparseKind {
    const NAME: &'static str = "sparse";

    fn create(p: &Params, max_bytes: u64) -> Option<Self> {
        const LIMITS: [u64; 4] = [DEFAULT_LIMIT, 256, 1 << 16, 96];
        let limit = LIMITS[usize::from(p.variant >> 1 & 3)];
        let scaling = p.variant & 1 == 0;
        let sparse = Sparse::create(p.capacity, p.error, p.expansion, scaling, limit, max_bytes);
        let form = match sparse.ok()? {
            Some(sparse) => Form::Sparse(sparse),
            // Not even the empty sparse form fits: the server creates the chain.
            None => {
                Form::Dense(Chain::new(p.capacity, p.error, p.expansion, scaling, max_bytes).ok()?)
            }
        };
        Some(SparseKind { form, limit })
    }
    fn decode(data: &[u8], max_bytes: u64) -> Option<Self> {
        let form = Form::Sparse(decode_value(data, max_bytes)?);
        Some(SparseKind {
            form,
            limit: DEFAULT_LIMIT,
        })
    }
    fn reload(&self, max_bytes: u64) -> Result<Self, String> {
        match &self.form {
            Form::Sparse(s) => rdb_round_trip(s, max_bytes).map(|s| self.with(Form::Sparse(s))),
            Form::Dense(c) => rdb_round_trip(c, max_bytes).map(|c| self.with(Form::Dense(c))),
        }
    }
    /// The AOF rewrite's chunks (the sparse form's own) loaded back.
    fn redump(&self, max_bytes: u64) -> Result<Self, String> {
        match &self.form {
            Form::Sparse(s) => chunks_round_trip(s, max_bytes).map(|s| self.with(Form::Sparse(s))),
            Form::Dense(c) => chunks_round_trip(c, max_bytes).map(|c| self.with(Form::Dense(c))),
        }
    }
    fn add(&mut self, item: &[u8], _now_ms: u64, max_bytes: u64) -> bool {
        match &mut self.form {
            Form::Dense(chain) => chain.add(item, max_bytes).is_ok(),
            Form::Sparse(sparse) => {
                let most = sparse.max_items(self.limit).unwrap_or(0);
                match sparse.add(item, most) {
                    Added::New | Added::Present => true,
                    // The promoted chain takes the key's place and the add goes on there.
                    // When the chain refuses the item (a full non-scaling filter) the server
                    // keeps the chain all the same, which holds the same items (`check`);
                    // the model keeps the sparse form, so that a refused add changes nothing.
                    Added::Promote => {
                        let Ok(mut chain) = sparse.promote(max_bytes) else {
                            return false;
                        };
                        let added = chain.add(item, max_bytes).is_ok();
                        if added {
                            self.form = Form::Dense(chain);
                        }
                        added
                    }
                }
            }
        }
    }
    fn contains(&self, item: &[u8], _now_ms: u64) -> bool {
        match &self.form {
            Form::Sparse(sparse) => sparse.contains(item),
            Form::Dense(chain) => chain.contains(item),
        }
    }
    fn bytes(&self) -> u64 {
        match &self.form {
            Form::Sparse(sparse) => sparse.bytes(),
            Form::Dense(chain) => chain.reported_bytes(),
        }
    }
    /// The sparse form's check builds the dense chain twice, one probe per hash function per
    /// item each time: at a tiny error rate (a thousand hash functions) that is far more than
    /// its bytes.
    fn check_cost(&self) -> u64 {
        match &self.form {
            Form::Sparse(sparse) => {
                let hashes = <Chain>::first_link(
                    sparse.capacity,
                    sparse.error,
                    sparse.is_scaling(),
                    u64::MAX,
                )
                .map_or(0, |(_, shape)| u64::from(shape.hashes));
                sparse
                    .bytes()
                    .max(sparse.len().saturating_mul(hashes).saturating_mul(2))
            }
            Form::Dense(chain) => chain.reported_bytes(),
        }
    }
    /// BF.SCANDUMP of the sparse form (the dense chain's header and chunks, built from the
    /// hash pairs) loads as exactly the chain it promotes to.
    fn check(&self, max_bytes: u64) -> Result<(), String> {
        let Form::Sparse(sparse) = &self.form else {
            return Ok(());
        };
        let Ok(promoted) = sparse.promote(max_bytes) else {
            return Ok(());
        };
        let mut loaded = <Chain as Codec>::from_header(&sparse.dense_header(), max_bytes)
            .ok_or("LOADCHUNK refused the dense header of a sparse filter")?;
        let mut iter = 1;
        while let Some((next, bytes)) = sparse.dense_chunk_at(iter, max_bytes).ok().flatten() {
            if loaded.load_chunk(next, &bytes).is_err() {
                return Err(format!("LOADCHUNK refused a dense chunk (iterator {next})"));
            }
            iter = next;
        }
        if loaded != promoted {
            return Err("the dense SCANDUMP of a sparse filter is not its promotion".into());
        }
        Ok(())
    }
}
