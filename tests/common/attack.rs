//! Helpers of the attack tests on valkey-bloom's values: a seedable generator, the lengths
//! and seeds of campaigns taken from the environment, and a key's `BF.LOAD` blob.

use super::client::Client;
use super::rdb::scandump;

/// splitmix64: seedable, the same on every machine.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn pick<'a, T>(&mut self, from: &'a [T]) -> &'a T {
        &from[self.below(from.len())]
    }
}

/// `BLOOMRS_ATTACK_SEED` (decimal), else `default`.
pub fn attack_seed(default: u64) -> u64 {
    std::env::var("BLOOMRS_ATTACK_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

pub fn attack_rounds(default: usize) -> usize {
    std::env::var("BLOOMRS_ATTACK_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A `SEED` for valkey-bloom's `BF.INSERT` (32 bytes).
pub const VB_SEED: &str = "valkey-bloom-seed-of-32-bytes-xx";

/// The `BF.LOAD` blob of a valkey-bloom key (its SCANDUMP header after the magic).
pub fn blob_of(c: &mut Client, key: &str) -> Vec<u8> {
    let header = scandump(c, "BF.SCANDUMP", key)[0].1.clone();
    assert!(header.starts_with(b"bloomrsL"), "{key}");
    header[8..].to_vec()
}
