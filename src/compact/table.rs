//! The slot table of a compact filter: a circular quotient table of `2^log2_slots` slots
//! packed in bytes, each slot `2 + width` bits: bit 0 `occupied` (some entry has this slot as
//! its quotient), bit 1 `runend` (the entry here ends its quotient's run), then the entry's
//! field. A field holds a fingerprint of `len < width` bits followed by a 1 and zeros (so a
//! field is never zero, and zero marks an empty slot); a fingerprint of 0 bits (void) matches
//! every query of its quotient.
//!
//! An entry added more than once to a deletable filter is stored once with a counter after
//! it, in the same run (see `counters`): pairs of slots, an escape (field zero, which no entry
//! has) and a digit. A zero field is an empty slot unless the slot before holds a field and
//! does not end its run, so an escape needs no extra bit in any slot.
//!
//! Entries of one quotient form a run; runs are stored in quotient order, each starting at
//! its quotient or as soon after it as the runs before allow (linear probing). Every walk is
//! bounded by the slot count, so a table read from outside can answer wrongly but never loop
//! or read out of bounds.

/// Bytes past the last slot, so an 8-byte window read at any slot stays in the buffer.
const PAD: usize = 7;
pub(super) const OCCUPIED: u64 = 1;
pub(super) const RUNEND: u64 = 2;

#[derive(Debug, Clone)]
pub struct Table {
    pub(super) log2_slots: u32,
    /// Field bits per slot (fingerprints up to `width - 1` bits).
    pub(super) width: u32,
    pub(super) bytes: Vec<u8>,
    /// Per 64 slots, how many slots from the first one on hold entries of earlier quotients
    /// (derived from the runs, never stored outside): lookups start counting runs there.
    pub(super) offsets: Vec<u16>,
}

/// Tables are equal when their stored bytes are: the offsets are derived from them (and a
/// block's offset may stay marked too large after deletes shrank it, until rebuilt).
impl PartialEq for Table {
    fn eq(&self, other: &Table) -> bool {
        (self.log2_slots, self.width, &self.bytes) == (other.log2_slots, other.width, &other.bytes)
    }
}

/// An entry's fingerprint: its `len` leading bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint {
    pub bits: u64,
    pub len: u32,
}

impl Fingerprint {
    /// The field storing this fingerprint in a slot of `width` field bits (`len < width`).
    pub fn field(self, width: u32) -> u64 {
        ((self.bits << 1) | 1) << (width - 1 - self.len)
    }

    /// The fingerprint a non-zero field stores.
    pub fn of_field(field: u64, width: u32) -> Fingerprint {
        let len = (width - 1).saturating_sub(field.trailing_zeros());
        Fingerprint {
            bits: field.checked_shr(width - len).unwrap_or(0),
            len,
        }
    }

    /// Whether a query's `width - 1` fingerprint bits start with this fingerprint.
    #[inline]
    pub fn matches(field: u64, query: u64) -> bool {
        // The field minus its marker bit and below, compared with the query's bits above it.
        let marker = field & field.wrapping_neg();
        let above = !(marker | marker.wrapping_sub(1));
        (query << 1) & above == field & above
    }
}

/// Bytes of a table's block offsets.
pub fn offset_bytes(log2_slots: u32) -> u64 {
    (1u64 << log2_slots.min(63)) / 64 * 2
}

/// Bytes a table of these dimensions takes.
pub fn table_bytes(log2_slots: u32, width: u32) -> Option<u64> {
    let bits = 1u64
        .checked_shl(log2_slots)?
        .checked_mul(u64::from(width) + 2)?;
    bits.div_ceil(8).checked_add(PAD as u64)
}

impl Table {
    /// An empty table, or None if it cannot be allocated.
    pub fn new(log2_slots: u32, width: u32) -> Option<Table> {
        let len = usize::try_from(table_bytes(log2_slots, width)?).ok()?;
        // A zeroed allocation: large ones come as fresh pages the system zeroes when first
        // touched, so a big table (a doubling, a LOADCHUNK header) costs no pass of writes.
        // The size was admitted against the limits before.
        let bytes = vec![0u8; len];
        Self::from_bytes(log2_slots, width, bytes)
    }

    /// A table around bytes of the right length (offsets zero until rebuilt).
    pub fn from_bytes(log2_slots: u32, width: u32, bytes: Vec<u8>) -> Option<Table> {
        let blocks = usize::try_from(1u64.checked_shl(log2_slots)? / 64).ok()?;
        let offsets = vec![0u16; blocks];
        Some(Table {
            log2_slots,
            width,
            bytes,
            offsets,
        })
    }

    #[inline]
    pub fn slots(&self) -> u64 {
        1u64 << self.log2_slots
    }

    #[inline]
    pub(super) fn next(&self, i: u64) -> u64 {
        (i + 1) & (self.slots() - 1)
    }

    #[inline]
    pub(super) fn prev(&self, i: u64) -> u64 {
        i.wrapping_sub(1) & (self.slots() - 1)
    }

    /// Bytes of a block of 64 slots: their occupieds word, their runends word, their fields.
    #[inline]
    fn block_bytes(&self) -> usize {
        16 + 8 * self.width as usize
    }

    #[inline]
    fn word_at(&self, at: usize) -> u64 {
        self.bytes
            .get(at..at + 8)
            .and_then(|w| w.first_chunk::<8>())
            .map_or(0, |w| u64::from_le_bytes(*w))
    }

    #[inline]
    fn put_word_at(&mut self, at: usize, value: u64) {
        if let Some(w) = self.bytes.get_mut(at..at + 8) {
            w.copy_from_slice(&value.to_le_bytes());
        }
    }

    /// Word `w` (slots `64w..64w+63`) of the occupieds (`vector` 0) or runends (1).
    #[inline]
    pub(super) fn meta_word(&self, vector: usize, w: u64) -> u64 {
        self.word_at(w as usize * self.block_bytes() + 8 * vector)
    }

    #[inline]
    pub(super) fn field_bit(&self, i: u64) -> u64 {
        8 * ((i >> 6) * self.block_bytes() as u64 + 16) + (i & 63) * u64::from(self.width)
    }

    /// The slot's bits: occupied, runend, field.
    #[inline]
    pub(super) fn slot(&self, i: u64) -> u64 {
        let bit = self.field_bit(i);
        let field = (self.word_at((bit >> 3) as usize) >> (bit & 7)) & ((1u64 << self.width) - 1);
        let meta = |v| (self.meta_word(v, i >> 6) >> (i & 63)) & 1;
        meta(0) | meta(1) << 1 | field << 2
    }

    #[inline]
    fn set_slot(&mut self, i: u64, value: u64) {
        for vector in 0..2 {
            let at = (i >> 6) as usize * self.block_bytes() + 8 * vector;
            let word = self.word_at(at) & !(1 << (i & 63));
            self.put_word_at(at, word | ((value >> vector) & 1) << (i & 63));
        }
        let bit = self.field_bit(i);
        let at = (bit >> 3) as usize;
        let mask = ((1u64 << self.width) - 1) << (bit & 7);
        let word = self.word_at(at) & !mask;
        self.put_word_at(at, word | (((value >> 2) << (bit & 7)) & mask));
    }

    /// A hint to load the bytes of slot `i` and of the slot before it (where a lookup's walk
    /// back to its cluster's start begins).
    #[inline]
    pub fn prefetch(&self, i: u64) {
        let base = self.bytes.as_ptr();
        let at = (self.field_bit(i) >> 3) as usize;
        crate::bloom::link::prefetch(base.wrapping_add(at));
        crate::bloom::link::prefetch(base.wrapping_add((i >> 6) as usize * self.block_bytes()));
    }

    #[inline]
    pub fn field(&self, i: u64) -> u64 {
        let bit = self.field_bit(i);
        (self.word_at((bit >> 3) as usize) >> (bit & 7)) & ((1u64 << self.width) - 1)
    }

    /// Whether slot `i` is empty: a zero field that is not a counter's escape (an escape
    /// follows a slot of its run: a field that does not end the run).
    #[inline]
    pub(super) fn is_empty(&self, i: u64) -> bool {
        if self.field(i) != 0 {
            return false;
        }
        let before = self.prev(i);
        self.field(before) == 0 || self.runend(before)
    }

    #[inline]
    pub(super) fn occupied(&self, i: u64) -> bool {
        (self.meta_word(0, i >> 6) >> (i & 63)) & 1 != 0
    }

    #[inline]
    pub(super) fn runend(&self, i: u64) -> bool {
        (self.meta_word(1, i >> 6) >> (i & 63)) & 1 != 0
    }

    /// Sets the entry part (runend and field) of a slot, keeping its occupied bit.
    fn set_entry(&mut self, i: u64, entry: u64) {
        self.set_flag(i, RUNEND, entry & RUNEND != 0);
        let bit = self.field_bit(i);
        let at = (bit >> 3) as usize;
        let mask = ((1u64 << self.width) - 1) << (bit & 7);
        let word = self.word_at(at) & !mask;
        self.put_word_at(at, word | (((entry >> 2) << (bit & 7)) & mask));
    }

    fn set_flag(&mut self, i: u64, flag: u64, on: bool) {
        let at = (i >> 6) as usize * self.block_bytes() + 8 * usize::from(flag == RUNEND);
        let word = self.word_at(at) & !(1 << (i & 63));
        self.put_word_at(at, word | u64::from(on) << (i & 63));
    }

    /// The slot of the `k`-th runend (k >= 1) from `s` on, through non-empty slots only.
    pub(super) fn nth_runend(&self, s: u64, k: u64) -> Option<u64> {
        let mut seen = 0;
        let mut i = s;
        for _ in 0..self.slots() {
            super::meter::add(1);
            if self.is_empty(i) {
                return None;
            }
            if self.runend(i) {
                seen += 1;
                if seen == k {
                    return Some(i);
                }
            }
            i = self.next(i);
        }
        None
    }

    /// The first slot of `x`'s cluster and the occupied quotients from it to `x` included,
    /// in one walk back (`x` must be non-empty).
    pub(super) fn cluster_rank(&self, x: u64) -> Option<(u64, u64)> {
        let mut s = x;
        let mut rank = u64::from(self.occupied(x));
        for _ in 0..self.slots() {
            super::meter::add(1);
            let p = self.prev(s);
            if self.is_empty(p) {
                return Some((s, rank));
            }
            rank += u64::from(self.occupied(p));
            s = p;
        }
        None
    }

    /// Appends `field` to quotient `x`'s run. False if the table is full or inconsistent
    /// (nothing changed then).
    pub fn insert(&mut self, x: u64, field: u64) -> bool {
        if self.is_empty(x) {
            if self.occupied(x) {
                return false;
            }
            self.set_slot(x, OCCUPIED | RUNEND | field << 2);
            return true;
        }
        let existing = self.occupied(x);
        let p = if existing {
            match self.run(x) {
                Some((_, end)) => self.next(end),
                None => return false,
            }
        } else {
            // Slot x holds an entry of an earlier quotient: the new run goes after their runs.
            match self.runs_at(x) {
                Some((Some(before), _)) => self.next(before),
                _ => return false,
            }
        };
        self.shift_in(x, p, field, Some(existing))
    }

    /// Puts `field` in quotient `x`'s run right after its slot `after` (a counter's slot).
    pub fn insert_after(&mut self, x: u64, after: u64, field: u64) -> bool {
        if self.runend(after) {
            self.shift_in(x, self.next(after), field, Some(true))
        } else {
            self.shift_in(x, self.next(after), field, None)
        }
    }

    /// Moves the slots from `p` to the first empty one a slot on and puts `field` at `p`:
    /// ending `x`'s run (`Some(existing)`, whether the run was there before) or inside it.
    fn shift_in(&mut self, x: u64, p: u64, field: u64, ends_run: Option<bool>) -> bool {
        let Some(empty) = self.first_empty(p) else {
            return false;
        };
        let mut i = empty;
        super::meter::add(1);
        while i != p {
            super::meter::add(1);
            let from = self.prev(i);
            self.set_entry(i, self.slot(from));
            i = from;
        }
        match ends_run {
            Some(true) => self.set_flag(self.prev(p), RUNEND, false),
            Some(false) => self.set_flag(x, OCCUPIED, true),
            None => {}
        }
        let end = if ends_run.is_some() { RUNEND } else { 0 };
        self.set_entry(p, end | field << 2);
        self.shifted_right(x, empty);
        true
    }

    /// Rewrites the field of slot `i`, keeping its flags.
    pub(super) fn set_field(&mut self, i: u64, field: u64) {
        let end = if self.runend(i) { RUNEND } else { 0 };
        self.set_entry(i, end | field << 2);
    }

    pub(super) fn first_empty(&self, from: u64) -> Option<u64> {
        let mut i = from;
        for _ in 0..self.slots() {
            super::meter::add(1);
            if self.is_empty(i) {
                return Some(i);
            }
            i = self.next(i);
        }
        None
    }

    /// The next occupied quotient after `q` (circular), if any within one turn.
    fn next_occupied(&self, q: u64) -> Option<u64> {
        let mut i = self.next(q);
        for _ in 0..self.slots() {
            super::meter::add(1);
            if self.occupied(i) {
                return Some(i);
            }
            i = self.next(i);
        }
        None
    }

    /// Removes the entry at slot `d` of quotient `x`'s run `(start, end)`, shifting the
    /// entries after it back towards their quotients.
    pub fn remove(&mut self, x: u64, (start, end): (u64, u64), d: u64) {
        let mut boundary = self.runend(d);
        if start == end {
            self.set_flag(x, OCCUPIED, false);
        } else if d == end {
            self.set_flag(self.prev(d), RUNEND, true);
            boundary = true;
        }
        let mut quotient = x;
        let mut hole = d;
        let mut i = self.next(d);
        for _ in 0..self.slots() {
            super::meter::add(1);
            // Slot i's predecessor still holds what it held: emptiness is read as before.
            if self.is_empty(i) {
                break;
            }
            let slot = self.slot(i);
            if boundary {
                match self.next_occupied(quotient) {
                    Some(q) => quotient = q,
                    None => break,
                }
                if quotient == i {
                    break;
                }
            }
            boundary = slot & RUNEND != 0;
            self.set_entry(hole, slot);
            hole = i;
            i = self.next(i);
        }
        self.set_entry(hole, 0);
        self.shifted_left(x, hole);
    }

    /// Every entry as `(quotient, field)`, each run in slot order and runs in quotient order
    /// starting after the first empty slot (so a run wrapping past the last slot comes whole).
    /// None if the table has no empty slot or its metadata do not describe runs.
    #[cfg(test)]
    pub fn entries(&self) -> Option<Vec<(u64, u64)>> {
        let mut out = Vec::new();
        self.for_each_run(|q, _, slots| {
            out.extend(slots.iter().map(|&f| (q, f)));
        })?;
        Some(out)
    }

    /// Calls `visit(quotient, last slot, fields)` for every run, in order from the first
    /// empty slot on; checks the metadata as it goes (None when inconsistent). The loader's
    /// walk (`walk`), given the whole table.
    pub fn for_each_run(&self, visit: impl FnMut(u64, u64, &[u64])) -> Option<u64> {
        let mut walk = super::walk::RunWalk::default();
        match walk.advance(self, self.slots(), true, &mut [], visit)? {
            super::walk::Progress::Done(entries) => Some(entries),
            super::walk::Progress::Waiting => None,
        }
    }

    /// Slots whose bytes lie within the first `bytes` of the table (whole blocks of 64).
    pub(super) fn slots_within(&self, bytes: u64) -> u64 {
        (bytes / self.block_bytes() as u64 * 64).min(self.slots())
    }
}
