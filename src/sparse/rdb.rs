//! The `bloomrsSP` RDB value: the chain parameters, then every hash pair in one buffer
//! (16 bytes each: `a` then `b`, little-endian, in increasing order).
//!
//! A module type of its own rather than a fifth encoding version of `MBbloom--`: plain filters
//! keep writing RedisBloom's version 4 bytes untouched and their loader gains no branch; `TYPE`
//! and `SCAN ... TYPE bloomrsSP` find the sparse keys (which is how they are promoted before a
//! move back to RedisBloom); and a server without bloomrs that meets one refuses the file
//! naming the type, instead of handing RedisBloom's loader a version it does not know. As with
//! the counting (`bloomrsCT`) and windowed (`bloomrsWN`) kinds, RedisBloom cannot read it.

use super::{Sparse, HASH_BYTES};
use crate::bloom::ItemHash;
use crate::rdb::{LoadError, RdbRead, RdbWrite};

pub const ENCODING_VERSION: i32 = 1;

/// Hash pairs as stored: `a` then `b`, little-endian.
pub(super) fn encode_hashes(hashes: &[ItemHash]) -> Vec<u8> {
    let mut out = Vec::with_capacity(hashes.len() * HASH_BYTES as usize);
    for hash in hashes {
        out.extend_from_slice(&hash.a.to_le_bytes());
        out.extend_from_slice(&hash.b.to_le_bytes());
    }
    out
}

/// The hash pairs of `bytes`, or None unless it is a whole number of pairs.
pub(super) fn decode_hashes(bytes: &[u8]) -> Option<Vec<ItemHash>> {
    let pairs = bytes.chunks_exact(HASH_BYTES as usize);
    if !pairs.remainder().is_empty() {
        return None;
    }
    let mut hashes = Vec::new();
    hashes.try_reserve_exact(pairs.len()).ok()?;
    for pair in pairs {
        let (a, b) = pair.split_first_chunk::<8>()?;
        let b: [u8; 8] = b.try_into().ok()?;
        hashes.push(ItemHash {
            a: u64::from_le_bytes(*a),
            b: u64::from_le_bytes(b),
        });
    }
    Some(hashes)
}

impl Sparse {
    pub fn save(&self, w: &mut impl RdbWrite) {
        w.write_unsigned(self.capacity);
        w.write_double(self.error);
        w.write_unsigned(u64::from(self.growth));
        w.write_unsigned(u64::from(self.options));
        w.write_buffer(&encode_hashes(&self.hashes));
    }

    pub fn load(r: &mut impl RdbRead, encver: i32, max_bytes: u64) -> Result<Sparse, LoadError> {
        if encver != ENCODING_VERSION {
            return Err(LoadError::UnknownVersion(encver));
        }
        let capacity = r.read_unsigned()?;
        let error = r.read_double()?;
        let growth = u32::try_from(r.read_unsigned()?).map_err(|_| LoadError::Invalid("growth"))?;
        let options =
            u32::try_from(r.read_unsigned()?).map_err(|_| LoadError::Invalid("options"))?;
        let hashes = decode_hashes(&r.read_buffer()?).ok_or(LoadError::Invalid("hash bytes"))?;
        let sparse = Sparse {
            capacity,
            error,
            growth,
            options,
            hashes,
        };
        sparse.validate(max_bytes)?;
        Ok(sparse)
    }
}
