//! bloomrs: Bloom and Cuckoo filters as native Redis data types, compatible with RedisBloom.
//!
//! The core (`hash`, `bloom`, `cuckoo`, `rdb`) has no Redis in it; the `module` layer (behind
//! the default `module` feature) adapts it to the Redis module API.
pub mod bloom;
pub mod cuckoo;
pub mod hash;
pub mod rdb;

#[cfg(feature = "module")]
mod module;
