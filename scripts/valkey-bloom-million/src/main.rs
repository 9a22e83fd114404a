//! Writes `tests/fixtures/valkey-bloom/million/` (run from the repository's root:
//! `cargo run --release --manifest-path scripts/valkey-bloom-million/Cargo.toml`).
//!
//! Two objects of 1,000,000 items (`million:n` for n in 0..1,000,000), valkey-bloom's fixed
//! seed (`bf.bloom-use-random-seed no`) and tightening 0.5: `nonscaling`, as
//! `BF.RESERVE key 0.05 1000000 NONSCALING` makes it, and `scaling`, as
//! `BF.RESERVE key 0.05 250000 EXPANSION 4` makes it (a filter of 250,000 items, then one of
//! 1,000,000 at 0.025). Every filter's bits, size and number of hashes come from the
//! `bloomfilter` 3.0.1 crate, the crate valkey-bloom 1.0.1 builds and serializes its filters
//! with (`Bloom::new_for_fp_rate_with_seed`, `check`, `set`, `to_bytes`), not from bloomrs.
//! Around them this program follows valkey-bloom's rules as its source states them: an add
//! counts (1) only when no filter reports the item, and goes to the last filter, after adding
//! one (capacity × expansion, rate × tightening^index) when that one is full.
//!
//! Files, per object:
//! - `<name>.load`: valkey-bloom's `BF.LOAD` blob: byte 1, then bincode with fixed-width
//!   little-endian integers: u32 expansion, f64 rate, f64 tightening, u8 random seed (0), u64
//!   filters, and per filter u64 length and the crate's bytes, i64 items added, i64 capacity.
//! - `<name>.probes`: the object's answers to 100,000 probes, one bit each (bit i at byte
//!   i / 8, mask 1 << (i % 8)): `million:{20 i}` for i in 0..50,000 (added), then
//!   `million:neg:{j}` for j in 0..50,000 (never added).
//! - `<name>.txt`: the figures the tests compare: `card`, `capacity`, `filters`.

use bloomfilter::Bloom;
use std::fs;
use std::path::Path;

const ITEMS: usize = 1_000_000;
const TIGHTENING: f64 = 0.5;
const PROBES: usize = 50_000;

/// valkey-bloom 1.0.1's fixed seed (`bf.bloom-use-random-seed no`).
const FIXED_SEED: [u8; 32] = [
    89, 15, 245, 34, 234, 120, 17, 218, 167, 20, 216, 9, 59, 62, 123, 217, 29, 137, 138, 115, 62,
    152, 136, 135, 48, 127, 151, 205, 40, 7, 51, 131,
];

/// One filter of an object: the crate's filter, its capacity and the items added to it.
struct Filter {
    bloom: Bloom<[u8]>,
    capacity: usize,
    items: i64,
}

/// An object as valkey-bloom keeps it.
struct Object {
    rate: f64,
    expansion: u32,
    filters: Vec<Filter>,
}

impl Object {
    fn new(capacity: usize, rate: f64, expansion: u32) -> Object {
        let bloom = Bloom::new_for_fp_rate_with_seed(capacity, rate, &FIXED_SEED).unwrap();
        let filters = vec![Filter {
            bloom,
            capacity,
            items: 0,
        }];
        Object {
            rate,
            expansion,
            filters,
        }
    }

    fn contains(&self, item: &[u8]) -> bool {
        self.filters.iter().any(|f| f.bloom.check(item))
    }

    /// valkey-bloom's add: nothing if any filter reports the item; else into the last filter,
    /// after adding one (capacity × expansion, rate × tightening^index) when it is full.
    fn add(&mut self, item: &[u8]) {
        if self.contains(item) {
            return;
        }
        let last = self.filters.last().unwrap();
        if last.items as usize >= last.capacity {
            assert!(self.expansion > 0, "a non-scaling filter is full");
            let capacity = last.capacity * self.expansion as usize;
            let rate = self.rate * TIGHTENING.powi(self.filters.len() as i32);
            let bloom = Bloom::new_for_fp_rate_with_seed(capacity, rate, &FIXED_SEED).unwrap();
            self.filters.push(Filter {
                bloom,
                capacity,
                items: 0,
            });
        }
        let last = self.filters.last_mut().unwrap();
        last.bloom.set(item);
        last.items += 1;
    }

    /// valkey-bloom's `BF.LOAD` blob.
    fn blob(&self) -> Vec<u8> {
        let mut blob = vec![1u8];
        blob.extend_from_slice(&self.expansion.to_le_bytes());
        blob.extend_from_slice(&self.rate.to_le_bytes());
        blob.extend_from_slice(&TIGHTENING.to_le_bytes());
        blob.push(0);
        blob.extend_from_slice(&(self.filters.len() as u64).to_le_bytes());
        for filter in &self.filters {
            let bytes = filter.bloom.to_bytes();
            blob.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            blob.extend_from_slice(&bytes);
            blob.extend_from_slice(&filter.items.to_le_bytes());
            blob.extend_from_slice(&(filter.capacity as i64).to_le_bytes());
        }
        blob
    }
}

/// Writes `<name>.load`, `<name>.probes` and `<name>.txt` for an object of `ITEMS` items.
fn write(name: &str, mut object: Object) -> std::io::Result<()> {
    for n in 0..ITEMS {
        object.add(format!("million:{n}").as_bytes());
    }
    let probes = (0..PROBES)
        .map(|i| format!("million:{}", 20 * i))
        .chain((0..PROBES).map(|j| format!("million:neg:{j}")));
    let mut bits = vec![0u8; 2 * PROBES / 8];
    for (at, probe) in probes.enumerate() {
        if object.contains(probe.as_bytes()) {
            bits[at / 8] |= 1 << (at % 8);
        }
    }
    let card: i64 = object.filters.iter().map(|f| f.items).sum();
    let capacity: usize = object.filters.iter().map(|f| f.capacity).sum();
    let figures = format!(
        "card {card}\ncapacity {capacity}\nfilters {}\n",
        object.filters.len()
    );
    let dir = Path::new("tests/fixtures/valkey-bloom/million");
    fs::create_dir_all(dir)?;
    fs::write(dir.join(format!("{name}.load")), object.blob())?;
    fs::write(dir.join(format!("{name}.probes")), bits)?;
    fs::write(dir.join(format!("{name}.txt")), figures)
}

fn main() -> std::io::Result<()> {
    // BF.RESERVE key 0.05 1000000 NONSCALING
    write("nonscaling", Object::new(ITEMS, 0.05, 0))?;
    // BF.RESERVE key 0.05 250000 EXPANSION 4: 250,000 items, then 1,000,000 at 0.025
    write("scaling", Object::new(250_000, 0.05, 4))
}
