//! RDB/RESTORE of a Bloom filter: any module payload either loads or is refused, never
//! panics; whatever loads saves and loads again identically.
#![no_main]

use bloomrs::bloom::Chain;
use bloomrs::rdb::{MemoryRdb, ModulePayload};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
use common::MAX_BYTES;

fuzz_target!(|data: &[u8]| {
    let Ok(payload) = ModulePayload::decode(data, MAX_BYTES as usize) else { return };
    let mut fields = payload.fields;
    let Ok(mut chain) = Chain::load(&mut fields, payload.type_id as i32 & 1023, MAX_BYTES) else { return };
    let mut saved = MemoryRdb::new();
    chain.save(&mut saved);
    let reloaded = Chain::load(&mut saved, bloomrs::bloom::ENCODING_VERSION, MAX_BYTES).expect("own value");
    assert_eq!(reloaded, chain);
    let _ = chain.add(b"fuzz", MAX_BYTES);
    let _ = chain.contains(b"other");
    let _ = chain.chunks().count();
});
