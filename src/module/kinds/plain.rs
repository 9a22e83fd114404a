//! The plain kind: RedisBloom's scalable Bloom filter (`MBbloom--`), its module type, its
//! creation, and how the `BF.*` commands see it through [`BloomValue`].

use std::borrow::Cow;

use redis_module::native_types::RedisType;

use super::chain::{digest_chain, link_line, relocate_chain};
use super::{aof_rewrite, digest, BloomKind, BloomValue, Chunk, Info, Write};
use crate::bloom::{AddError, Chain, ChunkError, CreateError, HeaderError, Link};
use crate::budget::Budget;
use crate::module::ffi::io::Digest;
use crate::module::types::{callbacks, filter_value};
use crate::syntax::bf::BloomOptions;

pub static BLOOM_TYPE: RedisType = RedisType::new(
    "MBbloom--",
    crate::bloom::ENCODING_VERSION,
    callbacks::<Chain>(Some(aof_rewrite::<Chain>), Some(digest::<Chain>)),
);

filter_value!(Chain, "a Bloom filter", |value, defrag| relocate_chain(
    value, defrag
), admitted: |value| value.links_hold_their_capacities());

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

    fn add_one(&mut self, item: &[u8], write: &mut Write) -> Result<bool, AddError> {
        Chain::add_one(self, item, write.admission)
    }

    fn contains_one(&self, item: &[u8]) -> bool {
        Chain::contains_one(self, item)
    }

    fn card(&self) -> u64 {
        self.size
    }

    fn estimated_rate(&self) -> f64 {
        Link::chain_rate(&self.links)
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

    fn chunk_at(
        &self,
        iter: i64,
        _max_bytes: u64,
        limit: u64,
    ) -> Result<Option<Chunk<'_>>, CreateError> {
        let chunk = Chain::chunk_within(self, iter, limit);
        Ok(chunk.map(|chunk| (chunk.next, Cow::Borrowed(chunk.bytes))))
    }

    fn load_chunk(&mut self, iter: i64, data: &[u8], _max_bytes: u64) -> Result<(), ChunkError> {
        Chain::load_chunk(self, iter, data)
    }

    fn digest(&self, digest: &mut Digest) {
        digest_chain(self, digest);
    }
}

impl BloomKind for Chain {
    const TYPE: &'static RedisType = &BLOOM_TYPE;
    const MAGIC: Option<&'static [u8]> = None;

    /// RedisBloom's chain takes whatever options the other kinds leave (COMPACT never reaches
    /// it: the compact kind takes those first).
    fn create(options: &BloomOptions, write: &mut Write) -> Result<Option<Self>, CreateError> {
        if options.compact {
            return Ok(None);
        }
        let o = options;
        Chain::new(
            o.capacity,
            o.error,
            o.growth,
            o.scaling,
            write.admission.limit(0),
        )
        .map(Some)
    }

    fn from_header(header: &[u8], max_bytes: u64) -> Result<Self, HeaderError> {
        Chain::from_header(header, max_bytes)
    }
}
