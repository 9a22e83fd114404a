//! Bit arrays over words (bit `i` is bit `i % 64` of word `i / 64`): reading and writing a
//! field, and opening or closing a gap of a few bits inside an array, which is how an add or
//! a delete edits a segment's coded words in place. Nothing here reads or writes past the
//! slice it is given.

/// Words a bit array is read from: one slice, or a segment's head and tail (`Split`), the
/// second continuing the first.
pub trait Words {
    /// How many.
    fn count(&self) -> usize;
    /// Word `i`, if there is one.
    fn word(&self, i: usize) -> Option<u64>;
}

/// Words a bit array is written to.
pub trait WordsMut: Words {
    fn word_mut(&mut self, i: usize) -> Option<&mut u64>;
}

impl Words for [u64] {
    #[inline]
    fn count(&self) -> usize {
        self.len()
    }

    #[inline]
    fn word(&self, i: usize) -> Option<u64> {
        self.get(i).copied()
    }
}

impl WordsMut for [u64] {
    #[inline]
    fn word_mut(&mut self, i: usize) -> Option<&mut u64> {
        self.get_mut(i)
    }
}

/// A run of words held in two pieces: the end of a segment's head, then the start of its
/// tail.
#[derive(Debug, Clone, Copy, Default)]
pub struct Split<'a> {
    pub head: &'a [u64],
    pub tail: &'a [u64],
}

impl Split<'_> {
    /// The words in order.
    pub fn iter(&self) -> impl Iterator<Item = &u64> + '_ {
        self.head.iter().chain(self.tail)
    }

    /// The `width` bits at bit `at` (as `get`), read from the head alone when they lie
    /// there (every read but the last few of a segment's low bits).
    #[inline]
    pub fn get(&self, at: u64, width: u32) -> u64 {
        match at + u64::from(width) <= 64 * self.head.len() as u64 {
            true => get(self.head, at, width),
            false => get(self, at, width),
        }
    }

    /// Where word `i` lies (to prefetch it).
    #[inline]
    pub fn word_ref(&self, i: usize) -> Option<&u64> {
        match i.checked_sub(self.head.len()) {
            None => self.head.get(i),
            Some(j) => self.tail.get(j),
        }
    }

    /// The number of leading words for which `before` holds (they are ordered so that it
    /// holds for a prefix of them).
    pub fn partition_point(&self, before: impl Fn(&u64) -> bool) -> usize {
        match self.head.last().is_none_or(&before) {
            true => self.head.len() + self.tail.partition_point(before),
            false => self.head.partition_point(before),
        }
    }
}

impl Words for Split<'_> {
    #[inline]
    fn count(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    #[inline]
    fn word(&self, i: usize) -> Option<u64> {
        self.word_ref(i).copied()
    }
}

/// The same, to write.
#[derive(Debug, Default)]
pub struct SplitMut<'a> {
    pub head: &'a mut [u64],
    pub tail: &'a mut [u64],
}

impl SplitMut<'_> {
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut u64> + '_ {
        self.head.iter_mut().chain(self.tail.iter_mut())
    }

    /// Bits the head holds.
    fn head_bits(&self) -> u64 {
        64 * self.head.len() as u64
    }

    /// `insert` on the two pieces as one array. A gap that falls in one piece is opened
    /// there (the head's last bits it pushes out opened at the tail's start); one across the
    /// cut (a few of a segment's edits) word by word over both.
    pub fn insert(&mut self, at: u64, used: u64, width: u32, value: u64) {
        let cut = self.head_bits();
        if width == 0 || width >= 64 || at > used {
            return;
        }
        if at >= cut {
            insert(self.tail, at - cut, used - cut, width, value);
        } else if used + u64::from(width) <= cut {
            insert(self.head, at, used, width, value);
        } else if at + u64::from(width) <= cut {
            let out = self.head.last().map_or(0, |w| w >> (64 - width));
            insert(self.tail, 0, used.saturating_sub(cut), width, out);
            insert(self.head, at, cut - u64::from(width), width, value);
        } else {
            self.shift_each(at, used, width, value);
        }
    }

    /// `remove` on the two pieces as one array, as `insert`.
    pub fn remove(&mut self, at: u64, used: u64, width: u32) {
        let cut = self.head_bits();
        if width == 0 || width >= 64 || at + u64::from(width) > used {
            return;
        }
        if at >= cut {
            remove(self.tail, at - cut, used - cut, width);
        } else if used <= cut {
            remove(self.head, at, used, width);
        } else if at + u64::from(width) <= cut && used - cut >= u64::from(width) {
            let down = self.tail.first().map_or(0, |w| w & mask(width));
            remove(self.tail, 0, used - cut, width);
            remove(self.head, at, cut, width);
            put(self.head, cut - u64::from(width), width, down);
        } else {
            self.unshift_each(at, used, width);
        }
    }

    /// `insert` one bit at a time from the top (for gaps across the cut: rare, and a
    /// segment's bits at most).
    fn shift_each(&mut self, at: u64, used: u64, width: u32, value: u64) {
        let width64 = u64::from(width);
        for i in (at..used).rev() {
            let b = u64::from(bit(self, i));
            put(self, i + width64, 1, b);
        }
        put(self, at, width, value);
    }

    /// `remove` one bit at a time from the bottom, zeros past the end.
    fn unshift_each(&mut self, at: u64, used: u64, width: u32) {
        let width64 = u64::from(width);
        for i in at..used - width64 {
            let b = u64::from(bit(self, i + width64));
            put(self, i, 1, b);
        }
        for i in used - width64..used {
            put(self, i, 1, 0);
        }
    }
}

impl SplitMut<'_> {
    /// The same words, to read.
    #[inline]
    fn view(&self) -> Split<'_> {
        Split {
            head: self.head,
            tail: self.tail,
        }
    }
}

impl Words for SplitMut<'_> {
    #[inline]
    fn count(&self) -> usize {
        self.view().count()
    }

    #[inline]
    fn word(&self, i: usize) -> Option<u64> {
        self.view().word(i)
    }
}

impl WordsMut for SplitMut<'_> {
    #[inline]
    fn word_mut(&mut self, i: usize) -> Option<&mut u64> {
        match i.checked_sub(self.head.len()) {
            None => self.head.get_mut(i),
            Some(j) => self.tail.get_mut(j),
        }
    }
}

/// The `width` bits at bit `at` of `words` (zero past their end).
#[inline]
pub fn get<W: Words + ?Sized>(words: &W, at: u64, width: u32) -> u64 {
    if width == 0 {
        return 0;
    }
    let word = (at / 64) as usize;
    let shift = (at % 64) as u32;
    let first = words.word(word).unwrap_or(0) >> shift;
    let second = match shift {
        0 => 0,
        s => words.word(word + 1).unwrap_or(0) << (64 - s),
    };
    (first | second) & mask(width)
}

/// Whether bit `at` is set.
#[inline]
pub fn bit<W: Words + ?Sized>(words: &W, at: u64) -> bool {
    words
        .word((at / 64) as usize)
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
pub fn put<W: WordsMut + ?Sized>(words: &mut W, at: u64, width: u32, value: u64) {
    if width == 0 {
        return;
    }
    let word = (at / 64) as usize;
    let shift = (at % 64) as u32;
    let value = value & mask(width);
    if let Some(w) = words.word_mut(word) {
        *w = (*w & !(mask(width) << shift)) | value << shift;
    }
    if shift + width > 64 {
        if let Some(w) = words.word_mut(word + 1) {
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

/// The position just after the `need`-th zero (`need` at least one) at or after bit `from`,
/// and the words read to find it; `None` if the words hold fewer. With one instruction to
/// count a word's bits when the processor has it (checked once and remembered: a lookup
/// counts the zeros of about four words, which takes a third of its time without it).
#[inline]
pub fn after_zeros(words: &[u64], from: u64, need: u64) -> Option<(u64, u64)> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the processor has the instruction the function is compiled to use.
        return unsafe { after_zeros_counting(words, from, need) };
    }
    after_zeros_in(words, from, need)
}

/// `after_zeros`, compiled to count bits with the processor's instruction.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn after_zeros_counting(words: &[u64], from: u64, need: u64) -> Option<(u64, u64)> {
    after_zeros_in(words, from, need)
}

#[inline(always)]
fn after_zeros_in(words: &[u64], from: u64, mut need: u64) -> Option<(u64, u64)> {
    let first = (from / 64) as usize;
    let mut w = first;
    let mut zeros = !*words.get(w)? & (u64::MAX << (from % 64));
    loop {
        match select_or_count(zeros, need.checked_sub(1)?) {
            Ok(at) => return Some((w as u64 * 64 + at + 1, (w - first) as u64 + 1)),
            Err(n) => need -= n,
        }
        w += 1;
        zeros = !*words.get(w)?;
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
#[inline(always)]
pub fn select_or_count(word: u64, k: u64) -> Result<u64, u64> {
    // Counted apart from the sums below, so that it takes one instruction where the
    // processor has one (most words only pass their count on).
    let population = u64::from(word.count_ones());
    if k >= population {
        return Err(population);
    }
    let mut counts = word - (word >> 1 & 0x5555_5555_5555_5555);
    counts = (counts & 0x3333_3333_3333_3333) + (counts >> 2 & 0x3333_3333_3333_3333);
    counts = (counts + (counts >> 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    // Byte `i` of `sums`: the set bits of bytes 0 to `i` (at most 64, so no carry).
    let sums = counts.wrapping_mul(BYTES);
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
        for case in 0..20000u64 {
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
            // The same array held in two pieces (a segment's head and tail) cut anywhere.
            let mut split = words.clone();
            let cut = rng.below(room as u64 + 1) as usize;
            insert(&mut words[..], at, used, width, value);
            let after = used + u64::from(width);
            assert_eq!(listed(&words, after), expected, "case {case}");
            assert_eq!(get(&words[..], at, width), value);
            let past: Vec<u64> = (after..room as u64 * 64)
                .filter(|i| bit(&words[..], *i))
                .collect();
            assert!(past.is_empty(), "case {case}: bits past the end");
            {
                let (head, tail) = split.split_at_mut(cut);
                let mut pieces = SplitMut { head, tail };
                pieces.insert(at, used, width, value);
                assert_eq!(get(&pieces, at, width), value);
            }
            assert_eq!(split, words, "case {case}: cut at {cut}");
            remove(&mut words[..], at, after, width);
            assert_eq!(words, before, "case {case}");
            let (head, tail) = split.split_at_mut(cut);
            SplitMut { head, tail }.remove(at, after, width);
            assert_eq!(split, before, "case {case}: cut at {cut}");
        }
    }

    #[test]
    fn the_zeros_are_counted_alike_with_and_without_the_instruction() {
        let mut rng = Rng::new(9);
        for case in 0..3000u64 {
            let len = 1 + (rng.next() % 9) as usize;
            // Sparse, dense and even words, as high bits of every fill hold.
            let words: Vec<u64> = (0..len)
                .map(|_| match case % 3 {
                    0 => rng.next() & rng.next(),
                    1 => rng.next() | rng.next(),
                    _ => rng.next(),
                })
                .collect();
            let from = rng.next() % (64 * len as u64);
            let zeros: Vec<u64> = (from..64 * len as u64)
                .filter(|&i| !bit(&words[..], i))
                .collect();
            for need in 0..=zeros.len() as u64 + 1 {
                let expected = match need {
                    0 => None,
                    n => zeros
                        .get(n as usize - 1)
                        .map(|&at| (at + 1, at / 64 - from / 64 + 1)),
                };
                assert_eq!(after_zeros_in(&words, from, need), expected, "case {case}");
                assert_eq!(after_zeros(&words, from, need), expected, "case {case}");
            }
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
