//! RDB/RESTORE of a Bloom filter: any module payload either loads or is refused, never
//! panics; whatever loads saves, dumps and loads again identically.
#![no_main]

use bloomrs::bloom::{Chain, ENCODING_VERSION};
use libfuzzer_sys::fuzz_target;

#[path = "stored.rs"]
#[macro_use]
mod stored;
use stored::{MAX_BYTES, check_round_trips, from_rdb};

fuzz_target!(|data: &[u8]| {
    let Some(mut chain) = from_rdb::<Chain>(data) else { return };
    check_round_trips(&chain);
    let _ = chain.add(b"fuzz", MAX_BYTES);
    let _ = chain.contains(b"other");
});

stored!(Chain, ENCODING_VERSION,
    load_chunk: |chain, iter, bytes| chain.load_chunk(iter, bytes).is_ok(),
    dump: |chain| chain.chunks().map(|c| (c.next, c.bytes.to_vec())).collect());
