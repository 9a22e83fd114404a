//! Compact filters (`BF.RESERVE ... COMPACT`, with `COUNTING` for deletes): one table that
//! doubles. The server creates every compact filter at its smallest table whatever the
//! capacity hint, so the model does too. A compact filter's work per operation is what the
//! issue-26 bounds are about: its meter is the compact core's to provide (`take_work`).

use super::codec::{chunks_round_trip, decode_value};
use super::{rdb_round_trip, Deletes, Kind, Params, Work};
use crate::compact::Compact;

/// Slots one operation may read or move, the doubling's moves before each write included: the
/// length a block offset holds, past which runs are found by walking (before counters, F4's
/// 100,000 adds of one item made runs that long).
const WORK_PER_OPERATION: u64 = 1 << 16;

/// Items the server sizes a new compact filter's first table for, whatever the hint.
const FIRST_TABLE_ITEMS: u64 = 1;

/// A compact filter, deletable when `COUNTING`.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactFilter<const COUNTING: bool>(pub Compact);

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
        Compact::new(FIRST_TABLE_ITEMS, p.error, COUNTING, max_bytes)
            .ok()
            .map(CompactFilter)
    }
    fn decode(data: &[u8], max_bytes: u64) -> Option<Self> {
        decode_value::<Compact>(data, max_bytes)
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
    /// The validator accepts every state reached, a doubling's included (its derived counts,
    /// kept as the operations go, equal to those read from the tables).
    fn check(&self, max_bytes: u64) -> Result<(), String> {
        self.0
            .validate(max_bytes)
            .map_err(|e| format!("the validator refused a reached state: {e:?}"))
    }
    /// Slots read or moved by the operation just done: within [`WORK_PER_OPERATION`]
    /// however often any item was added and whatever state a doubling is in (each write
    /// moves a bounded step). The one exemption: an add that found the new table full before
    /// the doubling ended (only tables crowded with void entries) finishes it at once, work
    /// metered apart and bounding only itself.
    fn take_work(&mut self) -> Option<Work> {
        let (work, finished) = crate::compact::meter::take();
        Some(Work {
            done: work + finished,
            bound: WORK_PER_OPERATION + finished,
        })
    }
}
