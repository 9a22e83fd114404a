//! COMMAND DOCS, INFO and configuration: the module's commands and values are visible like
//! built-in ones.
pub mod common;

use common::*;

const COMMANDS: [&str; 31] = [
    "bf.reserve",
    "bf.add",
    "bf.madd",
    "bf.insert",
    "bf.exists",
    "bf.mexists",
    "bf.info",
    "bf.card",
    "bf.debug",
    "bf.scandump",
    "bf.loadchunk",
    "bf.retire",
    "bf.promote",
    "bf.freeze",
    "bf.load",
    "bf.del",
    "bf.mdel",
    "cf.reserve",
    "cf.add",
    "cf.addnx",
    "cf.insert",
    "cf.insertnx",
    "cf.exists",
    "cf.mexists",
    "cf.count",
    "cf.del",
    "cf.compact",
    "cf.info",
    "cf.debug",
    "cf.scandump",
    "cf.loadchunk",
];

/// A RESP2 flat list of pairs, as a lookup.
fn field(reply: &[Reply], name: &str) -> Option<Reply> {
    reply
        .chunks(2)
        .find(|pair| pair[0] == bulk(name))
        .map(|pair| pair[1].clone())
}

/// How COMMAND DOCS describes every command's first argument, the key.
fn key_argument() -> Vec<Reply> {
    vec![
        bulk("name"),
        bulk("key"),
        bulk("type"),
        bulk("key"),
        bulk("key_spec_index"),
        Int(0),
    ]
}

#[test]
fn command_docs_for_every_command() {
    let s = Server::start();
    let mut c = s.client();
    for name in COMMANDS {
        let docs = strip_display_text(&call!(c, "COMMAND", "DOCS", name)).array();
        assert_eq!(docs[0], bulk(name));
        let doc = docs[1].array();
        assert_eq!(field(&doc, "group"), Some(bulk("module")), "{name}");
        assert_eq!(field(&doc, "module"), Some(bulk("bf")), "{name}");
        assert!(
            matches!(field(&doc, "summary"), Some(Bulk(s)) if s.len() > 10),
            "{name}"
        );
        assert!(
            matches!(field(&doc, "complexity"), Some(Bulk(s)) if s.starts_with(b"O(")),
            "{name}"
        );
        let arguments = field(&doc, "arguments").unwrap().array();
        let key = arguments[0].array();
        assert_eq!(key[..6], key_argument(), "{name}");
    }
    let add = strip_display_text(&call!(c, "COMMAND", "DOCS", "bf.add")).array()[1].array();
    assert_eq!(
        field(&add, "summary"),
        Some(bulk("Adds an item to a Bloom Filter"))
    );
    assert_eq!(field(&add, "since"), Some(bulk("1.0.0")));
    assert_eq!(
        field(&add, "arguments"),
        Some(Array(vec![
            Array(key_argument()),
            Array(vec![
                bulk("name"),
                bulk("item"),
                bulk("type"),
                bulk("string")
            ]),
        ]))
    );
    let info = strip_display_text(&call!(c, "COMMAND", "DOCS", "bf.info")).array()[1].array();
    let single = field(&info, "arguments").unwrap().array()[1].array();
    assert_eq!(
        single[..6],
        [
            bulk("name"),
            bulk("single_value"),
            bulk("type"),
            bulk("oneof"),
            bulk("flags"),
            Array(vec![Simple("optional".into())])
        ]
    );
    let choices = single[7].array();
    // RedisBloom's five fields, then bloomrs's RATE.
    assert_eq!(choices.len(), 6);
    assert_eq!(
        choices[0].array()[..6],
        [
            bulk("name"),
            bulk("capacity"),
            bulk("type"),
            bulk("pure-token"),
            bulk("token"),
            bulk("CAPACITY")
        ]
    );
    // bloomrs's own Bloom options are documented beside RedisBloom's.
    for name in ["bf.reserve", "bf.insert"] {
        let doc = strip_display_text(&call!(c, "COMMAND", "DOCS", name)).array()[1].array();
        let arguments = field(&doc, "arguments").unwrap().array();
        let tokens: Vec<Reply> = arguments
            .iter()
            .filter_map(|argument| field(&argument.array(), "token"))
            .collect();
        for keyword in ["WINDOW", "GENERATIONS", "COUNTING", "COMPACT", "BLOCKED"] {
            assert!(tokens.contains(&bulk(keyword)), "{name} {keyword}");
        }
    }
    // The docs leave the legacy key spec and arity in place.
    let command = call!(c, "COMMAND", "INFO", "cf.insert").array()[0].array();
    assert_eq!(command[1], Int(-1));
    assert_eq!(
        call!(c, "COMMAND", "GETKEYS", "cf.insert", "k", "ITEMS", "a"),
        Array(vec![bulk("k")])
    );
}

fn config_get(c: &mut Client, name: &str) -> Reply {
    call!(c, "CONFIG", "GET", name)
}

#[test]
fn settings_are_module_configurations() {
    let s = Server::build(
        &["ERROR_RATE", "0.001", "CF_MAX_EXPANSIONS", "4"],
        &["--bf.bf-initial-size", "500"],
    );
    let mut c = s.client();
    let expected = [
        ("bf.bf-error-rate", "0.001"),
        ("bf.bf-initial-size", "500"),
        ("bf.bf-expansion-factor", "2"),
        ("bf.cf-bucket-size", "2"),
        ("bf.cf-initial-size", "1024"),
        ("bf.cf-max-iterations", "20"),
        ("bf.cf-expansion-factor", "1"),
        ("bf.cf-max-expansions", "4"),
        ("bf.max-filter-bytes", "4294967296"),
    ];
    for (name, value) in expected {
        assert_eq!(
            config_get(&mut c, name),
            Array(vec![bulk(name), bulk(value)]),
            "{name}"
        );
    }
    assert_eq!(call!(c, "BF.ADD", "k", "x"), Int(1));
    assert_eq!(
        call!(c, "BF.DEBUG", "k").array()[1],
        bulk("bytes:992 bits:7936 hashes:11 hashwidth:64 capacity:500 size:1 ratio:0.0005")
    );

    assert_eq!(call!(c, "CONFIG", "SET", "bf.bf-error-rate", "0.1"), ok());
    assert_eq!(call!(c, "CONFIG", "SET", "bf.bf-initial-size", "10"), ok());
    assert_eq!(call!(c, "BF.ADD", "k2", "x"), Int(1));
    assert_eq!(
        call!(c, "BF.DEBUG", "k2").array()[1],
        bulk("bytes:8 bits:64 hashes:5 hashwidth:64 capacity:10 size:1 ratio:0.05")
    );
    assert_eq!(
        config_get(&mut c, "bf.bf-error-rate"),
        Array(vec![bulk("bf.bf-error-rate"), bulk("0.1")])
    );

    // Each refused value: the setting, the value, and the reason the server gives. Where the
    // server has unprefixed configurations (Redis 8), `bf.<name>` is the alias of RedisBloom 8's
    // name and takes its ranges and texts (`tests/unprefixed_configs.rs`).
    let rb8 = has_unprefixed_configs(&server_info(&mut c));
    let by_server = |ours: &'static str, redisbloom8: &'static str| {
        if rb8 {
            redisbloom8
        } else {
            ours
        }
    };
    let refused = [
        (
            "bf.bf-error-rate",
            "1",
            by_server(
                "error rate must be in the range (0, 1)",
                "Value for `bf-error-rate` must be in the range (0.000000, 1.000000)",
            ),
        ),
        (
            "bf.bf-error-rate",
            "abc",
            by_server(
                "error rate must be a number",
                "Invalid value for `bf-error-rate`",
            ),
        ),
        (
            "bf.cf-bucket-size",
            "256",
            by_server(
                "argument must be between 1 and 255 inclusive",
                "Value for `cf-bucket-size` must be in the range [1, 255]",
            ),
        ),
        (
            "bf.cf-max-iterations",
            "0",
            by_server(
                "argument must be between 1 and 65535 inclusive",
                "Value for `cf-max-iterations` must be in the range [1, 65535]",
            ),
        ),
        (
            "bf.cf-initial-size",
            "3",
            by_server(
                "cf-initial-size must be at least twice cf-bucket-size",
                "Value for `cf-initial-size` must be in the range [4, 1073741824]",
            ),
        ),
        (
            "bf.max-filter-bytes",
            "100",
            "argument must be between 1024 and 9223372036854775807 inclusive",
        ),
    ];
    for (name, value, reason) in refused {
        assert_eq!(
            call!(c, "CONFIG", "SET", name, value),
            err(&format!(
                "ERR CONFIG SET failed (possibly related to argument '{name}') - {reason}"
            )),
            "{name} {value}"
        );
    }

    // The memory limit takes units and applies at once.
    assert_eq!(
        call!(c, "CONFIG", "SET", "bf.max-filter-bytes", "1mb"),
        ok()
    );
    assert_eq!(
        config_get(&mut c, "bf.max-filter-bytes"),
        Array(vec![bulk("bf.max-filter-bytes"), bulk("1048576")])
    );
    assert_eq!(
        call!(c, "BF.RESERVE", "big", "0.01", "1000000"),
        too_large(1048576)
    );
    assert_eq!(call!(c, "BF.RESERVE", "small", "0.01", "100000"), ok());

    // CF_MAX_EXPANSIONS from the load arguments, then changed at run time.
    assert_eq!(call!(c, "CF.RESERVE", "cf", "4", "EXPANSION", "1"), ok());
    let mut added = 0;
    while call!(c, "CF.ADD", "cf", format!("i{added}")) == Int(1) {
        added += 1;
    }
    assert_eq!(
        call!(c, "CF.ADD", "cf", "more"),
        err("Maximum expansions reached")
    );
    assert_eq!(call!(c, "CONFIG", "SET", "bf.cf-max-expansions", "5"), ok());
    assert_eq!(call!(c, "CF.ADD", "cf", "more"), Int(1));
}

#[test]
fn creation_defaults_follow_the_settings() {
    let s = Server::start();
    let mut c = s.client();
    for (name, value) in [
        ("bf.bf-expansion-factor", "0"),
        ("bf.cf-initial-size", "64"),
        ("bf.cf-bucket-size", "4"),
        ("bf.cf-max-iterations", "7"),
        ("bf.cf-expansion-factor", "3"),
    ] {
        assert_eq!(call!(c, "CONFIG", "SET", name, value), ok(), "{name}");
    }
    assert_eq!(call!(c, "BF.ADD", "bf", "x"), Int(1));
    assert_eq!(call!(c, "BF.INFO", "bf", "expansion"), Array(vec![Nil]));
    assert_eq!(call!(c, "CF.ADD", "cf", "x"), Int(1));
    assert_eq!(
        call!(c, "CF.DEBUG", "cf"),
        bulk("bktsize:4 buckets:16 items:1 deletes:0 filters:1 max_iterations:7 expansion:4")
    );
    assert_eq!(call!(c, "CF.INSERT", "cf2", "ITEMS", "x"), ints(&[1]));
    assert_eq!(
        call!(c, "CF.DEBUG", "cf2"),
        bulk("bktsize:4 buckets:16 items:1 deletes:0 filters:1 max_iterations:7 expansion:4")
    );
}

/// The fields of INFO bf, but the allocation counter (which INFO itself moves).
fn info_bf(c: &mut Client) -> Vec<(String, i64)> {
    info_bf_all(c)
        .into_iter()
        .filter(|(name, _)| name != "bf_module_allocations")
        .collect()
}

/// The numeric fields of INFO bf (all but `bf_bloomrs_version`, which `bf_commands` checks,
/// and `bf_static_freeze`, a running freeze's line, which `freeze_progress` checks).
fn info_bf_all(c: &mut Client) -> Vec<(String, i64)> {
    call!(c, "INFO", "bf")
        .text()
        .lines()
        .filter_map(|line| line.split_once(':'))
        .filter(|(name, _)| !["bf_bloomrs_version", "bf_static_freeze"].contains(name))
        .map(|(name, value)| (name.to_string(), value.trim().parse().unwrap()))
        .collect()
}

fn allocations(c: &mut Client) -> i64 {
    info_bf_all(c)
        .into_iter()
        .find(|(name, _)| name == "bf_module_allocations")
        .unwrap()
        .1
}

#[test]
fn adds_and_lookups_allocate_nothing() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(call!(c, "BF.RESERVE", "bf", "0.01", "100000"), ok());
    assert_eq!(call!(c, "BF.RESERVE", "big", "0.01", "10000000"), ok());
    assert_eq!(call!(c, "CF.RESERVE", "cf", "100000"), ok());
    assert_eq!(
        call!(c, "BF.RESERVE", "ct", "0.01", "100000", "COUNTING"),
        ok()
    );
    // What reading the counter costs by itself (INFO builds its reply with the allocator).
    let first = allocations(&mut c);
    let reading = allocations(&mut c) - first;
    assert!(reading > 0, "the counter counts");
    let before = allocations(&mut c);
    for i in 0..2000 {
        let item = format!("item{i}");
        c.send(&["BF.ADD", "bf", item.as_str()]);
        c.send(&["BF.EXISTS", "bf", item.as_str()]);
        c.send(&["BF.MADD", "big", item.as_str(), "x", "y"]);
        c.send(&["BF.MEXISTS", "big", item.as_str(), "x", "z"]);
        c.send(&["BF.INSERT", "bf", "ITEMS", item.as_str()]);
        c.send(&["CF.ADD", "cf", item.as_str()]);
        c.send(&["CF.EXISTS", "cf", item.as_str()]);
        c.send(&["CF.MEXISTS", "cf", item.as_str(), "nope"]);
        c.send(&["CF.COUNT", "cf", item.as_str()]);
        c.send(&["CF.DEL", "cf", item.as_str()]);
        c.send(&["BF.ADD", "ct", item.as_str()]);
        c.send(&["BF.MEXISTS", "ct", item.as_str(), "x"]);
        c.send(&["BF.MDEL", "ct", item.as_str(), "x"]);
    }
    for _ in 0..26_000 {
        assert!(!matches!(c.read(), Error(_)));
    }
    assert_eq!(
        allocations(&mut c) - before,
        reading,
        "allocations by 26,000 commands"
    );
}

/// The totals INFO should show, added up from BF.INFO / CF.INFO of every key.
fn expected_totals(c: &mut Client, rejected: (i64, i64)) -> Vec<(String, i64)> {
    let mut sums = [0i64; 28];
    for key in call!(c, "KEYS", "*").array().iter().map(Reply::text) {
        let kind = call!(c, "TYPE", key.as_str()).text();
        let cuckoo = kind == "MBbloomCF";
        let info = c
            .call(&[if cuckoo { "CF.INFO" } else { "BF.INFO" }, key.as_str()])
            .array();
        let value = |name: &str| {
            info.chunks(2)
                .find(|p| p[0] == Simple(name.into()))
                .map(|p| p[1].int())
                .unwrap()
        };
        let base = match kind.as_str() {
            "MBbloomCF" => 24,
            "bloomrsST" => 20,
            "bloomrsBK" => 16,
            "bloomrsCP" => 12,
            "bloomrsCT" => 8,
            "bloomrsWN" | "bloomrsWC" => 4,
            _ => 0,
        };
        sums[base] += 1;
        sums[base + 1] += value("Size");
        sums[base + 2] += value("Number of items inserted");
        // A static set counts as frozen or not.
        sums[base + 3] += value(if kind == "bloomrsST" {
            "Frozen"
        } else {
            "Number of filters"
        });
    }
    let names = [
        "bloom_filters",
        "bloom_memory_bytes",
        "bloom_items",
        "bloom_links",
        "windowed_filters",
        "windowed_memory_bytes",
        "windowed_items",
        "windowed_links",
        "counting_filters",
        "counting_memory_bytes",
        "counting_items",
        "counting_links",
        "compact_filters",
        "compact_memory_bytes",
        "compact_items",
        "compact_tables",
        "blocked_filters",
        "blocked_memory_bytes",
        "blocked_items",
        "blocked_links",
        "static_sets",
        "static_memory_bytes",
        "static_items",
        "static_frozen",
        "cuckoo_filters",
        "cuckoo_memory_bytes",
        "cuckoo_items",
        "cuckoo_sub_filters",
    ];
    let mut out: Vec<(String, i64)> = names.iter().map(|n| format!("bf_{n}")).zip(sums).collect();
    out.insert(12, ("bf_counting_ambiguous_deletes".into(), 0));
    // No freeze runs while the totals are compared.
    out.insert(25, ("bf_static_freezing".into(), 0));
    out.push(("bf_rejected_payloads".into(), rejected.0));
    out.push(("bf_rejected_chunks".into(), rejected.1));
    out
}

#[test]
fn info_section_totals() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(info_bf(&mut c), expected_totals(&mut c, (0, 0)));
    assert_eq!(
        call!(c, "BF.RESERVE", "a", "0.01", "10", "EXPANSION", "2"),
        ok()
    );
    for i in 0..100 {
        call!(c, "BF.ADD", "a", format!("{i}"));
        call!(c, "CF.ADD", "c", format!("{i}"));
        call!(c, "BF.MADD", format!("m{}", i % 7), format!("{i}"), "x");
        let w = format!("w{}", i % 3);
        call!(c, "BF.INSERT", w, "WINDOW", "3600", "ITEMS", format!("{i}"));
        call!(
            c,
            "CF.INSERT",
            format!("ci{}", i % 5),
            "CAPACITY",
            "8",
            "ITEMS",
            format!("{i}")
        );
    }
    for i in 0..40 {
        call!(c, "CF.DEL", "c", format!("{i}"));
    }
    assert_eq!(call!(c, "BF.RESERVE", "ct", "0.01", "10", "COUNTING"), ok());
    for i in 0..60 {
        call!(c, "BF.ADD", "ct", format!("{i}"));
    }
    for i in 0..25 {
        call!(c, "BF.DEL", "ct", format!("{i}"));
    }
    assert_eq!(call!(c, "COPY", "ct", "ct2"), Int(1));
    // Compact filters, grown past a few doublings and copied.
    assert_eq!(call!(c, "BF.RESERVE", "cp", "0.01", "10", "COMPACT"), ok());
    for i in 0..300 {
        call!(c, "BF.ADD", "cp", format!("{i}"));
    }
    assert_eq!(call!(c, "COPY", "cp", "cp2"), Int(1));
    // Blocked filters, grown and copied.
    assert_eq!(call!(c, "BF.RESERVE", "bk", "0.01", "10", "BLOCKED"), ok());
    for i in 0..300 {
        call!(c, "BF.ADD", "bk", format!("{i}"));
    }
    assert_eq!(call!(c, "COPY", "bk", "bk2"), Int(1));
    // Static sets: a builder, a frozen copy of it.
    assert_eq!(call!(c, "BF.RESERVE", "st", "0.01", "10", "STATIC"), ok());
    for i in 0..300 {
        call!(c, "BF.ADD", "st", format!("{i}"));
    }
    assert_eq!(call!(c, "COPY", "st", "st2"), Int(1));
    assert_eq!(call!(c, "BF.FREEZE", "st2"), ok());
    call!(c, "CF.COMPACT", "c");
    assert_eq!(call!(c, "COPY", "a", "a2"), Int(1));
    assert_eq!(call!(c, "DEL", "m3"), Int(1));
    let header = call!(c, "BF.SCANDUMP", "a", "0").array()[1].bytes();
    assert_eq!(call!(c, "BF.LOADCHUNK", "lc", "1", header), ok());
    assert_eq!(
        call!(c, "BF.LOADCHUNK", "bad", "1", "garbage"),
        err("ERR received bad data")
    );
    assert_eq!(
        call!(c, "CF.LOADCHUNK", "c", "99999999", "xx"),
        err("Couldn't load chunk!")
    );
    let payload = call!(c, "DUMP", "a").bytes();
    let mut broken = payload.clone();
    broken[12] ^= 0x55;
    assert_eq!(
        call!(c, "RESTORE", "r", "0", with_valid_crc(&broken)),
        err("ERR Bad data format")
    );
    assert_eq!(call!(c, "RESTORE", "r2", "0", payload), ok());
    let totals = info_bf(&mut c);
    assert_eq!(totals, expected_totals(&mut c, (1, 2)));
    let filters = (
        totals[0].1,
        totals[4].1,
        totals[8].1,
        totals[13].1,
        totals[17].1,
    );
    assert_eq!(filters, (10, 3, 2, 2, 2), "{totals:?}");
    assert_eq!(totals[21], ("bf_static_sets".into(), 2), "{totals:?}");
    assert_eq!(totals[26], ("bf_cuckoo_filters".into(), 6), "{totals:?}");

    // Reloading frees and loads every value: the totals stay.
    assert_eq!(call!(c, "DEBUG", "RELOAD"), ok());
    assert_eq!(info_bf(&mut c), expected_totals(&mut c, (1, 2)));
    assert_eq!(call!(c, "FLUSHALL"), ok());
    wait_lazyfree(&mut c);
    assert_eq!(info_bf(&mut c), expected_totals(&mut c, (1, 2)));
    assert_eq!(info_bf(&mut c)[0], ("bf_bloom_filters".to_string(), 0));
    assert!(call!(c, "INFO", "modules")
        .text()
        .contains("bf_rejected_chunks:2"));
}

fn lazyfreed(c: &mut Client) -> i64 {
    info_int(c, "memory", "lazyfreed_objects")
}

/// The commands making a value of every type that reserves its capacity, by name. (A compact
/// filter starts small whatever its capacity and grows by doubling as items arrive.)
const LAZY_FREE_KINDS: [(&str, &[&str]); 5] = [
    ("bloom", &["BF.RESERVE", "0.01"]),
    ("blocked", &["BF.RESERVE", "0.01", "BLOCKED"]),
    ("counting", &["BF.RESERVE", "0.01", "COUNTING"]),
    ("windowed", &["BF.RESERVE", "0.01", "WINDOW", "3600"]),
    ("cuckoo", &["CF.RESERVE"]),
];

/// The command making `key` of `capacity` from a LAZY_FREE_KINDS entry: the command, the key,
/// the leading arguments, the capacity, the rest.
fn reserve(recipe: &[&str], key: &str, capacity: &str) -> Vec<String> {
    let (command, args) = recipe.split_first().expect("a command");
    let leading = if *command == "CF.RESERVE" { 0 } else { 1 };
    let mut out = vec![command.to_string(), key.to_string()];
    out.extend(args[..leading].iter().map(|a| a.to_string()));
    out.push(capacity.to_string());
    out.extend(args[leading..].iter().map(|a| a.to_string()));
    out
}

#[test]
fn large_filters_are_freed_in_the_background() {
    let s = Server::start();
    let mut c = s.client();
    for (kind, recipe) in LAZY_FREE_KINDS {
        let before = lazyfreed(&mut c);
        create(&mut c, recipe, "small", "1000");
        create(&mut c, recipe, "large", "10000000");
        assert_eq!(call!(c, "UNLINK", "small"), Int(1), "{kind}");
        assert_eq!(
            lazyfreed(&mut c),
            before,
            "{kind}: a small value freed in the background"
        );
        assert_eq!(call!(c, "UNLINK", "large"), Int(1), "{kind}");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while lazyfreed(&mut c) < before + 1 {
            assert!(
                std::time::Instant::now() < deadline,
                "{kind}: a large value was not freed in the background"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(lazyfreed(&mut c), before + 1, "{kind}");
        wait_lazyfree(&mut c);
        assert_eq!(info_bf(&mut c), expected_totals(&mut c, (0, 0)), "{kind}");
    }
}

/// `key` made by a LAZY_FREE_KINDS entry for `capacity` items, holding one item (a windowed
/// filter makes its first generation at its first item).
fn create(c: &mut Client, recipe: &[&str], key: &str, capacity: &str) {
    assert_eq!(c.call(&reserve(recipe, key, capacity)), ok(), "{recipe:?}");
    let add = if recipe[0] == "CF.RESERVE" {
        "CF.ADD"
    } else {
        "BF.ADD"
    };
    assert_eq!(call!(c, add, key, "item"), Int(1), "{recipe:?}");
}

/// The server's resident memory, in bytes.
fn resident(c: &mut Client) -> i64 {
    info_int(c, "memory", "used_memory_rss")
}

#[test]
fn creating_a_large_filter_writes_none_of_its_memory() {
    // A 100M-item filter at 1 % is about 120 MB: asked zeroed of the allocator, its pages stay
    // untouched (not resident) until items are added, so BF.RESERVE (or the first add, which
    // makes a windowed filter's first generation) does not spend the time of writing them. A
    // few MB of slack cover the allocator's own bookkeeping.
    let s = Server::start();
    let mut c = s.client();
    for (kind, recipe) in LAZY_FREE_KINDS {
        let before = resident(&mut c);
        create(&mut c, recipe, kind, "100000000");
        let size = call!(c, "MEMORY", "USAGE", kind).int();
        let grown = resident(&mut c) - before;
        // A windowed filter's generation holds a quarter of the capacity.
        assert!(size > 32 << 20, "{kind}: {size} bytes");
        assert!(
            grown < 16 << 20,
            "{kind}: {grown} of {size} bytes resident at creation"
        );
    }
}
