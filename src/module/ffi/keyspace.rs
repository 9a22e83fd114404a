//! Keyspace events the module follows: the generic ones (`rename_to`, `move_to`, ...), which
//! the server fires on the primary and again on each replica as it applies the same command,
//! so what a handler does follows the replication stream without being propagated itself.

use std::ffi::{c_char, c_int, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use redis_module::raw;

use super::command::Ctx;
use super::raw::{api, log, RawCtx, RawString};

/// What a generic keyspace event calls: the event's name and the key it is about.
pub type KeyEventHandler = fn(Ctx, &CStr, RawString);

static HANDLER: OnceLock<KeyEventHandler> = OnceLock::new();

/// Calls `handler` on every generic keyspace event (at most one handler, set at load).
pub fn follow_generic_events(ctx: RawCtx, handler: KeyEventHandler) -> Result<(), String> {
    if HANDLER.set(handler).is_err() {
        return Err("bloomrs: keyspace events are followed already".into());
    }
    // SAFETY: called during module load with the load context; the callback is static.
    let status = unsafe {
        api!(RedisModule_SubscribeToKeyspaceEvents)(
            ctx,
            raw::REDISMODULE_NOTIFY_GENERIC,
            Some(on_event),
        )
    };
    if status != raw::REDISMODULE_OK as c_int {
        return Err("bloomrs: cannot follow keyspace events".into());
    }
    Ok(())
}

/// # Safety
/// Called by Redis on the main thread with a live context, the event's name and its key.
unsafe extern "C" fn on_event(
    ctx: RawCtx,
    _type: c_int,
    event: *const c_char,
    key: RawString,
) -> c_int {
    if event.is_null() || key.is_null() {
        return raw::REDISMODULE_OK as c_int;
    }
    let event = CStr::from_ptr(event);
    if let Some(handler) = HANDLER.get() {
        if catch_unwind(AssertUnwindSafe(|| handler(Ctx::from_raw(ctx), event, key))).is_err() {
            log(c"warning", "bloomrs: a keyspace event handler panicked");
        }
    }
    raw::REDISMODULE_OK as c_int
}
