//! Windowed Bloom filters (`WINDOW seconds [GENERATIONS g]`), against the `fault-injection`
//! build, whose `BF.__FAULT CLOCK` moves the server's clock so time passes without sleeping;
//! one test runs for real seconds on the shipped build. The contract: an item added at t
//! answers 1 until at least t + window·(g−1)/g and is forgotten by t + window; the key expires
//! at the end of the window; replicas and AOF replays hold identical values, whatever their
//! own clocks say.
pub mod common;

use common::*;
use std::time::{Duration, Instant};

/// A 4-day window in 4 generations: slots of one day, aligned on the Unix epoch.
const WINDOW_S: &str = "345600";

fn fault_server() -> (Server, Client) {
    let s = Server::with_module(fault_module());
    let c = s.client();
    (s, c)
}

/// A fault-injection server whose clock reads noon of a day a week from now; and that time.
fn server_at_noon() -> (Server, Client, i64) {
    let (s, mut c) = fault_server();
    let t = noon(&mut c);
    travel_to(&mut c, t);
    (s, c, t)
}

fn field(c: &mut Client, key: &str, name: &str) -> Reply {
    info_field(c, key, name)
}

#[test]
fn remembers_for_three_slots_and_forgets_by_the_window() {
    let (_s, mut c, t) = server_at_noon();
    assert_eq!(
        call!(
            c,
            "BF.RESERVE",
            "k",
            "0.01",
            "1000",
            "WINDOW",
            WINDOW_S,
            "GENERATIONS",
            "4"
        ),
        ok()
    );
    assert_eq!(call!(c, "TYPE", "k"), Simple("bloomrsWN".into()));
    assert_eq!(call!(c, "BF.ADD", "k", "a"), Int(1));
    assert_eq!(call!(c, "BF.ADD", "k", "a"), Int(0));
    // "a" went into the slot of day t - 12 h, which retires 4 days later: at t + 3.5 days.
    let retires = t - 12 * HOUR + 4 * DAY;
    for (at, expected) in [
        (t + 3 * DAY - HOUR, 1),
        (retires - 60_000, 1),
        (retires + 60_000, 0),
        (t + 30 * DAY, 0),
    ] {
        travel_to(&mut c, at);
        assert_eq!(
            call!(c, "BF.EXISTS", "k", "a"),
            Int(expected),
            "at {}",
            at - t
        );
        assert_eq!(call!(c, "BF.MEXISTS", "k", "a", "b"), ints(&[expected, 0]));
        assert_eq!(call!(c, "BF.CARD", "k"), Int(expected));
    }
    // A read skipped the retired generation; the value still holds it until a write.
    assert_eq!(field(&mut c, "k", "Number of filters"), Int(0));
    let held = call!(c, "MEMORY", "USAGE", "k").int();
    assert_eq!(call!(c, "BF.ADD", "k", "b"), Int(1));
    assert!(call!(c, "MEMORY", "USAGE", "k").int() <= held);
    assert_eq!(call!(c, "BF.MADD", "k", "a", "b", "c"), ints(&[1, 0, 1]));
}

#[test]
fn each_write_arms_the_expiry_to_the_end_of_the_window() {
    let (_s, mut c, t) = server_at_noon();
    let reserve = call!(c, "BF.RESERVE", "k", "0.01", "100", "WINDOW", WINDOW_S);
    assert_eq!(reserve, ok());
    let day_start = t - 12 * HOUR;
    assert_eq!(call!(c, "PEXPIRETIME", "k"), Int(day_start + 4 * DAY));
    travel_to(&mut c, t + DAY);
    assert_eq!(call!(c, "BF.ADD", "k", "x"), Int(1));
    assert_eq!(call!(c, "PEXPIRETIME", "k"), Int(day_start + 5 * DAY));
    // Reads never move it.
    travel_to(&mut c, t + 2 * DAY);
    assert_eq!(call!(c, "BF.EXISTS", "k", "x"), Int(1));
    assert_eq!(call!(c, "PEXPIRETIME", "k"), Int(day_start + 5 * DAY));
    assert_eq!(call!(c, "BF.INSERT", "k", "ITEMS", "y"), ints(&[1]));
    assert_eq!(call!(c, "PEXPIRETIME", "k"), Int(day_start + 6 * DAY));
}

/// The expiry moves once a slot: writes within one propagate no `PEXPIREAT`, and an expiry
/// the key lost (`PERSIST`) is armed again by the next write.
#[test]
fn the_expiry_propagates_when_it_moves() {
    let s = Server::with_module_and_config(fault_module(), &aof_always("no"));
    let mut c = s.client();
    let t = noon(&mut c);
    travel_to(&mut c, t);
    let reserve = call!(c, "BF.RESERVE", "k", "0.01", "100", "WINDOW", WINDOW_S);
    assert_eq!(reserve, ok());
    for item in ["a", "b", "c", "d"] {
        assert_eq!(call!(c, "BF.ADD", "k", item), Int(1));
    }
    travel_to(&mut c, t + DAY);
    assert_eq!(call!(c, "BF.MADD", "k", "e", "f"), ints(&[1, 1]));
    assert_eq!(call!(c, "BF.ADD", "k", "g"), Int(1));
    assert_eq!(call!(c, "PERSIST", "k"), Int(1));
    assert_eq!(call!(c, "BF.ADD", "k", "h"), Int(1));
    let day_start = t - 12 * HOUR;
    assert_eq!(call!(c, "PEXPIRETIME", "k"), Int(day_start + 5 * DAY));
    let armed: Vec<String> = aof_written(&s, &mut c)
        .into_iter()
        .filter(|words| words[0].eq_ignore_ascii_case("PEXPIREAT"))
        .map(|words| words[2].clone())
        .collect();
    let at = |days: i64| (day_start + days * DAY).to_string();
    assert_eq!(armed, [at(4), at(5), at(5)]);
}

#[test]
fn info_adds_window_and_generations_after_redisbloom_fields() {
    let (_s, mut c, _) = server_at_noon();
    let reserve = call!(
        c,
        "BF.RESERVE",
        "k",
        "0.01",
        "1000",
        "WINDOW",
        "3600",
        "GENERATIONS",
        "8"
    );
    assert_eq!(reserve, ok());
    let names =
        |reply: Reply| -> Vec<String> { info_fields(reply).into_iter().map(|(k, _)| k).collect() };
    let expected = [&BF_INFO_FIELDS[..], &["Window", "Generations"]].concat();
    assert_eq!(names(call!(c, "BF.INFO", "k")), expected);
    assert_eq!(
        info_fields(call!(c, "BF.INFO", "k"))
            .into_iter()
            .map(|(_, v)| v)
            .collect::<Vec<_>>(),
        [
            Int(1000),
            Int(64),
            Int(0),
            Int(0),
            Int(2),
            Int(3600),
            Int(8)
        ]
    );
    assert_eq!(call!(c, "BF.MADD", "k", "a", "b"), ints(&[1, 1]));
    assert_eq!(field(&mut c, "k", "Number of filters"), Int(1));
    assert_eq!(field(&mut c, "k", "Number of items inserted"), Int(2));
    assert_eq!(call!(c, "BF.INFO", "k", "ITEMS").array(), vec![Int(2)]);
    c.resp3();
    assert_eq!(names(call!(c, "BF.INFO", "k")), expected);
    // A non-scaling window reports no expansion, as RedisBloom does.
    let flat = call!(
        c,
        "BF.RESERVE",
        "f",
        "0.01",
        "100",
        "NONSCALING",
        "WINDOW",
        "60"
    );
    assert_eq!(flat, ok());
    assert_eq!(field(&mut c, "f", "Expansion rate"), Nil);
    assert_eq!(field(&mut c, "f", "Generations"), Int(4));
}

#[test]
fn argument_errors() {
    let (_s, mut c) = fault_server();
    let reserve = |c: &mut Client, tail: &[&str]| {
        let mut args = vec!["BF.RESERVE", "k", "0.01", "100"];
        args.extend_from_slice(tail);
        c.call(&args)
    };
    let window = "ERR WINDOW must be a whole number of seconds from 1 to 315360000";
    let generations = "ERR GENERATIONS must be an integer from 2 to 32";
    assert_eq!(reserve(&mut c, &["WINDOW", "0"]), err(window));
    assert_eq!(reserve(&mut c, &["WINDOW", "1.5"]), err(window));
    assert_eq!(
        reserve(&mut c, &["WINDOW", "60", "GENERATIONS", "1"]),
        err(generations)
    );
    assert_eq!(
        reserve(&mut c, &["GENERATIONS", "4"]),
        err("ERR GENERATIONS needs WINDOW")
    );
    assert_eq!(
        call!(c, "BF.INSERT", "k", "WINDOW", "x", "ITEMS", "a"),
        err(window)
    );
    assert_eq!(call!(c, "EXISTS", "k"), Int(0));
    // Without the new words every reply stays RedisBloom's.
    assert_eq!(
        reserve(&mut c, &["a", "b", "c", "d"]),
        err("ERR wrong number of arguments for 'bf.reserve' command")
    );
    assert_eq!(call!(c, "BF.RETIRE", "k", "0"), err("ERR not found"));
    assert_eq!(call!(c, "BF.ADD", "plain", "a"), Int(1));
    assert_eq!(
        call!(c, "BF.RETIRE", "plain", "0"),
        err("ERR not a windowed Bloom filter")
    );
    assert_eq!(
        call!(c, "BF.RESERVE", "plain", "0.01", "100", "WINDOW", "60"),
        err("ERR item exists")
    );
}

#[test]
fn a_non_scaling_generation_fills_up() {
    let (_s, mut c, t) = server_at_noon();
    let reserve = call!(
        c,
        "BF.RESERVE",
        "k",
        "0.01",
        "8",
        "NONSCALING",
        "WINDOW",
        WINDOW_S
    );
    assert_eq!(reserve, ok());
    assert_eq!(call!(c, "BF.MADD", "k", "a", "b"), ints(&[1, 1]));
    assert_eq!(
        call!(c, "BF.ADD", "k", "c"),
        err("ERR non scaling filter is full")
    );
    travel_to(&mut c, t + DAY);
    assert_eq!(call!(c, "BF.ADD", "k", "c"), Int(1));
}

#[test]
fn module_configuration_windows_implicit_filters() {
    let (_s, mut c) = fault_server();
    assert_eq!(
        call!(c, "CONFIG", "GET", "bf.bf-window").array()[1],
        bulk("0")
    );
    assert_eq!(call!(c, "BF.ADD", "plain", "x"), Int(1));
    assert_eq!(call!(c, "TYPE", "plain"), Simple("MBbloom--".into()));
    assert_eq!(call!(c, "CONFIG", "SET", "bf.bf-window", "3600"), ok());
    assert_eq!(
        call!(c, "CONFIG", "SET", "bf.bf-window-generations", "6"),
        ok()
    );
    assert_eq!(call!(c, "BF.ADD", "w", "x"), Int(1));
    assert_eq!(call!(c, "TYPE", "w"), Simple("bloomrsWN".into()));
    assert_eq!(field(&mut c, "w", "Window"), Int(3600));
    assert_eq!(field(&mut c, "w", "Generations"), Int(6));
    assert_eq!(
        call!(c, "BF.INSERT", "i", "GENERATIONS", "2", "ITEMS", "x"),
        ints(&[1])
    );
    assert_eq!(field(&mut c, "i", "Generations"), Int(2));
    // Existing plain filters stay plain; BF.RESERVE without WINDOW makes a plain one.
    assert_eq!(call!(c, "BF.ADD", "plain", "y"), Int(1));
    assert_eq!(call!(c, "TYPE", "plain"), Simple("MBbloom--".into()));
    assert_eq!(call!(c, "BF.RESERVE", "r", "0.01", "10"), ok());
    assert_eq!(call!(c, "TYPE", "r"), Simple("MBbloom--".into()));
    assert!(call!(c, "CONFIG", "SET", "bf.bf-window-generations", "1")
        .text()
        .contains("argument must be between"));
}

/// A few windowed keys written over ten simulated days.
fn windowed_workload(c: &mut Client, start: i64) -> Vec<String> {
    let keys: Vec<String> = (0..4).map(|i| format!("w:{i}")).collect();
    assert_eq!(call!(c, "CONFIG", "SET", "bf.bf-window", "172800"), ok());
    for day in 0..10 {
        for hour in [1, 9, 17] {
            travel_to(c, start + day * DAY + hour * HOUR);
            for (i, key) in keys.iter().enumerate() {
                let item = format!("item:{day}:{hour}:{i}");
                match (day + hour) % 3 {
                    0 => call!(c, "BF.ADD", key.as_str(), item.as_str()),
                    1 => call!(c, "BF.MADD", key.as_str(), item.as_str(), "shared"),
                    _ => call!(
                        c,
                        "BF.INSERT",
                        key.as_str(),
                        "CAPACITY",
                        "50",
                        "WINDOW",
                        "86400",
                        "ITEMS",
                        item.as_str()
                    ),
                };
            }
        }
    }
    keys
}

#[test]
fn aof_replay_builds_the_same_values_however_late() {
    for preamble in ["yes", "no"] {
        let s = Server::with_module_and_config(
            fault_module(),
            &["--appendonly", "yes", "--aof-use-rdb-preamble", preamble],
        );
        let mut c = s.client();
        let start = noon(&mut c);
        let keys = windowed_workload(&mut c, start);
        let before: Vec<Reply> = keys.iter().map(|k| digest(&mut c, k)).collect();
        let expiries: Vec<Reply> = keys
            .iter()
            .map(|k| call!(c, "PEXPIRETIME", k.as_str()))
            .collect();
        // Replayed three days later, then after a rewrite, the values are the same.
        travel_to(&mut c, start + 13 * DAY);
        assert_eq!(call!(c, "DEBUG", "LOADAOF"), ok());
        assert_eq!(
            keys.iter().map(|k| digest(&mut c, k)).collect::<Vec<_>>(),
            before
        );
        assert!(!call!(c, "BGREWRITEAOF").text().is_empty());
        wait_for_persistence(&mut c);
        travel_to(&mut c, start + 40 * DAY);
        assert_eq!(call!(c, "DEBUG", "LOADAOF"), ok());
        assert_eq!(
            keys.iter().map(|k| digest(&mut c, k)).collect::<Vec<_>>(),
            before
        );
        assert_eq!(
            keys.iter()
                .map(|k| call!(c, "PEXPIRETIME", k.as_str()))
                .collect::<Vec<_>>(),
            expiries
        );
        assert_eq!(call!(c, "DEBUG", "RELOAD"), ok());
        assert_eq!(
            keys.iter().map(|k| digest(&mut c, k)).collect::<Vec<_>>(),
            before
        );
    }
}

#[test]
fn replicas_follow_the_primary_clock_not_their_own() {
    let primary = Server::with_module_and_config(fault_module(), &[]);
    let replica = Server::replica_of(&primary, fault_module(), &[]);
    let (mut p, mut r) = (primary.client(), replica.client());
    wait_replica_linked(&mut r);
    // The replica's clock runs 20 days ahead of the primary's.
    let start = noon(&mut p);
    travel_to(&mut r, start + 20 * DAY);
    let keys = windowed_workload(&mut p, start);
    wait_replica_synced(&mut p, &mut r);
    for key in &keys {
        assert_eq!(digest(&mut r, key), digest(&mut p, key), "{key}");
        assert_eq!(
            call!(r, "PEXPIRETIME", key.as_str()),
            call!(p, "PEXPIRETIME", key.as_str())
        );
    }
    // Reads on the replica skip what its own clock calls retired, without changing anything.
    let recent = "item:9:17:0";
    assert_eq!(call!(p, "BF.EXISTS", "w:0", recent), Int(1));
    assert_eq!(call!(r, "BF.EXISTS", "w:0", recent), Int(0));
    travel_to(&mut r, start + 10 * DAY);
    assert_eq!(call!(r, "BF.EXISTS", "w:0", recent), Int(1));
    // A copy by SCANDUMP / LOADCHUNK on the primary reaches the replica identical too.
    let chunks = scandump(&mut p, "BF.SCANDUMP", "w:1");
    for (iter, bytes) in chunks {
        assert_eq!(call!(p, "BF.LOADCHUNK", "copy", iter, bytes), ok());
    }
    // (DEBUG DIGEST-VALUE counts whether a key has an expiry; the copy gets the same one.)
    let expiry = call!(p, "PEXPIRETIME", "w:1").int();
    assert_eq!(call!(p, "PEXPIREAT", "copy", expiry), Int(1));
    assert_eq!(digest(&mut p, "copy"), digest(&mut p, "w:1"));
    wait_replica_synced(&mut p, &mut r);
    assert_eq!(digest(&mut r, "copy"), digest(&mut p, "w:1"));
}

#[test]
fn dump_restore_copy_and_memory() {
    let (_s, mut c) = fault_server();
    let start = noon(&mut c);
    let keys = windowed_workload(&mut c, start);
    let key = keys[0].as_str();
    let payload = call!(c, "DUMP", key).bytes();
    let expiry = call!(c, "PEXPIRETIME", key).int();
    let restore = call!(c, "RESTORE", "restored", expiry, payload, "ABSTTL");
    assert_eq!(restore, ok());
    assert_eq!(digest(&mut c, "restored"), digest(&mut c, key));
    assert_eq!(call!(c, "COPY", key, "copied"), Int(1));
    assert_eq!(digest(&mut c, "copied"), digest(&mut c, key));
    assert_eq!(call!(c, "BF.ADD", "copied", "only-here"), Int(1));
    assert_ne!(digest(&mut c, "copied"), digest(&mut c, key));
    let size = field(&mut c, key, "Size").int();
    let usage = call!(c, "MEMORY", "USAGE", key).int();
    assert!(usage >= size && usage < size + 200, "{usage} vs {size}");
    let info = call!(c, "INFO", "bf").text();
    assert!(info.contains("bf_windowed_filters:6"), "{info}");
    // A truncated payload is refused, never loaded.
    let cut = payload_cut(&call!(c, "DUMP", key).bytes());
    assert!(matches!(call!(c, "RESTORE", "bad", "0", cut), Error(_)));
    assert_eq!(call!(c, "UNLINK", "restored", "copied"), Int(2));
    assert!(call!(c, "INFO", "bf")
        .text()
        .contains("bf_windowed_filters:4"));
}

/// A DUMP payload with its last generation's bytes cut, and a valid checksum.
fn payload_cut(payload: &[u8]) -> Vec<u8> {
    let body = &payload[..payload.len() - 10];
    with_valid_crc(&[&body[..body.len() - 40], &payload[payload.len() - 10..]].concat())
}

#[test]
fn forgets_in_real_seconds() {
    // The shipped build, its real clock: a 2-second window in 2 generations.
    let s = Server::start();
    let mut c = s.client();
    let reserve = call!(
        c,
        "BF.RESERVE",
        "k",
        "0.01",
        "100",
        "WINDOW",
        "2",
        "GENERATIONS",
        "2"
    );
    assert_eq!(reserve, ok());
    assert_eq!(call!(c, "BF.ADD", "k", "a"), Int(1));
    let added = Instant::now();
    assert_eq!(call!(c, "BF.EXISTS", "k", "a"), Int(1));
    let ttl = call!(c, "PTTL", "k").int();
    assert!(ttl > 900 && ttl <= 2000, "{ttl}");
    // Gone (key and item) within two seconds and a little.
    while call!(c, "EXISTS", "k") == Int(1) {
        assert!(added.elapsed() < Duration::from_millis(2500), "still there");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(added.elapsed() >= Duration::from_millis(900));
    assert_eq!(call!(c, "BF.EXISTS", "k", "a"), Int(0));
}

#[test]
fn propagating_effects_leaks_nothing() {
    // Every write to a windowed filter propagates PEXPIREAT (and a slot change BF.RETIRE):
    // 30,000 of them leave used_memory where it was, give or take the allocator's noise.
    let (_s, mut c, t) = server_at_noon();
    assert_eq!(
        call!(c, "BF.RESERVE", "k", "0.01", "1000", "WINDOW", WINDOW_S),
        ok()
    );
    let used = |c: &mut Client| info_int(c, "memory", "used_memory");
    for i in 0..1000 {
        c.send(&["BF.ADD".to_string(), "k".to_string(), format!("warm{i}")]);
    }
    for _ in 0..1000 {
        c.read();
    }
    let before = used(&mut c);
    for day in 1..=3 {
        travel_to(&mut c, t + day * DAY);
        for i in 0..10_000 {
            c.send(&[
                "BF.ADD".to_string(),
                "k".to_string(),
                format!("{day}:{}", i % 500),
            ]);
        }
        for _ in 0..10_000 {
            c.read();
        }
    }
    let grown = used(&mut c) - before;
    assert!(grown < 100_000, "used_memory grew by {grown} bytes");
}

#[test]
fn debug_lines_and_keyspace_events() {
    let (s, mut c, t) = server_at_noon();
    let events_on = call!(c, "CONFIG", "SET", "notify-keyspace-events", "Kg");
    assert_eq!(events_on, ok());
    let mut sub = s.client();
    sub.send(&["PSUBSCRIBE", "__keyspace@0__:k"]);
    assert_eq!(sub.read().array()[0], bulk("psubscribe"));
    assert_eq!(
        call!(c, "BF.RESERVE", "k", "0.01", "100", "WINDOW", WINDOW_S),
        ok()
    );
    assert_eq!(call!(c, "BF.MADD", "k", "a", "b"), ints(&[1, 1]));
    // One generation of 25 items at 0.01 / 4, its first link at half that.
    assert_eq!(
        call!(c, "BF.DEBUG", "k"),
        Array(vec![
            bulk("size:2"),
            bulk("bytes:48 bits:384 hashes:10 hashwidth:64 capacity:25 size:2 ratio:0.00125")
        ])
    );
    assert_eq!(call!(c, "BF.EXISTS", "k", "a"), Int(1));
    let later = t + 5 * DAY;
    travel_to(&mut c, later);
    assert_eq!(call!(c, "BF.DEBUG", "k"), Array(vec![bulk("size:0")]));
    assert_eq!(call!(c, "BF.RETIRE", "k", later), Int(1));
    assert_eq!(call!(c, "BF.RETIRE", "k", later), Int(0));
    assert_eq!(call!(c, "BF.ADD", "k", "c"), Int(1));
    let mut got: Vec<String> = Vec::new();
    while got.len() < 4 {
        got.extend(
            events(&mut sub, 1)
                .into_iter()
                .filter(|e| e.contains(" bf.")),
        );
    }
    let expected = ["bf.reserve", "bf.madd", "bf.retire", "bf.add"]
        .map(|event| format!("__keyspace@0__:k {event}"));
    assert_eq!(got, expected);
}
