//! Scalable Bloom filters as RedisBloom builds them: a chain of links, each larger and
//! tighter than the one before, with the same hashing, sizing and growth rules, so a filter
//! built here holds the same bits as RedisBloom's.

mod cells;
mod dump;
mod growth;
pub(crate) mod link;
mod probe;
mod rdb;

pub use cells::{Bits, Cells};
pub use dump::{
    chunk_in, chunk_start, chunks_from, encode_header, load_chunk_in, Chunk, ChunkError,
    HeaderError, MAX_CHUNK,
};
pub use growth::{reported_size, Chain, ChainLink, SetLink};
pub(crate) use link::prefetch;
pub use link::{
    combined_rate, fill_rate, Link, LinkError, LinkShape, OPT_ALL, OPT_ENTS_IS_BITS, OPT_FORCE64,
    OPT_NOROUND, OPT_NO_SCALING, OPT_SPREAD,
};
pub use rdb::ENCODING_VERSION;

use crate::budget::Budget;
use crate::hash::{murmur2, murmur64a};

/// More links than any chain can grow: the error rate halves with each link and reaches zero
/// near link 1,075, so a dump with more is refused instead of making every lookup walk them.
pub const MAX_LINKS: u64 = 1100;
/// Each new link's error rate is the previous one's times this.
pub const ERROR_TIGHTENING: f64 = 0.5;
/// The most items a filter counts (what `BF.CARD` answers at most): a value saying more is
/// refused, and an add past it is refused and changes nothing, so no add takes a value where
/// its loader would not.
pub const MAX_ITEMS: u64 = i64::MAX as u64;
/// Probes prefetched ahead in a chain of one link: every probe of a 0.01 filter and more.
const PREFETCH_ALONE: usize = 16;

/// The two 64-bit hashes an item's probe positions are derived from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ItemHash {
    pub a: u64,
    pub b: u64,
}

impl ItemHash {
    /// An item's hashes: MurmurHash64A for 64-bit chains, the legacy 32-bit MurmurHash2
    /// otherwise.
    #[inline]
    pub fn of(item: &[u8], force64: bool) -> Self {
        if force64 {
            Self::from_first(item, Self::first(item))
        } else {
            let a = murmur2(item, 0x9747_b28c);
            ItemHash {
                a: u64::from(a),
                b: u64::from(murmur2(item, a)),
            }
        }
    }
}

impl ItemHash {
    /// The first half of a 64-bit item hash alone: what a blocked filter picks the item's
    /// block by, so the block's load can start before the second half is computed.
    #[inline]
    pub fn first(item: &[u8]) -> u64 {
        murmur64a(item, 0xc6a4_a793_5bd1_e995)
    }

    /// The whole 64-bit item hash from its first half (`ItemHash::of(item, true)`).
    #[inline]
    pub fn from_first(item: &[u8], a: u64) -> Self {
        ItemHash {
            a,
            b: murmur64a(item, a),
        }
    }
}

/// The hashes of the next few items of a batch, whose probes are being prefetched.
#[derive(Default)]
pub(crate) struct Lookahead {
    hashes: [ItemHash; Lookahead::DEPTH],
    start: usize,
    len: usize,
}

impl Lookahead {
    /// Items in flight: enough to overlap several cache misses, few enough to stay in L1.
    const DEPTH: usize = 8;

    /// Queues a hash; once the queue is full, returns the oldest one to process now.
    pub(crate) fn push(&mut self, hash: ItemHash) -> Option<ItemHash> {
        let slot = (self.start + self.len) % Self::DEPTH;
        if self.len == Self::DEPTH {
            let oldest = std::mem::replace(&mut self.hashes[self.start], hash);
            self.start = (self.start + 1) % Self::DEPTH;
            return Some(oldest);
        }
        self.hashes[slot] = hash;
        self.len += 1;
        None
    }

    /// The oldest queued hash.
    pub(crate) fn pop(&mut self) -> Option<ItemHash> {
        if self.len == 0 {
            return None;
        }
        let oldest = self.hashes[self.start];
        self.start = (self.start + 1) % Self::DEPTH;
        self.len -= 1;
        Some(oldest)
    }
}

/// Why a chain could not be created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateError {
    Invalid,
    TooLarge,
}

/// Why an item could not be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddError {
    /// A non-scaling filter holds its capacity.
    Full,
    /// A new link was needed and could not be built (too large, or parameters ran out).
    CannotGrow,
    /// A frozen static set takes no items (`BF.FREEZE`).
    Frozen,
    /// A static set takes no items while `BF.FREEZE` builds its filter.
    Freezing,
    /// A valkey-bloom object could not take the item (answered in its words).
    ValkeyBloom(crate::valkey_bloom::GrowError),
    /// The filter's `BF.LOADCHUNK` chunks are still arriving: it takes no items until the
    /// last one has.
    Loading,
}

impl From<LinkError> for CreateError {
    fn from(e: LinkError) -> Self {
        match e {
            LinkError::Invalid => CreateError::Invalid,
            LinkError::TooLarge => CreateError::TooLarge,
        }
    }
}

impl<C: Cells> Chain<Link<C>> {
    /// A new empty chain of `C` cells: `BF.RESERVE` and auto-creation.
    pub fn reserve(
        capacity: u64,
        error: f64,
        growth: u32,
        scaling: bool,
        max_bytes: u64,
    ) -> Result<Self, CreateError> {
        // A command never asks for expansion 0 (a chain that cannot grow), nor may any kind.
        if growth < 1 {
            return Err(CreateError::Invalid);
        }
        let (options, shape) = Self::first_link(capacity, error, scaling, max_bytes)?;
        let link = Link::allocate(&shape, options)?;
        Ok(Self::from_links(0, options, growth, vec![link]))
    }

    /// The options and first link of a new chain, checked against `max_bytes` before anything
    /// is allocated. A scaling chain's first link gets half the requested error rate; a
    /// non-scaling one gets all of it.
    pub fn first_link(
        capacity: u64,
        error: f64,
        scaling: bool,
        max_bytes: u64,
    ) -> Result<(u32, LinkShape), CreateError> {
        let mut options = OPT_NOROUND | OPT_FORCE64;
        let mut link_error = error * ERROR_TIGHTENING;
        if !scaling {
            options |= OPT_NO_SCALING;
            link_error = error;
        }
        let shape = LinkShape::new(capacity, link_error, options)?.with_cells::<C>()?;
        if reported_size::<Link<C>>(1, shape.bytes).is_none_or(|size| size > max_bytes) {
            return Err(CreateError::TooLarge);
        }
        Ok((options, shape))
    }

    /// The `Size` a new chain for `capacity` items at `error` reports (`BF.ESTIMATE`): its
    /// first link, which takes `capacity` items before the chain grows.
    pub fn size_for(capacity: u64, error: f64, scaling: bool) -> Result<u64, CreateError> {
        let (_, shape) = Self::first_link(capacity, error, scaling, u64::MAX)?;
        reported_size::<Link<C>>(1, shape.bytes).ok_or(CreateError::TooLarge)
    }

    /// The same empty chain with its links probing by spread hashing (`OPT_SPREAD`, our own
    /// kinds only): for a chain just reserved, before any item.
    pub fn with_spread_probes(self) -> Self {
        let options = self.options | OPT_SPREAD;
        let links = self
            .links
            .into_iter()
            .map(|link| Link::from_parts(&link.shape(), options, link.size, link.array))
            .collect();
        Self::from_links(self.size, options, self.growth, links)
    }

    /// Whether the chain hashes with MurmurHash64A (all filters created since RedisBloom 2.0).
    pub fn is_64bit(&self) -> bool {
        self.options & OPT_FORCE64 != 0
    }

    #[inline]
    pub fn hash(&self, item: &[u8]) -> ItemHash {
        ItemHash::of(item, self.is_64bit())
    }

    #[inline]
    pub fn contains(&self, item: &[u8]) -> bool {
        self.contains_hash(self.hash(item))
    }

    #[inline]
    pub fn contains_hash(&self, hash: ItemHash) -> bool {
        self.links.iter().rev().any(|link| link.contains(hash))
    }

    /// Starts loading what `contains_hash(hash)` will read from large links, so a batch of
    /// lookups overlaps its cache misses: every probe of a lone link (an item that is there
    /// needs them all), the first probe of each link of a grown chain (an absent item, most
    /// lookups, fails at the first or second probe of most links).
    #[inline]
    pub fn prefetch(&self, hash: ItemHash) {
        let probes = if self.links.len() == 1 {
            PREFETCH_ALONE
        } else {
            1
        };
        for link in self.links.iter().rev() {
            link.prefetch(hash, probes);
        }
    }

    /// `contains` with the item's probes requested first, as a batch does, so that a large
    /// link's misses overlap (BF.EXISTS).
    #[inline]
    pub fn contains_one(&self, item: &[u8]) -> bool {
        let hash = self.hash(item);
        self.prefetch(hash);
        self.contains_hash(hash)
    }

    /// Answers `contains` for every item, prefetching a few items ahead.
    pub fn contains_each<'a>(
        &self,
        items: impl Iterator<Item = &'a [u8]>,
        mut answer: impl FnMut(bool),
    ) {
        let mut ahead = Lookahead::default();
        for item in items {
            let hash = self.hash(item);
            self.prefetch(hash);
            if let Some(oldest) = ahead.push(hash) {
                answer(self.contains_hash(oldest));
            }
        }
        while let Some(hash) = ahead.pop() {
            answer(self.contains_hash(hash));
        }
    }

    /// Runs `op` on the hashes of every item in order, prefetching a few items ahead so the
    /// cache misses of a large filter overlap; stops when `op` returns false.
    pub fn each_ahead<'a>(
        &mut self,
        items: impl Iterator<Item = &'a [u8]>,
        mut op: impl FnMut(&mut Self, ItemHash) -> bool,
    ) {
        let mut ahead = Lookahead::default();
        for item in items {
            let hash = self.hash(item);
            self.prefetch(hash);
            if let Some(oldest) = ahead.push(hash) {
                if !op(self, oldest) {
                    return;
                }
            }
        }
        while let Some(hash) = ahead.pop() {
            if !op(self, hash) {
                return;
            }
        }
    }

    /// Whether every link's bits hold its capacity at its error rate, as in every chain
    /// RedisBloom builds ([`link::holds_its_capacity`]): what a client's LOADCHUNK header or
    /// RESTORE must describe (deviation D24).
    pub fn links_hold_their_capacities(&self) -> bool {
        self.links
            .iter()
            .all(|link| link::holds_its_capacity(&link.shape()))
    }

    /// Sum of link capacities (BF.INFO Capacity).
    pub fn capacity(&self) -> u64 {
        self.links
            .iter()
            .fold(0u64, |sum, link| sum.wrapping_add(link.entries))
    }

    /// RedisBloom's chain integrity check: known options only, and link sizes adding up.
    pub fn validate(&self, max_bytes: u64) -> Result<(), &'static str> {
        self.validate_with(max_bytes, link::OPT_ALL)
    }

    /// The integrity check of a chain whose kind knows these option bits.
    pub fn validate_with(&self, max_bytes: u64, known_options: u32) -> Result<(), &'static str> {
        if self.links.is_empty() {
            return Err("no links");
        }
        if self.options & !known_options != 0 {
            return Err("unknown option bits");
        }
        let total = self
            .links
            .iter()
            .try_fold(0u64, |sum, link| sum.checked_add(link.size));
        if total != Some(self.size) {
            return Err("link sizes do not add up");
        }
        if self.size > MAX_ITEMS {
            return Err("more items than BF.CARD answers");
        }
        if self.reported_bytes() > max_bytes {
            return Err("too large");
        }
        Ok(())
    }
}

/// RedisBloom's filters: links of bits, where an item some link already holds is not added
/// again.
impl Chain {
    /// A new empty chain of bits (see [`Chain::reserve`]).
    pub fn new(
        capacity: u64,
        error: f64,
        growth: u32,
        scaling: bool,
        max_bytes: u64,
    ) -> Result<Self, CreateError> {
        Self::reserve(capacity, error, growth, scaling, max_bytes)
    }

    /// Adds an item: `Ok(true)` if it was new, `Ok(false)` if some link already held it.
    pub fn add(&mut self, item: &[u8], budget: impl Budget) -> Result<bool, AddError> {
        self.add_hash(self.hash(item), budget)
    }

    /// `add` with the item's probes requested first, as a batch does (BF.ADD).
    pub fn add_one(&mut self, item: &[u8], budget: impl Budget) -> Result<bool, AddError> {
        let hash = self.hash(item);
        self.prefetch(hash);
        self.add_hash(hash, budget)
    }

    /// Adds every item in order, prefetching a few items ahead; `answer` receives each
    /// outcome and returns false to stop.
    pub fn add_each<'a>(
        &mut self,
        items: impl Iterator<Item = &'a [u8]>,
        budget: impl Budget,
        mut answer: impl FnMut(Result<bool, AddError>) -> bool,
    ) {
        self.each_ahead(items, |chain, hash| answer(chain.add_hash(hash, &budget)));
    }
}

/// Formats a double as C's `%g` does (six significant digits), for BF.DEBUG.
pub fn format_g(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    let exponent = format!("{value:.5e}");
    let (mantissa, exp) = exponent.split_once('e').unwrap_or((&exponent, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&exp) {
        let decimals = (5 - exp).max(0) as usize;
        trim_zeros(&format!("{value:.decimals$}")).to_string()
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{}{:02}", trim_zeros(mantissa), sign, exp.abs())
    }
}

fn trim_zeros(number: &str) -> &str {
    if number.contains('.') {
        number.trim_end_matches('0').trim_end_matches('.')
    } else {
        number
    }
}

#[cfg(test)]
mod tests;
