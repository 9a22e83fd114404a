//! The static kind (`bloomrsST`): a builder of item hashes (`BF.RESERVE ... STATIC`) that
//! `BF.FREEZE` turns into a binary fuse filter (`src/fuse/`), as the `BF.*` commands see it.
//!
//! `BF.FREEZE` builds the filter off the main thread from a shared snapshot of the builder's
//! hashes while the client waits; meanwhile the builder answers reads and refuses writes
//! (`AddError::Freezing`). The main thread then makes the frozen value the builder's stage and
//! propagates it in steps (`BF.FREEZE key STAGE/CHUNK/COMMIT`, `src/fuse/stage.rs`), one per
//! event-loop turn, then swaps it in (O(1)) if the key still holds that builder; replicas and
//! the AOF take it through the one validator and never build it on their main thread. The
//! stage is saved with the builder (RDB, DUMP, AOF rewrite), so a replica or an AOF that
//! joins mid-way gets the rest of the table in the same steps. A key that
//! was deleted, renamed, overwritten, flushed or expired meanwhile is left as it is, and the
//! freeze answers that nothing was frozen. Inside MULTI or a script, where a client cannot
//! block, builders up to [`SYNC_MAX_ITEMS`] freeze at once and larger ones are refused.

use std::ffi::{c_void, CStr};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use redis_module::native_types::RedisType;

use super::{
    add_one_by_one, aof_rewrite, digest, lookup, BloomKind, BloomValue, Chunk, Info, Write,
};
use crate::bloom::{format_g, AddError, ChunkError, CreateError, HeaderError};
use crate::budget::Budget;
use crate::fuse::{
    BuildError, FreezeJob, Frozen, State, StaticFilter, ENCODING_VERSION, MAGIC, STEP_BYTES,
};
use crate::module::ffi::blocking::{run_in_background, Background};
use crate::module::ffi::io::{emit_effect, value_ref, AofIo, Digest};
use crate::module::ffi::{guard, log, Args, Ctx, RawString, Slot};
use crate::module::state::errors::*;
use crate::module::state::stats::{self, FreezeProgress, Measure, Measured, Totals};
use crate::module::types::{callbacks, filter_value};
use crate::syntax::bf::BloomOptions;

/// The most items a freeze builds on the main thread (inside MULTI or a script): about 10 ms.
pub const SYNC_MAX_ITEMS: u64 = 100_000;

pub static STATIC_TYPE: RedisType = RedisType::new(
    "bloomrsST",
    ENCODING_VERSION,
    callbacks::<StaticFilter>(Some(aof_rewrite_static), Some(digest::<StaticFilter>)),
);

/// AOF rewrite: the builder or the frozen filter as `BF.LOADCHUNK`s, then a builder's stage
/// as the freeze's effects that made it (`STAGE` and the `CHUNK`s propagated so far), so the
/// rest of the freeze's effects, after the rewrite, complete it on replay.
///
/// # Safety
/// Called by Redis with a live AOF handle, the key's name and a value of this type.
unsafe extern "C" fn aof_rewrite_static(io: *mut AofIo, key: RawString, value: *mut c_void) {
    aof_rewrite::<StaticFilter>(io, key, value);
    guard((), || {
        let Some((header, bytes)) = value_ref::<StaticFilter>(value).and_then(|v| v.staged())
        else {
            return;
        };
        emit_effect(io, c"BF.FREEZE", key, c"STAGE", None, &header);
        let mut end = 0u64;
        for step in bytes.chunks(STEP_BYTES as usize) {
            end += step.len() as u64;
            let iter = i64::try_from(end + 1).unwrap_or(i64::MAX);
            emit_effect(io, c"BF.FREEZE", key, c"CHUNK", Some(iter), step);
        }
    })
}

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

    fn estimated_rate(&self) -> f64 {
        StaticFilter::estimated_rate(self)
    }

    fn info(&self) -> Info {
        let bytes = self.reported_bytes();
        let items = self.card();
        let milli_bits = (bytes * 8000).checked_div(items).unwrap_or(0);
        let table = match &self.state {
            State::Frozen(frozen) => frozen.table.slots.len() as u64,
            State::Building(_) => 0,
        };
        let mut extra = vec![
            (c"Frozen", i64::from(self.is_frozen())),
            (c"Freezing", i64::from(self.is_freezing())),
            (c"Fingerprint bits", i64::from(self.width())),
            (c"Table bytes", stats::saturating(table)),
            (
                c"Bits per item (thousandths)",
                stats::saturating(milli_bits),
            ),
        ];
        // While a freeze runs: its step (1 builds the table, 2 propagates it), how far it is
        // and of what total (hashes read, then table bytes sent).
        if let Some(progress) = self.freeze_id().and_then(stats::freeze_of) {
            let (step, done, total) = progress.now();
            extra.push((c"Freeze step", step));
            extra.push((c"Freeze done", stats::saturating(done)));
            extra.push((c"Freeze total", stats::saturating(total)));
        }
        Info {
            capacity: self.capacity,
            size: bytes,
            filters: 1,
            items,
            expansion: None,
            extra,
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
        let stage = self.stage_progress().map(|(filled, table)| {
            format!("stage:{filled} of:{table} (a freeze's table, propagated in steps)")
        });
        std::iter::once(line).chain(stage).collect()
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
        Ok(StaticFilter::chunk_within(self, iter, limit))
    }

    fn load_chunk(&mut self, iter: i64, data: &[u8], max_bytes: u64) -> Result<(), ChunkError> {
        StaticFilter::load_chunk(self, iter, data, max_bytes)
    }

    /// The value as RDB holds it: the header and chunks, then a stage's header and bytes.
    fn digest(&self, digest: &mut Digest) {
        digest.add_bytes(&self.encode_header());
        let mut iter = 1;
        while let Some((next, bytes)) = StaticFilter::chunk_at(self, iter) {
            digest.add_bytes(&bytes);
            iter = next;
        }
        if let Some((header, bytes)) = self.staged() {
            digest.add_bytes(&header);
            digest.add_bytes(bytes);
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

/// A freeze: the snapshot it works from, its result, then the result's propagation in steps.
struct Freeze {
    /// The builder's hashes, shared while the freeze runs (the builder refuses writes).
    job: Option<FreezeJob>,
    key: Vec<u8>,
    /// The construction's result, until it becomes the builder's stage.
    result: Option<Result<Frozen, BuildError>>,
    /// Steps of the table propagated.
    steps: u64,
    outcome: Option<Result<(), &'static CStr>>,
    /// Whether it started on a (writable) replica, whose writes are its own.
    on_replica: bool,
    /// Whether it runs in steps across event-loop turns (not inside MULTI or a script).
    background: bool,
    /// How far it is, for `BF.INFO` of the key and `INFO bf`.
    progress: Arc<FreezeProgress>,
}

impl Drop for Freeze {
    fn drop(&mut self) {
        stats::freeze_ended(&self.progress);
    }
}

impl Background for Freeze {
    fn work(&mut self) {
        let read = &self.progress.read;
        self.result = self.job.as_ref().map(|job| job.run_counted(read));
    }

    fn step(&mut self, ctx: Ctx) -> bool {
        if self.outcome.is_none() {
            let key = std::mem::take(&mut self.key);
            ctx.with_string(&key, |name| {
                if let Err(text) = self.advance(ctx, name) {
                    self.outcome = Some(Err(text));
                }
            });
            self.key = key;
        }
        if self.outcome.is_some() {
            self.release();
            return true;
        }
        false
    }

    fn complete(mut self: Box<Self>, ctx: Ctx, _args: Args) {
        self.release();
        match self.outcome {
            Some(Ok(())) => ctx.reply_ok(),
            Some(Err(text)) => ctx.reply_error(text),
            None => ctx.reply_error(STATIC_FREEZE_FAILED),
        }
    }
}

impl Freeze {
    /// One step: the first makes the frozen value the builder's stage and propagates its
    /// header (`STAGE`), each next one a step of its table (`CHUNK`), the last swaps it in
    /// (`COMMIT`). Each checks first that the server is still a primary and the key still
    /// holds the builder the freeze started from, with its stage. The stage is part of the
    /// value, so a snapshot (a replica's full sync, a save, an AOF rewrite) taken between two
    /// steps holds what the steps after it complete.
    fn advance(&mut self, ctx: Ctx, name: RawString) -> Result<(), &'static CStr> {
        // A primary demoted meanwhile follows its new primary's stream: its keys are not ours
        // to change any more.
        if ctx.is_replica() && !self.on_replica {
            return Err(STATIC_FREEZE_DEMOTED);
        }
        let mut key = ctx.open_key(name, true);
        let job = self.job.as_ref().ok_or(STATIC_FREEZE_FAILED)?;
        let filter = match key.slot::<StaticFilter>(&STATIC_TYPE) {
            Slot::Ours(filter) if filter.is_frozen_by(job) => filter,
            _ => return Err(STATIC_FREEZE_KEY_CHANGED),
        };
        if let Some(result) = self.result.take() {
            let frozen = match result {
                Ok(frozen) => frozen,
                Err(BuildError::TooLarge) => return Err(STATIC_FREEZE_MEMORY),
                Err(_) => return Err(STATIC_FREEZE_FAILED),
            };
            let header = filter.stage_frozen(frozen);
            let table = filter.stage_progress().map_or(0, |(_, table)| table);
            self.progress.table.store(table.max(1), Ordering::Relaxed);
            ctx.replicate(c"BF.FREEZE", name, &[b"STAGE", &header]);
            return Ok(());
        }
        if self.background && held(self.steps) {
            return Ok(());
        }
        if let Some(step) = filter.next_step(step_bytes()) {
            let iter = step.iter.to_string();
            ctx.replicate(c"BF.FREEZE", name, &[b"CHUNK", iter.as_bytes(), step.bytes]);
            self.steps += 1;
            let sent = filter.stage_progress().map_or(0, |(filled, _)| filled);
            self.progress.sent.store(sent, Ordering::Relaxed);
            return Ok(());
        }
        let (header, _) = filter.staged().ok_or(STATIC_FREEZE_FAILED)?;
        // The job holds the builder's hashes too: `release` frees them.
        drop(
            filter
                .commit_stage(&header, u64::MAX)
                .map_err(|_| STATIC_FREEZE_FAILED)?,
        );
        ctx.replicate(c"BF.FREEZE", name, &[b"COMMIT", &header]);
        ctx.notify(c"bf.freeze", name);
        self.outcome = Some(Ok(()));
        Ok(())
    }

    /// Lets the builder's hashes go: freed off the main thread when the job holds the last
    /// share (at 100M items, 130k allocations); otherwise the builder takes writes again.
    fn release(&mut self) {
        if let Some(job) = self.job.take().filter(FreezeJob::is_last) {
            free_off_thread(job);
        }
    }
}

/// Table bytes a freeze propagates per step (the fault-injection build may make them fewer).
fn step_bytes() -> u64 {
    #[cfg(feature = "fault-injection")]
    if let Some(bytes) = crate::module::state::fault::freeze_step_bytes() {
        return bytes;
    }
    STEP_BYTES
}

/// Whether a freeze that propagated `steps` steps waits (only where the fault-injection
/// build was asked to hold it).
fn held(steps: u64) -> bool {
    #[cfg(feature = "fault-injection")]
    return crate::module::state::fault::freeze_held(steps);
    #[cfg(not(feature = "fault-injection"))]
    {
        let _ = steps;
        false
    }
}

/// Drops `owned` on a thread of its own (large builders are many allocations).
fn free_off_thread<T: Send + 'static>(owned: T) {
    let _ = std::thread::Builder::new()
        .name("bf-free".into())
        .spawn(move || drop(owned));
}

/// BF.FREEZE key
///
/// Also its effects, sent only by a primary or the AOF: `BF.FREEZE key STAGE header`,
/// `BF.FREEZE key CHUNK iterator bytes`, `BF.FREEZE key COMMIT header` (`src/fuse/stage.rs`).
pub fn freeze(ctx: Ctx, args: Args) -> CommandResult {
    if args.len() > 2 {
        return freeze_effect(ctx, args);
    }
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
    let items = job.set.len();
    let progress = stats::freeze_started(job.id(), items);
    let mut freeze = Freeze {
        progress,
        job: Some(job),
        key: args.bytes(1).to_vec(),
        result: None,
        steps: 0,
        outcome: None,
        on_replica: ctx.is_replica(),
        background: ctx.may_block(),
    };
    drop(key);
    if freeze.background {
        return run_in_background(ctx, Box::new(freeze)).map_err(|_| STATIC_FREEZE_THREAD.into());
    }
    if items > SYNC_MAX_ITEMS {
        return Err(STATIC_FREEZE_CANNOT_BLOCK.into());
    }
    // Inside MULTI or a script: every step now, its effects inside the transaction.
    freeze.work();
    while !freeze.step(ctx) {}
    match freeze.outcome {
        Some(Ok(())) => {
            ctx.reply_ok();
            Ok(())
        }
        Some(Err(text)) => Err(text.into()),
        None => Err(STATIC_FREEZE_FAILED.into()),
    }
}

/// A freeze's effect, applied where the primary or the AOF sends it (never from a client):
/// the builder stays the key's value, answering reads, until `COMMIT`.
fn freeze_effect(ctx: Ctx, args: Args) -> CommandResult {
    if !ctx.is_replayed() {
        return Err(STATIC_EFFECT_ONLY.into());
    }
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, true);
    let filter = match key.slot::<StaticFilter>(&STATIC_TYPE) {
        Slot::Ours(filter) => filter,
        Slot::Empty => return Err(NOT_FOUND.into()),
        Slot::WrongType => return Err(WRONG_TYPE.into()),
    };
    let limit = ctx.admission().limit(0);
    match (args.bytes(2), args.len()) {
        (b"STAGE", 4) => filter.begin_stage(args.bytes(3), limit)?,
        (b"CHUNK", 5) => {
            let iter = std::str::from_utf8(args.bytes(3))
                .ok()
                .and_then(|text| text.parse::<i64>().ok())
                .ok_or(BAD_DATA)?;
            filter.stage_chunk(iter, args.bytes(4))?;
        }
        (b"COMMIT", 4) => {
            if !filter.stage_is_whole(args.bytes(3)) {
                log(
                    c"warning",
                    "bloomrs: BF.FREEZE COMMIT without its whole stage (an AOF written before \
                     stages were saved): building the table on the main thread",
                );
            }
            free_off_thread(filter.commit_stage(args.bytes(3), limit)?);
            ctx.notify(c"bf.freeze", key_name);
        }
        _ => return Err(CommandError::Arity),
    }
    ctx.reply_ok();
    ctx.replicate_verbatim();
    Ok(())
}
