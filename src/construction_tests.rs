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

/// Builds `CASES` values from random and boundary parameters (`build` names the call and
/// gives the value, None where the constructor refused) and checks each one it accepted; more
/// than `CASES / share` of them must be accepted, so the parameters keep reaching the checks.
fn every_accepted<T>(
    seed: u64,
    share: usize,
    mut build: impl FnMut(&mut Rng) -> (String, Option<T>),
    mut check: impl FnMut(&mut Rng, T, &str),
) {
    let mut rng = Rng::new(seed);
    let mut accepted = 0;
    for case in 0..CASES {
        let (call, value) = build(&mut rng);
        if let Some(value) = value {
            accepted += 1;
            check(&mut rng, value, &format!("case {case}: {call}"));
        }
    }
    assert!(accepted > CASES / share, "only {accepted} accepted");
}

/// A chain kind's parameters: capacity, error rate, expansion, scaling.
fn chain_params(rng: &mut Rng) -> (u64, f64, u32, bool) {
    (capacity(rng), error(rng), growth(rng), rng.below(2) == 0)
}

#[test]
fn every_bloom_chain_a_constructor_accepts_loads() {
    let build = |rng: &mut Rng| {
        let (c, e, g, s) = chain_params(rng);
        let call = format!("Chain::new({c}, {e:e}, {g}, {s})");
        (call, Chain::new(c, e, g, s, MAX_BYTES).ok())
    };
    every_accepted(0x5eed_0019, 10, build, |rng, mut chain, what| {
        for item in items(rng) {
            let _ = chain.add(&item, MAX_BYTES);
        }
        let load = |r: &mut MemoryRdb| Chain::load(r, 4, MAX_BYTES);
        rdb_round_trip(&chain, |v, w| v.save(w), load, what);
        let header = Chain::from_header(&chain.encode_header(), MAX_BYTES);
        assert!(header.is_ok(), "{what}: header refused");
    });
}

#[test]
fn every_counting_filter_a_constructor_accepts_loads() {
    let build = |rng: &mut Rng| {
        let (c, e, g, s) = chain_params(rng);
        let call = format!("CountingFilter::new({c}, {e:e}, {g}, {s})");
        (call, CountingFilter::new(c, e, g, s, MAX_BYTES).ok())
    };
    every_accepted(0x5eed_0010, 10, build, |rng, mut filter, what| {
        for item in items(rng) {
            let _ = filter.add(&item, MAX_BYTES);
        }
        let load = |r: &mut MemoryRdb| CountingFilter::load(r, 1, MAX_BYTES);
        rdb_round_trip(&filter, |v, w| v.save(w), load, what);
        let header = CountingFilter::from_header(&filter.encode_header(), MAX_BYTES);
        assert!(header.is_ok(), "{what}: header refused");
    });
}

#[test]
fn every_windowed_filter_a_constructor_accepts_loads() {
    let windows = [
        0,
        1,
        31,
        1000,
        60_000,
        86_400_000,
        3650 * 86_400_000,
        u64::MAX,
    ];
    let build = |rng: &mut Rng| {
        let params = WindowParams {
            window_ms: pick(rng, &windows),
            generations: pick(rng, &[0, 1, 2, 4, 8, 32, 33, u16::MAX]),
            capacity: capacity(rng),
            error: error(rng),
            growth: growth(rng),
            scaling: rng.below(2) == 0,
            spread: rng.below(2) == 0,
        };
        (
            format!("Windowed::new({params:?})"),
            Windowed::new(params, 0, MAX_BYTES).ok(),
        )
    };
    every_accepted(0x5eed_0009, 20, build, |rng, mut filter, what| {
        let header = Windowed::from_header(&filter.encode_header(), MAX_BYTES);
        assert!(header.is_ok(), "{what}: empty header refused");
        // Writes at times up to the far future, as a retirement the primary propagates.
        let times = [0, 1_700_000_000_000, 1 << 62, u64::MAX - 1, u64::MAX];
        for item in items(rng) {
            let _ = filter.add(pick(rng, &times), &item, MAX_BYTES);
        }
        let load = |r: &mut MemoryRdb| Windowed::load(r, 1, MAX_BYTES);
        rdb_round_trip(&filter, |v, w| v.save(w), load, what);
        let header = Windowed::from_header(&filter.encode_header(), MAX_BYTES);
        assert!(header.is_ok(), "{what}: header refused");
    });
}

#[test]
fn every_sparse_filter_a_constructor_accepts_loads() {
    let build = |rng: &mut Rng| {
        let (c, e, g, s) = chain_params(rng);
        let limit = pick(rng, &[0, 48, 64, 2048, 1 << 20, u64::MAX]);
        let call = format!("Sparse::create({c}, {e:e}, {g}, {s}, {limit})");
        let sparse = Sparse::create(c, e, g, s, limit, MAX_BYTES).ok().flatten();
        (call, sparse.map(|sparse| (sparse, limit)))
    };
    every_accepted(0x5eed_0016, 20, build, |rng, (mut sparse, limit), what| {
        let most = sparse.max_items(limit).unwrap_or(0);
        for item in items(rng) {
            sparse.add(&item, most);
        }
        let load = |r: &mut MemoryRdb| Sparse::load(r, 1, MAX_BYTES);
        rdb_round_trip(&sparse, |v, w| v.save(w), load, what);
        let header = Sparse::from_header(&sparse.encode_header(), MAX_BYTES);
        assert!(header.is_ok(), "{what}: header refused");
        // Its promotion is a plain chain the loader takes too.
        match sparse.promote(MAX_BYTES) {
            Ok(chain) => {
                let load = |r: &mut MemoryRdb| Chain::load(r, 4, MAX_BYTES);
                rdb_round_trip(&chain, |v, w| v.save(w), load, what);
            }
            Err(CreateError::TooLarge) => {}
            Err(CreateError::Invalid) => panic!("{what}: promotion refused as invalid"),
        }
    });
}

#[test]
fn every_cuckoo_filter_a_constructor_accepts_loads() {
    let build = |rng: &mut Rng| {
        let params = CuckooParams {
            capacity: capacity(rng),
            bucket_size: pick(rng, &[0, 1, 2, 4, 255, u16::MAX]),
            max_iterations: pick(rng, &[0, 1, 20, u16::MAX]),
            expansion: pick(rng, &[0, 1, 3, 32768, 32769, u16::MAX]),
        };
        let call = format!("CuckooFilter::new({params:?})");
        (call, CuckooFilter::new(params, MAX_BYTES).ok())
    };
    every_accepted(0x5eed_00cf, 20, build, |rng, mut filter, what| {
        for item in items(rng) {
            let _ = filter.insert(&item, MAX_BYTES);
        }
        let load = |r: &mut MemoryRdb| CuckooFilter::load(r, 4, MAX_BYTES);
        rdb_round_trip(&filter, |v, w| v.save(w), load, what);
        let header = CuckooFilter::from_header(&filter.encode_header(), MAX_BYTES);
        assert!(header.is_ok(), "{what}: header refused");
    });
}

#[test]
fn every_compact_filter_a_constructor_accepts_loads() {
    let build = |rng: &mut Rng| {
        let (c, e, deletable) = (capacity(rng), error(rng), rng.below(2) == 0);
        let call = format!("Compact::new({c}, {e:e}, {deletable})");
        (call, Compact::new(c, e, deletable, MAX_BYTES).ok())
    };
    every_accepted(0x5eed_0020, 10, build, |rng, mut filter, what| {
        for item in items(rng) {
            let _ = filter.add(&item, MAX_BYTES);
        }
        let load =
            |r: &mut MemoryRdb| Compact::load(r, crate::compact::DOUBLING_ENCODING, MAX_BYTES);
        rdb_round_trip(&filter, |v, w| v.save(w), load, what);
        let mut loaded = Compact::from_header(&filter.encode_header(), MAX_BYTES)
            .unwrap_or_else(|e| panic!("{what}: header refused: {e:?}"));
        for (iter, bytes) in filter.chunks() {
            loaded.load_chunk(iter, bytes, MAX_BYTES).unwrap();
        }
        assert_eq!(loaded, filter, "{what}: chunks");
    });
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
