//! Static sets: any RDB payload, or any LOADCHUNK header and chunks, either builds a builder
//! or a frozen filter or is refused, never panics (a crafted table never makes a lookup read
//! outside it); whatever is accepted saves, dumps and loads back identically; an item added
//! to a builder reads present, also once the builder is frozen; a batch answers as single
//! lookups do.
#![no_main]

use bloomrs::fuse::{StaticFilter, ENCODING_VERSION};
use libfuzzer_sys::fuzz_target;

#[path = "stored.rs"]
#[macro_use]
mod stored;
use stored::{MAX_BYTES, check_round_trips, decode};

fuzz_target!(|data: &[u8]| {
    let Some((mut filter, rest)) = decode::<StaticFilter>(data) else { return };
    check_round_trips(&filter);
    let items = [&b"a"[..], b"", b"fuzz", rest];
    let mut added = Vec::new();
    for item in items {
        if filter.add(item, &MAX_BYTES).is_ok() {
            assert!(filter.contains(item), "an added item reads present");
            added.push(item);
        }
    }
    let mut batch = Vec::new();
    filter.contains_each(items.iter().copied(), |found| batch.push(found));
    let single: Vec<bool> = items.iter().map(|item| filter.contains(item)).collect();
    assert_eq!(batch, single, "a batch answers as single lookups do");
    check_round_trips(&filter);
    if filter.card() <= 100_000 {
        if let Some(job) = filter.freeze_job() {
            let frozen = job.run().expect("a small builder freezes");
            assert!(filter.adopt(&job, frozen));
            assert!(added.iter().all(|item| filter.contains(item)), "frozen keeps every item");
            check_round_trips(&filter);
        }
    }
});

stored!(StaticFilter, ENCODING_VERSION,
    load_chunk: |filter, iter, bytes| filter.load_chunk(iter, bytes, MAX_BYTES).is_ok(),
    dump: |filter| {
        let mut out = Vec::new();
        let mut iter = 1;
        while let Some((next, bytes)) = filter.chunk_at(iter) {
            out.push((next, bytes.into_owned()));
            iter = next;
        }
        out
    });
