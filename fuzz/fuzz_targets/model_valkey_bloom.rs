//! The model check of valkey-bloom filters (adds only).
//!
//! A value created from the input's parameters or decoded by the server's loaders, then a
//! fuzzer-chosen sequence of operations, checked after every step against a plain multiset
//! (see `bloomrs::model`).
#![no_main]

use bloomrs::model::{fuzz, ValkeyKind};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = fuzz::<ValkeyKind>(data);
});
