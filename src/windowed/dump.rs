//! BF.SCANDUMP / BF.LOADCHUNK of a windowed filter. The header (iterator 0's chunk) is our
//! own little-endian format:
//!
//! ```text
//! magic u8[8] | version u32 | window_ms u64 | generations u32 | capacity u64
//! | error f64 | growth u32 | flags u32 | [secret u64: keyed kinds] | slot u64 | held u32
//! | per held generation: slot u64 | its header's length u32 | its own SCANDUMP header
//! ```
//!
//! The magic is "bloomrsW" for generations of RedisBloom links (`bloomrsWN`, their headers
//! RedisBloom's) and "bloomrsV" for compact ones (`bloomrsWC`, keyed, their headers the
//! compact kind's). The data chunks then address the held generations' own chunk positions
//! concatenated in ring order: a chain's bytes (iterator `p >= 1` is byte `p - 1`, as a
//! chain's chunks address its links), a compact filter's segments (iterator `p` follows
//! segment `p - 1`). No chunk spans two generations or exceeds 16 MiB. Read as RedisBloom's
//! first header field (the item count) the magic would be above 6·10^18 items, more than any
//! filter holds, so the two headers are told apart by it.

use std::borrow::Cow;

use super::rdb::{flags, parse_flags};
use super::{Generation, Held, Window, WindowParams};
use crate::bloom::{ChunkError, HeaderError};
use crate::rdb::LoadError;

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

impl<G: Generation> Window<G> {
    /// The header SCANDUMP returns at iterator 0.
    pub fn encode_header(&self) -> Vec<u8> {
        let p = &self.params;
        let mut out = Vec::new();
        out.extend_from_slice(G::MAGIC);
        out.extend_from_slice(&HEADER_VERSION.to_le_bytes());
        out.extend_from_slice(&p.window_ms.to_le_bytes());
        out.extend_from_slice(&u32::from(p.generations).to_le_bytes());
        out.extend_from_slice(&p.capacity.to_le_bytes());
        out.extend_from_slice(&p.error.to_le_bytes());
        out.extend_from_slice(&p.growth.to_le_bytes());
        out.extend_from_slice(&(flags(p) as u32).to_le_bytes());
        if G::KEYED {
            out.extend_from_slice(&self.secret.to_le_bytes());
        }
        out.extend_from_slice(&self.slot.to_le_bytes());
        out.extend_from_slice(&(self.ring.len() as u32).to_le_bytes());
        for generation in &self.ring {
            let own = generation.filter.encode_header(&self.params);
            out.extend_from_slice(&generation.slot.to_le_bytes());
            out.extend_from_slice(&(own.len() as u32).to_le_bytes());
            out.extend_from_slice(&own);
        }
        out
    }

    /// Whether a LOADCHUNK header describes a window of this kind.
    pub fn is_header(header: &[u8]) -> bool {
        header.starts_with(G::MAGIC)
    }

    /// An empty filter shaped as a LOADCHUNK header describes (bits clear, segments
    /// awaited); every size is checked against `max_bytes` before anything is allocated.
    pub fn from_header(header: &[u8], max_bytes: u64) -> Result<Self, HeaderError> {
        let mut fields = Fields { rest: header };
        if fields.take(G::MAGIC.len()) != Some(G::MAGIC.as_slice())
            || fields.u32() != Some(HEADER_VERSION)
        {
            return Err(HeaderError::BadData);
        }
        let params = read_params(&mut fields).ok_or(HeaderError::BadData)?;
        params.check().map_err(|_| HeaderError::BadData)?;
        let secret = match G::KEYED {
            true => fields.u64().ok_or(HeaderError::BadData)?,
            false => 0,
        };
        let slot = fields.u64().ok_or(HeaderError::BadData)?;
        let held = fields.u32().ok_or(HeaderError::BadData)?;
        if held > u32::from(params.generations) {
            return Err(HeaderError::BadData);
        }
        let mut ring = Vec::with_capacity(held as usize);
        let mut used = G::window_overhead();
        for _ in 0..held {
            let generation_slot = fields.u64().ok_or(HeaderError::BadData)?;
            let len = fields.u32().ok_or(HeaderError::BadData)?;
            let own = usize::try_from(len)
                .ok()
                .and_then(|len| fields.take(len))
                .ok_or(HeaderError::BadData)?;
            used = used.saturating_add(G::GENERATION_OVERHEAD);
            let budget = max_bytes.checked_sub(used).ok_or(HeaderError::TooLarge)?;
            let filter = G::from_header(own, &params, budget)?;
            used = used.saturating_add(filter.bytes());
            ring.push(Held {
                slot: generation_slot,
                filter,
            });
        }
        if !fields.rest.is_empty() {
            return Err(HeaderError::BadData);
        }
        let filter = Window {
            params,
            slot,
            secret,
            ring: ring.into(),
        };
        filter.validate(max_bytes).map_err(|e| match e {
            LoadError::TooLarge => HeaderError::TooLarge,
            _ => HeaderError::BadData,
        })?;
        Ok(filter)
    }

    /// The generation holding position `offset` of the concatenated iterator spans, and the
    /// offset in its own.
    fn locate(&self, offset: u64) -> Option<(usize, u64, u64)> {
        let mut start = 0u64;
        for (index, generation) in self.ring.iter().enumerate() {
            let end = start.checked_add(generation.filter.span())?;
            if offset < end {
                return Some((index, start, offset - start));
            }
            start = end;
        }
        None
    }

    /// The SCANDUMP chunk at iterator `iter >= 1` and the iterator after it, or None past
    /// the end (or for `iter < 1`). A generation whose chunks are still arriving gives what
    /// it received, then the walk goes on with the next generation, so a dump or an AOF
    /// rewrite of a window caught between two LOADCHUNKs rebuilds the same state.
    pub fn chunk_at(&self, iter: i64) -> Option<(i64, Cow<'_, [u8]>)> {
        self.chunk_within(iter, crate::bloom::MAX_CHUNK)
    }

    /// The chunk at iterator `iter` of at most `limit` bytes where its generation's chunks
    /// can be cut that small (see each generation's `chunk_at`).
    pub fn chunk_within(&self, iter: i64, limit: u64) -> Option<(i64, Cow<'_, [u8]>)> {
        let offset = u64::try_from(iter).ok()?.checked_sub(1)?;
        let (index, mut start, mut within) = self.locate(offset)?;
        for generation in self.ring.iter().skip(index) {
            let local = i64::try_from(within).ok()?.checked_add(1)?;
            if let Some((next, bytes)) = generation.filter.chunk_at(&self.params, local, limit) {
                return Some((next.checked_add(i64::try_from(start).ok()?)?, bytes));
            }
            start = start.checked_add(generation.filter.span())?;
            within = 0;
        }
        None
    }

    /// Every chunk from iterator 1 on, as AOF rewrite emits them.
    pub fn chunks(&self) -> impl Iterator<Item = (i64, Cow<'_, [u8]>)> + '_ {
        let mut iter = 1i64;
        std::iter::from_fn(move || {
            let (next, bytes) = self.chunk_at(iter)?;
            iter = next;
            Some((next, bytes))
        })
    }

    /// Copies a LOADCHUNK chunk that SCANDUMP returned together with iterator `iter` into
    /// the generation where it starts; a refused chunk changes nothing.
    pub fn load_chunk(&mut self, iter: i64, data: &[u8], max_bytes: u64) -> Result<(), ChunkError> {
        let len = G::positions(data).ok_or(ChunkError::BadData)?;
        let end = u64::try_from(iter).map_err(|_| ChunkError::BadData)?;
        if end == 0 || end < len {
            return Err(ChunkError::BadData);
        }
        let start = (end - len).checked_sub(1).ok_or(ChunkError::NoLink)?;
        let (index, _, within) = self.locate(start).ok_or(ChunkError::NoLink)?;
        let own = self.ring.get(index).map_or(0, |g| g.filter.bytes());
        let room = max_bytes.saturating_sub(self.reported_bytes().saturating_sub(own));
        let filter = &mut self.ring.get_mut(index).ok_or(ChunkError::NoLink)?.filter;
        let local_end = within
            .checked_add(len)
            .and_then(|e| e.checked_add(1))
            .and_then(|e| i64::try_from(e).ok())
            .ok_or(ChunkError::BadData)?;
        filter.load_chunk(&self.params, local_end, data, room)
    }
}

fn read_params(fields: &mut Fields<'_>) -> Option<WindowParams> {
    let window_ms = fields.u64()?;
    let generations = u16::try_from(fields.u32()?).ok()?;
    let capacity = fields.u64()?;
    let error = fields.f64()?;
    let growth = fields.u32()?;
    let (scaling, spread) = parse_flags(u64::from(fields.u32()?))?;
    Some(WindowParams {
        window_ms,
        generations,
        capacity,
        error,
        growth,
        scaling,
        spread,
    })
}
