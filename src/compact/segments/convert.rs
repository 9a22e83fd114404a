//! A compact filter of an older encoding (a doubling table, 1 to 3) brought to segments, one
//! way, when it is loaded: every entry keeps the bits of its item's string it held, so no
//! added item reads absent, and no new false positive appears but where an entry is cut to
//! the longest a segment holds.
//!
//! The older tables read the unkeyed string (no secret): so does the converted filter. Its
//! level is the one that gives 512 to 1,024 entries per segment (at most the table's own
//! quotient bits, so every entry keeps its whole address); the segments' schedule then goes
//! on as if the older table's generations had been the first ones, so new entries share the
//! error budget that is left.

use super::placement::address;
use super::segment::{prefix, Entry, Segment, MAX_COUNT};
use super::{total_bits, Fields, Segmented, MAX_LEN, MAX_LEVEL, MAX_SEGMENT_ENTRIES};
use crate::compact::counters::elements;
use crate::compact::table::{Fingerprint, Table};
use crate::compact::Compact;
use crate::rdb::LoadError;

/// The segments being built at one level, from entries arriving grouped by their address
/// (a table's runs come in quotient order, so each segment's entries come together but for
/// the run that wraps, and a doubling's second table): each group sorted, merged and coded
/// when the next one starts, so nothing but the segments themselves is held.
struct Builder {
    level: u32,
    deletable: bool,
    segments: Vec<Segment>,
    group: Vec<Entry>,
    at: u64,
}

impl Builder {
    fn new(level: u32, deletable: bool) -> Builder {
        Builder {
            level,
            deletable,
            segments: vec![Segment::default(); 1usize << level],
            group: Vec::new(),
            at: 0,
        }
    }

    /// Takes the entry holding the first `bits` bits of `string`.
    fn push(&mut self, string: u128, bits: u32, count: u64) -> Option<()> {
        let at = address(string, self.level);
        if at != self.at {
            self.flush()?;
            self.at = at;
        }
        let len = bits.checked_sub(self.level)?.min(MAX_LEN);
        self.group.push(Entry {
            len,
            fingerprint: prefix(string << self.level, len),
            count,
        });
        (self.group.len() as u64 <= MAX_SEGMENT_ENTRIES).then_some(())
    }

    /// Codes the group into its segment (with what that segment already holds).
    fn flush(&mut self) -> Option<()> {
        if self.group.is_empty() {
            return Some(());
        }
        let segment = self.segments.get_mut(self.at as usize)?;
        let mut entries = segment.decode()?;
        entries.append(&mut self.group);
        entries.sort_unstable_by_key(Entry::key);
        // Entries cut to the longest length may meet: one entry, counts summed.
        let deletable = self.deletable;
        entries.dedup_by(|later, kept| {
            let same = later.key() == kept.key();
            if same {
                kept.count = match deletable {
                    true => kept.count.saturating_add(later.count).min(MAX_COUNT),
                    false => 1,
                };
            }
            same
        });
        if entries.len() as u64 > MAX_SEGMENT_ENTRIES {
            return None;
        }
        // An entry of no bits past the address is a void of this level's address.
        *segment = Segment::encode_with_void(&entries, self.level)?;
        Some(())
    }

    /// Takes every entry of `table` whose quotient is `from` or later.
    fn take_table(&mut self, table: &Table, from: u64) -> Option<()> {
        let (q, width) = (table.log2_slots, table.width);
        let mut taken = Some(());
        table.for_each_run(|quotient, _, fields| {
            if quotient < from || taken.is_none() {
                return;
            }
            let field_at = |k: u64| fields.get(k as usize).copied().unwrap_or(0);
            for e in elements(fields.len() as u64, width, field_at) {
                let fp = Fingerprint::of_field(e.field, width);
                let mut string = u128::from(quotient) << (128 - q);
                if fp.len > 0 {
                    string |= u128::from(fp.bits) << (128 - q - fp.len);
                }
                if self.push(string, q + fp.len, e.count.max(1)).is_none() {
                    taken = None;
                    return;
                }
            }
        })?;
        taken?;
        self.flush()
    }
}

/// The older filter's entries in segments at `level`; None if one would hold more entries
/// than a segment may.
fn segments_at(old: &Compact, level: u32) -> Option<Vec<Segment>> {
    let mut builder = Builder::new(level, old.deletable);
    builder.take_table(&old.table, 0)?;
    if let Some(d) = &old.doubling {
        builder.take_table(&d.old, d.cursor)?;
    }
    Some(builder.segments)
}

impl Segmented {
    /// The older filter `old` (loaded whole and validated) as a segment filter, through the
    /// loader's validation; refused when a segment would pass its bound (only crafted
    /// tables crowd one quotient so) or the value would pass `max_bytes`.
    pub fn from_doubling(old: &Compact, max_bytes: u64) -> Result<Segmented, LoadError> {
        let mut shortest = old.table.log2_slots;
        if let Some(d) = &old.doubling {
            shortest = shortest.min(d.old.log2_slots);
        }
        let per_segment = (old.entries / super::split_items(old.error)).max(1);
        let mut level = (63 - per_segment.leading_zeros()).min(shortest);
        // A crowded segment splits on a level or two more; past that it is crafted.
        let most = shortest.min(level + 2).min(MAX_LEVEL - 1);
        let segments = loop {
            match segments_at(old, level) {
                Some(segments) => break segments,
                None if level < most => level += 1,
                None => return Err(LoadError::Invalid("older table too crowded to convert")),
            }
        };
        // The older table's generations count as the first ones of the schedule.
        let first_level = (level.saturating_sub(old.generation + 1)..=level)
            .find(|&first| total_bits(old.error, first, level - first).is_some())
            .ok_or(LoadError::Invalid("error rate"))?;
        let counted = segments
            .iter()
            .filter_map(Segment::decode)
            .flatten()
            .fold(0u64, |sum, e| sum.saturating_add(e.count));
        let fields = Fields {
            error: old.error,
            deletable: old.deletable,
            secret: 0,
            first_level,
            level,
            pointer: 0,
            // Entries of a filter without deletes that met when cut count once.
            items: old.items.min(counted),
        };
        let mut filter = Segmented::awaiting(fields, max_bytes)?;
        for segment in segments {
            filter.take_segment(segment.words().copied().collect(), max_bytes)?;
        }
        filter.check_items(counted)?;
        Ok(filter)
    }
}
