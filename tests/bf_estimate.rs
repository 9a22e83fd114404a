//! `BF.ESTIMATE error_rate capacity [options]`: the `Size` a filter of that kind holding
//! `capacity` items reports (a window: in a steady feed of its capacity, each generation
//! holding its share), checked against `MEMORY USAGE` of one built and filled; nothing is
//! created.

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

/// `MEMORY USAGE` of `keys` (their mean) within what the README promises of the `size`
/// estimated (3 % for compact filters and windows of them, 0.1 % for the others); the keys
/// are removed.
fn estimated_within(c: &mut Client, keys: &[String], size: i64) {
    let tolerance = if keys[0].starts_with("compact") {
        0.03
    } else {
        0.001
    };
    let mut total = 0;
    for key in keys {
        total += call!(c, "MEMORY", "USAGE", key.as_str()).int();
        assert_eq!(call!(c, "DEL", key.as_str()), Int(1));
    }
    let usage = total / keys.len() as i64;
    let off = (usage - size).abs() as f64 / usage as f64;
    eprintln!(
        "{keys:?}: estimated {size}, MEMORY USAGE {usage} ({:.3} %)",
        off * 100.0
    );
    assert!(
        off <= tolerance,
        "{keys:?}: estimated {size}, MEMORY USAGE {usage}"
    );
}

#[test]
fn the_size_estimated_is_what_memory_usage_reports_once_filled() {
    let s = Server::start();
    let mut c = s.client();
    let kinds: [(&str, &[&str]); 7] = [
        ("chain", &[]),
        ("exact", &["NONSCALING"]),
        ("counting", &["COUNTING"]),
        ("blocked", &["BLOCKED"]),
        ("static", &["STATIC"]),
        ("compact", &["COMPACT"]),
        ("compact-counting", &["COMPACT", "COUNTING"]),
    ];
    for (kind, options) in kinds {
        let (size, _) = estimate(&mut c, options);
        assert_eq!(call!(c, "DBSIZE"), Int(0), "BF.ESTIMATE created nothing");
        // A compact filter's size moves by about 1 % with its placement secret, drawn for
        // each key: three of them are measured.
        let copies = if kind.starts_with("compact") { 3 } else { 1 };
        let keys: Vec<String> = (0..copies).map(|n| format!("{kind}-{n}")).collect();
        for key in &keys {
            let capacity = CAPACITY.to_string();
            let mut args = vec!["BF.RESERVE", key.as_str(), "0.01", &capacity];
            args.extend_from_slice(options);
            assert_eq!(c.call(&args), ok(), "{key}");
            let items: Vec<String> = (0..CAPACITY).map(|i| format!("{kind}:{i}")).collect();
            madd_in_batches(&mut c, key, &items);
            if kind == "static" {
                assert_eq!(call!(c, "BF.FREEZE", key.as_str()), ok());
            }
        }
        estimated_within(&mut c, &keys, size);
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

/// A window of `generations` fed its capacity over one window: each generation holding its
/// share when the clock moves on, as `BF.ESTIMATE` assumes.
#[test]
fn a_window_in_a_steady_feed_takes_the_size_estimated() {
    let s = Server::with_module(fault_module());
    let mut c = s.client();
    let start = noon(&mut c);
    let window = 4 * HOUR;
    for (key, options) in [
        ("windowed", &["WINDOW", "14400"][..]),
        ("compact-window", &["COMPACT", "WINDOW", "14400"]),
        ("windowed-8", &["WINDOW", "14400", "GENERATIONS", "8"]),
    ] {
        travel_to(&mut c, start);
        let (size, _) = estimate(&mut c, options);
        let capacity = CAPACITY.to_string();
        let mut args = vec!["BF.RESERVE", key, "0.01", &capacity];
        args.extend_from_slice(options);
        assert_eq!(c.call(&args), ok(), "{key}");
        let generations = if options.len() > 3 { 8 } else { 4 };
        let share = CAPACITY / generations;
        for g in 0..generations {
            travel_to(&mut c, start + g as i64 * window / generations as i64);
            let items: Vec<String> = (0..share).map(|i| format!("{key}:{g}:{i}")).collect();
            madd_in_batches(&mut c, key, &items);
        }
        let card = call!(c, "BF.CARD", key).int();
        assert!(card > CAPACITY as i64 * 99 / 100, "{key}: {card} held");
        estimated_within(&mut c, &[key.to_string()], size);
    }
}

#[test]
fn refusals_take_reserves_checks() {
    let s = Server::start();
    let mut c = s.client();
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
