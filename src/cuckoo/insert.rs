//! Insertion (CF.ADD, CF.ADDNX, CF.INSERT, CF.INSERTNX) and growth by a new sub-filter.

use super::fingerprint::ItemHash;
use super::shape::{self, MAX_SUB_FILTERS};
use super::{CuckooError, CuckooFilter, SubFilter};
use crate::budget::Budget;

/// Why an item could not be inserted. The filter is unchanged in both cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InsertError {
    /// No room and expansion 0 (`Filter is full`).
    Full,
    /// No room and no new sub-filter possible: 65535 sub-filters, 2^56 buckets, or over the
    /// memory cap (`ERR Insufficient memory`).
    OutOfMemory,
}

impl CuckooFilter {
    /// Adds one more copy of the item (duplicates allowed).
    pub fn insert(&mut self, item: &[u8], budget: impl Budget) -> Result<(), InsertError> {
        self.insert_hash(&ItemHash::of(item), &budget)
    }

    /// Adds the item unless its fingerprint is already found in a candidate bucket:
    /// `Ok(true)` inserted, `Ok(false)` already present (possibly a collision).
    pub fn insert_unique(&mut self, item: &[u8], budget: impl Budget) -> Result<bool, InsertError> {
        let hash = ItemHash::of(item);
        if self.contains_hash(&hash) {
            return Ok(false);
        }
        self.insert_hash(&hash, &budget).map(|()| true)
    }

    /// Free slot in any sub-filter (newest first), else a kick walk in the newest, else grow
    /// and start over, as RedisBloom. Copies of one fingerprint and bucket pair (the same item
    /// added again and again, or items chosen by brute force on the public hash to share them)
    /// add a sub-filter for every `2 x bucket size` of them, as RedisBloom's do: the same item
    /// added five times is an ordinary use of `CF.ADD`, so this is not refused. The sub-filters
    /// stay bounded by `cf-max-expansions` (`docs/bench/collisions.md` measures the cost).
    fn insert_hash(&mut self, hash: &ItemHash, budget: &impl Budget) -> Result<(), InsertError> {
        loop {
            if self.place_anywhere(hash) || self.kick_into_newest(hash) {
                self.num_items = self.num_items.wrapping_add(1);
                return Ok(());
            }
            if self.expansion == 0 {
                return Err(InsertError::Full);
            }
            self.grow(budget).map_err(|_| InsertError::OutOfMemory)?;
        }
    }

    fn place_anywhere(&mut self, hash: &ItemHash) -> bool {
        self.filters
            .iter_mut()
            .rev()
            .any(|filter| filter.place(hash.h1, hash.h2, hash.fingerprint))
    }

    fn kick_into_newest(&mut self, hash: &ItemHash) -> bool {
        let max_iterations = self.max_iterations;
        self.filters
            .last_mut()
            .is_some_and(|filter| filter.kick_insert(hash.h1, hash.fingerprint, max_iterations))
    }

    /// Appends a sub-filter of `num_buckets * expansion^num_filters` buckets, if the budget
    /// allows the filter's new size.
    fn grow(&mut self, budget: &impl Budget) -> Result<(), CuckooError> {
        let k = self.filters.len();
        if k >= MAX_SUB_FILTERS {
            return Err(CuckooError::TooLarge);
        }
        let buckets = shape::sub_filter_buckets(self.num_buckets, self.expansion, k)?;
        let max_bytes = budget.limit(self.size_bytes());
        shape::size_with_sub_filter(self.size_bytes(), buckets, self.bucket_size, max_bytes)?;
        let filter = SubFilter::zeroed(buckets, usize::from(self.bucket_size))?;
        self.filters.push(filter);
        Ok(())
    }
}
