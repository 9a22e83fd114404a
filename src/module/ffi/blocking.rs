//! Work that must not run on the main thread (`BF.FREEZE`): the client is blocked, a thread
//! owns the work's inputs, and when it is done the main thread takes it back in bounded
//! steps, one per event-loop turn (a module timer: swap the result in, propagate it), before
//! the client is answered in its reply callback. Other clients are served between steps, and
//! no step runs while the server holds writes back (a pause, a failover, a shutdown waiting for
//! its replicas): a step changes a key and propagates it, which a pause forbids.

use std::ffi::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::thread::JoinHandle;

use redis_module::raw;

use super::command::{Args, Ctx};
use super::raw::{api, log, RawCtx, RawString};
use super::server::replica_traffic_paused;

/// How often the main thread looks whether the thread is done (milliseconds).
const POLL_MS: i64 = 2;

/// Work done off the main thread, then completed on it.
pub trait Background: Send + 'static {
    /// Runs on a thread of its own; touches nothing the server owns.
    fn work(&mut self);
    /// Runs on the main thread once the work is done, once per event-loop turn, until it
    /// returns true. `ctx` is a timer's: in the blocked client's database, what it propagates
    /// sent at the end of the turn. It should do a bounded amount of work.
    fn step(&mut self, ctx: Ctx) -> bool;
    /// Runs on the main thread with the blocked client's context and arguments, to reply (not
    /// at all when the client went away meanwhile).
    fn complete(self: Box<Self>, ctx: Ctx, args: Args);
}

/// What the main thread hands the reply callback: taken by it, dropped by the free callback
/// whatever happened (a client that disconnected never gets its reply).
type Handoff = Option<Box<dyn Background>>;

/// The blocked client and where its work is.
struct Driver {
    client: *mut raw::RedisModuleBlockedClient,
    phase: Phase,
}

enum Phase {
    Working(JoinHandle<Box<dyn Background>>),
    Stepping(Box<dyn Background>),
}

/// Blocks the calling client and runs `job` on a new thread, then its steps on the main
/// thread; `Err` when the client cannot be blocked or no thread started (the caller then
/// answers itself).
pub fn run_in_background(ctx: Ctx, job: Box<dyn Background>) -> Result<(), &'static str> {
    // SAFETY: `ctx` is the live context of a command that may block (the caller checked);
    // the callbacks are static.
    let bc = unsafe {
        api!(RedisModule_BlockClient)(ctx.raw(), Some(reply), None, Some(free_handoff), 0)
    };
    if bc.is_null() {
        return Err("the client cannot be blocked");
    }
    let spawned = std::thread::Builder::new()
        .name("bf-freeze".into())
        .spawn(move || {
            let mut job = job;
            if catch_unwind(AssertUnwindSafe(|| job.work())).is_err() {
                log(c"warning", "bloomrs: a background job panicked");
            }
            job
        });
    let Ok(handle) = spawned else {
        // SAFETY: the client was blocked above and nothing will unblock it.
        unsafe { api!(RedisModule_AbortBlock)(bc) };
        return Err("no thread could be started");
    };
    let driver = Box::new(Driver {
        client: bc,
        phase: Phase::Working(handle),
    });
    arm(ctx.raw(), driver, POLL_MS);
    Ok(())
}

/// Calls `tick` with the driver after `period` milliseconds (0: the next event-loop turn).
fn arm(ctx: RawCtx, driver: Box<Driver>, period: i64) {
    // SAFETY: `ctx` is a live context on the main thread; the timer hands the pointer back to
    // `tick` exactly once (timers are never stopped here).
    unsafe {
        api!(RedisModule_CreateTimer)(ctx, period, Some(tick), Box::into_raw(driver).cast());
    }
}

/// # Safety
/// Called by Redis on the main thread with a timer's context and the pointer `arm` gave it.
unsafe extern "C" fn tick(ctx: RawCtx, data: *mut c_void) {
    let driver = Box::from_raw(data.cast::<Driver>());
    let outcome = catch_unwind(AssertUnwindSafe(|| advance(ctx, driver)));
    if outcome.is_err() {
        // The driver is lost with its client, which stays blocked: never expected, logged.
        log(c"warning", "bloomrs: a background job's step panicked");
    }
}

/// One turn: wait for the thread, or take one step; unblock the client after the last.
fn advance(ctx: RawCtx, mut driver: Box<Driver>) {
    let mut job = match driver.phase {
        Phase::Working(handle) if !handle.is_finished() => {
            driver.phase = Phase::Working(handle);
            return arm(ctx, driver, POLL_MS);
        }
        Phase::Working(handle) => match handle.join() {
            Ok(job) => job,
            Err(_) => return unblock(driver.client, None),
        },
        Phase::Stepping(job) => job,
    };
    if replica_traffic_paused() {
        driver.phase = Phase::Stepping(job);
        return arm(ctx, driver, POLL_MS);
    }
    if job.step(Ctx::from_raw(ctx)) {
        unblock(driver.client, Some(job));
    } else {
        driver.phase = Phase::Stepping(job);
        arm(ctx, driver, 0);
    }
}

fn unblock(client: *mut raw::RedisModuleBlockedClient, job: Handoff) {
    let handoff: Box<Handoff> = Box::new(job);
    // SAFETY: `client` was returned by RedisModule_BlockClient and is unblocked exactly once;
    // Redis hands the pointer back to `reply` and `free_handoff`.
    unsafe { api!(RedisModule_UnblockClient)(client, Box::into_raw(handoff).cast()) };
}

/// # Safety
/// Called by Redis on the main thread with the blocked client's context and arguments.
unsafe extern "C" fn reply(ctx: RawCtx, argv: *mut RawString, argc: c_int) -> c_int {
    let handoff = api!(RedisModule_GetBlockedClientPrivateData)(ctx).cast::<Handoff>();
    let job = handoff.as_mut().and_then(Option::take);
    let context = Ctx::from_raw(ctx);
    let outcome = catch_unwind(AssertUnwindSafe(|| match job {
        Some(job) => job.complete(context, Args::from_raw(argv, argc)),
        None => context.reply_error(c"ERR bloomrs internal error (see the server log)"),
    }));
    if outcome.is_err() {
        context.reply_error(c"ERR bloomrs internal error (see the server log)");
    }
    raw::REDISMODULE_OK as c_int
}

/// # Safety
/// Called by Redis with the pointer `unblock` passed to RedisModule_UnblockClient.
unsafe extern "C" fn free_handoff(_ctx: RawCtx, handoff: *mut c_void) {
    if !handoff.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| {
            drop(Box::from_raw(handoff.cast::<Handoff>()))
        }));
    }
}
