//! RESTORE payloads with broken content but a valid checksum: refused with an error, the
//! server stays up and the data set is unchanged (deviation D6). Old encodings load.
pub mod common;

use common::RdbField::{Buffer, Double, Unsigned};
use common::*;

#[test]
fn crc64_matches_redis() {
    assert_eq!(crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
}

/// The primitives of a one-link filter as `BF.RESERVE k 0.01 10` writes it (encoding 4).
fn one_link() -> Vec<RdbField> {
    let bpe = -(0.005f64.ln()) / 0.480_453_013_918_201;
    vec![
        Unsigned(0),   // items
        Unsigned(1),   // links
        Unsigned(5),   // options: NOROUND | FORCE64
        Unsigned(2),   // growth
        Unsigned(10),  // link capacity
        Double(0.005), // link error
        Unsigned(8),   // hashes
        Double(bpe),   // bits per entry
        Unsigned(128), // bits
        Unsigned(0),   // n2
        Buffer(vec![0; 16]),
        Unsigned(0), // link items
    ]
}

fn restore(c: &mut Client, key: &str, payload: Vec<u8>) -> Reply {
    call!(c, "RESTORE", key, "0", payload)
}

#[test]
fn a_crafted_payload_equals_a_real_one() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(call!(c, "BF.RESERVE", "real", "0.01", "10"), ok());
    let crafted = module_payload(BLOOM_TYPE_ID, 4, &one_link());
    assert_eq!(
        call!(c, "DUMP", "real").bytes(),
        as_dumped_here(&mut c, &crafted)
    );
    assert_eq!(restore(&mut c, "k", crafted), ok());
}

#[test]
fn broken_values_are_refused() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(call!(c, "BF.ADD", "keep", "x"), Int(1));
    let digest = call!(c, "DEBUG", "DIGEST");
    let mutations: Vec<(&str, usize, RdbField)> = vec![
        ("no links", 1, Unsigned(0)),
        ("sizes do not add up", 0, Unsigned(3)),
        ("unknown option", 2, Unsigned(0x10)),
        ("options beyond 32 bits", 2, Unsigned(1 << 40)),
        ("error rate 0", 5, Double(0.0)),
        ("error rate 1", 5, Double(1.0)),
        ("error rate NaN", 5, Double(f64::NAN)),
        ("wrong hash count", 6, Unsigned(7)),
        ("bits beyond the array", 8, Unsigned(129)),
        ("no bits", 8, Unsigned(0)),
        ("n2 too large", 9, Unsigned(64)),
        ("2^n2 beyond the array", 9, Unsigned(10)),
        ("array shorter than the bits", 10, Buffer(vec![0; 8])),
        ("hashes for an absurd bpe", 7, Double(1e9)),
        ("a number where a string is", 10, Unsigned(16)),
    ];
    for (what, index, field) in mutations {
        let mut fields = one_link();
        fields[index] = field;
        let reply = restore(&mut c, "bad", module_payload(BLOOM_TYPE_ID, 4, &fields));
        assert_eq!(reply, err("ERR Bad data format"), "{what}");
    }
    let mut truncated = one_link();
    truncated.pop();
    assert_eq!(
        restore(&mut c, "bad", module_payload(BLOOM_TYPE_ID, 4, &truncated)),
        err("ERR Bad data format")
    );
    let mut two_links_one_given = one_link();
    two_links_one_given[1] = Unsigned(2);
    assert_eq!(
        restore(
            &mut c,
            "bad",
            module_payload(BLOOM_TYPE_ID, 4, &two_links_one_given)
        ),
        err("ERR Bad data format")
    );
    assert_eq!(
        restore(&mut c, "bad", module_payload(BLOOM_TYPE_ID, 5, &one_link())),
        err("ERR Bad data format")
    );

    assert_eq!(call!(c, "PING"), Simple("PONG".into()));
    assert_eq!(call!(c, "EXISTS", "bad"), Int(0));
    assert_eq!(call!(c, "DEBUG", "DIGEST"), digest);
    assert_eq!(call!(c, "BF.EXISTS", "keep", "x"), Int(1));
}

#[test]
fn a_filter_over_the_memory_limit_is_refused() {
    let s = Server::build(&["MAX_FILTER_BYTES", "4096"], &[]);
    let mut c = s.client();
    let mut fields = one_link();
    let bpe = -(0.005f64.ln()) / 0.480_453_013_918_201;
    fields[4] = Unsigned(10_000);
    fields[7] = Double(bpe);
    fields[8] = Unsigned(8192 * 8);
    fields[10] = Buffer(vec![0; 8192]);
    assert_eq!(
        restore(&mut c, "big", module_payload(BLOOM_TYPE_ID, 4, &fields)),
        err("ERR Bad data format")
    );
    assert_eq!(call!(c, "PING"), Simple("PONG".into()));
}

#[test]
fn random_byte_mutations_of_real_payloads() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(
        call!(c, "BF.RESERVE", "src", "0.01", "20", "EXPANSION", "3"),
        ok()
    );
    for i in 0..200 {
        call!(c, "BF.ADD", "src", format!("{i}"));
    }
    let payload = call!(c, "DUMP", "src").bytes();
    let before = call!(c, "DEBUG", "DIGEST-VALUE", "src");
    // A fixed-seed generator: every run tries the same mutations.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let body_len = payload.len() - 10;
    let (mut accepted, mut refused) = (0, 0);
    for round in 0..400 {
        let mut mutated = payload.clone();
        for _ in 0..1 + next() % 3 {
            let at = 10 + (next() as usize % (body_len - 10));
            mutated[at] = next() as u8;
        }
        let key = format!("m{round}");
        match restore(&mut c, &key, with_valid_crc(&mutated)) {
            r if r == ok() => {
                accepted += 1;
                // Whatever was accepted answers, saves and loads again.
                call!(c, "BF.ADD", key.as_str(), "probe");
                let dumped = call!(c, "DUMP", key.as_str()).bytes();
                assert_eq!(call!(c, "DEL", key.as_str()), Int(1));
                assert_eq!(restore(&mut c, &key, dumped), ok());
            }
            Error(_) => refused += 1,
            other => panic!("unexpected reply {other:?}"),
        }
    }
    assert_eq!(accepted + refused, 400);
    assert!(refused > 0);
    assert_eq!(call!(c, "DEBUG", "DIGEST-VALUE", "src"), before);
    assert_eq!(call!(c, "DEBUG", "RELOAD"), ok());
}

#[test]
fn old_encodings_load() {
    let s = Server::start();
    let mut c = s.client();
    // Encoding 2/3: options but no growth (growth defaults to 2).
    let mut v3 = one_link();
    v3.remove(3);
    assert_old_encoding_loads(&mut c, "v3", 3, &v3);
    assert_eq!(call!(c, "BF.INFO", "v3", "expansion"), ints(&[2]));
    // Encoding 1: no options (32-bit hashing, power-of-two sizing), bits and n2 present.
    let bpe = -(0.01f64.ln()) / 0.480_453_013_918_201;
    let v1 = vec![
        Unsigned(0),
        Unsigned(1),
        Unsigned(13),
        Double(0.01),
        Unsigned(7),
        Double(bpe),
        Unsigned(128),
        Unsigned(7),
        Buffer(vec![0; 16]),
        Unsigned(0),
    ];
    assert_old_encoding_loads(&mut c, "v1", 1, &v1);
    assert_eq!(
        call!(c, "BF.DEBUG", "v1").array()[1],
        bulk("bytes:16 bits:128 hashes:7 hashwidth:32 capacity:13 size:1 ratio:0.01")
    );
    // Encoding 0: no bit count (nor n2) either; it is derived from capacity and bits per entry.
    let mut v0 = v1.clone();
    v0.drain(6..8);
    assert_old_encoding_loads(&mut c, "v0", 0, &v0);
    assert_eq!(
        call!(c, "BF.DEBUG", "v0").array()[1],
        bulk("bytes:16 bits:124 hashes:7 hashwidth:32 capacity:13 size:1 ratio:0.01")
    );
    // Saved again as encoding 4, they reload unchanged.
    let debug_all = |c: &mut Client| -> Vec<Reply> {
        ["v0", "v1", "v3"]
            .iter()
            .map(|k| call!(c, "BF.DEBUG", *k))
            .collect()
    };
    let before = debug_all(&mut c);
    assert_eq!(call!(c, "DEBUG", "RELOAD"), ok());
    assert_eq!(debug_all(&mut c), before);
}

/// Restores `fields` as a Bloom payload of encoding `encver`: accepted, the filter then takes an
/// item and finds it.
fn assert_old_encoding_loads(c: &mut Client, key: &str, encver: u64, fields: &[RdbField]) {
    let payload = module_payload(BLOOM_TYPE_ID, encver, fields);
    assert_eq!(restore(c, key, payload), ok(), "{key}");
    assert_eq!(call!(c, "BF.ADD", key, "foo"), Int(1), "{key}");
    assert_eq!(call!(c, "BF.EXISTS", key, "foo"), Int(1), "{key}");
}
