//! The plain kind: RedisBloom's scalable Bloom filter (`MBbloom--`), as the `BF.*` commands
//! see it through [`BloomValue`].

use std::borrow::Cow;

use redis_module::native_types::RedisType;

use super::ffi::io::{Defrag, Digest};
use super::kinds::{BloomKind, BloomValue, Chunk, Info, Write};
use super::types::BLOOM_TYPE;
use crate::bloom::{format_g, AddError, Cells, Chain, ChunkError, CreateError, HeaderError, Link};

impl BloomValue for Chain {
    fn add_each(
        &mut self,
        items: &mut dyn Iterator<Item = &[u8]>,
        write: &mut Write,
        answer: &mut dyn FnMut(Result<bool, AddError>) -> bool,
    ) {
        Chain::add_each(self, items, write.admission, answer);
    }

    fn contains_each(&self, items: &mut dyn Iterator<Item = &[u8]>, answer: &mut dyn FnMut(bool)) {
        Chain::contains_each(self, items, answer);
    }

    fn card(&self) -> u64 {
        self.size
    }

    fn info(&self) -> Info {
        Info::of_chain(self)
    }

    fn debug_lines(&self) -> Vec<String> {
        let force64 = self.is_64bit();
        self.links
            .iter()
            .map(|link| link_line(link, force64))
            .collect()
    }

    fn header(&self) -> Vec<u8> {
        self.encode_header()
    }

    fn chunk_at(&self, iter: i64, _max_bytes: u64) -> Result<Option<Chunk<'_>>, CreateError> {
        let chunk = Chain::chunk_at(self, iter);
        Ok(chunk.map(|chunk| (chunk.next, Cow::Borrowed(chunk.bytes))))
    }

    fn load_chunk(&mut self, iter: i64, data: &[u8], _max_bytes: u64) -> Result<(), ChunkError> {
        Chain::load_chunk(self, iter, data)
    }

    fn digest(&self, digest: &mut Digest) {
        digest_chain(self, digest);
    }
}

impl Info {
    /// RedisBloom's five fields of a chain, whatever its cells.
    pub(super) fn of_chain<C: Cells>(chain: &Chain<C>) -> Info {
        Info {
            capacity: chain.capacity(),
            size: chain.reported_bytes(),
            filters: chain.links.len() as u64,
            items: chain.size,
            expansion: chain.is_scaling().then_some(chain.growth),
            extra: Vec::new(),
        }
    }
}

/// Every field and array of a chain, for `DEBUG DIGEST-VALUE`.
pub(super) fn digest_chain<C: Cells>(chain: &Chain<C>, digest: &mut Digest) {
    for number in [
        chain.size,
        u64::from(chain.options),
        u64::from(chain.growth),
    ] {
        digest.add_int(number);
    }
    for link in &chain.links {
        for number in [
            link.entries,
            link.error.to_bits(),
            u64::from(link.hashes),
            link.bpe.to_bits(),
        ] {
            digest.add_int(number);
        }
        for number in [link.bits, u64::from(link.n2), link.size] {
            digest.add_int(number);
        }
        digest.add_bytes(&link.array);
    }
}

/// Moves a chain's heap blocks (active defragmentation).
pub(super) fn relocate_chain<C: Cells>(chain: &mut Chain<C>, defrag: &Defrag) {
    defrag.vec(&mut chain.links);
    for link in &mut chain.links {
        defrag.bytes(&mut link.array);
    }
}

impl BloomKind for Chain {
    const TYPE: &'static RedisType = &BLOOM_TYPE;
    const MAGIC: Option<&'static [u8]> = None;

    fn from_header(header: &[u8], max_bytes: u64) -> Result<Self, HeaderError> {
        Chain::from_header(header, max_bytes)
    }
}

/// One link's line of `BF.DEBUG`, as RedisBloom prints it.
pub(super) fn link_line<C: Cells>(link: &Link<C>, force64: bool) -> String {
    let bits = if link.bits == 0 {
        1u64 << link.n2
    } else {
        link.bits
    };
    let width = if force64 { 64 } else { 32 };
    format!(
        "bytes:{} bits:{} hashes:{} hashwidth:{} capacity:{} size:{} ratio:{}",
        link.bytes(),
        bits,
        link.hashes,
        width,
        link.entries,
        link.size,
        format_g(link.error)
    )
}
