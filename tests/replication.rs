//! A primary and a replica, both with the module: a mixed random workload over many Bloom and
//! Cuckoo keys leaves byte-identical values on both, also after the replica restarts from its
//! own RDB and after a full resync. The replica panics on any propagation error, so a command
//! that failed there would fail the test.
pub mod common;

use common::*;

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

const KEYS: u64 = 30;

/// One random write (or a few, for a SCANDUMP → LOADCHUNK copy).
fn operation(rng: &mut Rng, c: &mut Client) {
    let n = rng.below(KEYS);
    let (bf, cf, ct) = (format!("bf:{n}"), format!("cf:{n}"), format!("ct:{n}"));
    let item = format!("item:{}", rng.below(5000));
    // Counting filters draw from fewer items, so deletes find what adds put there.
    let counted = |rng: &mut Rng| format!("item:{}", rng.below(300));
    match rng.below(20) {
        0 => {
            let capacity = 10 + rng.below(200);
            let expansion = 1 + rng.below(3);
            if rng.below(4) == 0 {
                // Large enough never to fill: see the counting filters below.
                c.call(&[
                    "BF.RESERVE".into(),
                    bf,
                    "0.01".into(),
                    (2000 + capacity).to_string(),
                    "NONSCALING".into(),
                ]);
            } else {
                c.call(&[
                    "BF.RESERVE".into(),
                    bf,
                    "0.05".into(),
                    capacity.to_string(),
                    "EXPANSION".into(),
                    expansion.to_string(),
                ]);
            }
        }
        1..=3 => {
            c.call(&["BF.ADD".to_string(), bf, item]);
        }
        4 => {
            let items: Vec<String> = (0..20)
                .map(|_| format!("item:{}", rng.below(5000)))
                .collect();
            let mut args = vec!["BF.MADD".to_string(), bf];
            args.extend(items);
            c.call(&args);
        }
        5 => {
            c.call(&[
                "BF.INSERT".to_string(),
                bf,
                "CAPACITY".into(),
                "30".into(),
                "ITEMS".into(),
                item,
                "x".into(),
            ]);
        }
        6 => {
            let expansion = rng.below(3).to_string();
            c.call(&[
                "CF.RESERVE".to_string(),
                cf,
                "64".into(),
                "BUCKETSIZE".into(),
                (1 + rng.below(4)).to_string(),
                "EXPANSION".into(),
                expansion,
            ]);
        }
        7 | 8 => {
            c.call(&["CF.ADD".to_string(), cf, item]);
        }
        9 => {
            c.call(&["CF.ADDNX".to_string(), cf, item]);
        }
        10 => {
            let items: Vec<String> = (0..10)
                .map(|_| format!("item:{}", rng.below(5000)))
                .collect();
            let mut args = vec![
                if rng.below(2) == 0 {
                    "CF.INSERT"
                } else {
                    "CF.INSERTNX"
                }
                .to_string(),
                cf,
                "CAPACITY".into(),
                "16".into(),
                "ITEMS".into(),
            ];
            args.extend(items);
            c.call(&args);
        }
        11 | 12 => {
            c.call(&["CF.DEL".to_string(), cf, item]);
        }
        13 => {
            c.call(&["CF.COMPACT".to_string(), cf]);
        }
        14 => {
            // A full non-scaling filter answers an error inside BF.INSERT's reply, which a
            // replica run with `propagation-error-behavior panic` refuses: non-scaling ones
            // are made large enough never to fill here.
            let (capacity, scaling) = if rng.below(4) == 0 {
                (2000, "NONSCALING")
            } else {
                (10 + rng.below(100), "COUNTING")
            };
            let capacity = capacity.to_string();
            c.call(&["BF.RESERVE", &ct, "0.01", &capacity, scaling, "COUNTING"]);
        }
        15 => {
            let items: Vec<String> = (0..10).map(|_| counted(rng)).collect();
            let mut args = vec![
                "BF.INSERT".to_string(),
                ct,
                "COUNTING".into(),
                "CAPACITY".into(),
                "20".into(),
                "ITEMS".into(),
            ];
            args.extend(items);
            c.call(&args);
        }
        16 => {
            c.call(&["BF.DEL".to_string(), ct, counted(rng)]);
        }
        17 => {
            let items: Vec<String> = (0..5).map(|_| counted(rng)).collect();
            let mut args = vec!["BF.MDEL".to_string(), ct];
            args.extend(items);
            c.call(&args);
        }
        _ => {
            // Copy a filter through SCANDUMP / LOADCHUNK into a fresh key.
            let (family, source) = match rng.below(3) {
                0 => ("BF", bf),
                1 => ("BF", ct),
                _ => ("CF", cf),
            };
            let target = format!("{}:copy:{}", family.to_lowercase(), rng.below(1_000_000));
            if !matches!(
                c.call(&[format!("{family}.SCANDUMP"), source.clone(), "0".into()]),
                Array(_)
            ) {
                return;
            }
            for (iter, bytes) in scandump(c, &format!("{family}.SCANDUMP"), &source) {
                c.call(&[
                    format!("{family}.LOADCHUNK").into_bytes(),
                    target.clone().into_bytes(),
                    iter.to_string().into_bytes(),
                    bytes,
                ]);
            }
        }
    }
}

/// Writes to windowed filters, from their own sequence so the random workload stays the same
/// (tests/windowed.rs moves the clock; here it is the real one).
fn windowed_operation(i: usize, c: &mut Client) {
    let key = format!("bfw:{}", i % 7);
    let item = format!("item:{}", i % 997);
    if i % 3 == 0 {
        c.call(&["BF.MADD", &key, &item, "x"]);
    } else {
        let window = [
            "BF.INSERT",
            &key,
            "WINDOW",
            "3600",
            "GENERATIONS",
            "3",
            "ITEMS",
            &item,
        ];
        c.call(&window);
    }
}

/// Static sets, from their own sequence too: builders take items, freeze (their
/// effects replayed on the replica, which fails on any error) and are deleted to start again.
fn static_operation(i: usize, c: &mut Client) {
    let key = format!("bfs:{}", i % 5);
    let item = format!("item:{}", i % 1009);
    match i % 97 {
        96 => c.call(&["BF.FREEZE", &key]),
        95 if i % 3 == 0 => c.call(&["DEL", &key]),
        _ => {
            let insert = [
                "BF.INSERT",
                &key,
                "ERROR",
                "0.001",
                "STATIC",
                "ITEMS",
                &item,
                "x",
            ];
            c.call(&insert)
        }
    };
}

/// A key, its DEBUG DIGEST-VALUE and its SCANDUMP chunks.
type KeyState = (String, Reply, Vec<(i64, Vec<u8>)>);

/// DEBUG DIGEST-VALUE and SCANDUMP bytes of every key.
fn state(c: &mut Client) -> Vec<KeyState> {
    sorted_keys(c)
        .into_iter()
        .map(|key| {
            let digest = call!(c, "DEBUG", "DIGEST-VALUE", key.as_str());
            let family = if call!(c, "TYPE", key.as_str()).text() == "MBbloomCF" {
                "CF"
            } else {
                "BF"
            };
            let chunks = scandump(c, &format!("{family}.SCANDUMP"), &key);
            (key, digest, chunks)
        })
        .collect()
}

fn replica_of(primary: &Server) -> Server {
    Server::replica_of(primary, module_path(), &[])
}

#[test]
fn replicas_hold_identical_values() {
    // The primary's auto-create defaults differ from the replica's (deviation D10).
    let primary = Server::build(&["ERROR_RATE", "0.001", "INITIAL_SIZE", "50"], &[]);
    let mut replica = replica_of(&primary);
    let mut p = primary.client();
    let mut r = replica.client();
    wait_replica_linked(&mut r);

    let mut rng = Rng(0x0dd_ba11_5eed);
    for i in 0..6000 {
        operation(&mut rng, &mut p);
        windowed_operation(i, &mut p);
        static_operation(i, &mut p);
    }
    wait_replica_synced(&mut p, &mut r);
    let expected = state(&mut p);
    assert!(
        expected.len() > 2 * KEYS as usize,
        "only {} keys",
        expected.len()
    );
    let frozen = (0..5)
        .filter(|k| match call!(p, "BF.INFO", format!("bfs:{k}").as_str()) {
            info @ Array(_) => info_fields(info).contains(&("Frozen".into(), Int(1))),
            _ => false,
        })
        .count();
    assert!(frozen > 0, "no frozen static set compared");
    assert_eq!(state(&mut r), expected);

    // The replica restarts from its own RDB (partial or full resync follows).
    assert_eq!(call!(r, "SAVE"), ok());
    replica.restart();
    let mut r = replica.client();
    wait_replica_linked(&mut r);
    for i in 0..1000 {
        operation(&mut rng, &mut p);
        windowed_operation(i + 6000, &mut p);
        static_operation(i + 6000, &mut p);
    }
    wait_replica_synced(&mut p, &mut r);
    let expected = state(&mut p);
    assert_eq!(state(&mut r), expected);

    // A full resync: the replica starts with nothing and loads the primary's RDB.
    replica.kill();
    let _ = std::fs::remove_file(replica.dir.join("dump.rdb"));
    replica.restart();
    let mut r = replica.client();
    wait_replica_linked(&mut r);
    wait_replica_synced(&mut p, &mut r);
    assert_eq!(state(&mut r), expected);
    assert!(replica.alive());
    let line = sync_finished_line(&server_info(&mut r));
    assert!(
        replica.log().contains(line),
        "no {line:?} in the replica's log"
    );
    println!(
        "replication: 7,000 random writes, {} keys compared three times",
        expected.len()
    );
}

/// Sparse Bloom filters: the primary decides which filters start sparse and where each one
/// becomes dense, so a replica holds the same values (and the same encodings) whatever its own
/// `bf-sparse-max-bytes` says.
#[test]
fn replicas_follow_the_primarys_sparse_decisions() {
    for (on_primary, on_replica) in [("600", "0"), ("0", "600"), ("300", "5000")] {
        let primary = Server::build(&[], &["--bf.bf-sparse-max-bytes", on_primary]);
        // Full non-scaling filters answer errors here, on the primary and the replica alike
        // (this workload's seed meets some); the comparison below catches any divergence.
        let config = [
            "--bf.bf-sparse-max-bytes",
            on_replica,
            "--propagation-error-behavior",
            "ignore",
        ];
        let replica = Server::replica_of(&primary, module_path(), &config);
        let mut p = primary.client();
        let mut r = replica.client();
        wait_replica_linked(&mut r);
        let mut rng = Rng(0x5ba5_5e11);
        let mut sparse_seen = 0;
        for i in 0..2500 {
            operation(&mut rng, &mut p);
            if i % 100 == 0 {
                sparse_seen += call!(p, "SCAN", "0", "TYPE", "bloomrsSP", "COUNT", "1000").array()
                    [1]
                .array()
                .len();
            }
        }
        wait_replica_synced(&mut p, &mut r);
        let expected = state(&mut p);
        let types = |c: &mut Client| -> Vec<Reply> {
            expected
                .iter()
                .map(|(key, _, _)| call!(c, "TYPE", key.as_str()))
                .collect()
        };
        assert_eq!(state(&mut r), expected, "{on_primary} / {on_replica}");
        assert_eq!(types(&mut r), types(&mut p));
        assert_eq!(
            sparse_seen > 0,
            on_primary != "0",
            "{on_primary}: {sparse_seen}"
        );
        println!(
            "replication with bf-sparse-max-bytes {on_primary} / {on_replica}: {} keys, \
             {sparse_seen} sparse keys seen along the way",
            expected.len()
        );
    }
}
