//! Windowed filters (`BF.RESERVE ... WINDOW`): adds only, and an item added at `t` must read
//! present while the generation it went into is live: until `g` newer slots have begun.
//! The model's clock moves by ticks of a sixteenth of a generation.

use super::{Kind, Params};
use crate::bloom::Chain;
use crate::windowed::CompactGeneration;
use crate::windowed::{Generation, Window, WindowParams};

/// Where the model's clock starts for a new filter: a Unix time of our era.
const EPOCH_MS: u64 = 1_700_000_000_000;

/// A windowed filter; `variant` picks the window (bits 0-1), the generations (bits 2-3),
/// non-scaling generations (bit 4, for the kinds that take them) and RedisBloom's probing of
/// the values written before spread probes (bit 5, for the kinds that have them).
#[derive(Debug, Clone, PartialEq)]
pub struct WindowedKind<G = Chain>(pub Window<G>);

/// Windows of compact generations (`COMPACT WINDOW`).
pub type CompactWindowedKind = WindowedKind<CompactGeneration>;

/// The model's name of each generation kind, and the secret its windows are created with.
pub trait Modelled: Generation {
    const NAME: &'static str;
    const SECRET: u64;
}

impl Modelled for Chain {
    const NAME: &'static str = "windowed";
    const SECRET: u64 = 0;
}

impl Modelled for CompactGeneration {
    const NAME: &'static str = "compact_windowed";
    const SECRET: u64 = 0x5eed_0fc0_ffee;
}

impl<G: Generation> WindowedKind<G> {
    /// The slot `ms` falls in, computed from the window alone (not the filter's clock).
    fn slot(&self, ms: u64) -> u128 {
        let p = &self.0.params;
        u128::from(ms) * u128::from(p.generations) / u128::from(p.window_ms.max(1))
    }
}

impl<G: Modelled> Kind for WindowedKind<G> {
    const NAME: &'static str = G::NAME;

    fn create(p: &Params, max_bytes: u64) -> Option<Self> {
        const WINDOWS: [u64; 4] = [1000, 60_000, 3_600_000, 86_400_000];
        const GENERATIONS: [u16; 4] = [2, 4, 8, 32];
        let params = WindowParams {
            window_ms: WINDOWS[usize::from(p.variant & 3)],
            generations: GENERATIONS[usize::from(p.variant >> 2 & 3)],
            capacity: p.capacity,
            error: p.error,
            growth: if G::KEYED { 2 } else { p.expansion },
            scaling: G::KEYED || p.variant & 16 == 0,
            spread: G::SPREADS && p.variant & 32 == 0,
        };
        Window::new(params, G::SECRET, max_bytes)
            .ok()
            .map(WindowedKind)
    }
    through_codec!(WindowedKind);
    fn add(&mut self, item: &[u8], now_ms: u64, max_bytes: u64) -> bool {
        self.0.add(now_ms, item, max_bytes).is_ok()
    }
    fn contains(&self, item: &[u8], now_ms: u64) -> bool {
        self.0.contains(now_ms, item)
    }
    fn bytes(&self) -> u64 {
        self.0.reported_bytes()
    }
    fn is_ready(&self) -> bool {
        self.0.is_loaded()
    }
    fn advance(&mut self, now_ms: u64) {
        self.0.retire(now_ms);
    }
    /// The first millisecond of the filter's current slot, or our era for a new filter.
    fn clock_start(&self) -> u64 {
        let p = &self.0.params;
        let start = (u128::from(self.0.slot) * u128::from(p.window_ms))
            .div_ceil(u128::from(p.generations.max(1)));
        u64::try_from(start).unwrap_or(u64::MAX).max(EPOCH_MS)
    }
    fn tick_ms(&self) -> u64 {
        let p = &self.0.params;
        (p.window_ms / (16 * u64::from(p.generations.max(1)))).max(1)
    }
    fn remembers(&self, added_ms: u64, now_ms: u64) -> bool {
        let generations = u128::from(self.0.params.generations);
        self.slot(added_ms) + generations > self.slot(now_ms)
    }
}
