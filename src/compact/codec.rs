//! A compact filter outside memory, through one validator: its RDB value, and its
//! SCANDUMP/LOADCHUNK form. The header (iterator 0's chunk, also the digest's fixed fields)
//! is our own little-endian record:
//!
//! ```text
//! magic "bloomrsP" | version u32 | error f64 | log2_slots u32 | generation u32 | width u32
//! | flags u32 (bit 0: deletable) | items u64 | entries u64            (52 bytes)
//! ```
//!
//! Data chunks then carry the table's bytes in order, at most [`MAX_CHUNK`] each: iterator
//! `p >= 1` is byte `p - 1` of the table, each chunk continues where the previous one ended,
//! and the table is checked whole when its last byte arrives. The RDB value is the header's
//! fields after the magic and version (as unsigned integers, the error as a double), the
//! count of table bytes received (all of them, but between LOADCHUNK calls), then the table
//! in one buffer. Read as RedisBloom's first header field (the item count) the magic
//! is above 6·10^18 items, so the headers of the kinds never collide.

use super::counters;
use super::table::{table_bytes, Table};
use super::{
    fingerprint_bits, max_entries, value_bytes, width_for, Compact, MAX_LOG2_SLOTS, MIN_LOG2_SLOTS,
};
use crate::bloom::{chunk_start, ChunkError, HeaderError, MAX_CHUNK};
use crate::rdb::{LoadError, RdbRead, RdbWrite};

/// The first eight bytes of every compact header.
pub const MAGIC: &[u8; 8] = b"bloomrsP";
/// Encoding 2 counts repeated adds (`counters`); encoding 1's values (and SCANDUMP header
/// version 1's) still load, converted: one way, a server without counters cannot read 2.
pub const ENCODING_VERSION: i32 = 2;
const LEGACY_ENCODING: i32 = 1;
const HEADER_VERSION: u32 = 2;
const LEGACY_HEADER: u32 = 1;
const HEADER_LEN: usize = 52;
const FLAG_DELETABLE: u64 = 1;
/// The table is in encoding 1's form (only while its chunks arrive).
const FLAG_LEGACY: u64 = 2;

/// The fields a header or an RDB value carries, before any table is allocated.
struct Shape {
    error: f64,
    log2_slots: u64,
    generation: u64,
    width: u64,
    flags: u64,
    items: u64,
    entries: u64,
}

impl Shape {
    /// Every field checked and the table's size admitted, before allocating it.
    fn check(&self, max_bytes: u64) -> Result<(u32, u32, u32), LoadError> {
        if !(self.error > 0.0 && self.error < 1.0) {
            return Err(LoadError::Invalid("error rate"));
        }
        if self.flags & !(FLAG_DELETABLE | FLAG_LEGACY) != 0 {
            return Err(LoadError::Invalid("unknown flags"));
        }
        let log2_slots = u32::try_from(self.log2_slots)
            .ok()
            .filter(|q| (MIN_LOG2_SLOTS..=MAX_LOG2_SLOTS).contains(q))
            .ok_or(LoadError::Invalid("table size"))?;
        let generation = u32::try_from(self.generation)
            .ok()
            .filter(|g| *g <= log2_slots - MIN_LOG2_SLOTS)
            .ok_or(LoadError::Invalid("generation"))?;
        let width = width_for(self.error, generation)
            .filter(|w| u64::from(*w) == self.width)
            .ok_or(LoadError::Invalid("slot width"))?;
        // Items may exceed the slots in use: an entry with a counter holds many.
        if self.entries > max_entries(1 << log2_slots) {
            return Err(LoadError::Invalid("item counts"));
        }
        if value_bytes(log2_slots, width).is_none_or(|b| b > max_bytes) {
            return Err(LoadError::TooLarge);
        }
        Ok((log2_slots, generation, width))
    }

    fn of(filter: &Compact) -> Shape {
        Shape {
            error: filter.error,
            log2_slots: u64::from(filter.table.log2_slots),
            generation: u64::from(filter.generation),
            width: u64::from(filter.table.width),
            flags: u64::from(filter.deletable) * FLAG_DELETABLE
                + u64::from(filter.legacy) * FLAG_LEGACY,
            items: filter.items,
            entries: filter.entries,
        }
    }

    /// A filter of this shape around `table` (whose dimensions the caller made match).
    fn filter(&self, generation: u32, table: Table, received: u64) -> Compact {
        Compact {
            fresh_bits: fingerprint_bits(self.error, generation).unwrap_or(0),
            error: self.error,
            generation,
            deletable: self.flags & FLAG_DELETABLE != 0,
            items: self.items,
            entries: self.entries,
            received,
            legacy: self.flags & FLAG_LEGACY != 0,
            table,
        }
    }
}

impl Compact {
    /// The one validator of a compact value read from outside (RDB, RESTORE, LOADCHUNK):
    /// fields a filter could have, a size within `max_bytes`, a table whose metadata describe
    /// runs holding exactly `entries` entries, and no stray bits past the last slot.
    pub fn validate(&self, max_bytes: u64) -> Result<(), LoadError> {
        if self.legacy && self.is_loaded() {
            return Err(LoadError::Invalid("table in encoding 1"));
        }
        self.check(max_bytes)
    }

    /// [`Self::validate`] without the rule that a complete table is in encoding 2 (a table
    /// in encoding 1 has a repeated entry per add, and no counters).
    fn check(&self, max_bytes: u64) -> Result<(), LoadError> {
        let (log2_slots, _, width) = Shape::of(self).check(max_bytes)?;
        if self.table.log2_slots != log2_slots || self.table.width != width {
            return Err(LoadError::Invalid("table shape"));
        }
        let expected = table_bytes(log2_slots, width).unwrap_or(0);
        if self.table.bytes.len() as u64 != expected || self.received > expected {
            return Err(LoadError::Invalid("table length"));
        }
        if !self.is_loaded() {
            // Between LOADCHUNK calls (and so in an RDB or AOF taken then): the bytes not
            // received yet are still zero, and the table is checked whole when its last chunk
            // arrives.
            let pending = self.table.bytes.get(self.received as usize..);
            if pending.is_none_or(|bytes| bytes.iter().any(|b| *b != 0)) {
                return Err(LoadError::Invalid("bytes past those received"));
            }
            return Ok(());
        }
        // Whole blocks of 64 slots end on a byte; the padding after them stays zero.
        let used = (1u64 << log2_slots) * (u64::from(width) + 2) / 8;
        let stray = self
            .table
            .bytes
            .get(used as usize..)
            .is_none_or(|tail| tail.iter().any(|b| *b != 0));
        if stray {
            return Err(LoadError::Invalid("bits past the table"));
        }
        // Every run: entries with counters in their one form (only a deletable filter counts),
        // each fingerprint once.
        let mut seen: Vec<u64> = Vec::new();
        let mut sound = true;
        let walked = self.table.for_each_run(|_, _, fields| {
            seen.clear();
            let field_at = |k: u64| fields.get(k as usize).copied().unwrap_or(0);
            for e in counters::elements(fields.len() as u64, width, field_at) {
                sound &= e.canonical && ((self.deletable && !self.legacy) || e.pairs == 0);
                seen.push(e.field);
            }
            seen.sort_unstable();
            sound &= self.legacy || seen.windows(2).all(|w| w.first() != w.get(1));
        });
        if !sound {
            return Err(LoadError::Invalid("counters"));
        }
        match walked {
            Some(entries) if entries == self.entries => Ok(()),
            Some(_) => Err(LoadError::Invalid("entry count")),
            None => Err(LoadError::Invalid("table metadata")),
        }
    }

    pub fn save(&self, w: &mut impl RdbWrite) {
        let shape = Shape::of(self);
        w.write_double(shape.error);
        w.write_unsigned(shape.log2_slots);
        w.write_unsigned(shape.generation);
        w.write_unsigned(shape.width);
        w.write_unsigned(shape.flags);
        w.write_unsigned(shape.items);
        w.write_unsigned(shape.entries);
        w.write_unsigned(self.received);
        w.write_buffer(&self.table.bytes);
    }

    pub fn load(r: &mut impl RdbRead, encver: i32, max_bytes: u64) -> Result<Compact, LoadError> {
        if encver != ENCODING_VERSION && encver != LEGACY_ENCODING {
            return Err(LoadError::UnknownVersion(encver));
        }
        let shape = Shape {
            error: r.read_double()?,
            log2_slots: r.read_unsigned()?,
            generation: r.read_unsigned()?,
            width: r.read_unsigned()?,
            flags: r.read_unsigned()?,
            items: r.read_unsigned()?,
            entries: r.read_unsigned()?,
        };
        let received = r.read_unsigned()?;
        if encver == LEGACY_ENCODING && shape.flags & FLAG_LEGACY != 0 {
            return Err(LoadError::Invalid("unknown flags"));
        }
        let mut shape = shape;
        if encver == LEGACY_ENCODING {
            shape.flags |= FLAG_LEGACY;
        }
        let (log2_slots, generation, width) = shape.check(max_bytes)?;
        let bytes = r.read_buffer()?;
        if bytes.len() as u64 != table_bytes(log2_slots, width).unwrap_or(0) {
            return Err(LoadError::Invalid("table length"));
        }
        let table = Table::from_bytes(log2_slots, width, bytes).ok_or(LoadError::TooLarge)?;
        let mut filter = shape.filter(generation, table, received);
        filter.check(max_bytes)?;
        if filter.is_loaded() {
            filter.table.rebuild_offsets();
            filter.upgrade(max_bytes)?;
        }
        Ok(filter)
    }

    /// A complete table in encoding 1's form brought to encoding 2: one doubling merges its
    /// repeated entries into counters (an add would have doubled it soon; one that cannot
    /// double is refused). A table with no repeated entry is the same in both.
    fn upgrade(&mut self, max_bytes: u64) -> Result<(), LoadError> {
        if !self.legacy {
            return Ok(());
        }
        self.legacy = false;
        if self.validate(max_bytes).is_ok() {
            return Ok(());
        }
        self.expand(&max_bytes)
            .map_err(|_| LoadError::Invalid("encoding 1 table too full to convert"))?;
        self.validate(max_bytes)
    }

    /// Whether a LOADCHUNK header is a compact filter's.
    pub fn is_header(bytes: &[u8]) -> bool {
        bytes.starts_with(MAGIC)
    }

    /// The header: iterator 0's chunk, and the digest's fixed fields.
    pub fn encode_header(&self) -> Vec<u8> {
        let s = Shape::of(self);
        let mut out = Vec::with_capacity(HEADER_LEN);
        // A table still in encoding 1's form says so by header version 1, as it came: one
        // header for one filter.
        let version = if self.legacy {
            LEGACY_HEADER
        } else {
            HEADER_VERSION
        };
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&version.to_le_bytes());
        out.extend_from_slice(&s.error.to_le_bytes());
        for field in [s.log2_slots, s.generation, s.width, s.flags & !FLAG_LEGACY] {
            out.extend_from_slice(&(field as u32).to_le_bytes());
        }
        out.extend_from_slice(&s.items.to_le_bytes());
        out.extend_from_slice(&s.entries.to_le_bytes());
        out
    }

    /// A filter awaiting its table's chunks, as a header describes it (checked by the
    /// validator's field checks before the zeroed table is allocated).
    pub fn from_header(bytes: &[u8], max_bytes: u64) -> Result<Compact, HeaderError> {
        let (version, body) = match bytes.split_first_chunk::<12>() {
            Some((head, body)) if bytes.len() == HEADER_LEN && head.starts_with(MAGIC) => {
                let version = u32::from_le_bytes([head[8], head[9], head[10], head[11]]);
                if version != HEADER_VERSION && version != LEGACY_HEADER {
                    return Err(HeaderError::BadData);
                }
                (version, body)
            }
            _ => return Err(HeaderError::BadData),
        };
        let mut fields = body.chunks(4);
        let mut u32_at = || {
            fields
                .next()
                .and_then(|f| f.first_chunk::<4>())
                .map_or(0, |f| u64::from(u32::from_le_bytes(*f)))
        };
        let error_low = u32_at();
        let error_high = u32_at();
        let (log2_slots, generation, width, flags) = (u32_at(), u32_at(), u32_at(), u32_at());
        let (items_low, items_high, entries_low, entries_high) =
            (u32_at(), u32_at(), u32_at(), u32_at());
        // The legacy flag is the RDB's: a header says it by its version.
        if flags & FLAG_LEGACY != 0 {
            return Err(HeaderError::BadData);
        }
        let legacy = if version == LEGACY_HEADER {
            FLAG_LEGACY
        } else {
            0
        };
        let shape = Shape {
            error: f64::from_bits(error_high << 32 | error_low),
            log2_slots,
            generation,
            width,
            flags: flags | legacy,
            items: items_high << 32 | items_low,
            entries: entries_high << 32 | entries_low,
        };
        let (log2_slots, generation, width) = shape.check(max_bytes).map_err(|e| match e {
            LoadError::TooLarge => HeaderError::TooLarge,
            _ => HeaderError::BadData,
        })?;
        let table = Table::new(log2_slots, width).ok_or(HeaderError::TooLarge)?;
        Ok(shape.filter(generation, table, 0))
    }

    /// The data chunks after the header, as `(iterator, bytes)`: the iterator LOADCHUNK
    /// receives with these bytes (SCANDUMP's "next"), each chunk at most 16 MiB, each a slice
    /// of the table (nothing is copied). A filter still loading gives the bytes it received,
    /// so its dump (and AOF rewrite) rebuilds the same state.
    pub fn chunks(&self) -> impl Iterator<Item = (i64, &[u8])> + '_ {
        let mut end = 1i64;
        let received = self
            .table
            .bytes
            .get(..self.received as usize)
            .unwrap_or_default();
        received.chunks(MAX_CHUNK as usize).map(move |bytes| {
            end = end.saturating_add(bytes.len() as i64);
            (end, bytes)
        })
    }

    /// Writes a data chunk `chunks` returned with iterator `iter`: it must continue where the
    /// table's received bytes end; the last one must leave a table the validator accepts
    /// (else it is taken back and nothing changes).
    pub fn load_chunk(&mut self, iter: i64, data: &[u8], max_bytes: u64) -> Result<(), ChunkError> {
        let len = data.len() as u64;
        let start = chunk_start(iter, data.len())?;
        if start != self.received {
            return Err(ChunkError::NoLink);
        }
        let total = self.table.bytes.len() as u64;
        if start.checked_add(len).is_none_or(|end| end > total) {
            return Err(ChunkError::TooBig);
        }
        let range = start as usize..(start + len) as usize;
        let Some(target) = self.table.bytes.get_mut(range.clone()) else {
            return Err(ChunkError::TooBig);
        };
        target.copy_from_slice(data);
        self.received += len;
        if self.is_loaded() {
            let legacy = self.legacy;
            let converted = self.check(max_bytes).and_then(|()| {
                self.table.rebuild_offsets();
                self.upgrade(max_bytes)
            });
            if converted.is_err() {
                // A refused conversion changed nothing but the flag.
                self.legacy = legacy;
                if let Some(target) = self.table.bytes.get_mut(range) {
                    target.fill(0);
                }
                self.received = start;
                return Err(ChunkError::BadData);
            }
        }
        Ok(())
    }
}
