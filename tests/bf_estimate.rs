//! `BF.ESTIMATE error_rate capacity [options]`: the `Size` a filter of that kind holding
//! `capacity` items reports, checked against `MEMORY USAGE` of one built and filled; nothing
//! is created.

pub mod common;

use common::*;

const CAPACITY: usize = 100_000;

/// The `Size` and bits per item BF.ESTIMATE answers.
fn estimate(c: &mut Client, options: &[&str]) -> (i64, f64) {
    let mut args = vec!["BF.ESTIMATE", "0.01"];
    let capacity = CAPACITY.to_string();
    args.push(&capacity);
    args.extend_from_slice(options);
    let reply = c.call(&args).array();
    assert_eq!(reply.len(), 4, "{options:?}: {reply:?}");
    assert_eq!(reply[0], Simple("Size".into()));
    assert_eq!(reply[2], Simple("Bits per item".into()));
    let size = reply[1].int();
    let bits: f64 = reply[3].text().parse().expect("bits per item");
    assert!(
        (bits - size as f64 * 8.0 / CAPACITY as f64).abs() < 1e-3,
        "{bits}"
    );
    (size, bits)
}

#[test]
fn the_size_estimated_is_what_memory_usage_reports_once_filled() {
    let s = Server::start();
    let mut c = s.client();
    let kinds: [(&str, &[&str]); 5] = [
        ("chain", &[]),
        ("exact", &["NONSCALING"]),
        ("counting", &["COUNTING"]),
        ("blocked", &["BLOCKED"]),
        ("static", &["STATIC"]),
    ];
    for (key, options) in kinds {
        let (size, _) = estimate(&mut c, options);
        assert_eq!(call!(c, "DBSIZE"), Int(0), "BF.ESTIMATE created nothing");
        let capacity = CAPACITY.to_string();
        let mut args = vec!["BF.RESERVE", key, "0.01", &capacity];
        args.extend_from_slice(options);
        assert_eq!(c.call(&args), ok(), "{key}");
        let items: Vec<String> = (0..CAPACITY).map(|i| format!("{key}:{i}")).collect();
        madd_in_batches(&mut c, key, &items);
        if key == "static" {
            assert_eq!(call!(c, "BF.FREEZE", key), ok());
        }
        let usage = call!(c, "MEMORY", "USAGE", key).int();
        let off = (usage - size).abs() as f64 / usage as f64;
        eprintln!(
            "{key}: estimated {size}, MEMORY USAGE {usage} ({:.3} %)",
            off * 100.0
        );
        assert!(off <= 0.05, "{key}: estimated {size}, MEMORY USAGE {usage}");
        assert_eq!(call!(c, "DEL", key), Int(1));
    }
}

#[test]
fn the_bits_per_item_of_each_kind_at_one_percent_and_100000_items() {
    let s = Server::start();
    let mut c = s.client();
    let cases: [(&[&str], f64); 5] = [
        (&[], 11.04),
        (&["NONSCALING"], 9.59),
        (&["COUNTING", "NONSCALING"], 38.35),
        (&["BLOCKED", "NONSCALING"], 9.93),
        (&["STATIC"], 8.32),
    ];
    for (options, want) in cases {
        let (_, bits) = estimate(&mut c, options);
        assert!(
            (bits - want).abs() < 0.02,
            "{options:?}: {bits} bits per item"
        );
    }
}

#[test]
fn refusals_name_what_is_not_sized_and_take_reserves_checks() {
    let s = Server::start();
    let mut c = s.client();
    for options in [&["COMPACT"][..], &["WINDOW", "3600"]] {
        let mut args = vec!["BF.ESTIMATE", "0.01", "1000"];
        args.extend_from_slice(options);
        let Error(text) = c.call(&args) else {
            panic!("{options:?} sized");
        };
        assert!(
            text.starts_with("ERR BF.ESTIMATE sizes RedisBloom's filters"),
            "{text}"
        );
    }
    assert_eq!(
        call!(c, "BF.ESTIMATE", "0.01"),
        err("ERR wrong number of arguments for 'bf.estimate' command")
    );
    assert_eq!(
        call!(c, "BF.ESTIMATE", "x", "100"),
        err("ERR bad error rate")
    );
    assert_eq!(
        call!(c, "BF.ESTIMATE", "0.01", "100", "COMPACT", "NONSCALING"),
        call!(c, "BF.RESERVE", "k", "0.01", "100", "COMPACT", "NONSCALING"),
    );
    assert_eq!(
        call!(c, "COMMAND", "GETKEYS", "BF.ESTIMATE", "0.01", "100"),
        err("ERR The command has no key arguments")
    );
    assert_eq!(call!(c, "DBSIZE"), Int(0));
}
