//! The Bloom family: every kind of Bloom filter (the plain RedisBloom chain, counting,
//! windowed, sparse, compact and blocked filters, and static sets) answers the same `BF.*` commands. A command finds whatever
//! kind a key holds with [`lookup`] and asks it through [`BloomValue`]; it never branches on
//! the kind. Each kind owns only what differs: its core (beside `src/bloom/`, sharing the
//! hashing, link sizing and chain walk), its module type, its creation, its encodings and its
//! own commands (`BF.PROMOTE` in `sparse.rs`, `BF.RETIRE` in `windowed.rs`).
//!
//! This file is the only one that knows the list of kinds ([`KINDS`]); it names their core
//! types, never their files, which import it (and `write`, `chain`) and never one another.
//! May import `types`, `ffi`, `state` and the pure core.
//!
//! # Adding a kind
//! 1. Its core, plain Rust beside `src/bloom/` (e.g. `src/counting/`).
//! 2. One file here (as `plain.rs` is for `MBbloom--`): its module type, a 9-character name
//!    built with `types::callbacks::<T>(Some(aof_rewrite::<T>), Some(digest::<T>))`; then
//!    `FilterValue` (RDB, defrag), `Measured` (INFO bf totals), [`BloomValue`] and
//!    [`BloomKind`] (its creation from options and from a LOADCHUNK header) for the core's
//!    type.
//! 3. One line in [`KINDS`]: the module registers the type from there, [`lookup`] finds it,
//!    [`create`] offers it the options, and `BF.LOADCHUNK` recognises its SCANDUMP header by
//!    [`BloomKind::MAGIC`].
//!
//! Writes go through a [`Write`] (`write.rs`): the memory limits (`write.admission`, see
//! `state::admission`: its `limit(0)` as the core's `max_bytes` to create, itself wherever the
//! core takes a `Budget` to grow), the primary's clock (`now_ms`, for kinds that depend on
//! time; a replica gets the primary's decisions as effects, never its own clock), replication
//! effects queued in order, the key's expiry, and a replacement value (a kind that changes
//! encoding, possibly to another module type, puts the new value there and keeps writing into
//! it). The command applies all of it once with [`Write::finish`].

mod blocked;
pub mod chain;
mod compact;
mod counting;
mod plain;
pub mod sparse;
pub mod static_set;
pub mod valkey_bloom;
pub mod windowed;
pub mod write;

use std::borrow::Cow;
use std::ffi::{c_void, CStr};

use redis_module::native_types::RedisType;
use redis_module::raw;

use crate::bloom::{AddError, Chain, ChunkError, CreateError, HeaderError, Link};
use crate::budget::Budget;
use crate::counting::{Counter4, DeleteError};
use crate::module::ffi::io::{emit_loadchunk, value_ref, Digest, AOF_PIECE};
use crate::module::ffi::{guard, Admission, Key, Member, RawString, Slot};
use crate::module::state::stats::Measured;
use crate::module::types::FilterValue;
use crate::syntax::bf::BloomOptions;
pub use write::{Applied, Replacement, Write};

/// A SCANDUMP chunk: the iterator after it and its bytes, borrowed from the value or built
/// for the reply.
pub type Chunk<'a> = (i64, Cow<'a, [u8]>);

/// What `BF.INFO` reports: RedisBloom's five fields, then the kind's own.
pub struct Info {
    pub capacity: u64,
    pub size: u64,
    pub filters: u64,
    pub items: u64,
    /// `None` for a non-scaling filter.
    pub expansion: Option<u32>,
    /// Fields only this kind has, after RedisBloom's (none for a plain filter).
    pub extra: Vec<(&'static CStr, i64)>,
}

/// A field of `BF.INFO` in another module's words.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum InfoValue {
    Int(i64),
    Double(f64),
    Null,
    /// The field could not be computed; asking for it (or for every field) is refused.
    Refused(&'static CStr),
}

/// `BF.INFO` as a kind answers it in another module's words (valkey-bloom's): its fields in
/// order, each with the keyword that asks for it alone and its value. The whole reply is a
/// flat array in RESP2 and RESP3 alike; one field is answered bare.
pub struct ForeignInfo {
    pub fields: Vec<(&'static CStr, &'static str, InfoValue)>,
    /// The reply to a keyword no field has.
    pub unknown_field: &'static CStr,
}

/// `BloomValue::add_each` for a kind that adds one item at a time: each outcome is answered
/// as it comes, until `answer` says stop.
pub fn add_one_by_one(
    items: &mut dyn Iterator<Item = &[u8]>,
    answer: &mut dyn FnMut(Result<bool, AddError>) -> bool,
    mut add: impl FnMut(&[u8]) -> Result<bool, AddError>,
) {
    for item in items {
        if !answer(add(item)) {
            return;
        }
    }
}

/// The `Size` a new filter of `options` holding `options.capacity` items would report
/// (`BF.ESTIMATE`), worked out from the same sizing its creation uses: a window's in a
/// steady feed of its capacity, each generation holding its share.
pub fn estimated_size(options: &BloomOptions) -> Result<u64, CreateError> {
    let o = options;
    if let Some(size) = windowed::estimated_size(o)? {
        return Ok(size);
    }
    let size = if o.compact {
        crate::compact::size_for(o.capacity, o.error, o.counting)?
    } else if o.static_set {
        crate::fuse::StaticFilter::size_for(o.capacity, o.error)?
    } else if o.blocked {
        crate::blocked::Blocked::size_for(o.capacity, o.error, o.scaling)?
    } else if o.counting {
        Chain::<Link<Counter4>>::size_for(o.capacity, o.error, o.scaling)?
    } else {
        Chain::<Link>::size_for(o.capacity, o.error, o.scaling)?
    };
    Ok(size)
}

/// A Bloom-family value: the operations the `BF.*` commands need.
pub trait BloomValue {
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

    /// Adds one item (BF.ADD): what `add_each` answers for it. A kind overrides it where
    /// one item can skip a batch's lookahead.
    fn add_one(&mut self, item: &[u8], write: &mut Write) -> Result<bool, AddError> {
        let mut outcome = Err(AddError::CannotGrow);
        self.add_each(&mut std::iter::once(item), write, &mut |answer| {
            outcome = answer;
            true
        });
        outcome
    }

    /// Whether one item may be present (BF.EXISTS): what `contains_each` answers for it. A
    /// kind overrides it where one item can skip a batch's lookahead.
    fn contains_one(&self, item: &[u8]) -> bool {
        let mut found = false;
        self.contains_each(&mut std::iter::once(item), &mut |answer| found = answer);
        found
    }

    /// Items held (`BF.CARD`).
    fn card(&self) -> u64;

    /// The false-positive rate estimated from what the value holds now (`BF.INFO key RATE`):
    /// past its capacity a non-scaling filter shows it climbing.
    fn estimated_rate(&self) -> f64;

    fn info(&self) -> Info;

    /// Whether adds and lookups answer integers in RESP3 too (valkey-bloom's), rather than
    /// RedisBloom's booleans.
    fn answers_integers(&self) -> bool {
        false
    }

    /// `BF.INFO` in another module's words, for a kind that keeps that module's values (None:
    /// RedisBloom's reply, from [`BloomValue::info`]).
    fn foreign_info(&self) -> Option<ForeignInfo> {
        None
    }

    /// The lines of `BF.DEBUG` after the first (`size:<items>`).
    fn debug_lines(&self) -> Vec<String>;

    /// The SCANDUMP header (iterator 0); its own kinds start with their [`BloomKind::MAGIC`].
    fn header(&self) -> Vec<u8>;

    /// The chunk at iterator `iter >= 1` with the iterator that follows it, or None past the
    /// end: at most `limit` bytes where the kind's chunks can be cut that small and load
    /// alike (SCANDUMP asks [`crate::bloom::MAX_CHUNK`], its own size; the AOF rewrite [`AOF_PIECE`]).
    /// Borrowed from the value, or built for the reply (a sparse filter's dense form).
    /// `TooLarge` when a chunk the kind builds would not fit `max_bytes`.
    fn chunk_at(
        &self,
        iter: i64,
        max_bytes: u64,
        limit: u64,
    ) -> Result<Option<Chunk<'_>>, CreateError>;

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
pub trait Deletes {
    /// Deletes the items in order; `answer` receives each outcome (true: deleted).
    fn delete_each(
        &mut self,
        items: &mut dyn Iterator<Item = &[u8]>,
        write: &mut Write,
        answer: &mut dyn FnMut(Result<bool, DeleteError>),
    );
}

/// A kind's type-level side: its module type and how a SCANDUMP header becomes one.
pub trait BloomKind: BloomValue + FilterValue + Measured + Sized + 'static {
    const TYPE: &'static RedisType;
    /// The first bytes of this kind's SCANDUMP header; `None` for RedisBloom's own header,
    /// which has no magic (it is the one a header matching no magic is read as).
    const MAGIC: Option<&'static [u8]>;
    /// Whether [`BloomKind::create`] queues the effect that makes a replica build the same
    /// value (sparse: `BF.LOADCHUNK` of its header), so the command propagates no creation of
    /// its own.
    const ANNOUNCES: bool = false;

    /// A new empty value for `options`, or None when these options are not for this kind
    /// (the registry then offers them to the next one).
    fn create(options: &BloomOptions, write: &mut Write) -> Result<Option<Self>, CreateError>;

    /// An empty value shaped as a LOADCHUNK header describes.
    fn from_header(header: &[u8], max_bytes: u64) -> Result<Self, HeaderError>;
}

/// A registered kind.
pub struct Kind {
    member: Member<dyn BloomValue>,
    magic: Option<&'static [u8]>,
    /// Creates and stores a value of this kind if the options are for it; `Some(announced)`
    /// when it did.
    create: fn(&mut Key, &BloomOptions, &mut Write) -> Result<Option<bool>, CreateError>,
    from_header: fn(&mut Key, &[u8], &Admission) -> Result<(), HeaderError>,
}

const fn kind<T: BloomKind>() -> Kind {
    Kind {
        member: Member::new::<T>(T::TYPE, view::<T>),
        magic: T::MAGIC,
        create: store_created::<T>,
        from_header: store_header::<T>,
    }
}

fn view<T: BloomKind>(value: *mut c_void) -> *mut dyn BloomValue {
    value.cast::<T>() as *mut dyn BloomValue
}

/// A client's header must also describe a value commands could build (`admitted`, as RESTORE
/// asks); a primary's or the AOF's never is refused on that ground.
fn store_header<T: BloomKind>(
    key: &mut Key,
    header: &[u8],
    admission: &Admission,
) -> Result<(), HeaderError> {
    let value = T::from_header(header, admission.limit(0))?;
    if admission.binds() && !value.admitted() {
        return Err(HeaderError::BadData);
    }
    store(key, value);
    Ok(())
}

fn store_created<T: BloomKind>(
    key: &mut Key,
    options: &BloomOptions,
    write: &mut Write,
) -> Result<Option<bool>, CreateError> {
    let Some(value) = T::create(options, write)? else {
        return Ok(None);
    };
    store(key, value);
    Ok(Some(T::ANNOUNCES))
}

/// Stores `value` in the writable key as its kind's module type, replacing what it held.
pub fn store<T: BloomKind>(key: &mut Key, value: T) -> &mut T {
    key.set(T::TYPE, value)
}

impl<T: BloomKind> Replacement for T {
    fn store(self: Box<Self>, key: &mut Key) {
        store(key, *self);
    }
}

/// Every Bloom kind. Kinds with a header magic come before the plain kind, which takes any
/// header the others do not claim, and any options the others do not take.
pub static KINDS: [Kind; 9] = [
    kind::<crate::valkey_bloom::ValkeyBloom>(),
    kind::<crate::fuse::StaticFilter>(),
    kind::<crate::blocked::Blocked>(),
    kind::<crate::windowed::CompactWindowed>(),
    kind::<crate::compact::CompactFilter>(),
    kind::<crate::sparse::Sparse>(),
    kind::<crate::windowed::Windowed>(),
    kind::<crate::counting::CountingFilter>(),
    kind::<crate::bloom::Chain>(),
];

/// Registers every kind's module type (during module load).
pub fn register_types(ctx: *mut raw::RedisModuleCtx) -> Result<(), String> {
    for kind in &KINDS {
        kind.member
            .ty
            .create_data_type(ctx)
            .map_err(|e| format!("cannot create a Bloom data type: {e}"))?;
    }
    Ok(())
}

/// The Bloom filter a key holds, whatever its kind.
pub fn lookup(key: &mut Key) -> Slot<'_, dyn BloomValue> {
    key.slot_in(KINDS.iter().map(|kind| &kind.member))
}

/// Creates the filter `options` describe in an empty, writable key: of the first kind that
/// takes them (blocked with BLOCKED, compact windowed with COMPACT and a window, compact with
/// COMPACT, windowed with a window, counting with COUNTING, sparse
/// when a client of the primary asks and `bf-sparse-max-bytes` is set, else the plain
/// chain). Returns it and
/// whether the kind queued its own creation effect (`false`: the caller propagates it as
/// RedisBloom's command).
pub fn create<'k>(
    key: &'k mut Key,
    options: &BloomOptions,
    write: &mut Write,
) -> Result<(&'k mut (dyn BloomValue + 'static), bool), CreateError> {
    let announced = KINDS
        .iter()
        .find_map(|kind| (kind.create)(key, options, write).transpose())
        .ok_or(CreateError::Invalid)??;
    // The kind stored a typed value; the commands see it as the family's trait object.
    match lookup(key) {
        Slot::Ours(filter) => Ok((filter, announced)),
        _ => Err(CreateError::Invalid),
    }
}

/// Creates the filter a LOADCHUNK header describes, of the kind whose magic it carries.
pub fn create_from_header(
    key: &mut Key,
    header: &[u8],
    admission: &Admission,
) -> Result<(), HeaderError> {
    let claimed = |kind: &&Kind| kind.magic.is_some_and(|magic| header.starts_with(magic));
    let kind = KINDS
        .iter()
        .find(claimed)
        .or_else(|| KINDS.iter().find(|kind| kind.magic.is_none()))
        .ok_or(HeaderError::BadData)?;
    (kind.from_header)(key, header, admission)
}

/// AOF rewrite of any Bloom kind: its SCANDUMP header and chunks as `BF.LOADCHUNK` commands,
/// each at most [`AOF_PIECE`] bytes where the kind's chunks can be cut that small.
///
/// # Safety
/// Called by Redis with a live AOF handle, the key name and a value of `T`'s type.
pub unsafe extern "C" fn aof_rewrite<T: BloomKind>(
    io: *mut raw::RedisModuleIO,
    key: RawString,
    value: *mut c_void,
) {
    guard((), || {
        if let Some(value) = value_ref::<T>(value) {
            emit_loadchunk(io, c"BF.LOADCHUNK", key, 1, &value.header());
            let mut iter = 1;
            while let Ok(Some((next, bytes))) = value.chunk_at(iter, u64::MAX, AOF_PIECE) {
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
pub unsafe extern "C" fn digest<T: BloomKind>(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    guard((), || {
        if let Some(value) = value_ref::<T>(value) {
            let mut digest = Digest { md };
            value.digest(&mut digest);
            digest.end_sequence();
        }
    })
}
