//! Generations grown by segments (`bloomrsWC`, `BF.RESERVE ... COMPACT WINDOW`): each is a
//! compact filter (`src/compact/`) at the generation's share of the rate, starting at one
//! segment and splitting one segment at a time, so a generation's memory follows the items
//! it holds whatever the feed's rate; its error bound holds at every size, so the window's
//! holds at every rate. Every generation places items by the window's secret (chosen on the
//! primary when the window is created), so one hash of an item serves every generation.
//!
//! Until its first split a generation is held in its fewest fields (`OneSegment`: the
//! segment, the secret and two counts; its rate is the window's share); once split, as the
//! whole compact filter, boxed. Both save, dump and answer alike: the form held is not in any
//! byte written.

use std::borrow::Cow;

use super::generation::Generation;
use super::Share;
use super::WindowParams;
use crate::bloom::{AddError, ChunkError, CreateError, HeaderError, ItemHash};
use crate::budget::Budget;
use crate::compact::segments::{self, size_class, OneSegment, Segmented, SEGMENTS_HEADER};
use crate::compact::{CompactFilter, MIN_ERROR};
use crate::rdb::{LoadError, RdbRead, RdbWrite};

/// A window's generation: one segment in its fewest fields until it splits, then the whole
/// compact filter.
#[derive(Debug, Clone, PartialEq)]
pub enum CompactGeneration {
    One(OneSegment),
    Filter(Box<CompactFilter>),
}

/// Bytes of a generation's place in the ring (a one-segment generation's fields).
const HELD: u64 = std::mem::size_of::<CompactGeneration>() as u64;

/// Bytes a held generation takes besides its filter's own count of them (which counts the
/// filter's fields where they lie inline): the generation's own fields, and the box's size
/// class past the filter's fields.
const BOXED_EXTRA: u64 = HELD + size_class(std::mem::size_of::<CompactFilter>() as u64)
    - std::mem::size_of::<CompactFilter>() as u64;

impl CompactGeneration {
    /// Held in its fewest fields when it is one segment at the window's share of the rate
    /// (a generation at another rate stays whole, for the validator to refuse).
    fn settle(filter: CompactFilter, params: &WindowParams) -> CompactGeneration {
        match filter {
            CompactFilter::Segments(f) => match f.into_one(params.generation_error()) {
                Ok(one) => CompactGeneration::One(one),
                Err(f) => CompactGeneration::Filter(Box::new(CompactFilter::Segments(f))),
            },
            other => CompactGeneration::Filter(Box::new(other)),
        }
    }

    /// The compact filter it stands for in a window of `params` (a copy of one segment at
    /// most).
    pub fn filter(&self, params: &WindowParams) -> Cow<'_, CompactFilter> {
        match self {
            CompactGeneration::One(one) => {
                let filter = one.filter(params.generation_error());
                Cow::Owned(CompactFilter::Segments(filter))
            }
            CompactGeneration::Filter(f) => Cow::Borrowed(f),
        }
    }

    /// Moves its heap blocks (active defragmentation).
    pub fn for_each_block(&mut self, mut relocate: impl FnMut(crate::compact::Block<'_>)) {
        match self {
            CompactGeneration::One(one) => {
                one.relocate(|words| relocate(crate::compact::Block::Words(words)))
            }
            CompactGeneration::Filter(f) => f.for_each_block(relocate),
        }
    }
}

/// The segment filter of a complete generation, or its fields while its chunks arrive.
fn fields(filter: &CompactFilter) -> Option<segments::Fields> {
    match filter {
        CompactFilter::Segments(f) => Some(f.fields()),
        CompactFilter::Arriving(a) => Some(a.filter().fields()),
        CompactFilter::Older(_) => None,
    }
}

impl Generation for CompactGeneration {
    const MAGIC: &'static [u8; 8] = b"bloomrsV";
    const ENCODING_VERSION: i32 = 1;
    const KEYED: bool = true;
    /// The slot number beside each generation in the ring (the generation's own fields are
    /// in its bytes).
    const GENERATION_OVERHEAD: u64 = 8;

    fn window_overhead() -> u64 {
        size_class(std::mem::size_of::<super::Window<CompactGeneration>>() as u64)
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
        // Room for the generation as it will be held once split.
        let room = room.checked_sub(BOXED_EXTRA).ok_or(CreateError::TooLarge)?;
        let filter = CompactFilter::new(params.generation_error(), false, secret, room)?;
        Ok(CompactGeneration::settle(filter, params))
    }

    fn size_for(params: &WindowParams) -> Result<u64, CreateError> {
        let (items, error) = (params.generation_capacity(), params.generation_error());
        let bytes = crate::compact::size_for(items, error, false)?;
        Ok(match items <= segments::split_items(error) {
            true => bytes - segments::OVERHEAD + HELD,
            false => bytes + BOXED_EXTRA,
        })
    }

    #[inline]
    fn contains_hash(&self, hash: ItemHash) -> bool {
        match self {
            CompactGeneration::One(one) => one.contains_hash(hash),
            CompactGeneration::Filter(f) => f.segments().is_some_and(|f| f.contains_hash(hash)),
        }
    }

    fn add_hash(
        &mut self,
        hash: ItemHash,
        params: &WindowParams,
        budget: impl Budget,
    ) -> Result<bool, AddError> {
        // The filter counts its fields as if inline: the rest of what it would take once
        // split and boxed is asked of the budget too.
        let budget = Share {
            budget,
            others: BOXED_EXTRA,
        };
        match self {
            CompactGeneration::Filter(f) => match f.as_mut() {
                CompactFilter::Segments(f) => f.add_hash(hash, budget),
                // Its segments are still arriving (a window never holds another encoding).
                _ => Err(AddError::Loading),
            },
            CompactGeneration::One(one) => {
                let mut filter: Segmented = one.take().inflate(params.generation_error());
                let added = filter.add_hash(hash, budget);
                *self = CompactGeneration::settle(CompactFilter::Segments(filter), params);
                added
            }
        }
    }

    fn is_loaded(&self) -> bool {
        match self {
            CompactGeneration::One(_) => true,
            CompactGeneration::Filter(f) => f.is_loaded(),
        }
    }
    fn items(&self) -> u64 {
        match self {
            CompactGeneration::One(one) => one.len(),
            CompactGeneration::Filter(f) => f.len(),
        }
    }
    fn capacity(&self, params: &WindowParams) -> u64 {
        match self {
            CompactGeneration::One(_) => segments::split_items(params.generation_error()),
            CompactGeneration::Filter(f) => f.capacity(),
        }
    }
    fn filters(&self) -> u64 {
        1
    }
    fn bytes(&self) -> u64 {
        match self {
            CompactGeneration::One(one) => HELD + one.segment_bytes(),
            CompactGeneration::Filter(f) => f.bytes() + BOXED_EXTRA,
        }
    }

    fn check_shape(&self, params: &WindowParams, secret: u64) -> Result<(), LoadError> {
        let filter = self.filter(params);
        let fields = fields(&filter).ok_or(LoadError::Invalid("generation of another encoding"))?;
        if fields.error != params.generation_error() || fields.deletable {
            return Err(LoadError::Invalid("generation sized for another window"));
        }
        if secret == 0 || fields.secret != secret {
            return Err(LoadError::Invalid("generation placed by another secret"));
        }
        Ok(())
    }

    fn save(&self, params: &WindowParams, w: &mut impl RdbWrite) {
        self.filter(params).save(w);
    }

    fn load(
        r: &mut impl RdbRead,
        params: &WindowParams,
        max_bytes: u64,
    ) -> Result<Self, LoadError> {
        let filter = CompactFilter::load(r, crate::compact::ENCODING_VERSION, max_bytes)?;
        fields(&filter).ok_or(LoadError::Invalid("generation of another encoding"))?;
        Ok(CompactGeneration::settle(filter, params))
    }

    fn encode_header(&self, params: &WindowParams) -> Vec<u8> {
        self.filter(params).encode_header()
    }

    fn from_header(
        header: &[u8],
        params: &WindowParams,
        max_bytes: u64,
    ) -> Result<Self, HeaderError> {
        if segments::header_version(header) != Some(SEGMENTS_HEADER) {
            return Err(HeaderError::BadData);
        }
        let filter = CompactFilter::from_header(header, max_bytes)?;
        Ok(CompactGeneration::settle(filter, params))
    }

    fn span(&self) -> u64 {
        match self {
            CompactGeneration::One(_) => 1,
            CompactGeneration::Filter(f) => match f.as_ref() {
                CompactFilter::Segments(f) => f.segments(),
                other => fields(other).map_or(0, |f| (1u64 << f.level.min(63)) + f.pointer),
            },
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

    fn chunk_at(
        &self,
        params: &WindowParams,
        iter: i64,
        limit: u64,
    ) -> Option<(i64, Cow<'_, [u8]>)> {
        match self {
            CompactGeneration::One(one) => {
                let filter = CompactFilter::Segments(one.filter(params.generation_error()));
                let (next, bytes) = filter.chunk_within(iter, limit)?;
                Some((next, Cow::Owned(bytes.into_owned())))
            }
            CompactGeneration::Filter(f) => f.chunk_within(iter, limit),
        }
    }

    fn load_chunk(
        &mut self,
        params: &WindowParams,
        iter: i64,
        data: &[u8],
        max_bytes: u64,
    ) -> Result<(), ChunkError> {
        // A generation of one segment is complete: no chunk continues it.
        let CompactGeneration::Filter(f) = self else {
            return Err(ChunkError::NoLink);
        };
        f.load_chunk(iter, data, max_bytes)?;
        if f.is_loaded() {
            let held = std::mem::replace(self, CompactGeneration::One(OneSegment::stand_in()));
            if let CompactGeneration::Filter(f) = held {
                *self = CompactGeneration::settle(*f, params);
            }
        }
        Ok(())
    }
}
