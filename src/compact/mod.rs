//! Compact filters: one quotient table that doubles as items arrive, in the line of
//! InfiniFilter (Dayan et al., SIGMOD 2023) and Aleph Filter (PVLDB 2024), instead of a
//! chain of Bloom links. Lookups read one run of one table however far it grew (two runs
//! while a doubling is in progress, see `doubling`).
//!
//! An item's 128-bit hash (`ItemHash`, MurmurHash64A as the Bloom chains use) is read as a
//! bit string: the first `log2_slots` bits choose its quotient (slot), the next bits are its
//! fingerprint. Doubling the table moves one fingerprint bit into the quotient, so every
//! entry keeps being a prefix of its item's hash; an entry whose fingerprint ran out (void)
//! is copied into both halves (Aleph's rule), so no item is ever lost.
//!
//! The error bound. An entry whose quotient and fingerprint hold `b` bits of hash in all
//! matches a random absent item with probability `2^-b`, and doubling moves bits without
//! losing any, so each entry's share of the false-positive rate is fixed when it is added.
//! The entries added while the table had `2^q` slots (a generation: at most `LOAD/2` of the
//! table, `LOAD` for the first) so add at most `fill · 2^-r` where `r` is the fingerprint
//! length new entries get. `fingerprint_bits` gives generation `g` the share `share(g)` of
//! the requested rate, shares summing to 1 over all generations, so the expected rate stays
//! below the requested one at every size, right after an expansion included (an expansion
//! changes no entry's share). New entries get the longest fingerprint their slot holds, and
//! the slot width grows only when a generation's share needs a longer one.
//!
//! Deleting: each add stores an entry or counts one more add of the same fingerprint in its
//! run (in the deletable form, even for an item that reads present; see `counters`), and a
//! delete takes one count off the longest fingerprint matching the item. That keeps every
//! other added item present: if the removed entry was another item's, the deleted item's own
//! entry is no longer and matches it too (both are prefixes of the same longer prefix).
//! During a doubling the longest is taken over both tables, by the hash bits an entry holds
//! (quotient and fingerprint): the deleted item's own entry, in either table, is still a
//! prefix of the removed one and so of the other item's hash; if it is in the old table, its
//! old quotient is the other item's too and not moved yet, so the other item's lookup reads
//! it there. Moves keep every entry's prefix (voids copied into both halves), as a whole
//! doubling did.

mod codec;
mod counters;
mod doubling;
mod filter;
pub mod meter;
mod runs;
pub mod segments;
mod table;
mod walk;

pub use codec::{DOUBLING_ENCODING, MAGIC};
pub use filter::{Block, CompactFilter, CONVERT_SLOTS, ENCODING_VERSION};
pub use table::table_bytes;

/// The bytes a compact filter at `error` (`deletable`: with `COUNTING`) reports once it holds
/// `items` distinct items (`BF.ESTIMATE`; `bytes()` of the filter grown to them, within a
/// few percent).
pub fn size_for(items: u64, error: f64, deletable: bool) -> Result<u64, CreateError> {
    if !(MIN_ERROR..1.0).contains(&error) {
        return Err(CreateError::Invalid);
    }
    let held = segments::bytes_for(items, error, deletable).ok_or(CreateError::TooLarge)?;
    let own = segments::size_class(std::mem::size_of::<CompactFilter>() as u64);
    Ok(own + held - segments::OVERHEAD)
}

use crate::bloom::{AddError, CreateError, ItemHash};
use crate::budget::Budget;
use counters::Element;
pub use doubling::MIGRATED_PER_WRITE;
use doubling::{longest, take_one, Doubling};

use table::{Fingerprint, Table};

/// The smallest and largest tables (log2 of the slot count).
pub const MIN_LOG2_SLOTS: u32 = 6;
pub const MAX_LOG2_SLOTS: u32 = 40;
/// The tightest error rate a compact filter is created with: its newest entries' fingerprints
/// still fit a segment's longest (`segments::MAX_LEN`) in every generation up to the largest
/// directory (F5: a tighter one would stop growing millions of items in, where nobody had
/// been told of a limit).
pub const MIN_ERROR: f64 = 1e-12;
/// The tightest error rate of the doubling table (values of older encodings).
pub const DOUBLING_MIN_ERROR: f64 = 1.6e-14;
/// Field bits a slot may hold (a slot of `2 + width` bits is read in one 8-byte window).
pub const MAX_WIDTH: u32 = 55;
/// The table doubles before an add would take it past this load (tenths of its slots).
pub const LOAD_TENTHS: u64 = 9;
/// Generations sharing the first 90% of the error budget equally; later ones split the rest
/// in blocks of eight, each block half the one before.
const EVEN_GENERATIONS: u32 = 16;
const TAIL_BLOCK: u32 = 8;
/// Bytes of the value besides its table.
pub const OVERHEAD: u64 = std::mem::size_of::<Compact>() as u64;

/// A compact filter.
#[derive(Debug, Clone, PartialEq)]
pub struct Compact {
    /// The false-positive rate the filter stays within at every size.
    pub(crate) error: f64,
    /// Expansions since creation.
    pub(crate) generation: u32,
    /// Whether every add stores an entry, so items can be deleted (a multiset).
    pub(crate) deletable: bool,
    /// Items held: adds that stored an entry or counted one, less deletes.
    pub(crate) items: u64,
    /// Slots in use: entries and their counters (void entries copied by expansions count
    /// twice).
    pub(crate) entries: u64,
    /// Table bytes received so far while loading chunks (the whole table otherwise).
    pub(crate) received: u64,
    /// Fingerprint bits new entries get (`fingerprint_bits(error, generation)`, kept).
    pub(crate) fresh_bits: u32,
    /// Whether the table is still in encoding 1's form (a repeated entry per add, no
    /// counters): only while its chunks arrive; it is converted when complete.
    pub(crate) legacy: bool,
    /// Kept in this encoding for good: a complete value too large to convert within one
    /// command's bound, or one that cannot be converted (`CompactFilter::settled`). Saved
    /// (header and RDB flag bit 2), so that every server holding it keeps it alike.
    pub(crate) kept: bool,
    /// The table (during a doubling, the new one).
    pub(crate) table: Table,
    /// Slots the table's runs would take in the next table, kept exact (see `doubling`).
    pub(crate) moved: u64,
    /// Field bits of the next table (`next_width(error, generation)`, kept: every add and
    /// delete asks, and working it out walks every generation).
    pub(crate) next_width: u32,
    /// The doubling in progress, if any.
    pub(crate) doubling: Option<Doubling>,
    /// While chunks arrive: how far the validator's walk of the tables went.
    pub(crate) walks: Option<Box<codec::Walks>>,
}

/// Why an item could not be deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteError {
    /// The filter was created without deletes (adds of present items store nothing).
    NotDeletable,
    /// The filter is still being loaded chunk by chunk.
    Loading,
}

/// The summary BF.INFO and BF.DEBUG show.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Items the current table takes before it doubles.
    pub capacity: u64,
    /// Bytes of the value (BF.INFO Size).
    pub bytes: u64,
    /// One table (two during a doubling, reported as one filter).
    pub filters: u64,
    pub items: u64,
    /// Each expansion doubles the table.
    pub expansion: u64,
    pub error: f64,
    pub slots: u64,
    pub entries: u64,
    /// Fingerprint bits new entries get, and field bits per slot.
    pub fingerprint_bits: u32,
    pub width: u32,
    pub generation: u32,
    /// During a doubling: old quotients moved and the old table's slots.
    pub doubling: Option<(u64, u64)>,
}

/// Bytes a filter with a table of these dimensions occupies (its reported size).
pub fn value_bytes(log2_slots: u32, width: u32) -> Option<u64> {
    table_bytes(log2_slots, width)?
        .checked_add(table::offset_bytes(log2_slots))?
        .checked_add(OVERHEAD)
}

/// Slots an add may need: one for a new entry (and its reserve), or a counter's new pair.
const MOST_AN_ADD_NEEDS: u64 = 2;

/// Entries a table of `slots` slots takes before it doubles.
pub fn max_entries(slots: u64) -> u64 {
    slots / 10 * LOAD_TENTHS + slots % 10 * LOAD_TENTHS / 10
}

/// The share of the error budget generation `g` may use.
fn share(g: u32) -> f64 {
    if g < EVEN_GENERATIONS {
        0.9 / f64::from(EVEN_GENERATIONS)
    } else {
        let block = (g - EVEN_GENERATIONS) / TAIL_BLOCK;
        0.1 * 0.5f64.powi(block.min(1000) as i32 + 1) / f64::from(TAIL_BLOCK)
    }
}

/// Fingerprint bits generation `g`'s entries get: the fewest with `fill · 2^-r <= share · ε`.
pub fn fingerprint_bits(error: f64, g: u32) -> Option<u32> {
    let load = LOAD_TENTHS as f64 / 10.0;
    let fill = if g == 0 { load } else { load / 2.0 };
    let allowed = error * share(g);
    (1..MAX_WIDTH).find(|&r| (1u64 << r) as f64 * allowed >= fill)
}

/// Field bits the slots of generation `g`'s table have: room for the longest fingerprint
/// held (new ones, or older ones a bit shorter per expansion since), plus the marker bit.
pub fn width_for(error: f64, g: u32) -> Option<u32> {
    let mut longest = 0u32;
    for gen in 0..=g {
        longest = fingerprint_bits(error, gen)?.max(longest.saturating_sub(1));
    }
    Some(longest + 1).filter(|w| *w <= MAX_WIDTH)
}

/// Field bits of the table after generation `g`'s (`width`, its own, if there is none: then
/// no doubling starts, and `moved` is only kept).
pub fn next_width(error: f64, g: u32, width: u32) -> u32 {
    width_for(error, g + 1).unwrap_or(width)
}

/// The quotient and the `width - 1` fingerprint bits after it of `hash` in `table`.
#[inline]
fn locate(table: &Table, hash: ItemHash) -> (u64, u64) {
    let q = table.log2_slots;
    let bits = (u128::from(hash.a) << 64) | u128::from(hash.b);
    let quotient = (bits >> (128 - q)) as u64;
    let query = ((bits << q) >> (128 - (table.width - 1))) as u64;
    (quotient, query)
}

impl Compact {
    /// A new empty filter whose first table takes `capacity` items (at least the smallest
    /// table, at most the largest), refused if the error rate is not in (0, 1), needs
    /// fingerprints longer than a slot holds, or the table would exceed the budget.
    pub fn new(
        capacity: u64,
        error: f64,
        deletable: bool,
        budget: impl Budget,
    ) -> Result<Compact, CreateError> {
        if !(DOUBLING_MIN_ERROR..1.0).contains(&error) {
            return Err(CreateError::Invalid);
        }
        let width = width_for(error, 0).ok_or(CreateError::Invalid)?;
        let log2_slots = (MIN_LOG2_SLOTS..=MAX_LOG2_SLOTS)
            .find(|&q| max_entries(1 << q) >= capacity)
            .ok_or(CreateError::TooLarge)?;
        let bytes = value_bytes(log2_slots, width).ok_or(CreateError::TooLarge)?;
        if bytes > budget.limit(0) {
            return Err(CreateError::TooLarge);
        }
        let table = Table::new(log2_slots, width).ok_or(CreateError::TooLarge)?;
        Ok(Compact {
            fresh_bits: fingerprint_bits(error, 0).ok_or(CreateError::Invalid)?,
            error,
            generation: 0,
            deletable,
            items: 0,
            entries: 0,
            received: table.bytes.len() as u64,
            legacy: false,
            kept: false,
            table,
            moved: 0,
            next_width: next_width(error, 0, width),
            doubling: None,
            walks: None,
        })
    }

    /// A filter holding the items of these hashes (a sparse filter's, say), in their order.
    pub fn from_hashes(
        hashes: impl ExactSizeIterator<Item = ItemHash>,
        error: f64,
        deletable: bool,
        budget: impl Budget,
    ) -> Result<Compact, CreateError> {
        let mut filter = Compact::new(hashes.len() as u64, error, deletable, &budget)?;
        for hash in hashes {
            filter
                .add_hash(hash, &budget)
                .map_err(|_| CreateError::TooLarge)?;
        }
        Ok(filter)
    }

    /// An item's hashes (MurmurHash64A, as every chain created today).
    #[inline]
    pub fn hash(item: &[u8]) -> ItemHash {
        ItemHash::of(item, true)
    }

    /// The quotient and the `width - 1` fingerprint bits that follow it in the hash.
    #[inline]
    fn locate(&self, hash: ItemHash) -> (u64, u64) {
        locate(&self.table, hash)
    }

    /// Where an add of `hash` goes: its quotient and the field of its new fingerprint.
    fn fresh(&self, hash: ItemHash) -> (u64, u64) {
        let (quotient, query) = self.locate(hash);
        let r = self.fresh_bits;
        let fingerprint = Fingerprint {
            bits: query >> (self.table.width - 1 - r),
            len: r,
        };
        (quotient, fingerprint.field(self.table.width))
    }

    /// The element of quotient `x`'s run holding exactly `field`, if any.
    fn equal(&self, x: u64, field: u64) -> Option<Element> {
        let run = self.table.run(x)?;
        self.table.run_elements(run).find(|e| e.field == field)
    }

    #[inline]
    pub fn contains(&self, item: &[u8]) -> bool {
        self.contains_hash(Self::hash(item))
    }

    #[inline]
    pub fn contains_hash(&self, hash: ItemHash) -> bool {
        // Between LOADCHUNK calls the table is not validated yet: nothing is read, and every
        // item reads absent (F3; writes are refused then).
        if !self.is_loaded() {
            return false;
        }
        let (quotient, query) = self.locate(hash);
        self.table.contains(quotient, query)
            || self.doubling.as_ref().is_some_and(|d| d.holds(hash))
    }

    /// Starts loading the slots a lookup of `hash` reads first (for batches).
    #[inline]
    pub fn prefetch(&self, hash: ItemHash) {
        let (quotient, _) = self.locate(hash);
        self.table.prefetch(quotient);
    }

    /// Answers `contains` for every item in order, hashing and prefetching a few items
    /// ahead so the cache misses of a large table overlap (BF.MEXISTS).
    pub fn contains_each<'a>(
        &self,
        items: impl Iterator<Item = &'a [u8]>,
        answer: impl FnMut(bool),
    ) {
        crate::hash::lookahead(
            items,
            |item| {
                let hash = Self::hash(item);
                self.prefetch(hash);
                hash
            },
            |hash| self.contains_hash(hash),
            answer,
        );
    }

    /// Adds an item: `Ok(true)` if it did not read present before. `CannotGrow` when the
    /// table had to double and the budget (or the largest table) refused, `Loading` while its
    /// chunks arrive; nothing changed.
    pub fn add(&mut self, item: &[u8], budget: impl Budget) -> Result<bool, AddError> {
        self.add_hash(Self::hash(item), budget)
    }

    pub fn add_hash(&mut self, hash: ItemHash, budget: impl Budget) -> Result<bool, AddError> {
        if !self.is_loaded() {
            return Err(AddError::Loading);
        }
        let present = self.contains_hash(hash);
        if present && !self.deletable {
            self.migrate(MIGRATED_PER_WRITE);
            return Ok(false);
        }
        // Room first: a refused add changes nothing (it is not propagated), and a move never
        // takes room an add was promised.
        self.make_room(&budget)?;
        if !self.migrate(MIGRATED_PER_WRITE) {
            return Err(AddError::CannotGrow);
        }
        let beside_old = self.doubling.as_ref().is_some_and(|d| d.holds(hash));
        let (quotient, field) = self.fresh(hash);
        let before = self.cost_at(quotient);
        let used = match self.equal(quotient, field) {
            Some(e) => self
                .table
                .set_count(quotient, e, e.count.saturating_add(1))
                .ok_or(AddError::CannotGrow)?,
            None if self.table.insert(quotient, field) => {
                // An old entry this item matches may merge with the new one when it moves.
                if let Some(d) = self.doubling.as_mut().filter(|_| beside_old) {
                    d.reserve = d.reserve.saturating_add(1);
                }
                1
            }
            None => return Err(AddError::CannotGrow),
        };
        self.recost(quotient, before);
        self.entries = self.entries.saturating_add_signed(used);
        self.items = self.items.saturating_add(1);
        Ok(!present)
    }

    /// Deletes one add of an item: `Ok(false)` if nothing matches it. Deleting an item that
    /// was added never makes another added item absent (see the module notes); deleting one
    /// that was not may remove another item's entry, as `CF.DEL` may.
    pub fn delete(&mut self, item: &[u8]) -> Result<bool, DeleteError> {
        self.delete_hash(Self::hash(item))
    }

    pub fn delete_hash(&mut self, hash: ItemHash) -> Result<bool, DeleteError> {
        if !self.deletable {
            return Err(DeleteError::NotDeletable);
        }
        if !self.is_loaded() {
            return Err(DeleteError::Loading);
        }
        if !self.migrate(MIGRATED_PER_WRITE) {
            return Ok(false);
        }
        // The longest match of both tables, by the hash bits its entry holds.
        let (quotient, query) = self.locate(hash);
        let new = longest(&self.table, quotient, query);
        let old = self.doubling.as_ref().and_then(|d| {
            let (x, query) = locate(&d.old, hash);
            longest(&d.old, x, query)
                .filter(|_| x >= d.cursor)
                .map(|found| (x, found))
        });
        let used = match (new, old) {
            (new, Some((x, (bits, element, run))))
                if new.is_none_or(|(best, _, _)| bits > best) =>
            {
                let (width, deletable) = (self.table.width, self.deletable);
                let Some(d) = self.doubling.as_mut() else {
                    return Ok(false);
                };
                let before = doubling::run_cost(&d.old, x, width, deletable);
                if take_one(&mut d.old, x, run, element).is_none() {
                    return Ok(false);
                }
                let after = doubling::run_cost(&d.old, x, width, deletable);
                d.pending = d.pending.saturating_sub(before).saturating_add(after);
                0
            }
            (Some((_, element, run)), _) => {
                let before = self.cost_at(quotient);
                let Some(used) = take_one(&mut self.table, quotient, run, element) else {
                    return Ok(false);
                };
                self.recost(quotient, before);
                used
            }
            (None, _) => return Ok(false),
        };
        self.entries = self.entries.saturating_add_signed(used);
        self.items = self.items.saturating_sub(1);
        Ok(true)
    }

    /// Whether every chunk of a LOADCHUNK sequence has arrived (always, otherwise).
    pub fn is_loaded(&self) -> bool {
        self.received == self.stream_len()
    }

    /// Bytes of the tables as SCANDUMP sends them: the table, then a doubling's old table.
    pub(crate) fn stream_len(&self) -> u64 {
        let old = self
            .doubling
            .as_ref()
            .map_or(0, |d| d.old.bytes.len() as u64);
        self.table.bytes.len() as u64 + old
    }

    /// Items held (BF.CARD).
    pub fn len(&self) -> u64 {
        self.items
    }

    pub fn is_empty(&self) -> bool {
        self.items == 0
    }

    pub fn is_deletable(&self) -> bool {
        self.deletable
    }

    pub fn error(&self) -> f64 {
        self.error
    }

    /// Bytes the value occupies (BF.INFO Size, MEMORY USAGE).
    /// Both tables during a doubling.
    pub fn bytes(&self) -> u64 {
        let held = |t: &Table| t.bytes.len() as u64 + 2 * t.offsets.len() as u64;
        OVERHEAD + held(&self.table) + self.doubling.as_ref().map_or(0, |d| held(&d.old))
    }

    /// The table's bytes, for the digest and the allocator.
    pub fn table_bytes(&self) -> &[u8] {
        &self.table.bytes
    }

    /// A doubling's old table bytes, for the digest.
    pub fn old_table_bytes(&self) -> Option<&[u8]> {
        self.doubling.as_ref().map(|d| d.old.bytes.as_slice())
    }

    /// The tables' storage, for the allocator to move (active defragmentation) and nothing
    /// else.
    pub fn tables_for_relocation(&mut self) -> impl Iterator<Item = &mut Vec<u8>> {
        let old = self.doubling.as_mut().map(|d| &mut d.old.bytes);
        std::iter::once(&mut self.table.bytes).chain(old)
    }

    pub fn summary(&self) -> Summary {
        Summary {
            capacity: max_entries(self.table.slots()),
            bytes: self.bytes(),
            filters: 1,
            items: self.items,
            expansion: 2,
            error: self.error,
            slots: self.table.slots(),
            entries: self.entries,
            fingerprint_bits: self.fresh_bits,
            width: self.table.width,
            generation: self.generation,
            doubling: self.doubling.as_ref().map(|d| (d.cursor, d.old.slots())),
        }
    }

    /// BF.DEBUG lines: the table's shape and fill.
    pub fn debug_lines(&self) -> Vec<String> {
        let s = self.summary();
        let mut lines = vec![
            format!(
                "compact items:{} entries:{} capacity:{} bytes:{}",
                s.items, s.entries, s.capacity, s.bytes
            ),
            format!(
                "table slots:{} slot bits:{} fingerprint bits:{} expansions:{} error:{} deletable:{}",
                s.slots,
                s.width + 2,
                s.fingerprint_bits,
                s.generation,
                crate::bloom::format_g(s.error),
                u8::from(self.deletable)
            ),
        ];
        if let Some((cursor, slots)) = s.doubling {
            lines.push(format!("doubling moved:{cursor} of:{slots}"));
        }
        lines
    }
}

#[cfg(test)]
mod design;
#[cfg(test)]
mod doubling_tests;
#[cfg(test)]
mod filter_tests;
#[cfg(test)]
mod measure;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod walk_tests;
