//! Counters inside runs: an entry added `c > 1` times to a deletable filter is stored once,
//! followed by pairs of slots, each an escape (a zero field, which no entry has) and a digit.
//! The digits are `c - 2` in base `2^width - 1`, least significant first, each stored plus
//! one so that no digit is zero (an escape is told from an empty slot by the slot before
//! it, a digit by the escape before it). The most significant digit is not zero, unless it
//! is the only one: every count has exactly one form. An item added `c` times so costs
//! about `2 log2(c) + 2 (width + 2)` bits more than one add, not `c` entries, and a run
//! holds each fingerprint once: a lookup, an add or a delete reads the same slots however
//! often any item was added (the counting quotient filter's idea, Pandey et al., SIGMOD
//! 2017, with an escape in place of its ordered runs).

use super::table::Table;

/// One entry of a run and its count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Element {
    /// Position of the entry (a slot, or an index into a list of fields).
    pub at: u64,
    pub field: u64,
    pub count: u64,
    /// Counter pairs after the entry.
    pub pairs: u64,
    /// Whether the counter is in its one form (most significant digit not zero unless the
    /// only one, no overflow, a digit after every escape).
    pub canonical: bool,
}

impl Element {
    /// An entry of a list of fields and counts (not read from a table).
    pub fn of(field: u64, count: u64) -> Element {
        Element {
            at: 0,
            field,
            count,
            pairs: 0,
            canonical: true,
        }
    }
}

/// The digit base of a table whose fields have `width` bits.
pub fn base(width: u32) -> u64 {
    (1u64 << width) - 1
}

/// The stored digits (each plus one) of a count: none for one.
pub fn digits(count: u64, width: u32) -> impl Iterator<Item = u64> {
    let base = base(width);
    let mut rest = count.checked_sub(2);
    std::iter::from_fn(move || {
        let value = rest?;
        rest = Some(value / base).filter(|r| *r > 0);
        Some(value % base + 1)
    })
}

/// The elements of `len` fields read through `field_at(k)`, in order. A field list that is
/// not in the form above (an escape last, or first) still parses: the validator then
/// refuses it by the elements' fields (zero) and `canonical`.
pub fn elements(
    len: u64,
    width: u32,
    field_at: impl Fn(u64) -> u64,
) -> impl Iterator<Item = Element> {
    let base = base(width);
    let mut k = 0u64;
    std::iter::from_fn(move || {
        if k >= len {
            return None;
        }
        let at = k;
        let field = field_at(k);
        k += 1;
        let (mut value, mut scale, mut pairs, mut canonical) = (0u64, Some(1u64), 0u64, true);
        let mut top = 0;
        while k < len && field_at(k) == 0 {
            let digit = if k + 1 < len {
                field_at(k + 1).wrapping_sub(1)
            } else {
                canonical = false;
                0
            };
            match scale.and_then(|s| digit.checked_mul(s)) {
                Some(add) => value = value.saturating_add(add),
                None => canonical &= digit == 0,
            }
            scale = scale.and_then(|s| s.checked_mul(base));
            top = digit;
            pairs += 1;
            k += 2;
        }
        canonical &= (pairs <= 1 || top != 0) && value <= u64::MAX - 2 && field != 0;
        let count = if pairs == 0 {
            1
        } else {
            value.saturating_add(2)
        };
        Some(Element {
            at,
            field,
            count,
            pairs,
            canonical,
        })
    })
}

impl Table {
    /// The elements of a run, `at` being their slots.
    pub fn run_elements(&self, (start, end): (u64, u64)) -> impl Iterator<Item = Element> + '_ {
        let mask = self.slots() - 1;
        let len = (end.wrapping_sub(start) & mask) + 1;
        elements(len, self.width, move |k| {
            super::meter::add(1);
            self.field((start + k) & mask)
        })
        .map(move |mut e| {
            e.at = (start + e.at) & mask;
            e
        })
    }

    /// Sets the count of `element` of quotient `x`'s run, adding or removing counter pairs
    /// at its end: slots used after less those before. False if the table had no room
    /// (the filter's load check leaves room for a pair, so only an inconsistent table).
    pub fn set_count(&mut self, x: u64, element: Element, count: u64) -> Option<i64> {
        let mask = self.slots() - 1;
        let new: Vec<u64> = digits(count, self.width).collect();
        let old = element.pairs as usize;
        let digit_slot = |k: usize| (element.at + 2 + 2 * k as u64) & mask;
        for (k, digit) in new.iter().enumerate().take(old) {
            self.set_field(digit_slot(k), *digit);
        }
        for (k, digit) in new.iter().enumerate().skip(old) {
            // The digit first, then its escape before it: each step leaves a table of runs.
            let last = (element.at + 2 * k as u64) & mask;
            if !self.insert_after(x, last, *digit) || !self.insert_after(x, last, 0) {
                return None;
            }
        }
        for k in (new.len()..old).rev() {
            // The escape first, leaving its digit as an entry, then the digit.
            let escape = (digit_slot(k) + mask) & mask;
            for _ in 0..2 {
                let run = self.run(x)?;
                self.remove(x, run, escape);
            }
        }
        Some(2 * (new.len() as i64 - old as i64))
    }
}
