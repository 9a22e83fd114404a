//! Compact filters: any RDB payload, or any LOADCHUNK header and chunks, either builds a
//! filter the validator accepts or is refused, never panics; whatever is accepted saves and
//! loads back identically, answers lookups, and takes adds (and deletes) that keep it valid.
#![no_main]

use bloomrs::compact::{Compact, ENCODING_VERSION};
use bloomrs::rdb::{MemoryRdb, ModulePayload};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
use common::{Frames, MAX_BYTES};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let filter = if mode & 1 == 0 { from_rdb(rest) } else { from_chunks(rest) };
    let Some(mut filter) = filter else { return };
    if !filter.is_loaded() {
        let before = filter.clone();
        assert!(filter.add(b"fuzz", MAX_BYTES).is_err());
        assert_eq!(filter, before, "a loading filter takes no adds");
        return;
    }
    filter.validate(MAX_BYTES).expect("accepted filters are valid");
    let mut saved = MemoryRdb::new();
    filter.save(&mut saved);
    let reloaded = Compact::load(&mut saved, ENCODING_VERSION, MAX_BYTES).expect("own value");
    assert_eq!(reloaded, filter);
    let mut loaded = Compact::from_header(&filter.encode_header(), MAX_BYTES).expect("own header");
    for (iter, bytes) in filter.chunks() {
        loaded.load_chunk(iter, bytes, MAX_BYTES).expect("own chunk");
    }
    assert_eq!(loaded, filter);
    let before = filter.clone();
    match filter.add(b"fuzz", MAX_BYTES) {
        Ok(_) => {
            assert!(filter.contains(b"fuzz"));
            filter.validate(u64::MAX).expect("an add keeps it valid");
            if filter.is_deletable() {
                assert_eq!(filter.delete(b"fuzz"), Ok(true));
                filter.validate(u64::MAX).expect("a delete keeps it valid");
            }
        }
        Err(_) => assert_eq!(filter, before, "a refused add changes nothing"),
    }
});

fn from_rdb(data: &[u8]) -> Option<Compact> {
    let payload = ModulePayload::decode(data, MAX_BYTES as usize).ok()?;
    let version = payload.encoding_version();
    let mut fields = payload.fields;
    Compact::load(&mut fields, version, MAX_BYTES).ok()
}

fn from_chunks(data: &[u8]) -> Option<Compact> {
    let mut frames = Frames { rest: data };
    let mut filter = Compact::from_header(frames.blob()?, MAX_BYTES).ok()?;
    while let Some((iter, bytes)) = frames.chunk() {
        let before = filter.clone();
        if filter.load_chunk(iter, bytes, MAX_BYTES).is_err() {
            assert_eq!(filter, before, "a refused chunk changes nothing");
        }
    }
    Some(filter)
}
