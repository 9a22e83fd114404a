//! Cuckoo filters (`CF.*`): adds of duplicates (`CF.ADD`), deletes of items with adds
//! outstanding (what users are told to delete), growth by sub-filters.

use super::codec::{chunks_round_trip, decode_value};
use super::{rdb_round_trip, Deletes, Kind, Params};
use crate::cuckoo::{CuckooFilter, CuckooParams};

/// A cuckoo filter; `variant` picks the bucket size (bits 0-1), the kicks (bits 2-3) and the
/// expansion (bits 4-5, 0 meaning a filter that never grows), the capacity from `Params`.
#[derive(Debug, Clone, PartialEq)]
pub struct Cuckoo(pub CuckooFilter);

impl Kind for Cuckoo {
    const NAME: &'static str = "cuckoo";

    fn create(p: &Params, max_bytes: u64) -> Option<Self> {
        const BUCKETS: [u16; 4] = [2, 1, 4, 2];
        const KICKS: [u16; 4] = [20, 1, 100, 20];
        const EXPANSIONS: [u16; 4] = [1, 2, 4, 0];
        let v = usize::from(p.variant);
        let params = CuckooParams {
            capacity: p.capacity.max(4),
            bucket_size: BUCKETS[v & 3],
            max_iterations: KICKS[v >> 2 & 3],
            expansion: EXPANSIONS[v >> 4 & 3],
        };
        CuckooFilter::new(params, max_bytes).ok().map(Cuckoo)
    }
    fn decode(data: &[u8], max_bytes: u64) -> Option<Self> {
        decode_value(data, max_bytes).map(Cuckoo)
    }
    fn reload(&self, max_bytes: u64) -> Result<Self, String> {
        rdb_round_trip(&self.0, max_bytes).map(Cuckoo)
    }
    fn redump(&self, max_bytes: u64) -> Result<Self, String> {
        chunks_round_trip(&self.0, max_bytes).map(Cuckoo)
    }
    fn add(&mut self, item: &[u8], _now_ms: u64, max_bytes: u64) -> bool {
        self.0.insert(item, max_bytes).is_ok()
    }
    fn delete(&mut self, item: &[u8]) -> bool {
        self.0.delete(item)
    }
    fn contains(&self, item: &[u8], _now_ms: u64) -> bool {
        self.0.contains(item)
    }
    fn bytes(&self) -> u64 {
        self.0.size_bytes()
    }
    fn deletes(&self) -> Deletes {
        Deletes::Always
    }
}
