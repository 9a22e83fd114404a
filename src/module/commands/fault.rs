//! Fault injection for the tests (built only with the `fault-injection` feature):
//! `BF.__FAULT` panics inside a command handler, and `BF.__FAULT MEMORY` makes the next
//! memory-usage callback panic, so the tests can see both guards of deviation D11 at work;
//! `BF.__FAULT CLOCK <ms>` moves this server's clock by an offset, so the tests of windowed
//! filters move time without sleeping. `BF.__FAULT FREEZE <step-bytes> <hold-after>` makes a
//! freeze propagate in steps of that size and hold after that many (-1: go on), so the tests
//! can join a replica, save or rewrite the AOF mid-freeze. `BF.__FAULT ARRAY <n>` opens an
//! array of postponed length, replies `n` integers into it and panics, as a batch command
//! that panicked midway would.

use crate::module::ffi::{Args, Ctx};
use crate::module::state::errors::CommandResult;
use crate::module::state::fault;
use crate::syntax::Argv;

/// BF.__FAULT [MEMORY | CLOCK offset-ms | FREEZE step-bytes hold-after | ARRAY n]
pub fn inject(ctx: Ctx, args: Args) -> CommandResult {
    if args.len() == 3 && args.bytes(1).eq_ignore_ascii_case(b"ARRAY") {
        // At most a thousand: a test's array, not a loop a client sizes.
        let n = args
            .int(2)
            .filter(|n| (0..=1000).contains(n))
            .ok_or(c"ERR bad element count")?;
        ctx.reply_array_postponed();
        for i in 0..n {
            ctx.reply_int(i);
        }
        panic!("fault injected by BF.__FAULT ARRAY");
    }
    if args.len() == 4 && args.bytes(1).eq_ignore_ascii_case(b"FREEZE") {
        let bytes = args.int(2).and_then(|b| u64::try_from(b).ok());
        let hold = args.int(3);
        let (Some(bytes), Some(hold)) = (bytes, hold) else {
            return Err(c"ERR bad freeze steps".into());
        };
        fault::set_freeze_steps(bytes, hold);
        ctx.reply_ok();
        return Ok(());
    }
    if args.len() == 3 && args.bytes(1).eq_ignore_ascii_case(b"CLOCK") {
        let offset = args.int(2).ok_or(c"ERR bad clock offset")?;
        fault::set_clock_offset_ms(offset);
        ctx.reply_ok();
        return Ok(());
    }
    if args.len() > 1 {
        fault::arm_panic_in_callback();
        ctx.reply_ok();
        return Ok(());
    }
    panic!("fault injected by BF.__FAULT");
}
