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
    /// Who is calling, for memory admission.
    pub fn caller(&self) -> super::ffi_server::Caller {
        // SAFETY: `raw` is the live context of this call.
        let flags = unsafe { api!(RedisModule_GetContextFlags)(self.raw) };
        super::ffi_server::Caller::from_flags(flags)
    }

    /// Whether this command replays a decision made elsewhere: it comes from the primary
    /// (on a replica) or from the AOF being loaded. Such a command never reads the clock.
    pub fn is_replayed(&self) -> bool {
        // SAFETY: `raw` is the live context of this call.
        let flags = unsafe { api!(RedisModule_GetContextFlags)(self.raw) };
        let replayed = raw::REDISMODULE_CTX_FLAGS_REPLICATED | raw::REDISMODULE_CTX_FLAGS_LOADING;
        flags & replayed as c_int != 0
    }

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
        super::clock::now_ms()
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

/// What an open key holds, seen from one module type (or one family of them).
pub enum Slot<'k, T: ?Sized> {
    Empty,
    Ours(&'k mut T),
    WrongType,
}

/// What a key holds, before it is cast to the type it belongs to.
enum Stored {
    Empty,
    Ours(*mut c_void),
    Other,
}

/// One module type of a family whose values are all read through the same `V` (a trait
/// object): how to see a stored value as a `V`, and how to measure it for the totals.
pub struct Member<V: ?Sized + 'static> {
    pub ty: &'static redis_module::native_types::RedisType,
    /// Casts a value pointer of `ty` to the `V` it implements (no dereference).
    pub view: fn(*mut c_void) -> *mut V,
    pub measure: fn(*const c_void) -> Measure,
    pub totals: fn() -> &'static Totals,
}

impl<V: ?Sized> Member<V> {
    /// The member for module type `ty`, whose values are all `T`; `view` is the unsizing cast
    /// from `T` to `V` (`|p| p.cast::<T>() as *mut V`).
    pub const fn new<T: Measured>(
        ty: &'static redis_module::native_types::RedisType,
        view: fn(*mut c_void) -> *mut V,
    ) -> Self {
        Member {
            ty,
            view,
            measure: measure_raw::<T>,
            totals: T::totals,
        }
    }
}

impl Key {
    /// The key's value if it is of `ty`, whose values are all `T`.
    pub fn slot<T: Measured>(&mut self, ty: &redis_module::native_types::RedisType) -> Slot<'_, T> {
        match self.value_of(|key_type| key_type == *ty.raw_type.borrow()) {
            Stored::Empty => Slot::Empty,
            Stored::Other => Slot::WrongType,
            Stored::Ours(value) => {
                self.track(value, measure_raw::<T>, T::totals());
                // SAFETY: a value of `ty` was stored by `set` as a `Box<T>` of the `T` that
                // belongs to this type, so the cast is to its real type; it lives while the
                // key is open.
                unsafe { value.cast::<T>().as_mut() }.map_or(Slot::WrongType, Slot::Ours)
            }
        }
    }

    /// The key's value if it is of one of the `family`'s types, seen as their common `V`.
    pub fn slot_in<'f, V: ?Sized + 'static>(
        &mut self,
        family: impl IntoIterator<Item = &'f Member<V>>,
    ) -> Slot<'_, V> {
        let mut found = None;
        let stored = self.value_of(|key_type| {
            found = family
                .into_iter()
                .find(|member| key_type == *member.ty.raw_type.borrow());
            found.is_some()
        });
        match (stored, found) {
            (Stored::Ours(value), Some(member)) => {
                self.track(value, member.measure, (member.totals)());
                // SAFETY: the value is of `member.ty`, whose values are all the `T` that
                // `member.view` casts from (both fixed together by `Member::new`); it lives
                // while the key is open.
                unsafe { (member.view)(value).as_mut() }.map_or(Slot::WrongType, Slot::Ours)
            }
            (Stored::Empty, _) => Slot::Empty,
            _ => Slot::WrongType,
        }
    }

    /// The key's value pointer if its module type passes `ours`.
    fn value_of(&self, ours: impl FnOnce(*mut raw::RedisModuleType) -> bool) -> Stored {
        // SAFETY: `ptr` is an open key (or null for a missing key opened read-only, which the
        // API treats as empty).
        unsafe {
            if self.ptr.is_null()
                || api!(RedisModule_KeyType)(self.ptr) == raw::REDISMODULE_KEYTYPE_EMPTY as c_int
            {
                return Stored::Empty;
            }
            if !ours(api!(RedisModule_ModuleTypeGetType)(self.ptr)) {
                return Stored::Other;
            }
            let value = api!(RedisModule_ModuleTypeGetValue)(self.ptr);
            if value.is_null() {
                Stored::Other
            } else {
                Stored::Ours(value)
            }
        }
    }

    /// Stores a new value of `ty` in this writable key, replacing (and freeing) the value it
    /// held, if any.
    pub fn set<T: Measured>(
        &mut self,
        ty: &redis_module::native_types::RedisType,
        value: T,
    ) -> &mut T {
        self.settle();
        let boxed = Box::into_raw(Box::new(value));
        if self.write {
            self.tracking = Some(Tracking {
                before: Measure::default(),
                measure: measure_raw::<T>,
                totals: T::totals(),
            });
        }
        // SAFETY: the key is open for writing; Redis owns the box from here and hands it back
        // to the type's free callback, which rebuilds the `Box<T>`.
        unsafe {
            api!(RedisModule_ModuleTypeSetValue)(self.ptr, *ty.raw_type.borrow(), boxed.cast());
            &mut *boxed
        }
    }

    /// Makes the (writable, non-empty) key expire at Unix time `at_ms`.
    /// Sets the key to expire at `at_ms`, clamped to what the server stores (an i64);
    /// returns the time applied, which is what a replica must be told.
    pub fn set_expire_at(&mut self, at_ms: u64) -> i64 {
        let at = i64::try_from(at_ms).unwrap_or(i64::MAX);
        // SAFETY: `ptr` is an open key; the call fails harmlessly on an empty key.
        unsafe { api!(RedisModule_SetAbsExpire)(self.ptr, at) };
        at
    }

    /// Remembers the measure of the value a write command is about to change.
    fn track(
        &mut self,
        value: *mut c_void,
        measure: fn(*const c_void) -> Measure,
        totals: &'static Totals,
    ) {
        if self.write && self.tracking.is_none() {
            self.tracking = Some(Tracking {
                before: measure(value),
                measure,
                totals,
            });
        }
    }

    /// Adds what the command changed in the key's value to the totals, and stops tracking it
    /// (the value is about to be replaced, or the key closed).
    fn settle(&mut self) {
        let Some(tracking) = self.tracking.take() else {
            return;
        };
        // SAFETY: `ptr` is open; the value, if any, is the one `tracking` was made for.
        let value = unsafe { api!(RedisModule_ModuleTypeGetValue)(self.ptr) };
        tracking
            .totals
            .change(tracking.before, (tracking.measure)(value));
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        if self.ptr.is_null() {
            return;
        }
        self.settle();
        // SAFETY: `ptr` was opened by `open_key` and is still open; it is closed exactly once.
        unsafe { api!(RedisModule_CloseKey)(self.ptr) };
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
