//! RedisBloom's cuckoo filter, reproduced bit for bit: a chain of sub-filters of one-byte
//! fingerprint slots, the same hash, the same deterministic kick walk and roll-back, the same
//! growth and compaction. This module owns the filter and its byte encodings (SCANDUMP chunks,
//! RDB fields); it knows nothing of Redis. Range checks of command arguments belong to the
//! command layer, but every path that sizes or fills a filter here checks its numbers first and
//! refuses, with an error, anything over the caller's memory cap (`max_bytes`).

mod compact;
mod dump;
mod fingerprint;
mod insert;
mod lookup;
mod rdb;
mod shape;
mod sub_filter;

#[cfg(test)]
mod dump_tests;
#[cfg(test)]
mod fixture_tests;
#[cfg(test)]
mod rdb_tests;
#[cfg(test)]
mod tests;

pub use dump::{HEADER_LEN, MAX_CHUNK_BYTES};
pub use fingerprint::ItemHash;
pub use insert::InsertError;
pub use rdb::ENCODING_VERSION;
pub use shape::{MAX_BUCKETS, MAX_SUB_FILTERS, MAX_SUB_FILTER_BYTES};
pub use sub_filter::SubFilter;

use shape::Shape;

/// Why a filter could not be built, grown or filled from bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CuckooError {
    /// The filter would exceed the memory cap, a sub-filter would reach 2^56 buckets or
    /// `MAX_SUB_FILTER_BYTES`, or there would be more than 65535 sub-filters.
    TooLarge,
    /// The parameters, header or chunk do not describe a valid filter (the text says which part).
    Invalid(&'static str),
}

/// What a filter is created from (CF.RESERVE, or the auto-create of CF.ADD / CF.INSERT).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CuckooParams {
    pub capacity: u64,
    pub bucket_size: u16,
    pub max_iterations: u16,
    /// As requested; creation rounds it up to a power of two (0 stays 0).
    pub expansion: u16,
}

impl Default for CuckooParams {
    /// RedisBloom's auto-create defaults.
    fn default() -> Self {
        Self {
            capacity: 1024,
            bucket_size: 2,
            max_iterations: 20,
            expansion: 1,
        }
    }
}

/// The largest expansion a command may request; rounding anything above it up to a power of
/// two would not fit the 16-bit field.
pub const MAX_EXPANSION: u16 = 32768;

/// A scalable cuckoo filter: sub-filter k has `num_buckets * expansion^k` buckets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CuckooFilter {
    /// Buckets of the first sub-filter.
    num_buckets: u64,
    num_items: u64,
    num_deletes: u64,
    bucket_size: u16,
    max_iterations: u16,
    expansion: u16,
    /// Never empty; at most `MAX_SUB_FILTERS` long.
    filters: Vec<SubFilter>,
}

impl CuckooFilter {
    /// An empty filter with one sub-filter of `nextPow2(capacity / bucket_size)` buckets.
    pub fn new(params: CuckooParams, max_bytes: u64) -> Result<Self, CuckooError> {
        if params.bucket_size == 0 {
            return Err(CuckooError::Invalid("bucket size"));
        }
        if params.expansion > MAX_EXPANSION {
            return Err(CuckooError::Invalid("expansion"));
        }
        let num_buckets = (params.capacity / u64::from(params.bucket_size))
            .checked_next_power_of_two()
            .ok_or(CuckooError::TooLarge)?;
        let expansion = match params.expansion {
            0 => 0,
            requested => requested.next_power_of_two(),
        };
        let shape = Shape {
            num_buckets,
            num_filters: 1,
            bucket_size: params.bucket_size,
            max_iterations: params.max_iterations,
            expansion,
        };
        Self::zeroed(shape, 0, 0, max_bytes)
    }

    /// A filter of the given shape whose sub-filters are all empty, after validating the shape.
    fn zeroed(
        shape: Shape,
        num_items: u64,
        num_deletes: u64,
        max_bytes: u64,
    ) -> Result<Self, CuckooError> {
        let bucket_counts = shape.validate(max_bytes)?;
        let bucket_size = usize::from(shape.bucket_size);
        let mut filters = Vec::with_capacity(bucket_counts.len());
        for buckets in bucket_counts {
            filters.push(SubFilter::zeroed(buckets, bucket_size)?);
        }
        Ok(Self::assemble(shape, num_items, num_deletes, filters))
    }

    /// Puts validated parts together; `filters` must match `shape`.
    fn assemble(shape: Shape, num_items: u64, num_deletes: u64, filters: Vec<SubFilter>) -> Self {
        Self {
            num_buckets: shape.num_buckets,
            num_items,
            num_deletes,
            bucket_size: shape.bucket_size,
            max_iterations: shape.max_iterations,
            expansion: shape.expansion,
            filters,
        }
    }

    /// Buckets of the first sub-filter (CF.INFO "Number of buckets").
    pub fn num_buckets(&self) -> u64 {
        self.num_buckets
    }

    /// Items currently stored: inserts minus deletes (CF.INFO "Number of items inserted").
    pub fn num_items(&self) -> u64 {
        self.num_items
    }

    /// Deletes since the last compaction (CF.INFO "Number of items deleted").
    pub fn num_deletes(&self) -> u64 {
        self.num_deletes
    }

    /// Number of sub-filters (CF.INFO "Number of filters").
    pub fn num_filters(&self) -> u16 {
        // The vector never holds more than MAX_SUB_FILTERS (65535) entries.
        u16::try_from(self.filters.len()).unwrap_or(u16::MAX)
    }

    pub fn bucket_size(&self) -> u16 {
        self.bucket_size
    }

    pub fn max_iterations(&self) -> u16 {
        self.max_iterations
    }

    /// The expansion as stored: a power of two for filters built here, possibly not for
    /// filters loaded from a LOADCHUNK header.
    pub fn expansion(&self) -> u16 {
        self.expansion
    }

    /// The sub-filters' vector, for an allocator that moves heap blocks (Redis's active
    /// defragmentation); callers move memory, never change lengths.
    #[cfg(feature = "module")]
    pub(crate) fn sub_filters_for_relocation(&mut self) -> &mut Vec<SubFilter> {
        &mut self.filters
    }

    pub fn sub_filters(&self) -> &[SubFilter] {
        &self.filters
    }

    /// RedisBloom's reported size (CF.INFO "Size", MEMORY USAGE): the C struct sizes on x86-64,
    /// `40 + 16 * numFilters + sum(numBuckets_k * bucketSize)`.
    pub fn size_bytes(&self) -> u64 {
        self.filters
            .iter()
            .fold(shape::FILTER_OVERHEAD, |total, filter| {
                total
                    .saturating_add(shape::SUB_FILTER_OVERHEAD)
                    .saturating_add(filter.len_bytes())
            })
    }
}
