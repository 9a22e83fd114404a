//! The builder's set of item hashes: extendible hashing over sorted segments. A directory
//! indexed by the top `depth` bits of a hash names the segment holding every hash with that
//! prefix; a segment is a sorted run of at most [`SEGMENT_MAX`] hashes (binary search to find,
//! a memmove of at most 8 KiB to insert). A full segment splits in two on its next bit, and the
//! directory doubles when a segment at the directory's depth splits.
//!
//! Hashes arrive from clients too (`BF.LOADCHUNK` chunks, `RESTORE` payloads), and hashes that
//! share their top bits cannot be told apart by a directory: so the directory grows only while
//! it holds at most [`DIRECTORY_PER_SEGMENT`] entries per segment (and [`MAX_DEPTH`] bits),
//! and a full segment that may not split on its bits becomes crowded: its further runs of at
//! most [`SEGMENT_MAX`] hashes are kept in an ordered index by their least hash (a B-tree), a
//! full run splitting at its median. No add touches more than one run, one index entry and
//! the directory, and memory stays proportional to the hashes, whatever they are and in
//! whatever order they come.
//!
//! Memory: runs grow to the allocator's next size class (four classes per doubling), so the
//! hashes take about 8.6 bytes each, plus 32 bytes per segment, 4 per directory entry and
//! [`RUN_OVERHEAD`] per further run of a crowded segment.

use std::collections::BTreeMap;

use crate::budget::Budget;

/// Hashes a run holds before it splits.
pub const SEGMENT_MAX: usize = 1024;
/// Deepest directory (4 Mi entries).
pub const MAX_DEPTH: u32 = 22;
/// Hashes a split on a bit leaves on each side at least (random hashes leave about half).
pub const MIN_SPLIT: usize = SEGMENT_MAX / 4;
/// Directory entries per segment past which the directory does not double (random hashes
/// stay near 3): a directory grows with the segments, never with how the hashes cluster.
pub const DIRECTORY_PER_SEGMENT: usize = 16;
/// Bytes accounted for each segment's struct, each further run of a crowded segment (its
/// key and vector in B-tree nodes at least about half full) and the set's own.
pub const SEGMENT_OVERHEAD: u64 = 32;
pub const RUN_OVERHEAD: u64 = 64;
pub const SET_OVERHEAD: u64 = 64;

/// Hashes sharing their top `depth` bits, sorted: those below `more`'s first key in
/// `hashes`, and in a crowded segment the rest in runs by their least hash.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Segment {
    depth: u32,
    hashes: Vec<u64>,
    more: BTreeMap<u64, Vec<u64>>,
}

impl Segment {
    /// The run that holds `hash` if the segment does.
    fn run_of(&self, hash: u64) -> &Vec<u64> {
        if self.more.is_empty() {
            return &self.hashes;
        }
        self.more
            .range(..=hash)
            .next_back()
            .map_or(&self.hashes, |(_, run)| run)
    }

    fn run_of_mut(&mut self, hash: u64) -> &mut Vec<u64> {
        if self.more.is_empty() {
            return &mut self.hashes;
        }
        self.more
            .range_mut(..=hash)
            .next_back()
            .map_or(&mut self.hashes, |(_, run)| run)
    }

    /// The runs in increasing order.
    fn runs(&self) -> impl Iterator<Item = &Vec<u64>> + '_ {
        std::iter::once(&self.hashes).chain(self.more.values())
    }

    fn runs_mut(&mut self) -> impl Iterator<Item = &mut Vec<u64>> + '_ {
        std::iter::once(&mut self.hashes).chain(self.more.values_mut())
    }

    /// A copy with each run exactly as large as the original's (`Vec::clone` would trim its
    /// capacity and change what the copy reports).
    fn copy(&self) -> Segment {
        let exact = |run: &Vec<u64>| {
            let mut copy = Vec::with_capacity(run.capacity());
            copy.extend_from_slice(run);
            copy
        };
        Segment {
            depth: self.depth,
            hashes: exact(&self.hashes),
            more: self.more.iter().map(|(k, run)| (*k, exact(run))).collect(),
        }
    }
}

/// A set of 64-bit hashes. Two sets are equal when they hold the same hashes, however their
/// segments were grown (a reload packs them).
#[derive(Debug)]
pub struct HashSet {
    depth: u32,
    directory: Vec<u32>,
    segments: Vec<Segment>,
    len: u64,
    /// Bytes of the runs' hash storage (their capacities).
    stored: u64,
    /// Runs of crowded segments besides their first.
    runs: u64,
}

impl Clone for HashSet {
    fn clone(&self) -> Self {
        HashSet {
            segments: self.segments.iter().map(Segment::copy).collect(),
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
            runs: 0,
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
    pub fn bytes(&self) -> u64 {
        SET_OVERHEAD
            + self.stored
            + SEGMENT_OVERHEAD * self.segments.len() as u64
            + 4 * self.directory.len() as u64
            + RUN_OVERHEAD * self.runs
    }

    fn segment_of(&self, hash: u64) -> usize {
        let at = hash.checked_shr(64 - self.depth).unwrap_or(0) as usize;
        self.directory.get(at).map_or(0, |s| *s as usize)
    }

    pub fn contains(&self, hash: u64) -> bool {
        let segment = self.segments.get(self.segment_of(hash));
        segment.is_some_and(|s| s.run_of(hash).binary_search(&hash).is_ok())
    }

    /// Adds a hash: true if it was new. Memory is asked of `budget` before any allocation.
    pub fn insert(&mut self, hash: u64, budget: &impl Budget) -> Result<bool, NoRoom> {
        let index = self.segment_of(hash);
        let current = self.bytes();
        let Some(segment) = self.segments.get_mut(index) else {
            return Err(NoRoom);
        };
        let run = segment.run_of_mut(hash);
        let Err(at) = run.binary_search(&hash) else {
            return Ok(false);
        };
        if run.len() == run.capacity() {
            let before = run.capacity() as u64 * 8;
            let after = size_class(before + 8);
            if current + (after - before) > budget.limit(current) {
                return Err(NoRoom);
            }
            let more = (after - before) as usize / 8;
            run.try_reserve_exact(more).map_err(|_| NoRoom)?;
            self.stored += run.capacity() as u64 * 8 - before;
        }
        run.insert(at, hash);
        self.len += 1;
        if run.len() > SEGMENT_MAX {
            self.split(index, hash, budget);
        }
        Ok(true)
    }

    /// Splits the segment whose run holding `hash` is full: on the segment's next bit
    /// (doubling the directory first if the segment is as deep as it) if the directory may
    /// grow and each half keeps at least [`MIN_SPLIT`] hashes, else the run at its median (the
    /// segment is crowded from then on). Either way no run is left full. A split the budget
    /// refuses leaves the run whole, to split at its next add.
    fn split(&mut self, index: usize, hash: u64, budget: &impl Budget) {
        let Some(segment) = self.segments.get(index) else {
            return;
        };
        let depth = segment.depth;
        let doubling = depth == self.depth;
        let room = self.directory.len() * 2 <= DIRECTORY_PER_SEGMENT * (self.segments.len() + 1);
        let on_bit = segment.more.is_empty() && depth < MAX_DEPTH && (!doubling || room);
        let len = segment.hashes.len();
        let at = on_bit
            .then(|| {
                let bit = 63 - depth;
                segment.hashes.partition_point(|h| h >> bit & 1 == 0)
            })
            .filter(|at| *at >= MIN_SPLIT && len - at >= MIN_SPLIT);
        let current = self.bytes();
        let cost = match (at, doubling) {
            (Some(_), true) => 4 * self.directory.len() as u64 + SEGMENT_OVERHEAD,
            (Some(_), false) => SEGMENT_OVERHEAD,
            (None, _) => RUN_OVERHEAD,
        };
        if current + cost > budget.limit(current) {
            return;
        }
        match at {
            Some(at) => self.split_on_bit(index, at),
            None => self.split_run(index, hash),
        }
    }

    /// Splits a segment on its next bit, its hashes from `at` on going to a new segment.
    fn split_on_bit(&mut self, index: usize, at: usize) {
        let Some(segment) = self.segments.get(index) else {
            return;
        };
        let depth = segment.depth;
        let Some(&first) = segment.hashes.first() else {
            return;
        };
        if depth == self.depth {
            self.directory = self.directory.iter().flat_map(|s| [*s, *s]).collect();
            self.depth += 1;
        }
        let new_index = self.segments.len() as u32;
        let Some(segment) = self.segments.get_mut(index) else {
            return;
        };
        let upper = segment.hashes.split_off(at);
        let before = segment.hashes.capacity() as u64;
        segment.hashes.shrink_to(segment.hashes.len());
        segment.depth = depth + 1;
        let stored = segment.hashes.capacity() as u64 + upper.capacity() as u64;
        self.stored = self.stored - before * 8 + stored * 8;
        self.segments.push(Segment {
            depth: depth + 1,
            hashes: upper,
            more: BTreeMap::new(),
        });
        let prefix = first.checked_shr(64 - depth).unwrap_or(0) as usize;
        let span = 1usize << (self.depth - depth);
        let start = prefix * span;
        if let Some(entries) = self.directory.get_mut(start + span / 2..start + span) {
            entries.fill(new_index);
        }
    }

    /// Splits the run holding `hash` at its median: its upper half becomes a run of its own,
    /// indexed by its least hash. Both halves are stored exactly.
    fn split_run(&mut self, index: usize, hash: u64) {
        let Some(segment) = self.segments.get_mut(index) else {
            return;
        };
        let run = segment.run_of_mut(hash);
        let upper = run.split_off(run.len() / 2);
        let before = run.capacity() as u64;
        run.shrink_to(run.len());
        let stored = run.capacity() as u64 + upper.capacity() as u64;
        let Some(&least) = upper.first() else {
            return;
        };
        self.stored = self.stored - before * 8 + stored * 8;
        segment.more.insert(least, upper);
        self.runs += 1;
    }

    /// The hashes in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.runs_in_order().flat_map(|run| run.iter().copied())
    }

    /// The runs in the order of their hashes.
    fn runs_in_order(&self) -> impl Iterator<Item = &Vec<u64>> + '_ {
        let mut last = None;
        let segments = self.directory.iter().filter_map(move |&s| {
            if last == Some(s) {
                return None;
            }
            last = Some(s);
            self.segments.get(s as usize)
        });
        segments.flat_map(Segment::runs)
    }

    /// The most hashes any run holds (what one insert may move).
    #[cfg(test)]
    pub fn largest_run(&self) -> usize {
        let runs = self.segments.iter().flat_map(Segment::runs);
        runs.map(Vec::len).max().unwrap_or(0)
    }

    /// The hashes from the `skip`-th (in increasing order) on, at most `count` of them.
    pub fn range(&self, skip: u64, count: usize) -> Vec<u64> {
        let mut out = Vec::new();
        let mut skip = skip;
        for run in self.runs_in_order() {
            let len = run.len() as u64;
            if skip >= len {
                skip -= len;
                continue;
            }
            let rest = run.get(skip as usize..).unwrap_or_default();
            let room = count - out.len();
            out.extend_from_slice(rest.get(..room.min(rest.len())).unwrap_or_default());
            skip = 0;
            if out.len() == count {
                break;
            }
        }
        out
    }

    /// Moves every run's storage (active defragmentation).
    pub fn relocate(&mut self, mut each: impl FnMut(&mut Vec<u64>)) {
        for segment in &mut self.segments {
            segment.runs_mut().for_each(&mut each);
        }
    }
}
