//! The syntax of the BF.* commands (reference §4.1–4.9): what each accepts, what it refuses,
//! and in which order it checks.

use super::Argv;

/// Expansion of filters created without one.
pub const DEFAULT_GROWTH: u32 = 2;

/// Why a BF.* argument vector was refused; each variant is one reply text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgError {
    /// Redis's wrong-number-of-arguments error.
    Arity,
    /// BF.RESERVE: the error rate is not a double.
    BadErrorRate,
    /// BF.RESERVE: the error rate is not strictly between 0 and 1.
    ErrorRateRange,
    /// BF.RESERVE: the capacity is not an integer.
    BadCapacity,
    /// BF.RESERVE: the capacity is not positive.
    CapacityRange,
    /// BF.RESERVE: EXPANSION is the last argument.
    NoExpansion,
    /// BF.RESERVE: EXPANSION together with NONSCALING.
    NonScalingExpansion,
    /// BF.RESERVE: the expansion is not an integer.
    BadExpansion,
    /// BF.RESERVE: the expansion is below 1.
    ExpansionRange,
    /// BF.INSERT: an option word starting with none of `c`, `e`, `i`, `n`.
    InsertUnknownOption,
    /// BF.INSERT: the ERROR value is not a double.
    InsertBadErrorRate,
    /// BF.INSERT: the EXPANSION value is not an integer.
    InsertBadExpansion,
    /// BF.INSERT: the CAPACITY value is not an integer.
    InsertBadCapacity,
    /// BF.INSERT: error rate, capacity or expansion out of range.
    InsertOutOfRange,
    /// BF.INFO: not one of the five field names.
    UnknownInfoField,
    /// BF.SCANDUMP: the iterator is not an integer.
    ScanIteratorNotNumeric,
    /// BF.LOADCHUNK: the iterator is not an integer.
    LoadIteratorNotNumeric,
}

/// How a Bloom filter is created: by BF.RESERVE, or implicitly by BF.ADD / BF.MADD / BF.INSERT.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BloomOptions {
    pub capacity: u64,
    pub error: f64,
    pub growth: u32,
    pub scaling: bool,
}

/// BF.INSERT: how to create a missing key (`None` for NOCREATE) and where the items start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BfInsert {
    pub create: Option<BloomOptions>,
    pub items_at: usize,
}

/// A single field of BF.INFO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BfInfoField {
    Capacity,
    Size,
    Filters,
    Items,
    Expansion,
}

/// BF.RESERVE key error_rate capacity [EXPANSION expansion] [NONSCALING]
pub fn parse_bf_reserve(args: &impl Argv) -> Result<BloomOptions, ArgError> {
    if !(4..=7).contains(&args.len()) {
        return Err(ArgError::Arity);
    }
    let error = args.double(2).ok_or(ArgError::BadErrorRate)?;
    if !(error > 0.0 && error < 1.0) {
        return Err(ArgError::ErrorRateRange);
    }
    let capacity = args.int(3).ok_or(ArgError::BadCapacity)?;
    if capacity <= 0 {
        return Err(ArgError::CapacityRange);
    }
    // Deviation D3: keywords are looked for among the optional arguments only.
    let scaling = !(4..args.len()).any(|i| args.is(i, "NONSCALING"));
    let growth = reserve_growth(args, scaling)?;
    Ok(BloomOptions {
        capacity: capacity.unsigned_abs(),
        error,
        growth,
        scaling,
    })
}

/// The value after the first EXPANSION among the optional arguments of BF.RESERVE.
fn reserve_growth(args: &impl Argv, scaling: bool) -> Result<u32, ArgError> {
    let Some(at) = (4..args.len()).find(|i| args.is(*i, "EXPANSION")) else {
        return Ok(DEFAULT_GROWTH);
    };
    if at + 1 == args.len() {
        return Err(ArgError::NoExpansion);
    }
    if !scaling {
        return Err(ArgError::NonScalingExpansion);
    }
    let expansion = args.int(at + 1).ok_or(ArgError::BadExpansion)?;
    if expansion < 1 {
        return Err(ArgError::ExpansionRange);
    }
    // RedisBloom keeps the expansion in 32 bits.
    Ok(expansion as u32)
}

/// BF.INSERT's options while they are read; range-checked once all are in.
struct InsertOptions {
    capacity: i64,
    error: f64,
    expansion: i64,
    scaling: bool,
    create: bool,
}

/// Where BF.INSERT goes after one option word.
enum Step {
    Next(usize),
    Items(usize),
}

/// BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] ITEMS item [item ...]
///
/// `defaults` are the options of a filter created without them (the module's settings).
pub fn parse_bf_insert(args: &impl Argv, defaults: BloomOptions) -> Result<BfInsert, ArgError> {
    if args.len() < 4 {
        return Err(ArgError::Arity);
    }
    let mut options = InsertOptions {
        capacity: i64::try_from(defaults.capacity).unwrap_or(i64::MAX),
        error: defaults.error,
        expansion: i64::from(defaults.growth),
        scaling: defaults.scaling,
        create: true,
    };
    let mut i = 2;
    let items_at = loop {
        if i >= args.len() {
            return Err(ArgError::Arity);
        }
        match insert_option(args, i, &mut options)? {
            Step::Next(next) => i = next,
            Step::Items(at) => break at,
        }
    };
    if items_at >= args.len() {
        return Err(ArgError::Arity);
    }
    let InsertOptions {
        capacity,
        error,
        expansion,
        scaling,
        create,
    } = options;
    if !(error > 0.0 && error < 1.0) || capacity < 1 || expansion < 1 {
        return Err(ArgError::InsertOutOfRange);
    }
    let create = create.then_some(BloomOptions {
        capacity: capacity.unsigned_abs(),
        error,
        // As in BF.RESERVE, 32 bits.
        growth: expansion as u32,
        scaling,
    });
    Ok(BfInsert { create, items_at })
}

/// Reads the option word at `i`. RedisBloom looks only at its leading letters: `i` is ITEMS,
/// `er` ERROR, any other `e` EXPANSION, `c` CAPACITY, `n` with `c` third NOCREATE, any other
/// `n` NONSCALING. A repeated option overrides the earlier one.
fn insert_option(
    args: &impl Argv,
    i: usize,
    options: &mut InsertOptions,
) -> Result<Step, ArgError> {
    let word = args.bytes(i);
    let letter = |n: usize| word.get(n).map(u8::to_ascii_lowercase);
    let has_value = i + 1 < args.len();
    match letter(0) {
        Some(b'i') => return Ok(Step::Items(i + 1)),
        Some(b'e' | b'c') if !has_value => return Err(ArgError::Arity),
        Some(b'e') if letter(1) == Some(b'r') => {
            options.error = args.double(i + 1).ok_or(ArgError::InsertBadErrorRate)?;
        }
        Some(b'e') => {
            options.expansion = args.int(i + 1).ok_or(ArgError::InsertBadExpansion)?;
        }
        Some(b'c') => {
            options.capacity = args.int(i + 1).ok_or(ArgError::InsertBadCapacity)?;
        }
        Some(b'n') => {
            if letter(2) == Some(b'c') {
                options.create = false;
            } else {
                options.scaling = false;
            }
            return Ok(Step::Next(i + 1));
        }
        _ => return Err(ArgError::InsertUnknownOption),
    }
    Ok(Step::Next(i + 2))
}

/// BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION]: the one field asked for, or
/// `None` for all. RedisBloom reads the field only after finding the key.
pub fn parse_bf_info_field(args: &impl Argv) -> Result<Option<BfInfoField>, ArgError> {
    const FIELDS: [(&str, BfInfoField); 5] = [
        ("capacity", BfInfoField::Capacity),
        ("size", BfInfoField::Size),
        ("filters", BfInfoField::Filters),
        ("items", BfInfoField::Items),
        ("expansion", BfInfoField::Expansion),
    ];
    match args.len() {
        2 => Ok(None),
        3 => FIELDS
            .iter()
            .find(|(word, _)| args.is(2, word))
            .map(|(_, field)| Some(*field))
            .ok_or(ArgError::UnknownInfoField),
        _ => Err(ArgError::Arity),
    }
}

/// The iterator of BF.SCANDUMP key iterator, which RedisBloom reads only after finding the key
/// (so a missing key wins over a bad iterator). The arity is checked before the key.
pub fn parse_bf_scandump_iterator(args: &impl Argv) -> Result<i64, ArgError> {
    if args.len() != 3 {
        return Err(ArgError::Arity);
    }
    args.int(2).ok_or(ArgError::ScanIteratorNotNumeric)
}

/// BF.LOADCHUNK key iterator data: the iterator, read before the key is opened.
pub fn parse_bf_loadchunk(args: &impl Argv) -> Result<i64, ArgError> {
    if args.len() != 4 {
        return Err(ArgError::Arity);
    }
    args.int(2).ok_or(ArgError::LoadIteratorNotNumeric)
}

#[cfg(test)]
#[path = "bf_tests.rs"]
mod tests;
