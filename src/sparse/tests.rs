use super::*;
use crate::bloom::{AddError, ChunkError, HeaderError};
use crate::rdb::{Field, MemoryRdb};

const NO_LIMIT: u64 = u64::MAX;
const SEEDS: [u64; 6] = [1, 2, 3, 0x5eed, 0xdead_beef, 0x9e37_79b9_7f4a_7c15];

/// Sixteen-character ids from a xorshift stream: the feed's item ids.
struct Ids(u64);

impl Ids {
    fn new(seed: u64) -> Self {
        Ids(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) | 1)
    }
}

impl Iterator for Ids {
    type Item = String;
    fn next(&mut self) -> Option<String> {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        Some(format!("{:016x}", self.0))
    }
}

/// The parameter sets the properties run over: (capacity, error, growth, scaling).
const SHAPES: [(u64, f64, u32, bool); 5] = [
    (100, 0.01, 2, true),
    (1000, 0.01, 10, true),
    (1000, 0.001, 4, true),
    (500, 0.1, 2, false),
    (20, 0.5, 1, true),
];

fn sparse(capacity: u64, error: f64, growth: u32, scaling: bool) -> Sparse {
    Sparse::create(capacity, error, growth, scaling, NO_LIMIT, NO_LIMIT)
        .unwrap()
        .unwrap()
}

/// Adds ids until the sparse form asks for promotion; returns them (the last one refused).
fn fill(filter: &mut Sparse, seed: u64, limit: u64) -> (Vec<String>, String) {
    let most = filter.max_items(limit).unwrap();
    let mut added = Vec::new();
    for id in Ids::new(seed) {
        match filter.add(id.as_bytes(), most) {
            Added::New => added.push(id),
            Added::Present => panic!("fresh id {id} reported present"),
            Added::Promote => return (added, id),
        }
    }
    unreachable!()
}

#[test]
fn creation_is_refused_as_a_chain_refuses_it() {
    for (capacity, error) in [(0, 0.01), (100, 0.0), (100, 2.0), (100, f64::NAN)] {
        for scaling in [true, false] {
            let chain = Chain::new(capacity, error, 2, scaling, NO_LIMIT).map(|_| ());
            let sparse =
                Sparse::create(capacity, error, 2, scaling, NO_LIMIT, NO_LIMIT).map(|_| ());
            assert_eq!(sparse, chain);
            assert_eq!(sparse, Err(CreateError::Invalid));
        }
    }
    // 1,000 items at 1% need a 1,480-byte chain: a cap below that refuses both forms.
    assert_eq!(
        Sparse::create(1000, 0.01, 2, true, NO_LIMIT, 1479).map(|_| ()),
        Err(CreateError::TooLarge)
    );
    assert!(Sparse::create(1000, 0.01, 2, true, NO_LIMIT, 1480).is_ok());
}

#[test]
fn starts_dense_when_even_empty_sparse_does_not_fit() {
    assert_eq!(
        Sparse::create(100, 0.01, 2, true, OVERHEAD - 1, NO_LIMIT),
        Ok(None)
    );
    let empty = Sparse::create(100, 0.01, 2, true, OVERHEAD, NO_LIMIT).unwrap();
    assert_eq!(empty.map(|s| s.max_items(OVERHEAD)), Some(Some(0)));
}

#[test]
fn promotion_points() {
    // BF.ADD's defaults (100 at 1%): a 240-byte chain holds 12 items' hashes at most.
    let default = sparse(100, 0.01, 2, true);
    assert_eq!(default.dense_bytes(), 240);
    assert_eq!(default.max_items(NO_LIMIT), Some(12));
    // The per-user tier of the feed practice: 1,000 at 1% with EXPANSION 10.
    let tier = sparse(1000, 0.01, 10, true);
    assert_eq!(tier.dense_bytes(), 1480);
    assert_eq!(tier.max_items(NO_LIMIT), Some(89));
    assert_eq!(tier.max_items(512), Some(29));
    // Tiny error rates need more bits an item than a hash pair: the link's capacity bounds it.
    let strict = sparse(10, 1e-40, 2, false);
    assert!(strict.dense_bytes() > OVERHEAD + 10 * HASH_BYTES);
    assert_eq!(strict.max_items(NO_LIMIT), Some(10));
}

#[test]
fn holds_exactly_what_it_was_given() {
    let mut filter = sparse(1000, 0.01, 10, true);
    assert_eq!((filter.len(), filter.bytes()), (0, OVERHEAD));
    assert_eq!(filter.add(b"foo", 89), Added::New);
    assert_eq!(filter.add(b"foo", 89), Added::Present);
    assert_eq!(filter.add(b"bar", 89), Added::New);
    assert!(filter.contains(b"foo") && filter.contains(b"bar") && !filter.contains(b"baz"));
    assert_eq!((filter.len(), filter.bytes()), (2, OVERHEAD + 32));
    // Full: a new item asks for promotion, a held one is still present.
    assert_eq!(filter.add(b"baz", 2), Added::Promote);
    assert_eq!(filter.add(b"foo", 2), Added::Present);
    assert_eq!(filter.len(), 2);
}

/// Promotion gives the bits of a plain chain fed the same items, and the replies of the
/// sparse form are the plain chain's or stricter.
#[test]
fn promotion_equals_a_plain_filter_at_every_seed() {
    for (capacity, error, growth, scaling) in SHAPES {
        for seed in SEEDS {
            let mut filter = sparse(capacity, error, growth, scaling);
            let mut plain = Chain::new(capacity, error, growth, scaling, NO_LIMIT).unwrap();
            let (items, _) = fill(&mut filter, seed, NO_LIMIT);
            let plain_new = items
                .iter()
                .filter(|id| plain.add(id.as_bytes(), NO_LIMIT).unwrap())
                .count() as u64;
            let dense = filter.promote(NO_LIMIT).unwrap();
            assert_eq!(dense.links.len(), 1);
            assert_eq!(dense.links[0].array, plain.links[0].array, "seed {seed}");
            // Only the count differs, by the plain chain's false-positive refusals.
            assert_eq!(filter.len(), items.len() as u64);
            assert_eq!(dense.size, filter.len());
            assert!(plain_new <= dense.size);
            let mut expected = plain.clone();
            expected.size = dense.size;
            expected.links[0].size = dense.size;
            assert_eq!(dense, expected);
            assert!(filter.bytes() <= filter.dense_bytes());
        }
    }
}

/// Filters small enough that the plain chain refuses some adds as false positives: the
/// promoted chain's bits still match and its count is the plain count plus those refusals.
#[test]
fn counts_differ_only_by_the_plain_filters_refusals() {
    let mut refusals = 0;
    for seed in 0..400 {
        let mut filter = sparse(20, 0.9, 2, false);
        let mut plain = Chain::new(20, 0.9, 2, false, NO_LIMIT).unwrap();
        let (items, _) = fill(&mut filter, seed, NO_LIMIT);
        let mut refused = 0;
        for id in &items {
            refused += u64::from(!plain.add(id.as_bytes(), NO_LIMIT).unwrap());
        }
        let dense = filter.promote(NO_LIMIT).unwrap();
        assert_eq!(dense.links[0].array, plain.links[0].array);
        assert_eq!(dense.size, plain.size + refused);
        refusals += refused;
    }
    assert!(refusals > 0, "the seeds exercise false-positive refusals");
}

#[test]
fn no_false_negatives_and_false_positives_within_the_rate() {
    const QUERIES: u64 = 50_000;
    for (capacity, error, growth, scaling) in SHAPES {
        for seed in SEEDS {
            let mut filter = sparse(capacity, error, growth, scaling);
            let (items, refused) = fill(&mut filter, seed, NO_LIMIT);
            let dense = filter.promote(NO_LIMIT).unwrap();
            for id in &items {
                assert!(filter.contains(id.as_bytes()) && dense.contains(id.as_bytes()));
            }
            assert!(!filter.contains(refused.as_bytes()));
            // Ids from another stream were never added: a sparse filter answers 1 for one
            // only on a 128-bit hash collision, so the honest bound (the requested rate)
            // holds with room to spare.
            let false_positives = Ids::new(!seed)
                .take(QUERIES as usize)
                .filter(|id| filter.contains(id.as_bytes()))
                .count() as f64;
            assert!(false_positives <= error * QUERIES as f64);
            assert_eq!(false_positives, 0.0);
        }
    }
}

#[test]
fn a_promoted_chain_carries_on_as_a_plain_one() {
    // Non-scaling: the sparse form takes no more than the link's capacity, then the chain is
    // full exactly where a plain one is.
    let mut filter = sparse(5, 1e-40, 2, false);
    let (items, refused) = fill(&mut filter, 7, NO_LIMIT);
    assert_eq!(items.len(), 5);
    let mut dense = filter.promote(NO_LIMIT).unwrap();
    assert_eq!(dense.add(refused.as_bytes(), NO_LIMIT), Err(AddError::Full));
    // Scaling: the next add after promotion at capacity grows a second link.
    let mut filter = sparse(5, 1e-40, 2, true);
    let (_, refused) = fill(&mut filter, 7, NO_LIMIT);
    let mut dense = filter.promote(NO_LIMIT).unwrap();
    assert_eq!(dense.add(refused.as_bytes(), NO_LIMIT), Ok(true));
    assert_eq!(dense.links.len(), 2);
}

#[test]
fn promotion_respects_the_byte_cap() {
    let mut filter = sparse(1000, 0.01, 2, true);
    fill(&mut filter, 1, 200);
    assert_eq!(filter.promote(1479).map(|_| ()), Err(CreateError::TooLarge));
    assert!(filter.promote(1480).is_ok());
}

fn saved(filter: &Sparse) -> MemoryRdb {
    let mut rdb = MemoryRdb::new();
    filter.save(&mut rdb);
    rdb
}

#[test]
fn rdb_round_trip() {
    for (capacity, error, growth, scaling) in SHAPES {
        let mut filter = sparse(capacity, error, growth, scaling);
        fill(&mut filter, 3, NO_LIMIT);
        let loaded = Sparse::load(&mut saved(&filter), ENCODING_VERSION, NO_LIMIT).unwrap();
        assert_eq!(loaded, filter);
        let empty = sparse(capacity, error, growth, scaling);
        assert_eq!(
            Sparse::load(&mut saved(&empty), ENCODING_VERSION, NO_LIMIT),
            Ok(empty)
        );
    }
}

/// A saved filter with one field replaced.
fn edited(filter: &Sparse, index: usize, field: Field) -> MemoryRdb {
    let mut rdb = saved(filter);
    rdb.fields[index] = field;
    rdb
}

#[test]
fn the_validator_refuses_what_no_command_builds() {
    let mut filter = sparse(1000, 0.01, 10, true);
    fill(&mut filter, 5, NO_LIMIT);
    let hashes = rdb::encode_hashes(&filter.hashes);
    let mut swapped = hashes.clone();
    swapped[..32].rotate_left(16);
    let mut doubled = hashes[..16].to_vec();
    doubled.extend_from_slice(&hashes[..16]);
    let mut too_many = sparse(1000, 0.01, 10, true);
    too_many.hashes = filter.hashes.clone();
    let cases = [
        (0, Field::Unsigned(0)),
        (1, Field::Double(1.0)),
        (1, Field::Double(f64::NAN)),
        (2, Field::Unsigned(0)),
        (2, Field::Unsigned(1 << 32)),
        (3, Field::Unsigned(1)),
        (3, Field::Unsigned(0x0d | 2)),
        (4, Field::Buffer(hashes[..17].to_vec())),
        (4, Field::Buffer(swapped)),
        (4, Field::Buffer(doubled)),
        // 89 pairs fit a 1,480-byte chain; 90 do not, and 10 exceed a capacity of 10.
        (0, Field::Unsigned(10)),
        (4, Field::Double(0.5)),
    ];
    for (index, field) in cases {
        let result = Sparse::load(&mut edited(&filter, index, field.clone()), 1, NO_LIMIT);
        assert!(
            matches!(result, Err(LoadError::Invalid(_) | LoadError::Io)),
            "{index} {field:?}: {result:?}"
        );
    }
    let mut extra = hashes.clone();
    extra.extend_from_slice(&[0xff; 16]);
    let result = Sparse::load(&mut edited(&filter, 4, Field::Buffer(extra)), 1, NO_LIMIT);
    assert_eq!(
        result.unwrap_err(),
        LoadError::Invalid("more items than the sparse form holds")
    );
    assert_eq!(
        Sparse::load(&mut saved(&filter), 1, 1479),
        Err(LoadError::TooLarge)
    );
    assert_eq!(
        Sparse::load(&mut saved(&filter), 2, NO_LIMIT),
        Err(LoadError::UnknownVersion(2))
    );
    let mut short = saved(&filter);
    short.fields.pop_back();
    assert_eq!(Sparse::load(&mut short, 1, NO_LIMIT), Err(LoadError::Io));
}

#[test]
fn chunks_round_trip() {
    for (capacity, error, growth, scaling) in SHAPES {
        let mut filter = sparse(capacity, error, growth, scaling);
        fill(&mut filter, 11, NO_LIMIT);
        let header = filter.encode_header();
        assert!(Sparse::is_header(&header));
        let mut loaded = Sparse::from_header(&header, NO_LIMIT).unwrap();
        assert!(loaded.is_empty());
        for (iter, bytes) in filter.chunks() {
            loaded.load_chunk(iter, &bytes, NO_LIMIT).unwrap();
        }
        assert_eq!(loaded, filter);
    }
}

#[test]
fn chunks_load_in_pieces_and_in_order_only() {
    let mut filter = sparse(1000, 0.01, 10, true);
    fill(&mut filter, 13, NO_LIMIT);
    let bytes = rdb::encode_hashes(&filter.hashes);
    let mut loaded = Sparse::from_header(&filter.encode_header(), NO_LIMIT).unwrap();
    let (first, rest) = bytes.split_at(160);
    // Out of order: the second piece before the first.
    assert_eq!(
        loaded.load_chunk(1 + bytes.len() as i64, rest, NO_LIMIT),
        Err(ChunkError::NoLink)
    );
    assert_eq!(
        loaded.load_chunk(0, first, NO_LIMIT),
        Err(ChunkError::BadData)
    );
    assert_eq!(
        loaded.load_chunk(161, &first[..159], NO_LIMIT),
        Err(ChunkError::NoLink)
    );
    assert_eq!(
        loaded.load_chunk(160, &first[..159], NO_LIMIT),
        Err(ChunkError::BadData)
    );
    loaded.load_chunk(161, first, NO_LIMIT).unwrap();
    // A piece that is not in increasing order after the first changes nothing.
    let mut reversed = rest.to_vec();
    reversed.rotate_left(16);
    let end = 1 + bytes.len() as i64;
    assert_eq!(
        loaded.load_chunk(end, &reversed, NO_LIMIT),
        Err(ChunkError::BadData)
    );
    assert_eq!(loaded.len(), 10);
    loaded.load_chunk(end, rest, NO_LIMIT).unwrap();
    assert_eq!(loaded, filter);
    // Past what the sparse form holds.
    let more = [0xffu8; 16];
    assert_eq!(
        loaded.load_chunk(end + 16, &more, NO_LIMIT),
        Err(ChunkError::TooBig)
    );
    assert_eq!(loaded, filter);
}

#[test]
fn headers_are_validated() {
    let filter = sparse(1000, 0.01, 10, true);
    let header = filter.encode_header();
    assert_eq!(header.len(), 36);
    assert_eq!(
        Sparse::from_header(&header, 1479),
        Err(HeaderError::TooLarge)
    );
    let bad = |at: usize, value: &[u8]| {
        let mut h = header.clone();
        h[at..at + value.len()].copy_from_slice(value);
        Sparse::from_header(&h, NO_LIMIT)
    };
    assert_eq!(bad(0, b"bloomrsW"), Err(HeaderError::BadData));
    assert_eq!(bad(8, &2u32.to_le_bytes()), Err(HeaderError::BadData));
    assert_eq!(bad(12, &0u64.to_le_bytes()), Err(HeaderError::BadData));
    assert_eq!(bad(20, &2.0f64.to_le_bytes()), Err(HeaderError::BadData));
    assert_eq!(bad(28, &0u32.to_le_bytes()), Err(HeaderError::BadData));
    assert_eq!(bad(32, &1u32.to_le_bytes()), Err(HeaderError::BadData));
    assert_eq!(
        Sparse::from_header(&header[..35], NO_LIMIT),
        Err(HeaderError::BadData)
    );
    let mut long = header.clone();
    long.push(0);
    assert_eq!(
        Sparse::from_header(&long, NO_LIMIT),
        Err(HeaderError::BadData)
    );
    // RedisBloom's header of the same filter is not a sparse one.
    let chain = Chain::new(1000, 0.01, 10, true, NO_LIMIT).unwrap();
    assert!(!Sparse::is_header(&chain.encode_header()));
}

#[test]
fn the_struct_is_what_it_reports() {
    assert_eq!(std::mem::size_of::<Sparse>() as u64, OVERHEAD);
}

#[test]
fn the_windowed_search_agrees_with_binary_search() {
    for seed in SEEDS {
        let mut state = seed | 1;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for n in [0usize, 1, 2, 3, 10, 89, 253, 1000, 5000] {
            let mut filter = sparse(10_000_000, 0.01, 2, true);
            // Skewed values too: the window misses and the search falls back to the whole.
            for i in 0..n {
                let a = if i % 7 == 0 { next() >> 8 } else { next() };
                filter.add_hash(ItemHash { a, b: next() }, NO_LIMIT);
            }
            let held = filter.hashes.clone();
            let mut probes: Vec<ItemHash> = held.clone();
            probes.extend((0..2 * n + 4).map(|_| ItemHash {
                a: next(),
                b: next(),
            }));
            probes.extend(held.iter().map(|h| ItemHash {
                a: h.a,
                b: h.b.wrapping_add(1),
            }));
            probes.push(ItemHash { a: 0, b: 0 });
            probes.push(ItemHash {
                a: u64::MAX,
                b: u64::MAX,
            });
            for probe in probes {
                let expected = held.binary_search_by(|h| order(h, &probe));
                assert_eq!(filter.locate(&probe), expected, "n {n}");
            }
        }
    }
}
