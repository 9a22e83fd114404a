//! Compact filters (`BF.RESERVE ... COMPACT`, with `COUNTING` for deletes): segments that
//! split one at a time. The server creates every compact filter with one segment whatever
//! the capacity hint, so the model does too, with a fixed secret (the server draws one on
//! the primary). A compact filter's work per operation is what the issue-26 bounds are
//! about: its meter is the compact core's to provide (`take_work`).

use super::codec::{chunks_round_trip, decode_value};
use super::{rdb_round_trip, Deletes, Kind, Params, Work};
use crate::compact::segments::{MAX_SEGMENT_ENTRIES, SEGMENT_ITEMS};
use crate::compact::CompactFilter as Core;

/// Entries one operation may read or code: an insert into a segment at its bound, and the
/// split it may bring (a segment at its bound again), each read twice at most.
const WORK_PER_OPERATION: u64 = 8 * MAX_SEGMENT_ENTRIES;

/// The secret the model's filters place items by (any but zero).
const SECRET: u64 = 0x005e_ed0f_5ec7_e7a1;

/// A compact filter, deletable when `COUNTING`.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactFilter<const COUNTING: bool>(pub Core);

/// `BF.RESERVE ... COMPACT`: adds only.
pub type CompactPlain = CompactFilter<false>;
/// `BF.RESERVE ... COMPACT COUNTING`: a multiset with deletes.
pub type CompactCounting = CompactFilter<true>;

impl<const COUNTING: bool> Kind for CompactFilter<COUNTING> {
    const NAME: &'static str = if COUNTING {
        "compact counting"
    } else {
        "compact"
    };

    fn create(p: &Params, max_bytes: u64) -> Option<Self> {
        Core::new(p.error, COUNTING, SECRET, max_bytes)
            .ok()
            .map(CompactFilter)
    }
    fn decode(data: &[u8], max_bytes: u64) -> Option<Self> {
        decode_value::<Core>(data, max_bytes)
            .filter(|filter| filter.is_deletable() == COUNTING)
            .map(CompactFilter)
    }
    fn reload(&self, max_bytes: u64) -> Result<Self, String> {
        rdb_round_trip(&self.0, max_bytes).map(CompactFilter)
    }
    fn redump(&self, max_bytes: u64) -> Result<Self, String> {
        chunks_round_trip(&self.0, max_bytes).map(CompactFilter)
    }
    fn add(&mut self, item: &[u8], _now_ms: u64, max_bytes: u64) -> bool {
        self.0.add(item, max_bytes).is_ok()
    }
    fn delete(&mut self, item: &[u8]) -> bool {
        self.0.delete(item) == Ok(true)
    }
    fn contains(&self, item: &[u8], _now_ms: u64) -> bool {
        self.0.contains(item)
    }
    fn bytes(&self) -> u64 {
        self.0.bytes()
    }
    fn deletes(&self) -> Deletes {
        if COUNTING {
            Deletes::Always
        } else {
            Deletes::None
        }
    }
    fn is_ready(&self) -> bool {
        self.0.is_loaded()
    }
    /// The validator accepts every state reached (every split position), its derived
    /// fields equal to those kept as the operations go.
    fn check(&self, max_bytes: u64) -> Result<(), String> {
        self.0
            .validate(max_bytes)
            .map_err(|e| format!("the validator refused a reached state: {e:?}"))
    }
    /// Entries read or coded by the operation just done: within [`WORK_PER_OPERATION`]
    /// however often any item was added and wherever the split pointer stands (no step
    /// touches more than the segment of the item and the one that splits).
    fn take_work(&mut self) -> Option<Work> {
        let (work, finished) = crate::compact::meter::take();
        Some(Work {
            done: work + finished,
            bound: WORK_PER_OPERATION + 2 * SEGMENT_ITEMS,
        })
    }
}
