//! BF.* syntax: exact specs and exact errors, in RedisBloom's order (reference §4.1–4.9).

use super::ArgError::*;
use super::*;
use crate::syntax::tests::{assert_parses, with_args};
use crate::syntax::ByteArgs;

fn reserve(words: &[&str]) -> Result<BloomOptions, ArgError> {
    with_args(words, |args| parse_bf_reserve(args))
}

const DEFAULTS: BloomOptions = BloomOptions {
    capacity: 100,
    error: 0.01,
    growth: DEFAULT_GROWTH,
    scaling: true,
    window: None,
    counting: false,
    compact: false,
    blocked: false,
    static_set: false,
};

fn insert(words: &[&str]) -> Result<BfInsert, ArgError> {
    with_args(words, |args| parse_bf_insert(args, DEFAULTS))
}

fn created(words: &[&str]) -> BloomOptions {
    insert(words).unwrap().create.unwrap()
}

fn options(capacity: u64, error: f64, growth: u32, scaling: bool) -> BloomOptions {
    BloomOptions {
        capacity,
        error,
        growth,
        scaling,
        window: None,
        counting: false,
        compact: false,
        blocked: false,
        static_set: false,
    }
}

#[test]
fn reserve_reads_the_positional_arguments_and_keywords() {
    let r = |tail: &[&str]| reserve(&[&["BF.RESERVE", "k", "0.01", "100"], tail].concat());
    assert_parses(
        r,
        &[
            (&[], Ok(options(100, 0.01, 2, true))),
            (&["expansion", "4"], Ok(options(100, 0.01, 4, true))),
            (&["NONSCALING"], Ok(options(100, 0.01, 2, false))),
            (
                &["NONSCALING", "nonscaling"],
                Ok(options(100, 0.01, 2, false)),
            ),
        ],
    );
    // Unknown words are ignored; the first EXPANSION wins.
    assert_parses(
        r,
        &[
            (&["a", "b", "c"], Ok(options(100, 0.01, 2, true))),
            (&["EXPANSION", "2", "y"], Ok(options(100, 0.01, 2, true))),
            (
                &["EXPANSION", "3", "EXPANSION"],
                Ok(options(100, 0.01, 3, true)),
            ),
        ],
    );
    // RedisBloom keeps 32 bits of the expansion; a larger one is refused (deviation D15).
    assert_eq!(r(&["EXPANSION", "4294967299"]), Err(ExpansionTooLarge));
}

#[test]
fn reserve_checks_in_redisbloom_order() {
    assert_parses(
        reserve,
        &[
            (&["BF.RESERVE", "k", "x", "y"], Err(BadErrorRate)),
            (&["BF.RESERVE", "k", "nan", "y"], Err(BadErrorRate)),
            (&["BF.RESERVE", "k", "1", "y"], Err(ErrorRateRange)),
            (&["BF.RESERVE", "k", "0", "100"], Err(ErrorRateRange)),
            (&["BF.RESERVE", "k", "inf", "100"], Err(ErrorRateRange)),
            (&["BF.RESERVE", "k", "0.1", "1e3"], Err(BadCapacity)),
            (&["BF.RESERVE", "k", "0.1", "1.5"], Err(BadCapacity)),
        ],
    );
    let too_big = ["BF.RESERVE", "k", "0.1", "9223372036854775808"];
    assert_eq!(reserve(&too_big), Err(BadCapacity));
    assert_eq!(
        reserve(&["BF.RESERVE", "k", "0.1", "0"]),
        Err(CapacityRange)
    );
    assert_eq!(
        reserve(&["BF.RESERVE", "k", "0.1", "-5"]),
        Err(CapacityRange)
    );
    let r = |tail: &[&str]| reserve(&[&["BF.RESERVE", "k", "0.01", "100"], tail].concat());
    // A trailing EXPANSION is reported before NONSCALING.
    assert_parses(
        r,
        &[
            (&["NONSCALING", "EXPANSION"], Err(NoExpansion)),
            (&["EXPANSION", "2", "NONSCALING"], Err(NonScalingExpansion)),
            (&["NONSCALING", "EXPANSION", "x"], Err(NonScalingExpansion)),
            (&["EXPANSION", "x"], Err(BadExpansion)),
            (&["EXPANSION", "0"], Err(ExpansionRange)),
            (&["EXPANSION", "-1"], Err(ExpansionRange)),
            (&["EXPANSION", "4294967296"], Err(ExpansionTooLarge)),
            (
                &["EXPANSION", "9223372036854775807"],
                Err(ExpansionTooLarge),
            ),
        ],
    );
    assert_eq!(
        r(&["EXPANSION", "4294967295"]).map(|o| o.growth),
        Ok(u32::MAX)
    );
}

#[test]
fn reserve_arity_is_four_to_seven() {
    assert_eq!(reserve(&["BF.RESERVE", "k", "0.01"]), Err(Arity));
    let eight = [
        "BF.RESERVE",
        "k",
        "x",
        "y",
        "EXPANSION",
        "3",
        "EXPANSION",
        "4",
    ];
    assert_eq!(reserve(&eight), Err(Arity));
}

#[test]
fn reserve_capacity_reaches_i64_max() {
    let max = ["BF.RESERVE", "k", "0.5", "9223372036854775807"];
    assert_eq!(reserve(&max), Ok(options(i64::MAX as u64, 0.5, 2, true)));
}

#[test]
fn reserve_keywords_are_looked_for_after_the_positional_arguments_only() {
    // Deviation D3: a key named like a keyword is just a key.
    assert_eq!(
        reserve(&["BF.RESERVE", "NONSCALING", "0.01", "100"]),
        Ok(options(100, 0.01, 2, true))
    );
    assert_eq!(
        reserve(&["BF.RESERVE", "EXPANSION", "0.01", "100"]),
        Ok(options(100, 0.01, 2, true))
    );
}

#[test]
fn insert_reads_options_until_items() {
    let spec = insert(&["BF.INSERT", "k", "CAPACITY", "1000", "ITEMS", "a", "b"]).unwrap();
    assert_eq!(spec.items_at, 5);
    assert_eq!(spec.create, Some(options(1000, 0.01, 2, true)));
    let all = [
        "BF.INSERT",
        "k",
        "ERROR",
        "0.001",
        "EXPANSION",
        "4",
        "NONSCALING",
        "ITEMS",
        "c",
    ];
    assert_eq!(created(&all), options(100, 0.001, 4, false));
    let nocreate = insert(&["BF.INSERT", "k", "NOCREATE", "ITEMS", "a"]).unwrap();
    assert_eq!(
        nocreate,
        BfInsert {
            create: None,
            items_at: 4
        }
    );
}

#[test]
fn insert_looks_only_at_leading_letters() {
    // ITEMS ends the options: the rest are items even if they look like options.
    let spec = insert(&["BF.INSERT", "k", "ITEMS", "ITEMS", "CAPACITY"]).unwrap();
    assert_eq!(spec.items_at, 3);
    assert_eq!(insert(&["BF.INSERT", "k", "ixx", "a"]).unwrap().items_at, 3);
    assert_eq!(
        created(&["BF.INSERT", "k", "eRR", "0.1", "i", "a"]).error,
        0.1
    );
    assert_eq!(created(&["BF.INSERT", "k", "exp", "5", "i", "a"]).growth, 5);
    assert_eq!(
        created(&["BF.INSERT", "k", "cap", "7", "i", "a"]).capacity,
        7
    );
    // `e` alone is EXPANSION, so a fraction is a bad expansion.
    assert_eq!(
        insert(&["BF.INSERT", "k", "e", "0.5", "i", "a"]),
        Err(InsertBadExpansion)
    );
    // `n` with `c` third is NOCREATE; any other `n` word is NONSCALING.
    assert_eq!(
        insert(&["BF.INSERT", "k", "nocreateXYZ", "i", "a"])
            .unwrap()
            .create,
        None
    );
    assert!(!created(&["BF.INSERT", "k", "nonsense", "i", "a"]).scaling);
    assert!(!created(&["BF.INSERT", "k", "n", "i", "a"]).scaling);
    assert_eq!(
        insert(&["BF.INSERT", "k", "", "i", "a"]),
        Err(InsertUnknownOption)
    );
    assert_eq!(
        insert(&["BF.INSERT", "k", "xyz", "i", "a"]),
        Err(InsertUnknownOption)
    );
}

#[test]
fn insert_repeated_options_last_wins() {
    let twice = [
        "BF.INSERT",
        "k",
        "CAPACITY",
        "10",
        "CAPACITY",
        "20",
        "ITEMS",
        "a",
    ];
    assert_eq!(created(&twice).capacity, 20);
    let error = [
        "BF.INSERT",
        "k",
        "ERROR",
        "0.2",
        "ERROR",
        "0.3",
        "ITEMS",
        "a",
    ];
    assert_eq!(created(&error).error, 0.3);
    // Values are range-checked only at the end, so a later one repairs an earlier one.
    let late_bad = [
        "BF.INSERT",
        "k",
        "CAPACITY",
        "0",
        "CAPACITY",
        "5",
        "ITEMS",
        "a",
    ];
    assert_eq!(created(&late_bad).capacity, 5);
}

#[test]
fn insert_checks_in_redisbloom_order() {
    assert_parses(
        insert,
        &[
            (&["BF.INSERT", "k", "ITEMS"], Err(Arity)),
            (&["BF.INSERT", "k", "CAPACITY", "10"], Err(Arity)),
            (&["BF.INSERT", "k", "NOCREATE", "ITEMS"], Err(Arity)),
            (&["BF.INSERT", "k", "NOCREATE", "NONSCALING"], Err(Arity)),
        ],
    );
    // A value-taking option as the last word is an arity error, before its parse.
    assert_parses(
        insert,
        &[
            (&["BF.INSERT", "k", "NOCREATE", "ERROR"], Err(Arity)),
            (&["BF.INSERT", "k", "n", "CAPACITY"], Err(Arity)),
            (
                &["BF.INSERT", "k", "ERROR", "x", "ITEMS", "a"],
                Err(InsertBadErrorRate),
            ),
        ],
    );
    let bad_capacity = ["BF.INSERT", "k", "CAPACITY", "1e3", "ITEMS", "a"];
    assert_eq!(insert(&bad_capacity), Err(InsertBadCapacity));
    // An unknown option stops parsing before a missing ITEMS is noticed.
    assert_eq!(
        insert(&["BF.INSERT", "k", "zzz", "a"]),
        Err(InsertUnknownOption)
    );
    // Parse errors come before the arity check for a missing ITEMS.
    assert_eq!(
        insert(&["BF.INSERT", "k", "CAPACITY", "x"]),
        Err(InsertBadCapacity)
    );
}

#[test]
fn insert_range_check_comes_after_the_items() {
    let ranges = [
        ["BF.INSERT", "k", "ERROR", "0", "ITEMS", "a"],
        ["BF.INSERT", "k", "ERROR", "1", "ITEMS", "a"],
        ["BF.INSERT", "k", "CAPACITY", "0", "ITEMS", "a"],
        ["BF.INSERT", "k", "EXPANSION", "0", "ITEMS", "a"],
        ["BF.INSERT", "k", "EXPANSION", "4294967296", "ITEMS", "a"],
        ["BF.INSERT", "k", "NOCREATE", "CAPACITY", "-1", "ITEMS"],
    ];
    for words in &ranges[..5] {
        assert_eq!(insert(words), Err(InsertOutOfRange), "{words:?}");
    }
    assert_eq!(insert(&ranges[5]), Err(Arity));
    // Range is checked even with NOCREATE.
    let nocreate = ["BF.INSERT", "k", "NOCREATE", "CAPACITY", "-1", "ITEMS", "a"];
    assert_eq!(insert(&nocreate), Err(InsertOutOfRange));
    // NONSCALING and EXPANSION together are accepted here.
    let both = [
        "BF.INSERT",
        "k",
        "NONSCALING",
        "EXPANSION",
        "3",
        "ITEMS",
        "a",
    ];
    assert_eq!(created(&both), options(100, 0.01, 3, false));
}

#[test]
fn insert_uses_the_given_defaults() {
    let defaults = options(9, 0.5, 7, true);
    let words: [&[u8]; 4] = [b"BF.INSERT", b"k", b"ITEMS", b"a"];
    let spec = parse_bf_insert(&ByteArgs(&words), defaults).unwrap();
    assert_eq!(spec.create, Some(defaults));
}

#[test]
fn insert_capacity_reaches_i64_boundaries() {
    let max = [
        "BF.INSERT",
        "k",
        "CAPACITY",
        "9223372036854775807",
        "ITEMS",
        "a",
    ];
    assert_eq!(created(&max).capacity, i64::MAX as u64);
    let min = [
        "BF.INSERT",
        "k",
        "CAPACITY",
        "-9223372036854775808",
        "ITEMS",
        "a",
    ];
    assert_eq!(insert(&min), Err(InsertOutOfRange));
    let over = [
        "BF.INSERT",
        "k",
        "CAPACITY",
        "9223372036854775808",
        "ITEMS",
        "a",
    ];
    assert_eq!(insert(&over), Err(InsertBadCapacity));
}

#[test]
fn info_field_is_an_exact_case_insensitive_word() {
    let field = |words: &[&str]| with_args(words, |args| parse_bf_info_field(args));
    assert_parses(
        field,
        &[
            (&["BF.INFO", "k"], Ok(None)),
            (
                &["BF.INFO", "k", "CAPACITY"],
                Ok(Some(BfInfoField::Capacity)),
            ),
            (&["BF.INFO", "k", "size"], Ok(Some(BfInfoField::Size))),
            (&["BF.INFO", "k", "Filters"], Ok(Some(BfInfoField::Filters))),
            (&["BF.INFO", "k", "items"], Ok(Some(BfInfoField::Items))),
            (
                &["BF.INFO", "k", "EXPANSION"],
                Ok(Some(BfInfoField::Expansion)),
            ),
            (&["BF.INFO", "k", "RATE"], Ok(Some(BfInfoField::Rate))),
            (&["BF.INFO", "k", "cap"], Err(UnknownInfoField)),
            (&["BF.INFO", "k", ""], Err(UnknownInfoField)),
            (&["BF.INFO", "k", "size", "x"], Err(Arity)),
            (&["BF.INFO"], Err(Arity)),
        ],
    );
}

#[test]
fn scandump_and_loadchunk_iterators() {
    let scan = |words: &[&str]| with_args(words, |args| parse_bf_scandump_iterator(args));
    assert_parses(
        scan,
        &[
            (&["BF.SCANDUMP", "k", "0"], Ok(0)),
            (&["BF.SCANDUMP", "k", "-3"], Ok(-3)),
            (&["BF.SCANDUMP", "k", "x"], Err(ScanIteratorNotNumeric)),
            (&["BF.SCANDUMP", "k"], Err(Arity)),
        ],
    );
    let load = |words: &[&str]| with_args(words, |args| parse_bf_loadchunk(args));
    assert_eq!(load(&["BF.LOADCHUNK", "k", "1", "data"]), Ok(1));
    assert_eq!(load(&["BF.LOADCHUNK", "k", "0", ""]), Ok(0));
    let min = ["BF.LOADCHUNK", "k", "-9223372036854775808", ""];
    assert_eq!(load(&min), Ok(i64::MIN));
    assert_eq!(
        load(&["BF.LOADCHUNK", "k", "1.0", ""]),
        Err(LoadIteratorNotNumeric)
    );
    assert_eq!(load(&["BF.LOADCHUNK", "k", "1"]), Err(Arity));
}

fn window(seconds: u64, generations: u16) -> Option<WindowSpec> {
    Some(WindowSpec {
        seconds,
        generations,
    })
}

#[test]
fn reserve_window_options() {
    let r = |tail: &[&str]| reserve(&[&["BF.RESERVE", "k", "0.01", "100"], tail].concat());
    let windowed = |w| {
        Ok(BloomOptions {
            window: w,
            ..options(100, 0.01, 2, true)
        })
    };
    assert_parses(
        r,
        &[
            (&["WINDOW", "60"], windowed(window(60, 4))),
            (
                &["window", "86400", "generations", "8"],
                windowed(window(86400, 8)),
            ),
            (
                &[
                    "GENERATIONS",
                    "2",
                    "WINDOW",
                    "10",
                    "EXPANSION",
                    "4",
                    "NONSCALING",
                ],
                Err(NonScalingExpansion),
            ),
            (
                &["EXPANSION", "4", "WINDOW", "10", "GENERATIONS", "3"],
                Ok(BloomOptions {
                    window: window(10, 3),
                    ..options(100, 0.01, 4, true)
                }),
            ),
            (
                &["NONSCALING", "WINDOW", "10"],
                Ok(BloomOptions {
                    window: window(10, 4),
                    ..options(100, 0.01, 2, false)
                }),
            ),
        ],
    );
    for bad in [
        &["WINDOW"][..],
        &["WINDOW", "0"],
        &["WINDOW", "x"],
        &["WINDOW", "315360001"],
    ] {
        assert_eq!(r(bad), Err(WindowRange), "{bad:?}");
    }
    for bad in ["1", "33", "-4", "four"] {
        assert_eq!(
            r(&["WINDOW", "10", "GENERATIONS", bad]),
            Err(GenerationsRange)
        );
    }
    assert_eq!(r(&["GENERATIONS", "4"]), Err(GenerationsWithoutWindow));
    // Without WINDOW, RedisBloom's arity stands; with it, four more words are allowed.
    assert_parses(
        r,
        &[
            (&["a", "b", "c", "d"], Err(Arity)),
            (
                &["WINDOW", "10", "GENERATIONS", "4", "EXPANSION", "4", "x"],
                Ok(BloomOptions {
                    window: window(10, 4),
                    ..options(100, 0.01, 4, true)
                }),
            ),
            (
                &[
                    "WINDOW",
                    "10",
                    "GENERATIONS",
                    "4",
                    "EXPANSION",
                    "4",
                    "x",
                    "y",
                ],
                Err(Arity),
            ),
        ],
    );
}

#[test]
fn insert_window_options() {
    let w = |words: &[&str]| created(&[&["BF.INSERT", "k"], words, &["ITEMS", "a"]].concat());
    assert_eq!(w(&[]).window, None);
    assert_eq!(w(&["WINDOW", "60"]).window, window(60, 4));
    assert_eq!(
        w(&["generations", "16", "CAPACITY", "5", "window", "60"]),
        BloomOptions {
            window: window(60, 16),
            ..options(5, 0.01, 2, true)
        }
    );
    let i = |words: &[&str]| insert(&[&["BF.INSERT", "k"], words, &["ITEMS", "a"]].concat());
    assert_eq!(i(&["WINDOW", "0"]).map(|_| ()), Err(WindowRange));
    assert_eq!(
        i(&["GENERATIONS", "4"]).map(|_| ()),
        Err(GenerationsWithoutWindow)
    );
    assert_eq!(
        i(&["WINDOW", "9", "GENERATIONS", "40"]).map(|_| ()),
        Err(GenerationsRange)
    );
    // Only the whole words: other words starting with w or g stay unknown options.
    assert_eq!(i(&["WIN", "9"]).map(|_| ()), Err(InsertUnknownOption));
    assert_eq!(i(&["GEN", "9"]).map(|_| ()), Err(InsertUnknownOption));
    assert_eq!(
        insert(&["BF.INSERT", "k", "ITEMS", "WINDOW"]).map(|s| s.items_at),
        Ok(3)
    );
    assert_eq!(
        insert(&["BF.INSERT", "k", "WINDOW"]).map(|_| ()),
        Err(Arity)
    );
    // The module's default window applies to every creation, and GENERATIONS overrides it.
    let defaults = BloomOptions {
        window: window(3600, 6),
        ..DEFAULTS
    };
    let with_defaults = |words: &[&str]| {
        with_args(
            &[&["BF.INSERT", "k"], words, &["ITEMS", "a"]].concat(),
            |args| parse_bf_insert(args, defaults),
        )
        .unwrap()
        .create
        .unwrap()
        .window
    };
    assert_parses(
        with_defaults,
        &[
            (&[], window(3600, 6)),
            (&["GENERATIONS", "2"], window(3600, 2)),
            (&["WINDOW", "60"], window(60, 6)),
        ],
    );
}

fn counting(options: BloomOptions) -> BloomOptions {
    BloomOptions {
        counting: true,
        ..options
    }
}

#[test]
fn reserve_counting_is_one_more_keyword() {
    let r = |tail: &[&str]| reserve(&[&["BF.RESERVE", "k", "0.01", "100"], tail].concat());
    assert_parses(
        r,
        &[
            (&["COUNTING"], Ok(counting(options(100, 0.01, 2, true)))),
            (
                &["counting", "NONSCALING"],
                Ok(counting(options(100, 0.01, 2, false))),
            ),
            (
                &["EXPANSION", "4", "NONSCALING", "COUNTING"],
                Err(NonScalingExpansion),
            ),
            (
                &["EXPANSION", "4", "COUNTING"],
                Ok(counting(options(100, 0.01, 4, true))),
            ),
        ],
    );
    // Eight arguments only with COUNTING among them; nine never.
    assert_parses(
        r,
        &[
            (
                &["EXPANSION", "4", "EXPANSION", "COUNTING"],
                Ok(counting(options(100, 0.01, 4, true))),
            ),
            (
                &["EXPANSION", "4", "NONSCALING", "COUNTING", "x"],
                Err(Arity),
            ),
            (&["WINDOW", "60", "COUNTING"], Err(CountingWithWindow)),
        ],
    );
    // A key or error rate spelled COUNTING is not the keyword.
    assert_eq!(
        reserve(&["BF.RESERVE", "COUNTING", "0.01", "100"]),
        Ok(options(100, 0.01, 2, true))
    );
}

#[test]
fn insert_counting_is_the_whole_word() {
    assert_eq!(
        created(&["BF.INSERT", "k", "COUNTING", "ITEMS", "a"]),
        counting(DEFAULTS)
    );
    assert_eq!(
        created(&["BF.INSERT", "k", "CAPACITY", "5", "counting", "ITEMS", "a"]),
        counting(options(5, 0.01, 2, true))
    );
    // Any other word starting with `c` is still CAPACITY, as in RedisBloom.
    assert_eq!(
        created(&["BF.INSERT", "k", "COUNT", "7", "ITEMS", "a"]),
        options(7, 0.01, 2, true)
    );
    assert_eq!(
        insert(&["BF.INSERT", "k", "COUNTING", "7", "ITEMS", "a"]),
        Err(InsertUnknownOption)
    );
    assert_eq!(
        insert(&["BF.INSERT", "k", "COUNTING", "WINDOW", "60", "ITEMS", "a"]),
        Err(CountingWithWindow)
    );
    // The module's default window does not apply to a counting filter.
    let windowed_defaults = BloomOptions {
        window: window(60, 4),
        ..DEFAULTS
    };
    let with_default = |words: &[&str]| {
        with_args(words, |args| parse_bf_insert(args, windowed_defaults))
            .unwrap()
            .create
            .unwrap()
    };
    assert_eq!(
        with_default(&["BF.INSERT", "k", "COUNTING", "ITEMS", "a"]),
        counting(DEFAULTS)
    );
}

fn compact(options: BloomOptions) -> BloomOptions {
    BloomOptions {
        compact: true,
        ..options
    }
}

#[test]
fn reserve_compact_is_one_more_keyword() {
    let r = |tail: &[&str]| reserve(&[&["BF.RESERVE", "k", "0.01", "100"], tail].concat());
    assert_parses(
        r,
        &[
            (&["COMPACT"], Ok(compact(options(100, 0.01, 2, true)))),
            (
                &["compact", "COUNTING"],
                Ok(counting(compact(options(100, 0.01, 2, true)))),
            ),
            (
                &["EXPANSION", "4", "COMPACT"],
                Ok(compact(options(100, 0.01, 4, true))),
            ),
            (&["NONSCALING", "COMPACT"], Err(CompactNonScaling)),
            (
                &["COMPACT", "WINDOW", "60"],
                Ok(BloomOptions {
                    window: window(60, 4),
                    ..compact(options(100, 0.01, 2, true))
                }),
            ),
            (
                &["COMPACT", "WINDOW", "60", "GENERATIONS", "8"],
                Ok(BloomOptions {
                    window: window(60, 8),
                    ..compact(options(100, 0.01, 2, true))
                }),
            ),
            (
                &["COMPACT", "WINDOW", "60", "COUNTING"],
                Err(CountingWithWindow),
            ),
        ],
    );
    // Nine arguments only with both COUNTING and COMPACT among them.
    assert_eq!(
        r(&["EXPANSION", "4", "EXPANSION", "COUNTING", "COMPACT"]),
        Ok(counting(compact(options(100, 0.01, 4, true))))
    );
    assert_eq!(
        r(&["EXPANSION", "4", "EXPANSION", "x", "COMPACT"]),
        Err(Arity)
    );
    assert_eq!(
        reserve(&["BF.RESERVE", "COMPACT", "0.01", "100"]),
        Ok(options(100, 0.01, 2, true))
    );
}

#[test]
fn insert_compact_is_the_whole_word_and_the_default_yields() {
    assert_eq!(
        created(&["BF.INSERT", "k", "COMPACT", "ITEMS", "a"]),
        compact(DEFAULTS)
    );
    // Any other word starting with `c` is still CAPACITY, as in RedisBloom.
    assert_eq!(
        created(&["BF.INSERT", "k", "COMPAC", "7", "ITEMS", "a"]),
        options(7, 0.01, 2, true)
    );
    assert_eq!(
        insert(&["BF.INSERT", "k", "COMPACT", "NONSCALING", "ITEMS", "a"]),
        Err(CompactNonScaling)
    );
    assert_eq!(
        created(&["BF.INSERT", "k", "COMPACT", "WINDOW", "60", "ITEMS", "a"]),
        BloomOptions {
            window: window(60, 4),
            ..compact(DEFAULTS)
        }
    );
    assert_eq!(
        insert(&[
            "BF.INSERT",
            "k",
            "ERROR",
            "2e-12",
            "COMPACT",
            "WINDOW",
            "60",
            "ITEMS",
            "a"
        ]),
        Err(CompactWindowErrorRate)
    );
    // The module's default (bf-compact) makes compact only what asks nothing else.
    let compact_defaults = compact(DEFAULTS);
    let with_default = |words: &[&str]| {
        with_args(words, |args| parse_bf_insert(args, compact_defaults))
            .unwrap()
            .create
            .unwrap()
    };
    assert_eq!(
        with_default(&["BF.INSERT", "k", "ITEMS", "a"]),
        compact(DEFAULTS)
    );
    assert_eq!(
        with_default(&["BF.INSERT", "k", "NONSCALING", "ITEMS", "a"]),
        options(100, 0.01, 2, false)
    );
    assert_eq!(
        with_default(&["BF.INSERT", "k", "WINDOW", "60", "ITEMS", "a"]),
        BloomOptions {
            window: window(60, 4),
            ..compact(DEFAULTS)
        }
    );
    // With the module's default window too, the filter is a compact windowed one.
    let both = BloomOptions {
        window: window(60, 4),
        ..compact_defaults
    };
    for words in [
        &["BF.INSERT", "k", "COMPACT", "ITEMS", "a"][..],
        &["BF.INSERT", "k", "ITEMS", "a"][..],
    ] {
        let created_both = with_args(words, |args| parse_bf_insert(args, both));
        assert_eq!(created_both.unwrap().create, Some(both));
    }
}

fn blocked(options: BloomOptions) -> BloomOptions {
    BloomOptions {
        blocked: true,
        ..options
    }
}

#[test]
fn reserve_blocked_is_one_more_keyword_and_refuses_the_other_layouts() {
    let r = |tail: &[&str]| reserve(&[&["BF.RESERVE", "k", "0.01", "100"], tail].concat());
    assert_parses(
        r,
        &[
            (&["BLOCKED"], Ok(blocked(options(100, 0.01, 2, true)))),
            (
                &["EXPANSION", "4", "blocked"],
                Ok(blocked(options(100, 0.01, 4, true))),
            ),
            (
                &["NONSCALING", "BLOCKED"],
                Ok(blocked(options(100, 0.01, 2, false))),
            ),
            (&["BLOCKED", "COMPACT"], Err(BlockedWithCompact)),
            (&["COUNTING", "BLOCKED"], Err(BlockedWithCounting)),
            (&["BLOCKED", "WINDOW", "60"], Err(BlockedWithWindow)),
            (&["EXPANSION", "4", "EXPANSION", "x", "BLOCKED"], Err(Arity)),
        ],
    );
    assert_eq!(
        reserve(&["BF.RESERVE", "BLOCKED", "0.01", "100"]),
        Ok(options(100, 0.01, 2, true))
    );
}

#[test]
fn insert_blocked_is_the_whole_word_and_the_default_yields() {
    let i = |words: &[&str], defaults| {
        with_args(
            &[&["BF.INSERT", "k"], words, &["ITEMS", "a"]].concat(),
            |args| parse_bf_insert(args, defaults),
        )
        .map(|spec| spec.create)
    };
    assert_parses(
        |words| i(words, DEFAULTS),
        &[
            (&["BLOCKED"], Ok(Some(blocked(DEFAULTS)))),
            (
                &["BLOCKED", "NONSCALING", "CAPACITY", "7"],
                Ok(Some(blocked(options(7, 0.01, 2, false)))),
            ),
            (&["BLOCK"], Err(InsertUnknownOption)),
            (&["BLOCKED", "COMPACT"], Err(BlockedWithCompact)),
            (&["BLOCKED", "COUNTING"], Err(BlockedWithCounting)),
            (&["WINDOW", "9", "BLOCKED"], Err(BlockedWithWindow)),
        ],
    );
    // bf-blocked makes blocked what asks for nothing else; bf-compact wins over it.
    let defaults = blocked(DEFAULTS);
    assert_parses(
        |words| i(words, defaults),
        &[
            (&[], Ok(Some(blocked(DEFAULTS)))),
            (&["COUNTING"], Ok(Some(counting(DEFAULTS)))),
            (&["COMPACT"], Ok(Some(compact(DEFAULTS)))),
        ],
    );
    assert_eq!(i(&[], compact(defaults)), Ok(Some(compact(DEFAULTS))));
    // An explicit BLOCKED under bf-compact is blocked only (the args fuzz target found it
    // made both).
    assert_eq!(
        i(&["BLOCKED"], compact(DEFAULTS)),
        Ok(Some(blocked(DEFAULTS)))
    );
    let windowed = BloomOptions {
        window: window(60, 4),
        ..DEFAULTS
    };
    assert_eq!(i(&["BLOCKED"], windowed), Ok(Some(blocked(DEFAULTS))));
}

fn static_set(options: BloomOptions) -> BloomOptions {
    BloomOptions {
        static_set: true,
        ..options
    }
}

/// STATIC widens the arity by one, as the other layouts' words do (the args fuzz target's
/// input: seven arguments and STATIC), and refuses every other layout.
#[test]
fn reserve_static_is_one_more_keyword_and_refuses_the_other_layouts() {
    let r = |tail: &[&str]| reserve(&[&["BF.RESERVE", "k", "0.01", "100"], tail].concat());
    assert_parses(
        r,
        &[
            (&["STATIC"], Ok(static_set(options(100, 0.01, 2, true)))),
            (
                &["EXPANSION", "4", "other", "static"],
                Ok(static_set(options(100, 0.01, 4, true))),
            ),
            (
                &["NONSCALING", "static"],
                Ok(static_set(options(100, 0.01, 2, false))),
            ),
            (&["EXPANSION", "4", "EXPANSION", "x", "STATIC"], Err(Arity)),
            (&["STATIC", "COMPACT"], Err(StaticWithLayout)),
            (&["COUNTING", "STATIC"], Err(StaticWithLayout)),
            (&["STATIC", "BLOCKED"], Err(StaticWithLayout)),
            (&["STATIC", "WINDOW", "60"], Err(StaticWithLayout)),
        ],
    );
    // Without STATIC, eight arguments are one too many.
    assert_eq!(r(&["EXPANSION", "4", "other", "x"]), Err(Arity));
}

#[test]
fn insert_static_is_the_whole_word_and_the_defaults_yield() {
    let i = |words: &[&str], defaults| {
        with_args(
            &[&["BF.INSERT", "k"], words, &["ITEMS", "a"]].concat(),
            |args| parse_bf_insert(args, defaults),
        )
        .map(|spec| spec.create)
    };
    assert_parses(
        |words| i(words, DEFAULTS),
        &[
            (&["STATIC"], Ok(Some(static_set(DEFAULTS)))),
            (&["STATI"], Err(InsertUnknownOption)),
            (&["STATIC", "COMPACT"], Err(StaticWithLayout)),
            (&["STATIC", "COUNTING"], Err(StaticWithLayout)),
            (&["STATIC", "BLOCKED"], Err(StaticWithLayout)),
            (&["WINDOW", "9", "STATIC"], Err(StaticWithLayout)),
        ],
    );
    // bf-compact, bf-blocked and bf-window make nothing of an explicit STATIC but a static set.
    let windowed = BloomOptions {
        window: window(60, 4),
        ..DEFAULTS
    };
    for defaults in [compact(DEFAULTS), blocked(DEFAULTS), windowed] {
        assert_eq!(i(&["STATIC"], defaults), Ok(Some(static_set(DEFAULTS))));
    }
}
