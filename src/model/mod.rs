//! The model check: every kind of filter runs the same long sequences of operations against a
//! plain multiset, and after every step the filter must still keep its promises. Compiled for
//! the core's tests and, behind the `model-check` feature, for the fuzz targets
//! (`fuzz/fuzz_targets/model_<kind>.rs`), which feed it fuzzer bytes.
//!
//! - [`Multiset`] is the model: how many adds of each item are outstanding (adds less the
//!   deletes the filter accepted), and when each item was last added.
//! - [`Op`] is what a sequence is made of: adds with heavy duplication, deletes (only of items
//!   with adds outstanding, as users are told for Cuckoo too), lookups, save/load and
//!   SCANDUMP round trips, growth by many new items, and the clock moving on.
//! - [`Kind`] is the small trait each kind implements (an adapter per kind, in this folder);
//!   [`Codec`] names one core type's RDB and LOADCHUNK codecs, so the round trips go through
//!   the same loaders the server uses.
//! - [`run`] plays a sequence on a value the loader accepts (created empty, or decoded from
//!   fuzzer bytes by [`decode`]) and checks after every step (see `driver.rs`).

/// An adapter's `Kind::reload` and `Kind::redump` (and `Kind::decode`, unless `round_trips`
/// only is asked) when it wraps one [`Codec`] type as `$wrap(core)`.
macro_rules! through_codec {
    (round_trips $wrap:expr) => {
        fn reload(&self, max_bytes: u64) -> Result<Self, String> {
            crate::model::rdb_round_trip(&self.0, max_bytes).map($wrap)
        }
        fn redump(&self, max_bytes: u64) -> Result<Self, String> {
            crate::model::codec::chunks_round_trip(&self.0, max_bytes).map($wrap)
        }
    };
    ($wrap:expr) => {
        fn decode(data: &[u8], max_bytes: u64) -> Option<Self> {
            crate::model::codec::decode_value(data, max_bytes).map($wrap)
        }
        through_codec!(round_trips $wrap);
    };
}

mod chain;
mod codec;
mod compact;
mod counting;
mod cuckoo;
mod driver;
mod multiset;
mod ops;
mod sparse;
mod static_set;
mod valkey_bloom;
mod windowed;

pub use chain::{BlockedKind, Plain};
pub use codec::{decode_value, Codec};
pub use compact::{CompactCounting, CompactPlain};
pub use counting::Counting;
pub use cuckoo::Cuckoo;
pub use driver::{fuzz, run, start, Limits, Report};
pub use multiset::{item, Multiset};
pub use ops::{Op, Ops, Pick};
pub use sparse::SparseKind;
pub use static_set::StaticKind;
pub use valkey_bloom::ValkeyKind;
pub use windowed::{CompactWindowedKind, WindowedKind};

use crate::rdb::MemoryRdb;
use std::fmt::Debug;

/// What a new value is created with: each kind reads the fields it has (the chain kinds all
/// of them, Cuckoo its own meaning of `variant`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    pub capacity: u64,
    pub error: f64,
    pub expansion: u32,
    /// Kind-specific choices (non-scaling, window length, bucket size, ...).
    pub variant: u8,
}

impl Params {
    /// Parameters from two fuzzer bytes: loose (0.5), tight (1e-9) and default (0.01) error
    /// rates, small capacities so chains grow, expansions 1, 2 and 4. Expansion 1 comes with a
    /// first link of at least 100 items: from a smaller one a chain grows a link every few
    /// items, and every lookup walks a thousand links (legal, and slow to fuzz).
    pub fn from_bytes(shape: u8, variant: u8) -> Params {
        const ERRORS: [f64; 4] = [0.5, 1e-9, 0.01, 0.1];
        const CAPACITIES: [u64; 8] = [1, 2, 7, 10, 50, 100, 300, 1000];
        const EXPANSIONS: [u32; 4] = [2, 4, 1, 2];
        let expansion = EXPANSIONS[usize::from(shape >> 5 & 3)];
        let capacity = CAPACITIES[usize::from(shape >> 2 & 7)];
        Params {
            error: ERRORS[usize::from(shape & 3)],
            capacity: if expansion == 1 {
                capacity.max(100)
            } else {
                capacity
            },
            expansion,
            variant,
        }
    }
}

/// Where a value stands on deletes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deletes {
    /// The kind has no deletes: the driver turns deletes into lookups.
    None,
    /// A delete of an item with adds outstanding may be declined (the value must then be
    /// unchanged), as a counting filter declines when it cannot tell which link holds the item.
    MayDecline,
    /// A delete of an item with adds outstanding always takes one add back.
    Always,
}

/// The work one operation did, in the kind's own unit (slots read or moved, say), and the
/// most it may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Work {
    pub done: u64,
    pub bound: u64,
}

/// A kind as the model drives it: the operations the commands use, its loaders, and what it
/// promises. Each adapter is a few lines over the kind's core.
pub trait Kind: Sized + Clone + PartialEq + Debug {
    const NAME: &'static str;

    /// A new empty value, as `BF.RESERVE` (or `CF.RESERVE`) would make it; None if refused.
    fn create(params: &Params, max_bytes: u64) -> Option<Self>;
    /// A value decoded from fuzzer bytes through the server's loaders (see [`decode_value`]).
    fn decode(data: &[u8], max_bytes: u64) -> Option<Self>;
    /// The value saved to an RDB stream and loaded back by the server's loader.
    fn reload(&self, max_bytes: u64) -> Result<Self, String>;
    /// The value's SCANDUMP (header and chunks) loaded back by `LOADCHUNK`.
    fn redump(&self, max_bytes: u64) -> Result<Self, String>;

    /// Adds one more of `item` at `now_ms`: true if the value holds it (a kind without deletes
    /// may store nothing for an item it holds already), false if the add was refused.
    fn add(&mut self, item: &[u8], now_ms: u64, max_bytes: u64) -> bool;
    /// Takes one add of `item` back: true if it did.
    fn delete(&mut self, _item: &[u8]) -> bool {
        false
    }
    fn contains(&self, item: &[u8], now_ms: u64) -> bool;
    /// Bytes the value reports.
    fn bytes(&self) -> u64;
    /// What one check of the stored forms walks (decides how often those checks run): the
    /// value's bytes, unless the kind's own check does more.
    fn check_cost(&self) -> u64 {
        self.bytes()
    }

    fn deletes(&self) -> Deletes {
        Deletes::None
    }
    /// Whether every chunk of a LOADCHUNK sequence has arrived (operations wait otherwise).
    fn is_ready(&self) -> bool {
        true
    }
    /// What every write does first at `now_ms` (a windowed filter retires old generations).
    fn advance(&mut self, _now_ms: u64) {}
    /// The time the model's clock starts at for this value (never before the value's own).
    fn clock_start(&self) -> u64 {
        0
    }
    /// Milliseconds one tick of the model's clock moves.
    fn tick_ms(&self) -> u64 {
        1
    }
    /// Whether an item last added at `added_ms` must still read present at `now_ms`.
    fn remembers(&self, _added_ms: u64, _now_ms: u64) -> bool {
        true
    }
    /// The work of the operation just done (the meter reset), where the kind meters it; None
    /// means the work per operation does not vary with what the value holds.
    fn take_work(&mut self) -> Option<Work> {
        None
    }
    /// Promises of the kind beyond the loader's (a sparse filter's dense dump, say).
    fn check(&self, _max_bytes: u64) -> Result<(), String> {
        Ok(())
    }
}

/// The value saved and loaded back through `T`'s RDB loader.
fn rdb_round_trip<T: Codec>(value: &T, max_bytes: u64) -> Result<T, String> {
    let mut rdb = MemoryRdb::new();
    value.save(&mut rdb);
    T::load(&mut rdb, value.encoding_version(), max_bytes)
        .ok_or_else(|| "the RDB loader refused the saved value".to_string())
}

#[cfg(test)]
mod seeds;
#[cfg(test)]
mod tests;
