//! The compact kind's value: encoding 4 through RDB and chunks at every split position and
//! mid-arrival, older encodings converted with every item, crafted values refused.

use super::segments::{Arrival, SEGMENTS_HEADER};
use super::*;
use crate::bloom::ChunkError;
use crate::rdb::{LoadError, MemoryRdb, RdbWrite};
use crate::test_rng::Rng;

const NO_LIMIT: u64 = u64::MAX;

fn id(seed: u64, i: u64) -> Vec<u8> {
    format!("filter-{seed}-{i:010}").into_bytes()
}

/// A filter of `n` distinct items (each added 1 to 3 times when deletable).
fn grown(error: f64, deletable: bool, n: u64) -> CompactFilter {
    let mut filter = CompactFilter::new(error, deletable, 0xabc, NO_LIMIT).unwrap();
    for i in 0..n {
        for _ in 0..if deletable { 1 + i % 3 } else { 1 } {
            filter.add(&id(1, i), NO_LIMIT).unwrap();
        }
    }
    filter
}

fn saved(filter: &CompactFilter) -> MemoryRdb {
    let mut rdb = MemoryRdb::new();
    filter.save(&mut rdb);
    rdb
}

fn rechunked(filter: &CompactFilter) -> CompactFilter {
    let mut copy = CompactFilter::from_header(&filter.encode_header(), NO_LIMIT).unwrap();
    for (iter, bytes) in filter.each_chunk() {
        copy.load_chunk(iter, &bytes, NO_LIMIT).unwrap();
    }
    copy
}

/// Chunks grouping whole segments within a limit (what the AOF rewrite emits) load as
/// SCANDUMP's do; a segment larger than the limit comes alone. (At 0.5 a segment is small
/// enough that SCANDUMP's chunks, 1 KiB in tests, group several.)
#[test]
fn chunks_within_a_limit_load_as_scandumps_do() {
    let mut filter = CompactFilter::new(0.5, true, 0xabc, NO_LIMIT).unwrap();
    for i in 0..6000u64 {
        filter.add(&id(2, i), NO_LIMIT).unwrap();
    }
    let whole = filter.each_chunk().count();
    for limit in [1u64, 300, 500, u64::MAX] {
        let mut copy = CompactFilter::from_header(&filter.encode_header(), NO_LIMIT).unwrap();
        let (mut iter, mut chunks) = (1, 0);
        while let Some((next, bytes)) = filter.chunk_within(iter, limit) {
            let segments = next - iter;
            assert!(
                segments == 1 || bytes.len() as u64 <= limit,
                "{limit}: {segments}"
            );
            copy.load_chunk(next, &bytes, NO_LIMIT).unwrap();
            (iter, chunks) = (next, chunks + 1);
        }
        assert_eq!(copy, filter, "{limit}");
        if limit <= 500 {
            assert!(chunks > whole, "{limit}: {chunks} chunks, SCANDUMP {whole}");
        } else if limit == u64::MAX {
            assert_eq!(chunks, whole);
        }
    }
}

#[test]
fn every_split_position_round_trips_through_rdb_and_chunks() {
    for deletable in [false, true] {
        let mut filter = CompactFilter::new(0.01, deletable, 0xabc, NO_LIMIT).unwrap();
        for i in 0..6000u64 {
            filter.add(&id(2, i), NO_LIMIT).unwrap();
            if i % 97 == 0 || i == 5999 {
                filter.validate(NO_LIMIT).unwrap();
                let loaded =
                    CompactFilter::load(&mut saved(&filter), ENCODING_VERSION, NO_LIMIT).unwrap();
                assert_eq!(loaded, filter);
                assert_eq!(rechunked(&filter), filter);
            }
        }
        assert!(filter.each_chunk().count() > 3, "many chunks in tests");
        assert!((0..6000).all(|i| filter.contains(&id(2, i))));
    }
}

#[test]
fn a_filter_between_chunks_saves_loads_and_completes() {
    let filter = grown(0.01, true, 5000);
    let chunks: Vec<_> = filter.each_chunk().collect();
    let mut arriving = CompactFilter::from_header(&filter.encode_header(), NO_LIMIT).unwrap();
    for (k, (iter, bytes)) in chunks.iter().enumerate() {
        assert!(!arriving.is_loaded());
        assert!(
            !arriving.contains(&id(1, 0)),
            "nothing reads present while arriving"
        );
        assert_eq!(arriving.add(b"x", NO_LIMIT), Err(AddError::Loading));
        assert_eq!(arriving.delete(b"x"), Err(DeleteError::Loading));
        // Its RDB, its dump and its AOF rewrite give the same state.
        let loaded =
            CompactFilter::load(&mut saved(&arriving), ENCODING_VERSION, NO_LIMIT).unwrap();
        assert_eq!(loaded, arriving);
        assert_eq!(rechunked(&arriving), arriving);
        // A chunk that does not continue the received segments is refused, changing nothing.
        if let Some((other, other_bytes)) = chunks.get(k + 1) {
            let before = arriving.clone();
            assert_eq!(
                arriving.load_chunk(*other, other_bytes, NO_LIMIT),
                Err(ChunkError::NoLink)
            );
            assert_eq!(arriving, before);
        }
        arriving.load_chunk(*iter, bytes, NO_LIMIT).unwrap();
    }
    assert_eq!(arriving, filter);
}

/// Every field of a genuine header changed (each byte, three ways) and every byte of its
/// chunks flipped: refused, or a value the validator accepts whose items behave.
#[test]
fn edited_headers_and_chunks_load_valid_or_are_refused() {
    let filter = grown(0.01, true, 3000);
    let header = filter.encode_header();
    let chunks: Vec<_> = filter.each_chunk().collect();
    let mut accepted = 0;
    for at in 8..header.len() {
        for edit in [1u8, 0x80, 0xff] {
            let mut crafted = header.clone();
            crafted[at] ^= edit;
            let Ok(mut value) = CompactFilter::from_header(&crafted, NO_LIMIT) else {
                continue;
            };
            let mut whole = true;
            for (iter, bytes) in &chunks {
                whole &= value.load_chunk(*iter, bytes, NO_LIMIT).is_ok();
            }
            if whole && value.is_loaded() {
                accepted += 1;
                value.validate(NO_LIMIT).unwrap();
                for i in 0..200 {
                    value.add(&id(9, i), NO_LIMIT).unwrap();
                }
                assert!((0..200).all(|i| value.contains(&id(9, i))));
                value.validate(NO_LIMIT).unwrap();
            }
        }
    }
    // Only fields the segments do not determine can change: the items (down), the error
    // rate's low bits, the secret.
    assert!(accepted > 0);
    let mut rng = Rng::new(0x4e4);
    for _ in 0..300 {
        let mut value = CompactFilter::from_header(&header, NO_LIMIT).unwrap();
        let k = rng.below(chunks.len() as u64) as usize;
        for (j, (iter, bytes)) in chunks.iter().enumerate() {
            let mut bytes = bytes.to_vec();
            if j == k {
                let at = rng.below(bytes.len() as u64) as usize;
                bytes[at] ^= 1 << rng.below(8);
            }
            let before = value.clone();
            if value.load_chunk(*iter, &bytes, NO_LIMIT).is_err() {
                assert_eq!(value, before, "a refused chunk changes nothing");
                break;
            }
        }
        if value.is_loaded() {
            value.validate(NO_LIMIT).unwrap();
        }
    }
}

#[test]
fn misstated_split_positions_and_counts_are_refused() {
    let filter = grown(0.01, true, 4000);
    let header = filter.encode_header();
    let chunks: Vec<_> = filter.each_chunk().collect();
    let put = |at: usize, value: &[u8]| {
        let mut h = header.clone();
        h[at..at + value.len()].copy_from_slice(value);
        h
    };
    let f = filter.segments().unwrap().fields();
    let load = |h: &[u8]| -> Result<CompactFilter, String> {
        let mut value = CompactFilter::from_header(h, NO_LIMIT).map_err(|e| format!("{e:?}"))?;
        for (iter, bytes) in &chunks {
            value
                .load_chunk(*iter, bytes, NO_LIMIT)
                .map_err(|e| format!("{e:?}"))?;
        }
        // A header that promises more segments than come leaves a value still arriving.
        value
            .is_loaded()
            .then_some(value)
            .ok_or("incomplete".to_string())
    };
    assert!(load(&header).is_ok());
    for pointer in [f.pointer + 1, f.pointer.wrapping_sub(1)] {
        assert!(
            load(&put(32, &pointer.to_le_bytes())).is_err(),
            "pointer {pointer}"
        );
    }
    assert!(load(&put(28, &(f.level + 1).to_le_bytes())).is_err());
    assert!(load(&put(40, &(f.items * 3).to_le_bytes())).is_err());
    assert!(
        load(&put(20, &0u32.to_le_bytes())).is_err(),
        "counts without deletes"
    );
    assert!(load(&put(8, &(SEGMENTS_HEADER + 1).to_le_bytes())).is_err());
    // A header whose directory alone passes the limit is refused before anything arrives.
    assert_eq!(
        Arrival::from_header(&put(28, &39u32.to_le_bytes()), 1 << 30).err(),
        Some(crate::bloom::HeaderError::TooLarge)
    );
}

/// An older value (a doubling table: complete, mid-doubling, with counters) of encodings 1
/// to 3, through RDB and through its chunks, becomes segments holding every item, counts
/// included, when it fits `CONVERT_SLOTS`, and is kept as it is otherwise; either keeps
/// working, and loads back as it is.
#[test]
fn older_encodings_convert_with_every_item() {
    for deletable in [false, true] {
        let mut old = Compact::new(1, 0.01, deletable, NO_LIMIT).unwrap();
        let mut held: Vec<(u64, u64)> = Vec::new();
        let mut mid_doubling = 0;
        for i in 0..20_000u64 {
            let times = if deletable { 1 + i % 3 } else { 1 };
            for _ in 0..times {
                old.add(&id(3, i), NO_LIMIT).unwrap();
            }
            held.push((i, times));
            let mid = old.doubling.is_some() && mid_doubling < 6 && i % 5 == 0;
            if i % 1999 != 0 && !mid {
                continue;
            }
            mid_doubling += u64::from(old.doubling.is_some());
            let encodings: &[i32] = match old.doubling {
                Some(_) => &[3],
                None => &[2, 3],
            };
            for &encver in encodings {
                let mut rdb = MemoryRdb::new();
                old.save_as(&mut rdb, encver);
                let converted = CompactFilter::load(&mut rdb, encver, NO_LIMIT).unwrap();
                let mut chunked =
                    CompactFilter::from_header(&old.encode_header(), NO_LIMIT).unwrap();
                for (iter, bytes) in old.chunks() {
                    chunked.load_chunk(iter, bytes, NO_LIMIT).unwrap();
                }
                assert_eq!(chunked, converted);
                match converted.segments() {
                    Some(f) => assert_eq!(f.fields().secret, 0, "older filters are unkeyed"),
                    None => assert!(kept(&converted), "kept as it is, for good"),
                }
                assert_eq!(converted.segments().is_some(), slots(&old) <= CONVERT_SLOTS);
                assert_eq!(converted.len(), old.len());
                assert!(held.iter().all(|&(i, _)| converted.contains(&id(3, i))));
                converted.validate(NO_LIMIT).unwrap();
                // Round trips in encoding 4, then takes adds and deletes.
                let mut again =
                    CompactFilter::load(&mut saved(&converted), ENCODING_VERSION, NO_LIMIT)
                        .unwrap();
                assert_eq!(again, converted);
                for j in 0..3000 {
                    again.add(&id(4, j), NO_LIMIT).unwrap();
                }
                assert!(held.iter().all(|&(i, _)| again.contains(&id(3, i))));
                assert!((0..3000).all(|j| again.contains(&id(4, j))));
                if deletable {
                    for &(i, times) in held.iter().take(300) {
                        for _ in 0..times {
                            assert_eq!(again.delete(&id(3, i)), Ok(true));
                        }
                    }
                    assert!(held
                        .iter()
                        .skip(300)
                        .all(|&(i, _)| again.contains(&id(3, i))));
                }
                again.validate(NO_LIMIT).unwrap();
            }
        }
        assert!(mid_doubling > 0, "some conversions were mid-doubling");
    }
}

/// Both tables' slots of an older value.
fn slots(old: &Compact) -> u64 {
    (1u64 << old.table.log2_slots) + old.doubling.as_ref().map_or(0, |d| 1 << d.old.log2_slots)
}

/// Whether a value is an older one kept as it is.
fn kept(filter: &CompactFilter) -> bool {
    matches!(filter, CompactFilter::Older(c) if c.kept && c.is_loaded())
}

/// No command converts more of an older value than one add may work on: the chunk that
/// completes a value past `CONVERT_SLOTS` (or its RDB load, or RESTORE) keeps it as it is,
/// converting nothing (it converted the whole table: 164 ms at 1.9M entries). The kept
/// value answers every item, takes adds and deletes, and stays kept through RDB and chunks
/// (what a replica and an AOF rewrite receive), whatever its writes make of it.
#[test]
fn a_large_older_value_is_kept_and_no_command_converts_it() {
    let mut old = Compact::new(1, 0.01, true, NO_LIMIT).unwrap();
    for i in 0..100_000u64 {
        old.add(&id(6, i), NO_LIMIT).unwrap();
    }
    assert!(slots(&old) > CONVERT_SLOTS);
    let mut chunked = CompactFilter::from_header(&old.encode_header(), NO_LIMIT).unwrap();
    let mut most = 0;
    for (iter, bytes) in old.chunks() {
        crate::compact::meter::take();
        chunked.load_chunk(iter, bytes, NO_LIMIT).unwrap();
        most = most.max(crate::compact::meter::take().0);
    }
    assert!(kept(&chunked), "kept, not converted");
    // What a chunk reads of the table, no conversion (which had no bound).
    assert!(most <= 3 * CONVERT_SLOTS, "work {most}");
    let mut rdb = MemoryRdb::new();
    old.save_as(&mut rdb, DOUBLING_ENCODING);
    let loaded = CompactFilter::load(&mut rdb, DOUBLING_ENCODING, NO_LIMIT).unwrap();
    assert_eq!(loaded, chunked);
    let mut filter = loaded;
    assert!((0..100_000).all(|i| filter.contains(&id(6, i))));
    // Deletes take it below the bound, adds grow it: it stays kept on every path.
    for i in 0..99_000 {
        assert_eq!(filter.delete(&id(6, i)), Ok(true));
    }
    for i in 0..500 {
        filter.add(&id(7, i), NO_LIMIT).unwrap();
    }
    filter.validate(NO_LIMIT).unwrap();
    let reloaded = CompactFilter::load(&mut saved(&filter), ENCODING_VERSION, NO_LIMIT).unwrap();
    assert_eq!(reloaded, filter);
    assert_eq!(rechunked(&filter), filter);
    assert!((99_000..100_000).all(|i| filter.contains(&id(6, i))));
    assert!((0..500).all(|i| filter.contains(&id(7, i))));
    assert_eq!(filter.len(), 1_500);
}

/// An older value whose one quotient holds more entries than a segment may (4,096; the
/// older validator accepted it) cannot be converted: it loads, kept as it is, and answers
/// every item (the load refused it, and with it a whole RDB file).
#[test]
fn a_crowded_older_value_loads_kept_and_answers() {
    let (old, hashes) = crowded_older();
    let shape = (old.entries, slots(&old));
    assert!(shape.0 > 4_096 && shape.1 <= CONVERT_SLOTS, "{shape:?}");
    assert!(segments::Segmented::from_doubling(&old, NO_LIMIT).is_err());
    let mut rdb = MemoryRdb::new();
    old.save_as(&mut rdb, DOUBLING_ENCODING);
    let loaded = CompactFilter::load(&mut rdb, DOUBLING_ENCODING, NO_LIMIT).unwrap();
    assert!(kept(&loaded));
    assert_eq!(rechunked(&loaded), loaded);
    let CompactFilter::Older(c) = &loaded else {
        unreachable!("kept")
    };
    assert!(hashes.iter().all(|&h| c.contains_hash(h)));
}

/// The crowded older value as LOADCHUNK receives it, for the server's tests
/// (`tests/fixtures/compact-crowded-older.bin`: the header's length (u32) and bytes, then
/// each chunk's iterator (i64), length (u32) and bytes, little-endian): the fixture is what
/// the core builds. `BLOOMRS_WRITE_FIXTURES=1` writes it again.
#[test]
fn the_crowded_older_fixture_is_what_the_core_builds() {
    let (old, _) = crowded_older();
    let header = old.encode_header();
    let mut bytes = (header.len() as u32).to_le_bytes().to_vec();
    bytes.extend_from_slice(&header);
    for (iter, chunk) in old.chunks() {
        bytes.extend_from_slice(&iter.to_le_bytes());
        bytes.extend_from_slice(&(chunk.len() as u32).to_le_bytes());
        bytes.extend_from_slice(chunk);
    }
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/compact-crowded-older.bin"
    );
    if std::env::var_os("BLOOMRS_WRITE_FIXTURES").is_some() {
        std::fs::write(path, &bytes).unwrap();
    }
    assert_eq!(std::fs::read(path).unwrap(), bytes);
}

/// An older value (plain, 1e-6, 2^13 slots) whose 5,000 entries all lie in quotient 0, and
/// the hashes it holds.
fn crowded_older() -> (Compact, Vec<ItemHash>) {
    let mut old = Compact::new(1, 1e-6, false, NO_LIMIT).unwrap();
    let mut rng = Rng::new(31);
    // The first 13 bits of every string zero: quotient 0 of every table up to 2^13 slots;
    // the fingerprints (23 bits and more at this rate) differ after them.
    let hashes: Vec<ItemHash> = (0..5_000)
        .map(|i| ItemHash {
            a: rng.next() >> 13,
            b: i,
        })
        .collect();
    for &hash in &hashes {
        old.add_hash(hash, NO_LIMIT).unwrap();
    }
    (old, hashes)
}

/// A filter of encoding 1 (a repeated entry per add) converts.
#[test]
fn encoding_1_converts() {
    let mut old = Compact::new(1, 0.001, true, NO_LIMIT).unwrap();
    for i in 0..500 {
        old.add(&id(5, i), NO_LIMIT).unwrap();
    }
    let mut rdb = MemoryRdb::new();
    old.save_as(&mut rdb, 1);
    let converted = CompactFilter::load(&mut rdb, 1, NO_LIMIT).unwrap();
    assert!((0..500).all(|i| converted.contains(&id(5, i))));
    assert_eq!(converted.len(), 500);
}

#[test]
fn unknown_forms_and_versions_are_refused() {
    let filter = grown(0.01, false, 100);
    let mut rdb = MemoryRdb::new();
    rdb.write_unsigned(7);
    filter.segments().unwrap().save(&mut rdb);
    assert_eq!(
        CompactFilter::load(&mut rdb, ENCODING_VERSION, NO_LIMIT),
        Err(LoadError::Invalid("form"))
    );
    assert_eq!(
        CompactFilter::load(&mut saved(&filter), ENCODING_VERSION + 1, NO_LIMIT),
        Err(LoadError::UnknownVersion(ENCODING_VERSION + 1))
    );
}

/// What `bytes` reports (BF.INFO Size, MEMORY USAGE) counts the value's own allocation as it
/// is: the enum, whichever form it holds.
#[test]
fn the_value_itself_is_counted() {
    let filter = CompactFilter::new(0.01, false, 1, NO_LIMIT).unwrap();
    let segments = filter.segments().unwrap();
    let own = super::segments::size_class(std::mem::size_of::<CompactFilter>() as u64);
    assert_eq!(
        filter.bytes(),
        own + segments.bytes() - super::segments::OVERHEAD
    );
    assert_eq!(
        std::mem::size_of::<CompactFilter>(),
        std::mem::size_of::<super::segments::Segmented>(),
        "the rare forms are boxed and the tag takes no room"
    );
    // Every per-user filter pays it: 112 bytes, a size class of its own (136 took the
    // 160-byte class; a byte each for the levels and the fingerprint bits made 128; the
    // first segment's thin pointers, the list of chunks as a boxed slice and the directory's
    // bytes counted from its lengths made 96; the word that finds the voids, 104 in the
    // 112-byte class).
    assert_eq!(own, 112);
}

/// The figure of the compact kind's page: each chunk of an older value of 1.9M adds
/// (mid-doubling, 12 MB, both forms) in its genuine SCANDUMP chunks, against an RDB load
/// (RESTORE) of an encoding-4 value of about the same bytes. `cargo test --profile tests --lib
/// compact::filter_tests::each_chunk_of_an_older_value_walks_its_own_bytes -- --ignored
/// --nocapture`
#[test]
#[ignore]
fn each_chunk_of_an_older_value_walks_its_own_bytes() {
    fn fastest(mut run: impl FnMut() -> std::time::Duration) -> std::time::Duration {
        (0..5).map(|_| run()).min().unwrap_or_default()
    }
    for deletable in [false, true] {
        let mut old = Compact::new(1, 0.01, deletable, NO_LIMIT).unwrap();
        for i in 0..1_900_000 {
            old.add(&id(6, i), NO_LIMIT).unwrap();
        }
        assert!(old.doubling.is_some(), "mid-doubling");
        let empty = CompactFilter::from_header(&old.encode_header(), NO_LIMIT).unwrap();
        let chunks: Vec<_> = old.chunks().collect();
        let mut line = format!(
            "older, deletable {deletable}: {} bytes, {} chunks:",
            old.bytes(),
            chunks.len()
        );
        for k in 0..chunks.len() {
            let time = fastest(|| {
                let mut c = empty.clone();
                for &(iter, bytes) in &chunks[..k] {
                    c.load_chunk(iter, bytes, NO_LIMIT).unwrap();
                }
                let (iter, bytes) = chunks[k];
                let t = std::time::Instant::now();
                c.load_chunk(iter, bytes, NO_LIMIT).unwrap();
                t.elapsed()
            });
            line += &format!(" {} bytes {time:?};", chunks[k].1.len());
        }
        eprintln!("{line}");
    }
    let segments = grown(0.01, false, 6_000_000);
    let rdb = saved(&segments);
    let load = fastest(|| {
        let mut r = rdb.clone();
        let t = std::time::Instant::now();
        let _ = CompactFilter::load(&mut r, ENCODING_VERSION, NO_LIMIT).unwrap();
        t.elapsed()
    });
    eprintln!("encoding 4: {} bytes, RDB load {load:?}", segments.bytes());
}

#[test]
fn a_new_filter_never_passes_its_budget() {
    let fits = CompactFilter::new(0.01, false, 1, NO_LIMIT)
        .unwrap()
        .bytes();
    for limit in 0..fits + 16 {
        match CompactFilter::new(0.01, false, 1, limit) {
            Ok(filter) => assert!(filter.bytes() <= limit, "{} > {limit}", filter.bytes()),
            Err(e) => assert!(limit < fits, "refused at {limit} ({e:?}), takes {fits}"),
        }
    }
}
