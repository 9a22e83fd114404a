use super::*;
use crate::bloom::{ChunkError, HeaderError};
use crate::rdb::{LoadError, MemoryRdb};
use crate::test_rng::Rng;
use std::collections::HashMap;

const NO_LIMIT: u64 = u64::MAX;
const SEEDS: [u64; 4] = [1, 2, 0x5eed, 0xdead_bee0];

fn id(seed: u64, i: u64) -> Vec<u8> {
    format!("{seed:x}-{i:012}").into_bytes()
}

/// Whether offsets kept up by inserts and deletes agree with the ones rebuilt from the runs
/// (a block marked too large may stay marked after deletes).
fn offsets_agree(table: &Table) -> bool {
    let mut rebuilt = table.clone();
    rebuilt.rebuild_offsets();
    table.offsets.len() == rebuilt.offsets.len()
        && (table.offsets.iter().zip(&rebuilt.offsets))
            .all(|(kept, real)| kept == real || *kept == u16::MAX)
}

/// The table against a plain list of `(quotient, field)`: random inserts and removes keep
/// exactly the entries the list holds, each run in insertion order.
#[test]
fn the_table_holds_what_was_inserted_and_not_what_was_removed() {
    for seed in SEEDS {
        let mut rng = Rng::new(seed);
        let log2 = [6, 8][(seed % 2) as usize];
        let slots = 1u64 << log2;
        let mut table = Table::new(log2, 9).unwrap();
        let mut model: Vec<(u64, u64)> = Vec::new();
        for _ in 0..4000 {
            let remove =
                !model.is_empty() && (model.len() as u64 >= slots * 9 / 10 || rng.below(3) == 0);
            if remove {
                let (q, f) = model.remove(rng.below(model.len() as u64) as usize);
                let run = table.run(q).unwrap();
                let slot = table.run_elements(run).find(|e| e.field == f).unwrap().at;
                table.remove(q, run, slot);
            } else {
                // Crowded quotients, wrapping past the last slot too.
                let q = [0, 1, 62, 63, 64, slots - 1, slots - 2, rng.below(slots)]
                    [rng.below(8) as usize]
                    % slots;
                let f = 1 + rng.below(511);
                assert!(table.insert(q, f));
                model.push((q, f));
            }
            assert!(offsets_agree(&table), "offsets kept up, seed {seed}");
            let mut held = table.entries().expect("consistent runs");
            let mut want = model.clone();
            held.sort_unstable();
            want.sort_unstable();
            assert_eq!(held, want, "seed {seed}");
        }
    }
}

#[test]
fn fingerprints_match_their_extensions_only() {
    let width = 9;
    let fp = table::Fingerprint {
        bits: 0b101,
        len: 3,
    };
    let field = fp.field(width);
    assert_eq!(table::Fingerprint::of_field(field, width), fp);
    assert!(table::Fingerprint::matches(field, 0b1010_1111));
    assert!(table::Fingerprint::matches(field, 0b1010_0000));
    assert!(!table::Fingerprint::matches(field, 0b1000_0000));
    let void = table::Fingerprint { bits: 0, len: 0 };
    assert!(table::Fingerprint::matches(void.field(width), 0b0110_0110));
    let full = table::Fingerprint {
        bits: 0b1100_1100,
        len: 8,
    };
    assert!(table::Fingerprint::matches(full.field(width), 0b1100_1100));
    assert!(!table::Fingerprint::matches(full.field(width), 0b1100_1101));
}

#[test]
fn no_added_item_is_ever_absent_through_expansions() {
    for seed in SEEDS {
        let mut filter = Compact::new(1, 0.01, false, NO_LIMIT).unwrap();
        for i in 0..20_000 {
            let generation = filter.generation;
            assert!(filter.add(&id(seed, i), NO_LIMIT).is_ok());
            if filter.generation != generation {
                filter.validate(NO_LIMIT).unwrap();
                assert!(
                    (0..=i).all(|j| filter.contains(&id(seed, j))),
                    "seed {seed}"
                );
            }
        }
        assert!((0..20_000).all(|j| filter.contains(&id(seed, j))));
        assert!(filter.generation >= 9);
    }
}

/// Random adds and deletes of a multiset: every item added more often than deleted reads
/// present, whatever else was deleted, across expansions.
#[test]
fn deletes_never_cost_another_added_item_its_presence() {
    for seed in SEEDS {
        let mut rng = Rng::new(seed);
        let mut filter = Compact::new(1, 0.1, true, NO_LIMIT).unwrap();
        let mut held: HashMap<u64, u64> = HashMap::new();
        for step in 0..30_000u64 {
            let item = rng.below(3000 + step / 4);
            let count = held.get(&item).copied().unwrap_or(0);
            if count > 0 && rng.below(3) == 0 {
                assert_eq!(filter.delete(&id(seed, item)), Ok(true));
                held.insert(item, count - 1);
            } else {
                filter.add(&id(seed, item), NO_LIMIT).unwrap();
                held.insert(item, count + 1);
            }
            if step % 1000 == 0 {
                filter.validate(NO_LIMIT).unwrap();
                assert!(offsets_agree(&filter.table), "offsets kept up, seed {seed}");
                for (&item, &count) in &held {
                    assert!(
                        count == 0 || filter.contains(&id(seed, item)),
                        "seed {seed}"
                    );
                }
            }
        }
        assert_eq!(filter.len(), held.values().sum::<u64>());
    }
}

#[test]
fn deletes_are_refused_by_the_plain_form() {
    let mut filter = Compact::new(10, 0.01, false, NO_LIMIT).unwrap();
    filter.add(b"a", NO_LIMIT).unwrap();
    assert_eq!(filter.delete(b"a"), Err(DeleteError::NotDeletable));
    assert_eq!(filter.add(b"a", NO_LIMIT), Ok(false));
    assert_eq!(filter.len(), 1);
    let mut counted = Compact::new(10, 0.01, true, NO_LIMIT).unwrap();
    assert_eq!(counted.add(b"a", NO_LIMIT), Ok(true));
    assert_eq!(counted.add(b"a", NO_LIMIT), Ok(false));
    assert_eq!(counted.delete(b"a"), Ok(true));
    assert!(counted.contains(b"a"));
    assert_eq!(counted.delete(b"a"), Ok(true));
    assert!(!counted.contains(b"a"));
    assert_eq!(counted.delete(b"a"), Ok(false));
}

#[test]
fn the_same_items_in_the_same_order_give_the_same_bytes() {
    let build = || {
        let mut f = Compact::new(1, 0.001, true, NO_LIMIT).unwrap();
        for i in 0..5000 {
            f.add(&id(9, i), NO_LIMIT).unwrap();
        }
        f
    };
    assert_eq!(build(), build());
    assert_eq!(build().table_bytes(), build().table_bytes());
}

#[test]
fn a_sparse_filter_converts_with_every_item() {
    let mut sparse = crate::sparse::Sparse::create(2000, 0.01, 2, true, NO_LIMIT, NO_LIMIT)
        .unwrap()
        .unwrap();
    let most = sparse.max_items(NO_LIMIT).unwrap();
    let held: Vec<u64> = (0..500)
        .filter(|&i| sparse.add(&id(4, i), most) == crate::sparse::Added::New)
        .collect();
    assert!(held.len() > 100);
    let compact =
        Compact::from_hashes(sparse.hashes().iter().copied(), 0.01, false, NO_LIMIT).unwrap();
    assert!(held.iter().all(|&i| compact.contains(&id(4, i))));
    assert_eq!(compact.len(), sparse.len());
    compact.validate(NO_LIMIT).unwrap();
}

#[test]
fn creation_refuses_bad_parameters() {
    for error in [0.0, 1.0, -0.1, f64::NAN, 1e-300] {
        assert_eq!(
            Compact::new(100, error, false, NO_LIMIT),
            Err(CreateError::Invalid)
        );
    }
    assert_eq!(
        Compact::new(100, 0.01, false, 100),
        Err(CreateError::TooLarge)
    );
    assert_eq!(
        Compact::new(u64::MAX, 0.01, false, NO_LIMIT),
        Err(CreateError::TooLarge)
    );
}

#[test]
fn a_refused_expansion_leaves_the_filter_as_it_was() {
    let mut filter = Compact::new(1, 0.01, false, NO_LIMIT).unwrap();
    let cap = filter.bytes();
    let mut refused = None;
    for i in 0..1000 {
        let before = filter.clone();
        if let Err(e) = filter.add(&id(3, i), cap) {
            assert_eq!(filter, before);
            refused = Some(e);
            break;
        }
    }
    assert_eq!(refused, Some(AddError::CannotGrow));
}

fn filled(error: f64, deletable: bool, n: u64) -> Compact {
    let mut f = Compact::new(1, error, deletable, NO_LIMIT).unwrap();
    for i in 0..n {
        f.add(&id(5, i), NO_LIMIT).unwrap();
    }
    f
}

#[test]
fn rdb_and_chunks_round_trip_byte_for_byte() {
    for (error, deletable, n) in [
        (0.01, false, 0),
        (0.01, true, 3000),
        (0.001, false, 70_000),
        (0.3, true, 100),
    ] {
        let filter = filled(error, deletable, n);
        let mut rdb = MemoryRdb::new();
        filter.save(&mut rdb);
        assert_eq!(
            Compact::load(&mut rdb, DOUBLING_ENCODING, NO_LIMIT),
            Ok(filter.clone())
        );
        let mut loaded = Compact::from_header(&filter.encode_header(), NO_LIMIT).unwrap();
        assert!(!loaded.is_loaded() || n == 0 && filter.table_bytes().is_empty());
        for (iter, bytes) in filter.chunks() {
            loaded.load_chunk(iter, bytes, NO_LIMIT).unwrap();
        }
        assert_eq!(loaded, filter);
        assert_eq!(loaded.encode_header(), filter.encode_header());
    }
}

/// A filter between LOADCHUNK calls is a value like any other: saved and loaded, dumped and
/// loaded again, it is the same, and its last chunk completes it.
#[test]
fn a_filter_between_chunks_saves_and_loads() {
    let filter = filled(0.01, false, 70_000);
    let chunks: Vec<(i64, Vec<u8>)> = small_chunks(&filter);
    assert!(chunks.len() > 2);
    let mut loading = Compact::from_header(&filter.encode_header(), NO_LIMIT).unwrap();
    let (last, first) = chunks.split_last().unwrap();
    for (iter, bytes) in first {
        loading.load_chunk(*iter, bytes, NO_LIMIT).unwrap();
    }
    assert!(!loading.is_loaded());
    let mut rdb = MemoryRdb::new();
    loading.save(&mut rdb);
    let mut reloaded = Compact::load(&mut rdb, DOUBLING_ENCODING, NO_LIMIT).unwrap();
    assert_eq!(reloaded, loading);
    // Its dump is the bytes it received, which rebuild the same state.
    let mut again = Compact::from_header(&loading.encode_header(), NO_LIMIT).unwrap();
    for (iter, bytes) in loading.chunks() {
        again.load_chunk(iter, bytes, NO_LIMIT).unwrap();
    }
    assert_eq!(again, loading);
    reloaded.load_chunk(last.0, &last.1, NO_LIMIT).unwrap();
    assert_eq!(reloaded, filter);
    // Bytes past those received are refused.
    let mut rdb = MemoryRdb::new();
    let mut tampered = loading.clone();
    if let Some(byte) = tampered.table.bytes.last_mut() {
        *byte = 1;
    }
    tampered.save(&mut rdb);
    assert!(Compact::load(&mut rdb, DOUBLING_ENCODING, NO_LIMIT).is_err());
}

/// The table in chunks of a few kilobytes, as LOADCHUNK could receive them.
fn small_chunks(filter: &Compact) -> Vec<(i64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut at = 0usize;
    let mut stream = filter.table_bytes().to_vec();
    stream.extend_from_slice(filter.old_table_bytes().unwrap_or_default());
    for piece in stream.chunks(4096) {
        at += piece.len();
        out.push((at as i64 + 1, piece.to_vec()));
    }
    out
}

#[test]
fn every_creatable_filter_passes_the_validator() {
    let mut rng = Rng::new(77);
    for _ in 0..300 {
        let error = (rng.below(1_000_000) + 1) as f64 / 1_000_001.0;
        let error = error.powi(1 + rng.below(8) as i32);
        let capacity = rng.below(5000);
        let deletable = rng.below(2) == 0;
        let Ok(mut filter) = Compact::new(capacity, error, deletable, NO_LIMIT) else {
            assert!(width_for(error, 0).is_none(), "{error}");
            continue;
        };
        filter.validate(NO_LIMIT).unwrap();
        for i in 0..rng.below(3000) {
            filter.add(&id(6, i), NO_LIMIT).unwrap();
        }
        filter.validate(NO_LIMIT).unwrap();
        assert!(filter.validate(filter.bytes() - 1).is_err());
    }
}

#[test]
fn bad_payloads_are_refused() {
    let filter = filled(0.01, true, 400);
    let good = filter.encode_header();
    let mut wrong_magic = good.clone();
    wrong_magic[7] = b'X';
    assert_eq!(
        Compact::from_header(&wrong_magic, NO_LIMIT),
        Err(HeaderError::BadData)
    );
    assert_eq!(
        Compact::from_header(&good[..51], NO_LIMIT),
        Err(HeaderError::BadData)
    );
    assert_eq!(Compact::from_header(&good, 100), Err(HeaderError::TooLarge));
    for at in 12..52 {
        let mut bad = good.clone();
        bad[at] ^= 0x40;
        if let Ok(mut f) = Compact::from_header(&bad, NO_LIMIT) {
            // A header that still reads as a filter: its table must then fit the header.
            for (iter, bytes) in filter.chunks() {
                if f.load_chunk(iter, bytes, NO_LIMIT).is_err() {
                    break;
                }
            }
            assert!(!f.is_loaded() || f.validate(NO_LIMIT).is_ok());
        }
    }
    // Table bytes flipped one at a time: refused, or still a valid table.
    let mut rng = Rng::new(8);
    for _ in 0..300 {
        let mut rdb = MemoryRdb::new();
        filter.save(&mut rdb);
        let mut fields: Vec<_> = rdb.fields.into_iter().collect();
        if let Some(crate::rdb::Field::Buffer(table)) = fields.last_mut() {
            let at = rng.below(table.len() as u64) as usize;
            table[at] ^= 1 << rng.below(8);
        }
        let mut rdb = MemoryRdb {
            fields: fields.into(),
        };
        if let Ok(f) = Compact::load(&mut rdb, DOUBLING_ENCODING, NO_LIMIT) {
            f.validate(NO_LIMIT).unwrap();
        }
    }
    let mut short = MemoryRdb::new();
    filter.save(&mut short);
    short.fields.pop_back();
    assert_eq!(
        Compact::load(&mut short, DOUBLING_ENCODING, NO_LIMIT),
        Err(LoadError::Io)
    );
    assert_eq!(
        Compact::load(&mut MemoryRdb::new(), 4, NO_LIMIT),
        Err(LoadError::UnknownVersion(4))
    );
    // Chunks out of place.
    let mut loading = Compact::from_header(&good, NO_LIMIT).unwrap();
    let (iter, bytes) = filter.chunks().next().unwrap();
    assert_eq!(
        loading.load_chunk(iter + 1, bytes, NO_LIMIT),
        Err(ChunkError::NoLink)
    );
    assert_eq!(
        loading.load_chunk(0, bytes, NO_LIMIT),
        Err(ChunkError::BadData)
    );
    let mut long = bytes.to_vec();
    long.push(0);
    assert_eq!(
        loading.load_chunk(iter + 1, &long, NO_LIMIT),
        Err(ChunkError::TooBig)
    );
    // Every slot occupied and ending a run: no empty slot, no cluster start.
    let corrupt = vec![0xff; bytes.len()];
    assert_eq!(
        loading.load_chunk(iter, &corrupt, NO_LIMIT),
        Err(ChunkError::BadData)
    );
    assert!(!loading.is_loaded());
    assert_eq!(loading.add(b"x", NO_LIMIT), Err(AddError::Loading));
    loading.load_chunk(iter, bytes, NO_LIMIT).unwrap();
    assert_eq!(loading, filter);
}

/// Absent items that read present, out of `queries`.
fn false_positives(filter: &Compact, seed: u64, queries: u64) -> u64 {
    (0..queries)
        .filter(|i| filter.contains(format!("absent-{seed}-{i}").as_bytes()))
        .count() as u64
}

/// Fails if more false positives than `ε·queries` plus four standard deviations.
fn within_bound(count: u64, error: f64, queries: u64) -> bool {
    let mean = error * queries as f64;
    (count as f64) <= mean + 4.0 * (mean * (1.0 - error)).sqrt()
}

/// The measured rate stays within the bound at every size up to 2^20 items, checked right
/// after each expansion (the highest point: no entry's share changes when the table doubles,
/// and the ones added since the last doubling add theirs).
#[test]
fn the_false_positive_rate_stays_within_the_bound_at_every_size() {
    for (error, seed) in [(0.01, 1), (0.001, 2), (0.01, 3)] {
        let queries = (40.0 / error) as u64;
        let mut filter = Compact::new(1, error, false, NO_LIMIT).unwrap();
        let mut generation = 0;
        let mut checked = 0;
        for i in 0..(1u64 << 20) {
            filter.add(&id(seed, i), NO_LIMIT).unwrap();
            if filter.generation != generation || i + 1 == 1 << 20 {
                generation = filter.generation;
                let count = false_positives(&filter, seed + i, queries);
                assert!(
                    within_bound(count, error, queries),
                    "{error} at {i}: {count}/{queries}"
                );
                checked += 1;
            }
        }
        assert!(checked >= 14);
    }
}

/// One quotient holding 70,000 different fingerprints among other entries: a run longer
/// than a block offset holds, whose blocks are then found by walking; everything stays
/// findable, and the offsets kept up match the ones rebuilt.
#[test]
fn a_run_longer_than_an_offset_holds_is_found_by_walking() {
    let mut rng = Rng::new(11);
    let mut table = Table::new(18, 20).unwrap();
    let mut others = Vec::new();
    for _ in 0..2000 {
        let (q, f) = (rng.below(1 << 18), 1 + rng.below((1 << 20) - 1));
        if table.insert(q, f) {
            others.push((q, f));
        }
    }
    let long = 1000;
    for k in 0..70_000u64 {
        assert!(table.insert(long, 2 * k + 1));
        if k % 10_000 == 0 {
            assert!(offsets_agree(&table), "offsets kept up after {k} inserts");
        }
    }
    assert!(table.offsets.contains(&u16::MAX));
    let contains = |t: &Table, q: u64, f: u64| {
        t.run(q)
            .is_some_and(|run| t.run_elements(run).any(|e| e.field == f))
    };
    assert!(others.iter().all(|&(q, f)| contains(&table, q, f)));
    for k in 0..69_999u64 {
        let run = table.run(long).unwrap();
        let slot = table
            .run_elements(run)
            .find(|e| e.field == 2 * k + 1)
            .unwrap()
            .at;
        table.remove(long, run, slot);
        if k % 10_000 == 0 {
            assert!(offsets_agree(&table), "offsets kept up after {k} removes");
        }
    }
    assert!(contains(&table, long, 2 * 69_999 + 1));
    assert!(others.iter().all(|&(q, f)| contains(&table, q, f)));
    assert!(table.entries().is_some());
}

/// An item added `c` times to a deletable filter is one entry and a counter: it costs
/// about `2 log2(c)` bits more than one add, deletes succeed exactly `c` times, and the
/// other items stay.
#[test]
fn duplicates_are_counted_not_stored() {
    for (error, c) in [(0.01, 2u64), (0.01, 1000), (0.5, 100_000), (0.001, 70_000)] {
        let mut filter = Compact::new(1, error, true, NO_LIMIT).unwrap();
        for i in 0..500 {
            filter.add(&id(12, i), NO_LIMIT).unwrap();
        }
        let (slots, entries) = (filter.table.slots(), filter.entries);
        for k in 0..c {
            assert_eq!(filter.add(b"again", NO_LIMIT), Ok(k == 0));
        }
        assert_eq!(filter.table.slots(), slots, "{error} {c}: no doubling");
        // A lookup, an add and a delete of the item read a few slots, however many adds.
        meter::take();
        assert!(filter.contains(b"again"));
        filter.add(b"again", NO_LIMIT).unwrap();
        assert_eq!(filter.delete(b"again"), Ok(true));
        let (work, doubling) = meter::take();
        assert!(work < 300 && doubling == 0, "{error} {c}: {work} slots");
        let width = u64::from(filter.table.width);
        let extra = filter.entries - entries;
        let pairs = extra.saturating_sub(1) / 2;
        assert!(
            pairs as f64 <= (c as f64).log2() / (width as f64 - 1.0) + 1.0,
            "{pairs}"
        );
        filter.validate(NO_LIMIT).unwrap();
        assert_eq!(filter.len(), 500 + c);
        for k in 0..c {
            assert_eq!(
                filter.delete(b"again"),
                Ok(true),
                "{error}: delete {k} of {c}"
            );
            if k % 997 == 0 {
                filter.validate(NO_LIMIT).unwrap();
            }
        }
        assert_eq!(filter.entries, entries);
        assert!((0..500).all(|i| filter.contains(&id(12, i))));
        filter.validate(NO_LIMIT).unwrap();
    }
}

/// Counters against a multiset model at the table level: random increments and
/// decrements of entries on crowded quotients keep exactly the counts the model holds.
#[test]
fn counters_hold_the_counts_of_a_multiset() {
    for seed in SEEDS {
        let mut rng = Rng::new(seed);
        let log2 = 8;
        let slots = 1u64 << log2;
        let width = [2, 3, 9][(seed % 3) as usize];
        let mut table = Table::new(log2, width).unwrap();
        let mut model: std::collections::BTreeMap<(u64, u64), u64> = Default::default();
        let mut used = 0u64;
        for step in 0..3000 {
            let q = [0, 1, 63, 64, slots - 1, rng.below(slots)][rng.below(6) as usize];
            let f = 1 + rng.below((1 << width) - 1);
            let count = model.get(&(q, f)).copied().unwrap_or(0);
            let grow = used + 2 < slots * 9 / 10 && (count == 0 || rng.below(2) == 0);
            let element = table
                .run(q)
                .and_then(|run| table.run_elements(run).find(|e| e.field == f));
            assert_eq!(
                element.map_or(0, |e| e.count),
                count,
                "seed {seed} step {step}"
            );
            let new = match (grow, element) {
                (true, None) => {
                    assert!(table.insert(q, f));
                    used += 1;
                    1
                }
                (true, Some(e)) => {
                    let add = 1 + rng.below(50);
                    used = used.saturating_add_signed(table.set_count(q, e, count + add).unwrap());
                    count + add
                }
                (false, Some(e)) if e.count > 1 => {
                    used = used.saturating_add_signed(table.set_count(q, e, count - 1).unwrap());
                    count - 1
                }
                (false, Some(e)) => {
                    table.remove(q, table.run(q).unwrap(), e.at);
                    used -= 1;
                    0
                }
                (false, None) => 0,
            };
            model.insert((q, f), new);
            assert!(offsets_agree(&table), "seed {seed} step {step}");
            assert_eq!(table.entries().map(|e| e.len() as u64), Some(used));
        }
        for (&(q, f), &count) in &model {
            let held = table
                .run(q)
                .and_then(|run| table.run_elements(run).find(|e| e.field == f));
            assert_eq!(held.map_or(0, |e| e.count), count, "seed {seed}");
        }
    }
}

/// Many adds of one item: `0.5` error, deletable, 100,000 adds of one item, then random adds of
/// new items and deletes of items with adds outstanding (half of them of the first item),
/// checked against a multiset. A table whose block offsets drift (a block before a saturated
/// one missing its bump, at step 9,423) fails here: a delete then breaks the table's metadata.
#[test]
fn heavy_duplicates_then_adds_and_deletes_keep_every_item() {
    let mut rng = Rng::new(4);
    let mut filter = Compact::new(1, 0.5, true, NO_LIMIT).unwrap();
    let mut held: std::collections::BTreeMap<u64, u64> = Default::default();
    for _ in 0..100_000 {
        filter.add(&id(4, 0), NO_LIMIT).unwrap();
    }
    held.insert(0, 100_000);
    let mut next = 1u64;
    for step in 0..12_000u64 {
        let dice = rng.below(6);
        let touched = if dice < 3 {
            let live: Vec<u64> = held
                .iter()
                .filter(|(_, c)| **c > 0)
                .map(|(k, _)| *k)
                .collect();
            let item = match held.get(&0) {
                Some(c) if *c > 0 && dice > 0 => 0,
                _ => live[rng.below(live.len() as u64) as usize],
            };
            assert_eq!(filter.delete(&id(4, item)), Ok(true), "step {step}");
            *held.entry(item).or_default() -= 1;
            item
        } else {
            filter.add(&id(4, next), NO_LIMIT).unwrap();
            held.insert(next, 1);
            next += 1;
            next - 1
        };
        let full = step % 500 == 0;
        let absent = held
            .iter()
            .filter(|(k, c)| **c > 0 && (full || **k == touched))
            .find(|(k, _)| !filter.contains(&id(4, **k)));
        assert_eq!(absent, None, "step {step}");
        if step % 100 == 0 {
            assert!(offsets_agree(&filter.table), "offsets kept up, step {step}");
        }
        if full {
            filter.validate(NO_LIMIT).unwrap();
            let mut rdb = MemoryRdb::new();
            filter.save(&mut rdb);
            assert_eq!(
                Compact::load(&mut rdb, DOUBLING_ENCODING, NO_LIMIT).as_ref(),
                Ok(&filter)
            );
        }
    }
}

/// Encoding 1's values (a repeated entry per add) load, by RDB and by chunks under header
/// version 1, converted to counters; one with nothing repeated loads as it was.
#[test]
fn encoding_1_values_load_converted() {
    let mut filter = filled(0.01, true, 300);
    let mut plain = filter.clone();
    let (quotient, field) = filter.fresh(Compact::hash(b"again"));
    for _ in 0..5 {
        assert!(filter.table.insert(quotient, field));
    }
    filter.entries += 5;
    filter.items += 5;
    assert_eq!(
        filter.validate(NO_LIMIT),
        Err(LoadError::Invalid("counters"))
    );
    for (v1, same) in [(&filter, false), (&mut plain, true)] {
        let mut rdb = MemoryRdb::new();
        v1.save_as(&mut rdb, 1);
        let loaded = Compact::load(&mut rdb, 1, NO_LIMIT).unwrap();
        loaded.validate(NO_LIMIT).unwrap();
        assert_eq!(&loaded == v1, same);
        let mut header = v1.encode_header();
        header[8] = 1;
        let mut chunked = Compact::from_header(&header, NO_LIMIT).unwrap();
        assert_eq!(chunked.encode_header(), header, "one header for one filter");
        for (iter, bytes) in v1.chunks() {
            chunked.load_chunk(iter, bytes, NO_LIMIT).unwrap();
        }
        assert_eq!(chunked, loaded);
        assert!((0..300).all(|i| loaded.contains(&id(5, i))));
        if !same {
            let mut loaded = loaded;
            assert!(loaded.table.slots() > filter.table.slots());
            for _ in 0..5 {
                assert_eq!(loaded.delete(b"again"), Ok(true));
            }
            loaded.validate(NO_LIMIT).unwrap();
        }
    }
}
/// F5: the smallest error rate taken is one whose fingerprints fit a slot up to the
/// largest table; a tighter one is refused at creation, not after millions of adds.
#[test]
fn the_error_rate_is_honoured_up_to_the_largest_table() {
    let up_to_largest =
        |e: f64| (0..=MAX_LOG2_SLOTS - MIN_LOG2_SLOTS).all(|g| width_for(e, g).is_some());
    assert!(up_to_largest(DOUBLING_MIN_ERROR));
    assert!(!up_to_largest(DOUBLING_MIN_ERROR * 0.999));
    assert!(Compact::new(1, DOUBLING_MIN_ERROR, true, NO_LIMIT).is_ok());
    for error in [DOUBLING_MIN_ERROR * 0.999, 1e-15] {
        assert_eq!(
            Compact::new(1, error, false, NO_LIMIT),
            Err(CreateError::Invalid)
        );
    }
}

/// A value the validator accepts, crafted at random: any table size and generation, entries
/// at random quotients (or packed from slot 0), void entries from none to all, counters.
fn crafted(rng: &mut Rng) -> Compact {
    let log2 = 6 + rng.below(5) as u32;
    let error = [0.5, 0.01, 0.3][rng.below(3) as usize];
    let generation = rng.below(u64::from(log2 - MIN_LOG2_SLOTS) + 1) as u32;
    let width = width_for(error, generation).unwrap();
    let deletable = rng.below(3) > 0;
    let mut table = Table::new(log2, width).unwrap();
    let slots = table.slots();
    let (voids, packed) = ([0, 2, 10, 10][rng.below(4) as usize], rng.below(3) == 0);
    let target = rng.below(max_entries(slots) + 1);
    let (mut entries, mut items) = (0u64, 0u64);
    let void = Fingerprint { bits: 0, len: 0 }.field(width);
    while entries + 3 <= target {
        let q = if packed {
            entries % slots
        } else {
            rng.below(slots)
        };
        let field = if rng.below(10) < voids {
            void
        } else {
            let len = 1 + rng.below(u64::from(width) - 1) as u32;
            let bits = rng.below(1 << len);
            Fingerprint { bits, len }.field(width)
        };
        let existing = table
            .run(q)
            .and_then(|run| table.run_elements(run).find(|e| e.field == field));
        if existing.is_some() {
            continue;
        }
        assert!(table.insert(q, field));
        entries += 1;
        items += 1;
        if deletable && rng.below(4) == 0 {
            let e = table
                .run(q)
                .and_then(|run| table.run_elements(run).find(|e| e.field == field))
                .unwrap();
            let count = 2 + rng.below(5000);
            entries = entries.saturating_add_signed(table.set_count(q, e, count).unwrap());
            items += count - 1;
        }
    }
    table.rebuild_offsets();
    let mut filter = Compact {
        error,
        generation,
        deletable,
        items,
        entries,
        received: table.bytes.len() as u64,
        fresh_bits: fingerprint_bits(error, generation).unwrap(),
        legacy: false,
        kept: false,
        next_width: next_width(error, generation, width),
        table,
        moved: 0,
        doubling: None,
        walks: None,
    };
    filter.settle(NO_LIMIT).unwrap();
    filter
}

/// F1: whatever the validator accepts, every add and delete either leaves a value it
/// accepts or is refused with nothing changed (crafted values, void-heavy ones included).
#[test]
fn every_operation_keeps_an_accepted_value_valid() {
    let mut rng = Rng::new(0xf1);
    let (mut refused, mut mid, mut finished) = (0, 0, 0);
    for case in 0..300 {
        let mut filter = crafted(&mut rng);
        filter
            .validate(NO_LIMIT)
            .unwrap_or_else(|e| panic!("case {case}: {e:?}"));
        let mut added: Vec<u64> = Vec::new();
        for op in 0..300u64 {
            let before = filter.clone();
            let item = if !added.is_empty() && rng.below(3) == 0 {
                added.swap_remove(rng.below(added.len() as u64) as usize)
            } else {
                u64::MAX
            };
            meter::take();
            let changed = if item != u64::MAX && filter.is_deletable() {
                filter.delete(&id(case, item)).is_ok()
            } else {
                let fresh = 1_000_000 + op;
                let ok = filter.add(&id(case, fresh), NO_LIMIT).is_ok();
                if ok {
                    added.push(fresh);
                }
                ok
            };
            mid += u64::from(filter.doubling.is_some());
            finished += u64::from(meter::take().1 > 0);
            if changed {
                filter
                    .validate(NO_LIMIT)
                    .unwrap_or_else(|e| panic!("case {case} op {op}: {e:?}"));
            } else {
                assert_eq!(filter, before, "case {case} op {op}: refused, yet changed");
                refused += 1;
            }
        }
    }
    assert!(
        refused > 0,
        "some crafted values are too full of voids to double"
    );
    // Doublings in progress were met, and some crafted values crowded with voids filled the
    // new table before their doubling ended, which the add then finished at once.
    assert!(mid > 1000 && finished > 0, "{mid} {finished}");
}

/// F1's value: 2048 slots, slots 0..1842 each a void entry of its own quotient, deletable.
/// Its doubling would be as full as it is: the add is refused, the value stays loadable.
#[test]
fn a_table_of_voids_refuses_the_add_that_cannot_fit() {
    let (error, generation, log2) = (0.01, 5, 11);
    let width = width_for(error, generation).unwrap();
    let mut table = Table::new(log2, width).unwrap();
    let void = Fingerprint { bits: 0, len: 0 }.field(width);
    for q in 0..1843 {
        assert!(table.insert(q, void));
    }
    table.rebuild_offsets();
    let mut filter = Compact {
        error,
        generation,
        deletable: true,
        items: 1843,
        entries: 1843,
        received: table.bytes.len() as u64,
        fresh_bits: fingerprint_bits(error, generation).unwrap(),
        legacy: false,
        kept: false,
        next_width: next_width(error, generation, width),
        table,
        moved: 0,
        doubling: None,
        walks: None,
    };
    filter.settle(NO_LIMIT).unwrap();
    filter.validate(NO_LIMIT).unwrap();
    let before = filter.clone();
    assert_eq!(filter.add(b"x", NO_LIMIT), Err(AddError::CannotGrow));
    assert_eq!(filter, before);
    assert_eq!(filter.delete(b"x"), Ok(true));
    filter.validate(NO_LIMIT).unwrap();
}

/// Every state a doubling passes through saves and loads back identical (RDB and chunks),
/// answers as the items added say, and a copy given the same writes reaches the same bytes.
#[test]
fn every_state_of_a_doubling_round_trips_and_holds_every_item() {
    for (error, deletable) in [(0.5, true), (0.01, false), (0.3, true)] {
        let mut filter = Compact::new(1, error, deletable, NO_LIMIT).unwrap();
        let mut mid = 0;
        let mut held: Vec<u64> = Vec::new();
        let mut rng = Rng::new(26);
        for i in 0..3000u64 {
            if deletable && !held.is_empty() && rng.below(4) == 0 {
                let k = held.swap_remove(rng.below(held.len() as u64) as usize);
                assert_eq!(filter.delete(&id(9, k)), Ok(true));
            } else {
                let k = if rng.below(5) == 0 && !held.is_empty() {
                    held[rng.below(held.len() as u64) as usize]
                } else {
                    i
                };
                filter.add(&id(9, k), NO_LIMIT).unwrap();
                held.push(k);
            }
            if filter.doubling.is_none() {
                continue;
            }
            mid += 1;
            filter.validate(NO_LIMIT).unwrap();
            let mut rdb = MemoryRdb::new();
            filter.save(&mut rdb);
            let loaded = Compact::load(&mut rdb, DOUBLING_ENCODING, NO_LIMIT).unwrap();
            assert_eq!(loaded, filter);
            let mut chunked = Compact::from_header(&filter.encode_header(), NO_LIMIT).unwrap();
            for (iter, bytes) in small_chunks(&filter) {
                chunked.load_chunk(iter, &bytes, NO_LIMIT).unwrap();
            }
            assert_eq!(chunked, filter);
            // The same write on the loaded copy reaches the same bytes.
            let mut again = filter.clone();
            let mut replay = loaded;
            for f in [&mut again, &mut replay] {
                f.add(b"probe", NO_LIMIT).unwrap();
            }
            assert_eq!(again, replay);
            assert!(held.iter().all(|k| filter.contains(&id(9, *k))));
        }
        assert!(
            mid > 100,
            "{error}: {mid} writes saw a doubling in progress"
        );
    }
}

/// The work of a write stays bounded while the table grows through many doublings: no
/// write moves more than a fixed number of runs (the meter counts slots read and moved).
#[test]
fn no_write_does_more_than_a_bounded_step_of_a_doubling() {
    let mut filter = Compact::new(1, 0.01, true, NO_LIMIT).unwrap();
    let mut most = 0;
    meter::take();
    for i in 0..200_000u64 {
        filter.add(&id(11, i), NO_LIMIT).unwrap();
        let (work, whole) = meter::take();
        assert_eq!(whole, 0, "no doubling is finished at once");
        most = most.max(work);
    }
    assert!(filter.summary().generation >= 11);
    assert!(most < 2000, "most work of one add: {most}");
}

/// The cost of a run read without splitting it (`run_cost`'s shortcut) is the split's, in
/// filters full of short fingerprints, voids and counters: `moved` is kept by the one and
/// recomputed by the loader with the other.
#[test]
fn a_runs_cost_read_directly_is_the_splits() {
    for (error, deletable, seed) in [(0.5, true, 1), (0.5, false, 2), (0.01, true, 3)] {
        let mut filter = Compact::new(1, error, deletable, NO_LIMIT).unwrap();
        let mut rng = Rng::new(seed);
        for i in 0..20_000u64 {
            // Heavy duplicates: a tenth of the adds repeat one of a few items.
            let item = if rng.below(10) == 0 {
                id(seed, rng.below(5))
            } else {
                id(seed, i + 5)
            };
            assert!(filter.add(&item, NO_LIMIT).is_ok());
            if i % 997 != 0 {
                continue;
            }
            let next = filter.next_width();
            for x in 0..filter.table.slots() {
                let split = doubling::run_split(&filter.table, x, next, deletable);
                assert_eq!(
                    doubling::run_cost(&filter.table, x, next, deletable),
                    doubling::cost(&split, next),
                    "error {error} deletable {deletable} quotient {x} after {i} adds"
                );
            }
        }
    }
}

/// An encoding-1 value of `n` adds' entries (one in two items added twice, so a repeated
/// entry each), the table three quarters full, as a release before counters wrote it.
fn encoding_1_with_repeats(n: u64) -> (Compact, u64) {
    let mut filter = filled(0.01, true, n);
    assert!(filter.migrate(u64::MAX));
    // A fresh table of the same shape, without the counters the adds made.
    filter.table = Table::new(filter.table.log2_slots, filter.table.width).unwrap();
    let room = max_entries(filter.table.slots()) * 3 / 4;
    let mut seen = std::collections::HashSet::new();
    let (mut entries, mut repeats) = (0u64, 0u64);
    for i in 0..n {
        let (quotient, field) = filter.fresh(Compact::hash(&id(5, i)));
        if !seen.insert((quotient, field)) {
            continue;
        }
        let copies = 1 + (i % 2);
        if entries + copies > room {
            break;
        }
        for _ in 0..copies {
            assert!(filter.table.insert(quotient, field));
        }
        entries += copies;
        repeats += copies - 1;
    }
    filter.entries = entries;
    filter.items = entries;
    (filter, repeats)
}

/// The figure of the compact kind's page: what completing an encoding-1 value with repeated
/// entries costs (its one doubling, which merges them), by LOADCHUNK of its header version 1
/// chunks and by an RDB load. `cargo test --profile tests --lib
/// compact::tests::completing_an_encoding_1_value_with_repeats_costs_one_doubling -- --ignored
/// --nocapture`
#[test]
#[ignore]
fn completing_an_encoding_1_value_with_repeats_costs_one_doubling() {
    fn fastest(mut run: impl FnMut() -> std::time::Duration) -> std::time::Duration {
        (0..3).map(|_| run()).min().unwrap_or_default()
    }
    for n in [100_000u64, 400_000, 1_600_000] {
        let (filter, repeats) = encoding_1_with_repeats(n);
        let mut header = filter.encode_header();
        header[8] = 1;
        let empty = Compact::from_header(&header, NO_LIMIT).unwrap();
        let chunks: Vec<_> = filter.chunks().collect();
        let (last_iter, last_bytes) = *chunks.last().unwrap();
        let last = fastest(|| {
            let mut c = empty.clone();
            for &(iter, bytes) in &chunks[..chunks.len() - 1] {
                c.load_chunk(iter, bytes, NO_LIMIT).unwrap();
            }
            let t = std::time::Instant::now();
            c.load_chunk(last_iter, last_bytes, NO_LIMIT).unwrap();
            let time = t.elapsed();
            assert!(c.table.slots() > filter.table.slots(), "doubled");
            time
        });
        let mut rdb = MemoryRdb::new();
        filter.save_as(&mut rdb, 1);
        let load = fastest(|| {
            let mut r = rdb.clone();
            let t = std::time::Instant::now();
            let _ = Compact::load(&mut r, 1, NO_LIMIT).unwrap();
            t.elapsed()
        });
        eprintln!(
            "encoding 1: {} entries ({repeats} repeated), {} bytes in {} chunks: \
             last chunk {last:?}, RDB load {load:?}",
            filter.entries,
            filter.bytes(),
            chunks.len(),
        );
    }
}
