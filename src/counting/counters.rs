//! Four-bit counters, two to a byte: a counting link's cells. A counter saturates at 15 and
//! then stays there, so an overflow can cost a false positive but never a false negative.

use crate::bloom::Cells;

/// A 4-bit saturating counter per position (the low nibble holds the even position).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counter4;

/// The value a counter sticks at.
pub const SATURATED: u8 = 15;

impl Counter4 {
    #[inline]
    fn count(byte: u8, shift: u8) -> u8 {
        (byte >> shift) & 0x0f
    }

    /// Takes one item off the counter, unless it is empty or saturated.
    #[inline]
    pub fn decrement(byte: &mut u8, shift: u8) {
        let count = Self::count(*byte, shift);
        if count != 0 && count != SATURATED {
            *byte -= 1 << shift;
        }
    }

    /// Whether the counter can take an item back: neither empty nor saturated.
    #[inline]
    pub fn can_decrement(byte: u8, shift: u8) -> bool {
        let count = Self::count(byte, shift);
        count != 0 && count != SATURATED
    }

    /// Saturated counters in an array.
    pub fn saturated_in(array: &[u8]) -> u64 {
        let sticky = |nibble: u8| u64::from(nibble == SATURATED);
        array
            .iter()
            .map(|b| sticky(b & 0x0f) + sticky(b >> 4))
            .sum()
    }
}

impl Cells for Counter4 {
    const WIDTH: u64 = 4;

    #[inline]
    fn locate(position: u64) -> (usize, u8) {
        ((position >> 1) as usize, ((position & 1) << 2) as u8)
    }

    #[inline]
    fn is_set(byte: u8, shift: u8) -> bool {
        Self::count(byte, shift) != 0
    }

    #[inline]
    fn insert(byte: &mut u8, shift: u8) -> bool {
        let count = Self::count(*byte, shift);
        if count < SATURATED {
            *byte += 1 << shift;
        }
        count == 0
    }
}
