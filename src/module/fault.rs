//! Fault injection for the tests (built only with the `fault-injection` feature):
//! `BF.__FAULT` panics inside a command handler, and `BF.__FAULT MEMORY` makes the next
//! memory-usage callback panic, so the tests can see both guards of deviation D11 at work;
//! `BF.__FAULT CLOCK <ms>` moves this server's clock by an offset, so the tests of windowed
//! filters move time without sleeping.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use super::errors::CommandResult;
use super::ffi::{Args, Ctx};
use crate::syntax::Argv;

static PANIC_IN_CALLBACK: AtomicBool = AtomicBool::new(false);
static CLOCK_OFFSET_MS: AtomicI64 = AtomicI64::new(0);

/// BF.__FAULT [MEMORY | CLOCK offset-ms]
pub fn inject(ctx: Ctx, args: Args) -> CommandResult {
    if args.len() == 3 && args.bytes(1).eq_ignore_ascii_case(b"CLOCK") {
        let offset = args.int(2).ok_or(c"ERR bad clock offset")?;
        CLOCK_OFFSET_MS.store(offset, Ordering::Relaxed);
        ctx.reply_ok();
        return Ok(());
    }
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

/// What `BF.__FAULT CLOCK` added to the clock, in milliseconds.
pub fn clock_offset_ms() -> i64 {
    CLOCK_OFFSET_MS.load(Ordering::Relaxed)
}
