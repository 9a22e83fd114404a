//! `BF.INFO key RATE`: the false-positive rate estimated from a key's fill, for every
//! Bloom-family kind, against the rate measured on never-added items; and the full `BF.INFO`
//! reply, which stays RedisBloom's (no `Rate` in it).

pub mod common;

use common::*;

/// Never-added items probed per measurement.
const PROBES: usize = 40_000;

fn rate(c: &mut Client, key: &str) -> f64 {
    let reply = call!(c, "BF.INFO", key, "RATE").array();
    assert_eq!(reply.len(), 1, "{reply:?}");
    reply[0]
        .text()
        .parse()
        .unwrap_or_else(|_| panic!("{reply:?}"))
}

/// The share of never-added items the key reports present.
fn measured(c: &mut Client, key: &str) -> f64 {
    let probes: Vec<String> = (0..PROBES).map(|i| format!("absent:{key}:{i}")).collect();
    let present = probes
        .chunks(1000)
        .flat_map(|batch| mexists(c, key, batch))
        .filter(|reply| *reply == Int(1))
        .count();
    present as f64 / PROBES as f64
}

/// The estimate and the measurement agree: within a third of the estimate plus three
/// standard deviations of the measurement.
fn assert_agrees(c: &mut Client, key: &str) -> f64 {
    let estimate = rate(c, key);
    let seen = measured(c, key);
    eprintln!("{key}: estimated {estimate}, measured {seen}");
    let sigma = (estimate.max(1e-9) * (1.0 - estimate) / PROBES as f64).sqrt();
    assert!(
        (seen - estimate).abs() <= estimate / 3.0 + 3.0 * sigma,
        "{key}: estimated {estimate}, measured {seen}"
    );
    estimate
}

fn fill(c: &mut Client, key: &str, n: usize) {
    let items: Vec<String> = (0..n).map(|i| format!("item:{key}:{i}")).collect();
    madd_in_batches(c, key, &items);
}

#[test]
fn every_bloom_kind_estimates_its_rate_from_its_fill() {
    let s = Server::start();
    let mut c = s.client();
    let kinds: [(&str, &[&str], usize); 8] = [
        ("exact", &["0.01", "5000", "NONSCALING"], 5000),
        ("chain", &["0.01", "500", "EXPANSION", "2"], 5000),
        ("counting", &["0.01", "5000", "COUNTING"], 5000),
        ("blocked", &["0.01", "5000", "BLOCKED"], 5000),
        ("compact", &["0.01", "100", "COMPACT"], 20000),
        (
            "compact_counting",
            &["0.01", "100", "COMPACT", "COUNTING"],
            20000,
        ),
        ("windowed", &["0.01", "2000", "WINDOW", "3600"], 6000),
        (
            "compact_windowed",
            &["0.01", "100", "COMPACT", "WINDOW", "3600"],
            20000,
        ),
    ];
    for (key, options, n) in kinds {
        let mut args = vec!["BF.RESERVE", key];
        args.extend_from_slice(options);
        assert_eq!(c.call(&args), ok(), "{key}");
        assert_eq!(rate(&mut c, key), 0.0, "{key} empty");
        fill(&mut c, key, n);
        let estimate = assert_agrees(&mut c, key);
        assert!(estimate > 0.0005, "{key}: {estimate}");
    }
    // valkey-bloom's filters too (its own BF.INFO fields otherwise), scaled to five filters.
    assert_eq!(call!(c, "CONFIG", "SET", "bf.bf-valkey-bloom", "yes"), ok());
    fill(&mut c, "valkey", 3000);
    assert_eq!(call!(c, "BF.INFO", "valkey", "FILTERS"), Int(5));
    assert!(assert_agrees(&mut c, "valkey") > 0.0005);
    // A one-link filter at its capacity sits at its rate.
    let exact = rate(&mut c, "exact");
    assert!((0.007..=0.011).contains(&exact), "{exact}");
}

#[test]
fn exact_kinds_say_so() {
    let s = Server::start();
    let mut c = s.client();
    // A static set's builder is exact but for 64-bit hash collisions; frozen, its rate is
    // 2^-w for its w-bit fingerprints (7 at 1 %).
    assert_eq!(
        call!(c, "BF.RESERVE", "set", "0.01", "1000", "STATIC"),
        ok()
    );
    fill(&mut c, "set", 1000);
    assert!(rate(&mut c, "set") < 1e-15);
    assert_eq!(call!(c, "BF.FREEZE", "set"), ok());
    assert_eq!(
        call!(c, "BF.INFO", "set", "RATE"),
        Array(vec![bulk("0.0078125")])
    );
    // A sparse filter answers from its items' hashes.
    assert_eq!(
        call!(c, "CONFIG", "SET", "bf.bf-sparse-max-bytes", "64kb"),
        ok()
    );
    assert_eq!(call!(c, "BF.RESERVE", "sparse", "0.01", "1000"), ok());
    fill(&mut c, "sparse", 50);
    assert_eq!(call!(c, "TYPE", "sparse"), Simple("bloomrsSP".into()));
    assert_eq!(
        call!(c, "BF.INFO", "sparse", "RATE"),
        Array(vec![bulk("0")])
    );
}

#[test]
fn the_full_reply_stays_redisblooms() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(call!(c, "BF.RESERVE", "k", "0.01", "100"), ok());
    let full = call!(c, "BF.INFO", "k").array();
    assert_eq!(full.len(), 10);
    assert!(!full.contains(&Simple("Rate".into())));
    c.resp3();
    assert_eq!(
        call!(c, "BF.INFO", "k", "rate"),
        Map(vec![(Simple("Rate".into()), bulk("0"))])
    );
    assert_eq!(call!(c, "BF.INFO", "missing", "RATE"), err("ERR not found"));
}
