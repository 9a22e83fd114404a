//! The cuckoo filter's RDB value (`MBbloomCF`): encoding version 4 is written; versions 0..=4
//! are read. Every number is checked by the shared validator before the slots are read, and
//! each slot buffer must have exactly the length its sub-filter needs.

use crate::rdb::{LoadError, RdbRead, RdbWrite};

use super::shape::Shape;
use super::{CuckooError, CuckooFilter, SubFilter};

/// The encoding version this module writes (RedisBloom's `CF_MIN_EXPANSION_VERSION`).
pub const ENCODING_VERSION: i32 = 4;

/// Values written before version 4 carried neither these fields nor per-sub-filter bucket
/// counts; RedisBloom fills in its defaults of the time.
const LEGACY_BUCKET_SIZE: u64 = 2;
const LEGACY_MAX_ITERATIONS: u64 = 20;
const LEGACY_EXPANSION: u64 = 1;

impl From<CuckooError> for LoadError {
    fn from(error: CuckooError) -> Self {
        match error {
            CuckooError::TooLarge => LoadError::TooLarge,
            CuckooError::Invalid(what) => LoadError::Invalid(what),
        }
    }
}

impl CuckooFilter {
    /// Writes the value in RedisBloom's field order for encoding version 4.
    pub fn save(&self, w: &mut impl RdbWrite) {
        w.write_unsigned(u64::from(self.num_filters()));
        w.write_unsigned(self.num_buckets);
        w.write_unsigned(self.num_items);
        w.write_unsigned(self.num_deletes);
        w.write_unsigned(u64::from(self.bucket_size));
        w.write_unsigned(u64::from(self.max_iterations));
        w.write_unsigned(u64::from(self.expansion));
        for filter in &self.filters {
            w.write_unsigned(filter.num_buckets());
            w.write_buffer(filter.slots());
        }
    }

    /// Reads a value written with encoding version `encver` (0..=4).
    pub fn load(r: &mut impl RdbRead, encver: i32, max_bytes: u64) -> Result<Self, LoadError> {
        if !(0..=ENCODING_VERSION).contains(&encver) {
            return Err(LoadError::UnknownVersion(encver));
        }
        let legacy = encver < ENCODING_VERSION;
        let num_filters = r.read_unsigned()?;
        let num_buckets = r.read_unsigned()?;
        let num_items = r.read_unsigned()?;
        let (num_deletes, bucket_size, max_iterations, expansion) = if legacy {
            (
                0,
                LEGACY_BUCKET_SIZE,
                LEGACY_MAX_ITERATIONS,
                LEGACY_EXPANSION,
            )
        } else {
            (
                r.read_unsigned()?,
                r.read_unsigned()?,
                r.read_unsigned()?,
                r.read_unsigned()?,
            )
        };
        let shape = Shape {
            num_buckets,
            num_filters: narrow(num_filters, "number of filters")?,
            bucket_size: narrow(bucket_size, "bucket size")?,
            max_iterations: narrow(max_iterations, "max iterations")?,
            expansion: narrow(expansion, "expansion")?,
        };
        let filters = read_sub_filters(r, &shape, legacy, max_bytes)?;
        Ok(Self::assemble(shape, num_items, num_deletes, filters))
    }
}

fn read_sub_filters(
    r: &mut impl RdbRead,
    shape: &Shape,
    legacy: bool,
    max_bytes: u64,
) -> Result<Vec<SubFilter>, LoadError> {
    let bucket_counts = shape.validate(max_bytes)?;
    let mut filters = Vec::with_capacity(bucket_counts.len());
    for expected in bucket_counts {
        if !legacy && r.read_unsigned()? != expected {
            return Err(LoadError::Invalid("sub-filter bucket count"));
        }
        let slots = r.read_buffer()?;
        let filter = SubFilter::from_slots(expected, usize::from(shape.bucket_size), slots)
            .ok_or(LoadError::Invalid("sub-filter length"))?;
        filters.push(filter);
    }
    Ok(filters)
}

/// A field RedisBloom keeps in 16 bits; a larger stored value is malformed.
fn narrow(value: u64, what: &'static str) -> Result<u16, LoadError> {
    u16::try_from(value).map_err(|_| LoadError::Invalid(what))
}
