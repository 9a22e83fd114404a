//! Where an item's bits are: its block by a multiply-shift of the item hash's first half
//! (uniform over any block count, no division), and its `k` bits in that block from the
//! second half, each the top nine bits of the half times one of `k` fixed odd salts (the
//! scheme of Parquet's split block filter, widened from 32 to 64 bits and from 8 to up to 64
//! bits per item). The bits are drawn independently, so two may coincide; the sizing's model
//! counts that.

use super::blocks::Block;
use super::sizing::MAX_HASHES;
use crate::bloom::ItemHash;
use crate::hash::splitmix64;

/// One odd multiplier per bit of an item: the splitmix64 sequence from a fixed seed, made odd.
const SALTS: [u64; MAX_HASHES as usize] = salts();

const fn salts() -> [u64; MAX_HASHES as usize] {
    let mut out = [0u64; MAX_HASHES as usize];
    let mut state: u64 = 0x626c_6f6f_6d72_7342; // "bloomrsB"
    let mut i = 0;
    while i < out.len() {
        out[i] = splitmix64(&mut state) | 1;
        i += 1;
    }
    out
}

/// The block of `blocks` an item lands in, by the first half of its hash (`ItemHash::a`).
#[inline]
pub fn block_index(a: u64, blocks: u64) -> usize {
    ((u128::from(a) * u128::from(blocks)) >> 64) as usize
}

/// The item's `i`-th bit in its block (0..512).
#[inline]
fn bit(hash: ItemHash, i: usize) -> u32 {
    (hash.b.wrapping_mul(SALTS[i % SALTS.len()]) >> 55) as u32
}

#[inline]
fn word(at: u32) -> (usize, u64) {
    let w = (at >> 6) as usize;
    (w, 1u64 << (at & 63))
}

#[inline]
fn load(block: &Block, w: usize) -> u64 {
    let mut bytes = [0u8; 8];
    if let Some(src) = block.0.get(w * 8..w * 8 + 8) {
        bytes.copy_from_slice(src);
    }
    u64::from_le_bytes(bytes)
}

/// Whether every one of the item's `k` bits is set; stops at the first clear one (an absent
/// item in a half-full block, most lookups, after about two).
#[inline]
pub fn holds(block: &Block, hash: ItemHash, k: u32) -> bool {
    (0..k as usize).all(|i| {
        let (w, mask) = word(bit(hash, i));
        load(block, w) & mask != 0
    })
}

/// Sets the item's `k` bits; true if one of them was clear.
#[inline]
pub fn set(block: &mut Block, hash: ItemHash, k: u32) -> bool {
    let mut masks = [0u64; 8];
    for i in 0..k as usize {
        let (w, mask) = word(bit(hash, i));
        if let Some(m) = masks.get_mut(w) {
            *m |= mask;
        }
    }
    let mut changed = false;
    for (w, mask) in masks.iter().enumerate() {
        let old = load(block, w);
        changed |= old & mask != *mask;
        if let Some(dst) = block.0.get_mut(w * 8..w * 8 + 8) {
            dst.copy_from_slice(&(old | mask).to_le_bytes());
        }
    }
    changed
}
