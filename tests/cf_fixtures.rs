//! The RedisBloom fixtures (`tests/fixtures/redisbloom`): values recorded from RedisBloom 2.8
//! must come back with exactly the recorded answers whether they arrive by RESTORE, by
//! CF.LOADCHUNK or in an RDB file, and replaying each recorded build must reproduce the recorded
//! replies and SCANDUMP bytes.

pub mod common;

use common::*;
use serde_json::Value;

/// The cuckoo filter under `name` answers exactly as the fixture `key` recorded.
fn assert_cuckoo(c: &mut Client, name: &str, key: &str, spec: &Value) {
    assert_recorded_answers(c, "CF", name, key, spec);
    let counts: Vec<i64> = (0..20)
        .map(|i| call!(c, "CF.COUNT", name, format!("{key}/{i}")).int())
        .collect();
    let recorded: Vec<i64> = spec["counts_first_20"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    assert_eq!(counts, recorded, "{key}");
}

/// The Bloom filter under `key` answers exactly as recorded.
fn assert_bloom(c: &mut Client, key: &str, spec: &Value) {
    assert_recorded_answers(c, "BF", key, key, spec);
    let recorded = spec["probe_answers"].as_str().unwrap();
    for (item, answer) in probes(key).iter().zip(recorded.chars()).take(500) {
        let expected = Int(i64::from(answer == '1'));
        assert_eq!(call!(c, "BF.EXISTS", key, item), expected, "{key} {item}");
    }
}

#[test]
fn restore_of_every_recorded_cuckoo_dump() {
    let server = Server::start();
    let mut c = server.client();
    for (key, spec) in fixture_keys("cf") {
        let payload = recorded_dump(&spec);
        assert_eq!(call!(c, "RESTORE", key, "0", payload), ok(), "{key}");
        assert_cuckoo(&mut c, &key, &key, &spec);
        assert_dumps_as_recorded(&mut c, &key, &spec);
        assert_memory_usage(&mut c, &key, &spec);
    }
}

#[test]
fn loadchunk_of_every_recorded_chunk_list() {
    let server = Server::start();
    let mut c = server.client();
    for (key, spec) in fixture_keys("cf") {
        let mut chunks = recorded_chunks(&spec);
        // The header goes to iterator 1, whatever iterator the recording gave it.
        chunks[0].0 = 1;
        load_chunks(&mut c, "CF.LOADCHUNK", &key, &chunks);
        assert_cuckoo(&mut c, &key, &key, &spec);
        assert_dumps_as_recorded(&mut c, &key, &spec);
    }
}

fn int_list(value: &Value) -> Vec<Reply> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| Int(v.as_i64().unwrap()))
        .collect()
}

/// Replays the recorded build of a cuckoo key under a new name.
fn replay(c: &mut Client, name: &str, key: &str, spec: &Value) {
    if let Some(create) = spec["create"].as_array() {
        let mut args: Vec<String> = create
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect();
        args[1] = name.to_string();
        let reply = c.call(&args);
        if args[0] == "CF.RESERVE" {
            assert_eq!(reply, ok(), "{key}");
        } else {
            assert_eq!(reply, ints(&[1]), "{key}");
        }
    }
    let add = spec["add"].as_str().unwrap();
    let items = added_items(key, spec);
    for item in &items {
        c.send(&[add, name, item.as_str()]);
    }
    let replies: Vec<Reply> = items.iter().map(|_| c.read()).collect();
    assert_eq!(replies, int_list(&spec["add_replies"]), "{key}");
    for item in items
        .iter()
        .take(spec["repeated"].as_u64().unwrap() as usize)
    {
        assert_eq!(call!(c, "CF.ADD", name, item), Int(1), "{key}");
    }
    let deletes = spec["deleted"].as_u64().unwrap() as usize;
    for item in items.iter().take(deletes) {
        c.send(&["CF.DEL", name, item.as_str()]);
    }
    let replies: Vec<Reply> = (0..deletes).map(|_| c.read()).collect();
    assert_eq!(replies, int_list(&spec["del_replies"]), "{key}");
}

#[test]
fn replaying_every_recorded_build_gives_the_recorded_bytes() {
    let server = Server::start();
    let mut c = server.client();
    for (key, spec) in fixture_keys("cf") {
        let name = format!("replay:{key}");
        replay(&mut c, &name, &key, &spec);
        assert_cuckoo(&mut c, &name, &key, &spec);
    }
}

#[test]
fn recorded_rdb_file_loads_with_every_answer() {
    let server = Server::with_rdb(&fixture_rdb());
    let mut c = server.client();
    let cuckoo = fixture_keys("cf");
    let bloom = fixture_keys("bf");
    assert_eq!(call!(c, "DBSIZE"), Int((cuckoo.len() + bloom.len()) as i64));
    for (key, spec) in &cuckoo {
        assert_eq!(call!(c, "TYPE", key), Simple("MBbloomCF".into()));
        assert_cuckoo(&mut c, key, key, spec);
        assert_dumps_as_recorded(&mut c, key, spec);
    }
    for (key, spec) in &bloom {
        assert_eq!(call!(c, "TYPE", key), Simple("MBbloom--".into()));
        assert_bloom(&mut c, key, spec);
        assert_dumps_as_recorded(&mut c, key, spec);
    }
}
