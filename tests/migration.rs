//! Moving filters between servers: SCANDUMP chunks taken on Redis load with LOADCHUNK into
//! Valkey and back, byte for byte; an RDB file Redis saved loads into Valkey; DUMP payloads
//! RESTORE where the target server reads the source's RDB version. Starts one redis-server and
//! one valkey-server whichever server the suite runs on.
pub mod common;

use common::*;

const REDIS: &str = "redis-server";
const VALKEY: &str = "valkey-server";

/// Filters of every shape: scaling Bloom with several links, non-scaling, Cuckoo with several
/// sub-filters and deletions, bucket size 1.
fn build(c: &mut Client) -> Vec<(&'static str, &'static str)> {
    assert_eq!(
        call!(
            c,
            "BF.RESERVE",
            "bf:scaling",
            "0.01",
            "100",
            "EXPANSION",
            "2"
        ),
        ok()
    );
    assert_eq!(
        call!(c, "BF.RESERVE", "bf:fixed", "0.001", "2000", "NONSCALING"),
        ok()
    );
    assert_eq!(
        call!(c, "CF.RESERVE", "cf:grown", "200", "EXPANSION", "2"),
        ok()
    );
    assert_eq!(
        call!(
            c,
            "CF.RESERVE",
            "cf:b1",
            "1000",
            "BUCKETSIZE",
            "1",
            "MAXITERATIONS",
            "50"
        ),
        ok()
    );
    for batch in 0..10 {
        let items: Vec<String> = (0..100)
            .map(|i| format!("item:{}", batch * 100 + i))
            .collect();
        let mut args = vec!["BF.MADD".to_string(), "bf:scaling".to_string()];
        args.extend(items.iter().cloned());
        c.call(&args);
        args[1] = "bf:fixed".to_string();
        c.call(&args);
        for item in &items {
            call!(c, "CF.ADD", "cf:grown", item.as_str());
            call!(c, "CF.ADDNX", "cf:b1", item.as_str());
        }
    }
    for i in 0..150 {
        assert_eq!(call!(c, "CF.DEL", "cf:grown", format!("item:{i}")), Int(1));
    }
    vec![
        ("bf:scaling", "BF"),
        ("bf:fixed", "BF"),
        ("cf:grown", "CF"),
        ("cf:b1", "CF"),
    ]
}

/// What a key answers: its INFO and membership of added and never-added items.
fn answers(c: &mut Client, key: &str, family: &str) -> Vec<Reply> {
    let mut out = vec![call!(c, format!("{family}.INFO"), key)];
    let mut args = vec![format!("{family}.MEXISTS"), key.to_string()];
    args.extend((0..1000).map(|i| format!("item:{i}")));
    args.extend((0..5000).map(|i| format!("probe:{i}")));
    out.push(c.call(&args));
    if family == "CF" {
        for i in [0, 149, 150, 999] {
            out.push(call!(c, "CF.COUNT", key, format!("item:{i}")));
        }
    }
    out
}

fn copy_by_chunks(from: &mut Client, to: &mut Client, key: &str, family: &str) {
    let chunks = scandump(from, &format!("{family}.SCANDUMP"), key);
    assert!(chunks.len() > 1, "{key}: {} chunks", chunks.len());
    for (iter, bytes) in &chunks {
        let reply = call!(to, format!("{family}.LOADCHUNK"), key, *iter, bytes);
        assert_eq!(reply, ok(), "{key} chunk {iter}");
    }
    assert_eq!(
        scandump(to, &format!("{family}.SCANDUMP"), key),
        chunks,
        "{key}"
    );
}

fn both_installed() -> bool {
    let missing: Vec<&str> = [REDIS, VALKEY]
        .into_iter()
        .filter(|b| !installed(b))
        .collect();
    if !missing.is_empty() {
        println!("skipped: {missing:?} not installed (scripts/install-deps.sh installs both)");
    }
    missing.is_empty()
}

#[test]
fn scandump_chunks_move_between_redis_and_valkey() {
    if !both_installed() {
        return;
    }
    for (source, target) in [(REDIS, VALKEY), (VALKEY, REDIS)] {
        let a = Server::build_on(source, &[], &[]);
        let b = Server::build_on(target, &[], &[]);
        let (mut from, mut to) = (a.client(), b.client());
        for (key, family) in build(&mut from) {
            copy_by_chunks(&mut from, &mut to, key, family);
            assert_eq!(
                answers(&mut to, key, family),
                answers(&mut from, key, family),
                "{source} -> {target}: {key}"
            );
            // The module's bytes are the same; only the server's trailer may differ.
            let here = call!(to, "DUMP", key).bytes();
            let there = call!(from, "DUMP", key).bytes();
            assert_eq!(as_dumped_here(&mut to, &there), here, "{key}");
        }
        // And they keep working: more items, then the same answers on both.
        for c in [&mut from, &mut to] {
            for i in 0..50 {
                call!(c, "BF.ADD", "bf:scaling", format!("later:{i}"));
                call!(c, "CF.ADD", "cf:grown", format!("later:{i}"));
            }
        }
        for (key, family) in [("bf:scaling", "BF"), ("cf:grown", "CF")] {
            assert_eq!(
                answers(&mut to, key, family),
                answers(&mut from, key, family)
            );
        }
        let (s, t) = (server_info(&mut from), server_info(&mut to));
        println!("SCANDUMP/LOADCHUNK {s} -> {t}: 4 filters, same answers and chunks");
    }
}

#[test]
fn a_redis_rdb_file_loads_into_valkey() {
    if !both_installed() {
        return;
    }
    let redis = Server::build_on(REDIS, &[], &[]);
    let mut r = redis.client();
    let keys = build(&mut r);
    assert_eq!(call!(r, "SAVE"), ok());
    let valkey = Server::with_rdb_on(VALKEY, &redis.dir.join("dump.rdb"));
    let mut v = valkey.client();
    assert_eq!(call!(v, "DBSIZE"), Int(keys.len() as i64));
    for (key, family) in keys {
        assert_eq!(
            answers(&mut v, key, family),
            answers(&mut r, key, family),
            "{key}"
        );
        let family_dump = format!("{family}.SCANDUMP");
        assert_eq!(
            scandump(&mut v, &family_dump, key),
            scandump(&mut r, &family_dump, key)
        );
    }
}

#[test]
fn dump_payloads_restore_where_the_rdb_version_is_readable() {
    if !both_installed() {
        return;
    }
    let redis = Server::build_on(REDIS, &[], &[]);
    let valkey = Server::build_on(VALKEY, &[], &[]);
    let (mut r, mut v) = (redis.client(), valkey.client());
    let keys = build(&mut r);
    build(&mut v);
    let (redis_rdb, valkey_rdb) = (rdb_version(&mut r), rdb_version(&mut v));
    for (key, family) in keys {
        restore_across(&mut r, &mut v, redis_rdb, valkey_rdb, key, family);
        restore_across(&mut v, &mut r, valkey_rdb, redis_rdb, key, family);
    }
}

/// DUMP on `from`, RESTORE on `to`: accepted and answering the same where `to` reads the RDB
/// version `from` writes, refused by the server otherwise.
fn restore_across(
    from: &mut Client,
    to: &mut Client,
    from_rdb: [u8; 2],
    to_rdb: [u8; 2],
    key: &str,
    family: &str,
) {
    let payload = call!(from, "DUMP", key).bytes();
    let copy = format!("copy:{key}");
    let reply = call!(to, "RESTORE", copy.as_str(), "0", payload);
    if u16::from_le_bytes(from_rdb) <= u16::from_le_bytes(to_rdb) {
        assert_eq!(reply, ok(), "{key}");
        assert_eq!(
            answers(to, &copy, family),
            answers(from, key, family),
            "{key}"
        );
    } else {
        // A newer RDB version than the target writes: the server refuses it before the module
        // sees it; SCANDUMP/LOADCHUNK is the way down.
        assert!(
            matches!(&reply, Error(e) if e.starts_with("ERR DUMP payload version")),
            "{key}: {reply:?}"
        );
    }
}
