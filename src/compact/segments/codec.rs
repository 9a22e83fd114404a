//! Encoding 4: a segment filter outside memory, through the one validator (`loader`).
//!
//! The SCANDUMP header (iterator 1's chunk, also the digest's fixed fields) is a
//! little-endian record beginning as every compact header does:
//!
//! ```text
//! magic "bloomrsP" | version u32 (4) | error f64 | flags u32 (bit 0: deletable)
//! | first level u32 | level u32 | split pointer u64 | items u64 | secret u64   (56 bytes)
//! ```
//!
//! The segments follow in order, whole, as many as fit a chunk of at most `MAX_CHUNK`
//! bytes (one at least): each its word count (u32) then its words (u64 each). The chunk
//! holding segments `i..j` comes with iterator `j + 1`, so SCANDUMP finds the chunk at
//! iterator `i + 1` without reading the ones before, and LOADCHUNK checks that each chunk
//! continues where the segments received end. The RDB value is the header as one buffer,
//! then runs of segments as chunks (each after its segment count), then 0.

use super::{Fields, Segmented};
use crate::bloom::{ChunkError, HeaderError};
use crate::compact::MAGIC;
use crate::rdb::{LoadError, RdbRead, RdbWrite};

/// The header version of encoding 4 (older compact headers say 1 to 3).
pub const SEGMENTS_HEADER: u32 = 4;
pub const HEADER_LEN: usize = 56;
const FLAG_DELETABLE: u32 = 1;
/// The most bytes of segments in a chunk: `MAX_CHUNK` (one KiB in unit tests, so that
/// their filters come in many chunks).
#[cfg(not(test))]
const CHUNK_BYTES: u64 = crate::bloom::MAX_CHUNK;
#[cfg(test)]
const CHUNK_BYTES: u64 = 1024;

/// A segment filter whose segments are arriving by LOADCHUNK (or were, when an RDB or AOF
/// was taken between two of its chunks): nothing reads or writes it until the last arrives.
#[derive(Debug, Clone, PartialEq)]
pub struct Arrival {
    /// The segments received so far, checked one by one as they came.
    filter: Segmented,
    /// Adds their entries count.
    counted: u64,
}

/// The header's version, if `bytes` is a compact header of any encoding.
pub fn header_version(bytes: &[u8]) -> Option<u32> {
    let version = bytes.strip_prefix(MAGIC.as_slice())?.first_chunk::<4>()?;
    Some(u32::from_le_bytes(*version))
}

/// Reads `N` bytes at `at` of a header already checked to be [`HEADER_LEN`] long.
fn field<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    bytes
        .get(at..)
        .and_then(|b| b.first_chunk::<N>())
        .copied()
        .unwrap_or([0; N])
}

impl Segmented {
    /// The SCANDUMP header: iterator 1's chunk, and the digest's fixed fields.
    pub fn encode_header(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_LEN);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&SEGMENTS_HEADER.to_le_bytes());
        out.extend_from_slice(&self.error.to_le_bytes());
        let flags = if self.deletable { FLAG_DELETABLE } else { 0 };
        for word in [flags, u32::from(self.first_level), u32::from(self.level)] {
            out.extend_from_slice(&word.to_le_bytes());
        }
        for wide in [self.pointer, self.items, self.secret] {
            out.extend_from_slice(&wide.to_le_bytes());
        }
        out
    }

    /// The chunk of whole segments starting at segment `from`, within `limit` bytes (and
    /// SCANDUMP's `CHUNK_BYTES`) but for a first segment larger than that, and the segment
    /// after it; None past the last segment. Any run of whole segments loads on its own, so
    /// the limit changes only how they are grouped.
    pub fn chunk_from(&self, from: u64, limit: u64) -> Option<(u64, Vec<u8>)> {
        let limit = limit.min(CHUNK_BYTES);
        let mut out = Vec::new();
        let mut at = from;
        while let Some(segment) = self.directory.get(at) {
            let count = segment.word_count();
            let size = 4 + 8 * count;
            if at > from && (out.len() + size) as u64 > limit {
                break;
            }
            out.extend_from_slice(&(count as u32).to_le_bytes());
            for word in segment.words() {
                out.extend_from_slice(&word.to_le_bytes());
            }
            at += 1;
        }
        (at > from).then_some((at, out))
    }

    /// Every chunk after the header, as `(segment after it, bytes)`.
    pub fn chunks(&self) -> impl Iterator<Item = (u64, Vec<u8>)> + '_ {
        let mut from = 0;
        std::iter::from_fn(move || {
            let (next, bytes) = self.chunk_from(from, CHUNK_BYTES)?;
            from = next;
            Some((next, bytes))
        })
    }

    /// Calls `relocate` with every allocation of every segment's words (active
    /// defragmentation).
    pub fn segments_for_relocation(&mut self, mut relocate: impl FnMut(&mut Box<[u64]>)) {
        for at in 0..self.directory.len() {
            if let Some(segment) = self.directory.get_mut(at) {
                segment.relocate(&mut relocate);
            }
        }
    }

    /// The RDB value (encoding 4's segment form).
    pub fn save(&self, w: &mut impl RdbWrite) {
        w.write_buffer(&self.encode_header());
        let mut from = 0;
        for (next, bytes) in self.chunks() {
            w.write_unsigned(next - from);
            w.write_buffer(&bytes);
            from = next;
        }
        w.write_unsigned(0);
    }
}

/// The segments' words in a chunk, each allocation bounded by the bytes it came in.
fn parse_chunk(data: &[u8]) -> Option<Vec<Vec<u64>>> {
    let mut segments = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        let (count, after) = rest.split_first_chunk::<4>()?;
        let count = u32::from_le_bytes(*count) as usize;
        let bytes = after.get(..count.checked_mul(8)?)?;
        let words = bytes
            .chunks_exact(8)
            .map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
            .collect();
        segments.push(words);
        rest = after.get(count * 8..)?;
    }
    Some(segments)
}

impl Arrival {
    /// A filter awaiting its segments, as an encoding 4 header describes it (the loader's
    /// field checks; nothing is allocated for the segments to come).
    pub fn from_header(bytes: &[u8], max_bytes: u64) -> Result<Arrival, HeaderError> {
        if bytes.len() != HEADER_LEN || header_version(bytes) != Some(SEGMENTS_HEADER) {
            return Err(HeaderError::BadData);
        }
        let flags = u32::from_le_bytes(field(bytes, 20));
        if flags & !FLAG_DELETABLE != 0 {
            return Err(HeaderError::BadData);
        }
        let fields = Fields {
            error: f64::from_le_bytes(field(bytes, 12)),
            deletable: flags & FLAG_DELETABLE != 0,
            first_level: u32::from_le_bytes(field(bytes, 24)),
            level: u32::from_le_bytes(field(bytes, 28)),
            pointer: u64::from_le_bytes(field(bytes, 32)),
            items: u64::from_le_bytes(field(bytes, 40)),
            secret: u64::from_le_bytes(field(bytes, 48)),
        };
        let filter = Segmented::awaiting(fields, max_bytes).map_err(|e| match e {
            LoadError::TooLarge => HeaderError::TooLarge,
            _ => HeaderError::BadData,
        })?;
        Ok(Arrival { filter, counted: 0 })
    }

    /// The filter, once every segment arrived.
    pub fn into_filter(self) -> Segmented {
        self.filter
    }

    /// The filter, once every segment arrived, leaving an arrival with none in its place.
    pub fn take_filter(&mut self) -> Segmented {
        let f = &self.filter;
        let empty = Segmented {
            error: f.error,
            deletable: f.deletable,
            secret: f.secret,
            first_level: f.first_level,
            level: f.level,
            pointer: f.pointer,
            items: f.items,
            entries: 0,
            fresh_bits: f.fresh_bits,
            split_items: f.split_items,
            segment_bytes: 0,
            directory: Default::default(),
            voids: Default::default(),
        };
        std::mem::replace(&mut self.filter, empty)
    }

    /// Segments received.
    pub fn received(&self) -> u64 {
        self.filter.directory.len()
    }

    /// The filter so far (its fields and the segments received).
    pub fn filter(&self) -> &Segmented {
        &self.filter
    }

    /// The segments' storage, for the allocator to move.
    pub fn filter_for_relocation(&mut self) -> &mut Segmented {
        &mut self.filter
    }

    /// Takes the segments of a chunk: all, or (refused) none. True once its last segment
    /// arrived and the whole passed the validator: [`Self::into_filter`] then.
    fn take(&mut self, segments: Vec<Vec<u64>>, max_bytes: u64) -> Result<bool, LoadError> {
        let before = self.received();
        let mut counted = self.counted;
        let taken = || -> Result<bool, LoadError> {
            for words in segments {
                counted = counted.saturating_add(self.filter.take_segment(words, max_bytes)?);
            }
            if self.received() < self.filter.expected_segments() {
                return Ok(false);
            }
            self.filter.check_items(counted)?;
            Ok(true)
        };
        match taken() {
            Ok(complete) => {
                self.counted = counted;
                Ok(complete)
            }
            Err(e) => {
                self.filter.drop_segments_from(before);
                Err(e)
            }
        }
    }

    /// Takes a LOADCHUNK data chunk that SCANDUMP returned with iterator `iter`: it must
    /// start at the first segment not received and hold whole segments the validator
    /// accepts within `max_bytes` (else nothing changes; past the limit it is `TooBig`). True once complete: [`Self::into_filter`] then.
    pub fn load_chunk(
        &mut self,
        iter: i64,
        data: &[u8],
        max_bytes: u64,
    ) -> Result<bool, ChunkError> {
        let segments = parse_chunk(data).ok_or(ChunkError::BadData)?;
        let end = u64::try_from(iter).ok().and_then(|i| i.checked_sub(1));
        if end != Some(self.received() + segments.len() as u64) || segments.is_empty() {
            return Err(ChunkError::NoLink);
        }
        if end > Some(self.filter.expected_segments()) {
            return Err(ChunkError::TooBig);
        }
        // Genuine segments past `bf.max-filter-bytes` are too big, not bad data.
        self.take(segments, max_bytes).map_err(|e| match e {
            LoadError::TooLarge => ChunkError::TooBig,
            _ => ChunkError::BadData,
        })
    }

    /// The chunk a SCANDUMP of the value so far returns at segment `from` (within `limit`
    /// bytes, as [`Segmented::chunk_from`]).
    pub fn chunk_from(&self, from: u64, limit: u64) -> Option<(u64, Vec<u8>)> {
        self.filter.chunk_from(from, limit)
    }

    /// The RDB value: the same as a complete filter's, with the segments received.
    pub fn save(&self, w: &mut impl RdbWrite) {
        self.filter.save(w);
    }
}

/// What an RDB value of encoding 4's segment form holds.
pub enum Loaded {
    Complete(Segmented),
    Arriving(Arrival),
}

/// Reads encoding 4's segment form (after its form tag).
pub fn load(r: &mut impl RdbRead, max_bytes: u64) -> Result<Loaded, LoadError> {
    let header = r.read_buffer()?;
    let mut arrival = Arrival::from_header(&header, max_bytes).map_err(|e| match e {
        HeaderError::TooLarge => LoadError::TooLarge,
        HeaderError::BadData => LoadError::Invalid("header"),
    })?;
    loop {
        let count = r.read_unsigned()?;
        if count == 0 {
            return Ok(Loaded::Arriving(arrival));
        }
        let segments = parse_chunk(&r.read_buffer()?).ok_or(LoadError::Invalid("segments"))?;
        if segments.len() as u64 != count {
            return Err(LoadError::Invalid("segments"));
        }
        if arrival.take(segments, max_bytes)? {
            // The last segment: nothing may follow it.
            if r.read_unsigned()? != 0 {
                return Err(LoadError::Invalid("segments"));
            }
            return Ok(Loaded::Complete(arrival.into_filter()));
        }
    }
}
