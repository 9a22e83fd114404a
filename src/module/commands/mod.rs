//! The commands room: the `BF.*` and `CF.*` handlers (parse with `crate::syntax`, one call
//! into the value, reply), `BF.__FAULT` in test builds, and `table.rs`, the one table every
//! command is registered, documented and categorised from. A Bloom handler asks whatever kind
//! a key holds through `kinds` and never names a kind; the kinds' own commands (`BF.PROMOTE`,
//! `BF.RETIRE`) live with their kinds and are only listed in the table. May import every room
//! below: `kinds`, `types`, `ffi`, `state`.

pub mod bf;
pub mod cf;
pub mod cf_chunks;
#[cfg(feature = "fault-injection")]
pub mod fault;
pub mod table;
