//! The static builder's hash set, without a server: CPU nanoseconds per add while a builder
//! grows to 1M and 10M items (in the items' order, so their hashes arrive at random), per
//! lookup of a present and of an absent item (alone and 40 at a time), and the builder's bytes per item; then N hashes
//! sharing their top 22 bits loaded in decreasing and in increasing order, as a crafted
//! `BF.LOADCHUNK` chunk or `RESTORE` payload feeds them (milliseconds for all N, bytes per hash).
//!
//! `cargo bench --no-default-features --bench static_set` (`-- --quick` for 1M items only).

mod common;

use bloomrs::fuse::StaticFilter;
use common::{cpu_ns, draws, fill, per_batch_item, time};

const MAX_BYTES: u64 = u64::MAX;
const SHARED_BITS: u32 = 22;

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let sizes: &[u64] = if quick {
        &[1_000_000]
    } else {
        &[1_000_000, 10_000_000]
    };
    for &items in sizes {
        let mut builder = StaticFilter::new(100, 0.01).unwrap();
        let add = fill(items, |it| builder.add(it, &MAX_BYTES).unwrap());
        let present = draws(items, 200_000, 7);
        let absent = draws(u64::MAX / 2, 200_000, 11);
        let hit = time(5, &present, |it| assert!(builder.contains(it)));
        let miss = time(5, &absent, |it| {
            std::hint::black_box(builder.contains(it));
        });
        let batch = per_batch_item(5, &present, 40, |batch| {
            let items = batch.iter().map(|it| it.as_slice());
            builder.contains_each(items, |found| assert!(found));
        });
        let per_item = builder.reported_bytes() as f64 / items as f64;
        println!(
            "random {items:>9} items: add {add:6.1} ns, present {hit:6.1} ns, \
             absent {miss:6.1} ns, MEXISTS of 40 {batch:6.1} ns per item, \
             {per_item:.2} bytes per item"
        );
    }
    for n in [100_000u64, 200_000] {
        let low_bits = 64 - SHARED_BITS;
        let step = (1u64 << low_bits) / (n + 1);
        let hashes: Vec<u64> = (1..=n)
            .map(|i| (0x2A5F17 << low_bits) | (step * i))
            .collect();
        for (order, sequence) in [
            (
                "decreasing",
                hashes.iter().rev().copied().collect::<Vec<_>>(),
            ),
            ("increasing", hashes.clone()),
        ] {
            let mut builder = StaticFilter::new(100, 0.01).unwrap();
            let start = cpu_ns();
            for &h in &sequence {
                builder.add_hash(h, &MAX_BYTES).unwrap();
            }
            let ms = (cpu_ns() - start) / 1e6;
            let per_item = builder.reported_bytes() as f64 / n as f64;
            println!("crafted {n:>7} hashes, {order}: {ms:8.1} ms, {per_item:.2} bytes per hash");
        }
    }
}
