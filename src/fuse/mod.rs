//! Static sets (`BF.RESERVE ... STATIC`): a builder that holds every item's 64-bit hash
//! (MurmurHash64A, as every kind) and answers exactly, then `BF.FREEZE` turns it into a
//! frozen 3-wise binary fuse filter (`table`) of ⌈log2(1/ε)⌉-bit fingerprints: about
//! 1.13·log2(1/ε) bits per item, the smallest filter there is for a set that no longer
//! changes.
//!
//! The builder's hashes live in an extendible-hashing set of sorted segments (`set`), shared
//! (`Arc`) with the construction while it runs off the main thread: a builder whose set is
//! shared is being frozen and refuses writes ([`AddError::Freezing`]). The construction
//! (`build`) is the reference peeling algorithm with deterministic seeds.

mod build;
mod codec;
mod set;
mod stage;
pub mod table;

#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

pub use build::{build, shape_for, working_bytes, BuildError};
pub use codec::{ENCODING_VERSION, MAGIC};
pub use set::HashSet;
pub use stage::{Stage, StageError, Step, STEP_BYTES};
pub use table::{Shape, Table};

use crate::bloom::{AddError, CreateError, ItemHash};
use crate::budget::Budget;

/// Bytes accounted for the filter's own struct.
const FILTER_OVERHEAD: u64 = 48;
/// The most items a filter takes (its table's slots are indexed by `u32`).
pub const MAX_ITEMS: u64 = 3_500_000_000;

/// A static set: a builder, or the filter it was frozen into.
#[derive(Debug, PartialEq)]
pub struct StaticFilter {
    /// The requested false-positive rate of the frozen filter.
    pub error: f64,
    /// The capacity given at creation (a hint: a builder takes more).
    pub capacity: u64,
    pub state: State,
    /// A frozen value on its way in steps (`stage`), between a freeze's `STAGE` and `COMMIT`:
    /// on the primary as it propagates, on a replica or an AOF replay as it arrives. Saved
    /// with the builder (as far as it was propagated), never copied.
    pub stage: Option<Box<Stage>>,
}

#[derive(Debug, PartialEq)]
pub enum State {
    /// Every item's hash; shared with a running freeze while there is one.
    Building(Arc<HashSet>),
    Frozen(Frozen),
}

/// A frozen filter: its table and the items it was built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frozen {
    pub items: u64,
    pub table: Table,
}

/// A copy owns its hashes: it is never being frozen, and has no stage.
impl Clone for StaticFilter {
    fn clone(&self) -> Self {
        let state = match &self.state {
            State::Building(set) => State::Building(Arc::new(HashSet::clone(set))),
            State::Frozen(frozen) => State::Frozen(frozen.clone()),
        };
        StaticFilter {
            error: self.error,
            capacity: self.capacity,
            state,
            stage: None,
        }
    }
}

/// Fingerprint bits for a false-positive rate: ⌈log2(1/ε)⌉, or None below 2^-32.
pub fn width_for(error: f64) -> Option<u32> {
    if !(error > 0.0 && error < 1.0) {
        return None;
    }
    let bits = (-error.log2()).ceil().max(1.0);
    (bits <= f64::from(table::MAX_WIDTH)).then_some(bits as u32)
}

/// What a freeze works from: a shared snapshot of the builder's hashes.
pub struct FreezeJob {
    pub set: Arc<HashSet>,
    pub width: u32,
}

impl FreezeJob {
    /// Builds the frozen filter (seconds for 100M items: run it off the main thread).
    pub fn run(&self) -> Result<Frozen, BuildError> {
        let items = self.set.len();
        let table = build(|| self.set.iter(), items, self.width)?;
        Ok(Frozen { items, table })
    }

    /// [`FreezeJob::run`], counting in `read` the hashes the current attempt has read (each
    /// attempt reads them twice; a retry with another seed starts again from 0).
    pub fn run_counted(&self, read: &AtomicU64) -> Result<Frozen, BuildError> {
        let items = self.set.len();
        let hashes = || {
            read.store(0, Ordering::Relaxed);
            self.set.iter().inspect(|_| {
                read.fetch_add(1, Ordering::Relaxed);
            })
        };
        let table = build(hashes, items, self.width)?;
        Ok(Frozen { items, table })
    }

    /// The address of the hashes the job works from: it names the freeze.
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.set) as usize
    }

    /// Whether no builder shares the job's hashes any more.
    pub fn is_last(&self) -> bool {
        Arc::strong_count(&self.set) == 1
    }

    /// Bytes the run holds besides the builder: its working memory and the table.
    pub fn bytes(&self) -> u64 {
        let items = self.set.len();
        let table = shape_for(items, self.width).map_or(u64::MAX, |s| s.bytes());
        working_bytes(items, self.width).saturating_add(table)
    }
}

impl StaticFilter {
    /// The `Size` the filter frozen from `capacity` items at `error` reports (`BF.ESTIMATE`):
    /// the table a freeze builds for them.
    pub fn size_for(capacity: u64, error: f64) -> Result<u64, CreateError> {
        let width = width_for(error).ok_or(CreateError::Invalid)?;
        let shape = shape_for(capacity, width).map_err(|_| CreateError::TooLarge)?;
        Ok(FILTER_OVERHEAD + shape.bytes())
    }

    /// An empty builder.
    pub fn new(capacity: u64, error: f64) -> Result<Self, CreateError> {
        if capacity < 1 || width_for(error).is_none() {
            return Err(CreateError::Invalid);
        }
        Ok(StaticFilter {
            error,
            capacity,
            state: State::Building(Arc::default()),
            stage: None,
        })
    }

    /// The item hash every static set keeps (MurmurHash64A, as every kind's first hash).
    #[inline]
    pub fn hash(item: &[u8]) -> u64 {
        ItemHash::first(item)
    }

    pub fn width(&self) -> u32 {
        match &self.state {
            State::Frozen(frozen) => frozen.table.shape.width,
            State::Building(_) => width_for(self.error).unwrap_or(table::MAX_WIDTH),
        }
    }

    /// The false-positive rate: a builder's only false positives are items whose 64-bit hash
    /// equals one held (`n · 2^-64`); a frozen table's, a fingerprint match, `2^-w`.
    pub fn estimated_rate(&self) -> f64 {
        match &self.state {
            State::Building(set) => set.len() as f64 * 2f64.powi(-64),
            State::Frozen(frozen) => 2f64.powi(-(frozen.table.shape.width.min(64) as i32)),
        }
    }

    pub fn is_frozen(&self) -> bool {
        matches!(self.state, State::Frozen(_))
    }

    /// The [`FreezeJob::id`] of a freeze running from this builder.
    pub fn freeze_id(&self) -> Option<usize> {
        match &self.state {
            State::Building(set) if Arc::strong_count(set) > 1 => Some(Arc::as_ptr(set) as usize),
            _ => None,
        }
    }

    /// Whether a freeze is running from this builder.
    pub fn is_freezing(&self) -> bool {
        matches!(&self.state, State::Building(set) if Arc::strong_count(set) > 1)
    }

    /// Adds an item by its hash: true if it was new.
    pub fn add_hash(&mut self, hash: u64, budget: &impl Budget) -> Result<bool, AddError> {
        let State::Building(set) = &mut self.state else {
            return Err(AddError::Frozen);
        };
        let set = Arc::get_mut(set).ok_or(AddError::Freezing)?;
        if set.len() >= MAX_ITEMS && !set.contains(hash) {
            return Err(AddError::CannotGrow);
        }
        let room = FilterBudget(budget);
        let added = set.insert(hash, &room).map_err(|_| AddError::CannotGrow)?;
        // A new item makes any stage a table of other items. An item held already changes
        // nothing (and is not propagated), so the stage stays, as it does on replicas.
        if added {
            self.stage = None;
        }
        Ok(added)
    }

    pub fn add(&mut self, item: &[u8], budget: &impl Budget) -> Result<bool, AddError> {
        self.add_hash(Self::hash(item), budget)
    }

    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        match &self.state {
            State::Building(set) => set.contains(hash),
            State::Frozen(frozen) => frozen.table.contains(hash),
        }
    }

    pub fn contains(&self, item: &[u8]) -> bool {
        self.contains_hash(Self::hash(item))
    }

    /// Answers `contains` for every item; a frozen filter's slots are requested a few items
    /// ahead so their cache misses overlap.
    pub fn contains_each<'a>(
        &self,
        items: impl Iterator<Item = &'a [u8]>,
        mut answer: impl FnMut(bool),
    ) {
        let State::Frozen(frozen) = &self.state else {
            items.for_each(|item| answer(self.contains(item)));
            return;
        };
        crate::hash::lookahead(
            items,
            |item| {
                let hash = Self::hash(item);
                frozen.table.prefetch(hash);
                hash
            },
            |hash| frozen.table.contains(hash),
            answer,
        );
    }

    /// Distinct items held.
    pub fn card(&self) -> u64 {
        match &self.state {
            State::Building(set) => set.len(),
            State::Frozen(frozen) => frozen.items,
        }
    }

    /// Bytes reported (BF.INFO Size, MEMORY USAGE).
    pub fn reported_bytes(&self) -> u64 {
        FILTER_OVERHEAD
            + self.stage_bytes()
            + match &self.state {
                State::Building(set) => set.bytes(),
                State::Frozen(frozen) => frozen.table.slots.len() as u64,
            }
    }

    /// Hands every heap block to `hashes` or `slots` to move (active defragmentation). A
    /// builder being frozen stays where it is: the freeze reads it.
    pub fn relocate(
        &mut self,
        mut hashes: impl FnMut(&mut Vec<u64>),
        slots: impl FnOnce(&mut Vec<u8>),
    ) {
        match &mut self.state {
            State::Building(set) => {
                if let Some(set) = Arc::get_mut(set) {
                    set.relocate(&mut hashes);
                }
            }
            State::Frozen(frozen) => slots(&mut frozen.table.slots),
        }
    }

    /// A freeze of this builder, unless it is frozen or being frozen already.
    pub fn freeze_job(&self) -> Option<FreezeJob> {
        match &self.state {
            State::Building(set) if Arc::strong_count(set) == 1 => Some(FreezeJob {
                set: Arc::clone(set),
                width: self.width(),
            }),
            _ => None,
        }
    }

    /// Whether this is the builder `job` works from (the same shared hashes).
    pub fn is_frozen_by(&self, job: &FreezeJob) -> bool {
        matches!(&self.state, State::Building(set) if Arc::ptr_eq(set, &job.set))
    }

    /// Takes the frozen filter a job built, if this is still the builder the job started
    /// from (same shared set): O(1), the builder's hashes are freed when the job is dropped.
    pub fn adopt(&mut self, job: &FreezeJob, frozen: Frozen) -> bool {
        let ours = self.is_frozen_by(job);
        if ours {
            self.state = State::Frozen(frozen);
            self.stage = None;
        }
        ours
    }
}

/// The set's limit is the filter's: its own bytes plus the filter's overhead.
struct FilterBudget<'a, B: Budget>(&'a B);

impl<B: Budget> Budget for FilterBudget<'_, B> {
    fn limit(&self, current: u64) -> u64 {
        self.0
            .limit(current + FILTER_OVERHEAD)
            .saturating_sub(FILTER_OVERHEAD)
    }
}
