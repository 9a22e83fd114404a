//! `COMMAND DOCS` for every command: summary, complexity, the RedisBloom version that
//! introduced it, and its arguments, registered with `RedisModule_SetCommandInfo` where the
//! server offers it (Redis 7.0 does). Key specs are left to Redis, which derives them from the
//! registered key position 1.

use std::ffi::{c_int, CStr};
use std::ptr::{null, null_mut};

use redis_module::raw;

use super::ffi::RawCtx;

/// What kind of argument, as COMMAND DOCS reports it.
#[derive(Clone, Copy)]
enum Kind {
    Key,
    String,
    Integer,
    Double,
    Token,
    OneOf(&'static [Arg]),
}

/// One documented argument.
#[derive(Clone, Copy)]
struct Arg {
    name: &'static CStr,
    kind: Kind,
    token: Option<&'static CStr>,
    optional: bool,
    multiple: bool,
}

const fn arg(name: &'static CStr, kind: Kind) -> Arg {
    Arg {
        name,
        kind,
        token: None,
        optional: false,
        multiple: false,
    }
}

const fn optional(token: &'static CStr, name: &'static CStr, kind: Kind) -> Arg {
    Arg {
        name,
        kind,
        token: Some(token),
        optional: true,
        multiple: false,
    }
}

const fn flag(token: &'static CStr, name: &'static CStr) -> Arg {
    Arg {
        name,
        kind: Kind::Token,
        token: Some(token),
        optional: true,
        multiple: false,
    }
}

const fn many(name: &'static CStr) -> Arg {
    Arg {
        name,
        kind: Kind::String,
        token: None,
        optional: false,
        multiple: true,
    }
}

const KEY: Arg = arg(c"key", Kind::Key);
const ITEM: Arg = arg(c"item", Kind::String);
const ITEMS: Arg = Arg {
    token: Some(c"ITEMS"),
    ..many(c"item")
};
const ITERATOR: Arg = arg(c"iterator", Kind::Integer);
const DATA: Arg = arg(c"data", Kind::String);

const BF_INFO_FIELDS: &[Arg] = &[
    flag(c"CAPACITY", c"capacity"),
    flag(c"SIZE", c"size"),
    flag(c"FILTERS", c"filters"),
    flag(c"ITEMS", c"items"),
    flag(c"EXPANSION", c"expansion"),
];

/// A command's documentation.
struct Doc {
    name: &'static CStr,
    summary: &'static CStr,
    complexity: &'static CStr,
    since: &'static CStr,
    args: &'static [Arg],
}

const ONE: &CStr = c"O(k), where k is the number of hash functions used by the last sub-filter";
const MANY: &CStr =
    c"O(k * n), where k is the number of hash functions and n is the number of items";

const DOCS: &[Doc] = &[
    Doc { name: c"bf.reserve", summary: c"Creates a new Bloom Filter", complexity: c"O(1)", since: c"1.0.0",
        args: &[KEY, arg(c"error_rate", Kind::Double), arg(c"capacity", Kind::Integer), optional(c"EXPANSION", c"expansion", Kind::Integer), flag(c"NONSCALING", c"nonscaling")] },
    Doc { name: c"bf.add", summary: c"Adds an item to a Bloom Filter", complexity: ONE, since: c"1.0.0", args: &[KEY, ITEM] },
    Doc { name: c"bf.madd", summary: c"Adds one or more items to a Bloom Filter. A filter will be created if it does not exist", complexity: MANY, since: c"1.0.0", args: &[KEY, many(c"item")] },
    Doc { name: c"bf.insert", summary: c"Adds one or more items to a Bloom Filter. A filter will be created if it does not exist", complexity: MANY, since: c"1.0.0",
        args: &[KEY, optional(c"CAPACITY", c"capacity", Kind::Integer), optional(c"ERROR", c"error", Kind::Double), optional(c"EXPANSION", c"expansion", Kind::Integer), flag(c"NOCREATE", c"nocreate"), flag(c"NONSCALING", c"nonscaling"), ITEMS] },
    Doc { name: c"bf.exists", summary: c"Checks whether an item exists in a Bloom Filter", complexity: ONE, since: c"1.0.0", args: &[KEY, ITEM] },
    Doc { name: c"bf.mexists", summary: c"Checks whether one or more items exist in a Bloom Filter", complexity: MANY, since: c"1.0.0", args: &[KEY, many(c"item")] },
    Doc { name: c"bf.info", summary: c"Returns information about a Bloom Filter", complexity: c"O(1)", since: c"1.0.0",
        args: &[KEY, Arg { optional: true, ..arg(c"single_value", Kind::OneOf(BF_INFO_FIELDS)) }] },
    Doc { name: c"bf.card", summary: c"Returns the cardinality of a Bloom filter", complexity: c"O(1)", since: c"2.4.4", args: &[KEY] },
    Doc { name: c"bf.debug", summary: c"Returns the parameters of every sub-filter of a Bloom filter", complexity: c"O(n), where n is the number of sub-filters", since: c"1.0.0", args: &[KEY] },
    Doc { name: c"bf.scandump", summary: c"Begins an incremental save of the bloom filter", complexity: c"O(n), where n is the capacity", since: c"1.0.0", args: &[KEY, ITERATOR] },
    Doc { name: c"bf.promote", summary: c"Turns a sparse Bloom filter into the dense filter RedisBloom reads (bloomrs)", complexity: c"O(n), where n is the capacity", since: c"0.1.0", args: &[KEY] },
    Doc { name: c"bf.loadchunk", summary: c"Restores a filter previously saved using SCANDUMP", complexity: c"O(n), where n is the capacity", since: c"1.0.0", args: &[KEY, ITERATOR, DATA] },
    Doc { name: c"bf.retire", summary: c"Retires the generations of a windowed Bloom filter that have left its window by a time (bloomrs)", complexity: c"O(g), where g is the number of generations", since: c"0.1.0",
        args: &[KEY, arg(c"unix-time-milliseconds", Kind::Integer)] },
    Doc { name: c"bf.del", summary: c"Deletes an item from a counting Bloom filter (created with COUNTING)", complexity: c"O(k * l), where k is the number of hash functions and l the number of sub-filters", since: c"0.1.0", args: &[KEY, ITEM] },
    Doc { name: c"bf.mdel", summary: c"Deletes one or more items from a counting Bloom filter (created with COUNTING)", complexity: c"O(k * l * n), where k is the number of hash functions, l the number of sub-filters and n the number of items", since: c"0.1.0", args: &[KEY, many(c"item")] },
    Doc { name: c"cf.reserve", summary: c"Creates a new Cuckoo Filter", complexity: c"O(1)", since: c"1.0.0",
        args: &[KEY, arg(c"capacity", Kind::Integer), optional(c"BUCKETSIZE", c"bucketsize", Kind::Integer), optional(c"MAXITERATIONS", c"maxiterations", Kind::Integer), optional(c"EXPANSION", c"expansion", Kind::Integer)] },
    Doc { name: c"cf.add", summary: c"Adds an item to a Cuckoo Filter", complexity: c"O(k + i), where k is the number of sub-filters and i is maxIterations", since: c"1.0.0", args: &[KEY, ITEM] },
    Doc { name: c"cf.addnx", summary: c"Adds an item to a Cuckoo Filter if the item did not exist previously", complexity: c"O(k + i), where k is the number of sub-filters and i is maxIterations", since: c"1.0.0", args: &[KEY, ITEM] },
    Doc { name: c"cf.insert", summary: c"Adds one or more items to a Cuckoo Filter. A filter will be created if it does not exist", complexity: c"O(n * (k + i)), where n is the number of items, k is the number of sub-filters and i is maxIterations", since: c"1.0.0",
        args: &[KEY, optional(c"CAPACITY", c"capacity", Kind::Integer), flag(c"NOCREATE", c"nocreate"), ITEMS] },
    Doc { name: c"cf.insertnx", summary: c"Adds one or more items to a Cuckoo Filter if the items did not exist previously. A filter will be created if it does not exist", complexity: c"O(n * (k + i)), where n is the number of items, k is the number of sub-filters and i is maxIterations", since: c"1.0.0",
        args: &[KEY, optional(c"CAPACITY", c"capacity", Kind::Integer), flag(c"NOCREATE", c"nocreate"), ITEMS] },
    Doc { name: c"cf.exists", summary: c"Checks if one item exists in a Cuckoo Filter", complexity: c"O(k), where k is the number of sub-filters", since: c"1.0.0", args: &[KEY, ITEM] },
    Doc { name: c"cf.mexists", summary: c"Checks if one or more items exist in a Cuckoo Filter", complexity: c"O(k * n), where k is the number of sub-filters and n is the number of items", since: c"1.0.0", args: &[KEY, many(c"item")] },
    Doc { name: c"cf.count", summary: c"Return the number of times an item might be in a Cuckoo Filter", complexity: c"O(k), where k is the number of sub-filters", since: c"1.0.0", args: &[KEY, ITEM] },
    Doc { name: c"cf.del", summary: c"Deletes an item from a Cuckoo Filter", complexity: c"O(k), where k is the number of sub-filters", since: c"1.0.0", args: &[KEY, ITEM] },
    Doc { name: c"cf.compact", summary: c"Moves items into older sub-filters and drops emptied ones", complexity: c"O(n), where n is the number of slots", since: c"1.0.0", args: &[KEY] },
    Doc { name: c"cf.info", summary: c"Returns information about a Cuckoo Filter", complexity: c"O(1)", since: c"1.0.0", args: &[KEY] },
    Doc { name: c"cf.debug", summary: c"Returns the parameters of a Cuckoo Filter in one line", complexity: c"O(1)", since: c"1.0.0", args: &[KEY] },
    Doc { name: c"cf.scandump", summary: c"Begins an incremental save of the cuckoo filter", complexity: c"O(n), where n is the capacity", since: c"1.0.0", args: &[KEY, ITERATOR] },
    Doc { name: c"cf.loadchunk", summary: c"Restores a filter previously saved using SCANDUMP", complexity: c"O(n), where n is the capacity", since: c"1.0.0", args: &[KEY, ITERATOR, DATA] },
];

/// Raw argument arrays (each ends with a zeroed entry), kept alive until Redis has copied them.
fn raw_args(
    args: &[Arg],
    nested: &mut Vec<Vec<raw::RedisModuleCommandArg>>,
) -> Vec<raw::RedisModuleCommandArg> {
    let mut out: Vec<raw::RedisModuleCommandArg> = args
        .iter()
        .map(|a| {
            let (kind, subargs) = match a.kind {
                Kind::Key => (
                    raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_KEY,
                    null_mut(),
                ),
                Kind::String => (
                    raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_STRING,
                    null_mut(),
                ),
                Kind::Integer => (
                    raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_INTEGER,
                    null_mut(),
                ),
                Kind::Double => (
                    raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_DOUBLE,
                    null_mut(),
                ),
                Kind::Token => (
                    raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_PURE_TOKEN,
                    null_mut(),
                ),
                Kind::OneOf(choices) => {
                    let mut inner = raw_args(choices, nested);
                    let ptr = inner.as_mut_ptr();
                    nested.push(inner);
                    (
                        raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_ONEOF,
                        ptr,
                    )
                }
            };
            let mut flags = 0;
            if a.optional {
                flags |= raw::REDISMODULE_CMD_ARG_OPTIONAL;
            }
            if a.multiple {
                flags |= raw::REDISMODULE_CMD_ARG_MULTIPLE;
            }
            raw::RedisModuleCommandArg {
                name: a.name.as_ptr(),
                type_: kind,
                key_spec_index: if matches!(a.kind, Kind::Key) { 0 } else { -1 },
                token: a.token.map_or(null(), CStr::as_ptr),
                summary: null(),
                since: null(),
                flags: flags as c_int,
                deprecated_since: null(),
                subargs,
                display_text: null(),
            }
        })
        .collect();
    // SAFETY: an all-zero RedisModuleCommandArg (null pointers, zero numbers) ends the array.
    out.push(unsafe { std::mem::zeroed() });
    out
}

/// Registers the documentation of `name`; a server without the API keeps the bare command.
pub fn describe(ctx: RawCtx, name: &CStr) -> Result<(), String> {
    // SAFETY: the API pointers are written once by RedisModule_Init, before this runs.
    let pointers = unsafe { (raw::RedisModule_SetCommandInfo, raw::RedisModule_GetCommand) };
    let (Some(set_info), Some(get_command)) = pointers else {
        return Ok(());
    };
    let Some(doc) = DOCS.iter().find(|d| d.name == name) else {
        return Err(format!("no documentation for {name:?}"));
    };
    let version = raw::RedisModuleCommandInfoVersion {
        version: 1,
        sizeof_historyentry: std::mem::size_of::<raw::RedisModuleCommandHistoryEntry>(),
        sizeof_keyspec: std::mem::size_of::<raw::RedisModuleCommandKeySpec>(),
        sizeof_arg: std::mem::size_of::<raw::RedisModuleCommandArg>(),
    };
    let mut nested = Vec::new();
    let mut args = raw_args(doc.args, &mut nested);
    let info = raw::RedisModuleCommandInfo {
        version: &version,
        summary: doc.summary.as_ptr(),
        complexity: doc.complexity.as_ptr(),
        since: doc.since.as_ptr(),
        history: null_mut(),
        tips: null(),
        arity: 0,
        key_specs: null_mut(),
        args: args.as_mut_ptr(),
    };
    // SAFETY: `name` was just registered by this module; every pointer in `info` lives until
    // the call returns, and Redis copies what it keeps.
    let status = unsafe {
        let command = get_command(ctx, name.as_ptr());
        if command.is_null() {
            return Err(format!("{name:?} is not registered"));
        }
        set_info(command, &info)
    };
    if status == raw::REDISMODULE_OK as c_int {
        Ok(())
    } else {
        Err(format!("the server refused the documentation of {name:?}"))
    }
}
