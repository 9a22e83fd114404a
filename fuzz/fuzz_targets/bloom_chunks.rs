//! BF.LOADCHUNK: any header and chunks either build a filter or are refused, never panic;
//! whatever is accepted dumps back to the same bytes and answers queries.
#![no_main]

use bloomrs::bloom::Chain;
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
use common::{Frames, MAX_BYTES};

fuzz_target!(|data: &[u8]| {
    let mut frames = Frames { rest: data };
    let Some(header) = frames.blob() else { return };
    let Ok(mut chain) = Chain::from_header(header, MAX_BYTES) else { return };
    assert_eq!(chain.encode_header(), header);
    while let Some((iter, bytes)) = frames.chunk() {
        let _ = chain.load_chunk(iter, bytes);
    }
    let mut copy = Chain::from_header(&chain.encode_header(), MAX_BYTES).expect("own header");
    for chunk in chain.chunks() {
        copy.load_chunk(chunk.next, chunk.bytes).expect("own chunk");
    }
    assert_eq!(copy, chain);
    for item in [&b"a"[..], b"", b"fuzz", header] {
        let before = chain.contains(item);
        match chain.add(item, MAX_BYTES) {
            Ok(_) => assert!(chain.contains(item)),
            Err(_) => assert_eq!(chain.contains(item), before),
        }
    }
});
