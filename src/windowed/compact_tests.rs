//! Windows of compact generations: the window's promises over generations grown by segments.

use super::*;
use crate::bloom::ChunkError;
use crate::rdb::{Field, MemoryRdb};

const NO_LIMIT: u64 = u64::MAX;
const T0: u64 = 1_795_000_123_457;
const SECRET: u64 = 0x1234_5678_9abc_def1;

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

/// A window fed `per_slot` items in each of `slots` slots, from `T0`.
fn fed(p: WindowParams, per_slot: u64, slots: u64) -> (CompactWindowed, u64) {
    let mut f = CompactWindowed::new(p, SECRET, NO_LIMIT).unwrap();
    let step = p.window_ms / u64::from(p.generations);
    let mut now = T0;
    for s in 0..slots {
        now = T0 + s * step;
        for i in 0..per_slot {
            f.add(now, format!("item:{s}:{i}").as_bytes(), NO_LIMIT)
                .unwrap();
        }
    }
    (f, now)
}

#[test]
fn remembers_within_the_window_and_forgets_after_it() {
    let p = params(8_000, 4, 100, 0.01);
    let (mut f, now) = fed(p, 700, 6);
    // The last four slots are live; every item of them reads present.
    for s in 2..6 {
        for i in 0..700 {
            assert!(f.contains(now, format!("item:{s}:{i}").as_bytes()));
        }
    }
    assert_eq!(f.ring.len(), 4);
    assert_eq!(f.card(now), 4 * 700);
    f.retire(now + 8_000);
    assert!(f.ring.is_empty());
    assert!(!f.contains(now + 8_000, b"item:5:0"));
}

#[test]
fn generations_are_compact_filters_at_their_share_placed_by_the_secret() {
    let (f, _) = fed(params(8_000, 4, 100, 0.01), 3000, 2);
    for g in &f.ring {
        let filter = g.filter.filter(&f.params);
        let segments = filter.segments().unwrap();
        assert_eq!(segments.error(), 0.01 / 4.0);
        assert_eq!(segments.fields().secret, SECRET);
        // Grown by segments from one, however small the capacity asked.
        assert!(segments.segments() > 2);
    }
}

#[test]
fn saves_dumps_and_loads_back_identically() {
    let (f, _) = fed(params(8_000, 4, 100, 0.01), 1500, 5);
    let mut rdb = MemoryRdb::new();
    f.save(&mut rdb);
    let back = CompactWindowed::load(&mut rdb, COMPACT_ENCODING_VERSION, NO_LIMIT).unwrap();
    assert_eq!(back, f);
    let header = f.encode_header();
    assert!(header.starts_with(COMPACT_MAGIC));
    assert!(Windowed::from_header(&header, NO_LIMIT).is_err());
    let mut copy = CompactWindowed::from_header(&header, NO_LIMIT).unwrap();
    assert!(!copy.is_loaded());
    let chunks: Vec<_> = f.chunks().collect();
    assert!(chunks.len() >= 4);
    for (next, bytes) in &chunks {
        copy.load_chunk(*next, bytes, NO_LIMIT).unwrap();
    }
    assert!(copy.is_loaded());
    assert_eq!(copy, f);
    // A chunk again, or out of its place, is refused and changes nothing.
    let (next, bytes) = &chunks[0];
    assert!(copy.load_chunk(*next, bytes, NO_LIMIT).is_err());
    assert_eq!(copy, f);
    assert_eq!(
        copy.load_chunk(1, b"\x01\x00", NO_LIMIT),
        Err(ChunkError::BadData)
    );
}

/// Chunks within a limit (what the AOF rewrite emits) load as SCANDUMP's do: whole segments
/// of the compact generations.
#[test]
fn chunks_within_a_limit_load_as_scandumps_do() {
    let (f, _) = fed(params(8_000, 4, 100, 0.5), 6000, 3);
    let whole = f.chunks().count();
    for limit in [1u64, 300, u64::MAX] {
        let mut copy = CompactWindowed::from_header(&f.encode_header(), NO_LIMIT).unwrap();
        let (mut iter, mut chunks) = (1, 0);
        while let Some((next, bytes)) = f.chunk_within(iter, limit) {
            copy.load_chunk(next, &bytes, NO_LIMIT).unwrap();
            (iter, chunks) = (next, chunks + 1);
        }
        assert_eq!(copy, f, "{limit}");
        assert!(
            limit == u64::MAX || chunks > whole,
            "{limit}: {chunks} of {whole}"
        );
    }
}

#[test]
fn a_window_caught_between_two_chunks_dumps_what_it_received() {
    let (f, _) = fed(params(8_000, 4, 100, 0.01), 1500, 3);
    let chunks: Vec<_> = f.chunks().collect();
    let mut part = CompactWindowed::from_header(&f.encode_header(), NO_LIMIT).unwrap();
    // Every chunk but the first generation's: the later generations complete.
    let first_span = f.ring[0].filter.span() as i64;
    let later: Vec<_> = chunks
        .iter()
        .filter(|(next, _)| *next > first_span + 1)
        .collect();
    for (next, bytes) in &later {
        part.load_chunk(*next, bytes, NO_LIMIT).unwrap();
    }
    assert!(!part.is_loaded());
    // It takes no item until the rest arrives, and says why.
    let before = part.clone();
    assert_eq!(part.add(0, b"x", NO_LIMIT), Err(AddError::Loading));
    assert_eq!(part, before);
    let mut rdb = MemoryRdb::new();
    part.save(&mut rdb);
    let saved = CompactWindowed::load(&mut rdb, COMPACT_ENCODING_VERSION, NO_LIMIT).unwrap();
    assert_eq!(saved, part);
    let mut rebuilt = CompactWindowed::from_header(&part.encode_header(), NO_LIMIT).unwrap();
    for (next, bytes) in part.chunks() {
        rebuilt.load_chunk(next, &bytes, NO_LIMIT).unwrap();
    }
    assert_eq!(rebuilt, part);
    assert_eq!(part.chunks().count(), later.len());
    assert!(later.len() < chunks.len());
}

#[test]
fn the_validator_insists_on_the_secret_and_the_shape() {
    let (f, _) = fed(params(8_000, 4, 100, 0.01), 100, 2);
    let mut keyless = f.clone();
    keyless.secret = 0;
    assert!(keyless.validate(NO_LIMIT).is_err());
    let mut other = f.clone();
    other.secret ^= 1;
    assert!(other.validate(NO_LIMIT).is_err());
    // A value whose window asks another rate than its generations hold: the one-segment
    // generations load whole, for the validator to refuse, and split ones stay whole.
    for items in [100, 3000] {
        let (f, _) = fed(params(8_000, 4, 100, 0.01), items, 2);
        let mut rdb = MemoryRdb::new();
        f.save(&mut rdb);
        let window_error = rdb
            .fields
            .iter_mut()
            .find(|f| matches!(f, Field::Double(_)));
        *window_error.unwrap() = Field::Double(0.02);
        assert_eq!(
            CompactWindowed::load(&mut rdb, COMPACT_ENCODING_VERSION, NO_LIMIT),
            Err(LoadError::Invalid("generation sized for another window"))
        );
        let mut wider = f.clone();
        wider.params.error = 0.02;
        let split = wider
            .ring
            .iter()
            .any(|g| matches!(g.filter, CompactGeneration::Filter(_)));
        assert_eq!(wider.validate(NO_LIMIT).is_err(), split);
    }
    let mut nonscaling = f.clone();
    nonscaling.params.scaling = false;
    assert!(nonscaling.validate(NO_LIMIT).is_err());
    assert!(f.validate(NO_LIMIT).is_ok());
    assert!(f.validate(f.reported_bytes() - 1).is_err());
    // A chain window's value is not a compact window's.
    let chain = Windowed::new(params(8_000, 4, 100, 0.01), 0, NO_LIMIT).unwrap();
    let mut rdb = MemoryRdb::new();
    chain.save(&mut rdb);
    assert!(CompactWindowed::load(&mut rdb, COMPACT_ENCODING_VERSION, NO_LIMIT).is_err());
    assert!(CompactWindowed::new(params(8_000, 4, 100, 0.01), 0, NO_LIMIT).is_err());
    assert!(CompactWindowed::new(params(8_000, 4, 100, 2e-12), SECRET, NO_LIMIT).is_err());
}

#[test]
fn memory_follows_the_items_and_refusals_change_nothing() {
    let p = params(8_000, 4, 100, 0.01);
    let idle = CompactWindowed::new(p, SECRET, NO_LIMIT).unwrap();
    let (one, _) = fed(p, 1, 1);
    let (many, _) = fed(p, 100_000, 1);
    // Bits per item of one generation of 100,000 at 0.25 %: about log2(1/0.0025) plus the
    // segments' overhead, far from a chain's sizing for the whole window.
    let bits = many.reported_bytes() as f64 * 8.0 / 100_000.0;
    assert!(bits < 17.0, "{bits} bits per item");
    assert!(one.reported_bytes() < 400, "{}", one.reported_bytes());
    assert!(idle.reported_bytes() < one.reported_bytes());
    let cap = one.reported_bytes() + 64;
    let mut capped = one.clone();
    let mut refused = 0;
    for i in 0..5000u32 {
        let before = capped.clone();
        if capped.add(T0, &i.to_le_bytes(), cap).is_err() {
            assert_eq!(capped, before);
            refused += 1;
        }
    }
    assert!(refused > 0 && capped.reported_bytes() <= cap);
}

/// False positives of never-added items, over `probes`, after feeding `per_slot` items in
/// each slot of four windows' worth.
fn false_positive_rate(p: WindowParams, per_slot: u64, probes: u64) -> f64 {
    let slots = 4 * u64::from(p.generations);
    let (f, now) = fed(p, per_slot, slots);
    let hits = (0..probes)
        .filter(|i| f.contains(now, format!("absent:{i}").as_bytes()))
        .count();
    hits as f64 / probes as f64
}

#[test]
fn the_rate_holds_at_feed_rates_far_above_the_capacity() {
    // Reserved for 100 a window; fed 1,250 and 12,500 a slot (the window holds 50 to 500
    // times its capacity). 60,000 probes at 1 %: three standard deviations are 0.12 %.
    for per_slot in [1250, 12_500] {
        let rate = false_positive_rate(params(8_000, 4, 100, 0.01), per_slot, 60_000);
        assert!(rate <= 0.01 + 0.0012, "{per_slot} a slot: {rate}");
    }
}

#[test]
fn a_refused_add_leaves_no_generation_behind() {
    // Under every limit, an add refused in a slot without a generation leaves the window as
    // retiring to its time leaves it: a replica, which gets only the retirement, holds the
    // same. (The limits where a new generation fits but its first entry does not once left
    // an empty generation on the primary alone.)
    let p = params(8_000, 4, 100, 0.01);
    let step = p.window_ms / u64::from(p.generations);
    let (held, now) = fed(p, 300, 1);
    let later = now + step;
    let mut refused = 0;
    for limit in 0..3_000u64 {
        for (start, at) in [
            (CompactWindowed::new(p, SECRET, NO_LIMIT).unwrap(), T0),
            (held.clone(), later),
        ] {
            let mut f = start.clone();
            let mut retired = start;
            retired.retire(at);
            if f.add(at, b"refused?", limit).is_err() {
                refused += 1;
                assert_eq!(f, retired, "limit {limit}");
            }
        }
    }
    assert!(refused > 0);
}

#[test]
fn quiet_generations_are_held_as_one_segment_and_the_ring_as_long_as_it_holds() {
    let (f, _) = fed(params(8_000, 4, 100, 0.01), 10, 1);
    assert!(matches!(f.ring[0].filter, CompactGeneration::One(_)));
    assert_eq!(f.ring.len(), 1);
    // A busy slot's generation splits and is held whole; each generation's form loads back.
    let (mut f, now) = fed(params(8_000, 4, 100, 0.01), 10, 3);
    for i in 0..3000 {
        f.add(now, format!("busy:{i}").as_bytes(), NO_LIMIT)
            .unwrap();
    }
    let forms = |f: &CompactWindowed| -> Vec<bool> {
        let one = |g: &Held<CompactGeneration>| matches!(g.filter, CompactGeneration::One(_));
        f.ring.iter().map(one).collect()
    };
    assert_eq!(forms(&f), [true, true, false]);
    let mut rdb = MemoryRdb::new();
    f.save(&mut rdb);
    let loaded = CompactWindowed::load(&mut rdb, COMPACT_ENCODING_VERSION, NO_LIMIT).unwrap();
    assert_eq!(forms(&loaded), [true, true, false]);
    assert_eq!(loaded, f);
    // Over many windows the ring holds the live generations only.
    let (f, _) = fed(params(8_000, 4, 100, 0.01), 50, 40);
    assert!(f.ring.len() <= 4, "{}", f.ring.len());
}

#[test]
fn a_generation_takes_its_one_segments_fields_and_no_tag() {
    assert_eq!(std::mem::size_of::<CompactGeneration>(), 32);
}

#[test]
fn a_windows_own_fields_fit_one_64_byte_block() {
    // Parameters, clock, secret and the ring's pointer and length: an idle key's fixed part.
    assert_eq!(std::mem::size_of::<WindowParams>(), 32);
    assert_eq!(std::mem::size_of::<CompactWindowed>(), 64);
    assert_eq!(std::mem::size_of::<Windowed>(), 64);
    assert_eq!(<CompactGeneration as Generation>::window_overhead(), 64);
}
