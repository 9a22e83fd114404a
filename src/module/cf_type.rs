//! The data type `MBbloomCF`: RDB load/save, AOF rewrite as CF.LOADCHUNK commands, memory
//! usage, free, copy (deviation D7) and digest (deviation D8).

use std::ffi::{c_int, c_void};
use std::ptr::null_mut;

use redis_module::native_types::RedisType;
use redis_module::raw;

use super::config;
use super::ffi::{
    emit_loadchunk, guard, log_load_error, value_ref, Defrag, Digest, IoReader, IoWriter, RawString,
};
use super::stats;
use super::types::{free_effort, methods, Callbacks};
use crate::cuckoo::CuckooFilter;

pub static CUCKOO_TYPE: RedisType = RedisType::new(
    "MBbloomCF",
    crate::cuckoo::ENCODING_VERSION,
    methods(Callbacks {
        rdb_load: Some(cf_rdb_load),
        rdb_save: Some(cf_rdb_save),
        aof_rewrite: Some(cf_aof_rewrite),
        mem_usage: Some(cf_mem_usage),
        digest: Some(cf_digest),
        free: Some(cf_free),
        copy: Some(cf_copy),
        free_effort: Some(free_effort::<CuckooFilter>),
        defrag: Some(cf_defrag),
    }),
);

/// Moves the filter, its sub-filter vector and every slot array during active
/// defragmentation.
///
/// # Safety
/// Called by Redis with a live defrag context and the address of a value of this type.
unsafe extern "C" fn cf_defrag(
    ctx: *mut raw::RedisModuleDefragCtx,
    _key: RawString,
    value: *mut *mut c_void,
) -> c_int {
    guard(0, || {
        let defrag = Defrag::new(ctx);
        defrag.value(value);
        if let Some(filter) = value
            .as_ref()
            .and_then(|v| v.cast::<CuckooFilter>().as_mut())
        {
            let sub_filters = filter.sub_filters_for_relocation();
            defrag.vec(sub_filters);
            for sub_filter in sub_filters.iter_mut() {
                defrag.vec(sub_filter.slots_for_relocation());
            }
        }
        0
    })
}

/// # Safety
/// Called by Redis with a live RDB handle.
unsafe extern "C" fn cf_rdb_load(io: *mut raw::RedisModuleIO, encver: c_int) -> *mut c_void {
    guard(null_mut(), || {
        match CuckooFilter::load(&mut IoReader { io }, encver, config::max_filter_bytes()) {
            Ok(filter) => {
                stats::appeared(&filter, true);
                Box::into_raw(Box::new(filter)).cast()
            }
            Err(e) => {
                stats::count(&stats::REJECTED_PAYLOADS);
                log_load_error(io, "a cuckoo filter", &e);
                null_mut()
            }
        }
    })
}

/// # Safety
/// Called by Redis with a live RDB handle and a value of this type.
unsafe extern "C" fn cf_rdb_save(io: *mut raw::RedisModuleIO, value: *mut c_void) {
    guard((), || {
        if let Some(filter) = value_ref::<CuckooFilter>(value) {
            filter.save(&mut IoWriter { io });
        }
    })
}

/// # Safety
/// Called by Redis with a live AOF handle, the key name and a value of this type.
unsafe extern "C" fn cf_aof_rewrite(
    io: *mut raw::RedisModuleIO,
    key: RawString,
    value: *mut c_void,
) {
    guard((), || {
        if let Some(filter) = value_ref::<CuckooFilter>(value) {
            // Unlike CF.SCANDUMP, the rewrite does not skip an empty filter.
            for (iterator, bytes) in filter.rewrite_chunks() {
                emit_loadchunk(io, c"CF.LOADCHUNK", key, iterator, &bytes);
            }
        }
    })
}

/// # Safety
/// Called by Redis with a value of this type.
unsafe extern "C" fn cf_mem_usage(value: *const c_void) -> usize {
    guard(0, || {
        value_ref::<CuckooFilter>(value).map_or(0, |filter| {
            usize::try_from(filter.size_bytes()).unwrap_or(usize::MAX)
        })
    })
}

/// # Safety
/// Called by Redis with a live digest handle and a value of this type.
unsafe extern "C" fn cf_digest(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    guard((), || {
        if let Some(filter) = value_ref::<CuckooFilter>(value) {
            let mut digest = Digest { md };
            for number in [
                filter.num_items(),
                filter.num_buckets(),
                filter.num_deletes(),
                u64::from(filter.num_filters()),
                u64::from(filter.bucket_size()),
                u64::from(filter.max_iterations()),
                u64::from(filter.expansion()),
            ] {
                digest.add_int(number);
            }
            for sub in filter.sub_filters() {
                digest.add_int(sub.num_buckets());
                digest.add_bytes(sub.slots());
            }
            digest.end_sequence();
        }
    })
}

/// # Safety
/// Called by Redis with a value of this type, which it no longer references.
unsafe extern "C" fn cf_free(value: *mut c_void) {
    guard((), || {
        if !value.is_null() {
            let filter = Box::from_raw(value.cast::<CuckooFilter>());
            stats::appeared(&*filter, false);
        }
    })
}

/// # Safety
/// Called by Redis with a value of this type.
unsafe extern "C" fn cf_copy(
    _from: RawString,
    _to: RawString,
    value: *const c_void,
) -> *mut c_void {
    guard(null_mut(), || match value_ref::<CuckooFilter>(value) {
        Some(filter) => {
            stats::appeared(filter, true);
            Box::into_raw(Box::new(filter.clone())).cast()
        }
        None => null_mut(),
    })
}
