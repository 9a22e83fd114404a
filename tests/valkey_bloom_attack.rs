//! An outsider's attack on valkey-bloom's values (`bloomfltr`).
//!
//! - One field changed: every field of genuine values (the ones valkey-bloom wrote, and ones
//!   this module wrote) set to edge values, through `BF.LOAD` and `RESTORE` (valid CRC). Each is
//!   refused with an error, or loads into a value that answers every read and write, writes back
//!   exactly the bytes it was given, and survives `DEBUG RELOAD`.
//! - Replication and AOF: `MULTI`/`EXEC` and Lua mixes of valkey-bloom's writes (with its
//!   options at edge values), `BF.LOAD`, `RESTORE`, `COPY`, `RENAME`, `DEL`, some failing
//!   part way; the replica holds the same bytes after `WAIT`, and the primary after
//!   `DEBUG LOADAOF` and after `BGREWRITEAOF` and a restart, with and without an RDB preamble.
//! - Scaling edges: tightening near 0 and 1, the memory limit, `VALIDATESCALETO` bounds; one
//!   command's work stays bounded.
//!
//! The short tests run in seconds; `BLOOMRS_ATTACK_ROUNDS` lengthens the ignored campaigns.
pub mod common;

use common::*;

/// splitmix64: seedable, the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, from: &'a [T]) -> &'a T {
        &from[self.below(from.len())]
    }
}

/// `BLOOMRS_ATTACK_SEED` (decimal), else `default`.
fn seed(default: u64) -> u64 {
    std::env::var("BLOOMRS_ATTACK_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn rounds(default: usize) -> usize {
    std::env::var("BLOOMRS_ATTACK_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

const SEED: &str = "valkey-bloom-seed-of-32-bytes-xx";

// ---------------------------------------------------------------------------------------------
// One field changed.

/// Where each field of a `BF.LOAD` blob sits.
struct BlobLayout {
    /// Per filter: offset of its u64 length, of its bytes, of items (i64), of capacity (i64).
    filters: Vec<(usize, usize, usize, usize)>,
}

fn blob_layout(blob: &[u8]) -> Option<BlobLayout> {
    let word = |at: usize| Some(u64::from_le_bytes(blob.get(at..at + 8)?.try_into().ok()?));
    let count = word(22)?;
    let mut at = 30;
    let mut filters = Vec::new();
    for _ in 0..count.min(2000) {
        let len = usize::try_from(word(at)?)
            .ok()
            .filter(|l| *l >= 45 && *l < blob.len())?;
        filters.push((at, at + 8, at + 8 + len, at + 16 + len));
        at += 24 + len;
    }
    (at == blob.len()).then_some(BlobLayout { filters })
}

fn put(blob: &[u8], at: usize, bytes: &[u8]) -> Vec<u8> {
    let mut out = blob.to_vec();
    out[at..at + bytes.len()].copy_from_slice(bytes);
    out
}

const RATES: [f64; 14] = [
    0.0,
    1.0,
    -0.5,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    5e-324,
    f64::MIN_POSITIVE,
    1e-300,
    1e-17,
    0.999_999_999_999_999_9,
    0.5,
    1.5,
    -0.0,
];

/// Every blob that differs from `blob` in one field, with a name saying which.
fn blob_mutations(blob: &[u8]) -> Vec<(String, Vec<u8>)> {
    let layout = blob_layout(blob).expect("a well-formed blob");
    let mut out = Vec::new();
    for v in [0u8, 2, 255] {
        out.push((format!("version {v}"), put(blob, 0, &[v])));
    }
    for e in [0u32, 1, 2, 10, 11, u32::MAX] {
        out.push((format!("expansion {e}"), put(blob, 1, &e.to_le_bytes())));
    }
    for r in RATES {
        out.push((format!("fp {r:e}"), put(blob, 5, &r.to_le_bytes())));
        out.push((format!("tightening {r:e}"), put(blob, 13, &r.to_le_bytes())));
    }
    for s in [0u8, 1, 2, 255] {
        out.push((format!("seed random {s}"), put(blob, 21, &[s])));
    }
    let count = layout.filters.len() as u64;
    for c in [
        0,
        1,
        count.saturating_sub(1),
        count + 1,
        1100,
        1101,
        u64::MAX,
    ] {
        out.push((format!("count {c}"), put(blob, 22, &c.to_le_bytes())));
    }
    out.push(("truncated".into(), blob[..blob.len() - 1].to_vec()));
    out.push(("one byte more".into(), [blob, &[0]].concat()));
    for (i, &(len_at, bytes_at, items_at, cap_at)) in layout.filters.iter().enumerate() {
        let len = (items_at - bytes_at) as u64;
        for l in [0, 44, 45, len - 1, len + 1, u64::MAX] {
            out.push((
                format!("f{i} length {l}"),
                put(blob, len_at, &l.to_le_bytes()),
            ));
        }
        for v in [0u8, 2] {
            out.push((format!("f{i} version {v}"), put(blob, bytes_at, &[v])));
        }
        let bits = len - 45;
        for b in [0, 1, bits - 1, bits + 1, u64::MAX] {
            let name = format!("f{i} header length {b}");
            out.push((name, put(blob, bytes_at + 1, &b.to_le_bytes())));
        }
        for k in [0u32, 1, 64, 1024, 1025, u32::MAX] {
            let name = format!("f{i} k {k}");
            out.push((name, put(blob, bytes_at + 9, &k.to_le_bytes())));
        }
        let mut seed = blob.to_vec();
        seed[bytes_at + 13] ^= 1;
        out.push((format!("f{i} seed"), seed));
        let items = i64::from_le_bytes(blob[items_at..items_at + 8].try_into().unwrap());
        let cap = i64::from_le_bytes(blob[cap_at..cap_at + 8].try_into().unwrap());
        for n in [0, 1, cap - 1, cap, cap + 1, -1, i64::MIN, i64::MAX] {
            let name = format!("f{i} items {n} (was {items})");
            out.push((name, put(blob, items_at, &n.to_le_bytes())));
        }
        for n in [
            0,
            1,
            items,
            items - 1,
            cap * 2 + 1,
            cap / 3,
            -1,
            i64::MIN,
            i64::MAX,
        ] {
            let name = format!("f{i} capacity {n} (was {cap})");
            out.push((name, put(blob, cap_at, &n.to_le_bytes())));
        }
        // All bits set, no bits set.
        let mut full = blob.to_vec();
        full[bytes_at + 45..items_at].fill(0xff);
        out.push((format!("f{i} all bits"), full));
        let mut empty = blob.to_vec();
        empty[bytes_at + 45..items_at].fill(0);
        out.push((format!("f{i} no bits"), empty));
    }
    out
}

/// Every payload that differs from `payload` (a valkey-bloom value's DUMP) in one field.
fn payload_mutations(payload: &Payload) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let n = payload.fields.len();
    let count = match payload.fields[0] {
        RdbField::Unsigned(c) => c,
        _ => panic!("count first"),
    };
    for c in [0, 1, count.saturating_sub(1), count + 1, 1101, u64::MAX] {
        let p = payload.with(0, RdbField::Unsigned(c));
        out.push((format!("rdb count {c}"), p.encode()));
    }
    for e in [0, 1, 10, 11, u64::from(u32::MAX) + 1, u64::MAX] {
        let p = payload.with(1, RdbField::Unsigned(e));
        out.push((format!("rdb expansion {e}"), p.encode()));
    }
    for r in RATES {
        for (i, name) in [(2, "fp"), (3, "tightening")] {
            let p = payload.with(i, RdbField::Double(r));
            out.push((format!("rdb {name} {r:e}"), p.encode()));
        }
    }
    for s in [0, 1, 2, u64::MAX] {
        let p = payload.with(4, RdbField::Unsigned(s));
        out.push((format!("rdb seed random {s}"), p.encode()));
    }
    // Per filter: its bytes (as in a blob), its capacity, the last one's items.
    let mut at = 5;
    let mut index = 0;
    while at < n {
        let RdbField::Buffer(bytes) = &payload.fields[at] else {
            panic!("filter bytes at {at}");
        };
        let RdbField::Unsigned(cap) = payload.fields[at + 1] else {
            panic!("capacity at {}", at + 1);
        };
        let bits = bytes.len() as u64 - 45;
        let mut edits: Vec<(String, Vec<u8>)> = Vec::new();
        for b in [0, bits - 1, bits + 1] {
            edits.push((
                format!("header length {b}"),
                put(bytes, 1, &b.to_le_bytes()),
            ));
        }
        for k in [0u32, 1025, u32::MAX] {
            edits.push((format!("k {k}"), put(bytes, 9, &k.to_le_bytes())));
        }
        edits.push(("version 2".into(), put(bytes, 0, &[2])));
        edits.push(("short".into(), bytes[..bytes.len() - 1].to_vec()));
        edits.push(("longer".into(), [bytes.as_slice(), &[0]].concat()));
        edits.push(("header only".into(), bytes[..45].to_vec()));
        let mut seed = bytes.clone();
        seed[13] ^= 0x80;
        edits.push(("seed".into(), seed));
        for (name, edit) in edits {
            let p = payload.with(at, RdbField::Buffer(edit));
            out.push((format!("rdb f{index} {name}"), p.encode()));
        }
        for c in [0, 1, cap - 1, cap * 2 + 1, i64::MAX as u64, u64::MAX] {
            let p = payload.with(at + 1, RdbField::Unsigned(c));
            out.push((format!("rdb f{index} capacity {c} (was {cap})"), p.encode()));
        }
        at += 2;
        if at + 1 == n {
            for i in [0, cap - 1, cap, cap + 1, i64::MAX as u64, u64::MAX] {
                let p = payload.with(at, RdbField::Unsigned(i));
                out.push((format!("rdb last items {i}"), p.encode()));
            }
            at += 1;
        }
        index += 1;
    }
    // One field fewer, one more.
    let mut fewer = payload.clone();
    fewer.fields.pop();
    out.push(("rdb last field missing".into(), fewer.encode()));
    let mut more = payload.clone();
    more.fields.push(RdbField::Unsigned(7));
    out.push(("rdb one field more".into(), more.encode()));
    out
}

/// A server whose DUMPs can be taken apart (no compression).
fn attack_server() -> Server {
    Server::build(&[], &["--rdbcompression", "no"])
}

/// Values this module writes: scaled, non-scaling, fixed seed, given seed, extreme rates.
fn module_written(c: &mut Client) -> Vec<String> {
    assert_eq!(call!(c, "CONFIG", "SET", "bf.bf-valkey-bloom", "yes"), ok());
    let mut keys = Vec::new();
    let specs: [&[&str]; 6] = [
        &["BF.INSERT", "w:seeded", "CAPACITY", "10", "SEED", SEED],
        &[
            "BF.INSERT",
            "w:tight",
            "CAPACITY",
            "3",
            "ERROR",
            "0.3",
            "TIGHTENING",
            "0.01",
            "EXPANSION",
            "1",
            "SEED",
            SEED,
        ],
        &["BF.RESERVE", "w:nonscaling", "0.001", "8", "NONSCALING"],
        &["BF.RESERVE", "w:exp10", "0.9", "2", "EXPANSION", "10"],
        &[
            "BF.INSERT",
            "w:loose",
            "CAPACITY",
            "4",
            "ERROR",
            "0.999",
            "TIGHTENING",
            "0.999",
            "SEED",
            SEED,
        ],
        &["BF.RESERVE", "w:tiny", "1e-10", "1"],
    ];
    for spec in specs {
        let reply = c.call(spec);
        assert!(!matches!(reply, Error(_)), "{spec:?}: {reply:?}");
        let key = spec[1].to_string();
        for j in 0..40 {
            c.call(&["BF.ADD", &key, &format!("item:{j}")]);
        }
        keys.push(key);
    }
    assert_eq!(call!(c, "CONFIG", "SET", "bf.bf-valkey-bloom", "no"), ok());
    keys
}

/// The `BF.LOAD` blob of a key (its SCANDUMP header after the magic).
fn blob_of(c: &mut Client, key: &str) -> Vec<u8> {
    let header = scandump(c, "BF.SCANDUMP", key)[0].1.clone();
    assert!(header.starts_with(b"bloomrsL"), "{key}");
    header[8..].to_vec()
}

/// Exercises a loaded value: reads, writes that scale it, its encodings loading back as the
/// same value. Returns a line per inconsistency.
fn exercise(c: &mut Client, key: &str, given_blob: Option<&[u8]>, given_dump: Option<&[u8]>) {
    let blob = blob_of(c, key);
    if let Some(given) = given_blob {
        assert_eq!(blob, given, "{key}: written back as given");
    }
    let dump = call!(c, "DUMP", key).bytes();
    if let Some(given) = given_dump {
        assert_eq!(
            dump[..dump.len() - 10],
            given[..given.len() - 10],
            "{key}: DUMP as given"
        );
    }
    let digest = call!(c, "DEBUG", "DIGEST-VALUE", key);
    // Its DUMP restores and its blob loads, to the same value.
    let copy = format!("{key}:copy");
    assert_eq!(
        c.call(&[b"RESTORE".as_slice(), copy.as_bytes(), b"0", &dump]),
        ok(),
        "{key}: own DUMP"
    );
    assert_eq!(call!(c, "DEBUG", "DIGEST-VALUE", &copy), digest);
    let loaded = format!("{key}:load");
    assert_eq!(
        c.call(&[b"BF.LOAD".as_slice(), loaded.as_bytes(), &blob]),
        ok(),
        "{key}: own blob"
    );
    assert_eq!(call!(c, "DEBUG", "DIGEST-VALUE", &loaded), digest);
    // Reads.
    for command in [
        vec!["BF.EXISTS", key, "x"],
        vec!["BF.MEXISTS", key, "x", "y", ""],
        vec!["BF.CARD", key],
        vec!["BF.INFO", key],
        vec!["BF.INFO", key, "CAPACITY"],
        vec!["BF.INFO", key, "MAXSCALEDCAPACITY"],
        vec!["BF.INFO", key, "TIGHTENING"],
        vec!["BF.DEBUG", key],
        vec!["MEMORY", "USAGE", key],
        vec!["TYPE", key],
        vec!["OBJECT", "ENCODING", key],
    ] {
        let reply = c.call(&command);
        assert!(
            !matches!(&reply, Error(e) if !e.starts_with("ERR")),
            "{command:?}: {reply:?}"
        );
    }
    // Writes on the copy: adds that scale until refused, as one MADD and one by one.
    let mut items: Vec<String> = vec!["BF.MADD".into(), copy.clone()];
    items.extend((0..300).map(|j| format!("m:{j}")));
    c.call(&items);
    for j in 0..100 {
        if matches!(call!(c, "BF.ADD", &copy, &format!("a:{j}")), Error(_)) {
            break;
        }
    }
    assert_eq!(
        call!(c, "BF.EXISTS", &copy, "a:0"),
        call!(c, "BF.EXISTS", &copy, "a:0")
    );
    // What the writes made writes back and loads again.
    let grown = blob_of(c, &copy);
    let again = format!("{key}:again");
    assert_eq!(
        c.call(&[b"BF.LOAD".as_slice(), again.as_bytes(), &grown]),
        ok(),
        "{key}: grown blob"
    );
    assert_eq!(
        call!(c, "DEBUG", "DIGEST-VALUE", &again),
        call!(c, "DEBUG", "DIGEST-VALUE", &copy)
    );
}

/// Runs every mutation of one genuine value; returns (accepted, refused).
fn attack_value(c: &mut Client, blob: &[u8], payload: &Payload, tally: &mut (usize, usize)) {
    for (name, mutated) in blob_mutations(blob) {
        match c.call(&[b"BF.LOAD".as_slice(), b"m", &mutated]) {
            Error(e) => {
                assert!(
                    e.starts_with("ERR ") || e.starts_with("BUSYKEY"),
                    "{name}: {e}"
                );
                assert_eq!(call!(c, "EXISTS", "m"), Int(0), "{name}");
                tally.1 += 1;
            }
            reply => {
                assert_eq!(reply, ok(), "{name}");
                tally.0 += 1;
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    exercise(c, "m", Some(&mutated), None)
                }));
                if let Err(e) = r {
                    panic!("BF.LOAD {name}: {e:?}");
                }
            }
        }
        assert_eq!(call!(c, "PING"), Simple("PONG".into()), "{name}");
        clear(c);
    }
    for (name, mutated) in payload_mutations(payload) {
        match c.call(&[b"RESTORE".as_slice(), b"m", b"0", &mutated]) {
            Error(e) => {
                assert!(e.starts_with("ERR "), "{name}: {e}");
                assert_eq!(call!(c, "EXISTS", "m"), Int(0), "{name}");
                tally.1 += 1;
            }
            reply => {
                assert_eq!(reply, ok(), "{name}");
                tally.0 += 1;
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    exercise(c, "m", None, Some(&mutated))
                }));
                if let Err(e) = r {
                    panic!("RESTORE {name}: {e:?}");
                }
            }
        }
        assert_eq!(call!(c, "PING"), Simple("PONG".into()), "{name}");
        clear(c);
    }
}

/// Reloads (the kept values must survive it) and deletes the attack's keys.
fn clear(c: &mut Client) {
    let keys = sorted_keys(c);
    let mut attack: Vec<String> = keys.into_iter().filter(|k| k.starts_with('m')).collect();
    if attack.is_empty() {
        return;
    }
    attack.insert(0, "DEL".into());
    c.call(&attack);
}

/// Every genuine value: valkey-bloom's (its AOF's blobs) and the module's own.
fn genuine(c: &mut Client) -> Vec<(Vec<u8>, Payload)> {
    let mut keys = Vec::new();
    for load in valkey_loads() {
        assert_eq!(c.call(&load), ok());
        keys.push(String::from_utf8(load[1].clone()).unwrap());
    }
    keys.extend(module_written(c));
    keys.iter()
        .map(|key| {
            let dump = call!(c, "DUMP", key).bytes();
            (blob_of(c, key), Payload::parse(&dump))
        })
        .collect()
}

#[test]
fn one_field_changed_is_refused_or_loads_into_a_working_value() {
    let mut s = attack_server();
    let mut c = s.client();
    let values = genuine(&mut c);
    let mut tally = (0, 0);
    for (blob, payload) in &values {
        attack_value(&mut c, blob, payload, &mut tally);
    }
    eprintln!("one field: {} accepted, {} refused", tally.0, tally.1);
    assert!(tally.0 > 100 && tally.1 > 100, "{tally:?}");
    // Everything left reloads as it was.
    let before = keyspace(&mut c);
    assert_eq!(call!(c, "DEBUG", "RELOAD"), ok());
    assert_eq!(keyspace(&mut c), before);
    s.restart();
    let mut c = s.client();
    assert_eq!(keyspace(&mut c), before);
}

/// Two fields changed at random, many times over, for longer runs.
#[test]
#[ignore]
fn two_fields_changed_campaign() {
    let s = attack_server();
    let mut c = s.client();
    let values = genuine(&mut c);
    let mut rng = Rng(seed(0x005e_ed49));
    let (mut accepted, mut refused) = (0usize, 0usize);
    for round in 0..rounds(20_000) {
        let (blob, payload) = rng.pick(&values);
        if round % 3 == 0 {
            // Two fields of the RDB value: one, then one of the result's buffers or numbers.
            let first = payload_mutations(payload);
            let (a, once) = rng.pick(&first);
            let Some(parsed) = guarded(|| Payload::parse(once)).ok() else {
                continue;
            };
            if parsed.fields.len() < 6 {
                continue;
            }
            let Ok(second) = guarded(|| payload_mutations(&parsed)) else {
                continue;
            };
            let (b, twice) = rng.pick(&second);
            match c.call(&[b"RESTORE".as_slice(), b"m", b"0", twice]) {
                Error(_) => refused += 1,
                _ => {
                    accepted += 1;
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        exercise(&mut c, "m", None, Some(twice))
                    }));
                    if let Err(e) = r {
                        panic!("round {round}: {a} then {b}: {e:?}");
                    }
                }
            }
            clear(&mut c);
            continue;
        }
        let first = blob_mutations(blob);
        let (a, once) = rng.pick(&first);
        if blob_layout(once).is_none() {
            continue;
        }
        let second = blob_mutations(once);
        let (b, twice) = rng.pick(&second);
        match c.call(&[b"BF.LOAD".as_slice(), b"m", twice]) {
            Error(_) => refused += 1,
            _ => {
                accepted += 1;
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    exercise(&mut c, "m", Some(twice), None)
                }));
                if let Err(e) = r {
                    panic!("round {round}: {a} then {b}: {e:?}");
                }
            }
        }
        clear(&mut c);
        if round % 2000 == 0 {
            assert_eq!(call!(c, "DEBUG", "RELOAD"), ok());
        }
    }
    eprintln!("two fields: {accepted} accepted, {refused} refused");
}

// ---------------------------------------------------------------------------------------------
// Replication and AOF under MULTI/EXEC and Lua.

const KEYS: [&str; 5] = ["v0", "v1", "v2", "v3", "v4"];

/// Runs a list of commands (each given as its word count then its words) with `redis.pcall`
/// (every one runs) or `redis.call` (the first error ends the script, after what ran before).
const SCRIPT_PCALL: &str = "local i = 1 while i <= #ARGV do local n = tonumber(ARGV[i]) \
    local cmd = {} for j = 1, n do cmd[j] = ARGV[i + j] end i = i + n + 1 \
    redis.pcall(unpack(cmd)) end return 1";
const SCRIPT_CALL: &str = "local i = 1 while i <= #ARGV do local n = tonumber(ARGV[i]) \
    local cmd = {} for j = 1, n do cmd[j] = ARGV[i + j] end i = i + n + 1 \
    redis.call(unpack(cmd)) end return 1";

/// Blobs and DUMPs to load, refreshed from the keys as the run goes.
struct Pool {
    blobs: Vec<Vec<u8>>,
    dumps: Vec<Vec<u8>>,
}

fn words(list: &[&str]) -> Vec<Vec<u8>> {
    list.iter().map(|w| w.as_bytes().to_vec()).collect()
}

/// One write with valkey-bloom's options at edge values.
fn random_write(rng: &mut Rng, pool: &Pool, serial: &mut u64) -> Vec<Vec<u8>> {
    let key = *rng.pick(&KEYS);
    let other = *rng.pick(&KEYS);
    let mut item = || {
        *serial += 1;
        format!("i{}", *serial)
    };
    match rng.below(14) {
        0..=2 => words(&["BF.ADD", key, &item()]),
        3..=4 => {
            let mut c = words(&["BF.MADD", key]);
            for _ in 0..1 + rng.below(30) {
                c.push(item().into_bytes());
            }
            c
        }
        5..=6 => {
            let mut c = words(&["BF.INSERT", key]);
            let options: [(&str, &[&str]); 6] = [
                (
                    "CAPACITY",
                    &["1", "2", "7", "100", "0", "-1", "9223372036854775807"],
                ),
                (
                    "ERROR",
                    &[
                        "0.5",
                        "0.01",
                        "1e-300",
                        "0.9999999",
                        "0",
                        "1",
                        "nan",
                        "5e-324",
                    ],
                ),
                ("EXPANSION", &["0", "1", "2", "10", "11"]),
                (
                    "TIGHTENING",
                    &["1e-300", "0.001", "0.5", "0.999999", "1", "0"],
                ),
                (
                    "VALIDATESCALETO",
                    &["1", "100", "1000000", "9223372036854775807", "0"],
                ),
                (
                    "SEED",
                    &[
                        SEED,
                        SEED,
                        "short",
                        "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0",
                    ],
                ),
            ];
            for (name, values) in options {
                if rng.below(3) == 0 {
                    c.push(name.as_bytes().to_vec());
                    c.push(rng.pick(values).as_bytes().to_vec());
                }
            }
            match rng.below(5) {
                0 => c.push(b"NONSCALING".to_vec()),
                1 => c.push(b"NOCREATE".to_vec()),
                _ => {}
            }
            c.push(b"ITEMS".to_vec());
            for _ in 0..1 + rng.below(20) {
                c.push(item().into_bytes());
            }
            c
        }
        7 => {
            let error = *rng.pick(&["0.5", "0.01", "1e-9", "0.999"]);
            let cap = *rng.pick(&["1", "3", "50", "1000"]);
            let mut c = words(&["BF.RESERVE", key, error, cap]);
            match rng.below(3) {
                0 => c.extend(words(&["NONSCALING"])),
                1 => c.extend(words(&["EXPANSION", *rng.pick(&["1", "2", "10"])])),
                _ => {}
            }
            c
        }
        8 => {
            let mut c = words(&["BF.LOAD", key]);
            c.push(rng.pick(&pool.blobs).clone());
            c
        }
        9 => {
            let mut c = words(&["RESTORE", key, "0"]);
            c.push(rng.pick(&pool.dumps).clone());
            c.push(b"REPLACE".to_vec());
            c
        }
        10 => words(&["COPY", key, other, "REPLACE"]),
        11 => words(&["RENAME", key, other]),
        12 => words(&["DEL", key]),
        _ => words(&["BF.EXISTS", key, &item()]),
    }
}

/// A primary with an AOF (`preamble` "yes" or "no") that creates valkey-bloom filters, and its
/// replica (which dies on any error reply to what it replays).
fn aof_pair(preamble: &str) -> (Server, Server) {
    let mut config: Vec<&str> = aof_always(preamble).to_vec();
    config.extend(["--rdbcompression", "no", "--bf.bf-valkey-bloom", "yes"]);
    let primary = Server::build(&[], &config);
    let replica = Server::replica_of(
        &primary,
        module_path(),
        &["--bf.bf-valkey-bloom", "yes", "--rdbcompression", "no"],
    );
    wait_replica_linked(&mut replica.client());
    (primary, replica)
}

/// Every key holds the same bytes and answers `BF.INFO` alike on both servers.
fn assert_same(p: &mut Client, r: &mut Client, when: &str) {
    wait_replica_synced(p, r);
    let keys = sorted_keys(p);
    assert_eq!(sorted_keys(r), keys, "{when}");
    for key in &keys {
        assert_eq!(
            call!(r, "DUMP", key),
            call!(p, "DUMP", key),
            "{when}: {key}"
        );
    }
}

/// Waits for the replica to be linked again, with both logs when it is not.
fn relinked(r: &mut Client, primary: &Server, replica: &Server, when: &str) {
    let port = primary.port.to_string();
    assert_eq!(call!(r, "REPLICAOF", "127.0.0.1", &port), ok());
    if let Err(e) = guarded(|| wait_replica_linked(r)) {
        panic!(
            "{when}: {e}\nprimary:\n{}\nreplica:\n{}",
            log_tail(primary, 30),
            log_tail(replica, 30)
        );
    }
}

fn refresh_pool(c: &mut Client, pool: &mut Pool) {
    for key in sorted_keys(c) {
        if call!(c, "TYPE", &key) == Simple("bloomfltr".into()) {
            pool.blobs.push(blob_of(c, &key));
            pool.dumps.push(call!(c, "DUMP", &key).bytes());
        }
    }
    let keep = pool.blobs.len().saturating_sub(40);
    pool.blobs.drain(..keep);
    let keep = pool.dumps.len().saturating_sub(40);
    pool.dumps.drain(..keep);
}

/// Sends `ops` writes in plain commands, transactions and scripts, with the object limit
/// changed now and then on the primary, checking the replica and the AOF as it goes.
fn replication_campaign(preamble: &str, seed: u64, ops: usize) {
    let (mut primary, replica) = aof_pair(preamble);
    let mut p = primary.client();
    let mut r = replica.client();
    let mut rng = Rng(seed);
    let mut pool = Pool {
        blobs: valkey_loads().into_iter().map(|l| l[2].clone()).collect(),
        dumps: Vec::new(),
    };
    for load in valkey_loads() {
        assert_eq!(p.call(&load), ok());
    }
    refresh_pool(&mut p, &mut pool);
    let mut serial = 0u64;
    let mut sent = 0;
    let mut batch = 0;
    let step = std::env::var("BLOOMRS_ATTACK_STEP").is_ok();
    let mut recent: Vec<String> = Vec::new();
    while sent < ops {
        batch += 1;
        for _ in 0..(if step { 1 } else { 25 }) {
            let n = 1 + rng.below(5);
            let commands: Vec<Vec<Vec<u8>>> = (0..n)
                .map(|_| random_write(&mut rng, &pool, &mut serial))
                .collect();
            sent += n;
            let mode = rng.below(6);
            recent.clear();
            for command in &commands {
                let shown: Vec<String> = command.iter().map(|w| escaped_head(w, 40).0).collect();
                recent.push(format!("mode {mode}: {shown:?}"));
            }
            match mode {
                0 | 1 => {
                    for command in &commands {
                        p.call(command);
                    }
                }
                2 | 3 => {
                    assert_eq!(p.call(&["MULTI"]), ok());
                    for command in &commands {
                        p.call(command);
                    }
                    let reply = p.call(&["EXEC"]);
                    assert!(!matches!(reply, Error(_)), "EXEC: {reply:?}");
                }
                which => {
                    let script = if which == 4 {
                        SCRIPT_PCALL
                    } else {
                        SCRIPT_CALL
                    };
                    let mut args = words(&["EVAL", script, "0"]);
                    for command in &commands {
                        args.push(command.len().to_string().into_bytes());
                        args.extend(command.iter().cloned());
                    }
                    p.call(&args);
                }
            }
            if rng.below(20) == 0 {
                let limit = *rng.pick(&["2048", "5000", "20000", "1000000", "4294967296"]);
                assert_eq!(
                    call!(p, "CONFIG", "SET", "bf.bloom-memory-usage-limit", limit),
                    ok()
                );
            }
        }
        let when = format!("seed {seed:#x} batch {batch} ({sent} ops), last group {recent:#?}");
        assert_same(&mut p, &mut r, &when);
        if batch % 4 == 0 {
            refresh_pool(&mut p, &mut pool);
        }
        if batch % 5 == 0 {
            let before = keyspace(&mut p);
            wait_for_persistence(&mut p);
            assert_eq!(call!(p, "DEBUG", "LOADAOF"), ok(), "{when}");
            assert_eq!(
                keyspace_diff(&before, &keyspace(&mut p)),
                vec![],
                "{when}: LOADAOF"
            );
        }
        if batch % 10 == 0 {
            let before = keyspace(&mut p);
            rewrite_aof(&mut p);
            primary.restart();
            p = primary.client();
            assert_eq!(
                keyspace_diff(&before, &keyspace(&mut p)),
                vec![],
                "{when}: rewrite + restart"
            );
            relinked(&mut r, &primary, &replica, &when);
            assert_same(&mut p, &mut r, &format!("{when}, after the restart"));
        }
    }
    let before = keyspace(&mut p);
    rewrite_aof(&mut p);
    primary.restart();
    let mut p = primary.client();
    assert_eq!(
        keyspace_diff(&before, &keyspace(&mut p)),
        vec![],
        "final restart"
    );
    relinked(&mut r, &primary, &replica, "end");
    assert_same(&mut p, &mut r, "end");
    assert!(!sorted_keys(&mut p).is_empty());
}

#[test]
fn transactions_and_scripts_replicate_and_reload_identically() {
    replication_campaign("yes", 0x49_a0f, 600);
    replication_campaign("no", 0x49_b0f, 600);
}

#[test]
#[ignore]
fn transactions_and_scripts_campaign() {
    let n = rounds(20_000);
    for seed in 0..4u64 {
        let preamble = if seed % 2 == 0 { "yes" } else { "no" };
        replication_campaign(preamble, self::seed(0x49_000) + seed, n);
    }
}

// ---------------------------------------------------------------------------------------------
// Scaling edges.

/// Milliseconds one call takes.
fn timed(c: &mut Client, command: &[&str]) -> (Reply, u128) {
    let start = std::time::Instant::now();
    let reply = c.call(command);
    (reply, start.elapsed().as_millis())
}

#[test]
fn a_scale_out_plan_stops_at_the_filters_an_object_holds() {
    let s = Server::start();
    let mut c = s.client();
    // One item a filter and a rate that barely tightens: 128 MiB would hold about 600,000
    // filters, an object here 1,100.
    let tiny = [
        "CAPACITY",
        "1",
        "ERROR",
        "0.999",
        "TIGHTENING",
        "0.999999",
        "EXPANSION",
        "1",
        "SEED",
        SEED,
    ];
    let mut insert = vec!["BF.INSERT", "k"];
    insert.extend(tiny);
    assert_eq!(c.call(&insert), Array(vec![]));
    let (reply, ms) = timed(&mut c, &["BF.INFO", "k", "MAXSCALEDCAPACITY"]);
    assert_eq!(reply, Int(1100));
    assert!(ms < 50, "BF.INFO took {ms} ms");
    for (target, reply) in [
        ("1100", Array(vec![])),
        (
            "1101",
            err("ERR bloom object reached max number of filters"),
        ),
        (
            "9223372036854775807",
            err("ERR bloom object reached max number of filters"),
        ),
    ] {
        let mut insert = vec!["BF.INSERT", "other"];
        insert.extend(tiny);
        insert.extend(["VALIDATESCALETO", target]);
        let (got, ms) = timed(&mut c, &insert);
        assert_eq!(got, reply, "VALIDATESCALETO {target}");
        assert!(ms < 50, "VALIDATESCALETO {target} took {ms} ms");
        c.call(&["DEL", "other"]);
    }
}

#[test]
fn scaling_edges_refuse_cleanly_and_one_add_makes_one_filter() {
    let s = Server::start();
    let mut c = s.client();
    let insert = |c: &mut Client, key: &str, options: &[&str], items: &[&str]| {
        let mut command = vec!["BF.INSERT", key, "SEED", SEED];
        command.extend(options);
        if !items.is_empty() {
            command.push("ITEMS");
            command.extend(items);
        }
        c.call(&command)
    };
    // A tightening near 0: the third filter's rate underflows.
    let near_zero = [
        "CAPACITY",
        "1",
        "ERROR",
        "0.5",
        "TIGHTENING",
        "1e-300",
        "EXPANSION",
        "1",
    ];
    let items: Vec<String> = (0..250).map(|j| format!("a{j}")).collect();
    let items: Vec<&str> = items.iter().map(String::as_str).collect();
    let reply = insert(&mut c, "zero", &near_zero, &items).array();
    let exhausted = err("ERR false positive degrades to 0 on scale out");
    let first = reply.iter().position(|r| *r == exhausted).expect("refused");
    assert!(reply[first..].iter().all(|r| *r == exhausted), "{reply:?}");
    assert_eq!(call!(c, "BF.INFO", "zero", "FILTERS"), Int(2));

    let mut scale_to = near_zero.to_vec();
    scale_to.extend(["VALIDATESCALETO", "3"]);
    assert_eq!(
        insert(&mut c, "zero2", &scale_to, &[]),
        err("ERR provided VALIDATESCALETO causes false positive to degrade to 0")
    );
    // A tightening near 1 with one item a filter: each add that is new makes one filter, up
    // to 1,100, then is refused; one BF.ADD never makes more than one.
    let near_one = [
        "CAPACITY",
        "1",
        "ERROR",
        "0.000001",
        "TIGHTENING",
        "0.99",
        "EXPANSION",
        "1",
    ];
    assert_eq!(insert(&mut c, "one", &near_one, &[]), Array(vec![]));
    let mut filters = 1;
    for j in 0..20000 {
        let reply = call!(c, "BF.ADD", "one", &format!("x{j}"));
        if matches!(reply, Error(_)) {
            assert_eq!(reply, err("ERR bloom object reached max number of filters"));
            break;
        }
        if reply == Int(1) {
            let before = filters;
            filters = call!(c, "BF.INFO", "one", "FILTERS").int();
            assert!(
                filters - before <= 1,
                "one add made {} filters",
                filters - before
            );
        }
    }
    assert_eq!(filters, 1100);
    // A MADD of many items past the last filter: refused from there on, the rest unchanged.
    let mut madd = vec!["BF.MADD".to_string(), "one".to_string()];
    madd.extend((0..5000).map(|j| format!("y{j}")));
    let (reply, ms) = {
        let start = std::time::Instant::now();
        let reply = c.call(&madd);
        (reply, start.elapsed().as_millis())
    };
    assert!(ms < 2000, "MADD took {ms} ms");
    assert!(reply.array().iter().all(|r| matches!(r, Int(0) | Error(_))));
    let before = keyspace(&mut c);
    assert_eq!(call!(c, "DEBUG", "RELOAD"), ok());
    assert_eq!(keyspace(&mut c), before);
    // The memory limit: an add that would pass it is refused, and nothing changes.
    assert_eq!(
        call!(c, "CONFIG", "SET", "bf.bloom-memory-usage-limit", "4096"),
        ok()
    );
    let small = ["CAPACITY", "10", "ERROR", "0.01", "EXPANSION", "10"];
    assert_eq!(insert(&mut c, "limit", &small, &[]), Array(vec![]));
    let digest = |c: &mut Client| call!(c, "DEBUG", "DIGEST-VALUE", "limit");
    let limit_text = "ERR operation exceeds bloom object memory limit";
    let mut refused = false;
    for batch in 0..100 {
        let mut madd = vec!["BF.MADD".to_string(), "limit".to_string()];
        madd.extend((0..50).map(|j| format!("z{batch}:{j}")));
        let reply = c.call(&madd).array();
        if let Some(first) = reply.iter().position(|r| matches!(r, Error(_))) {
            assert!(
                reply[first..].iter().all(|r| *r == err(limit_text)),
                "{reply:?}"
            );
            refused = true;
            break;
        }
    }
    assert!(refused);
    let before = digest(&mut c);
    assert_eq!(call!(c, "BF.ADD", "limit", "one more"), err(limit_text));
    assert_eq!(digest(&mut c), before);
    assert!(call!(c, "MEMORY", "USAGE", "limit").int() < 4096 + 200);
}

/// A `BF.LOAD` blob with valkey-bloom's fixed seed, expansion 2, rate 0.01, tightening 0.5, and
/// these filters: (bytes of bits, hashes, items, capacity).
fn crafted_blob(filters: &[(usize, u32, i64, i64)]) -> Vec<u8> {
    const FIXED: [u8; 32] = [
        89, 15, 245, 34, 234, 120, 17, 218, 167, 20, 216, 9, 59, 62, 123, 217, 29, 137, 138, 115,
        62, 152, 136, 135, 48, 127, 151, 205, 40, 7, 51, 131,
    ];
    let mut blob = vec![1];
    blob.extend_from_slice(&2u32.to_le_bytes());
    blob.extend_from_slice(&0.01f64.to_le_bytes());
    blob.extend_from_slice(&0.5f64.to_le_bytes());
    blob.push(0);
    blob.extend_from_slice(&(filters.len() as u64).to_le_bytes());
    for &(bits, hashes, items, capacity) in filters {
        blob.extend_from_slice(&(45 + bits as u64).to_le_bytes());
        blob.push(1);
        blob.extend_from_slice(&(bits as u64).to_le_bytes());
        blob.extend_from_slice(&hashes.to_le_bytes());
        blob.extend_from_slice(&FIXED);
        blob.extend(std::iter::repeat_n(0u8, bits));
        blob.extend_from_slice(&items.to_le_bytes());
        blob.extend_from_slice(&capacity.to_le_bytes());
    }
    blob
}

#[test]
fn counts_past_what_a_reply_holds_are_answered_at_the_largest() {
    let s = Server::start();
    let mut c = s.client();
    // Three filters sized for i64::MAX items each, the first two full: more items than an
    // integer reply holds.
    let max = i64::MAX;
    let blob = crafted_blob(&[(8, 3, max, max), (8, 3, max, max), (8, 3, max - 5, max)]);
    assert_eq!(c.call(&[b"BF.LOAD".as_slice(), b"k", &blob]), ok());
    assert_eq!(call!(c, "BF.CARD", "k"), Int(max));
    assert_eq!(call!(c, "BF.INFO", "k", "ITEMS"), Int(max));
    assert_eq!(call!(c, "BF.INFO", "k", "CAPACITY"), Int(max));
    assert_eq!(call!(c, "BF.ADD", "k", "x"), Int(1));
    assert_eq!(call!(c, "BF.CARD", "k"), Int(max));
    exercise(&mut c, "k", None, None);
    let before = keyspace(&mut c);
    assert_eq!(call!(c, "DEBUG", "RELOAD"), ok());
    assert_eq!(keyspace(&mut c), before);
}

// ---------------------------------------------------------------------------------------------
// Other commands on valkey-bloom keys.

#[test]
fn scandump_loadchunk_and_events_on_valkey_bloom_keys() {
    let s = Server::start();
    let mut c = s.client();
    let mut listener = s.client();
    assert_eq!(
        call!(c, "CONFIG", "SET", "notify-keyspace-events", "KEA"),
        ok()
    );
    listener.send(&["PSUBSCRIBE", "__keyevent@0__:*"]);
    listener.read();
    assert_eq!(call!(c, "CONFIG", "SET", "bf.bf-valkey-bloom", "yes"), ok());
    assert_eq!(call!(c, "BF.RESERVE", "v", "0.01", "100"), ok());
    assert_eq!(call!(c, "BF.MADD", "v", "a", "b"), ints(&[1, 1]));
    assert_eq!(call!(c, "CONFIG", "SET", "bf.bf-valkey-bloom", "no"), ok());
    assert_eq!(call!(c, "BF.RESERVE", "p", "0.01", "100"), ok());
    // The whole value in one header, then the end.
    let chunks = scandump(&mut c, "BF.SCANDUMP", "v");
    assert_eq!(chunks.len(), 1);
    let (iter, header) = chunks[0].clone();
    assert_eq!(iter, 1);
    assert_eq!(
        call!(c, "BF.SCANDUMP", "v", "9223372036854775807"),
        Array(vec![Int(0), bulk("")])
    );
    let plain_header = scandump(&mut c, "BF.SCANDUMP", "p")[0].1.clone();
    let bad = err("ERR received bad data");
    let load = |c: &mut Client, key: &str, iter: &str, data: &[u8]| {
        c.call(&[
            b"BF.LOADCHUNK".as_slice(),
            key.as_bytes(),
            iter.as_bytes(),
            data,
        ])
    };
    assert_eq!(load(&mut c, "n", "1", &header), ok());
    assert_eq!(call!(c, "TYPE", "n"), Simple("bloomfltr".into()));
    assert_eq!(
        call!(c, "DEBUG", "DIGEST-VALUE", "n"),
        call!(c, "DEBUG", "DIGEST-VALUE", "v")
    );
    // No chunks follow the header, and a header goes to no existing key.
    for (key, iter, data) in [
        ("n", "1", header.as_slice()),
        ("n", "2", b"xxxx".as_slice()),
        ("p", "1", header.as_slice()),
        ("v", "1", plain_header.as_slice()),
        ("q", "1", b"bloomrsL".as_slice()),
        ("q", "1", &[b"bloomrsL".as_slice(), &[1; 40]].concat()),
    ] {
        assert_eq!(load(&mut c, key, iter, data), bad, "{key} {iter}");
    }
    assert_eq!(call!(c, "TYPE", "p"), Simple("MBbloom--".into()));
    assert_eq!(call!(c, "EXISTS", "q"), Int(0));
    // RedisBloom's header is no BF.LOAD blob, nor is valkey-bloom's a Cuckoo header.
    let refused = c.call(&[b"BF.LOAD".as_slice(), b"q", &plain_header]);
    assert!(matches!(refused, Error(_)), "{refused:?}");
    let refused = c.call(&[b"CF.LOADCHUNK".as_slice(), b"q", b"1", &header]);
    assert!(matches!(refused, Error(_)), "{refused:?}");
    assert_eq!(call!(c, "EXISTS", "q"), Int(0));
    // Refused writes send no event; applied ones do.
    assert_eq!(
        call!(
            c,
            "BF.INSERT",
            "full",
            "CAPACITY",
            "1",
            "NONSCALING",
            "SEED",
            SEED
        ),
        Array(vec![])
    );
    assert_eq!(call!(c, "BF.ADD", "full", "a"), Int(1));
    assert_eq!(
        call!(c, "BF.ADD", "full", "other"),
        err("ERR non scaling filter is full")
    );
    assert_eq!(call!(c, "BF.ADD", "full", "a"), Int(0));
    let blob = header[8..].to_vec();
    assert_eq!(c.call(&[b"BF.LOAD".as_slice(), b"l", &blob]), ok());
    assert_eq!(call!(c, "SET", "marker", "1"), ok());
    let mut got = Vec::new();
    loop {
        let event = events(&mut listener, 1).remove(0);
        let event = event.trim_start_matches("__keyevent@0__:").to_string();
        if event == "set marker" {
            break;
        }
        got.push(event);
    }
    assert_eq!(
        got,
        [
            "bf.reserve v",
            "bf.madd v",
            "bf.reserve p",
            "bf.loadchunk n",
            "bf.insert full",
            "bf.add full",
            "bf.load l",
        ]
    );
}
