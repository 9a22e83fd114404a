//! Where an item goes: its hash read as a bit string, keyed by the filter's secret.
//!
//! A filter created by a command gets a secret chosen on the primary (carried in the value
//! and in what creation propagates, so replicas and reloads place items alike): the bit
//! string is a keyed bijective mix of the item's MurmurHash64A, so a client that does not
//! know the secret cannot choose items that share a segment (issue 35). Items with equal
//! 64-bit hashes still share everything: they are one item to the filter, and a repeated
//! item costs a count, not an entry. A filter converted from an older encoding has no secret
//! (zero): its entries are prefixes of the unkeyed string, which is kept.

use crate::bloom::ItemHash;
use crate::hash::fmix64 as finalise;

/// A bijection of `x` keyed by `key`.
#[inline]
fn keyed(x: u64, key: u64) -> u64 {
    finalise(finalise(x ^ key).wrapping_add(key))
}

/// The item's bit string (most significant bit first). A keyed string is mixed from the
/// first hash alone (`Segmented::hash_of` leaves the second out for it).
#[inline]
pub fn bits(hash: ItemHash, secret: u64) -> u128 {
    if secret == 0 {
        return u128::from(hash.a) << 64 | u128::from(hash.b);
    }
    let high = keyed(hash.a, secret);
    let low = keyed(high, secret.rotate_left(29) ^ 0x9e37_79b9_7f4a_7c15);
    u128::from(high) << 64 | u128::from(low)
}

/// The first `level` bits of the string as a segment number (the first bit lowest), so a
/// split of segment `p` at `level` sends an entry to `p` or `p + 2^level` by the first bit
/// after its address: the top bit of its fingerprint.
#[inline]
pub fn address(bits: u128, level: u32) -> u64 {
    ((bits >> 64) as u64).reverse_bits() & ((1u64 << level) - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_bits_differ_by_secret_and_keep_equal_hashes_equal() {
        let hash = ItemHash { a: 42, b: 7 };
        let other = ItemHash { a: 42, b: 8 };
        assert_eq!(bits(hash, 0), 42u128 << 64 | 7);
        assert_eq!(bits(hash, 5), bits(other, 5));
        assert_ne!(bits(hash, 5), bits(hash, 6));
    }

    #[test]
    fn address_reads_the_first_bits() {
        let bits = 0b101u128 << 125;
        assert_eq!(address(bits, 0), 0);
        assert_eq!(address(bits, 1), 1);
        assert_eq!(address(bits, 3), 0b101);
    }
}
