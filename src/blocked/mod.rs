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

use crate::bloom::{
    prefetch, reported_size, AddError, Chain, ChainLink, CreateError, ItemHash, Lookahead, SetLink,
    ERROR_TIGHTENING, OPT_NO_SCALING,
};
use crate::budget::Budget;

/// More links than a chain can grow before its links' rates pass [`MIN_ERROR`].
pub const MAX_LINKS: u64 = 64;
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

/// A scalable blocked Bloom filter: a chain of blocked links (its options are
/// `OPT_NO_SCALING` or none), which it reads through as the chain it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Blocked(Chain<BlockLink>);

impl std::ops::Deref for Blocked {
    type Target = Chain<BlockLink>;
    fn deref(&self) -> &Chain<BlockLink> {
        &self.0
    }
}

impl std::ops::DerefMut for Blocked {
    fn deref_mut(&mut self) -> &mut Chain<BlockLink> {
        &mut self.0
    }
}

impl From<ShapeError> for CreateError {
    fn from(e: ShapeError) -> Self {
        match e {
            ShapeError::Invalid => CreateError::Invalid,
            ShapeError::TooLarge => CreateError::TooLarge,
        }
    }
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

/// A blocked link grows as a plain link does (`growth` times the capacity at half the rate),
/// sized by the blocked search, and stops at [`MAX_LINKS`] or [`MIN_ERROR`].
impl ChainLink for BlockLink {
    type Shape = BlockShape;
    const MAX_LINKS: u64 = MAX_LINKS;
    const CHAIN_OVERHEAD: u64 = 48;
    const LINK_OVERHEAD: u64 = 64;

    #[inline]
    fn contains(&self, hash: ItemHash) -> bool {
        BlockLink::contains(self, hash)
    }
    #[inline]
    fn insert(&mut self, hash: ItemHash) -> bool {
        BlockLink::insert(self, hash)
    }
    fn size(&self) -> u64 {
        self.size
    }
    fn size_mut(&mut self) -> &mut u64 {
        &mut self.size
    }
    fn capacity(&self) -> u64 {
        self.shape.capacity
    }
    fn bytes(&self) -> u64 {
        BlockLink::bytes(self)
    }
    fn next_shape(&self, growth: u32, _options: u32) -> Option<BlockShape> {
        next_shape(&self.shape, growth)
    }
    fn shape_bytes(shape: &BlockShape) -> u64 {
        shape.bytes()
    }
    fn allocate(shape: &BlockShape, _options: u32) -> Option<Self> {
        BlockLink::allocate(*shape).ok()
    }
}

impl SetLink for BlockLink {}

impl Blocked {
    /// The false-positive rate estimated from the links' fill: each link's blocked rate at the
    /// bits per item it holds, combined over the chain.
    pub fn estimated_rate(&self) -> f64 {
        crate::bloom::combined_rate(self.links.iter().map(|link| {
            if link.size == 0 {
                return 0.0;
            }
            let bits_per_item = (link.shape.blocks * sizing::BLOCK_BITS) as f64 / link.size as f64;
            // Past a block's own bits per item every block is saturated: the sum over loads
            // would only grow with the items a client added.
            if bits_per_item < 1.0 {
                return 1.0;
            }
            sizing::false_positive_rate(bits_per_item, link.shape.hashes)
        }))
    }

    /// The `Size` a new filter for `capacity` items at `error` reports (`BF.ESTIMATE`): its
    /// first link, sized as [`Blocked::new`] sizes it.
    pub fn size_for(capacity: u64, error: f64, scaling: bool) -> Result<u64, CreateError> {
        Self::first_link(capacity, error, scaling).map(|(_, size)| size)
    }

    /// The first link's shape and the `Size` of a filter of that one link. A scaling filter's
    /// first link gets half the requested error rate, as RedisBloom's does, so the whole chain
    /// stays within it; a non-scaling one gets all of it.
    fn first_link(
        capacity: u64,
        error: f64,
        scaling: bool,
    ) -> Result<(BlockShape, u64), CreateError> {
        if !(error > 0.0 && error < 1.0) {
            return Err(CreateError::Invalid);
        }
        let link_error = if scaling {
            error * ERROR_TIGHTENING
        } else {
            error
        };
        let shape = BlockShape::new(capacity, link_error)?;
        let size = reported_size::<BlockLink>(1, shape.bytes()).ok_or(CreateError::TooLarge)?;
        Ok((shape, size))
    }

    /// A new empty filter of one link ([`Blocked::first_link`]).
    pub fn new(
        capacity: u64,
        error: f64,
        growth: u32,
        scaling: bool,
        max_bytes: u64,
    ) -> Result<Self, CreateError> {
        if growth < 1 {
            return Err(CreateError::Invalid);
        }
        let (shape, size) = Self::first_link(capacity, error, scaling)?;
        if size > max_bytes {
            return Err(CreateError::TooLarge);
        }
        let options = if scaling { 0 } else { OPT_NO_SCALING };
        let link = BlockLink::allocate(shape)?;
        Ok(Self(Chain::from_links(0, options, growth, vec![link])))
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

    /// Sum of link capacities (BF.INFO Capacity).
    pub fn capacity(&self) -> u64 {
        self.links
            .iter()
            .fold(0u64, |sum, link| sum.saturating_add(link.shape.capacity))
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
        if self.options & !OPT_NO_SCALING != 0 {
            return Err("unknown flags");
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
        if self.size > crate::bloom::MAX_ITEMS {
            return Err("more items than BF.CARD answers");
        }
        if self.reported_bytes() > max_bytes {
            return Err("too large");
        }
        Ok(())
    }
}

/// The link a chain of `growth` appends after a link of `shape`: `growth` times the capacity
/// at half the rate, sized by the blocked search. None if no such link exists.
pub(crate) fn next_shape(shape: &BlockShape, growth: u32) -> Option<BlockShape> {
    let capacity = shape.capacity.checked_mul(u64::from(growth))?;
    BlockShape::new(capacity, shape.error * ERROR_TIGHTENING).ok()
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
