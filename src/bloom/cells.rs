//! What a link stores at each of its positions. A plain Bloom filter keeps one bit per
//! position; other kinds (counting filters keep small counters) plug in their own cells, and
//! the link's sizing, hashing and probing, and the chain walk, stay the same code.

use std::fmt::Debug;

/// The storage of a link's positions inside its byte array. A probe locates a position as a
/// byte index and a selector within that byte (a bit mask, or a shift), so the probe loop of
/// [`Link`](super::Link) is the same for every kind of cell.
pub trait Cells: Debug + Clone + Copy + PartialEq + Default + 'static {
    /// Bits each position takes.
    const WIDTH: u64;

    /// The byte holding `position`, and the selector of the position within it.
    fn locate(position: u64) -> (usize, u8);

    /// Whether the position is occupied (a set bit, a counter above zero).
    fn is_set(byte: u8, selector: u8) -> bool;

    /// Records one more item at the position; true if it was unoccupied before.
    fn insert(byte: &mut u8, selector: u8) -> bool;

    /// Bytes of the array that holds `positions` positions.
    fn array_bytes(positions: u64) -> Option<u64> {
        positions
            .checked_mul(Self::WIDTH)
            .map(|bits| bits.div_ceil(8))
    }
}

/// One bit per position: RedisBloom's links.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Bits;

impl Cells for Bits {
    const WIDTH: u64 = 1;

    #[inline]
    fn locate(position: u64) -> (usize, u8) {
        ((position >> 3) as usize, 1u8 << (position & 7))
    }

    #[inline]
    fn is_set(byte: u8, mask: u8) -> bool {
        byte & mask != 0
    }

    #[inline]
    fn insert(byte: &mut u8, mask: u8) -> bool {
        let changed = *byte & mask == 0;
        *byte |= mask;
        changed
    }
}
