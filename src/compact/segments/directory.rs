//! The segments: segment 0 is held in the directory itself (a filter of one segment
//! allocates nothing here but its words), the others in chunks of `CHUNK` slots, segment
//! `i` in chunk `(i - 1) / CHUNK`. A chunk grows one slot at a time (the allocator resizes
//! in place while its size class holds), so the directory takes only its size class's slack
//! over a slot a segment (16 bytes: the thin pointers of a segment's head and tail), where
//! chunks doubling in size and allocated whole left up to half their slots unused (about
//! 1-2 % of a filter at 1 %, more at sizes just past a doubling). Growing copies at most one
//! chunk's slots (64 KiB) or the list of chunks, whatever the filter's size, and never a
//! segment's words.

use super::segment::Segment;
use super::size_class;

/// Slots of one chunk.
const CHUNK: u64 = 4096;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Directory {
    /// Segment 0 (when `len` is not zero).
    first: Segment,
    /// Segments 1 and up: full chunks, then the last one growing. Every list is a boxed
    /// slice exactly as long as it holds (grown one at a time: 16 bytes of the value and of
    /// each entry of the list of chunks, where a `Vec` takes 24), so the bytes follow from
    /// the lengths.
    chunks: Box<[Box<[Segment]>]>,
    len: u64,
}

/// The chunk holding segment `i` (not 0), and its place there.
#[inline]
fn place(i: u64) -> (usize, usize) {
    let j = i.wrapping_sub(1);
    ((j / CHUNK) as usize, (j % CHUNK) as usize)
}

/// Bytes of one slot (a segment's place: its head's and its tail's pointers and lengths).
const SLOT: u64 = std::mem::size_of::<Segment>() as u64;

/// Bytes of a chunk of `slots` slots, and of the list of `chunks` chunks.
fn chunk_bytes(slots: usize) -> u64 {
    size_class(SLOT * slots as u64)
}

fn list_bytes(chunks: usize) -> u64 {
    size_class(16 * chunks as u64)
}

/// Appends to a boxed slice, keeping it exactly as long as it holds.
fn append<T>(list: &mut Box<[T]>, value: T) {
    let mut grown = std::mem::take(list).into_vec();
    grown.reserve_exact(1);
    grown.push(value);
    *list = grown.into_boxed_slice();
}

impl Directory {
    pub fn len(&self) -> u64 {
        self.len
    }

    #[inline]
    pub fn get(&self, i: u64) -> Option<&Segment> {
        if i >= self.len {
            return None;
        }
        if i == 0 {
            return Some(&self.first);
        }
        let (chunk, at) = place(i);
        self.chunks.get(chunk)?.get(at)
    }

    pub fn get_mut(&mut self, i: u64) -> Option<&mut Segment> {
        if i >= self.len {
            return None;
        }
        if i == 0 {
            return Some(&mut self.first);
        }
        let (chunk, at) = place(i);
        self.chunks.get_mut(chunk)?.get_mut(at)
    }

    /// Bytes a directory of `len` segments takes, grown by `push` (`bytes` of it, without
    /// building it).
    pub fn bytes_for(len: u64) -> u64 {
        if len <= 1 {
            return 0;
        }
        let chunks = (len - 1).div_ceil(CHUNK);
        let last = (len - 1) - (chunks - 1) * CHUNK;
        list_bytes(chunks as usize)
            + (chunks - 1) * chunk_bytes(CHUNK as usize)
            + chunk_bytes(last as usize)
    }

    /// Bytes the next `push` allocates besides its segment (one slot more, in its chunk's
    /// size class; a new chunk and a longer list of chunks every `CHUNK` segments).
    pub fn push_bytes(&self) -> u64 {
        if self.len == 0 {
            return 0;
        }
        let (chunk, at) = place(self.len);
        match self.chunks.get(chunk) {
            Some(c) => chunk_bytes(at + 1) - chunk_bytes(c.len()).min(chunk_bytes(at + 1)),
            None => {
                let list = list_bytes(chunk + 1)
                    - list_bytes(self.chunks.len()).min(list_bytes(chunk + 1));
                list + chunk_bytes(1)
            }
        }
    }

    pub fn push(&mut self, segment: Segment) {
        if self.len == 0 {
            self.first = segment;
            self.len = 1;
            return;
        }
        let (chunk, _) = place(self.len);
        if chunk == self.chunks.len() {
            append(&mut self.chunks, Box::default());
        }
        if let Some(c) = self.chunks.get_mut(chunk) {
            append(c, segment);
            self.len += 1;
        }
    }

    /// Drops the segments from `len` on (a load taken back), and the chunks left empty:
    /// the directory that `len` pushes make.
    pub fn truncate(&mut self, len: u64) {
        if len >= self.len {
            return;
        }
        if len == 0 {
            self.first = Segment::default();
        }
        // Segments 1.. kept, in whole chunks and the last one's first slots.
        let rest = len.saturating_sub(1);
        let kept = rest.div_ceil(CHUNK) as usize;
        let mut chunks = std::mem::take(&mut self.chunks).into_vec();
        chunks.truncate(kept);
        if let Some(last) = chunks.last_mut() {
            let slots = (rest - (kept as u64 - 1) * CHUNK) as usize;
            let mut shorter = std::mem::take(last).into_vec();
            shorter.truncate(slots);
            *last = shorter.into_boxed_slice();
        }
        self.chunks = chunks.into_boxed_slice();
        self.len = len;
    }

    pub fn iter(&self) -> impl Iterator<Item = &Segment> {
        let first = std::iter::once(&self.first).take(self.len.min(1) as usize);
        first.chain(self.chunks.iter().flatten())
    }

    /// Bytes of the directory's own allocations (the segments' excluded), from the lengths
    /// (every command measures the value): every chunk but the last is full, and each list
    /// is exactly as long as it holds.
    #[inline]
    pub fn bytes(&self) -> u64 {
        let Some(last) = self.chunks.last() else {
            return 0;
        };
        let full = self.chunks.len() as u64 - 1;
        list_bytes(self.chunks.len()) + full * chunk_bytes(CHUNK as usize) + chunk_bytes(last.len())
    }

    /// The same, counted from every allocation.
    #[cfg(test)]
    fn counted_bytes(&self) -> u64 {
        let chunks: u64 = self.chunks.iter().map(|c| chunk_bytes(c.len())).sum();
        list_bytes(self.chunks.len()) + chunks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_segments_in_chunks_grown_a_slot_at_a_time() {
        assert_eq!(place(1), (0, 0));
        assert_eq!(place(CHUNK), (0, CHUNK as usize - 1));
        assert_eq!(place(CHUNK + 1), (1, 0));
        assert_eq!(place(3 * CHUNK + 7), (3, 6));
        // Past a chunk: full chunks stay allocated whole, the last holds its slots only,
        // and the bytes are the allocations' size classes.
        let mut big = Directory::default();
        for _ in 0..CHUNK + 2 {
            big.push(Segment::default());
        }
        assert_eq!(big.bytes(), big.counted_bytes());
        let expected = list_bytes(2) + chunk_bytes(CHUNK as usize) + chunk_bytes(1);
        assert_eq!(big.bytes(), expected);
        assert!(big.get(CHUNK + 1).is_some() && big.get(CHUNK + 2).is_none());
        let mut d = Directory::default();
        for _ in 0..9 {
            d.push(Segment::default());
        }
        assert_eq!(d.len(), 9);
        assert!(d.get(8).is_some() && d.get(9).is_none());
        assert_eq!(d.iter().count(), 9);
        // Taken back to a shorter directory, it is the one that many pushes make.
        for len in [5, 2, 1, 0] {
            let mut shorter = d.clone();
            shorter.truncate(len);
            let mut pushed = Directory::default();
            for _ in 0..len {
                pushed.push(Segment::default());
            }
            assert_eq!((shorter.len(), shorter.bytes()), (len, pushed.bytes()));
            assert_eq!(shorter.bytes(), shorter.counted_bytes());
            assert_eq!(shorter.iter().count() as u64, len);
        }
        // Taken back across the chunks' boundary: the last chunk kept is cut to its slots,
        // the ones after it dropped.
        for len in [CHUNK + 2, CHUNK + 1, CHUNK, CHUNK - 1, 2, 1, 0] {
            let mut shorter = big.clone();
            shorter.truncate(len);
            let mut pushed = Directory::default();
            for _ in 0..len {
                pushed.push(Segment::default());
            }
            assert_eq!(shorter, pushed, "{len}");
            assert_eq!(shorter.bytes(), shorter.counted_bytes(), "{len}");
            shorter.push(Segment::default());
            pushed.push(Segment::default());
            assert_eq!(shorter, pushed, "{len} and one more");
        }
        // One segment allocates nothing besides its words; the second brings chunk 1.
        let mut one = Directory::default();
        assert!(one.get(0).is_none() && one.iter().count() == 0);
        assert_eq!(one.push_bytes(), 0);
        one.push(Segment::default());
        assert_eq!((one.bytes(), one.iter().count()), (0, 1));
        assert!(one.get(0).is_some() && one.get(1).is_none());
        let more = one.push_bytes();
        one.push(Segment::default());
        assert_eq!(one.bytes(), more);
        // A list of one chunk and a chunk of one slot: 16 bytes each.
        assert_eq!(more, 32);
        // The kept count is the allocations' at every length.
        for _ in 0..300 {
            assert_eq!(one.bytes(), one.counted_bytes());
            one.push(Segment::default());
        }
    }
}
