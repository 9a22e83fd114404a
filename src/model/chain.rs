//! RedisBloom's chain (`MBbloom--`), the plain kind: adds only, an item it holds already
//! stores nothing, and it grows by links.

use super::codec::{chunks_round_trip, decode_value};
use super::{rdb_round_trip, Kind, Params};
use crate::bloom::Chain;

/// A plain chain; `variant` bit 0 makes it non-scaling (adds refused once full).
#[derive(Debug, Clone, PartialEq)]
pub struct Plain(pub Chain);

impl Kind for Plain {
    const NAME: &'static str = "chain";

    fn create(p: &Params, max_bytes: u64) -> Option<Self> {
        let scaling = p.variant & 1 == 0;
        Chain::new(p.capacity, p.error, p.expansion, scaling, max_bytes)
            .ok()
            .map(Plain)
    }
    fn decode(data: &[u8], max_bytes: u64) -> Option<Self> {
        decode_value(data, max_bytes).map(Plain)
    }
    fn reload(&self, max_bytes: u64) -> Result<Self, String> {
        rdb_round_trip(&self.0, max_bytes).map(Plain)
    }
    fn redump(&self, max_bytes: u64) -> Result<Self, String> {
        chunks_round_trip(&self.0, max_bytes).map(Plain)
    }
    fn add(&mut self, item: &[u8], _now_ms: u64, max_bytes: u64) -> bool {
        self.0.add(item, max_bytes).is_ok()
    }
    fn contains(&self, item: &[u8], _now_ms: u64) -> bool {
        self.0.contains(item)
    }
    fn bytes(&self) -> u64 {
        self.0.reported_bytes()
    }
}
