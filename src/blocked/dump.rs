//! BF.SCANDUMP / BF.LOADCHUNK of a blocked filter. The header (iterator 0's chunk) is our own,
//! packed little-endian:
//!
//! ```text
//! magic "bloomrsB" | version u32 = 1 | flags u32 (1: non-scaling) | growth u32
//! | links u32 | items u64
//! | per link: capacity u64 | error f64 | bits per item u32 | blocks u64 | items u64
//! ```
//!
//! The data chunks address the links' blocks laid end to end, as a plain chain's chunks
//! address its bit arrays (at most 16 MiB each, never spanning two links). Read as
//! RedisBloom's first header field (the item count), the magic would be above 7·10^18 items,
//! so the headers are told apart by it.

use super::{BlockLink, BlockShape, Blocked};
use crate::bloom::{
    chunk_in, chunks_from, load_chunk_in, reported_size, Chain, Chunk, ChunkError, HeaderError,
    MAX_CHUNK, OPT_NO_SCALING,
};

/// The first eight bytes of every blocked header.
pub const MAGIC: &[u8; 8] = b"bloomrsB";
const HEADER_VERSION: u32 = 1;
const FIXED: usize = 32;
const LINK_RECORD: usize = 36;
/// The flag of a non-scaling filter.
pub(super) const FLAG_NONSCALING: u32 = 1;

/// Little-endian fields read off the front of a byte slice; a short read is `BadData`.
struct Fields<'a>(&'a [u8]);

impl Fields<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], HeaderError> {
        let (head, rest) = self
            .0
            .split_first_chunk::<N>()
            .ok_or(HeaderError::BadData)?;
        self.0 = rest;
        Ok(*head)
    }
    fn u32(&mut self) -> Result<u32, HeaderError> {
        self.take().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Result<u64, HeaderError> {
        self.take().map(u64::from_le_bytes)
    }
    fn f64(&mut self) -> Result<f64, HeaderError> {
        self.take().map(f64::from_le_bytes)
    }
}

/// The flags word of a filter.
pub(super) fn flags(scaling: bool) -> u32 {
    if scaling {
        0
    } else {
        FLAG_NONSCALING
    }
}

impl Blocked {
    /// The header SCANDUMP returns at iterator 0.
    pub fn encode_header(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(FIXED + LINK_RECORD * self.links.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&HEADER_VERSION.to_le_bytes());
        out.extend_from_slice(&flags(self.is_scaling()).to_le_bytes());
        out.extend_from_slice(&self.growth.to_le_bytes());
        out.extend_from_slice(&(self.links.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.size.to_le_bytes());
        for link in &self.links {
            let shape = &link.shape;
            out.extend_from_slice(&shape.capacity.to_le_bytes());
            out.extend_from_slice(&shape.error.to_le_bytes());
            out.extend_from_slice(&shape.hashes.to_le_bytes());
            out.extend_from_slice(&shape.blocks.to_le_bytes());
            out.extend_from_slice(&link.size.to_le_bytes());
        }
        out
    }

    /// An empty filter (all bits clear) shaped as a LOADCHUNK header describes, through the
    /// checks every stored filter passes.
    pub fn from_header(header: &[u8], max_bytes: u64) -> Result<Self, HeaderError> {
        let mut fields = Fields(header);
        if fields.take::<8>()? != *MAGIC || fields.u32()? != HEADER_VERSION {
            return Err(HeaderError::BadData);
        }
        let (flags, growth, links, size) =
            (fields.u32()?, fields.u32()?, fields.u32()?, fields.u64()?);
        let expected = (links as usize)
            .checked_mul(LINK_RECORD)
            .and_then(|l| l.checked_add(FIXED));
        if expected != Some(header.len()) || u64::from(links) > super::MAX_LINKS {
            return Err(HeaderError::BadData);
        }
        let mut shapes = Vec::with_capacity(links as usize);
        for _ in 0..links {
            let shape = BlockShape {
                capacity: fields.u64()?,
                error: fields.f64()?,
                hashes: fields.u32()?,
                blocks: fields.u64()?,
            };
            shapes.push((shape, fields.u64()?));
        }
        Self::from_shapes(size, growth, flags, &shapes, max_bytes).map_err(|e| match e {
            Refused::Invalid(_) => HeaderError::BadData,
            Refused::TooLarge => HeaderError::TooLarge,
        })
    }

    /// The SCANDUMP chunk at iterator `iter >= 1`, or None past the end.
    pub fn chunk_at(&self, iter: i64) -> Option<Chunk<'_>> {
        self.chunk_within(iter, MAX_CHUNK)
    }

    /// The chunk at iterator `iter` of at most `limit` bytes (any run of the blocks loads on
    /// its own).
    pub fn chunk_within(&self, iter: i64, limit: u64) -> Option<Chunk<'_>> {
        chunk_in(
            self.links.iter().map(|link| link.blocks.bytes()),
            iter,
            limit,
        )
    }

    /// Every chunk from iterator 1 on, as AOF rewrite emits them.
    pub fn chunks(&self) -> impl Iterator<Item = Chunk<'_>> {
        chunks_from(move |iter| self.chunk_at(iter))
    }

    /// Copies a LOADCHUNK chunk that SCANDUMP returned together with iterator `iter`.
    pub fn load_chunk(&mut self, iter: i64, data: &[u8]) -> Result<(), ChunkError> {
        let arrays = self.links.iter_mut().map(|link| link.blocks.bytes_mut());
        load_chunk_in(arrays, iter, data)
    }
}

/// Why stored parts do not make a filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refused {
    Invalid(&'static str),
    TooLarge,
}

impl Blocked {
    /// An empty filter (all bits clear) of the links `shapes` describe with their item counts:
    /// the one constructor of every stored filter (LOADCHUNK header, RDB value, DUMP
    /// payload). Every shape is checked and the total size compared with `max_bytes` before
    /// the first block is allocated; the result passes [`Blocked::validate`].
    pub(super) fn from_shapes(
        size: u64,
        growth: u32,
        flags: u32,
        shapes: &[(BlockShape, u64)],
        max_bytes: u64,
    ) -> Result<Self, Refused> {
        if flags & !FLAG_NONSCALING != 0 {
            return Err(Refused::Invalid("unknown flags"));
        }
        if shapes.is_empty() || shapes.len() as u64 > super::MAX_LINKS {
            return Err(Refused::Invalid("link count out of range"));
        }
        let mut bytes = 0u64;
        for (shape, _) in shapes {
            super::validate_shape(shape).map_err(Refused::Invalid)?;
            bytes = bytes.checked_add(shape.bytes()).ok_or(Refused::TooLarge)?;
        }
        if reported_size::<BlockLink>(shapes.len() as u64, bytes).is_none_or(|r| r > max_bytes) {
            return Err(Refused::TooLarge);
        }
        if growth < 1 {
            return Err(Refused::Invalid("growth below 1"));
        }
        if flags & FLAG_NONSCALING != 0 && shapes.len() > 1 {
            return Err(Refused::Invalid(
                "a non-scaling filter of more than one link",
            ));
        }
        derived_as_built(growth, shapes).map_err(Refused::Invalid)?;
        let mut links = Vec::with_capacity(shapes.len());
        for (shape, link_size) in shapes {
            let mut link = BlockLink::allocate(*shape).map_err(|_| Refused::TooLarge)?;
            link.size = *link_size;
            links.push(link);
        }
        let options = if flags & FLAG_NONSCALING == 0 {
            0
        } else {
            OPT_NO_SCALING
        };
        let filter = Blocked(Chain::from_links(size, options, growth, links));
        filter.validate(max_bytes).map_err(Refused::Invalid)?;
        Ok(filter)
    }
}

/// What commands build, checked against what a stored filter says of itself: the first link's
/// bits per item and blocks are what its capacity and rate size (the search of `sizing`), each
/// later link is the one the chain grows after the one before (`growth` times the capacity at
/// half the rate), and every link but the newest took exactly its capacity (a chain grows
/// only once its newest link is full). A header that misstates one of them is refused: the
/// contents determine every one.
fn derived_as_built(growth: u32, shapes: &[(BlockShape, u64)]) -> Result<(), &'static str> {
    let (Some((first, _)), Some((newest, newest_size))) = (shapes.first(), shapes.last()) else {
        return Err("link count out of range");
    };
    if BlockShape::new(first.capacity, first.error).ok() != Some(*first) {
        return Err("first link not sized for its capacity and rate");
    }
    for pair in shapes.windows(2) {
        let [(before, before_size), (after, _)] = pair else {
            continue;
        };
        if *before_size != before.capacity {
            return Err("a link before the newest not full");
        }
        if super::next_shape(before, growth) != Some(*after) {
            return Err("a link not the one its chain grows");
        }
    }
    if *newest_size > newest.capacity {
        return Err("the newest link holds more than its capacity");
    }
    Ok(())
}
