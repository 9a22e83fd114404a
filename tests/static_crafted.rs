//! Crafted static builders (issue 50): hashes that share their top 22 bits, sent in decreasing
//! order as a `BF.LOADCHUNK` chunk or inside a `RESTORE` payload, make a builder whose memory
//! is in proportion to them, on the primary and on its replica, which hold the same value.
pub mod common;

use common::*;

const HASHES: u64 = 100_000;

/// HASHES distinct hashes sharing their top 22 bits, in decreasing order: each one lands in
/// front of all those before it.
fn crowded_decreasing() -> Vec<u64> {
    (1..=HASHES)
        .rev()
        .map(|i| (0x2A5F17 << 42) | (i * 1_000_003))
        .collect()
}

fn bytes_of(hashes: &[u64]) -> Vec<u8> {
    hashes.iter().flat_map(|h| h.to_le_bytes()).collect()
}

/// At most 10 bytes per hash and a constant: a run of hashes just split and grown once holds
/// 513 of them in room for 640. (A directory indexed by 22 shared bits has 4 Mi entries: this
/// builder took 17.7 MB.)
fn assert_proportional(c: &mut Client, key: &str) {
    let memory = value_memory(c, key);
    assert!(memory <= 10 * HASHES as i64 + 4096, "{key}: {memory} bytes");
}

#[test]
fn a_crowded_chunk_and_restore_payload_take_memory_in_proportion_everywhere() {
    let primary = Server::start();
    let replica = Server::replica_of(&primary, module_path(), &[]);
    let (mut p, mut r) = (primary.client(), replica.client());
    wait_replica_linked(&mut r);
    assert_eq!(
        call!(p, "BF.RESERVE", "empty", "0.01", "100", "STATIC"),
        ok()
    );
    let header = call!(p, "BF.SCANDUMP", "empty", "0").array()[1].bytes();
    let hashes = crowded_decreasing();
    let chunk = bytes_of(&hashes);
    assert_eq!(call!(p, "BF.LOADCHUNK", "chunk", "1", header), ok());
    assert_eq!(call!(p, "BF.LOADCHUNK", "chunk", "2", chunk.clone()), ok());
    // The empty builder's own payload (state, error, capacity, items, width, segment length,
    // segment count, seed), said to hold the hashes, then them in one buffer.
    let mut payload = Payload::parse(&call!(p, "DUMP", "empty").bytes());
    payload.fields[3] = RdbField::Unsigned(HASHES);
    payload.fields.push(RdbField::Buffer(chunk));
    assert_eq!(call!(p, "RESTORE", "restored", "0", payload.encode()), ok());
    wait_replica_synced(&mut p, &mut r);
    let increasing: Vec<u64> = hashes.iter().rev().copied().collect();
    for key in ["chunk", "restored"] {
        assert_proportional(&mut p, key);
        assert_eq!(
            call!(r, "MEMORY", "USAGE", key),
            call!(p, "MEMORY", "USAGE", key)
        );
        for c in [&mut p, &mut r] {
            assert_eq!(call!(c, "BF.CARD", key), Int(HASHES as i64));
            let chunks = scandump(c, "BF.SCANDUMP", key);
            assert_eq!(chunks.len(), 2, "{key}: the header and one chunk");
            assert_eq!(chunks[1].1, bytes_of(&increasing), "{key}");
        }
        assert_eq!(
            call!(p, "DEBUG", "DIGEST-VALUE", key),
            call!(r, "DEBUG", "DIGEST-VALUE", key)
        );
    }
}
