//! What exists can be loaded: for every kind, whatever its constructor accepts (over random
//! parameters including the boundaries a command can send) passes the loader's validation.
//! Each accepted value, empty and after some adds, goes through an RDB save and load and its
//! LOADCHUNK header, and comes back equal.

use crate::bloom::{Chain, CreateError};
use crate::compact::Compact;
use crate::counting::CountingFilter;
use crate::cuckoo::{CuckooFilter, CuckooParams};
use crate::rdb::MemoryRdb;
use crate::sparse::Sparse;
use crate::test_rng::Rng;
use crate::windowed::{WindowParams, Windowed};

/// The most bytes a value built here may take, so that the test stays quick.
const MAX_BYTES: u64 = 1 << 20;
const CASES: usize = 600;

fn pick<T: Copy>(rng: &mut Rng, choices: &[T]) -> T {
    choices[rng.below(choices.len() as u64) as usize]
}

fn capacity(rng: &mut Rng) -> u64 {
    let edges = [
        0,
        1,
        2,
        3,
        7,
        100,
        1000,
        1 << 20,
        1 << 32,
        1 << 62,
        u64::MAX,
    ];
    if rng.below(2) == 0 {
        pick(rng, &edges)
    } else {
        rng.below(5000)
    }
}

fn error(rng: &mut Rng) -> f64 {
    let edges = [
        5e-324,
        f64::MIN_POSITIVE,
        1e-300,
        1e-20,
        1e-10,
        1e-5,
        0.001,
        0.01,
        0.25,
        0.5,
        0.999_999,
        1.0,
        0.0,
        -0.5,
        f64::NAN,
        f64::INFINITY,
    ];
    if rng.below(2) == 0 {
        pick(rng, &edges)
    } else {
        (rng.below(1_000_000) as f64 + 1.0) / 1_000_002.0
    }
}

fn growth(rng: &mut Rng) -> u32 {
    pick(rng, &[0, 1, 2, 3, 10, 1000, u32::MAX])
}

fn items(rng: &mut Rng) -> Vec<[u8; 8]> {
    (0..rng.below(40))
        .map(|_| rng.next().to_le_bytes())
        .collect()
}

/// Saved and loaded again, the value is the same.
fn rdb_round_trip<T: PartialEq + std::fmt::Debug>(
    value: &T,
    save: impl Fn(&T, &mut MemoryRdb),
    load: impl Fn(&mut MemoryRdb) -> Result<T, crate::rdb::LoadError>,
    what: &str,
) {
    let mut rdb = MemoryRdb::new();
    save(value, &mut rdb);
    match load(&mut rdb) {
        Ok(back) => assert_eq!(&back, value, "{what}: loaded differently"),
        Err(e) => panic!("{what}: the loader refuses what the constructor built: {e:?}"),
    }
}

#[test]
fn every_bloom_chain_a_constructor_accepts_loads() {
    let mut rng = Rng::new(0x5eed_0019);
    let mut accepted = 0;
    for case in 0..CASES {
        let (c, e, g, s) = (
            capacity(&mut rng),
            error(&mut rng),
            growth(&mut rng),
            rng.below(2) == 0,
        );
        let what = format!("case {case}: Chain::new({c}, {e:e}, {g}, {s})");
        let Ok(mut chain) = Chain::new(c, e, g, s, MAX_BYTES) else {
            continue;
        };
        accepted += 1;
        for item in items(&mut rng) {
            let _ = chain.add(&item, MAX_BYTES);
        }
        rdb_round_trip(
            &chain,
            |v, w| v.save(w),
            |r| Chain::load(r, 4, MAX_BYTES),
            &what,
        );
        let header = Chain::from_header(&chain.encode_header(), MAX_BYTES);
        assert!(header.is_ok(), "{what}: header refused");
    }
    assert!(accepted > CASES / 10, "only {accepted} accepted");
}

#[test]
fn every_counting_filter_a_constructor_accepts_loads() {
    let mut rng = Rng::new(0x5eed_0010);
    let mut accepted = 0;
    for case in 0..CASES {
        let (c, e, g, s) = (
            capacity(&mut rng),
            error(&mut rng),
            growth(&mut rng),
            rng.below(2) == 0,
        );
        let what = format!("case {case}: CountingFilter::new({c}, {e:e}, {g}, {s})");
        let Ok(mut filter) = CountingFilter::new(c, e, g, s, MAX_BYTES) else {
            continue;
        };
        accepted += 1;
        for item in items(&mut rng) {
            let _ = filter.add(&item, MAX_BYTES);
        }
        rdb_round_trip(
            &filter,
            |v, w| v.save(w),
            |r| CountingFilter::load(r, 1, MAX_BYTES),
            &what,
        );
        let header = CountingFilter::from_header(&filter.encode_header(), MAX_BYTES);
        assert!(header.is_ok(), "{what}: header refused");
    }
    assert!(accepted > CASES / 10, "only {accepted} accepted");
}

#[test]
fn every_windowed_filter_a_constructor_accepts_loads() {
    let mut rng = Rng::new(0x5eed_0009);
    let mut accepted = 0;
    for case in 0..CASES {
        let params = WindowParams {
            window_ms: pick(
                &mut rng,
                &[
                    0,
                    1,
                    31,
                    1000,
                    60_000,
                    86_400_000,
                    3650 * 86_400_000,
                    u64::MAX,
                ],
            ),
            generations: pick(&mut rng, &[0, 1, 2, 4, 8, 32, 33, u32::MAX]),
            capacity: capacity(&mut rng),
            error: error(&mut rng),
            growth: growth(&mut rng),
            scaling: rng.below(2) == 0,
        };
        let what = format!("case {case}: Windowed::new({params:?})");
        let Ok(mut filter) = Windowed::new(params, MAX_BYTES) else {
            continue;
        };
        accepted += 1;
        let header = Windowed::from_header(&filter.encode_header(), MAX_BYTES);
        assert!(header.is_ok(), "{what}: empty header refused");
        // Writes at times up to the far future, as a retirement the primary propagates.
        for item in items(&mut rng) {
            let now = pick(
                &mut rng,
                &[0, 1_700_000_000_000, 1 << 62, u64::MAX - 1, u64::MAX],
            );
            let _ = filter.add(now, &item, MAX_BYTES);
        }
        rdb_round_trip(
            &filter,
            |v, w| v.save(w),
            |r| Windowed::load(r, 1, MAX_BYTES),
            &what,
        );
        let header = Windowed::from_header(&filter.encode_header(), MAX_BYTES);
        assert!(header.is_ok(), "{what}: header refused");
    }
    assert!(accepted > CASES / 20, "only {accepted} accepted");
}

#[test]
fn every_sparse_filter_a_constructor_accepts_loads() {
    let mut rng = Rng::new(0x5eed_0016);
    let mut accepted = 0;
    for case in 0..CASES {
        let (c, e, g, s) = (
            capacity(&mut rng),
            error(&mut rng),
            growth(&mut rng),
            rng.below(2) == 0,
        );
        let limit = pick(&mut rng, &[0, 48, 64, 2048, 1 << 20, u64::MAX]);
        let what = format!("case {case}: Sparse::create({c}, {e:e}, {g}, {s}, {limit})");
        let Ok(Some(mut sparse)) = Sparse::create(c, e, g, s, limit, MAX_BYTES) else {
            continue;
        };
        accepted += 1;
        let most = sparse.max_items(limit).unwrap_or(0);
        for item in items(&mut rng) {
            sparse.add(&item, most);
        }
        rdb_round_trip(
            &sparse,
            |v, w| v.save(w),
            |r| Sparse::load(r, 1, MAX_BYTES),
            &what,
        );
        let header = Sparse::from_header(&sparse.encode_header(), MAX_BYTES);
        assert!(header.is_ok(), "{what}: header refused");
        // Its promotion is a plain chain the loader takes too.
        match sparse.promote(MAX_BYTES) {
            Ok(chain) => rdb_round_trip(
                &chain,
                |v, w| v.save(w),
                |r| Chain::load(r, 4, MAX_BYTES),
                &what,
            ),
            Err(CreateError::TooLarge) => {}
            Err(CreateError::Invalid) => panic!("{what}: promotion refused as invalid"),
        }
    }
    assert!(accepted > CASES / 20, "only {accepted} accepted");
}

#[test]
fn every_cuckoo_filter_a_constructor_accepts_loads() {
    let mut rng = Rng::new(0x5eed_00cf);
    let mut accepted = 0;
    for case in 0..CASES {
        let params = CuckooParams {
            capacity: capacity(&mut rng),
            bucket_size: pick(&mut rng, &[0, 1, 2, 4, 255, u16::MAX]),
            max_iterations: pick(&mut rng, &[0, 1, 20, u16::MAX]),
            expansion: pick(&mut rng, &[0, 1, 3, 32768, 32769, u16::MAX]),
        };
        let what = format!("case {case}: CuckooFilter::new({params:?})");
        let Ok(mut filter) = CuckooFilter::new(params, MAX_BYTES) else {
            continue;
        };
        accepted += 1;
        for item in items(&mut rng) {
            let _ = filter.insert(&item, MAX_BYTES);
        }
        rdb_round_trip(
            &filter,
            |v, w| v.save(w),
            |r| CuckooFilter::load(r, 4, MAX_BYTES),
            &what,
        );
        let header = CuckooFilter::from_header(&filter.encode_header(), MAX_BYTES);
        assert!(header.is_ok(), "{what}: header refused");
    }
    assert!(accepted > CASES / 20, "only {accepted} accepted");
}

#[test]
fn every_compact_filter_a_constructor_accepts_loads() {
    let mut rng = Rng::new(0x5eed_0020);
    let mut accepted = 0;
    for case in 0..CASES {
        let (c, e, deletable) = (capacity(&mut rng), error(&mut rng), rng.below(2) == 0);
        let what = format!("case {case}: Compact::new({c}, {e:e}, {deletable})");
        let Ok(mut filter) = Compact::new(c, e, deletable, MAX_BYTES) else {
            continue;
        };
        accepted += 1;
        for item in items(&mut rng) {
            let _ = filter.add(&item, MAX_BYTES);
        }
        rdb_round_trip(
            &filter,
            |v, w| v.save(w),
            |r| Compact::load(r, crate::compact::ENCODING_VERSION, MAX_BYTES),
            &what,
        );
        let mut loaded = Compact::from_header(&filter.encode_header(), MAX_BYTES)
            .unwrap_or_else(|e| panic!("{what}: header refused: {e:?}"));
        for (iter, bytes) in filter.chunks() {
            loaded.load_chunk(iter, bytes, MAX_BYTES).unwrap();
        }
        assert_eq!(loaded, filter, "{what}: chunks");
    }
    assert!(accepted > CASES / 10, "only {accepted} accepted");
}

/// LOADCHUNK finds a header's kind by its first eight bytes: no two kinds may share them.
#[test]
fn every_kind_has_its_own_header_magic() {
    let magics: [&[u8; 8]; 4] = [
        crate::sparse::MAGIC,
        crate::windowed::MAGIC,
        crate::counting::MAGIC,
        crate::compact::MAGIC,
    ];
    for (i, a) in magics.iter().enumerate() {
        for b in &magics[i + 1..] {
            assert_ne!(
                a,
                b,
                "two kinds share the header magic {:?}",
                String::from_utf8_lossy(*a)
            );
        }
    }
}
