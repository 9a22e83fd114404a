//! Compact filters that grow a segment at a time (issue 32): linear hashing over segments,
//! each a small sorted set of fingerprints (see `segment`). Nothing is ever held twice and
//! no step rewrites more than one segment, so memory follows the items at every size.
//!
//! An item's bit string (`placement`) is read first bit first: the first `level` bits (one
//! more below the split pointer) choose its segment, the bits after them are its
//! fingerprint. When the entries pass `SEGMENT_ITEMS` per segment, the segment at the split
//! pointer splits into itself and `pointer + 2^level` by the first fingerprint bit of each
//! entry, which so moves into the address: every entry stays a prefix of its item's string.
//! An entry with no fingerprint bits left (a void) matches every item of the address it
//! was made at: it stays in that segment, its home, and the lookups of every segment its
//! address covers find it there (`voids`), so a split copies nothing and a delete takes its
//! count off the one void there is.
//!
//! The error bound, as in the doubling table: an entry holding `b` bits of the string in all
//! (address and fingerprint) matches a random absent item with probability `2^-b`, and a
//! split moves bits without losing any. The entries added while the directory has `2^level`
//! to `2^(level+1)` segments (generation `level - first_level`) are at most
//! `SEGMENT_ITEMS · 2^level` (for the first, one more than `SEGMENT_ITEMS` for each segment
//! short of `2^(first_level + 1)`: `generation_entries`), and get `total_bits(g)` bits in
//! all, enough for `share(g)` of the rate and what earlier generations' whole bits left
//! unused; the shares sum to 1, so the rate stays within the requested one at every size (for filters that only add; deletes followed by adds
//! can hold more entries of one generation than it was sized for).
//!
//! Deletes take one count off the longest entry matching the item in its segment, which
//! keeps every other added item present (the argument of the doubling table's notes).

mod codec;
mod convert;
mod directory;
mod estimate;
mod loader;
mod one;
mod placement;
mod segment;
mod voids;

pub use codec::{header_version, load, Arrival, Loaded, HEADER_LEN, SEGMENTS_HEADER};
pub use estimate::bytes_for;
pub use loader::Fields;
pub use one::OneSegment;
pub use placement::bits as placement_bits;
#[cfg(test)]
pub use segment::segment_bytes;
pub use segment::{Entry, Segment, MAX_COUNT};

use segment::{add_entry, Edit};

use crate::bloom::{AddError, CreateError, ItemHash, MAX_ITEMS};
use crate::budget::Budget;
use crate::compact::DeleteError;
use directory::Directory;
use placement::address;
use voids::Voids;

/// The fewest entries per segment before the next split (on average over the directory);
/// a filter's own threshold (`split_items`) lies between this and twice it.
pub const SEGMENT_ITEMS: u64 = 512;
/// The most distinct entries one segment may hold: an add that would pass it folds its item
/// into an entry there (`Segmented::overflow`) and the loader refuses a segment past it, so
/// no command's work on a segment grows beyond it. Random items reach it with probability far
/// below `2^-1000` (a segment holds a filter's `split_items`, below `2 * SEGMENT_ITEMS`, to
/// twice that on average); items chosen
/// to collide cannot be found without the filter's secret.
pub const MAX_SEGMENT_ENTRIES: u64 = 8 * SEGMENT_ITEMS;
/// The longest fingerprint an entry holds.
pub const MAX_LEN: u32 = 60;
/// The most splits of the first segment (a directory of `2^MAX_LEVEL` segments).
pub const MAX_LEVEL: u32 = 40;
/// Generations sharing the first 90 % of the error budget equally; later ones split the rest
/// in blocks of eight, each half the one before.
pub const FLAT_GENERATIONS: u32 = 12;
const TAIL_BLOCK: u32 = 8;
/// Segments' bytes from which BF.MEXISTS requests each item's bucket before its lookup (in
/// the server: 0.82-0.89x the time of BF.MEXISTS of 40 at 1,000,000 items, 0.96-1.13x at
/// 100,000, whose segments stay in the caches), and its directory slot before its header
/// (0.89x again at 1,000,000: the header's request had waited for the slot).
const DEEP_PREFETCH_BYTES: u64 = 1 << 20;
/// Bytes of the value besides its directory and segments.
pub const OVERHEAD: u64 = std::mem::size_of::<Segmented>() as u64;

/// The allocator's size class of a request (jemalloc's, as Redis and Valkey ship it).
pub const fn size_class(bytes: u64) -> u64 {
    match bytes {
        0 => 0,
        1..=8 => 8,
        9..=128 => bytes.div_ceil(16) * 16,
        _ => {
            // Four classes a power of two; rounded up by a mask, not a division (an add
            // works its segment's classes out).
            let step = 1u64 << (63 - (bytes - 1).leading_zeros() - 2);
            (bytes + step - 1) & !(step - 1)
        }
    }
}

/// The share of the error budget generation `g` may use.
pub fn share(g: u32) -> f64 {
    if g < FLAT_GENERATIONS {
        0.9 / f64::from(FLAT_GENERATIONS)
    } else {
        let block = (g - FLAT_GENERATIONS) / TAIL_BLOCK;
        0.1 * 0.5f64.powi(block.min(1000) as i32 + 1) / f64::from(TAIL_BLOCK)
    }
}

/// Entries per segment before the next split, for a filter at `error`: the most, from
/// `SEGMENT_ITEMS` to twice it less one, that generation 0 of a filter of one segment (one
/// more) fills to its share of the rate at whole bits, `2^b · share(0) · error` for the `b`
/// that puts it in that range. Each later generation then holds exactly twice the entries of
/// the one before at exactly one bit more, so every flat generation's bits are whole with
/// nothing left over, and every generation is as dense among its values as the others: a
/// threshold of a power of two left a fraction of a bit over at each generation (carried on,
/// which made the bits rise in pairs, 20, 20, 22, 22, ... at 1 %), and a segment's
/// generations twice as dense as each other, which the marker bit of a padded list pays for.
/// The larger segments also share their header, samples and slot among more entries. Exact
/// arithmetic (a power of two and two products of the rate), so every machine agrees.
pub fn split_items(error: f64) -> u64 {
    let least = SEGMENT_ITEMS as f64;
    let per_entry = share(0) * error;
    let most = match whole_log2((least + 2.0) / per_entry).and_then(|b| i32::try_from(b).ok()) {
        // Two less than what fits: the product is rounded, and generation 0 holds one more.
        Some(b) => (power_of_two(b) * per_entry).floor() - 2.0,
        None => least,
    };
    (most as u64).clamp(SEGMENT_ITEMS, 2 * SEGMENT_ITEMS - 1)
}

/// Bits of the string (address and fingerprint) generation `g`'s entries hold, for a
/// filter created with `2^first_level` segments or more: the fewest whole bits that keep
/// the generation's entries within the rate it may use, its share and what the generations
/// before it left unused. Whole bits use less than the share asked (at 1 % a generation's
/// entries match 0.049 of the rate where its share is 0.075); the rest is carried on, so a
/// later generation gets a bit less whenever what is carried allows it, and the rate used by
/// generations `0..=g` never passes the sum of their shares: the bound holds at every size.
/// Only exact arithmetic (products, quotients, powers of two) decides, so every machine
/// finds the same bits.
pub fn total_bits(error: f64, first_level: u32, g: u32) -> Option<u32> {
    let mut carried = 0.0;
    let mut bits = 0;
    for i in 0..=g {
        let most = generation_entries(error, first_level, i)?;
        let allowed = share(i) + carried;
        // Never fewer than the generation before (the loader bounds a segment's entries by
        // the newest generation's bits): only generation 1 could, its entries not quite
        // twice generation 0's and its share raised by what generation 0 left.
        bits = whole_log2(most / (allowed * error))?.max(bits);
        let used = most * power_of_two(-i32::try_from(bits).ok()?) / error;
        carried = (allowed - used).max(0.0);
    }
    (bits <= first_level + g + MAX_LEN).then_some(bits)
}

/// The most entries generation `i` of a filter at `error` created with `2^first_level`
/// segments or more may hold. Generation 0 lasts until the directory reaches
/// `2^(first_level + 1)` segments: the last split into that many comes when the entries pass
/// `split_items` for each of the one fewer, so the new entry it brings is the last of
/// generation 0. A later generation `i` ends at twice the segments it began with: the entries
/// added meanwhile are at most `split_items` for each segment it began with. Exact in `f64`.
fn generation_entries(error: f64, first_level: u32, i: u32) -> Option<f64> {
    let items = split_items(error) as f64;
    Some(match i {
        0 => items * (power_of_two(i32::try_from(first_level + 1).ok()?) - 1.0) + 1.0,
        _ => items * power_of_two(i32::try_from(first_level + i).ok()?),
    })
}

/// `2^k`, exactly (`k` within the normal exponents).
fn power_of_two(k: i32) -> f64 {
    f64::from_bits(((1023 + k.clamp(-1022, 1023)) as u64) << 52)
}

/// The smallest whole `b` with `x <= 2^b`, read from `x`'s exponent and mantissa; `None`
/// unless `x` is finite and at least 1.
fn whole_log2(x: f64) -> Option<u32> {
    if !(1.0..f64::MAX).contains(&x) {
        return None;
    }
    let raw = x.to_bits();
    let exponent = ((raw >> 52) & 0x7ff) as u32 - 1023;
    Some(exponent + u32::from(raw & ((1 << 52) - 1) != 0))
}

/// Address bits of segment `at` in a directory split to `pointer` at `level`.
fn address_bits_at(level: u32, pointer: u64, at: u64) -> u32 {
    level + u32::from(at < pointer || at >> level != 0)
}

/// A compact filter grown by segments.
#[derive(Debug, Clone, PartialEq)]
pub struct Segmented {
    pub(crate) error: f64,
    pub(crate) deletable: bool,
    /// Keys the placement (zero: none, for filters converted from older encodings).
    pub(crate) secret: u64,
    /// The level at creation (generation 0).
    pub(crate) first_level: u8,
    /// Segments `0..pointer` and `2^level..` are split at this level.
    pub(crate) level: u8,
    pub(crate) pointer: u64,
    /// Adds that stored an entry or counted one, less deletes.
    pub(crate) items: u64,
    /// Distinct entries over all segments.
    pub(crate) entries: u64,
    /// Bits in all new entries get (`total_bits` of this generation; kept).
    pub(crate) fresh_bits: u8,
    /// Entries per segment before the next split (`split_items` of the rate; kept).
    pub(crate) split_items: u16,
    /// Bytes of the segments' allocations (kept: every add asks).
    pub(crate) segment_bytes: u64,
    pub(crate) directory: Directory,
    /// Where the voids lie (derived from the segments).
    pub(crate) voids: Voids,
}

/// What an add changes, worked out before anything is: a refused add changes nothing.
struct Plan {
    at: u64,
    /// The edit of segment `at` (none when it is the one split: the halves hold the add).
    edit: Option<Edit>,
    /// The halves of the segment at the split pointer, and how many entries they hold more
    /// than it (the voids both hold, less the entries merged with them).
    split: Option<(Segment, Segment, i64)>,
    added_entry: bool,
    /// Bytes segment `at` takes before the add.
    at_bytes: u64,
}

impl Segmented {
    /// A new empty filter with room for `capacity` items before its first split (one
    /// segment at least), placing items by `secret` (not zero: chosen on the primary).
    pub fn new(
        capacity: u64,
        error: f64,
        deletable: bool,
        secret: u64,
        budget: impl Budget,
    ) -> Result<Segmented, CreateError> {
        if !(f64::MIN_POSITIVE..1.0).contains(&error) {
            return Err(CreateError::Invalid);
        }
        let split_items = split_items(error);
        let count = capacity.div_ceil(split_items).max(1);
        let level = 63 - count.leading_zeros();
        if level >= MAX_LEVEL {
            return Err(CreateError::TooLarge);
        }
        let fresh_bits = total_bits(error, level, 0)
            .and_then(|b| u8::try_from(b).ok())
            .ok_or(CreateError::Invalid)?;
        let small = u8::try_from(level).map_err(|_| CreateError::TooLarge)?;
        let mut filter = Segmented {
            error,
            deletable,
            secret,
            first_level: small,
            level: small,
            pointer: count - (1 << level),
            items: 0,
            entries: 0,
            fresh_bits,
            split_items: split_items as u16,
            segment_bytes: 0,
            directory: Directory::default(),
            voids: Voids::default(),
        };
        for _ in 0..count {
            if filter.bytes() + filter.directory.push_bytes() > budget.limit(0) {
                return Err(CreateError::TooLarge);
            }
            filter.directory.push(Segment::default());
        }
        Ok(filter)
    }

    /// An item's hashes (MurmurHash64A, as every compact filter).
    #[inline]
    pub fn hash(item: &[u8]) -> ItemHash {
        ItemHash::of(item, true)
    }

    /// The hashes this filter's placement reads (`placement::bits`): both for a filter
    /// without a secret, only the first for a keyed one, whose string is mixed from the
    /// first alone; the second would be a second pass of MurmurHash64A over the item,
    /// seeded by the first, for nothing.
    #[inline]
    fn hash_of(&self, item: &[u8]) -> ItemHash {
        match self.secret {
            0 => Self::hash(item),
            _ => ItemHash {
                a: ItemHash::first(item),
                b: 0,
            },
        }
    }

    /// The segment of an item's string and the string after its address.
    #[inline]
    fn locate(&self, bits: u128) -> (u64, u128) {
        let low = address(bits, u32::from(self.level));
        if low < self.pointer {
            let level = u32::from(self.level) + 1;
            (address(bits, level), bits << level)
        } else {
            (low, bits << u32::from(self.level))
        }
    }

    /// Address bits of segment `at`.
    fn address_bits(&self, at: u64) -> u32 {
        address_bits_at(u32::from(self.level), self.pointer, at)
    }

    #[inline]
    pub fn contains(&self, item: &[u8]) -> bool {
        self.contains_hash(self.hash_of(item))
    }

    #[inline]
    pub fn contains_hash(&self, hash: ItemHash) -> bool {
        self.contains_bits(placement_bits(hash, self.secret))
    }

    #[inline]
    fn contains_bits(&self, bits: u128) -> bool {
        let (at, tail) = self.locate(bits);
        self.directory.get(at).is_some_and(|s| s.contains(tail))
            || self.voids.covering(at).is_some()
    }

    /// Answers `contains` for every item in order (BF.MEXISTS), placing and prefetching a
    /// few items ahead so that the segments' cache misses overlap.
    pub fn contains_each<'a>(
        &self,
        items: impl Iterator<Item = &'a [u8]>,
        answer: impl FnMut(bool),
    ) {
        // On filters larger than the caches every wait of a lookup is requested a stage
        // ahead, `BEHIND` items apart: an item's directory slot when it is placed, its header
        // once the slot has arrived (the slot holds where the words are), the words of its
        // bucket once the header has, and its lookup last (`lookahead`: 8 items after its
        // placing). On smaller ones the slot and the header are at hand, the header is
        // requested when the item is placed, and the rest costs more than it saves.
        const BEHIND: usize = 2;
        type Placed<'s> = (u128, Option<&'s Segment>);
        // Voids come only past millions of items at loose rates: their look-up is one
        // item at a time.
        if !self.voids.is_empty() {
            let mut answer = answer;
            return items.for_each(|item| answer(self.contains(item)));
        }
        let deep = self.segment_bytes >= DEEP_PREFETCH_BYTES;
        let mut slots: [Placed; BEHIND] = Default::default();
        let mut headers: [Placed; BEHIND] = Default::default();
        let mut placed = 0usize;
        crate::hash::lookahead(
            items,
            |item| {
                let (at, tail) = self.locate(placement_bits(self.hash_of(item), self.secret));
                let segment = self.directory.get(at);
                if !deep {
                    if let Some(segment) = segment {
                        segment.prefetch();
                    }
                    return (tail, segment);
                }
                if let Some(segment) = segment {
                    crate::bloom::link::prefetch((segment as *const Segment).cast());
                }
                let k = placed % BEHIND;
                placed += 1;
                let (Some(slot), Some(header)) = (slots.get_mut(k), headers.get_mut(k)) else {
                    return (tail, segment);
                };
                let arrived = std::mem::replace(slot, (tail, segment));
                if let (_, Some(earlier)) = arrived {
                    earlier.prefetch();
                }
                if let (earlier_tail, Some(earlier)) = std::mem::replace(header, arrived) {
                    earlier.prefetch_bucket(earlier_tail);
                }
                (tail, segment)
            },
            |(tail, segment)| segment.is_some_and(|s| s.contains(tail)),
            answer,
        );
    }

    pub fn add(&mut self, item: &[u8], budget: impl Budget) -> Result<bool, AddError> {
        self.add_hash(self.hash_of(item), budget)
    }

    /// Adds an item: `Ok(true)` if it did not read present before. `CannotGrow` when the
    /// budget refused the memory the add (and the split it brings) needs, or the directory
    /// is at its largest; nothing changed then. A segment at its bound takes the item into
    /// an entry it holds (`overflow`).
    pub fn add_hash(&mut self, hash: ItemHash, budget: impl Budget) -> Result<bool, AddError> {
        let bits = placement_bits(hash, self.secret);
        let (at, tail) = self.locate(bits);
        let len = self.entry_len(at);
        let segment = self.directory.get(at);
        if let Some(s) = segment {
            s.prefetch_tail();
        }
        // Whether the item reads present, and the edit that adds its entry, from one read.
        let (present, edit) = match (segment, len) {
            (Some(s), Some(len)) => s.probe_add(tail, len, self.deletable),
            (Some(s), None) => (s.contains(tail), None),
            (None, _) => (false, None),
        };
        let present = present || self.voids.covering(at).is_some();
        if present && !self.deletable {
            return Ok(false);
        }
        // Only a crafted value comes near it: refused before anything changes.
        if self.items >= MAX_ITEMS {
            return Err(AddError::CannotGrow);
        }
        let new = len.map(|len| Entry {
            len,
            fingerprint: segment::prefix(tail, len),
            count: 1,
        });
        let plan = new
            .zip(edit)
            .and_then(|(new, edit)| self.plan(at, new, edit));
        let Some(plan) = plan else {
            return self.overflow(bits, budget).map(|()| !present);
        };
        // Only an add that takes more memory asks the budget (most take none: a segment's
        // allocation grows by size classes), as the chain asks only for a new link.
        let (before, after) = (self.bytes(), self.bytes_after(&plan));
        if after > before && after > budget.limit(before) {
            return Err(AddError::CannotGrow);
        }
        self.commit(plan);
        self.items = self.items.saturating_add(1);
        Ok(!present)
    }

    /// An add of an item not held into a segment that holds the most entries a segment
    /// may (only items aimed at it by a client that read the filter's secret fill one; issue
    /// 35): the new entry and its nearest neighbour in the segment's order become one entry,
    /// their common prefix, which matches both, so the segment takes the item without
    /// growing. No added item ever reads absent; what rises is the rate of false positives
    /// among items that land in that segment, until splits spread it. The work is the
    /// segment's, as every add's. `CannotGrow` (nothing changed) when the segment has room
    /// (the add was refused for another reason), the item's entry is held (its count is at
    /// its most), the merged count would pass the most a counter holds, or the budget
    /// refuses.
    fn overflow(&mut self, bits: u128, budget: impl Budget) -> Result<(), AddError> {
        let refused = AddError::CannotGrow;
        let (at, tail) = self.locate(bits);
        let segment = self.directory.get(at).ok_or(refused)?;
        if segment.len() < MAX_SEGMENT_ENTRIES {
            return Err(refused);
        }
        let len = self.entry_len(at).ok_or(refused)?;
        let mut entries = segment.decode().ok_or(refused)?;
        crate::compact::meter::add(entries.len() as u64);
        let new = Entry {
            len,
            fingerprint: segment::prefix(tail, len),
            count: 1,
        };
        let key = new.key();
        let i = entries.partition_point(|e| e.key() < key);
        if entries.get(i).is_some_and(|e| e.key() == key) {
            return Err(refused);
        }
        // The top-aligned bits of an entry, and how many leading bits two entries share.
        let top = |e: &Entry| e.fingerprint.checked_shl(64 - e.len).unwrap_or(0);
        let common = |e: &Entry| {
            let shared = (top(e) ^ top(&new)).leading_zeros();
            shared.min(e.len).min(new.len)
        };
        let nearest = [i.checked_sub(1), Some(i)]
            .into_iter()
            .flatten()
            .filter(|&j| j < entries.len())
            .max_by_key(|&j| entries.get(j).map_or(0, common))
            .ok_or(refused)?;
        let near = entries.remove(nearest);
        let shared = common(&near);
        let sum = |a: u64, b: u64| self.sum_counts(a, b).ok_or(refused);
        let merged = Entry {
            len: shared,
            fingerprint: top(&new).checked_shr(64 - shared).unwrap_or(0),
            count: sum(near.count, 1)?,
        };
        match entries.binary_search_by_key(&merged.key(), Entry::key) {
            Ok(j) => {
                let held = entries.get_mut(j).ok_or(refused)?;
                held.count = sum(held.count, merged.count)?;
            }
            Err(j) => entries.insert(j, merged),
        }
        // A merged entry of no bits is a void of this segment's address (or, beside the
        // void it holds, that one).
        let depth = segment.void_depth().unwrap_or(self.address_bits(at));
        let recoded = Segment::encode_with_void(&entries, depth).ok_or(refused)?;
        let before = self.bytes();
        let after = before - segment.bytes() + recoded.bytes();
        if after > before && after > budget.limit(before) {
            return Err(refused);
        }
        let gone = self.directory.get(at).map_or(0, Segment::len) - recoded.len();
        self.voids.set(at, recoded.void_depth());
        self.replace(at, recoded);
        self.entries -= gone;
        self.items = self.items.saturating_add(1);
        Ok(())
    }

    /// Bits of a new entry of segment `at`: the fresh bits less its address.
    fn entry_len(&self, at: u64) -> Option<u32> {
        let len = u32::from(self.fresh_bits).checked_sub(self.address_bits(at))?;
        // Never a void: voids come only from entries whose bits splits took.
        Some(len.min(MAX_LEN)).filter(|&len| len > 0)
    }

    /// The add of entry `new` to segment `at` by `edit` (and whether it adds an entry), with
    /// the split it brings if its new entry passes the threshold.
    fn plan(&self, at: u64, new: Entry, (edit, added_entry): (Edit, bool)) -> Option<Plan> {
        let segment = self.directory.get(at)?;
        let splits = added_entry && self.entries + 1 > self.split_items() * self.directory.len();
        let (edit, split) = match splits {
            false => (Some(edit), None),
            // Splits (one add in `split_items`) work on the entries decoded.
            true if self.pointer == at => {
                let mut entries = segment.decode()?;
                add_entry(&mut entries, new)?;
                (None, Some(self.split_of(&entries)?))
            }
            true => {
                let entries = self.directory.get(self.pointer)?.decode()?;
                (Some(edit), Some(self.split_of(&entries)?))
            }
        };
        Some(Plan {
            at,
            edit,
            split,
            added_entry,
            at_bytes: segment.bytes(),
        })
    }

    /// The two halves of the segment at the split pointer, holding `entries`, and how many
    /// entries they hold more than it; `None` when the directory is at its largest or the
    /// next generation's fingerprints are too long.
    fn split_of(&self, entries: &[Entry]) -> Option<(Segment, Segment, i64)> {
        let last = self.pointer + 1 == 1 << u32::from(self.level);
        if last && u32::from(self.level) + 1 >= MAX_LEVEL {
            return None;
        }
        if last {
            total_bits(
                self.error,
                u32::from(self.first_level),
                u32::from(self.level) + 1 - u32::from(self.first_level),
            )?;
        }
        crate::compact::meter::add(entries.len() as u64);
        let (mut stay, mut go) = (Vec::new(), Vec::new());
        for e in entries {
            match e.len {
                // The void stays at its home (`voids`): both halves' lookups find it there.
                0 => stay.push(*e),
                len => {
                    let half = if e.fingerprint >> (len - 1) == 0 {
                        &mut stay
                    } else {
                        &mut go
                    };
                    half.push(Entry {
                        len: len - 1,
                        fingerprint: e.fingerprint & ((1 << (len - 1)) - 1),
                        count: e.count,
                    });
                }
            }
        }
        // The void is out of the order the others keep: sorted again. An entry of one bit
        // becomes a void of its half, of the halves' address bits; in the half that stays,
        // beside the void it holds (a deletable filter adds an entry under a shorter one that
        // matches its item), the two become one, their counts summed, of the older void's
        // depth (which covers the other's items too: a void made one never reads absent).
        for half in [&mut stay, &mut go] {
            half.sort_unstable_by_key(Entry::key);
            self.merge_equal(half)?;
        }
        let depth = u32::from(self.level) + 1;
        let held = self.directory.get(self.pointer)?.void_depth();
        let more = (stay.len() + go.len()) as i64 - entries.len() as i64;
        Some((
            Segment::encode_with_void(&stay, held.unwrap_or(depth))?,
            Segment::encode_with_void(&go, depth)?,
            more,
        ))
    }

    /// Makes entries of one key (sorted) one, their counts summed (`sum_counts`).
    fn merge_equal(&self, entries: &mut Vec<Entry>) -> Option<()> {
        let mut refused = false;
        entries.dedup_by(|later, kept| {
            let same = later.key() == kept.key();
            if same {
                match self.sum_counts(kept.count, later.count) {
                    Some(count) => kept.count = count,
                    None => refused = true,
                }
            }
            same
        });
        (!refused).then_some(())
    }

    /// The count of two entries made one: their sum in a deletable filter (one otherwise).
    /// Counts are summed, never capped: a count past the most a counter holds would count an
    /// item its counts do not (the loader refuses such a value), so `None` refuses the change
    /// instead.
    fn sum_counts(&self, a: u64, b: u64) -> Option<u64> {
        match self.deletable {
            true => a.checked_add(b).filter(|c| *c <= MAX_COUNT),
            false => Some(1),
        }
    }

    /// Bytes the value takes once `plan` is committed.
    fn bytes_after(&self, plan: &Plan) -> u64 {
        let old = |at: u64| self.directory.get(at).map_or(0, Segment::bytes);
        let mut bytes = self.bytes();
        if let Some(edit) = &plan.edit {
            bytes = bytes - plan.at_bytes + edit.bytes();
        }
        if let Some((stay, go, _)) = &plan.split {
            bytes = bytes - old(self.pointer) + stay.bytes() + go.bytes();
            bytes += self.directory.push_bytes();
        }
        bytes
    }

    fn commit(&mut self, plan: Plan) {
        if let Some(edit) = plan.edit {
            self.edit_from(plan.at, edit, plan.at_bytes);
        }
        self.entries += u64::from(plan.added_entry);
        if let Some((stay, go, more)) = plan.split {
            self.entries = self.entries.saturating_add_signed(more);
            self.voids.set(self.pointer, stay.void_depth());
            self.voids.set(self.directory.len(), go.void_depth());
            self.replace(self.pointer, stay);
            self.segment_bytes += go.bytes();
            self.directory.push(go);
            self.pointer += 1;
            if self.pointer == 1 << u32::from(self.level) {
                self.level = self.level.saturating_add(1);
                self.pointer = 0;
                let g = u32::from(self.level - self.first_level);
                self.fresh_bits = total_bits(self.error, u32::from(self.first_level), g)
                    .and_then(|b| u8::try_from(b).ok())
                    .unwrap_or(self.fresh_bits);
            }
        }
    }

    /// Makes `edit` on segment `at`, keeping the bytes count.
    fn edit(&mut self, at: u64, edit: Edit) {
        let before = self.directory.get(at).map_or(0, Segment::bytes);
        self.edit_from(at, edit, before);
    }

    /// The same, segment `at` taking `before` bytes.
    fn edit_from(&mut self, at: u64, edit: Edit, before: u64) {
        let after = edit.bytes();
        if let Some(s) = self.directory.get_mut(at) {
            s.apply(edit);
            debug_assert_eq!(s.bytes(), after);
            self.segment_bytes = self.segment_bytes - before + after;
        }
    }

    /// Puts `segment` in place of segment `at`, keeping the bytes count.
    fn replace(&mut self, at: u64, segment: Segment) {
        if let Some(s) = self.directory.get_mut(at) {
            self.segment_bytes = self.segment_bytes - s.bytes() + segment.bytes();
            *s = segment;
        }
    }

    pub fn delete(&mut self, item: &[u8]) -> Result<bool, DeleteError> {
        self.delete_hash(self.hash_of(item))
    }

    /// Deletes one add of an item: `Ok(false)` if nothing matches it.
    pub fn delete_hash(&mut self, hash: ItemHash) -> Result<bool, DeleteError> {
        if !self.deletable {
            return Err(DeleteError::NotDeletable);
        }
        let (at, tail) = self.locate(placement_bits(hash, self.secret));
        let longest = self.directory.get(at).and_then(|s| s.longest(tail));
        // The longest entry matching: one of the segment's, else the deepest void covering
        // it, at its home.
        let (home, len) = match longest {
            Some(len) => (at, len),
            None => match self.voids.covering(at) {
                Some((home, _)) => (home, 0),
                None => return Ok(false),
            },
        };
        let fingerprint = segment::prefix(tail, len);
        let edited = self.directory.get(home);
        let Some((edit, removed)) = edited.and_then(|s| s.edit_delete(len, fingerprint)) else {
            return Ok(false);
        };
        self.edit(home, edit);
        if len == 0 && removed {
            self.voids.set(home, None);
        }
        self.entries -= u64::from(removed);
        self.items = self.items.saturating_sub(1);
        Ok(true)
    }

    /// Items held (BF.CARD).
    /// The false-positive rate estimated from the entries held: an entry of `b` bits matches
    /// an absent item with probability `2^-b`, and each generation before the current one
    /// holds at most its entries at its bits; the current generation's share is what is left
    /// of the entries, at the bits new entries get.
    pub fn estimated_rate(&self) -> f64 {
        let first = u32::from(self.first_level);
        let current = u32::from(self.level.saturating_sub(self.first_level));
        let mut left = self.entries as f64;
        let mut rate = 0.0;
        for g in 0..current {
            let (Some(most), Some(bits)) = (
                generation_entries(self.error, first, g),
                total_bits(self.error, first, g),
            ) else {
                break;
            };
            let held = most.min(left);
            rate += held * power_of_two(-i32::try_from(bits).unwrap_or(i32::MAX));
            left -= held;
        }
        rate += left * power_of_two(-i32::from(self.fresh_bits));
        rate.clamp(0.0, 1.0)
    }

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

    pub fn segments(&self) -> u64 {
        self.directory.len()
    }

    /// Entries per segment before the next split (`split_items` of its rate).
    pub fn split_items(&self) -> u64 {
        u64::from(self.split_items)
    }

    /// The segments in order (what the codec writes and the digest reads).
    pub fn each_segment(&self) -> impl Iterator<Item = &Segment> {
        self.directory.iter()
    }

    /// Bytes the value's allocations take, each rounded up to its size class (BF.INFO Size,
    /// MEMORY USAGE).
    pub fn bytes(&self) -> u64 {
        OVERHEAD + self.directory.bytes() + self.segment_bytes
    }
}

#[cfg(test)]
mod tests;
