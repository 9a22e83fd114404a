//! Memory admission (deviation D13): with `maxmemory` set, no client command allocates a filter
//! (or grows one) past it — reservations, implicit creation, scale-out, LOADCHUNK headers,
//! RESTORE and COPY — and a refusal changes nothing. Loading at start-up and what a primary
//! sends are never refused on that ground.
//!
//! "Changes nothing" is measured as `common::admission` says.
pub mod common;

use common::*;

/// Keys that must survive every refusal unchanged: a string and a small filter of each type.
fn bystanders(c: &mut Client) -> Vec<Reply> {
    assert_eq!(call!(c, "SET", "other:string", "kept"), ok());
    assert_eq!(call!(c, "BF.ADD", "other:bf", "kept"), Int(1));
    assert_eq!(call!(c, "CF.ADD", "other:cf", "kept"), Int(1));
    bystander_state(c)
}

fn bystander_state(c: &mut Client) -> Vec<Reply> {
    vec![
        call!(c, "GET", "other:string"),
        call!(c, "BF.EXISTS", "other:bf", "kept"),
        call!(c, "CF.EXISTS", "other:cf", "kept"),
        call!(c, "DEBUG", "DIGEST-VALUE", "other:bf"),
        call!(c, "DEBUG", "DIGEST-VALUE", "other:cf"),
    ]
}

#[test]
fn reservations_and_implicit_creation_past_maxmemory_are_refused() {
    let server = server_with_maxmemory("24mb");
    let mut c = server.client();
    let kept = bystanders(&mut c);

    // About 27.6 MB and 40 MB: far under bf.max-filter-bytes (4 GiB), over maxmemory.
    let explicit: [&[&str]; 5] = [
        &["BF.RESERVE", "big", "0.01", "20000000"],
        &["CF.RESERVE", "big", "40000000"],
        &["BF.INSERT", "big", "CAPACITY", "20000000", "ITEMS", "a"],
        &["CF.INSERT", "big", "CAPACITY", "40000000", "ITEMS", "a"],
        &["CF.INSERTNX", "big", "CAPACITY", "40000000", "ITEMS", "a"],
    ];
    // The same sizes as the implicit defaults.
    let implicit: [&[&str]; 4] = [
        &["BF.ADD", "big", "a"],
        &["BF.MADD", "big", "a", "b"],
        &["CF.ADD", "big", "a"],
        &["CF.ADDNX", "big", "a"],
    ];
    for command in explicit {
        refused(&mut c, &bytes(command), D1, "big");
    }
    assert_eq!(
        call!(c, "CONFIG", "SET", "bf.bf-initial-size", "20000000"),
        ok()
    );
    assert_eq!(
        call!(c, "CONFIG", "SET", "bf.cf-initial-size", "40000000"),
        ok()
    );
    for command in implicit {
        refused(&mut c, &bytes(command), D1, "big");
    }

    // The limit is what is left, not a fixed size: a 13.8 MB filter fits once, not twice.
    assert_eq!(call!(c, "BF.RESERVE", "fits", "0.01", "10000000"), ok());
    refused(
        &mut c,
        &[b"BF.RESERVE", b"second", b"0.01", b"10000000"],
        D1,
        "second",
    );
    assert!(used_memory(&mut c) <= 24 << 20);

    // Without maxmemory only the cap applies.
    assert_eq!(call!(c, "CONFIG", "SET", "maxmemory", "0"), ok());
    assert_eq!(call!(c, "BF.RESERVE", "second", "0.01", "10000000"), ok());
    assert_eq!(call!(c, "CF.RESERVE", "big", "40000000"), ok());
    assert_eq!(bystander_state(&mut c), kept);
}

/// Adds items until the reply is an error; returns the error.
fn add_until_error(c: &mut Client, command: &str, key: &str) -> Reply {
    for i in 0..100_000 {
        let reply = c.call(&[command.to_string(), key.to_string(), format!("item{i}")]);
        if let Error(_) = reply {
            return reply;
        }
    }
    panic!("{key} never refused an item");
}

#[test]
fn scale_out_past_maxmemory_is_refused_with_the_adds_error() {
    let server = server_with_maxmemory("24mb");
    let mut c = server.client();
    let kept = bystanders(&mut c);

    // 1,000 items fit; the next link would hold 20,000,000 (about 31 MB).
    assert_eq!(
        call!(c, "BF.RESERVE", "bf", "0.01", "1000", "EXPANSION", "20000"),
        ok()
    );
    let before = used_memory(&mut c);
    let error = add_until_error(&mut c, "BF.ADD", "bf");
    assert_eq!(error, cannot_grow_for_maxmemory(25165824));
    assert_eq!(call!(c, "BF.INFO", "bf", "FILTERS"), ints(&[1]));
    assert_eq!(
        call!(c, "BF.MADD", "bf", "new1", "new2"),
        Array(vec![
            cannot_grow_for_maxmemory(25165824),
            cannot_grow_for_maxmemory(25165824)
        ])
    );
    assert_quiet(&mut c, before);

    // The next sub-filter would have 512 * 32768 buckets of 2 bytes (32 MiB).
    assert_eq!(
        call!(c, "CF.RESERVE", "cf", "1024", "EXPANSION", "32768"),
        ok()
    );
    let before = used_memory(&mut c);
    let error = add_until_error(&mut c, "CF.ADD", "cf");
    assert_eq!(error, cuckoo_too_large_for_maxmemory(25165824));
    let info = call!(c, "CF.INFO", "cf");
    assert!(
        format!("{info:?}").contains("Number of filters\"), Int(1)"),
        "{info:?}"
    );
    assert_quiet(&mut c, before);
    assert_eq!(bystander_state(&mut c), kept);

    // With room, the same adds scale out.
    assert_eq!(call!(c, "CONFIG", "SET", "maxmemory", "0"), ok());
    assert_eq!(call!(c, "BF.ADD", "bf", "new1"), Int(1));
    assert_eq!(call!(c, "BF.INFO", "bf", "FILTERS"), ints(&[2]));
    assert!(matches!(call!(c, "CF.ADD", "cf", "new1"), Int(1)));
}

/// A filter of about 27.6 MB (Bloom) or 32 MiB (cuckoo) made while maxmemory is off, its
/// LOADCHUNK header, and its DUMP payload; the key is deleted again.
fn big_filter_dumps(c: &mut Client, family: &str) -> (Vec<u8>, Vec<u8>) {
    assert_eq!(call!(c, "CONFIG", "SET", "maxmemory", "0"), ok());
    let key = format!("source:{family}");
    let created = if family == "BF" {
        call!(c, "BF.RESERVE", key.as_str(), "0.01", "20000000")
    } else {
        call!(c, "CF.RESERVE", key.as_str(), "33554432")
    };
    assert_eq!(created, ok());
    // An empty cuckoo filter has no SCANDUMP.
    call!(c, format!("{family}.ADD"), key.as_str(), "x");
    let header = scandump(c, &format!("{family}.SCANDUMP"), &key)[0]
        .1
        .clone();
    let dump = call!(c, "DUMP", key.as_str()).bytes();
    delete(c, &[&key]);
    assert_eq!(call!(c, "CONFIG", "SET", "maxmemory", "24mb"), ok());
    (header, dump)
}

#[test]
fn loadchunk_headers_and_restore_past_maxmemory_are_refused() {
    let server = server_with_maxmemory("24mb");
    let mut c = server.client();
    let kept = bystanders(&mut c);
    for family in ["BF", "CF"] {
        let (header, dump) = big_filter_dumps(&mut c, family);
        let loadchunk = format!("{family}.LOADCHUNK");
        refused(
            &mut c,
            &[loadchunk.as_bytes(), b"copy", b"1", &header],
            D1,
            "copy",
        );
        // A refused payload is Redis's reply for any payload the type does not load.
        refused(
            &mut c,
            &[b"RESTORE", b"copy", b"0", &dump],
            "ERR Bad data format",
            "copy",
        );
        // Both are accepted once there is room.
        assert_eq!(call!(c, "CONFIG", "SET", "maxmemory", "0"), ok());
        assert_eq!(
            c.call(&[loadchunk.as_bytes(), b"copy", b"1", &header]),
            ok()
        );
        assert_eq!(c.call(&[&b"RESTORE"[..], b"copy2", b"0", &dump]), ok());
        delete(&mut c, &["copy", "copy2"]);
        assert_eq!(call!(c, "CONFIG", "SET", "maxmemory", "24mb"), ok());
    }
    assert_eq!(bystander_state(&mut c), kept);
}

#[test]
fn copy_past_maxmemory_is_refused() {
    let server = server_with_maxmemory("24mb");
    let mut c = server.client();
    let kept = bystanders(&mut c);
    // 13.8 MB and 16 MiB: each fits once, not twice.
    assert_eq!(call!(c, "BF.RESERVE", "bf", "0.01", "10000000"), ok());
    assert_eq!(call!(c, "BF.ADD", "bf", "x"), Int(1));
    refused(
        &mut c,
        &[b"COPY", b"bf", b"bf:copy"],
        "ERR module key failed to copy",
        "bf:copy",
    );
    delete(&mut c, &["bf"]);
    assert_eq!(call!(c, "CF.RESERVE", "cf", "16777216"), ok());
    refused(
        &mut c,
        &[b"COPY", b"cf", b"cf:copy"],
        "ERR module key failed to copy",
        "cf:copy",
    );
    // Small filters still copy.
    assert_eq!(call!(c, "COPY", "other:bf", "small:copy"), Int(1));
    assert_eq!(
        call!(c, "DEBUG", "DIGEST-VALUE", "small:copy"),
        call!(c, "DEBUG", "DIGEST-VALUE", "other:bf")
    );
    assert_eq!(bystander_state(&mut c), kept);
    assert!(server.log().contains("COPY refused"));
}

fn digests(c: &mut Client, keys: &[&str]) -> Vec<Reply> {
    keys.iter()
        .map(|key| call!(c, "DEBUG", "DIGEST-VALUE", *key))
        .collect()
}

#[test]
fn a_replica_takes_what_its_primary_allocates() {
    let primary = Server::build(&[], &["--repl-diskless-sync-delay", "0"]);
    let mut p = primary.client();
    // Before the replica attaches: it gets this one in the full sync (an RDB load).
    assert_eq!(call!(p, "BF.RESERVE", "synced", "0.01", "10000000"), ok());
    assert_eq!(call!(p, "BF.ADD", "synced", "a"), Int(1));

    let replica = Server::replica_of(&primary, module_path(), &["--maxmemory", "8mb"]);
    let mut r = replica.client();
    wait_until("the replica link", || {
        call!(r, "INFO", "replication")
            .text()
            .contains("master_link_status:up")
    });

    // Through the replication stream: creation, implicit creation and scale-out.
    assert_eq!(call!(p, "CF.RESERVE", "cf", "16777216"), ok());
    assert_eq!(
        call!(
            p,
            "BF.INSERT",
            "inserted",
            "CAPACITY",
            "5000000",
            "ITEMS",
            "a"
        ),
        ints(&[1])
    );
    assert_eq!(
        call!(
            p,
            "BF.RESERVE",
            "grows",
            "0.01",
            "100",
            "EXPANSION",
            "50000"
        ),
        ok()
    );
    for i in 0..101 {
        call!(p, "BF.ADD", "grows", format!("item{i}"));
    }
    assert_eq!(call!(p, "BF.INFO", "grows", "FILTERS"), ints(&[2]));
    assert_eq!(call!(p, "WAIT", "1", "10000"), Int(1));
    let target = info_int(&mut p, "replication", "master_repl_offset");
    wait_until("the replica to catch up", || {
        info_int(&mut r, "replication", "slave_repl_offset") == target
    });

    let keys = ["synced", "cf", "inserted", "grows"];
    assert_eq!(digests(&mut r, &keys), digests(&mut p, &keys));
    for key in keys {
        assert_eq!(call!(r, "EXISTS", key), Int(1));
    }
    assert!(
        used_memory(&mut r) > 8 << 20,
        "the replica holds more than its maxmemory"
    );
}

#[test]
fn data_larger_than_maxmemory_loads_at_startup() {
    let mut server = Server::build(
        &[],
        &["--appendonly", "yes", "--aof-use-rdb-preamble", "no"],
    );
    let mut c = server.client();
    assert_eq!(call!(c, "BF.RESERVE", "bf", "0.01", "10000000"), ok());
    assert_eq!(call!(c, "CF.RESERVE", "cf", "16777216"), ok());
    assert_eq!(call!(c, "BF.ADD", "bf", "a"), Int(1));
    assert_eq!(call!(c, "CF.ADD", "cf", "a"), Int(1));
    let keys = ["bf", "cf"];
    let expected = digests(&mut c, &keys);
    // The AOF as commands (BF.RESERVE, CF.RESERVE, adds), and an RDB.
    assert_eq!(call!(c, "SAVE"), ok());
    server.config.extend(["--maxmemory".into(), "8mb".into()]);

    // From the AOF (loaded first when enabled).
    server.restart();
    let mut c = server.client();
    assert_eq!(digests(&mut c, &keys), expected);
    // From the AOF rewritten as LOADCHUNK commands.
    call!(c, "BGREWRITEAOF");
    wait_for_persistence(&mut c);
    assert!(aof_commands(&server.dir)
        .iter()
        .any(|command| command[0] == b"BF.LOADCHUNK"));
    server.restart();
    let mut c = server.client();
    assert_eq!(digests(&mut c, &keys), expected);
    // From the RDB.
    server.config.extend(["--appendonly".into(), "no".into()]);
    server.restart();
    let mut c = server.client();
    assert_eq!(digests(&mut c, &keys), expected);
    assert!(used_memory(&mut c) > 8 << 20);
    // DEBUG RELOAD is a load too.
    assert_eq!(call!(c, "DEBUG", "RELOAD"), ok());
    assert_eq!(digests(&mut c, &keys), expected);
}

#[test]
fn windowed_filters_ask_the_same_admission() {
    let server = server_with_maxmemory("24mb");
    let mut c = server.client();
    // One generation of 20,000,000 items (about 35 MB) does not fit: refused at creation,
    // although a windowed filter allocates its first generation only with its first add.
    let big = ["BF.RESERVE", "w", "0.01", "80000000", "WINDOW", "3600"];
    refused(&mut c, &bytes(&big), D1, "w");
    let implicit = [
        "BF.INSERT",
        "w",
        "CAPACITY",
        "80000000",
        "WINDOW",
        "3600",
        "ITEMS",
        "a",
    ];
    refused(&mut c, &bytes(&implicit), D1, "w");
    // A generation of 1,000 fits; scaling it to 20,000,000 does not.
    let small = call!(
        c,
        "BF.RESERVE",
        "w",
        "0.01",
        "4000",
        "EXPANSION",
        "20000",
        "WINDOW",
        "3600"
    );
    assert_eq!(small, ok());
    let error = add_until_error(&mut c, "BF.ADD", "w");
    assert_eq!(error, cannot_grow_for_maxmemory(25165824));
    assert!(used_memory(&mut c) <= 24 << 20);
    assert_eq!(call!(c, "CONFIG", "SET", "maxmemory", "0"), ok());
    assert_eq!(call!(c, "BF.ADD", "w", "new"), Int(1));
}

/// A promotion allocates the dense chain while the sparse form still exists: the chain must
/// fit what `maxmemory` leaves on its own. With a 16 MB sparse form and a 24 MB dense chain,
/// 16 MB of headroom refuses it (the build before counted the sparse form's bytes as room and
/// went 8 MB past `maxmemory`); 32 MB lets it through.
#[test]
fn a_promotion_fits_maxmemory_beside_the_sparse_form() {
    let server = Server::build(&[], &["--bf.bf-sparse-max-bytes", "64mb"]);
    let mut c = server.client();
    assert_eq!(call!(c, "BF.RESERVE", "s", "0.01", "20000000"), ok());
    assert_eq!(call!(c, "BF.ADD", "s", "x"), Int(1));
    assert_eq!(call!(c, "TYPE", "s"), Simple("bloomrsSP".into()));
    // The genuine value with a million hash pairs, strictly increasing, in place of its one.
    let hashes: Vec<u8> = (1..=1_000_000u64)
        .flat_map(|i| {
            let mut pair = (i << 40).to_le_bytes().to_vec();
            pair.extend_from_slice(&i.to_le_bytes());
            pair
        })
        .collect();
    let sparse_bytes = hashes.len() as i64;
    let payload = Payload::parse(&call!(c, "DUMP", "s").bytes())
        .with(4, RdbField::Buffer(hashes))
        .encode();
    assert_eq!(call!(c, "RESTORE", "big", "0", payload), ok());
    let dense_bytes = 24_000_000i64;
    let used = used_memory(&mut c);
    let tight = used + dense_bytes - sparse_bytes / 2;
    assert_eq!(
        call!(c, "CONFIG", "SET", "maxmemory", tight.to_string()),
        ok()
    );
    let before = used_memory(&mut c);
    assert_eq!(
        call!(c, "BF.PROMOTE", "big"),
        too_large_for_maxmemory(tight as u64)
    );
    assert!(used_memory(&mut c) - before <= NOISE);
    assert_eq!(call!(c, "TYPE", "big"), Simple("bloomrsSP".into()));
    let roomy = used + dense_bytes + sparse_bytes;
    assert_eq!(
        call!(c, "CONFIG", "SET", "maxmemory", roomy.to_string()),
        ok()
    );
    assert_eq!(call!(c, "BF.PROMOTE", "big"), Int(1));
    assert_eq!(call!(c, "TYPE", "big"), Simple("MBbloom--".into()));
    assert_eq!(call!(c, "CONFIG", "SET", "maxmemory", "0"), ok());
}
