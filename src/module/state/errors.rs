//! Every error reply, worded exactly as RedisBloom words it (some lack the `ERR ` prefix, one
//! ends in a space), the type a handler returns to send one, and the one place that turns the
//! core's errors and the syntax's refusals into those replies, keyed by the error.

use std::ffi::{CStr, CString};

use crate::bloom::{AddError, ChunkError, CreateError, HeaderError};
use crate::cuckoo::{CuckooError, InsertError};
use crate::fuse::StageError;
use crate::syntax::valkey_bloom::ValkeyArgError;
use crate::syntax::{bf, cf};
use crate::valkey_bloom::{GrowError, LoadBlobError, ScaleError};

use super::admission::Bound;

/// Why a command failed: what the client is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandError {
    /// Redis's standard `ERR wrong number of arguments for '<cmd>' command`.
    Arity,
    /// A reply text from the table below.
    Reply(&'static CStr),
}

pub type CommandResult = Result<(), CommandError>;

impl From<&'static CStr> for CommandError {
    fn from(text: &'static CStr) -> Self {
        CommandError::Reply(text)
    }
}

/// A core error as the client reads it.
pub trait Refusal {
    fn text(self) -> &'static CStr;
}

impl<E: Refusal> From<E> for CommandError {
    fn from(e: E) -> Self {
        CommandError::Reply(e.text())
    }
}

impl Refusal for CreateError {
    fn text(self) -> &'static CStr {
        match self {
            CreateError::TooLarge => INSUFFICIENT_MEMORY_CREATE,
            CreateError::Invalid => BF_COULD_NOT_CREATE,
        }
    }
}

/// The reply to one item of an add (the batch goes on unless the filter is full).
impl Refusal for AddError {
    fn text(self) -> &'static CStr {
        match self {
            AddError::Full => BF_FULL,
            AddError::CannotGrow => BF_PROBLEM_INSERTING,
            AddError::Frozen => STATIC_FROZEN,
            AddError::Freezing => STATIC_FREEZING,
            AddError::ValkeyBloom(e) => e.text(),
            AddError::Loading => STILL_LOADING,
        }
    }
}

/// An add a valkey-bloom object refused, in valkey-bloom's words.
impl Refusal for GrowError {
    fn text(self) -> &'static CStr {
        match self {
            GrowError::Full => BF_FULL,
            GrowError::TooManyFilters => VB_TOO_MANY_FILTERS,
            GrowError::RateExhausted => VB_RATE_EXHAUSTED,
            GrowError::CapacityOverflow => BAD_CAPACITY,
            GrowError::OverLimit => VB_OVER_LIMIT,
        }
    }
}

/// A `BF.LOAD` blob refused, in valkey-bloom's words.
impl Refusal for LoadBlobError {
    fn text(self) -> &'static CStr {
        match self {
            LoadBlobError::Malformed(_) => VB_DECODE_FAILED,
            LoadBlobError::UnsupportedVersion => VB_UNSUPPORTED_VERSION,
            LoadBlobError::BadExpansion => BAD_EXPANSION,
            LoadBlobError::RateRange => VB_RATE_RANGE,
            LoadBlobError::TooManyFilters => VB_TOO_MANY_FILTERS,
            LoadBlobError::TooLarge => VB_OVER_LIMIT,
        }
    }
}

/// A scale-out plan (`Max scaled capacity`) that failed, in valkey-bloom's words.
impl Refusal for ScaleError {
    fn text(self) -> &'static CStr {
        match self {
            ScaleError::RateExhausted => VB_SCALE_RATE_EXHAUSTED,
            ScaleError::OverLimit => VB_SCALE_OVER_LIMIT,
            ScaleError::CapacityOverflow => BAD_CAPACITY,
            ScaleError::TooManyFilters => VB_TOO_MANY_FILTERS,
        }
    }
}

/// A BF.LOADCHUNK header that no filter was made of.
impl Refusal for HeaderError {
    fn text(self) -> &'static CStr {
        match self {
            HeaderError::BadData => BAD_DATA,
            HeaderError::TooLarge => INSUFFICIENT_MEMORY_CREATE,
        }
    }
}

/// A freeze effect (`BF.FREEZE key STAGE|CHUNK|COMMIT`) that did not apply.
impl Refusal for StageError {
    fn text(self) -> &'static CStr {
        match self {
            StageError::BadData => BAD_DATA,
            StageError::TooLarge => INSUFFICIENT_MEMORY_CREATE,
            StageError::NotBuilding => STATIC_FROZEN_ALREADY,
        }
    }
}

/// A BF.LOADCHUNK chunk the filter refused.
impl Refusal for ChunkError {
    fn text(self) -> &'static CStr {
        match self {
            ChunkError::BadData => BAD_DATA,
            ChunkError::NoLink => NO_LINK,
            ChunkError::TooBig => CHUNK_TOO_BIG,
        }
    }
}

/// A cuckoo filter that CF.RESERVE or an implicit creation could not make.
impl Refusal for CuckooError {
    fn text(self) -> &'static CStr {
        match self {
            CuckooError::TooLarge => INSUFFICIENT_MEMORY_CREATE,
            CuckooError::Invalid(_) => CF_COULD_NOT_CREATE,
        }
    }
}

/// A CF.LOADCHUNK header that no cuckoo filter was made of (RedisBloom words it unlike a
/// refused creation).
pub struct CuckooHeaderRefused(pub CuckooError);

impl Refusal for CuckooHeaderRefused {
    fn text(self) -> &'static CStr {
        match self.0 {
            CuckooError::TooLarge => INSUFFICIENT_MEMORY_CREATE,
            CuckooError::Invalid(_) => CF_HEADER_REFUSED,
        }
    }
}

/// A CF.LOADCHUNK chunk the filter refused, whatever the reason.
pub struct CuckooChunkRefused(pub CuckooError);

impl Refusal for CuckooChunkRefused {
    fn text(self) -> &'static CStr {
        match self.0 {
            CuckooError::TooLarge | CuckooError::Invalid(_) => CF_CHUNK_REFUSED,
        }
    }
}

impl Refusal for InsertError {
    fn text(self) -> &'static CStr {
        match self {
            InsertError::Full => CF_FULL,
            InsertError::OutOfMemory => CF_INSUFFICIENT_MEMORY,
        }
    }
}

/// The reply to each BF.* argument error.
impl From<bf::ArgError> for CommandError {
    fn from(e: bf::ArgError) -> Self {
        let text = match e {
            bf::ArgError::Arity => return CommandError::Arity,
            bf::ArgError::BadErrorRate => BAD_ERROR_RATE,
            bf::ArgError::ErrorRateRange => ERROR_RATE_RANGE,
            bf::ArgError::BadCapacity => BAD_CAPACITY,
            bf::ArgError::CapacityRange => CAPACITY_RANGE,
            bf::ArgError::NoExpansion => NO_EXPANSION,
            bf::ArgError::NonScalingExpansion => NONSCALING_EXPAND,
            bf::ArgError::BadExpansion => BAD_EXPANSION,
            bf::ArgError::ExpansionRange => EXPANSION_RANGE,
            bf::ArgError::ExpansionTooLarge => EXPANSION_TOO_LARGE,
            bf::ArgError::InsertUnknownOption => INSERT_UNKNOWN_ARGUMENT,
            bf::ArgError::InsertBadErrorRate => INSERT_BAD_ERROR_RATE,
            bf::ArgError::InsertBadExpansion => INSERT_BAD_EXPANSION,
            bf::ArgError::InsertBadCapacity => INSERT_BAD_CAPACITY,
            bf::ArgError::InsertOutOfRange => INSERT_BAD_ARGUMENT,
            bf::ArgError::UnknownInfoField => INVALID_INFO_FIELD,
            bf::ArgError::ScanIteratorNotNumeric => SCANDUMP_NOT_NUMERIC,
            bf::ArgError::LoadIteratorNotNumeric => LOADCHUNK_NOT_NUMERIC,
            bf::ArgError::WindowRange => WINDOW_RANGE,
            bf::ArgError::GenerationsRange => GENERATIONS_RANGE,
            bf::ArgError::GenerationsWithoutWindow => GENERATIONS_WITHOUT_WINDOW,
            bf::ArgError::CountingWithWindow => COUNTING_WITH_WINDOW,
            bf::ArgError::CompactNonScaling => COMPACT_NONSCALING,
            bf::ArgError::CompactErrorRate => COMPACT_ERROR_RATE,
            bf::ArgError::CompactWindowErrorRate => COMPACT_WINDOW_ERROR_RATE,
            bf::ArgError::BlockedWithCompact => BLOCKED_WITH_COMPACT,
            bf::ArgError::BlockedWithCounting => BLOCKED_WITH_COUNTING,
            bf::ArgError::BlockedWithWindow => BLOCKED_WITH_WINDOW,
            bf::ArgError::StaticWithLayout => STATIC_WITH_LAYOUT,
        };
        CommandError::Reply(text)
    }
}

/// The reply to each CF.* argument error.
/// valkey-bloom's refusals of its own `BF.INSERT`, in its words.
impl From<ValkeyArgError> for CommandError {
    fn from(e: ValkeyArgError) -> Self {
        use ValkeyArgError as E;
        let text = match e {
            E::Arity => return CommandError::Arity,
            E::BadErrorRate => BAD_ERROR_RATE,
            E::ErrorRateRange => VB_RATE_RANGE,
            E::BadTightening => VB_BAD_TIGHTENING,
            E::TighteningRange => VB_TIGHTENING_RANGE,
            E::BadCapacity => BAD_CAPACITY,
            E::CapacityZero => CAPACITY_RANGE,
            E::InvalidSeed => VB_INVALID_SEED,
            E::BadExpansion => BAD_EXPANSION,
            E::UnknownArgument => VB_UNKNOWN_ARGUMENT,
            E::NonScalingWithScaleTo => VB_NONSCALING_SCALE_TO,
            E::ScaleTo(e) => e.text(),
        };
        CommandError::Reply(text)
    }
}

impl From<cf::ArgError> for CommandError {
    fn from(e: cf::ArgError) -> Self {
        let text = match e {
            cf::ArgError::Arity => return CommandError::Arity,
            cf::ArgError::BadCapacity => INSERT_BAD_CAPACITY,
            cf::ArgError::Unparsable(cf::CfOption::MaxIterations) => CF_PARSE_MAX_ITERATIONS,
            cf::ArgError::OutOfRange(cf::CfOption::MaxIterations) => CF_MAX_ITERATIONS_RANGE,
            cf::ArgError::Unparsable(cf::CfOption::BucketSize) => CF_PARSE_BUCKET_SIZE,
            cf::ArgError::OutOfRange(cf::CfOption::BucketSize) => CF_BUCKET_SIZE_RANGE,
            cf::ArgError::Unparsable(cf::CfOption::Expansion) => CF_PARSE_EXPANSION,
            cf::ArgError::OutOfRange(cf::CfOption::Expansion) => CF_EXPANSION_RANGE,
            cf::ArgError::CapacityTooSmall => CF_CAPACITY_TOO_SMALL,
            cf::ArgError::UnknownOption => INSERT_UNKNOWN_ARGUMENT,
            cf::ArgError::InvalidPosition => CF_INVALID_POSITION,
        };
        CommandError::Reply(text)
    }
}

/// A refusal for size as the client reads it: RedisBloom's text first (clients and RedisBloom's
/// own test suites match on it), then the limit that was met, its setting and its value. None
/// for every other text, which goes as it is.
pub fn with_bound(text: &'static CStr, bound: Bound) -> Option<CString> {
    let what = if text == INSUFFICIENT_MEMORY_CREATE || text == CF_INSUFFICIENT_MEMORY {
        "the filter would be larger than"
    } else if text == BF_PROBLEM_INSERTING {
        "the filter cannot grow its next link past"
    } else {
        return None;
    };
    let limit = match bound {
        Bound::Setting(bytes) => format!(
            "bf.max-filter-bytes ({bytes} bytes); raise it with CONFIG SET bf.max-filter-bytes"
        ),
        Bound::Maxmemory(bytes) => {
            format!("what maxmemory ({bytes} bytes) leaves free; free memory or raise maxmemory")
        }
    };
    let head = text.to_str().unwrap_or_default();
    CString::new(format!("{head}: {what} {limit}")).ok()
}

pub const WRONG_TYPE: &CStr = c"WRONGTYPE Operation against a key holding the wrong kind of value";
pub const NOT_FOUND: &CStr = c"ERR not found";
pub const ITEM_EXISTS: &CStr = c"ERR item exists";
pub const INSUFFICIENT_MEMORY_CREATE: &CStr = c"ERR Insufficient memory to create filter";

// Bloom
pub const BAD_ERROR_RATE: &CStr = c"ERR bad error rate";
pub const ERROR_RATE_RANGE: &CStr = c"ERR (0 < error rate range < 1) ";
pub const BAD_CAPACITY: &CStr = c"ERR bad capacity";
pub const CAPACITY_RANGE: &CStr = c"ERR (capacity should be larger than 0)";
pub const NO_EXPANSION: &CStr = c"ERR no expansion";
pub const NONSCALING_EXPAND: &CStr = c"Nonscaling filters cannot expand";
pub const BAD_EXPANSION: &CStr = c"ERR bad expansion";
pub const EXPANSION_RANGE: &CStr = c"ERR expansion should be greater or equal to 1";
/// Deviation D15: RedisBloom truncates an expansion past 32 bits.
pub const EXPANSION_TOO_LARGE: &CStr = c"ERR expansion should be at most 4294967295";
pub const BF_COULD_NOT_CREATE: &CStr = c"ERR could not create filter";
pub const BF_FULL: &CStr = c"ERR non scaling filter is full";
pub const BF_PROBLEM_INSERTING: &CStr = c"ERR problem inserting into filter";
/// An add to a filter (of our own kinds) whose LOADCHUNK sequence is not complete.
pub const STILL_LOADING: &CStr =
    c"ERR the filter is still loading: BF.LOADCHUNK has not sent all its chunks";
pub const INSERT_UNKNOWN_ARGUMENT: &CStr = c"Unknown argument received";
// valkey-bloom's texts, for the keys that hold its values (`bloomfltr`).
pub const VB_TOO_MANY_FILTERS: &CStr = c"ERR bloom object reached max number of filters";
pub const VB_RATE_EXHAUSTED: &CStr = c"ERR false positive degrades to 0 on scale out";
pub const VB_OVER_LIMIT: &CStr = c"ERR operation exceeds bloom object memory limit";
pub const VB_DECODE_FAILED: &CStr = c"ERR bloom object decoding failed";
pub const VB_UNSUPPORTED_VERSION: &CStr = c"ERR bloom object decoding failed. Unsupported version";
pub const VB_RATE_RANGE: &CStr = c"ERR (0 < error rate range < 1)";
pub const VB_KEY_EXISTS: &CStr = c"BUSYKEY Target key name already exists.";
pub const VB_INVALID_INFO: &CStr = c"ERR invalid information value";
pub const VB_BAD_TIGHTENING: &CStr = c"ERR bad tightening ratio";
pub const VB_TIGHTENING_RANGE: &CStr = c"ERR (0 < tightening ratio range < 1)";
pub const VB_INVALID_SEED: &CStr = c"ERR invalid seed";
pub const VB_UNKNOWN_ARGUMENT: &CStr = c"ERR unknown argument received";
pub const VB_NONSCALING_SCALE_TO: &CStr =
    c"ERR cannot use NONSCALING and VALIDATESCALETO options together";
pub const VB_SCALE_OVER_LIMIT: &CStr =
    c"ERR provided VALIDATESCALETO causes bloom object to exceed memory limit";
pub const VB_SCALE_RATE_EXHAUSTED: &CStr =
    c"ERR provided VALIDATESCALETO causes false positive to degrade to 0";
// Windowed Bloom filters (bloomrs's own; RedisBloom has no such options).
pub const WINDOW_RANGE: &CStr = c"ERR WINDOW must be a whole number of seconds from 1 to 315360000";
pub const GENERATIONS_RANGE: &CStr = c"ERR GENERATIONS must be an integer from 2 to 32";
pub const GENERATIONS_WITHOUT_WINDOW: &CStr = c"ERR GENERATIONS needs WINDOW";
pub const RETIRE_BAD_TIME: &CStr =
    c"ERR the time must be a non-negative integer (Unix milliseconds)";
pub const NOT_WINDOWED: &CStr = c"ERR not a windowed Bloom filter";
pub const INSERT_BAD_ERROR_RATE: &CStr = c"Bad error rate";
pub const INSERT_BAD_EXPANSION: &CStr = c"Bad expansion";
pub const INSERT_BAD_CAPACITY: &CStr = c"Bad capacity";
pub const INSERT_BAD_ARGUMENT: &CStr = c"Bad argument received";
pub const INVALID_INFO_FIELD: &CStr = c"Invalid information value";
pub const SCANDUMP_NOT_NUMERIC: &CStr = c"Second argument must be numeric";
pub const LOADCHUNK_NOT_NUMERIC: &CStr = c"ERR Second argument must be numeric";
pub const BAD_DATA: &CStr = c"ERR received bad data";
pub const NO_LINK: &CStr = c"ERR invalid offset - no link found";
pub const CHUNK_TOO_BIG: &CStr = c"ERR invalid chunk - Too big for current filter";

// Counting Bloom filters (deviation D12): our own wording.
pub const NOT_COUNTING: &CStr =
    c"ERR not a counting filter: only filters created with COUNTING can delete items";
pub const COUNTING_WITH_WINDOW: &CStr = c"ERR COUNTING and WINDOW cannot be combined";
pub const COMPACT_NONSCALING: &CStr = c"ERR COMPACT filters grow: NONSCALING cannot be combined";
pub const COMPACT_WINDOW_ERROR_RATE: &CStr =
    c"ERR COMPACT WINDOW filters take error rates from 1e-12 per generation (error / GENERATIONS)";
pub const COMPACT_ERROR_RATE: &CStr =
    c"ERR COMPACT filters take error rates from 1e-12: a tighter one outgrows its fingerprints before the largest filter";
// Static sets (deviation D21): our own wording.
pub const STATIC_WITH_LAYOUT: &CStr =
    c"ERR STATIC cannot be combined with WINDOW, COUNTING, COMPACT or BLOCKED";
pub const NOT_STATIC: &CStr = c"ERR not a static set (created with STATIC)";
pub const STATIC_FROZEN_ALREADY: &CStr = c"ERR filter is frozen already";
pub const STATIC_FREEZE_MEMORY: &CStr =
    c"ERR Insufficient memory to freeze the filter (its working memory is over the limits)";
pub const STATIC_FREEZE_THREAD: &CStr = c"ERR could not start the freeze";
pub const STATIC_FREEZE_CANNOT_BLOCK: &CStr =
    c"ERR BF.FREEZE of more than 100000 items cannot run inside MULTI or a script";
pub const STATIC_FREEZE_FAILED: &CStr = c"ERR could not freeze the filter (no seed made it peel)";
pub const STATIC_FREEZE_KEY_CHANGED: &CStr =
    c"ERR the key changed during BF.FREEZE (deleted, renamed, replaced or expired): nothing was frozen";
pub const STATIC_FREEZE_DEMOTED: &CStr =
    c"ERR the server became a replica during BF.FREEZE: nothing was frozen here";
pub const STATIC_EFFECT_ONLY: &CStr =
    c"ERR BF.FREEZE STAGE, CHUNK and COMMIT are a freeze's effects: only a primary or the AOF sends them";
pub const STATIC_FROZEN: &CStr =
    c"ERR filter is frozen (BF.FREEZE): a static set takes no more items";
pub const STATIC_FREEZING: &CStr =
    c"ERR filter is being frozen (BF.FREEZE running): it takes no items until the freeze ends";
// Blocked Bloom filters (deviation D19): our own wording.
pub const BLOCKED_WITH_COMPACT: &CStr = c"ERR BLOCKED and COMPACT cannot be combined";
pub const BLOCKED_WITH_COUNTING: &CStr = c"ERR BLOCKED and COUNTING cannot be combined";
pub const BLOCKED_WITH_WINDOW: &CStr = c"ERR BLOCKED and WINDOW cannot be combined";

// Cuckoo
pub const CF_PARSE_MAX_ITERATIONS: &CStr = c"Couldn't parse MAXITERATIONS";
pub const CF_MAX_ITERATIONS_RANGE: &CStr =
    c"MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.";
pub const CF_PARSE_BUCKET_SIZE: &CStr = c"Couldn't parse BUCKETSIZE";
pub const CF_BUCKET_SIZE_RANGE: &CStr =
    c"BUCKETSIZE: value must be an integer between 1 and 255, inclusive.";
pub const CF_PARSE_EXPANSION: &CStr = c"Couldn't parse EXPANSION";
pub const CF_EXPANSION_RANGE: &CStr =
    c"EXPANSION: value must be an integer between 0 and 32768, inclusive.";
pub const CF_CAPACITY_TOO_SMALL: &CStr = c"Capacity must be at least (BucketSize * 2)";
pub const CF_COULD_NOT_CREATE: &CStr = c"ERR Could not create filter";
pub const CF_MAX_EXPANSIONS_REACHED: &CStr = c"Maximum expansions reached";
pub const CF_FULL: &CStr = c"Filter is full";
pub const CF_INSUFFICIENT_MEMORY: &CStr = c"ERR Insufficient memory";
pub const CF_DEL_NOT_FOUND: &CStr = c"Not found";
pub const CF_COMPACT_NOT_FOUND: &CStr = c"Cuckoo filter was not found";
pub const CF_INVALID_POSITION: &CStr = c"Invalid position";
pub const CF_INVALID_HEADER: &CStr = c"Invalid header";
pub const CF_HEADER_REFUSED: &CStr = c"Couldn't create filter!";
pub const CF_CHUNK_REFUSED: &CStr = c"Couldn't load chunk!";
