//! Counting Bloom filters: a scalable chain whose links hold 4-bit counters instead of bits
//! (the same hashing, link sizing and chain walk as `bloom`), so items can be deleted.
//!
//! A multiset: every add increments the k counters of the item in one link (the newest link
//! that already holds it, or else the open link), and a delete decrements them. A link's
//! capacity counts distinct items (what its error rate depends on): an add of an item a link
//! already holds takes no room, and a delete after which the link no longer reads the item
//! frees its place.
//!
//! Deleting never costs another added item its presence:
//! - a delete decrements only when exactly one link holds the item. An item still in the
//!   multiset has all its increments' counters above zero in the link(s) that took them, so
//!   that link reads it present; if it is the only link that does, it holds at least one of
//!   the item's increments, and taking that one back leaves every counter at or above what
//!   the other items' increments put there. When more than one link reads the item present
//!   (one of them through a false positive), nothing is changed and the delete says so: the
//!   item may stay behind as a false positive, never become a false negative;
//! - a counter that reached 15 saturates: it is never incremented nor decremented again, so
//!   an overflow can cost false positives but never a false negative.
//!
//! Deleting an item that was never added decrements counters other items put there, exactly
//! as `CF.DEL` can remove another item's fingerprint.

mod counters;
mod dump;
mod rdb;

#[cfg(test)]
mod tests;

pub use counters::{Counter4, SATURATED};
pub use dump::MAGIC;
pub use rdb::ENCODING_VERSION;

use crate::bloom::{
    AddError, Chain, CreateError, ItemHash, Link, OPT_FORCE64, OPT_NOROUND, OPT_NO_SCALING,
};
use crate::budget::Budget;

/// A counting filter: a chain of counter links, and how many adds it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct CountingFilter {
    /// Each link's `size` counts the distinct items its counters hold (what its capacity and
    /// error rate are about), so repeated adds of one item never make the chain grow.
    pub chain: Chain<Link<Counter4>>,
    /// Adds minus deletes: the multiset's size (`BF.CARD`).
    pub items: u64,
}

/// Why an item could not be deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteError {
    /// More than one link holds the item, so which one its increments are in is unknown.
    Ambiguous,
}

impl CountingFilter {
    /// A new empty filter (see [`Chain::reserve`]).
    pub fn new(
        capacity: u64,
        error: f64,
        growth: u32,
        scaling: bool,
        max_bytes: u64,
    ) -> Result<Self, CreateError> {
        let chain = Chain::reserve(capacity, error, growth, scaling, max_bytes)?;
        Ok(Self { chain, items: 0 })
    }

    pub fn contains(&self, item: &[u8]) -> bool {
        self.chain.contains(item)
    }

    /// Adds one more of an item: `Ok(true)` if no link held it before.
    pub fn add(&mut self, item: &[u8], budget: impl Budget) -> Result<bool, AddError> {
        let mut outcome = Err(AddError::CannotGrow);
        self.add_each(std::iter::once(item), budget, |result| {
            outcome = result;
            true
        });
        outcome
    }

    /// Adds every item in order; `answer` receives each outcome and returns false to stop.
    pub fn add_each<'a>(
        &mut self,
        items: impl Iterator<Item = &'a [u8]>,
        budget: impl Budget,
        mut answer: impl FnMut(Result<bool, AddError>) -> bool,
    ) {
        let count = &mut self.items;
        self.chain.each_ahead(items, |chain, hash| {
            let outcome = count
                .checked_add(1)
                .ok_or(AddError::CannotGrow)
                .and_then(|_| add_hash(chain, hash, &budget));
            if outcome.is_ok() {
                *count += 1;
            }
            answer(outcome)
        });
    }

    /// Deletes one of an item: `Ok(true)` if its counters were decremented, `Ok(false)` if
    /// no link holds it or every counter it has is saturated (nothing could be taken back).
    pub fn delete(&mut self, item: &[u8]) -> Result<bool, DeleteError> {
        let mut outcome = Ok(false);
        self.delete_each(std::iter::once(item), |result| outcome = result);
        outcome
    }

    /// Deletes every item in order.
    pub fn delete_each<'a>(
        &mut self,
        items: impl Iterator<Item = &'a [u8]>,
        mut answer: impl FnMut(Result<bool, DeleteError>),
    ) {
        let count = &mut self.items;
        self.chain.each_ahead(items, |chain, hash| {
            let outcome = delete_hash(chain, hash);
            if outcome == Ok(true) {
                *count = count.saturating_sub(1);
            }
            answer(outcome);
            true
        });
    }

    /// Counters stuck at [`SATURATED`], over every link.
    pub fn saturated(&self) -> u64 {
        self.chain
            .links
            .iter()
            .map(|link| Counter4::saturated_in(&link.array))
            .sum()
    }

    /// A chain that passed `bloom`'s checks, if it has the options a counting filter is made
    /// with (64-bit hashing, links sized without rounding), and no link holds more distinct
    /// items than its capacity (a full link makes the chain grow first). The adds outstanding
    /// are not compared with the distinct items: a delete of an item never added takes an
    /// add back while the link may still read it present.
    fn from_checked(chain: Chain<Link<Counter4>>, items: u64) -> Result<Self, &'static str> {
        if chain.options & !OPT_NO_SCALING != OPT_NOROUND | OPT_FORCE64 {
            return Err("options of a counting filter");
        }
        if chain.links.iter().any(|link| link.size > link.entries) {
            return Err("a link holds more distinct items than its capacity");
        }
        Ok(Self { chain, items })
    }
}

/// Increments the item's counters in the newest link that holds it, or else in the open link
/// (growing the chain if it is full), where it then counts as one more distinct item.
fn add_hash(
    chain: &mut Chain<Link<Counter4>>,
    hash: ItemHash,
    budget: &impl Budget,
) -> Result<bool, AddError> {
    if let Some(holder) = chain.links.iter_mut().rev().find(|l| l.contains(hash)) {
        holder.insert(hash);
        return Ok(false);
    }
    let size = (chain.size.checked_add(1))
        .filter(|size| *size <= crate::bloom::MAX_ITEMS)
        .ok_or(AddError::CannotGrow)?;
    let link = chain.open_link(budget)?;
    link.size = link.size.checked_add(1).ok_or(AddError::CannotGrow)?;
    link.insert(hash);
    chain.size = size;
    Ok(true)
}

/// Decrements the item's counters if exactly one link holds it and one of them can be taken
/// back (not all saturated); the link holds one distinct item fewer once it no longer reads
/// the item present.
fn delete_hash(chain: &mut Chain<Link<Counter4>>, hash: ItemHash) -> Result<bool, DeleteError> {
    let mut holders = chain.links.iter_mut().filter(|link| link.contains(hash));
    let Some(link) = holders.next() else {
        return Ok(false);
    };
    if holders.next().is_some() {
        return Err(DeleteError::Ambiguous);
    }
    // Only saturated counters: nothing can be taken back, so nothing changes (the item was
    // added more often than a counter counts, and stays present).
    let takeable = link.probes_of(hash).any(|(byte, shift)| {
        link.array
            .get(byte)
            .is_some_and(|b| Counter4::can_decrement(*b, shift))
    });
    if !takeable {
        return Ok(false);
    }
    link.update_cells(hash, Counter4::decrement);
    if !link.contains(hash) && link.size > 0 {
        link.size -= 1;
        chain.size = chain.size.saturating_sub(1);
    }
    Ok(true)
}
