//! Sparse Bloom filters (`bf-sparse-max-bytes`): the replies of every BF.* command, promotion
//! into exactly the plain filter's bytes, persistence as sparse, the way back to RedisBloom's
//! format, and a setting of 0 that changes nothing.
pub mod common;

use common::*;

const SPARSE: &str = "bloomrsSP";
const DENSE: &str = "MBbloom--";

fn ids(range: std::ops::Range<u32>) -> Vec<String> {
    range.map(|i| format!("user-item-{i:06}")).collect()
}

fn sparse_server(max_bytes: &str) -> Server {
    Server::build(&[], &["--bf.bf-sparse-max-bytes", max_bytes])
}

fn madd(c: &mut Client, key: &str, items: &[String]) -> Reply {
    let mut args = vec!["BF.MADD".to_string(), key.to_string()];
    args.extend(items.iter().cloned());
    c.call(&args)
}

fn kind(c: &mut Client, key: &str) -> String {
    call!(c, "TYPE", key).text()
}

/// The same filter built on a server without sparse filters: its SCANDUMP chunks.
fn plain_scandump(reserve: &[&str], items: &[String]) -> Vec<(i64, Vec<u8>)> {
    let s = Server::start();
    let mut c = s.client();
    let mut args = vec!["BF.RESERVE"];
    args.extend_from_slice(reserve);
    assert_eq!(c.call(&args), ok());
    let replies = madd(&mut c, reserve[0], items);
    assert_eq!(replies, flags(&vec![true; items.len()]));
    scandump(&mut c, "BF.SCANDUMP", reserve[0])
}

#[test]
fn replies_while_sparse_and_after_promotion() {
    let s = sparse_server("4096");
    let mut c = s.client();
    assert_eq!(
        call!(c, "BF.RESERVE", "u", "0.01", "1000", "EXPANSION", "10"),
        ok()
    );
    assert_eq!(kind(&mut c, "u"), SPARSE);
    assert_eq!(value_memory(&mut c, "u"), 48);
    let items = ids(0..90);
    // A dense first link takes 1,480 bytes: 89 hash pairs (48 + 89 × 16 = 1,472) fit.
    assert_eq!(madd(&mut c, "u", &items[..89]), flags(&[true; 89]));
    assert_eq!(call!(c, "BF.ADD", "u", items[0].as_str()), Int(0));
    assert_eq!(kind(&mut c, "u"), SPARSE);
    assert_eq!(value_memory(&mut c, "u"), 1472);
    assert_eq!(
        call!(c, "BF.INFO", "u"),
        info_reply(&BF_INFO_FIELDS, &[1000, 1472, 1, 89, 10])
    );
    assert_eq!(call!(c, "BF.INFO", "u", "SIZE"), ints(&[1472]));
    assert_eq!(call!(c, "BF.CARD", "u"), Int(89));
    assert_eq!(
        call!(c, "BF.DEBUG", "u"),
        Array(vec![
            bulk("size:89"),
            bulk("encoding:sparse bytes:1472 hashes:89 capacity:1000 dense-bytes:1480 ratio:0.01"),
        ])
    );
    assert_eq!(
        call!(c, "BF.MEXISTS", "u", items[3].as_str(), items[89].as_str()),
        flags(&[true, false])
    );
    // SCANDUMP of a sparse filter is the dense filter's, which RedisBloom loads.
    let reserve = ["u", "0.01", "1000", "EXPANSION", "10"];
    assert_eq!(
        scandump(&mut c, "BF.SCANDUMP", "u"),
        plain_scandump(&reserve, &items[..89])
    );

    // The 90th item promotes: the bytes are those of the plain filter given the same items.
    assert_eq!(call!(c, "BF.ADD", "u", items[89].as_str()), Int(1));
    assert_eq!(kind(&mut c, "u"), DENSE);
    assert_eq!(value_memory(&mut c, "u"), 1480);
    assert_eq!(call!(c, "BF.CARD", "u"), Int(90));
    assert_eq!(
        scandump(&mut c, "BF.SCANDUMP", "u"),
        plain_scandump(&reserve, &items)
    );
    assert_eq!(
        call!(c, "BF.DEBUG", "u").array()[1],
        bulk("bytes:1384 bits:11072 hashes:8 hashwidth:64 capacity:1000 size:90 ratio:0.005")
    );
}

#[test]
fn every_creation_path_starts_sparse() {
    let s = sparse_server("4096");
    let mut c = s.client();
    assert_eq!(call!(c, "BF.ADD", "add", "x"), Int(1));
    assert_eq!(madd(&mut c, "madd", &ids(0..3)), flags(&[true; 3]));
    assert_eq!(
        call!(c, "BF.INSERT", "ins", "CAPACITY", "500", "ITEMS", "a", "b"),
        flags(&[true, true])
    );
    assert_eq!(
        call!(c, "BF.RESERVE", "res", "0.001", "200", "NONSCALING"),
        ok()
    );
    for key in ["add", "madd", "ins", "res"] {
        assert_eq!(kind(&mut c, key), SPARSE, "{key}");
    }
    // BF.ADD's defaults (100 items at 1%): a 240-byte filter, so 12 hash pairs, then dense.
    assert_eq!(madd(&mut c, "add", &ids(0..11)), flags(&[true; 11]));
    assert_eq!(kind(&mut c, "add"), SPARSE);
    assert_eq!(call!(c, "BF.ADD", "add", "thirteenth"), Int(1));
    assert_eq!(kind(&mut c, "add"), DENSE);
    assert_eq!(call!(c, "BF.CARD", "add"), Int(13));
    assert_eq!(call!(c, "BF.INFO", "res", "EXPANSION"), Array(vec![Nil]));
    assert_eq!(call!(c, "BF.INFO", "res", "CAPACITY"), ints(&[200]));
}

#[test]
fn the_setting_caps_the_sparse_form() {
    let s = sparse_server("512");
    let mut c = s.client();
    assert_eq!(
        call!(c, "BF.RESERVE", "u", "0.01", "1000", "EXPANSION", "10"),
        ok()
    );
    // (512 - 48) / 16 = 29 items; the 30th promotes in the middle of a batch.
    let items = ids(0..40);
    assert_eq!(madd(&mut c, "u", &items[..25]), flags(&[true; 25]));
    let mut batch = items[20..40].to_vec();
    batch.push(items[0].clone());
    let expected = [vec![false; 5], vec![true; 15], vec![false]].concat();
    assert_eq!(madd(&mut c, "u", &batch), flags(&expected));
    assert_eq!(kind(&mut c, "u"), DENSE);
    assert_eq!(call!(c, "BF.CARD", "u"), Int(40));
    let reserve = ["u", "0.01", "1000", "EXPANSION", "10"];
    assert_eq!(
        scandump(&mut c, "BF.SCANDUMP", "u"),
        plain_scandump(&reserve, &items)
    );
    // Below the size of an empty sparse filter, filters start dense.
    assert_eq!(
        call!(c, "CONFIG", "SET", "bf.bf-sparse-max-bytes", "40"),
        ok()
    );
    assert_eq!(call!(c, "BF.ADD", "d", "x"), Int(1));
    assert_eq!(kind(&mut c, "d"), DENSE);
}

#[test]
fn a_full_non_scaling_filter_refuses_as_the_plain_one() {
    let s = sparse_server("4096");
    let mut c = s.client();
    let insert = |c: &mut Client, key: &str| {
        c.call(&[
            "BF.INSERT",
            key,
            "CAPACITY",
            "4",
            "ERROR",
            "1e-40",
            "NONSCALING",
            "ITEMS",
            "a",
            "b",
            "c",
            "d",
            "e",
            "a",
        ])
    };
    let expected = Array(vec![
        Int(1),
        Int(1),
        Int(1),
        Int(1),
        err("ERR non scaling filter is full"),
    ]);
    assert_eq!(insert(&mut c, "k"), expected);
    assert_eq!(kind(&mut c, "k"), DENSE);
    let plain = Server::start();
    let mut p = plain.client();
    assert_eq!(insert(&mut p, "k"), expected);
    assert_eq!(
        scandump(&mut c, "BF.SCANDUMP", "k"),
        scandump(&mut p, "BF.SCANDUMP", "k")
    );
}

/// What a client can see of a key: its type, replies and digest.
fn state(c: &mut Client, key: &str) -> Vec<Reply> {
    let mut probe = vec!["BF.MEXISTS".to_string(), key.to_string()];
    probe.extend(ids(0..30));
    vec![
        call!(c, "TYPE", key),
        call!(c, "BF.INFO", key),
        call!(c, "BF.DEBUG", key),
        c.call(&probe),
        call!(c, "DEBUG", "DIGEST-VALUE", key),
    ]
}

#[test]
fn sparse_filters_stay_sparse_across_reload_restore_and_copy() {
    let s = sparse_server("4096");
    let mut c = s.client();
    assert_eq!(madd(&mut c, "k", &ids(0..10)), flags(&[true; 10]));
    let before = state(&mut c, "k");
    assert_eq!(call!(c, "DEBUG", "RELOAD"), ok());
    assert_eq!(state(&mut c, "k"), before);
    let payload = call!(c, "DUMP", "k").bytes();
    assert_eq!(call!(c, "DEL", "k"), Int(1));
    assert_eq!(call!(c, "RESTORE", "k", "0", payload), ok());
    assert_eq!(state(&mut c, "k"), before);
    assert_eq!(call!(c, "COPY", "k", "k2"), Int(1));
    assert_eq!(kind(&mut c, "k2"), SPARSE);
    assert_eq!(call!(c, "BF.ADD", "k2", "only-in-copy"), Int(1));
    assert_eq!(call!(c, "BF.EXISTS", "k", "only-in-copy"), Int(0));
    assert_eq!(state(&mut c, "k"), before);
    // A server with the setting at 0 keeps loaded sparse filters sparse.
    assert_eq!(
        call!(c, "CONFIG", "SET", "bf.bf-sparse-max-bytes", "0"),
        ok()
    );
    assert_eq!(call!(c, "DEBUG", "RELOAD"), ok());
    assert_eq!(state(&mut c, "k"), before);
}

#[test]
fn aof_rewrite_keeps_them_sparse() {
    for preamble in ["no", "yes"] {
        let config = [
            &aof_always(preamble)[..],
            &["--bf.bf-sparse-max-bytes", "4096"],
        ]
        .concat();
        let mut s = Server::build(&[], &config);
        let mut c = s.client();
        assert_eq!(madd(&mut c, "k", &ids(0..10)), flags(&[true; 10]));
        assert_eq!(madd(&mut c, "p", &ids(0..20)), flags(&[true; 20]));
        let before = (state(&mut c, "k"), state(&mut c, "p"));
        assert_eq!(kind(&mut c, "p"), DENSE);
        call!(c, "BGREWRITEAOF");
        wait_for_persistence(&mut c);
        if preamble == "no" {
            let headers: Vec<_> = aof_commands(&s.dir)
                .into_iter()
                .filter(|cmd| cmd.len() == 4 && cmd[1] == b"k")
                .map(|cmd| cmd[3].starts_with(b"bloomrsS"))
                .collect();
            assert_eq!(headers, [true, false], "header and one chunk of pairs");
        }
        s.restart();
        let mut c = s.client();
        assert_eq!(
            (state(&mut c, "k"), state(&mut c, "p")),
            before,
            "{preamble}"
        );
    }
}

#[test]
fn promotion_and_creation_replay_from_the_aof_whatever_the_setting() {
    let config = [
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
        "--bf.bf-sparse-max-bytes",
        "512",
    ];
    let mut s = Server::build(&[], &config);
    let mut c = s.client();
    assert_eq!(call!(c, "BF.RESERVE", "u", "0.01", "1000"), ok());
    assert_eq!(madd(&mut c, "u", &ids(0..20)), flags(&[true; 20]));
    assert_eq!(madd(&mut c, "u", &ids(15..40)).array().len(), 25);
    assert_eq!(call!(c, "BF.ADD", "a", "x"), Int(1));
    let before = (state(&mut c, "u"), state(&mut c, "a"));
    wait_for_persistence(&mut c);
    let names: Vec<String> = aof_commands(&s.dir)
        .iter()
        .map(|cmd| String::from_utf8_lossy(&cmd[0]).to_uppercase())
        .filter(|name| !matches!(name.as_str(), "SELECT" | "MULTI" | "EXEC"))
        .collect();
    assert_eq!(
        names,
        [
            "BF.LOADCHUNK",
            "BF.MADD",
            "BF.MADD",
            "BF.PROMOTE",
            "BF.MADD",
            "BF.LOADCHUNK",
            "BF.ADD"
        ]
    );
    // Replayed by a server whose own setting would promote at other points (or never start
    // sparse), the values are the same.
    for setting in ["0", "100000"] {
        if let Some(value) = s.config.last_mut() {
            *value = setting.to_string();
        }
        s.restart();
        c = s.client();
        assert_eq!(
            (state(&mut c, "u"), state(&mut c, "a")),
            before,
            "{setting}"
        );
    }
}

#[test]
fn promote_command_is_the_way_back_to_redisbloom() {
    let s = sparse_server("4096");
    let mut c = s.client();
    assert_eq!(madd(&mut c, "k", &ids(0..5)), flags(&[true; 5]));
    assert_eq!(call!(c, "BF.ADD", "d", "x"), Int(1));
    assert_eq!(call!(c, "SET", "str", "x"), ok());
    let mut found: Vec<String> = call!(c, "SCAN", "0", "TYPE", SPARSE, "COUNT", "100").array()[1]
        .array()
        .iter()
        .map(Reply::text)
        .collect();
    found.sort();
    assert_eq!(found, ["d", "k"]);
    let reserve = ["k", "0.01", "100", "EXPANSION", "2"];
    let dense = plain_scandump(&reserve, &ids(0..5));
    assert_eq!(call!(c, "BF.PROMOTE", "k"), Int(1));
    assert_eq!(kind(&mut c, "k"), DENSE);
    assert_eq!(scandump(&mut c, "BF.SCANDUMP", "k"), dense);
    assert_eq!(call!(c, "BF.PROMOTE", "k"), Int(0));
    assert_replies(
        &mut c,
        &[
            (&["BF.PROMOTE", "missing"], err("ERR not found")),
            (
                &["BF.PROMOTE", "str"],
                err("WRONGTYPE Operation against a key holding the wrong kind of value"),
            ),
            (
                &["BF.PROMOTE"],
                err("ERR wrong number of arguments for 'bf.promote' command"),
            ),
        ],
    );
    // After every sparse key is promoted, the RDB holds only RedisBloom's type.
    assert_eq!(call!(c, "BF.PROMOTE", "d"), Int(1));
    assert_eq!(call!(c, "SAVE"), ok());
    let rdb = std::fs::read(s.dir.join("dump.rdb")).unwrap();
    assert!(!rdb.windows(3).any(|w| w == b"bSP"));
}

#[test]
fn a_setting_of_zero_changes_nothing() {
    let workload = |c: &mut Client| -> Vec<Reply> {
        let mut out = vec![
            call!(c, "BF.RESERVE", "r", "0.01", "1000", "EXPANSION", "10"),
            call!(c, "BF.ADD", "a", "x"),
            madd(c, "r", &ids(0..50)),
            call!(
                c,
                "BF.INSERT",
                "i",
                "CAPACITY",
                "10",
                "NONSCALING",
                "ITEMS",
                "y"
            ),
        ];
        for key in ["r", "a", "i"] {
            out.push(call!(c, "TYPE", key));
            out.push(call!(c, "DUMP", key));
            out.push(call!(c, "MEMORY", "USAGE", key));
            out.push(call!(c, "BF.DEBUG", key));
        }
        out
    };
    let untouched = Server::start();
    let expected = workload(&mut untouched.client());
    let s = sparse_server("4096");
    let mut c = s.client();
    assert_eq!(
        call!(c, "CONFIG", "SET", "bf.bf-sparse-max-bytes", "0"),
        ok()
    );
    assert_eq!(config_get(&mut c, "bf.bf-sparse-max-bytes")[1], bulk("0"));
    assert_eq!(workload(&mut c), expected);
}

fn config_get(c: &mut Client, name: &str) -> Vec<Reply> {
    call!(c, "CONFIG", "GET", name).array()
}

/// BF.MADD's RESP2 reply for these outcomes.
fn flags(values: &[bool]) -> Reply {
    Array(values.iter().map(|v| Int(i64::from(*v))).collect())
}

#[test]
fn promotions_leave_no_memory_behind() {
    // Each promotion inside a batch propagates three commands with the batch's items; their
    // arguments must be freed (they once leaked about 1 KB per promotion here).
    let s = sparse_server("4096");
    let mut c = s.client();
    let used = |c: &mut Client| info_int(c, "memory", "used_memory");
    let before = used(&mut c);
    for user in 0..2000 {
        let items: Vec<String> = ids(0..30).iter().map(|i| format!("{user}:{i}")).collect();
        madd(&mut c, &format!("u:{user}"), &items);
    }
    assert_eq!(kind(&mut c, "u:0"), DENSE);
    assert_eq!(call!(c, "FLUSHALL", "SYNC"), ok());
    let left = used(&mut c) - before;
    assert!(
        left < 256 * 1024,
        "{left} bytes left after 2,000 promotions"
    );
}

#[test]
fn memory_admission_counts_the_dense_filter() {
    let s = Server::build(
        &[],
        &["--maxmemory", "16mb", "--bf.bf-sparse-max-bytes", "4096"],
    );
    let mut c = s.client();
    // Refused exactly as the dense filter (24 MB) would be, although the sparse one is tiny.
    assert_eq!(
        call!(c, "BF.RESERVE", "big", "0.01", "20000000"),
        too_large_for_maxmemory(16777216)
    );
    assert_eq!(call!(c, "EXISTS", "big"), Int(0));
    // A 9.9 MB dense filter fits now, so its sparse form is created...
    assert_eq!(call!(c, "BF.RESERVE", "k", "0.001", "5000000"), ok());
    assert_eq!(kind(&mut c, "k"), SPARSE);
    // ...but once other data leaves less room, its promotion is refused and it stays sparse.
    assert_eq!(call!(c, "SETRANGE", "blob", "10485759", "x"), Int(10 << 20));
    let items = ids(0..254);
    let replies = madd(&mut c, "k", &items).array();
    assert_eq!(replies[..253], vec![Int(1); 253]);
    assert_eq!(replies[253], cannot_grow_for_maxmemory(16777216));
    assert_eq!(kind(&mut c, "k"), SPARSE);
    assert_eq!(call!(c, "BF.CARD", "k"), Int(253));
    assert_eq!(
        call!(c, "BF.PROMOTE", "k"),
        too_large_for_maxmemory(16777216)
    );
    assert_eq!(call!(c, "DEL", "blob"), Int(1));
    wait_lazyfree(&mut c);
    assert_eq!(call!(c, "BF.ADD", "k", items[253].as_str()), Int(1));
    assert_eq!(kind(&mut c, "k"), DENSE);
}
