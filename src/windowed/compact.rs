//! Generations grown by segments (`bloomrsWC`, `BF.RESERVE ... COMPACT WINDOW`): each is a
//! compact filter (`src/compact/`) at the generation's share of the rate, starting at one
//! segment and splitting one segment at a time, so a generation's memory follows the items
//! it holds whatever the feed's rate; its error bound holds at every size, so the window's
//! holds at every rate. Every generation places items by the window's secret (chosen on the
//! primary when the window is created), so one hash of an item serves every generation.

use std::borrow::Cow;

use super::generation::Generation;
use super::WindowParams;
use crate::bloom::{AddError, ChunkError, CreateError, HeaderError, ItemHash};
use crate::budget::Budget;
use crate::compact::segments::{self, size_class, SEGMENTS_HEADER};
use crate::compact::{CompactFilter, MIN_ERROR};
use crate::rdb::{LoadError, RdbRead, RdbWrite};

/// The segment filter of a complete generation, or its fields while its chunks arrive.
fn fields(filter: &CompactFilter) -> Option<segments::Fields> {
    match filter {
        CompactFilter::Segments(f) => Some(f.fields()),
        CompactFilter::Arriving(a) => Some(a.filter().fields()),
        CompactFilter::Older(_) => None,
    }
}

impl Generation for CompactFilter {
    const MAGIC: &'static [u8; 8] = b"bloomrsV";
    const ENCODING_VERSION: i32 = 1;
    const KEYED: bool = true;
    /// The slot number beside each generation in the ring (the filter's own struct is in
    /// its bytes).
    const GENERATION_OVERHEAD: u64 = 8;

    fn window_overhead() -> u64 {
        size_class(std::mem::size_of::<super::Window<CompactFilter>>() as u64)
    }

    fn hash(item: &[u8]) -> ItemHash {
        // A keyed placement mixes the first hash alone (the validator insists on a secret).
        ItemHash {
            a: ItemHash::first(item),
            b: 0,
        }
    }

    fn check_params(params: &WindowParams) -> Result<(), &'static str> {
        if !params.scaling {
            return Err("compact generations grow");
        }
        if params.generation_error() < MIN_ERROR {
            return Err("error rate tighter than a compact generation holds");
        }
        Ok(())
    }

    fn build(params: &WindowParams, secret: u64, room: u64) -> Result<Self, CreateError> {
        if secret == 0 {
            return Err(CreateError::Invalid);
        }
        CompactFilter::new(params.generation_error(), false, secret, room)
    }

    fn size_for(params: &WindowParams) -> Result<u64, CreateError> {
        let (items, error) = (params.generation_capacity(), params.generation_error());
        crate::compact::size_for(items, error, false)
    }

    #[inline]
    fn contains_hash(&self, hash: ItemHash) -> bool {
        self.segments().is_some_and(|f| f.contains_hash(hash))
    }

    fn add_hash(&mut self, hash: ItemHash, budget: impl Budget) -> Result<bool, AddError> {
        match self {
            CompactFilter::Segments(f) => f.add_hash(hash, budget),
            // Its segments are still arriving (a window never holds another encoding).
            _ => Err(AddError::Loading),
        }
    }

    fn is_loaded(&self) -> bool {
        CompactFilter::is_loaded(self)
    }
    fn items(&self) -> u64 {
        self.len()
    }
    fn capacity(&self) -> u64 {
        CompactFilter::capacity(self)
    }
    fn filters(&self) -> u64 {
        1
    }
    fn bytes(&self) -> u64 {
        CompactFilter::bytes(self)
    }

    fn check_shape(&self, params: &WindowParams, secret: u64) -> Result<(), LoadError> {
        let fields = fields(self).ok_or(LoadError::Invalid("generation of another encoding"))?;
        if fields.error != params.generation_error() || fields.deletable {
            return Err(LoadError::Invalid("generation sized for another window"));
        }
        if secret == 0 || fields.secret != secret {
            return Err(LoadError::Invalid("generation placed by another secret"));
        }
        Ok(())
    }

    fn save(&self, w: &mut impl RdbWrite) {
        CompactFilter::save(self, w);
    }

    fn load(r: &mut impl RdbRead, max_bytes: u64) -> Result<Self, LoadError> {
        let filter = CompactFilter::load(r, crate::compact::ENCODING_VERSION, max_bytes)?;
        fields(&filter).ok_or(LoadError::Invalid("generation of another encoding"))?;
        Ok(filter)
    }

    fn encode_header(&self) -> Vec<u8> {
        CompactFilter::encode_header(self)
    }

    fn from_header(header: &[u8], max_bytes: u64) -> Result<Self, HeaderError> {
        if segments::header_version(header) != Some(SEGMENTS_HEADER) {
            return Err(HeaderError::BadData);
        }
        CompactFilter::from_header(header, max_bytes)
    }

    fn span(&self) -> u64 {
        match self {
            CompactFilter::Segments(f) => f.segments(),
            _ => fields(self).map_or(0, |f| (1u64 << f.level.min(63)) + f.pointer),
        }
    }

    /// Segments in the chunk: each is its word count (u32) then its words.
    fn positions(data: &[u8]) -> Option<u64> {
        let mut rest = data;
        let mut segments = 0u64;
        while let Some((count, after)) = rest.split_first_chunk::<4>() {
            let bytes = usize::try_from(u32::from_le_bytes(*count))
                .ok()?
                .checked_mul(8)?;
            rest = after.get(bytes..)?;
            segments += 1;
        }
        rest.is_empty().then_some(segments)
    }

    fn chunk_at(&self, iter: i64) -> Option<(i64, Cow<'_, [u8]>)> {
        CompactFilter::chunk_at(self, iter)
    }

    fn load_chunk(&mut self, iter: i64, data: &[u8], max_bytes: u64) -> Result<(), ChunkError> {
        CompactFilter::load_chunk(self, iter, data, max_bytes)
    }
}
