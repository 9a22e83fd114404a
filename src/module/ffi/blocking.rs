//! Work that must not run on the main thread (`BF.FREEZE`): the client is blocked, a thread
//! owns the work's inputs, and when it is done the main thread completes it with the client's
//! context (reply, swap the result in, propagate). Completion runs in the blocked client's
//! reply callback: on the main thread, with its propagation wrapped like a command's.

use std::ffi::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

use redis_module::raw;

use super::command::{Args, Ctx};
use super::raw::{api, log, RawCtx, RawString};

/// Work done off the main thread, then completed on it.
pub trait Background: Send + 'static {
    /// Runs on a thread of its own; touches nothing the server owns.
    fn work(&mut self);
    /// Runs on the main thread with the blocked client's context and its arguments.
    fn complete(self: Box<Self>, ctx: Ctx, args: Args);
}

/// What the thread hands back: taken by the reply callback, dropped by the free callback
/// whatever happened (a client that disconnected never gets its reply).
type Handoff = Option<Box<dyn Background>>;

/// The blocked client, sent to the thread that unblocks it.
struct BlockedClient(*mut raw::RedisModuleBlockedClient);

// SAFETY: the module API allows RedisModule_UnblockClient from any thread, once.
unsafe impl Send for BlockedClient {}

/// Blocks the calling client and runs `job` on a new thread; `Err(job)` when the client
/// cannot be blocked or no thread started (the caller then answers itself).
pub fn run_in_background(ctx: Ctx, job: Box<dyn Background>) -> Result<(), &'static str> {
    // SAFETY: `ctx` is the live context of a command that may block (the caller checked);
    // the callbacks are static.
    let bc = unsafe {
        api!(RedisModule_BlockClient)(ctx.raw(), Some(reply), None, Some(free_handoff), 0)
    };
    if bc.is_null() {
        return Err("the client cannot be blocked");
    }
    let client = BlockedClient(bc);
    let spawned = std::thread::Builder::new()
        .name("bf-freeze".into())
        .spawn(move || {
            let client = client;
            let mut job = job;
            if catch_unwind(AssertUnwindSafe(|| job.work())).is_err() {
                log(c"warning", "bloomrs: a background job panicked");
            }
            let handoff: Box<Handoff> = Box::new(Some(job));
            // SAFETY: `client.0` was returned by RedisModule_BlockClient and is unblocked
            // exactly once; Redis hands the pointer back to `reply` and `free_handoff`.
            unsafe { api!(RedisModule_UnblockClient)(client.0, Box::into_raw(handoff).cast()) };
        });
    if spawned.is_err() {
        // SAFETY: the client was blocked above and no thread will unblock it.
        unsafe { api!(RedisModule_AbortBlock)(bc) };
        return Err("no thread could be started");
    }
    Ok(())
}

/// # Safety
/// Called by Redis on the main thread with the blocked client's context and arguments.
unsafe extern "C" fn reply(ctx: RawCtx, argv: *mut RawString, argc: c_int) -> c_int {
    let handoff = api!(RedisModule_GetBlockedClientPrivateData)(ctx).cast::<Handoff>();
    let job = handoff.as_mut().and_then(Option::take);
    let context = Ctx::from_raw(ctx);
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        if let Some(job) = job {
            job.complete(context, Args::from_raw(argv, argc));
        }
    }));
    if outcome.is_err() {
        context.reply_error(c"ERR bloomrs internal error (see the server log)");
    }
    raw::REDISMODULE_OK as c_int
}

/// # Safety
/// Called by Redis with the pointer the thread passed to RedisModule_UnblockClient.
unsafe extern "C" fn free_handoff(_ctx: RawCtx, handoff: *mut c_void) {
    if !handoff.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| {
            drop(Box::from_raw(handoff.cast::<Handoff>()))
        }));
    }
}
