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
    // item): the search starts at half of that and stops once more bits stop paying.
    let first = ((classic * std::f64::consts::LN_2 * 0.5).floor() as u32).max(1);
    let mut best: Option<(f64, u32)> = None;
    for k in first..=MAX_HASHES {
        let Some(c) = smallest_for(error, k, classic.max(MIN_BITS_PER_ITEM)) else {
            continue;
        };
        match best {
            Some((b, _)) if c >= b => break,
            _ => best = Some((c, k)),
        }
    }
    best
}

/// The fewest bits per item at which `k` bits per item reach `error`, searched from `from`
/// (a blocked filter never does better than the classic size) up to 16 times it.
fn smallest_for(error: f64, k: u32, from: f64) -> Option<f64> {
    let (mut low, mut high) = (from, from * 16.0);
    if false_positive_rate(high, k) > error {
        return None;
    }
    if false_positive_rate(low, k) <= error {
        return Some(quantize(low));
    }
    for _ in 0..40 {
        let middle = 0.5 * (low + high);
        if false_positive_rate(middle, k) <= error {
            high = middle;
        } else {
            low = middle;
        }
    }
    Some(quantize(high))
}

fn quantize(bits_per_item: f64) -> f64 {
    (bits_per_item * QUANTUM).ceil() / QUANTUM
}

/// The false-positive rate of a full link with `bits_per_item` bits per item and `k` bits set
/// by each item, Poisson over the blocks' loads.
pub fn false_positive_rate(bits_per_item: f64, k: u32) -> f64 {
    let load = BLOCK_BITS as f64 / bits_per_item;
    let last = (load + 12.0 * load.sqrt() + 24.0).ceil() as u32;
    let mut weight = (-load).exp();
    let mut rate = 0.0;
    for j in 1..=last {
        weight *= load / f64::from(j);
        rate += weight * within_block(j, k);
    }
    rate
}

/// The chance that `k` independent bits all fall on bits set by `j` items of `k` bits each in
/// one block (second-order in the occupancy's variance).
fn within_block(j: u32, k: u32) -> f64 {
    let m = BLOCK_BITS as f64;
    let draws = f64::from(j) * f64::from(k);
    let clear = (1.0 - 1.0 / m).powf(draws);
    let both_clear = (1.0 - 2.0 / m).powf(draws);
    let variance =
        (m * (m - 1.0) * both_clear + m * clear - m * m * clear * clear).max(0.0) / (m * m);
    let p = 1.0 - clear;
    let k = f64::from(k);
    p.powf(k) + 0.5 * k * (k - 1.0) * p.powf(k - 2.0) * variance
}
