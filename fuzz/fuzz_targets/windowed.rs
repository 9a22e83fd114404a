//! Windowed filters: any RDB payload, or any LOADCHUNK header and chunks, either builds a
//! filter the validator accepts or is refused, never panics; whatever is accepted saves,
//! dumps and loads back identically, and forgets nothing before its time.
#![no_main]

use bloomrs::windowed::{Windowed, ENCODING_VERSION};
use libfuzzer_sys::fuzz_target;

#[path = "stored.rs"]
#[macro_use]
mod stored;
use stored::{MAX_BYTES, check_round_trips, decode};

fuzz_target!(|data: &[u8]| {
    let Some((mut filter, _)) = decode::<Windowed>(data) else { return };
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

stored!(Windowed, ENCODING_VERSION,
    load_chunk: |filter, iter, bytes| filter.load_chunk(iter, bytes, MAX_BYTES).is_ok(),
    dump: |filter| filter.chunks().map(|(next, bytes)| (next, bytes.into_owned())).collect());
