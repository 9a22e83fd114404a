//! The windowed kinds: Bloom filters that forget (`src/windowed/`), as the `BF.*` commands
//! see them through [`BloomValue`], and `BF.RETIRE`. One implementation over what a
//! generation is ([`WindowKind`]): RedisBloom links (`bloomrsWN`, `WINDOW`) or compact
//! filters grown by segments (`bloomrsWC`, `COMPACT WINDOW`).
//!
//! Only the primary's clock retires generations. A write on the primary reads its clock, and
//! when that moves the filter into a new slot, it propagates `BF.RETIRE key <ms>` before the
//! command; a replica or an AOF replay (a replayed write) never reads its own clock but writes
//! at the filter's clock, which `BF.RETIRE` set. So every copy holds the same bytes however
//! late it replays. Reads skip logically retired generations at the local clock and change
//! nothing. The key's expiry is the primary's decision too, propagated as `PEXPIREAT`.
//!
//! A compact window places items by a secret drawn on the primary at creation (so a client
//! cannot choose items that crowd one segment): its creation propagates as `BF.LOADCHUNK` of
//! its header, never as the command, so replicas and the AOF hold the same secret and build
//! the same generations from it.

use redis_module::native_types::RedisType;

use super::chain::{digest_chain, link_line, relocate_chain};
use super::{aof_rewrite, digest, lookup, BloomKind, BloomValue, Chunk, Info, Write};
use crate::bloom::{combined_rate, AddError, Chain, ChunkError, CreateError, HeaderError, Link};
use crate::budget::Budget;
use crate::compact::Block;
use crate::module::ffi::io::{Defrag, Digest};
use crate::module::ffi::{clock, Args, Ctx, Key, Slot};
use crate::module::state::errors::*;
use crate::module::state::stats::{self, Measure, Measured, Totals};
use crate::module::types::{callbacks, filter_value};
use crate::syntax::bf::{BloomOptions, WindowSpec};
use crate::syntax::Argv;
use crate::windowed::{
    CompactGeneration, CompactWindowed, Generation, Window, WindowParams, Windowed,
    COMPACT_ENCODING_VERSION, ENCODING_VERSION,
};

pub static WINDOWED_TYPE: RedisType = RedisType::new(
    "bloomrsWN",
    ENCODING_VERSION,
    callbacks::<Windowed>(Some(aof_rewrite::<Windowed>), Some(digest::<Windowed>)),
);

pub static COMPACT_WINDOWED_TYPE: RedisType = RedisType::new(
    "bloomrsWC",
    COMPACT_ENCODING_VERSION,
    callbacks::<CompactWindowed>(
        Some(aof_rewrite::<CompactWindowed>),
        Some(digest::<CompactWindowed>),
    ),
);

/// The placement secret of a compact window created by a replayed command (none propagates
/// one: the primary announces its windows by `BF.LOADCHUNK`, secret included).
const REPLAYED_SECRET: u64 = 0x9e37_79b9_7f4a_7c15;

/// What a window of generation kind `G` is asked to hold, from the creation options.
fn window_params<G: WindowKind>(options: &BloomOptions, window: WindowSpec) -> WindowParams {
    WindowParams {
        window_ms: window.seconds.saturating_mul(1000),
        generations: window.generations,
        capacity: options.capacity,
        error: options.error,
        // A compact filter doubles its segments, whatever EXPANSION says.
        growth: if G::KEYED { 2 } else { options.growth },
        scaling: options.scaling,
        // New values take the kind's own probing; values loaded keep theirs.
        spread: G::SPREADS,
    }
}

/// The `Size` the window the options ask for reports in a steady feed of its capacity
/// (`BF.ESTIMATE`); `None` without a window.
pub fn estimated_size(options: &BloomOptions) -> Result<Option<u64>, CreateError> {
    fn size<G: WindowKind>(o: &BloomOptions, w: WindowSpec) -> Result<Option<u64>, CreateError> {
        Window::<G>::size_for(window_params::<G>(o, w)).map(Some)
    }
    match options.window {
        None => Ok(None),
        Some(w) if CompactGeneration::takes(options) => size::<CompactGeneration>(options, w),
        Some(w) => size::<Chain>(options, w),
    }
}

/// What the module needs of a generation kind besides the core's [`Generation`].
pub trait WindowKind: Generation + 'static {
    const TYPE: &'static RedisType;
    /// Whether the creation options (which have a window) ask for this kind.
    fn takes(options: &BloomOptions) -> bool;
    /// The expansion `BF.INFO` reports.
    fn expansion(params: &WindowParams) -> Option<u32>;
    /// Its lines of `BF.DEBUG`.
    fn debug_lines(&self, params: &WindowParams) -> Vec<String>;
    /// The false-positive rate estimated from its fill.
    fn estimated_rate(&self, params: &WindowParams) -> f64;
    /// Everything it holds, for `DEBUG DIGEST-VALUE`.
    fn digest(&self, params: &WindowParams, digest: &mut Digest);
    /// Moves its heap blocks (active defragmentation).
    fn relocate(&mut self, defrag: &Defrag);
}

impl WindowKind for Chain {
    const TYPE: &'static RedisType = &WINDOWED_TYPE;
    fn takes(options: &BloomOptions) -> bool {
        !options.compact
    }
    fn expansion(params: &WindowParams) -> Option<u32> {
        params.scaling.then_some(params.growth)
    }
    fn debug_lines(&self, _params: &WindowParams) -> Vec<String> {
        self.links
            .iter()
            .map(|link| link_line(link, true))
            .collect()
    }
    fn estimated_rate(&self, _params: &WindowParams) -> f64 {
        Link::chain_rate(&self.links)
    }
    fn digest(&self, _params: &WindowParams, digest: &mut Digest) {
        digest_chain(self, digest);
    }
    fn relocate(&mut self, defrag: &Defrag) {
        relocate_chain(self, defrag);
    }
}

impl WindowKind for CompactGeneration {
    const TYPE: &'static RedisType = &COMPACT_WINDOWED_TYPE;
    fn takes(options: &BloomOptions) -> bool {
        options.compact
    }
    fn expansion(_params: &WindowParams) -> Option<u32> {
        Some(2)
    }
    fn debug_lines(&self, params: &WindowParams) -> Vec<String> {
        let mut lines = self.filter(params).debug_lines();
        // The bytes as the generation holds them (the filter's line ends with its own count).
        if let Some(first) = lines.first_mut() {
            if let Some(at) = first.find(" bytes:") {
                first.truncate(at);
                first.push_str(&format!(" bytes:{}", Generation::bytes(self)));
            }
        }
        lines
    }
    fn estimated_rate(&self, params: &WindowParams) -> f64 {
        self.filter(params).estimated_rate()
    }
    fn digest(&self, params: &WindowParams, digest: &mut Digest) {
        let filter = self.filter(params);
        digest.add_bytes(&filter.encode_header());
        for (_, bytes) in filter.each_chunk() {
            digest.add_bytes(&bytes);
        }
    }
    fn relocate(&mut self, defrag: &Defrag) {
        self.for_each_block(|block| match block {
            Block::Words(words) => defrag.bytes(words),
            Block::Bytes(bytes) => defrag.vec(bytes),
        });
    }
}

/// The time a write applies at: the primary's clock, or for a replayed write the filter's own
/// clock (time 0 never moves it).
fn write_time(write: &Write) -> u64 {
    if write.replayed() {
        0
    } else {
        write.now_ms()
    }
}

/// Moves the filter's clock to the write's time; on the primary, a move is propagated as
/// `BF.RETIRE` ahead of the command, and the key's expiry is armed to the end of the window.
fn start_write<G: Generation>(filter: &mut Window<G>, write: &mut Write) {
    let now = write_time(write);
    let before = filter.slot;
    filter.retire(now);
    if write.replayed() {
        return;
    }
    if filter.slot != before {
        write.effect(c"BF.RETIRE", vec![now.to_string().into_bytes()]);
    }
    write.expire_at_ms = Some(filter.expiry_after(now));
}

impl<G: WindowKind> BloomValue for Window<G> {
    fn add_each(
        &mut self,
        items: &mut dyn Iterator<Item = &[u8]>,
        write: &mut Write,
        answer: &mut dyn FnMut(Result<bool, AddError>) -> bool,
    ) {
        start_write(self, write);
        let now = write_time(write);
        for item in items {
            if !answer(self.add(now, item, write.admission)) {
                return;
            }
        }
    }

    fn contains_each(&self, items: &mut dyn Iterator<Item = &[u8]>, answer: &mut dyn FnMut(bool)) {
        let now = clock::now_ms();
        for item in items {
            answer(self.contains(now, item));
        }
    }

    fn card(&self) -> u64 {
        Window::card(self, clock::now_ms())
    }

    fn estimated_rate(&self) -> f64 {
        combined_rate(
            self.live(clock::now_ms())
                .map(|generation| WindowKind::estimated_rate(&generation.filter, &self.params)),
        )
    }

    fn info(&self) -> Info {
        let now = clock::now_ms();
        let p = &self.params;
        Info {
            capacity: self.capacity(now),
            size: self.reported_bytes(),
            filters: self.links(now),
            items: Window::card(self, now),
            expansion: G::expansion(p),
            extra: vec![
                (c"Window", (p.window_ms / 1000) as i64),
                (c"Generations", i64::from(p.generations)),
            ],
        }
    }

    fn debug_lines(&self) -> Vec<String> {
        self.live(clock::now_ms())
            .flat_map(|g| WindowKind::debug_lines(&g.filter, &self.params))
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
        Ok(Window::chunk_within(self, iter, limit))
    }

    fn load_chunk(&mut self, iter: i64, data: &[u8], max_bytes: u64) -> Result<(), ChunkError> {
        Window::load_chunk(self, iter, data, max_bytes)
    }

    fn digest(&self, digest: &mut Digest) {
        let p = &self.params;
        for number in [
            p.window_ms,
            u64::from(p.generations),
            p.capacity,
            p.error.to_bits(),
            u64::from(p.growth),
            u64::from(p.scaling),
            self.slot,
        ] {
            digest.add_int(number);
        }
        if G::KEYED {
            digest.add_int(self.secret);
        }
        for generation in &self.ring {
            digest.add_int(generation.slot);
            WindowKind::digest(&generation.filter, &self.params, digest);
        }
    }
}

impl<G: WindowKind> BloomKind for Window<G>
where
    Window<G>: crate::module::types::FilterValue,
{
    const TYPE: &'static RedisType = G::TYPE;
    const MAGIC: Option<&'static [u8]> = Some(G::MAGIC);
    /// A keyed window announces itself (its secret) by `BF.LOADCHUNK` of its header.
    const ANNOUNCES: bool = G::KEYED;

    /// Takes the options with a window that ask for this generation kind. Its clock is set
    /// by its first add, and on the primary the key is armed to expire a window from now.
    fn create(options: &BloomOptions, write: &mut Write) -> Result<Option<Self>, CreateError> {
        let Some(window) = options.window.filter(|_| G::takes(options)) else {
            return Ok(None);
        };
        let params = window_params::<G>(options, window);
        let secret = match (G::KEYED, write.replayed()) {
            (false, _) => 0,
            (true, true) => REPLAYED_SECRET,
            (true, false) => write.random_nonzero(),
        };
        let filter = Window::<G>::new(params, secret, write.admission.limit(0))?;
        if G::KEYED {
            write.effect(c"BF.LOADCHUNK", vec![b"1".to_vec(), filter.encode_header()]);
        }
        if !write.replayed() {
            write.expire_at_ms = Some(filter.expiry_after(write.now_ms()));
        }
        Ok(Some(filter))
    }

    fn from_header(header: &[u8], max_bytes: u64) -> Result<Self, HeaderError> {
        Window::from_header(header, max_bytes)
    }
}

filter_value!(Windowed, "a windowed Bloom filter", |value, defrag| {
    for generation in &mut value.ring {
        WindowKind::relocate(&mut generation.filter, defrag);
    }
});

filter_value!(
    CompactWindowed,
    "a compact windowed Bloom filter",
    |value, defrag| {
        for generation in &mut value.ring {
            WindowKind::relocate(&mut generation.filter, defrag);
        }
    }
);

impl<G: WindowKind> Measured for Window<G> {
    /// Counts every held generation, retired or not, so the totals never depend on the clock.
    fn measure(&self) -> Measure {
        let items = self.ring.iter().map(|g| g.filter.items()).sum::<u64>();
        let filters = self.ring.iter().map(|g| g.filter.filters()).sum::<u64>();
        Measure {
            values: 1,
            bytes: stats::saturating(self.reported_bytes()),
            items: stats::saturating(items),
            filters: stats::saturating(filters),
        }
    }
    fn totals() -> &'static Totals {
        &stats::WINDOWED
    }
}

/// Retires what has left a window of generation kind `G`, if the key holds one.
fn retire_in<G: WindowKind>(key: &mut Key, now: u64) -> Option<usize> {
    match key.slot::<Window<G>>(G::TYPE) {
        Slot::Ours(filter) => Some(filter.retire(now)),
        _ => None,
    }
}

/// BF.RETIRE key unix-time-ms: advances a windowed filter's clock and drops the generations
/// that have left its window by then; replies how many were dropped. The primary propagates
/// it ahead of a write that moved the clock; a client may send it too.
pub fn retire(ctx: Ctx, args: Args) -> CommandResult {
    args.exactly(3)?;
    let now = args
        .int(2)
        .and_then(|ms| u64::try_from(ms).ok())
        .ok_or(RETIRE_BAD_TIME)?;
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, true);
    let retired =
        retire_in::<Chain>(&mut key, now).or_else(|| retire_in::<CompactGeneration>(&mut key, now));
    let Some(retired) = retired else {
        return match lookup(&mut key) {
            Slot::Ours(_) => Err(NOT_WINDOWED.into()),
            Slot::WrongType => Err(WRONG_TYPE.into()),
            Slot::Empty => Err(NOT_FOUND.into()),
        };
    };
    ctx.reply_int(retired as i64);
    ctx.replicate_verbatim();
    if retired > 0 {
        ctx.notify(c"bf.retire", key_name);
    }
    Ok(())
}
