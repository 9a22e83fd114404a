//! Compatibility with values RedisBloom itself wrote: its DUMP payloads RESTORE, its SCANDUMP
//! chunks LOADCHUNK, and replaying its builds reproduces its replies and chunks byte for byte.
pub mod common;

use common::*;

#[test]
fn restore_of_redisbloom_dump_payloads() {
    let s = Server::start();
    let mut c = s.client();
    for (key, fixture) in fixture_keys("bf") {
        let payload = recorded_dump(&fixture);
        assert_eq!(
            call!(c, "RESTORE", key.as_str(), "0", payload),
            ok(),
            "{key}"
        );
        assert_recorded_answers(&mut c, "BF", &key, &key, &fixture);
        assert_memory_usage(&mut c, &key, &fixture);
    }
}

#[test]
fn loadchunk_of_redisbloom_chunks() {
    let s = Server::start();
    let mut c = s.client();
    for (key, fixture) in fixture_keys("bf") {
        load_chunks(&mut c, "BF.LOADCHUNK", &key, &recorded_chunks(&fixture));
        assert_recorded_answers(&mut c, "BF", &key, &key, &fixture);
    }
}

#[test]
fn replaying_redisbloom_builds() {
    let s = Server::start();
    let mut c = s.client();
    for (key, fixture) in fixture_keys("bf") {
        if let Some(create) = fixture["create"].as_array() {
            let args: Vec<&str> = create.iter().map(|a| a.as_str().unwrap()).collect();
            let reply = c.call(&args);
            assert!(reply == ok() || reply == ints(&[1]), "{key}: {reply:?}");
        }
        let command = fixture["add"].as_str().unwrap();
        let mut replies = Vec::new();
        let items = added_items(&key, &fixture);
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
        assert_recorded_answers(&mut c, "BF", &key, &key, &fixture);
        assert_dumps_as_recorded(&mut c, &key, &fixture);
    }
}
