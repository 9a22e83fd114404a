//! The two hash functions RedisBloom uses, bit for bit: Austin Appleby's MurmurHash64A (every
//! filter created today) and the 32-bit MurmurHash2 (Bloom filters written without FORCE64).
//! Both read the key as little-endian words, as RedisBloom does on x86-64.

/// MurmurHash3's 64-bit finaliser: a bijection of `u64`, which the static sets' fuse mixer and
/// the compact segments' keyed placement build on.
#[inline]
pub fn fmix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// SplitMix64 (Steele, Lea and Flood, 2014): the next number of the sequence from `state`,
/// which it advances. The fixed sequences here (static sets' seeds, blocked filters' salts,
/// the compact estimate's fingerprints) are all this one.
#[inline]
pub const fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// MurmurHash64A with the given seed.
#[inline]
pub fn murmur64a(key: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;

    let mut h = seed ^ (key.len() as u64).wrapping_mul(M);
    let mut blocks = key.chunks_exact(8);
    for block in &mut blocks {
        let mut word = [0u8; 8];
        word.copy_from_slice(block);
        let mut k = u64::from_le_bytes(word);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        for (i, byte) in tail.iter().enumerate().rev() {
            h ^= u64::from(*byte) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// The 32-bit MurmurHash2 with the given seed.
#[inline]
pub fn murmur2(key: &[u8], seed: u32) -> u32 {
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;

    let mut h = seed ^ (key.len() as u32);
    let mut blocks = key.chunks_exact(4);
    for block in &mut blocks {
        let mut word = [0u8; 4];
        word.copy_from_slice(block);
        let mut k = u32::from_le_bytes(word);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        for (i, byte) in tail.iter().enumerate().rev() {
            h ^= u32::from(*byte) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h
}

/// Answers a lookup for every item in order, a few items behind the one being hashed:
/// `locate` hashes an item and starts loading the memory its lookup reads, `lookup` answers
/// from what `locate` returned, so the cache misses of consecutive items overlap
/// (`BF.MEXISTS` on filters larger than the caches).
#[inline]
pub fn lookahead<'a, H: Copy + Default>(
    items: impl Iterator<Item = &'a [u8]>,
    mut locate: impl FnMut(&[u8]) -> H,
    lookup: impl Fn(H) -> bool,
    mut answer: impl FnMut(bool),
) {
    const AHEAD: usize = 8;
    let mut ring = [H::default(); AHEAD];
    let mut queued = 0usize;
    for item in items {
        let located = locate(item);
        let slot = queued % AHEAD;
        if queued >= AHEAD {
            answer(lookup(ring[slot]));
        }
        ring[slot] = located;
        queued += 1;
    }
    for k in queued.saturating_sub(AHEAD)..queued {
        answer(lookup(ring[k % AHEAD]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEED_A: u64 = 0xc6a4_a793_5bd1_e995;

    fn pair(item: &[u8]) -> (u64, u64) {
        let a = murmur64a(item, SEED_A);
        (a, murmur64a(item, a))
    }

    #[test]
    fn murmur64a_vectors() {
        let fox = b"The quick brown fox jumps over the lazy dog";
        assert_eq!(pair(b"hello"), (0x5ba5b8a59803e699, 0xa7d451d588a0c2a4));
        assert_eq!(murmur64a(b"hello", 0), 0x1e68d17c457bf117);
        assert_eq!(pair(b""), (0x1ab11ea5a7b2c56e, 0xbbddcb5ab56dd547));
        assert_eq!(murmur64a(b"", 0), 0);
        assert_eq!(pair(fox), (0xc7a616a28f4a74d6, 0xfab0774384f74e2a));
        assert_eq!(murmur64a(fox, 0), 0x5589ca33042a861b);
    }

    #[test]
    fn reference_item_vectors() {
        assert_eq!(murmur64a(b"foo", 0), 0xcdde38358fd25b01);
        assert_eq!(pair(b"foo"), (0x822b4f99b121f10d, 0x9d63d52a557f61c2));
        assert_eq!(murmur64a(b"item0", 0), 0xf5ad6b7065a89185);
        assert_eq!(pair(b"item0"), (0xb695a0dfad60344a, 0xa508c3304fbf7a69));
        assert_eq!(murmur64a(&[0x00, 0xff], 0), 0x0b704c5cb3ae5a25);
        assert_eq!(
            pair(&[0x00, 0xff]),
            (0xf75c6e60c03635b7, 0x0bff0ba307d3258f)
        );
    }

    #[test]
    fn murmur2_vector() {
        assert_eq!(murmur2(b"foo", 0x9747_b28c), 0x23a2_56d0);
    }
}
