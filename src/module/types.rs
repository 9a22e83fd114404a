//! The data types `MBbloom--` and `MBbloomCF`: RDB load/save, AOF rewrite, memory usage,
//! free, copy (deviation D7) and digest (deviation D8).

use std::ffi::{c_int, c_void};
use std::ptr::null_mut;

use redis_module::native_types::RedisType;
use redis_module::raw;

use super::config;
use super::ffi::{
    emit_loadchunk, guard, log_load_error, value_ref, Digest, IoReader, IoWriter, RawString,
};
use super::stats;
use crate::bloom::Chain;

pub(super) const fn methods(
    rdb_load: raw::RedisModuleTypeLoadFunc,
    rdb_save: raw::RedisModuleTypeSaveFunc,
    aof_rewrite: raw::RedisModuleTypeRewriteFunc,
    mem_usage: raw::RedisModuleTypeMemUsageFunc,
    digest: raw::RedisModuleTypeDigestFunc,
    free: raw::RedisModuleTypeFreeFunc,
    copy: raw::RedisModuleTypeCopyFunc,
) -> raw::RedisModuleTypeMethods {
    raw::RedisModuleTypeMethods {
        version: raw::REDISMODULE_TYPE_METHOD_VERSION as u64,
        rdb_load,
        rdb_save,
        aof_rewrite,
        mem_usage,
        digest,
        free,
        aux_load: None,
        aux_save: None,
        aux_save_triggers: 0,
        free_effort: None,
        unlink: None,
        copy,
        defrag: None,
        mem_usage2: None,
        free_effort2: None,
        unlink2: None,
        copy2: None,
        aux_save2: None,
    }
}

pub static BLOOM_TYPE: RedisType = RedisType::new(
    "MBbloom--",
    crate::bloom::ENCODING_VERSION,
    methods(
        Some(bf_rdb_load),
        Some(bf_rdb_save),
        Some(bf_aof_rewrite),
        Some(bf_mem_usage),
        Some(bf_digest),
        Some(bf_free),
        Some(bf_copy),
    ),
);

/// # Safety
/// Called by Redis with a live RDB handle.
unsafe extern "C" fn bf_rdb_load(io: *mut raw::RedisModuleIO, encver: c_int) -> *mut c_void {
    guard(null_mut(), || {
        match Chain::load(&mut IoReader { io }, encver, config::max_filter_bytes()) {
            Ok(chain) => {
                stats::appeared(&chain, true);
                Box::into_raw(Box::new(chain)).cast()
            }
            Err(e) => {
                stats::count(&stats::REJECTED_PAYLOADS);
                log_load_error(io, "a Bloom filter", &e);
                null_mut()
            }
        }
    })
}

/// # Safety
/// Called by Redis with a live RDB handle and a value of this type.
unsafe extern "C" fn bf_rdb_save(io: *mut raw::RedisModuleIO, value: *mut c_void) {
    guard((), || {
        if let Some(chain) = value_ref::<Chain>(value) {
            chain.save(&mut IoWriter { io });
        }
    })
}

/// # Safety
/// Called by Redis with a live AOF handle, the key name and a value of this type.
unsafe extern "C" fn bf_aof_rewrite(
    io: *mut raw::RedisModuleIO,
    key: RawString,
    value: *mut c_void,
) {
    guard((), || {
        if let Some(chain) = value_ref::<Chain>(value) {
            emit_loadchunk(io, c"BF.LOADCHUNK", key, 1, &chain.encode_header());
            for chunk in chain.chunks() {
                emit_loadchunk(io, c"BF.LOADCHUNK", key, chunk.next, chunk.bytes);
            }
        }
    })
}

/// # Safety
/// Called by Redis with a value of this type.
unsafe extern "C" fn bf_mem_usage(value: *const c_void) -> usize {
    guard(0, || {
        value_ref::<Chain>(value).map_or(0, |chain| chain.reported_bytes() as usize)
    })
}

/// # Safety
/// Called by Redis with a live digest handle and a value of this type.
unsafe extern "C" fn bf_digest(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    guard((), || {
        if let Some(chain) = value_ref::<Chain>(value) {
            let mut digest = Digest { md };
            for number in [
                chain.size,
                u64::from(chain.options),
                u64::from(chain.growth),
            ] {
                digest.add_int(number);
            }
            for link in &chain.links {
                for number in [
                    link.entries,
                    link.error.to_bits(),
                    u64::from(link.hashes),
                    link.bpe.to_bits(),
                ] {
                    digest.add_int(number);
                }
                for number in [link.bits, u64::from(link.n2), link.size] {
                    digest.add_int(number);
                }
                digest.add_bytes(&link.array);
            }
            digest.end_sequence();
        }
    })
}

/// # Safety
/// Called by Redis with a value of this type, which it no longer references.
unsafe extern "C" fn bf_free(value: *mut c_void) {
    guard((), || {
        if !value.is_null() {
            let chain = Box::from_raw(value.cast::<Chain>());
            stats::appeared(&*chain, false);
        }
    })
}

/// # Safety
/// Called by Redis with a value of this type.
unsafe extern "C" fn bf_copy(
    _from: RawString,
    _to: RawString,
    value: *const c_void,
) -> *mut c_void {
    guard(null_mut(), || match value_ref::<Chain>(value) {
        Some(chain) => {
            stats::appeared(chain, true);
            Box::into_raw(Box::new(chain.clone())).cast()
        }
        None => null_mut(),
    })
}
