//! Windowed filters: any RDB payload, or any LOADCHUNK header and chunks, either builds a
//! filter the validator accepts or is refused, never panics; whatever is accepted saves,
//! dumps and loads back identically, and forgets nothing before its time.
#![no_main]

use bloomrs::rdb::{MemoryRdb, ModulePayload};
use bloomrs::windowed::{Windowed, ENCODING_VERSION};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
use common::{Frames, MAX_BYTES};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let filter = if mode & 1 == 0 {
        from_rdb(rest)
    } else {
        from_chunks(rest)
    };
    let Some(mut filter) = filter else { return };
    filter.validate(MAX_BYTES).expect("accepted filters are valid");
    check_round_trips(&filter);
    let now = filter.expires_at_ms().saturating_sub(1);
    if filter.add(now, b"fuzz", MAX_BYTES).is_ok() {
        assert!(filter.contains(now, b"fuzz"));
    }
    let expiry = filter.expires_at_ms();
    filter.retire(expiry);
    // Only a clock within a window of the end of time keeps a generation past its expiry.
    assert!(filter.ring.is_empty() || expiry == u64::MAX);
});

fn from_rdb(data: &[u8]) -> Option<Windowed> {
    let payload = ModulePayload::decode(data, MAX_BYTES as usize).ok()?;
    let encver = payload.encoding_version();
    let mut fields = payload.fields;
    Windowed::load(&mut fields, encver, MAX_BYTES).ok()
}

fn from_chunks(data: &[u8]) -> Option<Windowed> {
    let mut frames = Frames { rest: data };
    let header = frames.blob()?;
    let mut filter = Windowed::from_header(header, MAX_BYTES).ok()?;
    assert_eq!(filter.encode_header(), header);
    while let Some((iter, bytes)) = frames.chunk() {
        let _ = filter.load_chunk(iter, bytes);
    }
    Some(filter)
}

fn check_round_trips(filter: &Windowed) {
    let mut saved = MemoryRdb::new();
    filter.save(&mut saved);
    let reloaded = Windowed::load(&mut saved, ENCODING_VERSION, MAX_BYTES).expect("own value");
    assert_eq!(&reloaded, filter);
    let mut copy = Windowed::from_header(&filter.encode_header(), MAX_BYTES).expect("own header");
    for chunk in filter.chunks() {
        copy.load_chunk(chunk.next, chunk.bytes).expect("own chunk");
    }
    assert_eq!(&copy, filter);
}
