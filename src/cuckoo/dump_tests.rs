//! Tests of the SCANDUMP / LOADCHUNK encoding: the reference's example, iteration and
//! slicing, chunk placement rules and header validation.

use super::tests::{all_slots, header, hex, reserve, reserve_default, to_hex, CAP};
use super::*;

#[test]
fn scandump_example_of_the_reference() {
    let mut filter = reserve(8, 2, 20, 2);
    for i in 0..20 {
        filter
            .insert(format!("item{i}").as_bytes(), CAP)
            .expect("room");
    }
    assert_eq!(
        to_hex(&filter.encode_header()),
        "1400000000000000040000000000000000000000000000000200000000000000020014000200"
    );
    assert_eq!(
        filter.dump_chunk(1),
        Some((9, &hex("a596b40783192a00")[..]))
    );
    assert_eq!(
        filter.dump_chunk(9),
        Some((25, &hex("3904b4e61ea29c61000038ad9cb93400")[..]))
    );
    assert_eq!(filter.dump_chunk(25), None);
    assert_eq!(filter.size_bytes(), 40 + 32 + 8 + 16);
    let rewrite: Vec<i64> = filter
        .rewrite_chunks(MAX_CHUNK_BYTES)
        .map(|(it, _)| it)
        .collect();
    assert_eq!(rewrite, [1, 9, 25]);
}

#[test]
fn scandump_returns_the_whole_small_sub_filter_from_any_offset() {
    let mut filter = reserve_default(1024);
    filter.insert(b"foo", CAP).expect("room");
    let (next, chunk) = filter.dump_chunk(5).expect("inside the filter");
    assert_eq!((next, chunk.len()), (1029, 1024));
    assert_eq!(
        filter.dump_chunk(1024),
        Some((2048, filter.sub_filters()[0].slots()))
    );
    assert_eq!(filter.dump_chunk(1025), None);
    assert_eq!(filter.dump_chunk(0), None);
    assert_eq!(filter.dump_chunk(-3), None);
    assert_eq!(filter.dump_chunk(i64::MAX), None);
    assert_eq!(filter.dump_chunk(i64::MIN), None);
}

#[test]
fn scandump_slices_sub_filters_over_16_mib() {
    let size = 32 * 1024 * 1024; // 2^24 buckets of 2 slots
    let chunk = MAX_CHUNK_BYTES as i64;
    let mut filter = reserve_default(1 << 25);
    filter.insert(b"foo", CAP).expect("room");
    assert_eq!(filter.sub_filters()[0].slots().len() as i64, size);
    let steps: Vec<(i64, usize)> = filter.chunks().map(|(next, c)| (next, c.len())).collect();
    assert_eq!(steps, [(1 + chunk, 1 << 24), (1 + 2 * chunk, 1 << 24)]);
    let (next, slice) = filter.dump_chunk(5).expect("inside");
    assert_eq!((next, slice.len()), (5 + chunk, 1 << 24));
    assert_eq!(slice, &filter.sub_filters()[0].slots()[4..4 + (1 << 24)]);
    let (next, tail) = filter.dump_chunk(size - 10).expect("inside");
    assert_eq!((next, tail.len()), (size + 1, 11));

    let mut copy = CuckooFilter::from_header(&filter.encode_header(), CAP).expect("valid header");
    for (next, bytes) in filter.chunks() {
        copy.load_chunk(next, bytes).expect("chunk loads");
    }
    assert_eq!(copy, filter);
}

#[test]
fn load_chunk_rules() {
    let mut filter = reserve(8, 2, 20, 2);
    for i in 0..20 {
        filter
            .insert(format!("item{i}").as_bytes(), CAP)
            .expect("room");
    }
    let mut copy = CuckooFilter::from_header(&filter.encode_header(), CAP).expect("valid header");
    let invalid = Err(CuckooError::Invalid("chunk position"));
    assert_eq!(copy.load_chunk(9, &[]), invalid);
    assert_eq!(copy.load_chunk(0, &[1]), invalid);
    assert_eq!(copy.load_chunk(-5, &[1]), invalid);
    assert_eq!(copy.load_chunk(1, &[1]), invalid); // the header position
    assert_eq!(copy.load_chunk(8, &[1; 8]), invalid); // iterator - 1 < len
    assert_eq!(copy.load_chunk(10, &[1; 8]), invalid); // bytes 1..9 span two sub-filters
    assert_eq!(copy.load_chunk(26, &[1]), invalid); // byte 24 is past the end
    assert_eq!(copy.load_chunk(i64::MAX, &[1]), invalid);
    assert_eq!(
        copy,
        CuckooFilter::from_header(&filter.encode_header(), CAP).expect("header")
    );
    assert_eq!(copy.load_chunk(25, &[7; 16]), Ok(()));
    assert_eq!(copy.load_chunk(3, &[9]), Ok(())); // byte 1 of sub-filter 0
    assert_eq!(
        all_slots(&copy),
        [vec![0, 9, 0, 0, 0, 0, 0, 0], vec![7; 16]]
    );
}

#[test]
fn header_validation() {
    let valid = |bytes: Vec<u8>| CuckooFilter::from_header(&bytes, CAP);
    let good = valid(header(5, 4, 1, 2, 2, 20, 2)).expect("valid header");
    assert_eq!(
        (good.num_items(), good.num_deletes(), good.num_filters()),
        (5, 1, 2)
    );
    assert_eq!(good.size_bytes(), 40 + 32 + 8 + 16);
    assert_eq!(good.encode_header().to_vec(), header(5, 4, 1, 2, 2, 20, 2));

    let mut short = header(0, 4, 0, 1, 2, 20, 1);
    short.pop();
    assert_eq!(valid(short), Err(CuckooError::Invalid("header length")));
    let mut long = header(0, 4, 0, 1, 2, 20, 1);
    long.push(0);
    assert_eq!(valid(long), Err(CuckooError::Invalid("header length")));

    let invalid = |what| Err(CuckooError::Invalid(what));
    // A header and what building from it answers.
    #[rustfmt::skip]
    let cases = [
        (header(0, 4, 0, 65536, 2, 20, 1), invalid("number of filters")),
        (header(0, 4, 0, 0, 2, 20, 1), invalid("number of filters")),
        (header(0, 4, 0, 1, 0, 20, 1), invalid("bucket size")),
        (header(0, 4, 0, 1, 256, 20, 1), invalid("bucket size")),
        (header(0, 0, 0, 1, 2, 20, 1), invalid("number of buckets")),
        (header(0, 6, 0, 1, 2, 20, 1), invalid("number of buckets")),
        (header(0, 4, 0, 1, 2, 0, 1), invalid("max iterations")),
        (header(0, 4, 0, 2, 2, 20, 0), invalid("expansion")),
        (header(0, 1 << 56, 0, 1, 1, 20, 1), Err(CuckooError::TooLarge)),
        (header(0, 1 << 40, 0, 1, 1, 20, 1), Err(CuckooError::TooLarge)),
        (header(0, 1 << 29, 0, 1, 2, 20, 1), Err(CuckooError::TooLarge)),
        (header(0, 4, 0, 60, 2, 20, 32768), Err(CuckooError::TooLarge)),
    ];
    for (bytes, expected) in cases {
        assert_eq!(valid(bytes.clone()), expected, "{bytes:?}");
    }

    // Accepted as RedisBloom accepts them.
    let truncated = valid(header(0, 4, 0, 65537, 2, 20, 1)).expect("65537 is 1 in 16 bits");
    assert_eq!(truncated.num_filters(), 1);
    let odd = valid(header(1 << 63, 4, 0, 2, 2, 20, 3)).expect("expansion not re-rounded");
    let buckets: Vec<u64> = odd
        .sub_filters()
        .iter()
        .map(SubFilter::num_buckets)
        .collect();
    assert_eq!(
        (buckets, odd.num_items(), odd.expansion()),
        (vec![4, 12], 1 << 63, 3)
    );
    assert_eq!(
        valid(header(0, 1, 0, 1, 255, 1, 0)).map(|f| f.size_bytes()),
        Ok(40 + 16 + 255)
    );
}

/// The AOF rewrite's chunks within a limit load as SCANDUMP's do: runs of one sub-filter.
#[test]
fn rewrite_chunks_within_a_limit_load_as_scandumps_do() {
    let mut filter = reserve(1000, 2, 500, 2);
    for i in 0..3000u32 {
        filter
            .insert(format!("item-{i}").as_bytes(), u64::MAX)
            .unwrap();
    }
    assert!(filter.num_filters() > 1);
    for limit in [1u64, 100, 700, MAX_CHUNK_BYTES] {
        let mut chunks = filter.rewrite_chunks(limit);
        let (_, header) = chunks.next().unwrap();
        let mut copy = CuckooFilter::from_header(&header, u64::MAX).unwrap();
        let mut count = 0;
        for (next, bytes) in chunks {
            assert!(bytes.len() as u64 <= limit, "{limit}");
            copy.load_chunk(next, &bytes).unwrap();
            count += 1;
        }
        assert_eq!(copy, filter, "{limit}");
        assert!(
            limit == MAX_CHUNK_BYTES || count > filter.num_filters() as usize,
            "{limit}"
        );
    }
}

#[test]
fn chunks_in_one_pass_equal_scandump_steps() {
    let mut filters = [
        reserve(8, 2, 20, 2),
        reserve(64, 4, 20, 1),
        reserve_default(1024),
    ];
    for (n, filter) in filters.iter_mut().enumerate() {
        for i in 0..60 * (n + 1) {
            let _ = filter.insert(format!("item{i}").as_bytes(), CAP);
        }
        let stepped: Vec<(i64, Vec<u8>)> =
            std::iter::successors(filter.dump_chunk(1), |&(next, _)| filter.dump_chunk(next))
                .map(|(next, chunk)| (next, chunk.to_vec()))
                .collect();
        let passed: Vec<(i64, Vec<u8>)> = filter
            .chunks()
            .map(|(next, chunk)| (next, chunk.to_vec()))
            .collect();
        assert_eq!(passed, stepped);
        assert!(filter.num_filters() > 1 || n == 2);
    }
}
