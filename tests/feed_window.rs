//! Compact windowed filters (`COMPACT WINDOW seconds [GENERATIONS g]`, type `bloomrsWC`):
//! windows whose generations grow by segments. Against the `fault-injection` build, whose
//! `BF.__FAULT CLOCK` moves the server's clock so days pass without sleeping. The contract is
//! the windowed kind's (remembered for at least `window·(g−1)/g`, forgotten by `window`,
//! replicas and AOF replays identical whatever their clocks), with memory that follows the
//! items each generation holds.
pub mod common;

use common::*;

fn server_at_noon() -> (Server, Client, i64) {
    let s = Server::with_module(fault_module());
    let mut c = s.client();
    let t = noon(&mut c);
    travel_to(&mut c, t);
    (s, c, t)
}

#[test]
fn reserve_insert_and_settings_create_it() {
    let (_s, mut c, _) = server_at_noon();
    assert_eq!(
        call!(
            c,
            "BF.RESERVE",
            "r",
            "0.01",
            "100",
            "COMPACT",
            "WINDOW",
            "86400",
            "GENERATIONS",
            "8"
        ),
        ok()
    );
    assert_eq!(call!(c, "TYPE", "r"), Simple("bloomrsWC".into()));
    assert_eq!(call!(c, "BF.MADD", "r", "a", "b", "a"), ints(&[1, 1, 0]));
    assert_eq!(call!(c, "BF.MEXISTS", "r", "a", "b", "c"), ints(&[1, 1, 0]));
    assert_eq!(call!(c, "BF.CARD", "r"), Int(2));
    assert_eq!(info_field(&mut c, "r", "Number of items inserted"), Int(2));
    assert_eq!(info_field(&mut c, "r", "Number of filters"), Int(1));
    assert_eq!(info_field(&mut c, "r", "Expansion rate"), Int(2));
    assert_eq!(info_field(&mut c, "r", "Window"), Int(86400));
    assert_eq!(info_field(&mut c, "r", "Generations"), Int(8));
    let size = info_field(&mut c, "r", "Size").int();
    let usage = call!(c, "MEMORY", "USAGE", "r").int();
    assert!(usage >= size && usage < size + 200, "{usage} vs {size}");
    let debug = call!(c, "BF.DEBUG", "r").array();
    assert_eq!(debug[0], bulk("size:2"));
    assert!(debug[1].text().starts_with("compact items:2"), "{debug:?}");
    assert_eq!(
        call!(
            c,
            "BF.INSERT",
            "i",
            "COMPACT",
            "WINDOW",
            "60",
            "ITEMS",
            "x",
            "y"
        ),
        ints(&[1, 1])
    );
    assert_eq!(call!(c, "TYPE", "i"), Simple("bloomrsWC".into()));
    assert_eq!(info_field(&mut c, "i", "Generations"), Int(4));
    // The settings together make it too.
    assert_eq!(call!(c, "CONFIG", "SET", "bf.bf-compact", "yes"), ok());
    assert_eq!(call!(c, "CONFIG", "SET", "bf.bf-window", "3600"), ok());
    assert_eq!(call!(c, "BF.ADD", "s", "x"), Int(1));
    assert_eq!(call!(c, "TYPE", "s"), Simple("bloomrsWC".into()));
    assert_eq!(info_field(&mut c, "s", "Window"), Int(3600));
    // Combinations that are not built are refused by name.
    assert_replies(
        &mut c,
        &[
            (
                &["BF.RESERVE", "e", "0.01", "100", "COMPACT", "COUNTING", "WINDOW", "60"],
                err("ERR COUNTING and WINDOW cannot be combined"),
            ),
            (
                &["BF.RESERVE", "e", "0.01", "100", "COMPACT", "NONSCALING", "WINDOW", "60"],
                err("ERR COMPACT filters grow: NONSCALING cannot be combined"),
            ),
            (
                &["BF.RESERVE", "e", "2e-12", "100", "COMPACT", "WINDOW", "60"],
                err("ERR COMPACT WINDOW filters take error rates from 1e-12 per generation (error / GENERATIONS)"),
            ),
            (
                &["BF.RESERVE", "e", "0.01", "100", "BLOCKED", "WINDOW", "60"],
                err("ERR BLOCKED and WINDOW cannot be combined"),
            ),
        ],
    );
    assert_eq!(call!(c, "EXISTS", "e"), Int(0));
}

#[test]
fn remembers_for_three_slots_and_forgets_by_the_window() {
    let (_s, mut c, t) = server_at_noon();
    let reserve = call!(
        c,
        "BF.RESERVE",
        "k",
        "0.01",
        "10",
        "COMPACT",
        "WINDOW",
        "345600"
    );
    assert_eq!(reserve, ok());
    let items: Vec<String> = (0..3000)
        .map(|i| format!("news:{}", 100_000_000 + i))
        .collect();
    madd_in_batches(&mut c, "k", &items);
    // An item that reads present (a false positive) is not stored again: at most a few.
    let card = call!(c, "BF.CARD", "k").int();
    assert!((2980..=3000).contains(&card), "{card}");
    // Added in the slot of day t - 12 h, which retires 4 days later: at t + 3.5 days.
    travel_to(&mut c, t + 3 * DAY + 11 * HOUR);
    assert_eq!(call!(c, "BF.EXISTS", "k", items[0].as_str()), Int(1));
    assert_eq!(call!(c, "BF.ADD", "k", "late"), Int(1));
    assert_eq!(call!(c, "BF.RETIRE", "k", t + 4 * DAY), Int(1));
    assert_eq!(call!(c, "BF.EXISTS", "k", items[0].as_str()), Int(0));
    assert_eq!(call!(c, "BF.EXISTS", "k", "late"), Int(1));
    assert_eq!(call!(c, "BF.RETIRE", "nothing", "1"), err("ERR not found"));
}

/// A few compact windowed keys written over ten simulated days.
fn workload(c: &mut Client, start: i64) -> Vec<String> {
    let keys: Vec<String> = (0..3).map(|i| format!("w:{i}")).collect();
    travel_to(c, start);
    for key in &keys[..2] {
        let reserve = call!(
            c,
            "BF.RESERVE",
            key.as_str(),
            "0.01",
            "100",
            "COMPACT",
            "WINDOW",
            "172800"
        );
        assert_eq!(reserve, ok());
    }
    let created = call!(
        c,
        "BF.INSERT",
        "w:2",
        "COMPACT",
        "WINDOW",
        "172800",
        "ITEMS",
        "first"
    );
    assert_eq!(created, ints(&[1]));
    for key in &keys {
        assert_eq!(call!(c, "TYPE", key.as_str()), Simple("bloomrsWC".into()));
    }
    for day in 0..10 {
        for hour in [1, 9, 17] {
            travel_to(c, start + day * DAY + hour * HOUR);
            for (i, key) in keys.iter().enumerate() {
                let items: Vec<String> = (0..200)
                    .map(|n| format!("item:{day}:{hour}:{i}:{n}"))
                    .collect();
                let k = key.as_str();
                match (day + hour) % 3 {
                    0 => call!(c, "BF.ADD", k, items[0].as_str()),
                    1 => {
                        madd_in_batches(c, k, &items);
                        Int(0)
                    }
                    _ => call!(
                        c,
                        "BF.INSERT",
                        k,
                        "COMPACT",
                        "WINDOW",
                        "172800",
                        "ITEMS",
                        items[0].as_str(),
                        items[1].as_str()
                    ),
                };
            }
        }
    }
    keys
}

#[test]
fn aof_replay_and_reload_build_the_same_values_however_late() {
    for preamble in ["yes", "no"] {
        let s = Server::with_module_and_config(
            fault_module(),
            &["--appendonly", "yes", "--aof-use-rdb-preamble", preamble],
        );
        let mut c = s.client();
        let start = noon(&mut c);
        let keys = workload(&mut c, start);
        let before: Vec<Reply> = keys.iter().map(|k| digest(&mut c, k)).collect();
        travel_to(&mut c, start + 13 * DAY);
        assert_eq!(call!(c, "DEBUG", "LOADAOF"), ok());
        let after: Vec<Reply> = keys.iter().map(|k| digest(&mut c, k)).collect();
        assert_eq!(after, before, "preamble {preamble}");
        assert!(!call!(c, "BGREWRITEAOF").text().is_empty());
        wait_for_persistence(&mut c);
        travel_to(&mut c, start + 40 * DAY);
        assert_eq!(call!(c, "DEBUG", "LOADAOF"), ok());
        let rewritten: Vec<Reply> = keys.iter().map(|k| digest(&mut c, k)).collect();
        assert_eq!(rewritten, before, "preamble {preamble}");
        assert_eq!(call!(c, "DEBUG", "RELOAD"), ok());
        let reloaded: Vec<Reply> = keys.iter().map(|k| digest(&mut c, k)).collect();
        assert_eq!(reloaded, before);
    }
}

#[test]
fn replicas_hold_the_primary_values_whatever_their_clock() {
    let primary = Server::with_module_and_config(fault_module(), &[]);
    let replica = Server::replica_of(&primary, fault_module(), &[]);
    let (mut p, mut r) = (primary.client(), replica.client());
    wait_replica_linked(&mut r);
    let start = noon(&mut p);
    travel_to(&mut r, start + 20 * DAY);
    let keys = workload(&mut p, start);
    wait_replica_synced(&mut p, &mut r);
    for key in &keys {
        assert_eq!(digest(&mut r, key), digest(&mut p, key), "{key}");
        assert_eq!(
            call!(r, "PEXPIRETIME", key.as_str()),
            call!(p, "PEXPIRETIME", key.as_str())
        );
    }
    // A copy by SCANDUMP / LOADCHUNK reaches the replica identical too.
    for (iter, bytes) in scandump(&mut p, "BF.SCANDUMP", "w:1") {
        assert_eq!(call!(p, "BF.LOADCHUNK", "copy", iter, bytes), ok());
    }
    let expiry = call!(p, "PEXPIRETIME", "w:1").int();
    assert_eq!(call!(p, "PEXPIREAT", "copy", expiry), Int(1));
    assert_eq!(digest(&mut p, "copy"), digest(&mut p, "w:1"));
    wait_replica_synced(&mut p, &mut r);
    assert_eq!(digest(&mut r, "copy"), digest(&mut p, "w:1"));
}

#[test]
fn dump_restore_copy_and_refusals() {
    let s = Server::with_module(fault_module());
    let mut c = s.client();
    let start = noon(&mut c);
    let keys = workload(&mut c, start);
    let key = keys[0].as_str();
    let payload = call!(c, "DUMP", key).bytes();
    let expiry = call!(c, "PEXPIRETIME", key).int();
    let restore = call!(c, "RESTORE", "restored", expiry, payload.clone(), "ABSTTL");
    assert_eq!(restore, ok());
    assert_eq!(digest(&mut c, "restored"), digest(&mut c, key));
    assert_eq!(call!(c, "COPY", key, "copied"), Int(1));
    assert_eq!(digest(&mut c, "copied"), digest(&mut c, key));
    assert_eq!(call!(c, "BF.ADD", "copied", "only-here"), Int(1));
    assert_ne!(digest(&mut c, "copied"), digest(&mut c, key));
    // A payload with a byte changed in the middle is refused or loads a valid value.
    for at in [20, payload.len() / 2, payload.len() - 20] {
        let mut bad = payload[..payload.len() - 10].to_vec();
        bad[at] ^= 0x41;
        let bad = with_valid_crc(&[&bad[..], &payload[payload.len() - 10..]].concat());
        let _ = call!(c, "RESTORE", "bad", "0", bad, "REPLACE");
        assert_eq!(call!(c, "PING"), Simple("PONG".into()));
    }
    // A chunk again is refused, and an incomplete copy takes no adds.
    let chunks = scandump(&mut c, "BF.SCANDUMP", key);
    assert!(chunks.len() > 2, "{}", chunks.len());
    assert_eq!(
        call!(c, "BF.LOADCHUNK", "part", 1, chunks[0].1.clone()),
        ok()
    );
    let (iter, bytes) = chunks[1].clone();
    assert_eq!(call!(c, "BF.LOADCHUNK", "part", iter, bytes.clone()), ok());
    assert!(matches!(
        call!(c, "BF.LOADCHUNK", "part", iter, bytes),
        Error(_)
    ));
    assert!(matches!(call!(c, "BF.ADD", "part", "x"), Error(_)));
    assert!(call!(c, "INFO", "bf")
        .text()
        .contains("bf_windowed_filters:"));
}

#[test]
fn an_idle_compact_window_costs_less_than_a_set_of_its_items_held_in_a_hash_table() {
    // The window's fields (64 bytes), then per generation its slot (8), its one segment's
    // fields (32) and the segment's words: what `docs/kinds/README.md#idle-keys` shows.
    let (_s, mut c, _) = server_at_noon();
    let items = |n: usize| (0..n).map(|i| format!("news:{}", 100_000_001 + i));
    for n in [0, 1, 10] {
        let (key, set) = (format!("k{n}"), format!("s{n}"));
        let reserve = [
            "BF.RESERVE",
            &key,
            "0.01",
            "100",
            "COMPACT",
            "WINDOW",
            "2592000",
        ];
        assert_eq!(c.call(&reserve), ok());
        for item in items(n) {
            assert_eq!(c.call(&["BF.ADD", &key, &item]), Int(1));
            assert_eq!(c.call(&["SADD", &set, &item]), Int(1));
        }
    }
    let size = |c: &mut Client, key: &str| info_field(c, key, "Size").int();
    assert_eq!(
        [size(&mut c, "k0"), size(&mut c, "k1"), size(&mut c, "k10")],
        [64, 136, 152]
    );
    // Keys named alike, so the key's own bytes are the same on both sides. From Redis 7.2
    // and Valkey 8 a small set is a listpack, which no value holding a window's parameters
    // undercuts (the page says why); before, it is a hash table.
    if call!(c, "OBJECT", "ENCODING", "s1") == bulk("hashtable") {
        let usage =
            |c: &mut Client, key: &str| call!(c, "MEMORY", "USAGE", key, "SAMPLES", "0").int();
        let (one, set_of_one) = (usage(&mut c, "k1"), usage(&mut c, "s1"));
        assert!(one <= set_of_one, "{one} > {set_of_one}");
        let (ten, set_of_ten) = (usage(&mut c, "k10"), usage(&mut c, "s10"));
        assert!(10 * ten <= 3 * set_of_ten, "{ten} > 0.3 x {set_of_ten}");
    }
}
