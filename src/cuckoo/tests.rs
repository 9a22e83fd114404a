//! Unit tests of the cuckoo core against the vectors and statements of the reference document.

use super::*;

pub(super) const CAP: u64 = 1 << 30;

pub(super) fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex digit pair"))
        .collect()
}

pub(super) fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(super) fn reserve(
    capacity: u64,
    bucket_size: u16,
    max_iterations: u16,
    expansion: u16,
) -> CuckooFilter {
    let params = CuckooParams {
        capacity,
        bucket_size,
        max_iterations,
        expansion,
    };
    CuckooFilter::new(params, CAP).expect("filter fits")
}

pub(super) fn reserve_default(capacity: u64) -> CuckooFilter {
    reserve(capacity, 2, 20, 1)
}

/// A 38-byte header from its fields.
pub(super) fn header(
    items: u64,
    buckets: u64,
    deletes: u64,
    filters: u64,
    b: u16,
    iters: u16,
    exp: u16,
) -> Vec<u8> {
    let mut out = Vec::new();
    for field in [items, buckets, deletes, filters] {
        out.extend_from_slice(&field.to_le_bytes());
    }
    for field in [b, iters, exp] {
        out.extend_from_slice(&field.to_le_bytes());
    }
    out
}

/// A filter of 2-bucket, 2-slot sub-filters (expansion 1) with the given slots.
pub(super) fn with_slots(items: u64, sub_filters: &[[u8; 4]]) -> CuckooFilter {
    let bytes = header(items, 2, 0, sub_filters.len() as u64, 2, 20, 1);
    let mut filter = CuckooFilter::from_header(&bytes, CAP).expect("valid header");
    for (k, slots) in sub_filters.iter().enumerate() {
        filter
            .load_chunk(4 * k as i64 + 5, slots)
            .expect("chunk inside a sub-filter");
    }
    filter
}

pub(super) fn all_slots(filter: &CuckooFilter) -> Vec<Vec<u8>> {
    filter
        .sub_filters()
        .iter()
        .map(|f| f.slots().to_vec())
        .collect()
}

#[test]
fn item_hash_vectors() {
    let cases: [(&[u8], u64, u8, u64); 4] = [
        (b"foo", 0xcdde38358fd25b01, 217, 0xcdde38785b3ca44c),
        (b"", 0, 1, 0x5bd1e995),
        (b"item0", 0xf5ad6b7065a89185, 165, 0xf5ad6b4b4be31c8c),
        (&[0x00, 0xff], 0x0b704c5cb3ae5a25, 7, 0x0b704c5e31133936),
    ];
    for (item, h1, fingerprint, h2) in cases {
        assert_eq!(
            ItemHash::of(item),
            ItemHash {
                h1,
                h2,
                fingerprint
            }
        );
    }
}

#[test]
fn foo_lands_at_byte_514_of_a_512_bucket_filter() {
    let hash = ItemHash::of(b"foo");
    assert_eq!((hash.h1 % 512, hash.h2 % 512), (257, 76));
    let mut filter = reserve_default(1000);
    filter.insert(b"foo", CAP).expect("room");
    let slots = filter.sub_filters()[0].slots();
    assert_eq!(slots[514], 217);
    assert_eq!(slots.iter().filter(|&&s| s != 0).count(), 1);
}

#[test]
fn bucket_count_is_next_power_of_two_of_capacity_over_bucket_size() {
    let cases = [
        (1000, 2, 512),
        (1001, 2, 512),
        (1025, 2, 512),
        (1026, 2, 1024),
        (1000, 3, 512),
    ];
    for (capacity, bucket_size, buckets) in cases {
        assert_eq!(reserve(capacity, bucket_size, 20, 1).num_buckets(), buckets);
    }
    assert_eq!(reserve(1000, 255, 20, 1).num_buckets(), 4);
    assert_eq!(reserve(1, 2, 20, 1).num_buckets(), 1);
    assert_eq!(reserve(0, 2, 20, 1).num_buckets(), 1);
}

#[test]
fn expansion_is_rounded_up_to_a_power_of_two() {
    let cases = [(0, 0), (1, 1), (2, 2), (3, 4), (100, 128), (32768, 32768)];
    for (requested, stored) in cases {
        assert_eq!(reserve(1000, 2, 20, requested).expansion(), stored);
    }
    let params = CuckooParams {
        expansion: 32769,
        ..CuckooParams::default()
    };
    assert_eq!(
        CuckooFilter::new(params, CAP),
        Err(CuckooError::Invalid("expansion"))
    );
}

#[test]
fn info_table_of_the_reference() {
    // (capacity, bucket size, max iterations, expansion) -> (size, buckets, expansion)
    let cases = [
        ((4, 2, 20, 1), (60, 2, 1)),
        ((1000, 2, 20, 1), (1080, 512, 1)),
        ((1000, 4, 50, 2), (1080, 256, 2)),
        ((1000, 3, 20, 1), (1592, 512, 1)),
        ((1000000, 2, 20, 1), (1048632, 524288, 1)),
        ((1024, 2, 20, 1), (1080, 512, 1)),
        ((10000, 2, 20, 1), (16440, 8192, 1)),
        ((100000, 2, 20, 1), (131128, 65536, 1)),
    ];
    for ((capacity, b, iters, exp), (size, buckets, expansion)) in cases {
        let filter = reserve(capacity, b, iters, exp);
        assert_eq!(filter.size_bytes(), size);
        assert_eq!(filter.num_buckets(), buckets);
        assert_eq!(filter.num_filters(), 1);
        assert_eq!(filter.bucket_size(), b);
        assert_eq!(filter.expansion(), expansion);
        assert_eq!(filter.max_iterations(), iters);
        assert_eq!((filter.num_items(), filter.num_deletes()), (0, 0));
    }
    assert_eq!(
        CuckooFilter::new(CuckooParams::default(), CAP),
        Ok(reserve_default(1024))
    );
}

#[test]
fn max_expansions_reached_at_the_126th_add() {
    // Capacity 4 and expansion 1: 32 sub-filters of 2 buckets once 125 items are stored, so the
    // command layer's `num_filters >= 32` check refuses the 126th add.
    let mut filter = reserve(4, 2, 20, 1);
    let mut added = 0;
    while filter.num_filters() < 32 {
        filter
            .insert(format!("item{added}").as_bytes(), CAP)
            .expect("growth fits");
        added += 1;
    }
    assert_eq!((added, filter.num_items()), (125, 125));
    assert_eq!(filter.size_bytes(), 40 + 32 * (16 + 4));
}

#[test]
fn growth_multiplies_buckets_by_expansion_per_sub_filter() {
    let mut filter = reserve(8, 2, 20, 2);
    let mut i = 0;
    while filter.num_filters() < 4 {
        filter
            .insert(format!("grow{i}").as_bytes(), CAP)
            .expect("growth fits");
        i += 1;
    }
    let buckets: Vec<u64> = filter
        .sub_filters()
        .iter()
        .map(SubFilter::num_buckets)
        .collect();
    assert_eq!(buckets, [4, 8, 16, 32]);
    assert_eq!(filter.size_bytes(), 40 + 4 * 16 + 2 * (4 + 8 + 16 + 32));
}

#[test]
fn duplicates_counts_and_unique_inserts() {
    let mut filter = reserve_default(1000);
    assert_eq!(filter.insert_unique(b"foo", CAP), Ok(true));
    assert_eq!(filter.insert_unique(b"foo", CAP), Ok(false));
    filter.insert(b"foo", CAP).expect("room");
    assert_eq!((filter.count(b"foo"), filter.num_items()), (2, 2));
    assert!(filter.delete(b"foo"));
    assert_eq!(
        (
            filter.count(b"foo"),
            filter.num_items(),
            filter.num_deletes()
        ),
        (1, 1, 1)
    );
    assert!(filter.delete(b"foo"));
    assert!(!filter.delete(b"foo"));
    assert!(!filter.contains(b"foo"));
    assert_eq!((filter.num_items(), filter.num_deletes()), (0, 2));
}

/// The first `count` items `c<n>` whose fingerprint and bucket among `buckets` (a power of
/// two) are `item`'s: what a client finds by brute force on the public hash.
fn colliders(item: &[u8], buckets: u64, count: usize) -> Vec<Vec<u8>> {
    let target = ItemHash::of(item);
    (0u64..)
        .map(|n| format!("c{n}").into_bytes())
        .filter(|candidate| {
            let hash = ItemHash::of(candidate);
            hash.fingerprint == target.fingerprint && hash.h1 % buckets == target.h1 % buckets
        })
        .take(count)
        .collect()
}

#[test]
fn copies_of_one_bucket_pair_and_fingerprint_grow_as_redisbloom() {
    // 8 buckets of 2: the pair holds 4 copies; the 5th cannot be placed (the kick walk could
    // only swap equal values, and is skipped) and adds a sub-filter, as RedisBloom's does.
    let mut filter = reserve(16, 2, 20, 1);
    let items = colliders(b"seed", 8, 12);
    for item in &items[..4] {
        filter.insert(item, CAP).expect("room in the pair");
    }
    assert_eq!(filter.num_filters(), 1);
    let first = filter.clone();
    filter
        .insert(&items[4], CAP)
        .expect("a sub-filter is added");
    assert_eq!((filter.num_filters(), filter.num_items()), (2, 5));
    // The first sub-filter is untouched by the skipped walk: only the new one changed.
    assert_eq!(filter.filters[0], first.filters[0]);
    for item in &items[5..] {
        filter.insert(item, CAP).expect("room or growth");
    }
    assert!(items.iter().all(|item| filter.contains(item)));
}

#[test]
fn an_item_added_again_and_again_is_counted_as_redisbloom() {
    let mut filter = reserve_default(1000);
    for _ in 0..9 {
        filter.insert(b"again", CAP).expect("room or growth");
    }
    // Bucket size 2: 4 copies a sub-filter, so the 5th and the 9th each added one.
    assert_eq!((filter.count(b"again"), filter.num_filters()), (9, 3));
    assert!(filter.delete(b"again"));
    assert_eq!(filter.count(b"again"), 8);
}

#[test]
fn count_sees_both_candidates_of_a_two_bucket_filter() {
    // With 2 buckets an even fingerprint has both candidates in one bucket (counted twice).
    let item = b"foo";
    let mut filter = reserve(4, 2, 20, 1);
    filter.insert(item, CAP).expect("room");
    assert_eq!(ItemHash::of(item).fingerprint % 2, 1);
    assert_eq!(filter.count(item), 1);
    let even = (0..)
        .map(|i| format!("even{i}"))
        .find(|i| ItemHash::of(i.as_bytes()).fingerprint % 2 == 0);
    let even = even.expect("an even fingerprint");
    let mut filter = reserve(4, 2, 20, 1);
    filter.insert(even.as_bytes(), CAP).expect("room");
    assert_eq!(filter.count(even.as_bytes()), 2);
}

#[test]
fn full_filter_without_expansion_is_left_unchanged() {
    let mut filter = reserve(4, 2, 20, 0);
    let mut stored = 0;
    let before = loop {
        let snapshot = filter.clone();
        match filter.insert(format!("full{stored}").as_bytes(), CAP) {
            Ok(()) => stored += 1,
            Err(error) => {
                assert_eq!(error, InsertError::Full);
                break snapshot;
            }
        }
    };
    assert_eq!(filter, before);
    assert_eq!((filter.num_items(), filter.num_filters()), (stored, 1));
    // The reference's walk retraces itself early: the third slot is the last one it fills.
    assert_eq!(stored, 3);
    assert!((0..stored).all(|i| filter.contains(format!("full{i}").as_bytes())));
}

#[test]
fn growth_over_the_cap_is_a_memory_failure_and_changes_nothing() {
    // Room for exactly one 4-byte sub-filter: 40 + 16 + 4 bytes.
    let params = CuckooParams {
        capacity: 4,
        ..CuckooParams::default()
    };
    let mut filter = CuckooFilter::new(params, 60).expect("fits exactly");
    assert_eq!(CuckooFilter::new(params, 59), Err(CuckooError::TooLarge));
    let mut stored = 0;
    let before = loop {
        let snapshot = filter.clone();
        match filter.insert(format!("cap{stored}").as_bytes(), 60) {
            Ok(()) => stored += 1,
            Err(error) => {
                assert_eq!(error, InsertError::OutOfMemory);
                break snapshot;
            }
        }
    };
    assert_eq!(filter, before);
    assert_eq!(filter.num_items(), stored);
    assert_eq!(stored, 4);
    // One more sub-filter fits under a cap of 80.
    filter
        .insert(format!("cap{stored}").as_bytes(), 80)
        .expect("grows once");
    assert_eq!((filter.num_filters(), filter.size_bytes()), (2, 80));
}

#[test]
fn absurd_sizes_are_refused_before_allocating() {
    let huge = |capacity, bucket_size| CuckooParams {
        capacity,
        bucket_size,
        ..CuckooParams::default()
    };
    // 2^56 buckets and more, whatever the cap.
    assert_eq!(
        CuckooFilter::new(huge(100_000_000_000_000_000, 2), u64::MAX),
        Err(CuckooError::TooLarge)
    );
    assert_eq!(
        CuckooFilter::new(huge(u64::MAX, 1), u64::MAX),
        Err(CuckooError::TooLarge)
    );
    // A 2 TiB sub-filter: over the 4 GiB sub-filter ceiling even with an unlimited cap.
    assert_eq!(
        CuckooFilter::new(huge(1 << 41, 2), u64::MAX),
        Err(CuckooError::TooLarge)
    );
    // 1 GiB + 56 bytes against a 1 GiB cap.
    assert_eq!(
        CuckooFilter::new(huge(1 << 31, 2), CAP),
        Err(CuckooError::TooLarge)
    );
    assert_eq!(
        CuckooFilter::new(huge(1000, 0), CAP),
        Err(CuckooError::Invalid("bucket size"))
    );
}

#[test]
fn delete_compacts_when_deletes_exceed_a_tenth_of_the_items() {
    // `foo` has fingerprint 217 and candidate buckets 1 and 0 in a 2-bucket sub-filter.
    // After deleting it, 9 items and 1 delete: 1 > 0.9, so the newest sub-filter's lone
    // fingerprint 3 moves from bucket 1 into the older sub-filter and the newest is dropped.
    let mut filter = with_slots(10, &[[1, 0, 0, 0], [0, 0, 217, 3]]);
    assert!(filter.delete(b"foo"));
    assert_eq!(all_slots(&filter), [vec![1, 0, 3, 0]]);
    assert_eq!(
        (
            filter.num_items(),
            filter.num_deletes(),
            filter.num_filters()
        ),
        (9, 0, 1)
    );

    // 10 items left and 1 delete: 1 > 10 * 0.10 (exactly 1.0 in doubles) is false.
    let mut filter = with_slots(11, &[[1, 0, 0, 0], [0, 0, 217, 3]]);
    assert!(filter.delete(b"foo"));
    assert_eq!(all_slots(&filter), [vec![1, 0, 0, 0], vec![0, 0, 0, 3]]);
    assert_eq!(
        (
            filter.num_items(),
            filter.num_deletes(),
            filter.num_filters()
        ),
        (10, 1, 2)
    );
}

#[test]
fn compaction_keeps_going_only_when_asked() {
    // Sub-filter 2 holds 8 (even: both candidates are bucket 1, full everywhere below), so
    // it cannot move. Sub-filter 1 holds 7 and 9 (odd: candidates 1 and 0).
    let slots = [[1, 0, 5, 6], [0, 0, 7, 9], [0, 0, 8, 0]];
    let mut stopping = with_slots(6, &slots);
    stopping.compact(false);
    assert_eq!(all_slots(&stopping), slots.map(Vec::from));

    let mut continuing = with_slots(6, &slots);
    continuing.compact(true);
    let expected = [vec![1, 7, 5, 6], vec![0, 0, 0, 9], vec![0, 0, 8, 0]];
    assert_eq!(all_slots(&continuing), expected);
    assert_eq!(continuing.num_filters(), 3);

    // An emptied newest sub-filter is dropped, then the next one is tried.
    let mut emptied = with_slots(3, &[[0, 0, 0, 0], [0, 0, 3, 0], [0, 0, 0, 0]]);
    emptied.compact(false);
    assert_eq!(all_slots(&emptied), [vec![0, 0, 3, 0]]);
}

#[test]
fn compaction_resets_deletes_and_keeps_members() {
    let mut filter = reserve(16, 2, 20, 1);
    let items: Vec<String> = (0..400).map(|i| format!("member{i}")).collect();
    for item in &items {
        filter.insert(item.as_bytes(), CAP).expect("growth fits");
    }
    let grown = filter.num_filters();
    for item in items.iter().step_by(2) {
        assert!(filter.delete(item.as_bytes()));
    }
    filter.compact(true);
    assert_eq!(filter.num_deletes(), 0);
    assert_eq!(filter.num_items(), 200);
    assert_eq!((grown, filter.num_filters()), (26, 14));
    assert!(items
        .iter()
        .skip(1)
        .step_by(2)
        .all(|item| filter.contains(item.as_bytes())));
}

#[test]
fn no_false_negatives_with_interleaved_deletes() {
    let mut filter = CuckooFilter::new(CuckooParams::default(), CAP).expect("default filter");
    let mut others = 0u64;
    let mut deleted = 0u64;
    for i in 0..100_000u64 {
        filter
            .insert(format!("keep/{i}").as_bytes(), CAP)
            .expect("growth fits");
        if i % 3 == 0 {
            filter
                .insert(format!("other/{others}").as_bytes(), CAP)
                .expect("growth fits");
            others += 1;
        }
        if i % 5 == 4 {
            assert!(filter.delete(format!("other/{deleted}").as_bytes()));
            deleted += 1;
        }
    }
    assert_eq!((others, deleted), (33_334, 20_000));
    assert_eq!(filter.num_items(), 100_000 + others - deleted);
    let missing = (0..100_000u64).filter(|i| !filter.contains(format!("keep/{i}").as_bytes()));
    assert_eq!(missing.count(), 0);
    assert!((deleted..others).all(|i| filter.contains(format!("other/{i}").as_bytes())));
}

/// A fuzzing regression: a LOADCHUNK header may describe 65,535 one-bucket sub-filters, and
/// chunks may fill every slot. Compacting that used to try every older sub-filter for every
/// fingerprint (about 10^10 steps, a server blocked for minutes); full sub-filters are now
/// skipped. Nothing can move, so the filter stays as it was.
#[test]
fn compacting_many_full_sub_filters_changes_nothing() {
    let count = 65_535u64;
    let mut filter = CuckooFilter::from_header(&header(2 * count, 1, 0, count, 2, 20, 1), CAP)
        .expect("valid header");
    for k in 0..count as i64 {
        let fingerprints = [1 + (k % 255) as u8, 1 + ((k / 255) % 255) as u8];
        filter
            .load_chunk(2 * k + 3, &fingerprints)
            .expect("chunk inside sub-filter k");
    }
    let before = filter.clone();
    filter.compact(true);
    assert_eq!(all_slots(&filter), all_slots(&before));
    assert_eq!(filter.num_filters(), 65_535);
    assert_eq!(filter.num_deletes(), 0);
}
