//! valkey-bloom's values: any RDB payload (even mode byte) or `BF.LOAD` blob (odd) either
//! loads or is refused by the one validator, never panics; whatever loads writes both
//! encodings and reads them back identically, and takes adds and lookups.
#![no_main]

use bloomrs::rdb::{MemoryRdb, ModulePayload};
use bloomrs::valkey_bloom::{decode_blob, encode_blob, ValkeyBloom, ENCODING_VERSION};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
use common::MAX_BYTES;

fn from_rdb(data: &[u8]) -> Option<ValkeyBloom> {
    let payload = ModulePayload::decode(data, MAX_BYTES as usize).ok()?;
    let encver = payload.encoding_version();
    let mut fields = payload.fields;
    ValkeyBloom::load(&mut fields, encver, MAX_BYTES).ok()
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let loaded = if mode & 1 == 0 { from_rdb(rest) } else { decode_blob(rest, MAX_BYTES).ok() };
    let Some(mut bloom) = loaded else { return };
    let blob = encode_blob(&bloom);
    let again = decode_blob(&blob, MAX_BYTES).expect("its own blob loads");
    assert_eq!(again.filters(), bloom.filters());
    assert_eq!(encode_blob(&again), blob);
    let mut rdb = MemoryRdb::new();
    bloom.save(&mut rdb);
    let back = ValkeyBloom::load(&mut rdb, ENCODING_VERSION, MAX_BYTES).expect("its own RDB loads");
    assert_eq!(back.filters(), bloom.filters());
    for item in rest.chunks(7).take(64) {
        if let Ok(true) = bloom.add(item, &MAX_BYTES) {
            assert!(bloom.contains(item));
        }
    }
});
