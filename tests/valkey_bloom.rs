//! Values valkey-bloom 1.0.1 wrote (`tests/fixtures/valkey-bloom/`): loaded from its RDB file
//! and from its AOF's `BF.LOAD` commands, they answer every probe, `BF.CARD` and `BF.INFO` as
//! valkey-bloom did, take the same 1,000 further adds with the same replies, and are written
//! back in its encodings; replaying its commands builds its filters.
pub mod common;

use common::*;

#[test]
fn the_rdb_valkey_bloom_saved_loads_and_answers_as_it_did() {
    let s = Server::start();
    let mut c = s.client();
    // Valkey 8.1 wrote RDB version 11: Redis 7.0 (version 10) reads no such file.
    if !reads_rdb_version(u16::from_le_bytes(rdb_version(&mut c)), 11) {
        eprintln!("skipped: this server does not read RDB version 11");
        return;
    }
    drop(c);
    let s = Server::with_rdb(&valkey_fixture("dump.rdb"));
    let mut c = s.client();
    assert_eq!(c.call(&["DBSIZE"]), Int(valkey_answers().len() as i64));
    assert_eq!(c.call(&["TYPE", "user:1:seen"]), Simple("bloomfltr".into()));
    assert_answers_as_valkey_bloom(&mut c, true);
}

#[test]
fn the_aof_valkey_bloom_rewrote_loads_and_answers_as_it_did() {
    let s = Server::start();
    let mut c = s.client();
    for load in valkey_loads() {
        assert_eq!(c.call(&load), ok());
    }
    // Its list of filters is exactly as long as it is after BF.LOAD, so `Size` may differ
    // from what valkey-bloom said after building the key by adds.
    assert_answers_as_valkey_bloom(&mut c, false);
}

#[test]
fn written_back_in_valkey_blooms_encodings() {
    let config = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no"];
    let mut s = Server::build(&[], &config);
    let mut c = s.client();
    let loads = valkey_loads();
    for load in &loads {
        assert_eq!(c.call(load), ok());
    }
    // AOF rewrite: one BF.LOAD per key, the very blob valkey-bloom wrote.
    rewrite_aof(&mut c);
    let written: Vec<Vec<Vec<u8>>> = aof_commands(&s.dir)
        .into_iter()
        .filter(|command| command[0] == b"BF.LOAD")
        .collect();
    let mut expected = loads.clone();
    expected.sort();
    let mut written_sorted = written.clone();
    written_sorted.sort();
    assert_eq!(written_sorted, expected);
    // DUMP and RESTORE, DEBUG RELOAD and a restart from the rewritten AOF keep every byte.
    let before: Vec<Reply> = loads
        .iter()
        .map(|load| c.call(&[b"DEBUG".as_slice(), b"DIGEST-VALUE", &load[1]]))
        .collect();
    for load in &loads {
        let dump = c.call(&[b"DUMP".as_slice(), &load[1]]).bytes();
        let copy = [b"copy:".as_slice(), &load[1]].concat();
        assert_eq!(c.call(&[b"RESTORE".as_slice(), &copy, b"0", &dump]), ok());
        let digest = c.call(&[b"DEBUG".as_slice(), b"DIGEST-VALUE", &copy]);
        assert_eq!(
            digest,
            c.call(&[b"DEBUG".as_slice(), b"DIGEST-VALUE", &load[1]])
        );
        assert_eq!(
            c.call(&[b"TYPE".as_slice(), &copy]),
            Simple("bloomfltr".into())
        );
    }
    assert_eq!(c.call(&["DEBUG", "RELOAD"]), ok());
    s.restart();
    let mut c = s.client();
    let after: Vec<Reply> = loads
        .iter()
        .map(|load| c.call(&[b"DEBUG".as_slice(), b"DIGEST-VALUE", &load[1]]))
        .collect();
    assert_eq!(after, before);
}

#[test]
fn bf_load_refuses_what_its_validator_refuses() {
    let s = Server::start();
    let mut c = s.client();
    let load = valkey_loads().remove(0);
    let blob = &load[2];
    let refused = |c: &mut Client, blob: &[u8]| c.call(&[b"BF.LOAD".as_slice(), b"k", blob]);
    assert_eq!(
        refused(&mut c, b""),
        err("ERR bloom object decoding failed")
    );
    assert_eq!(
        refused(&mut c, &blob[..blob.len() - 1]),
        err("ERR bloom object decoding failed")
    );
    let mut bad = blob.clone();
    bad[0] = 9;
    assert_eq!(
        refused(&mut c, &bad),
        err("ERR bloom object decoding failed. Unsupported version")
    );
    let mut bad = blob.clone();
    bad[1] = 11;
    assert_eq!(refused(&mut c, &bad), err("ERR bad expansion"));
    let mut bad = blob.clone();
    bad[5..13].copy_from_slice(&2.0f64.to_le_bytes());
    assert_eq!(refused(&mut c, &bad), err("ERR (0 < error rate range < 1)"));
    assert_eq!(c.call(&["EXISTS", "k"]), Int(0));
    assert_eq!(refused(&mut c, blob), ok());
    assert_eq!(
        refused(&mut c, blob),
        err("BUSYKEY Target key name already exists.")
    );
    assert_eq!(
        c.call(&["BF.LOAD", "k"]),
        err("ERR wrong number of arguments for 'bf.load' command")
    );
    c.call(&["SET", "s", "v"]);
    assert_eq!(
        c.call(&[b"BF.LOAD".as_slice(), b"s", blob]),
        err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
}

#[test]
fn a_replica_holds_the_same_bytes() {
    let primary = Server::start();
    let replica = Server::replica_of(&primary, module_path(), &[]);
    let mut p = primary.client();
    let mut r = replica.client();
    wait_replica_linked(&mut r);
    for load in valkey_loads() {
        assert_eq!(p.call(&load), ok());
        let key = &load[1];
        for j in 0..300 {
            let x = [key.as_slice(), format!(":more:{j}").as_bytes()].concat();
            p.call(&[b"BF.MADD".as_slice(), key, &x, b"same"]);
        }
    }
    wait_replica_synced(&mut p, &mut r);
    for load in valkey_loads() {
        let key = &load[1];
        let digest = |c: &mut Client| c.call(&[b"DEBUG".as_slice(), b"DIGEST-VALUE", key]);
        assert_eq!(digest(&mut p), digest(&mut r));
        assert_eq!(
            p.call(&[b"BF.INFO".as_slice(), key]),
            r.call(&[b"BF.INFO".as_slice(), key])
        );
    }
}

#[test]
fn replaying_valkey_blooms_commands_builds_the_same_filters() {
    let s = Server::start();
    let mut c = s.client();
    // The keys whose seed the commands decide: a SEED given to BF.INSERT (valkey-bloom's own
    // options, which make the filter valkey-bloom's), and valkey-bloom's fixed seed.
    assert_eq!(
        c.call(&["CONFIG", "SET", "bf.bf-valkey-bloom", "yes"]),
        ok()
    );
    assert_eq!(
        c.call(&["CONFIG", "SET", "bf.bloom-use-random-seed", "no"]),
        ok()
    );
    for spec in valkey_answers() {
        let key = spec["key"].as_str().unwrap();
        if key != "ids:seeded" && key != "ids:fixed" {
            continue;
        }
        let command = spec["commands"][0].as_array().unwrap();
        let mut args: Vec<Vec<u8>> = Vec::new();
        for word in command.iter().map(|w| w.as_str().unwrap()) {
            if word.starts_with("<items") {
                let count = spec["items"]["count"].as_u64().unwrap();
                args.extend((0..count).map(|n| valkey_item(&spec, n)));
            } else if word.starts_with("hex:") {
                args.push(valkey_unhex(word));
            } else {
                args.push(word.as_bytes().to_vec());
            }
        }
        c.call(&args);
        assert_eq!(c.call(&["TYPE", key]), Simple("bloomfltr".into()), "{key}");
        let probes = valkey_probes(&spec);
        assert_eq!(
            valkey_exists_bits(&mut c, key, &probes),
            spec["exists_bits"].as_str().unwrap(),
            "{key}"
        );
        assert_eq!(
            c.call(&["BF.CARD", key]),
            Int(spec["card"].as_i64().unwrap()),
            "{key}"
        );
        assert_valkey_info(&mut c, key, &spec["info"], true);
    }
}

/// `million/`: two valkey-bloom objects of 1,000,000 items, non-scaling and scaled to two
/// filters, whose filters the `bloomfilter` 3.0.1 crate built (see the fixtures' README).
#[test]
fn million_item_filters_answer_every_probe_and_are_written_back() {
    let config = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no"];
    let mut s = Server::build(&[], &config);
    let mut c = s.client();
    let names = ["nonscaling", "scaling"];
    let mut blobs = Vec::new();
    for name in names {
        let blob = std::fs::read(valkey_fixture(&format!("million/{name}.load"))).unwrap();
        assert_eq!(
            c.call(&[b"BF.LOAD".as_slice(), name.as_bytes(), &blob]),
            ok()
        );
        assert_million_answers(&mut c, name, name);
        blobs.push(vec![b"BF.LOAD".to_vec(), name.as_bytes().to_vec(), blob]);
    }
    // Written back: the AOF rewrite's BF.LOADs are the same blobs; DUMP and RESTORE, and a
    // restart from the RDB, keep every byte.
    rewrite_aof(&mut c);
    let mut written: Vec<Vec<Vec<u8>>> = aof_commands(&s.dir)
        .into_iter()
        .filter(|command| command[0] == b"BF.LOAD")
        .collect();
    written.sort();
    assert_eq!(written, blobs);
    let digests: Vec<Reply> = names
        .iter()
        .map(|name| c.call(&["DEBUG", "DIGEST-VALUE", name]))
        .collect();
    for (name, digest) in names.iter().zip(&digests) {
        let dump = c.call(&["DUMP", name]).bytes();
        let copy = format!("restored:{name}");
        assert_eq!(
            c.call(&[b"RESTORE".as_slice(), copy.as_bytes(), b"0", &dump]),
            ok()
        );
        assert_eq!(&c.call(&["DEBUG", "DIGEST-VALUE", &copy]), digest);
        assert_million_answers(&mut c, &copy, name);
    }
    assert_eq!(c.call(&["SAVE"]), ok());
    s.config.extend(["--appendonly".into(), "no".into()]);
    s.restart();
    let mut c = s.client();
    for (name, digest) in names.iter().zip(&digests) {
        assert_eq!(&c.call(&["DEBUG", "DIGEST-VALUE", name]), digest);
        assert_million_answers(&mut c, name, name);
    }
}

/// `key` answers every probe, `BF.CARD` and `BF.INFO` as recorded for object `name`.
fn assert_million_answers(c: &mut Client, key: &str, name: &str) {
    let (probes, recorded) = million_probes(name);
    assert_eq!(valkey_exists_bits(c, key, &probes), recorded, "{key}");
    let card = million_figure(name, "card");
    let cases: &[(&[&str], Reply)] = &[
        (&["BF.CARD", key], Int(card)),
        (
            &["BF.INFO", key, "CAPACITY"],
            Int(million_figure(name, "capacity")),
        ),
        (&["BF.INFO", key, "ITEMS"], Int(card)),
        (
            &["BF.INFO", key, "FILTERS"],
            Int(million_figure(name, "filters")),
        ),
        (&["TYPE", key], Simple("bloomfltr".into())),
    ];
    assert_replies(c, cases);
}
