//! One segment: the fingerprints of the items whose address leads here, a sorted set coded
//! Elias-Fano style in one allocation, with a count for the entries added more than once.
//!
//! Entries of every length share one sorted list, each padded InfiniFilter-style (its
//! fingerprint, a one, then zeros, to the longest length held plus one bit): an entry's value
//! says its length (its lowest set bit), and every entry that can be a prefix of a query
//! lies in the block of values sharing the query's shortest prefix held, so a lookup finds
//! that block once and reads the few entries in it. Each generation's entries are about as
//! dense among their values as the others' (an older one has half the entries with one bit
//! less), so padding costs next to nothing against a list per length.
//!
//! Words: a header (entries, counters, shortest and longest length), the high bits (one per
//! entry and one per bucket of `2^low` values), the low bits (`low` per entry), then one
//! word per counted entry (its index, and its count less two). The layout is wholly
//! determined by the entries: `from_words` accepts exactly the words `encode` writes.

use super::{size_class, MAX_LEN, MAX_SEGMENT_ENTRIES};

mod bits;
mod edit;

pub use edit::{add_entry, Edit};

/// An entry: `len` hash bits after the segment's address, and how often it was added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub len: u32,
    pub fingerprint: u64,
    pub count: u64,
}

impl Entry {
    /// Its place in a segment's order: the fingerprint padded to 64 bits (a one after it,
    /// then zeros), distinct for every (length, fingerprint).
    #[inline]
    pub fn key(&self) -> u64 {
        padded(self.len, self.fingerprint, 63)
    }
}

/// A fingerprint of `len` bits padded to `longest + 1` bits.
#[inline]
fn padded(len: u32, fingerprint: u64, longest: u32) -> u64 {
    (fingerprint << 1 | 1) << (longest - len)
}

/// The entry (counted once) of a padded value, if it is one.
#[inline]
fn unpad(value: u64, longest: u32) -> Option<Entry> {
    let zeros = value.trailing_zeros();
    let len = longest.checked_sub(zeros)?;
    Some(Entry {
        len,
        fingerprint: value >> (zeros + 1),
        count: 1,
    })
}

/// Bits of a counter word holding the entry's index.
const INDEX_BITS: u32 = 16;
/// The index field of a counter word.
const INDEX: u64 = (1 << INDEX_BITS) - 1;
/// The largest count a counter word holds.
pub const MAX_COUNT: u64 = (1 << (64 - INDEX_BITS)) + 1;

/// The segment's words (none when it is empty).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Segment {
    words: Box<[u64]>,
}

/// Where each part of a segment's words lies, from its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    entries: u64,
    counters: u64,
    shortest: u32,
    longest: u32,
    low: u32,
    high_bits: u64,
    high_at: usize,
    low_at: usize,
    counters_at: usize,
    words: usize,
}

impl Shape {
    fn of(entries: u64, counters: u64, shortest: u32, longest: u32) -> Option<Shape> {
        if entries == 0 || entries > MAX_SEGMENT_ENTRIES || counters > entries {
            return None;
        }
        if shortest > longest || longest > MAX_LEN {
            return None;
        }
        let universe = 2u64 << longest;
        let low = match universe / entries {
            0 => 0,
            q => 63 - q.leading_zeros(),
        };
        let buckets = ((universe - 1) >> low) + 1;
        let high_bits = entries + buckets;
        let high_at = 1;
        let low_at = high_at + high_bits.div_ceil(64) as usize;
        let counters_at = low_at + (entries * u64::from(low)).div_ceil(64) as usize;
        Some(Shape {
            entries,
            counters,
            shortest,
            longest,
            low,
            high_bits,
            high_at,
            low_at,
            counters_at,
            words: counters_at + counters as usize,
        })
    }

    fn header(&self) -> u64 {
        self.entries
            | self.counters << 16
            | u64::from(self.shortest) << 32
            | u64::from(self.longest) << 40
    }
}

/// The fingerprints of `len` bits: the lowest `len` bits set.
#[cfg(test)]
pub fn bits_below(len: u32) -> u64 {
    bits::mask(len)
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
        let fits = |e: &Entry| e.len <= MAX_LEN && e.fingerprint >> e.len == 0;
        if !entries
            .iter()
            .all(|e| fits(e) && (1..=MAX_COUNT).contains(&e.count))
        {
            return None;
        }
        let shortest = entries.iter().map(|e| e.len).min()?;
        let longest = entries.iter().map(|e| e.len).max()?;
        let counters = entries.iter().filter(|e| e.count > 1).count() as u64;
        let shape = Shape::of(entries.len() as u64, counters, shortest, longest)?;
        let mut segment = Segment {
            words: vec![0u64; shape.words].into_boxed_slice(),
        };
        let (header, high, lows, counted) = segment.parts_mut(&shape)?;
        *header = shape.header();
        let mut previous = None;
        let mut counter = counted.iter_mut();
        for (i, e) in entries.iter().enumerate() {
            let value = padded(e.len, e.fingerprint, longest);
            if previous.is_some_and(|p| p >= value) {
                return None;
            }
            previous = Some(value);
            bits::put(high, (value >> shape.low) + i as u64, 1, 1);
            let low = value & bits::mask(shape.low);
            bits::put(lows, i as u64 * u64::from(shape.low), shape.low, low);
            if e.count > 1 {
                *counter.next()? = i as u64 | (e.count - 2) << INDEX_BITS;
            }
        }
        Some(segment)
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
        let field = |at: u32, bits: u32| header >> at & ((1 << bits) - 1);
        let (shortest, longest) = (field(32, 8) as u32, field(40, 8) as u32);
        let shape = Shape::of(field(0, 16), field(16, 16), shortest, longest)?;
        (shape.words == self.words.len() && shape.header() == header).then_some(shape)
    }

    /// The high bits, the low bits and the counters, as `shape` lays them out.
    fn parts(&self, shape: &Shape) -> Option<(&[u64], &[u64], &[u64])> {
        let high = self.words.get(shape.high_at..shape.low_at)?;
        let lows = self.words.get(shape.low_at..shape.counters_at)?;
        let counters = self.words.get(shape.counters_at..shape.words)?;
        Some((high, lows, counters))
    }

    /// The header, the high bits, the low bits and the counters, to write; `None` unless
    /// the words are as many as `shape` lays out.
    #[allow(clippy::type_complexity)]
    fn parts_mut(
        &mut self,
        shape: &Shape,
    ) -> Option<(&mut u64, &mut [u64], &mut [u64], &mut [u64])> {
        if self.words.len() != shape.words {
            return None;
        }
        let (header, rest) = self.words.split_first_mut()?;
        let (high, rest) = rest.split_at_mut(shape.low_at - shape.high_at);
        let (lows, counters) = rest.split_at_mut(shape.counters_at - shape.low_at);
        Some((header, high, lows, counters))
    }

    /// Distinct entries held.
    pub fn len(&self) -> u64 {
        self.words.first().map_or(0, |h| h & 0xffff)
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Bytes its allocation takes (the allocator's size class of its words).
    pub fn bytes(&self) -> u64 {
        size_class(8 * self.words.len() as u64)
    }

    /// Calls `each` with every entry's padded value in order; `None` if the words do not
    /// parse (only words not yet checked by `from_words` can fail).
    fn each_value(&self, shape: &Shape, mut each: impl FnMut(u64)) -> Option<()> {
        let (high, lows, _) = self.parts(shape)?;
        let mut i = 0u64;
        for (w, &word) in high.iter().enumerate() {
            let mut ones = word;
            while ones != 0 {
                let position = w as u64 * 64 + u64::from(ones.trailing_zeros());
                ones &= ones - 1;
                if i >= shape.entries || position >= shape.high_bits {
                    return None;
                }
                let low = bits::get(lows, i * u64::from(shape.low), shape.low);
                each(((position - i) << shape.low) | low);
                i += 1;
            }
        }
        Some(())
    }

    /// Every entry in order, `None` if the words do not parse (only words not yet checked
    /// by `from_words` can fail).
    pub fn decode(&self) -> Option<Vec<Entry>> {
        if self.words.is_empty() {
            return Some(Vec::new());
        }
        let shape = self.shape()?;
        let mut entries = Vec::with_capacity(shape.entries as usize);
        let mut parsed = true;
        self.each_value(&shape, |value| match unpad(value, shape.longest) {
            Some(e) if parsed => entries.push(e),
            _ => parsed = false,
        })?;
        if !parsed {
            return None;
        }
        for &word in self.parts(&shape)?.2 {
            entries.get_mut((word & INDEX) as usize)?.count = (word >> INDEX_BITS) + 2;
        }
        Some(entries)
    }

    /// The position in the high bits where bucket `bucket` starts: after its `bucket`-th
    /// zero.
    fn bucket_start(high: &[u64], bucket: u64) -> Option<u64> {
        if bucket == 0 {
            return Some(0);
        }
        let (mut k, mut w) = (bucket - 1, 0usize);
        loop {
            let word = *high.get(w)?;
            let zeros = u64::from((!word).count_ones());
            if k < zeros {
                crate::compact::meter::add(w as u64 + 1);
                return Some(w as u64 * 64 + bits::select(!word, k) + 1);
            }
            k -= zeros;
            w += 1;
        }
    }

    /// The index an entry of padded `value` has or would have, and whether it is held.
    fn find(&self, shape: &Shape, value: u64) -> Option<(u64, bool)> {
        let (high, lows, _) = self.parts(shape)?;
        let bucket = value >> shape.low;
        let mut position = Self::bucket_start(high, bucket)?;
        let mut index = position.checked_sub(bucket)?;
        let want = value & bits::mask(shape.low);
        while position < shape.high_bits && bits::bit(high, position) {
            let low = bits::get(lows, index * u64::from(shape.low), shape.low);
            if low >= want {
                return Some((index, low == want));
            }
            index += 1;
            position += 1;
        }
        Some((index, false))
    }

    /// How often entry `index` was added.
    fn count(&self, shape: &Shape, index: u64) -> u64 {
        let counters = self.parts(shape).map_or(&[][..], |p| p.2);
        let at = counters.partition_point(|w| w & INDEX < index);
        match counters.get(at) {
            Some(w) if w & INDEX == index => (w >> INDEX_BITS) + 2,
            _ => 1,
        }
    }

    /// Calls `found` with the length of every entry that is a prefix of `tail` (the hash
    /// bits after the segment's address), in the segment's order, until it returns true; returns
    /// whether one did. They all lie in the block of values sharing the query's prefix of
    /// the shortest length held: one bucket found, then the entries of that block read.
    pub fn prefixes(&self, tail: u128, mut found: impl FnMut(u32) -> bool) -> bool {
        let Some(shape) = self.shape() else {
            return false;
        };
        let Some((high, lows, _)) = self.parts(&shape) else {
            return false;
        };
        let block = shape.longest + 1 - shape.shortest;
        let first = prefix(tail, shape.shortest) << block;
        let end = first + (1u64 << block);
        let mut zeros = first >> shape.low;
        let Some(mut position) = Self::bucket_start(high, zeros) else {
            return false;
        };
        while position < shape.high_bits {
            if !bits::bit(high, position) {
                zeros += 1;
                position += 1;
                continue;
            }
            let i = position - zeros;
            let value = (zeros << shape.low) | bits::get(lows, i * u64::from(shape.low), shape.low);
            if value >= end {
                break;
            }
            crate::compact::meter::add(1);
            if value >= first {
                if let Some(e) = unpad(value, shape.longest) {
                    if e.fingerprint == prefix(tail, e.len) && found(e.len) {
                        return true;
                    }
                }
            }
            position += 1;
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
            longest = longest.max(Some(len));
            false
        });
        longest
    }
}
