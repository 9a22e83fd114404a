//! Counting filters: any RDB payload, or any LOADCHUNK header and chunks, either builds a
//! filter or is refused, never panics; whatever is accepted saves, dumps and loads back
//! identically, and a delete after an add never makes the item read absent while another
//! add of it remains.
#![no_main]

use bloomrs::counting::{CountingFilter, ENCODING_VERSION};
use bloomrs::rdb::{MemoryRdb, ModulePayload};
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

fn from_rdb(data: &[u8]) -> Option<CountingFilter> {
    let payload = ModulePayload::decode(data, MAX_BYTES as usize).ok()?;
    let encver = payload.encoding_version();
    let mut fields = payload.fields;
    CountingFilter::load(&mut fields, encver, MAX_BYTES).ok()
}

fn from_chunks(data: &[u8]) -> Option<CountingFilter> {
    let mut frames = Frames { rest: data };
    let header = frames.blob()?;
    let mut filter = CountingFilter::from_header(header, MAX_BYTES).ok()?;
    assert_eq!(filter.encode_header(), header);
    while let Some((iter, bytes)) = frames.chunk() {
        let _ = filter.chain.load_chunk(iter, bytes);
    }
    Some(filter)
}

fn check_round_trips(filter: &CountingFilter) {
    let mut saved = MemoryRdb::new();
    filter.save(&mut saved);
    let reloaded = CountingFilter::load(&mut saved, ENCODING_VERSION, MAX_BYTES).expect("own value");
    assert_eq!(&reloaded, filter);
    let mut copy = CountingFilter::from_header(&filter.encode_header(), MAX_BYTES).expect("own header");
    for chunk in filter.chain.chunks() {
        copy.chain.load_chunk(chunk.next, chunk.bytes).expect("own chunk");
    }
    assert_eq!(&copy, filter);
}
