//! The compact kind's segment growth attacked from outside (issues 32 and 35): what a client
//! can send or choose, and what the server must answer. Each test here failed on the build it
//! was written against.
pub mod common;

use common::*;

/// The bytes of a compact SCANDUMP header (encoding 4) holding the placement secret.
const SECRET_AT: std::ops::Range<usize> = 48..56;

/// MurmurHash64A, as the module hashes an item (seed 0xc6a4a7935bd1e995): an outsider's copy,
/// so that the test aims items the way any client reading the header could.
fn murmur64a(key: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    let mut h = seed ^ (key.len() as u64).wrapping_mul(M);
    let mut blocks = key.chunks_exact(8);
    for block in &mut blocks {
        let mut k = u64::from_le_bytes(block.try_into().unwrap());
        k = k.wrapping_mul(M);
        k ^= k >> 47;
        h ^= k.wrapping_mul(M);
        h = h.wrapping_mul(M);
    }
    for (i, byte) in blocks.remainder().iter().enumerate().rev() {
        h ^= u64::from(*byte) << (8 * i);
    }
    if !blocks.remainder().is_empty() {
        h = h.wrapping_mul(M);
    }
    h ^= h >> 47;
    h = h.wrapping_mul(M);
    h ^ (h >> 47)
}

fn fmix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// The first 64 bits of an item's placement string under `secret`: its top bits choose the
/// segment (the keyed mix of the documented design).
fn placement_high(item: &[u8], secret: u64) -> u64 {
    let a = murmur64a(item, 0xc6a4_a793_5bd1_e995);
    fmix64(fmix64(a ^ secret).wrapping_add(secret))
}

/// `count` items whose placement strings start with `bits` zero bits under `secret`.
fn aimed_items(secret: u64, bits: u32, count: usize) -> Vec<String> {
    (0u64..)
        .map(|i| format!("aimed:{i:x}"))
        .filter(|item| placement_high(item.as_bytes(), secret) >> (64 - bits) == 0)
        .take(count)
        .collect()
}

/// Finding 1 (medium): the secret that keys the placement is in every `BF.SCANDUMP` header
/// (and `DUMP` payload), which any client allowed to read the key may read. With it, about
/// 4,200 items sharing their first 12 placement bits (17M hashes, a fraction of a second) fill
/// one segment to its 4,096-entry bound; every ordinary item whose address fell in that segment
/// was then refused (`ERR problem inserting into filter`, one in eight at 8 segments) until the
/// directory's level passed the 12 shared bits, about 2M items later. A full segment now takes
/// an item into the common prefix of its nearest entry: no ordinary add is refused, none reads
/// absent, and the work stays the segment's.
#[test]
fn items_aimed_with_the_dumped_secret_never_lock_out_ordinary_items() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(call!(c, "BF.RESERVE", "k", "1e-9", "100", "COMPACT"), ok());
    let header = &scandump(&mut c, "BF.SCANDUMP", "k")[0].1;
    let secret = u64::from_le_bytes(header[SECRET_AT].try_into().unwrap());
    assert_ne!(secret, 0);
    madd_in_batches(&mut c, "k", &aimed_items(secret, 12, 4200));
    let ordinary: Vec<String> = (0..2000).map(|i| format!("ordinary:{i}")).collect();
    let mut args = vec!["BF.MADD".to_string(), "k".to_string()];
    args.extend(ordinary.iter().cloned());
    let refused: Vec<&String> = c
        .call(&args)
        .array()
        .iter()
        .zip(&ordinary)
        .filter(|(answer, _)| !matches!(answer, Int(_)))
        .map(|(_, item)| item)
        .collect();
    let debug = call!(c, "BF.DEBUG", "k").array();
    let mut exists = vec!["BF.MEXISTS".to_string(), "k".to_string()];
    exists.extend(ordinary.iter().cloned());
    let found = c
        .call(&exists)
        .array()
        .iter()
        .filter(|r| **r == Int(1))
        .count();
    assert_eq!(
        found,
        ordinary.len(),
        "every ordinary item added reads present"
    );
    assert!(
        refused.is_empty(),
        "{} of {} ordinary items refused: {debug:?}",
        refused.len(),
        ordinary.len()
    );
}

/// Finding 2 (low): a genuine encoding-4 chunk that would take the value past
/// `bf.max-filter-bytes` was answered `ERR received bad data`, although nothing in it was
/// bad; it is refused as too big for the filter, and the key stays as the header left it.
#[test]
fn a_chunk_over_the_byte_limit_is_refused_as_too_big() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(
        call!(c, "BF.RESERVE", "src", "0.001", "100", "COMPACT"),
        ok()
    );
    let items: Vec<String> = (0..20_000).map(|i| format!("item:{i}")).collect();
    madd_in_batches(&mut c, "src", &items);
    let chunks = scandump(&mut c, "BF.SCANDUMP", "src");
    assert_eq!(chunks.len(), 2, "one header and one chunk of segments");
    let limit = call!(c, "BF.INFO", "src", "SIZE").array()[0].int() / 2;
    assert_eq!(
        call!(c, "CONFIG", "SET", "bf.max-filter-bytes", limit.to_string()),
        ok()
    );
    load_chunks(&mut c, "BF.LOADCHUNK", "copy", &chunks[..1]);
    let before = scandump(&mut c, "BF.SCANDUMP", "copy");
    let (iter, bytes) = &chunks[1];
    assert_eq!(
        c.call(&[
            b"BF.LOADCHUNK".as_slice(),
            b"copy",
            iter.to_string().as_bytes(),
            bytes
        ]),
        err("ERR invalid chunk - Too big for current filter")
    );
    assert_eq!(scandump(&mut c, "BF.SCANDUMP", "copy"), before);
    // Under a limit that admits it, the same chunk completes the copy.
    assert_eq!(
        call!(c, "CONFIG", "SET", "bf.max-filter-bytes", "4294967296"),
        ok()
    );
    load_chunks(&mut c, "BF.LOADCHUNK", "copy", &chunks[1..]);
    assert_eq!(
        scandump(&mut c, "BF.SCANDUMP", "copy"),
        scandump(&mut c, "BF.SCANDUMP", "src")
    );
}

/// Finding 3 (low): while a value's segments arrive, `BF.CARD` and `BF.INFO` answer the
/// header's item count, which nothing checked: a header saying 2^63 or more items made
/// `BF.CARD` answer a negative number (-1 for 2^64 - 1). A header whose items its segments
/// could never count (4,096 entries a segment, each counted at most 2^48 + 1 times, in a
/// deletable filter; a plain filter's count also takes the adds a full segment folded into
/// entries it had) or past 2^63 - 1 is refused.
#[test]
fn a_header_counting_more_items_than_its_segments_can_hold_is_refused() {
    let s = Server::start();
    let mut c = s.client();
    for (key, counting) in [("plain", false), ("counting", true)] {
        let mut args = vec!["BF.RESERVE", key, "0.01", "100", "COMPACT"];
        if counting {
            args.push("COUNTING");
        }
        assert_eq!(c.call(&args), ok());
        let header = scandump(&mut c, "BF.SCANDUMP", key)[0].1.clone();
        let with_items = |items: u64| {
            let mut h = header.clone();
            h[40..48].copy_from_slice(&items.to_le_bytes());
            h
        };
        // One segment: 4,096 entries at most, each counted up to 2^48 + 1 times with
        // COUNTING; without, whatever BF.CARD can answer.
        let most = if counting {
            4096 * ((1 << 48) + 1)
        } else {
            i64::MAX as u64
        };
        for items in [most + 1, 1 << 63, u64::MAX] {
            let reply = c.call(&[
                b"BF.LOADCHUNK".as_slice(),
                b"copy",
                b"1",
                &with_items(items),
            ]);
            assert_eq!(reply, err("ERR received bad data"), "{key} {items}");
            assert_eq!(call!(c, "EXISTS", "copy"), Int(0));
        }
        let reply = c.call(&[b"BF.LOADCHUNK".as_slice(), b"copy", b"1", &with_items(most)]);
        assert_eq!(reply, ok(), "{key}");
        assert_eq!(call!(c, "BF.CARD", "copy"), Int(most as i64));
        assert_eq!(call!(c, "DEL", "copy"), Int(1));
    }
}

/// Finding 4 (high; second attack on segments): a header may say up to 2^63 - 1 items (the
/// most `BF.CARD` answers), and an add counted one more past it: `BF.CARD` answered
/// -9223372036854775808, the key's own `DUMP` no longer restored (`Bad data format`) and
/// `DEBUG RELOAD` refused the whole dataset (every key gone). An add past the most a header
/// may say is refused and changes nothing.
#[test]
fn adds_never_count_items_past_what_a_header_may_say() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(call!(c, "BF.RESERVE", "k", "0.01", "100", "COMPACT"), ok());
    assert_eq!(call!(c, "BF.ADD", "k", "a"), Int(1));
    let mut chunks = scandump(&mut c, "BF.SCANDUMP", "k");
    chunks[0].1[40..48].copy_from_slice(&(i64::MAX as u64 - 1).to_le_bytes());
    load_chunks(&mut c, "BF.LOADCHUNK", "copy", &chunks);
    assert_eq!(call!(c, "BF.ADD", "copy", "b"), Int(1));
    let dump = call!(c, "DUMP", "copy");
    for item in ["c", "d"] {
        assert_eq!(
            call!(c, "BF.ADD", "copy", item),
            cannot_grow(DEFAULT_MAX_FILTER_BYTES)
        );
    }
    assert_eq!(
        call!(c, "DUMP", "copy"),
        dump,
        "a refused add changes nothing"
    );
    for item in ["a", "b"] {
        assert_eq!(call!(c, "BF.EXISTS", "copy", item), Int(1));
    }
    assert_eq!(call!(c, "BF.CARD", "copy"), Int(i64::MAX));
    restore_from_own_dump(&mut c, "copy");
    assert_eq!(call!(c, "DEBUG", "RELOAD"), ok());
    assert_eq!(call!(c, "BF.CARD", "copy"), Int(i64::MAX));
    assert_eq!(call!(c, "BF.CARD", "k"), Int(1));
}

/// Finding 5 (medium; second attack on segments): a full segment (4,096 entries, what the
/// loader takes) of a `COUNTING` filter takes an add into the common prefix of its nearest
/// entry, and the merged count was capped at the most a counter holds (2^48 + 1): where the
/// entries' counts were at that cap (a crafted value, the header's items raised to match),
/// each such add counted one item more than the counts held, and the value no longer loaded
/// (its `DUMP` refused, `DEBUG RELOAD` dropping every key). An add whose merged count would
/// pass the cap is refused and changes nothing.
#[test]
fn a_full_segment_never_counts_more_items_than_its_counts_hold() {
    const MAX_COUNT: u64 = (1 << 48) + 1;
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(
        call!(c, "BF.RESERVE", "k", "1e-9", "100", "COMPACT", "COUNTING"),
        ok()
    );
    let header = &scandump(&mut c, "BF.SCANDUMP", "k")[0].1;
    let secret = u64::from_le_bytes(header[SECRET_AT].try_into().unwrap());
    let aimed = aimed_items(secret, 12, 4300);
    // Each aimed item added twice: every entry of the full segment has a counter word.
    madd_in_batches(&mut c, "k", &aimed[..4200]);
    madd_in_batches(&mut c, "k", &aimed[..4200]);
    let mut chunks = scandump(&mut c, "BF.SCANDUMP", "k");
    assert_eq!(chunks.len(), 2, "one header and one chunk of segments");
    // Every counter word of the full segment set to the cap, the header's items raised by
    // the counts added.
    let mut raised = 0u64;
    let mut full = 0;
    let data = &mut chunks[1].1;
    let mut at = 0;
    while at < data.len() {
        let words = u32::from_le_bytes(data[at..at + 4].try_into().unwrap()) as usize;
        let start = at + 4;
        at = start + 8 * words;
        if words == 0 {
            continue;
        }
        let head = u64::from_le_bytes(data[start..start + 8].try_into().unwrap());
        // The header's entries and counters: 13 bits each.
        let (entries, counters) = (head & 0x1fff, (head >> 13 & 0x1fff) as usize);
        if entries == 4096 {
            full += 1;
            for w in words - counters..words {
                let word = &mut data[start + 8 * w..start + 8 * w + 8];
                let old = u64::from_le_bytes(word.try_into().unwrap());
                raised += MAX_COUNT - ((old >> 16) + 2);
                word.copy_from_slice(&((old & 0xffff) | (MAX_COUNT - 2) << 16).to_le_bytes());
            }
        }
    }
    assert_eq!(full, 1, "the aimed items fill one segment");
    let items = u64::from_le_bytes(chunks[0].1[40..48].try_into().unwrap()) + raised;
    chunks[0].1[40..48].copy_from_slice(&items.to_le_bytes());
    load_chunks(&mut c, "BF.LOADCHUNK", "copy", &chunks);
    assert_eq!(call!(c, "BF.CARD", "copy"), Int(items as i64));
    // More aimed items: the full segment takes them into its entries, or refuses them.
    let mut args = vec!["BF.MADD".to_string(), "copy".to_string()];
    args.extend(aimed[4200..].iter().cloned());
    c.call(&args);
    let card = call!(c, "BF.CARD", "copy");
    restore_from_own_dump(&mut c, "copy");
    assert_eq!(call!(c, "BF.CARD", "copy"), card);
    assert_eq!(call!(c, "DEBUG", "RELOAD"), ok());
    assert_eq!(call!(c, "BF.CARD", "copy"), card);
}

/// Segments of an encoding-4 SCANDUMP, each its word count and words as a chunk holds it.
fn segments_of(chunks: &[(i64, Vec<u8>)]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (_, bytes) in &chunks[1..] {
        let mut at = 0;
        while at < bytes.len() {
            let words = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
            out.push(bytes[at..at + 4 + 8 * words].to_vec());
            at += 4 + 8 * words;
        }
    }
    out
}

/// Loads `header` then `segments` by LOADCHUNK, cut at each of `cuts`: the chunk after the
/// cut first sent with its last segment replaced by one no encoder writes (refused after
/// the segments before it were taken, so they are taken back), twice, then as it is. The
/// value answers, digests, dumps and measures as a fresh load of the same chunks.
fn assert_taken_back_loads(c: &mut Client, name: &str, header: &[u8], segments: &[Vec<u8>]) {
    let total = segments.len();
    let run = |from: usize, to: usize, bad: bool| {
        let mut bytes: Vec<u8> = segments[from..to].concat();
        if bad {
            bytes.truncate(bytes.len() - segments[to - 1].len());
            bytes.extend(1u32.to_le_bytes());
            bytes.extend(u64::MAX.to_le_bytes());
        }
        ((to + 1) as i64, bytes)
    };
    for cut in [0, 1, 2, 4000, 4095, 4096, 4097] {
        let what = format!("{name}, cut at segment {cut}");
        let mut all = vec![(1, header.to_vec())];
        all.extend(
            [(0, cut), (cut, total)]
                .into_iter()
                .filter(|(from, to)| from < to)
                .map(|(from, to)| run(from, to, false)),
        );
        let fresh = format!("{name}:fresh:{cut}");
        load_chunks(c, "BF.LOADCHUNK", &fresh, &all);
        let taken = format!("{name}:taken:{cut}");
        load_chunks(c, "BF.LOADCHUNK", &taken, &all[..all.len() - 1]);
        let (iter, bad) = run(cut, total, true);
        let send = |c: &mut Client| {
            c.call(&[
                b"BF.LOADCHUNK".as_slice(),
                taken.as_bytes(),
                iter.to_string().as_bytes(),
                &bad,
            ])
        };
        let reply = send(c);
        assert!(matches!(reply, Error(_)), "{what}: {reply:?}");
        // Once more: the segments before the bad one were taken back, not kept.
        assert_eq!(send(c), reply, "{what}");
        load_chunks(c, "BF.LOADCHUNK", &taken, &all[all.len() - 1..]);
        for command in ["BF.DEBUG", "BF.CARD", "DEBUG DIGEST-VALUE", "DUMP"] {
            let ask = |c: &mut Client, key: &str| {
                let mut args: Vec<&str> = command.split(' ').collect();
                args.push(key);
                c.call(&args)
            };
            let (a, b) = (ask(c, &taken), ask(c, &fresh));
            assert!(a == b, "{what}: {command}");
        }
        assert_eq!(
            call!(c, "MEMORY", "USAGE", taken.as_str(), "SAMPLES", "0"),
            call!(c, "MEMORY", "USAGE", fresh.as_str(), "SAMPLES", "0"),
            "{what}"
        );
        let debug = call!(c, "BF.DEBUG", taken.as_str()).array();
        assert!(
            format!("{debug:?}").contains(&format!("segments:{total} ")),
            "{what}: {debug:?}"
        );
        assert_eq!(
            call!(c, "BF.ADD", taken.as_str(), "x"),
            call!(c, "BF.ADD", fresh.as_str(), "x"),
            "{what}"
        );
        assert_eq!(call!(c, "BF.EXISTS", taken.as_str(), "x"), Int(1), "{what}");
        assert_eq!(call!(c, "DEL", taken.as_str(), fresh.as_str()), Int(2));
    }
}

/// A compact value past 4,097 segments (the directory's first chunk of 4,096 slots full and
/// a second one begun), loaded by LOADCHUNK with a chunk refused half-way through its
/// segments: the segments it brought are taken back, wherever the cut falls against the
/// directory's chunks, and the same chunk sent right completes a value identical to a fresh
/// load of the same bytes, down to MEMORY USAGE: plain and counting values of 4,098 empty
/// segments, and a plain one grown to them by adds.
#[test]
fn a_chunk_taken_back_past_the_directory_boundary_leaves_what_a_fresh_load_makes() {
    let s = Server::start();
    let mut c = s.client();
    for (source, counting) in [("plain", false), ("counting", true)] {
        let mut args = vec!["BF.RESERVE", source, "0.5", "100"];
        if counting {
            args.push("COUNTING");
        }
        args.push("COMPACT");
        assert_eq!(c.call(&args), ok(), "{args:?}");
        // Level 12 and split pointer 2: segments 0 to 4,097, none holding entries.
        let mut header = scandump(&mut c, "BF.SCANDUMP", source)[0].1.clone();
        header[28..32].copy_from_slice(&12u32.to_le_bytes());
        header[32..40].copy_from_slice(&2u64.to_le_bytes());
        let empty = vec![0u32.to_le_bytes().to_vec(); 4098];
        assert_taken_back_loads(&mut c, source, &header, &empty);
    }
    assert_eq!(
        call!(c, "BF.RESERVE", "grown", "0.5", "100", "COMPACT"),
        ok()
    );
    let mut next = 0;
    let segments = |c: &mut Client| {
        let debug = format!("{:?}", call!(c, "BF.DEBUG", "grown"));
        let at = debug.find("segments:").unwrap() + "segments:".len();
        debug[at..]
            .split(' ')
            .next()
            .unwrap()
            .parse::<usize>()
            .unwrap()
    };
    while segments(&mut c) < 4100 {
        let mut args = vec!["BF.MADD".to_string(), "grown".to_string()];
        args.extend((next..next + 100_000).map(|i| format!("g:{i}")));
        next += 100_000;
        assert!(matches!(c.call(&args), Array(_)));
    }
    let chunks = scandump(&mut c, "BF.SCANDUMP", "grown");
    let grown = segments_of(&chunks);
    assert_eq!(grown.len(), segments(&mut c));
    assert_taken_back_loads(&mut c, "grown", &chunks[0].1, &grown);
}
