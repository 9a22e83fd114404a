//! Building a frozen table from distinct item hashes: the reference construction (hypergraph
//! peeling) of Graf & Lemire's `binary_fuse*_populate`, for any width. Seeds come from a
//! fixed SplitMix64 sequence, so the same hashes always give the same table, and the seed that
//! worked is recorded in the shape.
//!
//! Working memory ([`working_bytes`]) is about 24 bytes per item besides the table; it runs
//! off the main thread (`BF.FREEZE`).

use super::table::{fingerprint, mix, Shape, Table, MAX_SEGMENT_LENGTH, MAX_SLOTS};

/// Seeds tried before construction gives up (the reference's bound; one try almost always
/// succeeds).
const MAX_ATTEMPTS: u32 = 100;
/// Where the seed sequence starts (the reference's constant).
const SEED_ORIGIN: u64 = 0x726b_2b9d_438b_9d4d;

/// Why a table could not be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildError {
    /// More items than a table can index.
    TooLarge,
    /// No seed of the sequence made the items peel (or memory was refused).
    Failed,
}

/// The seed sequence: SplitMix64.
fn next_seed(state: &mut u64) -> u64 {
    crate::hash::splitmix64(state)
}

/// The shape (seed 0) of a table for `items` items of `width` bits: the reference's segment
/// length and size factor for three hashes.
pub fn shape_for(items: u64, width: u32) -> Result<Shape, BuildError> {
    if items == 0 {
        return Ok(Shape {
            width,
            segment_length: 4,
            segment_count: 0,
            seed: 0,
        });
    }
    let n = items.max(2) as f64;
    let exponent = (n.ln() / 3.33f64.ln() + 2.25).floor() as u32;
    let segment_length = (1u32 << exponent.min(18)).clamp(4, MAX_SEGMENT_LENGTH);
    let factor = (0.875 + 0.25 * 1e6f64.ln() / n.ln()).max(1.125);
    let capacity = (items as f64 * factor).round() as u64;
    let length = u64::from(segment_length);
    let segments = capacity.div_ceil(length).saturating_sub(2).max(1);
    let shape = Shape {
        width,
        segment_length,
        segment_count: u32::try_from(segments).map_err(|_| BuildError::TooLarge)?,
        seed: 0,
    };
    if shape.slots() > MAX_SLOTS {
        return Err(BuildError::TooLarge);
    }
    Ok(shape)
}

/// Bytes the construction of a table for `items` items holds besides the table itself.
pub fn working_bytes(items: u64, width: u32) -> u64 {
    let slots = shape_for(items, width).map_or(u64::MAX, |s| s.slots());
    items
        .saturating_mul(9)
        .saturating_add(slots.saturating_mul(13))
}

/// A vector of `len` zeros, or `Failed` if the allocator refuses it.
fn zeros<T: Clone + Default>(len: u64) -> Result<Vec<T>, BuildError> {
    let len = usize::try_from(len).map_err(|_| BuildError::TooLarge)?;
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| BuildError::Failed)?;
    v.resize(len, T::default());
    Ok(v)
}

/// The peeling state of one attempt: per slot, the count of hashes in it (times 4) and which
/// of its three slots this one is for the last (low two bits), and the xor of those hashes.
struct Peeling {
    counts: Vec<u8>,
    xors: Vec<u64>,
}

impl Peeling {
    /// Adds (or with `sign` false, removes) a hash in its three slots; false if a count wrapped.
    fn toggle(&mut self, shape: &Shape, mixed: u64, add: bool) -> bool {
        let mut ok = true;
        for (which, slot) in shape.slots_of(mixed).into_iter().enumerate() {
            let slot = slot as usize;
            if let (Some(count), Some(xor)) = (self.counts.get_mut(slot), self.xors.get_mut(slot)) {
                *count = if add {
                    count.wrapping_add(4)
                } else {
                    count.wrapping_sub(4)
                } ^ which as u8;
                *xor ^= mixed;
                ok &= *count >= 4 || !add;
            }
        }
        ok
    }
}

/// Builds the table of the `items` hashes `hashes()` yields (distinct item hashes, any order,
/// read twice per attempt) with `width`-bit fingerprints. Deterministic: the same hashes in
/// any order give the same table.
pub fn build<I: Iterator<Item = u64>>(
    hashes: impl Fn() -> I,
    items: u64,
    width: u32,
) -> Result<Table, BuildError> {
    let mut shape = shape_for(items, width)?;
    if items == 0 {
        return Table::zeroed(shape).ok_or(BuildError::Failed);
    }
    let slots = shape.slots();
    let mut order: Vec<u64> = zeros(items)?;
    let mut found: Vec<u8> = zeros(items)?;
    let mut alone: Vec<u32> = zeros(slots)?;
    let mut peeling = Peeling {
        counts: zeros(slots)?,
        xors: zeros(slots)?,
    };
    let mut state = SEED_ORIGIN;
    for _ in 0..MAX_ATTEMPTS {
        shape.seed = next_seed(&mut state);
        peeling.counts.fill(0);
        peeling.xors.fill(0);
        let placed = sorted_by_slot(&shape, &hashes, &mut order);
        if placed != items {
            return Err(BuildError::Failed);
        }
        let stacked = peel(&shape, &mut peeling, &mut order, &mut found, &mut alone);
        if stacked == Some(items) {
            return assign(shape, &order, &found);
        }
    }
    Err(BuildError::Failed)
}

/// One attempt with `shape.seed`: the hashes in peeling order with the slot each was peeled
/// from; the number peeled, or None if a slot's count wrapped.
fn peel(
    shape: &Shape,
    peeling: &mut Peeling,
    order: &mut [u64],
    found: &mut [u8],
    alone: &mut [u32],
) -> Option<u64> {
    let mut ok = true;
    for &mixed in order.iter() {
        ok &= peeling.toggle(shape, mixed, true);
    }
    if !ok {
        return None;
    }
    let mut queue = 0usize;
    for (slot, count) in peeling.counts.iter().enumerate() {
        if let Some(entry) = alone.get_mut(queue) {
            *entry = slot as u32;
        }
        queue += usize::from(count >> 2 == 1);
    }
    let mut stacked = 0usize;
    while queue > 0 {
        queue -= 1;
        let slot = *alone.get(queue)? as usize;
        if peeling.counts.get(slot)? >> 2 != 1 {
            continue;
        }
        let mixed = *peeling.xors.get(slot)?;
        let which = peeling.counts.get(slot)? & 3;
        *order.get_mut(stacked)? = mixed;
        *found.get_mut(stacked)? = which;
        stacked += 1;
        peeling.toggle(shape, mixed, false);
        for (other, index) in shape.slots_of(mixed).into_iter().enumerate() {
            if other as u8 != which && peeling.counts.get(index as usize)? >> 2 == 1 {
                *alone.get_mut(queue)? = index as u32;
                queue += 1;
            }
        }
    }
    Some(stacked as u64)
}

/// Writes the mixed hashes into `order`, grouped by their top bits (which pick the first
/// slot's segment), so that the peeling's slot updates walk memory in order (the reference's
/// cache-friendly ordering). Returns how many were placed.
fn sorted_by_slot<I: Iterator<Item = u64>>(
    shape: &Shape,
    hashes: &impl Fn() -> I,
    order: &mut [u64],
) -> u64 {
    let mut bits = 1u32;
    while (1u64 << bits) < u64::from(shape.segment_count) && bits < 24 {
        bits += 1;
    }
    let blocks = 1usize << bits;
    let mut counts = vec![0usize; blocks + 1];
    let block_of = |mixed: u64| (mixed >> (64 - bits)) as usize;
    for hash in hashes() {
        if let Some(count) = counts.get_mut(block_of(mix(hash, shape.seed)) + 1) {
            *count += 1;
        }
    }
    let mut sum = 0;
    for count in counts.iter_mut() {
        sum += *count;
        *count = sum;
    }
    let mut placed = 0;
    for hash in hashes() {
        let mixed = mix(hash, shape.seed);
        if let Some(next) = counts.get_mut(block_of(mixed)) {
            if let Some(entry) = order.get_mut(*next) {
                *entry = mixed;
                placed += 1;
            }
            *next += 1;
        }
    }
    placed
}

/// Fills the table in the reverse of the peeling order: each hash's own slot gets what makes
/// the xor of its three slots its fingerprint.
fn assign(shape: Shape, order: &[u64], found: &[u8]) -> Result<Table, BuildError> {
    let mut table = Table::zeroed(shape).ok_or(BuildError::Failed)?;
    for (&mixed, &which) in order.iter().zip(found).rev() {
        let slots = shape.slots_of(mixed);
        let mut value = fingerprint(mixed) & shape.mask();
        for (other, &slot) in slots.iter().enumerate() {
            if other as u8 != which {
                value ^= table.get(slot);
            }
        }
        if let Some(&own) = slots.get(usize::from(which)) {
            table.set(own, value);
        }
    }
    Ok(table)
}
