//! What fault injection (the `fault-injection` build only) has asked for: a panic in the next
//! memory-usage callback, and an offset added to this server's clock. The `BF.__FAULT` command
//! sets them; the type callbacks and the clock read them.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

static PANIC_IN_CALLBACK: AtomicBool = AtomicBool::new(false);
static CLOCK_OFFSET_MS: AtomicI64 = AtomicI64::new(0);

/// Makes the next memory-usage callback panic.
pub fn arm_panic_in_callback() {
    PANIC_IN_CALLBACK.store(true, Ordering::Relaxed);
}

/// Panics once if `BF.__FAULT MEMORY` asked for it.
pub fn maybe_panic_in_callback() {
    if PANIC_IN_CALLBACK.swap(false, Ordering::Relaxed) {
        panic!("fault injected into a type callback");
    }
}

/// Moves this server's clock by `offset_ms`.
pub fn set_clock_offset_ms(offset_ms: i64) {
    CLOCK_OFFSET_MS.store(offset_ms, Ordering::Relaxed);
}

/// What `BF.__FAULT CLOCK` added to the clock, in milliseconds.
pub fn clock_offset_ms() -> i64 {
    CLOCK_OFFSET_MS.load(Ordering::Relaxed)
}
