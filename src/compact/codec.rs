//! A compact filter outside memory, through one validator: its RDB value, and its
//! SCANDUMP/LOADCHUNK form. The header (iterator 0's chunk, also the digest's fixed fields)
//! is our own little-endian record:
//!
//! ```text
//! magic "bloomrsP" | version u32 | error f64 | log2_slots u32 | generation u32 | width u32
//! | flags u32 (bit 0: deletable, bit 2: kept) | items u64 | entries u64  (52 bytes)
//! ```
//!
//! Data chunks then carry the table's bytes in order, at most [`MAX_CHUNK`] each: iterator
//! `p >= 1` is byte `p - 1` of the table, each chunk continues where the previous one ended,
//! and the validator's walk of the tables goes on through each chunk as it arrives (`walk`). The RDB value is the header's
//! fields after the magic and version (as unsigned integers, the error as a double), the
//! count of table bytes received (all of them, but between LOADCHUNK calls), then the table
//! in one buffer. Read as RedisBloom's first header field (the item count) the magic
//! is above 6·10^18 items, so the headers of the kinds never collide.

use super::counters;
use super::doubling::{elements_cost, planned, split_into, Doubling, Finish};
use super::table::{offset_bytes, table_bytes, Table};
use super::walk::{Progress, RunWalk};
use super::{
    fingerprint_bits, max_entries, next_width, value_bytes, width_for, Compact, MAX_LOG2_SLOTS,
    MIN_LOG2_SLOTS,
};
use crate::bloom::{chunk_start, ChunkError, HeaderError, MAX_CHUNK};
use crate::rdb::{LoadError, RdbRead, RdbWrite};

/// The first eight bytes of every compact header.
pub const MAGIC: &[u8; 8] = b"bloomrsP";
/// Encoding 3 carries a doubling in progress (its cursor, reserve and old table); encoding 2
/// counts repeated adds (`counters`); encoding 1's values (and SCANDUMP header version 1's)
/// still load, converted. One way: a server from before cannot read a newer encoding.
pub const DOUBLING_ENCODING: i32 = 3;
const COUNTED_ENCODING: i32 = 2;
const LEGACY_ENCODING: i32 = 1;
/// Header version 3 (68 bytes) is sent only by a filter in the middle of a doubling; others
/// send version 2, as before.
const DOUBLING_HEADER: u32 = 3;
const HEADER_VERSION: u32 = 2;
const LEGACY_HEADER: u32 = 1;
const HEADER_LEN: usize = 52;
const DOUBLING_HEADER_LEN: usize = 68;
const FLAG_DELETABLE: u64 = 1;
/// The table is in encoding 1's form (only while its chunks arrive).
const FLAG_LEGACY: u64 = 2;
/// The value is kept in this encoding for good, never converted to segments (`kept`).
const FLAG_KEPT: u64 = 4;

/// The fields a header or an RDB value carries, before any table is allocated.
struct Shape {
    error: f64,
    log2_slots: u64,
    generation: u64,
    width: u64,
    flags: u64,
    items: u64,
    entries: u64,
    /// During a doubling: old quotients moved, and the reserve.
    doubling: Option<(u64, u64)>,
}

/// The dimensions a checked shape allows: the table's, and a doubling's old table's.
struct Dims {
    log2_slots: u32,
    generation: u32,
    width: u32,
    old: Option<(u32, u32)>,
}

impl Shape {
    /// Every field checked and the tables' sizes admitted together, before allocating them.
    fn check(&self, max_bytes: u64) -> Result<Dims, LoadError> {
        if !(self.error > 0.0 && self.error < 1.0) {
            return Err(LoadError::Invalid("error rate"));
        }
        if self.flags & !(FLAG_DELETABLE | FLAG_LEGACY | FLAG_KEPT) != 0 {
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
        let old = match self.doubling {
            None => None,
            Some((cursor, reserve)) => {
                Some(self.check_doubling(log2_slots, generation, cursor, reserve)?)
            }
        };
        let old_bytes = old.map_or(Some(0), |(q, w)| {
            table_bytes(q, w)?.checked_add(offset_bytes(q))
        });
        let size = value_bytes(log2_slots, width).zip(old_bytes);
        if size.is_none_or(|(new, old)| new.saturating_add(old) > max_bytes) {
            return Err(LoadError::TooLarge);
        }
        Ok(Dims {
            log2_slots,
            generation,
            width,
            old,
        })
    }

    /// A doubling's fields: the old table one size smaller, one generation earlier, its cursor
    /// inside it, no table in encoding 1's form.
    fn check_doubling(
        &self,
        log2_slots: u32,
        generation: u32,
        cursor: u64,
        reserve: u64,
    ) -> Result<(u32, u32), LoadError> {
        if generation == 0 || log2_slots <= MIN_LOG2_SLOTS || self.flags & FLAG_LEGACY != 0 {
            return Err(LoadError::Invalid("doubling"));
        }
        let old_log2 = log2_slots - 1;
        let old_width =
            width_for(self.error, generation - 1).ok_or(LoadError::Invalid("doubling"))?;
        let room = self.entries.saturating_add(reserve) <= max_entries(1 << log2_slots);
        if cursor >= 1u64 << old_log2 || !room {
            return Err(LoadError::Invalid("doubling"));
        }
        Ok((old_log2, old_width))
    }

    fn of(filter: &Compact) -> Shape {
        Shape {
            error: filter.error,
            log2_slots: u64::from(filter.table.log2_slots),
            generation: u64::from(filter.generation),
            width: u64::from(filter.table.width),
            flags: u64::from(filter.deletable) * FLAG_DELETABLE
                + u64::from(filter.legacy) * FLAG_LEGACY
                + u64::from(filter.kept) * FLAG_KEPT,
            items: filter.items,
            entries: filter.entries,
            doubling: filter.doubling.as_ref().map(|d| (d.cursor, d.reserve)),
        }
    }

    /// A filter of this shape around `table` and a doubling's `old` table (whose dimensions
    /// the caller made match); its derived counts are set once it is checked.
    fn filter(&self, dims: &Dims, table: Table, old: Option<Table>, received: u64) -> Compact {
        let doubling = self
            .doubling
            .zip(old)
            .map(|((cursor, reserve), old)| Doubling {
                old,
                cursor,
                pending: 0,
                reserve,
            });
        Compact {
            fresh_bits: fingerprint_bits(self.error, dims.generation).unwrap_or(0),
            error: self.error,
            generation: dims.generation,
            deletable: self.flags & FLAG_DELETABLE != 0,
            items: self.items,
            entries: self.entries,
            received,
            legacy: self.flags & FLAG_LEGACY != 0,
            kept: self.flags & FLAG_KEPT != 0,
            next_width: next_width(self.error, dims.generation, table.width),
            table,
            moved: 0,
            doubling,
            walks: Some(Box::default()),
        }
    }
}

/// Whether `table` has the given shape and length, and (`whole`) no stray bits past its last
/// slot.
fn sized(table: &Table, log2_slots: u32, width: u32) -> Result<(), LoadError> {
    let expected = table_bytes(log2_slots, width).unwrap_or(0);
    if table.log2_slots != log2_slots || table.width != width {
        return Err(LoadError::Invalid("table shape"));
    }
    if table.bytes.len() as u64 != expected {
        return Err(LoadError::Invalid("table length"));
    }
    Ok(())
}

/// What a table is checked against, and how its runs are costed for the next table.
#[derive(Clone, Copy)]
struct Rules {
    /// Entries may have counters.
    counted: bool,
    /// A run may hold a fingerprint twice (encoding 1's form).
    legacy: bool,
    /// Runs of quotients from this one on are costed.
    from: u64,
    next_width: u32,
    deletable: bool,
    /// During a doubling, the new table (its runs alone go into the finish plan).
    planned: bool,
}

/// What the walk of a table finds, as far as its bytes have arrived: a table's own checks
/// (no stray bits, runs whose entries have counters in their one form and only in `counted`
/// tables, each fingerprint once unless `legacy`), the slots it uses and its runs' cost in
/// the next table; its block offsets are set as the walk passes them.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Survey {
    walk: RunWalk,
    /// Slots in use, once every slot is walked.
    entries: Option<u64>,
    /// A counter not in its one form, or in a table without counters.
    unsound: bool,
    /// A run holds a fingerprint twice (allowed only in encoding 1's form).
    repeated: bool,
    /// Slots the runs from the rules' first quotient on take in the next table.
    cost: u64,
    /// During a doubling, what finishing it at once gives ([`Finish`]), run by run: the new
    /// table's runs alone; for the old table's runs, the new quotients they move into with
    /// them (`plan`) and without them (`replaced`).
    plan: Finish,
    replaced: Finish,
}

/// A value's walks while its tables arrive: the table's, then a doubling's old table's.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Walks {
    table: Survey,
    old: Survey,
}

impl Survey {
    /// Walks `table` on through its first `received` bytes (`into`: the new table and its
    /// next width, for an old table's runs in the finish plan): its slots in use once every
    /// slot is walked, None while waiting, refused as soon as a check fails.
    fn walk(
        &mut self,
        table: &Table,
        received: u64,
        rules: Rules,
        into: Option<(&Table, u32)>,
        offsets: &mut [u16],
    ) -> Result<Option<u64>, LoadError> {
        if self.entries.is_some() {
            return Ok(self.entries);
        }
        let len = table.bytes.len() as u64;
        let complete = received >= len;
        if complete {
            // Whole blocks of 64 slots end on a byte; the padding after them stays zero.
            let used = table.slots() * (u64::from(table.width) + 2) / 8;
            let stray = table
                .bytes
                .get(used as usize..)
                .is_none_or(|tail| tail.iter().any(|b| *b != 0));
            if stray {
                return Err(LoadError::Invalid("bits past the table"));
            }
        }
        let ready = table.slots_within(received.min(len));
        let mut seen: Vec<u64> = Vec::new();
        let mut halves: [Vec<(u64, u64)>; 2] = Default::default();
        let (mut run, mut alone, mut placed) = (Vec::new(), Vec::new(), Vec::new());
        let Survey {
            walk,
            unsound,
            repeated,
            cost,
            plan,
            replaced,
            ..
        } = self;
        let progress = walk.advance(table, ready, complete, offsets, |x, _, fields| {
            seen.clear();
            let field_at = |k: u64| fields.get(k as usize).copied().unwrap_or(0);
            let elements = || counters::elements(fields.len() as u64, table.width, field_at);
            let mut slots = 0u64;
            for e in elements() {
                *unsound |= !e.canonical || !(rules.counted || e.pairs == 0);
                seen.push(e.field);
                slots += 1 + 2 * counters::digits(e.count, table.width).count() as u64;
            }
            seen.sort_unstable();
            *repeated |= seen.windows(2).any(|w| w.first() == w.get(1));
            if x < rules.from {
                return;
            }
            let run_cost = elements_cost(elements, table.width, rules.next_width, rules.deletable);
            *cost = cost.saturating_add(run_cost);
            if rules.planned {
                plan.add(Finish {
                    entries: slots,
                    moved: run_cost,
                    merges: 0,
                });
            }
            let Some((new, next)) = into else {
                return;
            };
            // The new quotients this run moves into, with it and without it.
            split_into(
                elements(),
                table.width,
                new.width,
                rules.deletable,
                &mut halves,
            );
            for (half, moving) in (0u64..).zip(&halves) {
                if moving.is_empty() {
                    continue;
                }
                run.clear();
                if let Some(new_run) = new.run(2 * x + half) {
                    run.extend(new.run_elements(new_run).map(|e| (e.field, e.count)));
                }
                alone.clone_from(&run);
                let widths = (new.width, next);
                plan.add(planned(
                    &mut run,
                    moving,
                    &mut placed,
                    widths,
                    rules.deletable,
                ));
                replaced.add(planned(
                    &mut alone,
                    &[],
                    &mut placed,
                    widths,
                    rules.deletable,
                ));
            }
        });
        if *unsound || (*repeated && !rules.legacy) {
            return Err(LoadError::Invalid("counters"));
        }
        match progress.ok_or(LoadError::Invalid("table metadata"))? {
            Progress::Waiting => Ok(None),
            Progress::Done(entries) => {
                // The walk's own state is not needed any more (nor kept: every path to the
                // same bytes leaves the same state).
                self.walk = RunWalk::default();
                self.entries = Some(entries);
                Ok(Some(entries))
            }
        }
    }
}

/// The counts a value's tables give (once every byte arrived).
struct Derived {
    moved: u64,
    /// A doubling's.
    pending: u64,
    /// A table in encoding 1's form holds a fingerprint twice (`Compact::upgrade`).
    repeated: bool,
    /// A doubling finished at once.
    plan: Option<Finish>,
}

impl Compact {
    /// The one validator of a compact value read from outside (RDB, RESTORE, LOADCHUNK):
    /// fields a filter could have, a size within `max_bytes` (both tables during a
    /// doubling), tables whose metadata describe runs holding exactly `entries` entries, no
    /// stray bits past the last slot, and room in the new table for what a doubling still
    /// moves; the counts derived from the tables are the ones kept. A value still arriving
    /// has the walks its received bytes give.
    pub fn validate(&self, max_bytes: u64) -> Result<(), LoadError> {
        if self.legacy && self.is_loaded() {
            return Err(LoadError::Invalid("table in encoding 1"));
        }
        self.check_shape(max_bytes)?;
        let mut copy = self.clone();
        let mut walks = Walks::default();
        let Some(derived) = copy.walk_on(&mut walks)? else {
            return match self.walks.as_deref() == Some(&walks) {
                true => Ok(()),
                false => Err(LoadError::Invalid("derived counts")),
            };
        };
        let pending = self.doubling.as_ref().map_or(0, |d| d.pending);
        if (derived.moved, derived.pending) != (self.moved, pending) {
            return Err(LoadError::Invalid("derived counts"));
        }
        self.check_reserve(derived.plan)
    }

    /// During a doubling (tables complete): the reserve covers every merge the moves still
    /// to come make with an entry adds put in the new table, and the new table takes all of
    /// it (`plan`: finishing the doubling at once). Commands always leave that much (an add
    /// that puts an entry beside an old one matching its item reserves a slot; only its
    /// move's merge takes it back), so this refuses only a header that understates its
    /// reserve, or a cursor set back (the quotients moved again then meet their own
    /// entries), values that would lose items two writes later.
    fn check_reserve(&self, plan: Option<Finish>) -> Result<(), LoadError> {
        let (Some(d), Some(plan)) = (&self.doubling, plan) else {
            return Ok(());
        };
        if d.reserve < plan.merges || plan.entries > max_entries(self.table.slots()) {
            return Err(LoadError::Invalid("doubling reserve"));
        }
        Ok(())
    }

    /// The checks of the fields and sizes, and (between LOADCHUNK calls) that the bytes not
    /// received yet are zero; no table walked.
    fn check_shape(&self, max_bytes: u64) -> Result<(), LoadError> {
        let dims = Shape::of(self).check(max_bytes)?;
        sized(&self.table, dims.log2_slots, dims.width)?;
        match (&self.doubling, dims.old) {
            (Some(d), Some((log2_slots, width))) => sized(&d.old, log2_slots, width)?,
            (None, None) => {}
            _ => return Err(LoadError::Invalid("doubling")),
        }
        if self.received > self.stream_len() {
            return Err(LoadError::Invalid("table length"));
        }
        if !self.is_loaded() {
            // Between LOADCHUNK calls (and so in an RDB or AOF taken then): the bytes not
            // received yet are still zero.
            let received = self.received as usize;
            let new_len = self.table.bytes.len();
            let pending_new = self.table.bytes.get(received.min(new_len)..);
            let pending_old = self
                .doubling
                .as_ref()
                .map(|d| d.old.bytes.get(received.saturating_sub(new_len)..));
            let dirty = |bytes: Option<&[u8]>| bytes.is_none_or(|b| b.iter().any(|b| *b != 0));
            if dirty(pending_new) || pending_old.is_some_and(dirty) {
                return Err(LoadError::Invalid("bytes past those received"));
            }
        }
        Ok(())
    }

    /// The validator's walk of the tables (the table, then a doubling's old table), taken on
    /// from `walks` through the bytes received: the counts derived once every byte is
    /// walked, None before. Sets the block offsets as it passes them. Each table is walked
    /// once in all, whether its bytes come at once (RDB, RESTORE) or chunk by chunk.
    fn walk_on(&mut self, walks: &mut Walks) -> Result<Option<Derived>, LoadError> {
        let rules = Rules {
            counted: self.deletable && !self.legacy,
            legacy: self.legacy,
            from: 0,
            next_width: self.next_width(),
            deletable: self.deletable,
            planned: self.doubling.is_some(),
        };
        let new_len = self.table.bytes.len() as u64;
        let mut offsets = std::mem::take(&mut self.table.offsets);
        let walked = walks.table.walk(
            &self.table,
            self.received.min(new_len),
            rules,
            None,
            &mut offsets,
        );
        self.table.offsets = offsets;
        let Some(entries) = walked? else {
            return Ok(None);
        };
        if entries != self.entries {
            return Err(LoadError::Invalid("entry count"));
        }
        let Compact {
            table,
            doubling,
            received,
            entries,
            next_width,
            ..
        } = self;
        let Some(d) = doubling else {
            return Ok(Some(Derived {
                moved: walks.table.cost,
                pending: 0,
                repeated: walks.table.repeated,
                plan: None,
            }));
        };
        let old_rules = Rules {
            legacy: false,
            from: d.cursor,
            next_width: table.width,
            planned: false,
            ..rules
        };
        let mut offsets = std::mem::take(&mut d.old.offsets);
        let into = Some((&*table, *next_width));
        let old_received = received.saturating_sub(new_len);
        let walked = walks
            .old
            .walk(&d.old, old_received, old_rules, into, &mut offsets);
        d.old.offsets = offsets;
        let Some(old_entries) = walked? else {
            return Ok(None);
        };
        if old_entries > max_entries(d.old.slots()) {
            return Err(LoadError::Invalid("entry count"));
        }
        let committed = entries
            .saturating_add(walks.old.cost)
            .saturating_add(d.reserve);
        if committed > max_entries(table.slots()) {
            return Err(LoadError::Invalid("doubling"));
        }
        let (kept, with, without) = (walks.table.plan, walks.old.plan, walks.old.replaced);
        let plan = Finish {
            entries: (kept.entries + with.entries).saturating_sub(without.entries),
            moved: (kept.moved + with.moved).saturating_sub(without.moved),
            merges: with.merges,
        };
        Ok(Some(Derived {
            moved: walks.table.cost,
            pending: walks.old.cost,
            repeated: false,
            plan: Some(plan),
        }))
    }

    /// Checks a value just read (whole, or between LOADCHUNK calls) and sets its derived
    /// counts and offsets; a table in encoding 1's form is then brought to encoding 2
    /// (`upgrade`). Refused with nothing changed but the derived counts.
    pub(super) fn settle(&mut self, max_bytes: u64) -> Result<(), LoadError> {
        self.check_shape(max_bytes)?;
        let mut walks = Walks::default();
        let derived = self.walk_on(&mut walks)?;
        self.conclude(walks, derived, max_bytes)
    }

    /// After a walk: a value still arriving keeps its walks; a complete one its derived
    /// counts, once its doubling's reserve is checked and a table in encoding 1's form
    /// upgraded.
    fn conclude(
        &mut self,
        walks: Walks,
        derived: Option<Derived>,
        max_bytes: u64,
    ) -> Result<(), LoadError> {
        let Some(derived) = derived else {
            self.walks = Some(Box::new(walks));
            return Ok(());
        };
        self.walks = None;
        self.moved = derived.moved;
        if let Some(d) = &mut self.doubling {
            d.pending = derived.pending;
        }
        self.check_reserve(derived.plan)?;
        self.upgrade(derived.repeated, max_bytes)
    }

    pub fn save(&self, w: &mut impl RdbWrite) {
        self.save_as(w, DOUBLING_ENCODING);
    }

    /// The value in encoding `encver`: encodings before 3 have no doubling fields (for tests
    /// of the older encodings; a filter in the middle of a doubling has no such form).
    pub(crate) fn save_as(&self, w: &mut impl RdbWrite, encver: i32) {
        let shape = Shape::of(self);
        w.write_double(shape.error);
        w.write_unsigned(shape.log2_slots);
        w.write_unsigned(shape.generation);
        w.write_unsigned(shape.width);
        w.write_unsigned(shape.flags);
        w.write_unsigned(shape.items);
        w.write_unsigned(shape.entries);
        // Encoding 3: 0, or the cursor plus one and the reserve.
        match shape.doubling {
            _ if encver < DOUBLING_ENCODING => {}
            None => w.write_unsigned(0),
            Some((cursor, reserve)) => {
                w.write_unsigned(cursor.saturating_add(1));
                w.write_unsigned(reserve);
            }
        }
        w.write_unsigned(self.received);
        w.write_buffer(&self.table.bytes);
        if let Some(d) = &self.doubling {
            w.write_buffer(&d.old.bytes);
        }
    }

    pub fn load(r: &mut impl RdbRead, encver: i32, max_bytes: u64) -> Result<Compact, LoadError> {
        if !(LEGACY_ENCODING..=DOUBLING_ENCODING).contains(&encver) {
            return Err(LoadError::UnknownVersion(encver));
        }
        let mut shape = Shape {
            error: r.read_double()?,
            log2_slots: r.read_unsigned()?,
            generation: r.read_unsigned()?,
            width: r.read_unsigned()?,
            flags: r.read_unsigned()?,
            items: r.read_unsigned()?,
            entries: r.read_unsigned()?,
            doubling: None,
        };
        if encver > COUNTED_ENCODING {
            let cursor = r.read_unsigned()?;
            if let Some(cursor) = cursor.checked_sub(1) {
                shape.doubling = Some((cursor, r.read_unsigned()?));
            }
        }
        let received = r.read_unsigned()?;
        if encver == LEGACY_ENCODING && shape.flags & FLAG_LEGACY != 0 {
            return Err(LoadError::Invalid("unknown flags"));
        }
        if encver == LEGACY_ENCODING {
            shape.flags |= FLAG_LEGACY;
        }
        let dims = shape.check(max_bytes)?;
        let read_table = |r: &mut _, log2_slots, width| -> Result<Table, LoadError> {
            let bytes = RdbRead::read_buffer(r)?;
            if bytes.len() as u64 != table_bytes(log2_slots, width).unwrap_or(0) {
                return Err(LoadError::Invalid("table length"));
            }
            Table::from_bytes(log2_slots, width, bytes).ok_or(LoadError::TooLarge)
        };
        let table = read_table(r, dims.log2_slots, dims.width)?;
        let old = match dims.old {
            Some((log2_slots, width)) => Some(read_table(r, log2_slots, width)?),
            None => None,
        };
        let mut filter = shape.filter(&dims, table, old, received);
        filter.settle(max_bytes)?;
        Ok(filter)
    }

    /// A complete table in encoding 1's form (checked, `repeated` if a fingerprint repeats)
    /// brought to encoding 2. A table with no repeated entry is the same in both; one with
    /// repeated entries takes one doubling, done at once, which merges them into counters
    /// (an add would have doubled it soon; one that cannot double is refused, and nothing
    /// changes).
    fn upgrade(&mut self, repeated: bool, max_bytes: u64) -> Result<(), LoadError> {
        if !self.legacy {
            return Ok(());
        }
        if !repeated {
            self.legacy = false;
            return Ok(());
        }
        let mut converted = self.clone();
        converted.legacy = false;
        let refused = LoadError::Invalid("encoding 1 table too full to convert");
        converted.start_doubling(&max_bytes).map_err(|_| refused)?;
        if !converted.migrate(u64::MAX) {
            return Err(LoadError::Invalid("table metadata"));
        }
        converted.validate(max_bytes)?;
        *self = converted;
        Ok(())
    }

    /// Whether a LOADCHUNK header is a compact filter's.
    pub fn is_header(bytes: &[u8]) -> bool {
        bytes.starts_with(MAGIC)
    }

    /// The header: iterator 0's chunk, and the digest's fixed fields.
    pub fn encode_header(&self) -> Vec<u8> {
        let s = Shape::of(self);
        let mut out = Vec::with_capacity(DOUBLING_HEADER_LEN);
        // A table still in encoding 1's form says so by header version 1, as it came: one
        // header for one filter. Only a doubling needs version 3.
        let version = match (self.legacy, s.doubling) {
            (true, _) => LEGACY_HEADER,
            (false, None) => HEADER_VERSION,
            (false, Some(_)) => DOUBLING_HEADER,
        };
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&version.to_le_bytes());
        out.extend_from_slice(&s.error.to_le_bytes());
        for field in [s.log2_slots, s.generation, s.width, s.flags & !FLAG_LEGACY] {
            out.extend_from_slice(&(field as u32).to_le_bytes());
        }
        out.extend_from_slice(&s.items.to_le_bytes());
        out.extend_from_slice(&s.entries.to_le_bytes());
        if let Some((cursor, reserve)) = s.doubling {
            out.extend_from_slice(&cursor.to_le_bytes());
            out.extend_from_slice(&reserve.to_le_bytes());
        }
        out
    }

    /// A filter awaiting its tables' chunks, as a header describes it (checked by the
    /// validator's field checks before the zeroed tables are allocated).
    pub fn from_header(bytes: &[u8], max_bytes: u64) -> Result<Compact, HeaderError> {
        let (version, body) = match bytes.split_first_chunk::<12>() {
            Some((head, body)) if head.starts_with(MAGIC) => {
                let version = u32::from_le_bytes([head[8], head[9], head[10], head[11]]);
                let len = match version {
                    DOUBLING_HEADER => DOUBLING_HEADER_LEN,
                    HEADER_VERSION | LEGACY_HEADER => HEADER_LEN,
                    _ => return Err(HeaderError::BadData),
                };
                if bytes.len() != len {
                    return Err(HeaderError::BadData);
                }
                (version, body)
            }
            _ => return Err(HeaderError::BadData),
        };
        let words: Vec<u64> = body
            .chunks(4)
            .map(|f| {
                f.first_chunk::<4>()
                    .map_or(0, |f| u64::from(u32::from_le_bytes(*f)))
            })
            .collect();
        let word = |k: usize| words.get(k).copied().unwrap_or(0);
        let wide = |k: usize| word(k + 1) << 32 | word(k);
        let (log2_slots, generation, width, flags) = (word(2), word(3), word(4), word(5));
        let doubling = (version == DOUBLING_HEADER).then(|| (wide(10), wide(12)));
        let (error, items, entries) = (wide(0), wide(6), wide(8));
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
            error: f64::from_bits(error),
            log2_slots,
            generation,
            width,
            flags: flags | legacy,
            items,
            entries,
            doubling,
        };
        let dims = shape.check(max_bytes).map_err(|e| match e {
            LoadError::TooLarge => HeaderError::TooLarge,
            _ => HeaderError::BadData,
        })?;
        let table = Table::new(dims.log2_slots, dims.width).ok_or(HeaderError::TooLarge)?;
        let old = match dims.old {
            Some((log2_slots, width)) => {
                Some(Table::new(log2_slots, width).ok_or(HeaderError::TooLarge)?)
            }
            None => None,
        };
        Ok(shape.filter(&dims, table, old, 0))
    }

    /// The tables' bytes as one stream: the table's, then a doubling's old table's.
    fn stream(&self) -> [&[u8]; 2] {
        let old = self.doubling.as_ref().map_or(&[][..], |d| &d.old.bytes[..]);
        [&self.table.bytes[..], old]
    }

    /// The data chunks after the header, as `(iterator, bytes)`: the iterator LOADCHUNK
    /// receives with these bytes (SCANDUMP's "next"), each chunk at most 16 MiB and within
    /// one table, each a slice of it (nothing is copied). A filter still loading gives the
    /// bytes it received, so its dump (and AOF rewrite) rebuilds the same state.
    pub fn chunks(&self) -> impl Iterator<Item = (i64, &[u8])> + '_ {
        let mut end = 1i64;
        let mut left = self.received as usize;
        self.stream()
            .into_iter()
            .flat_map(move |bytes| {
                let taken = bytes.get(..left.min(bytes.len())).unwrap_or_default();
                left -= taken.len();
                taken.chunks(MAX_CHUNK as usize)
            })
            .map(move |bytes| {
                end = end.saturating_add(bytes.len() as i64);
                (end, bytes)
            })
    }

    /// Copies `data` into the stream of tables at `start` (or zeroes that range): the caller
    /// checked that it lies within.
    fn write_stream(&mut self, start: usize, data: Option<&[u8]>, len: usize) {
        let new_len = self.table.bytes.len();
        let old = self.doubling.as_mut().map(|d| &mut d.old.bytes);
        let tables =
            std::iter::once((0usize, &mut self.table.bytes)).chain(old.map(|o| (new_len, o)));
        for (base, bytes) in tables {
            let from = start.max(base);
            let to = (start + len).min(base + bytes.len());
            if from >= to {
                continue;
            }
            if let Some(target) = bytes.get_mut(from - base..to - base) {
                match data.and_then(|d| d.get(from - start..to - start)) {
                    Some(source) => target.copy_from_slice(source),
                    None => target.fill(0),
                }
            }
        }
    }

    /// Writes a data chunk `chunks` returned with iterator `iter`: it must continue where the
    /// received bytes end, and the validator's walk goes on through it (so the chunk that
    /// completes a value walks its own bytes and what its tables' walks left: the run in
    /// progress where it starts, and the cluster reaching slot 0 from the table's end). A
    /// refused chunk is taken back and changes nothing.
    pub fn load_chunk(&mut self, iter: i64, data: &[u8], max_bytes: u64) -> Result<(), ChunkError> {
        let len = data.len() as u64;
        let start = chunk_start(iter, data.len())?;
        if start != self.received {
            return Err(ChunkError::NoLink);
        }
        if start
            .checked_add(len)
            .is_none_or(|end| end > self.stream_len())
        {
            return Err(ChunkError::TooBig);
        }
        self.write_stream(start as usize, Some(data), data.len());
        self.received += len;
        let before = self.walks.clone();
        let mut walks = self.walks.take().map(|w| *w).unwrap_or_default();
        let walked = self
            .walk_on(&mut walks)
            .and_then(|derived| self.conclude(walks, derived, max_bytes));
        if walked.is_err() {
            // A refused chunk changed nothing but derived counts: taken back.
            self.take_back(start, data.len());
            self.walks = before;
            return Err(ChunkError::BadData);
        }
        Ok(())
    }

    /// Takes back the last chunk, of `len` bytes from `start` (refused after it was
    /// written): its bytes zeroed and the derived counts of an incomplete table again.
    pub(crate) fn take_back(&mut self, start: u64, len: usize) {
        self.write_stream(start as usize, None, len);
        self.received = start;
        self.moved = 0;
        if let Some(d) = &mut self.doubling {
            d.pending = 0;
        }
    }
}
