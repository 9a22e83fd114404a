//! The windowed kinds' rate at every moment, on a real server: fed far above their capacity,
//! never-added items and items older than the window read present at most at the requested
//! rate (plus three standard deviations over 60,000 probes). And `bloomrsWN` values written
//! before spread probes (`tests/fixtures/windowed/`, recorded on Redis 7.0.15) load by
//! LOADCHUNK and RESTORE and answer, dump and report exactly as recorded.
pub mod common;

use common::*;
use serde_json::Value;

/// The recorded `bloomrsWN` values: slots in the year 2100, so that a server's clock before
/// then reads them at their own slot (a filter's clock never goes back).
fn windowed_fixtures() -> Vec<(String, Value)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/windowed/fixtures.json");
    let all: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    all["keys"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(key, spec)| (key.clone(), spec.clone()))
        .collect()
}

fn debug_lines(c: &mut Client, key: &str) -> Vec<String> {
    let lines = c.call(&["BF.DEBUG", key]).array();
    lines.iter().map(Reply::text).collect()
}

fn recorded_debug(spec: &Value) -> Vec<String> {
    let lines = spec["debug"].as_array().unwrap();
    lines
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect()
}

/// The flags field of a windowed SCANDUMP header (after magic, version, window, generations,
/// capacity, error and growth).
const FLAGS_AT: usize = 8 + 4 + 8 + 4 + 8 + 8 + 4;

#[test]
fn values_written_before_spread_probes_load_and_answer_as_recorded() {
    let s = Server::start();
    let mut c = s.client();
    for (key, spec) in windowed_fixtures() {
        let chunks = recorded_chunks(&spec);
        assert_eq!(
            chunks[0].1[FLAGS_AT] & 2,
            0,
            "{key}: recorded without the flag"
        );
        load_chunks(&mut c, "BF.LOADCHUNK", &key, &chunks);
        assert_recorded_answers(&mut c, "BF", &key, &key, &spec);
        assert_eq!(debug_lines(&mut c, &key), recorded_debug(&spec), "{key}");
        assert_dumps_as_recorded(&mut c, &key, &spec);
        let restored = format!("{key}:restored");
        let payload = as_dumped_here(&mut c, &recorded_dump(&spec));
        let restore = c.call(&[b"RESTORE".as_slice(), restored.as_bytes(), b"0", &payload]);
        assert_eq!(restore, ok(), "{key}");
        assert_eq!(
            answers(&mut c, "BF.MEXISTS", &restored, &probes(&key)),
            spec["probe_answers"].as_str().unwrap(),
            "{key}: restored"
        );
        assert_eq!(
            scandump(&mut c, "BF.SCANDUMP", &restored),
            chunks,
            "{key}: restored"
        );
        let size = info_field(&mut c, &key, "Size").int();
        assert_eq!(value_memory(&mut c, &key), size, "{key}: MEMORY USAGE");
        // A write keeps the value's probing: its header still says RedisBloom's.
        assert_eq!(call!(c, "BF.ADD", key.as_str(), "later"), Int(1));
        assert_eq!(call!(c, "BF.EXISTS", key.as_str(), "later"), Int(1));
        let header = &scandump(&mut c, "BF.SCANDUMP", &key)[0].1;
        assert_eq!(header[FLAGS_AT] & 2, 0, "{key}");
    }
}

#[test]
fn new_values_of_the_recorded_feeds_take_the_same_memory() {
    let s = Server::with_module(fault_module());
    let mut c = s.client();
    for (key, spec) in windowed_fixtures() {
        let added = spec["added"].as_u64().unwrap();
        let per_slot = spec["per_slot"].as_u64().unwrap() as usize;
        let slot_ms = spec["slot_ms"].as_i64().unwrap();
        let start = spec["start_ms"].as_i64().unwrap();
        let reserve = spec["reserve"].as_array().unwrap();
        let mut args = vec!["BF.RESERVE".to_string(), key.clone()];
        args.extend(reserve.iter().map(|a| a.as_str().unwrap().to_string()));
        assert_eq!(c.call(&args), ok(), "{key}");
        let items = added_items(&key, &spec);
        assert_eq!(items.len() as u64, added);
        for (k, slot_items) in items.chunks(per_slot).enumerate() {
            travel_to(&mut c, start + k as i64 * slot_ms);
            madd_in_batches(&mut c, &key, slot_items);
        }
        let header = &scandump(&mut c, "BF.SCANDUMP", &key)[0].1;
        assert_eq!(header[FLAGS_AT] & 2, 2, "{key}: new values spread");
        let recorded = recorded_info(&spec).array();
        let info = c.call(&["BF.INFO", key.as_str()]).array();
        for field in ["Capacity", "Size", "Number of filters"] {
            let at = info
                .iter()
                .position(|r| matches!(r, Simple(name) if name == field))
                .unwrap();
            assert_eq!(info[at + 1], recorded[at + 1], "{key}: {field}");
        }
        let present = answers(&mut c, "BF.MEXISTS", &key, &items);
        assert!(!present.contains('0'), "{key}");
    }
}

/// `rate` plus three standard deviations of a share measured over `probes` items.
fn bound(rate: f64, probes: usize) -> f64 {
    rate + 3.0 * (rate * (1.0 - rate) / probes as f64).sqrt()
}

fn present_share(c: &mut Client, key: &str, items: &[String]) -> f64 {
    let present = answers(c, "BF.MEXISTS", key, items);
    present.matches('1').count() as f64 / items.len() as f64
}

/// `BF.RESERVE key 0.01 100 [COMPACT] WINDOW 8 GENERATIONS 4`, then `BF.MADD` of 500 new
/// items every 0.1 s for 20 s: 60,000 never-added items, and the items added more than 8 s
/// (and a margin) before the last batch, read present at most at 1 % + 3σ.
fn holds_its_rate_above_capacity(compact: bool) {
    let s = Server::with_module(fault_module());
    let mut c = s.client();
    let t0 = noon(&mut c);
    let mut reserve = vec!["BF.RESERVE", "w", "0.01", "100"];
    if compact {
        reserve.push("COMPACT");
    }
    reserve.extend(["WINDOW", "8", "GENERATIONS", "4"]);
    assert_eq!(c.call(&reserve), ok());
    let batches = 200i64;
    let batch = |step: i64| -> Vec<String> {
        (0..500)
            .map(|i| format!("feed:{}", step * 500 + i))
            .collect()
    };
    for step in 0..batches {
        travel_to(&mut c, t0 + step * 100);
        let mut args = vec!["BF.MADD".to_string(), "w".to_string()];
        args.extend(batch(step));
        assert_eq!(c.call(&args).array().len(), 500);
    }
    let now = t0 + (batches - 1) * 100;
    travel_to(&mut c, now);
    let kind = if compact { "compact" } else { "plain" };
    let never: Vec<String> = (0..60_000).map(|i| format!("never:{i}")).collect();
    let share = present_share(&mut c, "w", &never);
    eprintln!("{kind}: never-added items read present: {share}");
    assert!(
        share <= bound(0.01, never.len()),
        "{kind}: never-added {share}"
    );
    // Added at least 8.5 s before now: forgotten whatever the real milliseconds between the
    // clock moves and the commands.
    let old: Vec<String> = (0..batches)
        .filter(|step| t0 + step * 100 <= now - 8_500)
        .flat_map(batch)
        .collect();
    assert!(old.len() >= 50_000, "{}", old.len());
    let share = present_share(&mut c, "w", &old);
    eprintln!(
        "{kind}: {} items older than the window read present: {share}",
        old.len()
    );
    assert!(
        share <= bound(0.01, old.len()),
        "{kind}: older than the window {share}"
    );
    // And what the window must remember (the last 6 s) it does.
    let recent: Vec<String> = ((batches - 50)..batches).flat_map(batch).collect();
    assert!(!answers(&mut c, "BF.MEXISTS", "w", &recent).contains('0'));
}

#[test]
fn a_plain_window_holds_its_rate_above_capacity() {
    holds_its_rate_above_capacity(false);
}

#[test]
fn a_compact_window_holds_its_rate_above_capacity() {
    holds_its_rate_above_capacity(true);
}
