use super::sizing::{bits_per_item, false_positive_rate, BLOCK_BITS};
use super::*;
use crate::bloom::{ChunkError, HeaderError};
use crate::rdb::{LoadError, MemoryRdb, RdbWrite};
use crate::test_rng::Rng;

const NO_LIMIT: u64 = u64::MAX;

fn filled(capacity: u64, error: f64, scaling: bool, items: u64, seed: u64) -> Blocked {
    let mut filter = Blocked::new(capacity, error, 2, scaling, NO_LIMIT).unwrap();
    let mut rng = Rng::new(seed);
    for _ in 0..items {
        filter.add(&rng.next().to_le_bytes(), NO_LIMIT).unwrap();
    }
    filter
}

/// Items of another length than the added ones, so none of them was added.
fn absent(rng: &mut Rng) -> [u8; 9] {
    let mut item = [0u8; 9];
    item[..8].copy_from_slice(&rng.next().to_le_bytes());
    item
}

/// The false-positive rate of a link as the occupancy's exact distribution gives it (a
/// dynamic program over the set bits of a block), to check the sizing's closed form against.
fn exact_rate(bits_per_item: f64, k: u32) -> f64 {
    let m = BLOCK_BITS as usize;
    let load = BLOCK_BITS as f64 / bits_per_item;
    let mut occupancy = vec![0.0f64; m + 1];
    occupancy[0] = 1.0;
    let (mut weight, mut rate) = ((-load).exp(), 0.0);
    for j in 1..=((load + 12.0 * load.sqrt() + 24.0) as u32) {
        for _ in 0..k {
            let mut next = vec![0.0f64; m + 1];
            for (x, p) in occupancy.iter().enumerate() {
                let hit = x as f64 / m as f64;
                next[x] += p * hit;
                if x < m {
                    next[x + 1] += p * (1.0 - hit);
                }
            }
            occupancy = next;
        }
        weight *= load / f64::from(j);
        let hits: f64 = occupancy
            .iter()
            .enumerate()
            .map(|(x, p)| p * (x as f64 / m as f64).powi(k as i32))
            .sum();
        rate += weight * hits;
    }
    rate
}

#[test]
fn the_sizing_model_matches_the_exact_occupancy() {
    for (c, k) in [(9.92, 6), (11.54, 7), (15.55, 9), (22.03, 12)] {
        let (model, exact) = (false_positive_rate(c, k), exact_rate(c, k));
        assert!(
            (model / exact - 1.0).abs() < 0.002,
            "{c} {k}: {model} {exact}"
        );
    }
}

#[test]
fn bits_per_item_for_the_real_rate() {
    // The blocked layout's price over the classic formula grows as the rate tightens.
    let cases = [
        (0.01, 9.918, 6),
        (0.005, 11.536, 7),
        (0.001, 15.545, 9),
        (0.0001, 22.029, 12),
    ];
    for (error, c, k) in cases {
        let (bits, hashes) = bits_per_item(error).unwrap();
        assert!(
            (bits - c).abs() < 0.01 && hashes == k,
            "{error}: {bits} {hashes}"
        );
        assert!(false_positive_rate(bits, hashes) <= error);
        assert!(false_positive_rate(bits - 0.01, hashes) > error);
    }
}

#[test]
fn shapes_and_their_limits() {
    let shape = BlockShape::new(10_000_000, 0.01).unwrap();
    assert_eq!((shape.hashes, shape.blocks), (6, 193_711));
    assert!(shape.expected_error() <= 0.01);
    assert_eq!(BlockShape::new(1, 0.5).unwrap().blocks, 1);
    assert_eq!(BlockShape::new(0, 0.01), Err(ShapeError::Invalid));
    assert_eq!(
        BlockShape::new(1, MIN_ERROR / 2.0),
        Err(ShapeError::Invalid)
    );
    assert_eq!(BlockShape::new(1, 1.0), Err(ShapeError::Invalid));
    assert_eq!(BlockShape::new(u64::MAX, 0.01), Err(ShapeError::TooLarge));
}

#[test]
fn blocks_are_cache_line_aligned_and_zeroed() {
    let filter = Blocked::new(100_000, 0.01, 2, true, NO_LIMIT).unwrap();
    let blocks = &filter.links[0].blocks;
    assert_eq!(blocks.address(0) as usize % 64, 0);
    assert!(blocks.bytes().iter().all(|b| *b == 0));
    assert_eq!(
        blocks.bytes().len() as u64,
        filter.links[0].shape.blocks * 64
    );
}

/// The measured rate of a full link is the model's for its exact shape, within four standard
/// deviations, and so within the requested rate.
fn check_measured_rate(capacity: u64, error: f64, queries: u64, seed: u64) {
    let filter = filled(capacity, error, false, capacity, seed);
    assert_eq!(filter.links.len(), 1);
    let expected = filter.links[0].shape.expected_error();
    assert!(expected <= error);
    let mut rng = Rng::new(seed ^ 0xabcdef);
    let positives = (0..queries)
        .filter(|_| filter.contains(&absent(&mut rng)))
        .count() as f64;
    let measured = positives / queries as f64;
    let sigma = (expected * (1.0 - expected) / queries as f64).sqrt();
    assert!(
        (measured - expected).abs() <= 4.0 * sigma,
        "{error}: measured {measured}, model {expected}, sigma {sigma}"
    );
}

#[test]
fn measured_rate_at_one_percent() {
    check_measured_rate(200_000, 0.01, 1_000_000, 1);
}

#[test]
fn measured_rate_at_a_tenth_of_a_percent() {
    check_measured_rate(100_000, 0.001, 2_000_000, 2);
}

#[test]
fn measured_rate_of_a_grown_chain_stays_within_the_request() {
    // From 100 items to 100,000: ten links whose rates add up to less than 1 %.
    let filter = filled(100, 0.01, true, 100_000, 3);
    assert_eq!(filter.links.len(), 10);
    let queries = 1_000_000u64;
    let mut rng = Rng::new(4);
    let positives = (0..queries)
        .filter(|_| filter.contains(&absent(&mut rng)))
        .count() as f64;
    let sigma = (0.01 * 0.99 / queries as f64).sqrt();
    assert!(positives / queries as f64 <= 0.01 + 4.0 * sigma);
}

#[test]
fn no_false_negatives_across_growth() {
    for seed in 0..4 {
        let mut filter = Blocked::new(50, 0.02, 2 + seed as u32, true, NO_LIMIT).unwrap();
        let mut rng = Rng::new(seed);
        let items: Vec<u64> = (0..20_000).map(|_| rng.next()).collect();
        for item in &items {
            filter.add(&item.to_le_bytes(), NO_LIMIT).unwrap();
        }
        let bytes: Vec<[u8; 8]> = items.iter().map(|i| i.to_le_bytes()).collect();
        let mut answers = Vec::new();
        filter.contains_each(bytes.iter().map(|b| &b[..]), |found| answers.push(found));
        assert!(answers.iter().all(|found| *found), "seed {seed}");
        assert!(items.iter().all(|i| filter.contains(&i.to_le_bytes())));
        filter.validate(NO_LIMIT).unwrap();
    }
}

#[test]
fn growth_follows_redisbloom_chain() {
    let mut filter = Blocked::new(5, 0.01, 3, true, NO_LIMIT).unwrap();
    assert_eq!(filter.links[0].shape.error, 0.005);
    for i in 0..100u32 {
        filter.add(&i.to_le_bytes(), NO_LIMIT).unwrap();
    }
    let shapes: Vec<(u64, f64)> = filter
        .links
        .iter()
        .map(|l| (l.shape.capacity, l.shape.error))
        .collect();
    assert_eq!(
        shapes,
        [(5, 0.005), (15, 0.0025), (45, 0.00125), (135, 0.000625)]
    );
    assert_eq!(filter.capacity(), 200);
    assert_eq!(
        filter.size,
        filter.links.iter().map(|l| l.size).sum::<u64>()
    );
    // A repeated add changes nothing.
    let before = filter.clone();
    assert_eq!(filter.add(&7u32.to_le_bytes(), NO_LIMIT), Ok(false));
    assert_eq!(filter, before);
}

#[test]
fn non_scaling_filters_fill_up() {
    let mut filter = Blocked::new(10, 0.01, 2, false, NO_LIMIT).unwrap();
    assert_eq!(filter.links[0].shape.error, 0.01);
    let added = (0..10u32)
        .filter(|i| filter.add(&i.to_le_bytes(), NO_LIMIT) == Ok(true))
        .count();
    assert_eq!(added as u64, filter.size);
    let mut i = 10u32;
    while filter.size < 10 {
        filter.add(&i.to_le_bytes(), NO_LIMIT).unwrap();
        i += 1;
    }
    assert_eq!(filter.add(b"one more", NO_LIMIT), Err(AddError::Full));
    assert_eq!(filter.links.len(), 1);
}

#[test]
fn budgets_bound_creation_and_growth() {
    let shape = BlockShape::new(1000, 0.005).unwrap();
    let exact = 48 + 64 + shape.bytes();
    assert!(Blocked::new(1000, 0.01, 2, true, exact).is_ok());
    assert_eq!(
        Blocked::new(1000, 0.01, 2, true, exact - 1),
        Err(CreateError::TooLarge)
    );
    let mut filter = Blocked::new(10, 0.01, 2, true, NO_LIMIT).unwrap();
    let limit = filter.reported_bytes();
    let outcomes: Vec<_> = (0..40u32)
        .map(|i| filter.add(&i.to_le_bytes(), limit))
        .collect();
    assert!(outcomes.contains(&Err(AddError::CannotGrow)));
    assert_eq!(filter.links.len(), 1);
    assert_eq!(
        Blocked::new(10, 0.01, 0, true, NO_LIMIT),
        Err(CreateError::Invalid)
    );
}

#[test]
fn growth_stops_at_the_tightest_rate() {
    let mut filter = Blocked::new(1, 0.5, 1, true, NO_LIMIT).unwrap();
    let mut i = 0u64;
    while filter.add(&i.to_le_bytes(), NO_LIMIT) != Err(AddError::CannotGrow) {
        i += 1;
        assert!(i < 10_000);
    }
    let last = filter.links.last().unwrap().shape.error;
    assert!(last >= MIN_ERROR && last * 0.5 < MIN_ERROR);
}

fn saved(filter: &Blocked) -> MemoryRdb {
    let mut rdb = MemoryRdb::new();
    filter.save(&mut rdb);
    rdb
}

#[test]
fn rdb_and_chunks_round_trip() {
    let filter = filled(1000, 0.01, true, 5000, 5);
    let back = Blocked::load(&mut saved(&filter), ENCODING_VERSION, NO_LIMIT).unwrap();
    assert_eq!(back, filter);
    let mut copy = Blocked::from_header(&filter.encode_header(), NO_LIMIT).unwrap();
    assert_eq!(copy.encode_header(), filter.encode_header());
    for chunk in filter.chunks() {
        copy.load_chunk(chunk.next, chunk.bytes).unwrap();
    }
    assert_eq!(copy, filter);
    // Chunks follow the links: one per link for small links.
    assert_eq!(filter.chunks().count(), filter.links.len());
}

#[test]
fn large_links_are_saved_and_dumped_in_16_mib_pieces() {
    let filter = Blocked::new(20_000_000, 0.01, 2, false, NO_LIMIT).unwrap();
    let bytes = filter.links[0].blocks.bytes().len();
    let pieces = bytes.div_ceil(16 << 20);
    assert!(pieces > 1);
    assert_eq!(filter.chunks().count(), pieces);
    let mut rdb = saved(&filter);
    assert_eq!(rdb.fields.len(), 4 + 5 + pieces);
    assert_eq!(
        Blocked::load(&mut rdb, ENCODING_VERSION, NO_LIMIT).unwrap(),
        filter
    );
}

#[test]
fn refused_rdb_values() {
    let filter = filled(100, 0.01, true, 300, 6);
    let field = |at: usize, value: u64| {
        let mut rdb = saved(&filter);
        rdb.fields[at] = crate::rdb::Field::Unsigned(value);
        Blocked::load(&mut rdb, ENCODING_VERSION, NO_LIMIT)
    };
    assert_eq!(
        field(0, 1),
        Err(LoadError::Invalid("link sizes do not add up"))
    );
    assert_eq!(field(1, 2), Err(LoadError::Invalid("unknown flags")));
    assert_eq!(field(2, 0), Err(LoadError::Invalid("growth below 1")));
    assert_eq!(
        field(3, 0),
        Err(LoadError::Invalid("link count out of range"))
    );
    assert_eq!(
        field(6, 0),
        Err(LoadError::Invalid("bits per item out of range"))
    );
    assert_eq!(
        field(6, 65),
        Err(LoadError::Invalid("bits per item out of range"))
    );
    assert_eq!(
        field(7, 0),
        Err(LoadError::Invalid("block count out of range"))
    );
    // Sizes are checked before anything is allocated, and a link's blocks against its rate.
    assert_eq!(
        field(7, 1 << 40),
        Err(LoadError::Invalid(
            "first link not sized for its capacity and rate"
        ))
    );
    assert_eq!(
        field(3, 99),
        Err(LoadError::Invalid("link count out of range"))
    );
    let mut rdb = saved(&filter);
    rdb.fields[4] = crate::rdb::Field::Unsigned(0);
    assert_eq!(
        Blocked::load(&mut rdb, ENCODING_VERSION, NO_LIMIT),
        Err(LoadError::Invalid("capacity below 1"))
    );
    let mut rdb = saved(&filter);
    rdb.fields.pop_back();
    rdb.write_buffer(&[0; 3]);
    assert_eq!(
        Blocked::load(&mut rdb, ENCODING_VERSION, NO_LIMIT),
        Err(LoadError::Invalid("block buffer of the wrong length"))
    );
    assert_eq!(
        Blocked::load(&mut saved(&filter), 2, NO_LIMIT),
        Err(LoadError::UnknownVersion(2))
    );
    let tight = filter.reported_bytes() - 1;
    assert_eq!(
        Blocked::load(&mut saved(&filter), ENCODING_VERSION, tight),
        Err(LoadError::TooLarge)
    );
}

/// Every field the contents determine, changed alone in a genuine RDB value: refused (the
/// first link's bits per item and blocks follow from its capacity and rate, each later link
/// from the one before, every link but the newest is full).
#[test]
fn fields_the_contents_determine_are_checked() {
    let filter = filled(100, 0.01, true, 300, 6);
    assert_eq!(filter.links.len(), 2);
    let first = filter.links[0].shape;
    let second = filter.links[1].shape;
    let changed = |at: usize, value: crate::rdb::Field| {
        let mut rdb = saved(&filter);
        rdb.fields[at] = value;
        Blocked::load(&mut rdb, ENCODING_VERSION, NO_LIMIT)
    };
    use crate::rdb::Field::{Double, Unsigned};
    let not_sized = Err(LoadError::Invalid(
        "first link not sized for its capacity and rate",
    ));
    let not_grown = Err(LoadError::Invalid("a link not the one its chain grows"));
    // One item more of capacity rounds to the same blocks: the link is then not full.
    assert_eq!(
        changed(4, Unsigned(first.capacity + 1)),
        Err(LoadError::Invalid("a link before the newest not full"))
    );
    assert_eq!(changed(4, Unsigned(first.capacity * 2)), not_sized);
    assert_eq!(changed(5, Double(first.error * 0.9)), not_grown);
    assert_eq!(changed(5, Double(first.error / 10.0)), not_sized);
    assert_eq!(changed(6, Unsigned(u64::from(first.hashes) + 1)), not_sized);
    assert_eq!(changed(7, Unsigned(first.blocks + 1)), not_sized);
    assert_eq!(changed(9, Unsigned(second.capacity * 2)), not_grown);
    assert_eq!(changed(10, Double(second.error * 2.0)), not_grown);
    assert_eq!(
        changed(11, Unsigned(u64::from(second.hashes) - 1)),
        not_grown
    );
    assert_eq!(changed(12, Unsigned(second.blocks - 1)), not_grown);
    assert_eq!(changed(2, Unsigned(3)), not_grown);
    assert_eq!(
        changed(1, Unsigned(1)),
        Err(LoadError::Invalid(
            "a non-scaling filter of more than one link"
        ))
    );
    // The item counts: moved between links (the total still adds up), or past the capacity.
    let mut rdb = saved(&filter);
    rdb.fields[8] = Unsigned(filter.links[0].size - 1);
    rdb.fields[13] = Unsigned(filter.links[1].size + 1);
    assert_eq!(
        Blocked::load(&mut rdb, ENCODING_VERSION, NO_LIMIT),
        Err(LoadError::Invalid("a link before the newest not full"))
    );
    let mut rdb = saved(&filter);
    let over = second.capacity + 1;
    rdb.fields[0] = Unsigned(filter.links[0].size + over);
    rdb.fields[13] = Unsigned(over);
    assert_eq!(
        Blocked::load(&mut rdb, ENCODING_VERSION, NO_LIMIT),
        Err(LoadError::Invalid(
            "the newest link holds more than its capacity"
        ))
    );
    // The genuine value loads.
    assert_eq!(
        Blocked::load(&mut saved(&filter), ENCODING_VERSION, NO_LIMIT),
        Ok(filter)
    );
}

#[test]
fn refused_headers() {
    let filter = filled(100, 0.01, true, 300, 7);
    let header = filter.encode_header();
    let patched = |at: usize, bytes: &[u8]| {
        let mut h = header.clone();
        h[at..at + bytes.len()].copy_from_slice(bytes);
        Blocked::from_header(&h, NO_LIMIT)
    };
    let bad = Err(HeaderError::BadData);
    assert_eq!(patched(0, b"bloomrsC"), bad);
    assert_eq!(patched(8, &2u32.to_le_bytes()), bad);
    assert_eq!(patched(12, &4u32.to_le_bytes()), bad);
    assert_eq!(patched(16, &0u32.to_le_bytes()), bad);
    assert_eq!(patched(20, &9u32.to_le_bytes()), bad);
    assert_eq!(patched(24, &0u64.to_le_bytes()), bad);
    assert_eq!(patched(32 + 16, &0u32.to_le_bytes()), bad);
    assert_eq!(patched(32 + 8, &2.0f64.to_le_bytes()), bad);
    assert_eq!(patched(32 + 20, &(1u64 << 40).to_le_bytes()), bad);
    assert_eq!(patched(32 + 20, &u64::MAX.to_le_bytes()), bad);
    assert_eq!(
        Blocked::from_header(&header[..header.len() - 1], NO_LIMIT),
        bad
    );
    assert_eq!(Blocked::from_header(&[], NO_LIMIT), bad);
    let tight = filter.reported_bytes() - 1;
    assert_eq!(
        Blocked::from_header(&header, tight),
        Err(HeaderError::TooLarge)
    );
}

#[test]
fn refused_chunks_change_nothing() {
    let filter = filled(100, 0.01, true, 300, 8);
    let mut copy = Blocked::from_header(&filter.encode_header(), NO_LIMIT).unwrap();
    let before = copy.clone();
    let total = filter.link_bytes() as i64;
    assert_eq!(copy.load_chunk(0, b""), Err(ChunkError::BadData));
    assert_eq!(copy.load_chunk(-5, b"x"), Err(ChunkError::BadData));
    assert_eq!(copy.load_chunk(2, b"xyz"), Err(ChunkError::BadData));
    assert_eq!(copy.load_chunk(total + 2, b"x"), Err(ChunkError::NoLink));
    let first = filter.links[0].bytes() as i64;
    assert_eq!(
        copy.load_chunk(first + 2, &[1u8; 2]),
        Err(ChunkError::TooBig)
    );
    assert_eq!(copy, before);
    assert_eq!(filter.chunk_at(0), None);
    assert_eq!(filter.chunk_at(total + 1), None);
}

#[test]
#[ignore]
fn sizing_cost() {
    for error in [0.5, 0.01, 0.005, 1e-4, 1e-8, 1e-12] {
        let start = std::time::Instant::now();
        for _ in 0..100 {
            std::hint::black_box(BlockShape::new(1000, std::hint::black_box(error)).unwrap());
        }
        eprintln!("{error}: {:?} per shape", start.elapsed() / 100);
    }
}

/// The table of docs/kinds/blocked.md: for each rate, a full non-scaling link of 1M items,
/// its bits per item, the model's rate and the measured one over 10M items never added.
#[test]
#[ignore]
fn measured_rate_table() {
    for error in [0.05, 0.01, 0.005, 0.001, 0.0001] {
        let filter = filled(1_000_000, error, false, 1_000_000, 31);
        let shape = filter.links[0].shape;
        let mut rng = Rng::new(32);
        let queries = 10_000_000u64;
        let positives = (0..queries)
            .filter(|_| filter.contains(&absent(&mut rng)))
            .count() as f64;
        let bits = (shape.blocks * BLOCK_BITS) as f64 / 1e6;
        let classic = -error.ln() / (std::f64::consts::LN_2 * std::f64::consts::LN_2);
        eprintln!(
            "| {error} | {classic:.2} | {bits:.2} | {} | {:.3e} | {:.3e} |",
            shape.hashes,
            shape.expected_error(),
            positives / queries as f64
        );
    }
}

/// BF.EXISTS and BF.ADD take the single-item paths (`contains`, `add`: the blocks requested
/// from the first half of the hash), BF.MEXISTS and BF.MADD the batch paths: on a chain whose
/// newer links are large enough to be prefetched, both build the same filter and answer alike.
#[test]
fn single_item_paths_answer_as_the_batch_paths() {
    let single = filled(100_000, 0.01, true, 300_000, 7);
    assert!(single.links.len() >= 2);
    assert!(single
        .links
        .iter()
        .any(|link| link.bytes() >= PREFETCH_MIN_BYTES));
    let mut rng = Rng::new(7);
    let items: Vec<[u8; 8]> = (0..300_000).map(|_| rng.next().to_le_bytes()).collect();
    let mut batched = Blocked::new(100_000, 0.01, 2, true, NO_LIMIT).unwrap();
    batched.add_each(items.iter().map(|i| &i[..]), NO_LIMIT, |outcome| {
        outcome.is_ok()
    });
    assert_eq!(single, batched);

    let mut rng = Rng::new(8);
    let probes: Vec<Vec<u8>> = (0..20_000usize)
        .map(|i| match i % 2 {
            0 => absent(&mut rng).to_vec(),
            _ => items.get(i * 13 % items.len()).unwrap().to_vec(),
        })
        .collect();
    let mut each = Vec::new();
    single.contains_each(probes.iter().map(Vec::as_slice), |found| each.push(found));
    let one: Vec<bool> = probes.iter().map(|p| single.contains(p)).collect();
    assert_eq!(one, each);
    assert!(one.iter().skip(1).step_by(2).all(|found| *found));
    for p in &probes {
        assert_eq!(
            ItemHash::from_first(p, ItemHash::first(p)),
            ItemHash::of(p, true)
        );
    }
}

/// A value saying more items than `BF.CARD` answers is refused (an add would take it where no
/// reply or loader follows); at the bound it is the link's business alone.
#[test]
fn more_items_than_bf_card_answers_are_refused() {
    let mut filter = filled(100, 0.01, false, 10, 7);
    assert_eq!(filter.links.len(), 1);
    let at = |filter: &mut Blocked, size: u64| {
        filter.size = size;
        if let Some(link) = filter.links.last_mut() {
            link.size = size;
        }
        filter.validate(NO_LIMIT)
    };
    assert_eq!(
        at(&mut filter, crate::bloom::MAX_ITEMS + 1),
        Err("more items than BF.CARD answers")
    );
    assert_eq!(
        at(&mut filter, u64::MAX),
        Err("more items than BF.CARD answers")
    );
    assert_eq!(at(&mut filter, crate::bloom::MAX_ITEMS), Ok(()));
}
