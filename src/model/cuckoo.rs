//! Cuckoo filters (`CF.*`): adds of duplicates (`CF.ADD`), deletes of items with adds
//! outstanding (what users are told to delete), growth by sub-filters.

use super::{Deletes, Kind, Params};
use crate::cuckoo::{CuckooFilter, CuckooParams};

/// The most sub-filters a value the check takes may have.
pub const MAX_CHECKED_SUB_FILTERS: usize = 1024;

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
    /// A decoded value whose sub-filters are (and will stay) of power-of-two bucket counts:
    /// a `CF.LOADCHUNK` header may carry another expansion, which RedisBloom accepts and this
    /// filter takes as it does, and there an item an insertion's evictions moved can read
    /// absent (the alternate bucket of the alternate bucket is not the first one), as in
    /// RedisBloom. Such values answer as the reference does and are out of this check.
    fn decode(data: &[u8], max_bytes: u64) -> Option<Self> {
        let filter: CuckooFilter = crate::model::codec::decode_value(data, max_bytes)?;
        let expansion = filter.expansion();
        let grows_evenly = expansion == 0 || expansion.is_power_of_two();
        let even = filter
            .sub_filters()
            .iter()
            .all(|f| f.num_buckets().is_power_of_two());
        // Every lookup reads every sub-filter: a value of tens of thousands of them (the
        // module holds at most `cf-max-expansions`, 32 by default) makes one check take
        // seconds and tells nothing a thousand do not.
        let checkable = filter.sub_filters().len() <= MAX_CHECKED_SUB_FILTERS;
        (grows_evenly && even && checkable).then_some(Cuckoo(filter))
    }
    through_codec!(round_trips Cuckoo);
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
