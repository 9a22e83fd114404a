//! The segment filter (issue 32) against today's doubling compact filter, without a server:
//! nanoseconds per lookup (present and absent) and per add while growing from the default
//! start, BF.MEXISTS of 40 present items per item, and the value's bytes, at 100,000 and 1,000,000 items; then the longest single add
//! while growing to 10,000,000 items (2,000,000 with `--quick`).
//!
//! `cargo bench --no-default-features --bench compact_segments` (`-- --quick` for fewer
//! rounds). Times are the thread's CPU time, the median of the rounds.

mod common;

use std::hint::black_box;

use bloomrs::compact::segments::Segmented;
use bloomrs::compact::Compact;
use common::{cpu_ns, draws, fill, item, per_batch_item, time};

const MAX_BYTES: u64 = u64::MAX;

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (rounds, count) = if quick { (3, 100_000) } else { (9, 200_000) };
    for error in [0.01, 0.001] {
        for items in [100_000u64, 1_000_000] {
            let mut doubling = Compact::new(100, error, false, MAX_BYTES).unwrap();
            let d_add = fill(items, |it| doubling.add(it, MAX_BYTES).unwrap());
            let mut segments = Segmented::new(100, error, false, 0x5eed, MAX_BYTES).unwrap();
            let s_add = fill(items, |it| segments.add(it, MAX_BYTES).unwrap());
            let reads = draws(items, count, 7);
            let misses = draws(u64::MAX / 2, count, 11);
            let d_hit = time(rounds, &reads, |it| {
                black_box(doubling.contains(black_box(it)));
            });
            let d_miss = time(rounds, &misses, |it| {
                black_box(doubling.contains(black_box(it)));
            });
            let s_hit = time(rounds, &reads, |it| {
                black_box(segments.contains(black_box(it)));
            });
            let s_miss = time(rounds, &misses, |it| {
                black_box(segments.contains(black_box(it)));
            });
            let d_batch = per_batch_item(rounds, &reads, 40, |b| {
                doubling.contains_each(b.iter().map(Vec::as_slice), |found| {
                    black_box(found);
                })
            });
            let s_batch = per_batch_item(rounds, &reads, 40, |b| {
                segments.contains_each(b.iter().map(Vec::as_slice), |found| {
                    black_box(found);
                })
            });
            println!("error {error}, {items} items: ns per call, bytes");
            println!(
                "  doubling  exists {d_hit:>7.1}  miss {d_miss:>7.1}  mexists/40 {d_batch:>7.1}  add {d_add:>7.1}  bytes {}",
                doubling.bytes()
            );
            println!(
                "  segments  exists {s_hit:>7.1}  miss {s_miss:>7.1}  mexists/40 {s_batch:>7.1}  add {s_add:>7.1}  bytes {}",
                segments.bytes()
            );
            println!(
                "  segments / doubling: exists {:.2}, miss {:.2}, mexists {:.2}, add {:.2}, bytes {:.2}",
                s_hit / d_hit,
                s_miss / d_miss,
                s_batch / d_batch,
                s_add / d_add,
                segments.bytes() as f64 / doubling.bytes() as f64
            );
        }
    }
    let big = if quick { 2_000_000 } else { 10_000_000 };
    let mut segments = Segmented::new(100, 0.01, false, 0x5eed, MAX_BYTES).unwrap();
    let mut longest = (0f64, 0u64);
    let start = cpu_ns();
    for i in 0..big {
        let t = cpu_ns();
        segments.add(&item(i), MAX_BYTES).unwrap();
        let ns = cpu_ns() - t;
        if ns > longest.0 {
            longest = (ns, i);
        }
    }
    println!(
        "segments growing to {big} items at 0.01: {:.1} ns per add, longest add {:.1} us (item {}), {} segments, {} bytes",
        (cpu_ns() - start) / big as f64,
        longest.0 / 1e3,
        longest.1,
        segments.segments(),
        segments.bytes()
    );
}
