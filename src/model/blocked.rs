//! Blocked filters (`BF.RESERVE ... BLOCKED`): adds only, every item's bits in one cache-line
//! block, and it grows by links as the plain chain does.

use super::{Kind, Params};
use crate::blocked::Blocked;

/// A blocked filter; `variant` bit 0 makes it non-scaling (adds refused once full).
#[derive(Debug, Clone, PartialEq)]
pub struct BlockedKind(pub Blocked);

impl Kind for BlockedKind {
    const NAME: &'static str = "blocked";

    fn create(p: &Params, max_bytes: u64) -> Option<Self> {
        let scaling = p.variant & 1 == 0;
        Blocked::new(p.capacity, p.error, p.expansion, scaling, max_bytes)
            .ok()
            .map(BlockedKind)
    }
    through_codec!(BlockedKind);
    fn add(&mut self, item: &[u8], _now_ms: u64, max_bytes: u64) -> bool {
        self.0.add(item, max_bytes).is_ok()
    }
    fn contains(&self, item: &[u8], _now_ms: u64) -> bool {
        self.0.contains(item)
    }
    fn bytes(&self) -> u64 {
        self.0.reported_bytes()
    }
    /// Whatever the operations did, the value still passes the checks of a stored one.
    fn check(&self, max_bytes: u64) -> Result<(), String> {
        self.0.validate(max_bytes).map_err(str::to_string)
    }
}
