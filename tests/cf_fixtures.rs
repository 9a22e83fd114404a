//! The RedisBloom fixtures (`tests/fixtures/redisbloom`): values recorded from RedisBloom 2.8
//! must come back with exactly the recorded answers whether they arrive by RESTORE, by
//! CF.LOADCHUNK or in an RDB file, and replaying each recorded build must reproduce the recorded
//! replies and SCANDUMP bytes.

pub mod common;

use common::*;
use serde_json::Value;

fn keys_of(kind: &str) -> Vec<(String, Value)> {
    let all = fixtures();
    let keys: Vec<_> = all["keys"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, spec)| spec["type"] == kind)
        .map(|(key, spec)| (key.clone(), spec.clone()))
        .collect();
    assert!(!keys.is_empty());
    keys
}

fn added(spec: &Value) -> usize {
    spec["added"].as_u64().unwrap() as usize
}

/// Answers of `command key items...` as a string of 0/1, in batches.
fn answers(c: &mut Client, command: &str, key: &str, items: &[String]) -> String {
    let mut out = String::new();
    for batch in items.chunks(1000) {
        let mut args = vec![command.to_string(), key.to_string()];
        args.extend(batch.iter().cloned());
        for reply in c.call(&args).array() {
            out.push(if reply.int() == 1 { '1' } else { '0' });
        }
    }
    out
}

fn added_items(key: &str, spec: &Value) -> Vec<String> {
    (0..added(spec)).map(|i| format!("{key}/{i}")).collect()
}

fn probes(key: &str) -> Vec<String> {
    (0..20000).map(|j| format!("{key}/probe/{j}")).collect()
}

/// The recorded INFO reply, as RESP2 sends it.
fn recorded_info(spec: &Value) -> Reply {
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

fn recorded_scandump(spec: &Value) -> Vec<(i64, Vec<u8>)> {
    spec["scandump"]
        .as_array()
        .unwrap()
        .iter()
        .map(|step| (step[0].as_i64().unwrap(), b64(step[1].as_str().unwrap())))
        .collect()
}

/// The cuckoo filter under `name` answers exactly as the fixture `key` recorded.
fn assert_cuckoo(c: &mut Client, name: &str, key: &str, spec: &Value) {
    assert_eq!(call!(c, "CF.INFO", name), recorded_info(spec), "{key}");
    let present = answers(c, "CF.MEXISTS", name, &added_items(key, spec));
    assert_eq!(present, spec["present_answers"].as_str().unwrap(), "{key}");
    let probed = answers(c, "CF.MEXISTS", name, &probes(key));
    assert_eq!(probed, spec["probe_answers"].as_str().unwrap(), "{key}");
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
    assert_eq!(
        scandump(c, "CF.SCANDUMP", name),
        recorded_scandump(spec),
        "{key}"
    );
}

/// The Bloom filter under `key` answers exactly as recorded.
fn assert_bloom(c: &mut Client, key: &str, spec: &Value) {
    assert_eq!(call!(c, "BF.INFO", key), recorded_info(spec), "{key}");
    let present = answers(c, "BF.MEXISTS", key, &added_items(key, spec));
    assert_eq!(present, spec["present_answers"].as_str().unwrap(), "{key}");
    let probe_items = probes(key);
    let recorded = spec["probe_answers"].as_str().unwrap();
    assert_eq!(
        answers(c, "BF.MEXISTS", key, &probe_items),
        recorded,
        "{key}"
    );
    for (item, answer) in probe_items.iter().zip(recorded.chars()).take(500) {
        let expected = Int(i64::from(answer == '1'));
        assert_eq!(call!(c, "BF.EXISTS", key, item), expected, "{key} {item}");
    }
    assert_eq!(
        scandump(c, "BF.SCANDUMP", key),
        recorded_scandump(spec),
        "{key}"
    );
}

#[test]
fn restore_of_every_recorded_cuckoo_dump() {
    let server = Server::start();
    let mut c = server.client();
    for (key, spec) in keys_of("cf") {
        let payload = b64(spec["dump"].as_str().unwrap());
        assert_eq!(call!(c, "RESTORE", key, "0", payload), ok(), "{key}");
        assert_cuckoo(&mut c, &key, &key, &spec);
        assert_eq!(
            call!(c, "DUMP", key).bytes(),
            as_dumped_here(&mut c, &payload),
            "{key}: DUMP gives back the payload"
        );
        assert_memory_usage(&mut c, &key, &spec);
    }
}

#[test]
fn loadchunk_of_every_recorded_chunk_list() {
    let server = Server::start();
    let mut c = server.client();
    for (key, spec) in keys_of("cf") {
        let mut chunks = recorded_scandump(&spec);
        // The header goes to iterator 1, whatever iterator the recording gave it.
        chunks[0].0 = 1;
        load_chunks(&mut c, "CF.LOADCHUNK", &key, &chunks);
        assert_cuckoo(&mut c, &key, &key, &spec);
        let payload = b64(spec["dump"].as_str().unwrap());
        let here = as_dumped_here(&mut c, &payload);
        assert_eq!(call!(c, "DUMP", key).bytes(), here, "{key}");
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
    for (key, spec) in keys_of("cf") {
        let name = format!("replay:{key}");
        replay(&mut c, &name, &key, &spec);
        assert_cuckoo(&mut c, &name, &key, &spec);
    }
}

#[test]
fn recorded_rdb_file_loads_with_every_answer() {
    let server = Server::with_rdb(&fixture_rdb());
    let mut c = server.client();
    let cuckoo = keys_of("cf");
    let bloom = keys_of("bf");
    assert_eq!(call!(c, "DBSIZE"), Int((cuckoo.len() + bloom.len()) as i64));
    for (key, spec) in &cuckoo {
        assert_eq!(call!(c, "TYPE", key), Simple("MBbloomCF".into()));
        assert_cuckoo(&mut c, key, key, spec);
        let payload = b64(spec["dump"].as_str().unwrap());
        let here = as_dumped_here(&mut c, &payload);
        assert_eq!(call!(c, "DUMP", key).bytes(), here, "{key}");
    }
    for (key, spec) in &bloom {
        assert_eq!(call!(c, "TYPE", key), Simple("MBbloom--".into()));
        assert_bloom(&mut c, key, spec);
        let payload = b64(spec["dump"].as_str().unwrap());
        let here = as_dumped_here(&mut c, &payload);
        assert_eq!(call!(c, "DUMP", key).bytes(), here, "{key}");
    }
}
