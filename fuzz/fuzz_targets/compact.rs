//! Compact filters: any RDB payload, or any LOADCHUNK header and chunks, either builds a
//! filter the validator accepts or is refused, never panics; whatever is accepted saves and
//! loads back identically, answers lookups, and takes adds (and deletes) that keep it valid,
//! through enough writes to split segments (an older encoding's value converted first).
#![no_main]

use bloomrs::compact::{CompactFilter, ENCODING_VERSION};
use libfuzzer_sys::fuzz_target;

#[path = "stored.rs"]
#[macro_use]
mod stored;
use stored::{MAX_BYTES, check_round_trips, decode};

fuzz_target!(|data: &[u8]| {
    let Some((mut filter, _)) = decode::<CompactFilter>(data) else { return };
    if !filter.is_loaded() {
        let before = filter.clone();
        assert!(filter.add(b"fuzz", MAX_BYTES).is_err());
        assert_eq!(filter, before, "a loading filter takes no adds");
        return;
    }
    filter.validate(MAX_BYTES).expect("accepted filters are valid");
    check_round_trips(&filter);
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
        Err(_) => {
            assert_eq!(filter, before, "a refused add changes nothing");
            return;
        }
    }
    // Writes enough to split segments (issue 35: a value whose split position or counts
    // were misstated must not load and lose items a few writes later): every item added
    // stays present, and the value stays valid.
    let mut added = Vec::new();
    for i in 0..1200u32 {
        let item = i.to_le_bytes();
        if filter.add(&item, MAX_BYTES).is_err() {
            break;
        }
        added.push(item);
    }
    filter.validate(u64::MAX).expect("writes keep it valid");
    assert!(added.iter().all(|item| filter.contains(item)), "an added item reads absent");
});

stored!(CompactFilter, ENCODING_VERSION,
    load_chunk: |filter, iter, bytes| filter.load_chunk(iter, bytes, MAX_BYTES).is_ok(),
    dump: |filter| filter.each_chunk().map(|(i, b)| (i, b.into_owned())).collect());
