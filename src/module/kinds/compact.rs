//! The compact kind (`bloomrsCP`): one fingerprint table that doubles as items arrive
//! (`src/compact/`, `BF.RESERVE ... COMPACT`, or every implicit creation under
//! `bf-compact yes`), as the `BF.*` commands see it. With `COUNTING` it deletes (`BF.DEL`).
//!
//! The capacity a command gives is a hint the filter does not reserve: it starts at its
//! smallest table and doubles, so its memory follows the items it holds; the error rate is a
//! bound at every size. `BF.INFO` keeps RedisBloom's fields: `Capacity` is what the current
//! table takes before it doubles, `Number of filters` is 1 (one table, never a chain), and
//! `Expansion rate` is 2.

use std::borrow::Cow;

use redis_module::native_types::RedisType;

use super::{aof_rewrite, digest, BloomKind, BloomValue, Chunk, Deletes, Info, Write};
use crate::bloom::{AddError, ChunkError, CreateError, HeaderError};
use crate::budget::Budget;
use crate::compact::{Compact, ENCODING_VERSION, MAGIC};
use crate::counting::DeleteError;
use crate::module::ffi::io::Digest;
use crate::module::state::stats::{self, Measure, Measured, Totals};
use crate::module::types::{callbacks, filter_value};
use crate::syntax::bf::BloomOptions;

pub static COMPACT_TYPE: RedisType = RedisType::new(
    "bloomrsCP",
    ENCODING_VERSION,
    callbacks::<Compact>(Some(aof_rewrite::<Compact>), Some(digest::<Compact>)),
);

/// The items a new compact filter's first table is sized for: the smallest table, whatever
/// the hint (a filter that reserved its hint would pay for items it may never hold).
const FIRST_TABLE_ITEMS: u64 = 1;

filter_value!(Compact, "a compact Bloom filter", |value, defrag| {
    // Both tables during a doubling.
    for table in value.tables_for_relocation() {
        defrag.vec(table);
    }
});

impl Measured for Compact {
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

impl BloomValue for Compact {
    fn add_each(
        &mut self,
        items: &mut dyn Iterator<Item = &[u8]>,
        write: &mut Write,
        answer: &mut dyn FnMut(Result<bool, AddError>) -> bool,
    ) {
        for item in items {
            if !answer(self.add(item, write.admission)) {
                return;
            }
        }
    }

    fn contains_each(&self, items: &mut dyn Iterator<Item = &[u8]>, answer: &mut dyn FnMut(bool)) {
        Compact::contains_each(self, items, answer);
    }

    fn card(&self) -> u64 {
        self.len()
    }

    fn info(&self) -> Info {
        let summary = self.summary();
        Info {
            capacity: summary.capacity,
            size: self.bytes(),
            filters: 1,
            items: self.len(),
            expansion: Some(2),
            extra: Vec::new(),
        }
    }

    fn debug_lines(&self) -> Vec<String> {
        Compact::debug_lines(self)
    }

    fn header(&self) -> Vec<u8> {
        self.encode_header()
    }

    fn chunk_at(&self, iter: i64, _max_bytes: u64) -> Result<Option<Chunk<'_>>, CreateError> {
        // Chunks are slices of the table: find the one that starts at `iter`.
        Ok(self
            .chunks()
            .scan(1i64, |start, (next, bytes)| {
                let this = *start;
                *start = next;
                Some((this, next, bytes))
            })
            .find(|(start, _, _)| *start == iter)
            .map(|(_, next, bytes)| (next, Cow::Borrowed(bytes))))
    }

    fn load_chunk(&mut self, iter: i64, data: &[u8], max_bytes: u64) -> Result<(), ChunkError> {
        Compact::load_chunk(self, iter, data, max_bytes)
    }

    fn digest(&self, digest: &mut Digest) {
        digest.add_bytes(&self.encode_header());
        digest.add_bytes(self.table_bytes());
        if let Some(old) = self.old_table_bytes() {
            digest.add_bytes(old);
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

impl Deletes for Compact {
    fn delete_each(
        &mut self,
        items: &mut dyn Iterator<Item = &[u8]>,
        _write: &mut Write,
        answer: &mut dyn FnMut(Result<bool, DeleteError>),
    ) {
        for item in items {
            // Only a deletable, fully loaded filter is offered deletes.
            answer(Ok(self.delete(item).unwrap_or(false)));
        }
    }
}

impl BloomKind for Compact {
    const TYPE: &'static RedisType = &COMPACT_TYPE;
    const MAGIC: Option<&'static [u8]> = Some(MAGIC);

    /// Takes the options that ask for COMPACT (with COUNTING: one that deletes).
    fn create(options: &BloomOptions, write: &mut Write) -> Result<Option<Self>, CreateError> {
        if !options.compact {
            return Ok(None);
        }
        Compact::new(
            FIRST_TABLE_ITEMS,
            options.error,
            options.counting,
            write.admission.limit(0),
        )
        .map(Some)
    }

    fn from_header(header: &[u8], max_bytes: u64) -> Result<Self, HeaderError> {
        Compact::from_header(header, max_bytes)
    }
}
