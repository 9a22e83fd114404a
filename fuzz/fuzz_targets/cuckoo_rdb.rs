//! RDB/RESTORE of a Cuckoo filter: any module payload either loads or is refused, never
//! panics; whatever loads saves and loads again identically.
#![no_main]

use bloomrs::cuckoo::CuckooFilter;
use bloomrs::rdb::{MemoryRdb, ModulePayload};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
use common::MAX_BYTES;

fuzz_target!(|data: &[u8]| {
    let Ok(payload) = ModulePayload::decode(data, MAX_BYTES as usize) else { return };
    let mut fields = payload.fields;
    let Ok(mut filter) = CuckooFilter::load(&mut fields, payload.type_id as i32 & 1023, MAX_BYTES) else { return };
    let mut saved = MemoryRdb::new();
    filter.save(&mut saved);
    let reloaded = CuckooFilter::load(&mut saved, bloomrs::cuckoo::ENCODING_VERSION, MAX_BYTES).expect("own value");
    assert_eq!(reloaded, filter);
    let _ = filter.insert(b"fuzz", MAX_BYTES);
    let _ = filter.delete(b"other");
    filter.compact(false);
    let _ = filter.chunks().count();
});
