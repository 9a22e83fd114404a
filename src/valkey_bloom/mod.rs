//! valkey-bloom's scaling Bloom filter (module `bf` 1.0.1, data type `bloomfltr`), bit for
//! bit, so values it wrote answer here as they did there and go back to it unchanged.
//!
//! An object is a list of filters sharing one 32-byte seed. Filter `i` is sized for
//! `capacity_0 * expansion^i` items at `fp_rate * tightening^i`; an item is added to the last
//! filter unless any filter already has it; a full last filter makes a new one (none when
//! `expansion` is 0: the object does not scale). A filter's bits come from SipHash-1-3 under
//! two keys cut from the seed (`filter.rs`); its bytes, the RDB value and the `BF.LOAD` blob
//! are read and written in `codec.rs`, through one validator.

mod codec;
mod filter;
mod siphash;
#[cfg(test)]
mod tests;

pub use codec::{decode_blob, encode_blob, LoadBlobError};
pub use filter::{bitmap_bytes, SipFilter, FILTER_HEADER_BYTES, MAX_HASHES};
pub use siphash::sip13;

use crate::bloom::{combined_rate, fill_rate};
use crate::budget::Budget;

/// The data type's encoding version valkey-bloom writes.
pub const ENCODING_VERSION: i32 = 1;
/// The version byte a `BF.LOAD` blob starts with.
pub const OBJECT_VERSION: u8 = 1;
/// The seed valkey-bloom uses when random seeds are off (`bf.bloom-use-random-seed no`).
pub const FIXED_SEED: [u8; 32] = [
    89, 15, 245, 34, 234, 120, 17, 218, 167, 20, 216, 9, 59, 62, 123, 217, 29, 137, 138, 115, 62,
    152, 136, 135, 48, 127, 151, 205, 40, 7, 51, 131,
];
/// valkey-bloom's default tightening ratio (`bf.bloom-tightening-ratio`).
pub const DEFAULT_TIGHTENING: f64 = 0.5;
/// The most filters an object may hold here (valkey-bloom has no such bound below 2^31; a
/// walk over every filter per item must stay bounded, as for RedisBloom's chains).
pub const MAX_FILTERS: usize = 1100;
/// The largest expansion valkey-bloom accepts.
pub const MAX_EXPANSION: u32 = 10;
/// valkey-bloom's default limit on one object (`bf.bloom-memory-usage-limit`, 128 MiB): what
/// `Max scaled capacity` is computed against.
pub const DEFAULT_OBJECT_LIMIT: u64 = 128 << 20;

/// valkey-bloom's own accounting of an object (`BF.INFO` `Size`): its struct, one pointer per
/// slot of its filter list, and per filter its structs and its bits.
const OBJECT_STRUCT_BYTES: u64 = 48;
const SLOT_BYTES: u64 = 8;
const FILTER_STRUCT_BYTES: u64 = 208;

/// Why an item could not be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrowError {
    /// A non-scaling object holds its capacity.
    Full,
    /// The object holds [`MAX_FILTERS`] filters.
    TooManyFilters,
    /// The next filter's rate would fall to zero.
    RateExhausted,
    /// The next filter's capacity overflows.
    CapacityOverflow,
    /// The next filter would take the object over its memory limit.
    OverLimit,
}

/// Why a new object could not be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MakeError {
    /// A parameter out of valkey-bloom's ranges.
    Invalid,
    /// Larger than the memory limit.
    TooLarge,
}

/// What a new object is made of (`BF.RESERVE`, `BF.INSERT`, an implicit creation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    pub capacity: u64,
    pub fp_rate: f64,
    pub tightening: f64,
    /// 0: non-scaling.
    pub expansion: u32,
    pub seed: [u8; 32],
    /// Whether the seed was drawn at random (false: [`FIXED_SEED`]); kept as valkey-bloom
    /// keeps it.
    pub seed_random: bool,
}

/// A valkey-bloom object.
#[derive(Debug, Clone, PartialEq)]
pub struct ValkeyBloom {
    pub(crate) expansion: u32,
    pub(crate) fp_rate: f64,
    pub(crate) tightening: f64,
    pub(crate) seed_random: bool,
    pub(crate) filters: Vec<SipFilter>,
    /// The slots valkey-bloom's filter list would have allocated, which its `Size` counts.
    pub(crate) slots: u64,
}

/// The rate of filter `index` of an object at `fp_rate` with `tightening`.
pub fn filter_rate(fp_rate: f64, tightening: f64, index: usize) -> Option<f64> {
    let index = i32::try_from(index).ok()?;
    let rate = fp_rate * tightening.powi(index);
    (rate > f64::MIN_POSITIVE).then_some(rate)
}

/// Whether `rate` is a valid error rate or tightening ratio: strictly between 0 and 1.
pub fn in_unit_range(rate: f64) -> bool {
    rate > 0.0 && rate < 1.0
}

/// How many slots a list grown one push at a time from one slot has after `len` filters
/// (Rust's vector growth: 1, then 4, then doubling).
fn grown_slots(slots: u64, len: u64) -> u64 {
    if len <= slots {
        slots
    } else {
        (slots * 2).max(len).max(4)
    }
}

impl ValkeyBloom {
    /// The false-positive rate estimated from its filters' fill: each filter's from its bits,
    /// hashes and items, combined as a lookup reads every filter.
    pub fn estimated_rate(&self) -> f64 {
        combined_rate(
            self.filters
                .iter()
                .map(|f| fill_rate(f.bits().len() as u64 * 8, f.hashes(), f.items)),
        )
    }

    /// A new object with one empty filter, within `max_bytes` (as [`ValkeyBloom::size`]).
    pub fn new(p: &Params, max_bytes: u64) -> Result<ValkeyBloom, MakeError> {
        let valid = p.capacity >= 1
            && i64::try_from(p.capacity).is_ok()
            && in_unit_range(p.fp_rate)
            && in_unit_range(p.tightening)
            && p.expansion <= MAX_EXPANSION;
        if !valid {
            return Err(MakeError::Invalid);
        }
        let bytes = bitmap_bytes(p.capacity, p.fp_rate).ok_or(MakeError::TooLarge)?;
        if OBJECT_STRUCT_BYTES + SLOT_BYTES + FILTER_STRUCT_BYTES + bytes > max_bytes {
            return Err(MakeError::TooLarge);
        }
        let filter = SipFilter::new(p.seed, p.capacity, bytes);
        Ok(ValkeyBloom {
            expansion: p.expansion,
            fp_rate: p.fp_rate,
            tightening: p.tightening,
            seed_random: p.seed_random,
            filters: vec![filter],
            slots: 1,
        })
    }

    pub fn filters(&self) -> &[SipFilter] {
        &self.filters
    }

    /// The filter list, for moving its allocations (active defragmentation).
    pub fn filters_mut(&mut self) -> &mut Vec<SipFilter> {
        &mut self.filters
    }

    pub fn expansion(&self) -> u32 {
        self.expansion
    }

    pub fn fp_rate(&self) -> f64 {
        self.fp_rate
    }

    pub fn tightening(&self) -> f64 {
        self.tightening
    }

    pub fn seed_random(&self) -> bool {
        self.seed_random
    }

    /// The seed every filter shares.
    pub fn seed(&self) -> [u8; 32] {
        self.filters.first().map_or(FIXED_SEED, SipFilter::seed)
    }

    /// Whether any filter may hold `item`.
    pub fn contains(&self, item: &[u8]) -> bool {
        let Some(first) = self.filters.first() else {
            return false;
        };
        let hashes = first.hashes_of(item);
        self.filters.iter().any(|f| f.contains_hashed(hashes))
    }

    /// Adds `item`: true if no filter had it. A new filter is made when the last is full,
    /// within `budget` (asked with the object's size).
    pub fn add(&mut self, item: &[u8], budget: &impl Budget) -> Result<bool, GrowError> {
        let Some(first) = self.filters.first() else {
            return Err(GrowError::Full);
        };
        let hashes = first.hashes_of(item);
        if self.filters.iter().any(|f| f.contains_hashed(hashes)) {
            return Ok(false);
        }
        let last = self.filters.last_mut().ok_or(GrowError::Full)?;
        if last.items < last.capacity {
            last.set_hashed(hashes);
            last.items += 1;
            return Ok(true);
        }
        let mut next = self.next_filter(budget)?;
        next.set_hashed(hashes);
        next.items = 1;
        self.filters.push(next);
        self.slots = grown_slots(self.slots, self.filters.len() as u64);
        Ok(true)
    }

    /// The empty filter a scale-out appends, checked as valkey-bloom checks it.
    fn next_filter(&self, budget: &impl Budget) -> Result<SipFilter, GrowError> {
        if self.expansion == 0 {
            return Err(GrowError::Full);
        }
        let count = self.filters.len();
        if count >= MAX_FILTERS {
            return Err(GrowError::TooManyFilters);
        }
        let rate =
            filter_rate(self.fp_rate, self.tightening, count).ok_or(GrowError::RateExhausted)?;
        let last_capacity = self.filters.last().map_or(0, |f| f.capacity);
        let capacity = last_capacity
            .checked_mul(u64::from(self.expansion))
            .filter(|c| i64::try_from(*c).is_ok())
            .ok_or(GrowError::CapacityOverflow)?;
        let bytes = bitmap_bytes(capacity, rate).ok_or(GrowError::OverLimit)?;
        let size = self.size();
        if size.saturating_add(FILTER_STRUCT_BYTES + bytes) > budget.limit(size) {
            return Err(GrowError::OverLimit);
        }
        Ok(SipFilter::new(self.seed(), capacity, bytes))
    }

    /// Items added (`BF.CARD`): every filter's count.
    pub fn card(&self) -> u64 {
        self.filters
            .iter()
            .fold(0u64, |sum, f| sum.saturating_add(f.items))
    }

    /// Items the filters are sized for, summed.
    pub fn capacity(&self) -> u64 {
        self.filters
            .iter()
            .fold(0u64, |sum, f| sum.saturating_add(f.capacity))
    }

    /// valkey-bloom's `Size` of this object (and what `MEMORY USAGE` reports).
    pub fn size(&self) -> u64 {
        let filters = self.filters.iter().fold(0u64, |sum, f| {
            sum.saturating_add(FILTER_STRUCT_BYTES + f.bits().len() as u64)
        });
        OBJECT_STRUCT_BYTES + SLOT_BYTES * self.slots + filters
    }

    /// The capacity the object could scale to under `limit` bytes and within [`MAX_FILTERS`]
    /// filters (`BF.INFO`'s `Max scaled capacity`, with valkey-bloom's default limit), or the
    /// first capacity from which the total reaches `target` (`BF.INSERT ... VALIDATESCALETO`).
    /// The plan walks at most [`MAX_FILTERS`] filters, as an object holds no more.
    pub fn scaled_capacity(
        capacity: u64,
        fp_rate: f64,
        tightening: f64,
        expansion: u32,
        limit: u64,
        target: Option<u64>,
    ) -> Result<u64, ScaleError> {
        let mut filter_capacity = capacity;
        let mut total = 0u64;
        let mut filters_bytes = 0u64;
        let mut count = 0usize;
        while target.is_none_or(|t| total < t) {
            if count >= MAX_FILTERS {
                return target.map_or(Ok(total), |_| Err(ScaleError::TooManyFilters));
            }
            let Some(rate) = filter_rate(fp_rate, tightening, count) else {
                return target.map_or(Ok(total), |_| Err(ScaleError::RateExhausted));
            };
            let filter_bytes = bitmap_bytes(filter_capacity, rate)
                .map_or(u64::MAX, |b| b.saturating_add(FILTER_STRUCT_BYTES));
            let slots = if count == 0 {
                1
            } else {
                (count as u64 + 1).max(4).next_power_of_two()
            };
            let object = (OBJECT_STRUCT_BYTES + SLOT_BYTES * slots)
                .saturating_add(filters_bytes)
                .saturating_add(filter_bytes);
            if object > limit {
                return target.map_or(Ok(total), |_| Err(ScaleError::OverLimit));
            }
            filters_bytes = filters_bytes.saturating_add(filter_bytes);
            total = total.saturating_add(filter_capacity);
            filter_capacity = filter_capacity
                .checked_mul(u64::from(expansion))
                .filter(|c| i64::try_from(*c).is_ok())
                .ok_or(ScaleError::CapacityOverflow)?;
            count += 1;
        }
        Ok(total)
    }

    /// [`ValkeyBloom::scaled_capacity`] of this object under `limit`, without a target.
    pub fn max_scaled_capacity(&self, limit: u64) -> Result<u64, ScaleError> {
        let first = self.filters.first().map_or(0, |f| f.capacity);
        Self::scaled_capacity(
            first,
            self.fp_rate,
            self.tightening,
            self.expansion,
            limit,
            None,
        )
    }
}

/// Why a scale-out plan stops short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleError {
    RateExhausted,
    OverLimit,
    CapacityOverflow,
    /// More filters than an object holds here ([`MAX_FILTERS`]).
    TooManyFilters,
}
