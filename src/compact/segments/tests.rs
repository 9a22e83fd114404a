use super::*;
use crate::test_rng::Rng;
use std::collections::HashMap;

const NO_LIMIT: u64 = u64::MAX;
const SECRET: u64 = 0x005e_c2e7;

fn id(seed: u64, i: u64) -> Vec<u8> {
    format!("{seed:x}-{i:012}").into_bytes()
}

fn random_entries(rng: &mut Rng, n: u64, lengths: &[u32]) -> Vec<Entry> {
    let mut entries: Vec<Entry> = (0..n)
        .map(|_| {
            let len = lengths[rng.below(lengths.len() as u64) as usize];
            let fingerprint = if len == 0 {
                0
            } else {
                rng.next() >> (64 - len)
            };
            let count = [1, 1, 1, 2, 7, MAX_COUNT][rng.below(6) as usize];
            Entry {
                len,
                fingerprint,
                count,
            }
        })
        .collect();
    entries.sort_unstable_by_key(Entry::key);
    entries.dedup_by_key(|e| e.key());
    entries
}

#[test]
fn a_segment_decodes_to_what_it_encoded_and_finds_its_prefixes() {
    let mut rng = Rng::new(3);
    for case in 0..300u64 {
        let lengths: &[u32] = match case % 4 {
            0 => &[12],
            1 => &[0, 3, 9, 10, 11],
            2 => &[1, 2, 60],
            _ => &[20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31],
        };
        let n = 1 + rng.below([3, 40, 600, 4096][(case % 4) as usize]);
        let entries = random_entries(&mut rng, n, lengths);
        let segment = Segment::encode(&entries).unwrap();
        assert_eq!(segment.decode().unwrap(), entries);
        assert_eq!(segment.len(), entries.len() as u64);
        let words: Vec<u64> = segment.words().copied().collect();
        assert_eq!(Segment::from_words(words).unwrap(), segment);
        for _ in 0..50 {
            // A query extending a held entry, or a random one.
            let tail = if rng.below(2) == 0 {
                let e = entries[rng.below(entries.len() as u64) as usize];
                let rest = u128::from(rng.next()) << 64 | u128::from(rng.next());
                match e.len {
                    0 => rest,
                    len => u128::from(e.fingerprint) << (128 - len) | rest >> len,
                }
            } else {
                u128::from(rng.next()) << 64
            };
            // The void is tested apart, by its filter (`Segmented::voids`).
            let matching = entries
                .iter()
                .filter(|e| e.len > 0 && segment::prefix(tail, e.len) == e.fingerprint)
                .map(|e| e.len)
                .max();
            assert_eq!(segment.longest(tail), matching, "case {case}");
            assert_eq!(segment.contains(tail), matching.is_some());
        }
    }
}

#[test]
fn segment_words_are_refused_unless_canonical() {
    let mut rng = Rng::new(9);
    let entries = random_entries(&mut rng, 300, &[0, 7, 8, 9]);
    let words: Vec<u64> = Segment::encode(&entries)
        .unwrap()
        .words()
        .copied()
        .collect();
    let mut accepted = 0;
    for at in 0..words.len() {
        for flip in [1u64, 1 << 17, 1 << 40, 1 << 63] {
            let mut changed = words.clone();
            changed[at] ^= flip;
            if let Some(s) = Segment::from_words(changed) {
                // Only another genuine coding of other entries may load.
                let decoded = s.decode().unwrap();
                assert_eq!(Segment::encode(&decoded).unwrap(), s);
                accepted += 1;
            }
        }
    }
    let short = words[..words.len() - 1].to_vec();
    assert!(Segment::from_words(short).is_none());
    let mut long = words.clone();
    long.push(0);
    assert!(Segment::from_words(long).is_none());
    assert!(accepted < 4 * words.len());
    // Past the hard bound, a segment is refused whole.
    let too_many: Vec<Entry> = (0..=MAX_SEGMENT_ENTRIES)
        .map(|f| Entry {
            len: 20,
            fingerprint: f,
            count: 1,
        })
        .collect();
    assert!(Segment::encode(&too_many).is_none());
}

/// One count off the entry of `len` bits of `fingerprint` in sorted entries, as a delete
/// takes it: `Some(true)` if the entry goes, `None` if it is not held.
fn take_one(entries: &mut Vec<Entry>, len: u32, fingerprint: u64) -> Option<bool> {
    let key = Entry {
        len,
        fingerprint,
        count: 1,
    }
    .key();
    let i = entries.binary_search_by_key(&key, Entry::key).ok()?;
    if entries[i].count > 1 {
        entries[i].count -= 1;
        return Some(false);
    }
    entries.remove(i);
    Some(true)
}

/// Adds and deletes made in the coded words give exactly the words of the changed entries
/// coded afresh, with the bytes the edit announced: random segments of every length mix,
/// counters (up to the most), voids, sizes up to the 4,096 bound.
#[test]
fn edits_in_place_write_what_coding_the_changed_entries_writes() {
    let mut rng = Rng::new(21);
    // Edits made in place and edits coded again: [insert, remove, count, recode of an add,
    // recode of a delete].
    let mut kinds = [0u32; 5];
    for case in 0..500u64 {
        let lengths: &[u32] = match case % 5 {
            0 => &[12],
            1 => &[0, 3, 9, 10, 11],
            2 => &[1, 2, 60],
            3 => &[20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31],
            _ => &[18, 19],
        };
        let n = match case % 7 {
            0 => MAX_SEGMENT_ENTRIES - rng.below(3),
            k => 1 + rng.below([0, 3, 40, 300, 600, 1100, 2100][k as usize]),
        };
        let mut entries = random_entries(&mut rng, n, lengths);
        let mut segment = Segment::encode(&entries).unwrap();
        for step in 0..40 {
            let mut expected = entries.clone();
            let pick = |rng: &mut Rng| entries[rng.below(entries.len() as u64) as usize];
            let (len, fingerprint) = if rng.below(3) == 0 && !entries.is_empty() {
                let e = pick(&mut rng);
                (e.len, e.fingerprint)
            } else {
                let len = lengths[rng.below(lengths.len() as u64) as usize];
                (len, rng.next() & segment::bits_below(len))
            };
            let adding = rng.below(3) == 0;
            // A void comes only from a split: an add counts one held, and makes none.
            if adding && len == 0 && entries.first().is_none_or(|e| e.len != 0) {
                continue;
            }
            let (edit, wanted) = if adding {
                let new = Entry {
                    len,
                    fingerprint,
                    count: 1,
                };
                (
                    segment.edit_add(len, fingerprint),
                    add_entry(&mut expected, new),
                )
            } else {
                let edit = match segment.is_empty() {
                    true => None,
                    false => segment.edit_delete(len, fingerprint),
                };
                (edit, take_one(&mut expected, len, fingerprint))
            };
            let at = format!("case {case} step {step}");
            assert_eq!(edit.as_ref().map(|e| e.1), wanted, "{at}");
            let Some((edit, _)) = edit else {
                continue;
            };
            let bytes = edit.bytes();
            kinds[match edit {
                Edit::Insert { .. } => 0,
                Edit::Remove { .. } => 1,
                Edit::Count { .. } => 2,
                Edit::Recode(_) if adding => 3,
                Edit::Recode(_) => 4,
            }] += 1;
            segment.apply(edit);
            assert_eq!(segment, Segment::encode(&expected).unwrap(), "{at}");
            assert_eq!(segment.bytes(), bytes, "{at}");
            entries = expected;
        }
    }
    assert!(kinds.iter().all(|k| *k > 100), "{kinds:?}");
}

/// BF.MEXISTS's pipeline answers every item as a lookup of it alone would, in order, at
/// every batch size around its stages, on a filter within the caches and on one past them
/// (where it requests each bucket before its lookup).
#[test]
fn a_batch_answers_as_single_lookups_in_order() {
    let mut small = Segmented::new(100, 0.01, false, SECRET, NO_LIMIT).unwrap();
    for i in 0..20_000 {
        small.add(&id(6, i), NO_LIMIT).unwrap();
    }
    let mut large = Segmented::new(100, 1e-9, false, SECRET, NO_LIMIT).unwrap();
    for i in 0.. {
        if large.segment_bytes >= DEEP_PREFETCH_BYTES {
            break;
        }
        large.add(&id(6, i), NO_LIMIT).unwrap();
    }
    for filter in [small, large] {
        batches_answer_as_single_lookups(&filter);
    }
}

fn batches_answer_as_single_lookups(filter: &Segmented) {
    for n in 0..40u64 {
        // Present and absent items in turn.
        let items: Vec<Vec<u8>> = (0..n).map(|i| id(6, i * 7 + ((i % 2) << 30))).collect();
        let mut answers = Vec::new();
        filter.contains_each(items.iter().map(Vec::as_slice), |found| answers.push(found));
        let alone: Vec<bool> = items.iter().map(|item| filter.contains(item)).collect();
        assert_eq!(answers, alone, "batch of {n}");
        assert!(n < 2 || answers.iter().any(|a| *a) && answers.iter().any(|a| !*a));
    }
}

/// Checks the derived fields against the segments.
fn check_consistent(filter: &Segmented) {
    let entries: u64 = filter.directory.iter().map(Segment::len).sum();
    assert_eq!(filter.entries, entries);
    let bytes: u64 = filter.directory.iter().map(Segment::bytes).sum();
    assert_eq!(filter.segment_bytes, bytes);
    assert_eq!(
        filter.directory.len(),
        (1 << filter.level) + filter.pointer,
        "split pointer and level"
    );
    let counted: u64 = filter
        .directory
        .iter()
        .flat_map(|s| s.decode().unwrap())
        .map(|e| e.count)
        .sum();
    if filter.deletable {
        assert!(counted >= filter.items, "every held add is counted");
    }
}

/// The filter against a plain multiset: random adds (heavy duplicates), deletes of held and
/// of absent items, at rates from 0.5 to 1e-9: no held item ever reads absent, the count is
/// the multiset's, and deletes of held items always succeed.
#[test]
fn the_filter_holds_every_added_item_against_a_multiset() {
    for (seed, error) in [(1u64, 0.5), (2, 0.01), (3, 0.001), (4, 1e-6), (5, 1e-9)] {
        for deletable in [false, true] {
            let mut rng = Rng::new(seed);
            let mut filter =
                Segmented::new(100, error, deletable, SECRET + seed, NO_LIMIT).unwrap();
            let mut model: HashMap<u64, u64> = HashMap::new();
            let mut held = 0u64;
            for step in 0..40_000u64 {
                let r = rng.below(100);
                let i = if r < 20 {
                    rng.below(30)
                } else {
                    rng.below(1 << 40)
                };
                if deletable && r >= 85 && !model.is_empty() {
                    let pick = *model
                        .keys()
                        .nth(rng.below(model.len() as u64) as usize)
                        .unwrap();
                    assert_eq!(filter.delete(&id(seed, pick)), Ok(true), "step {step}");
                    let c = model.get_mut(&pick).unwrap();
                    *c -= 1;
                    if *c == 0 {
                        model.remove(&pick);
                    }
                    held -= 1;
                } else {
                    let before = filter.contains(&id(seed, i));
                    let fresh = filter.add(&id(seed, i), NO_LIMIT).unwrap();
                    assert_eq!(fresh, !before);
                    if deletable || fresh {
                        held += 1;
                    }
                    *model.entry(i).or_default() += 1;
                }
                if step % 4000 == 0 {
                    check_consistent(&filter);
                }
            }
            check_consistent(&filter);
            assert_eq!(filter.len(), held);
            for i in model.keys() {
                assert!(filter.contains(&id(seed, *i)), "seed {seed} item {i}");
            }
            assert!(filter.segments() > 20, "it grew: {}", filter.segments());
        }
    }
}

#[test]
fn deleting_every_add_empties_the_filter() {
    let mut filter = Segmented::new(1, 0.01, true, SECRET, NO_LIMIT).unwrap();
    for i in 0..5000 {
        for _ in 0..(1 + i % 3) {
            filter.add(&id(7, i), NO_LIMIT).unwrap();
        }
    }
    for i in 0..5000 {
        for _ in 0..(1 + i % 3) {
            assert_eq!(filter.delete(&id(7, i)), Ok(true));
        }
    }
    assert!(filter.is_empty());
    assert_eq!(filter.entries, 0);
    assert_eq!(filter.delete(&id(7, 1)), Ok(false));
    let plain = Segmented::new(1, 0.01, false, SECRET, NO_LIMIT).unwrap();
    assert_eq!(plain.clone().delete(b"x"), Err(DeleteError::NotDeletable));
}

/// The measured false-positive rate at every decade to 1,000,000 items stays within the
/// requested rate plus four standard deviations of the measure (fixed seeds).
#[test]
fn the_false_positive_rate_holds_at_every_decade() {
    for error in [0.01, 0.001] {
        let mut filter = Segmented::new(100, error, false, SECRET, NO_LIMIT).unwrap();
        let queries = (100.0 / error) as u64;
        let mut held = 0;
        for decade in [100u64, 1000, 10_000, 100_000, 1_000_000] {
            while held < decade {
                filter.add(&id(1, held), NO_LIMIT).unwrap();
                held += 1;
            }
            let hits = (0..queries).filter(|q| filter.contains(&id(2, *q))).count() as f64;
            let bound = error + 4.0 * (error / queries as f64).sqrt();
            let rate = hits / queries as f64;
            assert!(rate <= bound, "error {error} at {decade}: {rate} > {bound}");
            for i in (0..decade).step_by(97) {
                assert!(filter.contains(&id(1, i)));
            }
        }
    }
}

#[test]
fn bytes_count_every_allocation_at_its_size_class() {
    let mut filter = Segmented::new(100, 0.01, false, SECRET, NO_LIMIT).unwrap();
    for i in 0..20_000 {
        filter.add(&id(3, i), NO_LIMIT).unwrap();
    }
    let segments: u64 = filter.directory.iter().map(|s| s.bytes()).sum();
    assert_eq!(
        filter.bytes(),
        OVERHEAD + filter.directory.bytes() + segments
    );
    // About 14-16 bits an item at 1 %.
    let bits = filter.bytes() as f64 * 8.0 / 20_000.0;
    assert!((10.0..20.0).contains(&bits), "{bits} bits an item");
}

#[test]
fn a_refused_add_changes_nothing() {
    let mut filter = Segmented::new(100, 0.01, false, SECRET, NO_LIMIT).unwrap();
    for i in 0..3000 {
        filter.add(&id(4, i), NO_LIMIT).unwrap();
    }
    let cap = filter.bytes();
    let mut refused = 0;
    for i in 3000..4000 {
        let before = filter.clone();
        if filter.add(&id(4, i), cap) == Err(AddError::CannotGrow) {
            assert_eq!(filter, before);
            refused += 1;
        }
    }
    assert!(refused > 0);
}

#[test]
fn the_secret_keys_the_placement() {
    let mut a = Segmented::new(100, 0.01, false, 1, NO_LIMIT).unwrap();
    let mut b = Segmented::new(100, 0.01, false, 2, NO_LIMIT).unwrap();
    for i in 0..2000 {
        a.add(&id(5, i), NO_LIMIT).unwrap();
        b.add(&id(5, i), NO_LIMIT).unwrap();
    }
    assert_eq!(a.segments(), b.segments());
    let sizes = |f: &Segmented| f.directory.iter().map(Segment::len).collect::<Vec<_>>();
    assert_ne!(sizes(&a), sizes(&b));
}

/// Items chosen to share a segment (possible without a secret, or with a secret read from a
/// dump): the segment stays at its bound, taking every further item into the common prefix
/// of its nearest entry, so no add is refused, no item added (to it or to any other
/// segment) reads absent, and no add's work grows past the bound. Plain and deletable.
#[test]
fn a_crowded_segment_stays_at_its_bound_and_takes_every_item() {
    for deletable in [false, true] {
        let mut filter = Segmented::new(1, 0.01, deletable, 0, NO_LIMIT).unwrap();
        let mut rng = Rng::new(11);
        let mut added = Vec::new();
        for i in 0..(MAX_SEGMENT_ENTRIES + 3000) {
            // The first 4 bits of the string zero: always segment 0 at these sizes.
            let hash = ItemHash {
                a: rng.next() >> 4,
                b: i,
            };
            crate::compact::meter::take();
            assert_eq!(filter.add_hash(hash, NO_LIMIT).map(|_| ()), Ok(()));
            let (work, _) = crate::compact::meter::take();
            assert!(work <= 4 * MAX_SEGMENT_ENTRIES, "work {work}");
            added.push(hash);
        }
        assert_eq!(filter.directory.get(0).unwrap().len(), MAX_SEGMENT_ENTRIES);
        // Ordinary items go on landing everywhere, that segment included.
        for i in 0..20_000 {
            let other = ItemHash {
                a: rng.next(),
                b: i,
            };
            filter.add_hash(other, NO_LIMIT).unwrap();
            added.push(other);
        }
        assert!(added.iter().all(|h| filter.contains_hash(*h)));
        // A plain filter counts the adds of items that read absent.
        match deletable {
            true => assert_eq!(filter.len(), added.len() as u64),
            false => assert!(filter.len() <= added.len() as u64),
        }
        check_consistent(&filter);
        // It loads back as it is, and (deletable) every add deletes.
        let words = filter
            .each_segment()
            .map(|s| s.words().copied().collect())
            .collect();
        assert_eq!(
            Segmented::from_parts(filter.fields(), words, NO_LIMIT).as_ref(),
            Ok(&filter)
        );
        if deletable {
            for h in &added {
                assert_eq!(filter.delete_hash(*h), Ok(true));
            }
            assert_eq!(filter.len(), 0);
        }
    }
}

/// The error rates the schedule's tests walk.
const SCHEDULE_RATES: [f64; 8] = [
    0.5,
    0.1,
    0.01,
    0.0123,
    0.001,
    1e-6,
    1e-9,
    crate::compact::MIN_ERROR,
];

/// A filter's split threshold makes its flat generations' bits whole: from one segment,
/// every one of them holds exactly one bit more than the one before (twice the entries at
/// the same share), where the power-of-two threshold made them rise in pairs at some rates.
#[test]
fn the_split_threshold_makes_the_bits_rise_one_a_generation() {
    let mut rates: Vec<f64> = SCHEDULE_RATES.to_vec();
    let mut rng = Rng::new(0x5911_7e3a);
    rates.extend((0..200).map(|_| (-(rng.below(1 << 20) as f64) / 40_000.0).exp()));
    for error in rates {
        let split = split_items(error);
        assert!(
            (SEGMENT_ITEMS..2 * SEGMENT_ITEMS).contains(&split),
            "{error}: {split}"
        );
        let Some(first) = total_bits(error, 0, 0) else {
            continue;
        };
        for g in 1..FLAT_GENERATIONS {
            let Some(bits) = total_bits(error, 0, g) else {
                break;
            };
            assert_eq!(
                bits,
                first + g,
                "{error}: generation {g} ({split} a segment)"
            );
        }
        // Generation 0 fills its share: one bit less would pass it.
        let most = (split + 1) as f64;
        assert!(
            most * f64::from(first - 1).exp2().recip() / error > share(0),
            "{error}"
        );
    }
}

/// No generation's entries hold fewer bits than an earlier one's: a segment's entries are
/// never longer than what the newest generation gives its address (what the loader checks).
#[test]
fn no_generation_holds_fewer_bits_than_an_earlier_one() {
    for error in SCHEDULE_RATES {
        for first_level in [0, 1, 2, 5] {
            let bits: Vec<u32> = (0..MAX_LEVEL - first_level)
                .map_while(|g| total_bits(error, first_level, g))
                .collect();
            assert!(
                bits.windows(2).all(|w| w[0] <= w[1]),
                "{error} {first_level}: {bits:?}"
            );
        }
    }
}

/// F5 for segments: at the smallest error rate a filter is created with, every generation's
/// fingerprints fit up to the largest directory; at a quarter of it, one does not (the
/// documented limit keeps a little room since generation 0 is counted at what it can reach).
#[test]
fn the_smallest_error_rate_holds_up_to_the_largest_directory() {
    let up_to_largest = |e: f64| (0..MAX_LEVEL).all(|g| total_bits(e, 0, g).is_some());
    assert!(up_to_largest(crate::compact::MIN_ERROR));
    assert!(!up_to_largest(crate::compact::MIN_ERROR / 4.0));
}

/// The schedule's bound: the generations up to any `g`, each full, match an absent item
/// with at most the sum of their shares of the rate (so at most the rate), though whole bits
/// carried forward let some generations hold a bit less than their own share asks; and no
/// generation holds more bits than its share alone asks.
#[test]
fn carried_rounding_keeps_every_generation_within_the_rate() {
    let mut saved = 0;
    for error in SCHEDULE_RATES {
        for first_level in [0, 1, 5] {
            let (mut used, mut shares) = (0.0, 0.0);
            for g in 0..MAX_LEVEL - first_level {
                let Some(bits) = total_bits(error, first_level, g) else {
                    break;
                };
                // Generation 0 ends with the split into 2^(first_level + 1) segments.
                let items = split_items(error) as f64;
                let most = match g {
                    0 => items * (f64::from(first_level + 1).exp2() - 1.0) + 1.0,
                    _ => items * f64::from(first_level + g).exp2(),
                };
                used += most * f64::from(bits).exp2().recip() / error;
                shares += share(g);
                assert!(used <= shares * (1.0 + 1e-12), "{error} {first_level} {g}");
                let alone = (most / (share(g) * error)).log2().ceil() as u32;
                assert!(bits <= alone, "{error} {first_level} {g}: {bits} > {alone}");
                saved += alone - bits;
            }
        }
    }
    assert!(saved > 0);
}

#[test]
fn size_classes_are_jemallocs() {
    let classes = [
        (1, 8),
        (8, 8),
        (9, 16),
        (128, 128),
        (129, 160),
        (160, 160),
        (161, 192),
        (256, 256),
        (257, 320),
        (1_025, 1_280),
        (1_280, 1_280),
        (1_281, 1_536),
        (4_097, 5_120),
        (14_337, 16_384),
    ];
    for (bytes, class) in classes {
        assert_eq!(size_class(bytes), class, "{bytes} bytes");
    }
    for bytes in 129..70_000u64 {
        let step = 1u64 << (63 - (bytes - 1).leading_zeros() - 2);
        assert_eq!(size_class(bytes), bytes.div_ceil(step) * step);
    }
}

#[test]
fn a_keyed_filter_places_items_from_their_first_hash_alone() {
    let keyed = Segmented::new(100, 0.01, false, SECRET, NO_LIMIT).unwrap();
    let unkeyed = Segmented::new(100, 0.01, false, 0, NO_LIMIT).unwrap();
    for i in 0..2000 {
        let item = id(7, i);
        let both = Segmented::hash(&item);
        assert_eq!(unkeyed.hash_of(&item), both);
        assert_eq!(
            placement_bits(keyed.hash_of(&item), SECRET),
            placement_bits(both, SECRET),
            "item {i}"
        );
    }
}

/// A deletable filter adds an entry under a shorter one that matches its item, so a segment
/// can hold a void beside an entry of one bit. Its split makes that entry a void in its
/// half; in the half that stays, beside the void held there: one entry, the counts summed.
/// (Two equal entries made the half refuse to encode, and so the split: the pointer stayed
/// on that segment and every later add that needed a split was refused. A counting filter
/// at 0.5 stopped growing at 10,261,057 entries, 16,669 segments, where 49 segments held
/// both.)
#[test]
fn a_split_merges_a_one_bit_entry_with_the_void_beside_it() {
    let filter = Segmented::new(100, 0.5, true, SECRET, NO_LIMIT).unwrap();
    let entry = |len, fingerprint, count| Entry {
        len,
        fingerprint,
        count,
    };
    let sorted = |mut entries: Vec<Entry>| {
        entries.sort_unstable_by_key(Entry::key);
        entries
    };
    let held = sorted(vec![
        entry(0, 0, 3),
        entry(1, 1, 2),
        entry(2, 0b01, 1),
        entry(1, 0, 4),
    ]);
    let (stay, go, more) = filter.split_of(&held).unwrap();
    // The void (3 adds) stays at its home, the first half; (1, 0) joins it there, (1, 1)
    // becomes the second half's void; (2, 01) goes to the first as (1, 1). Both voids have
    // the halves' depth (the first's made there: the segment held none before).
    assert_eq!(stay.decode().unwrap(), vec![entry(0, 0, 7), entry(1, 1, 1)]);
    assert_eq!(go.decode().unwrap(), vec![entry(0, 0, 2)]);
    assert_eq!((stay.void_depth(), go.void_depth()), (Some(1), Some(1)));
    assert_eq!(more, -1);
    // Nothing is counted past what a counter holds: that split is refused.
    let full = sorted(vec![entry(0, 0, MAX_COUNT), entry(1, 0, 1)]);
    assert!(filter.split_of(&full).is_none());
    let (stay, go, more) = filter
        .split_of(&sorted(vec![entry(0, 0, MAX_COUNT), entry(2, 3, 1)]))
        .unwrap();
    assert_eq!((stay.len(), go.len(), more), (1, 1, 0));
}

/// The same end to end: a counting filter at 0.99 keeps growing past the size where its
/// segments first hold a void beside an entry of one bit (the 13th generation's splits, about
/// 5.1 million entries: without the merge every add that needed a split was refused from
/// there), every add taken, every item held, the counts consistent. The state loads back as
/// it is, before and after deletes of an eighth of the items.
#[test]
fn a_counting_filter_grows_on_past_its_first_voids() {
    let mut filter = Segmented::new(100, 0.99, true, SECRET, NO_LIMIT).unwrap();
    let total = 6_500_000u64;
    for i in 0..total {
        assert!(filter.add(&id(9, i), NO_LIMIT).is_ok(), "add {i}");
    }
    let both = filter.each_segment().filter(|s| {
        let lengths: Vec<u32> = s.decode().unwrap().iter().map(|e| e.len).collect();
        lengths.contains(&0) && lengths.contains(&1)
    });
    assert!(
        both.count() > 0,
        "segments hold a void beside a one-bit entry"
    );
    assert_eq!(filter.len(), total);
    assert!(filter.segments() > 1 << 13);
    assert!((0..total).step_by(101).all(|i| filter.contains(&id(9, i))));
    check_consistent(&filter);
    let loads_back = |filter: &Segmented| {
        let words = filter
            .each_segment()
            .map(|s| s.words().copied().collect())
            .collect();
        let loaded = Segmented::from_parts(filter.fields(), words, NO_LIMIT);
        assert!(loaded.as_ref() == Ok(filter), "it loads back as it is");
    };
    loads_back(&filter);
    for i in (0..total).step_by(8) {
        assert_eq!(filter.delete(&id(9, i)), Ok(true), "delete {i}");
    }
    assert_eq!(filter.len(), total - total.div_ceil(8));
    assert!((1..total)
        .step_by(101)
        .all(|i| i % 8 == 0 || filter.contains(&id(9, i))));
    check_consistent(&filter);
    loads_back(&filter);
    // Every add deleted: nothing is left, no void either, and no item reads present, as
    // in a new filter (splits copied each void with its whole count into both halves, and
    // the copy where its items were not stayed: 0.46 % of never-added items read present).
    for i in (0..total).filter(|i| i % 8 != 0) {
        assert_eq!(filter.delete(&id(9, i)), Ok(true), "delete {i}");
    }
    assert_eq!(
        (filter.len(), filter.entries, filter.voids.len()),
        (0, 0, 0)
    );
    assert!((0..200_000).all(|i| !filter.contains(&id(10, i))));
    check_consistent(&filter);
    loads_back(&filter);
}

/// No lookup walks more of a segment than an ordinary one's block, voids or not: a void is
/// tested apart (its filter knows where they lie), and the block is read at the shortest
/// length of the other entries. (A void made the shortest length 0, so the block was the
/// whole segment: lookups there took about 3x, adds 6x.) Counting, at 0.5, grown until
/// segments hold voids beside other entries; the work is the meter's (entries and words
/// of high bits read).
#[test]
fn a_void_beside_other_entries_widens_no_walk() {
    let mut filter = Segmented::new(1, 0.5, true, SECRET, NO_LIMIT).unwrap();
    let mut i = 0u64;
    while filter.voids.len() < 40 {
        filter.add(&id(12, i), NO_LIMIT).unwrap();
        i += 1;
    }
    let held = |at: u64| filter.directory.get(at).map_or(0, Segment::len);
    let (mut beside, mut ordinary) = ((0u64, 0u64), (0u64, 0u64));
    for k in 0..300_000u64 {
        let bits = placement_bits(Segmented::hash(&id(13, k)), SECRET);
        let (at, _) = filter.locate(bits);
        crate::compact::meter::take();
        filter.contains_bits(bits);
        let (work, _) = crate::compact::meter::take();
        let void_beside = filter.directory.get(at).unwrap().void_depth().is_some() && held(at) > 1;
        let slot = if void_beside {
            &mut beside
        } else {
            &mut ordinary
        };
        *slot = (slot.0.max(work), slot.1 + 1);
    }
    assert!(
        beside.1 > 100,
        "lookups in segments holding a void beside others"
    );
    assert!(
        beside.0 <= ordinary.0,
        "longest walk {beside:?} against {ordinary:?}"
    );
}
