//! Where commands talk to the Redis module API: arguments, replies, keys, propagation,
//! notifications, logging and the panic guard (`ffi_io` holds what the type callbacks use).
//! The command handlers above these two files are safe Rust.

use std::ffi::{c_int, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;

use redis_module::raw;

use super::errors::{CommandError, CommandResult};
use super::stats::{Measure, Measured, Totals};
use crate::syntax::Argv;

pub type RawCtx = *mut raw::RedisModuleCtx;
pub type RawString = *mut raw::RedisModuleString;

/// Calls a module API function pointer that Redis filled in at load.
///
/// Every pointer used here exists since Redis 6.0, and `RedisModule_Init` succeeded before any
/// command or callback can run, so the `Option` is always `Some`.
macro_rules! api {
    ($name:ident) => {
        match raw::$name {
            Some(f) => f,
            None => unreachable!(concat!(stringify!($name), " is missing")),
        }
    };
}
pub(crate) use api;

/// Bytes of a Redis string, borrowed for as long as the command runs.
pub fn string_bytes<'a>(s: RawString) -> &'a [u8] {
    let mut len = 0usize;
    // SAFETY: `s` is a live argument or key name of the current call; Redis returns a pointer
    // to its `len` bytes, valid until the string is freed, which outlives this command.
    unsafe {
        let ptr = api!(RedisModule_StringPtrLen)(s, &mut len);
        if ptr.is_null() {
            return &[];
        }
        std::slice::from_raw_parts(ptr.cast::<u8>(), len)
    }
}

/// The arguments of one command call (index 0 is the command name).
#[derive(Clone, Copy)]
pub struct Args<'a> {
    argv: &'a [RawString],
}

impl<'a> Args<'a> {
    pub fn len(&self) -> usize {
        self.argv.len()
    }

    pub fn raw(&self, index: usize) -> Option<RawString> {
        self.argv.get(index).copied()
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
    pub fn is_resp3(&self) -> bool {
        // SAFETY: `raw` is the live context of this call.
        let flags = unsafe { api!(RedisModule_GetContextFlags)(self.raw) };
        flags & raw::REDISMODULE_CTX_FLAGS_RESP3 as c_int != 0
    }

    pub fn reply_int(&self, value: i64) {
        // SAFETY: for this and the other replies: `raw` is the live context of this call.
        unsafe { api!(RedisModule_ReplyWithLongLong)(self.raw, value) };
    }

    /// `:1`/`:0` in RESP2, `#t`/`#f` in RESP3.
    pub fn reply_bool(&self, value: bool) {
        unsafe { api!(RedisModule_ReplyWithBool)(self.raw, c_int::from(value)) };
    }

    pub fn reply_ok(&self) {
        self.reply_simple(c"OK");
    }

    pub fn reply_simple(&self, text: &CStr) {
        unsafe { api!(RedisModule_ReplyWithSimpleString)(self.raw, text.as_ptr()) };
    }

    pub fn reply_bulk(&self, bytes: &[u8]) {
        unsafe {
            api!(RedisModule_ReplyWithStringBuffer)(self.raw, bytes.as_ptr().cast(), bytes.len())
        };
    }

    /// `$-1` in RESP2, `_` in RESP3.
    pub fn reply_null(&self) {
        unsafe { api!(RedisModule_ReplyWithNull)(self.raw) };
    }

    pub fn reply_array(&self, len: usize) {
        unsafe { api!(RedisModule_ReplyWithArray)(self.raw, len as _) };
    }

    /// An array whose length is given later with `set_array_len`.
    pub fn reply_array_postponed(&self) {
        unsafe { api!(RedisModule_ReplyWithArray)(self.raw, raw::REDISMODULE_POSTPONED_LEN as _) };
    }

    pub fn set_array_len(&self, len: usize) {
        unsafe { api!(RedisModule_ReplySetArrayLength)(self.raw, len as _) };
    }

    /// A map of `len` pairs in RESP3, a flat array of `2 * len` in RESP2.
    pub fn reply_map(&self, len: usize) {
        unsafe { api!(RedisModule_ReplyWithMap)(self.raw, len as _) };
    }

    /// An error sent exactly as given (RedisBloom's texts sometimes lack the `ERR ` prefix).
    pub fn reply_error(&self, text: &CStr) {
        unsafe { api!(RedisModule_ReplyWithError)(self.raw, text.as_ptr()) };
    }

    pub fn reply_wrong_arity(&self) {
        unsafe { api!(RedisModule_WrongArity)(self.raw) };
    }

    /// Propagates the command as received to the AOF and replicas.
    pub fn replicate_verbatim(&self) {
        unsafe { api!(RedisModule_ReplicateVerbatim)(self.raw) };
    }

    /// Propagates `command key args...` (all binary-safe buffers) to the AOF and replicas.
    pub fn replicate(&self, command: &CStr, key: RawString, args: &[&[u8]]) {
        // SAFETY: builds Redis strings owned by this context (freed with it) and passes them
        // with the `v` format, which takes an array of `RedisModuleString*` and its length.
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

    pub fn open_key(&self, name: RawString, write: bool) -> Key {
        let mode = if write {
            raw::REDISMODULE_READ | raw::REDISMODULE_WRITE
        } else {
            raw::REDISMODULE_READ
        };
        // SAFETY: `name` is a live argument; the key is closed when `Key` drops, before the
        // command returns.
        let ptr = unsafe { api!(RedisModule_OpenKey)(self.raw, name, mode as c_int) };
        Key {
            ptr: ptr.cast(),
            write,
            tracking: None,
        }
    }
}

/// An open key; closed on drop. A key opened for writing remembers the measure of the value
/// it first handed out (or stored), and on drop adds what the command changed to the totals.
pub struct Key {
    ptr: *mut raw::RedisModuleKey,
    write: bool,
    tracking: Option<Tracking>,
}

/// The measure of a value before a write command touched it.
struct Tracking {
    before: Measure,
    measure: fn(*const c_void) -> Measure,
    totals: &'static Totals,
}

/// The measure of a value stored as a `T`.
fn measure_raw<T: Measured>(value: *const c_void) -> Measure {
    // SAFETY: only called with the value pointer of a key whose type stores `T`.
    unsafe { value.cast::<T>().as_ref() }.map_or(Measure::default(), Measured::measure)
}

/// What an open key holds, seen from one module type.
pub enum Slot<'k, T> {
    Empty,
    Ours(&'k mut T),
    WrongType,
}

impl Key {
    /// The key's value if it is of `ty`, whose values are all `T`.
    pub fn slot<T: Measured>(&mut self, ty: &redis_module::native_types::RedisType) -> Slot<'_, T> {
        // SAFETY: `ptr` is an open key (or null for a missing key opened read-only, which the
        // API treats as empty). A value of our type was stored by `set` as a `Box<T>` of the
        // `T` that belongs to this type, so the cast is to its real type.
        unsafe {
            if self.ptr.is_null()
                || api!(RedisModule_KeyType)(self.ptr) == raw::REDISMODULE_KEYTYPE_EMPTY as c_int
            {
                return Slot::Empty;
            }
            if api!(RedisModule_ModuleTypeGetType)(self.ptr) != *ty.raw_type.borrow() {
                return Slot::WrongType;
            }
            match NonNull::new(api!(RedisModule_ModuleTypeGetValue)(self.ptr).cast::<T>()) {
                Some(mut value) => {
                    self.track::<T>(value.as_ref().measure());
                    Slot::Ours(value.as_mut())
                }
                None => Slot::WrongType,
            }
        }
    }

    /// Stores a new value of `ty` in this (empty, writable) key.
    pub fn set<T: Measured>(
        &mut self,
        ty: &redis_module::native_types::RedisType,
        value: T,
    ) -> &mut T {
        self.track::<T>(Measure::default());
        let boxed = Box::into_raw(Box::new(value));
        // SAFETY: the key is open for writing; Redis owns the box from here and hands it back
        // to the type's free callback, which rebuilds the `Box<T>`.
        unsafe {
            api!(RedisModule_ModuleTypeSetValue)(self.ptr, *ty.raw_type.borrow(), boxed.cast());
            &mut *boxed
        }
    }

    fn track<T: Measured>(&mut self, before: Measure) {
        if self.write && self.tracking.is_none() {
            self.tracking = Some(Tracking {
                before,
                measure: measure_raw::<T>,
                totals: T::totals(),
            });
        }
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        if self.ptr.is_null() {
            return;
        }
        // SAFETY: `ptr` was opened by `open_key` and is still open; it is closed exactly once.
        unsafe {
            if let Some(tracking) = self.tracking.take() {
                let value = api!(RedisModule_ModuleTypeGetValue)(self.ptr);
                tracking
                    .totals
                    .change(tracking.before, (tracking.measure)(value));
            }
            api!(RedisModule_CloseKey)(self.ptr);
        }
    }
}

/// Writes a line to the Redis log (safe before and after a context exists).
pub fn log(level: &CStr, message: &str) {
    let text = std::ffi::CString::new(message.replace('\0', " ")).unwrap_or_default();
    // SAFETY: `%s` with a NUL-terminated string; a null context logs as the module.
    unsafe {
        if let Some(log) = raw::RedisModule_Log {
            log(
                std::ptr::null_mut(),
                level.as_ptr(),
                c"%s".as_ptr(),
                text.as_ptr(),
            );
        }
    }
}

/// Installs a panic hook that sends the message to the Redis log (stderr may be closed).
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        log(c"warning", &format!("bloomrs: internal error: {info}"));
    }));
}

/// Runs a command handler, turning a panic into an error reply instead of a dead server.
pub fn run_command(
    ctx: RawCtx,
    argv: *mut RawString,
    argc: c_int,
    handler: fn(Ctx, Args<'_>) -> CommandResult,
) -> c_int {
    let argv: &[RawString] = match (NonNull::new(argv), usize::try_from(argc)) {
        // SAFETY: Redis passes `argc` valid argument pointers.
        (Some(ptr), Ok(len)) => unsafe { std::slice::from_raw_parts(ptr.as_ptr(), len) },
        _ => &[],
    };
    let ctx = Ctx { raw: ctx };
    match catch_unwind(AssertUnwindSafe(|| handler(ctx, Args { argv }))) {
        Ok(Ok(())) => {}
        Ok(Err(CommandError::Arity)) => ctx.reply_wrong_arity(),
        Ok(Err(CommandError::Reply(text))) => ctx.reply_error(text),
        Err(_) => ctx.reply_error(c"ERR bloomrs internal error (see the server log)"),
    }
    raw::REDISMODULE_OK as c_int
}

/// Runs a type callback, returning `fallback` if it panics.
pub fn guard<T>(fallback: T, callback: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(callback)).unwrap_or(fallback)
}
