use super::*;
use crate::bloom::{ChunkError, HeaderError};
use crate::rdb::{LoadError, MemoryRdb};
use crate::test_rng::Rng;
use std::collections::HashMap;

const NO_LIMIT: u64 = u64::MAX;

fn reserve(error: f64, capacity: u64, scaling: bool) -> CountingFilter {
    CountingFilter::new(capacity, error, 2, scaling, NO_LIMIT).unwrap()
}

#[test]
fn adds_count_and_deletes_take_back() {
    let mut f = reserve(0.01, 100, true);
    assert_eq!(f.add(b"a", NO_LIMIT), Ok(true));
    assert_eq!(f.add(b"a", NO_LIMIT), Ok(false));
    assert_eq!(f.items, 2);
    assert_eq!(f.delete(b"a"), Ok(true));
    assert!(f.contains(b"a"));
    assert_eq!(f.delete(b"a"), Ok(true));
    assert!(!f.contains(b"a"));
    assert_eq!(f.delete(b"a"), Ok(false));
    assert_eq!((f.items, f.chain.links[0].size), (0, 0));
    assert!(f.chain.links[0].array.iter().all(|b| *b == 0));
}

#[test]
fn counters_are_four_bits_and_sized_as_the_plain_link() {
    let f = reserve(0.01, 100, true);
    let plain = crate::bloom::Chain::new(100, 0.01, 2, true, NO_LIMIT).unwrap();
    let (link, bits) = (&f.chain.links[0], &plain.links[0]);
    assert_eq!((link.bits, link.hashes), (bits.bits, bits.hashes));
    assert_eq!(link.bytes(), bits.bytes() * 4);
}

#[test]
fn a_saturated_counter_never_comes_down() {
    let mut f = reserve(0.01, 100, true);
    for _ in 0..20 {
        f.add(b"hot", NO_LIMIT).unwrap();
    }
    let hash = f.chain.hash(b"hot");
    let cells: std::collections::HashSet<_> = f.chain.links[0].probes_of(hash).collect();
    let hashes = cells.len() as u64;
    assert_eq!(f.saturated(), hashes);
    // Nothing can be taken back: every delete answers 0 and changes nothing.
    let before = f.clone();
    for _ in 0..200 {
        assert_eq!(f.delete(b"hot"), Ok(false));
    }
    assert_eq!(f, before);
    // Stuck at 15: a false positive left behind, never a false negative for anything else.
    assert!(f.contains(b"hot"));
    assert_eq!(f.saturated(), hashes);
    assert_eq!(f.items, 20);
}

#[test]
fn a_delete_takes_back_what_is_not_saturated() {
    // Two items sharing no cell: `hot` saturates, `cold` does not; an item whose counters
    // are partly saturated still gives back the others.
    let mut f = reserve(0.01, 1000, true);
    for _ in 0..16 {
        f.add(b"hot", NO_LIMIT).unwrap();
    }
    f.add(b"cold", NO_LIMIT).unwrap();
    assert_eq!(f.delete(b"cold"), Ok(true));
    assert!(!f.contains(b"cold"));
    assert_eq!(f.delete(b"hot"), Ok(false));
    assert_eq!(f.items, 16);
}

#[test]
fn an_item_held_by_two_links_is_not_deleted() {
    // A scaling filter of capacity 1 grows a link per item; find an item that the second link
    // reads present (a false positive there) while the first holds it.
    let mut f = CountingFilter::new(1, 0.5, 2, true, NO_LIMIT).unwrap();
    f.add(b"first", NO_LIMIT).unwrap();
    let mut i = 0;
    let filler = loop {
        i += 1;
        let candidate = format!("filler-{i}");
        if !f.contains(candidate.as_bytes()) {
            break candidate;
        }
    };
    f.add(filler.as_bytes(), NO_LIMIT).unwrap();
    assert_eq!(f.chain.links.len(), 2);
    let hash = f.chain.hash(b"first");
    if !f.chain.links[1].contains(hash) {
        // Make the second link read it present too, as a false positive would.
        f.chain.links[1].insert(hash);
    }
    let before = f.clone();
    assert_eq!(f.delete(b"first"), Err(DeleteError::Ambiguous));
    assert_eq!(f, before);
    assert!(f.contains(filler.as_bytes()));
}

/// Random adds (some repeated) and deletes of added items at one seed: after every step,
/// every item still in the multiset reads present. Returns the filter, the multiset and the
/// deletes refused as ambiguous.
fn churn(
    seed: u64,
    error: f64,
    capacity: u64,
    steps: usize,
) -> (CountingFilter, HashMap<u64, u32>, usize) {
    let mut rng = Rng::new(seed);
    let mut f = reserve(error, capacity, true);
    let mut multiset: HashMap<u64, u32> = HashMap::new();
    let mut held: Vec<u64> = Vec::new();
    let mut ambiguous = 0;
    for step in 0..steps {
        if held.is_empty() || rng.below(100) < 60 {
            // A new item, or one more of a held one (multiset).
            let item = if held.is_empty() || rng.below(4) > 0 {
                rng.next()
            } else {
                held[rng.below(held.len() as u64) as usize]
            };
            f.add(&item.to_le_bytes(), NO_LIMIT).unwrap();
            let count = multiset.entry(item).or_insert(0);
            if *count == 0 {
                held.push(item);
            }
            *count += 1;
        } else {
            let at = rng.below(held.len() as u64) as usize;
            let item = held[at];
            match f.delete(&item.to_le_bytes()) {
                Ok(true) => {
                    let count = multiset.get_mut(&item).unwrap();
                    *count -= 1;
                    if *count == 0 {
                        held.swap_remove(at);
                    }
                }
                // Every counter of the item saturated: nothing taken back, still present.
                Ok(false) => assert!(
                    f.contains(&item.to_le_bytes()),
                    "seed {seed} step {step}: an added item read absent"
                ),
                Err(DeleteError::Ambiguous) => ambiguous += 1,
            }
        }
        if step % 97 == 0 {
            for item in &held {
                assert!(
                    f.contains(&item.to_le_bytes()),
                    "seed {seed} step {step}: false negative"
                );
            }
        }
    }
    for item in &held {
        assert!(
            f.contains(&item.to_le_bytes()),
            "seed {seed}: false negative at the end"
        );
    }
    let total: u64 = multiset.values().map(|c| u64::from(*c)).sum();
    assert_eq!(f.items, total, "seed {seed}: size is the multiset's");
    (f, multiset, ambiguous)
}

#[test]
fn deletes_never_cost_an_added_item_its_presence() {
    for seed in 0..200u64 {
        churn(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15), 0.01, 50, 3000);
    }
}

#[test]
fn false_positive_rate_after_churn_stays_within_the_requested_rate() {
    // 40,000 steps into a filter of initial capacity 1,000 (it scales to several links), then
    // 100,000 items never added. The chain's error bound is the requested 1%: the count must
    // stay below 1,000 plus 5 standard deviations (about 31 each) at every seed.
    for seed in [1u64, 7, 42, 1234, 99_991] {
        let (f, multiset, _) = churn(seed, 0.01, 1000, 40_000);
        let probes: Vec<u64> = {
            let mut rng = Rng::new(seed ^ 0xdead_beef);
            (0..100_000)
                .map(|_| rng.next())
                .filter(|p| !multiset.contains_key(p))
                .collect()
        };
        let hits = probes
            .iter()
            .filter(|p| f.contains(&p.to_le_bytes()))
            .count();
        let bound = probes.len() as f64 * 0.01 + 5.0 * (probes.len() as f64 * 0.01).sqrt();
        assert!(
            (hits as f64) < bound,
            "seed {seed}: {hits} false positives of {}",
            probes.len()
        );
    }
}

#[test]
fn no_counter_saturates_at_capacity_with_distinct_items() {
    // Fan et al.: a 4-bit counter overflows with probability below 1.37e-15 per counter at the
    // optimal hash count; 100,000 distinct items fill a non-scaling filter to capacity.
    let mut f = reserve(0.01, 100_000, false);
    for i in 0..100_000u32 {
        f.add(format!("member-{i}").as_bytes(), NO_LIMIT).unwrap();
    }
    assert_eq!(f.saturated(), 0);
}

#[test]
fn rdb_round_trip_and_refusals() {
    let mut f = reserve(0.001, 100, true);
    for i in 0..500u32 {
        f.add(&i.to_le_bytes(), NO_LIMIT).unwrap();
    }
    f.delete(&7u32.to_le_bytes()).unwrap();
    let mut rdb = MemoryRdb::new();
    f.save(&mut rdb);
    let saved = rdb.clone();
    assert_eq!(
        CountingFilter::load(&mut rdb, ENCODING_VERSION, NO_LIMIT),
        Ok(f.clone())
    );
    assert_eq!(
        CountingFilter::load(&mut saved.clone(), 2, NO_LIMIT),
        Err(LoadError::UnknownVersion(2))
    );
    assert_eq!(
        CountingFilter::load(&mut saved.clone(), ENCODING_VERSION, 1000),
        Err(LoadError::TooLarge)
    );
    let mut wide = saved.clone();
    wide.fields[0] = crate::rdb::Field::Unsigned(8);
    assert_eq!(
        CountingFilter::load(&mut wide, ENCODING_VERSION, NO_LIMIT),
        Err(LoadError::Invalid("counter width"))
    );
    let mut legacy = saved;
    // The chain's options (after width, adds, size and link count): 32-bit hashing is refused.
    legacy.fields[4] = crate::rdb::Field::Unsigned(u64::from(crate::bloom::OPT_NOROUND));
    assert_eq!(
        CountingFilter::load(&mut legacy, ENCODING_VERSION, NO_LIMIT),
        Err(LoadError::Invalid("options of a counting filter"))
    );
}

/// A link's distinct items past its capacity, in a genuine RDB value (moved from another
/// link, so the sizes still add up), are refused.
#[test]
fn a_link_past_its_capacity_is_refused() {
    let mut f = reserve(0.01, 100, true);
    for i in 0..150u32 {
        f.add(&i.to_le_bytes(), NO_LIMIT).unwrap();
    }
    f.add(&1u32.to_le_bytes(), NO_LIMIT).unwrap();
    assert_eq!(f.chain.links.len(), 2);
    let mut rdb = MemoryRdb::new();
    f.save(&mut rdb);
    let load = |rdb: &mut MemoryRdb| CountingFilter::load(rdb, ENCODING_VERSION, NO_LIMIT);
    use crate::rdb::Field::Unsigned;
    // Fields: width, adds, then the chain: size, links, options, growth, and per link eight
    // (capacity, error, hashes, bpe, bits, n2, counters, distinct items).
    let mut moved = rdb.clone();
    moved.fields[13] = Unsigned(f.chain.links[0].size + 1);
    moved.fields[21] = Unsigned(f.chain.links[1].size - 1);
    assert_eq!(
        load(&mut moved),
        Err(LoadError::Invalid(
            "a link holds more distinct items than its capacity"
        ))
    );
    assert_eq!(load(&mut rdb), Ok(f));
}

#[test]
fn header_and_chunks_round_trip() {
    let mut f = reserve(0.01, 1000, true);
    for i in 0..5000u32 {
        f.add(&i.to_le_bytes(), NO_LIMIT).unwrap();
    }
    let header = f.encode_header();
    assert!(header.starts_with(MAGIC));
    let mut copy = CountingFilter::from_header(&header, NO_LIMIT).unwrap();
    assert_eq!(copy.items, f.items);
    let mut iter = 1;
    while let Some(chunk) = f.chain.chunk_at(iter) {
        copy.chain.load_chunk(chunk.next, chunk.bytes).unwrap();
        iter = chunk.next;
    }
    assert_eq!(copy, f);
    assert_eq!(
        copy.chain.load_chunk(i64::MAX, b"x"),
        Err(ChunkError::NoLink)
    );
}

#[test]
fn headers_that_are_refused() {
    let f = reserve(0.01, 1000, true);
    let header = f.encode_header();
    let refused = |bytes: &[u8], max: u64| CountingFilter::from_header(bytes, max).err();
    assert_eq!(refused(&header[..10], NO_LIMIT), Some(HeaderError::BadData));
    let mut other_width = header.clone();
    other_width[12] = 8;
    assert_eq!(refused(&other_width, NO_LIMIT), Some(HeaderError::BadData));
    let mut other_version = header.clone();
    other_version[8] = 2;
    assert_eq!(
        refused(&other_version, NO_LIMIT),
        Some(HeaderError::BadData)
    );
    // The plain chain header alone is not a counting header.
    assert_eq!(refused(&header[24..], NO_LIMIT), Some(HeaderError::BadData));
    assert_eq!(refused(&header, 100), Some(HeaderError::TooLarge));
}

#[test]
fn capacity_counts_distinct_items() {
    // Repeated adds take no room; a delete that leaves the item absent frees its place.
    let mut f = reserve(0.01, 10, false);
    for _ in 0..5 {
        f.add(b"hot", NO_LIMIT).unwrap();
    }
    for i in 0..9u32 {
        assert_eq!(f.add(&i.to_le_bytes(), NO_LIMIT), Ok(true));
    }
    assert_eq!((f.items, f.chain.size), (14, 10));
    assert_eq!(f.add(b"one more", NO_LIMIT), Err(AddError::Full));
    assert_eq!(f.delete(&3u32.to_le_bytes()), Ok(true));
    assert_eq!((f.items, f.chain.size), (13, 9));
    assert_eq!(f.add(b"one more", NO_LIMIT), Ok(true));
    // A delete that leaves the item held (another add of it) keeps its place.
    assert_eq!(f.delete(b"hot"), Ok(true));
    assert_eq!((f.items, f.chain.size), (13, 10));
}

/// An add past the most items `BF.CARD` answers (only a crafted value comes near it) is
/// refused and changes nothing; an item held is still counted.
#[test]
fn no_add_counts_items_past_what_bf_card_answers() {
    let mut f = reserve(0.01, 100, true);
    assert_eq!(f.add(b"held", NO_LIMIT), Ok(true));
    f.chain.size = crate::bloom::MAX_ITEMS;
    let before = f.clone();
    assert_eq!(f.add(b"new", NO_LIMIT), Err(AddError::CannotGrow));
    assert_eq!(f, before);
    assert_eq!(f.add(b"held", NO_LIMIT), Ok(false));
    assert_eq!(f.chain.size, crate::bloom::MAX_ITEMS);
    f.chain.size = crate::bloom::MAX_ITEMS - 1;
    assert_eq!(f.add(b"new", NO_LIMIT), Ok(true));
    assert_eq!(f.chain.size, crate::bloom::MAX_ITEMS);
}
