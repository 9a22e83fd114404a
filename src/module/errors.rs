//! Every error reply, worded exactly as RedisBloom words it (some lack the `ERR ` prefix, one
//! ends in a space), and the type a handler returns to send one.

use std::ffi::CStr;

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
pub const BF_COULD_NOT_CREATE: &CStr = c"ERR could not create filter";
pub const BF_FULL: &CStr = c"ERR non scaling filter is full";
pub const BF_PROBLEM_INSERTING: &CStr = c"ERR problem inserting into filter";
pub const INSERT_UNKNOWN_ARGUMENT: &CStr = c"Unknown argument received";
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
