//! Windowed filters (`WINDOW`, `COMPACT WINDOW`) at the edges of time and under a client's
//! expiries, with a replica attached and every write in the AOF: the primary's clock thrown
//! to 100 years ahead, `i64::MAX / 2`, `i64::MAX` ms and back, a write after each move; and a
//! client's `PERSIST`, `EXPIRE`, `PEXPIRE`, `EXPIREAT` and `PEXPIREAT` followed by writes and a
//! restart from the AOF. (`tests/windowed_attack.rs` runs the same moves at random.)
pub mod common;

use common::*;

const YEAR: i64 = 365 * DAY;

/// The primary's clock thrown to the edges of time and back, a write after each move: every
/// expiry is the end of the window (`i64::MAX` at most, never negative), items added since the
/// last window began read present, and the replica and an AOF reload hold the same.
#[test]
fn writes_at_the_edges_of_time_keep_sane_expiries_and_identical_copies() {
    let mut rig = Rig::start();
    let keys = [
        (
            "plain",
            vec!["0.01", "100", "WINDOW", "3600", "GENERATIONS", "4"],
        ),
        ("tiny", vec!["0.1", "1", "WINDOW", "1", "GENERATIONS", "32"]),
        (
            "long",
            vec!["0.001", "10", "WINDOW", "315360000", "GENERATIONS", "2"],
        ),
        ("compact", vec!["0.01", "100", "COMPACT", "WINDOW", "3600"]),
        (
            "compact32",
            vec!["0.01", "10", "COMPACT", "WINDOW", "60", "GENERATIONS", "32"],
        ),
    ];
    for (key, args) in &keys {
        let mut command = vec!["BF.RESERVE", key];
        command.extend(args);
        assert_eq!(rig.p.call(&command), ok(), "{key}");
    }
    let real = local_ms();
    let targets = [
        real + 100 * YEAR,
        i64::MAX / 2,
        i64::MAX,
        real,
        real - YEAR,
        i64::MAX - 1,
        (u64::MAX / 2) as i64,
    ];
    for (n, target) in targets.iter().enumerate() {
        let offset = target.saturating_sub(local_ms()).to_string();
        assert_eq!(rig.p.call(&["BF.__FAULT", "CLOCK", offset.as_str()]), ok());
        for (key, _) in &keys {
            let items: Vec<String> = (0..20).map(|i| format!("{key}:{n}:{i}")).collect();
            let mut args = vec!["BF.MADD".to_string(), key.to_string()];
            args.extend(items.iter().cloned());
            let added = rig.p.call(&args).array();
            assert!(
                added.iter().all(|a| matches!(a, Int(_))),
                "{key}: {added:?}"
            );
            let at = rig.p.call(&["PEXPIRETIME", key]).int();
            assert!(at > 0, "{key} at {target}: expiry {at}");
            // The filter's clock never goes back: after the end of time, it stays there.
            if n >= 2 {
                assert_eq!(at, i64::MAX, "{key} at {target}");
            }
            if *key != "tiny" {
                assert!(
                    mexists(&mut rig.p, key, &items)
                        .iter()
                        .all(|a| *a == Int(1)),
                    "{key} at {target}"
                );
            }
        }
        rig.assert_replica_identical(&format!("clock at {target}"));
    }
    rig.assert_aof_reloads("the edges of time");
    rig.assert_aof_rewrite_reloads("no", "the edges of time, rewritten");
    rig.assert_replica_identical("after the AOF reload");
}

/// A client's PERSIST, EXPIRE and PEXPIRE on windowed keys, then writes, then a restart from
/// the AOF: each write arms the window's end again, and the copies agree throughout.
#[test]
fn expiries_set_by_clients_then_writes_then_a_restart() {
    let mut rig = Rig::start();
    for (key, compact) in [("wn", false), ("wc", true)] {
        let mut args = vec!["BF.RESERVE", key, "0.01", "100"];
        if compact {
            args.push("COMPACT");
        }
        args.extend(["WINDOW", "600", "GENERATIONS", "4"]);
        assert_eq!(rig.p.call(&args), ok());
    }
    let edits: [&[&str]; 5] = [
        &["PERSIST"],
        &["EXPIRE", "100000"],
        &["PEXPIRE", "1000000000"],
        &["EXPIREAT", "4102444800"],
        &["PEXPIREAT", "9223372036854775807"],
    ];
    for (n, edit) in edits.iter().enumerate() {
        for key in ["wn", "wc"] {
            let item = format!("{key}:{n}");
            assert_eq!(call!(rig.p, "BF.ADD", key, item.as_str()), Int(1));
            let armed = rig.p.call(&["PEXPIRETIME", key]).int();
            let mut args = vec![edit[0], key];
            args.extend(&edit[1..]);
            assert_eq!(rig.p.call(&args), Int(1), "{args:?}");
            let next = format!("{key}:{n}:next");
            assert_eq!(call!(rig.p, "BF.ADD", key, next.as_str()), Int(1));
            assert_eq!(rig.p.call(&["PEXPIRETIME", key]).int(), armed, "{args:?}");
            assert_eq!(call!(rig.p, "BF.EXISTS", key, item.as_str()), Int(1));
            // A client's expiry that no write follows stays the client's.
            rig.p.call(&args);
        }
        rig.assert_replica_identical(&format!("{edit:?}"));
        rig.assert_aof_reloads(&format!("{edit:?}"));
        rig.assert_replica_identical(&format!("{edit:?}, after the AOF reload"));
    }
}
