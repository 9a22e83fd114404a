//! ACL categories, as RedisBloom 8 gives them: a category per command family (`bloom` for
//! `BF.*`, `cuckoo` for `CF.*`) plus `read` or `write` (from the command's flags) and `fast`
//! for the few commands RedisBloom 8 lists as fast. The server derives nothing more for module
//! commands (no implicit `@fast`/`@slow` from the flags), so these are all a command's
//! categories. Only servers whose module API has module-defined categories (Valkey 8, Redis 7.4
//! and later) get them; on Redis 7.0 the API is absent and nothing is set.
//!
//! The family comes from the command name's prefix, here and nowhere else, so a new `BF.*` or
//! `CF.*` command lands in its family's category without being listed.

use std::ffi::{c_int, CStr, CString};

use redis_module::raw;

use super::ffi::RawCtx;

/// Command-name prefix → ACL category of that family.
const FAMILIES: &[(&str, &str)] = &[("bf.", "bloom"), ("cf.", "cuckoo")];

/// The commands RedisBloom 8 puts in `@fast` (whatever their command flags say).
const FAST: &[&str] = &["bf.reserve", "bf.info", "bf.card", "cf.reserve", "cf.info"];

/// The family category of a command, from its name's prefix.
pub fn family(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    FAMILIES
        .iter()
        .find(|(prefix, _)| lower.starts_with(prefix))
        .map(|(_, category)| *category)
}

/// The ACL categories of a command with these command flags (`"write deny-oom"`,
/// `"readonly fast"`, ...): `write` or `read`, `fast` where RedisBloom 8 gives it, and the
/// family.
pub fn categories(name: &str, flags: &str) -> Result<String, String> {
    let family = family(name).ok_or_else(|| format!("no ACL category for {name}"))?;
    let flags: Vec<&str> = flags.split_whitespace().collect();
    let mut out = Vec::new();
    if flags.contains(&"write") {
        out.push("write");
    } else if flags.contains(&"readonly") {
        out.push("read");
    }
    if FAST.contains(&name.to_ascii_lowercase().as_str()) {
        out.push("fast");
    }
    out.push(family);
    Ok(out.join(" "))
}

/// Whether the server offers module-defined ACL categories.
pub fn available() -> bool {
    // SAFETY: the API pointers are written once by RedisModule_Init, before this runs.
    let pointers = unsafe {
        (
            raw::RedisModule_AddACLCategory,
            raw::RedisModule_SetCommandACLCategories,
        )
    };
    matches!(pointers, (Some(_), Some(_)))
}

/// Registers the family categories, where the server offers them. Only during module load.
pub fn register_families(ctx: RawCtx) -> Result<(), String> {
    if !available() {
        return Ok(());
    }
    // SAFETY: the API pointer is written once by RedisModule_Init, before this runs.
    let Some(add) = (unsafe { raw::RedisModule_AddACLCategory }) else {
        return Ok(());
    };
    for (_, category) in FAMILIES {
        let name = CString::new(*category).map_err(|e| e.to_string())?;
        // SAFETY: called during module load with the load context and a NUL-terminated name.
        let status = unsafe { add(ctx, name.as_ptr()) };
        if status != raw::REDISMODULE_OK as c_int {
            return Err(format!("cannot add the ACL category {category}"));
        }
    }
    Ok(())
}

/// Puts the registered command `name` in its categories, where the server offers them.
pub fn assign(ctx: RawCtx, name: &CStr, flags: &CStr) -> Result<(), String> {
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
    if !available() {
        return Ok(());
    }
    let text = name.to_string_lossy();
    let list = categories(&text, &flags.to_string_lossy())?;
    let list = CString::new(list).map_err(|e| e.to_string())?;
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

#[cfg(test)]
mod tests {
    use super::*;

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
            ("bf.reserve", "write deny-oom", "write fast bloom"),
            ("bf.add", "write deny-oom", "write bloom"),
            ("bf.exists", "readonly fast", "read bloom"),
            ("bf.info", "readonly fast", "read fast bloom"),
            ("bf.card", "readonly fast", "read fast bloom"),
            ("bf.scandump", "readonly", "read bloom"),
            ("bf.loadchunk", "write deny-oom", "write bloom"),
            ("cf.del", "write fast", "write cuckoo"),
            ("cf.reserve", "write deny-oom", "write fast cuckoo"),
            ("cf.info", "readonly fast", "read fast cuckoo"),
            ("cf.compact", "readonly fast", "read cuckoo"),
        ];
        for (name, flags, expected) in cases {
            assert_eq!(categories(name, flags).as_deref(), Ok(expected), "{name}");
        }
        assert!(categories("topk.add", "write").is_err());
    }

    #[test]
    fn every_command_has_a_family() {
        for (name, _, flags) in super::super::commands() {
            let name = name.to_string_lossy();
            assert!(
                categories(&name, &flags.to_string_lossy()).is_ok(),
                "{name}"
            );
        }
    }
}
