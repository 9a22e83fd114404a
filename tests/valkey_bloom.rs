//! Values valkey-bloom 1.0.1 wrote (`tests/fixtures/valkey-bloom/`): loaded from its RDB file
//! and from its AOF's `BF.LOAD` commands, they answer every probe, `BF.CARD` and `BF.INFO` as
//! valkey-bloom did, take the same 1,000 further adds with the same replies, and are written
//! back in its encodings.
pub mod common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/valkey-bloom")
        .join(name)
}

fn answers() -> Vec<Value> {
    let text = std::fs::read_to_string(fixture("answers.json")).unwrap();
    let all: Value = serde_json::from_str(&text).unwrap();
    all["keys"].as_array().unwrap().clone()
}

/// The `BF.LOAD key blob` commands valkey-bloom's AOF rewrite wrote.
fn fixture_loads() -> Vec<Vec<Vec<u8>>> {
    let base = std::fs::read(fixture("appendonlydir/appendonly.aof.2.base.aof")).unwrap();
    parse_aof(&base)
        .into_iter()
        .filter(|command| command[0] == b"BF.LOAD")
        .collect()
}

fn item(spec: &Value, n: u64) -> Vec<u8> {
    let prefix = spec["items"]["prefix"].as_str().unwrap();
    let mut out = format!("{prefix}{n}").into_bytes();
    if spec["items"]["gen"] == "binary" {
        if n == 0 {
            return Vec::new();
        }
        out.extend_from_slice(&[0, 0xff, (n % 256) as u8]);
    }
    out
}

fn probes(spec: &Value) -> Vec<Vec<u8>> {
    let p = &spec["probes"];
    let step = p["pos_step"].as_u64().unwrap();
    let prefix = spec["items"]["prefix"].as_str().unwrap();
    let mut out: Vec<Vec<u8>> = (0..p["pos_count"].as_u64().unwrap())
        .map(|i| item(spec, i * step))
        .collect();
    out.extend(
        (0..p["neg_count"].as_u64().unwrap()).map(|j| format!("{prefix}neg:{j}").into_bytes()),
    );
    out
}

/// `BF.MEXISTS` of `items` as a string of 0 and 1, and `BF.EXISTS` of the first ones agreeing.
fn exists_bits(c: &mut Client, key: &str, items: &[Vec<u8>]) -> String {
    let mut bits = String::new();
    for batch in items.chunks(500) {
        let mut args = vec![b"BF.MEXISTS".to_vec(), key.as_bytes().to_vec()];
        args.extend(batch.iter().cloned());
        for reply in c.call(&args).array() {
            bits.push(if reply == Int(1) { '1' } else { '0' });
        }
    }
    for (i, probe) in items.iter().take(20).enumerate() {
        let one = c.call(&[b"BF.EXISTS".as_slice(), key.as_bytes(), probe]);
        assert_eq!(
            one,
            Int(i64::from(&bits[i..=i] == "1")),
            "{key} BF.EXISTS {i}"
        );
    }
    bits
}

/// The recorded `BF.INFO` as the reply valkey-bloom gives (RESP2): `Size` left out unless
/// `size` is true.
fn assert_info(c: &mut Client, key: &str, recorded: &Value, size: bool) {
    let reply = c.call(&["BF.INFO", key]).array();
    // valkey-bloom's order (the recorded object's keys come sorted).
    let order = [
        "Capacity",
        "Size",
        "Number of filters",
        "Number of items inserted",
        "Error rate",
        "Expansion rate",
        "Tightening ratio",
        "Max scaled capacity",
    ];
    let fields: Vec<(&str, &Value)> = order
        .iter()
        .filter_map(|name| Some((*name, recorded.get(*name)?)))
        .collect();
    assert_eq!(fields.len(), recorded.as_object().unwrap().len(), "{key}");
    assert_eq!(reply.len(), fields.len() * 2, "{key}: {reply:?}");
    for (pair, (name, value)) in reply.chunks(2).zip(fields) {
        assert_eq!(pair[0], Simple(name.to_string()), "{key}");
        let expected = match value {
            Value::Null => Nil,
            Value::String(text) => bulk(text),
            Value::Number(n) => Int(n.as_i64().unwrap()),
            other => panic!("{other:?}"),
        };
        match (&pair[1], &expected) {
            // Redis 7.0 writes doubles with 17 digits, Valkey 8 the shortest form: the same
            // double either way.
            (Bulk(got), Bulk(recorded)) => {
                let number =
                    |bytes: &[u8]| -> f64 { std::str::from_utf8(bytes).unwrap().parse().unwrap() };
                assert_eq!(number(got), number(recorded), "{key} {name}");
            }
            _ if name == "Size" && !size => {}
            _ => assert_eq!(pair[1], expected, "{key} {name}"),
        }
    }
    let capacity = recorded["Capacity"].as_i64().unwrap();
    assert_eq!(
        c.call(&["BF.INFO", key, "capacity"]),
        Int(capacity),
        "{key}"
    );
    let items = recorded["Number of items inserted"].as_i64().unwrap();
    assert_eq!(c.call(&["BF.INFO", key, "ITEMS"]), Int(items), "{key}");
    let rate: f64 = recorded["Error rate"].as_str().unwrap().parse().unwrap();
    let got = c.call(&["BF.INFO", key, "ERROR"]).text();
    assert_eq!(got.parse::<f64>().unwrap(), rate, "{key}");
    assert_eq!(
        c.call(&["BF.INFO", key, "NOSUCHFIELD"]),
        err("ERR invalid information value"),
        "{key}"
    );
}

/// Every recorded answer of every key, then the 1,000 further adds and the answers after them.
fn assert_answers_as_valkey_bloom(c: &mut Client, size: bool) {
    for spec in answers() {
        let key = spec["key"].as_str().unwrap();
        let probes = probes(&spec);
        assert_eq!(
            exists_bits(c, key, &probes),
            spec["exists_bits"].as_str().unwrap(),
            "{key}"
        );
        assert_eq!(
            c.call(&["BF.CARD", key]),
            Int(spec["card"].as_i64().unwrap()),
            "{key}"
        );
        assert_info(c, key, &spec["info"], size);
        let prefix = spec["items"]["prefix"].as_str().unwrap();
        let extra: Vec<Vec<u8>> = (0..1000)
            .map(|j| format!("{prefix}x:{j}").into_bytes())
            .collect();
        let errors: Vec<String> = spec["extra"]["add_errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e.as_str().unwrap().trim_start_matches("E:").to_string())
            .collect();
        let mut codes = String::new();
        for x in &extra {
            match c.call(&[b"BF.ADD".as_slice(), key.as_bytes(), x]) {
                Int(1) => codes.push('1'),
                Int(0) => codes.push('0'),
                Error(text) => {
                    assert!(errors.contains(&text), "{key}: {text}");
                    codes.push('E');
                }
                other => panic!("{key}: {other:?}"),
            }
        }
        assert_eq!(codes, spec["extra"]["add_codes"].as_str().unwrap(), "{key}");
        let post = &spec["post"];
        assert_eq!(
            exists_bits(c, key, &probes),
            post["exists_bits"].as_str().unwrap(),
            "{key}"
        );
        let extra_bits = post["extra_exists_bits"].as_str().unwrap();
        assert_eq!(exists_bits(c, key, &extra), extra_bits, "{key}");
        assert_eq!(
            c.call(&["BF.CARD", key]),
            Int(post["card"].as_i64().unwrap()),
            "{key}"
        );
        assert_info(c, key, &post["info"], size);
    }
}

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
    let s = Server::with_rdb(&fixture("dump.rdb"));
    let mut c = s.client();
    assert_eq!(c.call(&["DBSIZE"]), Int(answers().len() as i64));
    assert_eq!(c.call(&["TYPE", "user:1:seen"]), Simple("bloomfltr".into()));
    assert_answers_as_valkey_bloom(&mut c, true);
}

#[test]
fn the_aof_valkey_bloom_rewrote_loads_and_answers_as_it_did() {
    let s = Server::start();
    let mut c = s.client();
    for load in fixture_loads() {
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
    let loads = fixture_loads();
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
    let load = fixture_loads().remove(0);
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
    for load in fixture_loads() {
        assert_eq!(p.call(&load), ok());
        let key = &load[1];
        for j in 0..300 {
            let x = [key.as_slice(), format!(":more:{j}").as_bytes()].concat();
            p.call(&[b"BF.MADD".as_slice(), key, &x, b"same"]);
        }
    }
    wait_replica_synced(&mut p, &mut r);
    for load in fixture_loads() {
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
fn with_bf_valkey_bloom_new_filters_are_valkey_blooms() {
    let primary = Server::start();
    let replica = Server::replica_of(&primary, module_path(), &[]);
    let mut c = primary.client();
    let mut r = replica.client();
    wait_replica_linked(&mut r);
    assert_eq!(c.call(&["BF.ADD", "before", "foo"]), Int(1));
    assert_eq!(c.call(&["TYPE", "before"]), Simple("MBbloom--".into()));
    assert_eq!(
        c.call(&["CONFIG", "SET", "bf.bf-valkey-bloom", "yes"]),
        ok()
    );
    // A drawn seed: the replica gets the value itself.
    assert_eq!(
        c.call(&["BF.MADD", "drawn", "a", "b", "a"]),
        ints(&[1, 1, 0])
    );
    assert_eq!(c.call(&["TYPE", "drawn"]), Simple("bloomfltr".into()));
    assert_eq!(c.call(&["BF.INFO", "drawn", "TIGHTENING"]), bulk("0.5"));
    // valkey-bloom's fixed seed: the test vector (capacity 100, rate 0.01: 120 bytes, k 7,
    // `foo` sets bits 23 90 189 355 651 687 817).
    let fixed = ["CONFIG", "SET", "bf.bloom-use-random-seed", "no"];
    assert_eq!(c.call(&fixed), ok());
    assert_eq!(c.call(&["BF.RESERVE", "fixed", "0.01", "100"]), ok());
    assert_eq!(c.call(&["BF.ADD", "fixed", "foo"]), Int(1));
    let header = c.call(&["BF.SCANDUMP", "fixed", "0"]).array()[1].bytes();
    assert_eq!(&header[..8], b"bloomrsV");
    let bits = &header[8 + 38 + 45..];
    assert_eq!(
        bits.len(),
        120 + 16,
        "the bits, then the item and capacity counts"
    );
    let set: Vec<usize> = (0..960)
        .filter(|b| bits[b / 8] & (1 << (b % 8)) != 0)
        .collect();
    assert_eq!(set, [23, 90, 189, 355, 651, 687, 817]);
    assert_eq!(
        c.call(&["BF.RESERVE", "wide", "0.01", "100", "EXPANSION", "11"]),
        err("ERR could not create filter")
    );
    wait_replica_synced(&mut c, &mut r);
    for key in ["before", "drawn", "fixed"] {
        let digest = |c: &mut Client| c.call(&["DEBUG", "DIGEST-VALUE", key]);
        assert_eq!(digest(&mut c), digest(&mut r), "{key}");
        assert_eq!(c.call(&["TYPE", key]), r.call(&["TYPE", key]), "{key}");
    }
}

/// `hex:...` as bytes.
fn unhex(text: &str) -> Vec<u8> {
    let hex = text.strip_prefix("hex:").unwrap();
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
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
    for spec in answers() {
        let key = spec["key"].as_str().unwrap();
        if key != "ids:seeded" && key != "ids:fixed" {
            continue;
        }
        let command = spec["commands"][0].as_array().unwrap();
        let mut args: Vec<Vec<u8>> = Vec::new();
        for word in command.iter().map(|w| w.as_str().unwrap()) {
            if word.starts_with("<items") {
                let count = spec["items"]["count"].as_u64().unwrap();
                args.extend((0..count).map(|n| item(&spec, n)));
            } else if word.starts_with("hex:") {
                args.push(unhex(word));
            } else {
                args.push(word.as_bytes().to_vec());
            }
        }
        c.call(&args);
        assert_eq!(c.call(&["TYPE", key]), Simple("bloomfltr".into()), "{key}");
        let probes = probes(&spec);
        assert_eq!(
            exists_bits(&mut c, key, &probes),
            spec["exists_bits"].as_str().unwrap(),
            "{key}"
        );
        assert_eq!(
            c.call(&["BF.CARD", key]),
            Int(spec["card"].as_i64().unwrap()),
            "{key}"
        );
        assert_info(&mut c, key, &spec["info"], true);
    }
}

#[test]
fn valkey_blooms_insert_options_answer_in_its_words() {
    let s = Server::start();
    let mut c = s.client();
    let seed = "s".repeat(32);
    let cases: &[(&[&str], Reply)] = &[
        (
            &["BF.INSERT", "k", "SEED", "short", "ITEMS", "a"],
            err("ERR invalid seed"),
        ),
        (
            &["BF.INSERT", "k", "TIGHTENING", "1", "ITEMS", "a"],
            err("ERR (0 < tightening ratio range < 1)"),
        ),
        (
            &["BF.INSERT", "k", "TIGHTENING", "x", "ITEMS", "a"],
            err("ERR bad tightening ratio"),
        ),
        (
            &["BF.INSERT", "k", "SEED", &seed, "BOGUS", "ITEMS", "a"],
            err("ERR unknown argument received"),
        ),
        (
            &["BF.INSERT", "k", "VALIDATESCALETO", "10", "NONSCALING"],
            err("ERR cannot use NONSCALING and VALIDATESCALETO options together"),
        ),
        (
            &[
                "BF.INSERT",
                "k",
                "VALIDATESCALETO",
                "100000000000",
                "ITEMS",
                "a",
            ],
            err("ERR provided VALIDATESCALETO causes bloom object to exceed memory limit"),
        ),
        (
            &["BF.INSERT", "k", "SEED", &seed, "NOCREATE", "ITEMS", "a"],
            err("ERR not found"),
        ),
        (&["EXISTS", "k"], Int(0)),
        (
            &[
                "BF.INSERT",
                "k",
                "SEED",
                &seed,
                "VALIDATESCALETO",
                "1000",
                "ITEMS",
                "a",
                "a",
            ],
            ints(&[1, 0]),
        ),
        (&["TYPE", "k"], Simple("bloomfltr".into())),
        // Without its options, RedisBloom's grammar and filters.
        (
            &["BF.INSERT", "r", "CAPACITY", "0", "ITEMS", "a"],
            err("Bad argument received"),
        ),
        (&["BF.INSERT", "r", "ITEMS", "a"], ints(&[1])),
        (&["TYPE", "r"], Simple("MBbloom--".into())),
    ];
    assert_replies(&mut c, cases);
}

#[test]
fn the_memory_limits_hold_for_valkey_blooms_values() {
    let s = Server::start();
    let mut c = s.client();
    let loads = fixture_loads();
    let blob = |key: &str| {
        loads
            .iter()
            .find(|load| load[1] == key.as_bytes())
            .map(|load| load[2].clone())
            .unwrap()
    };
    assert_eq!(
        c.call(&[b"BF.LOAD".as_slice(), b"big", &blob("user:2:seen")]),
        ok()
    );
    let dump = c.call(&["DUMP", "big"]).bytes();
    assert_eq!(
        c.call(&["CONFIG", "SET", "bf.max-filter-bytes", "1024"]),
        ok()
    );
    // Loading a value past the limit: refused, nothing made.
    assert_eq!(
        c.call(&[b"BF.LOAD".as_slice(), b"k", &blob("user:2:seen")]),
        err("ERR operation exceeds bloom object memory limit")
    );
    let restored = c.call(&[b"RESTORE".as_slice(), b"k", b"0", &dump]);
    assert!(matches!(restored, Error(_)), "{restored:?}");
    assert_eq!(c.call(&["EXISTS", "k"]), Int(0));
    // A scale-out past the limit: refused in valkey-bloom's words, the value unchanged.
    assert_eq!(
        c.call(&[b"BF.LOAD".as_slice(), b"small", &blob("user:1:seen")]),
        ok()
    );
    let mut refused = None;
    for j in 0..2000 {
        let reply = c.call(&["BF.ADD", "small", &format!("more:{j}")]);
        if let Error(text) = reply {
            refused = Some(text);
            break;
        }
    }
    assert_eq!(
        refused.as_deref(),
        Some("ERR operation exceeds bloom object memory limit")
    );
    let card = c.call(&["BF.CARD", "small"]);
    assert!(matches!(
        c.call(&["BF.ADD", "small", "more:again"]),
        Error(_)
    ));
    assert_eq!(c.call(&["BF.CARD", "small"]), card);
    let size = c.call(&["BF.INFO", "small", "SIZE"]).int();
    assert!(size <= 1024, "{size}");
}

#[test]
fn valkey_blooms_setting_names_are_aliases_of_ours() {
    let s = Server::build(&[], &["--bf.bf-initial-size", "250"]);
    let mut c = s.client();
    // What the configuration file set stays: the alias's load-time default changes nothing.
    assert_eq!(
        c.call(&["CONFIG", "GET", "bf.bloom-capacity"]).array()[1],
        bulk("250")
    );
    let cases: &[(&[&str], Reply)] = &[
        (&["CONFIG", "SET", "bf.bloom-capacity", "1000"], ok()),
        (&["CONFIG", "SET", "bf.bloom-expansion", "4"], ok()),
        (
            &["CONFIG", "SET", "bf.bloom-memory-usage-limit", "1mb"],
            ok(),
        ),
        (&["CONFIG", "SET", "bf.bf-valkey-bloom", "yes"], ok()),
        (&["BF.ADD", "k", "a"], Int(1)),
        (&["BF.INFO", "k", "CAPACITY"], Int(1000)),
        (&["BF.INFO", "k", "EXPANSION"], Int(4)),
    ];
    assert_replies(&mut c, cases);
    let get = |c: &mut Client, name: &str| c.call(&["CONFIG", "GET", name]).array()[1].clone();
    assert_eq!(get(&mut c, "bf.bf-initial-size"), bulk("1000"));
    assert_eq!(get(&mut c, "bf.bf-expansion-factor"), bulk("4"));
    assert_eq!(get(&mut c, "bf.max-filter-bytes"), bulk("1048576"));
    let refused = c.call(&["CONFIG", "SET", "bf.bloom-expansion", "11"]);
    assert!(matches!(refused, Error(_)), "{refused:?}");
    assert_eq!(get(&mut c, "bf.bf-expansion-factor"), bulk("4"));
}

#[test]
fn resp3_answers_take_valkey_blooms_types() {
    let s = Server::start();
    let mut c = s.client();
    c.resp3();
    let load = fixture_loads().remove(0);
    assert_eq!(c.call(&[b"BF.LOAD".as_slice(), b"v", &load[2]]), ok());
    assert_eq!(c.call(&["BF.ADD", "r", "a"]), Bool(true));
    let cases: &[(&[&str], Reply)] = &[
        (&["BF.EXISTS", "v", "user:0"], Int(1)),
        (
            &["BF.MEXISTS", "v", "user:0", "user:neg:0"],
            Array(vec![Int(1), Int(0)]),
        ),
        (
            &["BF.MADD", "v", "new:1", "new:1"],
            Array(vec![Int(1), Int(0)]),
        ),
        (&["BF.ADD", "v", "new:2"], Int(1)),
        (&["BF.INFO", "v", "ERROR"], Double("0.01".into())),
        (&["BF.EXISTS", "r", "a"], Bool(true)),
    ];
    assert_replies(&mut c, cases);
    let info = c.call(&["BF.INFO", "v"]).array();
    assert_eq!(info[0], Simple("Capacity".into()));
    assert_eq!(info[8], Simple("Error rate".into()));
    assert_eq!(info[9], Double("0.01".into()));
}
