//! The sparse kind (`bloomrsSP`): a Bloom filter that keeps its items' hash pairs until it
//! would be larger than its dense chain (`src/sparse/`), as the `BF.*` commands see
//! it through [`BloomValue`], and `BF.PROMOTE`.
//!
//! The primary decides the encoding and the promotion; replicas and AOF replay follow its
//! effects whatever their own `bf-sparse-max-bytes` says:
//! - a sparse filter is created on the replica by `BF.LOADCHUNK key 1 <sparse header>` (in
//!   place of `BF.RESERVE`, which a replica always makes dense);
//! - adds that stay sparse replicate verbatim (a replica's limit is never below the primary's,
//!   so it promotes no earlier);
//! - a command that promotes replicates as `BF.MADD` of the items applied before the
//!   promotion, `BF.PROMOTE`, then `BF.MADD` of the items applied after it.

use std::borrow::Cow;

use redis_module::native_types::RedisType;

use super::{digest, lookup, store, BloomKind, BloomValue, Chunk, Info, Write};
use crate::bloom::{format_g, AddError, ChunkError, CreateError, HeaderError};
use crate::budget::Budget;
use crate::module::ffi::io::{emit_loadchunk, value_ref, Digest};
use crate::module::ffi::{guard, Args, Ctx, RawString, Slot};
use crate::module::state::errors::{CommandError, CommandResult, NOT_FOUND, WRONG_TYPE};
use crate::module::state::settings;
use crate::module::state::stats::{Measure, Measured, Totals, BLOOM};
use crate::module::types::{callbacks, filter_value};
use crate::sparse::{Added, Sparse};
use crate::syntax::bf::BloomOptions;

pub static SPARSE_TYPE: RedisType = RedisType::new(
    "bloomrsSP",
    crate::sparse::ENCODING_VERSION,
    callbacks::<Sparse>(Some(aof_rewrite), Some(digest::<Sparse>)),
);

filter_value!(Sparse, "a sparse Bloom filter", |value, defrag| defrag
    .vec(value.hashes_for_relocation()));

impl Measured for Sparse {
    fn measure(&self) -> Measure {
        Measure {
            values: 1,
            bytes: i64::try_from(self.bytes()).unwrap_or(i64::MAX),
            items: i64::try_from(self.len()).unwrap_or(i64::MAX),
            filters: 1,
        }
    }
    fn totals() -> &'static Totals {
        &BLOOM
    }
}

/// The most items this command may leave in the sparse form: the primary's setting, or (on a
/// replica and in AOF replay, which follow the primary's effects) only the form's own limits.
fn limit(write: &Write) -> u64 {
    match settings::bf_sparse_max_bytes() {
        0 => u64::MAX,
        _ if write.replayed() => u64::MAX,
        bytes => bytes,
    }
}

/// The most bytes the dense chain of a promotion may take. It is allocated while the sparse
/// form still exists (freed only once the chain takes the key's place), so it must fit what
/// memory allows on its own, as a new filter does, not on top of the sparse form's bytes.
fn promotion_limit(admission: &impl Budget) -> u64 {
    admission.limit(0)
}

impl Sparse {
    /// Promotes on the item that did not fit (the `answered`-th of the command), then adds it
    /// and the rest to the chain, which takes the key's place; replicates the promotion at
    /// exactly this point (the items around it are the command's, see `Write::finish`).
    fn promote_and_add(
        &self,
        first: &[u8],
        rest: &mut dyn Iterator<Item = &[u8]>,
        answered: usize,
        write: &mut Write,
        answer: &mut dyn FnMut(Result<bool, AddError>) -> bool,
    ) {
        let Ok(mut chain) = self.promote(promotion_limit(&write.admission)) else {
            // The dense chain does not fit the per-filter limit: like a failed scale-out,
            // every new item fails and the filter stays sparse.
            if answer(Err(AddError::CannotGrow)) {
                for item in rest {
                    let outcome = if self.contains(item) {
                        Ok(false)
                    } else {
                        Err(AddError::CannotGrow)
                    };
                    if !answer(outcome) {
                        break;
                    }
                }
            }
            return;
        };
        write.effect_after(answered, c"BF.PROMOTE", Vec::new());
        if answer(chain.add(first, write.admission)) {
            chain.add_each(rest, write.admission, answer);
        }
        write.replacement = Some(Box::new(chain));
    }
}

impl BloomValue for Sparse {
    fn add_each(
        &mut self,
        items: &mut dyn Iterator<Item = &[u8]>,
        write: &mut Write,
        answer: &mut dyn FnMut(Result<bool, AddError>) -> bool,
    ) {
        let most = self.max_items(limit(write)).unwrap_or(0);
        let mut answered = 0;
        while let Some(item) = items.next() {
            let new = match self.add(item, most) {
                Added::New => true,
                Added::Present => false,
                Added::Promote => {
                    return self.promote_and_add(item, items, answered, write, answer);
                }
            };
            answered += 1;
            if !answer(Ok(new)) {
                return;
            }
        }
    }

    fn contains_each(&self, items: &mut dyn Iterator<Item = &[u8]>, answer: &mut dyn FnMut(bool)) {
        for item in items {
            answer(self.contains(item));
        }
    }

    fn card(&self) -> u64 {
        self.len()
    }

    /// A sparse filter answers from its items' 128-bit hashes: exactly, but for collisions.
    fn estimated_rate(&self) -> f64 {
        0.0
    }

    fn info(&self) -> Info {
        Info {
            capacity: self.dense_capacity(),
            size: self.bytes(),
            filters: 1,
            items: self.len(),
            expansion: self.is_scaling().then_some(self.growth),
            extra: Vec::new(),
        }
    }

    fn debug_lines(&self) -> Vec<String> {
        vec![format!(
            "encoding:sparse bytes:{} hashes:{} capacity:{} dense-bytes:{} ratio:{}",
            self.bytes(),
            self.len(),
            self.dense_capacity(),
            self.dense_bytes(),
            format_g(self.error)
        )]
    }

    /// The dense chain's header and chunks, so that RedisBloom can load the dump; each chunk
    /// is built alone from the hash pairs, within the memory limits.
    fn header(&self) -> Vec<u8> {
        self.dense_header()
    }

    /// SCANDUMP's dense form (the AOF rewrite writes the sparse form itself, in its own
    /// chunks): the limit does not apply.
    fn chunk_at(
        &self,
        iter: i64,
        max_bytes: u64,
        _limit: u64,
    ) -> Result<Option<Chunk<'_>>, CreateError> {
        let chunk = self.dense_chunk_at(iter, max_bytes)?;
        Ok(chunk.map(|(next, bytes)| (next, Cow::Owned(bytes))))
    }

    fn load_chunk(&mut self, iter: i64, data: &[u8], max_bytes: u64) -> Result<(), ChunkError> {
        Sparse::load_chunk(self, iter, data, max_bytes)
    }

    fn digest(&self, digest: &mut Digest) {
        for number in [
            self.capacity,
            self.error.to_bits(),
            u64::from(self.growth),
            u64::from(self.options),
        ] {
            digest.add_int(number);
        }
        for hash in self.hashes() {
            digest.add_int(hash.a);
            digest.add_int(hash.b);
        }
    }
}

impl BloomKind for Sparse {
    const TYPE: &'static RedisType = &SPARSE_TYPE;
    const MAGIC: Option<&'static [u8]> = Some(crate::sparse::MAGIC);
    const ANNOUNCES: bool = true;

    /// Takes the options of a filter without a window, counters or COMPACT when a client of the primary
    /// creates one while `bf-sparse-max-bytes` is set, and the sparse form is smaller (refused
    /// as the chain would be). Queues `BF.LOADCHUNK key 1 <header>`, which makes a replica
    /// build the same sparse value (`BF.RESERVE` always makes it dense there).
    fn create(options: &BloomOptions, write: &mut Write) -> Result<Option<Self>, CreateError> {
        let limit = settings::bf_sparse_max_bytes();
        let plain = options.window.is_none() && !options.counting && !options.compact;
        if !plain || write.replayed() || limit == 0 {
            return Ok(None);
        }
        let o = options;
        let max_bytes = write.admission.limit(0);
        let sparse = Sparse::create(o.capacity, o.error, o.growth, o.scaling, limit, max_bytes)?;
        if let Some(sparse) = &sparse {
            write.effect(c"BF.LOADCHUNK", vec![b"1".to_vec(), sparse.encode_header()]);
        }
        Ok(sparse)
    }

    fn from_header(header: &[u8], max_bytes: u64) -> Result<Self, HeaderError> {
        Sparse::from_header(header, max_bytes)
    }
}

/// AOF rewrite keeps the sparse form: its own header, then the hash pairs in chunks of at most
/// 16 MiB (SCANDUMP, by contrast, returns the dense chain's chunks for RedisBloom).
///
/// # Safety
/// Called by Redis with a live AOF handle, the key name and a value of this type.
unsafe extern "C" fn aof_rewrite(
    io: *mut redis_module::raw::RedisModuleIO,
    key: RawString,
    value: *mut std::ffi::c_void,
) {
    guard((), || {
        if let Some(sparse) = value_ref::<Sparse>(value) {
            emit_loadchunk(io, c"BF.LOADCHUNK", key, 1, &sparse.encode_header());
            for (iter, bytes) in sparse.chunks() {
                emit_loadchunk(io, c"BF.LOADCHUNK", key, iter, &bytes);
            }
        }
    })
}

/// BF.PROMOTE key: makes a sparse filter dense now (1), or leaves any other Bloom filter as
/// it is (0). The primary propagates it at the point of every promotion; run on every sparse
/// key (`SCAN 0 TYPE bloomrsSP`) it makes the next save RedisBloom's format again.
pub fn promote(ctx: Ctx, args: Args) -> CommandResult {
    args.exactly(2)?;
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, true);
    let admission = ctx.admission();
    let chain = match key.slot::<Sparse>(&SPARSE_TYPE) {
        Slot::Ours(sparse) => sparse.promote(promotion_limit(&admission))?,
        Slot::Empty => return Err(NOT_FOUND.into()),
        Slot::WrongType => {
            return match lookup(&mut key) {
                Slot::Ours(_) => {
                    ctx.reply_int(0);
                    Ok(())
                }
                _ => Err(WRONG_TYPE.into()),
            };
        }
    };
    store(&mut key, chain);
    ctx.reply_int(1);
    ctx.replicate_verbatim();
    ctx.notify(c"bf.promote", key_name);
    Ok(())
}
