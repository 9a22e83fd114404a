//! A filter of one segment in its fewest fields. Until its first split, a filter created with
//! one segment holds nothing its rate and secret do not fix but the segment and two counts:
//! its level, split pointer, fingerprint bits and split threshold all follow, and its rate is
//! its holder's to keep (a window's generations all share one). A window's generations are
//! held this way (most of a quiet user's generations never split), at 32 bytes where the
//! whole filter's fields take 104; an add builds the whole filter from them, which moves the
//! segment and copies nothing.

use super::directory::Directory;
use super::segment::Segment;
use super::voids::Voids;
use super::{placement_bits, split_items, total_bits, Segmented};
use crate::bloom::ItemHash;
use std::num::NonZeroU64;

#[derive(Debug, Clone, PartialEq)]
pub struct OneSegment {
    segment: Segment,
    /// Never zero (a keyed filter's), which leaves a generation room for its tag.
    secret: NonZeroU64,
    items: u32,
    entries: u32,
}

impl OneSegment {
    /// Bytes of its fields (its segment's allocations are `segment_bytes`).
    pub const SIZE: u64 = std::mem::size_of::<OneSegment>() as u64;

    #[inline]
    pub fn contains_hash(&self, hash: ItemHash) -> bool {
        // Level 0, nothing split: every string is segment 0's, whole.
        self.segment
            .contains(placement_bits(hash, self.secret.get()))
    }

    pub fn len(&self) -> u64 {
        u64::from(self.items)
    }

    pub fn is_empty(&self) -> bool {
        self.items == 0
    }

    /// Bytes of the segment's allocations.
    pub fn segment_bytes(&self) -> u64 {
        self.segment.bytes()
    }

    /// An empty stand-in, for the moment a generation is moved out of its place.
    pub fn stand_in() -> OneSegment {
        OneSegment {
            segment: Segment::default(),
            secret: NonZeroU64::MIN,
            items: 0,
            entries: 0,
        }
    }

    /// Moves it out, leaving a stand-in.
    pub fn take(&mut self) -> OneSegment {
        std::mem::replace(self, OneSegment::stand_in())
    }

    /// The whole filter it stands for, at the `error` it was taken at (`into_one`).
    pub fn inflate(self, error: f64) -> Segmented {
        let mut directory = Directory::default();
        directory.push(self.segment);
        let segment_bytes = directory.get(0).map_or(0, Segment::bytes);
        Segmented {
            error,
            deletable: false,
            secret: self.secret.get(),
            first_level: 0,
            level: 0,
            pointer: 0,
            items: u64::from(self.items),
            entries: u64::from(self.entries),
            // `into_one` made sure both follow from the rate.
            fresh_bits: total_bits(error, 0, 0).map_or(0, |b| b as u8),
            split_items: split_items(error) as u16,
            segment_bytes,
            directory,
            voids: Voids::default(),
        }
    }

    /// A copy of the whole filter at `error` (one segment copied).
    pub fn filter(&self, error: f64) -> Segmented {
        self.clone().inflate(error)
    }

    /// Moves the segment's heap blocks (active defragmentation).
    pub fn relocate(&mut self, relocate: impl FnMut(&mut Box<[u64]>)) {
        self.segment.relocate(relocate);
    }
}

impl Segmented {
    /// The filter in its fewest fields, if it is at `error` and one that
    /// `OneSegment::inflate(error)` gives back exactly: one segment at level 0, never split,
    /// without deletes or voids.
    pub fn into_one(mut self, error: f64) -> Result<OneSegment, Segmented> {
        let fits = |n: u64| u32::try_from(n).ok();
        let derived = total_bits(self.error, 0, 0) == Some(u32::from(self.fresh_bits))
            && split_items(self.error) == u64::from(self.split_items);
        let (Some(items), Some(entries)) = (fits(self.items), fits(self.entries)) else {
            return Err(self);
        };
        let Some(secret) = NonZeroU64::new(self.secret) else {
            return Err(self);
        };
        let one = self.error == error
            && !self.deletable
            && self.first_level == 0
            && self.level == 0
            && self.pointer == 0
            && self.directory.len() == 1
            && self.voids.is_empty()
            && derived;
        let Some(segment) = self.directory.get_mut(0).filter(|_| one) else {
            return Err(self);
        };
        if self.segment_bytes != segment.bytes() {
            return Err(self);
        }
        Ok(OneSegment {
            segment: std::mem::take(segment),
            secret,
            items,
            entries,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::OneSegment;
    use crate::compact::segments::Segmented;

    fn filter(items: u64, error: f64) -> Segmented {
        let mut f = Segmented::new(1, error, false, 0x5eed, u64::MAX).unwrap();
        for i in 0..items {
            f.add(format!("news:{}", 100_000_000 + i).as_bytes(), u64::MAX)
                .unwrap();
        }
        f
    }

    #[test]
    fn a_filter_of_one_segment_comes_back_whole() {
        for error in [0.5, 0.01, 1e-4, 1e-9] {
            for items in [0, 1, 10, 100] {
                let f = filter(items, error);
                let one = f.clone().into_one(error).expect("one segment");
                assert!(f.clone().into_one(error * 0.5).is_err());
                for i in 0..2 * items {
                    let item = format!("news:{}", 100_000_000 + i);
                    let hash = Segmented::hash(item.as_bytes());
                    let keyed = crate::bloom::ItemHash { a: hash.a, b: 0 };
                    assert_eq!(one.contains_hash(keyed), f.contains(item.as_bytes()));
                }
                assert_eq!(one.len(), f.len());
                assert_eq!(one.inflate(error), f, "{items} items at {error}");
            }
        }
    }

    #[test]
    fn a_split_filter_stays_whole() {
        let f = filter(5000, 0.01);
        assert!(f.segments() > 1);
        assert_eq!(f.clone().into_one(0.01).unwrap_err(), f);
        let counting = Segmented::new(1, 0.01, true, 0x5eed, u64::MAX).unwrap();
        assert!(counting.into_one(0.01).is_err());
        let unkeyed = Segmented::new(1, 0.01, false, 0, u64::MAX);
        assert!(unkeyed.map_or(true, |f| f.into_one(0.01).is_err()));
    }

    #[test]
    fn its_fields_take_32_bytes_with_room_for_a_tag() {
        assert_eq!(OneSegment::SIZE, 32);
        assert_eq!(std::mem::size_of::<Option<OneSegment>>(), 32);
    }
}
