//! How large a blocked link must be for its error rate. Every item sets `k` bits inside one
//! 512-bit block, so a block's load varies (Poisson) and its bits are shared by the items that
//! landed there: a blocked filter needs more bits per item than the classic formula
//! `-ln(e) / ln(2)^2` says for the same rate. The rate is computed here as it is, not as the
//! classic formula has it, and the smallest size meeting the requested rate is searched for.
//!
//! The false-positive rate of a link of `c` bits per item with `k` bits per item is
//! `sum_j Poisson(j; 512/c) * f(j, k)`, where `f(j, k)` is the chance that a lookup's `k` bits
//! (drawn independently, as [`super::Blocked`] draws them) are all among those `j` items set
//! in a block: `E[(X/512)^k]` for the occupancy `X` after `j*k` draws. That expectation is taken
//! to second order (the mean occupancy's power plus its variance term); against the exact
//! distribution (a dynamic program over the occupancy) it is within 0.1 % for every `k` and
//! load that sizing meets, where the first-order `p^k` of the classic analysis is up to 5 %
//! optimistic.

/// Bits in one block: a 64-byte cache line.
pub const BLOCK_BITS: u64 = 512;
/// Bytes in one block.
pub const BLOCK_BYTES: u64 = BLOCK_BITS / 8;
/// The most bits one item sets (the salts of [`super::probe`]).
pub const MAX_HASHES: u32 = 64;
/// The tightest error rate a link is sized for: below it a link would need hundreds of bits
/// per item (a chain that tightens past it stops growing).
pub const MIN_ERROR: f64 = 1e-12;
/// The fewest bits per item a link gets, however loose its rate.
const MIN_BITS_PER_ITEM: f64 = 1.0;
/// Bits per item are rounded up to a multiple of 1/256, so that the size does not depend on
/// the last bits of the floating-point search (a replica sizes the link it grows itself).
const QUANTUM: f64 = 256.0;

/// The geometry of a blocked link: its capacity and rate, bits per item and block count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockShape {
    /// Items the link takes before the chain grows.
    pub capacity: u64,
    pub error: f64,
    /// Bits each item sets in its block.
    pub hashes: u32,
    pub blocks: u64,
}

/// Why no link fits the parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShapeError {
    Invalid,
    TooLarge,
}

impl BlockShape {
    /// The smallest link holding `capacity` items at false-positive rate `error` or below.
    pub fn new(capacity: u64, error: f64) -> Result<Self, ShapeError> {
        if capacity < 1 || !(MIN_ERROR..1.0).contains(&error) {
            return Err(ShapeError::Invalid);
        }
        let (bits_per_item, hashes) = bits_per_item(error).ok_or(ShapeError::Invalid)?;
        let bits = (capacity as f64 * bits_per_item).ceil();
        // Blocks are addressed by a 64-bit multiply-shift; 2^56 blocks is past any memory.
        if bits.is_nan() || bits >= (1u64 << 62) as f64 {
            return Err(ShapeError::TooLarge);
        }
        let blocks = (bits as u64).div_ceil(BLOCK_BITS).max(1);
        Ok(Self {
            capacity,
            error,
            hashes,
            blocks,
        })
    }

    pub fn bytes(&self) -> u64 {
        self.blocks.saturating_mul(BLOCK_BYTES)
    }

    /// The rate the model gives this link once it holds its capacity.
    pub fn expected_error(&self) -> f64 {
        let bits_per_item = (self.blocks * BLOCK_BITS) as f64 / self.capacity as f64;
        false_positive_rate(bits_per_item, self.hashes)
    }
}

/// The fewest bits per item (rounded up to 1/256) that reach `error`, and the bits each item
/// sets for it; `None` when no `k` up to [`MAX_HASHES`] does.
pub fn bits_per_item(error: f64) -> Option<(f64, u32)> {
    let classic = -error.ln() / (std::f64::consts::LN_2 * std::f64::consts::LN_2);
    // A blocked filter's best k is below the classic one (ln 2 times the classic bits per
    // item): the search starts well below it and stops once one more bit stops paying.
    let first = ((classic * std::f64::consts::LN_2 * 0.55).floor() as u32).max(1);
    let from = classic.max(MIN_BITS_PER_ITEM);
    let mut best: Option<(f64, u32)> = None;
    for k in first..=MAX_HASHES {
        let Some(c) = smallest_for(error, k, from) else {
            continue;
        };
        match best {
            Some((b, _)) if c >= b => break,
            _ => best = Some((c, k)),
        }
    }
    best
}

/// The fewest bits per item, in steps of 1/256, at which `k` bits per item reach `error`,
/// between `from` (a blocked filter never does better than the classic size) and eight times
/// it. The log of the rate falls almost linearly with the bits per item, so a few secant steps
/// land next to the answer, which is then settled step by step on the 1/256 grid.
fn smallest_for(error: f64, k: u32, from: f64) -> Option<f64> {
    let (low, high) = (
        (from * QUANTUM).floor() as u64,
        (from * 8.0 * QUANTUM) as u64,
    );
    let meets = |steps: u64| false_positive_rate(steps as f64 / QUANTUM, k) <= error;
    if !meets(high) {
        return None;
    }
    let gap = |c: f64| false_positive_rate(c, k).ln() - error.ln();
    let (mut a, mut b) = (from, from * 1.1);
    let (mut ga, mut gb) = (gap(a), gap(b));
    for _ in 0..8 {
        if !(ga - gb).is_normal() || (b - a).abs() < 0.5 / QUANTUM {
            break;
        }
        let next = (b - gb * (b - a) / (gb - ga)).clamp(from, from * 8.0);
        (a, ga) = (b, gb);
        (b, gb) = (next, gap(next));
    }
    let guess = ((b * QUANTUM).ceil() as u64).clamp(low, high);
    Some(settle(guess, low, high, meets) as f64 / QUANTUM)
}

/// The smallest step in `low..=high` that `meets` (which holds at `high` and from some step
/// on), searched outwards from `guess` with doubling strides, then by bisection.
fn settle(guess: u64, low: u64, high: u64, meets: impl Fn(u64) -> bool) -> u64 {
    // Find a step that misses (or `low`) below one that meets.
    let (mut miss, mut hit) = if meets(guess) {
        let mut stride = 1;
        let mut hit = guess;
        loop {
            let below = hit.saturating_sub(stride).max(low);
            if below == hit || !meets(below) {
                break (below, hit);
            }
            hit = below;
            stride *= 2;
        }
    } else {
        let mut stride = 1;
        let mut miss = guess;
        loop {
            let above = miss.saturating_add(stride).min(high);
            if above == miss || meets(above) {
                break (miss, above);
            }
            miss = above;
            stride *= 2;
        }
    };
    if miss == hit {
        return hit;
    }
    while hit - miss > 1 {
        let middle = miss + (hit - miss) / 2;
        if meets(middle) {
            hit = middle;
        } else {
            miss = middle;
        }
    }
    hit
}

/// The false-positive rate of a full link with `bits_per_item` bits per item and `k` bits set
/// by each item, Poisson over the blocks' loads.
pub fn false_positive_rate(bits_per_item: f64, k: u32) -> f64 {
    let m = BLOCK_BITS as f64;
    let load = m / bits_per_item;
    let last = (load + 12.0 * load.sqrt() + 24.0).ceil() as u32;
    // Per item, a bit stays clear with (1 - 1/m)^k, two given bits with (1 - 2/m)^k.
    // Multiplied out rather than `powi`, whose rounding may differ between platforms: a
    // replica sizes the links it grows itself.
    let power = |x: f64| (0..k).fold(1.0, |product, _| product * x);
    let (one, two) = (power(1.0 - 1.0 / m), power(1.0 - 2.0 / m));
    let (mut clear, mut both_clear) = (1.0, 1.0);
    let mut weight = (-load).exp();
    let mut rate = 0.0;
    for j in 1..=last {
        weight *= load / f64::from(j);
        clear *= one;
        both_clear *= two;
        rate += weight * within_block(clear, both_clear, k);
        // Past the mean load the weights fall faster than the terms grow.
        if f64::from(j) > load && weight < rate * 1e-9 {
            break;
        }
    }
    rate
}

/// The chance that `k` independent bits all fall on bits set in a block where a bit stays
/// clear with probability `clear` and two with `both_clear` (second order in the occupancy's
/// variance).
fn within_block(clear: f64, both_clear: f64, k: u32) -> f64 {
    let m = BLOCK_BITS as f64;
    let variance =
        (m * (m - 1.0) * both_clear + m * clear - m * m * clear * clear).max(0.0) / (m * m);
    let p = 1.0 - clear;
    if p <= 0.0 {
        return 0.0;
    }
    let k = f64::from(k);
    let below = p.powf(k - 2.0);
    below * p * p + 0.5 * k * (k - 1.0) * below * variance
}
