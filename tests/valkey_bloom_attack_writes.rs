//! An outsider's writes on valkey-bloom's values (`bloomfltr`):
//!
//! - Replication and AOF: `MULTI`/`EXEC` and Lua mixes of valkey-bloom's writes (with its
//!   options at edge values), `BF.LOAD`, `RESTORE`, `COPY`, `RENAME`, `DEL`, some failing part
//!   way (a non-scaling filter full, the object limit changed on the primary); the replica holds
//!   the same bytes after `WAIT`, and the primary the same keys after `DEBUG LOADAOF` and after
//!   `BGREWRITEAOF` and a restart, with and without an RDB preamble.
//!   `transactions_and_scripts_campaign` (ignored) runs it longer: `BLOOMRS_ATTACK_ROUNDS`
//!   operations per seed, `BLOOMRS_ATTACK_SEED` the first seed.
//! - Scaling edges: tightening near 0 and 1, the object limit, `VALIDATESCALETO` bounds; one
//!   add makes at most one filter and a scale-out plan walks at most what an object holds.
//! - `BF.SCANDUMP`, `BF.LOADCHUNK` and keyspace events on valkey-bloom keys.
pub mod common;

use common::*;

const SEED: &str = VB_SEED;

// ---------------------------------------------------------------------------------------------
// Replication and AOF under MULTI/EXEC and Lua.

const KEYS: [&str; 5] = ["v0", "v1", "v2", "v3", "v4"];

/// Runs a list of commands (each given as its word count then its words) with `redis.pcall`
/// (every one runs) or `redis.call` (the first error ends the script, after what ran before).
const SCRIPT_PCALL: &str = "local i = 1 while i <= #ARGV do local n = tonumber(ARGV[i]) \
    local cmd = {} for j = 1, n do cmd[j] = ARGV[i + j] end i = i + n + 1 \
    redis.pcall(unpack(cmd)) end return 1";
const SCRIPT_CALL: &str = "local i = 1 while i <= #ARGV do local n = tonumber(ARGV[i]) \
    local cmd = {} for j = 1, n do cmd[j] = ARGV[i + j] end i = i + n + 1 \
    redis.call(unpack(cmd)) end return 1";

/// Blobs and DUMPs to load, refreshed from the keys as the run goes.
struct Pool {
    blobs: Vec<Vec<u8>>,
    dumps: Vec<Vec<u8>>,
}

fn words(list: &[&str]) -> Vec<Vec<u8>> {
    list.iter().map(|w| w.as_bytes().to_vec()).collect()
}

/// One write with valkey-bloom's options at edge values.
fn random_write(rng: &mut Rng, pool: &Pool, serial: &mut u64) -> Vec<Vec<u8>> {
    let key = *rng.choose(&KEYS);
    let other = *rng.choose(&KEYS);
    let mut item = || {
        *serial += 1;
        format!("i{}", *serial)
    };
    match rng.below(14) {
        0..=2 => words(&["BF.ADD", key, &item()]),
        3..=4 => {
            let mut c = words(&["BF.MADD", key]);
            for _ in 0..1 + rng.below(30) {
                c.push(item().into_bytes());
            }
            c
        }
        5..=6 => {
            let mut c = words(&["BF.INSERT", key]);
            let options: [(&str, &[&str]); 6] = [
                (
                    "CAPACITY",
                    &["1", "2", "7", "100", "0", "-1", "9223372036854775807"],
                ),
                (
                    "ERROR",
                    &[
                        "0.5",
                        "0.01",
                        "1e-300",
                        "0.9999999",
                        "0",
                        "1",
                        "nan",
                        "5e-324",
                    ],
                ),
                ("EXPANSION", &["0", "1", "2", "10", "11"]),
                (
                    "TIGHTENING",
                    &["1e-300", "0.001", "0.5", "0.999999", "1", "0"],
                ),
                (
                    "VALIDATESCALETO",
                    &["1", "100", "1000000", "9223372036854775807", "0"],
                ),
                (
                    "SEED",
                    &[
                        SEED,
                        SEED,
                        "short",
                        "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0",
                    ],
                ),
            ];
            for (name, values) in options {
                if rng.below(3) == 0 {
                    c.push(name.as_bytes().to_vec());
                    c.push(rng.choose(values).as_bytes().to_vec());
                }
            }
            match rng.below(5) {
                0 => c.push(b"NONSCALING".to_vec()),
                1 => c.push(b"NOCREATE".to_vec()),
                _ => {}
            }
            c.push(b"ITEMS".to_vec());
            for _ in 0..1 + rng.below(20) {
                c.push(item().into_bytes());
            }
            c
        }
        7 => {
            let error = *rng.choose(&["0.5", "0.01", "1e-9", "0.999"]);
            let cap = *rng.choose(&["1", "3", "50", "1000"]);
            let mut c = words(&["BF.RESERVE", key, error, cap]);
            match rng.below(3) {
                0 => c.extend(words(&["NONSCALING"])),
                1 => c.extend(words(&["EXPANSION", *rng.choose(&["1", "2", "10"])])),
                _ => {}
            }
            c
        }
        8 => {
            let mut c = words(&["BF.LOAD", key]);
            c.push(rng.choose(&pool.blobs).clone());
            c
        }
        9 => {
            let mut c = words(&["RESTORE", key, "0"]);
            c.push(rng.choose(&pool.dumps).clone());
            c.push(b"REPLACE".to_vec());
            c
        }
        10 => words(&["COPY", key, other, "REPLACE"]),
        11 => words(&["RENAME", key, other]),
        12 => words(&["DEL", key]),
        _ => words(&["BF.EXISTS", key, &item()]),
    }
}

/// A primary with an AOF (`preamble` "yes" or "no") that creates valkey-bloom filters, and its
/// replica (which dies on any error reply to what it replays).
fn aof_pair(preamble: &str) -> (Server, Server) {
    let mut config: Vec<&str> = aof_always(preamble).to_vec();
    config.extend(["--rdbcompression", "no", "--bf.bf-valkey-bloom", "yes"]);
    let primary = Server::build(&[], &config);
    let replica = Server::replica_of(
        &primary,
        module_path(),
        &["--bf.bf-valkey-bloom", "yes", "--rdbcompression", "no"],
    );
    wait_replica_linked(&mut replica.client());
    (primary, replica)
}

/// Every key holds the same bytes and answers `BF.INFO` alike on both servers.
fn assert_same(p: &mut Client, r: &mut Client, when: &str) {
    wait_replica_synced(p, r);
    let keys = sorted_keys(p);
    assert_eq!(sorted_keys(r), keys, "{when}");
    for key in &keys {
        assert_eq!(
            call!(r, "DUMP", key),
            call!(p, "DUMP", key),
            "{when}: {key}"
        );
    }
}

/// Waits for the replica to be linked again, with both logs when it is not.
fn relinked(r: &mut Client, primary: &Server, replica: &Server, when: &str) {
    let port = primary.port.to_string();
    assert_eq!(call!(r, "REPLICAOF", "127.0.0.1", &port), ok());
    if let Err(e) = guarded(|| wait_replica_linked(r)) {
        panic!(
            "{when}: {e}\nprimary:\n{}\nreplica:\n{}",
            log_tail(primary, 30),
            log_tail(replica, 30)
        );
    }
}

fn refresh_pool(c: &mut Client, pool: &mut Pool) {
    for key in sorted_keys(c) {
        if call!(c, "TYPE", &key) == Simple("bloomfltr".into()) {
            pool.blobs.push(blob_of(c, &key));
            pool.dumps.push(call!(c, "DUMP", &key).bytes());
        }
    }
    let keep = pool.blobs.len().saturating_sub(40);
    pool.blobs.drain(..keep);
    let keep = pool.dumps.len().saturating_sub(40);
    pool.dumps.drain(..keep);
}

/// Sends `ops` writes in plain commands, transactions and scripts, with the object limit
/// changed now and then on the primary, checking the replica and the AOF as it goes.
fn replication_campaign(preamble: &str, seed: u64, ops: usize) {
    let (mut primary, replica) = aof_pair(preamble);
    let mut p = primary.client();
    let mut r = replica.client();
    let mut rng = Rng(seed);
    let mut pool = Pool {
        blobs: valkey_loads().into_iter().map(|l| l[2].clone()).collect(),
        dumps: Vec::new(),
    };
    for load in valkey_loads() {
        assert_eq!(p.call(&load), ok());
    }
    refresh_pool(&mut p, &mut pool);
    let mut serial = 0u64;
    let mut sent = 0;
    let mut batch = 0;
    let step = std::env::var("BLOOMRS_ATTACK_STEP").is_ok();
    let mut recent: Vec<String> = Vec::new();
    while sent < ops {
        batch += 1;
        for _ in 0..(if step { 1 } else { 25 }) {
            let n = 1 + rng.below(5);
            let commands: Vec<Vec<Vec<u8>>> = (0..n)
                .map(|_| random_write(&mut rng, &pool, &mut serial))
                .collect();
            sent += n;
            let mode = rng.below(6);
            recent.clear();
            for command in &commands {
                let shown: Vec<String> = command.iter().map(|w| escaped_head(w, 40).0).collect();
                recent.push(format!("mode {mode}: {shown:?}"));
            }
            match mode {
                0 | 1 => {
                    for command in &commands {
                        p.call(command);
                    }
                }
                2 | 3 => {
                    assert_eq!(p.call(&["MULTI"]), ok());
                    for command in &commands {
                        p.call(command);
                    }
                    let reply = p.call(&["EXEC"]);
                    assert!(!matches!(reply, Error(_)), "EXEC: {reply:?}");
                }
                which => {
                    let script = if which == 4 {
                        SCRIPT_PCALL
                    } else {
                        SCRIPT_CALL
                    };
                    let mut args = words(&["EVAL", script, "0"]);
                    for command in &commands {
                        args.push(command.len().to_string().into_bytes());
                        args.extend(command.iter().cloned());
                    }
                    p.call(&args);
                }
            }
            if rng.below(20) == 0 {
                let limit = *rng.choose(&["2048", "5000", "20000", "1000000", "4294967296"]);
                assert_eq!(
                    call!(p, "CONFIG", "SET", "bf.bloom-memory-usage-limit", limit),
                    ok()
                );
            }
        }
        let when = format!("seed {seed:#x} batch {batch} ({sent} ops), last group {recent:#?}");
        assert_same(&mut p, &mut r, &when);
        if batch % 4 == 0 {
            refresh_pool(&mut p, &mut pool);
        }
        if batch % 5 == 0 {
            let before = keyspace(&mut p);
            wait_for_persistence(&mut p);
            assert_eq!(call!(p, "DEBUG", "LOADAOF"), ok(), "{when}");
            assert_eq!(
                keyspace_diff(&before, &keyspace(&mut p)),
                vec![],
                "{when}: LOADAOF"
            );
        }
        if batch % 10 == 0 {
            let before = keyspace(&mut p);
            rewrite_aof(&mut p);
            primary.restart();
            p = primary.client();
            assert_eq!(
                keyspace_diff(&before, &keyspace(&mut p)),
                vec![],
                "{when}: rewrite + restart"
            );
            relinked(&mut r, &primary, &replica, &when);
            assert_same(&mut p, &mut r, &format!("{when}, after the restart"));
        }
    }
    let before = keyspace(&mut p);
    rewrite_aof(&mut p);
    primary.restart();
    let mut p = primary.client();
    assert_eq!(
        keyspace_diff(&before, &keyspace(&mut p)),
        vec![],
        "final restart"
    );
    relinked(&mut r, &primary, &replica, "end");
    assert_same(&mut p, &mut r, "end");
    assert!(!sorted_keys(&mut p).is_empty());
}

#[test]
fn transactions_and_scripts_replicate_and_reload_identically() {
    replication_campaign("yes", 0x49_a0f, 300);
    replication_campaign("no", 0x49_b0f, 300);
}

#[test]
#[ignore]
fn transactions_and_scripts_campaign() {
    let n = attack_rounds(20_000);
    for seed in 0..4u64 {
        let preamble = if seed % 2 == 0 { "yes" } else { "no" };
        replication_campaign(
            preamble,
            attack_seed("valkey-bloom replication", 0x49_000) + seed,
            n,
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Scaling edges.

/// Milliseconds one call takes.
fn timed(c: &mut Client, command: &[&str]) -> (Reply, u128) {
    let start = std::time::Instant::now();
    let reply = c.call(command);
    (reply, start.elapsed().as_millis())
}

#[test]
fn a_scale_out_plan_stops_at_the_filters_an_object_holds() {
    let s = Server::start();
    let mut c = s.client();
    // One item a filter and a rate that barely tightens: 128 MiB would hold about 600,000
    // filters, an object here 1,100.
    let tiny = [
        "CAPACITY",
        "1",
        "ERROR",
        "0.999",
        "TIGHTENING",
        "0.999999",
        "EXPANSION",
        "1",
        "SEED",
        SEED,
    ];
    let mut insert = vec!["BF.INSERT", "k"];
    insert.extend(tiny);
    assert_eq!(c.call(&insert), Array(vec![]));
    let (reply, ms) = timed(&mut c, &["BF.INFO", "k", "MAXSCALEDCAPACITY"]);
    assert_eq!(reply, Int(1100));
    assert!(ms < 50, "BF.INFO took {ms} ms");
    for (target, reply) in [
        ("1100", Array(vec![])),
        (
            "1101",
            err("ERR bloom object reached max number of filters"),
        ),
        (
            "9223372036854775807",
            err("ERR bloom object reached max number of filters"),
        ),
    ] {
        let mut insert = vec!["BF.INSERT", "other"];
        insert.extend(tiny);
        insert.extend(["VALIDATESCALETO", target]);
        let (got, ms) = timed(&mut c, &insert);
        assert_eq!(got, reply, "VALIDATESCALETO {target}");
        assert!(ms < 50, "VALIDATESCALETO {target} took {ms} ms");
        c.call(&["DEL", "other"]);
    }
}

#[test]
fn scaling_edges_refuse_cleanly_and_one_add_makes_one_filter() {
    let s = Server::start();
    let mut c = s.client();
    let insert = |c: &mut Client, key: &str, options: &[&str], items: &[&str]| {
        let mut command = vec!["BF.INSERT", key, "SEED", SEED];
        command.extend(options);
        if !items.is_empty() {
            command.push("ITEMS");
            command.extend(items);
        }
        c.call(&command)
    };
    // A tightening near 0: the third filter's rate underflows.
    let near_zero = [
        "CAPACITY",
        "1",
        "ERROR",
        "0.5",
        "TIGHTENING",
        "1e-300",
        "EXPANSION",
        "1",
    ];
    let items: Vec<String> = (0..250).map(|j| format!("a{j}")).collect();
    let items: Vec<&str> = items.iter().map(String::as_str).collect();
    let reply = insert(&mut c, "zero", &near_zero, &items).array();
    let exhausted = err("ERR false positive degrades to 0 on scale out");
    let first = reply.iter().position(|r| *r == exhausted).expect("refused");
    assert!(reply[first..].iter().all(|r| *r == exhausted), "{reply:?}");
    assert_eq!(call!(c, "BF.INFO", "zero", "FILTERS"), Int(2));

    let mut scale_to = near_zero.to_vec();
    scale_to.extend(["VALIDATESCALETO", "3"]);
    assert_eq!(
        insert(&mut c, "zero2", &scale_to, &[]),
        err("ERR provided VALIDATESCALETO causes false positive to degrade to 0")
    );
    // A tightening near 1 with one item a filter: each add that is new makes one filter, up
    // to 1,100, then is refused; one BF.ADD never makes more than one.
    let near_one = [
        "CAPACITY",
        "1",
        "ERROR",
        "0.000001",
        "TIGHTENING",
        "0.99",
        "EXPANSION",
        "1",
    ];
    assert_eq!(insert(&mut c, "one", &near_one, &[]), Array(vec![]));
    let mut filters = 1;
    for j in 0..20000 {
        let reply = call!(c, "BF.ADD", "one", &format!("x{j}"));
        if matches!(reply, Error(_)) {
            assert_eq!(reply, err("ERR bloom object reached max number of filters"));
            break;
        }
        if reply == Int(1) {
            let before = filters;
            filters = call!(c, "BF.INFO", "one", "FILTERS").int();
            assert!(
                filters - before <= 1,
                "one add made {} filters",
                filters - before
            );
        }
    }
    assert_eq!(filters, 1100);
    // A MADD of many items past the last filter: refused from there on, the rest unchanged.
    let mut madd = vec!["BF.MADD".to_string(), "one".to_string()];
    madd.extend((0..5000).map(|j| format!("y{j}")));
    let (reply, ms) = {
        let start = std::time::Instant::now();
        let reply = c.call(&madd);
        (reply, start.elapsed().as_millis())
    };
    assert!(ms < 2000, "MADD took {ms} ms");
    assert!(reply.array().iter().all(|r| matches!(r, Int(0) | Error(_))));
    let before = keyspace(&mut c);
    assert_eq!(call!(c, "DEBUG", "RELOAD"), ok());
    assert_eq!(keyspace(&mut c), before);
    // The memory limit: an add that would pass it is refused, and nothing changes.
    assert_eq!(
        call!(c, "CONFIG", "SET", "bf.bloom-memory-usage-limit", "4096"),
        ok()
    );
    let small = ["CAPACITY", "10", "ERROR", "0.01", "EXPANSION", "10"];
    assert_eq!(insert(&mut c, "limit", &small, &[]), Array(vec![]));
    let digest = |c: &mut Client| call!(c, "DEBUG", "DIGEST-VALUE", "limit");
    let limit_text = "ERR operation exceeds bloom object memory limit";
    let mut refused = false;
    for batch in 0..100 {
        let mut madd = vec!["BF.MADD".to_string(), "limit".to_string()];
        madd.extend((0..50).map(|j| format!("z{batch}:{j}")));
        let reply = c.call(&madd).array();
        if let Some(first) = reply.iter().position(|r| matches!(r, Error(_))) {
            assert!(
                reply[first..].iter().all(|r| *r == err(limit_text)),
                "{reply:?}"
            );
            refused = true;
            break;
        }
    }
    assert!(refused);
    let before = digest(&mut c);
    assert_eq!(call!(c, "BF.ADD", "limit", "one more"), err(limit_text));
    assert_eq!(digest(&mut c), before);
    assert!(call!(c, "MEMORY", "USAGE", "limit").int() < 4096 + 200);
}

/// A `BF.LOAD` blob with valkey-bloom's fixed seed, expansion 2, rate 0.01, tightening 0.5, and
/// these filters: (bytes of bits, hashes, items, capacity).

// ---------------------------------------------------------------------------------------------
// Other commands on valkey-bloom keys.

#[test]
fn scandump_loadchunk_and_events_on_valkey_bloom_keys() {
    let s = Server::start();
    let mut c = s.client();
    let mut listener = s.client();
    assert_eq!(
        call!(c, "CONFIG", "SET", "notify-keyspace-events", "KEA"),
        ok()
    );
    listener.send(&["PSUBSCRIBE", "__keyevent@0__:*"]);
    listener.read();
    assert_eq!(call!(c, "CONFIG", "SET", "bf.bf-valkey-bloom", "yes"), ok());
    assert_eq!(call!(c, "BF.RESERVE", "v", "0.01", "100"), ok());
    assert_eq!(call!(c, "BF.MADD", "v", "a", "b"), ints(&[1, 1]));
    assert_eq!(call!(c, "CONFIG", "SET", "bf.bf-valkey-bloom", "no"), ok());
    assert_eq!(call!(c, "BF.RESERVE", "p", "0.01", "100"), ok());
    // The whole value in one header, then the end.
    let chunks = scandump(&mut c, "BF.SCANDUMP", "v");
    assert_eq!(chunks.len(), 1);
    let (iter, header) = chunks[0].clone();
    assert_eq!(iter, 1);
    assert_eq!(
        call!(c, "BF.SCANDUMP", "v", "9223372036854775807"),
        Array(vec![Int(0), bulk("")])
    );
    let plain_header = scandump(&mut c, "BF.SCANDUMP", "p")[0].1.clone();
    let bad = err("ERR received bad data");
    let load = |c: &mut Client, key: &str, iter: &str, data: &[u8]| {
        c.call(&[
            b"BF.LOADCHUNK".as_slice(),
            key.as_bytes(),
            iter.as_bytes(),
            data,
        ])
    };
    assert_eq!(load(&mut c, "n", "1", &header), ok());
    assert_eq!(call!(c, "TYPE", "n"), Simple("bloomfltr".into()));
    assert_eq!(
        call!(c, "DEBUG", "DIGEST-VALUE", "n"),
        call!(c, "DEBUG", "DIGEST-VALUE", "v")
    );
    // No chunks follow the header, and a header goes to no existing key.
    for (key, iter, data) in [
        ("n", "1", header.as_slice()),
        ("n", "2", b"xxxx".as_slice()),
        ("p", "1", header.as_slice()),
        ("v", "1", plain_header.as_slice()),
        ("q", "1", b"bloomrsL".as_slice()),
        ("q", "1", &[b"bloomrsL".as_slice(), &[1; 40]].concat()),
    ] {
        assert_eq!(load(&mut c, key, iter, data), bad, "{key} {iter}");
    }
    assert_eq!(call!(c, "TYPE", "p"), Simple("MBbloom--".into()));
    assert_eq!(call!(c, "EXISTS", "q"), Int(0));
    // RedisBloom's header is no BF.LOAD blob, nor is valkey-bloom's a Cuckoo header.
    let refused = c.call(&[b"BF.LOAD".as_slice(), b"q", &plain_header]);
    assert!(matches!(refused, Error(_)), "{refused:?}");
    let refused = c.call(&[b"CF.LOADCHUNK".as_slice(), b"q", b"1", &header]);
    assert!(matches!(refused, Error(_)), "{refused:?}");
    assert_eq!(call!(c, "EXISTS", "q"), Int(0));
    // Refused writes send no event; applied ones do.
    assert_eq!(
        call!(
            c,
            "BF.INSERT",
            "full",
            "CAPACITY",
            "1",
            "NONSCALING",
            "SEED",
            SEED
        ),
        Array(vec![])
    );
    assert_eq!(call!(c, "BF.ADD", "full", "a"), Int(1));
    assert_eq!(
        call!(c, "BF.ADD", "full", "other"),
        err("ERR non scaling filter is full")
    );
    assert_eq!(call!(c, "BF.ADD", "full", "a"), Int(0));
    let blob = header[8..].to_vec();
    assert_eq!(c.call(&[b"BF.LOAD".as_slice(), b"l", &blob]), ok());
    assert_eq!(call!(c, "SET", "marker", "1"), ok());
    let mut got = Vec::new();
    loop {
        let event = events(&mut listener, 1).remove(0);
        let event = event.trim_start_matches("__keyevent@0__:").to_string();
        if event == "set marker" {
            break;
        }
        got.push(event);
    }
    assert_eq!(
        got,
        [
            "bf.reserve v",
            "bf.madd v",
            "bf.reserve p",
            "bf.loadchunk n",
            "bf.insert full",
            "bf.add full",
            "bf.load l",
        ]
    );
}
