//! A static set's encodings: the `bloomrsST` RDB value (also what DUMP/RESTORE carries) and
//! its SCANDUMP header and chunks, all read back through [`StaticFilter::from_parts`], the one
//! constructor of stored values.
//!
//! ```text
//! header: magic "bloomrsF" | version u32 = 1 | state u32 (0 building, 1 frozen) | error f64
//!         | capacity u64 | items u64 | width u32 | segment length u32 | segment count u32
//!         | seed u64                                   (little-endian, 60 bytes)
//! chunks: building: the hashes in increasing order, 8 bytes each, iterator 1 + index;
//!         frozen: the table's packed slots, iterator 1 + byte offset (at most 16 MiB each)
//! RDB:    state, error, capacity, items, width, segment length, segment count, seed, then
//!         the same bytes as the chunks, as buffers of at most 16 MiB; state 2 is a builder
//!         with a freeze's stage (`stage`): the builder as state 0, then the stage's header
//!         (a 60-byte buffer, a frozen header), the bytes of its table propagated so far, and
//!         those bytes as buffers of at most 16 MiB
//! ```
//!
//! State 2 keeps encoding version 1: every value without a stage is written as before, so an
//! earlier bloomrs still reads it, and refuses a builder saved mid-freeze as an unknown state.

use std::borrow::Cow;
use std::sync::Arc;

use super::table::{Shape, ShapeError, Table, PADDING};
use super::{width_for, Frozen, StageError, State, StaticFilter, MAX_ITEMS};
use crate::bloom::{chunk_in, load_chunk_in, ChunkError, HeaderError, MAX_CHUNK};
use crate::rdb::{LoadError, RdbRead, RdbWrite};

pub const ENCODING_VERSION: i32 = 1;
/// The first eight bytes of a static set's header.
pub const MAGIC: &[u8; 8] = b"bloomrsF";
const HEADER_VERSION: u32 = 1;
const HEADER_LEN: usize = 60;
/// Hashes per chunk (16 MiB).
const HASHES_PER_CHUNK: usize = MAX_CHUNK as usize / 8;

/// What a stored value says of itself, before its hashes or slots.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Parts {
    pub frozen: bool,
    pub error: f64,
    pub capacity: u64,
    pub items: u64,
    pub shape: Shape,
}

/// Why stored parts do not make a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    Invalid(&'static str),
    TooLarge,
}

impl From<ShapeError> for Refused {
    fn from(e: ShapeError) -> Self {
        match e {
            ShapeError::Invalid(why) => Refused::Invalid(why),
            ShapeError::TooLarge => Refused::TooLarge,
        }
    }
}

impl From<Refused> for LoadError {
    fn from(e: Refused) -> Self {
        match e {
            Refused::Invalid(why) => LoadError::Invalid(why),
            Refused::TooLarge => LoadError::TooLarge,
        }
    }
}

impl From<Refused> for HeaderError {
    fn from(e: Refused) -> Self {
        match e {
            Refused::Invalid(_) => HeaderError::BadData,
            Refused::TooLarge => HeaderError::TooLarge,
        }
    }
}

impl StaticFilter {
    fn parts(&self) -> Parts {
        let (frozen, shape) = match &self.state {
            State::Building(_) => (
                false,
                Shape {
                    width: self.width(),
                    segment_length: 0,
                    segment_count: 0,
                    seed: 0,
                },
            ),
            State::Frozen(frozen) => (true, frozen.table.shape),
        };
        Parts {
            frozen,
            error: self.error,
            capacity: self.capacity,
            items: self.card(),
            shape,
        }
    }

    /// An empty value (no hashes, or a zeroed table) of the parts a stored value describes:
    /// every field checked, and its size against `max_bytes` before anything is allocated.
    pub fn from_parts(parts: &Parts, max_bytes: u64) -> Result<Self, Refused> {
        let width = width_for(parts.error).ok_or(Refused::Invalid("error rate out of range"))?;
        if parts.capacity < 1 {
            return Err(Refused::Invalid("capacity below 1"));
        }
        if parts.items > MAX_ITEMS {
            return Err(Refused::TooLarge);
        }
        if parts.shape.width != width {
            return Err(Refused::Invalid(
                "fingerprint width does not match the error rate",
            ));
        }
        let state = if parts.frozen {
            let shape = parts.shape;
            shape.check()?;
            let empty = shape.segment_count == 0;
            if empty != (parts.items == 0) || parts.items > shape.slots() {
                return Err(Refused::Invalid("item count does not match the table"));
            }
            if shape.bytes().saturating_add(super::FILTER_OVERHEAD) > max_bytes {
                return Err(Refused::TooLarge);
            }
            let table = Table::zeroed(shape).ok_or(Refused::TooLarge)?;
            State::Frozen(Frozen {
                items: parts.items,
                table,
            })
        } else {
            let s = parts.shape;
            if (s.segment_length, s.segment_count, s.seed) != (0, 0, 0) {
                return Err(Refused::Invalid("a builder has no table"));
            }
            // At least 8 bytes per hash to come.
            let least = parts.items.saturating_mul(8);
            if least.saturating_add(super::FILTER_OVERHEAD) > max_bytes {
                return Err(Refused::TooLarge);
            }
            State::Building(Arc::default())
        };
        Ok(StaticFilter {
            error: parts.error,
            capacity: parts.capacity,
            state,
            stage: None,
        })
    }

    /// The header SCANDUMP returns at iterator 0.
    pub fn encode_header(&self) -> Vec<u8> {
        let p = self.parts();
        let mut out = Vec::with_capacity(HEADER_LEN);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&HEADER_VERSION.to_le_bytes());
        out.extend_from_slice(&u32::from(p.frozen).to_le_bytes());
        out.extend_from_slice(&p.error.to_le_bytes());
        out.extend_from_slice(&p.capacity.to_le_bytes());
        out.extend_from_slice(&p.items.to_le_bytes());
        out.extend_from_slice(&p.shape.width.to_le_bytes());
        out.extend_from_slice(&p.shape.segment_length.to_le_bytes());
        out.extend_from_slice(&p.shape.segment_count.to_le_bytes());
        out.extend_from_slice(&p.shape.seed.to_le_bytes());
        out
    }

    /// An empty value shaped as a LOADCHUNK header describes.
    pub fn from_header(header: &[u8], max_bytes: u64) -> Result<Self, HeaderError> {
        if header.len() != HEADER_LEN {
            return Err(HeaderError::BadData);
        }
        let mut fields = Fields(header);
        if fields.take::<8>() != *MAGIC || fields.u32() != HEADER_VERSION {
            return Err(HeaderError::BadData);
        }
        let state = fields.u32();
        if state > 1 {
            return Err(HeaderError::BadData);
        }
        let parts = Parts {
            frozen: state == 1,
            error: f64::from_le_bytes(fields.take()),
            capacity: fields.u64(),
            items: fields.u64(),
            shape: Shape {
                width: fields.u32(),
                segment_length: fields.u32(),
                segment_count: fields.u32(),
                seed: fields.u64(),
            },
        };
        Ok(Self::from_parts(&parts, max_bytes)?)
    }

    /// The SCANDUMP chunk at iterator `iter >= 1` and the iterator after it, or None past
    /// the end.
    pub fn chunk_at(&self, iter: i64) -> Option<(i64, Cow<'_, [u8]>)> {
        self.chunk_within(iter, MAX_CHUNK)
    }

    /// The chunk at iterator `iter` of at most `limit` bytes (a table's run, or a builder's
    /// hashes, loads on its own: the limit changes only how they are cut).
    pub fn chunk_within(&self, iter: i64, limit: u64) -> Option<(i64, Cow<'_, [u8]>)> {
        match &self.state {
            State::Frozen(frozen) => {
                let chunk = chunk_in(std::iter::once(table_bytes(&frozen.table)), iter, limit)?;
                Some((chunk.next, Cow::Borrowed(chunk.bytes)))
            }
            State::Building(set) => {
                let skip = u64::try_from(iter).ok()?.checked_sub(1)?;
                let most = usize::try_from(limit / 8).unwrap_or(usize::MAX);
                let hashes = set.range(skip, HASHES_PER_CHUNK.min(most.max(1)));
                if hashes.is_empty() {
                    return None;
                }
                let next = iter.checked_add(hashes.len() as i64)?;
                let bytes = hashes.iter().flat_map(|h| h.to_le_bytes()).collect();
                Some((next, Cow::Owned(bytes)))
            }
        }
    }

    /// Copies a LOADCHUNK chunk that SCANDUMP returned together with iterator `iter`: a
    /// frozen table's bytes where they belong, a builder's hashes added to its set (whose
    /// growth stays within `max_bytes`).
    pub fn load_chunk(&mut self, iter: i64, data: &[u8], max_bytes: u64) -> Result<(), ChunkError> {
        match &mut self.state {
            State::Frozen(frozen) => {
                let end = frozen.table.slots.len().saturating_sub(PADDING);
                let bytes = frozen.table.slots.get_mut(..end).unwrap_or_default();
                load_chunk_in(std::iter::once(bytes), iter, data)
            }
            State::Building(_) => {
                if data.len() % 8 != 0 || iter < 1 {
                    return Err(ChunkError::BadData);
                }
                for word in data.chunks_exact(8) {
                    let hash =
                        u64::from_le_bytes(word.try_into().map_err(|_| ChunkError::BadData)?);
                    self.add_hash(hash, &max_bytes)
                        .map_err(|_| ChunkError::TooBig)?;
                }
                Ok(())
            }
        }
    }

    pub fn save(&self, w: &mut impl RdbWrite) {
        let p = self.parts();
        let staged = self.staged();
        let state = match (p.frozen, &staged) {
            (true, _) => STATE_FROZEN,
            (false, None) => STATE_BUILDING,
            (false, Some(_)) => STATE_STAGED,
        };
        w.write_unsigned(state);
        w.write_double(p.error);
        w.write_unsigned(p.capacity);
        w.write_unsigned(p.items);
        w.write_unsigned(u64::from(p.shape.width));
        w.write_unsigned(u64::from(p.shape.segment_length));
        w.write_unsigned(u64::from(p.shape.segment_count));
        w.write_unsigned(p.shape.seed);
        let mut iter = 1;
        while let Some((next, bytes)) = self.chunk_at(iter) {
            w.write_buffer(&bytes);
            iter = next;
        }
        if let (STATE_STAGED, Some((header, bytes))) = (state, staged) {
            w.write_buffer(&header);
            w.write_unsigned(bytes.len() as u64);
            for chunk in bytes.chunks(MAX_CHUNK as usize) {
                w.write_buffer(chunk);
            }
        }
    }

    pub fn load(r: &mut impl RdbRead, encver: i32, max_bytes: u64) -> Result<Self, LoadError> {
        if encver != ENCODING_VERSION {
            return Err(LoadError::UnknownVersion(encver));
        }
        let narrow = |v: u64, what| u32::try_from(v).map_err(|_| LoadError::Invalid(what));
        let state = r.read_unsigned()?;
        if state > STATE_STAGED {
            return Err(LoadError::Invalid("unknown state"));
        }
        let parts = Parts {
            frozen: state == STATE_FROZEN,
            error: r.read_double()?,
            capacity: r.read_unsigned()?,
            items: r.read_unsigned()?,
            shape: Shape {
                width: narrow(r.read_unsigned()?, "width")?,
                segment_length: narrow(r.read_unsigned()?, "segment length")?,
                segment_count: narrow(r.read_unsigned()?, "segment count")?,
                seed: r.read_unsigned()?,
            },
        };
        let mut filter = Self::from_parts(&parts, max_bytes)?;
        let expected = match &filter.state {
            State::Frozen(frozen) => table_bytes(&frozen.table).len() as u64,
            State::Building(_) => parts.items.saturating_mul(8),
        };
        read_buffers(r, expected, |iter, buffer| {
            filter
                .load_chunk(iter, buffer, max_bytes)
                .map_err(|_| LoadError::Invalid("buffer does not fit"))
        })?;
        if filter.card() != parts.items {
            return Err(LoadError::Invalid("hashes do not match the item count"));
        }
        if state == STATE_STAGED {
            filter.load_stage(r, max_bytes)?;
        }
        Ok(filter)
    }

    /// A builder's stage as `save` wrote it: its header must be this builder's freeze (the
    /// effects' validator), and its bytes within the table, in order.
    fn load_stage(&mut self, r: &mut impl RdbRead, max_bytes: u64) -> Result<(), LoadError> {
        let refused = |e: StageError| match e {
            StageError::TooLarge => LoadError::TooLarge,
            _ => LoadError::Invalid("a stage that is not this builder's freeze"),
        };
        let header = r.read_buffer()?;
        let room = max_bytes.saturating_sub(self.reported_bytes());
        self.begin_stage(&header, room).map_err(refused)?;
        let filled = r.read_unsigned()?;
        read_buffers(r, filled, |iter, buffer| {
            match self.stage_chunk(iter, buffer) {
                Ok(true) => Ok(()),
                Ok(false) => Err(LoadError::Invalid("a stage's bytes out of order")),
                Err(e) => Err(refused(e)),
            }
        })
    }
}

/// Reads buffers of 1 byte to 16 MiB until they hold `total` bytes, handing each to `each`
/// with the iterator SCANDUMP returns with a chunk: one past its last byte (or hash), plus one.
fn read_buffers(
    r: &mut impl RdbRead,
    total: u64,
    mut each: impl FnMut(i64, &[u8]) -> Result<(), LoadError>,
) -> Result<(), LoadError> {
    let mut loaded = 0u64;
    while loaded < total {
        let buffer = r.read_buffer()?;
        if buffer.is_empty() || buffer.len() as u64 > MAX_CHUNK {
            return Err(LoadError::Invalid("buffer of the wrong length"));
        }
        loaded += buffer.len() as u64;
        let iter = i64::try_from(loaded + 1).map_err(|_| LoadError::TooLarge)?;
        each(iter, &buffer)?;
    }
    if loaded != total {
        return Err(LoadError::Invalid("buffers longer than the value says"));
    }
    Ok(())
}

/// The RDB's states: a builder, a frozen filter, a builder with a freeze's stage.
const STATE_BUILDING: u64 = 0;
const STATE_FROZEN: u64 = 1;
const STATE_STAGED: u64 = 2;

/// A table's bytes without its padding (what chunks carry).
pub(super) fn table_bytes(table: &Table) -> &[u8] {
    let end = table.slots.len().saturating_sub(PADDING);
    table.slots.get(..end).unwrap_or_default()
}

/// Little-endian fields read off the front of a byte slice whose length was checked.
struct Fields<'a>(&'a [u8]);

impl Fields<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut field = [0u8; N];
        if let Some((head, rest)) = self.0.split_first_chunk::<N>() {
            field = *head;
            self.0 = rest;
        }
        field
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
}
