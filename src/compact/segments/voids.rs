//! Where a filter's voids lie. A void is an entry with no bits left after its segment's
//! address: it matches every item whose string begins with the `depth` address bits it
//! was made with, wherever splits have put them since. It is held once, in the segment it
//! was made in (its home, the one numbered by those bits), and never copied: a split
//! copying it into both halves gave each copy the void's whole count, and deleting its
//! items then left the copy in the half they were not in present for ever (with it every
//! item landing there). So a lookup of segment `at` asks here whether a void covers it:
//! segment `at mod 2^depth` holding a void of that depth. Derived from the segments'
//! headers, never stored apart.

use std::collections::BTreeMap;

/// The voids' homes and depths: nothing (one word of the value) while there is none, as in
/// nearly every filter (voids come only past millions of items at loose rates).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Voids(Option<Box<Homes>>);

#[derive(Debug, Clone, Default, PartialEq)]
struct Homes {
    /// The depth of the void each home holds.
    homes: BTreeMap<u64, u32>,
    /// How many voids have each depth.
    depths: BTreeMap<u32, u64>,
}

impl Voids {
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// Segment `at` now holds a void of `depth`, or none.
    pub fn set(&mut self, at: u64, depth: Option<u32>) {
        let homes = self.0.get_or_insert_with(Box::default);
        if let Some(old) = homes.homes.remove(&at) {
            if let Some(n) = homes.depths.get_mut(&old) {
                *n -= 1;
                if *n == 0 {
                    homes.depths.remove(&old);
                }
            }
        }
        if let Some(depth) = depth {
            homes.homes.insert(at, depth);
            *homes.depths.entry(depth).or_default() += 1;
        }
        if homes.homes.is_empty() {
            self.0 = None;
        }
    }

    /// The deepest void covering segment `at` (the longest prefix of its items' strings
    /// among voids), as its home and depth: one look-up for each depth voids have.
    #[inline]
    pub fn covering(&self, at: u64) -> Option<(u64, u32)> {
        let homes = self.0.as_deref()?;
        homes.depths.keys().rev().find_map(|&depth| {
            let home = at & (1u64 << depth).wrapping_sub(1);
            (homes.homes.get(&home) == Some(&depth)).then_some((home, depth))
        })
    }

    /// How many voids there are.
    #[cfg(test)]
    pub fn len(&self) -> u64 {
        self.0.as_ref().map_or(0, |h| h.homes.len() as u64)
    }
}
