//! One core type's RDB and LOADCHUNK codecs, named alike for every kind, so that the round
//! trips and the decoding of fuzzer bytes are written once and go through the loaders the
//! server uses (each loader ends with the kind's validator).

use crate::blocked::Blocked;
use crate::bloom::Chain;
use crate::compact::CompactFilter;
use crate::counting::CountingFilter;
use crate::cuckoo::CuckooFilter;
use crate::fuse::StaticFilter;
use crate::rdb::{MemoryRdb, ModulePayload};
use crate::sparse::Sparse;
use crate::windowed::{Generation, Window};

/// A core type's codecs under a memory cap.
pub trait Codec: Sized + Clone + PartialEq {
    fn save(&self, rdb: &mut MemoryRdb);
    /// The encoding version `save` writes.
    fn encoding_version(&self) -> i32;
    fn load(rdb: &mut MemoryRdb, encver: i32, max_bytes: u64) -> Option<Self>;
    /// SCANDUMP's iterator-0 chunk.
    fn encode_header(&self) -> Vec<u8>;
    fn from_header(header: &[u8], max_bytes: u64) -> Option<Self>;
    /// LOADCHUNK of a data chunk: whether it was taken.
    fn load_chunk(&mut self, iter: i64, bytes: &[u8], max_bytes: u64) -> bool;
    /// The data chunks SCANDUMP returns after the header, as `(iterator, bytes)`.
    fn chunks(&self) -> Vec<(i64, Vec<u8>)>;
}

/// The value's SCANDUMP replayed through LOADCHUNK.
pub fn chunks_round_trip<T: Codec>(value: &T, max_bytes: u64) -> Result<T, String> {
    let header = value.encode_header();
    let mut copy = T::from_header(&header, max_bytes)
        .ok_or_else(|| "LOADCHUNK refused the value's own header".to_string())?;
    for (i, (iter, bytes)) in value.chunks().into_iter().enumerate() {
        if !copy.load_chunk(iter, &bytes, max_bytes) {
            return Err(format!(
                "LOADCHUNK refused the value's own chunk {i} (iterator {iter})"
            ));
        }
    }
    Ok(copy)
}

/// A value from fuzzer bytes: after a mode byte, a DUMP payload (even) or a LOADCHUNK header
/// and chunks (odd), framed as `(length: u32 LE, header)` then `(iterator: i64 LE, length:
/// u32 LE, bytes)` per chunk. A chunk the loader refuses must change nothing.
pub fn decode_value<T: Codec>(data: &[u8], max_bytes: u64) -> Option<T> {
    let (&mode, rest) = data.split_first()?;
    if mode & 1 == 0 {
        let payload = ModulePayload::decode(rest, usize::try_from(max_bytes).ok()?).ok()?;
        let encver = payload.encoding_version();
        let mut fields = payload.fields;
        return T::load(&mut fields, encver, max_bytes);
    }
    let mut frames = Frames(rest);
    let mut value = T::from_header(frames.blob()?, max_bytes)?;
    while let Some((iter, bytes)) = frames.chunk() {
        let before = value.clone();
        if !value.load_chunk(iter, bytes, max_bytes) {
            assert!(value == before, "a refused chunk changes nothing");
        }
    }
    Some(value)
}

/// Length-prefixed pieces of fuzzer bytes.
pub(crate) struct Frames<'a>(pub &'a [u8]);

impl<'a> Frames<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.0.len() {
            return None;
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Some(head)
    }

    /// A length-prefixed byte string (the length cut to what is left).
    pub fn blob(&mut self) -> Option<&'a [u8]> {
        let len = u32::from_le_bytes(self.take(4)?.try_into().ok()?) as usize;
        self.take(len.min(self.0.len()))
    }

    fn chunk(&mut self) -> Option<(i64, &'a [u8])> {
        let iter = i64::from_le_bytes(self.take(8)?.try_into().ok()?);
        Some((iter, self.blob()?))
    }
}

impl Codec for Chain {
    fn save(&self, rdb: &mut MemoryRdb) {
        Chain::save(self, rdb)
    }
    fn encoding_version(&self) -> i32 {
        crate::bloom::ENCODING_VERSION
    }
    fn load(rdb: &mut MemoryRdb, encver: i32, max_bytes: u64) -> Option<Self> {
        Chain::load(rdb, encver, max_bytes).ok()
    }
    fn encode_header(&self) -> Vec<u8> {
        Chain::encode_header(self)
    }
    fn from_header(header: &[u8], max_bytes: u64) -> Option<Self> {
        Chain::from_header(header, max_bytes).ok()
    }
    fn load_chunk(&mut self, iter: i64, bytes: &[u8], _max_bytes: u64) -> bool {
        Chain::load_chunk(self, iter, bytes).is_ok()
    }
    fn chunks(&self) -> Vec<(i64, Vec<u8>)> {
        Chain::chunks(self)
            .map(|c| (c.next, c.bytes.to_vec()))
            .collect()
    }
}

impl Codec for Blocked {
    fn save(&self, rdb: &mut MemoryRdb) {
        Blocked::save(self, rdb)
    }
    fn encoding_version(&self) -> i32 {
        crate::blocked::ENCODING_VERSION
    }
    fn load(rdb: &mut MemoryRdb, encver: i32, max_bytes: u64) -> Option<Self> {
        Blocked::load(rdb, encver, max_bytes).ok()
    }
    fn encode_header(&self) -> Vec<u8> {
        Blocked::encode_header(self)
    }
    fn from_header(header: &[u8], max_bytes: u64) -> Option<Self> {
        Blocked::from_header(header, max_bytes).ok()
    }
    fn load_chunk(&mut self, iter: i64, bytes: &[u8], _max_bytes: u64) -> bool {
        Blocked::load_chunk(self, iter, bytes).is_ok()
    }
    fn chunks(&self) -> Vec<(i64, Vec<u8>)> {
        Blocked::chunks(self)
            .map(|c| (c.next, c.bytes.to_vec()))
            .collect()
    }
}

impl Codec for StaticFilter {
    fn save(&self, rdb: &mut MemoryRdb) {
        StaticFilter::save(self, rdb)
    }
    fn encoding_version(&self) -> i32 {
        crate::fuse::ENCODING_VERSION
    }
    fn load(rdb: &mut MemoryRdb, encver: i32, max_bytes: u64) -> Option<Self> {
        StaticFilter::load(rdb, encver, max_bytes).ok()
    }
    fn encode_header(&self) -> Vec<u8> {
        StaticFilter::encode_header(self)
    }
    fn from_header(header: &[u8], max_bytes: u64) -> Option<Self> {
        StaticFilter::from_header(header, max_bytes).ok()
    }
    fn load_chunk(&mut self, iter: i64, bytes: &[u8], max_bytes: u64) -> bool {
        StaticFilter::load_chunk(self, iter, bytes, max_bytes).is_ok()
    }
    fn chunks(&self) -> Vec<(i64, Vec<u8>)> {
        let mut out = Vec::new();
        let mut iter = 1;
        while let Some((next, bytes)) = StaticFilter::chunk_at(self, iter) {
            out.push((next, bytes.into_owned()));
            iter = next;
        }
        out
    }
}

impl Codec for CountingFilter {
    fn save(&self, rdb: &mut MemoryRdb) {
        CountingFilter::save(self, rdb)
    }
    fn encoding_version(&self) -> i32 {
        crate::counting::ENCODING_VERSION
    }
    fn load(rdb: &mut MemoryRdb, encver: i32, max_bytes: u64) -> Option<Self> {
        CountingFilter::load(rdb, encver, max_bytes).ok()
    }
    fn encode_header(&self) -> Vec<u8> {
        CountingFilter::encode_header(self)
    }
    fn from_header(header: &[u8], max_bytes: u64) -> Option<Self> {
        CountingFilter::from_header(header, max_bytes).ok()
    }
    fn load_chunk(&mut self, iter: i64, bytes: &[u8], _max_bytes: u64) -> bool {
        self.chain.load_chunk(iter, bytes).is_ok()
    }
    fn chunks(&self) -> Vec<(i64, Vec<u8>)> {
        self.chain
            .chunks()
            .map(|c| (c.next, c.bytes.to_vec()))
            .collect()
    }
}

impl<G: Generation> Codec for Window<G> {
    fn save(&self, rdb: &mut MemoryRdb) {
        Window::save(self, rdb)
    }
    fn encoding_version(&self) -> i32 {
        G::ENCODING_VERSION
    }
    fn load(rdb: &mut MemoryRdb, encver: i32, max_bytes: u64) -> Option<Self> {
        Window::load(rdb, encver, max_bytes).ok()
    }
    fn encode_header(&self) -> Vec<u8> {
        Window::encode_header(self)
    }
    fn from_header(header: &[u8], max_bytes: u64) -> Option<Self> {
        Window::from_header(header, max_bytes).ok()
    }
    fn load_chunk(&mut self, iter: i64, bytes: &[u8], max_bytes: u64) -> bool {
        Window::load_chunk(self, iter, bytes, max_bytes).is_ok()
    }
    fn chunks(&self) -> Vec<(i64, Vec<u8>)> {
        Window::chunks(self)
            .map(|(next, bytes)| (next, bytes.into_owned()))
            .collect()
    }
}

impl Codec for Sparse {
    fn save(&self, rdb: &mut MemoryRdb) {
        Sparse::save(self, rdb)
    }
    fn encoding_version(&self) -> i32 {
        crate::sparse::ENCODING_VERSION
    }
    fn load(rdb: &mut MemoryRdb, encver: i32, max_bytes: u64) -> Option<Self> {
        Sparse::load(rdb, encver, max_bytes).ok()
    }
    fn encode_header(&self) -> Vec<u8> {
        Sparse::encode_header(self)
    }
    fn from_header(header: &[u8], max_bytes: u64) -> Option<Self> {
        Sparse::from_header(header, max_bytes).ok()
    }
    fn load_chunk(&mut self, iter: i64, bytes: &[u8], max_bytes: u64) -> bool {
        Sparse::load_chunk(self, iter, bytes, max_bytes).is_ok()
    }
    fn chunks(&self) -> Vec<(i64, Vec<u8>)> {
        Sparse::chunks(self).collect()
    }
}

impl Codec for CompactFilter {
    fn save(&self, rdb: &mut MemoryRdb) {
        CompactFilter::save(self, rdb)
    }
    fn encoding_version(&self) -> i32 {
        crate::compact::ENCODING_VERSION
    }
    fn load(rdb: &mut MemoryRdb, encver: i32, max_bytes: u64) -> Option<Self> {
        CompactFilter::load(rdb, encver, max_bytes).ok()
    }
    fn encode_header(&self) -> Vec<u8> {
        CompactFilter::encode_header(self)
    }
    fn from_header(header: &[u8], max_bytes: u64) -> Option<Self> {
        CompactFilter::from_header(header, max_bytes).ok()
    }
    fn load_chunk(&mut self, iter: i64, bytes: &[u8], max_bytes: u64) -> bool {
        CompactFilter::load_chunk(self, iter, bytes, max_bytes).is_ok()
    }
    fn chunks(&self) -> Vec<(i64, Vec<u8>)> {
        self.each_chunk()
            .map(|(iter, bytes)| (iter, bytes.into_owned()))
            .collect()
    }
}

impl Codec for CuckooFilter {
    fn save(&self, rdb: &mut MemoryRdb) {
        CuckooFilter::save(self, rdb)
    }
    fn encoding_version(&self) -> i32 {
        crate::cuckoo::ENCODING_VERSION
    }
    fn load(rdb: &mut MemoryRdb, encver: i32, max_bytes: u64) -> Option<Self> {
        CuckooFilter::load(rdb, encver, max_bytes).ok()
    }
    fn encode_header(&self) -> Vec<u8> {
        CuckooFilter::encode_header(self).to_vec()
    }
    fn from_header(header: &[u8], max_bytes: u64) -> Option<Self> {
        CuckooFilter::from_header(header, max_bytes).ok()
    }
    fn load_chunk(&mut self, iter: i64, bytes: &[u8], _max_bytes: u64) -> bool {
        CuckooFilter::load_chunk(self, iter, bytes).is_ok()
    }
    fn chunks(&self) -> Vec<(i64, Vec<u8>)> {
        CuckooFilter::chunks(self)
            .map(|(iter, bytes)| (iter, bytes.to_vec()))
            .collect()
    }
}
