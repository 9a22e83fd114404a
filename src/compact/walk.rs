//! The walk of a table's runs that checks its metadata (and finds its block offsets), able
//! to stop where the bytes received so far end and go on when more arrive: a table arriving
//! by LOADCHUNK is walked as its chunks come, and a table read whole (RDB, RESTORE) is the
//! same walk given every slot at once.
//!
//! The walk starts after an empty slot and goes once around: the runs of each cluster are
//! matched in order with the cluster's occupied quotients, each run starting at its quotient
//! or later and a cluster at its own quotient. Its state between calls is a few counters (a run
//! in progress is read from the table when it ends). Slot 0 is walked last (whether it is empty reads the last
//! slot), and the slots before the first empty slot after it (the cluster that reaches slot
//! 0 from the end of the table) wait for the table's last bytes: that is the part of the
//! walk a table's last chunk does besides its own slots and the run in progress where it
//! starts.

use super::table::{Table, OCCUPIED, RUNEND};

/// An offset too large to keep (`runs`): the block's runs are found by walking.
pub(super) const SATURATED: u16 = u16::MAX;

/// Where a walk stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Waiting for more of the table.
    Waiting,
    /// Every slot walked: the slots in use.
    Done(u64),
}

/// A walk of one table's runs (see the module's note).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunWalk {
    /// The empty slot the walk starts after, once found.
    start: Option<u64>,
    /// While `start` is not known: the next slot to test (slot 0, whose emptiness reads the
    /// last slot, is tested only in a complete table).
    seek: u64,
    /// Slots walked after `start`.
    walked: u64,
    /// Walk position of the next occupied quotient not matched with a run yet.
    scanned: u64,
    /// Occupied quotients walked past, and runs started (equal at the end).
    occupied: u64,
    runs: u64,
    /// The run being walked: its quotient and first slot (its fields are read from the
    /// table when it ends, so the state stays a few words whatever a run's length).
    quotient: Option<u64>,
    run_start: u64,
    after_empty: bool,
    entries: u64,
    /// Block offsets set so far (blocks counted in walk order), and the walk positions of the
    /// last run's quotient and last slot.
    blocks_set: u64,
    last_run: Option<(u64, u64)>,
}

impl RunWalk {
    /// Walks on through the slots below `ready` (every slot when `complete`), calling
    /// `visit(quotient, last slot, fields)` for every run it ends and setting `offsets` (one
    /// per block of 64 slots, ignored if shorter) as it passes their blocks. None when the
    /// metadata do not describe runs (the walk stops where it found it).
    pub fn advance(
        &mut self,
        table: &Table,
        ready: u64,
        complete: bool,
        offsets: &mut [u16],
        mut visit: impl FnMut(u64, u64, &[u64]),
    ) -> Option<Progress> {
        let n = table.slots();
        let Some(start) = self.start.or_else(|| self.seek(table, ready, complete)) else {
            return if complete {
                None
            } else {
                Some(Progress::Waiting)
            };
        };
        let base = table.next(start);
        // A run in progress where a call left it is read whole from the table when it ends.
        let mut fields: Vec<u64> = Vec::new();
        let mut carried = self.quotient.is_some();
        while self.walked < n {
            let i = (base + self.walked) & (n - 1);
            if !complete && (i == 0 || i >= ready) {
                return Some(Progress::Waiting);
            }
            let slot = table.slot(i);
            let empty = table.is_empty(i);
            self.occupied += slot & OCCUPIED;
            if empty {
                if self.quotient.is_some() || slot & RUNEND != 0 {
                    return None;
                }
            } else {
                let q = match self.quotient {
                    Some(q) => q,
                    None => {
                        // The next occupied quotient not matched yet: at or before this slot,
                        // and this slot itself after an empty one.
                        let q = self.next_quotient(table, base)?;
                        if self.after_empty && q != i {
                            return None;
                        }
                        self.runs += 1;
                        self.set_offsets(table, base, self.scanned - 1, offsets);
                        self.run_start = i;
                        q
                    }
                };
                self.quotient = Some(q);
                fields.push(slot >> 2);
                self.entries += 1;
                if slot & RUNEND != 0 {
                    if carried {
                        let len = (i.wrapping_sub(self.run_start) & (n - 1)) + 1;
                        fields.clear();
                        fields
                            .extend((0..len).map(|k| table.field((self.run_start + k) & (n - 1))));
                        carried = false;
                    }
                    visit(q, i, &fields);
                    self.last_run = Some((self.scanned - 1, self.walked));
                    fields.clear();
                    self.quotient = None;
                }
            }
            self.after_empty = empty;
            self.walked += 1;
        }
        // Every occupied quotient has a run.
        if self.occupied != self.runs {
            return None;
        }
        self.set_offsets(table, base, n, offsets);
        Some(Progress::Done(self.entries))
    }

    /// Looks for the empty slot to start after: the first one, slot 0 included once the
    /// table is complete (as a walk of a whole table starts), the first one after slot 0
    /// before. Any empty slot gives the same verdict, counts and offsets: no cluster is cut.
    fn seek(&mut self, table: &Table, ready: u64, complete: bool) -> Option<u64> {
        let n = table.slots();
        let upto = if complete { n } else { ready.min(n) };
        if upto == 0 {
            // Nothing arrived: the state stays the one a value with no bytes has.
            return None;
        }
        if self.seek == 0 {
            if !complete {
                // Slot 0 waits for the last slot; the others are read as they arrive.
                self.seek = 1;
            } else {
                super::meter::add(1);
                if table.is_empty(0) {
                    return self.begin(0);
                }
                self.seek = 1;
            }
        }
        while self.seek < upto {
            super::meter::add(1);
            let i = self.seek;
            if table.is_empty(i) {
                return self.begin(i);
            }
            self.seek += 1;
        }
        if complete && table.is_empty(0) {
            return self.begin(0);
        }
        None
    }

    fn begin(&mut self, start: u64) -> Option<u64> {
        self.start = Some(start);
        self.after_empty = true;
        Some(start)
    }

    /// The next occupied quotient from the scan on, at a walk position up to the slot being
    /// walked (None if there is none: the run would start before its quotient), read a word
    /// of 64 slots at a time.
    fn next_quotient(&mut self, table: &Table, base: u64) -> Option<u64> {
        let mask = table.slots() - 1;
        while self.scanned <= self.walked {
            let s = (base + self.scanned) & mask;
            let word = table.meta_word(0, s >> 6) >> (s & 63);
            if word == 0 {
                self.scanned += 64 - (s & 63);
                continue;
            }
            self.scanned += u64::from(word.trailing_zeros());
            if self.scanned > self.walked {
                return None;
            }
            self.scanned += 1;
            return Some((base + self.scanned - 1) & mask);
        }
        None
    }

    /// Sets the offsets of the blocks starting at walk positions up to `upto` (inclusive;
    /// all of them when past the end), not set yet: the slots from the block's start to the
    /// end of the last run of a quotient before it, when that run reaches it. Runs come in
    /// order with their quotients and ends both increasing, so that run is the last one
    /// walked when the walk comes to the block's first quotient after it.
    fn set_offsets(&mut self, table: &Table, base: u64, upto: u64, offsets: &mut [u16]) {
        let n = table.slots();
        let first = (64 - (base & 63)) & 63;
        loop {
            let at = first + 64 * self.blocks_set;
            if at >= n || at > upto {
                return;
            }
            let reach = match self.last_run {
                Some((_, end)) if end >= at => end - at + 1,
                _ => 0,
            };
            let block = ((base + at) & (n - 1)) >> 6;
            if let Some(offset) = offsets.get_mut(block as usize) {
                *offset = u16::try_from(reach).unwrap_or(SATURATED);
            }
            self.blocks_set += 1;
        }
    }
}
