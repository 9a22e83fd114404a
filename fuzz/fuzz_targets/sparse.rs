//! Sparse filters: any RDB payload, or any LOADCHUNK header and chunks, either builds a filter
//! the validator accepts or is refused, never panics; whatever is accepted saves and loads
//! back identically, and promotes to a chain that holds every item it held.
#![no_main]

use bloomrs::sparse::{Sparse, ENCODING_VERSION};
use libfuzzer_sys::fuzz_target;

#[path = "stored.rs"]
#[macro_use]
mod stored;
use stored::{MAX_BYTES, check_round_trips, decode};

fuzz_target!(|data: &[u8]| {
    let Some((mut filter, _)) = decode::<Sparse>(data) else { return };
    filter.validate(MAX_BYTES).expect("accepted filters are valid");
    check_round_trips(&filter);
    let most = filter.max_items(u64::MAX).expect("valid filters fit");
    let _ = filter.add(b"fuzz", most);
    let dense = filter.promote(MAX_BYTES).expect("valid filters promote");
    assert_eq!(dense.size, filter.len());
    if filter.contains(b"fuzz") {
        assert!(dense.contains(b"fuzz"));
    }
});

stored!(Sparse, ENCODING_VERSION,
    load_chunk: |filter, iter, bytes| filter.load_chunk(iter, bytes, MAX_BYTES).is_ok(),
    dump: |filter| filter.chunks().collect());
