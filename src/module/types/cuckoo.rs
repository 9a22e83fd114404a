//! The data type `MBbloomCF`: RDB load/save, AOF rewrite as CF.LOADCHUNK commands, memory
//! usage, free, copy (deviation D7) and digest (deviation D8).

use std::ffi::c_void;

use redis_module::native_types::RedisType;
use redis_module::raw;

use super::{callbacks, filter_value};
use crate::cuckoo::CuckooFilter;
use crate::module::ffi::io::{emit_loadchunk, value_ref, Digest, AOF_PIECE};
use crate::module::ffi::{guard, RawString};

filter_value!(CuckooFilter, "a cuckoo filter", |value, defrag| {
    let sub_filters = value.sub_filters_for_relocation();
    defrag.vec(sub_filters);
    for sub_filter in sub_filters.iter_mut() {
        defrag.vec(sub_filter.slots_for_relocation());
    }
}, admitted: |value| within_max_expansions(value));

/// Whether the filter has no more sub-filters than `cf-max-expansions` lets adds make
/// (deviation D23): every lookup reads each sub-filter, so a crafted header of 65535 empty
/// ones (1.3 MB) made a 1000-item `CF.MEXISTS` take 1.5 s. A client's `CF.LOADCHUNK` header
/// and RESTORE are refused past it; loads and the primary's copies never are.
pub fn within_max_expansions(filter: &CuckooFilter) -> bool {
    u64::from(filter.num_filters()) <= crate::module::state::settings::cf_max_expansions()
}

pub static CUCKOO_TYPE: RedisType = RedisType::new(
    "MBbloomCF",
    crate::cuckoo::ENCODING_VERSION,
    callbacks::<CuckooFilter>(Some(cf_aof_rewrite), Some(cf_digest)),
);

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
            for (iterator, bytes) in filter.rewrite_chunks(AOF_PIECE) {
                emit_loadchunk(io, c"CF.LOADCHUNK", key, iterator, &bytes);
            }
        }
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
