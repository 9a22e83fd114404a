//! Membership, counting and deletion (CF.EXISTS, CF.MEXISTS, CF.COUNT, CF.DEL).

use super::fingerprint::ItemHash;
use super::CuckooFilter;

/// Automatic compaction after a delete runs once deletes exceed this share of the items.
const COMPACT_AFTER_DELETED_SHARE: f64 = 0.10;

impl CuckooFilter {
    /// Whether the item's fingerprint is in one of its candidate buckets in any sub-filter.
    pub fn contains(&self, item: &[u8]) -> bool {
        self.contains_hash(&ItemHash::of(item))
    }

    pub(crate) fn contains_hash(&self, hash: &ItemHash) -> bool {
        self.filters.iter().any(|filter| filter.contains(hash))
    }

    /// Slots holding the item's fingerprint in its candidate buckets, over all sub-filters.
    pub fn count(&self, item: &[u8]) -> u64 {
        let hash = ItemHash::of(item);
        self.filters.iter().map(|filter| filter.count(&hash)).sum()
    }

    /// Removes one copy of the item's fingerprint (newest sub-filter first). May compact.
    pub fn delete(&mut self, item: &[u8]) -> bool {
        let hash = ItemHash::of(item);
        if !self
            .filters
            .iter_mut()
            .rev()
            .any(|filter| filter.remove(&hash))
        {
            return false;
        }
        // Wrapping, as the reference's unsigned counters do for a header that understated them.
        self.num_items = self.num_items.wrapping_sub(1);
        self.num_deletes = self.num_deletes.wrapping_add(1);
        if self.filters.len() > 1 && self.too_many_deletes() {
            self.compact(false);
        }
        true
    }

    /// RedisBloom compares `numDeletes > (double)numItems * 0.10`; both sides as doubles.
    fn too_many_deletes(&self) -> bool {
        self.num_deletes as f64 > self.num_items as f64 * COMPACT_AFTER_DELETED_SHARE
    }
}
