//! BF.LOADCHUNK: any header and chunks either build a filter or are refused, never panic;
//! whatever is accepted dumps back to the same bytes and answers queries.
#![no_main]

use bloomrs::bloom::{Chain, ENCODING_VERSION};
use libfuzzer_sys::fuzz_target;

#[path = "stored.rs"]
#[macro_use]
mod stored;
use stored::{MAX_BYTES, check_round_trips, from_chunks};

fuzz_target!(|data: &[u8]| {
    let Some(mut chain) = from_chunks::<Chain>(data) else { return };
    check_round_trips(&chain);
    for item in [&b"a"[..], b"", b"fuzz", data] {
        let before = chain.contains(item);
        match chain.add(item, MAX_BYTES) {
            Ok(_) => assert!(chain.contains(item)),
            Err(_) => assert_eq!(chain.contains(item), before),
        }
    }
});

stored!(Chain, ENCODING_VERSION,
    load_chunk: |chain, iter, bytes| chain.load_chunk(iter, bytes).is_ok(),
    dump: |chain| chain.chunks().map(|c| (c.next, c.bytes.to_vec())).collect());
