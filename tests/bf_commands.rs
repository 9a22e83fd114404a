//! BF.* commands against a real redis-server: replies, errors and RESP3 shapes.
pub mod common;

use common::*;

fn server() -> (Server, Client) {
    let server = Server::start();
    let client = server.client();
    (server, client)
}

fn info(c: &mut Client, key: &str) -> Vec<Reply> {
    call!(c, "BF.INFO", key).array()
}

fn info_values(c: &mut Client, key: &str) -> Vec<Reply> {
    info(c, key).into_iter().skip(1).step_by(2).collect()
}

#[test]
fn reserve_add_exists() {
    let (_s, mut c) = server();
    assert_eq!(call!(c, "BF.RESERVE", "k", "0.01", "100"), ok());
    assert_eq!(call!(c, "BF.ADD", "k", "foo"), Int(1));
    assert_eq!(call!(c, "BF.ADD", "k", "foo"), Int(0));
    assert_eq!(call!(c, "BF.EXISTS", "k", "foo"), Int(1));
    assert_eq!(call!(c, "BF.EXISTS", "k", "bar"), Int(0));
    assert_eq!(call!(c, "BF.MADD", "k", "foo", "bar", ""), ints(&[0, 1, 1]));
    assert_eq!(
        call!(c, "BF.MEXISTS", "k", "foo", "bar", "", "baz"),
        ints(&[1, 1, 1, 0])
    );
    assert_eq!(call!(c, "BF.CARD", "k"), Int(3));
    assert_eq!(call!(c, "BF.CARD", "missing"), Int(0));
    assert_eq!(call!(c, "TYPE", "k"), Simple("MBbloom--".into()));
    assert_eq!(call!(c, "OBJECT", "ENCODING", "k"), bulk("raw"));
}

#[test]
fn the_bits_of_foo_in_a_default_filter() {
    let (_s, mut c) = server();
    assert_eq!(call!(c, "BF.ADD", "k", "foo"), Int(1));
    let chunk = call!(c, "BF.SCANDUMP", "k", "1").array();
    assert_eq!(chunk[0], Int(145));
    let bits = chunk[1].bytes();
    let set: Vec<usize> = (0..bits.len() * 8)
        .filter(|p| bits[p / 8] & (1 << (p % 8)) != 0)
        .collect();
    assert_eq!(set, [21, 25, 145, 269, 475, 599, 723, 847]);
}

#[test]
fn auto_create_uses_the_defaults() {
    let (_s, mut c) = server();
    assert_eq!(call!(c, "BF.ADD", "a", "x"), Int(1));
    assert_eq!(
        call!(c, "BF.INFO", "a"),
        info_reply(&BF_INFO_FIELDS, &[100, 240, 1, 1, 2])
    );
    assert_eq!(call!(c, "BF.MADD", "m", "x", "y"), ints(&[1, 1]));
    assert_eq!(call!(c, "BF.INSERT", "i", "ITEMS", "x", "y"), ints(&[1, 1]));
    assert_eq!(info_values(&mut c, "m"), info_values(&mut c, "i"));
}

#[test]
fn info_table() {
    let (_s, mut c) = server();
    let cases: [(&[&str], [Reply; 4]); 6] = [
        (
            &["BF.RESERVE", "a", "0.01", "100"],
            [Int(100), Int(240), Int(1), Int(2)],
        ),
        (
            &["BF.RESERVE", "b", "0.01", "100", "NONSCALING"],
            [Int(100), Int(216), Int(1), Nil],
        ),
        (
            &["BF.RESERVE", "c", "0.01", "1000"],
            [Int(1000), Int(1480), Int(1), Int(2)],
        ),
        (
            &[
                "BF.INSERT",
                "d",
                "CAPACITY",
                "1000",
                "ERROR",
                "0.001",
                "EXPANSION",
                "4",
                "ITEMS",
                "c",
            ],
            [Int(1000), Int(2080), Int(1), Int(4)],
        ),
        (
            &["BF.RESERVE", "e", "0.01", "1000000"],
            [Int(1000000), Int(1378568), Int(1), Int(2)],
        ),
        (
            &["BF.RESERVE", "f", "0.01", "1000000", "EXPANSION", "7"],
            [Int(1000000), Int(1378568), Int(1), Int(7)],
        ),
    ];
    for (command, [capacity, size, filters, expansion]) in cases {
        c.call(command);
        let key = command[1];
        let values = info_values(&mut c, key);
        assert_eq!(
            [&values[0], &values[1], &values[2], &values[4]],
            [&capacity, &size, &filters, &expansion],
            "{command:?}"
        );
    }
}

#[test]
fn info_after_scaling_six_times() {
    let (_s, mut c) = server();
    assert_eq!(call!(c, "BF.RESERVE", "k", "0.01", "100"), ok());
    for chunk in (0..3462).collect::<Vec<u32>>().chunks(500) {
        let mut args = vec!["BF.MADD".to_string(), "k".to_string()];
        args.extend(chunk.iter().map(|i| i.to_string()));
        c.call(&args);
    }
    let values = info_values(&mut c, "k");
    assert_eq!(&values[..3], &[Int(6300), Int(13768), Int(6)]);
}

#[test]
fn info_single_fields() {
    let (_s, mut c) = server();
    assert_eq!(call!(c, "BF.RESERVE", "k", "0.01", "100"), ok());
    assert_eq!(
        call!(c, "BF.RESERVE", "ns", "0.01", "100", "NONSCALING"),
        ok()
    );
    assert_eq!(call!(c, "BF.INFO", "k", "CAPACITY"), ints(&[100]));
    assert_eq!(call!(c, "BF.INFO", "k", "size"), ints(&[240]));
    assert_eq!(call!(c, "BF.INFO", "k", "Filters"), ints(&[1]));
    assert_eq!(call!(c, "BF.INFO", "k", "items"), ints(&[0]));
    assert_eq!(call!(c, "BF.INFO", "k", "expansion"), ints(&[2]));
    assert_eq!(call!(c, "BF.INFO", "ns", "expansion"), Array(vec![Nil]));
    assert_replies(
        &mut c,
        &[
            (&["BF.INFO", "k", "bogus"], err("Invalid information value")),
            (&["BF.INFO", "k", ""], err("Invalid information value")),
            (&["BF.INFO", "missing"], err("ERR not found")),
            (&["BF.INFO", "missing", "bogus"], err("ERR not found")),
            (
                &["BF.INFO"],
                err("ERR wrong number of arguments for 'bf.info' command"),
            ),
            (
                &["BF.INFO", "k", "size", "x"],
                err("ERR wrong number of arguments for 'bf.info' command"),
            ),
        ],
    );
}

#[test]
fn resp3_shapes() {
    let (_s, mut c) = server();
    c.resp3();
    assert_eq!(
        call!(c, "BF.RESERVE", "ns", "0.01", "2", "NONSCALING"),
        ok()
    );
    assert_eq!(call!(c, "BF.ADD", "ns", "a"), Bool(true));
    assert_eq!(call!(c, "BF.ADD", "ns", "a"), Bool(false));
    assert_eq!(
        call!(c, "BF.MADD", "ns", "a", "b", "c", "d"),
        Array(vec![
            Bool(false),
            Bool(true),
            err("ERR non scaling filter is full")
        ])
    );
    assert_eq!(
        call!(c, "BF.INSERT", "ns", "ITEMS", "a", "z"),
        Array(vec![Bool(false), err("ERR non scaling filter is full")])
    );
    assert_eq!(call!(c, "BF.EXISTS", "ns", "a"), Bool(true));
    assert_eq!(call!(c, "BF.EXISTS", "missing", "a"), Bool(false));
    assert_eq!(
        call!(c, "BF.MEXISTS", "ns", "a", "x"),
        bools(&[true, false])
    );
    assert_eq!(call!(c, "BF.CARD", "ns"), Int(2));
    assert_eq!(
        call!(c, "BF.INFO", "ns"),
        Map(vec![
            (Simple("Capacity".into()), Int(2)),
            (Simple("Size".into()), Int(104)),
            (Simple("Number of filters".into()), Int(1)),
            (Simple("Number of items inserted".into()), Int(2)),
            (Simple("Expansion rate".into()), Nil),
        ])
    );
    assert_eq!(
        call!(c, "BF.INFO", "ns", "capacity"),
        Map(vec![(Simple("Capacity".into()), Int(2))])
    );
    assert_eq!(
        call!(c, "BF.INFO", "ns", "expansion"),
        Map(vec![(Simple("Expansion rate".into()), Nil)])
    );
    let dump = call!(c, "BF.SCANDUMP", "ns", "100");
    assert_eq!(dump, Array(vec![Int(0), bulk("")]));
}

#[test]
fn worked_sequences() {
    let (_s, mut c) = server();
    assert_eq!(call!(c, "BF.RESERVE", "sc", "0.01", "5"), ok());
    assert_eq!(
        call!(c, "BF.MADD", "sc", "1", "2", "3", "4", "5"),
        ints(&[1; 5])
    );
    assert_eq!(call!(c, "BF.ADD", "sc", "6"), Int(1));
    assert_eq!(call!(c, "BF.INFO", "sc", "filters"), ints(&[2]));
    assert_eq!(
        call!(c, "BF.MADD", "sc", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16"),
        ints(&[1, 0, 1, 1, 1, 1, 1, 1, 1, 1])
    );
    assert_eq!(
        call!(c, "BF.DEBUG", "sc"),
        Array(vec![
            bulk("size:15"),
            bulk("bytes:8 bits:64 hashes:8 hashwidth:64 capacity:5 size:5 ratio:0.005"),
            bulk("bytes:16 bits:128 hashes:9 hashwidth:64 capacity:10 size:10 ratio:0.0025"),
        ])
    );

    assert_eq!(
        call!(c, "BF.RESERVE", "sc3", "0.1", "10", "EXPANSION", "3"),
        ok()
    );
    let items: Vec<String> = (1..=50).map(|i| i.to_string()).collect();
    let mut args = vec!["BF.MADD".to_string(), "sc3".to_string()];
    args.extend(items);
    let replies = c.call(&args).array();
    let zeros: Vec<usize> = replies
        .iter()
        .enumerate()
        .filter(|(_, r)| **r == Int(0))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(zeros, [36, 40]);
    let debug = call!(c, "BF.DEBUG", "sc3").array();
    let sizes: Vec<String> = debug[1..]
        .iter()
        .map(|l| {
            l.text()
                .split(' ')
                .filter(|f| f.starts_with("capacity") || f.starts_with("size"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert_eq!(
        sizes,
        [
            "capacity:10 size:10",
            "capacity:30 size:30",
            "capacity:90 size:8"
        ]
    );

    assert_eq!(
        call!(c, "BF.RESERVE", "e1", "0.01", "5", "EXPANSION", "1"),
        ok()
    );
    let mut args = vec!["BF.MADD".to_string(), "e1".to_string()];
    args.extend((1..=16).map(|i| i.to_string()));
    let replies = c.call(&args).array();
    assert_eq!(replies.iter().filter(|r| **r == Int(0)).count(), 1);
    assert_eq!(replies[7], Int(0));
    assert_eq!(call!(c, "BF.INFO", "e1", "capacity"), ints(&[15]));
}

#[test]
fn debug_ratios_use_percent_g() {
    let (_s, mut c) = server();
    assert_eq!(
        call!(c, "BF.RESERVE", "g", "0.01", "1", "EXPANSION", "1"),
        ok()
    );
    for i in 0..6 {
        call!(c, "BF.ADD", "g", format!("item{i}"));
    }
    let ratios: Vec<String> = call!(c, "BF.DEBUG", "g").array()[1..]
        .iter()
        .map(|l| l.text().rsplit_once("ratio:").unwrap().1.to_string())
        .collect();
    assert_eq!(
        ratios[..5],
        ["0.005", "0.0025", "0.00125", "0.000625", "0.0003125"]
    );
    assert_eq!(ratios.get(6), None);
    assert_eq!(call!(c, "BF.RESERVE", "tiny", "1e-300", "1"), ok());
    assert_eq!(
        call!(c, "BF.DEBUG", "tiny").array()[1],
        bulk("bytes:184 bits:1472 hashes:998 hashwidth:64 capacity:1 size:0 ratio:5e-301")
    );
    assert_eq!(call!(c, "BF.RESERVE", "loose", "0.999999", "1"), ok());
    assert_eq!(
        call!(c, "BF.DEBUG", "loose").array()[1],
        bulk("bytes:8 bits:64 hashes:2 hashwidth:64 capacity:1 size:0 ratio:0.499999")
    );
}

#[test]
fn reserve_errors_in_order() {
    let (_s, mut c) = server();
    let arity = err("ERR wrong number of arguments for 'bf.reserve' command");
    assert_replies(
        &mut c,
        &[
            (&["BF.RESERVE", "k", "0.01"], arity.clone()),
            (
                &[
                    "BF.RESERVE",
                    "k",
                    "0.01",
                    "100",
                    "EXPANSION",
                    "3",
                    "EXPANSION",
                    "4",
                ],
                arity.clone(),
            ),
            (
                &["BF.RESERVE", "k", "abc", "100"],
                err("ERR bad error rate"),
            ),
            (
                &["BF.RESERVE", "k", "nan", "100"],
                err("ERR bad error rate"),
            ),
            (
                &["BF.RESERVE", "k", "abc", "xyz"],
                err("ERR bad error rate"),
            ),
        ],
    );
    for rate in ["0", "1", "-0.5", "1.5", "inf"] {
        assert_eq!(
            call!(c, "BF.RESERVE", "k", rate, "100"),
            err("ERR (0 < error rate range < 1) "),
            "{rate}"
        );
    }
    for capacity in ["1e3", "1.5", "9223372036854775808", "x"] {
        assert_eq!(
            call!(c, "BF.RESERVE", "k", "0.01", capacity),
            err("ERR bad capacity"),
            "{capacity}"
        );
    }
    assert_replies(
        &mut c,
        &[
            (
                &["BF.RESERVE", "k", "0.01", "0"],
                err("ERR (capacity should be larger than 0)"),
            ),
            (
                &["BF.RESERVE", "k", "0.01", "-5"],
                err("ERR (capacity should be larger than 0)"),
            ),
            (
                &["BF.RESERVE", "k", "0.01", "100", "EXPANSION"],
                err("ERR no expansion"),
            ),
            (
                &["BF.RESERVE", "k", "0.01", "100", "NONSCALING", "EXPANSION"],
                err("ERR no expansion"),
            ),
            (
                &[
                    "BF.RESERVE",
                    "k",
                    "0.01",
                    "100",
                    "NONSCALING",
                    "EXPANSION",
                    "2",
                ],
                err("Nonscaling filters cannot expand"),
            ),
            (
                &[
                    "BF.RESERVE",
                    "k",
                    "0.01",
                    "100",
                    "EXPANSION",
                    "2",
                    "NONSCALING",
                ],
                err("Nonscaling filters cannot expand"),
            ),
            (
                &["BF.RESERVE", "k", "0.01", "100", "EXPANSION", "two"],
                err("ERR bad expansion"),
            ),
            (
                &["BF.RESERVE", "k", "0.01", "100", "expansion", "0"],
                err("ERR expansion should be greater or equal to 1"),
            ),
            (
                &["BF.RESERVE", "k", "0.01", "100", "EXPANSION", "-1"],
                err("ERR expansion should be greater or equal to 1"),
            ),
        ],
    );
    assert_eq!(call!(c, "EXISTS", "k"), Int(0));
    // Unknown extra words are ignored; repeated NONSCALING is fine.
    assert_eq!(
        call!(c, "BF.RESERVE", "a", "0.01", "100", "x", "y", "z"),
        ok()
    );
    assert_eq!(
        call!(c, "BF.RESERVE", "b", "0.01", "100", "EXPANSION", "2", "y"),
        ok()
    );
    assert_eq!(
        call!(
            c,
            "BF.RESERVE",
            "n",
            "0.01",
            "100",
            "nonscaling",
            "NONSCALING"
        ),
        ok()
    );
    assert_eq!(call!(c, "BF.INFO", "n", "expansion"), Array(vec![Nil]));
    assert_eq!(
        call!(c, "BF.RESERVE", "a", "0.01", "100"),
        err("ERR item exists")
    );
    assert_eq!(call!(c, "SET", "s", "v"), ok());
    assert_eq!(
        call!(c, "BF.RESERVE", "s", "0.01", "100"),
        err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
}

#[test]
fn keywords_are_only_options() {
    // Deviation D3: a key or number that happens to be a keyword is not one.
    let (_s, mut c) = server();
    assert_eq!(call!(c, "BF.RESERVE", "NONSCALING", "0.01", "100"), ok());
    assert_eq!(call!(c, "BF.INFO", "NONSCALING", "expansion"), ints(&[2]));
    assert_eq!(call!(c, "BF.RESERVE", "EXPANSION", "0.01", "100"), ok());
    assert_eq!(call!(c, "BF.INFO", "EXPANSION", "expansion"), ints(&[2]));
}

#[test]
fn memory_limits() {
    // Deviations D1 and D2: refused with an error instead of aborting or building 8 bytes.
    let (mut s, mut c) = server();
    let oom = too_large(DEFAULT_MAX_FILTER_BYTES);
    assert_replies(
        &mut c,
        &[
            (&["BF.RESERVE", "k", "0.01", "100000000000000"], oom.clone()),
            (
                &["BF.RESERVE", "k", "0.01", "9223372036854775807"],
                oom.clone(),
            ),
            (
                &[
                    "BF.INSERT",
                    "k",
                    "CAPACITY",
                    "100000000000000",
                    "ITEMS",
                    "a",
                ],
                oom.clone(),
            ),
        ],
    );
    assert_eq!(call!(c, "EXISTS", "k"), Int(0));
    assert!(s.alive());
    assert_eq!(call!(c, "PING"), Simple("PONG".into()));
}

#[test]
fn scale_out_beyond_the_limit_is_refused() {
    let s = Server::build(&["MAX_FILTER_BYTES", "4096"], &[]);
    let mut c = s.client();
    assert_eq!(
        call!(c, "BF.RESERVE", "k", "0.01", "1000", "EXPANSION", "10"),
        ok()
    );
    let mut args = vec!["BF.MADD".to_string(), "k".to_string()];
    args.extend((0..1100).map(|i| i.to_string()));
    let replies = c.call(&args).array();
    assert!(replies.contains(&cannot_grow(4096)));
    assert_eq!(call!(c, "BF.INFO", "k", "filters"), ints(&[1]));
    assert_eq!(
        call!(c, "BF.RESERVE", "big", "0.01", "4000"),
        too_large(4096)
    );
}

#[test]
fn add_errors() {
    let (_s, mut c) = server();
    assert_replies(
        &mut c,
        &[
            (
                &["BF.ADD", "k"],
                err("ERR wrong number of arguments for 'bf.add' command"),
            ),
            (
                &["BF.ADD", "k", "a", "b"],
                err("ERR wrong number of arguments for 'bf.add' command"),
            ),
            (
                &["BF.MADD", "k"],
                err("ERR wrong number of arguments for 'bf.madd' command"),
            ),
            (
                &["BF.EXISTS", "k"],
                err("ERR wrong number of arguments for 'bf.exists' command"),
            ),
            (
                &["BF.EXISTS", "k", "a", "b"],
                err("ERR wrong number of arguments for 'bf.exists' command"),
            ),
            (
                &["BF.MEXISTS", "k"],
                err("ERR wrong number of arguments for 'bf.mexists' command"),
            ),
            (
                &["BF.CARD"],
                err("ERR wrong number of arguments for 'bf.card' command"),
            ),
            (
                &["BF.DEBUG"],
                err("ERR wrong number of arguments for 'bf.debug' command"),
            ),
        ],
    );
    assert_eq!(call!(c, "SET", "s", "v"), ok());
    let wrongtype = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    assert_replies(
        &mut c,
        &[
            (&["BF.ADD", "s", "a"], wrongtype.clone()),
            (&["BF.MADD", "s", "a"], wrongtype.clone()),
            (&["BF.CARD", "s"], wrongtype.clone()),
            (&["BF.DEBUG", "s"], wrongtype.clone()),
            (&["BF.INFO", "s"], wrongtype.clone()),
            (&["BF.INFO", "s", "bogus"], wrongtype.clone()),
        ],
    );
    // EXISTS answers "not present" on missing keys and on other types.
    assert_eq!(call!(c, "BF.EXISTS", "s", "a"), Int(0));
    assert_eq!(call!(c, "BF.MEXISTS", "s", "a", "b"), ints(&[0, 0]));
    assert_eq!(call!(c, "BF.MEXISTS", "missing", "a", "b"), ints(&[0, 0]));
    assert_eq!(call!(c, "BF.DEBUG", "missing"), err("ERR not found"));
}

#[test]
fn non_scaling_filter_full() {
    let (_s, mut c) = server();
    assert_eq!(
        call!(c, "BF.RESERVE", "ns", "0.01", "3", "NONSCALING"),
        ok()
    );
    assert_eq!(call!(c, "BF.MADD", "ns", "a", "b", "c"), ints(&[1, 1, 1]));
    assert_eq!(call!(c, "BF.ADD", "ns", "a"), Int(0));
    assert_eq!(
        call!(c, "BF.ADD", "ns", "q"),
        err("ERR non scaling filter is full")
    );
    assert_eq!(
        call!(c, "BF.MADD", "ns", "a", "g", "h"),
        Array(vec![Int(0), err("ERR non scaling filter is full")])
    );
    assert_eq!(call!(c, "BF.CARD", "ns"), Int(3));
}

#[test]
fn insert_options() {
    let (_s, mut c) = server();
    assert_eq!(
        call!(c, "BF.INSERT", "k", "ITEMS", "ITEMS", "CAPACITY"),
        ints(&[1, 1])
    );
    assert_eq!(
        call!(c, "BF.MEXISTS", "k", "ITEMS", "CAPACITY"),
        ints(&[1, 1])
    );
    assert_eq!(call!(c, "BF.INSERT", "a", "ixx", "x"), ints(&[1]));
    assert_eq!(
        call!(
            c,
            "BF.INSERT",
            "b",
            "cap",
            "10",
            "CAPACITY",
            "20",
            "exp",
            "5",
            "eRR",
            "0.1",
            "ITEMS",
            "x"
        ),
        ints(&[1])
    );
    assert_eq!(
        info_values(&mut c, "b"),
        [Int(20), Int(112), Int(1), Int(1), Int(5)]
    );
    assert_eq!(
        call!(c, "BF.INSERT", "n", "nonsense", "ITEMS", "x"),
        ints(&[1])
    );
    assert_eq!(call!(c, "BF.INFO", "n", "expansion"), Array(vec![Nil]));
    assert_eq!(
        call!(
            c,
            "BF.INSERT",
            "ne",
            "NONSCALING",
            "EXPANSION",
            "4",
            "ITEMS",
            "x"
        ),
        ints(&[1])
    );
    assert_eq!(call!(c, "BF.INFO", "ne", "expansion"), Array(vec![Nil]));
    assert_eq!(
        call!(c, "BF.INSERT", "nc", "nocreateXYZ", "ITEMS", "x"),
        err("ERR not found")
    );
    assert_eq!(
        call!(
            c,
            "BF.INSERT",
            "b",
            "NOCREATE",
            "CAPACITY",
            "5000",
            "ITEMS",
            "y"
        ),
        ints(&[1])
    );
    assert_eq!(call!(c, "BF.INFO", "b", "capacity"), ints(&[20]));
    assert_eq!(call!(c, "EXISTS", "nc"), Int(0));
}

#[test]
fn insert_errors() {
    let (_s, mut c) = server();
    let arity = err("ERR wrong number of arguments for 'bf.insert' command");
    assert_replies(
        &mut c,
        &[
            (&["BF.INSERT", "k", "ITEMS"], arity.clone()),
            (
                &["BF.INSERT", "k", "CAPACITY", "10", "ITEMS"],
                arity.clone(),
            ),
            (
                &["BF.INSERT", "k", "CAPACITY", "10", "NOCREATE"],
                arity.clone(),
            ),
            (&["BF.INSERT", "k", "NOCREATE", "CAPACITY"], arity.clone()),
            (&["BF.INSERT", "k", "NOCREATE", "ERROR"], arity.clone()),
            (
                &["BF.INSERT", "k", "bogus", "ITEMS", "a"],
                err("Unknown argument received"),
            ),
            (
                &["BF.INSERT", "k", "", "ITEMS", "a"],
                err("Unknown argument received"),
            ),
            (
                &["BF.INSERT", "k", "ERROR", "x", "ITEMS", "a"],
                err("Bad error rate"),
            ),
            (
                &["BF.INSERT", "k", "e", "0.5", "ITEMS", "a"],
                err("Bad expansion"),
            ),
            (
                &["BF.INSERT", "k", "CAPACITY", "1.5", "ITEMS", "a"],
                err("Bad capacity"),
            ),
            (
                &["BF.INSERT", "k", "ERROR", "1", "ITEMS", "a"],
                err("Bad argument received"),
            ),
            (
                &["BF.INSERT", "k", "ERROR", "0", "ITEMS", "a"],
                err("Bad argument received"),
            ),
            (
                &["BF.INSERT", "k", "CAPACITY", "0", "ITEMS", "a"],
                err("Bad argument received"),
            ),
            (
                &["BF.INSERT", "k", "EXPANSION", "0", "ITEMS", "a"],
                err("Bad argument received"),
            ),
        ],
    );
    assert_eq!(call!(c, "EXISTS", "k"), Int(0));
    assert_eq!(call!(c, "SET", "s", "v"), ok());
    let wrongtype = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    assert_eq!(call!(c, "BF.INSERT", "s", "ITEMS", "a"), wrongtype);
    assert_eq!(
        call!(c, "BF.INSERT", "s", "NOCREATE", "ITEMS", "a"),
        wrongtype
    );
}

#[test]
fn scandump_and_loadchunk() {
    let (_s, mut c) = server();
    assert_eq!(call!(c, "BF.RESERVE", "bf", "0.01", "10"), ok());
    for i in 0..25 {
        call!(c, "BF.ADD", "bf", format!("item{i}"));
    }
    let chunks = scandump(&mut c, "BF.SCANDUMP", "bf");
    let hex: Vec<(i64, String)> = chunks
        .iter()
        .map(|(i, b)| (*i, b.iter().map(|x| format!("{x:02x}")).collect()))
        .collect();
    assert_eq!(hex[1], (17, "a5d8f59a8d6a88c68707d084d1c42a1b".to_string()));
    assert_eq!(
        hex[2],
        (
            49,
            "550a2d54cd55741c15d48e981641d0b0ef04c5c900c5e155a1578421778047c7".to_string()
        )
    );
    assert_eq!(hex[0].1.len(), 126 * 2);
    assert_eq!(
        call!(c, "BF.SCANDUMP", "bf", "49"),
        Array(vec![Int(0), bulk("")])
    );
    assert_eq!(
        call!(c, "BF.SCANDUMP", "bf", "-1"),
        Array(vec![Int(0), bulk("")])
    );
    assert_eq!(
        call!(c, "BF.SCANDUMP", "bf", "5"),
        Array(vec![Int(17), bulk(&chunks[1].1[4..])])
    );

    load_chunks(&mut c, "BF.LOADCHUNK", "copy", &chunks);
    assert_eq!(scandump(&mut c, "BF.SCANDUMP", "copy"), chunks);
    assert_eq!(call!(c, "BF.EXISTS", "copy", "item7"), Int(1));
    assert_eq!(call!(c, "BF.CARD", "copy"), Int(25));

    // Header only: a usable, empty filter with the header's counters.
    assert_eq!(
        call!(c, "BF.LOADCHUNK", "empty", 1, chunks[0].1.clone()),
        ok()
    );
    assert_eq!(call!(c, "BF.EXISTS", "empty", "item7"), Int(0));
    assert_eq!(call!(c, "BF.CARD", "empty"), Int(25));
}

#[test]
fn scandump_and_loadchunk_errors() {
    let (_s, mut c) = server();
    assert_eq!(call!(c, "BF.RESERVE", "bf", "0.01", "10"), ok());
    let header = call!(c, "BF.SCANDUMP", "bf", "0").array()[1].bytes();
    assert_replies(
        &mut c,
        &[
            (
                &["BF.SCANDUMP", "bf"],
                err("ERR wrong number of arguments for 'bf.scandump' command"),
            ),
            (&["BF.SCANDUMP", "missing", "x"], err("ERR not found")),
            (
                &["BF.SCANDUMP", "bf", "x"],
                err("Second argument must be numeric"),
            ),
            (
                &["BF.LOADCHUNK", "bf", "1"],
                err("ERR wrong number of arguments for 'bf.loadchunk' command"),
            ),
            (
                &["BF.LOADCHUNK", "missing", "x", "data"],
                err("ERR Second argument must be numeric"),
            ),
            (
                &["BF.LOADCHUNK", "missing", "17", "data"],
                err("ERR not found"),
            ),
            (
                &["BF.LOADCHUNK", "missing", "1", "garbage"],
                err("ERR received bad data"),
            ),
        ],
    );
    assert_eq!(
        call!(c, "BF.LOADCHUNK", "bf", "1", header.clone()),
        err("ERR received bad data")
    );
    assert_replies(
        &mut c,
        &[
            (
                &["BF.LOADCHUNK", "bf", "0", "x"],
                err("ERR received bad data"),
            ),
            (
                &["BF.LOADCHUNK", "bf", "-4", "x"],
                err("ERR received bad data"),
            ),
            (
                &["BF.LOADCHUNK", "bf", "3", "xyz"],
                err("ERR invalid offset - no link found"),
            ),
            (
                &["BF.LOADCHUNK", "bf", "500", "xyz"],
                err("ERR invalid offset - no link found"),
            ),
        ],
    );
    assert_eq!(
        call!(c, "BF.LOADCHUNK", "bf", "18", vec![0xffu8; 17]),
        err("ERR invalid chunk - Too big for current filter")
    );
    assert_eq!(call!(c, "BF.LOADCHUNK", "bf", "5", ""), ok());
    assert_eq!(call!(c, "SET", "s", "v"), ok());
    let wrongtype = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    assert_eq!(call!(c, "BF.SCANDUMP", "s", "0"), wrongtype);
    assert_eq!(
        call!(c, "BF.LOADCHUNK", "s", "1", header.clone()),
        wrongtype
    );
    assert_eq!(call!(c, "BF.LOADCHUNK", "s", "17", "x"), wrongtype);

    // Headers that lie: every one refused, nothing created.
    let lies: Vec<(&str, Vec<u8>)> = vec![
        ("short", header[..19].to_vec()),
        (
            "zero links",
            [&header[..8], &0u32.to_le_bytes(), &header[12..]].concat(),
        ),
        (
            "two links, one record",
            [&header[..8], &2u32.to_le_bytes(), &header[12..]].concat(),
        ),
        (
            "sizes do not add up",
            [&5u64.to_le_bytes(), &header[8..]].concat(),
        ),
        (
            "unknown option",
            [&header[..12], &0x15u32.to_le_bytes(), &header[16..]].concat(),
        ),
        (
            "bits beyond bytes",
            [&header[..28], &1000u64.to_le_bytes(), &header[36..]].concat(),
        ),
        (
            "error rate zero",
            [&header[..44], &0f64.to_le_bytes(), &header[52..]].concat(),
        ),
        (
            "wrong hash count",
            [&header[..60], &3u32.to_le_bytes(), &header[64..]].concat(),
        ),
        ("n2 too large", [&header[..72], &[64u8][..]].concat()),
    ];
    let bad_data = err("ERR received bad data");
    assert_headers_refused(&mut c, "BF.LOADCHUNK", "lie", &lies, &bad_data);
    let huge = [
        &header[..20],
        &(1u64 << 40).to_le_bytes(),
        &(1u64 << 43).to_le_bytes(),
        &header[36..],
    ]
    .concat();
    let no_memory = too_large(DEFAULT_MAX_FILTER_BYTES);
    assert_headers_refused(&mut c, "BF.LOADCHUNK", "lie", &[("huge", huge)], &no_memory);
}

#[test]
fn watch_is_invalidated_by_write_commands() {
    let (s, mut c) = server();
    let mut other = s.client();
    assert_eq!(call!(c, "BF.ADD", "k", "a"), Int(1));
    assert_eq!(call!(c, "WATCH", "k"), ok());
    assert_eq!(call!(other, "BF.ADD", "k", "a"), Int(0));
    assert_eq!(call!(c, "MULTI"), ok());
    assert_eq!(call!(c, "PING"), Simple("QUEUED".into()));
    assert_eq!(call!(c, "EXEC"), NilArray);
    assert_eq!(call!(c, "WATCH", "k"), ok());
    assert_eq!(call!(other, "BF.EXISTS", "k", "a"), Int(1));
    assert_eq!(call!(c, "MULTI"), ok());
    assert_eq!(call!(c, "PING"), Simple("QUEUED".into()));
    assert_eq!(call!(c, "EXEC"), Array(vec![Simple("PONG".into())]));
}

#[test]
fn command_table() {
    let (_s, mut c) = server();
    let expected: [(&str, &[&str]); 11] = [
        ("bf.reserve", &["write", "denyoom", "module"]),
        ("bf.add", &["write", "denyoom", "module"]),
        ("bf.madd", &["write", "denyoom", "module"]),
        ("bf.insert", &["write", "denyoom", "module"]),
        ("bf.exists", &["readonly", "module", "fast"]),
        ("bf.mexists", &["readonly", "module", "fast"]),
        ("bf.info", &["readonly", "module", "fast"]),
        ("bf.card", &["readonly", "module", "fast"]),
        ("bf.debug", &["readonly", "module", "fast"]),
        // Not fast (deviation D16): a reply of up to 16 MiB, built for a sparse filter.
        ("bf.scandump", &["readonly", "module"]),
        ("bf.loadchunk", &["write", "denyoom", "module"]),
    ];
    for (name, flags) in expected {
        let info = call!(c, "COMMAND", "INFO", name).array()[0].array();
        assert_eq!(info[0], bulk(name));
        assert_eq!(info[1], Int(-1));
        assert_eq!(
            info[2],
            Array(flags.iter().map(|f| Simple(f.to_string())).collect()),
            "{name}"
        );
        assert_eq!(&info[3..6], &[Int(1), Int(1), Int(1)]);
        assert_eq!(
            call!(c, "COMMAND", "GETKEYS", name, "thekey", "x", "y"),
            Array(vec![bulk("thekey")])
        );
    }
}

#[test]
fn module_identity() {
    let (_s, mut c) = server();
    // Redis 8 also lists its built-in `vectorset`, in dictionary order: find `bf` by name.
    let modules = call!(c, "MODULE", "LIST").array();
    let ours: Vec<Vec<Reply>> = modules
        .iter()
        .map(Reply::array)
        .filter(|fields| fields[0..2] == [bulk("name"), bulk("bf")])
        .collect();
    assert_eq!(ours.len(), 1, "{modules:?}");
    let fields = &ours[0];
    // RedisBloom 2.8.20's version, which clients read to tell RedisBloom from other modules.
    assert_eq!(fields[2..4], [bulk("ver"), Int(20820)]);
    // bloomrs's own version is the first field of its INFO section.
    let section = call!(c, "INFO", "bf").text();
    let first = section.lines().nth(1).unwrap_or_default();
    assert_eq!(
        first,
        format!("bf_bloomrs_version:{}", env!("CARGO_PKG_VERSION"))
    );
    let info = call!(c, "INFO", "modules").text();
    // Valkey 9 adds the atomic slot migration option (tests/slot_migration.rs).
    assert!(info.contains("options=[handle-io-errors"), "{info}");
}

#[test]
fn module_arguments() {
    let s = Server::build(&["ERROR_RATE", "0.001", "INITIAL_SIZE", "1000"], &[]);
    let mut c = s.client();
    assert_eq!(call!(c, "BF.ADD", "k", "x"), Int(1));
    assert_eq!(
        info_values(&mut c, "k"),
        [Int(1000), Int(2080), Int(1), Int(1), Int(2)]
    );
    let empty = Server::build(&[""], &[]);
    assert_eq!(call!(empty.client(), "PING"), Simple("PONG".into()));
    let cases: [(&[&str], &str); 9] = [
        (
            &["INITIAL_SIZE", "x"],
            "Invalid argument for 'INITIAL_SIZE'",
        ),
        (&["INITIAL_SIZE", "0"], "INITIAL_SIZE must be > 0"),
        (&["ERROR_RATE", "x"], "Invalid argument for 'ERROR_RATE'"),
        (&["ERROR_RATE", "0"], "ERROR_RATE must be > 0"),
        (&["ERROR_RATE", "1"], "ERROR_RATE must be < 1"),
        (
            &["CF_MAX_EXPANSIONS", "0"],
            "CF_MAX_EXPANSIONS must be an integer >= 1",
        ),
        (
            &["BOGUS", "1"],
            "Unrecognized option `BOGUS`: the module arguments are",
        ),
        (&["ERROR_RATE"], "Invalid number of arguments passed"),
        (
            &["INITIAL_SIZE", "1.5"],
            "Invalid argument for 'INITIAL_SIZE'",
        ),
    ];
    for (args, message) in cases {
        let log = failed_start_log(args);
        assert!(log.contains(message), "{args:?}: {log}");
    }
}
