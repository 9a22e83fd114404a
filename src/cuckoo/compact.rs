//! Compaction (CF.COMPACT, and automatically after deletes): move fingerprints from newer
//! sub-filters into older ones and drop the newest sub-filters once they are empty.

use super::fingerprint::alt_hash;
use super::{CuckooFilter, SubFilter};

impl CuckooFilter {
    /// For each sub-filter from the newest down to the second, tries to move every fingerprint
    /// into an older one; a fully moved newest sub-filter is dropped. With `keep_going` false
    /// (the automatic mode) it stops at the first sub-filter that could not be emptied.
    /// Resets the delete counter.
    pub fn compact(&mut self, keep_going: bool) {
        let mut open = OpenFilters::of(&self.filters);
        for k in (1..self.filters.len()).rev() {
            let emptied = self.relocate_sub_filter(k, &mut open);
            if emptied && k + 1 == self.filters.len() {
                self.filters.pop();
            }
            if !emptied && !keep_going {
                break;
            }
        }
        self.num_deletes = 0;
    }

    /// Moves what it can out of sub-filter `k`; true if every fingerprint moved.
    fn relocate_sub_filter(&mut self, k: usize, open: &mut OpenFilters) -> bool {
        let (older, rest) = self.filters.split_at_mut(k);
        let Some(current) = rest.first_mut() else {
            return true;
        };
        // Validation keeps the bucket size at 1 or more; `max` only spares chunking a panic.
        let bucket_size = usize::from(self.bucket_size.max(1));
        let mut all_moved = true;
        for (bucket, slots) in current
            .slots_mut()
            .chunks_exact_mut(bucket_size)
            .enumerate()
        {
            for slot in slots.iter_mut().filter(|slot| **slot != 0) {
                if relocate(older, open, bucket as u64, *slot) {
                    *slot = 0;
                } else {
                    all_moved = false;
                }
            }
        }
        all_moved
    }
}

/// Which sub-filters still have an empty slot. A full sub-filter can take nothing, so
/// relocation jumps over runs of full ones (a union-find "next open sub-filter" with path
/// halving) instead of trying each. A filter whose sub-filters are all full, which a LOADCHUNK
/// header and chunks can describe with up to 65,535 of them, then compacts in about linear time
/// instead of quadratic, with the same result.
struct OpenFilters {
    /// Empty slots of each sub-filter.
    empty: Vec<u64>,
    /// `next[i]` leads to the first sub-filter at or after `i` with an empty slot;
    /// `next[len]` is the end.
    next: Vec<usize>,
}

impl OpenFilters {
    fn of(filters: &[SubFilter]) -> Self {
        let empty: Vec<u64> = filters
            .iter()
            .map(|f| f.slots().iter().filter(|s| **s == 0).count() as u64)
            .collect();
        let next = (0..=empty.len())
            .map(|i| if empty.get(i) == Some(&0) { i + 1 } else { i })
            .collect();
        OpenFilters { empty, next }
    }

    /// The first sub-filter at or after `from` with an empty slot (or the end).
    fn first_open(&mut self, from: usize) -> usize {
        let mut at = from.min(self.empty.len());
        while let Some(&next) = self.next.get(at) {
            if next == at {
                break;
            }
            // Path halving: point at the grandparent while walking.
            let skip = self.next.get(next).copied().unwrap_or(next);
            if let Some(slot) = self.next.get_mut(at) {
                *slot = skip;
            }
            at = next;
        }
        at
    }

    fn took_one(&mut self, index: usize) {
        if let Some(empty) = self.empty.get_mut(index) {
            *empty = empty.saturating_sub(1);
            if *empty == 0 {
                if let Some(slot) = self.next.get_mut(index) {
                    *slot = index + 1;
                }
            }
        }
    }
}

/// Places a fingerprint found in bucket `bucket` of a newer sub-filter into the first older one
/// with room. The bucket index stands in for the lost hash: older sub-filters have no more
/// buckets, so it reduces to the same candidates.
fn relocate(older: &mut [SubFilter], open: &mut OpenFilters, bucket: u64, fingerprint: u8) -> bool {
    let alternate = alt_hash(fingerprint, bucket);
    let mut index = open.first_open(0);
    while let Some(filter) = older.get_mut(index) {
        if filter.place(bucket, alternate, fingerprint) {
            open.took_one(index);
            return true;
        }
        index = open.first_open(index + 1);
    }
    false
}
