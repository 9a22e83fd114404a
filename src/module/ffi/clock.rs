//! The server's clock, as the windowed filters read it. In the `fault-injection` build an
//! offset set with `BF.__FAULT CLOCK <ms>` is added, so the tests move time without sleeping;
//! the shipped module reads the clock as it is.

use super::raw::api;

/// Unix time in milliseconds.
pub fn now_ms() -> u64 {
    // SAFETY: a plain clock read, valid once the module is loaded.
    let now = unsafe { api!(RedisModule_Milliseconds)() };
    #[cfg(feature = "fault-injection")]
    let now = now.saturating_add(crate::module::state::fault::clock_offset_ms());
    u64::try_from(now).unwrap_or(0)
}
