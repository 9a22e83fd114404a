//! The RedisBloom fixtures shipped with the tests (`tests/fixtures/redisbloom/`): the recorded
//! replies and payloads, the RDB file RedisBloom wrote, and checking a restored key's memory
//! usage against what was recorded.

use std::path::{Path, PathBuf};

use super::client::Client;
use super::compat::{key_overhead, server_info};

/// The RedisBloom fixtures shipped with the tests.
pub fn fixtures() -> serde_json::Value {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/redisbloom/fixtures.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

pub fn fixture_rdb() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/redisbloom/dump.rdb")
}

pub fn b64(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap()
}

/// `MEMORY USAGE` of a key restored from a RedisBloom fixture: the value's own size is the
/// `Size` RedisBloom reported in its INFO (its memory-usage callback gives the same), plus this
/// server's per-key overhead. On Redis 7.0, where the fixtures were recorded, that is exactly the
/// recorded `memory_usage`.
pub fn assert_memory_usage(client: &mut Client, key: &str, fixture: &serde_json::Value) {
    let size = fixture["info"]
        .as_array()
        .and_then(|info| info.iter().find(|pair| pair[0] == "Size"))
        .and_then(|pair| pair[1].as_i64())
        .expect("the fixture records a Size");
    let usage = client.call(&["MEMORY", "USAGE", key]).int();
    assert_eq!(usage - key_overhead(client, key), size, "{key}: value size");
    let info = server_info(client);
    if info.name == "redis" && info.version[..2] == [7, 0] {
        let recorded = fixture["memory_usage"].as_i64().unwrap();
        assert_eq!(usage, recorded, "{key}: MEMORY USAGE as recorded");
    }
}
