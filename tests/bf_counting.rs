//! Counting Bloom filters (deviation D12): `COUNTING` on BF.RESERVE / BF.INSERT, BF.DEL and
//! BF.MDEL, the BF.* commands on them, and every persistence and propagation path of their
//! own module type (`bloomrsCT`).
pub mod common;

use common::*;

/// A counting filter's module type id: the name `bloomrsCT`, encoding version 1.
fn counting_type_id(c: &mut Client) -> u64 {
    let payload = Payload::parse(&call!(c, "DUMP", "id-probe").bytes());
    payload.module_id & !1023
}

#[test]
fn reserve_add_delete_story() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(
        call!(c, "BF.RESERVE", "cbf", "0.01", "100", "COUNTING"),
        ok()
    );
    assert_eq!(call!(c, "TYPE", "cbf"), Simple("bloomrsCT".into()));
    assert_eq!(
        call!(c, "BF.RESERVE", "cbf", "0.01", "100", "COUNTING"),
        err("ERR item exists")
    );
    // A multiset: the second add of an item says it may be present, and takes two deletes.
    assert_eq!(call!(c, "BF.ADD", "cbf", "a"), Int(1));
    assert_eq!(call!(c, "BF.ADD", "cbf", "a"), Int(0));
    assert_eq!(call!(c, "BF.MADD", "cbf", "b", "c"), ints(&[1, 1]));
    assert_eq!(call!(c, "BF.CARD", "cbf"), Int(4));
    assert_eq!(call!(c, "BF.DEL", "cbf", "a"), Int(1));
    assert_eq!(call!(c, "BF.EXISTS", "cbf", "a"), Int(1));
    assert_eq!(call!(c, "BF.MDEL", "cbf", "a", "b", "zz"), ints(&[1, 1, 0]));
    assert_eq!(
        call!(c, "BF.MEXISTS", "cbf", "a", "b", "c"),
        ints(&[0, 0, 1])
    );
    assert_eq!(call!(c, "BF.DEL", "cbf", "a"), Int(0));
    assert_eq!(call!(c, "BF.CARD", "cbf"), Int(1));
    let fields = [
        &BF_INFO_FIELDS[..],
        &["Counter width", "Saturated counters"],
    ]
    .concat();
    assert_eq!(
        call!(c, "BF.INFO", "cbf"),
        info_reply(&fields, &[100, 32 + 64 + 576, 1, 1, 2, 4, 0])
    );
    assert_eq!(call!(c, "BF.INFO", "cbf", "ITEMS"), ints(&[1]));
    assert_eq!(
        call!(c, "BF.DEBUG", "cbf"),
        Array(vec![
            bulk("size:1"),
            bulk(
                "bytes:576 bits:1152 hashes:8 hashwidth:64 capacity:100 size:1 ratio:0.005 \
                 counter_bits:4 saturated:0"
            ),
        ])
    );
    let mut r3 = s.client();
    r3.resp3();
    assert_eq!(call!(r3, "BF.DEL", "cbf", "c"), Bool(true));
    assert_eq!(call!(r3, "BF.DEL", "cbf", "c"), Bool(false));
}

#[test]
fn saturated_counters_stay() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(
        call!(c, "BF.RESERVE", "hot", "0.01", "100", "COUNTING"),
        ok()
    );
    for _ in 0..20 {
        call!(c, "BF.ADD", "hot", "x");
    }
    assert_eq!(call!(c, "BF.INFO", "hot").array()[13], Int(8));
    let digest = call!(c, "DEBUG", "DIGEST-VALUE", "hot");
    // Never decremented once saturated: nothing can be taken back, so every delete answers 0
    // and changes nothing; a false positive remains, never a false negative.
    for _ in 0..20 {
        assert_eq!(call!(c, "BF.DEL", "hot", "x"), Int(0));
    }
    assert_eq!(call!(c, "DEBUG", "DIGEST-VALUE", "hot"), digest);
    assert_eq!(call!(c, "BF.EXISTS", "hot", "x"), Int(1));
    assert_eq!(call!(c, "BF.CARD", "hot"), Int(20));
}

#[test]
fn errors_of_the_delete_commands() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(call!(c, "BF.ADD", "plain", "a"), Int(1));
    assert_eq!(call!(c, "SET", "str", "v"), ok());
    let not_counting =
        err("ERR not a counting filter: only filters created with COUNTING can delete items");
    assert_eq!(call!(c, "BF.DEL", "plain", "a"), not_counting);
    assert_eq!(call!(c, "BF.MDEL", "plain", "a", "b"), not_counting);
    assert_eq!(call!(c, "BF.EXISTS", "plain", "a"), Int(1));
    assert_eq!(call!(c, "BF.DEL", "missing", "a"), err("ERR not found"));
    assert_eq!(
        call!(c, "BF.INFO", "missing"),
        err("ERR not found"),
        "the same error as BF.INFO"
    );
    assert_eq!(call!(c, "BF.MDEL", "missing", "a"), err("ERR not found"));
    assert_eq!(
        call!(c, "BF.DEL", "str", "a"),
        err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
    for args in [
        vec!["BF.DEL", "plain"],
        vec!["BF.DEL", "plain", "a", "b"],
        vec!["BF.MDEL", "plain"],
    ] {
        let name = args[0].to_lowercase();
        assert_eq!(
            c.call(&args),
            err(&format!(
                "ERR wrong number of arguments for '{name}' command"
            ))
        );
    }
}

#[test]
fn insert_counting_and_creation_replicated_as_a_reservation() {
    let s = propagating_server();
    let mut c = s.client();
    assert_eq!(
        call!(c, "BF.INSERT", "ins", "COUNTING", "ITEMS", "a", "b"),
        ints(&[1, 1])
    );
    assert_eq!(call!(c, "TYPE", "ins"), Simple("bloomrsCT".into()));
    assert_eq!(
        call!(
            c,
            "BF.INSERT",
            "ns",
            "CAPACITY",
            "10",
            "NONSCALING",
            "COUNTING",
            "ITEMS",
            "x"
        ),
        ints(&[1])
    );
    assert_eq!(call!(c, "BF.DEL", "ins", "a"), Int(1));
    assert_eq!(call!(c, "BF.MDEL", "ins", "b", "never"), ints(&[1, 0]));
    // Without COUNTING, nothing changes: BF.ADD on a missing key makes a plain filter.
    assert_eq!(call!(c, "BF.ADD", "auto", "x"), Int(1));
    assert_eq!(call!(c, "TYPE", "auto"), Simple("MBbloom--".into()));
    let written = aof_written(&s, &mut c);
    assert_eq!(
        written,
        [
            vec![
                "BF.RESERVE",
                "ins",
                "0.001",
                "500",
                "EXPANSION",
                "2",
                "COUNTING"
            ],
            // BF.INSERT's items, without the options a replica would read against its own
            // settings.
            vec!["BF.MADD", "ins", "a", "b"],
            vec!["BF.RESERVE", "ns", "0.001", "10", "NONSCALING", "COUNTING"],
            vec!["BF.MADD", "ns", "x"],
            vec!["BF.DEL", "ins", "a"],
            vec!["BF.MDEL", "ins", "b", "never"],
            vec!["BF.RESERVE", "auto", "0.001", "500", "EXPANSION", "2"],
            vec!["BF.ADD", "auto", "x"],
        ]
    );
}

#[test]
fn keyspace_event_bf_del() {
    let (_s, mut c, mut sub) = keyevent_server();
    assert_eq!(call!(c, "BF.RESERVE", "k", "0.01", "100", "COUNTING"), ok());
    assert_eq!(call!(c, "BF.DEL", "k", "absent"), Int(0));
    assert_eq!(call!(c, "BF.ADD", "k", "a"), Int(1));
    assert_eq!(call!(c, "BF.MDEL", "k", "a", "b"), ints(&[1, 0]));
    assert_eq!(
        events(&mut sub, 3),
        [
            "__keyevent@0__:bf.reserve k",
            "__keyevent@0__:bf.add k",
            "__keyevent@0__:bf.del k"
        ]
    );
}

/// Counting filters of a few shapes with adds and deletes; returns the items each still holds.
fn populate(c: &mut Client) -> Populated {
    assert_eq!(
        call!(
            c,
            "BF.RESERVE",
            "tiers",
            "0.01",
            "100",
            "EXPANSION",
            "4",
            "COUNTING"
        ),
        ok()
    );
    assert_eq!(
        call!(
            c,
            "BF.RESERVE",
            "ns",
            "0.001",
            "300",
            "NONSCALING",
            "COUNTING"
        ),
        ok()
    );
    let mut keys = Vec::new();
    for (key, count) in [("tiers", 3000), ("ns", 300)] {
        let items: Vec<String> = (0..count).map(|i| format!("{key}/{i}")).collect();
        madd_in_batches(c, key, &items);
        let mut args = vec!["BF.MDEL".to_string(), key.to_string()];
        args.extend(items.iter().step_by(3).cloned());
        c.call(&args);
        let kept: Vec<String> = items
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 3 != 0)
            .map(|(_, item)| item.clone())
            .collect();
        keys.push((key.to_string(), kept));
    }
    keys
}

/// Everything observable about the keys, checking that no kept item reads absent.
fn snapshot(c: &mut Client, keys: &Populated) -> Vec<Reply> {
    let mut out = Vec::new();
    for (key, items) in keys {
        out.extend(bloom_state(c, key));
        out.push(call!(c, "DEBUG", "DIGEST-VALUE", key.as_str()));
        let answers = mexists(c, key, items);
        assert!(
            answers.iter().all(|a| *a == Int(1)),
            "{key}: false negative"
        );
    }
    out
}

#[test]
fn reload_restart_and_aof_rewrites() {
    reload_restart_and_aof_rewrite(populate, snapshot, Some((2, b"bloomrsC")), |c| {
        assert_eq!(call!(c, "TYPE", "ns"), Simple("bloomrsCT".into()))
    });
}

#[test]
fn dump_restore_copy_and_chunks() {
    let s = Server::start();
    let mut c = s.client();
    let keys = populate(&mut c);
    let before = snapshot(&mut c, &keys);
    for (key, _) in &keys {
        restore_from_own_dump(&mut c, key);
    }
    assert_eq!(snapshot(&mut c, &keys), before);
    // COPY is deep: deleting from the copy leaves the original.
    assert_eq!(call!(c, "COPY", "ns", "ns2"), Int(1));
    let item = keys[1].1[0].clone();
    assert_eq!(call!(c, "BF.DEL", "ns2", item.as_str()), Int(1));
    assert_eq!(call!(c, "BF.EXISTS", "ns", item.as_str()), Int(1));
    // SCANDUMP / LOADCHUNK into a new key rebuilds the same value.
    let chunks = scandump(&mut c, "BF.SCANDUMP", "tiers");
    load_chunks(&mut c, "BF.LOADCHUNK", "rebuilt", &chunks);
    assert_eq!(call!(c, "TYPE", "rebuilt"), Simple("bloomrsCT".into()));
    assert_eq!(
        call!(c, "DEBUG", "DIGEST-VALUE", "rebuilt"),
        call!(c, "DEBUG", "DIGEST-VALUE", "tiers")
    );
    let header = call!(c, "BF.SCANDUMP", "tiers", "0").array()[1].bytes();
    let mut other_width = header.clone();
    other_width[12] = 8;
    let mut short = header.clone();
    short.truncate(30);
    let bad = [
        ("other counter width", other_width),
        ("short", short),
        ("magic only", b"bloomrsC".to_vec()),
    ];
    let bad_data = err("ERR received bad data");
    assert_headers_refused(&mut c, "BF.LOADCHUNK", "bad", &bad, &bad_data);
}

#[test]
fn broken_payloads_are_refused() {
    let s = Server::build(&[], &["--rdbcompression", "no"]);
    let mut c = s.client();
    assert_eq!(
        call!(c, "BF.RESERVE", "id-probe", "0.01", "1000", "COUNTING"),
        ok()
    );
    call!(c, "BF.ADD", "id-probe", "a");
    let type_id = counting_type_id(&mut c);
    let payload = Payload::parse(&call!(c, "DUMP", "id-probe").bytes());
    let cases = [
        payload.with(0, RdbField::Unsigned(8)),
        // Fields: width, adds held, then the chain (size, links, options, ...).
        payload.with(4, RdbField::Unsigned(1)),
        payload.with(3, RdbField::Unsigned(0)),
        payload.with(2, RdbField::Unsigned(99)),
        Payload {
            module_id: type_id | 2,
            ..payload.clone()
        },
    ];
    for case in cases {
        assert_eq!(
            call!(c, "RESTORE", "bad", "0", case.encode()),
            err("ERR Bad data format")
        );
    }
    // Over the per-filter byte cap.
    assert_eq!(
        call!(c, "CONFIG", "SET", "bf.max-filter-bytes", "1024"),
        ok()
    );
    assert_eq!(
        call!(c, "RESTORE", "big", "0", payload.encode()),
        err("ERR Bad data format")
    );
    assert_eq!(
        call!(c, "BF.RESERVE", "big", "0.01", "1000", "COUNTING"),
        too_large(1024)
    );
}

#[test]
fn memory_info_and_lazy_free() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(
        call!(c, "BF.RESERVE", "large", "0.01", "1000000", "COUNTING"),
        ok()
    );
    let size = call!(c, "BF.INFO", "large", "SIZE").array()[0].int();
    assert_eq!(value_memory(&mut c, "large"), size);
    let info = call!(c, "INFO", "bf").text();
    assert!(info.contains("bf_counting_filters:1"), "{info}");
    assert!(
        info.contains(&format!("bf_counting_memory_bytes:{size}")),
        "{info}"
    );
    assert!(info.contains("bf_bloom_filters:0"), "{info}");
    assert_eq!(call!(c, "UNLINK", "large"), Int(1));
    // Freed by a background thread (lazy free), and then out of the totals.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !call!(c, "INFO", "memory")
        .text()
        .contains("lazyfreed_objects:1")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "not freed in the background"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    wait_lazyfree(&mut c);
    let info = call!(c, "INFO", "bf").text();
    assert!(info.contains("bf_counting_filters:0"), "{info}");
}
