//! Blocked Bloom filters (deviation D19): `BLOCKED` on BF.RESERVE / BF.INSERT and the
//! `bf.bf-blocked` setting, every BF.* command on them, and every persistence and propagation
//! path of their own module type (`bloomrsBK`).
pub mod common;

use common::*;

fn ids(prefix: &str, range: std::ops::Range<u32>) -> Vec<String> {
    range.map(|i| format!("{prefix}/{i}")).collect()
}

fn digest(c: &mut Client, key: &str) -> Reply {
    call!(c, "DEBUG", "DIGEST-VALUE", key)
}

#[test]
fn reserve_add_exists_story() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(call!(c, "BF.RESERVE", "bk", "0.01", "100", "BLOCKED"), ok());
    assert_eq!(call!(c, "TYPE", "bk"), Simple("bloomrsBK".into()));
    assert_eq!(
        call!(c, "BF.RESERVE", "bk", "0.01", "100", "BLOCKED"),
        err("ERR item exists")
    );
    assert_eq!(call!(c, "BF.ADD", "bk", "a"), Int(1));
    assert_eq!(call!(c, "BF.ADD", "bk", "a"), Int(0));
    assert_eq!(call!(c, "BF.MADD", "bk", "b", "c", "a"), ints(&[1, 1, 0]));
    assert_eq!(call!(c, "BF.EXISTS", "bk", "b"), Int(1));
    assert_eq!(call!(c, "BF.EXISTS", "bk", "zz"), Int(0));
    assert_eq!(
        call!(c, "BF.MEXISTS", "bk", "a", "b", "c", "zz"),
        ints(&[1, 1, 1, 0])
    );
    assert_eq!(call!(c, "BF.CARD", "bk"), Int(3));
    // 0.005 for the first link: 11.54 bits per item, 1,154 bits, three 64-byte blocks.
    assert_eq!(
        call!(c, "BF.INFO", "bk"),
        info_reply(&BF_INFO_FIELDS, &[100, 48 + 64 + 192, 1, 3, 2])
    );
    assert_eq!(call!(c, "BF.INFO", "bk", "SIZE"), ints(&[304]));
    assert_eq!(
        call!(c, "BF.DEBUG", "bk"),
        Array(vec![
            bulk("size:3"),
            bulk("bytes:192 blocks:3 hashes:7 capacity:100 size:3 ratio:0.005"),
        ])
    );
    assert_eq!(value_memory(&mut c, "bk"), 304);
    let mut r3 = s.client();
    r3.resp3();
    assert_eq!(call!(r3, "BF.EXISTS", "bk", "a"), Bool(true));
    assert_eq!(
        call!(c, "BF.DEL", "bk", "a"),
        err("ERR not a counting filter: only filters created with COUNTING can delete items")
    );
}

#[test]
fn growth_expansion_and_nonscaling() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(
        call!(
            c,
            "BF.RESERVE",
            "g",
            "0.01",
            "100",
            "EXPANSION",
            "4",
            "BLOCKED"
        ),
        ok()
    );
    madd_in_batches(&mut c, "g", &ids("g", 0..2_000));
    let info = call!(c, "BF.INFO", "g").array();
    // Links of 100, 400 and 1,600 items.
    assert_eq!(info[1], Int(2_100));
    assert_eq!(info[5], Int(3));
    assert_eq!(info[9], Int(4));
    let debug = call!(c, "BF.DEBUG", "g").array();
    assert_eq!(debug.len(), 4);
    assert!(debug[3].text().contains("capacity:1600"), "{:?}", debug[3]);
    assert!(debug[3].text().ends_with("ratio:0.00125"), "{:?}", debug[3]);
    let answers = mexists(&mut c, "g", &ids("g", 0..2_000));
    assert!(answers.iter().all(|a| *a == Int(1)), "no false negatives");
    assert_eq!(
        call!(c, "BF.RESERVE", "ns", "0.01", "10", "NONSCALING", "BLOCKED"),
        ok()
    );
    let items = ids("ns", 0..12);
    let mut args = vec!["BF.MADD".to_string(), "ns".to_string()];
    args.extend(items.iter().cloned());
    let replies = c.call(&args).array();
    let added = replies.iter().filter(|r| **r == Int(1)).count();
    assert!(added >= 10, "{replies:?}");
    assert_eq!(replies.last(), Some(&err("ERR non scaling filter is full")));
    assert_eq!(
        call!(c, "BF.INFO", "ns", "EXPANSION"),
        Array(vec![Reply::Nil])
    );
}

#[test]
fn blocked_refuses_the_other_layouts() {
    let s = Server::start();
    let mut c = s.client();
    let cases: [(&[&str], &str); 6] = [
        (
            &["BF.RESERVE", "k", "0.01", "100", "BLOCKED", "COMPACT"],
            "ERR BLOCKED and COMPACT cannot be combined",
        ),
        (
            &["BF.RESERVE", "k", "0.01", "100", "COUNTING", "BLOCKED"],
            "ERR BLOCKED and COUNTING cannot be combined",
        ),
        (
            &["BF.RESERVE", "k", "0.01", "100", "BLOCKED", "WINDOW", "60"],
            "ERR BLOCKED and WINDOW cannot be combined",
        ),
        (
            &["BF.INSERT", "k", "BLOCKED", "COMPACT", "ITEMS", "a"],
            "ERR BLOCKED and COMPACT cannot be combined",
        ),
        (
            &["BF.INSERT", "k", "COUNTING", "BLOCKED", "ITEMS", "a"],
            "ERR BLOCKED and COUNTING cannot be combined",
        ),
        (
            &["BF.INSERT", "k", "WINDOW", "60", "BLOCKED", "ITEMS", "a"],
            "ERR BLOCKED and WINDOW cannot be combined",
        ),
    ];
    for (args, text) in cases {
        assert_eq!(c.call(args), err(text), "{args:?}");
    }
    assert_eq!(call!(c, "EXISTS", "k"), Int(0));
    // Only the whole word is the keyword.
    assert_eq!(
        call!(c, "BF.INSERT", "k", "BLOCK", "ITEMS", "a"),
        err("Unknown argument received")
    );
    assert_eq!(
        call!(
            c,
            "BF.RESERVE",
            "k",
            "0.01",
            "100",
            "BLOCKED",
            "x",
            "y",
            "z",
            "w"
        ),
        err("ERR wrong number of arguments for 'bf.reserve' command")
    );
}

#[test]
fn rates_and_sizes_at_the_edges() {
    let s = Server::start();
    let mut c = s.client();
    // A link is sized down to a rate of 1e-12: a scaling filter's first link gets half.
    let tight = "0.000000000001";
    assert_eq!(
        call!(c, "BF.RESERVE", "a", tight, "100", "BLOCKED"),
        err("ERR could not create filter")
    );
    assert_eq!(
        call!(c, "BF.RESERVE", "b", "0.000000000002", "100", "BLOCKED"),
        ok()
    );
    assert_eq!(
        call!(c, "BF.RESERVE", "e", tight, "100", "NONSCALING", "BLOCKED"),
        ok()
    );
    assert_eq!(
        call!(c, "BF.DEBUG", "e").array()[1],
        bulk("bytes:2048 blocks:32 hashes:27 capacity:100 size:0 ratio:1e-12")
    );
    assert_eq!(
        call!(c, "BF.RESERVE", "loose", "0.9999", "100", "BLOCKED"),
        ok()
    );
    assert_eq!(
        call!(c, "BF.DEBUG", "loose").array()[1],
        bulk("bytes:64 blocks:1 hashes:1 capacity:100 size:0 ratio:0.49995")
    );
    assert_eq!(
        call!(c, "BF.RESERVE", "d", "0.01", "100000000000000", "BLOCKED"),
        too_large(DEFAULT_MAX_FILTER_BYTES)
    );
}

#[test]
fn insert_and_setting_create_blocked_filters_replicated_as_reservations() {
    let s = propagating_server();
    let mut c = s.client();
    assert_eq!(
        call!(c, "BF.INSERT", "ins", "BLOCKED", "ITEMS", "a", "b"),
        ints(&[1, 1])
    );
    assert_eq!(call!(c, "TYPE", "ins"), Simple("bloomrsBK".into()));
    assert_eq!(
        call!(
            c,
            "BF.INSERT",
            "ns",
            "CAPACITY",
            "10",
            "NONSCALING",
            "BLOCKED",
            "ITEMS",
            "x"
        ),
        ints(&[1])
    );
    assert_eq!(call!(c, "CONFIG", "SET", "bf.bf-blocked", "yes"), ok());
    assert_eq!(
        call!(c, "CONFIG", "GET", "bf.bf-blocked"),
        Array(vec![bulk("bf.bf-blocked"), bulk("yes")])
    );
    assert_eq!(call!(c, "BF.ADD", "auto", "x"), Int(1));
    assert_eq!(call!(c, "TYPE", "auto"), Simple("bloomrsBK".into()));
    // Anything else asked of a filter wins over the setting.
    assert_eq!(
        call!(c, "BF.INSERT", "cnt", "COUNTING", "ITEMS", "y"),
        ints(&[1])
    );
    assert_eq!(call!(c, "TYPE", "cnt"), Simple("bloomrsCT".into()));
    assert_eq!(call!(c, "CONFIG", "SET", "bf.bf-blocked", "no"), ok());
    assert_eq!(call!(c, "BF.ADD", "plain", "x"), Int(1));
    assert_eq!(call!(c, "TYPE", "plain"), Simple("MBbloom--".into()));
    let written = aof_written(&s, &mut c);
    let reserve = |key: &str, tail: &[&str]| {
        let mut words = vec!["BF.RESERVE", key, "0.001"];
        words.extend_from_slice(tail);
        words.iter().map(|w| w.to_string()).collect::<Vec<_>>()
    };
    let words = |w: &[&str]| w.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    assert_eq!(
        written,
        [
            reserve("ins", &["500", "EXPANSION", "2", "BLOCKED"]),
            words(&["BF.MADD", "ins", "a", "b"]),
            reserve("ns", &["10", "NONSCALING", "BLOCKED"]),
            words(&["BF.MADD", "ns", "x"]),
            reserve("auto", &["500", "EXPANSION", "2", "BLOCKED"]),
            words(&["BF.ADD", "auto", "x"]),
            reserve("cnt", &["500", "EXPANSION", "2", "COUNTING"]),
            words(&["BF.MADD", "cnt", "y"]),
            reserve("plain", &["500", "EXPANSION", "2"]),
            words(&["BF.ADD", "plain", "x"]),
        ]
    );
}

/// Blocked filters of a few shapes; returns the items each holds.
fn populate(c: &mut Client) -> Populated {
    let reserves: [&[&str]; 3] = [
        &[
            "BF.RESERVE",
            "tiers",
            "0.01",
            "100",
            "EXPANSION",
            "3",
            "BLOCKED",
        ],
        &["BF.RESERVE", "ns", "0.001", "3000", "NONSCALING", "BLOCKED"],
        &["BF.RESERVE", "big", "0.01", "300000", "BLOCKED"],
    ];
    for args in reserves {
        assert_eq!(c.call(args), ok(), "{args:?}");
    }
    [("tiers", 4_000), ("ns", 3_000), ("big", 20_000)]
        .into_iter()
        .map(|(key, count)| {
            let items = ids(key, 0..count);
            madd_in_batches(c, key, &items);
            (key.to_string(), items)
        })
        .collect()
}

/// Everything observable about the keys, checking that no added item reads absent.
fn snapshot(c: &mut Client, keys: &Populated) -> Vec<Reply> {
    let mut out = Vec::new();
    for (key, items) in keys {
        out.extend(bloom_state(c, key));
        out.push(digest(c, key));
        out.push(call!(c, "TYPE", key.as_str()));
        let answers = mexists(c, key, items);
        assert!(
            answers.iter().all(|a| *a == Int(1)),
            "{key}: false negative"
        );
    }
    out
}

#[test]
fn reload_restart_and_aof_rewrites() {
    reload_restart_and_aof_rewrite(populate, snapshot, Some((3, b"bloomrsB")), |_| {});
}

#[test]
fn dump_restore_copy_and_chunks() {
    let s = Server::start();
    let mut c = s.client();
    let keys = populate(&mut c);
    let before = snapshot(&mut c, &keys);
    for (key, _) in &keys {
        restore_from_own_dump(&mut c, key);
    }
    assert_eq!(snapshot(&mut c, &keys), before);
    // COPY is deep: adding to the copy leaves the original.
    assert_eq!(call!(c, "COPY", "tiers", "t2"), Int(1));
    assert_eq!(digest(&mut c, "t2"), digest(&mut c, "tiers"));
    assert_eq!(call!(c, "BF.ADD", "t2", "fresh"), Int(1));
    assert_ne!(digest(&mut c, "t2"), digest(&mut c, "tiers"));
    assert_eq!(call!(c, "BF.EXISTS", "tiers", "fresh"), Int(0));
    // SCANDUMP / LOADCHUNK into a new key rebuilds the same value.
    let chunks = scandump(&mut c, "BF.SCANDUMP", "tiers");
    assert!(chunks[0].1.starts_with(b"bloomrsB"));
    load_chunks(&mut c, "BF.LOADCHUNK", "rebuilt", &chunks);
    assert_eq!(call!(c, "TYPE", "rebuilt"), Simple("bloomrsBK".into()));
    assert_eq!(digest(&mut c, "rebuilt"), digest(&mut c, "tiers"));
    assert_eq!(bloom_state(&mut c, "rebuilt"), bloom_state(&mut c, "tiers"));
}

#[test]
fn loadchunk_refusals() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(call!(c, "BF.RESERVE", "k", "0.01", "1000", "BLOCKED"), ok());
    madd_in_batches(&mut c, "k", &ids("k", 0..1_500));
    let header = call!(c, "BF.SCANDUMP", "k", "0").array()[1].bytes();
    let patched = |at: usize, bytes: &[u8]| {
        let mut h = header.clone();
        h[at..at + bytes.len()].copy_from_slice(bytes);
        h
    };
    let mut short = header.clone();
    short.truncate(40);
    let bad = [
        ("other version", patched(8, &[2, 0, 0, 0])),
        ("unknown flags", patched(12, &[4, 0, 0, 0])),
        ("growth 0", patched(16, &[0, 0, 0, 0])),
        (
            "items do not add up",
            patched(24, &[9, 0, 0, 0, 0, 0, 0, 0]),
        ),
        ("no bits per item", patched(32 + 16, &[0, 0, 0, 0])),
        ("error rate 2", patched(32 + 8, &2.0f64.to_le_bytes())),
        ("short", short),
        ("magic only", b"bloomrsB".to_vec()),
    ];
    let bad_data = err("ERR received bad data");
    assert_headers_refused(&mut c, "BF.LOADCHUNK", "bad", &bad, &bad_data);
    let huge = [("2^40 blocks", patched(32 + 20, &(1u64 << 40).to_le_bytes()))];
    let memory = too_large(DEFAULT_MAX_FILTER_BYTES);
    assert_headers_refused(&mut c, "BF.LOADCHUNK", "bad", &huge, &memory);
    let chunks = scandump(&mut c, "BF.SCANDUMP", "k");
    assert_eq!(
        call!(c, "BF.LOADCHUNK", "copy", "1", header.as_slice()),
        ok()
    );
    let (end, bytes) = chunks[1].clone();
    assert_eq!(
        call!(
            c,
            "BF.LOADCHUNK",
            "copy",
            (end + 100_000).to_string(),
            bytes.as_slice()
        ),
        err("ERR invalid offset - no link found")
    );
    assert_eq!(
        call!(
            c,
            "BF.LOADCHUNK",
            "copy",
            (end + 64).to_string(),
            bytes.as_slice()
        ),
        err("ERR invalid chunk - Too big for current filter")
    );
    assert_eq!(
        call!(c, "BF.LOADCHUNK", "copy", "x", bytes.as_slice()),
        err("ERR Second argument must be numeric")
    );
    let info = call!(c, "INFO", "bf").text();
    assert!(info.contains("bf_rejected_chunks:11"), "{info}");
}

#[test]
fn broken_payloads_are_refused() {
    let s = Server::build(&[], &["--rdbcompression", "no"]);
    let mut c = s.client();
    assert_eq!(call!(c, "BF.RESERVE", "k", "0.01", "1000", "BLOCKED"), ok());
    call!(c, "BF.ADD", "k", "a");
    let payload = Payload::parse(&call!(c, "DUMP", "k").bytes());
    // Fields: items, flags, growth, links, then per link capacity, error, bits per item,
    // blocks, items, then the blocks.
    let cases = [
        payload.with(0, RdbField::Unsigned(2)),
        payload.with(1, RdbField::Unsigned(2)),
        payload.with(2, RdbField::Unsigned(0)),
        payload.with(3, RdbField::Unsigned(2)),
        payload.with(6, RdbField::Unsigned(0)),
        payload.with(7, RdbField::Unsigned(3)),
        Payload {
            module_id: payload.module_id + 1,
            ..payload.clone()
        },
    ];
    for case in cases {
        assert_eq!(
            call!(c, "RESTORE", "bad", "0", case.encode()),
            err("ERR Bad data format")
        );
    }
    assert_eq!(
        call!(c, "CONFIG", "SET", "bf.max-filter-bytes", "1024"),
        ok()
    );
    assert_eq!(
        call!(c, "RESTORE", "big", "0", payload.encode()),
        err("ERR Bad data format")
    );
    assert_eq!(
        call!(c, "BF.RESERVE", "big", "0.01", "1000", "BLOCKED"),
        too_large(1024)
    );
    assert_eq!(
        call!(c, "COPY", "k", "k2"),
        err("ERR module key failed to copy")
    );
}

#[test]
fn memory_info_and_totals() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(
        call!(c, "BF.RESERVE", "large", "0.01", "1000000", "BLOCKED"),
        ok()
    );
    madd_in_batches(&mut c, "large", &ids("l", 0..1_000));
    let size = call!(c, "BF.INFO", "large", "SIZE").array()[0].int();
    assert_eq!(value_memory(&mut c, "large"), size);
    let info = call!(c, "INFO", "bf").text();
    for line in [
        "bf_blocked_filters:1".to_string(),
        format!("bf_blocked_memory_bytes:{size}"),
        "bf_blocked_items:1000".to_string(),
        "bf_blocked_links:1".to_string(),
        "bf_bloom_filters:0".to_string(),
    ] {
        assert!(info.contains(&line), "{line}: {info}");
    }
    assert_eq!(call!(c, "UNLINK", "large"), Int(1));
    wait_lazyfree(&mut c);
    let info = call!(c, "INFO", "bf").text();
    assert!(info.contains("bf_blocked_filters:0"), "{info}");
    assert!(info.contains("bf_blocked_memory_bytes:0"), "{info}");
}

/// The replica builds the primary's blocked filters from the propagated commands and holds
/// the same bytes.
#[test]
fn replicas_hold_the_primarys_blocked_filters() {
    let primary = Server::build(&[], &["--bf.bf-blocked", "yes"]);
    let replica = Server::replica_of(&primary, module_path(), &[]);
    let (mut p, mut r) = (primary.client(), replica.client());
    wait_replica_linked(&mut r);
    assert_eq!(call!(p, "BF.ADD", "auto", "x"), Int(1));
    assert_eq!(call!(p, "TYPE", "auto"), Simple("bloomrsBK".into()));
    madd_in_batches(&mut p, "auto", &ids("auto", 0..3_000));
    assert_eq!(
        call!(p, "BF.INSERT", "ins", "NONSCALING", "ITEMS", "a", "b"),
        ints(&[1, 1])
    );
    assert_eq!(
        call!(
            p,
            "BF.RESERVE",
            "r",
            "0.001",
            "50",
            "EXPANSION",
            "5",
            "BLOCKED"
        ),
        ok()
    );
    madd_in_batches(&mut p, "r", &ids("r", 0..2_000));
    assert_eq!(call!(p, "COPY", "r", "r2"), Int(1));
    let chunks = scandump(&mut p, "BF.SCANDUMP", "r");
    load_chunks(&mut p, "BF.LOADCHUNK", "lc", &chunks);
    wait_replica_synced(&mut p, &mut r);
    for key in ["auto", "ins", "r", "r2", "lc"] {
        assert_eq!(call!(r, "TYPE", key), Simple("bloomrsBK".into()), "{key}");
        assert_eq!(digest(&mut r, key), digest(&mut p, key), "{key}");
        assert_eq!(call!(r, "DUMP", key), call!(p, "DUMP", key), "{key}");
    }
}
