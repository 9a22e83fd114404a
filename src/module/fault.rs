//! Fault injection for the tests of deviation D11 (built only with the `fault-injection`
//! feature): `BF.__FAULT` panics inside a command handler, and `BF.__FAULT MEMORY` makes the
//! next memory-usage callback panic, so the tests can see both guards at work.

use std::sync::atomic::{AtomicBool, Ordering};

use super::errors::CommandResult;
use super::ffi::{Args, Ctx};

static PANIC_IN_CALLBACK: AtomicBool = AtomicBool::new(false);

/// BF.__FAULT [MEMORY]
pub fn inject(ctx: Ctx, args: Args) -> CommandResult {
    if args.len() > 1 {
        PANIC_IN_CALLBACK.store(true, Ordering::Relaxed);
        ctx.reply_ok();
        return Ok(());
    }
    panic!("fault injected by BF.__FAULT");
}

/// Panics once if `BF.__FAULT MEMORY` asked for it.
pub fn maybe_panic_in_callback() {
    if PANIC_IN_CALLBACK.swap(false, Ordering::Relaxed) {
        panic!("fault injected into a type callback");
    }
}
