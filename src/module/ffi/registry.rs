//! The raw side of registering commands at load: `CreateCommand`, their documentation for
//! `COMMAND DOCS` (`SetCommandInfo`, where the server offers it; Redis 7.0 does), and ACL
//! categories (`AddACLCategory`, `SetCommandACLCategories`: Valkey 8, Redis 7.4 and later;
//! absent on Redis 7.0, where nothing is set). What is registered comes from the one command
//! table, `commands::table`; the shapes it is written in ([`Doc`], [`Arg`]) are defined here,
//! beside the raw structures they become. Key specs are left to Redis, which derives them from
//! the registered key position 1.

use std::ffi::{c_int, CStr, CString};
use std::ptr::{null, null_mut};

use redis_module::raw;

use super::raw::{api, RawCtx, RawString};

/// A command's `extern "C"` entry point.
pub type Handler = extern "C" fn(RawCtx, *mut RawString, c_int) -> c_int;

/// What kind of argument, as COMMAND DOCS reports it.
#[derive(Clone, Copy)]
pub enum ArgKind {
    Key,
    String,
    Integer,
    Double,
    Token,
    OneOf(&'static [Arg]),
}

/// One documented argument.
#[derive(Clone, Copy)]
pub struct Arg {
    pub name: &'static CStr,
    pub kind: ArgKind,
    pub token: Option<&'static CStr>,
    pub optional: bool,
    pub multiple: bool,
}

/// A command's documentation.
pub struct Doc {
    pub summary: &'static CStr,
    pub complexity: &'static CStr,
    /// The RedisBloom version that introduced it (bloomrs's own commands: bloomrs's).
    pub since: &'static CStr,
    pub args: &'static [Arg],
}

/// Registers `handler` as `name` with these command flags; key at position 1, or none.
pub fn create_command(
    ctx: RawCtx,
    name: &CStr,
    handler: Handler,
    flags: &CStr,
    has_key: bool,
) -> Result<(), String> {
    let key = c_int::from(has_key);
    // SAFETY: registers a static entry point under a NUL-terminated name; key at 1 or none.
    let status = unsafe {
        api!(RedisModule_CreateCommand)(
            ctx,
            name.as_ptr(),
            Some(handler),
            flags.as_ptr(),
            key,
            key,
            key,
        )
    };
    if status != raw::REDISMODULE_OK as c_int {
        return Err(format!("cannot register {name:?}"));
    }
    Ok(())
}

/// Whether the server offers module-defined ACL categories.
pub fn acl_available() -> bool {
    // SAFETY: the API pointers are written once by RedisModule_Init, before this runs.
    let pointers = unsafe {
        (
            raw::RedisModule_AddACLCategory,
            raw::RedisModule_SetCommandACLCategories,
        )
    };
    matches!(pointers, (Some(_), Some(_)))
}

/// Adds the ACL categories, where the server offers them. Only during module load.
pub fn add_acl_categories<'a>(
    ctx: RawCtx,
    categories: impl IntoIterator<Item = &'a str>,
) -> Result<(), String> {
    if !acl_available() {
        return Ok(());
    }
    // SAFETY: the API pointer is written once by RedisModule_Init, before this runs.
    let Some(add) = (unsafe { raw::RedisModule_AddACLCategory }) else {
        return Ok(());
    };
    for category in categories {
        let name = CString::new(category).map_err(|e| e.to_string())?;
        // SAFETY: called during module load with the load context and a NUL-terminated name.
        let status = unsafe { add(ctx, name.as_ptr()) };
        if status != raw::REDISMODULE_OK as c_int {
            return Err(format!("cannot add the ACL category {category}"));
        }
    }
    Ok(())
}

/// Puts the registered command `name` in the categories `list` gives (space-separated), where
/// the server offers them; `list` is only asked then.
pub fn set_acl_categories(
    ctx: RawCtx,
    name: &CStr,
    list: impl FnOnce() -> Result<String, String>,
) -> Result<(), String> {
    // SAFETY: the API pointers are written once by RedisModule_Init, before this runs.
    let pointers = unsafe {
        (
            raw::RedisModule_SetCommandACLCategories,
            raw::RedisModule_GetCommand,
        )
    };
    let (Some(set), Some(get_command)) = pointers else {
        return Ok(());
    };
    if !acl_available() {
        return Ok(());
    }
    let text = name.to_string_lossy();
    let list = CString::new(list()?).map_err(|e| e.to_string())?;
    // SAFETY: `name` was just registered by this module during load; `list` is NUL-terminated
    // and outlives the call, and the server copies what it keeps.
    let status = unsafe {
        let command = get_command(ctx, name.as_ptr());
        if command.is_null() {
            return Err(format!("{text} is not registered"));
        }
        set(command, list.as_ptr())
    };
    if status == raw::REDISMODULE_OK as c_int {
        Ok(())
    } else {
        Err(format!("the server refused the ACL categories of {text}"))
    }
}

/// Raw argument arrays (each ends with a zeroed entry), kept alive until Redis has copied them.
fn raw_args(
    args: &[Arg],
    nested: &mut Vec<Vec<raw::RedisModuleCommandArg>>,
) -> Vec<raw::RedisModuleCommandArg> {
    let mut out: Vec<raw::RedisModuleCommandArg> = args
        .iter()
        .map(|a| {
            let (kind, subargs) = match a.kind {
                ArgKind::Key => (
                    raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_KEY,
                    null_mut(),
                ),
                ArgKind::String => (
                    raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_STRING,
                    null_mut(),
                ),
                ArgKind::Integer => (
                    raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_INTEGER,
                    null_mut(),
                ),
                ArgKind::Double => (
                    raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_DOUBLE,
                    null_mut(),
                ),
                ArgKind::Token => (
                    raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_PURE_TOKEN,
                    null_mut(),
                ),
                ArgKind::OneOf(choices) => {
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
                key_spec_index: if matches!(a.kind, ArgKind::Key) {
                    0
                } else {
                    -1
                },
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

/// Registers the documentation of the registered command `name`; a server without the API
/// keeps the bare command.
pub fn set_command_info(ctx: RawCtx, name: &CStr, doc: &Doc) -> Result<(), String> {
    // SAFETY: the API pointers are written once by RedisModule_Init, before this runs.
    let pointers = unsafe { (raw::RedisModule_SetCommandInfo, raw::RedisModule_GetCommand) };
    let (Some(set_info), Some(get_command)) = pointers else {
        return Ok(());
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
