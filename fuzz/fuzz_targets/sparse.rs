//! Sparse filters: any RDB payload, or any LOADCHUNK header and chunks, either builds a filter
//! the validator accepts or is refused, never panics; whatever is accepted saves and loads
//! back identically, and promotes to a chain that holds every item it held.
#![no_main]

use bloomrs::rdb::{MemoryRdb, ModulePayload};
use bloomrs::sparse::{Sparse, ENCODING_VERSION};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
use common::{Frames, MAX_BYTES};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let filter = if mode & 1 == 0 { from_rdb(rest) } else { from_chunks(rest) };
    let Some(mut filter) = filter else { return };
    filter.validate(MAX_BYTES).expect("accepted filters are valid");
    let mut saved = MemoryRdb::new();
    filter.save(&mut saved);
    let reloaded = Sparse::load(&mut saved, ENCODING_VERSION, MAX_BYTES).expect("own value");
    assert_eq!(reloaded, filter);
    let mut loaded = Sparse::from_header(&filter.encode_header(), MAX_BYTES).expect("own header");
    for (iter, bytes) in filter.chunks() {
        loaded.load_chunk(iter, &bytes, MAX_BYTES).expect("own chunk");
    }
    assert_eq!(loaded, filter);
    let most = filter.max_items(u64::MAX).expect("valid filters fit");
    let _ = filter.add(b"fuzz", most);
    let dense = filter.promote(MAX_BYTES).expect("valid filters promote");
    assert_eq!(dense.size, filter.len());
    if filter.contains(b"fuzz") {
        assert!(dense.contains(b"fuzz"));
    }
});

fn from_rdb(data: &[u8]) -> Option<Sparse> {
    let payload = ModulePayload::decode(data, MAX_BYTES as usize).ok()?;
    let version = payload.encoding_version();
    let mut fields = payload.fields;
    Sparse::load(&mut fields, version, MAX_BYTES).ok()
}

fn from_chunks(data: &[u8]) -> Option<Sparse> {
    let mut frames = Frames { rest: data };
    let mut filter = Sparse::from_header(frames.blob()?, MAX_BYTES).ok()?;
    while let Some((iter, bytes)) = frames.chunk() {
        let before = filter.clone();
        if filter.load_chunk(iter, bytes, MAX_BYTES).is_err() {
            assert_eq!(filter, before, "a refused chunk changes nothing");
        }
    }
    Some(filter)
}
