//! BF.SCANDUMP / BF.LOADCHUNK encoding: RedisBloom's packed little-endian header
//! (20 bytes + 53 per link) followed by the links' bit arrays in chunks of at most 16 MiB
//! that never span two links. Iterator `p >= 1` addresses byte `p - 1` of the concatenated
//! bit arrays.

use super::cells::Cells;
use super::link::{validate_shape, Link, LinkShape};
use super::Chain;

/// Largest chunk SCANDUMP returns and AOF rewrite emits.
pub const MAX_CHUNK: u64 = 16 * 1024 * 1024;
const HEADER_FIXED: usize = 20;
const LINK_RECORD: usize = 53;

/// A LOADCHUNK header that cannot become a filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderError {
    /// Malformed or inconsistent (`ERR received bad data`).
    BadData,
    /// Valid, but larger than the per-filter memory limit.
    TooLarge,
}

/// A LOADCHUNK data chunk that does not fit the filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkError {
    /// `ERR received bad data`
    BadData,
    /// `ERR invalid offset - no link found`
    NoLink,
    /// `ERR invalid chunk - Too big for current filter`
    TooBig,
}

/// One SCANDUMP step: the iterator to ask for next and the bytes at this one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk<'a> {
    pub next: i64,
    pub bytes: &'a [u8],
}

/// A cursor over a byte slice that reads little-endian fields.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut field = [0u8; N];
        if let Some((head, rest)) = self.bytes.split_first_chunk::<N>() {
            field = *head;
            self.bytes = rest;
        }
        field
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    fn f64(&mut self) -> f64 {
        f64::from_le_bytes(self.take())
    }
    fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }
}

/// RedisBloom's header for a chain of `size` items whose links have these shapes and item
/// counts (a chain's own, or one described before it is built).
pub fn encode_header(
    size: u64,
    options: u32,
    growth: u32,
    links: impl ExactSizeIterator<Item = (LinkShape, u64)>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_FIXED + LINK_RECORD * links.len());
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&(links.len() as u32).to_le_bytes());
    out.extend_from_slice(&options.to_le_bytes());
    out.extend_from_slice(&growth.to_le_bytes());
    for (shape, link_size) in links {
        out.extend_from_slice(&shape.bytes.to_le_bytes());
        out.extend_from_slice(&shape.bits.to_le_bytes());
        out.extend_from_slice(&link_size.to_le_bytes());
        out.extend_from_slice(&shape.error.to_le_bytes());
        out.extend_from_slice(&shape.bpe.to_le_bytes());
        out.extend_from_slice(&shape.hashes.to_le_bytes());
        out.extend_from_slice(&shape.entries.to_le_bytes());
        out.push(shape.n2);
    }
    out
}

/// Where a LOADCHUNK chunk of `len` bytes that SCANDUMP returned with iterator `iter` starts
/// (byte `iter - len - 1` of the dumped data), for the kinds whose chunks continue one
/// another; `BadData` when the iterator cannot be one SCANDUMP gave.
pub fn chunk_start(iter: i64, len: usize) -> Result<u64, ChunkError> {
    u64::try_from(iter)
        .ok()
        .and_then(|end| end.checked_sub(len as u64))
        .and_then(|start| start.checked_sub(1))
        .ok_or(ChunkError::BadData)
}

impl Chain {
    /// An empty chain (all bits clear) shaped as a LOADCHUNK header describes.
    pub fn from_header(header: &[u8], max_bytes: u64) -> Result<Chain, HeaderError> {
        Self::decode_header(header, max_bytes)
    }
}

/// RedisBloom's header serves every kind of cell: a link's byte count is its array's.
impl<C: Cells> Chain<Link<C>> {
    /// The header SCANDUMP returns at iterator 0.
    pub fn encode_header(&self) -> Vec<u8> {
        let links = self.links.iter().map(|link| (link.shape(), link.size));
        encode_header(self.size, self.options, self.growth, links)
    }

    /// An empty chain of `C` cells shaped as a header describes, through its checks.
    pub fn decode_header(header: &[u8], max_bytes: u64) -> Result<Self, HeaderError> {
        Self::decode_header_with(header, max_bytes, super::OPT_ALL)
    }

    /// `decode_header` for a kind whose chains may carry these option bits.
    pub fn decode_header_with(
        header: &[u8],
        max_bytes: u64,
        known_options: u32,
    ) -> Result<Self, HeaderError> {
        let mut reader = Reader { bytes: header };
        if header.len() < HEADER_FIXED {
            return Err(HeaderError::BadData);
        }
        let size = reader.u64();
        let nlinks = reader.u32();
        let options = reader.u32();
        let growth = reader.u32();
        let expected_len = (nlinks as usize)
            .checked_mul(LINK_RECORD)
            .map(|l| l + HEADER_FIXED);
        if nlinks == 0 || u64::from(nlinks) > super::MAX_LINKS || expected_len != Some(header.len())
        {
            return Err(HeaderError::BadData);
        }
        let mut shapes = Vec::with_capacity(nlinks as usize);
        let mut total_bytes = 0u64;
        for _ in 0..nlinks {
            let bytes = reader.u64();
            let bits = reader.u64();
            let link_size = reader.u64();
            let error = reader.f64();
            let bpe = reader.f64();
            let hashes = reader.u32();
            let entries = reader.u64();
            let n2 = reader.u8();
            let shape = LinkShape {
                entries,
                error,
                bpe,
                hashes,
                bits,
                bytes,
                n2,
            };
            validate_shape::<C>(&shape).map_err(|_| HeaderError::BadData)?;
            total_bytes = total_bytes
                .checked_add(bytes)
                .ok_or(HeaderError::TooLarge)?;
            shapes.push((shape, link_size));
        }
        // Every size is checked before the first bit array is allocated.
        let reported = super::reported_size::<Link<C>>(u64::from(nlinks), total_bytes);
        if reported.is_none_or(|r| r > max_bytes) {
            return Err(HeaderError::TooLarge);
        }
        let mut links = Vec::with_capacity(shapes.len());
        for (shape, link_size) in shapes {
            let mut link = Link::allocate(&shape, options).map_err(|_| HeaderError::TooLarge)?;
            link.size = link_size;
            links.push(link);
        }
        let chain = Chain::from_links(size, options, growth, links);
        chain
            .validate_with(max_bytes, known_options)
            .map_err(|_| HeaderError::BadData)?;
        Ok(chain)
    }

    /// The SCANDUMP chunk at iterator `iter >= 1`, or None past the end (or for `iter < 1`).
    pub fn chunk_at(&self, iter: i64) -> Option<Chunk<'_>> {
        self.chunk_within(iter, MAX_CHUNK)
    }

    /// The chunk at iterator `iter` of at most `limit` bytes (see [`chunk_in`]).
    pub fn chunk_within(&self, iter: i64, limit: u64) -> Option<Chunk<'_>> {
        chunk_in(self.links.iter().map(|link| &link.array[..]), iter, limit)
    }

    /// Every chunk from iterator 1 on, as AOF rewrite emits them.
    pub fn chunks(&self) -> impl Iterator<Item = Chunk<'_>> {
        chunks_from(move |iter| self.chunk_at(iter))
    }

    /// Copies a LOADCHUNK chunk that SCANDUMP returned together with iterator `iter`.
    pub fn load_chunk(&mut self, iter: i64, data: &[u8]) -> Result<(), ChunkError> {
        load_chunk_in(
            self.links.iter_mut().map(|link| &mut link.array[..]),
            iter,
            data,
        )
    }
}

/// The array holding byte `offset` of arrays laid end to end, and the offset in it.
fn locate<T>(lens: impl Iterator<Item = (T, u64)>, offset: u64) -> Option<(T, usize)> {
    let mut start = 0u64;
    for (array, len) in lens {
        let end = start.checked_add(len)?;
        if offset < end {
            return usize::try_from(offset - start)
                .ok()
                .map(|within| (array, within));
        }
        start = end;
    }
    None
}

/// The chunk at iterator `iter >= 1` of arrays laid end to end (a chain's links, in order):
/// at most `limit` bytes (and [`MAX_CHUNK`], SCANDUMP's), never spanning two arrays; None past
/// the end. Any run of the arrays loads on its own, so the limit changes only how they are
/// cut.
pub fn chunk_in<'a>(
    arrays: impl Iterator<Item = &'a [u8]>,
    iter: i64,
    limit: u64,
) -> Option<Chunk<'a>> {
    let offset = u64::try_from(iter).ok()?.checked_sub(1)?;
    let (array, within) = locate(arrays.map(|a| (a, a.len() as u64)), offset)?;
    let rest = array.get(within..)?;
    let most = usize::try_from(limit.clamp(1, MAX_CHUNK)).unwrap_or(usize::MAX);
    let len = rest.len().min(most);
    let next = iter.checked_add(len as i64)?;
    Some(Chunk {
        next,
        bytes: rest.get(..len)?,
    })
}

/// Copies a LOADCHUNK chunk that SCANDUMP returned together with iterator `iter` into arrays
/// laid end to end: `BadData` for an iterator no chunk of this length ends at, `NoLink` when
/// it starts past the arrays, `TooBig` when it runs past the end of its array.
pub fn load_chunk_in<'a>(
    arrays: impl Iterator<Item = &'a mut [u8]>,
    iter: i64,
    data: &[u8],
) -> Result<(), ChunkError> {
    let len = data.len() as u64;
    let iter = u64::try_from(iter).map_err(|_| ChunkError::BadData)?;
    if iter == 0 || iter < len {
        return Err(ChunkError::BadData);
    }
    let start = (iter - len).checked_sub(1).ok_or(ChunkError::NoLink)?;
    let with_len = arrays.map(|a| {
        let len = a.len() as u64;
        (a, len)
    });
    let (array, within) = locate(with_len, start).ok_or(ChunkError::NoLink)?;
    let target = array
        .get_mut(within..)
        .and_then(|rest| rest.get_mut(..data.len()))
        .ok_or(ChunkError::TooBig)?;
    target.copy_from_slice(data);
    Ok(())
}

/// Every chunk from iterator 1 on of a value whose chunk at an iterator is `chunk_at`.
pub fn chunks_from<'a>(
    chunk_at: impl Fn(i64) -> Option<Chunk<'a>>,
) -> impl Iterator<Item = Chunk<'a>> {
    let mut iter = 1i64;
    std::iter::from_fn(move || {
        let chunk = chunk_at(iter)?;
        iter = chunk.next;
        Some(chunk)
    })
}
