//! The module API as the data-type callbacks use it: RDB primitives, AOF rewrite, digests,
//! active defragmentation, and the INFO section.

use std::ffi::{c_char, c_int, c_void, CStr};

use redis_module::raw;

use super::raw::{api, guard, RawCtx, RawString};
use crate::module::state::stats;
use crate::rdb::{LoadError, RdbRead, RdbWrite};

/// Reads RDB primitives from Redis, reporting I/O errors instead of aborting.
pub struct IoReader {
    pub io: *mut raw::RedisModuleIO,
}

impl IoReader {
    fn check<T>(&self, value: T) -> Result<T, LoadError> {
        // SAFETY: `io` is the live I/O handle of this load callback.
        if unsafe { api!(RedisModule_IsIOError)(self.io) } != 0 {
            Err(LoadError::Io)
        } else {
            Ok(value)
        }
    }
}

impl RdbRead for IoReader {
    fn read_unsigned(&mut self) -> Result<u64, LoadError> {
        // SAFETY: `io` is live; with HANDLE_IO_ERRORS a failed read sets the error flag.
        let value = unsafe { api!(RedisModule_LoadUnsigned)(self.io) };
        self.check(value)
    }

    fn read_double(&mut self) -> Result<f64, LoadError> {
        // SAFETY: as above.
        let value = unsafe { api!(RedisModule_LoadDouble)(self.io) };
        self.check(value)
    }

    fn read_buffer(&mut self) -> Result<Vec<u8>, LoadError> {
        let mut len = 0usize;
        // SAFETY: Redis returns a buffer of `len` bytes that we own and free here.
        unsafe {
            let ptr = api!(RedisModule_LoadStringBuffer)(self.io, &mut len);
            self.check(())?;
            if ptr.is_null() {
                return Err(LoadError::Io);
            }
            let bytes = std::slice::from_raw_parts(ptr.cast::<u8>(), len).to_vec();
            api!(RedisModule_Free)(ptr.cast());
            Ok(bytes)
        }
    }
}

/// Writes RDB primitives to Redis.
pub struct IoWriter {
    pub io: *mut raw::RedisModuleIO,
}

impl RdbWrite for IoWriter {
    fn write_unsigned(&mut self, value: u64) {
        // SAFETY: `io` is the live I/O handle of this save callback.
        unsafe { api!(RedisModule_SaveUnsigned)(self.io, value) };
    }
    fn write_double(&mut self, value: f64) {
        // SAFETY: as above.
        unsafe { api!(RedisModule_SaveDouble)(self.io, value) };
    }
    fn write_buffer(&mut self, bytes: &[u8]) {
        // SAFETY: as above; Redis copies the bytes.
        unsafe { api!(RedisModule_SaveStringBuffer)(self.io, bytes.as_ptr().cast(), bytes.len()) };
    }
}

/// Logs a load failure on the RDB I/O handle.
pub fn log_load_error(io: *mut raw::RedisModuleIO, what: &str, error: &LoadError) {
    let text = std::ffi::CString::new(format!("bloomrs: cannot load {what}: {error:?}"))
        .unwrap_or_default();
    // SAFETY: `%s` with a NUL-terminated string on the live I/O handle.
    unsafe { api!(RedisModule_LogIOError)(io, c"warning".as_ptr(), c"%s".as_ptr(), text.as_ptr()) };
}

/// Bytes of one `BF.LOADCHUNK` or `CF.LOADCHUNK` the AOF rewrite emits where the kind's chunks
/// can be cut that small (arrays of chains, blocked, counting and cuckoo filters and frozen
/// static sets: any run; a compact filter: whole segments; a builder: whole hashes; windows:
/// their generations' own). The AOF rewrite is also what Valkey 9's atomic slot migration
/// streams to the target, whose main thread runs each command whole: a 16 MiB chunk held its
/// other clients for tens of milliseconds (page faults of the copy, the argument's allocation
/// and free), and a compact filter's for 240-320 ms (each segment is checked, about 15 ms of
/// CPU per MiB). A quarter MiB takes well under a millisecond to copy, or about 4 ms of
/// segments to check, for some 50 bytes and the key's name more in the file.
pub const AOF_PIECE: u64 = 1 << 18;

/// Emits `command key <iterator> <bytes>` into an AOF rewrite.
pub fn emit_loadchunk(
    io: *mut raw::RedisModuleIO,
    command: &CStr,
    key: RawString,
    iter: i64,
    bytes: &[u8],
) {
    // SAFETY: `io` is the live AOF handle; format "slb" = Redis string, long long, buffer+len.
    unsafe {
        api!(RedisModule_EmitAOF)(
            io,
            command.as_ptr(),
            c"slb".as_ptr(),
            key,
            iter as std::ffi::c_longlong,
            bytes.as_ptr().cast::<c_char>(),
            bytes.len(),
        );
    }
}

/// Emits `command key <bytes>` into an AOF rewrite.
pub fn emit_blob(io: *mut raw::RedisModuleIO, command: &CStr, key: RawString, bytes: &[u8]) {
    // SAFETY: `io` is the live AOF handle; format "sb" = Redis string, buffer+len.
    unsafe {
        api!(RedisModule_EmitAOF)(
            io,
            command.as_ptr(),
            c"sb".as_ptr(),
            key,
            bytes.as_ptr().cast::<c_char>(),
            bytes.len(),
        );
    }
}

/// The AOF rewrite's handle, as a type's `aof_rewrite` callback receives it.
pub type AofIo = raw::RedisModuleIO;

/// Emits `command key <word> [<iterator>] <bytes>` into an AOF rewrite.
pub fn emit_effect(
    io: *mut AofIo,
    command: &CStr,
    key: RawString,
    word: &CStr,
    iter: Option<i64>,
    bytes: &[u8],
) {
    let data = bytes.as_ptr().cast::<c_char>();
    // SAFETY: `io` is the live AOF handle; format "scb" = Redis string, C string, buffer+len,
    // "sclb" with a long long before the buffer.
    unsafe {
        match iter {
            Some(iter) => api!(RedisModule_EmitAOF)(
                io,
                command.as_ptr(),
                c"sclb".as_ptr(),
                key,
                word.as_ptr(),
                iter as std::ffi::c_longlong,
                data,
                bytes.len(),
            ),
            None => api!(RedisModule_EmitAOF)(
                io,
                command.as_ptr(),
                c"scb".as_ptr(),
                key,
                word.as_ptr(),
                data,
                bytes.len(),
            ),
        }
    }
}

/// Feeds a digest (DEBUG DIGEST-VALUE).
pub struct Digest {
    pub md: *mut raw::RedisModuleDigest,
}

impl Digest {
    pub fn add_bytes(&mut self, bytes: &[u8]) {
        // SAFETY: `md` is the live digest handle of this callback.
        unsafe {
            api!(RedisModule_DigestAddStringBuffer)(
                self.md,
                bytes.as_ptr().cast_mut().cast(),
                bytes.len(),
            )
        };
    }
    pub fn add_int(&mut self, value: u64) {
        // SAFETY: as above.
        unsafe { api!(RedisModule_DigestAddLongLong)(self.md, value as i64) };
    }
    pub fn end_sequence(&mut self) {
        // SAFETY: as above.
        unsafe { api!(RedisModule_DigestEndSequence)(self.md) };
    }
}

/// The value pointer Redis hands to type callbacks, as the `T` it was stored as.
///
/// # Safety
/// `value` must be a pointer stored by `Key::set::<T>` (or returned by a load/copy callback
/// of the same type) and still owned by Redis.
pub unsafe fn value_ref<'a, T>(value: *const c_void) -> Option<&'a T> {
    value.cast::<T>().as_ref()
}

/// The `INFO bf` section: bloomrs's version, then the totals of `state::stats`.
///
/// # Safety
/// Called by Redis with a live info context.
unsafe extern "C" fn info_section(ctx: *mut raw::RedisModuleInfoCtx, _for_crash_report: c_int) {
    guard((), || {
        raw::add_info_section(ctx, None);
        raw::add_info_field_str(ctx, "bloomrs_version", stats::BLOOMRS_VERSION);
        for (name, value) in stats::info_fields() {
            raw::add_info_field_long_long(ctx, name, value);
        }
        raw::add_info_field_str(ctx, "static_freeze", &stats::freezes_now().1);
    })
}

/// Registers the `INFO bf` section (it also shows in `INFO modules` and `INFO everything`).
pub fn register_info(ctx: RawCtx) {
    // SAFETY: called once during module load; the callback is a static function.
    unsafe { api!(RedisModule_RegisterInfoFunc)(ctx, Some(info_section)) };
}

/// Moves a value's heap blocks during active defragmentation.
pub struct Defrag {
    ctx: *mut raw::RedisModuleDefragCtx,
}

impl Defrag {
    /// # Safety
    /// `ctx` is the live defrag context of a type's defrag callback.
    pub unsafe fn new(ctx: *mut raw::RedisModuleDefragCtx) -> Self {
        Defrag { ctx }
    }

    /// Moves one allocation; returns its new address, or the old one if it stayed.
    ///
    /// # Safety
    /// `ptr` is a live allocation made through Redis's allocator (the module's global
    /// allocator), and nothing else refers to it once the caller adopts the result.
    unsafe fn moved(&self, ptr: *mut c_void) -> *mut c_void {
        let new = api!(RedisModule_DefragAlloc)(self.ctx, ptr);
        if new.is_null() {
            ptr
        } else {
            new
        }
    }

    /// Moves the boxed value Redis holds a pointer to.
    pub fn value(&self, value: *mut *mut c_void) {
        // SAFETY: Redis passes the address of its pointer to our boxed value, which the
        // global allocator made; Redis adopts the new address we write back.
        unsafe {
            if let Some(slot) = value.as_mut() {
                if !slot.is_null() {
                    *slot = self.moved(*slot);
                }
            }
        }
    }

    /// Moves a vector's buffer, keeping its length and capacity.
    pub fn vec<T>(&self, vec: &mut Vec<T>) {
        if vec.capacity() == 0 || std::mem::size_of::<T>() == 0 {
            return;
        }
        let mut old = std::mem::ManuallyDrop::new(std::mem::take(vec));
        let (len, capacity) = (old.len(), old.capacity());
        // SAFETY: the buffer came from the global allocator (Redis's); jemalloc keeps the
        // alignment of the size class, so the moved block fits `T`; the old vector is
        // forgotten and the new one owns the block.
        unsafe {
            let ptr = self.moved(old.as_mut_ptr().cast()).cast::<T>();
            *vec = Vec::from_raw_parts(ptr, len, capacity);
        }
    }

    /// Moves a boxed slice (of bytes, or of a segment's words).
    pub fn bytes<T>(&self, bytes: &mut Box<[T]>) {
        if bytes.is_empty() || std::mem::size_of::<T>() == 0 {
            return;
        }
        let len = bytes.len();
        let old = Box::into_raw(std::mem::take(bytes));
        // SAFETY: as `vec`; the old box was released into `old` and is adopted again.
        unsafe {
            let ptr = self.moved(old.cast()).cast::<T>();
            *bytes = Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len));
        }
    }
}
