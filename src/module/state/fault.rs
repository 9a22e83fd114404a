//! What fault injection (the `fault-injection` build only) has asked for: a panic in the next
//! memory-usage callback, an offset added to this server's clock, and a freeze's propagation
//! in smaller steps, held after some of them. The `BF.__FAULT` command sets them; the type
//! callbacks, the clock and the static kind's freeze read them.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

static PANIC_IN_CALLBACK: AtomicBool = AtomicBool::new(false);
static CLOCK_OFFSET_MS: AtomicI64 = AtomicI64::new(0);
static FREEZE_STEP_BYTES: AtomicU64 = AtomicU64::new(0);
static FREEZE_HOLD_AFTER: AtomicI64 = AtomicI64::new(-1);

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

/// Makes a freeze propagate its table in steps of `bytes` (0: the usual size), and hold after
/// `hold_after` steps (negative: never) until this is called again.
pub fn set_freeze_steps(bytes: u64, hold_after: i64) {
    FREEZE_STEP_BYTES.store(bytes, Ordering::Relaxed);
    FREEZE_HOLD_AFTER.store(hold_after, Ordering::Relaxed);
}

/// The step size `BF.__FAULT FREEZE` asked for, if any.
pub fn freeze_step_bytes() -> Option<u64> {
    Some(FREEZE_STEP_BYTES.load(Ordering::Relaxed)).filter(|&bytes| bytes > 0)
}

/// Whether a freeze that propagated `steps` of its table holds there.
pub fn freeze_held(steps: u64) -> bool {
    u64::try_from(FREEZE_HOLD_AFTER.load(Ordering::Relaxed)).is_ok_and(|after| steps >= after)
}
