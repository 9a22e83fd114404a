//! The one validator a segment filter read from outside will go through (RDB, RESTORE,
//! LOADCHUNK, through encoding 4's codec, and a conversion from an older encoding): the fields a header carries are
//! checked against each other, every segment's words must be exactly what the encoder
//! writes, and every field the segments determine (entries, bytes, the fingerprint length
//! new entries get) is derived, never read.

use super::segment::Segment;
use super::{total_bits, Segmented, MAX_COUNT, MAX_LEN, MAX_LEVEL, MAX_SEGMENT_ENTRIES};
use crate::bloom::MAX_ITEMS;
use crate::compact::segments::directory::Directory;
use crate::compact::segments::voids::Voids;
use crate::rdb::LoadError;

/// The fields a stored segment filter carries besides its segments.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fields {
    pub error: f64,
    pub deletable: bool,
    pub secret: u64,
    pub first_level: u32,
    pub level: u32,
    pub pointer: u64,
    pub items: u64,
}

impl Segmented {
    /// The fields to store beside the segments.
    pub fn fields(&self) -> Fields {
        Fields {
            error: self.error,
            deletable: self.deletable,
            secret: self.secret,
            first_level: u32::from(self.first_level),
            level: u32::from(self.level),
            pointer: self.pointer,
            items: self.items,
        }
    }

    /// A filter from stored fields and segments, refused unless commands could have built
    /// it (or every later command keeps it valid) and it fits `max_bytes`.
    pub fn from_parts(
        fields: Fields,
        segments: Vec<Vec<u64>>,
        max_bytes: u64,
    ) -> Result<Segmented, LoadError> {
        let mut filter = Segmented::awaiting(fields, max_bytes)?;
        if segments.len() as u64 != filter.expected_segments() {
            return Err(LoadError::Invalid("segment count"));
        }
        let mut counted = 0u64;
        for words in segments {
            counted = counted.saturating_add(filter.take_segment(words, max_bytes)?);
        }
        filter.check_items(counted)?;
        Ok(filter)
    }

    /// A filter with its fields checked and no segment yet, awaiting
    /// [`Self::expected_segments`] of them (through [`Self::take_segment`], then
    /// [`Self::check_items`]); nothing is allocated for the segments to come. Refused when
    /// the fields contradict each other, or the directory alone passes `max_bytes`.
    pub(crate) fn awaiting(fields: Fields, max_bytes: u64) -> Result<Segmented, LoadError> {
        let Fields {
            error,
            first_level,
            level,
            pointer,
            ..
        } = fields;
        if !(error > 0.0 && error < 1.0) {
            return Err(LoadError::Invalid("error rate"));
        }
        if level < first_level || level >= MAX_LEVEL || pointer >= 1 << level {
            return Err(LoadError::Invalid("split position"));
        }
        let fresh_bits = total_bits(error, first_level, level - first_level)
            .and_then(|b| u8::try_from(b).ok())
            .ok_or(LoadError::Invalid("error rate"))?;
        let small = |v: u32| u8::try_from(v).map_err(|_| LoadError::Invalid("split position"));
        let (first_level, level) = (small(first_level)?, small(level)?);
        // No more items than the segments could count (what BF.CARD answers while they
        // arrive, and an integer reply at every size). A filter without deletes counts adds
        // that a full segment took into an entry it had (`Segmented::overflow`) too.
        let segments = (1u64 << level) + pointer;
        let most = match fields.deletable {
            true => segments
                .saturating_mul(MAX_SEGMENT_ENTRIES)
                .saturating_mul(MAX_COUNT),
            false => u64::MAX,
        }
        .min(MAX_ITEMS);
        if fields.items > most {
            return Err(LoadError::Invalid("item count"));
        }
        // Each segment takes a directory slot at least: refused before any arrives.
        let least = segments.saturating_mul(16);
        if least.saturating_add(super::OVERHEAD) > max_bytes {
            return Err(LoadError::TooLarge);
        }
        Ok(Segmented {
            error,
            deletable: fields.deletable,
            secret: fields.secret,
            first_level,
            level,
            pointer,
            items: fields.items,
            entries: 0,
            fresh_bits,
            split_items: super::split_items(error) as u16,
            segment_bytes: 0,
            directory: Directory::default(),
            voids: Voids::default(),
        })
    }

    /// Segments the split position says the filter has.
    pub(crate) fn expected_segments(&self) -> u64 {
        (1u64 << self.level) + self.pointer
    }

    /// Appends the next segment from its stored words, refused unless they are exactly what
    /// the encoder writes and every entry is one this filter's commands could have stored
    /// there, and the value stays within `max_bytes`. Returns the adds its entries count.
    pub(crate) fn take_segment(
        &mut self,
        words: Vec<u64>,
        max_bytes: u64,
    ) -> Result<u64, LoadError> {
        let at = self.directory.len();
        if at >= self.expected_segments() {
            return Err(LoadError::Invalid("segment count"));
        }
        let segment = Segment::from_words(words).ok_or(LoadError::Invalid("segment"))?;
        let entries = segment.decode().ok_or(LoadError::Invalid("segment"))?;
        // No entry is longer than the newest generation's (a filter converted from an older
        // encoding, which has no secret, keeps its entries' lengths up to the longest held).
        let room = match self.secret {
            0 => MAX_LEN,
            _ => u32::from(self.fresh_bits).saturating_sub(self.address_bits(at)),
        };
        let mut counted = 0u64;
        for e in &entries {
            // Only a deletable filter counts repeated adds.
            if e.len > room || (e.count > 1 && !self.deletable) {
                return Err(LoadError::Invalid("segment entries"));
            }
            counted = counted.saturating_add(e.count);
        }
        // A void has the depth of the address it was made at: this segment's number has no
        // bit above it, and the segment has that many address bits at least.
        let depth = segment.void_depth();
        if depth.is_some_and(|d| at >> d != 0 || d > self.address_bits(at)) {
            return Err(LoadError::Invalid("segment entries"));
        }
        let more = self.directory.push_bytes() + segment.bytes();
        if self.bytes().saturating_add(more) > max_bytes {
            return Err(LoadError::TooLarge);
        }
        self.voids.set(at, depth);
        self.entries += segment.len();
        self.segment_bytes += segment.bytes();
        self.directory.push(segment);
        Ok(counted)
    }

    /// Drops the segments from `len` on (a chunk taken back), with their counts.
    pub(crate) fn drop_segments_from(&mut self, len: u64) {
        for at in len..self.directory.len() {
            if let Some(s) = self.directory.get(at) {
                self.entries -= s.len();
                self.segment_bytes -= s.bytes();
            }
            self.voids.set(at, None);
        }
        self.directory.truncate(len);
    }

    /// Once every segment arrived, with `counted` the adds their entries count: in a
    /// deletable filter every held add is counted (a value converted from an older encoding holds the voids its doubling copied, so there may be more
    /// counts), so deleting every add it holds never takes a count it has not.
    pub(crate) fn check_items(&self, counted: u64) -> Result<(), LoadError> {
        if self.directory.len() != self.expected_segments() {
            return Err(LoadError::Invalid("segment count"));
        }
        if self.deletable && self.items > counted {
            return Err(LoadError::Invalid("item count"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(filter: &Segmented) -> (Fields, Vec<Vec<u64>>) {
        let words = filter
            .each_segment()
            .map(|s| s.words().copied().collect())
            .collect();
        (filter.fields(), words)
    }

    fn grown(deletable: bool) -> Segmented {
        let mut filter = Segmented::new(100, 0.01, deletable, 77, u64::MAX).unwrap();
        for i in 0..4000u64 {
            let item = format!("item-{i}");
            for _ in 0..(1 + i % 3) {
                filter.add(item.as_bytes(), u64::MAX).unwrap();
            }
        }
        filter
    }

    #[test]
    fn a_filter_loads_back_from_its_parts() {
        for deletable in [false, true] {
            let filter = grown(deletable);
            let (fields, words) = parts(&filter);
            let loaded = Segmented::from_parts(fields, words, u64::MAX).unwrap();
            assert_eq!(loaded, filter);
        }
    }

    #[test]
    fn misstated_fields_and_segments_are_refused() {
        let filter = grown(true);
        let (fields, words) = parts(&filter);
        let refused = |fields: Fields, words: Vec<Vec<u64>>| {
            Segmented::from_parts(fields, words, u64::MAX).is_err()
        };
        // The split position moved, either way.
        for pointer in [fields.pointer + 1, fields.pointer.wrapping_sub(1)] {
            assert!(refused(Fields { pointer, ..fields }, words.clone()));
        }
        assert!(refused(
            Fields {
                level: fields.level + 1,
                ..fields
            },
            words.clone()
        ));
        // More items than the segments count.
        let items = words.len() as u64 * 8192;
        assert!(refused(Fields { items, ..fields }, words.clone()));
        // A plain filter's segments never count repeated adds.
        assert!(refused(
            Fields {
                deletable: false,
                ..fields
            },
            words.clone()
        ));
        // One segment's header raised to say more entries than it codes.
        let mut crafted = words.clone();
        crafted[0][0] += 1;
        assert!(refused(fields, crafted));
        // Over the byte limit.
        let (fields, words) = parts(&filter);
        assert_eq!(
            Segmented::from_parts(fields, words, filter.bytes() - 1),
            Err(LoadError::TooLarge)
        );
    }
}
