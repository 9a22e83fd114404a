//! Registers the settings of `state::settings` as Redis module configurations, so `CONFIG GET/SET
//! bf.<name>` read and change them (Redis 7 prefixes module configurations with the module
//! name) and `redis.conf` may set them. The callbacks run on Redis's main thread.

use std::ffi::{c_char, c_int, c_longlong, c_void};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

use redis_module::raw;

use super::raw::{api, string_bytes, RawCtx};
use crate::module::state::settings::{self, Numeric, NUMERIC};

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
/// Called by Redis for `bf-error-rate`.
unsafe extern "C" fn get_error_rate(
    _name: *const c_char,
    _privdata: *mut c_void,
) -> *mut raw::RedisModuleString {
    ERROR_RATE_TEXT.load(Ordering::Relaxed)
}

/// # Safety
/// Called by Redis with the new value and its out-pointer for an error message.
unsafe extern "C" fn set_error_rate(
    _name: *const c_char,
    value: *mut raw::RedisModuleString,
    _privdata: *mut c_void,
    err: *mut *mut raw::RedisModuleString,
) -> c_int {
    let text = string_bytes(value);
    match settings::parse_error_rate(text) {
        Ok(rate) => {
            settings::set_bf_error_rate(rate);
            let old = ERROR_RATE_TEXT.swap(new_string(text), Ordering::Relaxed);
            if !old.is_null() {
                api!(RedisModule_FreeString)(null_mut(), old);
            }
            raw::REDISMODULE_OK as c_int
        }
        Err(reason) => set_error(err, reason),
    }
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
    for setting in NUMERIC {
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
    let default = format!("{:?}", settings::bf_error_rate());
    ERROR_RATE_TEXT.store(new_string(default.as_bytes()), Ordering::Relaxed);
    let default = format!("{default}\0");
    // SAFETY: as above; the default text is copied by Redis, which then calls `set_error_rate`.
    let status = unsafe {
        string(
            ctx,
            settings::BF_ERROR_RATE_NAME.as_ptr(),
            default.as_ptr().cast(),
            raw::REDISMODULE_CONFIG_DEFAULT,
            Some(get_error_rate),
            Some(set_error_rate),
            None,
            null_mut(),
        )
    };
    if status != raw::REDISMODULE_OK as c_int {
        return Err("cannot register the setting bf-error-rate".into());
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
    // SAFETY: called once during module load.
    if unsafe { load(ctx) } != raw::REDISMODULE_OK as c_int {
        return Err("invalid bloomrs settings in the configuration".into());
    }
    Ok(())
}
