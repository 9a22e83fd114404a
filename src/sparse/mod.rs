//! Sparse Bloom filters: a Bloom filter that has not yet earned its bit array. It keeps the
//! exact hash pair (`a`, `b`) of every item it was given, sorted, and becomes the ordinary
//! dense [`Chain`] (promotion) once it would be larger than that chain's first link, than the
//! caller's byte limit, or would hold more items than the first link takes.
//!
//! Why this is exact: a chain whose first link is below its capacity holds one link, and a
//! link's bits are the union of its items' probes, whatever order they came in (an item whose
//! probes are all set already sets nothing). So the promoted chain has exactly the bits of a
//! plain chain created with the same parameters and given the same items. Only the item count
//! can differ: the sparse form answers an add as new whenever the hash pair is new, where the
//! plain chain would refuse the rare item whose probes are all set already (a false positive).
//! The promoted chain keeps the count the sparse form replied (every add it answered 1), so
//! `BF.CARD` never drops at promotion; the first link then fills (and the chain grows) up to
//! that many adds earlier than a plain chain would. Lookups are exact on the hash pair: never
//! a false negative, and a false positive only for a 128-bit hash collision, far below any
//! requested rate. Insertion order is not kept because nothing depends on it.

mod dump;
mod rdb;

pub use dump::MAGIC;
pub use rdb::ENCODING_VERSION;

use crate::bloom::{reported_size, Chain, CreateError, ItemHash, Link, LinkShape};
use crate::bloom::{OPT_FORCE64, OPT_NOROUND, OPT_NO_SCALING};
use crate::rdb::LoadError;

/// Bytes each item costs: its two 64-bit hashes.
pub const HASH_BYTES: u64 = 16;
/// Bytes a sparse value occupies besides its hashes (the struct below on a 64-bit target).
pub const OVERHEAD: u64 = 48;

#[derive(Debug, Clone, PartialEq)]
pub struct Sparse {
    /// The parameters the dense chain will be created with, as `BF.RESERVE` received them.
    pub capacity: u64,
    pub error: f64,
    pub growth: u32,
    /// The options the dense chain will carry (`NOROUND | FORCE64`, plus `NO_SCALING`).
    pub options: u32,
    /// Every item's hashes, strictly increasing by (`a`, `b`); length equals capacity.
    hashes: Vec<ItemHash>,
}

/// What an add did to a sparse filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    New,
    /// The item's hash pair is held already.
    Present,
    /// The item is new and the sparse form cannot take it: promote, then add to the chain.
    Promote,
}

fn order(x: &ItemHash, y: &ItemHash) -> std::cmp::Ordering {
    (x.a, x.b).cmp(&(y.a, y.b))
}

impl Sparse {
    /// A new empty sparse filter, refused exactly as `Chain::new` would refuse the same
    /// parameters (so replies do not depend on the encoding). None when even the empty sparse
    /// form would be larger than `sparse_max_bytes` or than the dense chain.
    pub fn create(
        capacity: u64,
        error: f64,
        growth: u32,
        scaling: bool,
        sparse_max_bytes: u64,
        max_bytes: u64,
    ) -> Result<Option<Sparse>, CreateError> {
        let (options, _) = <Chain>::first_link(capacity, error, scaling, max_bytes)?;
        let sparse = Sparse {
            capacity,
            error,
            growth,
            options,
            hashes: Vec::new(),
        };
        // What exists can be loaded: the loader's validator, by construction.
        match sparse.validate(max_bytes) {
            Ok(()) => {}
            Err(LoadError::TooLarge) => return Err(CreateError::TooLarge),
            Err(_) => return Err(CreateError::Invalid),
        }
        Ok(sparse.max_items(sparse_max_bytes).map(|_| sparse))
    }

    pub fn is_scaling(&self) -> bool {
        self.options & OPT_NO_SCALING == 0
    }

    /// The dense chain's first link.
    fn dense_link(&self) -> Option<LinkShape> {
        <Chain>::first_link(self.capacity, self.error, self.is_scaling(), u64::MAX)
            .ok()
            .map(|(_, shape)| shape)
    }

    /// Bytes the dense chain would occupy (its BF.INFO Size when created).
    pub fn dense_bytes(&self) -> u64 {
        self.dense_link()
            .and_then(|shape| reported_size::<Link>(1, shape.bytes))
            .unwrap_or(u64::MAX)
    }

    /// Capacity of the dense chain's first link (BF.INFO Capacity).
    pub fn dense_capacity(&self) -> u64 {
        self.dense_link().map_or(0, |shape| shape.entries)
    }

    /// The most items the sparse form may hold: no more than the first link takes, and no
    /// larger than the dense chain nor `sparse_max_bytes`. None if not even the empty form fits.
    pub fn max_items(&self, sparse_max_bytes: u64) -> Option<u64> {
        let shape = self.dense_link()?;
        let dense = reported_size::<Link>(1, shape.bytes)?;
        let room = dense.min(sparse_max_bytes).checked_sub(OVERHEAD)?;
        Some((room / HASH_BYTES).min(shape.entries))
    }

    /// Items held (each add answered 1).
    pub fn len(&self) -> u64 {
        self.hashes.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// Every item's hashes, in increasing order.
    pub fn hashes(&self) -> &[ItemHash] {
        &self.hashes
    }

    /// The hash storage, for the allocator to move (active defragmentation) and nothing else.
    pub fn hashes_for_relocation(&mut self) -> &mut Vec<ItemHash> {
        &mut self.hashes
    }

    /// Bytes the value occupies (BF.INFO Size, MEMORY USAGE).
    pub fn bytes(&self) -> u64 {
        OVERHEAD + HASH_BYTES * self.len()
    }

    /// The hash pair of an item, as the dense chain computes it.
    #[inline]
    pub fn hash(&self, item: &[u8]) -> ItemHash {
        ItemHash::of(item, self.options & OPT_FORCE64 != 0)
    }

    #[inline]
    pub fn contains(&self, item: &[u8]) -> bool {
        self.contains_hash(self.hash(item))
    }

    #[inline]
    pub fn contains_hash(&self, hash: ItemHash) -> bool {
        self.locate(&hash).is_ok()
    }

    /// Where `hash` is (Ok) or would go (Err), as `binary_search` answers. The `a` hashes are
    /// uniform, so the item of `a` sits near index `a·n / 2^64` (within about √n/2): the
    /// search first tries a window of a few neighbouring cache lines there, so a lookup in a
    /// filter that is not in the CPU caches waits for two or three misses, not one per halving.
    fn locate(&self, hash: &ItemHash) -> Result<usize, usize> {
        let hashes = &self.hashes;
        let n = hashes.len();
        let guess = ((u128::from(hash.a) * n as u128) >> 64) as usize;
        let reach = (n as f64).sqrt() as usize + 4;
        let (lo, hi) = (
            guess.saturating_sub(reach),
            guess.saturating_add(reach).min(n),
        );
        let below = lo == 0 || hashes.get(lo - 1).is_some_and(|h| order(h, hash).is_lt());
        let above = hi == n || hashes.get(hi).is_some_and(|h| order(h, hash).is_gt());
        let start = if below && above { lo } else { 0 };
        let end = if below && above { hi } else { n };
        let window = hashes.get(start..end).unwrap_or_default();
        match window.binary_search_by(|h| order(h, hash)) {
            Ok(at) => Ok(start + at),
            Err(at) => Err(start + at),
        }
    }

    /// Adds an item unless the sparse form already holds `max_items` (see [`Self::max_items`]).
    pub fn add(&mut self, item: &[u8], max_items: u64) -> Added {
        self.add_hash(self.hash(item), max_items)
    }

    pub fn add_hash(&mut self, hash: ItemHash, max_items: u64) -> Added {
        let Err(at) = self.locate(&hash) else {
            return Added::Present;
        };
        // Growing by exactly one keeps the allocation the size BF.INFO reports.
        if self.len() >= max_items || self.hashes.try_reserve_exact(1).is_err() {
            return Added::Promote;
        }
        self.hashes.insert(at, hash);
        Added::New
    }

    /// The dense chain: created as `BF.RESERVE` with these parameters would create it, given
    /// every item's probes, with the item count this filter replied.
    pub fn promote(&self, max_bytes: u64) -> Result<Chain, CreateError> {
        let mut chain = Chain::new(
            self.capacity,
            self.error,
            self.growth,
            self.is_scaling(),
            max_bytes,
        )?;
        let link = chain.links.first_mut().ok_or(CreateError::Invalid)?;
        for hash in &self.hashes {
            link.insert(*hash);
        }
        link.size = self.len();
        chain.size = self.len();
        Ok(chain)
    }

    /// The one validator of a sparse value read from outside (RDB, RESTORE, LOADCHUNK):
    /// parameters a command could have created under `max_bytes`, hashes strictly increasing,
    /// and no more of them than the sparse form may hold whatever the configuration.
    pub fn validate(&self, max_bytes: u64) -> Result<(), LoadError> {
        let base = OPT_NOROUND | OPT_FORCE64;
        if self.options != base && self.options != base | OPT_NO_SCALING {
            return Err(LoadError::Invalid("unknown options"));
        }
        if self.growth < 1 {
            return Err(LoadError::Invalid("expansion out of range"));
        }
        match <Chain>::first_link(self.capacity, self.error, self.is_scaling(), max_bytes) {
            Ok(_) => {}
            Err(CreateError::TooLarge) => return Err(LoadError::TooLarge),
            Err(CreateError::Invalid) => return Err(LoadError::Invalid("capacity or error rate")),
        }
        let mut next = self.hashes.iter().skip(1);
        if self
            .hashes
            .iter()
            .any(|h| next.next().is_some_and(|after| order(h, after).is_ge()))
        {
            return Err(LoadError::Invalid("hashes not strictly increasing"));
        }
        if self
            .max_items(u64::MAX)
            .is_none_or(|most| self.len() > most)
        {
            return Err(LoadError::Invalid("more items than the sparse form holds"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
