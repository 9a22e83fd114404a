//! Time-windowed Bloom filters: filters that forget. The window is split into `g`
//! generations of `window / g` each, aligned on the Unix epoch, and the `g` newest ones are
//! live. An item added at time `t` goes into the generation of `t`, which retires once `g`
//! newer slots have begun: so it answers 1 until at least `t + window·(g−1)/g` and is
//! forgotten no later than `t + window`.
//!
//! What a generation is is the [`Generation`] trait's: an ordinary scalable [`Chain`] (the
//! one hashing, sizing and chain walk; [`Windowed`], `bloomrsWN`) or a compact filter grown
//! by segments ([`CompactWindowed`], `bloomrsWC`). The window owns the clock, the ring of
//! held generations, the split of the error rate and the framing of the encodings.
//!
//! The core never reads a clock: every operation takes the caller's time in milliseconds.
//! Only [`Window::retire`] (which every write calls first) changes which generations are
//! held; lookups at a later time skip the generations that are logically retired without
//! modifying anything. The filter's clock never goes back: a time before its current slot
//! counts as the current slot.
//!
//! The error rate is split evenly across the `g` generations a lookup reads, and each
//! generation holds its share at every size (a chain tightens its links as RedisBloom's do;
//! a compact filter shares its rate among its splits), so the union answers a false positive
//! with probability at most the requested rate at every moment.

mod compact;
mod dump;
mod generation;
mod rdb;
mod ring;

pub use generation::Generation;

use crate::bloom::{AddError, Chain, CreateError, ItemHash};
use crate::budget::Budget;
use crate::rdb::LoadError;
pub use compact::CompactGeneration;
pub use ring::Ring;

/// Fewest generations a window may be split into: with one, an item could be forgotten the
/// instant after it was added.
pub const MIN_GENERATIONS: u32 = 2;
/// Most generations: each one costs `log2(g)` more bits per item and a probe per lookup.
pub const MAX_GENERATIONS: u32 = 32;
/// Generations when none is asked for.
pub const DEFAULT_GENERATIONS: u32 = 4;
/// Longest window: ten years (365-day), far beyond any feed's memory, and small enough
/// that slot arithmetic on Unix times in milliseconds never saturates.
pub const MAX_WINDOW_MS: u64 = 3650 * 86_400_000;

/// A window of RedisBloom chains (`bloomrsWN`).
pub type Windowed = Window<Chain>;
/// A window of compact filters grown by segments (`bloomrsWC`).
pub type CompactWindowed = Window<CompactGeneration>;

/// The first bytes of a `bloomrsWN` SCANDUMP header.
pub const MAGIC: &[u8; 8] = <Chain as Generation>::MAGIC;
/// The first bytes of a `bloomrsWC` SCANDUMP header.
pub const COMPACT_MAGIC: &[u8; 8] = <CompactGeneration as Generation>::MAGIC;
/// The RDB encoding of `bloomrsWN` values.
pub const ENCODING_VERSION: i32 = <Chain as Generation>::ENCODING_VERSION;
/// The RDB encoding of `bloomrsWC` values.
pub const COMPACT_ENCODING_VERSION: i32 = <CompactGeneration as Generation>::ENCODING_VERSION;

/// What a windowed filter is asked to hold: `capacity` items per window at `error`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowParams {
    pub window_ms: u64,
    pub generations: u16,
    pub capacity: u64,
    pub error: f64,
    pub growth: u32,
    pub scaling: bool,
    /// Whether the generations' links probe by spread hashing (`OPT_SPREAD`): every
    /// `bloomrsWN` value created now. A value written before it existed probes as
    /// RedisBloom's links, and keeps doing so in every generation it opens. Only kinds whose
    /// [`Generation::SPREADS`] take it.
    pub spread: bool,
}

impl WindowParams {
    /// Whether these parameters describe a window (a generation's own limits are checked
    /// when one is built).
    fn check(&self) -> Result<(), &'static str> {
        if !(MIN_GENERATIONS..=MAX_GENERATIONS).contains(&u32::from(self.generations)) {
            return Err("generations out of range");
        }
        // At least one millisecond per generation, so slot numbers never exceed the time.
        if self.window_ms < u64::from(self.generations) || self.window_ms > MAX_WINDOW_MS {
            return Err("window out of range");
        }
        if self.capacity < 1 || !(self.error > 0.0 && self.error < 1.0) || self.growth < 1 {
            return Err("capacity, error rate or expansion out of range");
        }
        Ok(())
    }

    /// Items each generation takes before it scales.
    pub fn generation_capacity(&self) -> u64 {
        self.capacity.div_ceil(u64::from(self.generations))
    }

    /// Each generation's share of the error budget.
    pub fn generation_error(&self) -> f64 {
        self.error / f64::from(self.generations)
    }
}

/// One slot of the window: the items added while it was the newest.
#[derive(Debug, Clone, PartialEq)]
pub struct Held<G> {
    /// Slot number: `floor(time · g / window)` of the times it covers.
    pub slot: u64,
    pub filter: G,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Window<G> {
    pub params: WindowParams,
    /// The newest slot the filter has been advanced to (its clock).
    pub slot: u64,
    /// The placement secret every generation is built with ([`Generation::KEYED`] kinds;
    /// zero otherwise).
    pub secret: u64,
    /// Held generations, oldest first; every one within `g` slots of `slot`.
    pub ring: Ring<Held<G>>,
}

impl<G: Generation> Window<G> {
    /// A new, empty filter (BF.RESERVE, auto-creation) whose clock is not set yet: the first
    /// write sets it. Nothing here depends on the time, so a replica or an AOF replay builds
    /// the same value; a generation is built now all the same, to check its size and that
    /// these parameters make one. A keyed kind places items by `secret` (chosen on the
    /// primary; ignored by the others).
    pub fn new(params: WindowParams, secret: u64, max_bytes: u64) -> Result<Self, CreateError> {
        params.check().map_err(|_| CreateError::Invalid)?;
        G::check_params(&params).map_err(|_| CreateError::Invalid)?;
        let secret = if G::KEYED { secret } else { 0 };
        let budget = max_bytes.saturating_sub(G::window_overhead() + G::GENERATION_OVERHEAD);
        G::build(&params, secret, budget)?;
        let filter = Self {
            params,
            slot: 0,
            secret,
            ring: Ring::new(),
        };
        // What exists can be loaded: the loader's validator, by construction.
        match filter.validate(max_bytes) {
            Ok(()) => Ok(filter),
            Err(LoadError::TooLarge) => Err(CreateError::TooLarge),
            Err(_) => Err(CreateError::Invalid),
        }
    }

    /// The bytes a window of `params` reports in a steady feed of its capacity: each of its
    /// generations holding its share (`BF.ESTIMATE`), as at the end of every slot.
    pub fn size_for(params: WindowParams) -> Result<u64, CreateError> {
        params.check().map_err(|_| CreateError::Invalid)?;
        G::check_params(&params).map_err(|_| CreateError::Invalid)?;
        let one = G::size_for(&params)?.saturating_add(G::GENERATION_OVERHEAD);
        Ok(G::window_overhead().saturating_add(one.saturating_mul(u64::from(params.generations))))
    }

    /// The slot `now_ms` falls in, never before the filter's own clock.
    pub fn slot_at(&self, now_ms: u64) -> u64 {
        slot_at(&self.params, now_ms).max(self.slot)
    }

    /// Whether a generation of `slot` is still live when the clock reads `current`.
    fn is_live(&self, slot: u64, current: u64) -> bool {
        slot.saturating_add(u64::from(self.params.generations)) > current
    }

    /// Advances the clock to `now_ms` and drops the generations that have left the window;
    /// returns how many were dropped. The only call that forgets.
    pub fn retire(&mut self, now_ms: u64) -> usize {
        self.slot = self.slot_at(now_ms);
        let before = self.ring.len();
        while let Some(oldest) = self.ring.first() {
            if self.is_live(oldest.slot, self.slot) {
                break;
            }
            self.ring.pop_front();
        }
        before - self.ring.len()
    }

    /// The generations live at `now_ms`, oldest first, whether or not retired yet.
    pub fn live(&self, now_ms: u64) -> impl DoubleEndedIterator<Item = &Held<G>> + '_ {
        let current = self.slot_at(now_ms);
        self.ring
            .iter()
            .filter(move |g| self.is_live(g.slot, current))
    }

    /// Whether some generation live at `now_ms` holds the item. Reads only.
    pub fn contains(&self, now_ms: u64, item: &[u8]) -> bool {
        self.contains_hash(now_ms, G::hash(item))
    }

    /// `contains` of an item's hash ([`Generation::hash`]).
    pub fn contains_hash(&self, now_ms: u64, hash: ItemHash) -> bool {
        self.live(now_ms)
            .rev()
            .any(|g| g.filter.contains_hash(hash))
    }

    /// Adds an item at `now_ms` (after retiring what has left the window): `Ok(true)` if no
    /// live generation held it. An item held only by an older generation is added to the
    /// newest too, so it is remembered for a whole window from now. Refused, changing
    /// nothing, while a generation's chunks are still arriving.
    pub fn add(&mut self, now_ms: u64, item: &[u8], budget: impl Budget) -> Result<bool, AddError> {
        if !self.is_loaded() {
            return Err(AddError::Loading);
        }
        self.retire(now_ms);
        let hash = G::hash(item);
        // The current slot's generation answers for itself when the item is added to it.
        let current = self.ring.last().is_some_and(|g| g.slot == self.slot);
        let older = self.ring.len() - usize::from(current);
        let seen = self
            .ring
            .iter()
            .take(older)
            .any(|g| g.filter.contains_hash(hash));
        let opened = self.open_generation(&budget)?;
        let others = self.reported_bytes_without_newest();
        let newest = self.ring.last_mut().ok_or(AddError::CannotGrow)?;
        let added = newest
            .filter
            .add_hash(hash, &self.params, Share { budget, others });
        if added.is_err() && opened {
            // A refused add changes nothing: a replica never sees it, so never the generation
            // it would have opened.
            self.ring.pop_back();
        }
        Ok(added? && !seen)
    }

    /// Makes sure the newest generation is the current slot's, building it if needed;
    /// whether it built one.
    fn open_generation(&mut self, budget: &impl Budget) -> Result<bool, AddError> {
        if self.ring.last().is_some_and(|g| g.slot == self.slot) {
            return Ok(false);
        }
        let held = self.reported_bytes();
        let room = budget
            .limit(held)
            .saturating_sub(held)
            .saturating_sub(G::GENERATION_OVERHEAD);
        let filter = G::build(&self.params, self.secret, room).map_err(|_| AddError::CannotGrow)?;
        self.ring.push_back(Held {
            slot: self.slot,
            filter,
        });
        Ok(true)
    }

    /// Whether every generation's chunks have arrived (a window loading by LOADCHUNK).
    pub fn is_loaded(&self) -> bool {
        self.ring.iter().all(|g| g.filter.is_loaded())
    }

    /// Items added to the generations live at `now_ms` (BF.CARD); an item added again in a
    /// later generation counts once in each.
    pub fn card(&self, now_ms: u64) -> u64 {
        self.live(now_ms)
            .fold(0u64, |sum, g| sum.saturating_add(g.filter.items()))
    }

    /// Items the window takes before any generation grows (BF.INFO Capacity): the live
    /// generations' capacities, and a fresh one's for each generation not yet opened.
    pub fn capacity(&self, now_ms: u64) -> u64 {
        let open = self.live(now_ms).count() as u64;
        let unopened = u64::from(self.params.generations).saturating_sub(open);
        self.live(now_ms)
            .map(|g| g.filter.capacity(&self.params))
            .fold(0u64, u64::saturating_add)
            .saturating_add(unopened.saturating_mul(self.params.generation_capacity()))
    }

    /// Filters over the live generations (BF.INFO Number of filters).
    pub fn links(&self, now_ms: u64) -> u64 {
        self.live(now_ms).map(|g| g.filter.filters()).sum()
    }

    /// Bytes held (BF.INFO Size, MEMORY USAGE): every held generation, retired or not.
    pub fn reported_bytes(&self) -> u64 {
        self.ring.iter().fold(G::window_overhead(), |sum, g| {
            sum.saturating_add(G::GENERATION_OVERHEAD)
                .saturating_add(g.filter.bytes())
        })
    }

    fn reported_bytes_without_newest(&self) -> u64 {
        let newest = self.ring.last().map_or(0, |g| g.filter.bytes());
        self.reported_bytes().saturating_sub(newest)
    }

    /// The first millisecond at which every held generation is retired: where a write arms
    /// the key's expiry. No later than a window after the current slot began.
    pub fn expires_at_ms(&self) -> u64 {
        self.expiry_after(0)
    }

    /// Where a write at `now_ms` arms the key's expiry: [`Window::expires_at_ms`] once the
    /// clock reads `now_ms`.
    pub fn expiry_after(&self, now_ms: u64) -> u64 {
        let slot = self.slot_at(now_ms);
        slot_start(
            &self.params,
            slot.saturating_add(u64::from(self.params.generations)),
        )
    }

    /// The integrity check every decoder ends with (RDB, RESTORE, LOADCHUNK): parameters in
    /// range, generations in slot order inside the window, every one shaped as this filter
    /// builds them, and the whole within `max_bytes`.
    pub fn validate(&self, max_bytes: u64) -> Result<(), LoadError> {
        let p = &self.params;
        p.check().map_err(LoadError::Invalid)?;
        G::check_params(p).map_err(LoadError::Invalid)?;
        if p.spread && !G::SPREADS {
            return Err(LoadError::Invalid("spread probes in a kind without them"));
        }
        if G::KEYED == (self.secret == 0) {
            return Err(LoadError::Invalid("secret"));
        }
        if self.slot > slot_at(p, u64::MAX) {
            return Err(LoadError::Invalid("slot beyond the last time"));
        }
        if self.ring.len() > p.generations as usize {
            return Err(LoadError::Invalid("more generations than the window holds"));
        }
        let mut previous: Option<u64> = None;
        for generation in &self.ring {
            if previous.is_some_and(|s| s >= generation.slot) {
                return Err(LoadError::Invalid("generations out of order"));
            }
            if generation.slot > self.slot || !self.is_live(generation.slot, self.slot) {
                return Err(LoadError::Invalid("generation outside the window"));
            }
            previous = Some(generation.slot);
            generation.filter.check_shape(p, self.secret)?;
        }
        if self.reported_bytes() > max_bytes {
            return Err(LoadError::TooLarge);
        }
        Ok(())
    }
}

/// The newest generation's part of the filter's budget: what the filter may reach, less what
/// the other generations hold.
struct Share<B> {
    budget: B,
    others: u64,
}

impl<B: Budget> Budget for Share<B> {
    fn limit(&self, current: u64) -> u64 {
        let whole = self.budget.limit(current.saturating_add(self.others));
        whole.saturating_sub(self.others)
    }
}

/// `floor(time · g / window)`: the slot a time falls in.
fn slot_at(params: &WindowParams, now_ms: u64) -> u64 {
    let slot = u128::from(now_ms) * u128::from(params.generations) / u128::from(params.window_ms);
    u64::try_from(slot).unwrap_or(u64::MAX)
}

/// `ceil(slot · window / g)`: the first millisecond of a slot.
fn slot_start(params: &WindowParams, slot: u64) -> u64 {
    let start =
        (u128::from(slot) * u128::from(params.window_ms)).div_ceil(u128::from(params.generations));
    u64::try_from(start).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod compact_tests;
#[cfg(test)]
mod rate_tests;
#[cfg(test)]
mod tests;
