//! The RedisBloom fixtures shipped with the tests (`tests/fixtures/redisbloom/`): the recorded
//! keys of each type with their replies, chunks and payloads, the RDB file RedisBloom wrote, and
//! checking a key's answers, DUMP and memory usage against what was recorded.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::client::{Array, Client, Int, Nil, Reply, Simple};
use super::compat::{as_dumped_here, key_overhead, server_info};
use super::rdb::scandump;

/// The RedisBloom fixtures shipped with the tests.
pub fn fixtures() -> serde_json::Value {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/redisbloom/fixtures.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The recorded keys of one type (`bf` or `cf`), each with its record.
pub fn fixture_keys(kind: &str) -> Vec<(String, Value)> {
    let all = fixtures();
    let keys: Vec<_> = all["keys"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, spec)| spec["type"] == kind)
        .map(|(key, spec)| (key.clone(), spec.clone()))
        .collect();
    assert!(!keys.is_empty(), "no {kind} fixtures");
    keys
}

/// The recorded INFO reply, as RESP2 sends it.
pub fn recorded_info(spec: &Value) -> Reply {
    Array(
        spec["info"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|pair| {
                let value = match pair[1].as_i64() {
                    Some(v) => Int(v),
                    None => Nil,
                };
                [Simple(pair[0].as_str().unwrap().to_string()), value]
            })
            .collect(),
    )
}

/// The recorded SCANDUMP chunks (iterator, bytes), header first.
pub fn recorded_chunks(spec: &Value) -> Vec<(i64, Vec<u8>)> {
    spec["scandump"]
        .as_array()
        .unwrap()
        .iter()
        .map(|step| (step[0].as_i64().unwrap(), b64(step[1].as_str().unwrap())))
        .collect()
}

/// The recorded DUMP payload.
pub fn recorded_dump(spec: &Value) -> Vec<u8> {
    b64(spec["dump"].as_str().unwrap())
}

/// The items the recording added to `key`, in order.
pub fn added_items(key: &str, spec: &Value) -> Vec<String> {
    let added = spec["added"].as_u64().unwrap();
    (0..added).map(|i| format!("{key}/{i}")).collect()
}

/// The 20,000 items the recording asked about without adding them.
pub fn probes(key: &str) -> Vec<String> {
    (0..20000).map(|j| format!("{key}/probe/{j}")).collect()
}

/// Answers of `command key items...` as a string of 0/1, in batches.
pub fn answers(client: &mut Client, command: &str, key: &str, items: &[String]) -> String {
    let mut out = String::new();
    for batch in items.chunks(1000) {
        let mut args = vec![command.to_string(), key.to_string()];
        args.extend(batch.iter().cloned());
        for reply in client.call(&args).array() {
            out.push(if reply.int() == 1 { '1' } else { '0' });
        }
    }
    out
}

/// The filter under `name` gives the INFO, the membership answers and the SCANDUMP chunks that
/// the fixture `key` recorded; `family` is `BF` or `CF`.
pub fn assert_recorded_answers(
    client: &mut Client,
    family: &str,
    name: &str,
    key: &str,
    spec: &Value,
) {
    let info = client.call(&[format!("{family}.INFO"), name.to_string()]);
    assert_eq!(info, recorded_info(spec), "{key}");
    let mexists = format!("{family}.MEXISTS");
    let present = answers(client, &mexists, name, &added_items(key, spec));
    assert_eq!(present, spec["present_answers"].as_str().unwrap(), "{key}");
    let probed = answers(client, &mexists, name, &probes(key));
    assert_eq!(probed, spec["probe_answers"].as_str().unwrap(), "{key}");
    let chunks = scandump(client, &format!("{family}.SCANDUMP"), name);
    assert_eq!(chunks, recorded_chunks(spec), "{key}");
}

/// `key` DUMPs as the recorded payload does once re-stamped for this server.
pub fn assert_dumps_as_recorded(client: &mut Client, key: &str, spec: &Value) {
    let here = as_dumped_here(client, &recorded_dump(spec));
    assert_eq!(client.call(&["DUMP", key]).bytes(), here, "{key}: DUMP");
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
