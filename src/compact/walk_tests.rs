//! The validator's walk given an older value's bytes chunk by chunk, at random splits, gives
//! the verdict and the value it gives given them at once (an RDB load), for genuine values,
//! values crowded into runs that wrap past the last slot or into a few quotients, and edited
//! ones; a chunk it refuses changes nothing, and a value between chunks saves and loads with
//! the same walk.

use super::*;
use crate::rdb::MemoryRdb;
use crate::test_rng::Rng;

const NO_LIMIT: u64 = u64::MAX;

/// An older value: random items, or hashes crowded near the table's end (clusters reaching
/// past the last slot into the first ones) or into four quotients; some mid-doubling.
fn value(rng: &mut Rng) -> Compact {
    let deletable = rng.below(2) == 1;
    let error = [0.01, 0.1, 0.001][rng.below(3) as usize];
    let mut v = Compact::new(1, error, deletable, NO_LIMIT).unwrap();
    let n = rng.below(3000);
    // Half the values are grown on until a doubling is in progress.
    let until_doubling = rng.below(2) == 0;
    let crowd = rng.below(3);
    let quotients: Vec<u64> = (0..4).map(|_| rng.next() & !(u64::MAX >> 20)).collect();
    for i in 0..n + 20_000 {
        if i >= n && (!until_doubling || v.doubling.is_some()) {
            break;
        }
        let hash = match crowd {
            0 => Compact::hash(&i.to_le_bytes()),
            1 => ItemHash {
                a: !(u64::MAX >> 6) | rng.next() >> 6,
                b: rng.next(),
            },
            _ => ItemHash {
                a: quotients[rng.below(4) as usize] | rng.next() >> 20,
                b: rng.next(),
            },
        };
        for _ in 0..if deletable { 1 + rng.below(3) } else { 1 } {
            let _ = v.add_hash(hash, NO_LIMIT);
        }
    }
    v
}

/// The value with one edit (or none): bits of its tables flipped, or a count or a
/// doubling's field changed.
fn edited(v: &Compact, rng: &mut Rng) -> Compact {
    let mut e = v.clone();
    match rng.below(8) {
        0..=2 => {}
        3 | 4 => {
            for _ in 0..1 + rng.below(3) {
                let new_len = e.table.bytes.len() as u64;
                let at = rng.below(e.stream_len());
                let bit = 1u8 << rng.below(8);
                match (at.checked_sub(new_len), &mut e.doubling) {
                    (None, _) => e.table.bytes[at as usize] ^= bit,
                    (Some(at), Some(d)) => d.old.bytes[at as usize] ^= bit,
                    _ => {}
                }
            }
        }
        5 => e.entries = e.entries.wrapping_add(rng.below(3)).wrapping_sub(1),
        6 => e.items += 1,
        _ => {
            if let Some(d) = &mut e.doubling {
                match rng.below(2) {
                    0 => d.reserve = d.reserve.saturating_sub(1 + rng.below(3)),
                    _ => d.cursor = d.cursor.wrapping_add(rng.below(5)).wrapping_sub(2),
                }
            }
        }
    }
    e
}

/// The stream of table bytes cut at random places into chunks, as `(iterator, bytes)`.
fn cut(stream: &[u8], rng: &mut Rng) -> Vec<(i64, Vec<u8>)> {
    let mut cuts: Vec<usize> = (0..rng.below(6))
        .map(|_| rng.below(stream.len() as u64) as usize)
        .collect();
    cuts.push(0);
    cuts.push(stream.len());
    cuts.sort_unstable();
    cuts.dedup();
    cuts.windows(2)
        .map(|w| ((w[1] + 1) as i64, stream[w[0]..w[1]].to_vec()))
        .collect()
}

#[test]
fn chunks_at_any_split_give_the_verdict_and_value_of_a_whole_load() {
    let mut rng = Rng::new(0x5a1c);
    let (mut accepted, mut refused, mut mid_doubling, mut refused_early) = (0, 0, 0, 0);
    for case in 0..400 {
        let genuine = value(&mut rng);
        let v = edited(&genuine, &mut rng);
        mid_doubling += u32::from(v.doubling.is_some());
        // An encoding-1 value (RDB encoding 1, header version 1) when it has no doubling.
        let legacy = v.doubling.is_none() && rng.below(4) == 0;
        let mut rdb = MemoryRdb::new();
        v.save_as(&mut rdb, if legacy { 1 } else { DOUBLING_ENCODING });
        let whole = Compact::load(
            &mut rdb,
            if legacy { 1 } else { DOUBLING_ENCODING },
            NO_LIMIT,
        );
        let mut as_sent = v.clone();
        as_sent.legacy = legacy;
        let stream: Vec<u8> = v.chunks().flat_map(|(_, b)| b.to_vec()).collect();
        let chunks = cut(&stream, &mut rng);
        let mut arriving = match Compact::from_header(&as_sent.encode_header(), NO_LIMIT) {
            Ok(a) => a,
            Err(_) => {
                assert!(whole.is_err(), "case {case}: header refused, RDB accepted");
                refused += 1;
                continue;
            }
        };
        let between = |arriving: &Compact| {
            // Between chunks: saved and loaded, the same walk; the validator agrees.
            let mut rdb = MemoryRdb::new();
            arriving.save(&mut rdb);
            let reloaded = Compact::load(&mut rdb, DOUBLING_ENCODING, NO_LIMIT);
            assert_eq!(reloaded.as_ref(), Ok(arriving), "case {case}");
            assert_eq!(arriving.validate(NO_LIMIT), Ok(()), "case {case}");
        };
        between(&arriving);
        let mut verdict = Ok(());
        for (k, (iter, bytes)) in chunks.iter().enumerate() {
            let before = arriving.clone();
            if let Err(e) = arriving.load_chunk(*iter, bytes, NO_LIMIT) {
                assert_eq!(
                    arriving, before,
                    "case {case}: a refused chunk changes nothing"
                );
                refused_early += usize::from(k + 1 < chunks.len());
                verdict = Err(e);
                break;
            }
            if !arriving.is_loaded() {
                between(&arriving);
            }
        }
        match (whole, verdict) {
            (Ok(whole), Ok(())) => {
                assert_eq!(arriving, whole, "case {case}");
                assert_eq!(arriving.validate(NO_LIMIT), Ok(()), "case {case}");
                accepted += 1;
            }
            (Err(_), Err(_)) => refused += 1,
            (whole, chunked) => panic!("case {case}: whole {whole:?}, chunked {chunked:?}"),
        }
    }
    eprintln!("{accepted} accepted, {refused} refused ({refused_early} before the last chunk), {mid_doubling} mid-doubling");
    assert!(
        accepted > 150 && refused > 40,
        "{accepted} accepted, {refused} refused"
    );
    assert!(mid_doubling > 100, "{mid_doubling} mid-doubling");
    assert!(
        refused_early > 5,
        "{refused_early} refused before the last chunk"
    );
}
