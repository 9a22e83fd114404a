//! The model behind the choice of growth, printed rather than asserted:
//! `cargo test --release --lib compact::design -- --ignored --nocapture`.
//!
//! Bytes of candidate designs at 12 sizes per decade from 100 to 1,000,000 items, against
//! RedisBloom's one link sized for exactly n (`BF.RESERVE k ε n NONSCALING`, its reported
//! size). The items are real (the compact kind's hash of 16-character ids); what each design
//! would store is counted exactly, its allocations rounded up to the allocator's size classes.
//!
//! - `doubling`: today's filter (its own `bytes()`).
//! - `segments (built)`: the segment filter (`segments::Segmented`, its own `bytes()`).
//! - `lh-qf`: a quotient table that grows by linear hashing with slots decoupled from
//!   quotients, at 95 % load at every size (the best case of candidate (a)), fields as today
//!   plus 2.1 bits of rank-select metadata per slot.
//! - `storage_table` (below): the built segments stored otherwise (allocations, lists).
//! - `seg-T`: segments under linear hashing, split when items pass `T` per segment, each
//!   segment one allocation of Elias-Fano coded sorted fingerprints; `pad`: one list of
//!   fingerprints padded InfiniFilter-style (fingerprint, a 1, zeros); `gen`: one list per
//!   fingerprint length (no marker bit, two header bytes a list). `flat H` names the
//!   fingerprint schedule: the first `H` generations share 90 % of the rate equally.

use super::segments::{segment_bytes, size_class, Entry, Segment, Segmented};
use super::Compact;
use crate::bloom::{Chain, ItemHash};

fn id(i: u64) -> Vec<u8> {
    format!("{i:016x}").into_bytes()
}

/// 12 sizes per decade from 100 to 1,000,000.
fn sizes() -> Vec<u64> {
    (0..=48)
        .map(|j| (100.0 * 10f64.powf(j as f64 / 12.0)).round() as u64)
        .collect()
}

fn floor_bytes(n: u64, error: f64) -> u64 {
    Chain::new(n, error, 2, false, u64::MAX)
        .map(|c| c.reported_bytes())
        .unwrap_or(u64::MAX)
}

/// Bits of `s` sorted values below `universe`, Elias-Fano coded.
fn elias_fano_bits(s: u64, universe: u128) -> u64 {
    if s == 0 {
        return 0;
    }
    let low = (0u32..64)
        .rev()
        .find(|l| universe >> l >= u128::from(s))
        .unwrap_or(0);
    let buckets = universe.div_ceil(1 << low) as u64;
    s * u64::from(low) + s + buckets
}

fn share(g: u32, flat: u32) -> f64 {
    if g < flat {
        0.9 / f64::from(flat)
    } else {
        0.1 * 0.5f64.powi(((g - flat) / 8 + 1) as i32) / 8.0
    }
}

#[derive(Clone, Copy)]
enum Layout {
    Padded,
    PerLength,
    /// Per length, each list's universe `ceil(2^B)` for the real `B` the rate asks, not a
    /// power of two (a split halves it: `floor(floor(x K) / 2) = floor(x K / 2)`).
    Fractional,
}

struct Segments {
    split_at: u64,
    layout: Layout,
    flat: u32,
    error: f64,
    level: u32,
    first_level: u32,
    pointer: u64,
    /// Per segment, its items' (address hash, generation).
    segments: Vec<Vec<(u64, u32)>>,
    items: u64,
    /// Allocations of exactly the bytes asked (segments packed in pages), not size classes.
    exact: bool,
}

impl Segments {
    fn new(
        start: u64,
        split_at: u64,
        layout: Layout,
        flat: u32,
        error: f64,
        exact: bool,
    ) -> Segments {
        let count = start.div_ceil(split_at).max(1);
        let level = 63 - count.leading_zeros();
        Segments {
            split_at,
            layout,
            flat,
            error,
            level,
            first_level: level,
            exact,
            pointer: count - (1 << level),
            segments: vec![Vec::new(); count as usize],
            items: 0,
        }
    }

    fn address(&self, h: u64) -> usize {
        let low = h & ((1 << self.level) - 1);
        if low < self.pointer {
            (h & ((2 << self.level) - 1)) as usize
        } else {
            low as usize
        }
    }

    fn add(&mut self, hash: ItemHash) {
        let g = self.level - self.first_level;
        let at = self.address(hash.b);
        self.segments[at].push((hash.b, g));
        self.items += 1;
        if self.items > self.split_at * self.segments.len() as u64 {
            let p = self.pointer as usize;
            let (stay, go): (Vec<_>, Vec<_>) = std::mem::take(&mut self.segments[p])
                .into_iter()
                .partition(|(h, _)| h >> self.level & 1 == 0);
            self.segments[p] = stay;
            self.segments.push(go);
            self.pointer += 1;
            if self.pointer == 1 << self.level {
                self.level += 1;
                self.pointer = 0;
            }
        }
    }

    /// Total hash bits (address and fingerprint) of generation `g`'s entries.
    fn total_bits(&self, g: u32) -> f64 {
        let most = self.split_at << (self.first_level + g + u32::from(g == 0));
        (most as f64 / (share(g, self.flat) * self.error)).log2()
    }

    fn bytes(&self) -> u64 {
        let totals: Vec<f64> = (0..40).map(|g| self.total_bits(g)).collect();
        let directory = if self.exact { 4 } else { 16 };
        let mut bytes = 64 + directory * self.segments.len() as u64;
        for (i, segment) in self.segments.iter().enumerate() {
            let split = (i as u64) < self.pointer || i as u64 >= 1 << self.level;
            let address = self.level + u32::from(split);
            let mut per_gen = [0u64; 40];
            for (_, g) in segment {
                per_gen[*g as usize] += 1;
            }
            let real = |g: usize| (totals[g] - f64::from(address)).max(0.0);
            let stored = |g: usize| real(g).ceil() as u32;
            let (bits, header) = match self.layout {
                Layout::Padded => {
                    let longest = (0..40).filter(|g| per_gen[*g] > 0).map(stored).max();
                    let u = longest.map_or(0, |l| l + 1);
                    (elias_fano_bits(segment.len() as u64, 1 << u), 2)
                }
                Layout::PerLength | Layout::Fractional => {
                    let universe = |g: usize| match self.layout {
                        Layout::Fractional => real(g).exp2().ceil() as u128,
                        _ => 1 << stored(g),
                    };
                    let lists = (0..40).filter(|g| per_gen[*g] > 0);
                    let bits = lists
                        .clone()
                        .map(|g| elias_fano_bits(per_gen[g], universe(g)))
                        .sum();
                    (bits, 2 * lists.count() as u64)
                }
            };
            let asked = bits.div_ceil(8) + header;
            bytes += if self.exact { asked } else { size_class(asked) };
        }
        bytes
    }
}

fn geometric_mean(values: &[f64]) -> f64 {
    (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp()
}

/// Ratios against the floor at every size for one design grown item by item.
fn curve(error: f64, mut add: impl FnMut(u64), mut bytes: impl FnMut(u64) -> u64) -> Vec<f64> {
    let mut held = 0;
    let mut ratios = Vec::new();
    for n in sizes() {
        while held < n {
            add(held);
            held += 1;
        }
        ratios.push(bytes(n) as f64 / floor_bytes(n, error) as f64);
    }
    ratios
}

fn row(name: &str, cells: &[Vec<f64>]) {
    let cells: Vec<String> = cells
        .iter()
        .map(|r| {
            let worst = r.iter().cloned().fold(0.0, f64::max);
            format!("{:.2}× / {worst:.2}×", geometric_mean(r))
        })
        .collect();
    println!("| {name} | {} |", cells.join(" | "));
}

#[test]
#[ignore]
fn design_table() {
    let cases = [(0.01, 100), (0.01, 1000), (0.001, 100), (0.001, 1000)];
    println!("| design | 1 % from 100 | 1 % from 1,000 | 0.1 % from 100 | 0.1 % from 1,000 |");
    println!("|---|---:|---:|---:|---:|");
    let doubling: Vec<Vec<f64>> = cases
        .iter()
        .map(|&(error, _)| {
            // The server creates every compact filter at its smallest table.
            let filter = std::cell::RefCell::new(Compact::new(1, error, false, u64::MAX).unwrap());
            curve(
                error,
                |i| {
                    filter.borrow_mut().add(&id(i), u64::MAX).unwrap();
                },
                |_| filter.borrow().bytes(),
            )
        })
        .collect();
    row("doubling (today)", &doubling);
    for deletable in [false, true] {
        let built: Vec<Vec<f64>> = cases
            .iter()
            .map(|&(error, start)| {
                let filter = std::cell::RefCell::new(
                    Segmented::new(start, error, deletable, 1, u64::MAX).unwrap(),
                );
                curve(
                    error,
                    |i| {
                        filter.borrow_mut().add(&id(i), u64::MAX).unwrap();
                    },
                    |_| filter.borrow().bytes(),
                )
            })
            .collect();
        let name = ["segments (built)", "segments (built), counting"][usize::from(deletable)];
        row(name, &built);
    }
    for (meta, name) in [
        (2.1, "lh-qf, 95 % load, rank-select"),
        (3.0, "lh-qf, 95 % load, 3 bits"),
    ] {
        let cells: Vec<Vec<f64>> = cases
            .iter()
            .map(|&(error, _)| {
                let field = super::fingerprint_bits(error, 1).unwrap_or(0) + 1;
                curve(
                    error,
                    |_| {},
                    |n| {
                        let slots = (n as f64 / 0.95).ceil();
                        64 + (slots * (f64::from(field) + meta) / 8.0).ceil() as u64
                    },
                )
            })
            .collect();
        row(name, &cells);
    }
    let layouts = [
        (Layout::Padded, "pad", false),
        (Layout::PerLength, "gen", false),
        (Layout::Fractional, "frac", false),
        (Layout::Fractional, "frac, paged", true),
    ];
    for (layout, name, exact) in layouts {
        for split_at in [128, 256, 512, 1024] {
            for flat in [16, 12] {
                let cells: Vec<Vec<f64>> = cases
                    .iter()
                    .map(|&(error, start)| {
                        let s = std::cell::RefCell::new(Segments::new(
                            start, split_at, layout, flat, error, exact,
                        ));
                        curve(
                            error,
                            |i| s.borrow_mut().add(Compact::hash(&id(i))),
                            |_| s.borrow().bytes(),
                        )
                    })
                    .collect();
                row(&format!("seg-{split_at} {name}, flat {flat}"), &cells);
            }
        }
    }
}

/// The feed's floor (a user's filter at 0.03× a SET of its items, at the tiers' measured
/// false-positive rate): at `n` items and rate `p`, the information-theoretic
/// bytes, an exactly sized static Elias-Fano set of the items' fingerprints (what no
/// growing filter beats: it knows `n`), that set in its allocator size class with a header
/// word, and a compact filter grown to `n` (its value and segments, as `MEMORY USAGE` counts
/// them less Redis's key) with its expected rate. `cargo test --release --lib
/// compact::design::feed_floor -- --ignored --nocapture`.
#[test]
#[ignore]
fn feed_floor() {
    println!("| n | p | information | exact Elias-Fano | + header, size class | compact at ε: bytes, expected rate |");
    println!("|---:|---:|---:|---:|---:|---|");
    for n in [100u64, 200, 500, 1000] {
        for p in [0.00044f64, 0.00023] {
            let information = (n as f64 * (1.0 / p).log2() / 8.0).ceil() as u64;
            let exact = elias_fano_bits(n, (n as f64 / p).ceil() as u128).div_ceil(8);
            let held = size_class(exact + 8);
            let compact: Vec<String> = [0.01, 0.025]
                .iter()
                .map(|&error| {
                    let mut f =
                        crate::compact::CompactFilter::new(error, false, 1, u64::MAX).unwrap();
                    for i in 0..n {
                        f.add(&id(i), u64::MAX).unwrap();
                    }
                    let s = f.segments().unwrap();
                    let rate = n as f64 * f64::from(s.fresh_bits).exp2().recip();
                    format!("ε {error}: {} B at {:.4} %", f.bytes(), 100.0 * rate)
                })
                .collect();
            println!(
                "| {n} | {:.3} % | {information} | {exact} | {held} | {} |",
                100.0 * p,
                compact.join("; ")
            );
        }
    }
}

/// What storing the built filter's own segments otherwise takes (the mean at 1 %:
/// what bounds it), grown item by item as above. Each layout is computed from the real
/// segments at every size (their entries decoded, their parts' sizes as `Segment` lays them
/// out):
/// - `head and tail (built)`: each segment's words in a head filling a size class and a
///   tail with the rest when that takes less (`segment::head_words`), a 16-byte slot (two
///   thin pointers).
/// - `one allocation`: each segment's words in one allocation in its size class, an 8-byte
///   slot (one thin pointer).
/// - `exact`: the same words with no allocator rounding (what no allocator beats).
/// - `two lists`: a segment's entries of its most common length in one list of their own
///   (no marker bit, no padding to a longer length), the rest in a second list as built.
///
/// The slots of the layouts with no tail are counted at 8 bytes (the chunks' rounding
/// aside). Each cell: the range over 16 filters (secrets) of the geometric mean and of the
/// worst size. `cargo test --release --lib compact::design::storage_table -- --ignored
/// --nocapture`.
#[test]
#[ignore]
fn storage_table() {
    /// Bytes of each layout, and whether it has a tail (a 16-byte slot).
    fn storage(segment: &Segment) -> [(u64, bool); 6] {
        if segment.parts_layout().is_none() {
            return [(0, false); 6];
        }
        let words = segment.word_count();
        let decoded = segment.decode().unwrap_or_default();
        let mut lengths = std::collections::BTreeMap::new();
        for e in &decoded {
            *lengths.entry(e.len).or_insert(0u64) += 1;
        }
        let main = lengths
            .iter()
            .max_by_key(|(l, n)| (**n, **l))
            .map_or(0, |(l, _)| *l);
        let (first, second): (Vec<Entry>, Vec<Entry>) = decoded.iter().partition(|e| e.len == main);
        let lists: Vec<Segment> = [first, second]
            .iter()
            .filter(|l| !l.is_empty())
            .filter_map(|l| Segment::encode(l))
            .collect();
        let two_words: usize = lists.iter().map(|s| s.word_count()).sum();
        let two_before: usize = lists
            .iter()
            .filter_map(|s| s.parts_layout())
            .map(|p| p.0 as usize)
            .sum();
        [
            (segment.bytes(), true),
            (size_class(8 * words as u64), false),
            (8 * words as u64, false),
            (size_class(8 * two_words as u64), false),
            (segment_bytes(two_words, two_before), true),
            (8 * two_words as u64, false),
        ]
    }
    let names = [
        "head and tail (built)",
        "one allocation",
        "exact (no allocator rounding)",
        "two lists",
        "two lists, head and tail",
        "two lists, exact",
    ];
    // Each filter's secret places its items, so which segments sit just past a size class
    // differs from filter to filter: the worst size is taken over 16 secrets.
    let secrets: Vec<u64> = (1..=16).map(|s| s * 7919 + 13).collect();
    let mut cells: Vec<Vec<String>> = vec![Vec::new(); names.len()];
    for error in [0.01, 0.001] {
        let mut means: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
        let mut worst: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
        for &secret in &secrets {
            let mut filter = Segmented::new(100, error, false, secret, u64::MAX).unwrap();
            let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
            let mut held = 0;
            for n in sizes() {
                while held < n {
                    filter.add(&id(held), u64::MAX).unwrap();
                    held += 1;
                }
                let mut totals = [0u64; 6];
                let mut narrow = [true; 6];
                for segment in filter.directory.iter() {
                    for ((t, w), (b, tail)) in
                        totals.iter_mut().zip(&mut narrow).zip(storage(segment))
                    {
                        *t += b;
                        *w &= !tail;
                    }
                }
                let rest = filter.bytes() - totals[0];
                let slots = 8 * filter.directory.len();
                for ((r, t), w) in ratios.iter_mut().zip(totals).zip(narrow) {
                    let rest = if w { rest - slots } else { rest };
                    r.push((rest + t) as f64 / floor_bytes(n, error) as f64);
                }
            }
            for ((m, w), r) in means.iter_mut().zip(&mut worst).zip(ratios) {
                m.push(geometric_mean(&r));
                w.push(r.iter().cloned().fold(0.0, f64::max));
            }
        }
        for ((c, m), w) in cells.iter_mut().zip(means).zip(worst) {
            let range = |v: &[f64]| {
                let low = v.iter().cloned().fold(f64::MAX, f64::min);
                let high = v.iter().cloned().fold(0.0, f64::max);
                format!("{low:.2}–{high:.2}×")
            };
            c.push(format!("{} / {}", range(&m), range(&w)));
        }
    }
    println!("| storage of the built segments | 1 %: mean / worst | 0.1 %: mean / worst |");
    println!("|---|---:|---:|");
    for (name, c) in names.iter().zip(&cells) {
        println!("| {name} | {} |", c.join(" | "));
    }
}
