//! The syntax of the CF.* commands (reference §4.10–4.19): what each accepts, what it refuses,
//! and in which order it checks.

use std::ops::RangeInclusive;

use super::Argv;
use crate::cuckoo::CuckooParams;

/// The smallest capacity CF.INSERT accepts: twice the default bucket size.
pub const MIN_INSERT_CAPACITY: i64 = 4;

/// A keyword option of CF.RESERVE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CfOption {
    MaxIterations,
    BucketSize,
    Expansion,
}

impl CfOption {
    pub fn keyword(self) -> &'static str {
        match self {
            CfOption::MaxIterations => "MAXITERATIONS",
            CfOption::BucketSize => "BUCKETSIZE",
            CfOption::Expansion => "EXPANSION",
        }
    }

    pub fn range(self) -> RangeInclusive<i64> {
        match self {
            CfOption::MaxIterations => 1..=65535,
            CfOption::BucketSize => 1..=255,
            CfOption::Expansion => 0..=32768,
        }
    }
}

/// Why a CF.* argument vector was refused; each variant is one reply text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgError {
    /// Redis's wrong-number-of-arguments error.
    Arity,
    /// The capacity (CF.RESERVE, CF.INSERT) is not an integer.
    BadCapacity,
    /// An option's value is missing or not an integer.
    Unparsable(CfOption),
    /// An option's value is outside its range.
    OutOfRange(CfOption),
    /// The capacity is below twice the bucket size.
    CapacityTooSmall,
    /// CF.INSERT: an option word starting with none of `c`, `i`, `n`.
    UnknownOption,
    /// CF.SCANDUMP / CF.LOADCHUNK: an iterator that is not an integer or not allowed there.
    InvalidPosition,
}

/// CF.INSERT / CF.INSERTNX: the capacity to create a missing key with (`None` for NOCREATE)
/// and where the items start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CfInsert {
    pub capacity: Option<u64>,
    pub items_at: usize,
}

/// CF.RESERVE key capacity [BUCKETSIZE bucketsize] [MAXITERATIONS maxiterations] [EXPANSION expansion]
pub fn parse_cf_reserve(args: &impl Argv) -> Result<CuckooParams, ArgError> {
    if args.len() < 3 || args.len() % 2 == 0 {
        return Err(ArgError::Arity);
    }
    let capacity = args.int(2).ok_or(ArgError::BadCapacity)?;
    let defaults = CuckooParams::default();
    let max_iterations = keyword_value(args, CfOption::MaxIterations)?;
    let bucket_size = keyword_value(args, CfOption::BucketSize)?;
    let expansion = keyword_value(args, CfOption::Expansion)?;
    let bucket_size = bucket_size.unwrap_or(defaults.bucket_size);
    if capacity < i64::from(bucket_size) * 2 {
        return Err(ArgError::CapacityTooSmall);
    }
    Ok(CuckooParams {
        capacity: capacity.unsigned_abs(),
        bucket_size,
        max_iterations: max_iterations.unwrap_or(defaults.max_iterations),
        expansion: expansion.unwrap_or(defaults.expansion),
    })
}

/// The value after the first `option` keyword among the optional arguments (deviation D3),
/// parsed and range-checked; a keyword without a value is that keyword's parse error
/// (deviation D4).
fn keyword_value(args: &impl Argv, option: CfOption) -> Result<Option<u16>, ArgError> {
    let Some(at) = (3..args.len()).find(|i| args.is(*i, option.keyword())) else {
        return Ok(None);
    };
    let value = args.int(at + 1).ok_or(ArgError::Unparsable(option))?;
    if !option.range().contains(&value) {
        return Err(ArgError::OutOfRange(option));
    }
    u16::try_from(value)
        .map(Some)
        .map_err(|_| ArgError::OutOfRange(option))
}

/// CF.INSERT / CF.INSERTNX key [CAPACITY capacity] [NOCREATE] ITEMS item [item ...]
///
/// RedisBloom looks only at the first letter of each option word; a repeated CAPACITY
/// overrides the earlier one, and each is range-checked as it is read.
pub fn parse_cf_insert(args: &impl Argv, default_capacity: u64) -> Result<CfInsert, ArgError> {
    if args.len() < 4 {
        return Err(ArgError::Arity);
    }
    let mut capacity = default_capacity;
    let mut create = true;
    let mut i = 2;
    while i < args.len() {
        match args.bytes(i).first().map(u8::to_ascii_lowercase) {
            Some(b'i') if i + 1 < args.len() => {
                let capacity = create.then_some(capacity);
                return Ok(CfInsert {
                    capacity,
                    items_at: i + 1,
                });
            }
            Some(b'i') => return Err(ArgError::Arity),
            Some(b'c') => {
                capacity = insert_capacity(args, i)?;
                i += 2;
            }
            Some(b'n') => {
                create = false;
                i += 1;
            }
            _ => return Err(ArgError::UnknownOption),
        }
    }
    Err(ArgError::Arity)
}

/// The value of the CAPACITY option at `at`.
fn insert_capacity(args: &impl Argv, at: usize) -> Result<u64, ArgError> {
    if at + 1 >= args.len() {
        return Err(ArgError::Arity);
    }
    let value = args.int(at + 1).ok_or(ArgError::BadCapacity)?;
    if value < MIN_INSERT_CAPACITY {
        return Err(ArgError::CapacityTooSmall);
    }
    Ok(value.unsigned_abs())
}

/// CF.SCANDUMP key iterator: the iterator, read before the key is opened; negative is refused.
pub fn parse_cf_scandump(args: &impl Argv) -> Result<i64, ArgError> {
    if args.len() != 3 {
        return Err(ArgError::Arity);
    }
    args.int(2)
        .filter(|iter| *iter >= 0)
        .ok_or(ArgError::InvalidPosition)
}

/// CF.LOADCHUNK key iterator data: the iterator, read before the key is opened; 0 is refused.
pub fn parse_cf_loadchunk(args: &impl Argv) -> Result<i64, ArgError> {
    if args.len() != 4 {
        return Err(ArgError::Arity);
    }
    args.int(2)
        .filter(|iter| *iter != 0)
        .ok_or(ArgError::InvalidPosition)
}

#[cfg(test)]
#[path = "cf_tests.rs"]
mod tests;
