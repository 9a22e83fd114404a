//! The probe loop of the core, without a server: nanoseconds per lookup and per add on chains
//! that hold the same 900,000 items in 1 to 20 links (error rate 0.01, expansion 2), and on the
//! feed shape (`0.01 1000 EXPANSION 10`, 111,000 items, three links) against one link.
//!
//! `cargo bench --no-default-features --bench chain` (the pure core: the shipped module's
//! allocator needs a server); the options are on `Options`. Times are the thread's CPU time,
//! still disturbed by whatever else shares the caches; for counts that do not depend on the
//! machine's load, run one case under cachegrind twice, with `--ops none` and with the
//! operation, and subtract.

mod common;

use std::hint::black_box;

use bloomrs::bloom::Chain;
use common::{draws, fill, per_batch_item, time};

const MAX_BYTES: u64 = u64::MAX;

/// (links, first link's capacity): every chain holds ITEMS items in exactly `links` links and
/// keeps room for the adds measured on it.
const SWEEP: [(usize, u64); 6] = [
    (1, 1_000_000),
    (2, 333_334),
    (4, 66_667),
    (8, 3_922),
    (14, 100),
    (20, 1),
];
const ITEMS: u64 = 900_000;

fn filled(capacity: u64, error: f64, growth: u32, items: u64) -> Chain {
    let mut chain = Chain::new(capacity, error, growth, true, MAX_BYTES).unwrap();
    fill(items, |it| chain.add(it, MAX_BYTES).unwrap());
    chain
}

/// Command-line choices: `--links 1,14` (default: the whole sweep), `--ops exists,add`
/// (exists, miss, mexists, add, feed; `none` measures nothing), `--count N` items per pass,
/// `--rounds N` passes (the median is reported), `--quick`.
struct Options {
    links: Vec<usize>,
    ops: Vec<String>,
    count: usize,
    rounds: usize,
}

impl Options {
    fn parse() -> Self {
        let mut options = Options {
            links: SWEEP.iter().map(|(links, _)| *links).collect(),
            ops: ["exists", "miss", "mexists", "add", "feed"]
                .map(String::from)
                .to_vec(),
            count: 200_000,
            rounds: 9,
        };
        let args: Vec<String> = std::env::args().skip(1).collect();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let mut value = || args.next().expect("a value after the option").clone();
            match arg.as_str() {
                "--links" => {
                    options.links = value().split(',').map(|l| l.parse().unwrap()).collect()
                }
                "--ops" => options.ops = value().split(',').map(String::from).collect(),
                "--count" => options.count = value().parse().unwrap(),
                "--rounds" => options.rounds = value().parse().unwrap(),
                "--quick" => (options.count, options.rounds) = (100_000, 3),
                _ => {} // cargo bench passes --bench
            }
        }
        options
    }

    fn runs(&self, op: &str) -> bool {
        self.ops.iter().any(|o| o == op)
    }
}

fn main() {
    let options = Options::parse();
    let (rounds, count) = (options.rounds, options.count);
    let reads = draws(2 * ITEMS, count, 7);
    let misses = draws(u64::MAX / 2, count, 11);
    let adds = draws(2 * ITEMS, count.min(90_000), 13);
    println!(
        "{:>6} {:>10} {:>12} {:>12} {:>12} {:>12}",
        "links", "MiB", "exists ns", "miss ns", "mexists ns", "add ns"
    );
    for (links, capacity) in SWEEP {
        if !options.links.contains(&links) {
            continue;
        }
        let mut chain = filled(capacity, 0.01, 2, ITEMS);
        assert_eq!(chain.links.len(), links);
        let mib = chain.reported_bytes() as f64 / 1048576.0;
        let mut row = vec![];
        if options.runs("exists") {
            row.push(time(rounds, &reads, |it| {
                black_box(chain.contains(black_box(it)));
            }));
        }
        if options.runs("miss") {
            row.push(time(rounds, &misses, |it| {
                black_box(chain.contains(black_box(it)));
            }));
        }
        if options.runs("mexists") {
            row.push(mexists_ns(&chain, &reads, rounds, 100));
        }
        if options.runs("add") {
            row.push(time(1, &adds, |it| {
                black_box(chain.add(black_box(it), MAX_BYTES).unwrap());
            }));
            assert_eq!(chain.links.len(), links, "the adds grew the chain");
        }
        let cells: String = row.iter().map(|ns| format!("{ns:>13.1}")).collect();
        println!("{links:>6} {mib:>10.2}{cells}");
    }
    if options.runs("feed") {
        let feed = filled(1000, 0.01, 10, 111_000);
        let flat = filled(111_000, 0.01, 2, 111_000);
        let reads = draws(222_000, count, 17);
        for (name, chain) in [("feed, 3 links", &feed), ("feed, 1 link", &flat)] {
            let ns = mexists_ns(chain, &reads, rounds, 40);
            println!("{name}: BF.MEXISTS x40 {ns:.1} ns per item");
        }
    }
}

/// Nanoseconds per item of `contains_each` over batches of `batch` items.
fn mexists_ns(chain: &Chain, reads: &[Vec<u8>], rounds: usize, batch: usize) -> f64 {
    per_batch_item(rounds, reads, batch, |b| {
        chain.contains_each(b.iter().map(Vec::as_slice), |found| {
            black_box(found);
        })
    })
}
