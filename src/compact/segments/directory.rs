//! The segments, in chunks that are never moved: segment 0 is held in the directory itself
//! (a filter of one segment allocates nothing here but its words) and chunk `j` holds
//! segments `2^(j-1)` to `2^j - 1`, each allocated whole when its first segment is made.
//! Growing never copies the segments made before (a split's work stays one segment's).

use super::segment::Segment;
use super::size_class;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Directory {
    /// Segment 0 (when `len` is not zero).
    first: Segment,
    /// Chunks 1 and up.
    chunks: Vec<Vec<Segment>>,
    len: u64,
    /// What `bytes` answers, kept as chunks come and go (every command measures the value).
    bytes: u64,
}

/// The chunk holding segment `i`, and its place there.
#[inline]
fn place(i: u64) -> (usize, usize) {
    let chunk = 64 - i.leading_zeros();
    let first = if chunk == 0 { 0 } else { 1u64 << (chunk - 1) };
    (chunk as usize, (i - first) as usize)
}

/// Segments chunk `j` holds.
fn chunk_capacity(j: usize) -> usize {
    if j == 0 {
        1
    } else {
        1 << (j - 1)
    }
}

impl Directory {
    pub fn len(&self) -> u64 {
        self.len
    }

    #[inline]
    pub fn get(&self, i: u64) -> Option<&Segment> {
        match place(i) {
            _ if i >= self.len => None,
            (0, _) => Some(&self.first),
            (chunk, at) => self.chunks.get(chunk - 1)?.get(at),
        }
    }

    pub fn get_mut(&mut self, i: u64) -> Option<&mut Segment> {
        match place(i) {
            _ if i >= self.len => None,
            (0, _) => Some(&mut self.first),
            (chunk, at) => self.chunks.get_mut(chunk - 1)?.get_mut(at),
        }
    }

    /// Bytes the next `push` allocates besides its segment (a new chunk, or none).
    pub fn push_bytes(&self) -> u64 {
        let (chunk, _) = place(self.len);
        if chunk == 0 || chunk <= self.chunks.len() {
            return 0;
        }
        // The list of chunks grows by one (at most 41 in all, a few hundred bytes copied).
        let outer = size_class(24 * (self.chunks.len() as u64 + 1))
            - size_class(24 * self.chunks.capacity() as u64);
        outer + size_class(16 * chunk_capacity(chunk) as u64)
    }

    pub fn push(&mut self, segment: Segment) {
        let (chunk, _) = place(self.len);
        if chunk == 0 {
            self.first = segment;
            self.len = 1;
            return;
        }
        if chunk > self.chunks.len() {
            self.bytes += self.push_bytes();
            self.chunks.reserve_exact(1);
            self.chunks.push(Vec::with_capacity(chunk_capacity(chunk)));
        }
        if let Some(c) = self.chunks.get_mut(chunk - 1) {
            c.push(segment);
            self.len += 1;
        }
    }

    /// Drops the segments from `len` on (a load taken back), and the chunks left empty.
    pub fn truncate(&mut self, len: u64) {
        while self.len > len {
            match place(self.len - 1) {
                (0, _) => self.first = Segment::default(),
                (chunk, _) => {
                    if let Some(c) = self.chunks.get_mut(chunk - 1) {
                        c.pop();
                        if c.is_empty() {
                            self.chunks.pop();
                        }
                    }
                }
            }
            self.len -= 1;
        }
        // As pushes would have left it: the list of chunks exactly as long as it is.
        self.chunks.shrink_to_fit();
        self.bytes = self.counted_bytes();
    }

    pub fn iter(&self) -> impl Iterator<Item = &Segment> {
        let first = std::iter::once(&self.first).take(self.len.min(1) as usize);
        first.chain(self.chunks.iter().flatten())
    }

    /// Bytes of the directory's own allocations (the segments' excluded).
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The same, counted from the allocations.
    fn counted_bytes(&self) -> u64 {
        let outer = size_class(24 * self.chunks.capacity() as u64);
        let chunks: u64 = self
            .chunks
            .iter()
            .map(|c| size_class(16 * c.capacity() as u64))
            .sum();
        outer + chunks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_segments_in_doubling_chunks() {
        assert_eq!(place(0), (0, 0));
        assert_eq!(place(1), (1, 0));
        assert_eq!(place(2), (2, 0));
        assert_eq!(place(3), (2, 1));
        assert_eq!(place(4), (3, 0));
        assert_eq!(place(7), (3, 3));
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
            assert_eq!(shorter.iter().count() as u64, len);
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
        // The kept count is the allocations' at every length.
        for _ in 0..300 {
            assert_eq!(one.bytes(), one.counted_bytes());
            one.push(Segment::default());
        }
    }
}
