//! Registers the settings of `state::settings` as Redis module configurations, so `CONFIG GET/SET
//! bf.<name>` read and change them (Redis 7 and Valkey prefix module configurations with the
//! module name) and `redis.conf` may set them. Where the server allows unprefixed names (Redis
//! 8.0 and later), RedisBloom 8's eight names are registered as such, each with its `bf.<name>`
//! as an alias (`settings::UNPREFIXED`); elsewhere those eight are `bf.<name>` only, as before.
//! The callbacks run on Redis's main thread.

use std::ffi::{c_char, c_int, c_longlong, c_void, CStr};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

use redis_module::raw;

use super::raw::{api, log, string_bytes, RawCtx};
use crate::module::state::settings::{
    self, Number, Numeric, Shown, Target, Unprefixed, NUMERIC, UNPREFIXED,
};

/// The current `bf-error-rate` text, owned here (Redis borrows it on CONFIG GET).
static ERROR_RATE_TEXT: AtomicPtr<raw::RedisModuleString> = AtomicPtr::new(null_mut());

fn new_string(text: &[u8]) -> *mut raw::RedisModuleString {
    // SAFETY: a context-less string that this module frees itself.
    unsafe { api!(RedisModule_CreateString)(null_mut(), text.as_ptr().cast(), text.len()) }
}

fn set_error(err: *mut *mut raw::RedisModuleString, text: &str) -> c_int {
    if !err.is_null() {
        // SAFETY: Redis passes a valid out-pointer and frees the string it receives.
        unsafe { *err = new_string(text.as_bytes()) };
    }
    raw::REDISMODULE_ERR as c_int
}

/// # Safety
/// `privdata` is one of the `&'static Numeric` registered below.
unsafe extern "C" fn get_numeric(_name: *const c_char, privdata: *mut c_void) -> c_longlong {
    privdata.cast::<Numeric>().as_ref().map_or(0, Numeric::get)
}

/// # Safety
/// As `get_numeric`; `err` is Redis's out-pointer for an error message.
unsafe extern "C" fn set_numeric(
    _name: *const c_char,
    value: c_longlong,
    privdata: *mut c_void,
    err: *mut *mut raw::RedisModuleString,
) -> c_int {
    let Some(setting) = privdata.cast::<Numeric>().as_ref() else {
        return set_error(err, "unknown setting");
    };
    if let Err(reason) = settings::check_cross(setting, value) {
        return set_error(err, reason);
    }
    setting.set(value);
    raw::REDISMODULE_OK as c_int
}

/// # Safety
/// Called by Redis for a boolean setting registered with its `AtomicBool` as private data.
unsafe extern "C" fn get_flag(_name: *const c_char, privdata: *mut c_void) -> c_int {
    let flag = privdata.cast::<AtomicBool>().cast_const();
    c_int::from(flag.as_ref().is_some_and(|f| f.load(Ordering::Relaxed)))
}

/// # Safety
/// Called by Redis with the new value of a setting registered as for `get_flag`.
unsafe extern "C" fn set_flag(
    _name: *const c_char,
    value: c_int,
    privdata: *mut c_void,
    _err: *mut *mut raw::RedisModuleString,
) -> c_int {
    if let Some(flag) = privdata.cast::<AtomicBool>().cast_const().as_ref() {
        flag.store(value != 0, Ordering::Relaxed);
    }
    raw::REDISMODULE_OK as c_int
}

/// # Safety
/// Called by Redis for `bf-compact`.
unsafe extern "C" fn get_compact(_name: *const c_char, _privdata: *mut c_void) -> c_int {
    c_int::from(settings::bf_compact())
}

/// # Safety
/// Called by Redis with the new value.
unsafe extern "C" fn set_compact(
    _name: *const c_char,
    value: c_int,
    _privdata: *mut c_void,
    _err: *mut *mut raw::RedisModuleString,
) -> c_int {
    settings::BF_COMPACT.store(value != 0, Ordering::Relaxed);
    raw::REDISMODULE_OK as c_int
}

/// The text each integer unprefixed configuration last showed, owned here (Redis copies it).
static SHOWN: [AtomicPtr<raw::RedisModuleString>; 8] = [const { AtomicPtr::new(null_mut()) }; 8];

/// Makes `text` what `slot` holds for Redis to copy (CONFIG GET), freeing the string it held.
fn show(slot: &AtomicPtr<raw::RedisModuleString>, text: &[u8]) -> *mut raw::RedisModuleString {
    let string = new_string(text);
    let old = slot.swap(string, Ordering::Relaxed);
    if !old.is_null() {
        // SAFETY: a string this module created, which Redis copied when it was returned.
        unsafe { api!(RedisModule_FreeString)(null_mut(), old) };
    }
    string
}

/// # Safety
/// `privdata` is the index into `UNPREFIXED` registered below.
unsafe extern "C" fn get_unprefixed(
    _name: *const c_char,
    privdata: *mut c_void,
) -> *mut raw::RedisModuleString {
    let at = privdata as usize;
    match UNPREFIXED.get(at).map(|u| &u.target) {
        Some(Target::Integer { setting, .. }) => match SHOWN.get(at) {
            Some(slot) => show(slot, setting.get().to_string().as_bytes()),
            None => null_mut(),
        },
        _ => ERROR_RATE_TEXT.load(Ordering::Relaxed),
    }
}

/// The number in `value`, read by the server's own parser for the kind of setting `u` is.
fn parse_number(u: &Unprefixed, value: *mut raw::RedisModuleString) -> Option<Number> {
    let ok = raw::REDISMODULE_OK as c_int;
    match u.target {
        Target::ErrorRate => {
            let mut out = 0.0;
            // SAFETY: `value` is the live string Redis passed to the set callback.
            let status = unsafe { api!(RedisModule_StringToDouble)(value, &mut out) };
            (status == ok).then_some(Number::Float(out))
        }
        Target::Integer { .. } => {
            let mut out = 0;
            // SAFETY: as above.
            let status = unsafe { api!(RedisModule_StringToLongLong)(value, &mut out) };
            (status == ok).then_some(Number::Integer(out))
        }
    }
}

/// # Safety
/// As `get_unprefixed`; `err` is Redis's out-pointer for an error message.
unsafe extern "C" fn set_unprefixed(
    _name: *const c_char,
    value: *mut raw::RedisModuleString,
    privdata: *mut c_void,
    err: *mut *mut raw::RedisModuleString,
) -> c_int {
    let Some(u) = UNPREFIXED.get(privdata as usize) else {
        return set_error(err, "unknown setting");
    };
    match settings::set_unprefixed(u, parse_number(u, value)) {
        Ok(shown) => {
            if matches!(u.target, Target::ErrorRate) {
                show(
                    &ERROR_RATE_TEXT,
                    match &shown {
                        Shown::AsGiven => string_bytes(value),
                        Shown::Text(text) => text.as_bytes(),
                    },
                );
            }
            raw::REDISMODULE_OK as c_int
        }
        Err(reason) => set_error(err, &reason),
    }
}

type StringConfig = unsafe extern "C" fn(
    *mut raw::RedisModuleCtx,
    *const c_char,
    *const c_char,
    u32,
    raw::RedisModuleConfigGetStringFunc,
    raw::RedisModuleConfigSetStringFunc,
    raw::RedisModuleConfigApplyFunc,
    *mut c_void,
) -> c_int;

type NumericConfig = unsafe extern "C" fn(
    *mut raw::RedisModuleCtx,
    *const c_char,
    c_longlong,
    u32,
    c_longlong,
    c_longlong,
    raw::RedisModuleConfigGetNumericFunc,
    raw::RedisModuleConfigSetNumericFunc,
    raw::RedisModuleConfigApplyFunc,
    *mut c_void,
) -> c_int;

type BoolConfig = unsafe extern "C" fn(
    *mut raw::RedisModuleCtx,
    *const c_char,
    c_int,
    u32,
    raw::RedisModuleConfigGetBoolFunc,
    raw::RedisModuleConfigSetBoolFunc,
    raw::RedisModuleConfigApplyFunc,
    *mut c_void,
) -> c_int;

/// The current value of an unprefixed configuration as its default text.
fn default_text(u: &Unprefixed) -> String {
    match u.target {
        Target::ErrorRate => format!("{:?}", settings::bf_error_rate()),
        Target::Integer { setting, .. } => setting.get().to_string(),
    }
}

/// Registers RedisBloom 8's eight names without prefix (aliases `bf.<name>`). False, with
/// nothing registered, where the server refuses the first; an error if it refuses a later one.
fn register_unprefixed(ctx: RawCtx, string: StringConfig) -> Result<bool, String> {
    if !super::server::host(ctx).may_have_unprefixed_configs() {
        return Ok(false);
    }
    show(&ERROR_RATE_TEXT, default_text(&UNPREFIXED[0]).as_bytes());
    for (at, u) in UNPREFIXED.iter().enumerate() {
        let default = format!("{}\0", default_text(u));
        // SAFETY: a static name and the setting's index as private data; Redis copies the
        // default text and then calls `set_unprefixed` with it or the configured value.
        let status = unsafe {
            string(
                ctx,
                u.names.as_ptr(),
                default.as_ptr().cast(),
                raw::REDISMODULE_CONFIG_UNPREFIXED,
                Some(get_unprefixed),
                Some(set_unprefixed),
                None,
                at as *mut c_void,
            )
        };
        if status != raw::REDISMODULE_OK as c_int {
            if at == 0 {
                log(
                    c"notice",
                    "the server refused unprefixed configuration names: only bf.<name> is registered",
                );
                return Ok(false);
            }
            return Err(format!("cannot register the setting {:?}", u.name));
        }
    }
    Ok(true)
}

/// Registers every setting with its current value (from the load arguments) as the default,
/// then applies what the configuration file says.
pub fn register(ctx: RawCtx) -> Result<(), String> {
    // SAFETY: the API pointers are set by RedisModule_Init; 7.0 has all three.
    let (numeric, string, boolean, load) = unsafe {
        (
            raw::RedisModule_RegisterNumericConfig,
            raw::RedisModule_RegisterStringConfig,
            raw::RedisModule_RegisterBoolConfig,
            raw::RedisModule_LoadConfigs,
        )
    };
    let (Some(numeric), Some(string), Some(boolean), Some(load)) = (numeric, string, boolean, load)
    else {
        return Ok(());
    };
    let unprefixed = register_unprefixed(ctx, string)?;
    for setting in NUMERIC {
        if unprefixed && settings::has_unprefixed_name(setting) {
            continue;
        }
        let flags = if setting.memory {
            raw::REDISMODULE_CONFIG_MEMORY
        } else {
            raw::REDISMODULE_CONFIG_DEFAULT
        };
        let privdata = (setting as *const Numeric).cast_mut().cast::<c_void>();
        // SAFETY: a static name and a static setting as private data, valid for the module's life.
        let status = unsafe {
            numeric(
                ctx,
                setting.name.as_ptr(),
                setting.get(),
                flags,
                setting.min,
                setting.max,
                Some(get_numeric),
                Some(set_numeric),
                None,
                privdata,
            )
        };
        if status != raw::REDISMODULE_OK as c_int {
            return Err(format!("cannot register the setting {:?}", setting.name));
        }
    }
    if !unprefixed {
        let default = format!("{:?}", settings::bf_error_rate());
        register_text(ctx, string, &ERROR_RATE, &default)?;
    }
    // SAFETY: as above, a static name; Redis then calls `set_compact` with the configured value.
    let status = unsafe {
        boolean(
            ctx,
            settings::BF_COMPACT_NAME.as_ptr(),
            c_int::from(settings::bf_compact()),
            raw::REDISMODULE_CONFIG_DEFAULT,
            Some(get_compact),
            Some(set_compact),
            None,
            null_mut(),
        )
    };
    if status != raw::REDISMODULE_OK as c_int {
        return Err("cannot register the setting bf-compact".into());
    }
    let blocked = (&settings::BF_BLOCKED as *const AtomicBool)
        .cast_mut()
        .cast::<c_void>();
    // SAFETY: a static name and a static flag as private data, valid for the module's life.
    let status = unsafe {
        boolean(
            ctx,
            settings::BF_BLOCKED_NAME.as_ptr(),
            c_int::from(settings::bf_blocked()),
            raw::REDISMODULE_CONFIG_DEFAULT,
            Some(get_flag),
            Some(set_flag),
            None,
            blocked,
        )
    };
    if status != raw::REDISMODULE_OK as c_int {
        return Err("cannot register the setting bf-blocked".into());
    }
    register_valkey_flags(ctx, boolean)?;
    register_valkey_aliases(ctx, numeric)?;
    register_text(ctx, string, &TIGHTENING, "0.5")?;
    register_text(ctx, string, &FP_RATE, "")?;
    LOADING.store(true, Ordering::Relaxed);
    // SAFETY: called once during module load.
    let loaded = unsafe { load(ctx) };
    LOADING.store(false, Ordering::Relaxed);
    if loaded != raw::REDISMODULE_OK as c_int {
        return Err("invalid bloomrs settings in the configuration".into());
    }
    Ok(())
}

/// # Safety
/// Called by Redis for an alias registered with its index in `settings::VALKEY_ALIASES`.
unsafe extern "C" fn get_alias(_name: *const c_char, privdata: *mut c_void) -> c_longlong {
    let at = privdata as usize;
    settings::VALKEY_ALIASES
        .get(at)
        .map_or(0, |(_, setting, _, _)| setting.get())
}

/// # Safety
/// As `get_alias`; `err` is Redis's out-pointer for an error message.
unsafe extern "C" fn set_alias(
    _name: *const c_char,
    value: c_longlong,
    privdata: *mut c_void,
    err: *mut *mut raw::RedisModuleString,
) -> c_int {
    match set_alias_value(privdata as usize, value) {
        Ok(()) => raw::REDISMODULE_OK as c_int,
        Err(reason) => set_error(err, &reason),
    }
}

/// Sets alias `at` of `settings::VALKEY_ALIASES` to `value` (0 changes nothing).
fn set_alias_value(at: usize, value: i64) -> Result<(), String> {
    let Some((_, setting, min, max)) = settings::VALKEY_ALIASES.get(at) else {
        return Err("unknown setting".into());
    };
    if let Some(value) = settings::alias_value(value, *min, *max)? {
        settings::check_cross(setting, value)?;
        setting.set(value);
    }
    Ok(())
}

/// valkey-bloom's names for the settings it shares with bloomrs (`settings::VALKEY_ALIASES`).
fn register_valkey_aliases(ctx: RawCtx, numeric: NumericConfig) -> Result<(), String> {
    for (at, (name, setting, _, max)) in settings::VALKEY_ALIASES.iter().enumerate() {
        let flags = if setting.memory {
            raw::REDISMODULE_CONFIG_MEMORY
        } else {
            raw::REDISMODULE_CONFIG_DEFAULT
        };
        // SAFETY: a static name and the alias's index as private data; Redis then calls
        // `set_alias` with 0 (ignored) or the configured value.
        let status = unsafe {
            numeric(
                ctx,
                name.as_ptr(),
                0,
                flags,
                0,
                *max,
                Some(get_alias),
                Some(set_alias),
                None,
                at as *mut c_void,
            )
        };
        if status != raw::REDISMODULE_OK as c_int {
            return Err(format!("cannot register the setting {name:?}"));
        }
    }
    Ok(())
}

/// `bf-valkey-bloom` and valkey-bloom's `bloom-use-random-seed` and `bloom-defrag-enabled`.
static VALKEY_FLAGS: [(&CStr, &AtomicBool); 3] = [
    (settings::BF_VALKEY_BLOOM_NAME, &settings::BF_VALKEY_BLOOM),
    (
        settings::BLOOM_USE_RANDOM_SEED_NAME,
        &settings::BLOOM_USE_RANDOM_SEED,
    ),
    (
        settings::BLOOM_DEFRAG_ENABLED_NAME,
        &settings::BLOOM_DEFRAG_ENABLED,
    ),
];

/// Registers `VALKEY_FLAGS`.
fn register_valkey_flags(ctx: RawCtx, boolean: BoolConfig) -> Result<(), String> {
    for (name, flag) in VALKEY_FLAGS {
        let privdata = (flag as *const AtomicBool).cast_mut().cast::<c_void>();
        let default = c_int::from(flag.load(Ordering::Relaxed));
        let config = raw::REDISMODULE_CONFIG_DEFAULT;
        // SAFETY: a static name and a static flag as private data, valid for the module's life.
        let status = unsafe {
            boolean(
                ctx,
                name.as_ptr(),
                default,
                config,
                Some(get_flag),
                Some(set_flag),
                None,
                privdata,
            )
        };
        if status != raw::REDISMODULE_OK as c_int {
            return Err(format!("cannot register the setting {name:?}"));
        }
    }
    Ok(())
}

/// A setting Redis keeps as text (it has no floating-point module configurations): the
/// text CONFIG GET shows, owned here (Redis borrows it), and how a new text is taken.
struct TextSetting {
    name: &'static CStr,
    shown: &'static AtomicPtr<raw::RedisModuleString>,
    take: fn(&[u8]) -> Result<(), &'static str>,
}

/// `bf-error-rate` where the server has no unprefixed names.
static ERROR_RATE: TextSetting = TextSetting {
    name: settings::BF_ERROR_RATE_NAME,
    shown: &ERROR_RATE_TEXT,
    take: settings::set_bf_error_rate_text,
};

/// The current `bloom-tightening-ratio` text.
static TIGHTENING_TEXT: AtomicPtr<raw::RedisModuleString> = AtomicPtr::new(null_mut());

/// valkey-bloom's `bloom-tightening-ratio`.
static TIGHTENING: TextSetting = TextSetting {
    name: settings::BLOOM_TIGHTENING_NAME,
    shown: &TIGHTENING_TEXT,
    take: settings::set_bloom_tightening,
};

/// valkey-bloom's `bloom-fp-rate`: the same value and text as `bf-error-rate`.
static FP_RATE: TextSetting = TextSetting {
    name: settings::BLOOM_FP_RATE_NAME,
    shown: &ERROR_RATE_TEXT,
    take: settings::set_bloom_fp_rate,
};

/// Set while the server applies the configuration at load: an empty text is then the
/// load-time default of an alias (`bloom-fp-rate`), which changes nothing.
static LOADING: AtomicBool = AtomicBool::new(false);

/// # Safety
/// `privdata` is one of the `&'static TextSetting` registered below.
unsafe extern "C" fn get_text(
    _name: *const c_char,
    privdata: *mut c_void,
) -> *mut raw::RedisModuleString {
    privdata
        .cast::<TextSetting>()
        .as_ref()
        .map_or(null_mut(), |setting| setting.shown.load(Ordering::Relaxed))
}

/// # Safety
/// As `get_text`, with the new value and Redis's out-pointer for an error message.
unsafe extern "C" fn set_text(
    _name: *const c_char,
    value: *mut raw::RedisModuleString,
    privdata: *mut c_void,
    err: *mut *mut raw::RedisModuleString,
) -> c_int {
    let Some(setting) = privdata.cast::<TextSetting>().as_ref() else {
        return set_error(err, "unknown setting");
    };
    let text = string_bytes(value);
    if text.is_empty() && LOADING.load(Ordering::Relaxed) {
        return raw::REDISMODULE_OK as c_int;
    }
    match take_text(setting, text) {
        Ok(()) => raw::REDISMODULE_OK as c_int,
        Err(reason) => set_error(err, reason),
    }
}

/// Takes `text` as the new value of `setting`, and shows it.
fn take_text(setting: &TextSetting, text: &[u8]) -> Result<(), &'static str> {
    (setting.take)(text)?;
    show(setting.shown, text);
    Ok(())
}

/// Sets one of valkey-bloom's settings by its name (any case) from its text, as `CONFIG SET
/// bf.<name>` would: how valkey-bloom takes its module arguments (`bloom-capacity 1000`).
pub fn set_by_name(name: &[u8], value: &[u8]) -> Result<(), String> {
    let refused = |reason: &str| {
        format!(
            "module argument {}: {reason}",
            String::from_utf8_lossy(name)
        )
    };
    let named = |candidate: &CStr| candidate.to_bytes().eq_ignore_ascii_case(name);
    if let Some(setting) = [&TIGHTENING, &FP_RATE].iter().find(|s| named(s.name)) {
        return take_text(setting, value).map_err(refused);
    }
    if let Some(at) = settings::VALKEY_ALIASES.iter().position(|a| named(a.0)) {
        let number = std::str::from_utf8(value)
            .ok()
            .and_then(|text| text.parse::<i64>().ok())
            .filter(|number| *number != 0)
            .ok_or_else(|| refused("not an integer in the setting's range"))?;
        return set_alias_value(at, number).map_err(|reason| refused(&reason));
    }
    if let Some((_, flag)) = VALKEY_FLAGS.iter().find(|(flag_name, _)| named(flag_name)) {
        let on = if value.eq_ignore_ascii_case(b"yes") {
            true
        } else if value.eq_ignore_ascii_case(b"no") {
            false
        } else {
            return Err(refused("argument must be 'yes' or 'no'"));
        };
        flag.store(on, Ordering::Relaxed);
        return Ok(());
    }
    Err(refused("unknown setting"))
}

/// Registers `setting` with `default` (shown until it is set, unless empty).
fn register_text(
    ctx: RawCtx,
    string: StringConfig,
    setting: &'static TextSetting,
    default: &str,
) -> Result<(), String> {
    if !default.is_empty() {
        show(setting.shown, default.as_bytes());
    }
    let default = format!("{default}\0");
    let privdata = (setting as *const TextSetting).cast_mut().cast::<c_void>();
    // SAFETY: a static name and a static setting as private data; Redis copies the default
    // text and then calls `set_text` with it or the configured value.
    let status = unsafe {
        string(
            ctx,
            setting.name.as_ptr(),
            default.as_ptr().cast(),
            raw::REDISMODULE_CONFIG_DEFAULT,
            Some(get_text),
            Some(set_text),
            None,
            privdata,
        )
    };
    if status != raw::REDISMODULE_OK as c_int {
        return Err(format!("cannot register the setting {:?}", setting.name));
    }
    Ok(())
}
