//! CF.LOADCHUNK: any header and chunks either build a filter or are refused, never panic;
//! whatever is accepted dumps back to the same bytes and keeps working.
#![no_main]

use bloomrs::cuckoo::CuckooFilter;
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
use common::{Frames, MAX_BYTES};

fuzz_target!(|data: &[u8]| {
    let mut frames = Frames { rest: data };
    let Some(header) = frames.blob() else { return };
    let Ok(mut filter) = CuckooFilter::from_header(header, MAX_BYTES) else { return };
    while let Some((iter, bytes)) = frames.chunk() {
        let _ = filter.load_chunk(iter, bytes);
    }
    // Each LOADCHUNK finds its sub-filter by walking them, so copying a filter of tens of
    // thousands of sub-filters chunk by chunk is quadratic; the round trip is checked below that.
    if filter.num_filters() <= 4096 {
        let mut copy = CuckooFilter::from_header(&filter.encode_header(), MAX_BYTES).expect("own header");
        // The AOF rewrite's pieces, at a limit the input picks (runs of one sub-filter), no
        // shorter than keeps the copy's walks (pieces × sub-filters) near 2^24 steps.
        let walk_floor = filter.size_bytes().saturating_mul(u64::from(filter.num_filters())) >> 24;
        let limit = (1 + 64 * u64::from(header.first().copied().unwrap_or(0))).max(walk_floor);
        for (iter, bytes) in filter.rewrite_chunks(limit).skip(1) {
            copy.load_chunk(iter, &bytes).expect("own chunk");
        }
        assert_eq!(copy, filter);
    }
    for item in [&b"a"[..], b"", b"fuzz", header] {
        if filter.insert(item, MAX_BYTES).is_ok() {
            assert!(filter.contains(item));
            assert!(filter.delete(item));
        }
        let _ = filter.count(item);
    }
    filter.compact(true);
});
