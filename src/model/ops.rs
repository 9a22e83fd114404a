//! The operations a sequence is made of, and how fuzzer bytes (or a seeded generator's) become
//! them: about one or two bytes an operation, most of them adds, many of the same few items.

use super::multiset::HOT_ITEMS;

/// Which item an operation is about; resolved against the model when it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// One of the few items added over and over.
    Hot(u8),
    /// An item never added before.
    New,
    /// The `n`-th item with adds outstanding (modulo their number).
    Live(u16),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Add(Pick),
    /// The same item added this many times in a row (heavy duplication).
    Repeat(Pick, u32),
    /// This many new items, one after another (growth).
    Fill(u32),
    /// One add taken back, only of an item with adds outstanding (skipped otherwise); a lookup
    /// for kinds without deletes.
    Delete(Pick),
    Lookup(Pick),
    /// Save to RDB and continue with what the loader read back.
    Save,
    /// SCANDUMP, LOADCHUNK into a new value, and continue with it.
    Scandump,
    /// The clock moves this many of the kind's ticks.
    Tick(u32),
}

/// Operations read from bytes, one or two bytes each: the low nibble of the first says which,
/// the high nibble (and the next byte for some) says of what.
pub struct Ops<'a> {
    bytes: &'a [u8],
}

impl<'a> Ops<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Ops { bytes }
    }

    fn byte(&mut self) -> u8 {
        let (&first, rest) = self.bytes.split_first().unwrap_or((&0, &[]));
        self.bytes = rest;
        first
    }

    fn pick(&mut self, arg: u8) -> Pick {
        match arg {
            0..4 => Pick::Hot(arg % HOT_ITEMS as u8),
            4..8 => Pick::New,
            _ => Pick::Live(u16::from(arg - 8) << 8 | u16::from(self.byte())),
        }
    }
}

impl Iterator for Ops<'_> {
    type Item = Op;

    fn next(&mut self) -> Option<Op> {
        let first = *self.bytes.first()?;
        self.byte();
        let (tag, arg) = (first & 15, first >> 4);
        let hot = Pick::Hot(arg % HOT_ITEMS as u8);
        Some(match tag {
            0..4 => Op::Add(self.pick(arg)),
            4 => Op::Repeat(hot, (u32::from(self.byte()) + 1) * 4),
            5 => Op::Fill((u32::from(self.byte()) + 1) * 2),
            6..9 => Op::Delete(self.pick(arg | 8)),
            9 | 10 => Op::Lookup(self.pick(arg)),
            11 => Op::Save,
            12 => Op::Scandump,
            13 => Op::Tick((u32::from(self.byte()) + 1) << (arg >> 2)),
            14 => Op::Add(hot),
            _ => Op::Delete(hot),
        })
    }
}
