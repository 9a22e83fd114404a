//! The CF.* commands against a real redis-server: every error path of the reference with its
//! exact text, the replies in RESP2 and RESP3, growth, deletion and compaction.

pub mod common;

use common::*;

/// CF.INFO as `(field, value)` pairs, from a RESP2 connection.
fn cf_info(client: &mut Client, key: &str) -> Vec<(String, i64)> {
    info_fields(call!(client, "CF.INFO", key))
        .into_iter()
        .map(|(name, value)| (name, value.int()))
        .collect()
}

fn info_field(client: &mut Client, key: &str, field: &str) -> i64 {
    cf_info(client, key)
        .into_iter()
        .find(|(name, _)| name == field)
        .map(|(_, value)| value)
        .unwrap()
}

/// The CF.INFO reply for the given numbers, in RedisBloom's field order.
fn cf_info_reply(values: [i64; 8]) -> Reply {
    let names = [
        "Size",
        "Number of buckets",
        "Number of filters",
        "Number of items inserted",
        "Number of items deleted",
        "Bucket size",
        "Expansion rate",
        "Max iterations",
    ];
    info_reply(&names, &values)
}

fn arity(command: &str) -> Reply {
    err(&format!(
        "ERR wrong number of arguments for '{command}' command"
    ))
}

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

#[test]
fn reserve_validates_in_reference_order() {
    let server = Server::start();
    let mut c = server.client();
    assert_replies(
        &mut c,
        &[
            (&["CF.RESERVE"], arity("cf.reserve")),
            (&["CF.RESERVE", "k"], arity("cf.reserve")),
            (
                &["CF.RESERVE", "k", "100", "BUCKETSIZE"],
                arity("cf.reserve"),
            ),
            (&["CF.RESERVE", "k", "abc"], err("Bad capacity")),
            (&["CF.RESERVE", "k", "1.5"], err("Bad capacity")),
            (&["CF.RESERVE", "k", "1e3"], err("Bad capacity")),
        ],
    );
    let cases: &[(&[&str], &str)] = &[
        (&["MAXITERATIONS", "x"], "Couldn't parse MAXITERATIONS"),
        (
            &["MAXITERATIONS", "0"],
            "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.",
        ),
        (
            &["MAXITERATIONS", "65536"],
            "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.",
        ),
        (&["BUCKETSIZE", "x"], "Couldn't parse BUCKETSIZE"),
        (
            &["BUCKETSIZE", "0"],
            "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.",
        ),
        (
            &["bucketsize", "256"],
            "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.",
        ),
        (&["EXPANSION", "x"], "Couldn't parse EXPANSION"),
        (
            &["EXPANSION", "-1"],
            "EXPANSION: value must be an integer between 0 and 32768, inclusive.",
        ),
        (
            &["Expansion", "32769"],
            "EXPANSION: value must be an integer between 0 and 32768, inclusive.",
        ),
        // MAXITERATIONS is looked at first, then BUCKETSIZE, then EXPANSION.
        (
            &["EXPANSION", "x", "BUCKETSIZE", "0", "MAXITERATIONS", "0"],
            "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.",
        ),
        (
            &["EXPANSION", "x", "BUCKETSIZE", "0"],
            "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.",
        ),
        // The first occurrence wins.
        (
            &["BUCKETSIZE", "0", "BUCKETSIZE", "2"],
            "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.",
        ),
        // Deviation D4: a keyword as the last argument is its own parse error.
        (&["x", "MAXITERATIONS"], "Couldn't parse MAXITERATIONS"),
        (&["x", "BUCKETSIZE"], "Couldn't parse BUCKETSIZE"),
        (&["x", "EXPANSION"], "Couldn't parse EXPANSION"),
    ];
    for (extra, expected) in cases {
        let mut args = vec!["CF.RESERVE", "k", "100"];
        args.extend_from_slice(extra);
        assert_eq!(c.call(&args), err(expected), "{args:?}");
    }
    let too_small = err("Capacity must be at least (BucketSize * 2)");
    assert_replies(
        &mut c,
        &[
            (&["CF.RESERVE", "k", "3"], too_small.clone()),
            (&["CF.RESERVE", "k", "0"], too_small.clone()),
            (&["CF.RESERVE", "k", "-5"], too_small.clone()),
            (
                &["CF.RESERVE", "k", "7", "BUCKETSIZE", "4"],
                too_small.clone(),
            ),
        ],
    );
    // Range errors come before the capacity check.
    assert_eq!(
        call!(c, "CF.RESERVE", "k", "1", "EXPANSION", "x"),
        err("Couldn't parse EXPANSION")
    );
    assert_eq!(call!(c, "EXISTS", "k"), Int(0));

    assert_eq!(call!(c, "CF.RESERVE", "k", "4"), ok());
    assert_eq!(call!(c, "CF.RESERVE", "k", "4"), err("ERR item exists"));
    assert_eq!(call!(c, "SET", "s", "x"), ok());
    assert_eq!(call!(c, "CF.RESERVE", "s", "100"), err(WRONGTYPE));
    // Deviation D1: refused with an error instead of aborting the server.
    assert_eq!(
        call!(c, "CF.RESERVE", "huge", "100000000000000000"),
        too_large(DEFAULT_MAX_FILTER_BYTES)
    );
    assert_eq!(call!(c, "EXISTS", "huge"), Int(0));
    // Unknown pairs are ignored; keywords are case-insensitive.
    assert_eq!(call!(c, "CF.RESERVE", "u", "1000", "FOO", "5"), ok());
    assert_eq!(
        call!(
            c,
            "CF.RESERVE",
            "m",
            "1000",
            "maxIterations",
            "7",
            "bucketSIZE",
            "4",
            "expansion",
            "3"
        ),
        ok()
    );
    assert_eq!(
        cf_info(&mut c, "m")[5..],
        [
            ("Bucket size".to_string(), 4),
            ("Expansion rate".to_string(), 4),
            ("Max iterations".to_string(), 7),
        ]
    );
}

#[test]
fn reserve_looks_for_keywords_only_after_the_capacity() {
    // Deviation D3: a key named like a keyword is just a key.
    let server = Server::start();
    let mut c = server.client();
    assert_eq!(call!(c, "CF.RESERVE", "EXPANSION", "100"), ok());
    assert_eq!(
        call!(c, "CF.INFO", "EXPANSION"),
        cf_info_reply([184, 64, 1, 0, 0, 2, 1, 20])
    );
    assert_eq!(call!(c, "CF.RESERVE", "MAXITERATIONS", "1000"), ok());
    assert_eq!(info_field(&mut c, "MAXITERATIONS", "Max iterations"), 20);
}

#[test]
fn info_table_of_the_reference() {
    let server = Server::start();
    let mut c = server.client();
    let cases: &[(&[&str], [i64; 8])] = &[
        (&["4"], [60, 2, 1, 0, 0, 2, 1, 20]),
        (&["1000"], [1080, 512, 1, 0, 0, 2, 1, 20]),
        (
            &[
                "1000",
                "BUCKETSIZE",
                "4",
                "MAXITERATIONS",
                "50",
                "EXPANSION",
                "2",
            ],
            [1080, 256, 1, 0, 0, 4, 2, 50],
        ),
        (&["1000", "BUCKETSIZE", "3"], [1592, 512, 1, 0, 0, 3, 1, 20]),
        (&["1000000"], [1048632, 524288, 1, 0, 0, 2, 1, 20]),
        (&["1001"], [1080, 512, 1, 0, 0, 2, 1, 20]),
        (&["1026"], [2104, 1024, 1, 0, 0, 2, 1, 20]),
        (
            &["1000", "BUCKETSIZE", "255"],
            [1076, 4, 1, 0, 0, 255, 1, 20],
        ),
        (&["1000", "EXPANSION", "3"], [1080, 512, 1, 0, 0, 2, 4, 20]),
        (
            &["1000", "EXPANSION", "100"],
            [1080, 512, 1, 0, 0, 2, 128, 20],
        ),
        (&["1000", "EXPANSION", "0"], [1080, 512, 1, 0, 0, 2, 0, 20]),
        (
            &["1000", "EXPANSION", "32768"],
            [1080, 512, 1, 0, 0, 2, 32768, 20],
        ),
    ];
    for (i, (args, expected)) in cases.iter().enumerate() {
        let key = format!("k{i}");
        let mut command = vec!["CF.RESERVE", key.as_str()];
        command.extend_from_slice(args);
        assert_eq!(c.call(&command), ok(), "{command:?}");
        assert_eq!(
            call!(c, "CF.INFO", key),
            cf_info_reply(*expected),
            "{command:?}"
        );
    }
    assert_eq!(call!(c, "CF.ADD", "auto", "x"), Int(1));
    assert_eq!(
        call!(c, "CF.INFO", "auto"),
        cf_info_reply([1080, 512, 1, 1, 0, 2, 1, 20])
    );
    assert_eq!(value_memory(&mut c, "auto"), 1080);

    assert_replies(
        &mut c,
        &[
            (&["CF.INFO"], arity("cf.info")),
            (&["CF.INFO", "auto", "size"], arity("cf.info")),
            (&["CF.INFO", "missing"], err("ERR not found")),
        ],
    );
    assert_eq!(call!(c, "SET", "s", "x"), ok());
    assert_eq!(call!(c, "CF.INFO", "s"), err(WRONGTYPE));
    assert_eq!(call!(c, "BF.ADD", "bloom", "x"), Int(1));
    assert_eq!(call!(c, "CF.INFO", "bloom"), err(WRONGTYPE));
    assert_eq!(call!(c, "TYPE", "auto"), Simple("MBbloomCF".into()));

    c.resp3();
    let Map(pairs) = call!(c, "CF.INFO", "k2") else {
        panic!("CF.INFO is a map in RESP3")
    };
    let expected = cf_info_reply([1080, 256, 1, 0, 0, 4, 2, 50]).array();
    let flat: Vec<Reply> = pairs.into_iter().flat_map(|(k, v)| [k, v]).collect();
    assert_eq!(flat, expected);
}

#[test]
fn debug_line() {
    let server = Server::start();
    let mut c = server.client();
    assert_eq!(call!(c, "CF.RESERVE", "cf", "8", "EXPANSION", "2"), ok());
    for i in 0..20 {
        assert_eq!(call!(c, "CF.ADD", "cf", format!("item{i}")), Int(1));
    }
    assert_eq!(call!(c, "CF.DEL", "cf", "item0"), Int(1));
    assert_eq!(
        call!(c, "CF.DEBUG", "cf"),
        bulk("bktsize:2 buckets:4 items:19 deletes:1 filters:2 max_iterations:20 expansion:2")
    );
    assert_replies(
        &mut c,
        &[
            (&["CF.DEBUG"], arity("cf.debug")),
            (&["CF.DEBUG", "cf", "x"], arity("cf.debug")),
            (&["CF.DEBUG", "missing"], err("ERR not found")),
        ],
    );
    assert_eq!(call!(c, "SET", "s", "x"), ok());
    assert_eq!(call!(c, "CF.DEBUG", "s"), err(WRONGTYPE));
}

#[test]
fn add_and_addnx() {
    let server = Server::start();
    let mut c = server.client();
    assert_replies(
        &mut c,
        &[
            (&["CF.ADD", "k"], arity("cf.add")),
            (&["CF.ADD", "k", "a", "b"], arity("cf.add")),
            (&["CF.ADDNX", "k"], arity("cf.addnx")),
        ],
    );
    assert_eq!(call!(c, "EXISTS", "k"), Int(0));
    assert_eq!(call!(c, "CF.ADD", "k", "a"), Int(1));
    assert_eq!(call!(c, "CF.ADD", "k", "a"), Int(1));
    assert_eq!(call!(c, "CF.COUNT", "k", "a"), Int(2));
    assert_eq!(call!(c, "CF.ADDNX", "k", "a"), Int(0));
    assert_eq!(call!(c, "CF.ADDNX", "k", "b"), Int(1));
    assert_eq!(call!(c, "CF.ADDNX", "nx", "b"), Int(1));
    assert_eq!(call!(c, "CF.ADD", "k", ""), Int(1));
    assert_eq!(call!(c, "CF.EXISTS", "k", ""), Int(1));
    assert_eq!(call!(c, "CF.ADD", "k", b"\x00\xff"), Int(1));
    assert_eq!(call!(c, "CF.EXISTS", "k", b"\x00\xff"), Int(1));
    assert_eq!(info_field(&mut c, "k", "Number of items inserted"), 5);
    assert_eq!(
        call!(c, "CF.INFO", "nx"),
        cf_info_reply([1080, 512, 1, 1, 0, 2, 1, 20])
    );
    assert_eq!(call!(c, "SET", "s", "x"), ok());
    assert_eq!(call!(c, "CF.ADD", "s", "a"), err(WRONGTYPE));
    assert_eq!(call!(c, "CF.ADDNX", "s", "a"), err(WRONGTYPE));
    assert_eq!(call!(c, "BF.ADD", "bloom", "a"), Int(1));
    assert_eq!(call!(c, "CF.ADD", "bloom", "a"), err(WRONGTYPE));

    c.resp3();
    assert_eq!(call!(c, "CF.ADD", "k", "z"), Bool(true));
    assert_eq!(call!(c, "CF.ADDNX", "k", "z"), Bool(false));
    assert_eq!(call!(c, "CF.ADDNX", "k", "y"), Bool(true));
}

#[test]
fn insert_options_and_errors() {
    let server = Server::start();
    let mut c = server.client();
    for command in ["CF.INSERT", "CF.INSERTNX"] {
        let lower = command.to_lowercase();
        assert_eq!(call!(c, command, "k", "ITEMS"), arity(&lower));
        assert_eq!(
            call!(c, command, "k", "CAPACITY", "100", "ITEMS"),
            arity(&lower)
        );
        assert_eq!(
            call!(c, command, "k", "NOCREATE", "CAPACITY"),
            arity(&lower)
        );
        assert_eq!(
            call!(c, command, "k", "NOCREATE", "a", "b"),
            err("Unknown argument received")
        );
        assert_eq!(
            call!(c, command, "k", "NOCREATE", "nocreate", "nx"),
            arity(&lower)
        );
        assert_eq!(
            call!(c, command, "k", "FOO", "ITEMS", "a"),
            err("Unknown argument received")
        );
        assert_eq!(
            call!(c, command, "k", "", "ITEMS", "a"),
            err("Unknown argument received")
        );
        assert_eq!(
            call!(c, command, "k", "CAPACITY", "x", "ITEMS", "a"),
            err("Bad capacity")
        );
        assert_eq!(
            call!(c, command, "k", "CAPACITY", "3", "ITEMS", "a"),
            err("Capacity must be at least (BucketSize * 2)")
        );
        assert_eq!(
            call!(c, command, "k", "NOCREATE", "ITEMS", "a"),
            err("ERR not found")
        );
        assert_eq!(call!(c, "EXISTS", "k"), Int(0));
    }
    assert_eq!(call!(c, "CF.INSERT", "k", "ITEMS", "a", "b"), ints(&[1, 1]));
    assert_eq!(call!(c, "CF.INSERT", "k", "ITEMS", "a"), ints(&[1]));
    assert_eq!(
        call!(c, "CF.INSERTNX", "k", "ITEMS", "a", "c", "c"),
        ints(&[0, 1, 0])
    );
    assert_eq!(call!(c, "CF.COUNT", "k", "a"), Int(2));
    assert_eq!(
        call!(c, "CF.INFO", "k"),
        cf_info_reply([1080, 512, 1, 4, 0, 2, 1, 20])
    );
    // The capacity check holds even for an existing key or with NOCREATE.
    assert_eq!(
        call!(
            c,
            "CF.INSERT",
            "k",
            "NOCREATE",
            "CAPACITY",
            "2",
            "ITEMS",
            "a"
        ),
        err("Capacity must be at least (BucketSize * 2)")
    );
    // Only the first letter of an option counts; the last capacity wins.
    assert_eq!(
        call!(
            c,
            "CF.INSERT",
            "c",
            "cap",
            "10",
            "capacity",
            "5000",
            "Ixx",
            "ITEMS"
        ),
        ints(&[1])
    );
    assert_eq!(
        call!(c, "CF.INFO", "c"),
        cf_info_reply([8248, 4096, 1, 1, 0, 2, 1, 20])
    );
    assert_eq!(call!(c, "CF.EXISTS", "c", "ITEMS"), Int(1));
    assert_eq!(
        call!(c, "CF.INSERTNX", "c", "nonsense", "ITEMS", "x"),
        ints(&[1])
    );
    assert_eq!(
        call!(c, "CF.INSERTNX", "missing", "nocreateXYZ", "ITEMS", "x"),
        err("ERR not found")
    );
    assert_eq!(call!(c, "SET", "s", "x"), ok());
    assert_eq!(call!(c, "CF.INSERT", "s", "ITEMS", "a"), err(WRONGTYPE));
    assert_eq!(
        call!(c, "CF.INSERTNX", "s", "NOCREATE", "ITEMS", "a"),
        err(WRONGTYPE)
    );

    c.resp3();
    assert_eq!(
        call!(c, "CF.INSERT", "k", "ITEMS", "q", "r"),
        bools(&[true, true])
    );
    assert_eq!(
        call!(c, "CF.INSERTNX", "k", "ITEMS", "q", "s"),
        ints(&[0, 1])
    );
}

#[test]
fn insert_reports_a_full_filter_per_item() {
    let server = Server::start();
    let mut c = server.client();
    assert_eq!(call!(c, "CF.RESERVE", "f", "4", "EXPANSION", "0"), ok());
    let items: Vec<String> = (0..6).map(|i| format!("item{i}")).collect();
    let mut args = vec!["CF.INSERT".to_string(), "f".into(), "ITEMS".into()];
    args.extend(items.iter().cloned());
    assert_eq!(c.call(&args), ints(&[1, 1, 1, 1, -1, -1]));
    args[0] = "CF.INSERTNX".into();
    args.push("other".into());
    assert_eq!(c.call(&args), ints(&[0, 0, 0, 0, -1, -1, -1]));
    assert_eq!(call!(c, "CF.ADD", "f", "item4"), err("Filter is full"));
    assert_eq!(call!(c, "CF.ADDNX", "f", "item4"), err("Filter is full"));
    assert_eq!(call!(c, "CF.ADDNX", "f", "item0"), Int(0));
    assert_eq!(
        call!(c, "CF.INFO", "f"),
        cf_info_reply([60, 2, 1, 4, 0, 2, 0, 20])
    );
    c.resp3();
    args[0] = "CF.INSERT".into();
    assert_eq!(
        c.call(&args),
        bools(&[false, false, false, false, false, false, false])
    );
}

#[test]
fn copies_of_one_fingerprint_in_one_bucket_pair_grow_as_redisbloom() {
    // RedisBloom adds a sub-filter for every 4 copies (bucket size 2) of one item: the same
    // item added again and again is an ordinary use of CF.ADD, answered as RedisBloom does.
    let server = Server::start();
    let mut c = server.client();
    assert_eq!(call!(c, "CF.RESERVE", "k", "1024"), ok());
    for _ in 0..4 {
        assert_eq!(call!(c, "CF.ADD", "k", "x"), Int(1));
    }
    assert_eq!(
        call!(c, "CF.INFO", "k"),
        cf_info_reply([1080, 512, 1, 4, 0, 2, 1, 20])
    );
    assert_eq!(call!(c, "CF.ADD", "k", "x"), Int(1));
    assert_eq!(
        call!(c, "CF.INSERT", "k", "ITEMS", "x", "x", "y"),
        ints(&[1, 1, 1])
    );
    assert_eq!(call!(c, "CF.COUNT", "k", "x"), Int(7));
    assert_eq!(
        call!(c, "CF.INFO", "k"),
        cf_info_reply([2120, 512, 2, 8, 0, 2, 1, 20])
    );
    assert_eq!(call!(c, "CF.DEL", "k", "x"), Int(1));
    assert_eq!(call!(c, "CF.ADDNX", "k", "x"), Int(0));
}

#[test]
fn exists_mexists_count() {
    let server = Server::start();
    let mut c = server.client();
    assert_replies(
        &mut c,
        &[
            (&["CF.EXISTS", "k"], arity("cf.exists")),
            (&["CF.EXISTS", "k", "a", "b"], arity("cf.exists")),
            (&["CF.MEXISTS", "k"], arity("cf.mexists")),
            (&["CF.COUNT", "k"], arity("cf.count")),
            (&["CF.COUNT", "k", "a", "b"], arity("cf.count")),
        ],
    );
    // A missing key or one of another type is an empty filter.
    assert_eq!(call!(c, "SET", "s", "x"), ok());
    for key in ["missing", "s"] {
        assert_eq!(call!(c, "CF.EXISTS", key, "a"), Int(0));
        assert_eq!(call!(c, "CF.MEXISTS", key, "a", "b"), ints(&[0, 0]));
        assert_eq!(call!(c, "CF.COUNT", key, "a"), Int(0));
    }
    assert_eq!(
        call!(c, "CF.INSERT", "k", "ITEMS", "a", "a", "a", "b"),
        ints(&[1, 1, 1, 1])
    );
    assert_eq!(call!(c, "CF.EXISTS", "k", "a"), Int(1));
    assert_eq!(call!(c, "CF.EXISTS", "k", "c"), Int(0));
    assert_eq!(call!(c, "CF.MEXISTS", "k", "a", "c", "b"), ints(&[1, 0, 1]));
    assert_eq!(call!(c, "CF.COUNT", "k", "a"), Int(3));
    assert_eq!(call!(c, "CF.COUNT", "k", "c"), Int(0));
    c.resp3();
    assert_eq!(call!(c, "CF.EXISTS", "k", "a"), Bool(true));
    assert_eq!(call!(c, "CF.EXISTS", "missing", "a"), Bool(false));
    assert_eq!(call!(c, "CF.EXISTS", "s", "a"), Bool(false));
    assert_eq!(call!(c, "CF.MEXISTS", "k", "a", "c"), bools(&[true, false]));
    assert_eq!(call!(c, "CF.MEXISTS", "s", "a"), bools(&[false]));
    assert_eq!(call!(c, "CF.COUNT", "k", "a"), Int(3));
    assert_eq!(call!(c, "CF.COUNT", "s", "a"), Int(0));
}

#[test]
fn del() {
    let server = Server::start();
    let mut c = server.client();
    assert_replies(
        &mut c,
        &[
            (&["CF.DEL", "k"], arity("cf.del")),
            (&["CF.DEL", "k", "a", "b"], arity("cf.del")),
            (&["CF.DEL", "missing", "a"], err("Not found")),
        ],
    );
    assert_eq!(call!(c, "SET", "s", "x"), ok());
    assert_eq!(call!(c, "CF.DEL", "s", "a"), err("Not found"));
    assert_eq!(
        call!(c, "CF.INSERT", "k", "ITEMS", "a", "a", "b"),
        ints(&[1, 1, 1])
    );
    assert_eq!(call!(c, "CF.DEL", "k", "a"), Int(1));
    assert_eq!(call!(c, "CF.COUNT", "k", "a"), Int(1));
    assert_eq!(call!(c, "CF.DEL", "k", "a"), Int(1));
    assert_eq!(call!(c, "CF.DEL", "k", "a"), Int(0));
    assert_eq!(call!(c, "CF.EXISTS", "k", "a"), Int(0));
    assert_eq!(
        call!(c, "CF.INFO", "k"),
        cf_info_reply([1080, 512, 1, 1, 2, 2, 1, 20])
    );
    c.resp3();
    assert_eq!(call!(c, "CF.DEL", "k", "b"), Bool(true));
    assert_eq!(call!(c, "CF.DEL", "k", "b"), Bool(false));
}

#[test]
fn grows_until_maximum_expansions() {
    // Reference 6.6: capacity 4 (2 buckets), expansion 1 stops at the 126th add.
    let server = Server::start();
    let mut c = server.client();
    assert_eq!(call!(c, "CF.RESERVE", "m", "4", "EXPANSION", "1"), ok());
    for i in 0..125 {
        assert_eq!(
            call!(c, "CF.ADD", "m", format!("item{i}")),
            Int(1),
            "item{i}"
        );
    }
    let refused = err("Maximum expansions reached");
    assert_eq!(call!(c, "CF.ADD", "m", "item125"), refused);
    assert_eq!(
        call!(c, "CF.INFO", "m"),
        cf_info_reply([680, 2, 32, 125, 0, 2, 1, 20])
    );
    // Refused before the item is looked at, whole command for the multi-item forms.
    assert_replies(
        &mut c,
        &[
            (&["CF.ADDNX", "m", "item0"], refused.clone()),
            (&["CF.INSERT", "m", "ITEMS", "a", "b"], refused.clone()),
            (&["CF.INSERTNX", "m", "ITEMS", "item0"], refused.clone()),
        ],
    );
    // Reads and deletes still work; a delete alone does not lift the limit.
    assert_eq!(call!(c, "CF.EXISTS", "m", "item124"), Int(1));
    assert_eq!(call!(c, "CF.DEL", "m", "item0"), Int(1));
    assert_eq!(info_field(&mut c, "m", "Number of filters"), 32);
    assert_eq!(call!(c, "CF.ADD", "m", "item0"), refused);
    for i in 1..125 {
        assert_eq!(
            call!(c, "CF.EXISTS", "m", format!("item{i}")),
            Int(1),
            "item{i}"
        );
    }
}

#[test]
fn growth_beyond_the_memory_cap_is_refused() {
    let server = Server::build(&["MAX_FILTER_BYTES", "1024"], &[]);
    let mut c = server.client();
    // The default auto-created filter (1080 bytes) is over this cap.
    assert_eq!(call!(c, "CF.ADD", "auto", "a"), too_large(1024));
    assert_eq!(call!(c, "CF.INSERT", "auto", "ITEMS", "a"), too_large(1024));
    assert_eq!(call!(c, "EXISTS", "auto"), Int(0));
    assert_eq!(call!(c, "CF.RESERVE", "g", "4", "EXPANSION", "2"), ok());
    let mut i = 0;
    let reply = loop {
        let reply = call!(c, "CF.ADD", "g", format!("item{i}"));
        if reply != Int(1) {
            break reply;
        }
        i += 1;
    };
    assert_eq!(reply, cuckoo_too_large(1024));
    let size = info_field(&mut c, "g", "Size");
    assert!(size <= 1024, "{size}");
    assert_eq!(info_field(&mut c, "g", "Number of items inserted"), i);
    assert_eq!(
        call!(c, "CF.INSERT", "g", "ITEMS", format!("item{i}")),
        ints(&[-1])
    );
    c.resp3();
    assert_eq!(
        call!(c, "CF.INSERT", "g", "ITEMS", format!("item{i}")),
        bools(&[false])
    );
}

#[test]
fn no_false_negatives_with_interleaved_deletes() {
    let server = Server::start();
    let mut c = server.client();
    assert_eq!(
        call!(c, "CF.RESERVE", "nf", "100000", "EXPANSION", "2"),
        ok()
    );
    let total = 100_000;
    let mut expected = Vec::new();
    for i in 0..total {
        c.send(&["CF.ADD".to_string(), "nf".into(), format!("keep/{i}")]);
        expected.push(Int(1));
        if i % 3 == 0 {
            c.send(&["CF.ADD".to_string(), "nf".into(), format!("other/{i}")]);
            expected.push(Int(1));
        }
        if i % 3 == 2 {
            c.send(&[
                "CF.DEL".to_string(),
                "nf".into(),
                format!("other/{}", i - 2),
            ]);
            expected.push(Int(1));
        }
    }
    for (n, want) in expected.iter().enumerate() {
        assert_eq!(&c.read(), want, "reply {n}");
    }
    // other/99999 is the one extra item never deleted.
    assert_eq!(
        info_field(&mut c, "nf", "Number of items inserted"),
        total + 1
    );
    for batch in (0..total).collect::<Vec<_>>().chunks(1000) {
        let mut args = vec!["CF.MEXISTS".to_string(), "nf".into()];
        args.extend(batch.iter().map(|i| format!("keep/{i}")));
        assert_eq!(c.call(&args), ints(&vec![1; batch.len()]));
    }
}

#[test]
fn compact_drops_emptied_trailing_sub_filters() {
    let server = Server::start();
    let mut c = server.client();
    assert_replies(
        &mut c,
        &[
            (&["CF.COMPACT"], arity("cf.compact")),
            (&["CF.COMPACT", "k", "x"], arity("cf.compact")),
            (
                &["CF.COMPACT", "missing"],
                err("Cuckoo filter was not found"),
            ),
        ],
    );
    assert_eq!(call!(c, "SET", "s", "x"), ok());
    assert_eq!(
        call!(c, "CF.COMPACT", "s"),
        err("Cuckoo filter was not found")
    );

    assert_eq!(call!(c, "CF.RESERVE", "c", "1000"), ok());
    // item675 is the first item that does not fit the first sub-filter.
    for i in 0..=680 {
        c.send(&["CF.ADD".to_string(), "c".into(), format!("item{i}")]);
    }
    for _ in 0..=680 {
        assert_eq!(c.read(), Int(1));
    }
    assert_eq!(
        call!(c, "CF.INFO", "c"),
        cf_info_reply([2120, 512, 2, 681, 0, 2, 1, 20])
    );
    for i in 675..680 {
        assert_eq!(call!(c, "CF.DEL", "c", format!("item{i}")), Int(1));
    }
    // Five deletes stay under the automatic compaction threshold (10% of the items).
    assert_eq!(
        call!(c, "CF.INFO", "c"),
        cf_info_reply([2120, 512, 2, 676, 5, 2, 1, 20])
    );
    assert_eq!(call!(c, "CF.COMPACT", "c"), ok());
    // item680 moved into the first sub-filter and the emptied second one is gone.
    assert_eq!(
        call!(c, "CF.INFO", "c"),
        cf_info_reply([1080, 512, 1, 676, 0, 2, 1, 20])
    );
    let mut args = vec!["CF.MEXISTS".to_string(), "c".into()];
    args.extend((0..675).chain([680]).map(|i| format!("item{i}")));
    assert_eq!(c.call(&args), ints(&[1; 676]));
    assert_eq!(call!(c, "CF.COMPACT", "c"), ok());
    assert_eq!(
        call!(c, "CF.INFO", "c"),
        cf_info_reply([1080, 512, 1, 676, 0, 2, 1, 20])
    );
}

#[test]
fn automatic_compaction_after_many_deletes() {
    let server = Server::start();
    let mut c = server.client();
    assert_eq!(call!(c, "CF.RESERVE", "c", "4"), ok());
    for i in 0..40 {
        assert_eq!(call!(c, "CF.ADD", "c", format!("item{i}")), Int(1));
    }
    let before = info_field(&mut c, "c", "Number of filters");
    assert!(before > 2, "{before}");
    for i in 0..40 {
        assert_eq!(
            call!(c, "CF.DEL", "c", format!("item{i}")),
            Int(1),
            "item{i}"
        );
    }
    // Once a single sub-filter is left, deletes no longer compact (nor reset the counter).
    assert_eq!(
        call!(c, "CF.INFO", "c"),
        cf_info_reply([60, 2, 1, 0, 4, 2, 1, 20])
    );
}

#[test]
fn scandump_steps_and_errors() {
    let server = Server::start();
    let mut c = server.client();
    assert_eq!(call!(c, "CF.SCANDUMP", "k"), arity("cf.scandump"));
    assert_eq!(call!(c, "CF.SCANDUMP", "k", "0", "x"), arity("cf.scandump"));
    // The iterator is checked before the key.
    assert_replies(
        &mut c,
        &[
            (&["CF.SCANDUMP", "missing", "x"], err("Invalid position")),
            (&["CF.SCANDUMP", "missing", "-1"], err("Invalid position")),
            (&["CF.SCANDUMP", "missing", "0"], err("ERR not found")),
        ],
    );
    assert_eq!(call!(c, "SET", "s", "x"), ok());
    assert_eq!(call!(c, "CF.SCANDUMP", "s", "0"), err(WRONGTYPE));
    // An empty filter cannot be dumped.
    assert_eq!(call!(c, "CF.RESERVE", "empty", "8"), ok());
    assert_eq!(
        call!(c, "CF.SCANDUMP", "empty", "0"),
        Array(vec![Int(0), Nil])
    );
    assert_eq!(
        call!(c, "CF.SCANDUMP", "empty", "1"),
        Array(vec![Int(0), Nil])
    );

    // Reference 8.2.
    assert_eq!(call!(c, "CF.RESERVE", "cf", "8", "EXPANSION", "2"), ok());
    for i in 0..20 {
        assert_eq!(call!(c, "CF.ADD", "cf", format!("item{i}")), Int(1));
    }
    let header =
        hex("1400000000000000040000000000000000000000000000000200000000000000020014000200");
    let first = hex("a596b40783192a00");
    let second = hex("3904b4e61ea29c61000038ad9cb93400");
    assert_eq!(
        call!(c, "CF.SCANDUMP", "cf", "0"),
        Array(vec![Int(1), bulk(&header)])
    );
    assert_eq!(
        call!(c, "CF.SCANDUMP", "cf", "1"),
        Array(vec![Int(9), bulk(&first)])
    );
    assert_eq!(
        call!(c, "CF.SCANDUMP", "cf", "9"),
        Array(vec![Int(25), bulk(&second)])
    );
    assert_eq!(
        call!(c, "CF.SCANDUMP", "cf", "25"),
        Array(vec![Int(0), Nil])
    );
    assert_eq!(
        call!(c, "CF.SCANDUMP", "cf", "1000"),
        Array(vec![Int(0), Nil])
    );
    // An offset inside a sub-filter returns the whole sub-filter from its start.
    assert_eq!(
        call!(c, "CF.SCANDUMP", "cf", "5"),
        Array(vec![Int(13), bulk(&first)])
    );
    assert_eq!(
        call!(c, "CF.SCANDUMP", "cf", "12"),
        Array(vec![Int(28), bulk(&second)])
    );
    c.resp3();
    assert_eq!(
        call!(c, "CF.SCANDUMP", "cf", "25"),
        Array(vec![Int(0), Nil])
    );
    assert_eq!(
        call!(c, "CF.SCANDUMP", "empty", "0"),
        Array(vec![Int(0), Nil])
    );
}

pub fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// A CF.LOADCHUNK header: items, buckets, deletes, filters, bucket size, max iterations,
/// expansion.
fn header(
    items: u64,
    buckets: u64,
    deletes: u64,
    filters: u64,
    bucket_size: u16,
    max_iterations: u16,
    expansion: u16,
) -> Vec<u8> {
    let mut out = Vec::new();
    for word in [items, buckets, deletes, filters] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    for half in [bucket_size, max_iterations, expansion] {
        out.extend_from_slice(&half.to_le_bytes());
    }
    out
}

#[test]
fn loadchunk_round_trip_and_errors() {
    let server = Server::start();
    let mut c = server.client();
    assert_replies(
        &mut c,
        &[
            (&["CF.LOADCHUNK", "k", "1"], arity("cf.loadchunk")),
            (&["CF.LOADCHUNK", "k", "1", "x", "y"], arity("cf.loadchunk")),
            (&["CF.LOADCHUNK", "k", "x", "data"], err("Invalid position")),
            (&["CF.LOADCHUNK", "k", "0", "data"], err("Invalid position")),
            (&["CF.LOADCHUNK", "k", "9", "data"], err("ERR not found")),
            (&["CF.LOADCHUNK", "k", "-3", "data"], err("ERR not found")),
        ],
    );
    assert_eq!(call!(c, "SET", "s", "x"), ok());
    assert_eq!(
        call!(c, "CF.LOADCHUNK", "s", "1", header(0, 4, 0, 1, 2, 20, 1)),
        err(WRONGTYPE)
    );
    assert_eq!(call!(c, "CF.LOADCHUNK", "s", "9", "data"), err(WRONGTYPE));
    assert_eq!(
        call!(c, "CF.LOADCHUNK", "k", "1", "short"),
        err("Invalid header")
    );
    let mut long = header(0, 4, 0, 1, 2, 20, 1);
    long.push(0);
    assert_eq!(
        call!(c, "CF.LOADCHUNK", "k", "1", long),
        err("Invalid header")
    );

    let full = hex("1400000000000000040000000000000000000000000000000200000000000000020014000200");
    assert_eq!(call!(c, "CF.LOADCHUNK", "cf", "1", full), ok());
    assert_eq!(
        call!(c, "CF.LOADCHUNK", "cf", "1", full),
        err("ERR item exists")
    );
    assert_eq!(
        call!(c, "CF.INFO", "cf"),
        cf_info_reply([96, 4, 2, 20, 0, 2, 2, 20])
    );
    assert_eq!(call!(c, "CF.EXISTS", "cf", "item3"), Int(0));
    let first = hex("a596b40783192a00");
    let second = hex("3904b4e61ea29c61000038ad9cb93400");
    let refused = err("Couldn't load chunk!");
    assert_eq!(call!(c, "CF.LOADCHUNK", "cf", "9", ""), refused);
    assert_eq!(call!(c, "CF.LOADCHUNK", "cf", "-9", first), refused);
    assert_eq!(call!(c, "CF.LOADCHUNK", "cf", "8", first), refused);
    // Bytes 4..20 span both sub-filters; bytes 20..36 run past the end.
    assert_eq!(call!(c, "CF.LOADCHUNK", "cf", "21", second), refused);
    assert_eq!(call!(c, "CF.LOADCHUNK", "cf", "37", second), refused);
    assert_eq!(call!(c, "CF.LOADCHUNK", "cf", "9", first), ok());
    assert_eq!(call!(c, "CF.LOADCHUNK", "cf", "25", second), ok());
    let mut args = vec!["CF.MEXISTS".to_string(), "cf".into()];
    args.extend((0..20).map(|i| format!("item{i}")));
    assert_eq!(c.call(&args), ints(&[1; 20]));
    assert_eq!(
        scandump(&mut c, "CF.SCANDUMP", "cf"),
        vec![(1, full.clone()), (9, first.clone()), (25, second.clone())]
    );
    // A chunk at an offset inside a sub-filter is accepted.
    assert_eq!(call!(c, "CF.LOADCHUNK", "cf", "5", &first[..4]), ok());
}

#[test]
fn loadchunk_refuses_lying_headers() {
    let server = Server::start();
    let mut c = server.client();
    let refused = err("Couldn't create filter!");
    let cases = [
        header(0, 4, 0, 65536, 2, 20, 1),
        header(0, 4, 0, 0, 2, 20, 1),
        header(0, 4, 0, 1, 0, 20, 1),
        header(0, 4, 0, 1, 256, 20, 1),
        header(0, 3, 0, 1, 2, 20, 1),
        header(0, 0, 0, 1, 2, 20, 1),
        header(0, 1 << 56, 0, 1, 2, 20, 1),
        header(0, 4, 0, 1, 2, 0, 1),
        header(0, 4, 0, 2, 2, 20, 0),
    ];
    for (i, bytes) in cases.iter().enumerate() {
        assert_eq!(
            call!(c, "CF.LOADCHUNK", format!("k{i}"), "1", bytes.as_slice()),
            refused,
            "case {i}"
        );
    }
    assert_eq!(call!(c, "DBSIZE"), Int(0));
    // Deviation D1: a valid header over the memory cap.
    assert_eq!(
        call!(
            c,
            "CF.LOADCHUNK",
            "big",
            "1",
            header(0, 1 << 40, 0, 1, 2, 20, 1)
        ),
        too_large(DEFAULT_MAX_FILTER_BYTES)
    );
    assert_eq!(
        call!(
            c,
            "CF.LOADCHUNK",
            "many",
            "1",
            header(0, 1 << 20, 0, 65535, 2, 20, 1)
        ),
        too_large(DEFAULT_MAX_FILTER_BYTES)
    );
    assert_eq!(call!(c, "DBSIZE"), Int(0));
    // The filter count is truncated to 16 bits; counters are taken as they are; the expansion
    // is not rounded.
    assert_eq!(
        call!(
            c,
            "CF.LOADCHUNK",
            "t",
            "1",
            header(1 << 63, 4, 7, 65537, 2, 20, 1)
        ),
        ok()
    );
    assert_eq!(
        call!(c, "CF.INFO", "t"),
        cf_info_reply([64, 4, 1, i64::MIN, 7, 2, 1, 20])
    );
    assert_eq!(
        call!(c, "CF.LOADCHUNK", "x3", "1", header(0, 4, 0, 2, 2, 20, 3)),
        ok()
    );
    assert_eq!(
        call!(c, "CF.INFO", "x3"),
        cf_info_reply([104, 4, 2, 0, 0, 2, 3, 20])
    );
    assert_eq!(call!(c, "CF.LOADCHUNK", "x3", "9", [1u8; 8]), ok());
    assert_eq!(call!(c, "CF.LOADCHUNK", "x3", "33", [2u8; 24]), ok());
}

#[test]
fn module_argument_cf_max_expansions() {
    let server = Server::build(&["CF_MAX_EXPANSIONS", "1"], &[]);
    let mut c = server.client();
    let refused = err("Maximum expansions reached");
    // The empty filter is created, then the add is refused.
    assert_eq!(call!(c, "CF.ADD", "k", "a"), refused);
    assert_eq!(
        call!(c, "CF.INFO", "k"),
        cf_info_reply([1080, 512, 1, 0, 0, 2, 1, 20])
    );
    assert_replies(
        &mut c,
        &[
            (&["CF.ADDNX", "k", "a"], refused.clone()),
            (&["CF.INSERT", "k", "ITEMS", "a"], refused.clone()),
            (&["CF.INSERTNX", "new", "ITEMS", "a"], refused.clone()),
        ],
    );
    assert_eq!(call!(c, "CF.RESERVE", "r", "100"), ok());
    assert_eq!(call!(c, "CF.ADD", "r", "a"), refused);
    drop(c);
    drop(server);

    let server = Server::build(&["cf_max_expansions", "2"], &[]);
    let mut c = server.client();
    assert_eq!(call!(c, "CF.RESERVE", "m", "4"), ok());
    let mut added = 0;
    while call!(c, "CF.ADD", "m", format!("item{added}")) == Int(1) {
        added += 1;
    }
    assert_eq!(call!(c, "CF.ADD", "m", "again"), refused);
    assert_eq!(info_field(&mut c, "m", "Number of filters"), 2);
    assert!(added >= 4, "{added}");

    for (value, reason) in [
        ("0", "CF_MAX_EXPANSIONS must be an integer >= 1"),
        ("-3", "CF_MAX_EXPANSIONS must be an integer >= 1"),
        ("abc", "Invalid argument for 'CF_MAX_EXPANSIONS'"),
        ("1.5", "Invalid argument for 'CF_MAX_EXPANSIONS'"),
    ] {
        let log = failed_start_log(&["CF_MAX_EXPANSIONS", value]);
        assert!(log.contains(reason), "{value}: {log}");
    }
}

/// Reads subscription messages until `count` keyspace events have arrived.
#[test]
fn keyspace_events_only_when_the_value_changed() {
    let server = Server::start();
    let mut c = server.client();
    assert_eq!(
        call!(c, "CONFIG", "SET", "notify-keyspace-events", "Kg"),
        ok()
    );
    let mut sub = server.client();
    sub.send(&["PSUBSCRIBE", "__keyspace@0__:*"]);
    assert_eq!(sub.read().array()[0], bulk("psubscribe"));
    let commands: &[&[&str]] = &[
        &["CF.RESERVE", "r", "100"],
        &["CF.RESERVE", "r", "100"],
        &["CF.ADD", "a", "x"],
        &["CF.ADDNX", "a", "x"],
        &["CF.ADDNX", "a", "y"],
        &["CF.INSERT", "a", "ITEMS", "z"],
        &["CF.INSERTNX", "a", "ITEMS", "z"],
        &["CF.INSERTNX", "a", "ITEMS", "w"],
        &["CF.EXISTS", "a", "x"],
        &["CF.DEL", "a", "nothing"],
        &["CF.DEL", "a", "x"],
        &["CF.COMPACT", "r"],
        &["CF.COMPACT", "a"],
        &["CF.SCANDUMP", "a", "0"],
        &["CF.LOADCHUNK", "l", "1", "short"],
    ];
    for command in commands {
        c.call(command);
    }
    let header = call!(c, "CF.SCANDUMP", "a", "0").array()[1].bytes();
    assert_eq!(call!(c, "CF.LOADCHUNK", "l", "1", header), ok());
    assert_eq!(call!(c, "CF.ADD", "end", "x"), Int(1));
    let mut expected: Vec<String> = [
        ("r", "cf.reserve"),
        ("a", "cf.add"),
        ("a", "cf.addnx"),
        ("a", "cf.insert"),
        ("a", "cf.insertnx"),
        ("a", "cf.del"),
        ("a", "cf.compact"),
        ("l", "cf.loadchunk"),
        ("end", "cf.add"),
    ]
    .iter()
    .map(|(key, event)| format!("__keyspace@0__:{key} {event}"))
    .collect();
    expected.sort();
    let mut got = events(&mut sub, expected.len());
    got.sort();
    assert_eq!(got, expected);
}

#[test]
fn command_flags_as_registered_by_redisbloom() {
    let server = Server::start();
    let mut c = server.client();
    let write = ["write", "denyoom", "module"];
    let read = ["readonly", "module", "fast"];
    let cases: &[(&str, &[&str])] = &[
        ("cf.reserve", &write),
        ("cf.add", &write),
        ("cf.addnx", &write),
        ("cf.insert", &write),
        ("cf.insertnx", &write),
        ("cf.exists", &read),
        ("cf.mexists", &read),
        ("cf.count", &read),
        ("cf.del", &["write", "module", "fast"]),
        ("cf.compact", &read),
        // Not fast (deviation D16): a reply of up to 16 MiB.
        ("cf.scandump", &["readonly", "module"]),
        ("cf.loadchunk", &write),
        ("cf.info", &read),
        ("cf.debug", &read),
    ];
    for (name, flags) in cases {
        let info = call!(c, "COMMAND", "INFO", *name).array()[0].array();
        assert_eq!(info[0], bulk(name));
        assert_eq!(info[1], Int(-1), "{name}");
        let got: Vec<String> = info[2].array().iter().map(Reply::text).collect();
        assert_eq!(got, *flags, "{name}");
        assert_eq!(info[3..6], [Int(1), Int(1), Int(1)], "{name}");
    }
}

#[test]
fn write_commands_invalidate_watch_even_without_a_change() {
    let server = Server::start();
    let mut c = server.client();
    let mut other = server.client();
    assert_eq!(call!(c, "CF.ADD", "k", "a"), Int(1));
    for command in [
        &["CF.DEL", "k", "absent"][..],
        &["CF.COMPACT", "k"],
        &["CF.ADDNX", "k", "a"],
    ] {
        assert_eq!(call!(c, "WATCH", "k"), ok());
        other.call(command);
        assert_eq!(call!(c, "MULTI"), ok());
        assert_eq!(call!(c, "PING"), Simple("QUEUED".into()));
        assert_eq!(call!(c, "EXEC"), NilArray, "{command:?}");
    }
    assert_eq!(call!(c, "WATCH", "k"), ok());
    assert_eq!(call!(other, "CF.EXISTS", "k", "a"), Int(1));
    assert_eq!(call!(other, "CF.SCANDUMP", "k", "0").array()[0], Int(1));
    assert_eq!(call!(c, "MULTI"), ok());
    assert_eq!(call!(c, "PING"), Simple("QUEUED".into()));
    assert_eq!(call!(c, "EXEC"), Array(vec![Simple("PONG".into())]));
}
