//! The Bloom family: every kind of Bloom filter (the plain RedisBloom chain today; counting,
//! windowed and sparse filters) answers the same `BF.*` commands. A command finds whatever
//! kind a key holds with [`lookup`] and asks it through [`BloomValue`]; it never branches on
//! the kind. Each kind owns only what differs: its core (beside `src/bloom/`, sharing the
//! hashing, link sizing and chain walk), its module type and its encodings.
//!
//! # Adding a kind
//! 1. Its core, plain Rust beside `src/bloom/` (e.g. `src/counting/`).
//! 2. One file here (as `plain.rs` is for `MBbloom--`): its module type, a 9-character name
//!    built with `types::callbacks::<T>(Some(aof_rewrite::<T>), Some(digest::<T>))`; then
//!    `FilterValue` (RDB, defrag), `Measured` (INFO bf totals), [`BloomValue`] and
//!    [`BloomKind`] for the core's type.
//! 3. One line in [`KINDS`]: the module registers the type from there, [`lookup`] finds it,
//!    and `BF.LOADCHUNK` recognises its SCANDUMP header by [`BloomKind::MAGIC`].
//! 4. If options create it (`BF.RESERVE ... COUNTING`), one arm in [`create`].
//!
//! Writes go through a [`Write`]: the memory limits (`write.admission`, see `admission`: its
//! `limit(0)` as the core's `max_bytes` to create, itself wherever the core takes a `Budget`
//! to grow), the primary's clock (`now_ms`, for kinds
//! that depend on time; a replica gets the primary's decisions as effects, never its own
//! clock), replication effects queued in order, the key's expiry, and a replacement value (a
//! kind that changes encoding, possibly to another module type, puts the new value there and
//! keeps writing into it). The command applies all of it once with [`Write::finish`].

use std::borrow::Cow;
use std::ffi::{c_void, CStr};

use redis_module::native_types::RedisType;
use redis_module::raw;

use super::counting::COUNTING_TYPE;
use super::ffi::io::{emit_loadchunk, value_ref, Digest};
use super::ffi::Admission;
use super::ffi::{guard, Args, Ctx, Key, Member, RawString, Slot};
use super::state::stats::Measured;
use super::types::FilterValue;
use crate::bloom::{AddError, ChunkError, CreateError, HeaderError};
use crate::budget::Budget;
use crate::counting::{CountingFilter, DeleteError};
use crate::syntax::bf::BloomOptions;

/// A SCANDUMP chunk: the iterator after it and its bytes, borrowed from the value or built
/// for the reply.
pub(super) type Chunk<'a> = (i64, Cow<'a, [u8]>);

/// What `BF.INFO` reports: RedisBloom's five fields, then the kind's own.
pub(super) struct Info {
    pub capacity: u64,
    pub size: u64,
    pub filters: u64,
    pub items: u64,
    /// `None` for a non-scaling filter.
    pub expansion: Option<u32>,
    /// Fields only this kind has, after RedisBloom's (none for a plain filter).
    pub extra: Vec<(&'static CStr, i64)>,
}

/// A Bloom-family value: the operations the `BF.*` commands need.
pub(super) trait BloomValue {
    /// Adds the items in order; `answer` receives each outcome (true: the item was absent
    /// before) and returns false to stop.
    fn add_each(
        &mut self,
        items: &mut dyn Iterator<Item = &[u8]>,
        write: &mut Write,
        answer: &mut dyn FnMut(Result<bool, AddError>) -> bool,
    );

    /// Whether each item may be present.
    fn contains_each(&self, items: &mut dyn Iterator<Item = &[u8]>, answer: &mut dyn FnMut(bool));

    /// Items held (`BF.CARD`).
    fn card(&self) -> u64;

    fn info(&self) -> Info;

    /// The lines of `BF.DEBUG` after the first (`size:<items>`).
    fn debug_lines(&self) -> Vec<String>;

    /// The SCANDUMP header (iterator 0); its own kinds start with their [`BloomKind::MAGIC`].
    fn header(&self) -> Vec<u8>;

    /// The SCANDUMP chunk at iterator `iter >= 1` with the iterator that follows it, or None
    /// past the end. Borrowed from the value, or built for the reply (a sparse filter's dense
    /// form).
    /// `TooLarge` when a chunk the kind builds would not fit `max_bytes`.
    fn chunk_at(&self, iter: i64, max_bytes: u64) -> Result<Option<Chunk<'_>>, CreateError>;

    /// Copies a LOADCHUNK chunk that SCANDUMP returned together with iterator `iter`; a
    /// kind whose chunks allocate keeps the value within `max_bytes`.
    fn load_chunk(&mut self, iter: i64, data: &[u8], max_bytes: u64) -> Result<(), ChunkError>;

    /// Feeds everything the value holds to `DEBUG DIGEST-VALUE`.
    fn digest(&self, digest: &mut Digest);

    /// The value's deletes, for kinds that can delete (`BF.DEL` answers the others that
    /// they are not counting filters).
    fn deletes(&mut self) -> Option<&mut dyn Deletes> {
        None
    }
}

/// Deleting items, for the kinds that can.
pub(super) trait Deletes {
    /// Deletes the items in order; `answer` receives each outcome (true: deleted).
    fn delete_each(
        &mut self,
        items: &mut dyn Iterator<Item = &[u8]>,
        write: &mut Write,
        answer: &mut dyn FnMut(Result<bool, DeleteError>),
    );
}

/// A kind's type-level side: its module type and how a SCANDUMP header becomes one.
pub(super) trait BloomKind: BloomValue + FilterValue + Measured + Sized + 'static {
    const TYPE: &'static RedisType;
    /// The first bytes of this kind's SCANDUMP header; `None` for RedisBloom's own header,
    /// which has no magic (it is the one a header matching no magic is read as).
    const MAGIC: Option<&'static [u8]>;

    /// An empty value shaped as a LOADCHUNK header describes.
    fn from_header(header: &[u8], max_bytes: u64) -> Result<Self, HeaderError>;
}

/// A registered kind.
pub(super) struct Kind {
    member: Member<dyn BloomValue>,
    magic: Option<&'static [u8]>,
    from_header: fn(&mut Key, &[u8], u64) -> Result<(), HeaderError>,
}

const fn kind<T: BloomKind>() -> Kind {
    Kind {
        member: Member::new::<T>(T::TYPE, view::<T>),
        magic: T::MAGIC,
        from_header: store_header::<T>,
    }
}

fn view<T: BloomKind>(value: *mut c_void) -> *mut dyn BloomValue {
    value.cast::<T>() as *mut dyn BloomValue
}

fn store_header<T: BloomKind>(
    key: &mut Key,
    header: &[u8],
    max_bytes: u64,
) -> Result<(), HeaderError> {
    let value = T::from_header(header, max_bytes)?;
    key.set(T::TYPE, value);
    Ok(())
}

/// Every Bloom kind. Kinds with a header magic come before the plain kind, which takes any
/// header the others do not claim.
pub(super) static KINDS: [Kind; 4] = [
    kind::<crate::sparse::Sparse>(),
    kind::<crate::windowed::Windowed>(),
    kind::<CountingFilter>(),
    kind::<crate::bloom::Chain>(),
];

/// Registers every kind's module type (during module load).
pub(super) fn register_types(ctx: *mut raw::RedisModuleCtx) -> Result<(), String> {
    for kind in &KINDS {
        kind.member
            .ty
            .create_data_type(ctx)
            .map_err(|e| format!("cannot create a Bloom data type: {e}"))?;
    }
    Ok(())
}

/// The Bloom filter a key holds, whatever its kind.
pub(super) fn lookup(key: &mut Key) -> Slot<'_, dyn BloomValue> {
    key.slot_in(KINDS.iter().map(|kind| &kind.member))
}

/// Creates the filter `options` describe in an empty, writable key: sparse when a client of
/// the primary asks and `bf-sparse-max-bytes` is set (the creation is then queued as the
/// effect that makes a replica build the same sparse value, and `true` returned), else the
/// plain chain (`false`: the caller propagates it as RedisBloom's command).
pub(super) fn create<'k>(
    key: &'k mut Key,
    options: &BloomOptions,
    write: &mut Write,
) -> Result<(&'k mut (dyn BloomValue + 'static), bool), CreateError> {
    if let Some(window) = options.window {
        let filter = super::windowed::create(options, window, write)?;
        return Ok((key.set(&super::windowed::WINDOWED_TYPE, filter), false));
    }
    if options.counting {
        let o = options;
        let filter = CountingFilter::new(
            o.capacity,
            o.error,
            o.growth,
            o.scaling,
            write.admission.limit(0),
        )?;
        return Ok((key.set(&COUNTING_TYPE, filter), false));
    }
    if let Some(sparse) = super::sparse::create(options, write)? {
        write.effect(c"BF.LOADCHUNK", vec![b"1".to_vec(), sparse.encode_header()]);
        return Ok((key.set(&super::sparse::SPARSE_TYPE, sparse), true));
    }
    let chain = crate::bloom::Chain::new(
        options.capacity,
        options.error,
        options.growth,
        options.scaling,
        write.admission.limit(0),
    )?;
    Ok((key.set(&super::types::BLOOM_TYPE, chain), false))
}

/// Creates the filter a LOADCHUNK header describes, of the kind whose magic it carries.
pub(super) fn create_from_header(
    key: &mut Key,
    header: &[u8],
    max_bytes: u64,
) -> Result<(), HeaderError> {
    let claimed = |kind: &&Kind| kind.magic.is_some_and(|magic| header.starts_with(magic));
    let kind = KINDS
        .iter()
        .find(claimed)
        .or_else(|| KINDS.iter().find(|kind| kind.magic.is_none()))
        .ok_or(HeaderError::BadData)?;
    (kind.from_header)(key, header, max_bytes)
}

/// One command propagated to replicas and the AOF, after the first `after` items.
struct Effect {
    after: usize,
    command: &'static CStr,
    args: Vec<Vec<u8>>,
}

/// What became of each item of a multi-item write: applied (answered without an error) or
/// not. Items past the last answer were never processed (a batch that stopped early). Nothing
/// is allocated unless an item fails.
pub(super) struct Applied<'a> {
    /// The command's arguments and where its items start; None: no item accounting.
    items: Option<(Args<'a>, usize)>,
    answered: usize,
    /// Items answered with an error, by position.
    failed: Vec<usize>,
}

impl<'a> Applied<'a> {
    /// No item accounting: the command propagates as the write decides (`verbatim`).
    pub fn none() -> Self {
        Applied {
            items: None,
            answered: 0,
            failed: Vec::new(),
        }
    }

    /// The items `args[first..]`.
    pub fn of(args: Args<'a>, first: usize) -> Self {
        Applied {
            items: Some((args, first)),
            ..Self::none()
        }
    }

    /// Records the outcome of the next item.
    pub fn record(&mut self, ok: bool) {
        if !ok {
            self.failed.push(self.answered);
        }
        self.answered += 1;
    }

    /// Items answered so far.
    pub fn answered(&self) -> usize {
        self.answered
    }

    /// Every item was answered, none with an error.
    fn whole(&self) -> bool {
        match self.items {
            None => true,
            Some((args, first)) => {
                self.failed.is_empty() && first.saturating_add(self.answered) >= args.len()
            }
        }
    }

    /// The applied items among the first `to` items, from `from` on.
    fn between(&self, from: usize, to: usize) -> Vec<&'a [u8]> {
        let Some((args, first)) = self.items else {
            return Vec::new();
        };
        // `failed` is in increasing order: one walk beside the items.
        let mut next_failed = self.failed.iter().skip_while(|at| **at < from).peekable();
        (from..to.min(self.answered))
            .filter(|at| next_failed.next_if_eq(&at).is_none())
            .map(|at| args.bytes(first + at))
            .collect()
    }
}

/// What a write command decides besides the value's own change, applied by [`Write::finish`].
pub(super) struct Write {
    /// How large the filter may become: `bf.max-filter-bytes` and, for a client, what
    /// `maxmemory` leaves (deviation D13); neither binds a replayed write.
    pub admission: Admission,
    /// The primary's clock when the command started, in Unix milliseconds.
    pub now_ms: u64,
    /// The command replays the primary's decisions (from the primary, or from the AOF): it
    /// must not read the clock, and sets no expiry of its own (`PEXPIREAT` follows it).
    pub replayed: bool,
    /// Propagate the command as received when every item applied; a kind that replaces it
    /// by effects of its own turns this off.
    pub verbatim: bool,
    /// Set the key to expire at this Unix time in milliseconds (propagated as `PEXPIREAT`).
    pub expire_at_ms: Option<u64>,
    /// A value that takes the key's place (another encoding, possibly another module type);
    /// the kind keeps writing into it for the rest of the command.
    pub replacement: Option<Box<dyn Replacement>>,
    effects: Vec<Effect>,
}

/// A value that can take a key's place: any Bloom kind.
pub(super) trait Replacement {
    fn store(self: Box<Self>, key: &mut Key);
}

impl<T: BloomKind> Replacement for T {
    fn store(self: Box<Self>, key: &mut Key) {
        key.set(T::TYPE, *self);
    }
}

impl Write {
    pub fn new(ctx: Ctx) -> Self {
        Write {
            admission: ctx.admission(),
            now_ms: ctx.now_ms(),
            replayed: ctx.is_replayed(),
            verbatim: true,
            expire_at_ms: None,
            replacement: None,
            effects: Vec::new(),
        }
    }

    /// Queues `command key args...` for replicas and the AOF, before the command's items.
    pub fn effect(&mut self, command: &'static CStr, args: Vec<Vec<u8>>) {
        self.effect_after(0, command, args);
    }

    /// Queues `command key args...` after the first `after` items of the command (a change
    /// of encoding in the middle of a batch).
    pub fn effect_after(&mut self, after: usize, command: &'static CStr, args: Vec<Vec<u8>>) {
        self.effects.push(Effect {
            after,
            command,
            args,
        });
    }

    /// Stores the replacement, and propagates exactly what the command changed: the effects,
    /// then the command as received when every item applied and no effect falls between
    /// them, else `BF.MADD` of the applied items around the effects (a reply that holds an
    /// error is never propagated); then the expiry the key got (last, so that it finds the
    /// key whichever of them created it).
    pub fn finish(mut self, ctx: Ctx, key: &mut Key, key_name: RawString, applied: &Applied) {
        if let Some(replacement) = self.replacement.take() {
            replacement.store(key);
        }
        let verbatim =
            self.verbatim && applied.whole() && self.effects.iter().all(|e| e.after == 0);
        let mut next = 0;
        for effect in &self.effects {
            if !verbatim {
                propagate_items(ctx, key_name, applied.between(next, effect.after));
                next = next.max(effect.after);
            }
            let args: Vec<&[u8]> = effect.args.iter().map(Vec::as_slice).collect();
            ctx.replicate(effect.command, key_name, &args);
        }
        if verbatim {
            ctx.replicate_verbatim();
        } else {
            propagate_items(ctx, key_name, applied.between(next, usize::MAX));
        }
        if let Some(at) = self.expire_at_ms {
            let at = key.set_expire_at(at).to_string();
            ctx.replicate(c"PEXPIREAT", key_name, &[at.as_bytes()]);
        }
    }
}

/// `BF.MADD key items...`: applied items, replayed where the primary applied them.
fn propagate_items(ctx: Ctx, key_name: RawString, items: Vec<&[u8]>) {
    if !items.is_empty() {
        ctx.replicate(c"BF.MADD", key_name, &items);
    }
}

/// AOF rewrite of any Bloom kind: its SCANDUMP header and chunks as `BF.LOADCHUNK` commands
/// (chunks are at most 16 MiB each).
///
/// # Safety
/// Called by Redis with a live AOF handle, the key name and a value of `T`'s type.
pub(super) unsafe extern "C" fn aof_rewrite<T: BloomKind>(
    io: *mut raw::RedisModuleIO,
    key: RawString,
    value: *mut c_void,
) {
    guard((), || {
        if let Some(value) = value_ref::<T>(value) {
            emit_loadchunk(io, c"BF.LOADCHUNK", key, 1, &value.header());
            let mut iter = 1;
            while let Ok(Some((next, bytes))) = value.chunk_at(iter, u64::MAX) {
                emit_loadchunk(io, c"BF.LOADCHUNK", key, next, &bytes);
                iter = next;
            }
        }
    })
}

/// `DEBUG DIGEST-VALUE` of any Bloom kind.
///
/// # Safety
/// Called by Redis with a live digest handle and a value of `T`'s type.
pub(super) unsafe extern "C" fn digest<T: BloomKind>(
    md: *mut raw::RedisModuleDigest,
    value: *mut c_void,
) {
    guard((), || {
        if let Some(value) = value_ref::<T>(value) {
            let mut digest = Digest { md };
            value.digest(&mut digest);
            digest.end_sequence();
        }
    })
}
