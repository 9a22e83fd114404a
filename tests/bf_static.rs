//! Static sets (deviation D21): `STATIC` on BF.RESERVE / BF.INSERT creates a builder
//! (`bloomrsST`), `BF.FREEZE` turns it into a binary fuse filter off the main thread, and both
//! states go through every persistence and propagation path.
pub mod common;

use std::time::{Duration, Instant};

use common::*;

fn ids(prefix: &str, range: std::ops::Range<u32>) -> Vec<String> {
    range.map(|i| format!("{prefix}/{i}")).collect()
}

fn digest(c: &mut Client, key: &str) -> Reply {
    call!(c, "DEBUG", "DIGEST-VALUE", key)
}

/// BF.INFO's fields of a static set: RedisBloom's five, then its own.
const STATIC_INFO: [&str; 10] = [
    "Capacity",
    "Size",
    "Number of filters",
    "Number of items inserted",
    "Expansion rate",
    "Frozen",
    "Freezing",
    "Fingerprint bits",
    "Table bytes",
    "Bits per item (thousandths)",
];

/// BF.INFO of a static set: RedisBloom's fields (no expansion), then the kind's own.
fn static_info(standard: &[i64; 4], own: &[i64; 5]) -> Reply {
    let values = standard.iter().map(|v| Int(*v));
    let values = values.chain([Nil]).chain(own.iter().map(|v| Int(*v)));
    let pairs = STATIC_INFO.iter().zip(values);
    Array(
        pairs
            .flat_map(|(name, value)| [Simple(name.to_string()), value])
            .collect(),
    )
}

fn info_field(c: &mut Client, key: &str, name: &str) -> Reply {
    let fields = info_fields(call!(c, "BF.INFO", key));
    fields
        .into_iter()
        .find(|(field, _)| field == name)
        .map(|(_, value)| value)
        .unwrap_or_else(|| panic!("no {name}"))
}

fn builder(c: &mut Client, key: &str, error: &str, items: &[String]) {
    assert_eq!(call!(c, "BF.RESERVE", key, error, "1000", "STATIC"), ok());
    madd_in_batches(c, key, items);
}

#[test]
fn build_freeze_and_read_story() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(call!(c, "BF.RESERVE", "s", "0.01", "100", "STATIC"), ok());
    assert_eq!(call!(c, "TYPE", "s"), Simple("bloomrsST".into()));
    assert_eq!(call!(c, "BF.ADD", "s", "a"), Int(1));
    assert_eq!(call!(c, "BF.ADD", "s", "a"), Int(0));
    assert_eq!(call!(c, "BF.MADD", "s", "b", "c", "a"), ints(&[1, 1, 0]));
    assert_eq!(call!(c, "BF.EXISTS", "s", "zz"), Int(0));
    assert_eq!(
        call!(c, "BF.MEXISTS", "s", "a", "b", "zz"),
        ints(&[1, 1, 0])
    );
    assert_eq!(call!(c, "BF.CARD", "s"), Int(3));
    // Three hashes in a segment grown to 32 bytes (jemalloc's size classes): the filter's 48,
    // the set's 64, 32, a segment's 32 and a directory entry's 4.
    assert_eq!(
        call!(c, "BF.INFO", "s"),
        static_info(&[100, 180, 1, 3], &[0, 0, 7, 0, 480_000])
    );
    assert_eq!(value_memory(&mut c, "s"), 180);
    assert_eq!(call!(c, "BF.FREEZE", "s"), ok());
    assert_eq!(call!(c, "BF.MEXISTS", "s", "a", "b", "c"), ints(&[1, 1, 1]));
    assert_eq!(call!(c, "BF.CARD", "s"), Int(3));
    // Three items: 3 segments of 8 slots, 7 bits each: 21 bytes and 8 of padding.
    assert_eq!(
        call!(c, "BF.INFO", "s"),
        static_info(&[100, 77, 1, 3], &[1, 0, 7, 29, 205_333])
    );
    assert_eq!(
        call!(c, "BF.DEBUG", "s").array()[1],
        bulk("state:frozen bytes:29 width:7 segment_length:8 segments:1 ratio:0.01")
    );
    let frozen = "ERR filter is frozen (BF.FREEZE): a static set takes no more items";
    assert_eq!(call!(c, "BF.ADD", "s", "d"), err(frozen));
    assert_eq!(
        call!(c, "BF.MADD", "s", "d", "e"),
        Array(vec![err(frozen), err(frozen)])
    );
    assert_eq!(
        call!(c, "BF.INSERT", "s", "ITEMS", "d"),
        Array(vec![err(frozen)])
    );
    assert_eq!(
        call!(c, "BF.FREEZE", "s"),
        err("ERR filter is frozen already")
    );
    assert_eq!(call!(c, "BF.CARD", "s"), Int(3));
}

#[test]
fn freeze_edge_cases() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(call!(c, "BF.FREEZE", "missing"), err("ERR not found"));
    assert_eq!(call!(c, "BF.ADD", "plain", "a"), Int(1));
    assert_eq!(
        call!(c, "BF.FREEZE", "plain"),
        err("ERR not a static set (created with STATIC)")
    );
    assert_eq!(call!(c, "SET", "str", "x"), ok());
    assert_eq!(
        call!(c, "BF.FREEZE", "str"),
        err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
    assert_eq!(
        call!(c, "BF.FREEZE"),
        err("ERR wrong number of arguments for 'bf.freeze' command")
    );
    // An empty builder freezes into a filter that holds nothing.
    assert_eq!(
        call!(c, "BF.RESERVE", "empty", "0.01", "10", "STATIC"),
        ok()
    );
    assert_eq!(call!(c, "BF.FREEZE", "empty"), ok());
    assert_eq!(call!(c, "BF.CARD", "empty"), Int(0));
    let probes = ids("p", 0..1000);
    assert!(mexists(&mut c, "empty", &probes)
        .iter()
        .all(|a| *a == Int(0)));
    // One item.
    assert_eq!(
        call!(c, "BF.INSERT", "one", "STATIC", "ITEMS", "x"),
        ints(&[1])
    );
    assert_eq!(call!(c, "TYPE", "one"), Simple("bloomrsST".into()));
    assert_eq!(call!(c, "BF.FREEZE", "one"), ok());
    assert_eq!(call!(c, "BF.EXISTS", "one", "x"), Int(1));
    // STATIC is its own layout.
    for args in [
        &["BF.RESERVE", "k", "0.01", "100", "STATIC", "BLOCKED"][..],
        &["BF.RESERVE", "k", "0.01", "100", "COUNTING", "STATIC"],
        &["BF.INSERT", "k", "STATIC", "COMPACT", "ITEMS", "a"],
        &["BF.INSERT", "k", "WINDOW", "60", "STATIC", "ITEMS", "a"],
    ] {
        assert_eq!(
            c.call(args),
            err("ERR STATIC cannot be combined with WINDOW, COUNTING, COMPACT or BLOCKED"),
            "{args:?}"
        );
    }
    assert_eq!(
        call!(c, "BF.RESERVE", "k", "0.0000000001", "100", "STATIC"),
        err("ERR could not create filter")
    );
    assert_eq!(call!(c, "EXISTS", "k"), Int(0));
}

#[test]
fn freeze_inside_multi_and_scripts() {
    let s = Server::start();
    let mut c = s.client();
    builder(&mut c, "small", "0.01", &ids("s", 0..1000));
    assert_eq!(call!(c, "MULTI"), ok());
    assert_eq!(call!(c, "BF.FREEZE", "small"), Simple("QUEUED".into()));
    assert_eq!(
        call!(c, "BF.EXISTS", "small", "s/5"),
        Simple("QUEUED".into())
    );
    assert_eq!(call!(c, "EXEC"), Array(vec![ok(), Int(1)]));
    assert_eq!(info_field(&mut c, "small", "Frozen"), Int(1));
    builder(&mut c, "large", "0.01", &ids("l", 0..100_001));
    let script = "return redis.call('BF.FREEZE', KEYS[1])";
    let refused = call!(c, "EVAL", script, "1", "large").text();
    let text = "ERR BF.FREEZE of more than 100000 items cannot run inside MULTI or a script";
    assert!(refused.starts_with(text), "{refused}");
    assert_eq!(info_field(&mut c, "large", "Frozen"), Int(0));
    assert_eq!(call!(c, "BF.ADD", "large", "more"), Int(1));
}

/// While a large builder freezes, other clients are answered: reads by the builder, writes
/// refused with the state named; the freeze's reply comes once it is frozen.
#[test]
fn other_clients_during_a_freeze() {
    let s = Server::start();
    let mut c = s.client();
    let items = ids("f", 0..1_000_000);
    builder(&mut c, "f", "0.001", &items);
    let mut other = s.client();
    c.send(&["BF.FREEZE", "f"]);
    let started = Instant::now();
    let mut refused = false;
    while started.elapsed() < Duration::from_secs(60) {
        let reply = call!(other, "BF.ADD", "f", "late");
        if reply == Int(1)
            || reply == err("ERR filter is frozen (BF.FREEZE): a static set takes no more items")
        {
            break;
        }
        assert_eq!(
            reply,
            err("ERR filter is being frozen (BF.FREEZE running): it takes no items until the freeze ends")
        );
        refused = true;
        assert_eq!(call!(other, "BF.EXISTS", "f", "f/7"), Int(1));
        // Freezing, or frozen since the refusal: both read from one reply, since the freeze may
        // end between two commands.
        let state = info_fields(call!(other, "BF.INFO", "f"));
        let flag = |name: &str| {
            state
                .iter()
                .find(|(field, _)| field == name)
                .map(|(_, value)| value.int())
                .unwrap_or_else(|| panic!("no {name}"))
        };
        assert_eq!(flag("Freezing") + flag("Frozen"), 1);
        assert_eq!(call!(other, "PING"), Simple("PONG".into()));
    }
    // Served during the freeze: a refusal names the running freeze. How long any of these
    // commands waited is measured by scripts/bench/static.py, not asserted here.
    assert!(refused, "the freeze ended before a write could see it");
    assert_eq!(c.read(), ok());
    assert_eq!(info_field(&mut c, "f", "Frozen"), Int(1));
    assert!(mexists(&mut c, "f", &items).iter().all(|a| *a == Int(1)));
}

#[test]
fn a_key_that_changes_during_the_freeze_is_left_as_it_is() {
    let s = Server::start();
    let mut c = s.client();
    let mut other = s.client();
    let changed = err(
        "ERR the key changed during BF.FREEZE (deleted, renamed, replaced or expired): nothing was frozen",
    );
    let items = ids("k", 0..500_000);
    for change in ["DEL", "RENAME", "FLUSHALL", "REPLACE"] {
        builder(&mut c, "k", "0.01", &items);
        c.send(&["BF.FREEZE", "k"]);
        match change {
            "DEL" => assert_eq!(call!(other, "DEL", "k"), Int(1)),
            "RENAME" => assert_eq!(call!(other, "RENAME", "k", "moved"), ok()),
            "FLUSHALL" => assert_eq!(call!(other, "FLUSHALL"), ok()),
            _ => {
                assert_eq!(call!(other, "DEL", "k"), Int(1));
                assert_eq!(
                    call!(other, "BF.RESERVE", "k", "0.01", "10", "STATIC"),
                    ok()
                );
            }
        }
        assert_eq!(c.read(), changed, "{change}");
        if change == "RENAME" {
            // The renamed builder keeps every item and takes writes again.
            assert_eq!(info_field(&mut c, "moved", "Frozen"), Int(0));
            assert_eq!(call!(c, "BF.CARD", "moved"), Int(500_000));
            assert_eq!(call!(c, "BF.ADD", "moved", "new"), Int(1));
        }
        if change == "REPLACE" {
            assert_eq!(call!(c, "BF.CARD", "k"), Int(0));
            assert_eq!(call!(c, "BF.ADD", "k", "new"), Int(1));
        }
        call!(c, "FLUSHALL");
    }
}

fn populate(c: &mut Client) -> Populated {
    let mut keys = Vec::new();
    for (key, error, n, freeze) in [
        ("b", "0.01", 3000u32, false),
        ("f1", "0.01", 3000, true),
        ("f3", "0.001", 20_000, true),
        ("e", "0.0001", 0, true),
    ] {
        let items = ids(key, 0..n);
        builder(c, key, error, &items);
        if freeze {
            assert_eq!(call!(c, "BF.FREEZE", key), ok());
        }
        keys.push((key.to_string(), items));
    }
    keys
}

fn snapshot(c: &mut Client, keys: &Populated) -> Vec<Reply> {
    let mut out = Vec::new();
    for (key, items) in keys {
        out.push(digest(c, key));
        // A builder's size is what its segments were given as they grew: a reload packs them.
        if info_field(c, key, "Frozen") == Int(1) {
            out.push(call!(c, "BF.INFO", key.as_str()));
        } else {
            out.push(call!(c, "BF.CARD", key.as_str()));
        }
        out.push(call!(c, "TYPE", key.as_str()));
        if !items.is_empty() {
            let answers = mexists(c, key, items);
            assert!(answers.iter().all(|a| *a == Int(1)), "{key}");
        }
    }
    out
}

#[test]
fn reload_restart_and_aof_rewrites() {
    reload_restart_and_aof_rewrite(populate, snapshot, Some((4, b"bloomrsF")), |_| {});
}

/// The AOF holds the frozen value as the freeze's effects (its header, its table in steps, the
/// header again to commit), never the freeze itself, and replays to the same value; the key
/// keeps its expiry, since the frozen value replaces the builder in place.
#[test]
fn the_aof_replays_the_frozen_value() {
    let mut s = Server::build(&[], &aof_always("no"));
    let mut c = s.client();
    builder(&mut c, "t", "0.01", &ids("t", 0..5000));
    assert_eq!(call!(c, "PEXPIREAT", "t", "99999999999999"), Int(1));
    assert_eq!(call!(c, "BF.FREEZE", "t"), ok());
    let before = (digest(&mut c, "t"), call!(c, "PEXPIRETIME", "t"));
    let written = aof_written(&s, &mut c);
    let freeze: Vec<&Vec<String>> = written
        .iter()
        .filter(|w| w[0].eq_ignore_ascii_case("BF.FREEZE"))
        .collect();
    let forms: Vec<&str> = freeze.iter().map(|w| w[2].as_str()).collect();
    assert_eq!(forms, ["STAGE", "CHUNK", "COMMIT"]);
    assert!(freeze.iter().all(|w| w[1] == "t"));
    assert_eq!(
        freeze[0][3], freeze[2][3],
        "STAGE and COMMIT carry one header"
    );
    assert!(freeze[0][3].starts_with("bloomrsF"));
    s.restart();
    let mut c = s.client();
    assert_eq!((digest(&mut c, "t"), call!(c, "PEXPIRETIME", "t")), before);
}

/// The effects come only from a primary or the AOF: a client sending them is refused.
#[test]
fn freeze_effects_are_refused_from_clients() {
    let s = Server::start();
    let mut c = s.client();
    builder(&mut c, "e", "0.01", &ids("e", 0..10));
    let refused = err(
        "ERR BF.FREEZE STAGE, CHUNK and COMMIT are a freeze's effects: only a primary or the AOF sends them",
    );
    for form in [
        vec!["BF.FREEZE", "e", "STAGE", "x"],
        vec!["BF.FREEZE", "e", "CHUNK", "1", "x"],
        vec!["BF.FREEZE", "e", "COMMIT", "x"],
        vec!["BF.FREEZE", "e", "x"],
    ] {
        assert_eq!(c.call(&form), refused, "{form:?}");
    }
    assert_eq!(call!(c, "BF.CARD", "e"), Int(10));
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
    for key in ["b", "f3"] {
        let copy = format!("{key}-copy");
        assert_eq!(call!(c, "COPY", key, copy.as_str()), Int(1));
        assert_eq!(digest(&mut c, &copy), digest(&mut c, key));
        let chunks = scandump(&mut c, "BF.SCANDUMP", key);
        assert!(chunks[0].1.starts_with(b"bloomrsF"));
        let rebuilt = format!("{key}-rebuilt");
        load_chunks(&mut c, "BF.LOADCHUNK", &rebuilt, &chunks);
        assert_eq!(digest(&mut c, &rebuilt), digest(&mut c, key));
    }
    // The copy of a builder is its own.
    assert_eq!(call!(c, "BF.ADD", "b-copy", "fresh"), Int(1));
    assert_eq!(call!(c, "BF.EXISTS", "b", "fresh"), Int(0));
}

#[test]
fn broken_headers_and_payloads_are_refused() {
    let s = Server::build(&[], &["--rdbcompression", "no"]);
    let mut c = s.client();
    builder(&mut c, "k", "0.01", &ids("k", 0..100));
    assert_eq!(call!(c, "BF.FREEZE", "k"), ok());
    let header = call!(c, "BF.SCANDUMP", "k", "0").array()[1].bytes();
    let patched = |at: usize, bytes: &[u8]| {
        let mut h = header.clone();
        h[at..at + bytes.len()].copy_from_slice(bytes);
        h
    };
    let bad = [
        ("other version", patched(8, &[2, 0, 0, 0])),
        ("state 2", patched(12, &[2, 0, 0, 0])),
        ("error rate 2", patched(16, &2.0f64.to_le_bytes())),
        ("width 9 for 1 %", patched(40, &[9, 0, 0, 0])),
        ("segment length 3", patched(44, &[3, 0, 0, 0])),
        ("no items in a table", patched(32, &[0; 8])),
        ("short", header[..59].to_vec()),
    ];
    let bad_data = err("ERR received bad data");
    assert_headers_refused(&mut c, "BF.LOADCHUNK", "bad", &bad, &bad_data);
    let huge = [("2^31 segments", patched(48, &(1u32 << 31).to_le_bytes()))];
    let memory = too_large(DEFAULT_MAX_FILTER_BYTES);
    assert_headers_refused(&mut c, "BF.LOADCHUNK", "bad", &huge, &memory);
    let payload = Payload::parse(&call!(c, "DUMP", "k").bytes());
    // Fields: state, error, capacity, items, width, segment length, segment count, seed.
    for case in [
        payload.with(0, RdbField::Unsigned(2)),
        payload.with(3, RdbField::Unsigned(0)),
        payload.with(4, RdbField::Unsigned(8)),
        payload.with(5, RdbField::Unsigned(6)),
        payload.with(6, RdbField::Unsigned(1 << 30)),
    ] {
        assert_eq!(
            call!(c, "RESTORE", "bad", "0", case.encode()),
            err("ERR Bad data format")
        );
    }
}

#[test]
fn memory_at_ten_thousand_items_is_below_a_redisbloom_filter() {
    let s = Server::start();
    let mut c = s.client();
    let items = ids("m", 0..10_000);
    for error in ["0.01", "0.001", "0.0001"] {
        let (fuse, bloom) = (format!("fuse{error}"), format!("bloom{error}"));
        builder(&mut c, &fuse, error, &items);
        // Below 9 bytes per item while it builds.
        assert!(value_memory(&mut c, &fuse) <= 9 * 10_000 + 200);
        assert_eq!(call!(c, "BF.FREEZE", fuse.as_str()), ok());
        assert_eq!(
            call!(
                c,
                "BF.RESERVE",
                bloom.as_str(),
                error,
                "10000",
                "NONSCALING"
            ),
            ok()
        );
        let (f, b) = (value_memory(&mut c, &fuse), value_memory(&mut c, &bloom));
        assert!(f as f64 <= 1.0 * b as f64, "{error}: {f} against {b}");
    }
    let info = call!(c, "INFO", "bf").text();
    assert!(info.contains("bf_static_sets:3"), "{info}");
    assert!(info.contains("bf_static_frozen:3"), "{info}");
    assert!(info.contains("bf_static_items:30000"), "{info}");
}

/// A replica receives the builder's adds and then the frozen value itself, byte for byte.
#[test]
fn replicas_hold_the_primarys_static_sets() {
    let primary = Server::start();
    let replica = Server::replica_of(&primary, module_path(), &[]);
    let (mut p, mut r) = (primary.client(), replica.client());
    wait_replica_linked(&mut r);
    builder(&mut p, "b", "0.01", &ids("b", 0..3000));
    builder(&mut p, "f", "0.001", &ids("f", 0..200_000));
    assert_eq!(call!(p, "EXPIRE", "f", "100000"), Int(1));
    assert_eq!(call!(p, "BF.FREEZE", "f"), ok());
    wait_replica_synced(&mut p, &mut r);
    for key in ["b", "f"] {
        assert_eq!(call!(r, "TYPE", key), Simple("bloomrsST".into()), "{key}");
        assert_eq!(digest(&mut r, key), digest(&mut p, key), "{key}");
        assert_eq!(call!(r, "DUMP", key), call!(p, "DUMP", key), "{key}");
    }
    assert_eq!(call!(r, "PEXPIRETIME", "f"), call!(p, "PEXPIRETIME", "f"));
}

/// A table of several steps (8.4 MB: 2M items at 30-bit fingerprints) reaches the replica
/// over several turns, and the replica answers from the builder until the last: an item
/// added is present whenever it is asked, and the replica ends byte-identical.
#[test]
fn a_replica_reads_the_builder_until_the_frozen_value_is_whole() {
    let primary = Server::start();
    let replica = Server::replica_of(&primary, module_path(), &[]);
    let (mut p, mut r) = (primary.client(), replica.client());
    wait_replica_linked(&mut r);
    let items = ids("m", 0..2_000_000);
    builder(&mut p, "m", "0.000000001", &items);
    wait_replica_synced(&mut p, &mut r);
    p.send(&["BF.FREEZE", "m"]);
    let mut asked = 0;
    loop {
        let state = info_fields(call!(r, "BF.INFO", "m"));
        let frozen = state.iter().any(|(f, v)| f == "Frozen" && *v == Int(1));
        let item = &items[asked * 7919 % items.len()];
        assert_eq!(call!(r, "BF.EXISTS", "m", item.as_str()), Int(1), "{item}");
        asked += 1;
        if frozen {
            break;
        }
    }
    assert_eq!(p.read(), ok());
    wait_replica_synced(&mut p, &mut r);
    assert_eq!(digest(&mut r, "m"), digest(&mut p, "m"));
    assert_eq!(call!(r, "DUMP", "m"), call!(p, "DUMP", "m"));
    assert!(mexists(&mut r, "m", &items).iter().all(|a| *a == Int(1)));
    assert!(asked > 1, "the replica was asked only once");
}
