//! The compact kind's value: a filter grown by segments (`segments`), or one arriving by
//! LOADCHUNK, in encoding 4's chunks or in an older encoding's (a doubling table), or an
//! older value kept as it is. An older value is converted to segments when its last byte
//! arrives if that fits one command's bound (`CONVERT_SLOTS`); otherwise, or when it cannot
//! be converted (one quotient crowded past a segment's bound), it is kept for good and
//! answers as the doubling table it is (`settled`). RDB encoding 4 stores either form,
//! after a tag.

use std::borrow::Cow;

use super::segments::{self, Arrival, Loaded, Segmented, SEGMENTS_HEADER};
use super::{Compact, DeleteError, DOUBLING_ENCODING};
use crate::bloom::{AddError, ChunkError, CreateError, HeaderError};
use crate::budget::Budget;
use crate::rdb::{LoadError, RdbRead, RdbWrite};

/// Encoding 4: a segment filter (older encodings, 1 to 3, still load, converted one way).
pub const ENCODING_VERSION: i32 = 4;
/// The most slots (both tables') of an older value converted to segments in the command
/// (or load) that completes it: the conversion reads every slot and codes every entry, so
/// this keeps it within the work one add may do (`model::compact`'s bound, about 33,000
/// entries). A larger value is kept as it is.
pub const CONVERT_SLOTS: u64 = 1 << 13;
/// RDB tags of encoding 4's forms.
const SEGMENT_FORM: u64 = 0;
const OLDER_FORM: u64 = 1;

/// A compact filter, as a key holds it.
#[derive(Debug, Clone, PartialEq)]
pub enum CompactFilter {
    Segments(Segmented),
    /// Encoding 4's chunks arriving: every item reads absent and writes are refused until
    /// the last one. Boxed, as the rare forms are, so that every complete filter takes the
    /// segment filter's size alone (its flag leaves room for the tag).
    Arriving(Box<Arrival>),
    /// An older encoding's value: its chunks arriving (its table not complete yet: as
    /// above), or complete and kept as it is (`Compact::kept`), answering and growing as
    /// the doubling table it is.
    Older(Box<Compact>),
}

impl CompactFilter {
    /// A new empty filter of one segment, placing items by `secret` (chosen on the primary;
    /// zero for none).
    pub fn new(
        error: f64,
        deletable: bool,
        secret: u64,
        budget: impl Budget,
    ) -> Result<CompactFilter, CreateError> {
        if !(super::MIN_ERROR..1.0).contains(&error) {
            return Err(CreateError::Invalid);
        }
        let limit = budget.limit(0);
        let filter = Segmented::new(1, error, deletable, secret, limit)?;
        // The value's own fields, as it reports them, count too.
        let filter = CompactFilter::Segments(filter);
        if filter.bytes() > limit {
            return Err(CreateError::TooLarge);
        }
        Ok(filter)
    }

    /// The complete filter, if it is one.
    pub fn segments(&self) -> Option<&Segmented> {
        match self {
            CompactFilter::Segments(f) => Some(f),
            _ => None,
        }
    }

    #[inline]
    pub fn contains(&self, item: &[u8]) -> bool {
        match self {
            CompactFilter::Segments(f) => f.contains(item),
            CompactFilter::Older(c) => c.contains(item),
            CompactFilter::Arriving(_) => false,
        }
    }

    /// Answers `contains` for every item in order (BF.MEXISTS).
    pub fn contains_each<'a>(
        &self,
        items: impl Iterator<Item = &'a [u8]>,
        mut answer: impl FnMut(bool),
    ) {
        match self {
            CompactFilter::Segments(f) => f.contains_each(items, answer),
            CompactFilter::Older(c) => c.contains_each(items, answer),
            CompactFilter::Arriving(_) => items.for_each(|_| answer(false)),
        }
    }

    /// Adds an item (`Ok(true)`: it read absent before); refused while chunks arrive.
    pub fn add(&mut self, item: &[u8], budget: impl Budget) -> Result<bool, AddError> {
        match self {
            CompactFilter::Segments(f) => f.add(item, budget),
            CompactFilter::Older(c) => c.add(item, budget),
            CompactFilter::Arriving(_) => Err(AddError::Loading),
        }
    }

    pub fn delete(&mut self, item: &[u8]) -> Result<bool, DeleteError> {
        match self {
            CompactFilter::Segments(f) => f.delete(item),
            CompactFilter::Older(c) => c.delete(item),
            _ if !self.is_deletable() => Err(DeleteError::NotDeletable),
            _ => Err(DeleteError::Loading),
        }
    }

    /// Whether every chunk of a LOADCHUNK sequence has arrived (always, otherwise).
    pub fn is_loaded(&self) -> bool {
        match self {
            CompactFilter::Segments(_) => true,
            CompactFilter::Older(c) => c.is_loaded(),
            CompactFilter::Arriving(_) => false,
        }
    }

    /// An older value complete: converted to segments if it was never kept, fits
    /// [`CONVERT_SLOTS`] and converts; otherwise kept for good. Only the value decides, and
    /// the flag it then carries, so every server that loads it settles it alike (RDB,
    /// RESTORE, LOADCHUNK of a SCANDUMP or an AOF rewrite, a replica's sync), and a kept
    /// value stays kept whatever its writes make of it.
    fn settled(mut older: Box<Compact>, max_bytes: u64) -> CompactFilter {
        match CompactFilter::converted(&mut older, max_bytes) {
            Some(f) => CompactFilter::Segments(f),
            None => CompactFilter::Older(older),
        }
    }

    /// The conversion `settled` makes, or `None` with the value flagged kept.
    fn converted(older: &mut Compact, max_bytes: u64) -> Option<Segmented> {
        let old_slots = older
            .doubling
            .as_ref()
            .map_or(0, |d| 1u64 << d.old.log2_slots);
        let slots = (1u64 << older.table.log2_slots) + old_slots;
        if !older.kept && slots <= CONVERT_SLOTS {
            crate::compact::meter::add(slots + 2 * older.entries);
            if let Ok(f) = Segmented::from_doubling(older, max_bytes) {
                return Some(f);
            }
        }
        older.kept = true;
        None
    }

    /// The false-positive rate estimated from the entries held; 0 while chunks arrive (every
    /// item reads absent then).
    pub fn estimated_rate(&self) -> f64 {
        match self {
            CompactFilter::Segments(f) => f.estimated_rate(),
            CompactFilter::Arriving(_) | CompactFilter::Older(_) => 0.0,
        }
    }

    /// Items held (BF.CARD; while chunks arrive, what the header says).
    pub fn len(&self) -> u64 {
        match self {
            CompactFilter::Segments(f) => f.len(),
            CompactFilter::Arriving(a) => a.filter().len(),
            CompactFilter::Older(c) => c.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn is_deletable(&self) -> bool {
        match self {
            CompactFilter::Segments(f) => f.is_deletable(),
            CompactFilter::Arriving(a) => a.filter().is_deletable(),
            CompactFilter::Older(c) => c.is_deletable(),
        }
    }

    /// Bytes the value's allocations take (BF.INFO Size, MEMORY USAGE): this value's own
    /// (the segment filter's counted in its place), and what it holds.
    pub fn bytes(&self) -> u64 {
        let own = segments::size_class(std::mem::size_of::<CompactFilter>() as u64);
        let held = match self {
            CompactFilter::Segments(f) => f.bytes() - segments::OVERHEAD,
            CompactFilter::Arriving(a) => {
                let own = segments::size_class(std::mem::size_of::<Arrival>() as u64);
                own + a.filter().bytes() - segments::OVERHEAD
            }
            CompactFilter::Older(c) => c.bytes(),
        };
        own + held
    }

    /// Items it takes before its next split (BF.INFO Capacity): a split comes every
    /// `split_items` entries.
    pub fn capacity(&self) -> u64 {
        let capacity = |f: &Segmented| f.segments().saturating_mul(f.split_items());
        match self {
            CompactFilter::Segments(f) => capacity(f),
            CompactFilter::Arriving(a) => capacity(a.filter()),
            CompactFilter::Older(c) => c.summary().capacity,
        }
    }

    /// BF.DEBUG lines: the segments' shape and fill.
    pub fn debug_lines(&self) -> Vec<String> {
        let f = match self {
            CompactFilter::Segments(f) => f,
            CompactFilter::Arriving(a) => a.filter(),
            CompactFilter::Older(c) => return c.debug_lines(),
        };
        let fields = f.fields();
        let mut lines = vec![
            format!(
                "compact items:{} entries:{} capacity:{} bytes:{}",
                f.len(),
                f.entries,
                self.capacity(),
                f.bytes()
            ),
            format!(
                "segments:{} level:{} split:{} fingerprint bits:{} error:{} deletable:{}",
                f.segments(),
                fields.level,
                fields.pointer,
                f.fresh_bits,
                crate::bloom::format_g(f.error()),
                u8::from(f.is_deletable())
            ),
        ];
        if let CompactFilter::Arriving(a) = self {
            lines.push(format!("arriving segments:{}", a.received()));
        }
        lines
    }

    /// The SCANDUMP header (iterator 1's chunk) and the digest's fixed fields.
    pub fn encode_header(&self) -> Vec<u8> {
        match self {
            CompactFilter::Segments(f) => f.encode_header(),
            CompactFilter::Arriving(a) => a.filter().encode_header(),
            CompactFilter::Older(c) => c.encode_header(),
        }
    }

    /// The SCANDUMP chunk at iterator `iter >= 1` and the iterator after it; None past the
    /// end (a filter still arriving gives what it received, so its dump and AOF rewrite
    /// rebuild the same state).
    pub fn chunk_at(&self, iter: i64) -> Option<(i64, Cow<'_, [u8]>)> {
        self.chunk_within(iter, crate::bloom::MAX_CHUNK)
    }

    /// The chunk at iterator `iter` grouping whole segments within `limit` bytes (an older
    /// table's chunks are its fixed slices whatever the limit).
    pub fn chunk_within(&self, iter: i64, limit: u64) -> Option<(i64, Cow<'_, [u8]>)> {
        let from = u64::try_from(iter).ok()?.checked_sub(1)?;
        let f = match self {
            CompactFilter::Segments(f) => f,
            CompactFilter::Arriving(a) => a.filter(),
            CompactFilter::Older(c) => {
                // Chunks are slices of the tables: the one that starts at `iter`.
                let mut start = 1i64;
                return c.chunks().find_map(|(next, bytes)| {
                    let this = std::mem::replace(&mut start, next);
                    (this == iter).then_some((next, Cow::Borrowed(bytes)))
                });
            }
        };
        let (next, bytes) = f.chunk_from(from, limit)?;
        Some((i64::try_from(next).ok()?.checked_add(1)?, Cow::Owned(bytes)))
    }

    /// Every chunk after the header, in order (the digest's, the model's).
    pub fn each_chunk(&self) -> impl Iterator<Item = (i64, Cow<'_, [u8]>)> + '_ {
        let mut iter = 1i64;
        std::iter::from_fn(move || {
            let (next, bytes) = self.chunk_at(iter)?;
            iter = next;
            Some((next, bytes))
        })
    }

    /// A filter awaiting its chunks, as a header of encoding 4 or an older one describes.
    pub fn from_header(bytes: &[u8], max_bytes: u64) -> Result<CompactFilter, HeaderError> {
        match segments::header_version(bytes) {
            Some(SEGMENTS_HEADER) => {
                Arrival::from_header(bytes, max_bytes).map(|a| CompactFilter::Arriving(Box::new(a)))
            }
            _ => Compact::from_header(bytes, max_bytes).map(|c| CompactFilter::Older(Box::new(c))),
        }
    }

    /// Takes a LOADCHUNK data chunk; the last one makes the filter complete (an older
    /// table converted to segments). A refused chunk changes nothing.
    pub fn load_chunk(&mut self, iter: i64, data: &[u8], max_bytes: u64) -> Result<(), ChunkError> {
        match self {
            CompactFilter::Segments(_) => Err(ChunkError::NoLink),
            CompactFilter::Arriving(a) => {
                if a.load_chunk(iter, data, max_bytes)? {
                    *self = CompactFilter::Segments(a.take_filter());
                }
                Ok(())
            }
            CompactFilter::Older(c) if c.is_loaded() => Err(ChunkError::NoLink),
            CompactFilter::Older(c) => {
                c.load_chunk(iter, data, max_bytes)?;
                if c.is_loaded() {
                    if let Some(f) = CompactFilter::converted(c, max_bytes) {
                        *self = CompactFilter::Segments(f);
                    }
                }
                Ok(())
            }
        }
    }

    pub fn save(&self, w: &mut impl RdbWrite) {
        match self {
            CompactFilter::Segments(f) => {
                w.write_unsigned(SEGMENT_FORM);
                f.save(w);
            }
            CompactFilter::Arriving(a) => {
                w.write_unsigned(SEGMENT_FORM);
                a.save(w);
            }
            CompactFilter::Older(c) => {
                w.write_unsigned(OLDER_FORM);
                c.save(w);
            }
        }
    }

    /// Reads encoding 4, or an older encoding (converted when complete).
    pub fn load(
        r: &mut impl RdbRead,
        encver: i32,
        max_bytes: u64,
    ) -> Result<CompactFilter, LoadError> {
        let older = match encver {
            ENCODING_VERSION => match r.read_unsigned()? {
                SEGMENT_FORM => {
                    return Ok(match segments::load(r, max_bytes)? {
                        Loaded::Complete(f) => CompactFilter::Segments(f),
                        Loaded::Arriving(a) => CompactFilter::Arriving(Box::new(a)),
                    })
                }
                OLDER_FORM => Compact::load(r, DOUBLING_ENCODING, max_bytes)?,
                _ => return Err(LoadError::Invalid("form")),
            },
            _ => Compact::load(r, encver, max_bytes)?,
        };
        if !older.is_loaded() {
            return Ok(CompactFilter::Older(Box::new(older)));
        }
        Ok(CompactFilter::settled(Box::new(older), max_bytes))
    }

    /// The validator's verdict on the value as it is (the model check's, the fuzzer's):
    /// loading it again from its own parts gives it back, derived fields included.
    pub fn validate(&self, max_bytes: u64) -> Result<(), LoadError> {
        match self {
            CompactFilter::Segments(f) => {
                let words = f
                    .each_segment()
                    .map(|s| s.words().copied().collect())
                    .collect();
                let back = Segmented::from_parts(f.fields(), words, max_bytes)?;
                (back == *f)
                    .then_some(())
                    .ok_or(LoadError::Invalid("derived fields"))
            }
            CompactFilter::Arriving(_) => Ok(()),
            CompactFilter::Older(c) => c.validate(max_bytes),
        }
    }

    /// The value's heap blocks, for the allocator to move (active defragmentation).
    pub fn for_each_block(&mut self, mut relocate: impl FnMut(Block<'_>)) {
        let f = match self {
            CompactFilter::Segments(f) => f,
            CompactFilter::Arriving(a) => a.filter_for_relocation(),
            CompactFilter::Older(c) => {
                c.tables_for_relocation()
                    .for_each(|t| relocate(Block::Bytes(t)));
                return;
            }
        };
        f.segments_for_relocation(|words| relocate(Block::Words(words)));
    }
}

/// One heap block of a compact value.
pub enum Block<'a> {
    Words(&'a mut Box<[u64]>),
    Bytes(&'a mut Vec<u8>),
}
