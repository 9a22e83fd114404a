use super::*;
use crate::bloom::{ChunkError, HeaderError};
use crate::rdb::MemoryRdb;
use crate::test_rng::Rng;

const NO_LIMIT: u64 = u64::MAX;
/// A realistic Unix time in milliseconds (November 2026), not aligned on anything.
const T0: u64 = 1_795_000_123_457;

fn params(window_ms: u64, generations: u16, capacity: u64, error: f64) -> WindowParams {
    WindowParams {
        window_ms,
        generations,
        capacity,
        error,
        growth: 2,
        scaling: true,
        spread: false,
    }
}

/// A new filter whose clock reads `now`.
fn filter(p: WindowParams, now: u64) -> Windowed {
    let mut f = Windowed::new(p, 0, NO_LIMIT).unwrap();
    f.retire(now);
    f
}

/// Whether `now` is still inside the span an item added at `t` must be remembered for:
/// `now < t + window·(g−1)/g`, in exact integers.
fn must_remember(p: &WindowParams, t: u64, now: u64) -> bool {
    let g = u128::from(p.generations);
    u128::from(now - t) * g < u128::from(p.window_ms) * (g - 1)
}

fn random_params(rng: &mut Rng) -> WindowParams {
    let generations = 2 + rng.below(7) as u16;
    // Windows that g does not divide, from about a second to a day.
    let window_ms = 997 + rng.below(86_400_000);
    params(window_ms, generations, 20 + rng.below(400), 0.01)
}

#[test]
fn forget_contract_at_many_seeds() {
    let (mut forgotten_queries, mut forgotten_hits) = (0u64, 0u64);
    for seed in 0..60 {
        let mut rng = Rng::new(seed);
        let p = random_params(&mut rng);
        let mut now = T0 + rng.below(1 << 30);
        let mut f = filter(p, now);
        let mut added: Vec<(String, u64)> = Vec::new();
        for step in 0..120 {
            now += rng.below(p.window_ms / 3 + 1);
            // Reads at `now` before any write at `now` skip retired generations unmodified.
            let before = f.clone();
            for (item, t) in &added {
                let found = f.contains(now, item.as_bytes());
                if must_remember(&p, *t, now) {
                    assert!(found, "seed {seed}: {item} added at {t} lost at {now}");
                }
                if now - t >= p.window_ms {
                    forgotten_queries += 1;
                    forgotten_hits += u64::from(found);
                }
            }
            assert_eq!(f, before, "a read changed the filter");
            let mut retired = f.clone();
            retired.retire(now);
            for (item, _) in &added {
                assert_eq!(
                    retired.contains(now, item.as_bytes()),
                    f.contains(now, item.as_bytes())
                );
            }
            for i in 0..rng.below(6) {
                let item = format!("s{seed}-{step}-{i}");
                f.add(now, item.as_bytes(), NO_LIMIT).unwrap();
                added.push((item, now));
            }
            assert!(f.ring.len() <= p.generations as usize);
        }
    }
    // Forgotten items answer 1 only as false positives: at most the 1% error rate, plus
    // five standard deviations.
    let bound = forgotten_queries as f64 * 0.01;
    assert!(forgotten_queries > 10_000, "{forgotten_queries}");
    assert!(
        (forgotten_hits as f64) <= bound + 5.0 * bound.sqrt(),
        "{forgotten_hits} of {forgotten_queries}"
    );
}

#[test]
fn remembered_exactly_up_to_the_slot_boundaries() {
    // window 10 s, 4 generations: slots of 2.5 s aligned on the Unix epoch.
    let p = params(10_000, 4, 100, 0.01);
    let slot_start = 1_000_000_000u64; // a multiple of 2,500 ms
    let mut f = filter(p, slot_start);
    f.add(slot_start + 2_499, b"late", NO_LIMIT).unwrap();
    f.add(slot_start, b"early", NO_LIMIT).unwrap();
    let retires_at = slot_start + 10_000;
    assert_eq!(f.expires_at_ms(), retires_at);
    for now in [retires_at - 1, slot_start + 2_499 + 7_500 - 1] {
        assert!(f.contains(now, b"late") && f.contains(now, b"early"));
    }
    assert!(!f.contains(retires_at, b"late") && !f.contains(retires_at, b"early"));
    assert_eq!(f.card(retires_at - 1), 2);
    assert_eq!(f.card(retires_at), 0);
    assert_eq!(f.retire(retires_at), 1);
    assert!(f.ring.is_empty());
    assert_eq!(f.reported_bytes(), <Chain as Generation>::window_overhead());
}

#[test]
fn expiry_is_within_a_window_of_the_last_write() {
    for seed in 0..200 {
        let mut rng = Rng::new(seed);
        let p = random_params(&mut rng);
        let now = T0 + rng.below(1 << 40);
        let mut f = filter(p, now);
        f.add(now, b"x", NO_LIMIT).unwrap();
        let at = f.expires_at_ms();
        assert!(at > now && at <= now + p.window_ms, "seed {seed}");
        assert!(
            !must_remember(&p, now, at),
            "seed {seed}: retires too early"
        );
        assert!(f.contains(at - 1, b"x"));
        assert_eq!(f.card(at), 0);
    }
}

#[test]
fn re_adding_refreshes_an_item() {
    let p = params(4_000, 4, 100, 0.01);
    let mut f = filter(p, 0);
    assert_eq!(f.add(0, b"a", NO_LIMIT), Ok(true));
    assert_eq!(f.add(3_000, b"a", NO_LIMIT), Ok(false));
    // Added at 0 only it would be gone at 4 s; added again at 3 s it stays until 6 s.
    assert!(f.contains(5_999, b"a"));
    assert!(!f.contains(7_000, b"a"));
    assert_eq!(f.card(3_000), 2);
}

#[test]
fn created_without_a_clock() {
    // Creation does not depend on the time: the first write sets the clock.
    let p = params(60_000, 4, 1_000, 0.01);
    let mut f = Windowed::new(p, 0, NO_LIMIT).unwrap();
    assert_eq!((f.slot, f.ring.len()), (0, 0));
    assert_eq!(f.capacity(T0), 1_000);
    assert_eq!(f.card(T0), 0);
    assert_eq!(f.expiry_after(T0), T0 - T0 % 15_000 + 60_000);
    f.add(T0, b"a", NO_LIMIT).unwrap();
    assert_eq!(f.slot, T0 / 15_000);
    assert_eq!(f.expires_at_ms(), f.expiry_after(T0));
}

#[test]
fn clock_never_goes_back() {
    let p = params(4_000, 4, 100, 0.01);
    let mut f = filter(p, 100_000);
    f.add(100_000, b"a", NO_LIMIT).unwrap();
    // A write from an earlier time (a clock stepped back) lands in the current slot.
    assert_eq!(f.add(50_000, b"b", NO_LIMIT), Ok(true));
    assert_eq!(f.retire(0), 0);
    assert_eq!(f.slot, 100);
    assert_eq!(f.ring.len(), 1);
    assert!(f.contains(0, b"a") && f.contains(0, b"b"));
}

/// False positives among `probes` fresh items.
fn false_positives(f: &Windowed, now: u64, tag: &str, probes: u64) -> u64 {
    (0..probes)
        .filter(|i| f.contains(now, format!("{tag}-probe-{i}").as_bytes()))
        .count() as u64
}

#[test]
fn error_rate_bounds_every_moment() {
    // capacity items per window, added at a steady pace over four windows; probed at 40
    // moments of each. The expected count is at most 1% of the probes.
    for seed in 0..8 {
        let mut rng = Rng::new(100 + seed);
        let generations = 2 + rng.below(7) as u16;
        let p = params(60_000, generations, 2_000, 0.01);
        let mut now = T0;
        let mut f = filter(p, now);
        let (mut probes, mut hits, mut worst) = (0u64, 0u64, 0.0f64);
        let step = p.window_ms / p.capacity;
        for i in 0..4 * p.capacity {
            now += step;
            f.add(now, format!("{seed}-{i}").as_bytes(), NO_LIMIT)
                .unwrap();
            if i % 200 == 199 {
                let found = false_positives(&f, now, &format!("{seed}-{i}"), 2_000);
                worst = worst.max(found as f64 / 2_000.0);
                probes += 2_000;
                hits += found;
            }
        }
        let bound = probes as f64 * 0.01;
        assert!(
            (hits as f64) <= bound + 4.0 * bound.sqrt(),
            "seed {seed}, g {generations}: {hits} of {probes}, worst moment {worst}"
        );
    }
}

#[test]
fn error_rate_holds_while_a_generation_overfills() {
    // Ten windows' worth of items in one slot: the generation scales, and the union of its
    // links stays under its share of the error budget.
    for seed in 1..=3u64 {
        let p = params(60_000, 4, 1_000, 0.01);
        let mut f = filter(p, T0);
        for i in 0..10_000 {
            f.add(T0, format!("{seed}-{i}").as_bytes(), NO_LIMIT)
                .unwrap();
        }
        assert!(f.ring[0].filter.links.len() >= 5);
        let probes = 40_000;
        let hits = false_positives(&f, T0, &seed.to_string(), probes);
        let bound = probes as f64 * 0.01 / 4.0;
        assert!((hits as f64) <= bound + 4.0 * bound.sqrt(), "{hits}");
    }
}

#[test]
fn non_scaling_generations_fill_up() {
    let mut p = params(4_000, 4, 8, 0.01);
    p.scaling = false;
    let mut f = filter(p, 0);
    assert_eq!(f.add(0, b"a", NO_LIMIT), Ok(true));
    assert_eq!(f.ring[0].filter.links[0].entries, 2);
    assert_eq!(f.add(0, b"b", NO_LIMIT), Ok(true));
    assert_eq!(f.add(0, b"c", NO_LIMIT), Err(AddError::Full));
    // The next slot opens a fresh generation.
    assert_eq!(f.add(1_000, b"c", NO_LIMIT), Ok(true));
}

#[test]
fn parameters_out_of_range_are_refused() {
    let good = params(10_000, 4, 100, 0.01);
    let cases = [
        WindowParams {
            generations: 1,
            ..good
        },
        WindowParams {
            generations: 33,
            ..good
        },
        WindowParams {
            window_ms: 3,
            ..good
        },
        WindowParams {
            window_ms: MAX_WINDOW_MS + 1,
            ..good
        },
        WindowParams {
            capacity: 0,
            ..good
        },
        WindowParams { error: 1.0, ..good },
        WindowParams { growth: 0, ..good },
    ];
    for p in cases {
        assert_eq!(
            Windowed::new(p, 0, NO_LIMIT),
            Err(CreateError::Invalid),
            "{p:?}"
        );
    }
    assert_eq!(
        Windowed::new(params(10_000, 4, 1_000_000, 0.01), 0, 100_000),
        Err(CreateError::TooLarge)
    );
    // The limit is checked at creation for the first generation, not allocated yet.
    let f = Windowed::new(params(10_000, 4, 1_000_000, 0.01), 0, 700_000).unwrap();
    assert!(f.ring.is_empty());
    let mut opened = f.clone();
    opened.add(T0, b"x", 700_000).unwrap();
    assert!(opened.reported_bytes() <= 700_000);
}

#[test]
fn the_byte_cap_covers_every_generation() {
    let p = params(4_000, 4, 4_000, 0.01);
    let mut first = filter(p, 0);
    assert_eq!(
        first.reported_bytes(),
        <Chain as Generation>::window_overhead()
    );
    first.add(0, b"a", NO_LIMIT).unwrap();
    let one = first.reported_bytes();
    let cap = one * 2 + 100;
    let mut f = Windowed::new(p, 0, cap).unwrap();
    f.add(0, b"a", cap).unwrap();
    f.add(1_000, b"b", cap).unwrap();
    assert_eq!(f.add(2_000, b"c", cap), Err(AddError::CannotGrow));
    assert!(f.reported_bytes() <= cap);
    // Once the first generation retires there is room again.
    assert_eq!(f.add(4_000, b"c", cap), Ok(true));
}

/// A filter with several generations, some scaled, at `now`.
fn busy_filter(seed: u64) -> (Windowed, u64) {
    let mut rng = Rng::new(seed);
    let p = random_params(&mut rng);
    let mut now = T0;
    let mut f = filter(p, now);
    for i in 0..2_000 {
        now += rng.below(p.window_ms / 200 + 1);
        f.add(now, format!("{seed}:{i}").as_bytes(), NO_LIMIT)
            .unwrap();
    }
    (f, now)
}

#[test]
fn rdb_round_trip() {
    for seed in 0..20 {
        let (f, _) = busy_filter(seed);
        let mut rdb = MemoryRdb::new();
        f.save(&mut rdb);
        let loaded = Windowed::load(&mut rdb, ENCODING_VERSION, NO_LIMIT).unwrap();
        assert_eq!(loaded, f);
        assert!(rdb.fields.is_empty());
    }
}

#[test]
fn rdb_refusals() {
    let (f, _) = busy_filter(7);
    let mut rdb = MemoryRdb::new();
    f.save(&mut rdb);
    assert_eq!(
        Windowed::load(&mut rdb.clone(), 2, NO_LIMIT),
        Err(LoadError::UnknownVersion(2))
    );
    assert_eq!(
        Windowed::load(&mut rdb.clone(), ENCODING_VERSION, f.reported_bytes() - 1),
        Err(LoadError::TooLarge)
    );
    let mut short = rdb.clone();
    short.fields.pop_back();
    assert_eq!(
        Windowed::load(&mut short, ENCODING_VERSION, NO_LIMIT),
        Err(LoadError::Io)
    );
    // Flipping each leading field to something out of range is refused, never accepted.
    use crate::rdb::Field;
    for index in 0..9 {
        for bad in [
            Field::Unsigned(0),
            Field::Unsigned(u64::MAX),
            Field::Double(2.0),
        ] {
            let mut broken = rdb.clone();
            broken.fields[index] = bad;
            if broken == rdb {
                continue;
            }
            if let Ok(loaded) = Windowed::load(&mut broken, ENCODING_VERSION, NO_LIMIT) {
                loaded.validate(NO_LIMIT).unwrap();
                assert_ne!(loaded, f);
            }
        }
    }
}

#[test]
fn validator_refusals() {
    let (f, _) = busy_filter(3);
    assert!(f.ring.len() >= 2);
    let mut swapped = f.clone();
    swapped.ring.swap(0, 1);
    assert_eq!(
        swapped.validate(NO_LIMIT),
        Err(LoadError::Invalid("generations out of order"))
    );
    let mut ahead = f.clone();
    ahead.slot += u64::from(f.params.generations);
    assert_eq!(
        ahead.validate(NO_LIMIT),
        Err(LoadError::Invalid("generation outside the window"))
    );
    let mut other = f.clone();
    other.params.error = 0.02;
    assert_eq!(
        other.validate(NO_LIMIT),
        Err(LoadError::Invalid("generation sized for another window"))
    );
    let mut legacy = f.clone();
    legacy.ring[0].filter.options &= !crate::bloom::OPT_FORCE64;
    assert_eq!(
        legacy.validate(NO_LIMIT),
        Err(LoadError::Invalid(
            "generation options differ from the window's"
        ))
    );
}

#[test]
fn scandump_round_trip() {
    for seed in 0..20 {
        let (f, now) = busy_filter(seed);
        let header = f.encode_header();
        assert!(Windowed::is_header(&header));
        let mut copy = Windowed::from_header(&header, NO_LIMIT).unwrap();
        assert_eq!(copy.card(now), f.card(now));
        let mut iter = 1;
        let mut chunks = 0;
        while let Some((next, bytes)) = f.chunk_at(iter) {
            copy.load_chunk(next, &bytes, NO_LIMIT).unwrap();
            iter = next;
            chunks += 1;
        }
        assert_eq!(copy, f);
        let walked: Vec<_> = f.chunks().collect();
        assert_eq!(walked.len(), chunks);
        assert_eq!(walked.last().map(|c| c.0), Some(iter));
        assert_eq!(f.chunk_at(iter), None);
        assert_eq!(f.chunk_at(0), None);
    }
}

#[test]
fn header_refusals() {
    let (f, _) = busy_filter(5);
    let header = f.encode_header();
    for cut in [0, 8, 12, 40, header.len() - 1] {
        assert_eq!(
            Windowed::from_header(&header[..cut], NO_LIMIT),
            Err(HeaderError::BadData)
        );
    }
    let mut longer = header.clone();
    longer.push(0);
    assert_eq!(
        Windowed::from_header(&longer, NO_LIMIT),
        Err(HeaderError::BadData)
    );
    assert_eq!(
        Windowed::from_header(&header, f.reported_bytes() - 1),
        Err(HeaderError::TooLarge)
    );
    // A RedisBloom chain header is not a windowed one.
    let chain = f.ring[0].filter.encode_header();
    assert!(!Windowed::is_header(&chain));
    assert_eq!(
        Windowed::from_header(&chain, NO_LIMIT),
        Err(HeaderError::BadData)
    );
    // Every single-byte change is refused or yields a valid filter.
    for at in 0..header.len().min(400) {
        let mut broken = header.clone();
        broken[at] ^= 0x5a;
        if let Ok(loaded) = Windowed::from_header(&broken, NO_LIMIT) {
            loaded.validate(NO_LIMIT).unwrap();
        }
    }
}

#[test]
fn chunk_refusals() {
    let (f, _) = busy_filter(9);
    let mut copy = Windowed::from_header(&f.encode_header(), NO_LIMIT).unwrap();
    let first = f.chunk_at(1).unwrap();
    assert_eq!(
        copy.load_chunk(0, &first.1, NO_LIMIT),
        Err(ChunkError::BadData)
    );
    assert_eq!(
        copy.load_chunk(-5, &first.1, NO_LIMIT),
        Err(ChunkError::BadData)
    );
    let end = f.chunks().last().unwrap().0;
    assert_eq!(
        copy.load_chunk(end + 10, b"x", NO_LIMIT),
        Err(ChunkError::NoLink)
    );
    // A chunk running past its link.
    let too_long = vec![0u8; first.1.len() + 1];
    assert_eq!(
        copy.load_chunk(1 + too_long.len() as i64, &too_long, NO_LIMIT),
        Err(ChunkError::TooBig)
    );
}

/// Bits per window item of a filter fed `n` items per window at a steady pace, after the
/// first window: the mean and the largest over 400 moments.
fn steady_bits_per_item(p: WindowParams) -> (f64, f64) {
    let n = p.capacity;
    let step = p.window_ms / n;
    let mut now = T0;
    let mut f = filter(p, now);
    let (mut sum, mut worst, mut samples) = (0.0, 0.0f64, 0);
    for i in 0..5 * n {
        now += step;
        f.add(now, format!("item-{i}").as_bytes(), NO_LIMIT)
            .unwrap();
        if i >= n && i % (n / 100) == 0 {
            let bits = f.reported_bytes() as f64 * 8.0 / n as f64;
            sum += bits;
            worst = worst.max(bits);
            samples += 1;
        }
    }
    (sum / f64::from(samples), worst)
}

fn plain_bits_per_item(n: u64, error: f64, scaling: bool) -> f64 {
    let chain = crate::bloom::Chain::new(n, error, 2, scaling, NO_LIMIT).unwrap();
    chain.reported_bytes() as f64 * 8.0 / n as f64
}

#[test]
fn bits_per_item_against_a_plain_filter() {
    // `cargo test --release --lib bits_per_item -- --nocapture` prints the table of docs/kinds/windowed.md.
    let n = 20_000;
    eprintln!("error  g  windowed mean/max bits  plain scaling  plain nonscaling  ratio");
    for error in [0.01, 0.001] {
        let plain = plain_bits_per_item(n, error, true);
        let flat = plain_bits_per_item(n, error, false);
        for generations in [2, 4, 8, 16] {
            let (mean, worst) = steady_bits_per_item(params(1_000_000, generations, n, error));
            eprintln!(
                "{error:<6} {generations:>2}  {mean:>8.2} / {worst:>6.2}  {plain:>13.2}  {flat:>16.2}  {:>5.2}",
                mean / plain
            );
            // Each generation's first link is sized for n/g items at error/(2g): at most
            // log2(2g) more bits per item than one plain link at error/2, never more.
            let bound =
                plain * (1.0 + (2.0 * f64::from(generations)).log2() / -(error / 2.0).log2());
            assert!(worst <= bound * 1.01, "{worst} > {bound}");
        }
    }
}

/// The layout comparison of docs/kinds/windowed.md: an age-partitioned Bloom filter (Shtul, Baquero,
/// Almeida, arXiv 2001.03147) built only here, to measure it against the ring under the same
/// contract. APBF(k, l): k + l slices of m bits with one hash function each; an add sets its bit
/// in the k newest slices; a lookup answers 1 when k consecutive slices hold its bits; at each
/// slot the oldest slice is cleared and becomes the newest. With l = g − 1 and slots of
/// window/g, an item is remembered for at least window·(g−1)/g and forgotten by the window.
mod age_partitioned {
    use super::*;

    struct Apbf {
        k: usize,
        slices: Vec<Vec<u64>>,
        bits: u64,
        /// Physical index of the newest slice.
        newest: usize,
    }

    impl Apbf {
        fn new(k: usize, l: usize, bits: u64) -> Self {
            let words = bits.div_ceil(64) as usize;
            Apbf {
                k,
                slices: vec![vec![0; words]; k + l],
                bits,
                newest: 0,
            }
        }

        /// The bit of slice `physical` for an item (each slice has its own hash function).
        fn bit(&self, hash: ItemHash, physical: usize) -> (usize, u64) {
            let position = hash.a.wrapping_add((physical as u64).wrapping_mul(hash.b)) % self.bits;
            ((position / 64) as usize, 1 << (position % 64))
        }

        fn physical(&self, logical: usize) -> usize {
            (self.newest + logical) % self.slices.len()
        }

        fn add(&mut self, hash: ItemHash) {
            for logical in 0..self.k {
                let physical = self.physical(logical);
                let (word, mask) = self.bit(hash, physical);
                self.slices[physical][word] |= mask;
            }
        }

        fn contains(&self, hash: ItemHash) -> bool {
            let mut run = 0;
            for logical in 0..self.slices.len() {
                let physical = self.physical(logical);
                let (word, mask) = self.bit(hash, physical);
                run = if self.slices[physical][word] & mask != 0 {
                    run + 1
                } else {
                    0
                };
                if run == self.k {
                    return true;
                }
            }
            false
        }

        fn shift(&mut self) {
            self.newest = (self.newest + self.slices.len() - 1) % self.slices.len();
            self.slices[self.newest].iter_mut().for_each(|w| *w = 0);
        }
    }

    /// The worst false-positive rate over the slots of windows 2 to 4, for `n` items per
    /// window in `g` slots.
    fn worst_fp(k: usize, g: usize, n: u64, bits: u64) -> f64 {
        let mut filter = Apbf::new(k, g - 1, bits);
        let per_slot = n / g as u64;
        let mut worst = 0.0f64;
        let mut item = 0u64;
        for slot in 0..4 * g {
            for _ in 0..per_slot {
                filter.add(ItemHash::of(format!("in{item}").as_bytes(), true));
                item += 1;
            }
            if slot >= g {
                let probes = 2000;
                let hits = (0..probes)
                    .filter(|p| {
                        filter.contains(ItemHash::of(format!("out{slot}:{p}").as_bytes(), true))
                    })
                    .count();
                worst = worst.max(hits as f64 / probes as f64);
            }
            filter.shift();
        }
        worst
    }

    /// Fewest bits per window item (all k + l slices) at which APBF(k, g − 1) stays within
    /// `error` at its worst slot.
    fn apbf_bits_per_item(k: usize, g: usize, n: u64, error: f64) -> f64 {
        let (mut low, mut high) = (64u64, 64 * n);
        while high - low > 64 {
            let mid = (low + high) / 2;
            if worst_fp(k, g, n, mid) <= error {
                high = mid;
            } else {
                low = mid;
            }
        }
        (high * (k + g - 1) as u64) as f64 / n as f64
    }

    #[test]
    fn ring_against_an_age_partitioned_filter() {
        // `cargo test --release --lib age_partitioned -- --nocapture` prints docs/kinds/windowed.md's
        // figures: bits per window item at a worst-slot false-positive rate of 1%.
        let (n, error) = (4_000, 0.01);
        let mut apbf_best = f64::MAX;
        for g in [4usize, 16, 32] {
            let (k, bits) = (4..=12)
                .map(|k| (k, apbf_bits_per_item(k, g, n, error)))
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap();
            apbf_best = apbf_best.min(bits);
            eprintln!("APBF, {g} slots: best k {k}, {bits:.2} bits per window item");
        }
        let ring = steady_bits_per_item(params(1_000_000, 4, n, error)).0;
        let mut flat = params(1_000_000, 4, n, error);
        flat.scaling = false;
        let ring_flat = steady_bits_per_item(flat).0;
        eprintln!("ring, 4 generations: {ring:.2} (scaling), {ring_flat:.2} (non-scaling)");
        // What docs/kinds/windowed.md says: the ring takes fewer bits than any APBF tried here.
        assert!(ring < apbf_best, "{ring} vs {apbf_best}");
    }
}
