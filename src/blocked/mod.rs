//! Blocked Bloom filters (`BF.RESERVE ... BLOCKED`): every item's bits lie in one 64-byte,
//! cache-line-aligned block of its link, so a lookup costs one cache miss per link where a
//! classic Bloom filter costs one per bit (seven at 1 %). The block is chosen from the same
//! MurmurHash64A item hash as every other kind ([`ItemHash`]).
//!
//! A blocked filter grows as RedisBloom's chain does: links each `growth` times larger and
//! twice as tight as the one before (`EXPANSION`, `NONSCALING`), each sized for its rate as a
//! blocked layout actually achieves it (`sizing`), which takes a few per cent more bits than
//! the classic formula at 1 %.

mod blocks;
mod dump;
pub mod probe;
mod rdb;
pub mod sizing;

#[cfg(test)]
mod tests;

pub use blocks::{Block, Blocks};
pub use dump::MAGIC;
pub use rdb::ENCODING_VERSION;
pub use sizing::{BlockShape, ShapeError, BLOCK_BYTES, MAX_HASHES, MIN_ERROR};

use crate::bloom::{prefetch, AddError, CreateError, ItemHash, Lookahead, ERROR_TIGHTENING};
use crate::budget::Budget;

/// More links than a chain can grow before its links' rates pass [`MIN_ERROR`].
pub const MAX_LINKS: u64 = 64;
/// Bytes accounted for the filter itself and for each link (their structs).
const FILTER_OVERHEAD: u64 = 48;
const LINK_OVERHEAD: u64 = 64;
/// Links below this size stay in the caches: no prefetching.
const PREFETCH_MIN_BYTES: u64 = 256 * 1024;

/// One link: its shape, the items it took and its blocks.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockLink {
    pub shape: BlockShape,
    /// Items added to this link.
    pub size: u64,
    pub blocks: Blocks,
}

/// A scalable blocked Bloom filter.
#[derive(Debug, Clone, PartialEq)]
pub struct Blocked {
    /// Items added (reported new) over all links.
    pub size: u64,
    /// Capacity factor from one link to the next (EXPANSION).
    pub growth: u32,
    pub scaling: bool,
    pub links: Vec<BlockLink>,
}

impl From<ShapeError> for CreateError {
    fn from(e: ShapeError) -> Self {
        match e {
            ShapeError::Invalid => CreateError::Invalid,
            ShapeError::TooLarge => CreateError::TooLarge,
        }
    }
}

/// Bytes a filter with these links reports (BF.INFO Size, MEMORY USAGE).
fn reported_size(links: u64, block_bytes: u64) -> Option<u64> {
    LINK_OVERHEAD
        .checked_mul(links)?
        .checked_add(FILTER_OVERHEAD)?
        .checked_add(block_bytes)
}

impl BlockLink {
    /// An empty link of a shape whose size the caller has checked.
    pub fn allocate(shape: BlockShape) -> Result<Self, CreateError> {
        let blocks = Blocks::zeroed(shape.blocks).map_err(|_| CreateError::TooLarge)?;
        Ok(Self {
            shape,
            size: 0,
            blocks,
        })
    }

    #[inline]
    fn block_of(&self, a: u64) -> usize {
        probe::block_index(a, self.blocks.len() as u64)
    }

    #[inline]
    pub fn contains(&self, hash: ItemHash) -> bool {
        self.blocks
            .get(self.block_of(hash.a))
            .is_some_and(|block| probe::holds(block, hash, self.shape.hashes))
    }

    /// Sets the item's bits; true if one was clear (the item was new to this link).
    #[inline]
    pub fn insert(&mut self, hash: ItemHash) -> bool {
        let (index, k) = (self.block_of(hash.a), self.shape.hashes);
        self.blocks
            .get_mut(index)
            .is_some_and(|block| probe::set(block, hash, k))
    }

    /// Starts loading the block of the item whose hash starts with `a`, in a link too large
    /// for the caches.
    #[inline]
    fn prefetch(&self, a: u64) {
        if self.bytes() >= PREFETCH_MIN_BYTES {
            prefetch(self.blocks.address(self.block_of(a)));
        }
    }

    pub fn bytes(&self) -> u64 {
        self.blocks.len() as u64 * BLOCK_BYTES
    }
}

impl Blocked {
    /// A new empty filter. A scaling filter's first link gets half the requested error rate,
    /// as RedisBloom's does, so the whole chain stays within it; a non-scaling one gets all
    /// of it.
    pub fn new(
        capacity: u64,
        error: f64,
        growth: u32,
        scaling: bool,
        max_bytes: u64,
    ) -> Result<Self, CreateError> {
        if growth < 1 || !(error > 0.0 && error < 1.0) {
            return Err(CreateError::Invalid);
        }
        let link_error = if scaling {
            error * ERROR_TIGHTENING
        } else {
            error
        };
        let shape = BlockShape::new(capacity, link_error)?;
        if reported_size(1, shape.bytes()).is_none_or(|size| size > max_bytes) {
            return Err(CreateError::TooLarge);
        }
        Ok(Self {
            size: 0,
            growth,
            scaling,
            links: vec![BlockLink::allocate(shape)?],
        })
    }

    #[inline]
    pub fn hash(item: &[u8]) -> ItemHash {
        ItemHash::of(item, true)
    }

    /// Whether some link holds the item (BF.EXISTS). The first half of the hash picks the
    /// blocks, so every large link's block is requested before the second half is computed
    /// and the first block tested: the misses overlap that work and one another.
    pub fn contains(&self, item: &[u8]) -> bool {
        let a = ItemHash::first(item);
        self.prefetch_first(a);
        let hash = ItemHash::from_first(item, a);
        self.links.iter().rev().any(|link| link.contains(hash))
    }

    /// Whether some link holds the item. A grown chain's blocks are all requested before the
    /// first is tested, so their cache misses overlap.
    #[inline]
    pub fn contains_hash(&self, hash: ItemHash) -> bool {
        if self.links.len() > 1 {
            self.prefetch(hash);
        }
        self.links.iter().rev().any(|link| link.contains(hash))
    }

    /// Starts loading the item's block in every large link.
    #[inline]
    pub fn prefetch(&self, hash: ItemHash) {
        self.prefetch_first(hash.a);
    }

    /// Starts loading, in every large link, the block of the item whose hash starts with `a`.
    #[inline]
    fn prefetch_first(&self, a: u64) {
        for link in self.links.iter().rev() {
            link.prefetch(a);
        }
    }

    /// Answers `contains` for every item, prefetching a few items ahead (BF.MEXISTS).
    pub fn contains_each<'a>(
        &self,
        items: impl Iterator<Item = &'a [u8]>,
        mut answer: impl FnMut(bool),
    ) {
        let mut ahead = Lookahead::default();
        for item in items {
            let hash = Self::hash(item);
            self.prefetch(hash);
            if let Some(oldest) = ahead.push(hash) {
                answer(self.contains_hash(oldest));
            }
        }
        while let Some(hash) = ahead.pop() {
            answer(self.contains_hash(hash));
        }
    }

    /// Adds an item: `Ok(true)` if it was new, `Ok(false)` if some link already held it.
    /// The blocks are requested as soon as the first half of the hash is known, as in
    /// [`Blocked::contains`].
    pub fn add(&mut self, item: &[u8], budget: impl Budget) -> Result<bool, AddError> {
        let a = ItemHash::first(item);
        self.prefetch_first(a);
        self.add_hash(ItemHash::from_first(item, a), &budget)
    }

    /// Adds every item in order, prefetching a few items ahead; `answer` receives each
    /// outcome and returns false to stop.
    pub fn add_each<'a>(
        &mut self,
        items: impl Iterator<Item = &'a [u8]>,
        budget: impl Budget,
        mut answer: impl FnMut(Result<bool, AddError>) -> bool,
    ) {
        let mut ahead = Lookahead::default();
        for item in items {
            let hash = Self::hash(item);
            self.prefetch(hash);
            if let Some(oldest) = ahead.push(hash) {
                if !answer(self.add_hash(oldest, &budget)) {
                    return;
                }
            }
        }
        while let Some(hash) = ahead.pop() {
            if !answer(self.add_hash(hash, &budget)) {
                return;
            }
        }
    }

    /// Adds an item by its hash (see [`Blocked::add`]).
    pub fn add_hash(&mut self, hash: ItemHash, budget: &impl Budget) -> Result<bool, AddError> {
        let Some((newest, older)) = self.links.split_last() else {
            return Err(AddError::CannotGrow);
        };
        if older.iter().rev().any(|link| link.contains(hash)) {
            return Ok(false);
        }
        // Setting the bits of the newest link tells whether the item was there already, so
        // it is only checked first when the link is full (and a new one would be needed).
        if newest.size >= newest.shape.capacity && newest.contains(hash) {
            return Ok(false);
        }
        let link = self.open_link(budget)?;
        let added = link.insert(hash);
        if added {
            link.size += 1;
            self.size += 1;
        }
        Ok(added)
    }

    /// The newest link, after appending one if it holds its capacity.
    fn open_link(&mut self, budget: &impl Budget) -> Result<&mut BlockLink, AddError> {
        let full = self
            .links
            .last()
            .is_none_or(|link| link.size >= link.shape.capacity);
        if full {
            if !self.scaling {
                return Err(AddError::Full);
            }
            self.grow(budget)?;
        }
        self.links.last_mut().ok_or(AddError::CannotGrow)
    }

    /// Appends a link `growth` times larger and twice as tight, if the budget allows it.
    fn grow(&mut self, budget: &impl Budget) -> Result<(), AddError> {
        let newest = self.links.last().ok_or(AddError::CannotGrow)?;
        if self.links.len() as u64 >= MAX_LINKS {
            return Err(AddError::CannotGrow);
        }
        let capacity = newest
            .shape
            .capacity
            .checked_mul(u64::from(self.growth))
            .ok_or(AddError::CannotGrow)?;
        let shape = BlockShape::new(capacity, newest.shape.error * ERROR_TIGHTENING)
            .map_err(|_| AddError::CannotGrow)?;
        let max_bytes = budget.limit(self.reported_bytes());
        let fits = self
            .block_bytes()
            .checked_add(shape.bytes())
            .and_then(|bytes| reported_size(self.links.len() as u64 + 1, bytes))
            .is_some_and(|size| size <= max_bytes);
        if !fits {
            return Err(AddError::CannotGrow);
        }
        let link = BlockLink::allocate(shape).map_err(|_| AddError::CannotGrow)?;
        self.links.push(link);
        Ok(())
    }

    /// Bytes of the links' blocks.
    pub fn block_bytes(&self) -> u64 {
        self.links
            .iter()
            .map(BlockLink::bytes)
            .fold(0u64, u64::saturating_add)
    }

    /// Sum of link capacities (BF.INFO Capacity).
    pub fn capacity(&self) -> u64 {
        self.links
            .iter()
            .fold(0u64, |sum, link| sum.saturating_add(link.shape.capacity))
    }

    /// Bytes reported (BF.INFO Size, MEMORY USAGE): the structs plus the blocks.
    pub fn reported_bytes(&self) -> u64 {
        reported_size(self.links.len() as u64, self.block_bytes()).unwrap_or(u64::MAX)
    }

    /// The checks every value read from outside passes (RDB, DUMP/RESTORE, LOADCHUNK): at
    /// least one link and at most [`MAX_LINKS`], a growth of at least 1, every link's shape
    /// in range with as many blocks as it says, link sizes adding up, and the whole within
    /// `max_bytes`.
    pub fn validate(&self, max_bytes: u64) -> Result<(), &'static str> {
        if self.links.is_empty() || self.links.len() as u64 > MAX_LINKS {
            return Err("link count out of range");
        }
        if self.growth < 1 {
            return Err("growth below 1");
        }
        for link in &self.links {
            validate_shape(&link.shape)?;
            if link.blocks.len() as u64 != link.shape.blocks {
                return Err("block count does not match the storage");
            }
        }
        let total = self
            .links
            .iter()
            .try_fold(0u64, |sum, link| sum.checked_add(link.size));
        if total != Some(self.size) {
            return Err("link sizes do not add up");
        }
        if self.reported_bytes() > max_bytes {
            return Err("too large");
        }
        Ok(())
    }
}

/// A link shape read from outside: in range, and within `max_bytes` before anything is
/// allocated for it.
pub fn validate_shape(shape: &BlockShape) -> Result<(), &'static str> {
    if shape.capacity < 1 {
        return Err("capacity below 1");
    }
    if !(shape.error > 0.0 && shape.error < 1.0) {
        return Err("error rate out of range");
    }
    if !(1..=MAX_HASHES).contains(&shape.hashes) {
        return Err("bits per item out of range");
    }
    if shape.blocks < 1 || shape.blocks > u64::MAX / BLOCK_BYTES {
        return Err("block count out of range");
    }
    Ok(())
}
