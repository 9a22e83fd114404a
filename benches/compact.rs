//! Compact filters against RedisBloom's chains, without a server: nanoseconds per lookup
//! and per add on 1,000,000 items (a compact filter grown from capacity 100 against one link
//! sized for them), BF.MEXISTS x40 on the feed shape (grown from 1,000 to 111,000 items
//! against `0.01 1000 EXPANSION 10`, three links), the amortised add while growing, and the
//! longest single add (an expansion) while growing to 10,000,000 items against creating one
//! link of that size (what `BF.RESERVE` costs).
//!
//! `cargo bench --no-default-features --bench compact` (`-- --quick` for fewer rounds).
//! Times are the thread's CPU time, the median of the rounds.

mod common;

use std::hint::black_box;
use std::time::Instant;

use bloomrs::bloom::Chain;
use bloomrs::compact::Compact;
use common::{draws, fill, item, per_batch_item, time};

const MAX_BYTES: u64 = u64::MAX;
const ERROR: f64 = 0.01;

fn chain(capacity: u64, growth: u32, items: u64) -> (Chain, f64) {
    let mut chain = Chain::new(capacity, ERROR, growth, true, MAX_BYTES).unwrap();
    let ns = fill(items, |it| chain.add(it, MAX_BYTES).unwrap());
    (chain, ns)
}

fn compact(capacity: u64, items: u64) -> (Compact, f64) {
    let mut filter = Compact::new(capacity, ERROR, false, MAX_BYTES).unwrap();
    let ns = fill(items, |it| filter.add(it, MAX_BYTES).unwrap());
    (filter, ns)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (rounds, count) = if quick { (3, 100_000) } else { (9, 200_000) };
    let items = 1_000_000;
    let (link, link_add) = chain(items, 2, items);
    let (grown, grown_add) = compact(100, items);
    let reads = draws(2 * items, count, 7);
    let misses = draws(u64::MAX / 2, count, 11);
    println!("1,000,000 items, error {ERROR}: ns per call (median of {rounds})");
    println!(
        "{:>24} {:>10} {:>10} {:>12} {:>10}",
        "", "exists", "miss", "add (build)", "MiB"
    );
    let link_exists = time(rounds, &reads, |it| {
        black_box(link.contains(black_box(it)));
    });
    let link_miss = time(rounds, &misses, |it| {
        black_box(link.contains(black_box(it)));
    });
    let c_exists = time(rounds, &reads, |it| {
        black_box(grown.contains(black_box(it)));
    });
    let c_miss = time(rounds, &misses, |it| {
        black_box(grown.contains(black_box(it)));
    });
    let mib = |b: u64| b as f64 / 1048576.0;
    println!(
        "{:>24} {link_exists:>10.1} {link_miss:>10.1} {link_add:>12.1} {:>10.2}",
        "one link",
        mib(link.reported_bytes())
    );
    println!(
        "{:>24} {c_exists:>10.1} {c_miss:>10.1} {grown_add:>12.1} {:>10.2}",
        "compact from 100",
        mib(grown.bytes())
    );
    println!(
        "compact / one link: exists {:.2}, miss {:.2}, add {:.2}",
        c_exists / link_exists,
        c_miss / link_miss,
        grown_add / link_add
    );

    let (feed, _) = chain(1000, 10, 111_000);
    let (feed_compact, _) = compact(1000, 111_000);
    let feed_reads = draws(222_000, count, 17);
    let mexists_chain = per_batch_item(rounds, &feed_reads, 40, |b| {
        feed.contains_each(b.iter().map(Vec::as_slice), |found| {
            black_box(found);
        })
    });
    let mexists_compact = per_batch_item(rounds, &feed_reads, 40, |b| {
        feed_compact.contains_each(b.iter().map(Vec::as_slice), |found| {
            black_box(found);
        })
    });
    println!(
        "feed (111,000 items): BF.MEXISTS x40 ns per item: 3 links {mexists_chain:.1}, compact {mexists_compact:.1}, ratio {:.2}",
        mexists_compact / mexists_chain
    );

    let big = if quick { 2_000_000 } else { 10_000_000 };
    let mut filter = Compact::new(100, ERROR, false, MAX_BYTES).unwrap();
    let mut longest = (0f64, 0u64);
    let start = Instant::now();
    for i in 0..big {
        let t = Instant::now();
        filter.add(&item(i), MAX_BYTES).unwrap();
        let ns = t.elapsed().as_nanos() as f64;
        if ns > longest.0 {
            longest = (ns, i);
        }
    }
    let total = start.elapsed().as_secs_f64();
    let t = Instant::now();
    let reserve = Chain::new(big, ERROR, 2, true, MAX_BYTES).unwrap();
    let reserve_ms = t.elapsed().as_secs_f64() * 1e3;
    black_box(&reserve);
    println!(
        "growing to {big} items: {:.1} ns per add, longest add {:.1} ms (item {}), one link of that size created in {reserve_ms:.1} ms",
        total * 1e9 / big as f64,
        longest.0 / 1e6,
        longest.1
    );
}
