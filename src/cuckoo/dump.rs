//! The SCANDUMP / LOADCHUNK encoding (and the AOF rewrite built on it): a 38-byte header, then
//! the sub-filters' slots addressed by `iterator - 1` as a byte offset into their concatenation.

use std::borrow::Cow;

use super::shape::Shape;
use super::{CuckooError, CuckooFilter};

/// Length of the header: `u64 numItems, u64 numBuckets, u64 numDeletes, u64 numFilters,
/// u16 bucketSize, u16 maxIterations, u16 expansion`, little-endian, packed.
pub const HEADER_LEN: usize = 38;
/// Largest slice of one sub-filter returned by one SCANDUMP call.
pub const MAX_CHUNK_BYTES: u64 = 16 * 1024 * 1024;

impl CuckooFilter {
    /// The header CF.SCANDUMP returns for iterator 0 (with next iterator 1).
    pub fn encode_header(&self) -> [u8; HEADER_LEN] {
        let mut header = [0u8; HEADER_LEN];
        let fields = [
            self.num_items,
            self.num_buckets,
            self.num_deletes,
            u64::from(self.num_filters()),
        ];
        for (out, field) in header.chunks_exact_mut(8).zip(fields) {
            out.copy_from_slice(&field.to_le_bytes());
        }
        let small = [self.bucket_size, self.max_iterations, self.expansion];
        for (out, field) in header[32..].chunks_exact_mut(2).zip(small) {
            out.copy_from_slice(&field.to_le_bytes());
        }
        header
    }

    /// An empty filter shaped by a CF.LOADCHUNK header. As in RedisBloom the sub-filter count is
    /// truncated to 16 bits, the expansion is taken as is (not rounded), and the item and
    /// delete counters are not checked.
    pub fn from_header(bytes: &[u8], max_bytes: u64) -> Result<Self, CuckooError> {
        let header: &[u8; HEADER_LEN] = bytes
            .try_into()
            .map_err(|_| CuckooError::Invalid("header length"))?;
        let u64_at = |at: usize| {
            let mut word = [0u8; 8];
            word.copy_from_slice(&header[at..at + 8]);
            u64::from_le_bytes(word)
        };
        let u16_at = |at: usize| u16::from_le_bytes([header[at], header[at + 1]]);
        let shape = Shape {
            num_buckets: u64_at(8),
            num_filters: u64_at(24) as u16,
            bucket_size: u16_at(32),
            max_iterations: u16_at(34),
            expansion: u16_at(36),
        };
        Self::zeroed(shape, u64_at(0), u64_at(16), max_bytes)
    }

    /// One CF.SCANDUMP step for `iterator >= 1` (iterator 0 is the header: the caller replies
    /// `encode_header()` with next iterator 1). Returns the next iterator and the chunk, or
    /// `None` past the end. A sub-filter of at most `MAX_CHUNK_BYTES` comes whole, from its
    /// start, whatever the offset inside it; larger ones come in slices from the offset.
    pub fn dump_chunk(&self, iterator: i64) -> Option<(i64, &[u8])> {
        let mut offset = u64::try_from(iterator.checked_sub(1)?).ok()?;
        let filter = self.filters.iter().find(|filter| {
            let inside = offset < filter.len_bytes();
            if !inside {
                offset -= filter.len_bytes();
            }
            inside
        })?;
        let slots = filter.slots();
        let chunk = if filter.len_bytes() <= MAX_CHUNK_BYTES {
            slots
        } else {
            let start = usize::try_from(offset).ok()?;
            let len = usize::try_from(MAX_CHUNK_BYTES).ok()?;
            let end = slots.len().min(start.checked_add(len)?);
            slots.get(start..end)?
        };
        let next = iterator.checked_add(i64::try_from(chunk.len()).ok()?)?;
        Some((next, chunk))
    }

    /// Every `(iterator, chunk)` pair of a full SCANDUMP after the header, in order: what
    /// calling `dump_chunk` from iterator 1 on returns, in one pass over the sub-filters (an AOF
    /// rewrite of a filter with tens of thousands of sub-filters stays linear).
    pub fn chunks(&self) -> impl Iterator<Item = (i64, &[u8])> + '_ {
        self.chunks_within(MAX_CHUNK_BYTES)
    }

    /// The same cut into runs of at most `limit` bytes where a sub-filter is larger: any run
    /// of one sub-filter's bytes loads on its own (`CF.LOADCHUNK` copies what lies inside one
    /// sub-filter), so the limit changes only how they are cut.
    pub fn chunks_within(&self, limit: u64) -> impl Iterator<Item = (i64, &[u8])> + '_ {
        let slice = usize::try_from(limit.clamp(1, MAX_CHUNK_BYTES)).unwrap_or(usize::MAX);
        let mut iterator = 1i64;
        self.filters
            .iter()
            .flat_map(move |filter| {
                let slots = filter.slots();
                let pieces = if filter.len_bytes() <= slice as u64 {
                    slots.len().max(1)
                } else {
                    slice
                };
                slots.chunks(pieces)
            })
            .map_while(move |chunk| {
                iterator = iterator.checked_add(i64::try_from(chunk.len()).ok()?)?;
                Some((iterator, chunk))
            })
    }

    /// What an AOF rewrite emits as `CF.LOADCHUNK key <iterator> <bytes>` commands: the header
    /// at iterator 1, then SCANDUMP's chunks cut to at most `limit` bytes, each with the
    /// iterator that follows it. Unlike SCANDUMP this does not stop at an empty filter.
    pub fn rewrite_chunks(&self, limit: u64) -> impl Iterator<Item = (i64, Cow<'_, [u8]>)> + '_ {
        let header = (1, Cow::Owned(self.encode_header().to_vec()));
        std::iter::once(header).chain(
            self.chunks_within(limit)
                .map(|(next, chunk)| (next, Cow::Borrowed(chunk))),
        )
    }

    /// CF.LOADCHUNK for a data chunk: the chunk SCANDUMP returned with `iterator` covers bytes
    /// `[iterator - len - 1, iterator - 1)`, which must lie inside one sub-filter.
    pub fn load_chunk(&mut self, iterator: i64, chunk: &[u8]) -> Result<(), CuckooError> {
        let out_of_range = CuckooError::Invalid("chunk position");
        let len = i64::try_from(chunk.len()).map_err(|_| out_of_range)?;
        if chunk.is_empty() || iterator <= 0 || iterator - 1 < len {
            return Err(out_of_range);
        }
        let mut offset = u64::try_from(iterator - 1 - len).map_err(|_| out_of_range)?;
        for filter in &mut self.filters {
            if offset < filter.len_bytes() {
                let start = usize::try_from(offset).map_err(|_| out_of_range)?;
                let target = start
                    .checked_add(chunk.len())
                    .and_then(|end| filter.slots_mut().get_mut(start..end))
                    .ok_or(out_of_range)?;
                target.copy_from_slice(chunk);
                return Ok(());
            }
            offset -= filter.len_bytes();
        }
        Err(out_of_range)
    }
}
