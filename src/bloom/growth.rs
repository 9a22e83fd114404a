//! What a chain asks of its links, and the growth every chain kind shares: when the newest
//! link holds its capacity, the chain appends one `growth` times larger and twice as tight,
//! if the budget allows the chain's new size. RedisBloom's links of bits, counting links and
//! blocked links all grow through this one code.
//!
//! The next link's shape depends only on the newest link and the chain's growth and options,
//! so it is worked out once per newest link and remembered, a refusal included: an add
//! refused because the chain cannot grow costs what an accepted add costs, however expensive
//! the shape is to work out (a blocked link's is a search). Only the budget, which changes
//! with the server's memory, is asked again each time.

use std::fmt::Debug;

use super::{AddError, ItemHash};
use crate::budget::Budget;

/// One link of a chain, as the chain walk and its growth see it.
pub trait ChainLink: Sized {
    /// A link's geometry before its storage exists, so sizes can be checked first.
    type Shape: Copy + Debug + PartialEq;
    /// The most links a chain of these grows to (loaders refuse more).
    const MAX_LINKS: u64;
    /// Bytes accounted for the chain itself and for each link (BF.INFO Size).
    const CHAIN_OVERHEAD: u64;
    const LINK_OVERHEAD: u64;

    fn contains(&self, hash: ItemHash) -> bool;
    /// Records the item; true if the link did not read it present before.
    fn insert(&mut self, hash: ItemHash) -> bool;
    /// Items this link took.
    fn size(&self) -> u64;
    fn size_mut(&mut self) -> &mut u64;
    /// Items it takes before the chain grows.
    fn capacity(&self) -> u64;
    /// Bytes of its storage.
    fn bytes(&self) -> u64;
    /// The shape of the link that follows this one in a chain of `growth` and `options`:
    /// `growth` times the capacity at half the error rate. None if no such link exists.
    fn next_shape(&self, growth: u32, options: u32) -> Option<Self::Shape>;
    fn shape_bytes(shape: &Self::Shape) -> u64;
    /// An empty link of a shape whose size the caller has checked; None if the allocator
    /// refuses it.
    fn allocate(shape: &Self::Shape, options: u32) -> Option<Self>;
}

/// A link whose `insert` only sets: an item it already reads present leaves it unchanged, so
/// an add stores nothing for an item some link holds (RedisBloom's rule; not a counting
/// link's).
pub trait SetLink: ChainLink {}

/// Bytes a chain of `nlinks` links of `link_bytes` bytes in all reports.
pub fn reported_size<L: ChainLink>(nlinks: u64, link_bytes: u64) -> Option<u64> {
    L::LINK_OVERHEAD
        .checked_mul(nlinks)?
        .checked_add(L::CHAIN_OVERHEAD)?
        .checked_add(link_bytes)
}

/// What the next link's shape depends on: the newest link (its position, capacity and size in
/// bytes, which its error rate decides) and the chain's growth and options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Newest {
    links: usize,
    capacity: u64,
    bytes: u64,
    growth: u32,
    options: u32,
}

/// The next link's shape as last worked out (None: the chain cannot grow), and for which
/// newest link. Not part of the value: two chains with the same links are equal whatever
/// either remembers.
#[derive(Debug, Clone, Copy)]
pub struct NextLink<S> {
    worked_out: Option<(Newest, Option<S>)>,
}

impl<S> Default for NextLink<S> {
    fn default() -> Self {
        Self { worked_out: None }
    }
}

impl<S> PartialEq for NextLink<S> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// A scalable filter: links each `growth` times larger and twice as tight as the one before.
/// RedisBloom's filters are chains of [`Link`](super::Link)s of bits; other kinds chain their
/// own links.
#[derive(Debug, Clone, PartialEq)]
pub struct Chain<L: ChainLink = super::Link> {
    /// Items added (reported new) over all links.
    pub size: u64,
    /// Option bits (`OPT_*`), as stored.
    pub options: u32,
    /// Capacity factor from one link to the next (EXPANSION).
    pub growth: u32,
    pub links: Vec<L>,
    next: NextLink<L::Shape>,
}

impl<L: ChainLink> Chain<L> {
    /// A chain of these links, as a constructor or loader assembled them.
    pub fn from_links(size: u64, options: u32, growth: u32, links: Vec<L>) -> Self {
        Self {
            size,
            options,
            growth,
            links,
            next: NextLink::default(),
        }
    }

    pub fn is_scaling(&self) -> bool {
        self.options & super::OPT_NO_SCALING == 0
    }

    /// Bytes of the links' storage.
    pub fn link_bytes(&self) -> u64 {
        self.links
            .iter()
            .map(L::bytes)
            .fold(0u64, u64::saturating_add)
    }

    /// Bytes reported (BF.INFO Size, MEMORY USAGE): the structs plus the links' storage.
    pub fn reported_bytes(&self) -> u64 {
        reported_size::<L>(self.links.len() as u64, self.link_bytes()).unwrap_or(u64::MAX)
    }

    /// The newest link, after appending one if it holds its capacity: `Full` for a
    /// non-scaling chain, `CannotGrow` if no next link exists or the budget does not allow it.
    pub fn open_link(&mut self, budget: impl Budget) -> Result<&mut L, AddError> {
        let needs_link = self
            .links
            .last()
            .is_none_or(|link| link.size() >= link.capacity());
        if needs_link {
            if !self.is_scaling() {
                return Err(AddError::Full);
            }
            self.grow(&budget)?;
        }
        self.links.last_mut().ok_or(AddError::CannotGrow)
    }

    /// Appends the next link, if the budget allows the chain's new size.
    fn grow(&mut self, budget: &impl Budget) -> Result<(), AddError> {
        let shape = self.next_shape().ok_or(AddError::CannotGrow)?;
        let max_bytes = budget.limit(self.reported_bytes());
        let fits = self
            .link_bytes()
            .checked_add(L::shape_bytes(&shape))
            .and_then(|bytes| reported_size::<L>(self.links.len() as u64 + 1, bytes))
            .is_some_and(|size| size <= max_bytes);
        if !fits {
            return Err(AddError::CannotGrow);
        }
        let link = L::allocate(&shape, self.options).ok_or(AddError::CannotGrow)?;
        self.links.push(link);
        Ok(())
    }

    /// The next link's shape, worked out once per newest link (see the module's note).
    fn next_shape(&mut self) -> Option<L::Shape> {
        let newest = self.links.last()?;
        let key = Newest {
            links: self.links.len(),
            capacity: newest.capacity(),
            bytes: newest.bytes(),
            growth: self.growth,
            options: self.options,
        };
        if let Some((known, shape)) = self.next.worked_out {
            if known == key {
                return shape;
            }
        }
        let shape = if self.links.len() as u64 >= L::MAX_LINKS {
            None
        } else {
            newest.next_shape(self.growth, self.options)
        };
        self.next.worked_out = Some((key, shape));
        shape
    }
}

impl<L: SetLink> Chain<L> {
    /// Adds an item by its hashes: `Ok(true)` if it was new, `Ok(false)` if some link already
    /// held it (and nothing changed).
    pub fn add_hash(&mut self, hash: ItemHash, budget: impl Budget) -> Result<bool, AddError> {
        let Some((newest, older)) = self.links.split_last() else {
            return Err(AddError::CannotGrow);
        };
        if older.iter().rev().any(|link| link.contains(hash)) {
            return Ok(false);
        }
        // One pass over the newest link when it has room: setting its bits tells whether they
        // were all set already (the item was there and nothing changed), so it is not checked
        // first; only a full link (a new one would be needed) is.
        if newest.size() >= newest.capacity() && newest.contains(hash) {
            return Ok(false);
        }
        // Only a crafted value comes near it: refused before anything changes.
        if self.size >= super::MAX_ITEMS {
            return Err(AddError::CannotGrow);
        }
        let link = self.open_link(budget)?;
        let added = link.insert(hash);
        if added {
            *link.size_mut() += 1;
            self.size += 1;
        }
        Ok(added)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocked::{BlockShape, Blocked};
    use std::cell::Cell;

    const NO_LIMIT: u64 = u64::MAX;

    /// A fixed limit that counts how often it is asked.
    struct Counted<'a> {
        limit: u64,
        asked: &'a Cell<u32>,
    }

    impl Budget for Counted<'_> {
        fn limit(&self, _current: u64) -> u64 {
            self.asked.set(self.asked.get() + 1);
            self.limit
        }
    }

    /// Fills `chain` through `add` until its newest link holds its capacity; the chain as it
    /// then is.
    fn fill<L: SetLink + Clone>(
        chain: &mut Chain<L>,
        mut add: impl FnMut(&mut Chain<L>, u64) -> Result<bool, AddError>,
    ) {
        let mut i = 0u64;
        while chain.links.last().is_some_and(|l| l.size() < l.capacity()) {
            add(chain, i).unwrap();
            i += 1;
        }
    }

    /// Refused while the budget holds the chain as it is, asking the budget every time and
    /// changing nothing; once the budget allows, the chain grows the link a chain that was
    /// never refused grows.
    fn refusals_then_growth<L: SetLink + Clone + PartialEq + Debug>(mut chain: Chain<L>) {
        let hash = |i: u64| ItemHash::of(&i.to_le_bytes(), true);
        fill(&mut chain, |c, i| c.add_hash(hash(i), NO_LIMIT));
        let full = chain.clone();
        let asked = Cell::new(0);
        let tight = Counted {
            limit: chain.reported_bytes(),
            asked: &asked,
        };
        let mut refused = 0;
        for i in 1_000..2_000 {
            match chain.add_hash(hash(i), &tight) {
                Err(AddError::CannotGrow) => refused += 1,
                outcome => assert_eq!(outcome, Ok(false)),
            }
        }
        assert!(refused > 900);
        assert_eq!(asked.get(), refused);
        assert_eq!(chain, full);
        let mut never_refused = full.clone();
        assert_eq!(chain.add_hash(hash(5_000), NO_LIMIT), Ok(true));
        assert_eq!(never_refused.add_hash(hash(5_000), NO_LIMIT), Ok(true));
        assert_eq!(chain, never_refused);
        assert_eq!(chain.links.len(), 2);
    }

    #[test]
    fn a_refused_growth_is_worked_out_once_and_the_budget_asked_each_time() {
        refusals_then_growth(Chain::new(50, 0.01, 2, true, NO_LIMIT).unwrap());
        let blocked = Blocked::new(50, 0.01, 2, true, NO_LIMIT).unwrap();
        refusals_then_growth(Chain::clone(&blocked));
        let mut blocked = blocked;
        let mut i = 0u64;
        while blocked.links.len() == 1 {
            blocked.add(&i.to_le_bytes(), NO_LIMIT).unwrap();
            i += 1;
        }
        assert_eq!(
            blocked.links[1].shape,
            BlockShape::new(100, 0.0025).unwrap()
        );
    }

    #[test]
    fn a_chain_whose_next_link_does_not_exist_refuses_every_add_the_same() {
        // The error rate halves with every link until no next link exists, whatever the
        // budget.
        let mut chain = Chain::new(1, 0.5, 1, true, NO_LIMIT).unwrap();
        let mut i = 0u64;
        while chain.add(&i.to_le_bytes(), NO_LIMIT) != Err(AddError::CannotGrow) {
            i += 1;
        }
        let full = chain.clone();
        for j in 1..100u64 {
            let outcome = chain.add(&(i + j).to_le_bytes(), NO_LIMIT);
            assert!(matches!(outcome, Err(AddError::CannotGrow) | Ok(false)));
        }
        assert_eq!(chain, full);
        // A blocked chain at its last link stops there.
        let mut blocked = Blocked::new(1, 0.5, 1, true, NO_LIMIT).unwrap();
        let mut i = 0u64;
        while blocked.add(&i.to_le_bytes(), NO_LIMIT) != Err(AddError::CannotGrow) {
            i += 1;
        }
        let stopped = blocked.clone();
        for j in 1..100u64 {
            let outcome = blocked.add(&(i + j).to_le_bytes(), NO_LIMIT);
            assert!(matches!(outcome, Err(AddError::CannotGrow) | Ok(false)));
        }
        assert_eq!(blocked, stopped);
    }
}
