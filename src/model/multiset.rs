//! The model: a plain multiset of items, each with the adds outstanding (adds less the deletes
//! the filter accepted) and the time of its last add. Items are numbered; [`item`] gives an
//! item's bytes.

use std::collections::HashMap;

/// Items numbered below this are the hot ones, added over and over.
pub const HOT_ITEMS: u32 = 4;

/// The bytes of item `id` (distinct ids, distinct bytes).
pub fn item(id: u32) -> [u8; 8] {
    let mut bytes = *b"mdl\0\0\0\0\0";
    bytes[4..].copy_from_slice(&id.to_le_bytes());
    bytes
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    outstanding: u64,
    last_add_ms: u64,
    /// Where the item sits in `Multiset::live`.
    at: usize,
}

/// Items with adds outstanding.
#[derive(Debug, Default)]
pub struct Multiset {
    entries: HashMap<u32, Entry>,
    /// Every item with adds outstanding, for picking one at random.
    live: Vec<u32>,
    /// The next item never added.
    next_new: u32,
}

impl Multiset {
    pub fn new() -> Self {
        Multiset {
            next_new: HOT_ITEMS,
            ..Default::default()
        }
    }

    /// An item never added before.
    pub fn fresh(&mut self) -> u32 {
        let id = self.next_new;
        self.next_new = self.next_new.wrapping_add(1).max(HOT_ITEMS);
        id
    }

    pub fn add(&mut self, id: u32, now_ms: u64) {
        let live = &mut self.live;
        let entry = self.entries.entry(id).or_insert_with(|| {
            live.push(id);
            Entry {
                outstanding: 0,
                last_add_ms: now_ms,
                at: live.len() - 1,
            }
        });
        entry.outstanding += 1;
        entry.last_add_ms = now_ms;
    }

    /// Takes one add of `id` back (it must have one outstanding).
    pub fn delete(&mut self, id: u32) {
        let Some(entry) = self.entries.get_mut(&id) else {
            return;
        };
        entry.outstanding -= 1;
        if entry.outstanding > 0 {
            return;
        }
        let at = entry.at;
        self.entries.remove(&id);
        self.live.swap_remove(at);
        if let Some(moved) = self.live.get(at) {
            if let Some(entry) = self.entries.get_mut(moved) {
                entry.at = at;
            }
        }
    }

    pub fn outstanding(&self, id: u32) -> u64 {
        self.entries.get(&id).map_or(0, |e| e.outstanding)
    }

    /// When an item with adds outstanding was last added.
    pub fn last_add_ms(&self, id: u32) -> Option<u64> {
        self.entries.get(&id).map(|e| e.last_add_ms)
    }

    /// The `n`-th item with adds outstanding (modulo their number), if any.
    pub fn nth_live(&self, n: usize) -> Option<u32> {
        match self.live.len() {
            0 => None,
            len => self.live.get(n % len).copied(),
        }
    }

    /// Distinct items with adds outstanding.
    pub fn len(&self) -> usize {
        self.live.len()
    }

    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    /// Adds outstanding over all items.
    pub fn total(&self) -> u64 {
        self.entries.values().map(|e| e.outstanding).sum()
    }

    /// Every item with adds outstanding and the time of its last add.
    pub fn live(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.live
            .iter()
            .filter_map(|id| self.entries.get(id).map(|e| (*id, e.last_add_ms)))
    }

    /// The `n` items from position `start` on (wrapping), with the time of their last add.
    pub fn window(&self, start: usize, n: usize) -> impl Iterator<Item = (u32, u64)> + '_ {
        let len = self.live.len();
        (0..n.min(len)).filter_map(move |k| {
            let id = self.live.get((start + k) % len)?;
            self.entries.get(id).map(|e| (*id, e.last_add_ms))
        })
    }
}
