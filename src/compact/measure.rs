//! The measurements behind the design, printed rather than asserted:
//! `cargo test --release --lib compact::measure -- --ignored --nocapture`.
//! Memory: bytes of a compact filter grown from the smallest table against RedisBloom's
//! one link sized for exactly n (`BF.RESERVE k ε n NONSCALING`) and the feed's tiers
//! (`ε 1000 EXPANSION 10`), as each reports its size (value bytes, no key overhead).
//! False positives: the measured rate at the listed sizes and right after every expansion.

use super::Compact;
use crate::bloom::Chain;

const SIZES: [u64; 11] = [
    100, 200, 500, 1000, 1500, 3000, 10_000, 30_000, 100_000, 300_000, 1_000_000,
];

fn id(i: u64) -> Vec<u8> {
    format!("{i:016x}").into_bytes()
}

fn geometric_mean(values: &[f64]) -> f64 {
    (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp()
}

#[test]
#[ignore]
fn memory_table() {
    for error in [0.01, 0.001] {
        println!("\nerror {error}: bytes as reported (BF.INFO Size)");
        println!(
            "{:>9} {:>10} {:>10} {:>10} {:>8} {:>8} {:>6} {:>6}",
            "n", "one link", "tiers", "compact", "c/link", "t/link", "slots", "bits"
        );
        let mut tiers = Chain::new(1000, error, 10, true, u64::MAX).unwrap();
        let mut compact = Compact::new(1, error, false, u64::MAX).unwrap();
        let (mut ratios, mut tier_ratios, mut worst) = (vec![], vec![], 0f64);
        let mut held = 0;
        for n in SIZES {
            while held < n {
                tiers.add(&id(held), u64::MAX).unwrap();
                compact.add(&id(held), u64::MAX).unwrap();
                held += 1;
            }
            let link = Chain::new(n, error, 2, false, u64::MAX)
                .unwrap()
                .reported_bytes();
            let ratio = compact.bytes() as f64 / link as f64;
            let tier_ratio = tiers.reported_bytes() as f64 / link as f64;
            ratios.push(ratio);
            tier_ratios.push(tier_ratio);
            worst = worst.max(ratio);
            let s = compact.summary();
            println!(
                "{n:>9} {link:>10} {:>10} {:>10} {ratio:>8.2} {tier_ratio:>8.2} {:>6} {:>6}",
                tiers.reported_bytes(),
                compact.bytes(),
                s.slots,
                s.width + 2
            );
        }
        println!(
            "geometric mean: compact {:.2}x one link (worst {worst:.2}x), tiers {:.2}x",
            geometric_mean(&ratios),
            geometric_mean(&tier_ratios)
        );
    }
}

#[test]
#[ignore]
fn false_positive_table() {
    for error in [0.01, 0.001] {
        let queries = (200.0 / error) as u64;
        println!("\nerror {error}: false positives out of {queries} absent items");
        println!(
            "{:>9} {:>10} {:>6} {:>10} {:>9}",
            "items", "when", "slots", "measured", "÷ error"
        );
        let mut compact = Compact::new(1, error, false, u64::MAX).unwrap();
        let mut generation = 0;
        let mut sizes = SIZES.iter().peekable();
        for i in 0..1_000_000u64 {
            compact.add(&id(i), u64::MAX).unwrap();
            let expanded = compact.summary().generation != generation;
            let listed = sizes.peek().is_some_and(|n| **n == i + 1);
            if listed {
                sizes.next();
            }
            if expanded || listed {
                generation = compact.summary().generation;
                let hits = (0..queries)
                    .filter(|q| compact.contains(format!("absent{q}").as_bytes()))
                    .count();
                let rate = hits as f64 / queries as f64;
                println!(
                    "{:>9} {:>10} {:>6} {rate:>10.5} {:>9.2}",
                    i + 1,
                    if expanded { "expanded" } else { "listed" },
                    compact.summary().slots,
                    rate / error
                );
            }
        }
    }
}

/// What expansions add to the cost of an add: the same items into a filter grown from the
/// smallest table and into one created at its final size.
#[test]
#[ignore]
fn expansion_share_of_adds() {
    let n = 1_000_000u64;
    for capacity in [1, n] {
        let mut filter = Compact::new(capacity, 0.01, false, u64::MAX).unwrap();
        let start = std::time::Instant::now();
        for i in 0..n {
            filter.add(&id(i), u64::MAX).unwrap();
        }
        println!(
            "capacity {capacity}: {:.1} ns per add",
            start.elapsed().as_secs_f64() * 1e9 / n as f64
        );
    }
}
