//! Bloom filters survive every persistence path bit for bit: DEBUG RELOAD, SAVE + restart,
//! AOF rewrite with and without an RDB preamble, DUMP/RESTORE, COPY; and they propagate as
//! RedisBloom does (plus deviation D10).
pub mod common;

use common::*;

/// Keys and the items added to each.
type Keys = Vec<(String, Vec<String>)>;

/// Builds a few filters of different shapes; returns the items added to each key.
fn populate(c: &mut Client) -> Keys {
    assert_eq!(
        call!(c, "BF.RESERVE", "tiers", "0.01", "100", "EXPANSION", "10"),
        ok()
    );
    assert_eq!(
        call!(c, "BF.RESERVE", "ns", "0.05", "300", "NONSCALING"),
        ok()
    );
    assert_eq!(
        call!(
            c,
            "BF.INSERT",
            "ins",
            "CAPACITY",
            "50",
            "ERROR",
            "0.1",
            "EXPANSION",
            "3",
            "ITEMS",
            "seed"
        ),
        ints(&[1])
    );
    let mut keys = Vec::new();
    for (key, count) in [("tiers", 2500), ("ns", 250), ("ins", 400), ("auto", 777)] {
        let items: Vec<String> = (0..count).map(|i| format!("{key}/{i}")).collect();
        madd_in_batches(c, key, &items);
        keys.push((key.to_string(), items));
    }
    // A header-only restore and a binary key name.
    let header = call!(c, "BF.SCANDUMP", "ins", "0").array()[1].bytes();
    assert_eq!(call!(c, "BF.LOADCHUNK", b"bin\x00key", 1, header), ok());
    keys.push(("bin\0key".to_string(), vec![]));
    keys
}

/// Everything observable about the keys: SCANDUMP bytes, INFO, DEBUG and membership.
fn snapshot(c: &mut Client, keys: &[(String, Vec<String>)]) -> Vec<Reply> {
    let mut out = Vec::new();
    for (key, items) in keys {
        out.extend(bloom_state(c, key));
        let asked = [&items[..], &["never-added".to_string()]].concat();
        let answers = mexists(c, key, &asked);
        if !items.is_empty() {
            assert!(
                answers[..items.len()].iter().all(|a| *a == Int(1)),
                "{key}: false negative"
            );
        }
        out.push(Array(answers));
    }
    out
}

/// A client of `server` after `populate`, with the keys it made and their `snapshot`.
fn populated(server: &Server) -> (Client, Keys, Vec<Reply>) {
    let mut c = server.client();
    let keys = populate(&mut c);
    let before = snapshot(&mut c, &keys);
    (c, keys, before)
}

#[test]
fn debug_reload() {
    let s = Server::start();
    let (mut c, keys, before) = populated(&s);
    assert_eq!(call!(c, "DEBUG", "RELOAD"), ok());
    assert_eq!(snapshot(&mut c, &keys), before);
}

#[test]
fn save_and_restart() {
    let mut s = Server::start();
    let (mut c, keys, before) = populated(&s);
    assert_eq!(call!(c, "SAVE"), ok());
    s.restart();
    let mut c = s.client();
    assert_eq!(call!(c, "DBSIZE"), Int(5));
    assert_eq!(snapshot(&mut c, &keys), before);
}

fn aof_round_trip(preamble: &str) {
    let mut s = Server::build(&[], &aof_always(preamble));
    let (mut c, keys, before) = populated(&s);
    rewrite_aof(&mut c);
    if preamble == "no" {
        let commands = aof_commands(&s.dir);
        let loadchunks = commands
            .iter()
            .filter(|cmd| cmd[0].eq_ignore_ascii_case(b"BF.LOADCHUNK"))
            .count();
        assert!(
            loadchunks >= 10,
            "rewrite emitted {loadchunks} BF.LOADCHUNK commands"
        );
    }
    // More writes after the rewrite land in the incremental file.
    assert_eq!(call!(c, "BF.ADD", "tiers", "after-rewrite"), Int(1));
    let mut keys = keys;
    keys[0].1.push("after-rewrite".to_string());
    let before = {
        let mut b = before;
        b.clear();
        b.extend(snapshot(&mut c, &keys));
        b
    };
    s.restart();
    let mut c = s.client();
    assert_eq!(snapshot(&mut c, &keys), before);
}

#[test]
fn aof_rewrite_without_rdb_preamble() {
    aof_round_trip("no");
}

#[test]
fn aof_rewrite_with_rdb_preamble() {
    aof_round_trip("yes");
}

/// A plain filter's and a blocked filter's arrays of several MiB are rewritten into the AOF
/// (what Valkey 9's slot migration streams too) as `BF.LOADCHUNK`s of at most 256 KiB, and
/// replay to the same bytes.
#[test]
fn aof_rewrite_cuts_large_arrays_into_pieces_of_a_quarter_mib() {
    let mut s = Server::build(&[], &aof_always("no"));
    let mut c = s.client();
    assert_eq!(call!(c, "BF.RESERVE", "big", "0.01", "3000000"), ok());
    assert_eq!(
        call!(c, "BF.RESERVE", "blocks", "0.01", "3000000", "BLOCKED"),
        ok()
    );
    for key in ["big", "blocks"] {
        assert_eq!(
            call!(c, "BF.MADD", key, "a", "b", "c"),
            Array(vec![Int(1); 3])
        );
    }
    let before: Vec<Reply> = ["big", "blocks"].map(|k| call!(c, "DUMP", k)).into();
    rewrite_aof(&mut c);
    for key in ["big", "blocks"] {
        let runs: Vec<usize> = aof_commands(&s.dir)
            .iter()
            .filter(|cmd| cmd[0].eq_ignore_ascii_case(b"BF.LOADCHUNK") && cmd[1] == key.as_bytes())
            .map(|cmd| cmd[3].len())
            .collect();
        let bytes: usize = runs.iter().skip(1).sum();
        assert!(bytes > 3 << 20, "{key}: {bytes}");
        assert!(runs.iter().all(|len| *len <= 1 << 18), "{key}: {runs:?}");
        assert_eq!(runs.len(), 1 + bytes.div_ceil(1 << 18), "{key}: {runs:?}");
    }
    s.restart();
    let mut c = s.client();
    let after: Vec<Reply> = ["big", "blocks"].map(|k| call!(c, "DUMP", k)).into();
    assert_eq!(after, before);
}

/// Every kind whose chunks can be cut is rewritten in `LOADCHUNK`s of at most 256 KiB (what
/// Valkey 9's slot migration streams to the target's main thread): a counting filter's and a
/// cuckoo filter's arrays, a compact filter's segments (a 16 MiB chunk of them took some
/// 300 ms to check), a compact window's generation. They replay to the same values.
#[test]
fn aof_rewrite_cuts_every_kind_into_pieces_of_a_quarter_mib() {
    let mut s = Server::build(&[], &aof_always("no"));
    let mut c = s.client();
    let made = [
        call!(c, "BF.RESERVE", "counting", "0.01", "1000000", "COUNTING"),
        call!(c, "CF.RESERVE", "cuckoo", "4000000"),
        call!(c, "BF.RESERVE", "compact", "0.0001", "1000", "COMPACT"),
        call!(
            c,
            "BF.RESERVE",
            "window",
            "0.0001",
            "1000",
            "COMPACT",
            "WINDOW",
            "3600",
            "GENERATIONS",
            "2"
        ),
    ];
    assert_eq!(made, [ok(), ok(), ok(), ok()]);
    assert_eq!(call!(c, "BF.ADD", "counting", "a"), Int(1));
    assert_eq!(call!(c, "CF.ADD", "cuckoo", "a"), Int(1));
    for batch in 0..60 {
        let items: Vec<String> = (0..10_000).map(|i| format!("item-{batch}-{i}")).collect();
        for key in ["compact", "window"] {
            let mut args = vec!["BF.MADD".to_string(), key.to_string()];
            args.extend(items.iter().cloned());
            assert!(matches!(c.call(&args), Array(_)));
        }
    }
    let keys = ["counting", "cuckoo", "compact", "window"];
    let before: Vec<Reply> = keys.map(|k| call!(c, "DUMP", k)).into();
    rewrite_aof(&mut c);
    let commands = aof_commands(&s.dir);
    for key in keys {
        let runs: Vec<usize> = commands
            .iter()
            .filter(|cmd| cmd[0].ends_with(b"LOADCHUNK") && cmd[1] == key.as_bytes())
            .map(|cmd| cmd[3].len())
            .collect();
        let bytes: usize = runs.iter().skip(1).sum();
        assert!(bytes > 1 << 20, "{key}: {bytes}");
        assert!(runs.iter().all(|len| *len <= 1 << 18), "{key}: {runs:?}");
        // The header's chunk, then at least as many pieces as a quarter MiB each takes.
        let pieces = runs.len() - 1;
        assert!(pieces >= bytes.div_ceil(1 << 18), "{key}: {runs:?}");
    }
    s.restart();
    let mut c = s.client();
    let after: Vec<Reply> = keys.map(|k| call!(c, "DUMP", k)).into();
    assert_eq!(after, before);
}

#[test]
fn dump_restore_and_copy() {
    let s = Server::start();
    let (mut c, keys, before) = populated(&s);
    for (key, _) in &keys {
        restore_from_own_dump(&mut c, key);
    }
    assert_eq!(snapshot(&mut c, &keys), before);

    // COPY is a deep copy (deviation D7).
    assert_eq!(call!(c, "COPY", "tiers", "tiers2"), Int(1));
    let copied = vec![("tiers2".to_string(), keys[0].1.clone())];
    let original = vec![keys[0].clone()];
    let mut copy_snapshot = snapshot(&mut c, &copied);
    let mut original_snapshot = snapshot(&mut c, &original);
    assert_eq!(copy_snapshot, original_snapshot);
    assert_eq!(call!(c, "BF.ADD", "tiers2", "only-in-copy"), Int(1));
    assert_eq!(call!(c, "BF.EXISTS", "tiers", "only-in-copy"), Int(0));
    copy_snapshot = snapshot(&mut c, &original);
    original_snapshot.truncate(copy_snapshot.len());
    assert_eq!(copy_snapshot, original_snapshot);
}

#[test]
fn digest_follows_content() {
    // Deviation D8: the digest reflects the whole value.
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(call!(c, "BF.ADD", "a", "x"), Int(1));
    assert_eq!(call!(c, "BF.ADD", "b", "x"), Int(1));
    let a = call!(c, "DEBUG", "DIGEST-VALUE", "a").array()[0].clone();
    assert_eq!(call!(c, "DEBUG", "DIGEST-VALUE", "b").array()[0], a);
    assert_eq!(call!(c, "BF.ADD", "b", "y"), Int(1));
    assert_ne!(call!(c, "DEBUG", "DIGEST-VALUE", "b").array()[0], a);
    assert_eq!(call!(c, "DEBUG", "RELOAD"), ok());
    assert_eq!(call!(c, "DEBUG", "DIGEST-VALUE", "a").array()[0], a);
}

#[test]
fn memory_usage_follows_the_reported_size() {
    let s = Server::start();
    let mut c = s.client();
    for (key, capacity, size) in [("k1", "1000", 1480), ("k2", "100000", 137_944)] {
        assert_eq!(call!(c, "BF.RESERVE", key, "0.01", capacity), ok());
        assert_eq!(call!(c, "BF.INFO", key, "size"), ints(&[size]));
        // MEMORY USAGE is the reported size plus what the server adds per key, measured on the
        // running server (Valkey 8.1 adds nothing, Redis 7.0 the key and an entry).
        assert_eq!(value_memory(&mut c, key), size, "{key}");
    }
}

#[test]
fn propagation() {
    let s = propagating_server();
    let mut c = s.client();
    assert_eq!(call!(c, "BF.RESERVE", "r", "0.01", "2", "NONSCALING"), ok());
    assert_eq!(
        call!(c, "BF.RESERVE", "r", "0.01", "2"),
        err("ERR item exists")
    );
    assert_eq!(call!(c, "BF.ADD", "r", "a"), Int(1));
    assert_eq!(call!(c, "BF.ADD", "r", "a"), Int(0));
    assert_eq!(
        call!(c, "BF.MADD", "r", "b", "c"),
        Array(vec![Int(1), err("ERR non scaling filter is full")])
    );
    assert_eq!(call!(c, "BF.EXISTS", "r", "a"), Int(1));
    assert_eq!(
        call!(c, "BF.INSERT", "nope", "NOCREATE", "ITEMS", "a"),
        err("ERR not found")
    );
    assert_eq!(call!(c, "BF.ADD", "auto", "x"), Int(1));
    assert_eq!(
        call!(
            c,
            "BF.INSERT",
            "ins",
            "CAPACITY",
            "7",
            "NONSCALING",
            "ITEMS",
            "y"
        ),
        ints(&[1])
    );
    let header = call!(c, "BF.SCANDUMP", "r", "0").array()[1].bytes();
    assert_eq!(call!(c, "BF.LOADCHUNK", "lc", "1", header), ok());
    let written = aof_written(&s, &mut c);
    let names: Vec<String> = written.iter().map(|cmd| cmd[..2].join(" ")).collect();
    assert_eq!(
        names,
        [
            "BF.RESERVE r",
            "BF.ADD r",
            "BF.ADD r",
            "BF.MADD r",
            "BF.RESERVE auto",
            "BF.ADD auto",
            "BF.RESERVE ins",
            // BF.INSERT's items, without the options a replica would read against its own
            // settings.
            "BF.MADD ins",
            "BF.LOADCHUNK lc",
        ]
    );
    assert_eq!(
        written[4],
        ["BF.RESERVE", "auto", "0.001", "500", "EXPANSION", "2"]
    );
    assert_eq!(
        written[6],
        ["BF.RESERVE", "ins", "0.001", "7", "NONSCALING"]
    );
}

#[test]
fn keyspace_notifications() {
    // Deviation D9: an event named after the command, only when the value changed.
    let (_s, mut c, mut sub) = keyevent_server();
    assert_eq!(call!(c, "BF.RESERVE", "k", "0.01", "100"), ok());
    assert_eq!(call!(c, "BF.ADD", "k", "a"), Int(1));
    assert_eq!(call!(c, "BF.ADD", "k", "a"), Int(0));
    assert_eq!(call!(c, "BF.EXISTS", "k", "a"), Int(1));
    assert_eq!(call!(c, "BF.MADD", "k", "b"), ints(&[1]));
    assert_eq!(call!(c, "BF.INSERT", "k", "ITEMS", "c"), ints(&[1]));
    assert_eq!(call!(c, "DEL", "k"), Int(1));
    assert_eq!(
        events(&mut sub, 5),
        [
            "__keyevent@0__:bf.reserve k",
            "__keyevent@0__:bf.add k",
            "__keyevent@0__:bf.madd k",
            "__keyevent@0__:bf.insert k",
            "__keyevent@0__:del k"
        ]
    );
}
