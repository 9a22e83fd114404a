//! bloomrs: Bloom and Cuckoo filters as native Redis data types, compatible with RedisBloom.
//!
//! The core (`hash`, `bloom`, `counting`, `windowed`, `sparse`, `compact`, `cuckoo`, `rdb`,
//! `budget`) and the command syntax (`syntax`) have no Redis in them; the `module` layer
//! (behind the default `module` feature) adapts them to the Redis module API.
pub mod blocked;
pub mod bloom;
pub mod budget;
pub mod compact;
pub mod counting;
pub mod cuckoo;
pub mod fuse;
pub mod hash;
pub mod rdb;
pub mod sparse;
pub mod syntax;
pub mod valkey_bloom;
pub mod windowed;

#[cfg(test)]
mod construction_tests;
#[cfg(any(test, feature = "model-check"))]
pub mod model;
#[cfg(test)]
mod test_rng;

#[cfg(feature = "module")]
mod module;
