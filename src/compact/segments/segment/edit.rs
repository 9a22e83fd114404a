//! Adds and deletes made in a segment's coded words, without decoding them: an entry's
//! value is one bit of the high bits and `low` bits of the low bits, so a new entry opens a
//! one-bit gap in the first and a `low`-bit gap in the second, and the counters after it
//! count one index further. Only when the low width or the longest length changes (a few
//! times in a segment's life) is the segment coded again from its entries. The work is one
//! pass over the segment's words at most, so it stays within the segment's bound.

use super::super::MAX_SEGMENT_ENTRIES;
use super::bits::{self, Words, WordsMut};
use super::{head_words, shift_samples, Coder, Entry, Parts, PartsMut};
use super::{Held, Owned, Segment, Shape, SplitMut};
use super::{INDEX, INDEX_BITS, MAX_COUNT};

/// A change to one segment, worked out before anything changes (a refused add changes
/// nothing), then made by `Segment::apply`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// A new entry of padded `value` at `index`; `shape` is the segment's after.
    Insert {
        index: u64,
        value: u64,
        shape: Shape,
    },
    /// The entry of padded `value` at `index` (added once) removed; `shape` as after.
    Remove {
        index: u64,
        value: u64,
        shape: Shape,
    },
    /// Entry `index` now added `count` times; `shape` is the segment's after.
    Count {
        index: u64,
        count: u64,
        shape: Shape,
    },
    /// The segment coded again: its low width or longest length changes.
    Recode(Segment),
}

impl Edit {
    /// Entry `index` of a segment shaped `shape`, added `from` times, now `to` times (both
    /// at least 1): a counter word comes or goes as the count passes 1.
    fn recount(shape: &Shape, index: u64, from: u64, to: u64) -> Edit {
        let (more, fewer) = (u64::from(to > 1), u64::from(from > 1));
        let words = shape.words + more as usize - fewer as usize;
        Edit::Count {
            index,
            count: to,
            shape: Shape {
                counters: shape.counters + more - fewer,
                words,
                head: head_words(words, shape.low_at),
                ..*shape
            },
        }
    }

    /// Bytes the segment's allocations take after the edit.
    pub fn bytes(&self) -> u64 {
        match self {
            Edit::Insert { shape, .. } | Edit::Remove { shape, .. } | Edit::Count { shape, .. } => {
                shape.bytes()
            }
            Edit::Recode(s) => s.bytes(),
        }
    }
}

/// Adds `new` to sorted entries: a new entry (`true`) or one more count of the one there;
/// `None` when the segment is full or the count at its most.
pub fn add_entry(entries: &mut Vec<Entry>, new: Entry) -> Option<bool> {
    match entries.binary_search_by_key(&new.key(), Entry::key) {
        Ok(i) => {
            let e = entries.get_mut(i)?;
            e.count = e.count.checked_add(1).filter(|c| *c <= MAX_COUNT)?;
            Some(false)
        }
        Err(i) if (entries.len() as u64) < MAX_SEGMENT_ENTRIES => {
            entries.insert(i, new);
            Some(true)
        }
        Err(_) => None,
    }
}

/// Takes one count off the entry of `key`: `true` if it is gone; `None` if not held.
fn remove_entry(entries: &mut Vec<Entry>, key: u64) -> Option<bool> {
    let i = entries.binary_search_by_key(&key, Entry::key).ok()?;
    let e = entries.get_mut(i)?;
    if e.count > 1 {
        e.count -= 1;
        return Some(false);
    }
    entries.remove(i);
    Some(true)
}

impl Segment {
    /// The add of the entry of `len` bits of `fingerprint`: a new entry (`true`) or one more
    /// count of the one there. `None` when the segment holds the most entries it may, or the
    /// entry its most counts. (Adds take `probe_add`; the tests compare the two.)
    #[cfg(test)]
    pub fn edit_add(&self, len: u32, fingerprint: u64) -> Option<(Edit, bool)> {
        match self.shaped() {
            Some((view, shape)) => view.edit_add_in(shape, len, fingerprint),
            None => self.view().edit_add(len, fingerprint),
        }
    }

    /// An add's one read of the segment: whether an entry held is a prefix of `tail` (the item
    /// reads present), and the add of the entry of `len` bits of `tail` (as `edit_add`),
    /// worked out unless the item reads present and `edit_present` is false.
    pub fn probe_add(
        &self,
        tail: u128,
        len: u32,
        edit_present: bool,
    ) -> (bool, Option<(Edit, bool)>) {
        let fingerprint = super::prefix(tail, len);
        let Some((view, shape)) = self.shaped() else {
            return (false, self.view().edit_add(len, fingerprint));
        };
        self.prefetch_words(view.words.len(), view.tail.len());
        // The value only of a length held: a longer one has none (`padded` would underflow).
        let probed = match shape.holds_length(len) && len >= shape.shortest {
            true => {
                let value = shape.value(len, fingerprint);
                view.probe(&shape, tail, value).map(|p| (p, value))
            }
            false => None,
        };
        let Some(((present, index, held), value)) = probed else {
            let present = view.prefixes_in(&shape, tail, |_| true);
            return match present && !edit_present {
                true => (true, None),
                false => (present, view.edit_add_in(shape, len, fingerprint)),
            };
        };
        if present && !edit_present {
            return (true, None);
        }
        crate::compact::meter::add(shape.entries);
        let edit = view.edit_at(shape, (len, fingerprint), value, (index, held));
        (present, edit)
    }

    /// The delete of one count of the entry of `len` bits of `fingerprint`: `true` if the
    /// entry goes. `None` when it is not held.
    pub fn edit_delete(&self, len: u32, fingerprint: u64) -> Option<(Edit, bool)> {
        let (view, shape) = self.shaped()?;
        view.edit_delete_in(shape, len, fingerprint)
    }

    /// Makes an edit worked out on this segment by `edit_add` or `edit_delete`: the words
    /// taken out, changed, and held again.
    pub fn apply(&mut self, edit: Edit) {
        match edit {
            Edit::Recode(segment) => *self = segment,
            edit => {
                let mut owned = self.take();
                owned.apply(edit);
                *self = Segment::hold_edited(owned);
            }
        }
    }
}

impl<S: std::ops::Deref<Target = [u64]>> Held<S> {
    fn edit_add(&self, len: u32, fingerprint: u64) -> Option<(Edit, bool)> {
        if self.words.is_empty() {
            let new = Entry {
                len,
                fingerprint,
                count: 1,
            };
            return Some((Edit::Recode(Segment::encode(&[new])?), true));
        }
        self.edit_add_in(self.shape()?, len, fingerprint)
    }

    /// The same, of words (not empty) shaped `shape`.
    fn edit_add_in(&self, shape: Shape, len: u32, fingerprint: u64) -> Option<(Edit, bool)> {
        let new = Entry {
            len,
            fingerprint,
            count: 1,
        };
        crate::compact::meter::add(shape.entries);
        if !shape.holds_length(len) {
            // A segment of one length, and another comes (the first segments', rarely):
            // coded again from its entries, padded.
            let widened = match shape.width == shape.longest {
                true => None,
                false => self.widened(&shape, len - shape.longest),
            };
            let Some(mut wide) = widened else {
                return self.recoded(|entries| add_entry(entries, new));
            };
            // The same entries coded for the new longest length first (cheap: only their
            // low parts widen), then the entry added to them.
            let (edit, added) = wide.edit_add(len, fingerprint)?;
            wide.apply(edit);
            return Some((Edit::Recode(Segment::hold(wide).ok()?), added));
        }
        let value = shape.value(len, fingerprint);
        let (index, held) = self.find(&shape, value)?;
        self.edit_at(shape, (len, fingerprint), value, (index, held))
    }

    /// The add of the entry of `len` bits of `fingerprint`, of padded value `value`, in
    /// words shaped `shape` that hold its length, where it has index `index` (and is `held`
    /// already).
    fn edit_at(
        &self,
        shape: Shape,
        (len, fingerprint): (u32, u64),
        value: u64,
        (index, held): (u64, bool),
    ) -> Option<(Edit, bool)> {
        if held {
            let from = self.count(&shape, index);
            let to = from.checked_add(1).filter(|c| *c <= MAX_COUNT)?;
            return Some((Edit::recount(&shape, index, from, to), false));
        }
        // A void comes only from a split (`Segmented::split_of`), never from an add.
        if shape.entries >= MAX_SEGMENT_ENTRIES || len == 0 {
            return None;
        }
        let lengths = shape.lengths_with(len);
        let after = Shape::of(shape.entries + 1, shape.counters, lengths, shape.void)?;
        if after.low != shape.low {
            return self.grown(&shape, len, fingerprint);
        }
        let edit = Edit::Insert {
            index,
            value,
            shape: after,
        };
        Some((edit, true))
    }

    /// The same entries coded for a longest length `by` bits longer (at every generation's
    /// start, in every segment its first new entry reaches): the buckets stay, and so the
    /// high bits and the samples; each low part gains `by` zero bits below.
    fn widened(&self, shape: &Shape, by: u32) -> Option<Owned> {
        let wide = Shape::of(
            shape.entries,
            shape.counters,
            (shape.shortest, shape.longest + by),
            shape.void,
        )?;
        if wide.low != shape.low + by || wide.high_bits != shape.high_bits {
            return None;
        }
        let from = self.parts(shape)?;
        let mut whole = vec![0u64; wide.words];
        *whole.first_mut()? = wide.header();
        let mut segment = Owned::cut(whole, wide.head);
        let mut to = segment.parts_mut(&wide)?;
        for (to, from) in [(to.samples, from.samples), (to.high, from.high)] {
            to.get_mut(..from.len())?.copy_from_slice(from);
        }
        for (to, from) in to.counters.iter_mut().zip(from.counters.iter()) {
            *to = *from;
        }
        let (low, wider) = (u64::from(shape.low), u64::from(wide.low));
        for i in 0..shape.entries {
            let bits = from.lows.get(i * low, shape.low);
            bits::put(&mut to.lows, i * wider, wide.low, bits << by);
        }
        Some(segment)
    }

    /// The add of a new entry that changes the low width (its segment's entries pass a power
    /// of two, a few times in a segment's life): the segment coded again, its values read
    /// from the words and written anew, the new one among them, without decoding entries.
    fn grown(&self, shape: &Shape, len: u32, fingerprint: u64) -> Option<(Edit, bool)> {
        let lengths = shape.lengths_with(len);
        let after = Shape::of(shape.entries + 1, shape.counters, lengths, shape.void)?;
        let new = after.value(len, fingerprint);
        let mut coder = Coder::new(after);
        let mut index = None;
        self.each_value(shape, |value| {
            if index.is_none() && value > new {
                index = Some(coder.pushed);
                coder.push(new);
            }
            coder.push(value);
        })?;
        let index = index.unwrap_or(coder.pushed);
        if index == coder.pushed {
            coder.push(new);
        }
        let parts = self.parts(shape)?;
        let counters = parts.counters.iter();
        let counters = counters.map(|w| w + u64::from(w & INDEX >= index));
        Some((
            Edit::Recode(Segment::hold(coder.finish(counters)?).ok()?),
            true,
        ))
    }

    /// The delete of one count of the entry of `len` bits of `fingerprint` from words shaped
    /// `shape`.
    fn edit_delete_in(&self, shape: Shape, len: u32, fingerprint: u64) -> Option<(Edit, bool)> {
        crate::compact::meter::add(shape.entries);
        if !shape.holds_length(len) {
            return None;
        }
        let value = shape.value(len, fingerprint);
        let (index, true) = self.find(&shape, value)? else {
            return None;
        };
        let count = self.count(&shape, index);
        if count > 1 {
            return Some((Edit::recount(&shape, index, count, count - 1), false));
        }
        if shape.entries == 1 {
            return Some((Edit::Recode(Segment::default()), true));
        }
        let (mut shortest, mut longest) = (shape.shortest, shape.longest);
        if len > 0 && (len == shortest || len == longest) {
            (shortest, longest) = self.lengths_without(&shape, index)?;
        }
        let void = shape.void.filter(|_| len > 0);
        let after = Shape::of(shape.entries - 1, shape.counters, (shortest, longest), void)?;
        if longest != shape.longest || after.width != shape.width || after.low != shape.low {
            let key = Entry {
                len,
                fingerprint,
                count: 1,
            }
            .key();
            return self.recoded(|entries| remove_entry(entries, key));
        }
        let edit = Edit::Remove {
            index,
            value,
            shape: after,
        };
        Some((edit, true))
    }

    /// The shortest and longest lengths of the entries with bits held without entry
    /// `index` (both 0 when none is left).
    fn lengths_without(&self, shape: &Shape, index: u64) -> Option<(u32, u32)> {
        let (mut shortest, mut longest, mut i) = (u32::MAX, 0, 0u64);
        self.each_value(shape, |value| {
            let len = shape.entry(value).map_or(0, |e| e.len);
            if i != index && len > 0 {
                shortest = shortest.min(len);
                longest = longest.max(len);
            }
            i += 1;
        })?;
        Some((shortest.min(longest), longest))
    }

    /// The segment coded again from its entries as `change` leaves them.
    fn recoded(
        &self,
        change: impl FnOnce(&mut Vec<Entry>) -> Option<bool>,
    ) -> Option<(Edit, bool)> {
        let mut entries = self.decode()?;
        let depth = self.shape().and_then(|s| s.void).unwrap_or(0);
        let changed = change(&mut entries)?;
        Some((
            Edit::Recode(Segment::encode_with_void(&entries, depth)?),
            changed,
        ))
    }
}

impl Owned {
    /// Makes an edit worked out on these words by `edit_add` or `edit_delete`.
    fn apply(&mut self, edit: Edit) {
        let before = self.shape();
        match (edit, before) {
            (Edit::Recode(mut segment), _) => *self = segment.take(),
            (Edit::Count { index, count, .. }, Some(before)) => {
                self.set_count(&before, index, count)
            }
            (
                Edit::Insert {
                    index,
                    value,
                    shape,
                },
                Some(before),
            ) => {
                self.lay_out(&before, &shape);
                self.gap(&shape, &before, &shape, index, value);
            }
            (
                Edit::Remove {
                    index,
                    value,
                    shape,
                },
                Some(before),
            ) => {
                self.gap(&before, &before, &shape, index, value);
                self.lay_out(&before, &shape);
            }
            _ => {}
        }
    }

    /// Moves the parts from where `from` lays them to where `to` does (shapes one entry
    /// apart, so every part starts at or after where it did when `to` holds more, at or
    /// before when it holds fewer; a part's bits in use fit in both). While the cut between
    /// head and tail stays, in the same allocations resized (in place while a size class
    /// holds); when it moves (the segment passes a size class), the words are cut again.
    fn lay_out(&mut self, from: &Shape, to: &Shape) {
        let (old, new) = (spans(from), spans(to));
        if old == new || self.word_count() != from.words {
            return;
        }
        let growing = to.words > from.words;
        let room = from.words.max(to.words);
        let cut = to.head;
        if self.tail.is_empty() && cut == to.words {
            let mut words = std::mem::take(&mut self.words).into_vec();
            words.reserve_exact(room - words.len());
            words.resize(room, 0);
            move_parts(&mut words[..], old, new, growing);
            words.truncate(to.words);
            self.words = words.into_boxed_slice();
        } else if cut == self.words.len() {
            let mut tail = std::mem::take(&mut self.tail).into_vec();
            tail.reserve_exact((room - cut).saturating_sub(tail.len()));
            tail.resize(room - cut, 0);
            let mut all = SplitMut {
                head: &mut self.words,
                tail: &mut tail,
            };
            move_parts(&mut all, old, new, growing);
            tail.truncate(to.words - cut);
            self.tail = tail.into_boxed_slice();
        } else {
            let mut whole: Vec<u64> = self.words().copied().collect();
            whole.resize(room, 0);
            move_parts(&mut whole[..], old, new, growing);
            whole.truncate(to.words);
            *self = Owned::cut(whole, cut);
        }
    }

    /// Opens or closes (as `after` holds one entry more or less) entry `index`'s place in
    /// words laid out as `layout`, holding the entries of `before`, and sets the header to
    /// `after`'s: one bit of the high bits and `low` bits of the low bits, the samples and
    /// the counters after it moved by one.
    fn gap(&mut self, layout: &Shape, before: &Shape, after: &Shape, index: u64, value: u64) {
        let open = after.entries > before.entries;
        let Some(PartsMut {
            header,
            samples,
            high,
            mut lows,
            mut counters,
        }) = self.parts_mut(layout)
        else {
            return;
        };
        *header = after.header();
        let position = (value >> before.low) + index;
        let low = u64::from(before.low);
        let (at, used) = (index * low, before.entries * low);
        if open {
            bits::insert(high, position, before.high_bits, 1, 1);
            lows.insert(at, used, before.low, value & bits::mask(before.low));
        } else {
            bits::remove(high, position, before.high_bits, 1);
            lows.remove(at, used, before.low);
        }
        shift_samples(layout, samples, position, if open { 1 } else { -1 });
        for c in counters.iter_mut() {
            let i = *c & INDEX;
            if i > index || (open && i == index) {
                *c = if open { *c + 1 } else { *c - 1 };
            }
        }
    }

    /// Sets entry `index`'s count, adding or removing its counter word.
    fn set_count(&mut self, shape: &Shape, index: u64, count: u64) {
        let Some(Parts { counters, .. }) = self.parts(shape) else {
            return;
        };
        let k = counters.partition_point(|w| w & INDEX < index);
        let held = counters.word(k).is_some_and(|w| w & INDEX == index);
        let word = index | count.saturating_sub(2) << INDEX_BITS;
        match (held, count > 1) {
            (true, true) => {
                if let Some(mut parts) = self.parts_mut(shape) {
                    if let Some(w) = parts.counters.word_mut(k) {
                        *w = word;
                    }
                }
            }
            (false, false) => {}
            (held, _) => {
                let mut whole: Vec<u64> = self.words().copied().collect();
                let at = shape.counters_at + k;
                if held {
                    whole.remove(at);
                } else {
                    whole.reserve_exact(1);
                    whole.insert(at, word);
                }
                let counters = u64::from(!held) + shape.counters - u64::from(held);
                let after = Shape {
                    counters,
                    words: whole.len(),
                    head: head_words(whole.len(), shape.low_at),
                    ..*shape
                };
                if let Some(header) = whole.first_mut() {
                    *header = after.header();
                }
                *self = Owned::cut(whole, after.head);
            }
        }
    }
}

/// Where a shape's parts after the header lie: the high bits, the low bits, the counters.
fn spans(s: &Shape) -> [(usize, usize); 3] {
    [
        (s.high_at, s.low_at),
        (s.low_at, s.counters_at),
        (s.counters_at, s.words),
    ]
}

/// Moves each part from its span in `old` to its span in `new` (growing: the last part
/// first, into room past the end; shrinking: the first), what a part gains zeroed.
fn move_parts<W: WordsMut + ?Sized>(
    words: &mut W,
    old: [(usize, usize); 3],
    new: [(usize, usize); 3],
    growing: bool,
) {
    let order = match growing {
        true => [2, 1, 0],
        false => [0, 1, 2],
    };
    for p in order {
        let (Some(&(from_start, from_end)), Some(&(to_start, to_end))) = (old.get(p), new.get(p))
        else {
            continue;
        };
        let n = (from_end.saturating_sub(from_start)).min(to_end.saturating_sub(to_start));
        if from_start + n > words.count() || to_start + n > words.count() {
            continue;
        }
        let copy = |words: &mut W, i: usize| {
            if let Some(w) = words.word(from_start + i) {
                if let Some(to) = words.word_mut(to_start + i) {
                    *to = w;
                }
            }
        };
        match to_start.cmp(&from_start) {
            std::cmp::Ordering::Greater => (0..n).rev().for_each(|i| copy(words, i)),
            std::cmp::Ordering::Less => (0..n).for_each(|i| copy(words, i)),
            std::cmp::Ordering::Equal => {}
        }
        for i in to_start + n..to_end {
            if let Some(w) = words.word_mut(i) {
                *w = 0;
            }
        }
    }
}
