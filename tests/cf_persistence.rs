//! Cuckoo filters surviving every way Redis moves a value: DEBUG RELOAD, SAVE and restart, AOF
//! rewrite (with and without the RDB preamble), DUMP/RESTORE, COPY; the digest; what is
//! propagated to the AOF; and malformed DUMP payloads refused without harm.

pub mod common;

use common::RdbField as Field;
use common::*;

/// Everything observable about a filter: SCANDUMP chunks, CF.INFO, CF.DEBUG, answers for its
/// items (and some never added) and a few counts.
#[derive(Debug, PartialEq)]
struct Snapshot {
    chunks: Vec<(i64, Vec<u8>)>,
    info: Reply,
    debug: Reply,
    answers: Reply,
    counts: Vec<Reply>,
}

fn snapshot(c: &mut Client, key: &str, items_of: &str) -> Snapshot {
    let mut args = vec!["CF.MEXISTS".to_string(), key.to_string()];
    args.extend((0..300).map(|i| format!("{items_of}/{i}")));
    Snapshot {
        chunks: scandump(c, "CF.SCANDUMP", key),
        info: call!(c, "CF.INFO", key),
        debug: call!(c, "CF.DEBUG", key),
        answers: c.call(&args),
        counts: (0..10)
            .map(|i| call!(c, "CF.COUNT", key, format!("{items_of}/{i}")))
            .collect(),
    }
}

const KEYS: [&str; 5] = ["multi", "empty", "b1", "auto", "loaded"];

/// A data set with several sub-filters, deletes, an empty filter, bucket size 1 and 4,
/// expansion 0, an auto-created filter and one from a header with a non-power-of-two expansion.
fn populate(c: &mut Client) {
    assert_eq!(call!(c, "CF.RESERVE", "multi", "8", "EXPANSION", "2"), ok());
    for i in 0..200 {
        assert_eq!(call!(c, "CF.ADD", "multi", format!("multi/{i}")), Int(1));
    }
    for i in 0..10 {
        assert_eq!(call!(c, "CF.DEL", "multi", format!("multi/{i}")), Int(1));
    }
    assert_eq!(
        call!(
            c,
            "CF.RESERVE",
            "empty",
            "1000",
            "BUCKETSIZE",
            "4",
            "MAXITERATIONS",
            "50",
            "EXPANSION",
            "0"
        ),
        ok()
    );
    assert_eq!(call!(c, "CF.RESERVE", "b1", "64", "BUCKETSIZE", "1"), ok());
    for i in 0..100 {
        let reply = call!(c, "CF.ADDNX", "b1", format!("b1/{i}"));
        assert!(matches!(reply, Int(0 | 1)), "{reply:?}");
    }
    assert_eq!(call!(c, "CF.DEL", "b1", "b1/3"), Int(1));
    for i in 0..50 {
        assert_eq!(call!(c, "CF.ADD", "auto", format!("auto/{i}")), Int(1));
    }
    let mut header = Vec::new();
    for word in [3u64, 4, 1, 2] {
        header.extend_from_slice(&word.to_le_bytes());
    }
    for half in [2u16, 20, 3] {
        header.extend_from_slice(&half.to_le_bytes());
    }
    assert_eq!(call!(c, "CF.LOADCHUNK", "loaded", "1", header), ok());
    assert_eq!(
        call!(c, "CF.LOADCHUNK", "loaded", "9", [7u8, 0, 0, 9, 0, 0, 0, 0]),
        ok()
    );
    let second: Vec<u8> = (0..24).collect();
    assert_eq!(call!(c, "CF.LOADCHUNK", "loaded", "33", second), ok());
    assert_eq!(
        call!(c, "CF.INFO", "loaded").array()[5],
        Int(2),
        "two sub-filters of 4 and 12 buckets"
    );
}

fn snapshots(c: &mut Client) -> Vec<Snapshot> {
    KEYS.iter().map(|key| snapshot(c, key, key)).collect()
}

/// A client of `server` after `populate`.
fn populated(server: &Server) -> Client {
    let mut c = server.client();
    populate(&mut c);
    c
}

#[test]
fn debug_reload_keeps_everything() {
    let server = Server::start();
    let mut c = populated(&server);
    let before = snapshots(&mut c);
    assert_eq!(before[1].chunks, vec![], "an empty filter has no SCANDUMP");
    let digest = call!(c, "DEBUG", "DIGEST");
    assert_eq!(call!(c, "DEBUG", "RELOAD"), ok());
    assert_eq!(snapshots(&mut c), before);
    assert_eq!(call!(c, "DEBUG", "DIGEST"), digest);
}

#[test]
fn save_and_restart_keep_everything() {
    let mut server = Server::start();
    let mut c = populated(&server);
    let before = snapshots(&mut c);
    assert_eq!(call!(c, "SAVE"), ok());
    server.restart();
    let mut c = server.client();
    assert_eq!(call!(c, "DBSIZE"), Int(5));
    assert_eq!(snapshots(&mut c), before);
}

fn aof_file(server: &Server, suffix: &str) -> Vec<u8> {
    let dir = server.dir.join("appendonlydir");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().ends_with(suffix))
        .collect();
    names.sort();
    std::fs::read(names.last().unwrap_or_else(|| panic!("no {suffix} file"))).unwrap()
}

/// A server holding the data set whose AOF was rewritten (with an RDB preamble or not), and
/// the snapshots taken before the rewrite.
fn populated_and_rewritten(preamble: &str) -> (Server, Vec<Snapshot>) {
    let server = Server::build(
        &[],
        &["--appendonly", "yes", "--aof-use-rdb-preamble", preamble],
    );
    let mut c = populated(&server);
    let before = snapshots(&mut c);
    c.call(&["BGREWRITEAOF"]);
    wait_for_persistence(&mut c);
    (server, before)
}

#[test]
fn aof_rewrite_without_preamble_emits_loadchunk_commands() {
    let (mut server, before) = populated_and_rewritten("no");
    let commands = parse_aof(&aof_file(&server, ".base.aof"));
    let empty: Vec<Vec<String>> = commands
        .iter()
        .map(|command| command_words(command))
        .filter(|w| w.get(1).map(String::as_str) == Some("empty"))
        .collect();
    // The empty filter is rewritten too: header, then its single 1024-byte sub-filter.
    assert_eq!(empty.len(), 2);
    assert_eq!(empty[0][..3], ["CF.LOADCHUNK", "empty", "1"]);
    assert_eq!(empty[1][..3], ["CF.LOADCHUNK", "empty", "1025"]);
    assert_eq!(
        commands.iter().find(|c| c[1] == b"empty").unwrap()[3].len(),
        38
    );
    let loadchunks = commands.iter().filter(|c| c[0] == b"CF.LOADCHUNK").count();
    let expected: usize = before.iter().map(|s| s.chunks.len().max(1)).sum::<usize>() + 1;
    assert_eq!(loadchunks, expected);
    server.restart();
    let mut c = server.client();
    assert_eq!(snapshots(&mut c), before);
}

#[test]
fn aof_rewrite_with_preamble_keeps_everything() {
    let (mut server, before) = populated_and_rewritten("yes");
    // Valkey 9 writes its RDB files (version 80) with its own magic.
    let base = aof_file(&server, ".base.rdb");
    assert!(base.starts_with(b"REDIS") || base.starts_with(b"VALKEY"));
    server.restart();
    let mut c = server.client();
    assert_eq!(snapshots(&mut c), before);
}

#[test]
fn dump_and_restore() {
    let server = Server::start();
    let mut c = populated(&server);
    for key in KEYS {
        let payload = call!(c, "DUMP", key).bytes();
        let copy = format!("{key}-restored");
        assert_eq!(call!(c, "RESTORE", copy, "0", payload), ok());
        assert_eq!(
            snapshot(&mut c, &copy, key),
            snapshot(&mut c, key, key),
            "{key}"
        );
        assert_eq!(call!(c, "DUMP", copy).bytes(), payload);
        assert_eq!(
            call!(c, "RESTORE", copy, "0", payload),
            err("BUSYKEY Target key name already exists.")
        );
    }
}

#[test]
fn copy_is_deep() {
    let server = Server::start();
    let mut c = populated(&server);
    for key in KEYS {
        let before = snapshot(&mut c, key, key);
        let copy = format!("{key}-copy");
        assert_eq!(call!(c, "COPY", key, copy), Int(1));
        assert_eq!(snapshot(&mut c, &copy, key), before, "{key}");
        assert_eq!(
            call!(c, "DEBUG", "DIGEST-VALUE", key),
            call!(c, "DEBUG", "DIGEST-VALUE", copy)
        );
        if key == "empty" {
            assert_eq!(call!(c, "CF.INSERT", copy, "ITEMS", "new"), ints(&[1]));
        } else {
            assert_eq!(call!(c, "CF.ADD", copy, "new"), Int(1));
        }
        let reply = call!(c, "CF.DEL", copy, format!("{key}/20"));
        assert!(matches!(reply, Int(0 | 1)), "{reply:?}");
        assert_eq!(snapshot(&mut c, key, key), before, "{key}");
        assert_ne!(snapshot(&mut c, &copy, key), before, "{key}");
        assert_ne!(
            call!(c, "DEBUG", "DIGEST-VALUE", key),
            call!(c, "DEBUG", "DIGEST-VALUE", copy)
        );
    }
}

#[test]
fn digest_follows_content() {
    let server = Server::start();
    let mut c = server.client();
    for key in ["a", "b", "c"] {
        assert_eq!(call!(c, "CF.RESERVE", key, "100"), ok());
        assert_eq!(call!(c, "CF.INSERT", key, "ITEMS", "x", "y"), ints(&[1, 1]));
    }
    let digest =
        |c: &mut Client, key: &str| call!(c, "DEBUG", "DIGEST-VALUE", key).array()[0].text();
    assert_eq!(digest(&mut c, "a"), digest(&mut c, "b"));
    // Same slots, different counters.
    assert_eq!(call!(c, "CF.ADD", "c", "z"), Int(1));
    assert_ne!(digest(&mut c, "a"), digest(&mut c, "c"));
    assert_eq!(call!(c, "CF.DEL", "c", "z"), Int(1));
    assert_ne!(
        digest(&mut c, "a"),
        digest(&mut c, "c"),
        "the delete counter differs"
    );
    assert_eq!(call!(c, "CF.COMPACT", "c"), ok());
    assert_eq!(digest(&mut c, "a"), digest(&mut c, "c"));
    // Different parameters, same items.
    assert_eq!(
        call!(c, "CF.RESERVE", "d", "100", "MAXITERATIONS", "21"),
        ok()
    );
    assert_eq!(call!(c, "CF.INSERT", "d", "ITEMS", "x", "y"), ints(&[1, 1]));
    assert_ne!(digest(&mut c, "a"), digest(&mut c, "d"));
}

fn strings(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

#[test]
fn propagation_to_the_aof() {
    let server = Server::build(
        &[],
        &["--appendonly", "yes", "--aof-use-rdb-preamble", "yes"],
    );
    let mut c = server.client();
    let header = {
        assert_eq!(call!(c, "CF.RESERVE", "src", "8", "EXPANSION", "2"), ok());
        for i in 0..20 {
            assert_eq!(call!(c, "CF.ADD", "src", format!("item{i}")), Int(1));
        }
        scandump(&mut c, "CF.SCANDUMP", "src")
    };
    assert_eq!(header.len(), 3);
    wait_for_persistence(&mut c);
    let start = parse_aof(&aof_file(&server, ".incr.aof")).len();
    let script: &[&[&str]] = &[
        &["CF.ADD", "auto", "x"],
        &["CF.EXISTS", "auto", "x"],
        &["CF.MEXISTS", "auto", "x"],
        &["CF.COUNT", "auto", "x"],
        &["CF.INFO", "auto"],
        &["CF.DEBUG", "auto"],
        &["CF.SCANDUMP", "auto", "0"],
        &["CF.ADDNX", "auto", "x"],
        &["CF.ADDNX", "nx", "x"],
        &["CF.INSERT", "ins", "CAPACITY", "100", "ITEMS", "a", "b"],
        &["CF.INSERTNX", "auto", "NOCREATE", "ITEMS", "x", "q"],
        &["CF.INSERT", "none", "NOCREATE", "ITEMS", "x"],
        &["CF.RESERVE", "full", "4", "EXPANSION", "0"],
        &["CF.RESERVE", "full", "4"],
        &["CF.INSERT", "full", "ITEMS", "i0", "i1", "i2", "i3", "i4"],
        &["CF.ADD", "full", "i5"],
        &["CF.DEL", "auto", "nothing"],
        &["CF.DEL", "missing", "x"],
        &["CF.COMPACT", "auto"],
        &["CF.COMPACT", "missing"],
    ];
    for command in script {
        c.call(command);
    }
    // An implicit creation propagates as the reservation it made, with this server's settings.
    let implicit_reserve = |key: &str, capacity: &str| {
        let settings = ["BUCKETSIZE", "2", "MAXITERATIONS", "20", "EXPANSION", "1"];
        strings(&[&["CF.RESERVE", key, capacity][..], &settings].concat())
    };
    let mut expected: Vec<Vec<String>> = vec![
        implicit_reserve("auto", "1024"),
        strings(&["CF.ADD", "auto", "x"]),
        strings(&["CF.ADDNX", "auto", "x"]),
        implicit_reserve("nx", "1024"),
        strings(&["CF.ADDNX", "nx", "x"]),
        implicit_reserve("ins", "100"),
        strings(&["CF.INSERT", "ins", "CAPACITY", "100", "ITEMS", "a", "b"]),
        strings(&["CF.INSERTNX", "auto", "NOCREATE", "ITEMS", "x", "q"]),
        strings(&["CF.RESERVE", "full", "4", "EXPANSION", "0"]),
        // i4 did not fit (-1): only the items applied are propagated.
        strings(&[
            "CF.INSERT",
            "full",
            "NOCREATE",
            "ITEMS",
            "i0",
            "i1",
            "i2",
            "i3",
        ]),
        strings(&["CF.DEL", "auto", "nothing"]),
        strings(&["CF.COMPACT", "auto"]),
    ];
    // Deviation D5: every chunk, not only the header.
    let mut chunks = header;
    chunks[0].0 = 1;
    load_chunks(&mut c, "CF.LOADCHUNK", "copy", &chunks);
    for (iterator, bytes) in &chunks {
        let mut words = strings(&["CF.LOADCHUNK", "copy", &iterator.to_string()]);
        words.push(String::from_utf8_lossy(bytes).into_owned());
        expected.push(words);
    }
    assert_eq!(
        call!(c, "CF.LOADCHUNK", "copy", "99", "x"),
        err("Couldn't load chunk!")
    );
    wait_for_persistence(&mut c);
    let logged: Vec<Vec<String>> = parse_aof(&aof_file(&server, ".incr.aof"))[start..]
        .iter()
        .map(|command| command_words(command))
        .filter(|w| !["SELECT", "MULTI", "EXEC"].contains(&w[0].to_uppercase().as_str()))
        .collect();
    assert_eq!(logged, expected);
    assert_eq!(
        scandump(&mut c, "CF.SCANDUMP", "copy"),
        scandump(&mut c, "CF.SCANDUMP", "src")
    );
}

#[test]
fn malformed_restore_payloads_are_refused() {
    let mut server = Server::build(&[], &["--rdbcompression", "no"]);
    let mut c = server.client();
    assert_eq!(call!(c, "CF.RESERVE", "cf", "8", "EXPANSION", "2"), ok());
    for i in 0..20 {
        assert_eq!(call!(c, "CF.ADD", "cf", format!("item{i}")), Int(1));
    }
    let before = snapshot(&mut c, "cf", "item");
    let real = call!(c, "DUMP", "cf").bytes();
    let payload = Payload::parse(&real);
    // numFilters, numBuckets, numItems, numDeletes, bucketSize, maxIterations, expansion,
    // then (buckets, slots) per sub-filter.
    assert_eq!(
        payload.fields[..7],
        [2, 4, 20, 0, 2, 20, 2].map(Field::Unsigned)
    );
    assert_eq!(payload.fields.len(), 11);
    assert_eq!(
        payload.encode(),
        real,
        "the codec reproduces the real payload"
    );
    assert_eq!(call!(c, "RESTORE", "same", "0", payload.encode()), ok());
    assert_eq!(snapshot(&mut c, "same", "item"), before);
    assert_eq!(call!(c, "DEL", "same"), Int(1));

    let u = Field::Unsigned;
    let mut cases: Vec<(&str, Payload)> = vec![
        ("no filters", payload.with(0, u(0))),
        ("more filters than stored", payload.with(0, u(3))),
        ("65536 filters", payload.with(0, u(65536))),
        ("buckets not a power of two", payload.with(1, u(3))),
        ("no buckets", payload.with(1, u(0))),
        ("huge buckets", payload.with(1, u(1 << 40))),
        ("bucket size 0", payload.with(4, u(0))),
        ("bucket size 256", payload.with(4, u(256))),
        ("max iterations 0", payload.with(5, u(0))),
        ("expansion 0 with two filters", payload.with(6, u(0))),
        ("expansion over 16 bits", payload.with(6, u(65536))),
        ("sub-filter bucket count", payload.with(7, u(5))),
        ("short slots", payload.with(8, Field::Buffer(vec![1; 7]))),
        ("long slots", payload.with(10, Field::Buffer(vec![1; 17]))),
        ("slots given as a number", payload.with(8, u(8))),
        (
            "buffer where a number belongs",
            payload.with(2, Field::Buffer(b"20".to_vec())),
        ),
    ];
    let mut truncated = payload.clone();
    truncated.fields.pop();
    cases.push(("missing last field", truncated));
    let mut extra = payload.clone();
    extra.fields.push(u(1));
    cases.push(("extra field", extra));
    let mut newer = payload.clone();
    newer.module_id += 1;
    cases.push(("encoding version 5", newer));

    for (what, bad) in &cases {
        assert_eq!(
            call!(c, "RESTORE", "bad", "0", bad.encode()),
            err("ERR Bad data format"),
            "{what}"
        );
        assert_eq!(call!(c, "PING"), Simple("PONG".into()), "{what}");
        assert_eq!(call!(c, "EXISTS", "bad"), Int(0), "{what}");
        assert_eq!(call!(c, "DBSIZE"), Int(1), "{what}");
    }
    let mut corrupt = payload.encode();
    let last = corrupt.len() - 1;
    corrupt[last] ^= 1;
    assert_eq!(
        call!(c, "RESTORE", "bad", "0", corrupt),
        err("ERR DUMP payload version or checksum are wrong")
    );
    assert_eq!(snapshot(&mut c, "cf", "item"), before);
    assert!(server.alive());
    server.kill();
}
