//! Every write a command accepts can be saved, loaded and replicated, exactly: the ten ways a
//! hostile client or an operator's settings once made a value unloadable or a replica diverge,
//! each replayed against a primary and a replica that dies on any error it is sent
//! (`propagation-error-behavior panic`), with different module settings on the two sides.
//! After each story: the replica is alive and every key's `DEBUG DIGEST-VALUE` is the same on
//! both, and the primary reloads its own RDB and AOF into the same digests.
pub mod common;

use common::*;

/// A primary with `primary` settings and a replica of it with `replica` settings; both panic
/// on a propagation error, and the primary keeps an AOF (without an RDB preamble, so the
/// module's AOF rewrite runs).
struct Pair {
    primary: Server,
    replica: Server,
    p: Client,
    r: Client,
}

impl Pair {
    fn new(primary: &[&str], replica: &[&str]) -> Pair {
        let mut config = vec![
            "--propagation-error-behavior",
            "panic",
            "--appendonly",
            "yes",
            "--aof-use-rdb-preamble",
            "no",
        ];
        config.extend_from_slice(primary);
        let primary = Server::build(&[], &config);
        let replica = Server::replica_of(&primary, module_path(), replica);
        let (p, mut r) = (primary.client(), replica.client());
        wait_replica_linked(&mut r);
        Pair {
            primary,
            replica,
            p,
            r,
        }
    }

    /// The replica is alive, has applied everything and holds the primary's values; then the
    /// primary reloads its RDB (DEBUG RELOAD) and its rewritten AOF, and restarts from the
    /// AOF, each time with the same digests.
    fn assert_identical(&mut self) {
        wait_replica_synced(&mut self.p, &mut self.r);
        assert!(self.replica.alive(), "replica died: {}", self.replica.log());
        let expected = digests(&mut self.p);
        assert_eq!(digests(&mut self.r), expected, "replica differs");
        assert_eq!(call!(self.p, "DEBUG", "RELOAD"), ok());
        assert_eq!(digests(&mut self.p), expected, "after DEBUG RELOAD");
        assert!(!call!(self.p, "BGREWRITEAOF").text().is_empty());
        wait_for_persistence(&mut self.p);
        assert_eq!(call!(self.p, "DEBUG", "LOADAOF"), ok());
        assert_eq!(digests(&mut self.p), expected, "after DEBUG LOADAOF");
        self.primary.restart();
        self.p = self.primary.client();
        assert_eq!(
            digests(&mut self.p),
            expected,
            "after a restart from the AOF"
        );
        assert!(
            !self.primary.log().contains("CRITICAL"),
            "{}",
            self.primary.log()
        );
    }
}

/// Every key with its digest, sorted.
fn digests(c: &mut Client) -> Vec<(String, Reply)> {
    sorted_keys(c)
        .into_iter()
        .map(|key| {
            let digest = call!(c, "DEBUG", "DIGEST-VALUE", key.as_str());
            (key, digest)
        })
        .collect()
}

fn is_error(reply: &Reply) -> bool {
    matches!(reply, Error(_))
}

/// Adds distinct items one at a time until the filter reports `items` or an add fails.
fn fill_to(c: &mut Client, key: &str, items: i64) {
    for i in 0.. {
        if call!(c, "BF.INFO", key, "ITEMS").array()[0].int() >= items {
            return;
        }
        let reply = call!(c, "BF.ADD", key, format!("fill:{i}"));
        assert!(
            !is_error(&reply),
            "{key} refused an add while filling: {reply:?}"
        );
    }
}

/// Case 1 and the second part of case 3: an expansion past 32 bits used to be truncated (to
/// 0 for 2^32), making a sparse filter the loader refuses and a BF.RESERVE a replica refuses.
#[test]
fn an_expansion_past_32_bits_is_refused() {
    let mut pair = Pair::new(&["--bf.bf-sparse-max-bytes", "2kb"], &[]);
    let p = &mut pair.p;
    for expansion in ["4294967296", "9223372036854775807"] {
        assert_eq!(
            call!(p, "BF.RESERVE", "s", "0.01", "100", "EXPANSION", expansion),
            err("ERR expansion should be at most 4294967295")
        );
        assert_eq!(
            call!(
                p,
                "BF.INSERT",
                "e",
                "EXPANSION",
                expansion,
                "ITEMS",
                "a",
                "b"
            ),
            err("Bad argument received")
        );
    }
    assert_eq!(
        call!(
            p,
            "BF.RESERVE",
            "s",
            "0.01",
            "100",
            "EXPANSION",
            "4294967295"
        ),
        ok()
    );
    assert_eq!(call!(p, "TYPE", "s"), Simple("bloomrsSP".into()));
    assert_eq!(call!(p, "BF.ADD", "s", "a"), Int(1));
    assert_eq!(call!(p, "EXISTS", "e"), Int(0));
    assert_eq!(call!(p, "SET", "unrelated", "kept"), ok());
    pair.assert_identical();
    assert_eq!(call!(pair.p, "GET", "unrelated"), bulk("kept"));
}

/// Case 2: when some items of a write fail (a scale-out the primary's limit refuses), the
/// primary propagates the items it applied, not the command: a replica, never limited, would
/// otherwise grow where the primary did not.
#[test]
fn a_partly_refused_write_propagates_what_it_applied() {
    let mut pair = Pair::new(&[], &[]);
    let p = &mut pair.p;
    assert_eq!(call!(p, "BF.RESERVE", "g", "0.01", "2000"), ok());
    let size = bf_size(p, "g");
    cap_at(p, size + 100);
    fill_to(p, "g", 1999);
    let reply = call!(p, "BF.MADD", "g", "new-a", "new-b", "new-c").array();
    assert_eq!(reply[0], Int(1));
    assert!(reply[1..].iter().all(is_error), "{reply:?}");
    assert_eq!(call!(p, "BF.INFO", "g", "FILTERS"), Array(vec![Int(1)]));

    // Windowed: a generation that cannot scale out.
    cap_at(p, 4 << 30);
    let window = [
        "BF.RESERVE",
        "w",
        "0.01",
        "1000",
        "WINDOW",
        "3600",
        "GENERATIONS",
        "2",
    ];
    assert_eq!(p.call(&window), ok());
    assert_eq!(call!(p, "BF.ADD", "w", "first"), Int(1));
    let size = bf_size(p, "w");
    cap_at(p, size + 100);
    fill_to(p, "w", 499);
    let reply = call!(p, "BF.MADD", "w", "new-a", "new-b", "new-c").array();
    assert_eq!(reply[0], Int(1));
    assert!(reply[1..].iter().all(is_error), "{reply:?}");

    // Cuckoo: an insert that needs a sub-filter the limit refuses answers -1, not an error.
    cap_at(p, 4 << 30);
    assert_eq!(call!(p, "CF.RESERVE", "c", "1024", "EXPANSION", "1"), ok());
    let size = call!(p, "CF.INFO", "c").array()[1].int();
    cap_at(p, size + 100);
    let mut args = vec!["CF.INSERT".to_string(), "c".into(), "ITEMS".into()];
    args.extend((0..3000).map(|i| format!("item:{i}")));
    let reply = p.call(&args).array();
    assert!(
        reply.contains(&Int(1)) && reply.contains(&Int(-1)),
        "{reply:?}"
    );
    let mut args = vec!["CF.INSERTNX".to_string(), "c".into(), "ITEMS".into()];
    args.extend((900..3010).map(|i| format!("item:{i}")));
    let reply = p.call(&args).array();
    assert!(
        reply.contains(&Int(0)) && reply.contains(&Int(-1)),
        "{reply:?}"
    );
    pair.assert_identical();
}

/// The primary's `bf.max-filter-bytes`, at least its minimum.
fn cap_at(c: &mut Client, bytes: i64) {
    let bytes = bytes.max(1024).to_string();
    assert_eq!(
        call!(c, "CONFIG", "SET", "bf.max-filter-bytes", bytes),
        ok()
    );
}

fn bf_size(c: &mut Client, key: &str) -> i64 {
    call!(c, "BF.INFO", key, "SIZE").array()[0].int()
}

/// Case 3: a reply that holds an error is never propagated (a full non-scaling filter); the
/// AOF holds the items that were applied.
#[test]
fn a_reply_with_an_error_is_never_propagated() {
    let mut pair = Pair::new(&[], &[]);
    let p = &mut pair.p;
    let full = err("ERR non scaling filter is full");
    assert_eq!(
        call!(
            p,
            "BF.INSERT",
            "ins",
            "CAPACITY",
            "2",
            "NONSCALING",
            "ITEMS",
            "a",
            "b",
            "c",
            "d"
        ),
        Array(vec![Int(1), Int(1), full.clone()])
    );
    assert_eq!(call!(p, "BF.ADD", "ins", "e"), full);
    assert_eq!(
        call!(p, "BF.MADD", "ins", "a", "f"),
        Array(vec![Int(0), full])
    );
    wait_replica_synced(&mut pair.p, &mut pair.r);
    let expected = [
        "BF.RESERVE ins 0.01 2 NONSCALING",
        "BF.MADD ins a b",
        "BF.MADD ins a",
    ];
    wait_for_persistence(&mut pair.p);
    let propagated = commands_on(&pair.primary, "ins");
    assert_eq!(propagated, expected);
    pair.assert_identical();
}

/// The AOF's commands on `key`, as text.
fn commands_on(server: &Server, key: &str) -> Vec<String> {
    aof_commands(&server.dir)
        .iter()
        .filter(|command| command.get(1).is_some_and(|k| k == key.as_bytes()))
        .map(|command| {
            let words: Vec<String> = command
                .iter()
                .map(|w| String::from_utf8_lossy(w).to_string())
                .collect();
            words.join(" ")
        })
        .collect()
}

/// Case 4: an expiry past what the server stores is propagated as the server applied it.
#[test]
fn the_expiry_propagated_is_the_one_applied() {
    let mut pair = Pair::new(&[], &[]);
    let p = &mut pair.p;
    assert_eq!(
        call!(p, "BF.RESERVE", "w", "0.01", "100", "WINDOW", "60"),
        ok()
    );
    assert_eq!(call!(p, "BF.ADD", "w", "a"), Int(1));
    call!(p, "BF.RETIRE", "w", "9223372036854775807");
    assert_eq!(call!(p, "BF.ADD", "w", "b"), Int(1));
    let at = call!(p, "PEXPIRETIME", "w");
    assert_eq!(at, Int(i64::MAX));
    wait_replica_synced(&mut pair.p, &mut pair.r);
    assert_eq!(call!(pair.r, "PEXPIRETIME", "w"), at);
    pair.assert_identical();
}

/// Case 5: a sparse filter's SCANDUMP builds each chunk alone: the dump of a sparse filter
/// whose dense form is ~96 MB never raises the peak memory by that much, and its chunks are
/// the promoted filter's bytes.
#[test]
fn a_sparse_dump_builds_one_chunk_at_a_time() {
    let server = Server::build(&[], &["--bf.bf-sparse-max-bytes", "2kb"]);
    let mut c = server.client();
    assert_eq!(call!(c, "BF.RESERVE", "big", "0.0001", "40000000"), ok());
    assert_eq!(call!(c, "TYPE", "big"), Simple("bloomrsSP".into()));
    assert_eq!(call!(c, "BF.MADD", "big", "a", "b", "c"), bools_or_ints(3));
    // The server's resident high-water mark: what a transient allocation leaves behind.
    let pid = call!(c, "INFO", "server")
        .text()
        .lines()
        .find_map(|l| l.strip_prefix("process_id:").map(|v| v.trim().to_string()))
        .expect("process_id");
    let peak = || -> i64 {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let kb = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<i64>().ok())
            .expect("VmHWM");
        kb * 1024
    };
    let before = peak();
    for _ in 0..5 {
        let header = call!(c, "BF.SCANDUMP", "big", "0").array();
        assert_eq!(header[0], Int(1));
    }
    let grown = peak() - before;
    assert!(
        grown < 4_000_000,
        "the header grew the peak by {grown} bytes"
    );
    let chunks = scandump(&mut c, "BF.SCANDUMP", "big");
    let dense: usize = chunks.iter().skip(1).map(|(_, bytes)| bytes.len()).sum();
    assert!(dense > 90_000_000, "dense form of {dense} bytes");
    let grown = peak() - before;
    assert!(
        grown < 60_000_000,
        "the peak grew by {grown} bytes for a dump of {dense}"
    );
    // The header, then the chunks, load into a plain filter equal to the promoted one.
    for (iter, bytes) in &chunks {
        assert_eq!(
            call!(
                c,
                "BF.LOADCHUNK",
                "copy",
                iter.to_string(),
                bytes.as_slice()
            ),
            ok()
        );
    }
    drop(chunks);
    // A chunk over the limits is refused as a whole reply; the connection goes on.
    assert_eq!(
        call!(c, "CONFIG", "SET", "bf.max-filter-bytes", "1024"),
        ok()
    );
    assert_eq!(call!(c, "BF.SCANDUMP", "big", "0").array()[0], Int(1));
    assert_eq!(call!(c, "BF.SCANDUMP", "big", "1"), too_large(1024));
    assert_eq!(call!(c, "PING"), Simple("PONG".into()));
    assert_eq!(
        call!(c, "CONFIG", "SET", "bf.max-filter-bytes", "4gb"),
        ok()
    );
    assert_eq!(call!(c, "BF.PROMOTE", "big"), Int(1));
    assert_eq!(
        call!(c, "DEBUG", "DIGEST-VALUE", "copy"),
        call!(c, "DEBUG", "DIGEST-VALUE", "big")
    );
}

/// BF.MADD answers integers in RESP2.
fn bools_or_ints(n: usize) -> Reply {
    Array(vec![Int(1); n])
}

/// Case 6: a counting delete whose counters are all saturated takes nothing back: it answers
/// 0 and changes nothing.
#[test]
fn a_delete_of_saturated_counters_changes_nothing() {
    let mut pair = Pair::new(&[], &[]);
    let p = &mut pair.p;
    assert_eq!(
        call!(p, "BF.RESERVE", "ct", "0.01", "1000", "COUNTING"),
        ok()
    );
    for i in 0..100 {
        call!(p, "BF.ADD", "ct", format!("item:{i}"));
    }
    for _ in 0..16 {
        call!(p, "BF.ADD", "ct", "hot");
    }
    let card = call!(p, "BF.CARD", "ct");
    let digest = call!(p, "DEBUG", "DIGEST-VALUE", "ct");
    for _ in 0..200 {
        assert_eq!(call!(p, "BF.DEL", "ct", "hot"), Int(0));
    }
    assert_eq!(call!(p, "BF.CARD", "ct"), card);
    assert_eq!(call!(p, "DEBUG", "DIGEST-VALUE", "ct"), digest);
    assert_eq!(call!(p, "BF.EXISTS", "ct", "hot"), Int(1));
    pair.assert_identical();
}

/// Case 7: `bf.max-filter-bytes` binds clients, never the primary's stream: a replica with a
/// lower setting takes what the primary made.
#[test]
fn a_replicas_lower_cap_never_refuses_the_primary() {
    let mut pair = Pair::new(&[], &["--bf.max-filter-bytes", "1024"]);
    let p = &mut pair.p;
    assert_eq!(call!(p, "BF.RESERVE", "big", "0.01", "100000"), ok());
    assert_eq!(call!(p, "CF.RESERVE", "cbig", "100000"), ok());
    assert_eq!(call!(p, "BF.ADD", "auto", "a"), Int(1));
    let mut args = vec!["CF.INSERT".to_string(), "cf".into(), "ITEMS".into()];
    args.extend((0..3000).map(|i| format!("item:{i}")));
    p.call(&args);
    wait_replica_synced(&mut pair.p, &mut pair.r);
    // Nor does the replica's own reload refuse what it holds.
    let held = digests(&mut pair.r);
    pair.primary.after_first_ping();
    assert_eq!(call!(pair.r, "DEBUG", "RELOAD"), ok());
    assert_eq!(digests(&mut pair.r), held);
    pair.assert_identical();
}

/// Case 8: a CF.INSERT CAPACITY that CF.RESERVE would refuse under the primary's bucket size
/// is propagated as the new filter's header, which the replica loads.
#[test]
fn a_cuckoo_creation_reserve_cannot_say_is_propagated_as_its_header() {
    let mut pair = Pair::new(&[], &[]);
    let p = &mut pair.p;
    assert_eq!(call!(p, "CONFIG", "SET", "bf.cf-bucket-size", "255"), ok());
    let reply = call!(
        p,
        "CF.INSERT",
        "t",
        "CAPACITY",
        "64",
        "ITEMS",
        "a",
        "b",
        "c"
    );
    assert_eq!(reply, Array(vec![Int(1); 3]));
    assert_eq!(call!(p, "CF.ADD", "u", "a"), Int(1));
    pair.assert_identical();
}

/// Case 9: a non-scaling filter keeps the expansion it was created with, which BF.RESERVE
/// cannot carry: the replica must not fill in its own.
#[test]
fn a_replicas_settings_never_leak_into_a_value() {
    let mut pair = Pair::new(&["--bf.bf-expansion-factor", "4"], &[]);
    let p = &mut pair.p;
    let stories: [&[&str]; 4] = [
        &[
            "BF.INSERT",
            "k",
            "NONSCALING",
            "WINDOW",
            "5",
            "GENERATIONS",
            "8",
            "ITEMS",
            "x",
        ],
        &["BF.INSERT", "plain", "NONSCALING", "ITEMS", "x"],
        &[
            "BF.INSERT",
            "given",
            "EXPANSION",
            "7",
            "NONSCALING",
            "ITEMS",
            "x",
        ],
        &[
            "BF.INSERT",
            "counting",
            "NONSCALING",
            "COUNTING",
            "ITEMS",
            "x",
        ],
    ];
    for story in stories {
        assert_eq!(p.call(story), Array(vec![Int(1)]), "{story:?}");
    }
    wait_replica_synced(&mut pair.p, &mut pair.r);
    for key in ["k", "plain", "given", "counting"] {
        assert_eq!(
            call!(pair.r, "DUMP", key),
            call!(pair.p, "DUMP", key),
            "{key}"
        );
    }
    pair.assert_identical();
}

/// Case 10: a full non-scaling sparse filter answers its error on the primary and nothing of
/// it reaches the replica (the promotion's batch no longer propagates items never processed).
#[test]
fn a_full_sparse_filter_propagates_nothing_it_refused() {
    let mut pair = Pair::new(&["--bf.bf-sparse-max-bytes", "2kb"], &[]);
    let p = &mut pair.p;
    let full = err("ERR non scaling filter is full");
    assert_eq!(call!(p, "BF.RESERVE", "s", "0.01", "2", "NONSCALING"), ok());
    assert_eq!(call!(p, "BF.ADD", "s", "a"), Int(1));
    assert_eq!(call!(p, "BF.ADD", "s", "b"), Int(1));
    assert_eq!(call!(p, "BF.ADD", "s", "c"), full);
    assert_eq!(
        call!(
            p,
            "BF.INSERT",
            "s2",
            "CAPACITY",
            "2",
            "nan",
            "ITEMS",
            "a",
            "b",
            "c",
            "d"
        ),
        Array(vec![Int(1), Int(1), full])
    );
    pair.assert_identical();
}

/// Found by the randomized replication test: settings that read a command's options (a
/// default window makes `GENERATIONS` alone valid) or limit it (`cf-max-expansions`) are the
/// primary's to apply; a replica with other settings takes what the primary did.
#[test]
fn a_replicas_settings_never_refuse_the_primary() {
    let mut pair = Pair::new(
        &["--bf.bf-window", "3600"],
        &["--bf.cf-max-expansions", "1"],
    );
    let p = &mut pair.p;
    assert_eq!(
        call!(p, "BF.INSERT", "k", "GENERATIONS", "4", "ITEMS", "a"),
        Array(vec![Int(1)])
    );
    assert_eq!(
        call!(p, "BF.RESERVE", "w", "0.01", "100", "WINDOW", "60"),
        ok()
    );
    assert_eq!(
        call!(p, "BF.INSERT", "w", "GENERATIONS", "8", "ITEMS", "a"),
        Array(vec![Int(1)])
    );
    assert_eq!(
        call!(
            p,
            "CF.RESERVE",
            "c",
            "4",
            "BUCKETSIZE",
            "1",
            "EXPANSION",
            "1"
        ),
        ok()
    );
    let reply = call!(
        p,
        "CF.INSERT",
        "c",
        "ITEMS",
        "a",
        "b",
        "c",
        "d",
        "e",
        "f",
        "g",
        "h"
    );
    assert_eq!(reply, Array(vec![Int(1); 8]));
    assert_eq!(call!(p, "CF.ADD", "c", "i"), Int(1));
    pair.assert_identical();
}

/// Loading never refuses what the server holds, whatever its limits became since.
#[test]
fn a_lowered_cap_never_refuses_loading() {
    let mut pair = Pair::new(&[], &[]);
    let p = &mut pair.p;
    assert_eq!(call!(p, "CF.RESERVE", "c", "100000"), ok());
    assert_eq!(call!(p, "BF.RESERVE", "b", "0.01", "100000"), ok());
    assert_eq!(
        call!(p, "CONFIG", "SET", "bf.max-filter-bytes", "64kb"),
        ok()
    );
    assert_eq!(
        call!(p, "BF.RESERVE", "refused", "0.01", "100000"),
        too_large(65536)
    );
    pair.assert_identical();
    assert_eq!(call!(pair.p, "EXISTS", "b", "c"), Int(2));
}
