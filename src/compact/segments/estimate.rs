//! The bytes a segment filter takes once it holds `n` distinct items (`BF.ESTIMATE`), worked
//! out without adding them, in work that does not grow with `n`.
//!
//! Everything but the fingerprints' values follows from `n` and the rate: the segments are
//! `⌈n / split_items⌉` (a split comes with each entry past the threshold), so the level and
//! split pointer are known, and so is which generation each entry joined (the segments it
//! found when it came) and the bits that generation gives its entries. A segment at depth
//! `d` (its address bits) holds `2^-d` of every generation's entries, each with its
//! generation's bits less `d`. One such segment of each depth the directory has is built with
//! fingerprints drawn from a fixed sequence and coded as an add would code it; the filter is
//! then that many of each, the directory of that length and the value's own fields. The
//! filters' own segments differ from these by the chance of their items (a few percent each
//! way), which averages out over segments: the unit tests hold the estimate within 2 % of
//! filters grown by the same items from 10,000 items at rates from 1e-6 to 1 %, and within
//! 6 % of smaller ones or at 0.5, where few segments or short fingerprints do not average.

use super::directory::Directory;
use super::segment::{Entry, Segment};
use super::{split_items, total_bits, MAX_LEN, MAX_LEVEL, OVERHEAD};
use crate::hash::splitmix64;

/// Bytes of a segment filter at `error` (created with one segment) holding `items` distinct
/// items, as its `bytes()` would report them; `None` past the largest filter. A `deletable`
/// filter stores an entry for every add, one that reads present too.
pub fn bytes_for(items: u64, error: f64, deletable: bool) -> Option<u64> {
    let split = split_items(error);
    let items = match deletable {
        true => items,
        false => stored_entries(items, error, split)?,
    };
    let segments = items.div_ceil(split).max(1);
    let level = 63 - segments.leading_zeros();
    if level >= MAX_LEVEL {
        return None;
    }
    let pointer = segments - (1 << level);
    let generations = generation_entries(items, split, level);
    let bits = (0..=level)
        .map(|g| total_bits(error, 0, g))
        .collect::<Option<Vec<u32>>>()?;
    // Segments `0..pointer` and `2^level..` are split at this level, the others not yet.
    let depths = [(level + 1, 2 * pointer), (level, (1 << level) - pointer)];
    let mut held = 0u64;
    for (depth, count) in depths {
        if count > 0 {
            let one = segment_at(depth, &generations, &bits, deletable)?;
            held = held.checked_add(one.checked_mul(count)?)?;
        }
    }
    OVERHEAD
        .checked_add(Directory::bytes_for(segments))?
        .checked_add(held)
}

/// Entries `items` distinct items leave: an item that reads present (a false positive, at
/// the rate the entries before it make) stores nothing. An entry of `b` bits matches an
/// absent item with chance `2^-b`, so the rate rises by that much with each entry.
fn stored_entries(items: u64, error: f64, split: u64) -> Option<u64> {
    let (mut entries, mut rate, mut left) = (0.0f64, 0.0f64, items as f64);
    for g in 0..MAX_LEVEL {
        let most = match g {
            0 => (split + 1) as f64,
            _ => split as f64 * (1u64 << g) as f64,
        };
        let per_entry = 0.5f64.powi(i32::try_from(total_bits(error, 0, g)?).ok()?);
        // Taking `k` entries costs `k / (1 - rate - k·per_entry/2)` items on average.
        let items_for_most = most / (1.0 - rate - most * per_entry / 2.0).max(0.5);
        if left <= items_for_most {
            let k = left * (1.0 - rate) / (1.0 + left * per_entry / 2.0);
            return Some((entries + k.max(0.0)).round() as u64);
        }
        entries += most;
        rate += most * per_entry;
        left -= items_for_most;
    }
    None
}

/// Entries each generation brought, oldest first: entry `i` (from 1) joins the generation of
/// the directory it found, `max(1, ⌈(i − 1) / split⌉)` segments, and generation `g` is the
/// directory's `2^g` to `2^(g+1)` segments.
fn generation_entries(items: u64, split: u64, level: u32) -> Vec<u64> {
    // Entries that came while the directory had fewer than 2^k segments (k ≥ 1).
    let before = |k: u32| items.min(split.saturating_mul((1u64 << k) - 1).saturating_add(1));
    (0..=level)
        .map(|g| before(g + 1) - if g == 0 { 0 } else { before(g) })
        .collect()
}

/// Bytes of one segment at `depth` address bits holding its share of every generation's
/// entries, fingerprints drawn from a fixed sequence. The newest generation may have fewer
/// entries than segments; a segment holding one of them codes every entry a bit wider
/// (padded to the longest length held), so the bytes are those of a segment with them and
/// one without, weighed by the chance a segment has none.
fn segment_at(depth: u32, generations: &[u64], bits: &[u32], deletable: bool) -> Option<u64> {
    let per_segment = |count: u64| count as f64 / (1u64 << depth) as f64;
    let newest = generations.iter().rposition(|&c| c > 0).unwrap_or(0);
    let mean = generations.get(newest).map_or(0.0, |&c| per_segment(c));
    let shares = |newest_share: u64| {
        generations
            .iter()
            .enumerate()
            .map(move |(g, &count)| match g == newest {
                true => newest_share,
                false => per_segment(count).round() as u64,
            })
    };
    if mean >= 8.0 || newest == 0 {
        return coded(depth, shares(mean.round() as u64), bits, deletable);
    }
    let none = (-mean).exp();
    let with = (mean / (1.0 - none)).round().max(1.0) as u64;
    let without_bytes = coded(depth, shares(0), bits, deletable)? as f64;
    let with_bytes = coded(depth, shares(with), bits, deletable)? as f64;
    Some((none * without_bytes + (1.0 - none) * with_bytes).round() as u64)
}

/// Bytes of a segment at `depth` holding `shares[g]` entries of each generation `g`.
fn coded(
    depth: u32,
    shares: impl Iterator<Item = u64>,
    bits: &[u32],
    deletable: bool,
) -> Option<u64> {
    let mut draw = u64::from(depth).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut entries = Vec::new();
    for (share, &total) in shares.zip(bits) {
        // Entries whose bits splits took are voids, a handful at the loosest rates.
        let Some(len) = total.checked_sub(depth).filter(|&l| l > 0) else {
            continue;
        };
        let len = len.min(MAX_LEN);
        entries.extend((0..share).map(|_| Entry {
            len,
            fingerprint: splitmix64(&mut draw) >> (64 - len),
            count: 1,
        }));
    }
    entries.sort_unstable_by_key(Entry::key);
    // An item whose entry is held stores nothing, or counts one more add where adds count.
    entries.dedup_by(|again, held| {
        let same = again.key() == held.key();
        if same && deletable {
            held.count += 1;
        }
        same
    });
    if entries.is_empty() {
        return Some(Segment::default().bytes());
    }
    Some(Segment::encode(&entries)?.bytes())
}

#[cfg(test)]
mod tests {
    use super::bytes_for;
    use crate::compact::segments::Segmented;

    /// A filter grown by `items` distinct items against the estimate.
    fn within(items: u64, error: f64, tolerance: f64) {
        for deletable in [false, true] {
            within_as(items, error, deletable, tolerance);
        }
    }

    fn within_as(items: u64, error: f64, deletable: bool, tolerance: f64) {
        let mut filter = Segmented::new(1, error, deletable, 0x5eed, u64::MAX).unwrap();
        for i in 0..items {
            filter
                .add(format!("item:{i}").as_bytes(), u64::MAX)
                .unwrap();
        }
        let real = filter.bytes() as f64;
        let estimate = bytes_for(items, error, deletable).unwrap() as f64;
        let off = estimate / real - 1.0;
        assert!(
            off.abs() <= tolerance,
            "{items} items at {error} (deletable: {deletable}): estimated {estimate}, filter {real} ({:+.2} %)",
            off * 100.0
        );
    }

    #[test]
    fn the_estimate_follows_a_filter_grown_item_by_item() {
        for error in [0.01, 0.001, 0.5, 1e-6] {
            let split = crate::compact::segments::split_items(error);
            // Sizes across splits, and just past each of three levels.
            let past = [1, 2, 127].map(|segments| segments * split + 20);
            for items in [0, 1, 100, 700, 1_000, 2_500, 10_000, 33_000, 100_000]
                .into_iter()
                .chain(past)
            {
                let loose = items < 10_000 || error >= 0.5;
                within(items, error, if loose { 0.06 } else { 0.02 });
            }
        }
        within(1_000_000, 0.01, 0.01);
        within(99_588, 0.01, 0.02);
    }

    #[test]
    fn the_estimate_does_no_work_that_grows_with_the_items() {
        assert!(
            bytes_for(1 << 50, 0.01, false).is_none(),
            "past the largest filter"
        );
        let huge = bytes_for(1 << 45, 0.01, false).unwrap();
        assert!(huge > (1u64 << 45), "{huge}");
    }
}
