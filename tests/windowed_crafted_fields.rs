//! Crafted windowed values, one field at a time: the generation count at every bound and a
//! compact window's header changed by one field (its rate, generation count or capacity), or
//! completed by another window's chunks, through `BF.LOADCHUNK` and `RESTORE`. Every payload
//! is refused with a clean error, or loads into a value that answers as it writes back, comes
//! through `DEBUG RELOAD` unchanged and reaches the replica as it is.
pub mod common;

use common::*;

/// What a client reads of a value: BF.INFO, BF.DEBUG, BF.CARD and BF.EXISTS of `items`.
fn answers(c: &mut Client, key: &str, items: &[String]) -> Vec<Reply> {
    let mut out = vec![
        call!(c, "BF.INFO", key),
        call!(c, "BF.DEBUG", key),
        call!(c, "BF.CARD", key),
    ];
    out.extend(mexists(c, key, items));
    out
}

fn shape_of(c: &[(i64, Vec<u8>)]) -> Vec<(i64, usize)> {
    c.iter().map(|(i, b)| (*i, b.len())).collect()
}

/// A value loaded from crafted bytes answers as its own DUMP and its own SCANDUMP load
/// again, and writes back exactly what was sent (`payload` for RESTORE, `chunks` for
/// LOADCHUNK).
fn assert_writes_back(
    c: &mut Client,
    key: &str,
    items: &[String],
    payload: Option<&[u8]>,
    chunks: Option<&[(i64, Vec<u8>)]>,
    what: &str,
) {
    let read = answers(c, key, items);
    assert!(
        !read.iter().any(|r| matches!(r, Error(_))),
        "{what}: {read:?}"
    );
    let dump = c.call(&["DUMP", key]).bytes();
    if let Some(payload) = payload {
        assert_eq!(dump, payload, "{what}: DUMP after RESTORE");
    }
    let mine = scandump(c, "BF.SCANDUMP", key);
    if let Some(chunks) = chunks {
        // The same header and the same segments, to the same last iterator (a window's
        // SCANDUMP groups them by generation, however they were sent).
        let joined = |c: &[(i64, Vec<u8>)]| -> (Vec<u8>, i64, Vec<u8>) {
            let data = c.iter().skip(1).flat_map(|(_, b)| b.clone()).collect();
            (c[0].1.clone(), c[c.len() - 1].0, data)
        };
        let (sent, back) = (joined(chunks), joined(&mine));
        assert!(
            sent == back,
            "{what}: SCANDUMP after LOADCHUNK: {:?} sent, {:?} back",
            shape_of(chunks),
            shape_of(&mine)
        );
    }
    let restored = format!("{key}:restored");
    let reply = c.call(&[b"RESTORE".as_slice(), restored.as_bytes(), b"0", &dump]);
    assert_eq!(reply, ok(), "{what}: its own DUMP");
    assert_eq!(answers(c, &restored, items), read, "{what}: its own DUMP");
    let loaded = format!("{key}:loaded");
    load_chunks(c, "BF.LOADCHUNK", &loaded, &mine);
    assert_eq!(answers(c, &loaded, items), read, "{what}: its own SCANDUMP");
    assert_eq!(call!(c, "DEL", restored.as_str(), loaded.as_str()), Int(2));
}

/// Sends a crafted window header then `data` to BF.LOADCHUNK: refused with an ERR reply
/// (the key absent), or loaded and writing back what it was sent. Whether it loaded whole
/// (a data chunk refused leaves it loading).
fn crafted_loadchunk(
    c: &mut Client,
    key: &str,
    header: Vec<u8>,
    data: &[(i64, Vec<u8>)],
    items: &[String],
    what: &str,
) -> bool {
    let reply = call!(c, "BF.LOADCHUNK", key, 1, header.clone());
    if let Error(e) = &reply {
        assert!(e.starts_with("ERR "), "{what}: {e}");
        assert_eq!(call!(c, "EXISTS", key), Int(0), "{what}");
        return false;
    }
    assert_eq!(reply, ok(), "{what}");
    let mut sent = vec![(1, header)];
    for (iter, bytes) in data {
        let reply = call!(c, "BF.LOADCHUNK", key, *iter, bytes.clone());
        if let Error(e) = &reply {
            // The value stays as the chunks before left it, still loading.
            assert!(e.starts_with("ERR "), "{what}: {e}");
            return false;
        }
        assert_eq!(reply, ok(), "{what}");
        sent.push((*iter, bytes.clone()));
    }
    assert_writes_back(c, key, items, None, Some(&sent), what);
    true
}

/// Sends a crafted payload to RESTORE: refused with an ERR reply (the key absent), or
/// loaded and writing back the same bytes. Whether it loaded.
fn crafted_restore(
    c: &mut Client,
    key: &str,
    payload: &[u8],
    items: &[String],
    what: &str,
) -> bool {
    let reply = c.call(&[b"RESTORE".as_slice(), key.as_bytes(), b"0", payload]);
    if let Error(e) = &reply {
        assert!(e.starts_with("ERR "), "{what}: {e}");
        assert_eq!(call!(c, "EXISTS", key), Int(0), "{what}");
        return false;
    }
    assert_eq!(reply, ok(), "{what}");
    assert_writes_back(c, key, items, Some(payload), None, what);
    true
}

/// Everything loaded survives DEBUG RELOAD as it is and reached the replica.
fn assert_reloads_and_replicates(rig: &mut Rig, what: &str) {
    rig.assert_alive(what);
    let before = dumps(&mut rig.p);
    assert_eq!(rig.p.call(&["DEBUG", "RELOAD"]), ok(), "{what}");
    assert_same(&before, &dumps(&mut rig.p), what);
    rig.assert_replica_identical(what);
}

/// A window's generation count is 32 bits in SCANDUMP headers and RDB values while a window
/// holds at most 32 generations: every count around the bounds of both (0, 1, 2, 32, 33,
/// 65,535, 65,536, 2^32 - 1), in a plain and a compact window, by LOADCHUNK and RESTORE, is
/// refused with an ERR reply, or loads into a value that writes back what it was sent,
/// survives DEBUG RELOAD and reaches the replica as it is.
#[test]
fn every_generation_count_is_refused_cleanly_or_written_back() {
    let mut rig = Rig::start();
    let mut rng = Rng(0x6e51);
    let mut accepted = 0;
    for compact in [false, true] {
        for generations in [2, 4, 32] {
            let key = format!("genuine:{compact}:{generations}");
            genuine(&mut rig.p, &key, compact, generations, &mut rng);
            let items: Vec<String> = (0..50).map(|i| format!("{key}:1:{i}")).collect();
            let chunks = scandump(&mut rig.p, "BF.SCANDUMP", &key);
            let payload = Payload::parse(&rig.p.call(&["DUMP", key.as_str()]).bytes());
            let header = Header::parse(&chunks[0].1);
            for count in [0, 1, 2, 3, 4, 31, 32, 33, 65_535, 65_536, u32::MAX] {
                let what = format!("{key}: generations {count}");
                let mut crafted = header.clone();
                crafted.generations = count;
                let lc = format!("lc:{compact}:{generations}:{count}");
                let loaded = crafted_loadchunk(
                    &mut rig.p,
                    &lc,
                    crafted.encode(),
                    &chunks[1..],
                    &items,
                    &what,
                );
                let rs = format!("rs:{compact}:{generations}:{count}");
                let bytes = payload
                    .with(1, RdbField::Unsigned(u64::from(count)))
                    .encode();
                let restored = crafted_restore(&mut rig.p, &rs, &bytes, &items, &what);
                assert_eq!(loaded, restored, "{what}: LOADCHUNK and RESTORE agree");
                if count == generations {
                    assert!(loaded, "{what}: the genuine value");
                }
                accepted += usize::from(loaded);
            }
        }
        assert_reloads_and_replicates(&mut rig, "generation counts");
    }
    assert!(accepted >= 6, "{accepted}");
}

/// A compact window's generations hold no rate of their own while they are one segment:
/// the window's share is theirs. Genuine generations (of one segment and split) under a
/// window header whose error, generation count or capacity changed, or a header of one rate
/// completed by the chunks of a window of another, are refused, or load into a value that
/// answers BF.INFO, BF.DEBUG, BF.CARD and BF.EXISTS as the bytes it writes back do, and
/// finds every item the genuine window holds.
#[test]
fn a_compact_window_under_a_changed_header_answers_as_it_writes_back() {
    let mut rig = Rig::start();
    let c = &mut rig.p;
    let start = noon(c);
    let slot = 3_600_000 / 3;
    let mut items = Vec::new();
    for (key, error) in [("wc", "0.01"), ("other", "0.03")] {
        let args = [
            "BF.RESERVE",
            key,
            error,
            "100",
            "COMPACT",
            "WINDOW",
            "3600",
            "GENERATIONS",
            "3",
        ];
        assert_eq!(c.call(&args), ok(), "{args:?}");
    }
    // One generation of a few items, one split many times, one of a single item.
    for (k, n) in [(0, 5), (1, 3000), (2, 1)] {
        travel_to(c, start + k * slot);
        let added: Vec<String> = (0..n).map(|i| format!("item:{k}:{i}")).collect();
        madd_in_batches(c, "wc", &added);
        madd_in_batches(c, "other", &added);
        items.extend(added);
    }
    let debug = format!("{:?}", call!(c, "BF.DEBUG", "wc"));
    assert!(
        debug.contains("segments:1 ") && !debug.contains("segments:2 "),
        "{debug}"
    );
    let probe: Vec<String> = items
        .iter()
        .step_by(37)
        .cloned()
        .chain((0..200).map(|i| format!("absent:{i}")))
        .collect();
    let genuine_answers = mexists(c, "wc", &probe);
    let chunks = scandump(c, "BF.SCANDUMP", "wc");
    assert!(chunks.len() > 2, "split generations come in chunks");
    let other = scandump(c, "BF.SCANDUMP", "other");
    let payload = Payload::parse(&c.call(&["DUMP", "wc"]).bytes());
    let header = Header::parse(&chunks[0].1);
    let mut variants: Vec<(String, Header)> = Vec::new();
    let e = header.error;
    let mut errors = vec![e * 2.0, e / 2.0, e * 3.0 / 4.0];
    let (mut up, mut down) = (e, e);
    for _ in 0..4 {
        up = f64::from_bits(up.to_bits() + 1);
        down = f64::from_bits(down.to_bits() - 1);
        errors.extend([up, down]);
    }
    for v in errors {
        let mut h = header.clone();
        h.error = v;
        variants.push((format!("error {v:e}"), h));
    }
    for v in [2, 4, 32] {
        let mut h = header.clone();
        h.generations = v;
        variants.push((format!("generations {v}"), h));
    }
    for v in [0, 1, 2, 99, 101, 3000, 1 << 20] {
        let mut h = header.clone();
        h.capacity = v;
        variants.push((format!("capacity {v}"), h));
    }
    let mut accepted = 0;
    for (n, (what, h)) in variants.iter().enumerate() {
        let lc = format!("lc:{n}");
        let loaded = crafted_loadchunk(c, &lc, h.encode(), &chunks[1..], &probe, what);
        // The same change in the RDB value: window, generations, capacity, error, ...
        let field = if what.starts_with("error") {
            (3, RdbField::Double(h.error))
        } else if what.starts_with("generations") {
            (1, RdbField::Unsigned(u64::from(h.generations)))
        } else {
            (2, RdbField::Unsigned(h.capacity))
        };
        let bytes = payload.with(field.0, field.1).encode();
        let rs = format!("rs:{n}");
        let restored = crafted_restore(c, &rs, &bytes, &probe, what);
        assert_eq!(loaded, restored, "{what}: LOADCHUNK and RESTORE agree");
        if loaded {
            accepted += 1;
            for key in [&lc, &rs] {
                assert_eq!(mexists(c, key, &probe), genuine_answers, "{what}: {key}");
            }
        }
    }
    assert!(accepted > 0, "some capacities load");
    // A header of one rate whose generations the chunks of another window complete, and
    // the same header with the other window's rate.
    let mut other_rate = header.clone();
    other_rate.error = Header::parse(&other[0].1).error;
    for (n, (what, h, data)) in [
        ("chunks of another rate", header.clone(), &other[1..]),
        (
            "error of the other window",
            other_rate.clone(),
            &chunks[1..],
        ),
        ("both of the other window", other_rate, &other[1..]),
    ]
    .into_iter()
    .enumerate()
    {
        let lc = format!("mixed:{n}");
        if crafted_loadchunk(c, &lc, h.encode(), data, &probe, what) {
            exercise(c, &lc, what);
        }
    }
    assert_reloads_and_replicates(&mut rig, "changed headers");
}
