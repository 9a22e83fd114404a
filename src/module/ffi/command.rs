//! Where command handlers talk to the module API: their arguments, their calling context
//! (replies, keys, propagation, keyspace events, the clock) and the guard that turns a panic
//! into an error reply. The handlers above this room are safe Rust.

use std::ffi::{c_int, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};

use redis_module::raw;

use super::clock::now_ms;
use super::key::Key;
use super::raw::{api, string_bytes, RawCtx, RawString};
use super::server::{Admission, Live};
use crate::module::state::errors::{with_bound, CommandError, CommandResult};
use crate::syntax::Argv;

/// The elements replied so far into the array whose length is postponed, while one is
/// open (its elements are flat: replies of one value each), so that a command that ends in a
/// panic or an error before `set_array_len` can close it (Redis stops the server on an array
/// left without its length); `CLOSED` while none is. Commands run and reply on the main
/// thread only, so a static does: a thread-local in a loaded module costs a call into the
/// loader (`__tls_get_addr`) for every reply.
static POSTPONED: AtomicUsize = AtomicUsize::new(CLOSED);
const CLOSED: usize = usize::MAX;

/// The elements of the open postponed array, if one is open.
fn postponed() -> Option<usize> {
    match POSTPONED.load(Ordering::Relaxed) {
        CLOSED => None,
        n => Some(n),
    }
}

fn set_postponed(open: Option<usize>) {
    POSTPONED.store(
        open.map_or(CLOSED, |n| n.min(CLOSED - 1)),
        Ordering::Relaxed,
    );
}

/// Counts one element replied into the open postponed array, if one is open.
fn element() {
    if let Some(n) = postponed() {
        set_postponed(Some(n.saturating_add(1)));
    }
}

/// The arguments of one command call (index 0 is the command name).
#[derive(Clone, Copy)]
pub struct Args<'a> {
    argv: &'a [RawString],
}

impl<'a> Args<'a> {
    /// The arguments Redis passes to a callback.
    ///
    /// # Safety
    /// `argv` holds `argc` live argument strings for `'a`.
    pub(super) unsafe fn from_raw(argv: *mut RawString, argc: c_int) -> Args<'a> {
        let argv: &[RawString] = match (NonNull::new(argv), usize::try_from(argc)) {
            (Some(ptr), Ok(len)) => std::slice::from_raw_parts(ptr.as_ptr(), len),
            _ => &[],
        };
        Args { argv }
    }

    pub fn len(&self) -> usize {
        self.argv.len()
    }

    /// Refuses a call of other than `count` arguments (the command name counts) with the
    /// server's wrong-arity reply.
    pub fn exactly(&self, count: usize) -> Result<(), CommandError> {
        if self.argv.len() == count {
            Ok(())
        } else {
            Err(CommandError::Arity)
        }
    }

    /// Refuses a call of fewer than `count` arguments with the server's wrong-arity reply.
    pub fn at_least(&self, count: usize) -> Result<(), CommandError> {
        if self.argv.len() >= count {
            Ok(())
        } else {
            Err(CommandError::Arity)
        }
    }

    pub fn raw(&self, index: usize) -> Option<RawString> {
        self.argv.get(index).copied()
    }

    /// The argument strings `from..to` (fewer past the end).
    pub fn raw_range(&self, from: usize, to: usize) -> &'a [RawString] {
        let to = to.min(self.argv.len());
        self.argv.get(from.min(to)..to).unwrap_or_default()
    }

    pub fn bytes(&self, index: usize) -> &'a [u8] {
        self.argv.get(index).map_or(&[], |s| string_bytes(*s))
    }

    pub fn items(&self, from: usize) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.argv
            .get(from..)
            .unwrap_or(&[])
            .iter()
            .map(|s| string_bytes(*s))
    }
}

/// The command syntax reads arguments with Redis's own number parsers, the reference the pure
/// parsers of `syntax` imitate.
impl Argv for Args<'_> {
    fn len(&self) -> usize {
        self.argv.len()
    }

    fn bytes(&self, i: usize) -> &[u8] {
        Args::bytes(self, i)
    }

    /// Redis's strict integer parser (the one RedisBloom uses).
    fn int(&self, i: usize) -> Option<i64> {
        let s = self.raw(i)?;
        let mut value = 0i64;
        // SAFETY: `s` is a live argument string.
        let status = unsafe { api!(RedisModule_StringToLongLong)(s, &mut value) };
        (status == raw::REDISMODULE_OK as c_int).then_some(value)
    }

    /// Redis's strict double parser (refuses NaN; accepts `inf`).
    fn double(&self, i: usize) -> Option<f64> {
        let s = self.raw(i)?;
        let mut value = 0f64;
        // SAFETY: `s` is a live argument string.
        let status = unsafe { api!(RedisModule_StringToDouble)(s, &mut value) };
        (status == raw::REDISMODULE_OK as c_int).then_some(value)
    }
}

/// The calling context of a command: replies, keys and propagation.
#[derive(Clone, Copy)]
pub struct Ctx {
    raw: RawCtx,
}

impl Ctx {
    pub(super) fn from_raw(raw: RawCtx) -> Ctx {
        Ctx { raw }
    }

    pub(super) fn raw(&self) -> RawCtx {
        self.raw
    }

    /// Whether the client may be blocked: not inside MULTI, a script or a function, nor where
    /// the server denies blocking.
    pub fn may_block(&self) -> bool {
        // SAFETY: `raw` is the live context of this call.
        let flags = unsafe { api!(RedisModule_GetContextFlags)(self.raw) };
        let denied = raw::REDISMODULE_CTX_FLAGS_MULTI
            | raw::REDISMODULE_CTX_FLAGS_LUA
            | raw::REDISMODULE_CTX_FLAGS_DENY_BLOCKING;
        flags & denied as c_int == 0 && !self.is_replayed()
    }

    /// The memory budget of this command (deviation D13).
    pub fn admission(&self) -> Admission {
        Admission::new(Live::command(self.raw))
    }

    /// Whether this command replays a decision made elsewhere: it comes from the primary
    /// (on a replica) or from the AOF being loaded. Such a command never reads the clock.
    pub fn is_replayed(&self) -> bool {
        // SAFETY: `raw` is the live context of this call.
        let flags = unsafe { api!(RedisModule_GetContextFlags)(self.raw) };
        let replayed = raw::REDISMODULE_CTX_FLAGS_REPLICATED | raw::REDISMODULE_CTX_FLAGS_LOADING;
        flags & replayed as c_int != 0
    }

    /// Whether this server is a replica now (a primary can become one between two turns of
    /// work it started).
    pub fn is_replica(&self) -> bool {
        // SAFETY: `raw` is the live context of this call.
        let flags = unsafe { api!(RedisModule_GetContextFlags)(self.raw) };
        flags & raw::REDISMODULE_CTX_FLAGS_SLAVE as c_int != 0
    }

    pub fn is_resp3(&self) -> bool {
        // SAFETY: `raw` is the live context of this call.
        let flags = unsafe { api!(RedisModule_GetContextFlags)(self.raw) };
        flags & raw::REDISMODULE_CTX_FLAGS_RESP3 as c_int != 0
    }

    pub fn reply_int(&self, value: i64) {
        element();
        // SAFETY: for this and the other replies: `raw` is the live context of this call.
        unsafe { api!(RedisModule_ReplyWithLongLong)(self.raw, value) };
    }

    /// `:1`/`:0` in RESP2, `#t`/`#f` in RESP3.
    pub fn reply_bool(&self, value: bool) {
        element();
        unsafe { api!(RedisModule_ReplyWithBool)(self.raw, c_int::from(value)) };
    }

    pub fn reply_ok(&self) {
        self.reply_simple(c"OK");
    }

    pub fn reply_simple(&self, text: &CStr) {
        element();
        unsafe { api!(RedisModule_ReplyWithSimpleString)(self.raw, text.as_ptr()) };
    }

    pub fn reply_bulk(&self, bytes: &[u8]) {
        element();
        unsafe {
            api!(RedisModule_ReplyWithStringBuffer)(self.raw, bytes.as_ptr().cast(), bytes.len())
        };
    }

    /// A bulk string of the shortest form in RESP2, `,` in RESP3.
    pub fn reply_double(&self, value: f64) {
        element();
        unsafe { api!(RedisModule_ReplyWithDouble)(self.raw, value) };
    }

    /// `$-1` in RESP2, `_` in RESP3.
    pub fn reply_null(&self) {
        element();
        unsafe { api!(RedisModule_ReplyWithNull)(self.raw) };
    }

    pub fn reply_array(&self, len: usize) {
        debug_assert!(postponed().is_none(), "an array inside a postponed array");
        element();
        unsafe { api!(RedisModule_ReplyWithArray)(self.raw, len as _) };
    }

    /// An array whose length is given later with `set_array_len`, of flat elements.
    pub fn reply_array_postponed(&self) {
        debug_assert!(postponed().is_none(), "a postponed array inside another");
        element();
        set_postponed(Some(0));
        unsafe { api!(RedisModule_ReplyWithArray)(self.raw, raw::REDISMODULE_POSTPONED_LEN as _) };
    }

    pub fn set_array_len(&self, len: usize) {
        set_postponed(None);
        unsafe { api!(RedisModule_ReplySetArrayLength)(self.raw, len as _) };
    }

    /// A map of `len` pairs in RESP3, a flat array of `2 * len` in RESP2.
    pub fn reply_map(&self, len: usize) {
        debug_assert!(postponed().is_none(), "a map inside a postponed array");
        element();
        unsafe { api!(RedisModule_ReplyWithMap)(self.raw, len as _) };
    }

    /// A refusal: the text as given, with the limit that was met after RedisBloom's words when
    /// the refusal is for size (`errors::with_bound`).
    pub fn reply_refusal(&self, text: &'static CStr) {
        match with_bound(text, self.admission().bound()) {
            Some(detailed) => self.reply_error(&detailed),
            None => self.reply_error(text),
        }
    }

    /// An error sent exactly as given (RedisBloom's texts sometimes lack the `ERR ` prefix).
    pub fn reply_error(&self, text: &CStr) {
        element();
        unsafe { api!(RedisModule_ReplyWithError)(self.raw, text.as_ptr()) };
    }

    pub fn reply_wrong_arity(&self) {
        element();
        unsafe { api!(RedisModule_WrongArity)(self.raw) };
    }

    /// Propagates the command as received to the AOF and replicas.
    pub fn replicate_verbatim(&self) {
        unsafe { api!(RedisModule_ReplicateVerbatim)(self.raw) };
    }

    /// Propagates `command key args...` (all binary-safe buffers) to the AOF and replicas.
    pub fn replicate(&self, command: &CStr, key: RawString, args: &[&[u8]]) {
        // SAFETY: builds Redis strings and passes them with the `v` format, which takes an
        // array of `RedisModuleString*` and its length and keeps its own reference to each;
        // without automatic memory the strings are ours to free afterwards.
        unsafe {
            let mut argv: Vec<RawString> = Vec::with_capacity(args.len() + 1);
            argv.push(key);
            for arg in args {
                argv.push(api!(RedisModule_CreateString)(
                    self.raw,
                    arg.as_ptr().cast(),
                    arg.len(),
                ));
            }
            api!(RedisModule_Replicate)(
                self.raw,
                command.as_ptr(),
                c"v".as_ptr(),
                argv.as_ptr(),
                argv.len(),
            );
            for created in argv.into_iter().skip(1) {
                api!(RedisModule_FreeString)(self.raw, created);
            }
        }
    }

    /// Propagates `command key args...` where the arguments are strings Redis already holds
    /// (the command's own), so nothing is created or allocated.
    pub fn replicate_strings(&self, command: &CStr, key: RawString, args: &[RawString]) {
        // SAFETY: `s` takes one `RedisModuleString*` and `v` an array of them with its
        // length; both are live arguments of this call, and Redis keeps its own references.
        unsafe {
            api!(RedisModule_Replicate)(
                self.raw,
                command.as_ptr(),
                c"sv".as_ptr(),
                key,
                args.as_ptr(),
                args.len(),
            );
        }
    }

    /// Emits a keyspace event of the generic class.
    pub fn notify(&self, event: &CStr, key: RawString) {
        unsafe {
            api!(RedisModule_NotifyKeyspaceEvent)(
                self.raw,
                raw::NotifyEvent::GENERIC.bits(),
                event.as_ptr(),
                key,
            )
        };
    }

    /// The server's clock, in Unix milliseconds.
    pub fn now_ms(&self) -> u64 {
        now_ms()
    }

    /// Eight random bytes from the server's generator.
    pub fn random_u64(&self) -> u64 {
        let mut bytes = [0u8; 8];
        // SAFETY: the server fills exactly `bytes.len()` bytes of the buffer.
        unsafe { api!(RedisModule_GetRandomBytes)(bytes.as_mut_ptr(), bytes.len()) };
        u64::from_le_bytes(bytes)
    }

    /// Runs `f` with a Redis string holding `bytes` (a key name kept past its command),
    /// freed afterwards.
    pub fn with_string<R>(&self, bytes: &[u8], f: impl FnOnce(RawString) -> R) -> R {
        // SAFETY: the string is created here and freed after `f`; whatever keeps it meanwhile
        // (an open key, a replicated command) takes its own reference.
        let s =
            unsafe { api!(RedisModule_CreateString)(self.raw, bytes.as_ptr().cast(), bytes.len()) };
        let out = f(s);
        // SAFETY: created above, freed once.
        unsafe { api!(RedisModule_FreeString)(self.raw, s) };
        out
    }

    pub fn open_key(&self, name: RawString, write: bool) -> Key {
        Key::open(self.raw, name, write)
    }
}

/// Runs a command handler, turning a panic into an error reply instead of a dead server.
pub fn run_command(
    ctx: RawCtx,
    argv: *mut RawString,
    argc: c_int,
    handler: fn(Ctx, Args<'_>) -> CommandResult,
) -> c_int {
    // SAFETY: Redis passes `argc` valid argument pointers, live for the call.
    let args = unsafe { Args::from_raw(argv, argc) };
    let ctx = Ctx { raw: ctx };
    set_postponed(None);
    match catch_unwind(AssertUnwindSafe(|| handler(ctx, args))) {
        Ok(Ok(())) => {}
        Ok(Err(CommandError::Arity)) => ctx.reply_wrong_arity(),
        Ok(Err(CommandError::Reply(text))) => ctx.reply_refusal(text),
        Err(_) => ctx.reply_error(c"ERR bloomrs internal error (see the server log)"),
    }
    // An array the handler left open (it panicked, or erred, within it) ends with the error
    // just replied.
    if let Some(elements) = postponed() {
        ctx.set_array_len(elements);
    }
    raw::REDISMODULE_OK as c_int
}
