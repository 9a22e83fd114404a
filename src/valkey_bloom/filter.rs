//! One filter of a valkey-bloom object: the bytes of the `bloomfilter` crate (3.0.1) that
//! valkey-bloom stores, and its bit positions.
//!
//! Bytes: version 1, the bit array's length in bytes (u64 LE), the number of hashes k (u32
//! LE), the 32-byte seed, then the bits (bit b at byte b / 8, mask 1 << (b % 8)). An item's
//! positions: h0 and h1 are SipHash-1-3 of its length (u64 LE) and bytes under the keys cut
//! from seed bytes 0..16 and 16..32; position i is g_i mod m, with g_0 = h0, g_1 = h1 and
//! g_i = (h0 + i * h1 wrapping) mod (2^64 - 59) after that.

use super::siphash::sip13;

/// The bytes before a filter's bits.
pub const FILTER_HEADER_BYTES: usize = 45;
/// The most hashes a filter may use: what the smallest positive rate would need (1,022).
pub const MAX_HASHES: u32 = 1024;
/// The version byte of a filter's bytes.
const FILTER_VERSION: u8 = 1;
/// The largest 64-bit prime, which positions after the second are reduced by.
const PRIME: u64 = 0xFFFF_FFFF_FFFF_FFC5;

/// An item's two SipHash values.
#[derive(Debug, Clone, Copy)]
pub struct ItemHashes(u64, u64);

/// One filter: its bytes as stored (header, then bits), its keys, and its counts.
#[derive(Debug, Clone, PartialEq)]
pub struct SipFilter {
    bytes: Box<[u8]>,
    keys: [(u64, u64); 2],
    hashes: u32,
    /// Items this filter is sized for.
    pub capacity: u64,
    /// Items added to it.
    pub items: u64,
}

/// The bit array's length in bytes for `capacity` items at `rate`, as the crate sizes it:
/// ceil(n * ln p / (-8 * ln^2 2)); None past what fits memory.
pub fn bitmap_bytes(capacity: u64, rate: f64) -> Option<u64> {
    let ln2 = std::f64::consts::LN_2;
    let bytes = ((capacity as f64) * rate.ln() / (-8.0 * (ln2 * ln2))).ceil();
    (bytes >= 1.0 && bytes < (1u64 << 40) as f64).then_some(bytes as u64)
}

/// The number of hashes for `bytes` of bits and `capacity` items, as the crate picks it.
fn hash_count(bytes: u64, capacity: u64) -> u32 {
    let m = (bytes * 8) as f64;
    let n = capacity as f64;
    ((m / n * 2f64.ln()).round() as u32).clamp(1, MAX_HASHES)
}

fn key(seed: &[u8]) -> (u64, u64) {
    let word = |at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&seed[at..at + 8]);
        u64::from_le_bytes(w)
    };
    (word(0), word(8))
}

/// The two SipHash keys a seed gives.
fn keys_of(seed: &[u8; 32]) -> [(u64, u64); 2] {
    [key(&seed[..16]), key(&seed[16..])]
}

impl SipFilter {
    /// An empty filter of `bytes` bytes of bits for `capacity` items (the caller checked the
    /// size against its budget).
    pub(crate) fn new(seed: [u8; 32], capacity: u64, bytes: u64) -> SipFilter {
        let hashes = hash_count(bytes, capacity);
        let mut all = vec![0u8; FILTER_HEADER_BYTES + bytes as usize];
        all[0] = FILTER_VERSION;
        all[1..9].copy_from_slice(&bytes.to_le_bytes());
        all[9..13].copy_from_slice(&hashes.to_le_bytes());
        all[13..45].copy_from_slice(&seed);
        SipFilter {
            bytes: all.into_boxed_slice(),
            keys: keys_of(&seed),
            hashes,
            capacity,
            items: 0,
        }
    }

    /// A filter from its stored bytes, with the header [`check_filter_bytes`] read from them.
    pub(crate) fn from_checked(
        bytes: Box<[u8]>,
        header: Header,
        capacity: u64,
        items: u64,
    ) -> Self {
        SipFilter {
            keys: keys_of(&header.seed),
            hashes: header.hashes,
            bytes,
            capacity,
            items,
        }
    }

    /// The filter's stored bytes: header and bits.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The stored bytes' allocation, for moving it (active defragmentation).
    pub fn storage_mut(&mut self) -> &mut Box<[u8]> {
        &mut self.bytes
    }

    /// The bits alone.
    pub fn bits(&self) -> &[u8] {
        self.bytes.get(FILTER_HEADER_BYTES..).unwrap_or_default()
    }

    pub fn hashes(&self) -> u32 {
        self.hashes
    }

    pub fn seed(&self) -> [u8; 32] {
        let mut seed = [0u8; 32];
        if let Some(stored) = self.bytes.get(13..FILTER_HEADER_BYTES) {
            seed.copy_from_slice(stored);
        }
        seed
    }

    /// The item's two SipHash values under this filter's keys (every filter of an object has
    /// the same).
    pub fn hashes_of(&self, item: &[u8]) -> ItemHashes {
        let len = (item.len() as u64).to_le_bytes();
        let [(a0, a1), (b0, b1)] = self.keys;
        ItemHashes(sip13(a0, a1, &[&len, item]), sip13(b0, b1, &[&len, item]))
    }

    /// The positions of an item's bits.
    pub fn positions(&self, h: ItemHashes) -> impl Iterator<Item = u64> {
        let m = (self.bits().len() as u64 * 8).max(1);
        (0..self.hashes).map(move |i| position(h, i, m))
    }

    fn bit(&self, position: u64) -> bool {
        let byte = FILTER_HEADER_BYTES + (position / 8) as usize;
        self.bytes
            .get(byte)
            .is_some_and(|b| b & (1 << (position % 8)) != 0)
    }

    pub(crate) fn contains_hashed(&self, h: ItemHashes) -> bool {
        self.positions(h).all(|p| self.bit(p))
    }

    pub(crate) fn set_hashed(&mut self, h: ItemHashes) {
        let m = (self.bits().len() as u64 * 8).max(1);
        for i in 0..self.hashes {
            let p = position(h, i, m);
            if let Some(b) = self.bytes.get_mut(FILTER_HEADER_BYTES + (p / 8) as usize) {
                *b |= 1 << (p % 8);
            }
        }
    }
}

/// Position `i` of an item hashed to `h` in `m` bits.
#[inline]
fn position(h: ItemHashes, i: u32, m: u64) -> u64 {
    let g = match i {
        0 => h.0,
        1 => h.1,
        _ => h.0.wrapping_add(u64::from(i).wrapping_mul(h.1)) % PRIME,
    };
    g % m
}

/// A filter's header as read from its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    pub hashes: u32,
    pub seed: [u8; 32],
}

/// The header of a filter's bytes, if they are a valid filter: version 1, a bit-array length
/// that is not 0 and matches the bytes that follow, and 1 to [`MAX_HASHES`] hashes.
pub(crate) fn check_filter_bytes(bytes: &[u8]) -> Result<Header, &'static str> {
    let header = bytes
        .get(..FILTER_HEADER_BYTES)
        .ok_or("short filter header")?;
    if header[0] != FILTER_VERSION {
        return Err("bad filter version");
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&header[1..9]);
    let mut k = [0u8; 4];
    k.copy_from_slice(&header[9..13]);
    let mut seed = [0u8; 32];
    seed.copy_from_slice(&header[13..45]);
    let len = u64::from_le_bytes(len);
    if len == 0 || len != (bytes.len() - FILTER_HEADER_BYTES) as u64 {
        return Err("filter length does not match its bits");
    }
    let hashes = u32::from_le_bytes(k);
    if hashes == 0 || hashes > MAX_HASHES {
        return Err("bad number of hashes");
    }
    Ok(Header { hashes, seed })
}
