//! Counting filters: any RDB payload, or any LOADCHUNK header and chunks, either builds a
//! filter or is refused, never panics; whatever is accepted saves, dumps and loads back
//! identically, and a delete after an add never makes the item read absent while another
//! add of it remains.
#![no_main]

use bloomrs::counting::{CountingFilter, ENCODING_VERSION};
use libfuzzer_sys::fuzz_target;

#[path = "stored.rs"]
#[macro_use]
mod stored;
use stored::{MAX_BYTES, check_round_trips, decode};

fuzz_target!(|data: &[u8]| {
    let Some((mut filter, rest)) = decode::<CountingFilter>(data) else { return };
    check_round_trips(&filter);
    for item in [&b"a"[..], b"", b"fuzz", rest] {
        let twice = filter.add(item, MAX_BYTES).is_ok() && filter.add(item, MAX_BYTES).is_ok();
        if twice {
            let _ = filter.delete(item);
            assert!(filter.contains(item), "one add of the item remains");
        }
        let _ = filter.delete(b"never added");
    }
    let _ = filter.saturated();
});

stored!(CountingFilter, ENCODING_VERSION,
    load_chunk: |filter, iter, bytes| filter.chain.load_chunk(iter, bytes).is_ok(),
    dump: |filter| filter.chain.chunks().map(|c| (c.next, c.bytes.to_vec())).collect());
