//! LOADCHUNK form of a sparse filter, which AOF rewrite and the primary's creation effect
//! emit (BF.SCANDUMP of a sparse filter returns its dense chain's chunks instead, so that
//! RedisBloom can load them). The header is our own little-endian record:
//!
//! ```text
//! magic "bloomrsS" | version u32 | capacity u64 | error f64 | growth u32 | options u32
//! ```
//!
//! Data chunks then carry the hash pairs in increasing order, 16 bytes each (`a`, `b`), at
//! most [`MAX_CHUNK`] bytes: iterator `p >= 1` is byte `p - 1` of the pairs, and each chunk
//! continues where the previous one ended. Read as RedisBloom's first header field (the item
//! count) the magic is above 6·10^18 items, so the headers of the two forms never collide.

use super::rdb::{decode_hashes, encode_hashes};
use super::{Sparse, HASH_BYTES};
use crate::bloom::CreateError;
use crate::bloom::{
    chunk_start, encode_header, Bits, Cells, ChunkError, HeaderError, Link, MAX_CHUNK,
};
use crate::rdb::LoadError;

/// The first eight bytes of every sparse header.
pub const MAGIC: &[u8; 8] = b"bloomrsS";
const HEADER_VERSION: u32 = 1;
const HEADER_LEN: usize = 36;
/// Pairs in one data chunk.
const PAIRS_PER_CHUNK: usize = (MAX_CHUNK / HASH_BYTES) as usize;

fn field<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    bytes
        .get(at..)
        .and_then(|rest| rest.first_chunk::<N>())
        .copied()
        .unwrap_or([0; N])
}

impl Sparse {
    /// Whether a LOADCHUNK header is a sparse filter's.
    pub fn is_header(bytes: &[u8]) -> bool {
        bytes.starts_with(MAGIC)
    }

    /// The header: iterator 1's LOADCHUNK payload.
    pub fn encode_header(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_LEN);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&HEADER_VERSION.to_le_bytes());
        out.extend_from_slice(&self.capacity.to_le_bytes());
        out.extend_from_slice(&self.error.to_le_bytes());
        out.extend_from_slice(&self.growth.to_le_bytes());
        out.extend_from_slice(&self.options.to_le_bytes());
        out
    }

    /// An empty sparse filter as a header describes it, through the one validator.
    pub fn from_header(bytes: &[u8], max_bytes: u64) -> Result<Sparse, HeaderError> {
        let version = u32::from_le_bytes(field(bytes, 8));
        if bytes.len() != HEADER_LEN || !Self::is_header(bytes) || version != HEADER_VERSION {
            return Err(HeaderError::BadData);
        }
        let sparse = Sparse {
            capacity: u64::from_le_bytes(field(bytes, 12)),
            error: f64::from_le_bytes(field(bytes, 20)),
            growth: u32::from_le_bytes(field(bytes, 28)),
            options: u32::from_le_bytes(field(bytes, 32)),
            hashes: Vec::new(),
        };
        match sparse.validate(max_bytes) {
            Ok(()) => Ok(sparse),
            Err(LoadError::TooLarge) => Err(HeaderError::TooLarge),
            Err(_) => Err(HeaderError::BadData),
        }
    }

    /// The dense chain's SCANDUMP header (what BF.SCANDUMP answers at iterator 0), from its
    /// shape alone: nothing is built.
    pub fn dense_header(&self) -> Vec<u8> {
        let links = self.dense_link().map(|shape| (shape, self.len()));
        encode_header(self.len(), self.options, self.growth, links.into_iter())
    }

    /// The dense chain's SCANDUMP chunk at iterator `iter >= 1` and the iterator after it
    /// (None past the end), built from the hash pairs for this chunk alone: its bytes are
    /// those of the promoted chain's array at the same place. `TooLarge` when the chunk
    /// itself would exceed `max_bytes`.
    pub fn dense_chunk_at(
        &self,
        iter: i64,
        max_bytes: u64,
    ) -> Result<Option<(i64, Vec<u8>)>, CreateError> {
        let Some(shape) = self.dense_link() else {
            return Ok(None);
        };
        let Some(start) = u64::try_from(iter).ok().and_then(|i| i.checked_sub(1)) else {
            return Ok(None);
        };
        if start >= shape.bytes {
            return Ok(None);
        }
        let len = (shape.bytes - start).min(MAX_CHUNK);
        let (Ok(start), Ok(size), Ok(next)) = (
            usize::try_from(start),
            usize::try_from(len),
            i64::try_from(len).map(|len| iter.saturating_add(len)),
        ) else {
            return Ok(None);
        };
        if len > max_bytes {
            return Err(CreateError::TooLarge);
        }
        let mut chunk = Vec::new();
        chunk
            .try_reserve_exact(size)
            .map_err(|_| CreateError::TooLarge)?;
        chunk.resize(size, 0);
        // A link without its array probes as the dense one would (no allocation).
        let link = Link::<Bits>::from_parts(&shape, self.options, 0, Box::default());
        for hash in &self.hashes {
            for (byte, selector) in link.probes_of(*hash) {
                if let Some(cell) = byte.checked_sub(start).and_then(|at| chunk.get_mut(at)) {
                    Bits::insert(cell, selector);
                }
            }
        }
        Ok(Some((next, chunk)))
    }

    /// The data chunks after the header, as `(iterator, bytes)`: the iterator is the one
    /// LOADCHUNK receives with these bytes (SCANDUMP's "next"), each chunk at most 16 MiB.
    pub fn chunks(&self) -> impl Iterator<Item = (i64, Vec<u8>)> + '_ {
        let mut end = 1i64;
        self.hashes.chunks(PAIRS_PER_CHUNK).map(move |pairs| {
            let bytes = encode_hashes(pairs);
            end = end.saturating_add(bytes.len() as i64);
            (end, bytes)
        })
    }

    /// Appends a data chunk that `chunks` returned with iterator `iter`: it must continue
    /// where the pairs end, and the result must pass the validator (else nothing changes).
    pub fn load_chunk(&mut self, iter: i64, data: &[u8], max_bytes: u64) -> Result<(), ChunkError> {
        let start = chunk_start(iter, data.len())?;
        if start != self.len() * HASH_BYTES {
            return Err(ChunkError::NoLink);
        }
        let pairs = decode_hashes(data).ok_or(ChunkError::BadData)?;
        let room = self.max_items(u64::MAX).unwrap_or(0);
        if self.len().saturating_add(pairs.len() as u64) > room {
            return Err(ChunkError::TooBig);
        }
        let held = self.hashes.len();
        if self.hashes.try_reserve_exact(pairs.len()).is_err() {
            return Err(ChunkError::TooBig);
        }
        self.hashes.extend(pairs);
        if self.validate(max_bytes).is_err() {
            self.hashes.truncate(held);
            self.hashes.shrink_to_fit();
            return Err(ChunkError::BadData);
        }
        Ok(())
    }
}
