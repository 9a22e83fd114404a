//! The builder's set of item hashes: extendible hashing over sorted segments. A directory
//! indexed by the top `depth` bits of a hash names the segment holding every hash with that
//! prefix; a segment is a sorted `Vec<u64>` of at most [`SEGMENT_MAX`] hashes (binary search
//! to find, a memmove of at most 8 KiB to insert). A full segment splits in two on its next
//! bit, and the directory doubles when a segment at the directory's depth splits: no add
//! touches more than one segment and the directory, so no command's work grows with the set.
//!
//! Memory: segments grow to the allocator's next size class (four classes per doubling), so
//! the hashes take about 8.6 bytes each, plus 32 bytes per segment and 4 per directory entry.

use crate::budget::Budget;

/// Hashes a segment holds before it splits.
pub const SEGMENT_MAX: usize = 1024;
/// Deepest directory (4 Mi entries): past it a segment just grows.
pub const MAX_DEPTH: u32 = 22;
/// Bytes accounted for each segment's struct and the set's own.
pub const SEGMENT_OVERHEAD: u64 = 32;
pub const SET_OVERHEAD: u64 = 64;

/// Hashes sharing their top `depth` bits, sorted.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Segment {
    depth: u32,
    hashes: Vec<u64>,
}

/// A set of 64-bit hashes. Two sets are equal when they hold the same hashes, however their
/// segments were grown (a reload packs them).
#[derive(Debug)]
pub struct HashSet {
    depth: u32,
    directory: Vec<u32>,
    segments: Vec<Segment>,
    len: u64,
    /// Bytes of the segments' hash storage (their capacities).
    stored: u64,
}

impl Clone for HashSet {
    /// A copy with each segment exactly as large as the original's (`Vec::clone` would trim
    /// its capacity and change what the copy reports).
    fn clone(&self) -> Self {
        let segments = self
            .segments
            .iter()
            .map(|s| {
                let mut hashes = Vec::with_capacity(s.hashes.capacity());
                hashes.extend_from_slice(&s.hashes);
                Segment {
                    depth: s.depth,
                    hashes,
                }
            })
            .collect();
        HashSet {
            segments,
            directory: self.directory.clone(),
            ..*self
        }
    }
}

impl PartialEq for HashSet {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl Eq for HashSet {}

impl Default for HashSet {
    fn default() -> Self {
        HashSet {
            depth: 0,
            directory: vec![0],
            segments: vec![Segment::default()],
            len: 0,
            stored: 0,
        }
    }
}

/// The allocator size class `bytes` is served from (jemalloc's four per doubling).
fn size_class(bytes: u64) -> u64 {
    if bytes <= 64 {
        return bytes.next_multiple_of(16);
    }
    let step = 1u64 << (63 - (bytes - 1).leading_zeros()).saturating_sub(2);
    bytes.next_multiple_of(step)
}

/// Why a hash could not be added: the budget refused the memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoRoom;

impl HashSet {
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes the set accounts for.
    /// The most bytes `more` new hashes can add: 16 each (a hash and its segment's growth to
    /// the next size class), one segment's largest growth, and a directory doubling.
    pub fn growth_bound(&self, more: u64) -> u64 {
        more.saturating_mul(16)
            .saturating_add(2 * SEGMENT_MAX as u64 * 8)
            .saturating_add(4 * self.directory.len() as u64)
    }

    pub fn bytes(&self) -> u64 {
        SET_OVERHEAD
            + self.stored
            + SEGMENT_OVERHEAD * self.segments.len() as u64
            + 4 * self.directory.len() as u64
    }

    fn segment_of(&self, hash: u64) -> usize {
        let at = hash.checked_shr(64 - self.depth).unwrap_or(0) as usize;
        self.directory.get(at).map_or(0, |s| *s as usize)
    }

    pub fn contains(&self, hash: u64) -> bool {
        let segment = self.segments.get(self.segment_of(hash));
        segment.is_some_and(|s| s.hashes.binary_search(&hash).is_ok())
    }

    /// Adds a hash: true if it was new. Memory is asked of `budget` before any allocation.
    pub fn insert(&mut self, hash: u64, budget: &impl Budget) -> Result<bool, NoRoom> {
        let index = self.segment_of(hash);
        let current = self.bytes();
        let Some(segment) = self.segments.get_mut(index) else {
            return Err(NoRoom);
        };
        let Err(at) = segment.hashes.binary_search(&hash) else {
            return Ok(false);
        };
        if segment.hashes.len() == segment.hashes.capacity() {
            let before = segment.hashes.capacity() as u64 * 8;
            let after = size_class(before + 8);
            if current + (after - before) > budget.limit(current) {
                return Err(NoRoom);
            }
            let more = (after - before) as usize / 8;
            segment.hashes.try_reserve_exact(more).map_err(|_| NoRoom)?;
            self.stored += segment.hashes.capacity() as u64 * 8 - before;
        }
        segment.hashes.insert(at, hash);
        self.len += 1;
        if segment.hashes.len() > SEGMENT_MAX && segment.depth < MAX_DEPTH {
            self.split(index, budget);
        }
        Ok(true)
    }

    /// Splits a full segment on its next bit (doubling the directory first if the segment is
    /// as deep as it). A split the budget refuses leaves the segment whole, to split later.
    fn split(&mut self, index: usize, budget: &impl Budget) {
        let Some(segment) = self.segments.get(index) else {
            return;
        };
        let depth = segment.depth;
        let Some(&first) = segment.hashes.first() else {
            return;
        };
        let current = self.bytes();
        let doubling = if depth == self.depth {
            4 * self.directory.len() as u64
        } else {
            0
        };
        if current + doubling + SEGMENT_OVERHEAD > budget.limit(current) {
            return;
        }
        if depth == self.depth {
            self.directory = self.directory.iter().flat_map(|s| [*s, *s]).collect();
            self.depth += 1;
        }
        let new_index = self.segments.len() as u32;
        let Some(segment) = self.segments.get_mut(index) else {
            return;
        };
        let bit = 63 - depth;
        let at = segment.hashes.partition_point(|h| h >> bit & 1 == 0);
        let upper = segment.hashes.split_off(at);
        let before = segment.hashes.capacity() as u64;
        segment.hashes.shrink_to(segment.hashes.len());
        segment.depth = depth + 1;
        let stored = segment.hashes.capacity() as u64 + upper.capacity() as u64;
        self.stored = self.stored - before * 8 + stored * 8;
        self.segments.push(Segment {
            depth: depth + 1,
            hashes: upper,
        });
        let prefix = first.checked_shr(64 - depth).unwrap_or(0) as usize;
        let span = 1usize << (self.depth - depth);
        let start = prefix * span;
        if let Some(entries) = self.directory.get_mut(start + span / 2..start + span) {
            entries.fill(new_index);
        }
    }

    /// The hashes in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.segments_in_order()
            .flat_map(|s| s.hashes.iter().copied())
    }

    /// The segments in the order of their prefixes.
    fn segments_in_order(&self) -> impl Iterator<Item = &Segment> + '_ {
        let mut last = None;
        self.directory.iter().filter_map(move |&s| {
            if last == Some(s) {
                return None;
            }
            last = Some(s);
            self.segments.get(s as usize)
        })
    }

    /// The hashes from the `skip`-th (in increasing order) on, at most `count` of them.
    pub fn range(&self, skip: u64, count: usize) -> Vec<u64> {
        let mut out = Vec::new();
        let mut skip = skip;
        for segment in self.segments_in_order() {
            let len = segment.hashes.len() as u64;
            if skip >= len {
                skip -= len;
                continue;
            }
            let rest = segment.hashes.get(skip as usize..).unwrap_or_default();
            let room = count - out.len();
            out.extend_from_slice(rest.get(..room.min(rest.len())).unwrap_or_default());
            skip = 0;
            if out.len() == count {
                break;
            }
        }
        out
    }

    /// Moves every segment's storage (active defragmentation).
    pub fn relocate(&mut self, mut each: impl FnMut(&mut Vec<u64>)) {
        for segment in &mut self.segments {
            each(&mut segment.hashes);
        }
    }
}
