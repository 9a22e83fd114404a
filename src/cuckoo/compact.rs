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
        for k in (1..self.filters.len()).rev() {
            let emptied = self.relocate_sub_filter(k);
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
    fn relocate_sub_filter(&mut self, k: usize) -> bool {
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
                if relocate(older, bucket as u64, *slot) {
                    *slot = 0;
                } else {
                    all_moved = false;
                }
            }
        }
        all_moved
    }
}

/// Places a fingerprint found in bucket `bucket` of a newer sub-filter into the first older one
/// with room. The bucket index stands in for the lost hash: older sub-filters have no more
/// buckets, so it reduces to the same candidates.
fn relocate(older: &mut [SubFilter], bucket: u64, fingerprint: u8) -> bool {
    let alternate = alt_hash(fingerprint, bucket);
    older
        .iter_mut()
        .any(|filter| filter.place(bucket, alternate, fingerprint))
}
