//! Seed corpora for the fuzz targets: values of every kind but static that
//! commands built, grown past their first link or sub-filter, framed as each target reads
//! a LOADCHUNK header and its chunks; and the same with one byte of the header changed (each
//! position, XOR 0x01 and XOR 0x80), so the fuzzers start from crafted values next to genuine
//! ones, in the loaders' targets and in the model check's. `scripts/fuzz.sh` writes them with
//! `BLOOMRS_FUZZ_SEEDS=fuzz/corpus cargo test --profile tests --lib write_fuzz_seeds -- --ignored`.

use std::path::Path;

use super::tests::{grown, params};
use super::{
    BlockedKind, Codec, CompactCounting, CompactPlain, CompactWindowedKind, Counting, Cuckoo,
    Plain, SparseKind, WindowedKind,
};

/// The operations after a model target's value: every byte value, then a mix of adds,
/// deletes, lookups, saves and ticks.
const OPS: &[u8] = &[0x04, 0x20, 0x06, 0x08, 0x0b, 0x0c, 0x05, 0x40, 0x0d, 0x10];

fn blob(bytes: &[u8]) -> Vec<u8> {
    let mut out = (bytes.len() as u32).to_le_bytes().to_vec();
    out.extend_from_slice(bytes);
    out
}

/// A header and its value's chunks, as `Frames` reads them.
fn framed<T: Codec>(value: &T, header: &[u8]) -> Vec<u8> {
    let mut out = blob(header);
    for (iter, bytes) in value.chunks() {
        out.extend_from_slice(&iter.to_le_bytes());
        out.extend_from_slice(&blob(&bytes));
    }
    out
}

/// The genuine header, then each one-byte change of it, by seed name.
fn headers(genuine: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut out = vec![("genuine".to_string(), genuine.to_vec())];
    for at in 0..genuine.len() {
        for flip in [0x01u8, 0x80] {
            let mut crafted = genuine.to_vec();
            crafted[at] ^= flip;
            out.push((format!("b{at}_x{flip:02x}"), crafted));
        }
    }
    out
}

/// Writes one kind's seeds: `target` reads the frames after `mode` (empty for the targets
/// without a mode byte), `model` reads origin byte 1, the value with its mode byte, the ops.
fn write<T: Codec>(dir: &Path, kind: &str, value: &T, target: &str, mode: &[u8], model: &str) {
    let ops: Vec<u8> = (0..=255u8).chain(OPS.iter().copied()).collect();
    for folder in [target, model] {
        std::fs::create_dir_all(dir.join(folder)).expect("corpus folder");
    }
    for (name, header) in headers(&value.encode_header()) {
        let frames = framed(value, &header);
        if name == "genuine" {
            let decoded = super::decode_value::<T>(&[&[1u8][..], &frames].concat(), 1 << 30);
            assert!(
                decoded.as_ref() == Some(value),
                "{kind}: the genuine seed is the value"
            );
        }
        let seed = [mode, &frames].concat();
        let path = |folder: &str| dir.join(folder).join(format!("crafted_{kind}_{name}"));
        std::fs::write(path(target), &seed).expect("seed written");
        let model_seed = [&[1u8][..], &blob(&[&[1u8][..], &frames].concat()), &ops].concat();
        std::fs::write(path(model), model_seed).expect("seed written");
    }
}

#[test]
#[ignore = "writes files: run by scripts/fuzz.sh"]
fn write_fuzz_seeds() {
    let Some(dir) = std::env::var_os("BLOOMRS_FUZZ_SEEDS") else {
        panic!("BLOOMRS_FUZZ_SEEDS names the corpus folder");
    };
    let dir = Path::new(&dir);
    let p = params(10, 0.01, 2, 0);
    let plain: Plain = grown(&p, 40);
    write(dir, "plain", &plain.0, "bloom_chunks", &[], "model_chain");
    let counting: Counting = grown(&p, 40);
    write(
        dir,
        "counting",
        &counting.0,
        "counting",
        &[1],
        "model_counting",
    );
    let blocked: BlockedKind = grown(&p, 40);
    write(dir, "blocked", &blocked.0, "blocked", &[1], "model_blocked");
    let windowed: WindowedKind = grown(&p, 40);
    write(
        dir,
        "windowed",
        &windowed.0,
        "windowed",
        &[1],
        "model_windowed",
    );
    let feed: CompactWindowedKind = grown(&p, 1500);
    write(
        dir,
        "compact_windowed",
        &feed.0,
        "compact_windowed",
        &[1],
        "model_compact_windowed",
    );
    let sparse: SparseKind = grown(&params(1000, 0.01, 2, 0), 20);
    let super::sparse::Form::Sparse(sparse) = &sparse.form else {
        panic!("promoted at 20 items");
    };
    write(dir, "sparse", sparse, "sparse", &[1], "model_sparse");
    // Sub-filters of 256 bytes: raising their count by 32768 (byte 25 ^ 0x80) is over the
    // fuzz targets' 1 MiB cap, where 8-byte ones loaded 32771 that a model run scanned at
    // every step (220 s for that one seed).
    let cuckoo: Cuckoo = grown(&params(256, 0.01, 1, 0), 600);
    write(
        dir,
        "cuckoo",
        &cuckoo.0,
        "cuckoo_chunks",
        &[],
        "model_cuckoo",
    );
    // Compact filters split to several segments, the split pointer inside a level.
    let compact: CompactPlain = grown(&p, 2500);
    write(dir, "compact", &compact.0, "compact", &[1], "model_compact");
    let counted: CompactCounting = grown(&p, 2500);
    write(
        dir,
        "compact_counting",
        &counted.0,
        "compact",
        &[1],
        "model_compact_counting",
    );
}
