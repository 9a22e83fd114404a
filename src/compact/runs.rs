//! Finding a quotient's run without walking its cluster: per block of 64 slots, the table
//! keeps how many leading slots hold entries of earlier quotients (its offset, as in the
//! rank-and-select quotient filter of Pandey et al., SIGMOD 2017). The runs that start after
//! them belong to the block's own quotients in order, so quotient `x`'s run ends at the
//! `rank`-th runend from there, `rank` counting the block's occupied quotients up to `x`:
//! one popcount and a select in a word or two, however long the cluster. A block whose
//! offset does not fit 16 bits is marked and found by walking back instead.

use super::table::{Fingerprint, Table};

use super::walk::SATURATED;

impl Table {
    #[inline]
    fn distance(&self, from: u64, to: u64) -> u64 {
        to.wrapping_sub(from) & (self.slots() - 1)
    }

    /// The `k`-th runend (k >= 1) at or after slot `from`.
    #[inline]
    fn select_runend(&self, from: u64, k: u64) -> Option<u64> {
        let words = self.slots() >> 6;
        let mut w = from >> 6;
        let mut word = self.meta_word(1, w) & (u64::MAX << (from & 63));
        let mut k = k;
        for _ in 0..=words {
            super::meter::add(1);
            let count = u64::from(word.count_ones());
            if count >= k {
                for _ in 1..k {
                    word &= word - 1;
                }
                return Some((w << 6) + u64::from(word.trailing_zeros()));
            }
            k -= count;
            w = (w + 1) & (words - 1);
            word = self.meta_word(1, w);
        }
        None
    }

    /// For quotient `x`: the last slot of the runs of quotients before `x` that reach `x`'s
    /// block or later (if any), and the last slot of `x`'s run (if `x` is occupied).
    #[inline]
    pub(super) fn runs_at(&self, x: u64) -> Option<(Option<u64>, Option<u64>)> {
        let block = x >> 6;
        let offset = *self.offsets.get(block as usize)?;
        if offset == SATURATED {
            return self.runs_at_by_walk(x);
        }
        let from = ((block << 6) + u64::from(offset)) & (self.slots() - 1);
        let upto = self.meta_word(0, block) & (u64::MAX >> (63 - (x & 63)));
        let rank = u64::from(upto.count_ones());
        let own = (upto >> (x & 63)) & 1;
        let before = match rank - own {
            0 if offset == 0 => None,
            0 => Some(self.prev(from)),
            k => Some(self.select_runend(from, k)?),
        };
        let end = match own {
            0 => None,
            _ => Some(self.select_runend(from, rank)?),
        };
        Some((before, end))
    }

    /// [`Self::runs_at`] by walking back to the cluster's start (slot `x` non-empty).
    fn runs_at_by_walk(&self, x: u64) -> Option<(Option<u64>, Option<u64>)> {
        let (s, k) = self.cluster_rank(x)?;
        let own = u64::from(self.occupied(x));
        let before = match k - own {
            0 => None,
            k => Some(self.nth_runend(s, k)?),
        };
        let end = match own {
            0 => None,
            _ => Some(self.nth_runend(s, k)?),
        };
        Some((before, end))
    }

    /// First and last slot of quotient `x`'s run, if it has one.
    #[inline]
    pub fn run(&self, x: u64) -> Option<(u64, u64)> {
        if !self.occupied(x) {
            return None;
        }
        let (before, end) = self.runs_at(x)?;
        let end = end?;
        // The run starts at x or right after the runs before it, whichever is later: the
        // one nearer its end.
        let start = match before {
            Some(b) if self.distance(self.next(b), end) < self.distance(x, end) => self.next(b),
            _ => x,
        };
        Some((start, end))
    }

    /// Whether quotient `x` holds a fingerprint that `query` (width - 1 bits) starts with.
    #[inline]
    pub fn contains(&self, x: u64, query: u64) -> bool {
        let Some(run) = self.run(x) else {
            return false;
        };
        self.run_elements(run)
            .any(|e| Fingerprint::matches(e.field, query))
    }

    fn bump(&mut self, block: u64, change: &impl Fn(u16) -> u16) {
        if let Some(offset) = self.offsets.get_mut(block as usize) {
            if *offset != SATURATED {
                *offset = change(*offset);
            }
        }
    }

    /// Block starts from slot `first` to slot `last`, circularly: the first and how many.
    fn block_starts(&self, first: u64, last: u64) -> (u64, u64) {
        let start = (first.wrapping_add(63) & !63) & (self.slots() - 1);
        let span = self.distance(first, last);
        let skip = self.distance(first, start);
        let count = if skip > span {
            0
        } else {
            (span - skip) / 64 + 1
        };
        (start, count)
    }

    /// Offsets after an entry of quotient `x` went to slot `p` and the entries from `p` to
    /// `last - 1` moved one slot on: every block starting after `x`, up to `last`, gains one
    /// leading entry of an earlier quotient. (Its leading run of earlier entries reached `p`
    /// and goes on one slot longer; a block starting at or before `x` sees the new entry as
    /// its own or a later quotient's, and the entries it counts did not move.)
    pub(super) fn shifted_right(&mut self, x: u64, last: u64) {
        self.bump_after(x, last, |o| o.saturating_add(1));
    }

    /// Offsets after the entry of quotient `x` at `d` went and the entries after it up to
    /// `hole` moved one slot back: every block starting after `x`, up to `hole`, loses one.
    pub(super) fn shifted_left(&mut self, x: u64, hole: u64) {
        self.bump_after(x, hole, |o| o.saturating_sub(1));
    }

    /// Changes the offset of every block starting after slot `x`, up to `last`, circularly.
    /// Every block in between must be changed, saturated or not: a block's offset counts only
    /// quotients before its start, so a later block may be saturated (by a long run of a
    /// quotient inside the block before it) while an earlier one is not. (Stopping at the
    /// first saturated block was F4: the earlier offsets drifted, lookups then found the
    /// wrong run, and a delete removed a neighbouring quotient's entry.)
    fn bump_after(&mut self, x: u64, last: u64, change: impl Fn(u16) -> u16) {
        if x == last {
            return;
        }
        let mask = self.slots() - 1;
        let (first, count) = self.block_starts(self.next(x), last);
        for k in 0..count {
            let start = (first + 64 * k) & mask;
            self.bump(start >> 6, &change);
        }
    }

    /// Every offset, from the runs (as the loader's walk finds them).
    #[cfg(test)]
    pub fn rebuild_offsets(&mut self) {
        let mut offsets = std::mem::take(&mut self.offsets);
        offsets.fill(0);
        let mut walk = super::walk::RunWalk::default();
        walk.advance(self, self.slots(), true, &mut offsets, |_, _, _| {});
        self.offsets = offsets;
    }
}
