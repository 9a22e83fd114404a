//! THE command table: every command's name, handler, flags, ACL categories and `COMMAND DOCS`
//! (summary, complexity, the RedisBloom version that introduced it, and every argument and
//! keyword), in one row each. The module's `init` registers the commands, their documentation
//! and their ACL categories from it, so a command and its keywords are written down once.
//!
//! ACL categories are RedisBloom 8's: a category per command family (`bloom` for `BF.*`,
//! `cuckoo` for `CF.*`, from the name's prefix, so a new command lands in its family without
//! being listed) plus `read` or `write` (from the command's flags) and `fast` for the few
//! commands RedisBloom 8 lists as fast. The server derives nothing more for module commands
//! (no implicit `@fast`/`@slow` from the flags), so these are all a command's categories.

use std::ffi::{c_int, CStr};

use super::{bf, cf, cf_chunks};
use crate::module::ffi::registry::{Arg, ArgKind, Doc, Handler};
use crate::module::ffi::{run_command, RawCtx, RawString};
use crate::module::kinds;

/// One command: what registers it, what documents it.
pub struct Command {
    pub name: &'static CStr,
    pub handler: Handler,
    pub flags: &'static CStr,
    /// RedisBloom 8 puts it in `@fast`, whatever its flags say.
    pub acl_fast: bool,
    /// `None` only for the fault-injection command of test builds.
    pub doc: Option<Doc>,
}

/// Wraps a handler in an `extern "C"` entry point that catches panics.
macro_rules! entry {
    ($handler:path) => {{
        extern "C" fn entry(ctx: RawCtx, argv: *mut RawString, argc: c_int) -> c_int {
            run_command(ctx, argv, argc, $handler)
        }
        entry as Handler
    }};
}

/// Write commands that may allocate, read-only ones, and deletes (writes that never grow).
const WRITE: &CStr = c"write deny-oom";
const READ: &CStr = c"readonly fast";
/// Reads that copy or build up to a 16 MiB chunk for the reply.
const READ_CHUNK: &CStr = c"readonly";
const WRITE_FAST: &CStr = c"write fast";

const fn arg(name: &'static CStr, kind: ArgKind) -> Arg {
    Arg {
        name,
        kind,
        token: None,
        optional: false,
        multiple: false,
    }
}

const fn optional(token: &'static CStr, name: &'static CStr, kind: ArgKind) -> Arg {
    Arg {
        token: Some(token),
        optional: true,
        ..arg(name, kind)
    }
}

const fn flag(token: &'static CStr, name: &'static CStr) -> Arg {
    optional(token, name, ArgKind::Token)
}

const fn many(name: &'static CStr) -> Arg {
    Arg {
        multiple: true,
        ..arg(name, ArgKind::String)
    }
}

const KEY: Arg = arg(c"key", ArgKind::Key);
const ITEM: Arg = arg(c"item", ArgKind::String);
const ITEMS: Arg = Arg {
    token: Some(c"ITEMS"),
    ..many(c"item")
};
const ITERATOR: Arg = arg(c"iterator", ArgKind::Integer);
const DATA: Arg = arg(c"data", ArgKind::String);
/// bloomrs's own Bloom options: a windowed filter (`WINDOW seconds [GENERATIONS g]`) and a
/// counting one (deviation D12).
const WINDOW: Arg = optional(c"WINDOW", c"seconds", ArgKind::Integer);
const GENERATIONS: Arg = optional(c"GENERATIONS", c"generations", ArgKind::Integer);
const COUNTING: Arg = flag(c"COUNTING", c"counting");
const COMPACT: Arg = flag(c"COMPACT", c"compact");
const BLOCKED: Arg = flag(c"BLOCKED", c"blocked");
const STATIC: Arg = flag(c"STATIC", c"static");

const BF_INFO_FIELDS: &[Arg] = &[
    flag(c"CAPACITY", c"capacity"),
    flag(c"SIZE", c"size"),
    flag(c"FILTERS", c"filters"),
    flag(c"ITEMS", c"items"),
    flag(c"EXPANSION", c"expansion"),
    flag(c"RATE", c"rate"),
];

const ONE: &CStr = c"O(k), where k is the number of hash functions used by the last sub-filter";
const MANY: &CStr =
    c"O(k * n), where k is the number of hash functions and n is the number of items";

/// Every command, in the order they are registered.
#[rustfmt::skip]
pub static COMMANDS: &[Command] = &[
    Command { name: c"bf.reserve", handler: entry!(bf::reserve), flags: WRITE, acl_fast: true,
        doc: Some(Doc { summary: c"Creates a new Bloom Filter", complexity: c"O(1)", since: c"1.0.0",
            args: &[KEY, arg(c"error_rate", ArgKind::Double), arg(c"capacity", ArgKind::Integer), optional(c"EXPANSION", c"expansion", ArgKind::Integer), flag(c"NONSCALING", c"nonscaling"), WINDOW, GENERATIONS, COUNTING, COMPACT, BLOCKED, STATIC] }) },
    Command { name: c"bf.add", handler: entry!(bf::add), flags: WRITE, acl_fast: false,
        doc: Some(Doc { summary: c"Adds an item to a Bloom Filter", complexity: ONE, since: c"1.0.0",
            args: &[KEY, ITEM] }) },
    Command { name: c"bf.madd", handler: entry!(bf::madd), flags: WRITE, acl_fast: false,
        doc: Some(Doc { summary: c"Adds one or more items to a Bloom Filter. A filter will be created if it does not exist", complexity: MANY, since: c"1.0.0",
            args: &[KEY, many(c"item")] }) },
    Command { name: c"bf.insert", handler: entry!(bf::insert), flags: WRITE, acl_fast: false,
        doc: Some(Doc { summary: c"Adds one or more items to a Bloom Filter. A filter will be created if it does not exist", complexity: MANY, since: c"1.0.0",
            args: &[KEY, optional(c"CAPACITY", c"capacity", ArgKind::Integer), optional(c"ERROR", c"error", ArgKind::Double), optional(c"EXPANSION", c"expansion", ArgKind::Integer), flag(c"NOCREATE", c"nocreate"), flag(c"NONSCALING", c"nonscaling"), WINDOW, GENERATIONS, COUNTING, COMPACT, BLOCKED, STATIC, ITEMS] }) },
    Command { name: c"bf.exists", handler: entry!(bf::exists), flags: READ, acl_fast: false,
        doc: Some(Doc { summary: c"Checks whether an item exists in a Bloom Filter", complexity: ONE, since: c"1.0.0",
            args: &[KEY, ITEM] }) },
    Command { name: c"bf.mexists", handler: entry!(bf::mexists), flags: READ, acl_fast: false,
        doc: Some(Doc { summary: c"Checks whether one or more items exist in a Bloom Filter", complexity: MANY, since: c"1.0.0",
            args: &[KEY, many(c"item")] }) },
    Command { name: c"bf.info", handler: entry!(bf::info), flags: READ, acl_fast: true,
        doc: Some(Doc { summary: c"Returns information about a Bloom Filter", complexity: c"O(1)", since: c"1.0.0",
            args: &[KEY, Arg { optional: true, ..arg(c"single_value", ArgKind::OneOf(BF_INFO_FIELDS)) }] }) },
    Command { name: c"bf.estimate", handler: entry!(bf::estimate), flags: READ, acl_fast: true,
        doc: Some(Doc { summary: c"Returns the size a Bloom filter of these options holding its capacity would take, without creating it", complexity: c"O(1)", since: c"0.1.0",
            args: &[arg(c"error_rate", ArgKind::Double), arg(c"capacity", ArgKind::Integer), optional(c"EXPANSION", c"expansion", ArgKind::Integer), flag(c"NONSCALING", c"nonscaling"), WINDOW, GENERATIONS, COUNTING, COMPACT, BLOCKED, STATIC] }) },
    Command { name: c"bf.card", handler: entry!(bf::card), flags: READ, acl_fast: true,
        doc: Some(Doc { summary: c"Returns the cardinality of a Bloom filter", complexity: c"O(1)", since: c"2.4.4",
            args: &[KEY] }) },
    Command { name: c"bf.debug", handler: entry!(bf::debug), flags: READ, acl_fast: false,
        doc: Some(Doc { summary: c"Returns the parameters of every sub-filter of a Bloom filter", complexity: c"O(n), where n is the number of sub-filters", since: c"1.0.0",
            args: &[KEY] }) },
    Command { name: c"bf.scandump", handler: entry!(bf::scandump), flags: READ_CHUNK, acl_fast: false,
        doc: Some(Doc { summary: c"Begins an incremental save of the bloom filter", complexity: c"O(n), where n is the capacity", since: c"1.0.0",
            args: &[KEY, ITERATOR] }) },
    Command { name: c"bf.loadchunk", handler: entry!(bf::loadchunk), flags: WRITE, acl_fast: false,
        doc: Some(Doc { summary: c"Restores a filter previously saved using SCANDUMP", complexity: c"O(n), where n is the capacity", since: c"1.0.0",
            args: &[KEY, ITERATOR, DATA] }) },
    Command { name: c"bf.retire", handler: entry!(kinds::windowed::retire), flags: WRITE_FAST, acl_fast: false,
        doc: Some(Doc { summary: c"Retires the generations of a windowed Bloom filter that have left its window by a time (bloomrs)", complexity: c"O(g), where g is the number of generations", since: c"0.1.0",
            args: &[KEY, arg(c"unix-time-milliseconds", ArgKind::Integer)] }) },
    Command { name: c"bf.promote", handler: entry!(kinds::sparse::promote), flags: WRITE, acl_fast: false,
        doc: Some(Doc { summary: c"Turns a sparse Bloom filter into the dense filter RedisBloom reads (bloomrs)", complexity: c"O(n), where n is the capacity", since: c"0.1.0",
            args: &[KEY] }) },
    Command { name: c"bf.freeze", handler: entry!(kinds::static_set::freeze), flags: WRITE, acl_fast: false,
        doc: Some(Doc { summary: c"Turns a static set's builder into a binary fuse filter, off the main thread (bloomrs)", complexity: c"O(n), where n is the number of items, off the main thread", since: c"0.1.0",
            args: &[KEY] }) },
    Command { name: c"bf.load", handler: entry!(kinds::valkey_bloom::load), flags: WRITE, acl_fast: false,
        doc: Some(Doc { summary: c"Restores a valkey-bloom filter from the blob its AOF rewrite writes (valkey-bloom)", complexity: c"O(n), where n is the size of the blob", since: c"0.1.0",
            args: &[KEY, DATA] }) },
    Command { name: c"bf.del", handler: entry!(bf::del), flags: WRITE_FAST, acl_fast: false,
        doc: Some(Doc { summary: c"Deletes an item from a counting Bloom filter (created with COUNTING)", complexity: c"O(k * l), where k is the number of hash functions and l the number of sub-filters", since: c"0.1.0",
            args: &[KEY, ITEM] }) },
    Command { name: c"bf.mdel", handler: entry!(bf::mdel), flags: WRITE_FAST, acl_fast: false,
        doc: Some(Doc { summary: c"Deletes one or more items from a counting Bloom filter (created with COUNTING)", complexity: c"O(k * l * n), where k is the number of hash functions, l the number of sub-filters and n the number of items", since: c"0.1.0",
            args: &[KEY, many(c"item")] }) },
    Command { name: c"cf.reserve", handler: entry!(cf::reserve), flags: WRITE, acl_fast: true,
        doc: Some(Doc { summary: c"Creates a new Cuckoo Filter", complexity: c"O(1)", since: c"1.0.0",
            args: &[KEY, arg(c"capacity", ArgKind::Integer), optional(c"BUCKETSIZE", c"bucketsize", ArgKind::Integer), optional(c"MAXITERATIONS", c"maxiterations", ArgKind::Integer), optional(c"EXPANSION", c"expansion", ArgKind::Integer)] }) },
    Command { name: c"cf.add", handler: entry!(cf::add), flags: WRITE, acl_fast: false,
        doc: Some(Doc { summary: c"Adds an item to a Cuckoo Filter", complexity: c"O(k + i), where k is the number of sub-filters and i is maxIterations", since: c"1.0.0",
            args: &[KEY, ITEM] }) },
    Command { name: c"cf.addnx", handler: entry!(cf::addnx), flags: WRITE, acl_fast: false,
        doc: Some(Doc { summary: c"Adds an item to a Cuckoo Filter if the item did not exist previously", complexity: c"O(k + i), where k is the number of sub-filters and i is maxIterations", since: c"1.0.0",
            args: &[KEY, ITEM] }) },
    Command { name: c"cf.insert", handler: entry!(cf::insert), flags: WRITE, acl_fast: false,
        doc: Some(Doc { summary: c"Adds one or more items to a Cuckoo Filter. A filter will be created if it does not exist", complexity: c"O(n * (k + i)), where n is the number of items, k is the number of sub-filters and i is maxIterations", since: c"1.0.0",
            args: &[KEY, optional(c"CAPACITY", c"capacity", ArgKind::Integer), flag(c"NOCREATE", c"nocreate"), ITEMS] }) },
    Command { name: c"cf.insertnx", handler: entry!(cf::insertnx), flags: WRITE, acl_fast: false,
        doc: Some(Doc { summary: c"Adds one or more items to a Cuckoo Filter if the items did not exist previously. A filter will be created if it does not exist", complexity: c"O(n * (k + i)), where n is the number of items, k is the number of sub-filters and i is maxIterations", since: c"1.0.0",
            args: &[KEY, optional(c"CAPACITY", c"capacity", ArgKind::Integer), flag(c"NOCREATE", c"nocreate"), ITEMS] }) },
    Command { name: c"cf.exists", handler: entry!(cf::exists), flags: READ, acl_fast: false,
        doc: Some(Doc { summary: c"Checks if one item exists in a Cuckoo Filter", complexity: c"O(k), where k is the number of sub-filters", since: c"1.0.0",
            args: &[KEY, ITEM] }) },
    Command { name: c"cf.mexists", handler: entry!(cf::mexists), flags: READ, acl_fast: false,
        doc: Some(Doc { summary: c"Checks if one or more items exist in a Cuckoo Filter", complexity: c"O(k * n), where k is the number of sub-filters and n is the number of items", since: c"1.0.0",
            args: &[KEY, many(c"item")] }) },
    Command { name: c"cf.count", handler: entry!(cf::count), flags: READ, acl_fast: false,
        doc: Some(Doc { summary: c"Return the number of times an item might be in a Cuckoo Filter", complexity: c"O(k), where k is the number of sub-filters", since: c"1.0.0",
            args: &[KEY, ITEM] }) },
    Command { name: c"cf.del", handler: entry!(cf::del), flags: WRITE_FAST, acl_fast: false,
        doc: Some(Doc { summary: c"Deletes an item from a Cuckoo Filter", complexity: c"O(k), where k is the number of sub-filters", since: c"1.0.0",
            args: &[KEY, ITEM] }) },
    // RedisBloom registers CF.COMPACT read-only although it rewrites the value.
    Command { name: c"cf.compact", handler: entry!(cf::compact), flags: READ, acl_fast: false,
        doc: Some(Doc { summary: c"Moves items into older sub-filters and drops emptied ones", complexity: c"O(n), where n is the number of slots", since: c"1.0.0",
            args: &[KEY] }) },
    Command { name: c"cf.scandump", handler: entry!(cf_chunks::scandump), flags: READ_CHUNK, acl_fast: false,
        doc: Some(Doc { summary: c"Begins an incremental save of the cuckoo filter", complexity: c"O(n), where n is the capacity", since: c"1.0.0",
            args: &[KEY, ITERATOR] }) },
    Command { name: c"cf.loadchunk", handler: entry!(cf_chunks::loadchunk), flags: WRITE, acl_fast: false,
        doc: Some(Doc { summary: c"Restores a filter previously saved using SCANDUMP", complexity: c"O(n), where n is the capacity", since: c"1.0.0",
            args: &[KEY, ITERATOR, DATA] }) },
    Command { name: c"cf.info", handler: entry!(cf::info), flags: READ, acl_fast: true,
        doc: Some(Doc { summary: c"Returns information about a Cuckoo Filter", complexity: c"O(1)", since: c"1.0.0",
            args: &[KEY] }) },
    Command { name: c"cf.debug", handler: entry!(cf::debug), flags: READ, acl_fast: false,
        doc: Some(Doc { summary: c"Returns the parameters of a Cuckoo Filter in one line", complexity: c"O(1)", since: c"1.0.0",
            args: &[KEY] }) },
    #[cfg(feature = "fault-injection")]
    Command { name: c"bf.__fault", handler: entry!(super::fault::inject), flags: READ, acl_fast: false, doc: None },
];

/// The commands with no key (every other one has its key at position 1).
pub const KEYLESS: &[&CStr] = &[c"bf.estimate"];

/// Command-name prefix → ACL category of that family.
pub const FAMILIES: &[(&str, &str)] = &[("bf.", "bloom"), ("cf.", "cuckoo")];

/// The family category of a command, from its name's prefix.
pub fn family(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    FAMILIES
        .iter()
        .find(|(prefix, _)| lower.starts_with(prefix))
        .map(|(_, category)| *category)
}

/// The ACL categories of a command: `write` or `read` from its flags (`"write deny-oom"`,
/// `"readonly fast"`, ...), `fast` where RedisBloom 8 gives it, and the family.
pub fn acl_categories(command: &Command) -> Result<String, String> {
    let name = command.name.to_string_lossy();
    let family = family(&name).ok_or_else(|| format!("no ACL category for {name}"))?;
    let flags = command.flags.to_string_lossy();
    let flags: Vec<&str> = flags.split_whitespace().collect();
    let mut out = Vec::new();
    if flags.contains(&"write") {
        out.push("write");
    } else if flags.contains(&"readonly") {
        out.push("read");
    }
    if command.acl_fast {
        out.push("fast");
    }
    out.push(family);
    Ok(out.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(name: &CStr) -> &'static Command {
        let found = COMMANDS.iter().find(|c| c.name == name);
        found.unwrap_or_else(|| panic!("{name:?} is not in the table"))
    }

    #[test]
    fn families_come_from_the_prefix() {
        assert_eq!(family("bf.add"), Some("bloom"));
        assert_eq!(family("BF.SOMETHING_NEW"), Some("bloom"));
        assert_eq!(family("cf.del"), Some("cuckoo"));
        assert_eq!(family("cms.incrby"), None);
    }

    #[test]
    fn categories_as_redisbloom_8_gives_them() {
        let cases = [
            (c"bf.reserve", "write fast bloom"),
            (c"bf.add", "write bloom"),
            (c"bf.exists", "read bloom"),
            (c"bf.info", "read fast bloom"),
            (c"bf.card", "read fast bloom"),
            (c"bf.scandump", "read bloom"),
            (c"bf.loadchunk", "write bloom"),
            (c"cf.del", "write cuckoo"),
            (c"cf.reserve", "write fast cuckoo"),
            (c"cf.info", "read fast cuckoo"),
            (c"cf.compact", "read cuckoo"),
        ];
        for (name, expected) in cases {
            let categories = acl_categories(command(name));
            assert_eq!(categories.as_deref(), Ok(expected), "{name:?}");
        }
    }

    #[test]
    fn every_command_has_a_family_and_docs() {
        for command in COMMANDS {
            let name = command.name.to_string_lossy();
            assert!(acl_categories(command).is_ok(), "{name}");
            assert_eq!(command.doc.is_some(), name != "bf.__fault", "{name}");
        }
    }

    /// The tokens of a command's documented arguments.
    fn tokens(name: &CStr) -> Vec<&'static CStr> {
        let doc = command(name).doc.as_ref();
        let args = doc.map_or(&[][..], |doc| doc.args);
        args.iter().filter_map(|arg| arg.token).collect()
    }

    #[test]
    fn bloomrs_options_are_documented() {
        for name in [c"bf.reserve", c"bf.insert"] {
            for keyword in [
                c"WINDOW",
                c"GENERATIONS",
                c"COUNTING",
                c"COMPACT",
                c"BLOCKED",
                c"STATIC",
            ] {
                assert!(tokens(name).contains(&keyword), "{name:?} {keyword:?}");
            }
        }
    }
}
