//! CF.* syntax: exact specs and exact errors, in RedisBloom's order (reference §4.10–4.19).

use super::ArgError::*;
use super::CfOption::*;
use super::*;
use crate::syntax::tests::{assert_parses, with_args};

fn reserve(words: &[&str]) -> Result<CuckooParams, ArgError> {
    with_args(words, |args| parse_cf_reserve(args))
}

fn reserve_k(tail: &[&str]) -> Result<CuckooParams, ArgError> {
    reserve(&[&["CF.RESERVE", "k"], tail].concat())
}

fn insert(words: &[&str]) -> Result<CfInsert, ArgError> {
    with_args(words, |args| parse_cf_insert(args, 1024))
}

fn params(capacity: u64, bucket_size: u16, max_iterations: u16, expansion: u16) -> CuckooParams {
    CuckooParams {
        capacity,
        bucket_size,
        max_iterations,
        expansion,
    }
}

#[test]
fn reserve_reads_capacity_and_keywords() {
    assert_eq!(reserve_k(&["1000"]), Ok(params(1000, 2, 20, 1)));
    let all = [
        "1000",
        "BUCKETSIZE",
        "4",
        "maxiterations",
        "50",
        "Expansion",
        "2",
    ];
    assert_eq!(reserve_k(&all), Ok(params(1000, 4, 50, 2)));
    // Unknown pairs are ignored; the first occurrence wins.
    assert_eq!(reserve_k(&["1000", "FOO", "5"]), Ok(params(1000, 2, 20, 1)));
    let twice = ["1000", "EXPANSION", "4", "EXPANSION", "8"];
    assert_eq!(reserve_k(&twice), Ok(params(1000, 2, 20, 4)));
    let edges = [
        "510",
        "BUCKETSIZE",
        "255",
        "MAXITERATIONS",
        "65535",
        "EXPANSION",
        "32768",
    ];
    assert_eq!(reserve_k(&edges), Ok(params(510, 255, 65535, 32768)));
    let low = [
        "2",
        "BUCKETSIZE",
        "1",
        "MAXITERATIONS",
        "1",
        "EXPANSION",
        "0",
    ];
    assert_eq!(reserve_k(&low), Ok(params(2, 1, 1, 0)));
}

#[test]
fn reserve_checks_in_redisbloom_order() {
    assert_parses(
        reserve_k,
        &[
            (&[], Err(Arity)),
            (&["100", "x"], Err(Arity)),
            (&["1e3"], Err(BadCapacity)),
            (&["x", "BUCKETSIZE", "0"], Err(BadCapacity)),
        ],
    );
    // MAXITERATIONS, then BUCKETSIZE, then EXPANSION, whatever their positions.
    let all_bad = [
        "100",
        "EXPANSION",
        "x",
        "BUCKETSIZE",
        "x",
        "MAXITERATIONS",
        "x",
    ];
    assert_eq!(reserve_k(&all_bad), Err(Unparsable(MaxIterations)));
    let two_bad = ["100", "EXPANSION", "-1", "BUCKETSIZE", "256"];
    assert_eq!(reserve_k(&two_bad), Err(OutOfRange(BucketSize)));
    assert_parses(
        reserve_k,
        &[
            (&["100", "EXPANSION", "32769"], Err(OutOfRange(Expansion))),
            (
                &["100", "MAXITERATIONS", "0"],
                Err(OutOfRange(MaxIterations)),
            ),
            (
                &["100", "MAXITERATIONS", "65536"],
                Err(OutOfRange(MaxIterations)),
            ),
            (&["100", "BUCKETSIZE", "0"], Err(OutOfRange(BucketSize))),
            (&["100", "BUCKETSIZE", "1.5"], Err(Unparsable(BucketSize))),
        ],
    );
    // Keywords are checked before the capacity is compared with the bucket size.
    let small = ["3", "BUCKETSIZE", "2", "EXPANSION", "-1"];
    assert_eq!(reserve_k(&small), Err(OutOfRange(Expansion)));
    assert_parses(
        reserve_k,
        &[
            (&["3", "BUCKETSIZE", "2"], Err(CapacityTooSmall)),
            (&["3"], Err(CapacityTooSmall)),
            (&["0"], Err(CapacityTooSmall)),
            (&["-100"], Err(CapacityTooSmall)),
            (&["4"], Ok(params(4, 2, 20, 1))),
        ],
    );
}

#[test]
fn reserve_keyword_as_the_last_argument_is_its_parse_error() {
    // Deviation D4: RedisBloom reads past argv here; bloomrs reports the keyword's error.
    let cases = [
        ("MAXITERATIONS", MaxIterations),
        ("BUCKETSIZE", BucketSize),
        ("EXPANSION", Expansion),
    ];
    for (keyword, option) in cases {
        assert_eq!(reserve_k(&["100", "x", keyword]), Err(Unparsable(option)));
    }
}

#[test]
fn reserve_keywords_are_looked_for_after_the_capacity_only() {
    // Deviation D3: a key named like a keyword is just a key.
    assert_eq!(
        reserve(&["CF.RESERVE", "EXPANSION", "100"]),
        Ok(params(100, 2, 20, 1))
    );
    let named = ["CF.RESERVE", "MAXITERATIONS", "1000"];
    assert_eq!(reserve(&named), Ok(params(1000, 2, 20, 1)));
    // Every optional position is scanned, values included: MAXITERATIONS is found as a
    // keyword (7) and is also the unparsable value of EXPANSION.
    let value = ["100", "FOO", "EXPANSION", "MAXITERATIONS", "7"];
    assert_eq!(reserve_k(&value), Err(Unparsable(Expansion)));
}

#[test]
fn reserve_capacity_reaches_i64_max() {
    let max = reserve_k(&["9223372036854775807"]).map(|p| p.capacity);
    assert_eq!(max, Ok(i64::MAX as u64));
    assert_eq!(reserve_k(&["9223372036854775808"]), Err(BadCapacity));
    assert_eq!(reserve_k(&["-9223372036854775808"]), Err(CapacityTooSmall));
}

#[test]
fn insert_reads_options_until_items() {
    let plain = CfInsert {
        capacity: Some(1024),
        items_at: 3,
    };
    assert_eq!(insert(&["CF.INSERT", "k", "ITEMS", "a"]), Ok(plain));
    let spec = insert(&["CF.INSERT", "k", "CAPACITY", "4", "ITEMS", "a", "b"]);
    assert_eq!(
        spec,
        Ok(CfInsert {
            capacity: Some(4),
            items_at: 5
        })
    );
    let nocreate = insert(&["CF.INSERT", "k", "NOCREATE", "CAPACITY", "10", "ITEMS", "a"]);
    assert_eq!(
        nocreate,
        Ok(CfInsert {
            capacity: None,
            items_at: 6
        })
    );
}

#[test]
fn insert_looks_only_at_the_first_letter() {
    let spec = insert(&[
        "CF.INSERT",
        "k",
        "nx",
        "cx",
        "100",
        "iTeMsX",
        "ITEMS",
        "NOCREATE",
    ]);
    assert_eq!(
        spec,
        Ok(CfInsert {
            capacity: None,
            items_at: 6
        })
    );
    assert_eq!(
        insert(&["CF.INSERT", "k", "", "ITEMS", "a"]),
        Err(UnknownOption)
    );
    assert_eq!(
        insert(&["CF.INSERT", "k", "ERROR", "0.1", "ITEMS", "a"]),
        Err(UnknownOption)
    );
}

#[test]
fn insert_repeated_capacity_last_wins_and_each_is_checked() {
    let twice = [
        "CF.INSERT",
        "k",
        "CAPACITY",
        "10",
        "CAPACITY",
        "20",
        "ITEMS",
        "a",
    ];
    assert_eq!(insert(&twice).map(|s| s.capacity), Ok(Some(20)));
    let early_small = [
        "CF.INSERT",
        "k",
        "CAPACITY",
        "3",
        "CAPACITY",
        "20",
        "ITEMS",
        "a",
    ];
    assert_eq!(insert(&early_small), Err(CapacityTooSmall));
}

#[test]
fn insert_checks_in_redisbloom_order() {
    assert_parses(
        insert,
        &[
            (&["CF.INSERT", "k", "ITEMS"], Err(Arity)),
            (&["CF.INSERT", "k", "NOCREATE", "ITEMS"], Err(Arity)),
            (&["CF.INSERT", "k", "NOCREATE", "NOCREATE"], Err(Arity)),
            (&["CF.INSERT", "k", "NOCREATE", "CAPACITY"], Err(Arity)),
            (&["CF.INSERT", "k", "CAPACITY", "x"], Err(BadCapacity)),
        ],
    );
    // Checked while parsing: before a missing ITEMS is noticed, even with NOCREATE.
    assert_parses(
        insert,
        &[
            (
                &["CF.INSERT", "k", "NOCREATE", "CAPACITY", "3"],
                Err(CapacityTooSmall),
            ),
            (
                &[
                    "CF.INSERT",
                    "k",
                    "CAPACITY",
                    "-9223372036854775808",
                    "ITEMS",
                    "a",
                ],
                Err(CapacityTooSmall),
            ),
            (
                &[
                    "CF.INSERT",
                    "k",
                    "CAPACITY",
                    "9223372036854775808",
                    "ITEMS",
                    "a",
                ],
                Err(BadCapacity),
            ),
        ],
    );
    let max = insert(&[
        "CF.INSERT",
        "k",
        "CAPACITY",
        "9223372036854775807",
        "ITEMS",
        "a",
    ]);
    assert_eq!(max.map(|s| s.capacity), Ok(Some(i64::MAX as u64)));
}

#[test]
fn scandump_and_loadchunk_iterators() {
    let scan = |words: &[&str]| with_args(words, |args| parse_cf_scandump(args));
    assert_parses(
        scan,
        &[
            (&["CF.SCANDUMP", "k", "0"], Ok(0)),
            (&["CF.SCANDUMP", "k", "9223372036854775807"], Ok(i64::MAX)),
            (&["CF.SCANDUMP", "k", "-1"], Err(InvalidPosition)),
            (&["CF.SCANDUMP", "k", "x"], Err(InvalidPosition)),
            (&["CF.SCANDUMP", "k", "0", "x"], Err(Arity)),
        ],
    );
    let load = |words: &[&str]| with_args(words, |args| parse_cf_loadchunk(args));
    assert_parses(
        load,
        &[
            (&["CF.LOADCHUNK", "k", "1", "header"], Ok(1)),
            (&["CF.LOADCHUNK", "k", "-5", ""], Ok(-5)),
            (&["CF.LOADCHUNK", "k", "0", ""], Err(InvalidPosition)),
            (&["CF.LOADCHUNK", "k", "one", ""], Err(InvalidPosition)),
            (&["CF.LOADCHUNK", "k", "1"], Err(Arity)),
        ],
    );
}
