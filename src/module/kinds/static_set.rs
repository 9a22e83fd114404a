//! The static kind (`bloomrsST`): a builder of item hashes (`BF.RESERVE ... STATIC`) that
//! `BF.FREEZE` turns into a binary fuse filter (`src/fuse/`), as the `BF.*` commands see it.
//!
//! `BF.FREEZE` builds the filter off the main thread from a shared snapshot of the builder's
//! hashes while the client waits; meanwhile the builder answers reads and refuses writes
//! (`AddError::Freezing`). The main thread then swaps the filter in (O(1)) if the key still
//! holds that builder, and propagates the frozen value itself as effects (`UNLINK`, then
//! `BF.LOADCHUNK` of its header and chunks, then the key's `PEXPIREAT`), so replicas and the
//! AOF load it through the one validator and never build it on their main thread. A key that
//! was deleted, renamed, overwritten, flushed or expired meanwhile is left as it is, and the
//! freeze answers that nothing was frozen. Inside MULTI or a script, where a client cannot
//! block, builders up to [`SYNC_MAX_ITEMS`] freeze at once and larger ones are refused.

use std::ffi::CStr;

use redis_module::native_types::RedisType;

use super::{
    add_one_by_one, aof_rewrite, digest, lookup, BloomKind, BloomValue, Chunk, Info, Write,
};
use crate::bloom::{format_g, AddError, ChunkError, CreateError, HeaderError};
use crate::budget::Budget;
use crate::fuse::{BuildError, FreezeJob, Frozen, State, StaticFilter, ENCODING_VERSION, MAGIC};
use crate::module::ffi::blocking::{run_in_background, Background};
use crate::module::ffi::io::Digest;
use crate::module::ffi::{Args, Ctx, Slot};
use crate::module::state::errors::*;
use crate::module::state::stats::{self, Measure, Measured, Totals};
use crate::module::types::{callbacks, filter_value};
use crate::syntax::bf::BloomOptions;

/// The most items a freeze builds on the main thread (inside MULTI or a script): about 10 ms.
pub const SYNC_MAX_ITEMS: u64 = 100_000;

pub static STATIC_TYPE: RedisType = RedisType::new(
    "bloomrsST",
    ENCODING_VERSION,
    callbacks::<StaticFilter>(
        Some(aof_rewrite::<StaticFilter>),
        Some(digest::<StaticFilter>),
    ),
);

filter_value!(StaticFilter, "a static set", |value, defrag| value
    .relocate(|hashes| defrag.vec(hashes), |slots| defrag.vec(slots)));

impl Measured for StaticFilter {
    fn measure(&self) -> Measure {
        Measure {
            values: 1,
            bytes: stats::saturating(self.reported_bytes()),
            items: stats::saturating(self.card()),
            filters: i64::from(self.is_frozen()),
        }
    }
    fn totals() -> &'static Totals {
        &stats::STATIC
    }
}

impl BloomValue for StaticFilter {
    fn add_each(
        &mut self,
        items: &mut dyn Iterator<Item = &[u8]>,
        write: &mut Write,
        answer: &mut dyn FnMut(Result<bool, AddError>) -> bool,
    ) {
        add_one_by_one(items, answer, |item| {
            StaticFilter::add(self, item, &write.admission)
        });
    }

    fn contains_each(&self, items: &mut dyn Iterator<Item = &[u8]>, answer: &mut dyn FnMut(bool)) {
        StaticFilter::contains_each(self, items, answer);
    }

    fn add_one(&mut self, item: &[u8], write: &mut Write) -> Result<bool, AddError> {
        StaticFilter::add(self, item, &write.admission)
    }

    fn contains_one(&self, item: &[u8]) -> bool {
        StaticFilter::contains(self, item)
    }

    fn card(&self) -> u64 {
        StaticFilter::card(self)
    }

    fn info(&self) -> Info {
        let bytes = self.reported_bytes();
        let items = self.card();
        let milli_bits = (bytes * 8000).checked_div(items).unwrap_or(0);
        let table = match &self.state {
            State::Frozen(frozen) => frozen.table.slots.len() as u64,
            State::Building(_) => 0,
        };
        Info {
            capacity: self.capacity,
            size: bytes,
            filters: 1,
            items,
            expansion: None,
            extra: vec![
                (c"Frozen", i64::from(self.is_frozen())),
                (c"Freezing", i64::from(self.is_freezing())),
                (c"Fingerprint bits", i64::from(self.width())),
                (c"Table bytes", stats::saturating(table)),
                (
                    c"Bits per item (thousandths)",
                    stats::saturating(milli_bits),
                ),
            ],
        }
    }

    fn debug_lines(&self) -> Vec<String> {
        let line = match &self.state {
            State::Building(set) => format!(
                "state:building hashes:{} bytes:{} ratio:{}",
                set.len(),
                set.bytes(),
                format_g(self.error)
            ),
            State::Frozen(frozen) => {
                let shape = frozen.table.shape;
                format!(
                    "state:frozen bytes:{} width:{} segment_length:{} segments:{} ratio:{}",
                    frozen.table.slots.len(),
                    shape.width,
                    shape.segment_length,
                    shape.segment_count,
                    format_g(self.error)
                )
            }
        };
        vec![line]
    }

    fn header(&self) -> Vec<u8> {
        self.encode_header()
    }

    fn chunk_at(&self, iter: i64, _max_bytes: u64) -> Result<Option<Chunk<'_>>, CreateError> {
        Ok(StaticFilter::chunk_at(self, iter))
    }

    fn load_chunk(&mut self, iter: i64, data: &[u8], max_bytes: u64) -> Result<(), ChunkError> {
        StaticFilter::load_chunk(self, iter, data, max_bytes)
    }

    fn digest(&self, digest: &mut Digest) {
        digest.add_bytes(&self.encode_header());
        let mut iter = 1;
        while let Some((next, bytes)) = StaticFilter::chunk_at(self, iter) {
            digest.add_bytes(&bytes);
            iter = next;
        }
    }
}

impl BloomKind for StaticFilter {
    const TYPE: &'static RedisType = &STATIC_TYPE;
    const MAGIC: Option<&'static [u8]> = Some(MAGIC);

    /// Takes the options that ask for STATIC (the syntax refuses it with the other layouts).
    fn create(options: &BloomOptions, write: &mut Write) -> Result<Option<Self>, CreateError> {
        if !options.static_set {
            return Ok(None);
        }
        let filter = StaticFilter::new(options.capacity, options.error)?;
        if filter.reported_bytes() > write.admission.limit(0) {
            return Err(CreateError::TooLarge);
        }
        Ok(Some(filter))
    }

    fn from_header(header: &[u8], max_bytes: u64) -> Result<Self, HeaderError> {
        StaticFilter::from_header(header, max_bytes)
    }
}

/// A freeze: the snapshot it works from, then its result.
struct Freeze {
    job: FreezeJob,
    result: Option<Result<Frozen, BuildError>>,
}

impl Background for Freeze {
    fn work(&mut self) {
        self.result = Some(self.job.run());
    }

    fn complete(self: Box<Self>, ctx: Ctx, args: Args) {
        if let Err(text) = finish(ctx, args, *self) {
            ctx.reply_error(text);
        }
    }
}

/// BF.FREEZE key
pub fn freeze(ctx: Ctx, args: Args) -> CommandResult {
    args.exactly(2)?;
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, true);
    let filter = match key.slot::<StaticFilter>(&STATIC_TYPE) {
        Slot::Ours(filter) => filter,
        Slot::Empty => return Err(NOT_FOUND.into()),
        Slot::WrongType => {
            return match lookup(&mut key) {
                Slot::Ours(_) => Err(NOT_STATIC.into()),
                _ => Err(WRONG_TYPE.into()),
            }
        }
    };
    if filter.is_frozen() {
        return Err(STATIC_FROZEN_ALREADY.into());
    }
    let job = filter.freeze_job().ok_or(STATIC_FREEZING)?;
    let current = filter.reported_bytes();
    if current.saturating_add(job.bytes()) > ctx.admission().limit(current) {
        return Err(STATIC_FREEZE_MEMORY.into());
    }
    let freeze = Freeze { job, result: None };
    drop(key);
    if ctx.may_block() {
        return run_in_background(ctx, Box::new(freeze)).map_err(|_| STATIC_FREEZE_THREAD.into());
    }
    if freeze.job.set.len() > SYNC_MAX_ITEMS {
        return Err(STATIC_FREEZE_CANNOT_BLOCK.into());
    }
    let mut freeze = freeze;
    freeze.work();
    finish(ctx, args, freeze).map_err(CommandError::from)
}

/// Swaps the frozen filter in if the key still holds the builder it was built from, replies,
/// and propagates the frozen value.
fn finish(ctx: Ctx, args: Args, freeze: Freeze) -> Result<(), &'static CStr> {
    let Freeze { job, result } = freeze;
    let outcome = swap_in(ctx, args, &job, result);
    // When the job holds the last share of the builder's hashes (the builder was swapped out
    // or went away), they are freed off the main thread: at 100M items, 130k allocations.
    // Otherwise the share is dropped here, so the builder takes writes again at once.
    if job.is_last() {
        let _ = std::thread::Builder::new()
            .name("bf-free".into())
            .spawn(move || drop(job));
    }
    outcome
}

fn swap_in(
    ctx: Ctx,
    args: Args,
    job: &FreezeJob,
    result: Option<Result<Frozen, BuildError>>,
) -> Result<(), &'static CStr> {
    let frozen = match result {
        Some(Ok(frozen)) => frozen,
        Some(Err(BuildError::TooLarge)) => return Err(STATIC_FREEZE_MEMORY),
        _ => return Err(STATIC_FREEZE_FAILED),
    };
    let key_name = args.raw(1).ok_or(STATIC_FREEZE_KEY_CHANGED)?;
    let mut key = ctx.open_key(key_name, true);
    let Slot::Ours(filter) = key.slot::<StaticFilter>(&STATIC_TYPE) else {
        return Err(STATIC_FREEZE_KEY_CHANGED);
    };
    if !filter.adopt(job, frozen) {
        return Err(STATIC_FREEZE_KEY_CHANGED);
    }
    ctx.reply_ok();
    // UNLINK: a replica frees its builder (130k allocations at 100M items) in the background.
    ctx.replicate(c"UNLINK", key_name, &[]);
    ctx.replicate(c"BF.LOADCHUNK", key_name, &[b"1", &filter.encode_header()]);
    let mut iter = 1;
    while let Some((next, bytes)) = StaticFilter::chunk_at(filter, iter) {
        ctx.replicate(
            c"BF.LOADCHUNK",
            key_name,
            &[next.to_string().as_bytes(), &bytes],
        );
        iter = next;
    }
    if let Some(at) = key.expire_at() {
        ctx.replicate(c"PEXPIREAT", key_name, &[at.to_string().as_bytes()]);
    }
    ctx.notify(c"bf.freeze", key_name);
    Ok(())
}
