//! The one validator for every path that turns numbers into a cuckoo filter (creation, growth,
//! LOADCHUNK header, RDB): it checks the parameters and sizes every sub-filter with checked
//! arithmetic against the memory cap before anything is allocated.

use super::CuckooError;

/// `sizeof(CuckooFilter)` in RedisBloom on x86-64, counted by the reported size.
pub(crate) const FILTER_OVERHEAD: u64 = 40;
/// `sizeof(SubCF)` in RedisBloom on x86-64, counted once per sub-filter.
pub(crate) const SUB_FILTER_OVERHEAD: u64 = 16;

/// RedisBloom keeps a sub-filter's bucket count in a 56-bit field.
pub const MAX_BUCKETS: u64 = 1 << 56;
/// RedisBloom counts sub-filters in a `uint16_t`.
pub const MAX_SUB_FILTERS: usize = 65535;
/// RedisBloom computes slot offsets in its lookup paths as 32-bit values, so a sub-filter of
/// 4 GiB or more would alias buckets there. Refusing such sub-filters outright (whatever the
/// caller's cap) means that quirk can never be reached, and 64-bit offsets here give exactly
/// the reference's answers for every filter that exists.
pub const MAX_SUB_FILTER_BYTES: u64 = u32::MAX as u64;

/// The numbers that fix a filter's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    pub num_buckets: u64,
    pub num_filters: u16,
    pub bucket_size: u16,
    pub max_iterations: u16,
    pub expansion: u16,
}

impl Shape {
    /// The bucket count of every sub-filter, once the shape is known to be valid and to fit in
    /// `max_bytes` (RedisBloom's reported size).
    pub fn validate(&self, max_bytes: u64) -> Result<Vec<u64>, CuckooError> {
        self.check_fields()?;
        let mut total = FILTER_OVERHEAD;
        let mut bucket_counts = Vec::new();
        for k in 0..usize::from(self.num_filters) {
            let buckets = sub_filter_buckets(self.num_buckets, self.expansion, k)?;
            total = size_with_sub_filter(total, buckets, self.bucket_size, max_bytes)?;
            bucket_counts.push(buckets);
        }
        Ok(bucket_counts)
    }

    fn check_fields(&self) -> Result<(), CuckooError> {
        if self.bucket_size == 0 || self.bucket_size > 255 {
            return Err(CuckooError::Invalid("bucket size"));
        }
        if !self.num_buckets.is_power_of_two() {
            return Err(CuckooError::Invalid("number of buckets"));
        }
        if self.num_buckets >= MAX_BUCKETS {
            return Err(CuckooError::TooLarge);
        }
        if self.num_filters == 0 {
            return Err(CuckooError::Invalid("number of filters"));
        }
        if self.max_iterations == 0 {
            return Err(CuckooError::Invalid("max iterations"));
        }
        if self.expansion == 0 && self.num_filters > 1 {
            return Err(CuckooError::Invalid("expansion"));
        }
        Ok(())
    }
}

/// Buckets of sub-filter `k`: `num_buckets * expansion^k`, refused at 2^56 or on overflow.
/// (`expansion^0` is 1 even for expansion 0, as C's `pow(0, 0)`.)
pub(crate) fn sub_filter_buckets(
    num_buckets: u64,
    expansion: u16,
    k: usize,
) -> Result<u64, CuckooError> {
    let exponent = u32::try_from(k).map_err(|_| CuckooError::TooLarge)?;
    u64::from(expansion)
        .checked_pow(exponent)
        .and_then(|growth| num_buckets.checked_mul(growth))
        .filter(|&buckets| buckets < MAX_BUCKETS)
        .ok_or(CuckooError::TooLarge)
}

/// The reported size after adding a sub-filter of `buckets` buckets to a filter of reported
/// size `total`, refused when the sub-filter or the whole would be too large.
pub(crate) fn size_with_sub_filter(
    total: u64,
    buckets: u64,
    bucket_size: u16,
    max_bytes: u64,
) -> Result<u64, CuckooError> {
    let bytes = buckets
        .checked_mul(u64::from(bucket_size))
        .filter(|&bytes| bytes <= MAX_SUB_FILTER_BYTES)
        .ok_or(CuckooError::TooLarge)?;
    total
        .checked_add(SUB_FILTER_OVERHEAD)
        .and_then(|total| total.checked_add(bytes))
        .filter(|&total| total <= max_bytes)
        .ok_or(CuckooError::TooLarge)
}
