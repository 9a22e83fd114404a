//! BF.SCANDUMP / BF.LOADCHUNK of a windowed filter. The header (iterator 0's chunk) is our
//! own little-endian format:
//!
//! ```text
//! magic "bloomrsW" | version u32 | window_ms u64 | generations u32 | capacity u64
//! | error f64 | growth u32 | flags u32 | slot u64 | held u32
//! | per held generation: slot u64 | chain header length u32 | chain header (RedisBloom's)
//! ```
//!
//! The data chunks then address the held generations' bit arrays concatenated in ring order,
//! exactly as a chain's chunks address its links: iterator `p >= 1` is byte `p - 1`, and no
//! chunk spans two links (so none spans two generations) or exceeds 16 MiB. Read as RedisBloom's
//! first header field (the item count) the magic would be above 6·10^18 items, more than any
//! filter holds, so the two headers are told apart by it.

use super::rdb::{parse_flags, FLAG_NONSCALING};
use super::{Generation, WindowParams, Windowed, GENERATION_OVERHEAD, WINDOW_OVERHEAD};
use crate::bloom::{Chain, Chunk, ChunkError, HeaderError};
use crate::rdb::LoadError;
use std::collections::VecDeque;

/// The first eight bytes of every windowed header.
pub const MAGIC: &[u8; 8] = b"bloomrsW";
const HEADER_VERSION: u32 = 1;

/// Little-endian fields read off the front of a header; `None` once it runs short.
struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Fields<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let head = self.rest.get(..n)?;
        self.rest = self.rest.get(n..)?;
        Some(head)
    }
    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.rest.split_first_chunk::<N>()?;
        self.rest = rest;
        Some(*head)
    }
    fn u32(&mut self) -> Option<u32> {
        self.array().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Option<u64> {
        self.array().map(u64::from_le_bytes)
    }
    fn f64(&mut self) -> Option<f64> {
        self.array().map(f64::from_le_bytes)
    }
}

impl Windowed {
    /// The header SCANDUMP returns at iterator 0.
    pub fn encode_header(&self) -> Vec<u8> {
        let p = &self.params;
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&HEADER_VERSION.to_le_bytes());
        out.extend_from_slice(&p.window_ms.to_le_bytes());
        out.extend_from_slice(&p.generations.to_le_bytes());
        out.extend_from_slice(&p.capacity.to_le_bytes());
        out.extend_from_slice(&p.error.to_le_bytes());
        out.extend_from_slice(&p.growth.to_le_bytes());
        let flags = if p.scaling {
            0u32
        } else {
            FLAG_NONSCALING as u32
        };
        out.extend_from_slice(&flags.to_le_bytes());
        out.extend_from_slice(&self.slot.to_le_bytes());
        out.extend_from_slice(&(self.ring.len() as u32).to_le_bytes());
        for generation in &self.ring {
            let chain = generation.chain.encode_header();
            out.extend_from_slice(&generation.slot.to_le_bytes());
            out.extend_from_slice(&(chain.len() as u32).to_le_bytes());
            out.extend_from_slice(&chain);
        }
        out
    }

    /// Whether a LOADCHUNK header describes a windowed filter (rather than a chain).
    pub fn is_header(header: &[u8]) -> bool {
        header.starts_with(MAGIC)
    }

    /// An empty filter (all bits clear) shaped as a LOADCHUNK header describes; every size
    /// is checked against `max_bytes` before the bit arrays are allocated.
    pub fn from_header(header: &[u8], max_bytes: u64) -> Result<Windowed, HeaderError> {
        let mut fields = Fields { rest: header };
        if fields.take(MAGIC.len()) != Some(MAGIC) || fields.u32() != Some(HEADER_VERSION) {
            return Err(HeaderError::BadData);
        }
        let (params, slot, held) = read_params(&mut fields).ok_or(HeaderError::BadData)?;
        params.check().map_err(|_| HeaderError::BadData)?;
        if held > params.generations {
            return Err(HeaderError::BadData);
        }
        let mut ring = VecDeque::new();
        let mut used = WINDOW_OVERHEAD;
        for _ in 0..held {
            let generation_slot = fields.u64().ok_or(HeaderError::BadData)?;
            let len = fields.u32().ok_or(HeaderError::BadData)?;
            let chain_header = usize::try_from(len)
                .ok()
                .and_then(|len| fields.take(len))
                .ok_or(HeaderError::BadData)?;
            used = used.saturating_add(GENERATION_OVERHEAD);
            let budget = max_bytes.checked_sub(used).ok_or(HeaderError::TooLarge)?;
            let chain = Chain::from_header(chain_header, budget)?;
            used = used.saturating_add(chain.reported_bytes());
            ring.push_back(Generation {
                slot: generation_slot,
                chain,
            });
        }
        if !fields.rest.is_empty() {
            return Err(HeaderError::BadData);
        }
        let filter = Windowed { params, slot, ring };
        filter.validate(max_bytes).map_err(|e| match e {
            LoadError::TooLarge => HeaderError::TooLarge,
            _ => HeaderError::BadData,
        })?;
        Ok(filter)
    }

    /// The generation holding byte `offset` of the concatenated bit arrays, and the offset
    /// in its chain.
    fn locate(&self, offset: u64) -> Option<(usize, u64)> {
        let mut start = 0u64;
        for (index, generation) in self.ring.iter().enumerate() {
            let end = start.checked_add(generation.chain.link_bytes())?;
            if offset < end {
                return Some((index, offset - start));
            }
            start = end;
        }
        None
    }

    /// The SCANDUMP chunk at iterator `iter >= 1`, or None past the end (or for `iter < 1`).
    pub fn chunk_at(&self, iter: i64) -> Option<Chunk<'_>> {
        let offset = u64::try_from(iter).ok()?.checked_sub(1)?;
        let (index, within) = self.locate(offset)?;
        let chain = &self.ring.get(index)?.chain;
        let chunk = chain.chunk_at(i64::try_from(within).ok()?.checked_add(1)?)?;
        Some(Chunk {
            next: iter.checked_add(chunk.bytes.len() as i64)?,
            bytes: chunk.bytes,
        })
    }

    /// Every chunk from iterator 1 on, as AOF rewrite emits them: one walk over each
    /// generation's links.
    pub fn chunks(&self) -> impl Iterator<Item = Chunk<'_>> {
        let mut start = 0i64;
        self.ring.iter().flat_map(move |generation| {
            let base = start;
            start = start.saturating_add(generation.chain.link_bytes() as i64);
            generation.chain.chunks().map(move |chunk| Chunk {
                next: chunk.next.saturating_add(base),
                bytes: chunk.bytes,
            })
        })
    }

    /// Copies a LOADCHUNK chunk that SCANDUMP returned together with iterator `iter`.
    pub fn load_chunk(&mut self, iter: i64, data: &[u8]) -> Result<(), ChunkError> {
        let len = data.len() as u64;
        let end = u64::try_from(iter).map_err(|_| ChunkError::BadData)?;
        if end == 0 || end < len {
            return Err(ChunkError::BadData);
        }
        let start = (end - len).checked_sub(1).ok_or(ChunkError::NoLink)?;
        let (index, within) = self.locate(start).ok_or(ChunkError::NoLink)?;
        let chain = &mut self.ring.get_mut(index).ok_or(ChunkError::NoLink)?.chain;
        let local_end = within
            .checked_add(len)
            .and_then(|e| e.checked_add(1))
            .and_then(|e| i64::try_from(e).ok())
            .ok_or(ChunkError::BadData)?;
        chain.load_chunk(local_end, data)
    }
}

fn read_params(fields: &mut Fields<'_>) -> Option<(WindowParams, u64, u32)> {
    let window_ms = fields.u64()?;
    let generations = fields.u32()?;
    let capacity = fields.u64()?;
    let error = fields.f64()?;
    let growth = fields.u32()?;
    let scaling = parse_flags(u64::from(fields.u32()?))?;
    let params = WindowParams {
        window_ms,
        generations,
        capacity,
        error,
        growth,
        scaling,
    };
    Some((params, fields.u64()?, fields.u32()?))
}
