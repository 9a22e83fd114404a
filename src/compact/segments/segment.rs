//! One segment: the fingerprints of the items whose address leads here, a sorted set coded
//! Elias-Fano style in one allocation, with a count for the entries added more than once.
//!
//! Entries of every length share one sorted list, each padded InfiniFilter-style (its
//! fingerprint, a one, then zeros, to the longest length held plus one bit): an entry's value
//! says its length (its lowest set bit), and every entry that can be a prefix of a query
//! lies in the block of values sharing the query's shortest prefix held, so a lookup finds
//! that block once and reads the few entries in it. Each generation's entries are about as
//! dense among their values as the others' (an older one has half the entries with one bit
//! less), so padding costs next to nothing against a list per length. A segment whose entries
//! all have one length (a filter's first segment, until it splits) codes their fingerprints
//! as they are: the marker bit would say nothing, and leaving it out takes one bit off every
//! entry (a filter of 200 items at 1 % takes 25 bytes less).
//!
//! Words: a header (entries, counters, shortest and longest length, the head's words), the
//! select samples (where every `SAMPLE`-th bucket starts in the high bits, 16 bits each, so a
//! lookup finds its bucket from the nearest sample without counting the zeros before it),
//! the high bits (one per entry and one per bucket of `2^low` values), the low bits (`low`
//! per entry), then one word per counted entry (its index, and its count less two). The
//! layout is wholly determined by the entries: `from_words` accepts exactly the words
//! `encode` writes.
//!
//! The words are held in one allocation, or, when that takes less memory, in two: a head of
//! the most whole words that fill a size class (holding at least the header, the samples and
//! the high bits) and a tail with the rest of the low bits and the counters (`head_words`).
//! One allocation in its size class leaves up to a quarter of it unused (a tenth on
//! average); a head that fills its class and a small tail leave next to nothing, which takes
//! a filter at 1 % from 1.54x to 1.47x a link sized for exactly its items on average and its
//! worst size from 1.73-1.78x to 1.67x (`compact::design::storage_table`). The cut is
//! determined by the words too, so it is the same on every replica and after every load.

use super::{size_class, MAX_LEN, MAX_LEVEL, MAX_SEGMENT_ENTRIES};
use bits::{Split, SplitMut};
use std::ptr::NonNull;

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

/// The header's field of the entries held (its lowest 13 bits).
const ENTRIES_FIELD: u64 = (1 << 13) - 1;

/// Bits of a counter word holding the entry's index.
const INDEX_BITS: u32 = 16;
/// The index field of a counter word.
const INDEX: u64 = (1 << INDEX_BITS) - 1;
/// The largest count a counter word holds.
pub const MAX_COUNT: u64 = (1 << (64 - INDEX_BITS)) + 1;

/// Buckets between two select samples: one sample costs 16 bits per `SAMPLE` buckets (about
/// one bit in two hundred of the segment at 256), and a lookup counts zeros in about four
/// words of high bits from it (at 128, two words: the same time in the server, within its
/// noise, for 0.8 % more memory at 1 %).
const SAMPLE: u64 = 256;
/// Bits of one select sample (a position in the high bits, below `3 * MAX_SEGMENT_ENTRIES`).
const SAMPLE_BITS: u32 = 16;

/// A segment's words (none when it is empty), in two allocations when that takes less
/// memory: the head, the most whole words that fill a size class (at least through the high
/// bits), then the tail with the rest (`head_words`). A lookup reads the header, samples and
/// high bits from the head and at most the low bits of its bucket from the tail.
///
/// Held by two thin pointers, 16 bytes a directory slot where two boxed slices take 32:
/// each allocation's length is what the header (the head's first word) lays out
/// (`held_layout`). `hold` is the only maker of a segment with words and checks exactly
/// that; nothing writes the words in place: an edit takes them out as boxed slices (`take`),
/// changes them, and holds them again. The raw pointers are read only here.
#[derive(Default)]
pub struct Segment {
    head: Option<NonNull<u64>>,
    tail: Option<NonNull<u64>>,
}

// SAFETY: a segment owns its two allocations as a `Box<[u64]>` would, and hands out shared
// borrows of them only through `&self`.
unsafe impl Send for Segment {}
// SAFETY: as above; `&Segment` only reads.
unsafe impl Sync for Segment {}

/// A segment's words as two boxed slices (to build and to edit) or as two borrowed slices
/// (to read): the head and the tail.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Held<S> {
    words: S,
    tail: S,
}

/// Words to build or edit.
type Owned = Held<Box<[u64]>>;
/// Words to read.
type View<'a> = Held<&'a [u64]>;

/// The shape a held segment's header states, and the lengths of its head (the header's top
/// 16 bits) and its tail; `None` if it states none. The one reading of a header's layout that
/// every access to a held segment goes through.
#[inline]
fn held_layout(header: u64) -> Option<(Shape, usize, usize)> {
    let shape = Shape::of_header(header)?;
    let tail = shape.words.checked_sub(shape.head)?;
    Some((shape, shape.head, tail))
}

impl Segment {
    /// Holds `owned`, or gives it back unless each allocation has the length its header lays
    /// out and the header is the one `encode` writes (as every segment that `encode` or an
    /// edit makes has; `from_words` refuses others first).
    fn hold(owned: Owned) -> Result<Segment, Owned> {
        Segment::hold_laid(owned, true)
    }

    /// `hold`, the cut between head and tail checked to be `head_words`'s if `canonical`
    /// (the lengths always are: what reading the words relies on).
    #[inline]
    fn hold_laid(owned: Owned, canonical: bool) -> Result<Segment, Owned> {
        let Some(&header) = owned.words.first() else {
            return match owned.tail.is_empty() {
                true => Ok(Segment::default()),
                false => Err(owned),
            };
        };
        let fits = held_layout(header).is_some_and(|(shape, head, tail)| {
            shape.header() == header
                && (!canonical || head == head_words(shape.words, shape.low_at))
                && (head, tail) == (owned.words.len(), owned.tail.len())
        });
        if !fits {
            return Err(owned);
        }
        let pointer = |words: Box<[u64]>| NonNull::from(Box::leak(words)).cast::<u64>();
        Ok(Segment {
            tail: (!owned.tail.is_empty()).then(|| pointer(owned.tail)),
            head: Some(pointer(owned.words)),
        })
    }

    /// Holds what an edit of a held segment left. Refused words would be a defect of the
    /// edit (the tests, the model check and the fuzz targets, built with debug assertions,
    /// look for one); the server then keeps the words if they are what `encode` writes for
    /// the entries they hold, cut as it cuts them, and an empty segment only if not even that.
    ///
    /// An edit cuts the words where `Shape::of` says (`head_words`), so the server checks
    /// only their lengths; the tests, the model check and debug builds check the cut too.
    fn hold_edited(owned: Owned) -> Segment {
        let canonical = cfg!(any(test, debug_assertions, feature = "model-check"));
        Segment::hold_laid(owned, canonical).unwrap_or_else(|owned| {
            debug_assert!(false, "an edit left words its header does not lay out");
            Segment::from_words(owned.words().copied().collect()).unwrap_or_default()
        })
    }

    /// The shape, the head's and the tail's lengths; `None` when empty.
    #[inline]
    fn layout(&self) -> Option<(Shape, usize, usize)> {
        // SAFETY: `head` points to a live allocation of at least one word (`hold`).
        held_layout(unsafe { self.head?.as_ptr().read() })
    }

    /// The lengths of the head and the tail.
    #[inline]
    fn lengths(&self) -> (usize, usize) {
        self.layout().map_or((0, 0), |(_, head, tail)| (head, tail))
    }

    /// The words, to read.
    #[inline]
    fn view(&self) -> View<'_> {
        let (head_len, tail_len) = self.lengths();
        self.view_of(head_len, tail_len)
    }

    /// The words with the shape their header states (read once for a lookup or an edit);
    /// `None` when empty.
    #[inline]
    fn shaped(&self) -> Option<(View<'_>, Shape)> {
        let (shape, head, tail) = self.layout()?;
        Some((self.view_of(head, tail), shape))
    }

    /// The words as slices of the lengths `held_layout` gives for the header.
    #[inline]
    fn view_of(&self, head_len: usize, tail_len: usize) -> View<'_> {
        // SAFETY: each pointer is its allocation of exactly the length its header lays out
        // (`hold` checked it, and the words are never written while held), alive as long as
        // `self`; an absent pointer stands for no words.
        let slice = |p: Option<NonNull<u64>>, len: usize| match p {
            Some(p) => unsafe { std::slice::from_raw_parts(p.as_ptr().cast_const(), len) },
            None => &[],
        };
        Held {
            words: slice(self.head, head_len),
            tail: slice(self.tail, tail_len),
        }
    }

    /// The words taken out, to edit, leaving the segment empty.
    fn take(&mut self) -> Owned {
        let (head_len, tail_len) = self.lengths();
        // SAFETY: as in `view`; the pointers are taken, so each allocation goes back into
        // exactly one box, with the length it was made with.
        let boxed = |p: Option<NonNull<u64>>, len: usize| match p {
            Some(p) => unsafe {
                Box::from_raw(std::ptr::slice_from_raw_parts_mut(p.as_ptr(), len))
            },
            None => Box::default(),
        };
        let (head, tail) = (self.head.take(), self.tail.take());
        Held {
            words: boxed(head, head_len),
            tail: boxed(tail, tail_len),
        }
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        drop(self.take());
    }
}

impl Clone for Segment {
    fn clone(&self) -> Segment {
        let view = self.view();
        Segment::hold_edited(Held {
            words: view.words.into(),
            tail: view.tail.into(),
        })
    }
}

impl PartialEq for Segment {
    fn eq(&self, other: &Segment) -> bool {
        self.view() == other.view()
    }
}

impl Eq for Segment {}

impl std::fmt::Debug for Segment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.view().fmt(f)
    }
}

/// Bytes of the second allocation's place (the tail's pointer, where a segment is held):
/// what splitting a segment must save at least.
const TAIL_SLOT: u64 = std::mem::size_of::<Option<NonNull<u64>>>() as u64;

/// The largest size class at most `bytes`.
fn class_below(bytes: u64) -> u64 {
    let class = size_class(bytes);
    match class {
        c if c == bytes => c,
        0..=8 => 0,
        9..=128 => class - 16,
        _ => class - (1u64 << (63 - (class - 1).leading_zeros() - 2)),
    }
}

/// How many of a segment's `words` its head holds: all unless a head filling a size class
/// and a tail with the rest take less (the tail's place counted), the head holding at least
/// the `before_lows` words of the header, samples and high bits.
pub fn head_words(words: usize, before_lows: usize) -> usize {
    let bytes = 8 * words as u64;
    let head = class_below(bytes);
    let split = head / 8 >= before_lows as u64
        && head < bytes
        && head + size_class(bytes - head) + TAIL_SLOT < size_class(bytes);
    match split {
        true => (head / 8) as usize,
        false => words,
    }
}

/// Bytes of a segment's allocations at `words` words (for the storage model).
#[cfg(test)]
pub fn segment_bytes(words: usize, before_lows: usize) -> u64 {
    let head = head_words(words, before_lows);
    size_class(8 * head as u64) + size_class(8 * (words - head) as u64)
}

/// Where each part of a segment's words lies, from its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    entries: u64,
    counters: u64,
    /// The shortest and longest lengths of the entries with bits (both 0 when the void is
    /// the only entry): a lookup's block is read at the shortest, so a void beside other
    /// entries does not widen it to the whole segment.
    shortest: u32,
    longest: u32,
    /// The void's depth, when the segment holds one (an entry of no bits after the address):
    /// the address bits its items share, so the segments it covers are those whose address
    /// has these low bits (`Segmented::covering_void`). It is tested apart from the walk.
    void: Option<u32>,
    /// Bits of an entry's value: `longest + 1` when lengths differ (padded), else `longest`
    /// (each value is its fingerprint: a segment of one length pays no marker bit).
    width: u32,
    low: u32,
    high_bits: u64,
    /// Select samples: where bucket `k * SAMPLE` starts, for `k` in `1..=samples`.
    samples: u64,
    high_at: usize,
    low_at: usize,
    counters_at: usize,
    words: usize,
    /// Words in the head (`head_words`; the rest are the tail's).
    head: usize,
}

impl Shape {
    /// The shape of a segment of these entries, cut into head and tail as `head_words` cuts.
    fn of(
        entries: u64,
        counters: u64,
        (shortest, longest): (u32, u32),
        void: Option<u32>,
    ) -> Option<Shape> {
        Shape::laid(entries, counters, (shortest, longest), void, head_words)
    }

    /// The same, its head `head(words, low_at)` words.
    #[inline]
    fn laid(
        entries: u64,
        counters: u64,
        (shortest, longest): (u32, u32),
        void: Option<u32>,
        head: impl FnOnce(usize, usize) -> usize,
    ) -> Option<Shape> {
        if entries == 0 || entries > MAX_SEGMENT_ENTRIES || counters > entries {
            return None;
        }
        if shortest > longest || longest > MAX_LEN || void.is_some_and(|d| d > MAX_LEVEL) {
            return None;
        }
        // Entries with bits have one at least; lengths of 0 say the void is all there is.
        let only_void = void.is_some() && entries == 1;
        if (shortest == 0) != only_void || (only_void && longest != 0) {
            return None;
        }
        let width = longest + u32::from(void.is_some() || shortest != longest);
        // `low` is the floor of log2(2^width / entries), found without dividing (every
        // lookup reads it): width less the ceiling of log2(entries).
        let low = width.saturating_sub(64 - (entries - 1).leading_zeros());
        let buckets = 1u64 << (width - low);
        let high_bits = entries + buckets;
        let samples = (buckets - 1) / SAMPLE;
        let high_at = 1 + (samples * u64::from(SAMPLE_BITS)).div_ceil(64) as usize;
        let low_at = high_at + high_bits.div_ceil(64) as usize;
        let counters_at = low_at + (entries * u64::from(low)).div_ceil(64) as usize;
        let words = counters_at + counters as usize;
        Some(Shape {
            entries,
            counters,
            shortest,
            longest,
            void,
            width,
            low,
            high_bits,
            samples,
            high_at,
            low_at,
            counters_at,
            words,
            head: head(words, low_at),
        })
    }

    /// The shape a header word states, if it states one (not yet checked against words).
    #[inline]
    fn of_header(header: u64) -> Option<Shape> {
        let field = |at: u32, bits: u32| header >> at & ((1 << bits) - 1);
        let lengths = (field(26, 6) as u32, field(32, 6) as u32);
        let void = (field(52, 1) == 1).then_some(field(53, 6) as u32);
        Shape::laid(
            header & ENTRIES_FIELD,
            field(13, 13),
            lengths,
            void,
            |_, _| field(38, 14) as usize,
        )
    }

    /// Bytes the allocations of its head and tail take.
    #[inline]
    fn bytes(&self) -> u64 {
        size_class(8 * self.head as u64)
            + size_class(8 * self.words.saturating_sub(self.head) as u64)
    }

    /// The value of an entry of `len` bits (`len` within the segment's lengths).
    #[inline]
    fn value(&self, len: u32, fingerprint: u64) -> u64 {
        match self.width == self.longest {
            true => fingerprint,
            false => padded(len, fingerprint, self.longest),
        }
    }

    /// The entry (counted once) of a value, if it is one.
    #[inline]
    fn entry(&self, value: u64) -> Option<Entry> {
        match self.width == self.longest {
            true => Some(Entry {
                len: self.longest,
                fingerprint: value,
                count: 1,
            }),
            false => unpad(value, self.longest),
        }
    }

    /// The length of the entry of `value` if it is a prefix of `tail`, for a value read in
    /// the walk of `tail`'s block from its first value `first` (values below it are of the
    /// bucket, not the block).
    #[inline]
    fn prefix_of(&self, value: u64, first: u64, tail: u128) -> Option<u32> {
        if value < first {
            return None;
        }
        let e = self.entry(value)?;
        // The void is a prefix of everything; its filter tests it apart (`covering_void`).
        (e.len > 0 && e.fingerprint == prefix(tail, e.len)).then_some(e.len)
    }

    /// Whether an entry of `len` bits can be edited in place: it is within the lengths held
    /// and keeps the segment padded or not as it is.
    #[inline]
    fn holds_length(&self, len: u32) -> bool {
        match self.width == self.longest {
            true => len == self.longest,
            false => len <= self.longest,
        }
    }

    /// The header word: entries and counters (13 bits each: at most 4,096), shortest and
    /// longest length (6 bits each: at most 60), the words of the head (14 bits:
    /// `head_words`, a segment's words are below 8,000), which every read of a held segment
    /// takes from here rather than working it out, then whether it holds a void (a bit)
    /// and the void's depth (6 bits: at most `MAX_LEVEL`); the top 5 bits are zero.
    fn header(&self) -> u64 {
        let (void, depth) = self.void.map_or((0, 0), |d| (1, u64::from(d)));
        self.entries
            | self.counters << 13
            | u64::from(self.shortest) << 26
            | u64::from(self.longest) << 32
            | (self.head as u64) << 38
            | void << 52
            | depth << 53
    }

    /// The lengths after an entry of `len` bits (not the void) comes.
    #[inline]
    fn lengths_with(&self, len: u32) -> (u32, u32) {
        match self.shortest {
            0 => (len, len),
            s => (s.min(len), self.longest.max(len)),
        }
    }
}

/// A segment's words cut into their parts (the header apart).
struct Parts<'a> {
    samples: &'a [u64],
    high: &'a [u64],
    lows: Split<'a>,
    counters: Split<'a>,
}

impl Parts<'_> {
    /// Starts loading the low bits of bucket `bucket`'s entries where they lie on average
    /// (the entries spread evenly over the buckets), so that reading them overlaps finding
    /// the bucket in the high bits.
    #[inline]
    fn prefetch_lows(&self, shape: &Shape, bucket: u64) {
        let buckets_log = shape.width - shape.low;
        let index = (bucket * shape.entries) >> buckets_log;
        if let Some(word) = self
            .lows
            .word_ref((index * u64::from(shape.low) / 64) as usize)
        {
            crate::bloom::link::prefetch((word as *const u64).cast());
        }
    }
}

/// The same, to write.
struct PartsMut<'a> {
    header: &'a mut u64,
    samples: &'a mut [u64],
    high: &'a mut [u64],
    lows: SplitMut<'a>,
    counters: SplitMut<'a>,
}

/// Moves the select samples past position `at` of the high bits by `by` (a one put in or
/// taken out there).
fn shift_samples(shape: &Shape, samples: &mut [u64], at: u64, by: i64) {
    for k in 0..shape.samples {
        let field = k * u64::from(SAMPLE_BITS);
        let start = bits::get(samples, field, SAMPLE_BITS);
        if start > at {
            bits::put(samples, field, SAMPLE_BITS, start.wrapping_add_signed(by));
        }
    }
}

/// Writes a segment's words value by value, in order: what `encode` and an add's recoding
/// (`edit::grown`) share, so that both write exactly the same words for the same entries.
struct Coder {
    /// The segment being written, cut into its head and tail from the start.
    segment: Owned,
    shape: Shape,
    /// Values pushed.
    pushed: u64,
    previous: Option<u64>,
    /// The next select sample to write (bucket `sample * SAMPLE`).
    sample: u64,
    /// Whether every value pushed was in order and within the shape.
    fits: bool,
}

impl Coder {
    fn new(shape: Shape) -> Coder {
        let head = shape.head;
        let mut words = vec![0u64; head].into_boxed_slice();
        if let Some(header) = words.first_mut() {
            *header = shape.header();
        }
        let tail = vec![0u64; shape.words - head].into_boxed_slice();
        Coder {
            segment: Held { words, tail },
            shape,
            pushed: 0,
            previous: None,
            sample: 1,
            fits: true,
        }
    }

    /// Writes the samples of the buckets up to `bucket`, which start after `before` entries.
    #[inline(always)]
    fn samples_to(&mut self, bucket: u64, before: u64) {
        // The samples lie in the head.
        let words = &mut self.segment.words;
        while self.sample <= self.shape.samples && self.sample * SAMPLE <= bucket {
            let at = 64 + (self.sample - 1) * u64::from(SAMPLE_BITS);
            bits::put(
                &mut words[..],
                at,
                SAMPLE_BITS,
                self.sample * SAMPLE + before,
            );
            self.sample += 1;
        }
    }

    /// Writes the next entry's padded value (above the one before, within the shape).
    #[inline(always)]
    fn push(&mut self, value: u64) {
        let shape = self.shape;
        let i = self.pushed;
        if self.previous.is_some_and(|p| p >= value)
            || value >> shape.width != 0
            || i >= shape.entries
        {
            self.fits = false;
            return;
        }
        self.previous = Some(value);
        self.pushed += 1;
        let bucket = value >> shape.low;
        self.samples_to(bucket, i);
        let segment = &mut self.segment;
        bits::put(
            &mut segment.words[..],
            shape.high_at as u64 * 64 + bucket + i,
            1,
            1,
        );
        let low_at = shape.low_at as u64 * 64 + i * u64::from(shape.low);
        let mut words = SplitMut {
            head: &mut segment.words,
            tail: &mut segment.tail,
        };
        bits::put(&mut words, low_at, shape.low, value);
    }

    /// The segment, with its counter words; `None` unless exactly the shape's entries and
    /// counters arrived, in order.
    fn finish(mut self, counters: impl Iterator<Item = u64>) -> Option<Owned> {
        if !self.fits || self.pushed != self.shape.entries {
            return None;
        }
        self.samples_to(u64::MAX, self.shape.entries);
        let cut = self.segment.words.len();
        let head = self
            .segment
            .words
            .get_mut(self.shape.counters_at.min(cut)..)?;
        let tail = self
            .segment
            .tail
            .get_mut(self.shape.counters_at.saturating_sub(cut)..)?;
        let mut slots = head.iter_mut().chain(tail.iter_mut());
        let mut previous = None;
        for word in counters {
            if previous.is_some_and(|p| p >= word & INDEX) || word & INDEX >= self.shape.entries {
                return None;
            }
            previous = Some(word & INDEX);
            *slots.next()? = word;
        }
        if slots.next().is_some() {
            return None;
        }
        Some(self.segment)
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
    // Every length held is at most 64 bits (`MAX_LEN`): its prefix lies in the top word,
    // read without a shift of all 128 bits (a lookup takes one for each entry it compares).
    match len {
        0 => 0,
        1..=64 => ((tail >> 64) as u64) >> (64 - len),
        r => (tail >> (128 - r)) as u64,
    }
}

/// The values of `tail`'s block in a segment shaped `shape`: those sharing its prefix of the
/// shortest length held, where every entry that can be a prefix of `tail` lies.
#[inline]
fn block(shape: &Shape, tail: u128) -> (u64, u64) {
    let width = shape.width - shape.shortest;
    let first = prefix(tail, shape.shortest) << width;
    (first, first + (1u64 << width))
}

impl Segment {
    /// Codes entries sorted by (length, fingerprint), distinct, each counted at least once
    /// and at most `MAX_COUNT` times, fingerprints within their length; `None` otherwise.
    /// A void among them has depth 0 (`encode_with_void` says another).
    pub fn encode(entries: &[Entry]) -> Option<Segment> {
        Segment::encode_with_void(entries, 0)
    }

    /// The same, a void among them (an entry of no bits) of depth `depth`: the address bits
    /// its items share, at most those of the segment that holds it.
    pub fn encode_with_void(entries: &[Entry], depth: u32) -> Option<Segment> {
        Segment::hold(Owned::encode(entries, depth)?).ok()
    }

    /// A segment from stored words, refused unless they are exactly what `encode` writes for
    /// the entries they hold (so every field they determine is derived, none trusted).
    pub fn from_words(words: Vec<u64>) -> Option<Segment> {
        let segment = Owned::from_whole(words);
        let entries = segment.decode()?;
        let depth = segment.shape().and_then(|s| s.void).unwrap_or(0);
        (Owned::encode(&entries, depth)? == segment).then(|| Segment::hold(segment).ok())?
    }

    /// The depth of the void it holds, if it holds one.
    #[inline]
    pub fn void_depth(&self) -> Option<u32> {
        self.layout().and_then(|(shape, _, _)| shape.void)
    }

    /// Its words, in order (the head's, then the tail's).
    pub fn words(&self) -> impl Iterator<Item = &u64> + '_ {
        let view = self.view();
        view.words.iter().chain(view.tail.iter())
    }

    /// How many words it has.
    pub fn word_count(&self) -> usize {
        let (head, tail) = self.lengths();
        head + tail
    }

    /// Calls `relocate` with each allocation of its words, for the allocator to move
    /// (active defragmentation: the words stay as they are).
    pub fn relocate(&mut self, mut relocate: impl FnMut(&mut Box<[u64]>)) {
        let mut owned = self.take();
        relocate(&mut owned.words);
        relocate(&mut owned.tail);
        *self = Segment::hold_edited(owned);
    }

    /// Distinct entries held.
    #[inline]
    pub fn len(&self) -> u64 {
        // SAFETY: `head` points to a live allocation of at least one word (`hold`).
        self.head
            .map_or(0, |head| unsafe { head.as_ptr().read() } & ENTRIES_FIELD)
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    /// Where its parts lie (for the storage model, `compact::design`): words before the low
    /// parts, the low width, entries, and counter words; `None` when empty.
    #[cfg(test)]
    pub fn parts_layout(&self) -> Option<(u64, u32, u64, u64)> {
        self.view().parts_layout()
    }

    /// Bytes its allocations take (the allocator's size classes of its head and tail).
    pub fn bytes(&self) -> u64 {
        self.layout().map_or(0, |(shape, _, _)| shape.bytes())
    }

    /// Every entry in order, `None` if the words do not parse (only words not yet checked
    /// by `from_words` can fail).
    pub fn decode(&self) -> Option<Vec<Entry>> {
        self.view().decode()
    }

    /// Calls `found` with the length of every entry that is a prefix of `tail` (the hash
    /// bits after the segment's address), in the segment's order, until it returns true;
    /// returns whether one did.
    #[inline]
    pub fn prefixes(&self, tail: u128, found: impl FnMut(u32) -> bool) -> bool {
        self.shaped()
            .is_some_and(|(view, shape)| view.prefixes_in(&shape, tail, found))
    }

    /// Starts loading the words a lookup reads first (for batches).
    #[inline]
    pub fn prefetch(&self) {
        if let Some(head) = self.head {
            crate::bloom::link::prefetch(head.as_ptr().cast_const().cast());
        }
    }

    /// Starts loading the tail's first words, which an add's gap in the low bits moves
    /// whatever its place (before the lookup that precedes it, so that the two waits overlap).
    #[inline]
    pub fn prefetch_tail(&self) {
        if let Some(tail) = self.tail {
            crate::bloom::link::prefetch(tail.as_ptr().cast_const().cast());
        }
    }

    /// Starts loading every line of its words but the header's (an add's gap moves the
    /// words past its entry's place, wherever that is), once the header has arrived and
    /// before the add's lookup, so that their waits overlap the lookup's.
    #[inline]
    fn prefetch_words(&self, head_len: usize, tail_len: usize) {
        let lines = |p: Option<NonNull<u64>>, from: usize, len: usize| {
            if let Some(p) = p {
                let words = (from..len).step_by(8).chain(len.checked_sub(1));
                for w in words {
                    crate::bloom::link::prefetch(p.as_ptr().wrapping_add(w).cast_const().cast());
                }
            }
        };
        lines(self.head, 8, head_len);
        lines(self.tail, 0, tail_len);
    }

    /// Starts loading the words a lookup of `tail` reads after the header (for batches, once
    /// the header has arrived).
    #[inline]
    pub fn prefetch_bucket(&self, tail: u128) {
        if let Some((view, shape)) = self.shaped() {
            view.prefetch_bucket_in(&shape, tail);
        }
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

impl Owned {
    /// Codes entries sorted by (length, fingerprint), distinct, each counted at least once
    /// and at most `MAX_COUNT` times, fingerprints within their length; `None` otherwise.
    fn encode(entries: &[Entry], depth: u32) -> Option<Owned> {
        if entries.is_empty() {
            return Some(Owned::default());
        }
        let fits = |e: &Entry| e.len <= MAX_LEN && e.fingerprint >> e.len == 0;
        if !entries
            .iter()
            .all(|e| fits(e) && (1..=MAX_COUNT).contains(&e.count))
        {
            return None;
        }
        let lens = || entries.iter().map(|e| e.len).filter(|&len| len > 0);
        let lengths = (lens().min().unwrap_or(0), lens().max().unwrap_or(0));
        let void = entries.iter().any(|e| e.len == 0).then_some(depth);
        let counters = entries.iter().filter(|e| e.count > 1).count() as u64;
        let shape = Shape::of(entries.len() as u64, counters, lengths, void)?;
        let mut coder = Coder::new(shape);
        for e in entries {
            coder.push(shape.value(e.len, e.fingerprint));
        }
        let counted = entries.iter().enumerate().filter(|(_, e)| e.count > 1);
        coder.finish(counted.map(|(i, e)| i as u64 | (e.count - 2) << INDEX_BITS))
    }

    /// The segment of `words` (all of them, in order), cut into its head and tail as its
    /// header lays it out (kept whole when the header does not parse: such words are refused
    /// by `from_words`, and no command makes them).
    fn from_whole(words: Vec<u64>) -> Owned {
        let layout = words.first().and_then(|h| Shape::of_header(*h));
        let head = layout.map_or(words.len(), |s| head_words(words.len(), s.low_at));
        Owned::cut(words, head)
    }

    /// The segment of `words` (all of them, in order), its head the first `head`.
    fn cut(mut words: Vec<u64>, head: usize) -> Owned {
        let tail = words.split_off(head.min(words.len()));
        Held {
            words: words.into_boxed_slice(),
            tail: tail.into_boxed_slice(),
        }
    }

    /// The parts and the header, to write; `None` unless the words are as many as `shape`
    /// lays out, the head holding at least the words before the low bits.
    fn parts_mut(&mut self, shape: &Shape) -> Option<PartsMut<'_>> {
        if self.word_count() != shape.words || self.words.len() < shape.low_at {
            return None;
        }
        let cut = self.words.len();
        let (header, rest) = self.words.split_first_mut()?;
        let (samples, rest) = rest.split_at_mut(shape.high_at - 1);
        let (high, rest) = rest.split_at_mut(shape.low_at - shape.high_at);
        let in_head = shape.counters_at.min(cut) - shape.low_at;
        let (lows_head, counters_head) = rest.split_at_mut(in_head);
        let in_tail = shape.counters_at.saturating_sub(cut);
        let (lows_tail, counters_tail) = self.tail.split_at_mut(in_tail.min(self.tail.len()));
        Some(PartsMut {
            header,
            samples,
            high,
            lows: SplitMut {
                head: lows_head,
                tail: lows_tail,
            },
            counters: SplitMut {
                head: counters_head,
                tail: counters_tail,
            },
        })
    }
}

impl<S: std::ops::Deref<Target = [u64]>> Held<S> {
    /// Its words, in order (the head's, then the tail's).
    fn words(&self) -> impl Iterator<Item = &u64> + '_ {
        self.words.iter().chain(self.tail.iter())
    }

    /// How many words it has.
    fn word_count(&self) -> usize {
        self.words.len() + self.tail.len()
    }

    fn shape(&self) -> Option<Shape> {
        let header = *self.words.first()?;
        let shape = Shape::of_header(header)?;
        // Where the head ends is not checked here (every lookup asks): `parts` reads each
        // part within the words there are, and `from_words` accepts only the cut that
        // `head_words` makes.
        (shape.words == self.word_count() && shape.header() == header).then_some(shape)
    }

    /// Words `start..end` of the whole, wherever they lie.
    fn span(&self, start: usize, end: usize) -> Option<Split<'_>> {
        let cut = self.words.len();
        Some(Split {
            head: self.words.get(start.min(cut)..end.min(cut))?,
            tail: self
                .tail
                .get(start.saturating_sub(cut)..end.saturating_sub(cut))?,
        })
    }

    /// The parts as `shape` lays them out.
    fn parts(&self, shape: &Shape) -> Option<Parts<'_>> {
        Some(Parts {
            samples: self.words.get(1..shape.high_at)?,
            high: self.words.get(shape.high_at..shape.low_at)?,
            lows: self.span(shape.low_at, shape.counters_at)?,
            counters: self.span(shape.counters_at, shape.words)?,
        })
    }

    /// Where its parts lie (for the storage model, `compact::design`): words before the low
    /// parts, the low width, entries, and counter words; `None` when empty.
    #[cfg(test)]
    fn parts_layout(&self) -> Option<(u64, u32, u64, u64)> {
        let shape = self.shape()?;
        Some((
            shape.low_at as u64,
            shape.low,
            shape.entries,
            shape.counters,
        ))
    }

    /// Calls `each` with every entry's padded value in order; `None` if the words do not
    /// parse (only words not yet checked by `from_words` can fail).
    fn each_value(&self, shape: &Shape, mut each: impl FnMut(u64)) -> Option<()> {
        let Parts { high, lows, .. } = self.parts(shape)?;
        let mut i = 0u64;
        for (w, &word) in high.iter().enumerate() {
            let mut ones = word;
            while ones != 0 {
                let position = w as u64 * 64 + u64::from(ones.trailing_zeros());
                ones &= ones - 1;
                if i >= shape.entries || position >= shape.high_bits {
                    return None;
                }
                let low = lows.get(i * u64::from(shape.low), shape.low);
                each(((position - i) << shape.low) | low);
                i += 1;
            }
        }
        Some(())
    }

    /// Every entry in order, `None` if the words do not parse (only words not yet checked
    /// by `from_words` can fail).
    fn decode(&self) -> Option<Vec<Entry>> {
        if self.words.is_empty() {
            return Some(Vec::new());
        }
        let shape = self.shape()?;
        let mut entries = Vec::with_capacity(shape.entries as usize);
        let mut parsed = true;
        self.each_value(&shape, |value| match shape.entry(value) {
            Some(e) if parsed => entries.push(e),
            _ => parsed = false,
        })?;
        if !parsed {
            return None;
        }
        for &word in self.parts(&shape)?.counters.iter() {
            entries.get_mut((word & INDEX) as usize)?.count = (word >> INDEX_BITS) + 2;
        }
        Some(entries)
    }

    /// The position in the high bits where bucket `bucket` starts (after its `bucket`-th
    /// zero): from the sample before it, the zeros after that counted.
    fn bucket_start(parts: &Parts, bucket: u64) -> Option<u64> {
        let k = bucket / SAMPLE;
        let position = match k {
            0 => 0,
            k => bits::get(parts.samples, (k - 1) * u64::from(SAMPLE_BITS), SAMPLE_BITS),
        };
        let need = bucket - k * SAMPLE;
        if need == 0 {
            return Some(position);
        }
        let (at, words) = bits::after_zeros(parts.high, position, need)?;
        crate::compact::meter::add(words);
        Some(at)
    }

    /// The index an entry of padded `value` has or would have, and whether it is held: the
    /// walk of its bucket up to it.
    fn find(&self, shape: &Shape, value: u64) -> Option<(u64, bool)> {
        let bucket = value >> shape.low << shape.low;
        let (mut after, mut held) = (None, false);
        let start = self.walk(shape, (bucket, value.checked_add(1)?), |i, v| {
            if v < value {
                after = Some(i + 1);
            }
            held = v == value;
            held
        })?;
        Some((after.unwrap_or(start), held))
    }

    /// How often entry `index` was added.
    fn count(&self, shape: &Shape, index: u64) -> u64 {
        let counters = self.parts(shape).map_or(Split::default(), |p| p.counters);
        let at = counters.partition_point(|w| w & INDEX < index);
        match counters.word_ref(at) {
            Some(w) if w & INDEX == index => (w >> INDEX_BITS) + 2,
            _ => 1,
        }
    }

    /// Calls `found` with the length of every entry that is a prefix of `tail` (the hash
    /// bits after the segment's address), in the segment's order, until it returns true; returns
    /// whether one did. They all lie in the block of values sharing the query's prefix of
    /// the shortest length held: one bucket found, then the entries of that block read.
    fn prefixes_in(&self, shape: &Shape, tail: u128, mut found: impl FnMut(u32) -> bool) -> bool {
        let shape = *shape;
        let (first, end) = block(&shape, tail);
        let mut hit = false;
        self.walk(&shape, (first, end), |_, value| {
            hit = shape.prefix_of(value, first, tail).is_some_and(&mut found);
            hit
        });
        hit
    }

    /// An add's one read of the block `prefixes_in` reads: whether an entry held is a prefix
    /// of `tail`, and the index the entry of padded `value` has or would have and whether it
    /// is held (as `find`). `None` unless `value` lies in the block, as the value of an entry
    /// of `tail` within the lengths held (`Shape::holds_length`) and no shorter than the
    /// shortest does.
    fn probe(&self, shape: &Shape, tail: u128, value: u64) -> Option<(bool, u64, bool)> {
        let shape = *shape;
        let (first, end) = block(&shape, tail);
        if value < first || value >= end {
            return None;
        }
        let (mut present, mut held, mut after) = (false, false, None);
        let start = self.walk(&shape, (first, end), |i, v| {
            if v < value {
                after = Some(i + 1);
            }
            held |= v == value;
            present = present || shape.prefix_of(v, first, tail).is_some();
            false
        })?;
        // Every entry before the block's first bucket is below `first`, so below `value`.
        Some((present, after.unwrap_or(start), held))
    }

    /// Calls `visit` with the index and value of each entry in order from the first bucket of
    /// the block `first..end` (so values below `first` in that bucket too), until a value is
    /// past the block or `visit` returns true; returns the index of that bucket's first
    /// entry, `None` if the words do not parse.
    #[inline]
    fn walk(
        &self,
        shape: &Shape,
        (first, end): (u64, u64),
        mut visit: impl FnMut(u64, u64) -> bool,
    ) -> Option<u64> {
        let parts = self.parts(shape)?;
        let (high, lows) = (parts.high, parts.lows);
        let mut zeros = first >> shape.low;
        parts.prefetch_lows(shape, zeros);
        let mut position = Self::bucket_start(&parts, zeros)?;
        let start = position.checked_sub(zeros)?;
        while position < shape.high_bits {
            if !bits::bit(high, position) {
                // The next bucket's values start past the block: nothing more to read.
                zeros += 1;
                if zeros << shape.low >= end {
                    break;
                }
                position += 1;
                continue;
            }
            let i = position - zeros;
            let value = (zeros << shape.low) | lows.get(i * u64::from(shape.low), shape.low);
            if value >= end {
                break;
            }
            crate::compact::meter::add(1);
            if visit(i, value) {
                break;
            }
            position += 1;
        }
        Some(start)
    }

    /// Starts loading the words a lookup of `tail` reads after the header (for batches, once
    /// the header has arrived): the select sample of its bucket, and where its high bits and
    /// low bits lie on average (the entries spread evenly over the buckets).
    #[inline]
    fn prefetch_bucket_in(&self, shape: &Shape, tail: u128) {
        let shape = *shape;
        let Some(parts) = self.parts(&shape) else {
            return;
        };
        let block = shape.width - shape.shortest;
        let bucket = prefix(tail, shape.shortest) << block >> shape.low;
        let at = |words: &[u64], bit: u64| {
            if let Some(word) = words.get((bit / 64) as usize) {
                crate::bloom::link::prefetch((word as *const u64).cast());
            }
        };
        if let Some(k) = (bucket / SAMPLE).checked_sub(1) {
            at(parts.samples, k * u64::from(SAMPLE_BITS));
        }
        let buckets_log = shape.width - shape.low;
        at(
            parts.high,
            bucket + ((bucket * shape.entries) >> buckets_log),
        );
        parts.prefetch_lows(&shape, bucket);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_low_width_is_the_quotient_s_logarithm() {
        let lengths = (1..=MAX_LEN).flat_map(|l| [(1, l, None), (l, l, None), (l, l, Some(3))]);
        for (shortest, longest, void) in lengths {
            let width = longest + u32::from(shortest != longest || void.is_some());
            for entries in 2..=MAX_SEGMENT_ENTRIES {
                let shape = Shape::of(entries, 0, (shortest, longest), void).unwrap();
                let universe = 1u64 << width;
                let low = match universe / entries {
                    0 => 0,
                    q => 63 - q.leading_zeros(),
                };
                assert_eq!(shape.low, low, "{entries} entries, longest {longest}");
                assert_eq!(shape.high_bits, entries + ((universe - 1) >> low) + 1);
            }
        }
    }

    /// An add's one read answers as the lookup and the edit it replaces, for a new entry
    /// longer than any held (the segment widens), one held and one shorter than the shortest.
    /// (Its first build worked the padded value out before asking whether the length is held:
    /// `longest - len` underflowed, a panic in every build with overflow checks.)
    #[test]
    fn an_add_s_one_read_answers_as_the_lookup_and_the_edit() {
        let mut entries = [(10, 5), (12, 0x123), (12, 0x7ff), (11, 0x2aa)].map(|(len, f)| Entry {
            len,
            fingerprint: f,
            count: 1,
        });
        entries.sort_unstable_by_key(Entry::key);
        let segment = Segment::encode(&entries).unwrap();
        let present = 5u128 << 118 | 0x3_5555;
        let absent = 0x3ffu128 << 118 | 0x1234;
        for tail in [present, absent, 0x123u128 << 116, 0x7ffu128 << 116 | 1] {
            for len in [9, 10, 12, 14, 20] {
                let fingerprint = prefix(tail, len);
                let reads = segment.contains(tail);
                let edit = segment.edit_add(len, fingerprint);
                assert_eq!(segment.probe_add(tail, len, true), (reads, edit.clone()));
                let plain = segment.probe_add(tail, len, false);
                assert_eq!(plain, (reads, if reads { None } else { edit }));
            }
        }
        assert!(segment.contains(present) && !segment.contains(absent));
    }

    /// `hold` is what keeps the thin pointers sound: it gives back any words whose
    /// allocations' lengths or header are not exactly what `encode` makes, and holds those.
    #[test]
    fn only_words_laid_out_as_their_header_says_are_held() {
        let mut sorted: Vec<Entry> = (0..700u64)
            .map(|i| Entry {
                len: 20,
                fingerprint: i * 1487 % (1 << 20),
                count: 1 + u64::from(i % 97 == 0),
            })
            .collect();
        sorted.sort_unstable_by_key(Entry::key);
        sorted.dedup_by_key(|e| e.key());
        let owned = Owned::encode(&sorted, 0).unwrap();
        assert!(!owned.tail.is_empty(), "a segment with a tail");
        let whole: Vec<u64> = owned.words().copied().collect();
        let held = Segment::hold(owned.clone()).unwrap();
        assert_eq!(held.word_count(), whole.len());
        assert_eq!(held.decode().unwrap(), sorted);
        // The cut moved by a word either way, the header's head length changed, a word
        // more or less: each given back whole.
        for cut in [owned.words.len() - 1, owned.words.len() + 1] {
            let mut moved = whole.clone();
            let tail = moved.split_off(cut);
            let moved = Held {
                words: moved.into_boxed_slice(),
                tail: tail.into_boxed_slice(),
            };
            assert_eq!(Segment::hold(moved.clone()).unwrap_err(), moved);
        }
        let mut header = owned.clone();
        header.words[0] ^= 1 << 48;
        assert!(Segment::hold(header).is_err());
        let mut longer = owned.clone();
        longer.tail = [&owned.tail[..], &[0]].concat().into_boxed_slice();
        assert!(Segment::hold(longer).is_err());
        let tail_only = Held {
            words: Box::default(),
            tail: owned.tail.clone(),
        };
        assert!(Segment::hold(tail_only).is_err());
        assert_eq!(Segment::hold(Owned::default()).unwrap(), Segment::default());
        // What an edit leaves is held as its header lays it out: a copy, a relocation.
        let mut copy = held.clone();
        assert_eq!(copy, held);
        copy.relocate(|words| *words = words.to_vec().into_boxed_slice());
        assert_eq!(copy, held);
    }
}
