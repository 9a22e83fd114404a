//! valkey-bloom's dialect on bloomrs: new filters of its kind (`bf.bf-valkey-bloom`), its
//! `BF.INSERT` options and error texts, its setting names, its RESP3 reply types, and the
//! memory limits on its values.
pub mod common;

use common::*;

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
    assert_eq!(&header[..8], b"bloomrsL");
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
    let loads = valkey_loads();
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
        (
            &["CONFIG", "SET", "bf.bloom-tightening-ratio", "0.25"],
            ok(),
        ),
        (&["BF.ADD", "k", "a"], Int(1)),
        (&["BF.INFO", "k", "TIGHTENING"], bulk("0.25")),
        (&["BF.INFO", "k", "CAPACITY"], Int(1000)),
        (&["BF.INFO", "k", "EXPANSION"], Int(4)),
    ];
    assert_replies(&mut c, cases);
    let get = |c: &mut Client, name: &str| c.call(&["CONFIG", "GET", name]).array()[1].clone();
    assert_eq!(get(&mut c, "bf.bf-initial-size"), bulk("1000"));
    assert_eq!(get(&mut c, "bf.bf-expansion-factor"), bulk("4"));
    assert_eq!(get(&mut c, "bf.max-filter-bytes"), bulk("1048576"));
    assert_eq!(get(&mut c, "bf.bloom-tightening-ratio"), bulk("0.25"));
    let refused = c.call(&["CONFIG", "SET", "bf.bloom-tightening-ratio", "1"]);
    assert!(matches!(refused, Error(_)), "{refused:?}");
    let refused = c.call(&["CONFIG", "SET", "bf.bloom-expansion", "11"]);
    assert!(matches!(refused, Error(_)), "{refused:?}");
    assert_eq!(get(&mut c, "bf.bf-expansion-factor"), bulk("4"));
}

#[test]
fn resp3_answers_take_valkey_blooms_types() {
    let s = Server::start();
    let mut c = s.client();
    c.resp3();
    let load = valkey_loads().remove(0);
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

/// `CONFIG SET name value` refused with a reason that holds `reason`.
fn assert_config_refused(c: &mut Client, name: &str, value: &str, reason: &str) {
    let refused = c.call(&["CONFIG", "SET", name, value]);
    assert!(
        matches!(&refused, Error(text) if text.contains(reason)),
        "{name} {value}: {refused:?}"
    );
}

#[test]
fn bloom_fp_rate_is_another_name_of_the_error_rate() {
    let s = Server::build(&["ERROR_RATE", "0.03"], &[]);
    let mut c = s.client();
    let get = |c: &mut Client, name: &str| c.call(&["CONFIG", "GET", name]).array()[1].clone();
    // The module argument is what both names show.
    assert_eq!(get(&mut c, "bf.bloom-fp-rate"), bulk("0.03"));
    let cases: &[(&[&str], Reply)] = &[
        (&["CONFIG", "SET", "bf.bloom-fp-rate", "0.25"], ok()),
        (&["CONFIG", "SET", "bf.bf-valkey-bloom", "yes"], ok()),
        (&["BF.ADD", "k", "a"], Int(1)),
        (&["BF.INFO", "k", "ERROR"], bulk("0.25")),
    ];
    assert_replies(&mut c, cases);
    assert_eq!(get(&mut c, "bf.bf-error-rate"), bulk("0.25"));
    assert_eq!(c.call(&["CONFIG", "SET", "bf.bf-error-rate", "0.02"]), ok());
    assert_eq!(get(&mut c, "bf.bloom-fp-rate"), bulk("0.02"));
    // valkey-bloom's refusals; a refused value changes nothing.
    let range = "ERR (0 < error rate range < 1)";
    for (value, reason) in [
        ("1", range),
        ("0", range),
        ("-0.5", range),
        ("abc", "Invalid floating-point value"),
        ("", "Invalid floating-point value"),
    ] {
        assert_config_refused(&mut c, "bf.bloom-fp-rate", value, reason);
    }
    assert_eq!(get(&mut c, "bf.bloom-fp-rate"), bulk("0.02"));
    assert_eq!(get(&mut c, "bf.bf-error-rate"), bulk("0.02"));
}

#[test]
fn valkey_blooms_fp_rate_and_defrag_settings_are_taken_at_load() {
    let config = [
        "--bf.bloom-fp-rate",
        "0.05",
        "--bf.bloom-defrag-enabled",
        "no",
    ];
    let s = Server::build(&[], &config);
    let mut c = s.client();
    let get = |c: &mut Client, name: &str| c.call(&["CONFIG", "GET", name]).array()[1].clone();
    assert_eq!(get(&mut c, "bf.bloom-fp-rate"), bulk("0.05"));
    assert_eq!(get(&mut c, "bf.bf-error-rate"), bulk("0.05"));
    assert_eq!(get(&mut c, "bf.bloom-defrag-enabled"), bulk("no"));
    assert_eq!(
        c.call(&["CONFIG", "SET", "bf.bloom-defrag-enabled", "yes"]),
        ok()
    );
    assert_eq!(get(&mut c, "bf.bloom-defrag-enabled"), bulk("yes"));
    assert_config_refused(&mut c, "bf.bloom-defrag-enabled", "maybe", "");
    assert_eq!(get(&mut c, "bf.bloom-defrag-enabled"), bulk("yes"));
    // Where only our name is given, the alias's load-time default leaves it as set.
    let s = Server::build(&[], &["--bf.bf-error-rate", "0.02"]);
    let mut c = s.client();
    assert_eq!(get(&mut c, "bf.bloom-fp-rate"), bulk("0.02"));
    assert_eq!(get(&mut c, "bf.bloom-defrag-enabled"), bulk("yes"));
    assert_eq!(
        c.call(&["CONFIG", "SET", "bf.bf-valkey-bloom", "yes"]),
        ok()
    );
    assert_eq!(c.call(&["BF.ADD", "k", "a"]), Int(1));
    assert_eq!(c.call(&["BF.INFO", "k", "ERROR"]), bulk("0.02"));
}

#[test]
fn valkey_blooms_settings_are_taken_as_module_arguments() {
    // valkey-bloom takes its settings as module arguments too (`loadmodule ... bloom-capacity
    // 1000`); RedisBloom's arguments may stand beside them.
    let args = [
        "INITIAL_SIZE",
        "500",
        "bloom-fp-rate",
        "0.25",
        "BLOOM-EXPANSION",
        "4",
        "bloom-tightening-ratio",
        "0.125",
        "bloom-use-random-seed",
        "no",
        "bloom-defrag-enabled",
        "no",
    ];
    let s = Server::build(&args, &[]);
    let mut c = s.client();
    let get = |c: &mut Client, name: &str| c.call(&["CONFIG", "GET", name]).array()[1].clone();
    let expected = [
        ("bf.bf-initial-size", "500"),
        ("bf.bloom-capacity", "500"),
        ("bf.bloom-fp-rate", "0.25"),
        ("bf.bf-error-rate", "0.25"),
        ("bf.bf-expansion-factor", "4"),
        ("bf.bloom-tightening-ratio", "0.125"),
        ("bf.bloom-use-random-seed", "no"),
        ("bf.bloom-defrag-enabled", "no"),
    ];
    for (name, value) in expected {
        assert_eq!(get(&mut c, name), bulk(value), "{name}");
    }
    // A value valkey-bloom refuses stops the load, with the reason in the log.
    for (args, reason) in [
        (["bloom-fp-rate", "2"], "ERR (0 < error rate range < 1)"),
        (
            ["bloom-expansion", "11"],
            "argument must be between 1 and 10",
        ),
        (
            ["bloom-defrag-enabled", "maybe"],
            "argument must be 'yes' or 'no'",
        ),
    ] {
        let log = failed_start_log(&args);
        assert!(log.contains(reason), "{args:?}: {log}");
    }
}
