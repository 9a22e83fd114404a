//! Moving filters between servers: SCANDUMP chunks taken on one server load with LOADCHUNK into
//! another, byte for byte; an RDB file one server saved loads into another that reads its RDB
//! version (and is refused by one that does not); DUMP payloads RESTORE where the target reads
//! the source's RDB version. Each pass pairs the server under test with every other server
//! present (`all_servers`: Redis 7.0, Valkey 8.0, Redis 8.0, Valkey 8.1, Valkey 9.1 in `make
//! test`), both ways, so over the five passes every pair is tested.
pub mod common;

use common::*;

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

/// The server under test and every other server present, each with the RDB version it
/// writes; empty (and says so) where there is no other.
fn others() -> Vec<String> {
    let here = server_binary();
    let others: Vec<String> = all_servers().into_iter().filter(|b| *b != here).collect();
    if others.is_empty() {
        println!("skipped: no server besides {here} (scripts/install-deps.sh installs them)");
    }
    others
}

/// Both directions between the server under test and each other one.
fn ordered_pairs() -> Vec<(String, String)> {
    let here = server_binary();
    others()
        .into_iter()
        .flat_map(|other| [(here.clone(), other.clone()), (other, here.clone())])
        .collect()
}

/// The RDB version a server writes, as a number.
fn rdb_of(c: &mut Client) -> u16 {
    u16::from_le_bytes(rdb_version(c))
}

#[test]
fn scandump_chunks_move_between_every_pair_of_servers() {
    for (source, target) in ordered_pairs() {
        let a = Server::build_on(&source, &[], &[]);
        let b = Server::build_on(&target, &[], &[]);
        let (mut from, mut to) = (a.client(), b.client());
        let (s, t) = (server_info(&mut from), server_info(&mut to));
        for (key, family) in build(&mut from) {
            copy_by_chunks(&mut from, &mut to, key, family);
            assert_eq!(
                answers(&mut to, key, family),
                answers(&mut from, key, family),
                "{s} -> {t}: {key}"
            );
            // The module's bytes are the same; only the server's trailer may differ.
            let here = call!(to, "DUMP", key).bytes();
            let there = call!(from, "DUMP", key).bytes();
            assert_eq!(as_dumped_here(&mut to, &there), here, "{s} -> {t}: {key}");
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
                answers(&mut from, key, family),
                "{s} -> {t}: {key}"
            );
        }
        println!("SCANDUMP/LOADCHUNK {s} -> {t}: 4 filters, same answers and chunks");
    }
}

/// An RDB file saved by the server under test loads into every other server that reads its
/// RDB version, and one saved by each other server loads here where this server reads it; a
/// server refuses a file of an RDB version it does not read (`reads_rdb_version`: Redis 8
/// writes 12, which Valkey 8 and 9 and Redis 7.0 refuse; Valkey 8 writes 11, which Redis 7.0
/// refuses; Valkey 9 writes 80, which only Valkey 9 reads).
#[test]
fn rdb_files_load_between_every_pair_that_reads_the_version() {
    for (source, target) in ordered_pairs() {
        let saver = Server::build_on(&source, &[], &[]);
        let mut from = saver.client();
        let keys = build(&mut from);
        assert_eq!(call!(from, "SAVE"), ok());
        let s = server_info(&mut from);
        let file_rdb = rdb_of(&mut from);
        let rdb = saver.dir.join("dump.rdb");
        let probe = Server::build_on(&target, &[], &[]);
        let target_rdb = rdb_of(&mut probe.client());
        drop(probe);
        if !reads_rdb_version(target_rdb, file_rdb) {
            let log = refused_rdb_log(&target, &rdb);
            // Valkey 9's files start `VALKEY` where earlier ones start `REDIS`: Redis does not
            // get as far as the version (Valkey 8.1 does).
            let version = format!("Can't handle RDB format version {file_rdb}");
            let signature = file_rdb >= 80 && log.contains("Wrong signature trying to load DB");
            assert!(
                log.contains(&version) || signature,
                "{s} -> {target}: {log}"
            );
            println!(
                "RDB {s} (version {file_rdb}) -> {target} (reads up to {target_rdb}): refused"
            );
            continue;
        }
        let loader = Server::with_rdb_on(&target, &rdb);
        let mut to = loader.client();
        let t = server_info(&mut to);
        assert_eq!(call!(to, "DBSIZE"), Int(keys.len() as i64), "{s} -> {t}");
        for (key, family) in keys {
            assert_eq!(
                answers(&mut to, key, family),
                answers(&mut from, key, family),
                "{s} -> {t}: {key}"
            );
            let family_dump = format!("{family}.SCANDUMP");
            assert_eq!(
                scandump(&mut to, &family_dump, key),
                scandump(&mut from, &family_dump, key),
                "{s} -> {t}: {key}"
            );
        }
        println!("RDB {s} (version {file_rdb}) -> {t}: 4 filters, same answers and chunks");
    }
}

#[test]
fn dump_payloads_restore_where_the_rdb_version_is_readable() {
    let here = server_binary();
    for other in others() {
        let a = Server::build_on(&here, &[], &[]);
        let b = Server::build_on(&other, &[], &[]);
        let (mut h, mut o) = (a.client(), b.client());
        let keys = build(&mut h);
        build(&mut o);
        let (here_rdb, other_rdb) = (rdb_version(&mut h), rdb_version(&mut o));
        for (key, family) in keys {
            restore_across(&mut h, &mut o, here_rdb, other_rdb, key, family);
            restore_across(&mut o, &mut h, other_rdb, here_rdb, key, family);
        }
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
    if reads_rdb_version(u16::from_le_bytes(to_rdb), u16::from_le_bytes(from_rdb)) {
        assert_eq!(reply, ok(), "{key}");
        assert_eq!(
            answers(to, &copy, family),
            answers(from, key, family),
            "{key}"
        );
    } else {
        // An RDB version the target does not read: the server refuses it before the module
        // sees it; SCANDUMP/LOADCHUNK is the way across.
        assert!(
            matches!(&reply, Error(e) if e.starts_with("ERR DUMP payload version")),
            "{key}: {reply:?}"
        );
    }
}
