//! The bottom of the FFI room: how the module API is reached at all (the `api!` macro over the
//! function pointers Redis fills in at load), the raw handle types, the bytes of a Redis string,
//! the server log, and the panic guards. It imports nothing of the module, so every other file
//! of the layer may build on it.

use std::ffi::CStr;
use std::panic::{catch_unwind, AssertUnwindSafe};

use redis_module::raw;

pub type RawCtx = *mut raw::RedisModuleCtx;
pub type RawString = *mut raw::RedisModuleString;

/// Calls a module API function pointer that Redis filled in at load.
///
/// Every pointer used here exists since Redis 6.0, and `RedisModule_Init` succeeded before any
/// command or callback can run, so the `Option` is always `Some`.
macro_rules! api {
    ($name:ident) => {
        match redis_module::raw::$name {
            Some(f) => f,
            None => unreachable!(concat!(stringify!($name), " is missing")),
        }
    };
}
pub(crate) use api;

/// Bytes of a Redis string, borrowed for as long as the command runs.
pub fn string_bytes<'a>(s: RawString) -> &'a [u8] {
    let mut len = 0usize;
    // SAFETY: `s` is a live argument or key name of the current call; Redis returns a pointer
    // to its `len` bytes, valid until the string is freed, which outlives this command.
    unsafe {
        let ptr = api!(RedisModule_StringPtrLen)(s, &mut len);
        if ptr.is_null() {
            return &[];
        }
        std::slice::from_raw_parts(ptr.cast::<u8>(), len)
    }
}

/// Writes a line to the Redis log (safe before and after a context exists).
pub fn log(level: &CStr, message: &str) {
    let text = std::ffi::CString::new(message.replace('\0', " ")).unwrap_or_default();
    // SAFETY: `%s` with a NUL-terminated string; a null context logs as the module.
    unsafe {
        if let Some(log) = raw::RedisModule_Log {
            log(
                std::ptr::null_mut(),
                level.as_ptr(),
                c"%s".as_ptr(),
                text.as_ptr(),
            );
        }
    }
}

/// Installs a panic hook that sends the message to the Redis log (stderr may be closed).
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        log(c"warning", &format!("bloomrs: internal error: {info}"));
    }));
}

/// Runs a type callback, returning `fallback` if it panics.
pub fn guard<T>(fallback: T, callback: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(callback)).unwrap_or(fallback)
}
