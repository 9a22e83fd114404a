//! Blocked filters: any RDB payload, or any LOADCHUNK header and chunks, either builds a
//! filter or is refused, never panics; whatever is accepted saves, dumps and loads back
//! identically, an added item always reads present (one at a time and in a batch), and the
//! filter still passes its own checks after the adds.
#![no_main]

use bloomrs::blocked::{Blocked, ENCODING_VERSION};
use libfuzzer_sys::fuzz_target;

#[path = "stored.rs"]
#[macro_use]
mod stored;
use stored::{MAX_BYTES, check_round_trips, decode};

fuzz_target!(|data: &[u8]| {
    let Some((mut filter, rest)) = decode::<Blocked>(data) else { return };
    check_round_trips(&filter);
    let items = [&b"a"[..], b"", b"fuzz", rest];
    for item in items {
        if filter.add(item, MAX_BYTES).is_ok() {
            assert!(filter.contains(item), "an added item reads present");
        }
    }
    let mut batch = Vec::new();
    filter.contains_each(items.iter().copied(), |found| batch.push(found));
    let single: Vec<bool> = items.iter().map(|item| filter.contains(item)).collect();
    assert_eq!(batch, single, "a batch answers as single lookups do");
    assert_eq!(filter.validate(u64::MAX), Ok(()));
    check_round_trips(&filter);
});

stored!(Blocked, ENCODING_VERSION,
    load_chunk: |filter, iter, bytes| filter.load_chunk(iter, bytes).is_ok(),
    dump: |filter| filter.chunks().map(|c| (c.next, c.bytes.to_vec())).collect());
