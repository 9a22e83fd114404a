//! Bit arrays over words (bit `i` is bit `i % 64` of word `i / 64`): reading and writing a
//! field, and opening or closing a gap of a few bits inside an array, which is how an add or
//! a delete edits a segment's coded words in place. Nothing here reads or writes past the
//! slice it is given.

/// The `width` bits at bit `at` of `words` (zero past their end).
#[inline]
pub fn get(words: &[u64], at: u64, width: u32) -> u64 {
    if width == 0 {
        return 0;
    }
    let word = (at / 64) as usize;
    let shift = (at % 64) as u32;
    let first = words.get(word).copied().unwrap_or(0) >> shift;
    let second = match shift {
        0 => 0,
        s => words.get(word + 1).copied().unwrap_or(0) << (64 - s),
    };
    (first | second) & mask(width)
}

/// Whether bit `at` is set.
#[inline]
pub fn bit(words: &[u64], at: u64) -> bool {
    words
        .get((at / 64) as usize)
        .is_some_and(|w| w >> (at % 64) & 1 == 1)
}

/// The lowest `width` bits set (all for 64).
#[inline]
pub fn mask(width: u32) -> u64 {
    match width {
        0 => 0,
        w => u64::MAX >> (64 - w.min(64)),
    }
}

/// Writes `value` (`width` bits) at bit `at`, the bits there first cleared.
pub fn put(words: &mut [u64], at: u64, width: u32, value: u64) {
    if width == 0 {
        return;
    }
    let word = (at / 64) as usize;
    let shift = (at % 64) as u32;
    let value = value & mask(width);
    if let Some(w) = words.get_mut(word) {
        *w = (*w & !(mask(width) << shift)) | value << shift;
    }
    if shift + width > 64 {
        if let Some(w) = words.get_mut(word + 1) {
            let spill = shift + width - 64;
            *w = (*w & !mask(spill)) | value >> (64 - shift);
        }
    }
}

/// Opens a gap of `width` bits (below 64) at bit `at` of an array using `used` bits: the bits
/// from `at` move up by `width` (the array has room for them), and `value` fills the gap.
/// One pass over the words from `at`'s, each word's top bits carried into the next.
pub fn insert(words: &mut [u64], at: u64, used: u64, width: u32, value: u64) {
    if width == 0 || width >= 64 || at > used {
        return;
    }
    let first = (at / 64) as usize;
    let last = ((used + u64::from(width) - 1) / 64) as usize;
    let last = last.min(words.len().saturating_sub(1));
    let Some((head, rest)) = words
        .get_mut(first..=last)
        .and_then(<[u64]>::split_first_mut)
    else {
        return;
    };
    let keep = mask((at % 64) as u32);
    let mut carry = *head >> (64 - width);
    *head = (*head & keep) | (*head << width & !keep);
    for word in rest {
        let old = *word;
        *word = old << width | carry;
        carry = old >> (64 - width);
    }
    put(words, at, width, value);
}

/// Closes the `width` bits (below 64) at bit `at` of an array using `used` bits: the bits
/// after them move down by `width`, and zeros fill the top. One pass down from the last
/// word, each word's low bits carried into the one before.
pub fn remove(words: &mut [u64], at: u64, used: u64, width: u32) {
    if width == 0 || width >= 64 || at + u64::from(width) > used {
        return;
    }
    let first = (at / 64) as usize;
    let last = ((used - 1) / 64) as usize;
    let last = last.min(words.len().saturating_sub(1));
    let mut carry = words.get(last + 1).copied().unwrap_or(0) << (64 - width);
    let Some((head, rest)) = words
        .get_mut(first..=last)
        .and_then(<[u64]>::split_first_mut)
    else {
        return;
    };
    for word in rest.iter_mut().rev() {
        let old = *word;
        *word = old >> width | carry;
        carry = old << (64 - width);
    }
    let keep = mask((at % 64) as u32);
    *head = (*head & keep) | ((*head >> width | carry) & !keep);
    // Bits past `used` were zero, so the top `width` bits now are; the last word's bits past
    // the array's end, brought down from beyond it, are zero as well.
    let end = used - u64::from(width);
    if let Some(w) = words.get_mut((end / 64) as usize) {
        *w &= mask((end % 64) as u32);
    }
}

/// Ones in every byte.
const BYTES: u64 = 0x0101_0101_0101_0101;
/// The top bit of every byte.
const TOPS: u64 = 0x8080_8080_8080_8080;

/// `IN_BYTE[byte][k]`: the position of the `k`-th set bit of `byte` (8 if it has fewer).
static IN_BYTE: [[u8; 8]; 256] = {
    let mut table = [[8u8; 8]; 256];
    let mut byte = 0;
    while byte < 256 {
        let (mut bit, mut k) = (0, 0);
        while bit < 8 {
            if byte >> bit & 1 == 1 {
                table[byte][k] = bit as u8;
                k += 1;
            }
            bit += 1;
        }
        byte += 1;
    }
    table
};

/// The position of the `k`-th set bit of `word` if it has that many, else its population,
/// without a loop: the bytes' populations summed in one multiply, the byte holding it found
/// by comparing those sums with `k` in every byte at once, then a table.
#[inline]
pub fn select_or_count(word: u64, k: u64) -> Result<u64, u64> {
    let mut counts = word - (word >> 1 & 0x5555_5555_5555_5555);
    counts = (counts & 0x3333_3333_3333_3333) + (counts >> 2 & 0x3333_3333_3333_3333);
    counts = (counts + (counts >> 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    // Byte `i` of `sums`: the set bits of bytes 0 to `i` (at most 64, so no carry).
    let sums = counts.wrapping_mul(BYTES);
    let population = sums >> 56;
    if k >= population {
        return Err(population);
    }
    // The top bit of byte `i` is set where that sum is at most `k`.
    let at_most = (((k * BYTES) | TOPS) - sums) & TOPS;
    let byte = ((at_most >> 7).wrapping_mul(BYTES) >> 56).min(7);
    let before = (sums << 8) >> (8 * byte) & 0xff;
    let within = k.saturating_sub(before).min(7) as usize;
    let bits = (word >> (8 * byte) & 0xff) as usize;
    let bit = IN_BYTE.get(bits).and_then(|b| b.get(within)).copied();
    Ok(8 * byte + u64::from(bit.unwrap_or(8)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;

    /// The array as a list of bits.
    fn listed(words: &[u64], used: u64) -> Vec<bool> {
        (0..used).map(|i| bit(words, i)).collect()
    }

    #[test]
    fn gaps_open_and_close_as_on_a_list_of_bits() {
        let mut rng = Rng::new(5);
        for case in 0..3000u64 {
            let used = rng.below(400);
            let width = 1 + rng.below(63) as u32;
            let at = rng.below(used + 1);
            let room = (used + u64::from(width)).div_ceil(64) as usize + rng.below(2) as usize;
            let mut words = vec![0u64; room];
            for i in 0..used {
                if rng.below(2) == 1 {
                    words[(i / 64) as usize] |= 1 << (i % 64);
                }
            }
            let value = rng.next() & mask(width);
            let mut expected = listed(&words, used);
            let gap: Vec<bool> = (0..width).map(|b| value >> b & 1 == 1).collect();
            expected.splice(at as usize..at as usize, gap);
            let before = words.clone();
            insert(&mut words, at, used, width, value);
            let after = used + u64::from(width);
            assert_eq!(listed(&words, after), expected, "case {case}");
            assert_eq!(get(&words, at, width), value);
            let past: Vec<u64> = (after..room as u64 * 64)
                .filter(|i| bit(&words, *i))
                .collect();
            assert!(past.is_empty(), "case {case}: bits past the end");
            remove(&mut words, at, after, width);
            assert_eq!(words, before, "case {case}");
        }
    }

    #[test]
    fn select_finds_the_kth_set_bit_or_counts_them() {
        let mut rng = Rng::new(8);
        for _ in 0..2000 {
            let word = rng.next();
            let set: Vec<u64> = (0..64).filter(|b| word >> b & 1 == 1).collect();
            for (k, at) in set.iter().enumerate() {
                assert_eq!(select_or_count(word, k as u64), Ok(*at));
            }
            assert_eq!(
                select_or_count(word, set.len() as u64),
                Err(set.len() as u64)
            );
        }
    }
}
