//! The kinds that grow by links of one chain: RedisBloom's chain (`MBbloom--`, the plain kind)
//! and the blocked kind. Adds only; an item the chain holds already stores nothing.

use super::{Kind, Params};
use crate::blocked::Blocked;
use crate::bloom::Chain;

/// An adapter over a chain kind whose core has `new`, `add`, `contains`, `reported_bytes` and
/// `validate` of the same signatures; `variant` bit 0 makes it non-scaling (adds refused once
/// full).
macro_rules! chain_kind {
    ($(#[$doc:meta])* $kind:ident($core:ident), $name:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $kind(pub $core);

        impl Kind for $kind {
            const NAME: &'static str = $name;

            fn create(p: &Params, max_bytes: u64) -> Option<Self> {
                let scaling = p.variant & 1 == 0;
                $core::new(p.capacity, p.error, p.expansion, scaling, max_bytes)
                    .ok()
                    .map($kind)
            }
            through_codec!($kind);
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
    };
}

chain_kind!(
    /// A plain chain.
    Plain(Chain),
    "chain"
);
chain_kind!(
    /// A blocked filter: every item's bits in one cache-line block.
    BlockedKind(Blocked),
    "blocked"
);
