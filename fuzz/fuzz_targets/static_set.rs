//! Static sets: any RDB payload, or any LOADCHUNK header and chunks, either builds a builder
//! or a frozen filter or is refused, never panics (a crafted table never makes a lookup read
//! outside it); whatever is accepted saves, dumps and loads back identically; an item added
//! to a builder reads present, also once the builder is frozen; a batch answers as single
//! lookups do. The freeze's effects (`STAGE`, `CHUNK`, `COMMIT`) of any bytes are applied or
//! refused, never a panic, and a builder's own frozen value arrives through them whole, also
//! to a replica that loads a snapshot taken mid-way (the stage saved with the builder). A
//! payload of a builder with a stage reloads with it (its chunks carry the builder alone).
#![no_main]

use bloomrs::fuse::{StaticFilter, ENCODING_VERSION};
use libfuzzer_sys::fuzz_target;

#[path = "stored.rs"]
#[macro_use]
mod stored;
use stored::{MAX_BYTES, check_round_trips, decode};

fuzz_target!(|data: &[u8]| {
    let Some((mut filter, rest)) = decode::<StaticFilter>(data) else { return };
    if filter.stage.is_some() {
        assert_eq!(reloaded(&filter).as_ref(), Some(&filter), "a stage reloads with its builder");
        filter.stage = None;
    }
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
        let mut other = filter.clone();
        let _ = other.begin_stage(rest, MAX_BYTES);
        let _ = other.stage_chunk(rest.len() as i64 + 1, rest);
        let _ = other.commit_stage(rest, MAX_BYTES);
        if let Some(job) = filter.freeze_job() {
            let frozen = job.run().expect("a small builder freezes");
            let value = filter.frozen_value(frozen.clone());
            let mut replica = filter.clone();
            let header = value.encode_header();
            replica.begin_stage(&header, MAX_BYTES).expect("its own header stages");
            let mut from = 0;
            let mut steps = 0;
            while let Some(step) = value.step_at(from, STEP) {
                assert_eq!(replica.stage_chunk(step.iter, step.bytes), Ok(true));
                from = step.next;
                steps += 1;
                if steps == 1 {
                    replica = reloaded(&replica).expect("a builder mid-freeze reloads");
                }
            }
            replica.commit_stage(&header, MAX_BYTES).expect("its own steps commit");
            assert!(filter.adopt(&job, frozen));
            assert_eq!(replica, filter, "the effects give the frozen value");
            assert!(added.iter().all(|item| filter.contains(item)), "frozen keeps every item");
            check_round_trips(&filter);
        }
    }
});

/// Table bytes per step here: small, so a table takes several.
const STEP: u64 = 64;

/// The value saved and loaded back through RDB.
fn reloaded(filter: &StaticFilter) -> Option<StaticFilter> {
    let mut saved = bloomrs::rdb::MemoryRdb::new();
    filter.save(&mut saved);
    StaticFilter::load(&mut saved, ENCODING_VERSION, MAX_BYTES).ok()
}

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
