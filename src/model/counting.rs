//! Counting filters (`BF.RESERVE ... COUNTING`): a chain of 4-bit counters, deletes that
//! decline when more than one link reads the item present (or its counters are saturated).

use super::codec::{chunks_round_trip, decode_value};
use super::{rdb_round_trip, Deletes, Kind, Params};
use crate::counting::CountingFilter;

/// A counting filter; `variant` bit 0 makes it non-scaling.
#[derive(Debug, Clone, PartialEq)]
pub struct Counting(pub CountingFilter);

impl Kind for Counting {
    const NAME: &'static str = "counting";

    fn create(p: &Params, max_bytes: u64) -> Option<Self> {
        let scaling = p.variant & 1 == 0;
        CountingFilter::new(p.capacity, p.error, p.expansion, scaling, max_bytes)
            .ok()
            .map(Counting)
    }
    fn decode(data: &[u8], max_bytes: u64) -> Option<Self> {
        decode_value(data, max_bytes).map(Counting)
    }
    fn reload(&self, max_bytes: u64) -> Result<Self, String> {
        rdb_round_trip(&self.0, max_bytes).map(Counting)
    }
    fn redump(&self, max_bytes: u64) -> Result<Self, String> {
        chunks_round_trip(&self.0, max_bytes).map(Counting)
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
        self.0.chain.reported_bytes()
    }
    fn deletes(&self) -> Deletes {
        Deletes::MayDecline
    }
}
