//! One segment: the fingerprints of the items whose address leads here, a sorted set coded
//! Elias-Fano style in one allocation, with a count for the entries added more than once.
//!
//! Entries of one length form one list; the lists are laid end to end in one universe (a
//! list of length `r` takes `2^r` values, shorter lists first), so one Elias-Fano sequence
//! codes them all and a lookup walks the high bits once, forward, whatever the number of
//! lists: the candidate values of a query (its prefix of each length present) ascend with
//! the length. Each generation's entries are about as dense in their list as the others'
//! (an older generation has half the entries in half the values), so sharing the low-bit
//! width costs next to nothing against a sequence per list.
//!
//! Words: a header (entries, counters), the mask of lengths present, the high bits (one per
//! entry and one per bucket of `2^low` values), the low bits (`low` per entry), then one
//! word per counted entry (its index, and its count less two). The layout is wholly
//! determined by the entries: `from_words` accepts exactly the words `encode` writes.

use super::{size_class, MAX_LEN, MAX_SEGMENT_ENTRIES};

/// An entry: `len` hash bits after the segment's address, and how often it was added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    pub len: u32,
    pub fingerprint: u64,
    pub count: u64,
}

/// Bits of a counter word holding the entry's index.
const INDEX_BITS: u32 = 16;
/// The largest count a counter word holds.
pub const MAX_COUNT: u64 = (1 << (64 - INDEX_BITS)) + 1;

/// The segment's words (none when it is empty).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Segment {
    words: Box<[u64]>,
}

/// Where each part of a segment's words lies, from its header.
#[derive(Debug, Clone, Copy)]
struct Shape {
    entries: u64,
    counters: u64,
    mask: u64,
    low: u32,
    high_bits: u64,
    high_at: usize,
    low_at: usize,
    counters_at: usize,
    words: usize,
}

impl Shape {
    fn of(entries: u64, counters: u64, mask: u64) -> Option<Shape> {
        if entries == 0 || entries > MAX_SEGMENT_ENTRIES || counters > entries {
            return None;
        }
        if mask == 0 || mask >> (MAX_LEN + 1) != 0 {
            return None;
        }
        let universe = universe(mask);
        let low = match universe / entries {
            0 => 0,
            q => 63 - q.leading_zeros(),
        };
        let buckets = ((universe - 1) >> low) + 1;
        let high_bits = entries + buckets;
        let high_at = 2;
        let low_at = high_at + high_bits.div_ceil(64) as usize;
        let counters_at = low_at + (entries * u64::from(low)).div_ceil(64) as usize;
        Some(Shape {
            entries,
            counters,
            mask,
            low,
            high_bits,
            high_at,
            low_at,
            counters_at,
            words: counters_at + counters as usize,
        })
    }
}

/// Values the lists of these lengths take together.
fn universe(mask: u64) -> u64 {
    (0..=MAX_LEN)
        .filter(|r| mask >> r & 1 == 1)
        .map(|r| 1u64 << r)
        .sum()
}

/// Where the list of length `len` starts (the lengths present below it, `2^r` values each).
fn offset(mask: u64, len: u32) -> u64 {
    universe(mask & ((1u64 << len) - 1))
}

/// The `width` bits at bit `at` of `words` (zero past their end).
#[inline]
fn bits_at(words: &[u64], at: u64, width: u32) -> u64 {
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
    (first | second) & (u64::MAX >> (64 - width))
}

fn set_bits(words: &mut [u64], at: u64, width: u32, value: u64) {
    if width == 0 {
        return;
    }
    let word = (at / 64) as usize;
    let shift = (at % 64) as u32;
    if let Some(w) = words.get_mut(word) {
        *w |= value << shift;
    }
    if shift != 0 && shift + width > 64 {
        if let Some(w) = words.get_mut(word + 1) {
            *w |= value >> (64 - shift);
        }
    }
}

/// The position of the `k`-th set bit of `word` (`k` below its population).
#[inline]
fn select(mut word: u64, k: u64) -> u64 {
    for _ in 0..k {
        word &= word.wrapping_sub(1);
    }
    u64::from(word.trailing_zeros())
}

/// The `len` bits of `tail` after the address (its top bits).
#[inline]
pub fn prefix(tail: u128, len: u32) -> u64 {
    match len {
        0 => 0,
        r => (tail >> (128 - r)) as u64,
    }
}

impl Segment {
    /// Codes entries sorted by (length, fingerprint), distinct, each counted at least once
    /// and at most `MAX_COUNT` times, fingerprints within their length; `None` otherwise.
    pub fn encode(entries: &[Entry]) -> Option<Segment> {
        if entries.is_empty() {
            return Some(Segment::default());
        }
        let mask = entries.iter().try_fold(0u64, |mask, e| {
            let fits = e.len <= MAX_LEN && e.fingerprint >> e.len == 0;
            (fits && (1..=MAX_COUNT).contains(&e.count)).then_some(mask | 1 << e.len)
        })?;
        let counters = entries.iter().filter(|e| e.count > 1).count() as u64;
        let shape = Shape::of(entries.len() as u64, counters, mask)?;
        let mut words = vec![0u64; shape.words];
        words[0] = shape.entries | shape.counters << 32;
        words[1] = mask;
        let mut previous = None;
        let mut counter = shape.counters_at;
        for (i, e) in entries.iter().enumerate() {
            let value = offset(mask, e.len) + e.fingerprint;
            if previous.is_some_and(|p| p >= value) {
                return None;
            }
            previous = Some(value);
            let high = (value >> shape.low) + i as u64;
            set_bits(&mut words[shape.high_at..], high, 1, 1);
            let low = value & ((1u64 << shape.low) - 1);
            set_bits(
                &mut words[shape.low_at..],
                i as u64 * u64::from(shape.low),
                shape.low,
                low,
            );
            if e.count > 1 {
                words[counter] = i as u64 | (e.count - 2) << INDEX_BITS;
                counter += 1;
            }
        }
        Some(Segment {
            words: words.into_boxed_slice(),
        })
    }

    /// A segment from stored words, refused unless they are exactly what `encode` writes for
    /// the entries they hold (so every field they determine is derived, none trusted).
    pub fn from_words(words: Vec<u64>) -> Option<Segment> {
        let segment = Segment {
            words: words.into_boxed_slice(),
        };
        let entries = segment.decode()?;
        (Segment::encode(&entries)? == segment).then_some(segment)
    }

    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// The words' storage, for the allocator to move (active defragmentation).
    pub fn words_for_relocation(&mut self) -> &mut Box<[u64]> {
        &mut self.words
    }

    fn shape(&self) -> Option<Shape> {
        let header = *self.words.first()?;
        let mask = *self.words.get(1)?;
        let shape = Shape::of(header & 0xffff_ffff, header >> 32, mask)?;
        (shape.words == self.words.len()).then_some(shape)
    }

    /// Distinct entries held.
    pub fn len(&self) -> u64 {
        self.words.first().map_or(0, |h| h & 0xffff_ffff)
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Bytes its allocation takes (the allocator's size class of its words).
    pub fn bytes(&self) -> u64 {
        size_class(8 * self.words.len() as u64)
    }

    /// Every entry in order, `None` if the words do not parse (only words not yet checked
    /// by `from_words` can fail).
    pub fn decode(&self) -> Option<Vec<Entry>> {
        if self.words.is_empty() {
            return Some(Vec::new());
        }
        let shape = self.shape()?;
        let high = self.words.get(shape.high_at..shape.low_at)?;
        let lows = self.words.get(shape.low_at..shape.counters_at)?;
        let lengths: Vec<(u32, u64)> = (0..=MAX_LEN)
            .filter(|r| shape.mask >> r & 1 == 1)
            .map(|r| (r, offset(shape.mask, r)))
            .collect();
        let mut entries = Vec::with_capacity(shape.entries as usize);
        let mut list = 0usize;
        for (w, &word) in high.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let position = w as u64 * 64 + u64::from(bits.trailing_zeros());
                bits &= bits - 1;
                let i = entries.len() as u64;
                if i >= shape.entries || position >= shape.high_bits {
                    return None;
                }
                let low = bits_at(lows, i * u64::from(shape.low), shape.low);
                let value = ((position - i) << shape.low) | low;
                while lengths
                    .get(list + 1)
                    .is_some_and(|(_, start)| *start <= value)
                {
                    list += 1;
                }
                let (len, start) = *lengths.get(list)?;
                entries.push(Entry {
                    len,
                    fingerprint: value.checked_sub(start)?,
                    count: 1,
                });
            }
        }
        for &word in self.words.get(shape.counters_at..)? {
            let at = (word & ((1 << INDEX_BITS) - 1)) as usize;
            entries.get_mut(at)?.count = (word >> INDEX_BITS) + 2;
        }
        Some(entries)
    }

    /// Calls `found` with the length of every entry that is a prefix of `tail` (the hash
    /// bits after the segment's address), shortest first, until it returns true; returns
    /// whether one did. One forward walk of the high bits.
    pub fn prefixes(&self, tail: u128, mut found: impl FnMut(u32) -> bool) -> bool {
        let Some(shape) = self.shape() else {
            return false;
        };
        let high = &self.words[shape.high_at..shape.low_at];
        let lows = &self.words[shape.low_at..shape.counters_at];
        let low_mask = (1u64 << shape.low) - 1;
        let (mut w, mut zeros_before) = (0usize, 0u64);
        let mut lengths = shape.mask;
        crate::compact::meter::add(high.len() as u64);
        while lengths != 0 {
            let len = lengths.trailing_zeros();
            lengths &= lengths - 1;
            let value = offset(shape.mask, len) + prefix(tail, len);
            let bucket = value >> shape.low;
            // The bucket starts after its `bucket`-th zero of the high bits.
            let at = if bucket == 0 {
                0
            } else {
                let k = bucket - 1;
                loop {
                    let Some(&word) = high.get(w) else {
                        return false;
                    };
                    let zeros = u64::from((!word).count_ones());
                    if zeros_before + zeros > k {
                        break w as u64 * 64 + select(!word, k - zeros_before) + 1;
                    }
                    zeros_before += zeros;
                    w += 1;
                }
            };
            let mut position = at;
            while position < shape.high_bits && bits_at(high, position, 1) == 1 {
                let i = position - bucket;
                let low = bits_at(lows, i * u64::from(shape.low), shape.low);
                if low == value & low_mask {
                    if found(len) {
                        return true;
                    }
                    break;
                }
                if low > value & low_mask {
                    break;
                }
                position += 1;
            }
        }
        false
    }

    /// Whether an entry is a prefix of `tail`.
    #[inline]
    pub fn contains(&self, tail: u128) -> bool {
        self.prefixes(tail, |_| true)
    }

    /// The longest entry that is a prefix of `tail`.
    pub fn longest(&self, tail: u128) -> Option<u32> {
        let mut longest = None;
        self.prefixes(tail, |len| {
            longest = Some(len);
            false
        });
        longest
    }
}
