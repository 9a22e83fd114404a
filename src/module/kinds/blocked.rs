//! The blocked kind (`bloomrsBK`): a chain of blocked links, every item's bits in one 64-byte
//! cache line of a link (`src/blocked/`, `BF.RESERVE ... BLOCKED`, or every implicit creation
//! that asks nothing else under `bf-blocked yes`), as the `BF.*` commands see it. It answers
//! RedisBloom's five `BF.INFO` fields as a chain does (capacity, bytes, links, items,
//! expansion), and `BF.DEBUG` one line per link.

use std::borrow::Cow;

use redis_module::native_types::RedisType;

use super::{aof_rewrite, digest, BloomKind, BloomValue, Chunk, Info, Write};
use crate::blocked::{Blocked, ENCODING_VERSION, MAGIC};
use crate::bloom::{format_g, AddError, ChunkError, CreateError, HeaderError};
use crate::budget::Budget;
use crate::module::ffi::io::Digest;
use crate::module::state::stats::{self, Measure, Measured, Totals};
use crate::module::types::{callbacks, filter_value};
use crate::syntax::bf::BloomOptions;

pub static BLOCKED_TYPE: RedisType = RedisType::new(
    "bloomrsBK",
    ENCODING_VERSION,
    callbacks::<Blocked>(Some(aof_rewrite::<Blocked>), Some(digest::<Blocked>)),
);

// The links' blocks stay where they are: they must keep their cache-line alignment, and
// arrays of this size are not moved by the allocator's defragmentation anyway.
filter_value!(Blocked, "a blocked Bloom filter", |value, defrag| defrag
    .vec(&mut value.links));

impl Measured for Blocked {
    fn measure(&self) -> Measure {
        Measure {
            values: 1,
            bytes: stats::saturating(self.reported_bytes()),
            items: stats::saturating(self.size),
            filters: stats::saturating(self.links.len() as u64),
        }
    }
    fn totals() -> &'static Totals {
        &stats::BLOCKED
    }
}

impl BloomValue for Blocked {
    fn add_each(
        &mut self,
        items: &mut dyn Iterator<Item = &[u8]>,
        write: &mut Write,
        answer: &mut dyn FnMut(Result<bool, AddError>) -> bool,
    ) {
        Blocked::add_each(self, items, write.admission, answer);
    }

    fn contains_each(&self, items: &mut dyn Iterator<Item = &[u8]>, answer: &mut dyn FnMut(bool)) {
        Blocked::contains_each(self, items, answer);
    }

    fn add_one(&mut self, item: &[u8], write: &mut Write) -> Result<bool, AddError> {
        Blocked::add(self, item, write.admission)
    }

    fn contains_one(&self, item: &[u8]) -> bool {
        Blocked::contains(self, item)
    }

    fn card(&self) -> u64 {
        self.size
    }

    fn estimated_rate(&self) -> f64 {
        Blocked::estimated_rate(self)
    }

    fn info(&self) -> Info {
        Info {
            capacity: self.capacity(),
            size: self.reported_bytes(),
            filters: self.links.len() as u64,
            items: self.size,
            expansion: self.is_scaling().then_some(self.growth),
            extra: Vec::new(),
        }
    }

    fn debug_lines(&self) -> Vec<String> {
        self.links
            .iter()
            .map(|link| {
                format!(
                    "bytes:{} blocks:{} hashes:{} capacity:{} size:{} ratio:{}",
                    link.bytes(),
                    link.shape.blocks,
                    link.shape.hashes,
                    link.shape.capacity,
                    link.size,
                    format_g(link.shape.error)
                )
            })
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
        let chunk = Blocked::chunk_within(self, iter, limit);
        Ok(chunk.map(|chunk| (chunk.next, Cow::Borrowed(chunk.bytes))))
    }

    fn load_chunk(&mut self, iter: i64, data: &[u8], _max_bytes: u64) -> Result<(), ChunkError> {
        Blocked::load_chunk(self, iter, data)
    }

    fn digest(&self, digest: &mut Digest) {
        digest.add_bytes(&self.encode_header());
        for link in &self.links {
            digest.add_bytes(link.blocks.bytes());
        }
    }
}

impl BloomKind for Blocked {
    const TYPE: &'static RedisType = &BLOCKED_TYPE;
    const MAGIC: Option<&'static [u8]> = Some(MAGIC);

    /// Takes the options that ask for BLOCKED (the syntax refuses it with the other layouts).
    fn create(options: &BloomOptions, write: &mut Write) -> Result<Option<Self>, CreateError> {
        if !options.blocked {
            return Ok(None);
        }
        let o = options;
        let limit = write.admission.limit(0);
        Blocked::new(o.capacity, o.error, o.growth, o.scaling, limit).map(Some)
    }

    fn from_header(header: &[u8], max_bytes: u64) -> Result<Self, HeaderError> {
        Blocked::from_header(header, max_bytes)
    }
}
