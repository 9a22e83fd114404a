//! Tests of the RDB codec: round trips, the reference's DUMP example, the legacy layout and
//! every malformed-value rule.

use super::fixture_tests::decode_dump;
use super::tests::{all_slots, hex, reserve, CAP};
use super::*;
use crate::rdb::{Field, LoadError, MemoryRdb};

fn saved(filter: &CuckooFilter) -> MemoryRdb {
    let mut rdb = MemoryRdb::new();
    filter.save(&mut rdb);
    rdb
}

fn load_fields(fields: Vec<Field>, encver: i32) -> Result<CuckooFilter, LoadError> {
    CuckooFilter::load(
        &mut MemoryRdb {
            fields: fields.into(),
        },
        encver,
        CAP,
    )
}

#[test]
fn rdb_round_trip() {
    let mut filter = reserve(8, 2, 20, 2);
    for i in 0..40 {
        filter
            .insert(format!("rdb{i}").as_bytes(), CAP)
            .expect("growth fits");
    }
    assert!(filter.delete(b"rdb0"));
    let mut rdb = saved(&filter);
    let loaded = CuckooFilter::load(&mut rdb, ENCODING_VERSION, CAP).expect("loads");
    assert!(rdb.fields.is_empty());
    assert_eq!(loaded, filter);
    assert_eq!(saved(&loaded), saved(&filter));
}

#[test]
fn rdb_dump_example_of_the_reference() {
    // CF.RESERVE c 8 EXPANSION 2, CF.INSERT c ITEMS a..l, CF.DEL c a, then DUMP c.
    let payload = hex(concat!(
        "07813016e5a28982140402020204020b0201020202140202020405080000bc00cba910060208051000000000",
        "bb001c008500cd0000004b15000a00ef6696760c86ebbc"
    ));
    let (encver, fields) = decode_dump(&payload);
    let mut filter = reserve(8, 2, 20, 2);
    for item in "abcdefghijkl".bytes() {
        filter.insert(&[item], CAP).expect("growth fits");
    }
    assert!(filter.delete(b"a"));
    assert_eq!(Vec::from(saved(&filter).fields), fields);
    assert_eq!(load_fields(fields, encver), Ok(filter));
}

#[test]
fn rdb_legacy_layout() {
    let u = Field::Unsigned;
    let slots = |fill: u8| Field::Buffer(vec![fill; 8]);
    for encver in 0..ENCODING_VERSION {
        let fields = vec![u(2), u(4), u(3), slots(0), slots(5)];
        let loaded = load_fields(fields, encver).expect("legacy value loads");
        let counters = (
            loaded.num_filters(),
            loaded.num_buckets(),
            loaded.num_items(),
        );
        assert_eq!((counters, loaded.num_deletes()), ((2, 4, 3), 0));
        let defaults = (
            loaded.bucket_size(),
            loaded.max_iterations(),
            loaded.expansion(),
        );
        assert_eq!(defaults, (2, 20, 1));
        assert_eq!(all_slots(&loaded), [vec![0; 8], vec![5; 8]]);
        let mut again = saved(&loaded);
        assert_eq!(
            CuckooFilter::load(&mut again, ENCODING_VERSION, CAP),
            Ok(loaded)
        );
    }
    let mismatched = vec![u(1), u(4), u(0), Field::Buffer(vec![0; 16])];
    assert_eq!(
        load_fields(mismatched, 3),
        Err(LoadError::Invalid("sub-filter length"))
    );
}

#[test]
fn rdb_malformed_values_fail_cleanly() {
    let u = Field::Unsigned;
    // numFilters, numBuckets, numItems, numDeletes, bucketSize, maxIterations, expansion.
    let value = |top: [u64; 7], subs: Vec<Field>| {
        let mut fields: Vec<Field> = top.iter().map(|&v| u(v)).collect();
        fields.extend(subs);
        fields
    };
    let one = || vec![u(4), Field::Buffer(vec![0; 8])];
    let two = || [one(), one()].concat();
    let short = || vec![u(4), Field::Buffer(vec![0; 7])];
    let invalid = |what| Err(LoadError::Invalid(what));
    // Top-level fields, sub-filters, encoding version, what loading answers.
    type Case = ([u64; 7], Vec<Field>, i32, Result<CuckooFilter, LoadError>);
    #[rustfmt::skip]
    let cases: Vec<Case> = vec![
        ([1, 4, 0, 0, 2, 20, 1], one(), 5, Err(LoadError::UnknownVersion(5))),
        ([1, 4, 0, 0, 2, 20, 1], one(), -1, Err(LoadError::UnknownVersion(-1))),
        ([0, 4, 0, 0, 2, 20, 1], vec![], 4, invalid("number of filters")),
        ([65536, 4, 0, 0, 2, 20, 1], one(), 4, invalid("number of filters")),
        ([1, 0, 0, 0, 2, 20, 1], one(), 4, invalid("number of buckets")),
        ([1, 3, 0, 0, 2, 20, 1], one(), 4, invalid("number of buckets")),
        ([1, 4, 0, 0, 0, 20, 1], one(), 4, invalid("bucket size")),
        ([1, 4, 0, 0, 256, 20, 1], one(), 4, invalid("bucket size")),
        ([1, 4, 0, 0, 65536, 20, 1], one(), 4, invalid("bucket size")),
        ([1, 4, 0, 0, 2, 0, 1], one(), 4, invalid("max iterations")),
        ([1, 4, 0, 0, 2, 1 << 16, 1], one(), 4, invalid("max iterations")),
        ([1, 4, 0, 0, 2, 20, 1 << 16], one(), 4, invalid("expansion")),
        ([2, 4, 0, 0, 2, 20, 0], two(), 4, invalid("expansion")),
        ([2, 4, 0, 0, 2, 20, 2], two(), 4, invalid("sub-filter bucket count")),
        ([1, 4, 0, 0, 2, 20, 1], short(), 4, invalid("sub-filter length")),
        ([1, 1 << 56, 0, 0, 2, 20, 1], vec![], 4, Err(LoadError::TooLarge)),
        ([1, 1 << 40, 0, 0, 1, 20, 1], vec![], 4, Err(LoadError::TooLarge)),
        ([1, 1 << 29, 0, 0, 2, 20, 1], vec![], 4, Err(LoadError::TooLarge)),
        ([1, 4, 0, 0, 2, 20, 1], vec![u(4)], 4, Err(LoadError::Io)),
        ([1, 4, 0, 0, 2, 20, 1], vec![], 4, Err(LoadError::Io)),
    ];
    for (top, subs, encver, expected) in cases {
        assert_eq!(load_fields(value(top, subs), encver), expected, "{top:?}");
    }
    assert_eq!(
        load_fields(vec![u(1), u(4), Field::Double(0.0)], 4),
        Err(LoadError::Io)
    );
    assert_eq!(
        load_fields(value([1, 4, 0, 0, 2, 20, 1], one()), 4).map(|f| f.size_bytes()),
        Ok(64)
    );
}
