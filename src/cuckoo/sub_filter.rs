//! One sub-filter: `num_buckets` buckets of `bucket_size` one-byte fingerprint slots, bucket j
//! being bytes `[j * bucket_size, (j + 1) * bucket_size)`, 0 meaning an empty slot.

use std::ops::Range;

use super::fingerprint::{alt_hash, ItemHash};
use super::CuckooError;

/// The fingerprint value of an empty slot.
const EMPTY: u8 = 0;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubFilter {
    num_buckets: u64,
    bucket_size: usize,
    /// Exactly `num_buckets * bucket_size` bytes.
    slots: Vec<u8>,
}

impl SubFilter {
    /// An empty sub-filter; the caller has checked the size against the memory cap.
    pub(crate) fn zeroed(num_buckets: u64, bucket_size: usize) -> Result<Self, CuckooError> {
        let len = usize::try_from(num_buckets)
            .ok()
            .and_then(|buckets| buckets.checked_mul(bucket_size))
            .ok_or(CuckooError::TooLarge)?;
        Ok(Self {
            num_buckets,
            bucket_size,
            slots: vec![EMPTY; len],
        })
    }

    /// A sub-filter over loaded slots, or `None` if their length does not match.
    pub(crate) fn from_slots(num_buckets: u64, bucket_size: usize, slots: Vec<u8>) -> Option<Self> {
        let expected = usize::try_from(num_buckets)
            .ok()?
            .checked_mul(bucket_size)?;
        (slots.len() == expected).then_some(Self {
            num_buckets,
            bucket_size,
            slots,
        })
    }

    /// The slot bytes, for an allocator that moves heap blocks; callers never change the length.
    #[cfg(feature = "module")]
    pub(crate) fn slots_for_relocation(&mut self) -> &mut Vec<u8> {
        &mut self.slots
    }

    pub fn num_buckets(&self) -> u64 {
        self.num_buckets
    }

    /// The raw slots, as SCANDUMP and the RDB encode them.
    pub fn slots(&self) -> &[u8] {
        &self.slots
    }

    pub(crate) fn slots_mut(&mut self) -> &mut [u8] {
        &mut self.slots
    }

    pub(crate) fn len_bytes(&self) -> u64 {
        self.slots.len() as u64
    }

    /// Slot range of the bucket `hash` maps to (`hash mod num_buckets`); `None` only if the
    /// sub-filter has no buckets, which validation rules out.
    fn bucket_range(&self, hash: u64) -> Option<Range<usize>> {
        let index = usize::try_from(hash.checked_rem(self.num_buckets)?).ok()?;
        let start = index.checked_mul(self.bucket_size)?;
        Some(start..start.checked_add(self.bucket_size)?)
    }

    fn bucket(&self, hash: u64) -> &[u8] {
        self.bucket_range(hash)
            .and_then(|range| self.slots.get(range))
            .unwrap_or_default()
    }

    fn bucket_mut(&mut self, hash: u64) -> &mut [u8] {
        match self.bucket_range(hash) {
            Some(range) => self.slots.get_mut(range).unwrap_or_default(),
            None => &mut [],
        }
    }

    pub(crate) fn contains(&self, hash: &ItemHash) -> bool {
        let fp = hash.fingerprint;
        self.bucket(hash.h1).contains(&fp) || self.bucket(hash.h2).contains(&fp)
    }

    /// Slots holding the fingerprint in both candidate buckets (twice the same bucket counts
    /// twice, as in RedisBloom).
    pub(crate) fn count(&self, hash: &ItemHash) -> u64 {
        let fp = hash.fingerprint;
        let in_bucket = |h| self.bucket(h).iter().filter(|&&slot| slot == fp).count() as u64;
        in_bucket(hash.h1) + in_bucket(hash.h2)
    }

    /// Clears the first slot holding the fingerprint, bucket h1 before bucket h2.
    pub(crate) fn remove(&mut self, hash: &ItemHash) -> bool {
        clear_first(self.bucket_mut(hash.h1), hash.fingerprint)
            || clear_first(self.bucket_mut(hash.h2), hash.fingerprint)
    }

    /// Whether both candidate buckets hold nothing but this fingerprint: copies of one
    /// fingerprint and bucket pair fill them (distinct random items practically never do), and
    /// no eviction walk can make room, since every swap it makes exchanges equal values.
    fn saturated_by(&self, h1: u64, h2: u64, fingerprint: u8) -> bool {
        let full_of =
            |bucket: &[u8]| !bucket.is_empty() && bucket.iter().all(|&s| s == fingerprint);
        full_of(self.bucket(h1)) && full_of(self.bucket(h2))
    }

    /// Writes the fingerprint into the first empty slot of bucket h1, else of bucket h2.
    pub(crate) fn place(&mut self, h1: u64, h2: u64, fingerprint: u8) -> bool {
        fill_first_empty(self.bucket_mut(h1), fingerprint)
            || fill_first_empty(self.bucket_mut(h2), fingerprint)
    }

    /// RedisBloom's eviction walk: swap the carried fingerprint into slot `victim` of the current
    /// bucket, follow the evicted one to its alternate bucket, stop at the first empty slot;
    /// victims cycle 0, 1, .. bucket_size - 1. On failure the swaps are undone in reverse order.
    /// The index is reduced at every step, as the reference does, so for a bucket count that is
    /// not a power of two (possible from a LOADCHUNK header) the walk is the reference's too.
    pub(crate) fn kick_insert(&mut self, h1: u64, fingerprint: u8, max_iterations: u16) -> bool {
        let buckets = self.num_buckets;
        if buckets == 0 || self.bucket_size == 0 {
            return false;
        }
        // With a power-of-two bucket count the walk only ever visits the two candidate
        // buckets while it carries this fingerprint; if both hold nothing else it would swap
        // equal values 2 x max_iterations times and fail, changing nothing.
        let h2 = alt_hash(fingerprint, h1);
        if buckets.is_power_of_two() && self.saturated_by(h1, h2, fingerprint) {
            return false;
        }
        let mut carried = fingerprint;
        let mut victim = 0;
        let mut index = h1 % buckets;
        for _ in 0..max_iterations {
            self.swap_slot(index, victim, &mut carried);
            index = alt_hash(carried, index) % buckets;
            if fill_first_empty(self.bucket_mut(index), carried) {
                return true;
            }
            victim = (victim + 1) % self.bucket_size;
        }
        for _ in 0..max_iterations {
            victim = (victim + self.bucket_size - 1) % self.bucket_size;
            index = alt_hash(carried, index) % buckets;
            self.swap_slot(index, victim, &mut carried);
        }
        false
    }

    fn swap_slot(&mut self, index: u64, victim: usize, carried: &mut u8) {
        if let Some(slot) = self.bucket_mut(index).get_mut(victim) {
            std::mem::swap(slot, carried);
        }
    }
}

fn clear_first(bucket: &mut [u8], fingerprint: u8) -> bool {
    replace_first(bucket, fingerprint, EMPTY)
}

fn fill_first_empty(bucket: &mut [u8], fingerprint: u8) -> bool {
    replace_first(bucket, EMPTY, fingerprint)
}

fn replace_first(bucket: &mut [u8], from: u8, to: u8) -> bool {
    match bucket.iter_mut().find(|slot| **slot == from) {
        Some(slot) => {
            *slot = to;
            true
        }
        None => false,
    }
}
