//! Memory admission (deviation D13) for valkey-bloom's values (`bloomfltr`): with `maxmemory`
//! set, creating one, scaling one out, `BF.LOAD`, `BF.LOADCHUNK`, `RESTORE` and `COPY` past
//! what is left are refused and change nothing; with room, the same commands succeed.
pub mod common;

use common::*;

/// A `SEED` makes `BF.INSERT` valkey-bloom's (its own option).
const SEED: &str = "valkey-bloom-seed-of-32-bytes-xx";

/// valkey-bloom's refusal of an object past its memory limit.
const OVER_LIMIT: &str = "ERR operation exceeds bloom object memory limit";

#[test]
fn valkey_bloom_creation_and_copy_past_maxmemory_are_refused() {
    let server = server_with_maxmemory("24mb");
    let mut c = server.client();
    assert_eq!(call!(c, "CONFIG", "SET", "bf.bf-valkey-bloom", "yes"), ok());
    // About 24 MB each: far under bf.max-filter-bytes (4 GiB), over maxmemory.
    refused(
        &mut c,
        &bytes(&["BF.RESERVE", "big", "0.01", "20000000"]),
        D1,
        "big",
    );
    let insert = ["BF.INSERT", "big", "CAPACITY", "20000000", "SEED", SEED];
    refused(&mut c, &bytes(&insert), OVER_LIMIT, "big");
    assert_eq!(
        call!(c, "CONFIG", "SET", "bf.bf-initial-size", "20000000"),
        ok()
    );
    refused(&mut c, &bytes(&["BF.ADD", "big", "a"]), D1, "big");
    assert_eq!(call!(c, "CONFIG", "SET", "bf.bf-initial-size", "100"), ok());
    // A 12 MB filter fits once, not twice, and does not copy.
    assert_eq!(call!(c, "BF.RESERVE", "fits", "0.01", "10000000"), ok());
    assert_eq!(call!(c, "TYPE", "fits"), Simple("bloomfltr".into()));
    let second = ["BF.RESERVE", "second", "0.01", "10000000"];
    refused(&mut c, &bytes(&second), D1, "second");
    let copy = ["COPY", "fits", "fits:copy"];
    refused(
        &mut c,
        &bytes(&copy),
        "ERR module key failed to copy",
        "fits:copy",
    );
    // With room, the same commands succeed.
    assert_eq!(call!(c, "CONFIG", "SET", "maxmemory", "0"), ok());
    assert_eq!(call!(c, "BF.RESERVE", "second", "0.01", "10000000"), ok());
    assert_eq!(call!(c, "COPY", "fits", "fits:copy"), Int(1));
    assert_eq!(call!(c, "TYPE", "fits:copy"), Simple("bloomfltr".into()));
}

#[test]
fn valkey_bloom_loads_past_maxmemory_are_refused() {
    let server = server_with_maxmemory("24mb");
    let mut c = server.client();
    // A 12 MB valkey-bloom filter made while maxmemory is off: its DUMP, its SCANDUMP header
    // and the BF.LOAD blob that header holds after `bloomrsL`.
    assert_eq!(call!(c, "CONFIG", "SET", "maxmemory", "0"), ok());
    let insert = call!(c, "BF.INSERT", "src", "CAPACITY", "10000000", "SEED", SEED);
    // Without ITEMS, valkey-bloom's BF.INSERT only creates the filter.
    assert_eq!(insert, Array(vec![]));
    assert_eq!(call!(c, "BF.ADD", "src", "a"), Int(1));
    let dump = call!(c, "DUMP", "src").bytes();
    let header = scandump(&mut c, "BF.SCANDUMP", "src")[0].1.clone();
    assert!(header.starts_with(b"bloomrsL"));
    let blob = header[8..].to_vec();
    let digest = call!(c, "DEBUG", "DIGEST-VALUE", "src");
    delete(&mut c, &["src"]);
    // 13.8 MB: what is left under 24 MB holds no copy.
    assert_eq!(call!(c, "BF.RESERVE", "ballast", "0.01", "10000000"), ok());
    assert_eq!(call!(c, "CONFIG", "SET", "maxmemory", "24mb"), ok());
    let loads: [&[&[u8]]; 3] = [
        &[b"RESTORE", b"copy", b"0", &dump],
        &[b"BF.LOADCHUNK", b"copy", b"1", &header],
        &[b"BF.LOAD", b"copy", &blob],
    ];
    let replies = ["ERR Bad data format", D1, OVER_LIMIT];
    // A command whose argument is the whole value may meet the server's own refusal first:
    // its argument counts as used memory before the command runs.
    let oom = "OOM command not allowed when used memory > 'maxmemory'.";
    for (load, reply) in loads.iter().zip(replies) {
        let text = refused(&mut c, load, "", "copy");
        assert!(text.starts_with(reply) || text == oom, "{text}");
    }
    assert_eq!(call!(c, "CONFIG", "SET", "maxmemory", "0"), ok());
    for load in loads {
        assert_eq!(c.call(load), ok());
        assert_eq!(call!(c, "DEBUG", "DIGEST-VALUE", "copy"), digest);
        delete(&mut c, &["copy"]);
    }
}

#[test]
fn valkey_bloom_scale_out_past_maxmemory_is_refused() {
    let server = server_with_maxmemory("24mb");
    let mut c = server.client();
    // Filters of 1,000, 10,000 and 100,000 items (156 KB); the fourth holds 1,000,000
    // (1.74 MB at 0.01 · 0.5³).
    let insert = ["BF.INSERT", "grows", "CAPACITY", "1000", "EXPANSION", "10"];
    let created = c.call(&[&insert[..], &["SEED", SEED]].concat());
    assert_eq!(created, Array(vec![]));
    let items: Vec<String> = (0..12_000).map(|i| format!("item:{i}")).collect();
    madd_in_batches(&mut c, "grows", &items);
    assert_eq!(call!(c, "BF.INFO", "grows", "FILTERS"), Int(3));
    // RedisBloom filters of about 1 MB each fill what is left until one is refused: less
    // than 1 MB is then free.
    let ballast = (0..30).find(|n| {
        let key = format!("ballast:{n}");
        matches!(call!(c, "BF.RESERVE", key, "0.01", "700000"), Error(_))
    });
    assert!(ballast.is_some(), "24 MB held 30 filters of 1 MB");
    let before = used_memory(&mut c);
    let mut refusal = None;
    for i in 12_000..120_000 {
        let reply = call!(c, "BF.ADD", "grows", format!("item:{i}"));
        if let Error(text) = reply {
            refusal = Some((i, text));
            break;
        }
    }
    let (at, text) = refusal.expect("the fourth filter was refused");
    assert_eq!(text, OVER_LIMIT);
    assert_eq!(call!(c, "BF.INFO", "grows", "FILTERS"), Int(3));
    let card = call!(c, "BF.CARD", "grows");
    let madd = call!(c, "BF.MADD", "grows", format!("item:{at}"), "other");
    assert_eq!(madd, Array(vec![err(OVER_LIMIT)]));
    assert_eq!(call!(c, "BF.CARD", "grows"), card);
    assert_quiet(&mut c, before);
    // With room, the same add scales out.
    assert_eq!(call!(c, "CONFIG", "SET", "maxmemory", "0"), ok());
    assert_eq!(call!(c, "BF.ADD", "grows", format!("item:{at}")), Int(1));
    assert_eq!(call!(c, "BF.INFO", "grows", "FILTERS"), Int(4));
}
