//! The compact kind (`bloomrsCP`): a filter of small sorted segments that splits one segment
//! at a time as items arrive (`src/compact/`, `BF.RESERVE ... COMPACT`, or every implicit
//! creation under `bf-compact yes`), as the `BF.*` commands see it. With `COUNTING` it
//! deletes (`BF.DEL`).
//!
//! The capacity a command gives is a hint the filter does not reserve: it starts at one
//! segment and splits, so its memory follows the items it holds; the error rate is a bound
//! at every size. `BF.INFO` keeps RedisBloom's fields: `Capacity` is what the segments take
//! before the next split, `Number of filters` is 1 (one filter, never a chain), and
//! `Expansion rate` is 2.
//!
//! Its placement is keyed by a secret chosen on the primary at creation, so a client cannot
//! choose items that crowd one segment: the creation propagates as `BF.LOADCHUNK` of the
//! new filter (header and its one empty segment), never as the command, so replicas and the
//! AOF hold the same secret.

use redis_module::native_types::RedisType;

use super::{aof_rewrite, digest, BloomKind, BloomValue, Chunk, Deletes, Info, Write};
use crate::bloom::{AddError, ChunkError, CreateError, HeaderError};
use crate::compact::{Block, CompactFilter, ENCODING_VERSION, MAGIC};
use crate::counting::DeleteError;
use crate::module::ffi::io::Digest;
use crate::module::state::stats::{self, Measure, Measured, Totals};
use crate::module::types::{callbacks, filter_value};
use crate::syntax::bf::BloomOptions;

pub static COMPACT_TYPE: RedisType = RedisType::new(
    "bloomrsCP",
    ENCODING_VERSION,
    callbacks::<CompactFilter>(
        Some(aof_rewrite::<CompactFilter>),
        Some(digest::<CompactFilter>),
    ),
);

filter_value!(CompactFilter, "a compact Bloom filter", |value, defrag| {
    value.for_each_block(|block| match block {
        Block::Words(words) => defrag.bytes(words),
        Block::Bytes(bytes) => defrag.vec(bytes),
    });
});

impl Measured for CompactFilter {
    fn measure(&self) -> Measure {
        Measure {
            values: 1,
            bytes: stats::saturating(self.bytes()),
            items: stats::saturating(self.len()),
            filters: 1,
        }
    }
    fn totals() -> &'static Totals {
        &stats::COMPACT
    }
}

impl BloomValue for CompactFilter {
    fn add_each(
        &mut self,
        items: &mut dyn Iterator<Item = &[u8]>,
        write: &mut Write,
        answer: &mut dyn FnMut(Result<bool, AddError>) -> bool,
    ) {
        super::add_one_by_one(items, answer, |item| self.add(item, write.admission));
    }

    fn contains_each(&self, items: &mut dyn Iterator<Item = &[u8]>, answer: &mut dyn FnMut(bool)) {
        CompactFilter::contains_each(self, items, answer);
    }

    fn card(&self) -> u64 {
        self.len()
    }

    fn estimated_rate(&self) -> f64 {
        CompactFilter::estimated_rate(self)
    }

    fn info(&self) -> Info {
        Info {
            capacity: self.capacity(),
            size: self.bytes(),
            filters: 1,
            items: self.len(),
            expansion: Some(2),
            extra: Vec::new(),
        }
    }

    fn debug_lines(&self) -> Vec<String> {
        CompactFilter::debug_lines(self)
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
        Ok(CompactFilter::chunk_within(self, iter, limit))
    }

    fn load_chunk(&mut self, iter: i64, data: &[u8], max_bytes: u64) -> Result<(), ChunkError> {
        CompactFilter::load_chunk(self, iter, data, max_bytes)
    }

    fn digest(&self, digest: &mut Digest) {
        digest.add_bytes(&self.encode_header());
        for (_, bytes) in self.each_chunk() {
            digest.add_bytes(&bytes);
        }
    }

    fn deletes(&mut self) -> Option<&mut dyn Deletes> {
        if self.is_deletable() {
            Some(self)
        } else {
            None
        }
    }
}

impl Deletes for CompactFilter {
    fn delete_each(
        &mut self,
        items: &mut dyn Iterator<Item = &[u8]>,
        _write: &mut Write,
        answer: &mut dyn FnMut(Result<bool, DeleteError>),
    ) {
        for item in items {
            // Only a deletable filter is offered deletes; one still arriving deletes nothing.
            answer(Ok(self.delete(item).unwrap_or(false)));
        }
    }
}

impl BloomKind for CompactFilter {
    const TYPE: &'static RedisType = &COMPACT_TYPE;
    const MAGIC: Option<&'static [u8]> = Some(MAGIC);
    const ANNOUNCES: bool = true;

    /// Takes the options that ask for COMPACT without a window (with COUNTING: one that
    /// deletes; with a window the compact windowed kind takes them). The
    /// secret is drawn here on the primary; a command replayed from an older primary or
    /// AOF (which sent the command itself) places items unkeyed, as converted filters do.
    fn create(options: &BloomOptions, write: &mut Write) -> Result<Option<Self>, CreateError> {
        if !options.compact || options.window.is_some() {
            return Ok(None);
        }
        let secret = match write.replayed() {
            true => 0,
            false => write.random_nonzero(),
        };
        let filter = CompactFilter::new(options.error, options.counting, secret, write.admission)?;
        write.effect(c"BF.LOADCHUNK", vec![b"1".to_vec(), filter.encode_header()]);
        for (next, bytes) in filter.each_chunk() {
            write.effect(
                c"BF.LOADCHUNK",
                vec![next.to_string().into_bytes(), bytes.into_owned()],
            );
        }
        Ok(Some(filter))
    }

    fn from_header(header: &[u8], max_bytes: u64) -> Result<Self, HeaderError> {
        CompactFilter::from_header(header, max_bytes)
    }
}
