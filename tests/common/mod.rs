//! Test support, compiled into every integration test binary: a real server (`redis-server`, or
//! `valkey-server` with `BLOOMRS_SERVER=valkey-server`) with the freshly built module on a free
//! loopback port, and a client that keeps every reply's exact type.
//!
//! - `attack`: windowed filters attacked from outside: a seeded generator, a primary with its
//!   AOF and replica, and the comparisons each round ends with.
//! - `admission`: `used_memory` across a refused command (memory admission tests).
//! - `attack`: a seedable generator and campaign lengths for the attack tests.
//! - `client`: the RESP client, `Reply` and its constructors, `call!`, tables of exact replies.
//! - `server`: starting, restarting and stopping servers; AOF files; waiting for persistence,
//!   lazy free and replicas.
//! - `rdb`: DUMP payloads (fields, CRC-64, trailer) and SCANDUMP chunks.
//! - `compat`: what differs by server and version (`rdb_version`, `key_overhead`,
//!   `sync_finished_line`, `strip_display_text`, ...), asked of the running server.
//! - `fixtures`: the RedisBloom fixtures and the memory usage recorded with them.
//! - `state`: what a server holds, read back to compare (keys, INFO numbers, a Bloom key's
//!   chunks and replies, membership), and adding items in batches.
//! - `valkey_fixtures`: the values valkey-bloom wrote and the answers it gave.
//! - `pair`: a primary and its replica under a long randomized run.
//! - `clock`: a fault-injection server's clock, moved so that windows see days pass.
//! - `cluster`: clusters on loopback (with replicas) and a client that follows redirections.
//!
//! Each test binary declares this module `pub mod common;`: its items are then the binary's
//! public interface, so a helper one binary does not use is not dead code there.

mod admission;
mod attack;
mod client;
mod clock;
mod cluster;
mod compat;
mod fixtures;
mod pair;
mod rdb;
mod server;
mod state;
mod valkey_fixtures;
mod window_values;

pub use admission::*;
pub use attack::*;
pub use client::*;
pub use clock::*;
pub use cluster::*;
pub use compat::*;
pub use fixtures::*;
pub use pair::*;
pub use rdb::*;
pub use server::*;
pub use state::*;
pub use valkey_fixtures::*;
pub use window_values::*;
