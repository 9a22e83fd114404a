//! How an item becomes a fingerprint and two candidate buckets (RedisBloom's `LookupParams`).

use crate::hash::murmur64a;

/// The multiplier RedisBloom uses to derive a fingerprint's alternate bucket.
const ALT_MULTIPLIER: u64 = 0x5bd1_e995;

/// An item's fingerprint and its two candidate bucket hashes (reduced modulo a sub-filter's
/// bucket count when used).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ItemHash {
    pub h1: u64,
    pub h2: u64,
    /// 1..=255; 0 marks an empty slot.
    pub fingerprint: u8,
}

impl ItemHash {
    pub fn of(item: &[u8]) -> Self {
        let hash = murmur64a(item, 0);
        // hash % 255 + 1 is at most 255, so the narrowing is exact.
        let fingerprint = (hash % 255 + 1) as u8;
        Self {
            h1: hash,
            h2: alt_hash(fingerprint, hash),
            fingerprint,
        }
    }
}

/// The other candidate bucket of `fingerprint` seen from `index` (an involution on the full
/// 64-bit value, and on indices modulo any power of two).
pub(crate) fn alt_hash(fingerprint: u8, index: u64) -> u64 {
    index ^ u64::from(fingerprint).wrapping_mul(ALT_MULTIPLIER)
}
