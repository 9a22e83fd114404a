//! Compatibility with values RedisBloom itself wrote: its DUMP payloads RESTORE, its SCANDUMP
//! chunks LOADCHUNK, and replaying its builds reproduces its replies and chunks byte for byte.
pub mod common;

use common::*;
use serde_json::Value;

fn bloom_fixtures() -> Vec<(String, Value)> {
    let root = fixtures();
    root["keys"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, v)| v["type"] == "bf")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn expected_info(fixture: &Value) -> Reply {
    let mut fields = Vec::new();
    for pair in fixture["info"].as_array().unwrap() {
        fields.push(Simple(pair[0].as_str().unwrap().to_string()));
        fields.push(match &pair[1] {
            Value::Null => Nil,
            v => Int(v.as_i64().unwrap()),
        });
    }
    Array(fields)
}

fn answers(c: &mut Client, key: &str, items: impl Iterator<Item = String>) -> String {
    let mut args = vec!["BF.MEXISTS".to_string(), key.to_string()];
    args.extend(items);
    c.call(&args)
        .array()
        .iter()
        .map(|r| if *r == Int(1) { '1' } else { '0' })
        .collect()
}

/// The key answers exactly as RedisBloom's recorded it.
fn check_key(c: &mut Client, key: &str, fixture: &Value) {
    let added = fixture["added"].as_u64().unwrap();
    assert_eq!(call!(c, "BF.INFO", key), expected_info(fixture), "{key}");
    assert_eq!(
        answers(c, key, (0..added).map(|i| format!("{key}/{i}"))),
        fixture["present_answers"].as_str().unwrap(),
        "{key}"
    );
    assert_eq!(
        answers(c, key, (0..20_000).map(|i| format!("{key}/probe/{i}"))),
        fixture["probe_answers"].as_str().unwrap(),
        "{key}"
    );
}

fn recorded_chunks(fixture: &Value) -> Vec<(i64, Vec<u8>)> {
    fixture["scandump"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c[0].as_i64().unwrap(), b64(c[1].as_str().unwrap())))
        .collect()
}

#[test]
fn restore_of_redisbloom_dump_payloads() {
    let s = Server::start();
    let mut c = s.client();
    for (key, fixture) in bloom_fixtures() {
        let payload = b64(fixture["dump"].as_str().unwrap());
        assert_eq!(
            call!(c, "RESTORE", key.as_str(), "0", payload),
            ok(),
            "{key}"
        );
        check_key(&mut c, &key, &fixture);
        assert_eq!(
            scandump(&mut c, "BF.SCANDUMP", &key),
            recorded_chunks(&fixture),
            "{key}"
        );
        assert_memory_usage(&mut c, &key, &fixture);
    }
}

#[test]
fn loadchunk_of_redisbloom_chunks() {
    let s = Server::start();
    let mut c = s.client();
    for (key, fixture) in bloom_fixtures() {
        load_chunks(&mut c, "BF.LOADCHUNK", &key, &recorded_chunks(&fixture));
        check_key(&mut c, &key, &fixture);
    }
}

#[test]
fn replaying_redisbloom_builds() {
    let s = Server::start();
    let mut c = s.client();
    for (key, fixture) in bloom_fixtures() {
        if let Some(create) = fixture["create"].as_array() {
            let args: Vec<&str> = create.iter().map(|a| a.as_str().unwrap()).collect();
            let reply = c.call(&args);
            assert!(reply == ok() || reply == ints(&[1]), "{key}: {reply:?}");
        }
        let added = fixture["added"].as_u64().unwrap();
        let command = fixture["add"].as_str().unwrap();
        let mut replies = Vec::new();
        let items: Vec<String> = (0..added).map(|i| format!("{key}/{i}")).collect();
        for batch in items.chunks(1000) {
            let mut args = vec![command.to_string(), key.clone()];
            args.extend(batch.iter().cloned());
            replies.extend(c.call(&args).array().into_iter().map(|r| r.int()));
        }
        let recorded: Vec<i64> = fixture["add_replies"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        assert_eq!(replies, recorded, "{key}");
        check_key(&mut c, &key, &fixture);
        assert_eq!(
            scandump(&mut c, "BF.SCANDUMP", &key),
            recorded_chunks(&fixture),
            "{key}"
        );
        let recorded = b64(fixture["dump"].as_str().unwrap());
        assert_eq!(
            call!(c, "DUMP", key.as_str()).bytes(),
            as_dumped_here(&mut c, &recorded),
            "{key}"
        );
    }
}
