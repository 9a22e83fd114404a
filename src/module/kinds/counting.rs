//! The counting kind (`bloomrsCT`): a Bloom filter that can delete (`BF.RESERVE ... COUNTING`),
//! its module type and creation, as the `BF.*` commands see it.

use std::borrow::Cow;

use redis_module::native_types::RedisType;

use super::chain::{digest_chain, link_line, relocate_chain};
use super::{aof_rewrite, digest, BloomKind, BloomValue, Chunk, Deletes, Info, Write};
use crate::bloom::{AddError, Cells, ChunkError, CreateError, HeaderError, Link};
use crate::budget::Budget;
use crate::counting::{Counter4, CountingFilter, DeleteError, ENCODING_VERSION, MAGIC};
use crate::module::ffi::io::Digest;
use crate::module::state::stats::{self, Measure, Measured, Totals};
use crate::module::types::{callbacks, filter_value};
use crate::syntax::bf::BloomOptions;

pub static COUNTING_TYPE: RedisType = RedisType::new(
    "bloomrsCT",
    ENCODING_VERSION,
    callbacks::<CountingFilter>(
        Some(aof_rewrite::<CountingFilter>),
        Some(digest::<CountingFilter>),
    ),
);

filter_value!(
    CountingFilter,
    "a counting Bloom filter",
    |value, defrag| relocate_chain(&mut value.chain, defrag)
);

impl Measured for CountingFilter {
    fn measure(&self) -> Measure {
        Measure {
            items: i64::try_from(self.items).unwrap_or(i64::MAX),
            ..stats::chain_measure(&self.chain)
        }
    }
    fn totals() -> &'static Totals {
        &stats::COUNTING
    }
}

impl BloomValue for CountingFilter {
    fn add_each(
        &mut self,
        items: &mut dyn Iterator<Item = &[u8]>,
        write: &mut Write,
        answer: &mut dyn FnMut(Result<bool, AddError>) -> bool,
    ) {
        CountingFilter::add_each(self, items, write.admission, answer);
    }

    fn contains_each(&self, items: &mut dyn Iterator<Item = &[u8]>, answer: &mut dyn FnMut(bool)) {
        self.chain.contains_each(items, answer);
    }

    fn card(&self) -> u64 {
        self.items
    }

    fn estimated_rate(&self) -> f64 {
        Link::chain_rate(&self.chain.links)
    }

    fn info(&self) -> Info {
        let mut info = Info::of_chain(&self.chain);
        info.items = self.items;
        info.extra = vec![
            (c"Counter width", Counter4::WIDTH as i64),
            (c"Saturated counters", self.saturated() as i64),
        ];
        info
    }

    fn debug_lines(&self) -> Vec<String> {
        self.chain
            .links
            .iter()
            .map(|link| {
                let saturated = Counter4::saturated_in(&link.array);
                let line = link_line(link, true);
                format!(
                    "{line} counter_bits:{} saturated:{saturated}",
                    Counter4::WIDTH
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
        let chunk = self.chain.chunk_within(iter, limit);
        Ok(chunk.map(|chunk| (chunk.next, Cow::Borrowed(chunk.bytes))))
    }

    fn load_chunk(&mut self, iter: i64, data: &[u8], _max_bytes: u64) -> Result<(), ChunkError> {
        self.chain.load_chunk(iter, data)
    }

    fn digest(&self, digest: &mut Digest) {
        digest.add_int(Counter4::WIDTH);
        digest.add_int(self.items);
        digest_chain(&self.chain, digest);
    }

    fn deletes(&mut self) -> Option<&mut dyn Deletes> {
        Some(self)
    }
}

impl Deletes for CountingFilter {
    fn delete_each(
        &mut self,
        items: &mut dyn Iterator<Item = &[u8]>,
        _write: &mut Write,
        answer: &mut dyn FnMut(Result<bool, DeleteError>),
    ) {
        CountingFilter::delete_each(self, items, answer);
    }
}

impl BloomKind for CountingFilter {
    const TYPE: &'static RedisType = &COUNTING_TYPE;
    const MAGIC: Option<&'static [u8]> = Some(MAGIC);

    /// Takes the options that ask for COUNTING (not COMPACT as well: a compact filter that
    /// deletes is the compact kind's).
    fn create(options: &BloomOptions, write: &mut Write) -> Result<Option<Self>, CreateError> {
        if !options.counting || options.compact {
            return Ok(None);
        }
        let o = options;
        let limit = write.admission.limit(0);
        CountingFilter::new(o.capacity, o.error, o.growth, o.scaling, limit).map(Some)
    }

    fn from_header(header: &[u8], max_bytes: u64) -> Result<Self, HeaderError> {
        CountingFilter::from_header(header, max_bytes)
    }
}
