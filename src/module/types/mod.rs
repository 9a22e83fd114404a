//! The types room: the callbacks every filter type shares (RDB load/save, memory usage, free,
//! copy (deviation D7), lazy free, defrag) through [`FilterValue`], and the cuckoo type
//! `MBbloomCF` (`cuckoo.rs`). The Bloom kinds' types live with their kinds (`kinds/`), which
//! build them with [`callbacks`]. May import `ffi`, `state` and the pure core.

pub mod cuckoo;

use std::ffi::{c_int, c_void};
use std::ptr::null_mut;

use redis_module::raw;

use crate::budget::Budget;
use crate::module::ffi::io::{log_load_error, value_ref, Defrag, IoReader, IoWriter};
use crate::module::ffi::{callback_admission, guard, log, RawString};
use crate::module::state::settings;
use crate::module::state::stats::{self, Measured};
use crate::rdb::LoadError;

/// The callbacks a data type registers (the rest stay unset).
struct Callbacks {
    rdb_load: raw::RedisModuleTypeLoadFunc,
    rdb_save: raw::RedisModuleTypeSaveFunc,
    aof_rewrite: raw::RedisModuleTypeRewriteFunc,
    mem_usage: raw::RedisModuleTypeMemUsageFunc,
    digest: raw::RedisModuleTypeDigestFunc,
    free: raw::RedisModuleTypeFreeFunc,
    copy: raw::RedisModuleTypeCopyFunc,
    free_effort: raw::RedisModuleTypeFreeEffortFunc,
    defrag: raw::RedisModuleTypeDefragFunc,
}

const fn methods(c: Callbacks) -> raw::RedisModuleTypeMethods {
    raw::RedisModuleTypeMethods {
        version: raw::REDISMODULE_TYPE_METHOD_VERSION as u64,
        rdb_load: c.rdb_load,
        rdb_save: c.rdb_save,
        aof_rewrite: c.aof_rewrite,
        mem_usage: c.mem_usage,
        digest: c.digest,
        free: c.free,
        aux_load: None,
        aux_save: None,
        aux_save_triggers: 0,
        free_effort: c.free_effort,
        unlink: None,
        copy: c.copy,
        defrag: c.defrag,
        mem_usage2: None,
        free_effort2: None,
        unlink2: None,
        copy2: None,
        aux_save2: None,
    }
}

/// How much work freeing a value is, in Redis's units (about one per allocation): a value
/// above 64 is freed by a background thread on UNLINK / lazy free, so large filters never
/// stall the server. One unit per 64 KiB plus one per sub-filter, and at least one: Redis
/// reads 0 as "unknown" and frees such a value in the background too, which for a small
/// value costs more than freeing it at once.
///
/// # Safety
/// Called by Redis with a value of the type that stores `T`.
unsafe extern "C" fn free_effort<T: Measured>(_key: RawString, value: *const c_void) -> usize {
    guard(1, || {
        value_ref::<T>(value).map_or(1, |v| effort(v.measure()))
    })
}

/// The free effort of a value measured as `m` (see [`free_effort`]).
fn effort(m: stats::Measure) -> usize {
    usize::try_from((m.bytes >> 16) + m.filters)
        .unwrap_or(usize::MAX)
        .max(1)
}

/// What the shared callbacks need from a filter type.
pub trait FilterValue: Measured + Clone {
    /// How the log names a value of this type.
    const NAME: &'static str;
    fn load(io: &mut IoReader, encver: i32, max_bytes: u64) -> Result<Self, LoadError>;
    fn save(&self, io: &mut IoWriter);
    /// Moves every heap block of the value (active defragmentation).
    fn relocate(&mut self, defrag: &Defrag);
    /// Whether a client may bring this value in (RESTORE): what the server's configuration
    /// lets commands build. Loads and the primary's copies are never refused on that ground.
    fn admitted(&self) -> bool {
        true
    }
}

/// `FilterValue` for a core type whose inherent `load`/`save` are its RDB codec: its name in
/// the log, and how its heap blocks are moved (`|value, defrag| ...`).
macro_rules! filter_value {
    ($type:ty, $name:literal, |$value:ident, $defrag:ident| $relocate:expr
        $(, admitted: |$admit:ident| $admitted:expr)?) => {
        impl $crate::module::types::FilterValue for $type {
            const NAME: &'static str = $name;
            fn load(
                io: &mut $crate::module::ffi::io::IoReader,
                encver: i32,
                max_bytes: u64,
            ) -> Result<Self, $crate::rdb::LoadError> {
                <$type>::load(io, encver, max_bytes)
            }
            fn save(&self, io: &mut $crate::module::ffi::io::IoWriter) {
                <$type>::save(self, io);
            }
            fn relocate(&mut self, $defrag: &$crate::module::ffi::io::Defrag) {
                let $value = self;
                $relocate
            }
            $(fn admitted(&self) -> bool {
                let $admit = self;
                $admitted
            })?
        }
    };
}
pub(crate) use filter_value;

/// The callbacks of a filter type: the shared ones, plus its own AOF rewrite and digest.
pub const fn callbacks<T: FilterValue>(
    aof_rewrite: raw::RedisModuleTypeRewriteFunc,
    digest: raw::RedisModuleTypeDigestFunc,
) -> raw::RedisModuleTypeMethods {
    methods(Callbacks {
        rdb_load: Some(rdb_load::<T>),
        rdb_save: Some(rdb_save::<T>),
        aof_rewrite,
        mem_usage: Some(mem_usage::<T>),
        digest,
        free: Some(free::<T>),
        copy: Some(copy::<T>),
        free_effort: Some(free_effort::<T>),
        defrag: Some(defrag::<T>),
    })
}

/// Moves the value and its heap blocks during active defragmentation.
///
/// # Safety
/// Called by Redis with a live defrag context and the address of a value of the type that
/// stores `T`.
unsafe extern "C" fn defrag<T: FilterValue>(
    ctx: *mut raw::RedisModuleDefragCtx,
    _key: RawString,
    value: *mut *mut c_void,
) -> c_int {
    guard(0, || {
        if !settings::bloom_defrag_enabled() {
            return 0;
        }
        let defrag = Defrag::new(ctx);
        defrag.value(value);
        if let Some(value) = value.as_ref().and_then(|v| v.cast::<T>().as_mut()) {
            value.relocate(&defrag);
        }
        0
    })
}

/// # Safety
/// Called by Redis with a live RDB handle.
unsafe extern "C" fn rdb_load<T: FilterValue>(
    io: *mut raw::RedisModuleIO,
    encver: c_int,
) -> *mut c_void {
    guard(null_mut(), || {
        // RESTORE is admitted under maxmemory; a load at start-up or from the primary is not
        // limited by it (the admission knows from the server's flags).
        let admission = callback_admission();
        match T::load(&mut IoReader { io }, encver, admission.limit(0)) {
            Ok(value) if admission.binds() && !value.admitted() => {
                stats::count(&stats::REJECTED_PAYLOADS);
                log(
                    c"warning",
                    &format!(
                        "bloomrs: RESTORE refused: {} the configuration could not build",
                        T::NAME
                    ),
                );
                null_mut()
            }
            Ok(value) => {
                stats::appeared(&value, true);
                Box::into_raw(Box::new(value)).cast()
            }
            Err(e) => {
                stats::count(&stats::REJECTED_PAYLOADS);
                log_load_error(io, T::NAME, &e);
                null_mut()
            }
        }
    })
}

/// # Safety
/// Called by Redis with a live RDB handle and a value of the type that stores `T`.
unsafe extern "C" fn rdb_save<T: FilterValue>(io: *mut raw::RedisModuleIO, value: *mut c_void) {
    guard((), || {
        if let Some(value) = value_ref::<T>(value) {
            value.save(&mut IoWriter { io });
        }
    })
}

/// The bytes RedisBloom reports for the value (MEMORY USAGE).
///
/// # Safety
/// Called by Redis with a value of the type that stores `T`.
unsafe extern "C" fn mem_usage<T: FilterValue>(value: *const c_void) -> usize {
    guard(0, || {
        #[cfg(feature = "fault-injection")]
        crate::module::state::fault::maybe_panic_in_callback();
        value_ref::<T>(value).map_or(0, |v| {
            usize::try_from(v.measure().bytes).unwrap_or(usize::MAX)
        })
    })
}

/// # Safety
/// Called by Redis with a value of the type that stores `T`, which it no longer references.
unsafe extern "C" fn free<T: FilterValue>(value: *mut c_void) {
    guard((), || {
        if !value.is_null() {
            let value = Box::from_raw(value.cast::<T>());
            stats::appeared(&*value, false);
        }
    })
}

/// A deep copy (deviation D7), if the memory limits allow it (deviation D13; Redis then
/// replies `ERR module key failed to copy`).
///
/// # Safety
/// Called by Redis with a value of the type that stores `T`.
unsafe extern "C" fn copy<T: FilterValue>(
    _from: RawString,
    _to: RawString,
    value: *const c_void,
) -> *mut c_void {
    guard(null_mut(), || match value_ref::<T>(value) {
        Some(value) if fits(value.measure().bytes, callback_admission().limit(0)) => {
            stats::appeared(value, true);
            Box::into_raw(Box::new(value.clone())).cast()
        }
        Some(_) => {
            log(
                c"warning",
                &format!("bloomrs: COPY refused: {} over the memory limits", T::NAME),
            );
            null_mut()
        }
        None => null_mut(),
    })
}

/// Whether a value measured at `bytes` fits under `limit`.
fn fits(bytes: i64, limit: u64) -> bool {
    u64::try_from(bytes).is_ok_and(|bytes| bytes <= limit)
}
