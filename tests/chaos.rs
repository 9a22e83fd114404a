//! Client-side chaos: random, boundary and hostile BF./CF. commands, mutated LOADCHUNK
//! sequences and mutated RESTORE payloads (with valid checksums, with and without
//! `sanitize-dump-payload`), against a real server with `maxmemory` set. After every batch the
//! server answers PING, the tracked keys answer exactly as before, `used_memory` is within
//! `maxmemory` plus `SLACK`, and every tenth batch SAVE + DEBUG RELOAD succeed within
//! `PERSIST_LIMIT`.
//!
//! `CHAOS_OPS` sets the number of operations (default 50,000); `scripts/chaos.sh` runs long
//! versions and prints the counts.
pub mod common;

use common::*;

/// A fixed-seed xorshift generator: every run sends the same operations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    fn bytes(&mut self, max: usize) -> Vec<u8> {
        let len = self.below(max + 1);
        (0..len).map(|_| self.next() as u8).collect()
    }
}

const COMMANDS: &[&str] = &[
    "BF.RESERVE",
    "BF.ADD",
    "BF.MADD",
    "BF.INSERT",
    "BF.EXISTS",
    "BF.MEXISTS",
    "BF.INFO",
    "BF.CARD",
    "BF.DEBUG",
    "BF.SCANDUMP",
    "BF.LOADCHUNK",
    "BF.RETIRE",
    "BF.PROMOTE",
    "BF.FREEZE",
    "BF.DEL",
    "BF.MDEL",
    "CF.RESERVE",
    "CF.ADD",
    "CF.ADDNX",
    "CF.INSERT",
    "CF.INSERTNX",
    "CF.EXISTS",
    "CF.MEXISTS",
    "CF.COUNT",
    "CF.DEL",
    "CF.COMPACT",
    "CF.INFO",
    "CF.DEBUG",
    "CF.SCANDUMP",
    "CF.LOADCHUNK",
];

const WORDS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "4",
    "7",
    "8",
    "100",
    "1000",
    "65535",
    "65536",
    "32768",
    "32769",
    "255",
    "256",
    "9223372036854775807",
    "9223372036854775806",
    "-9223372036854775808",
    "4294967295",
    "4294967296",
    "315360000",
    "315360001",
    "32",
    "33",
    "9223372036854775808",
    "18446744073709551616",
    "100000000000000",
    "1e308",
    "1e-300",
    "5e-324",
    "0.5",
    "0.01",
    "0.999999",
    "nan",
    "inf",
    "-inf",
    "+inf",
    "1.5",
    "",
    " ",
    "0x10",
    "CAPACITY",
    "ERROR",
    "EXPANSION",
    "NONSCALING",
    "NOCREATE",
    "COUNTING",
    "BLOCKED",
    "COMPACT",
    "ITEMS",
    "WINDOW",
    "GENERATIONS",
    "window",
    "generations",
    "counting",
    "BUCKETSIZE",
    "MAXITERATIONS",
    "capacity",
    "items",
    "size",
    "filters",
    "expansion",
    "i",
    "e",
    "n",
    "c",
    "nc",
];

const KEYS: usize = 40;

/// The server's memory limit: hostile sizes (a capacity of 10^14, a mutated LOADCHUNK header)
/// meet it long before `bf.max-filter-bytes` (left at its 4 GiB default).
const MAXMEMORY: i64 = 48 << 20;

/// How far `used_memory` may be over `maxmemory` after a batch. The module never allocates a
/// filter past the limit; the server refuses a `deny-oom` command only once memory is already
/// over it, so the last commands before that (key objects, the pipeline's query buffer, a few
/// small links) may take it slightly past: 1 MiB, a fiftieth of the limit.
const SLACK: i64 = 1 << 20;

/// SAVE or DEBUG RELOAD of at most `maxmemory` of filters takes well under a second here; a
/// filter far past the limit (the issue this guards against: 4 GiB) took over 30 seconds. A
/// symptom check, not a benchmark.
const PERSIST_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

fn used_memory(c: &mut Client) -> i64 {
    info_int(c, "memory", "used_memory")
}

/// Runs a persistence command, checking it succeeds within `PERSIST_LIMIT`; returns how long
/// it took.
fn persist(c: &mut Client, command: &[&str]) -> std::time::Duration {
    let started = std::time::Instant::now();
    assert_eq!(c.call(command), ok(), "{command:?}");
    let took = started.elapsed();
    assert!(took < PERSIST_LIMIT, "{command:?} took {took:?}");
    took
}

fn random_command(rng: &mut Rng) -> Vec<Vec<u8>> {
    let mut args = vec![rng.pick(COMMANDS).as_bytes().to_vec()];
    let key = match rng.below(20) {
        0 => "c:string".to_string(),
        1 => "c:list".to_string(),
        2 => "t:bf:0".to_string(), // read-only commands on tracked keys are harmless; writes are filtered below
        3 => format!("c:b{}", rng.below(KEYS / 2)),
        4 => format!("c:c{}", rng.below(KEYS / 2)),
        _ => format!("c:{}", rng.below(KEYS)),
    };
    args.push(key.into_bytes());
    for _ in 0..rng.below(9) {
        let arg = match rng.below(10) {
            0 => rng.bytes(12),
            1 => (rng.next() as i64).to_string().into_bytes(),
            2 => rng.below(300).to_string().into_bytes(),
            _ => rng.pick(WORDS).as_bytes().to_vec(),
        };
        args.push(arg);
    }
    args
}

/// A command with the right shape and plausible values, so the success paths get exercised.
fn plausible_command(rng: &mut Rng) -> Vec<Vec<u8>> {
    let n = rng.below(KEYS / 2);
    let item = format!("item{}", rng.below(2000));
    let small = (1 + rng.below(500)).to_string();
    let (bf, cf) = (format!("c:b{n}"), format!("c:c{n}"));
    let words: Vec<String> = match rng.below(28) {
        0 => vec![
            "BF.RESERVE".into(),
            bf,
            rng.pick(&["0.01", "0.1", "0.001", "0.5"]).to_string(),
            small,
            "EXPANSION".into(),
            (1 + rng.below(4)).to_string(),
        ],
        1 => vec![
            "BF.RESERVE".into(),
            bf,
            "0.01".into(),
            small,
            "NONSCALING".into(),
        ],
        2 => vec!["BF.ADD".into(), bf, item],
        3 => vec![
            "BF.MADD".into(),
            bf,
            item,
            format!("x{}", rng.below(100)),
            format!("y{}", rng.below(100)),
        ],
        4 => vec![
            "BF.INSERT".into(),
            bf,
            "CAPACITY".into(),
            small,
            "ERROR".into(),
            "0.05".into(),
            "ITEMS".into(),
            item,
        ],
        5 => vec!["BF.EXISTS".into(), bf, item],
        6 => vec![
            "CF.RESERVE".into(),
            cf,
            (4 + rng.below(300)).to_string(),
            "BUCKETSIZE".into(),
            (1 + rng.below(4)).to_string(),
            "EXPANSION".into(),
            rng.below(3).to_string(),
        ],
        7 => vec!["CF.ADD".into(), cf, item],
        8 => vec!["CF.ADDNX".into(), cf, item],
        9 => vec![
            "CF.INSERT".into(),
            cf,
            "CAPACITY".into(),
            (4 + rng.below(100)).to_string(),
            "ITEMS".into(),
            item,
            format!("z{}", rng.below(50)),
        ],
        10 => vec!["CF.DEL".into(), cf, item],
        11 => vec!["CF.COMPACT".into(), cf],
        12 => vec!["CF.COUNT".into(), cf, item],
        // Large filters (1.4 to 11 MB Bloom, 1 to 16 MiB cuckoo, or a first link that scales
        // out to 10 MB), so memory meets maxmemory; DEL makes room again.
        13 => vec![
            "BF.RESERVE".into(),
            bf,
            "0.01".into(),
            ((1 + rng.below(8)) * 1_000_000).to_string(),
        ],
        14 => match rng.below(2) {
            0 => vec![
                "CF.RESERVE".into(),
                cf,
                ((1 + rng.below(16)) << 20).to_string(),
            ],
            _ => vec![
                "BF.RESERVE".into(),
                bf,
                "0.01".into(),
                "100".into(),
                "EXPANSION".into(),
                "65536".into(),
            ],
        },
        15 => vec!["DEL".into(), if rng.below(2) == 0 { bf } else { cf }],
        16 => vec![
            "BF.RESERVE".into(),
            bf,
            "0.01".into(),
            small,
            "WINDOW".into(),
            (1 + rng.below(3600)).to_string(),
            "GENERATIONS".into(),
            (2 + rng.below(8)).to_string(),
        ],
        17 => vec![
            "BF.INSERT".into(),
            bf,
            "WINDOW".into(),
            (1 + rng.below(60)).to_string(),
            "ITEMS".into(),
            item,
        ],
        18 => vec![
            "BF.RESERVE".into(),
            bf,
            rng.pick(&["0.01", "0.1", "0.001"]).to_string(),
            small,
            "COUNTING".into(),
        ],
        19 => vec!["BF.DEL".into(), bf, item],
        20 => vec!["BF.MDEL".into(), bf, item, format!("x{}", rng.below(100))],
        // Windowed filters' clocks: now, ahead, far ahead, and values past i64 or negative.
        22 => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64);
            let at = match rng.below(6) {
                0 => "9223372036854775807".to_string(),
                1 => rng
                    .pick(&["0", "-1", "18446744073709551615", "nan", "1e18"])
                    .to_string(),
                2 => (now + 30 * 86_400_000).to_string(),
                _ => (now + rng.below(7_200_000) as i64).to_string(),
            };
            vec!["BF.RETIRE".into(), bf, at]
        }
        // Promotions, and static sets: builders frozen (off the main thread) while other
        // clients write.
        23 => match rng.below(3) {
            0 => vec!["BF.PROMOTE".into(), bf],
            1 => vec!["BF.FREEZE".into(), bf],
            _ => vec![
                "BF.RESERVE".into(),
                bf,
                "0.01".into(),
                small,
                "STATIC".into(),
            ],
        },
        // Counting, non-scaling, windowed and compact creation through BF.INSERT, with a hot
        // item that saturates counters, fills small non-scaling filters and is counted by
        // compact counting ones.
        24 => {
            let mut words = vec!["BF.INSERT".to_string(), bf];
            match rng.below(6) {
                0 => words.push("COUNTING".into()),
                3 => words.push("COMPACT".into()),
                4 => words.extend(["COMPACT".into(), "COUNTING".into()]),
                1 => words.extend(["COUNTING".into(), "NONSCALING".into()]),
                2 => words.extend([
                    "WINDOW".into(),
                    rng.pick(&["1", "60", "3600", "0", "315360001"]).to_string(),
                    "GENERATIONS".into(),
                    rng.pick(&["2", "4", "32", "1", "33"]).to_string(),
                ]),
                _ => words.push("NONSCALING".into()),
            }
            words.extend([
                "CAPACITY".into(),
                rng.pick(&["1", "2", "10", "4294967296"]).to_string(),
                "ITEMS".into(),
                "hot".into(),
                "hot".into(),
                item,
            ]);
            words
        }
        25 => vec![
            "BF.RESERVE".into(),
            bf,
            rng.pick(&["0.01", "0.001", "0.9"]).to_string(),
            small,
            "EXPANSION".into(),
            rng.pick(&["4294967296", "4294967295", "9223372036854775807", "2", "0"])
                .to_string(),
        ],
        // Deletes of an item added many times: its counters saturate, and a delete must not
        // answer 1 when it took nothing back.
        26 => vec![
            "BF.MDEL".into(),
            bf,
            "hot".into(),
            "hot".into(),
            "hot".into(),
            item,
        ],
        // The module's settings, changed mid-run (max-filter-bytes stays: lowering it under
        // existing filters is the replication test's business).
        27 => {
            let (name, values): (&str, &[&str]) = *rng.pick(&[
                ("bf.bf-window", &["0", "0", "1", "3600", "315360000"][..]),
                ("bf.bf-window-generations", &["2", "4", "32"][..]),
                ("bf.bf-sparse-max-bytes", &["0", "256", "4096", "64kb"][..]),
                ("bf.bf-expansion-factor", &["0", "1", "2", "32768"][..]),
                ("bf.bf-initial-size", &["1", "100", "100000"][..]),
                ("bf.bf-error-rate", &["0.01", "0.001", "0.5"][..]),
                ("bf.cf-bucket-size", &["1", "2", "255"][..]),
                ("bf.cf-initial-size", &["2", "64", "1024"][..]),
                ("bf.cf-expansion-factor", &["0", "1", "4"][..]),
            ]);
            vec![
                "CONFIG".into(),
                "SET".into(),
                name.into(),
                rng.pick(values).to_string(),
            ]
        }
        _ => vec![
            if rng.below(2) == 0 {
                "BF.SCANDUMP"
            } else {
                "CF.SCANDUMP"
            }
            .into(),
            bf,
            rng.below(3).to_string(),
        ],
    };
    words.into_iter().map(String::into_bytes).collect()
}

fn is_write(command: &[u8]) -> bool {
    let name = String::from_utf8_lossy(command).to_uppercase();
    !matches!(
        name.as_str(),
        "BF.EXISTS"
            | "BF.MEXISTS"
            | "BF.INFO"
            | "BF.CARD"
            | "BF.DEBUG"
            | "BF.SCANDUMP"
            | "CF.EXISTS"
            | "CF.MEXISTS"
            | "CF.COUNT"
            | "CF.INFO"
            | "CF.DEBUG"
            | "CF.SCANDUMP"
    )
}

/// Real SCANDUMP chunks and DUMP payloads to mutate.
/// The chunks SCANDUMP returned, with the LOADCHUNK command that takes them back.
type Chunks = (&'static str, Vec<(i64, Vec<u8>)>);

struct Sources {
    scandumps: Vec<Chunks>,
    dumps: Vec<Vec<u8>>,
}

fn sources(c: &mut Client) -> Sources {
    let setup: &[&[&str]] = &[
        &["BF.RESERVE", "src:bf", "0.01", "50", "EXPANSION", "3"],
        &["BF.RESERVE", "src:bfns", "0.1", "100", "NONSCALING"],
        &["BF.RESERVE", "src:bfct", "0.01", "50", "COUNTING"],
        &[
            "BF.RESERVE",
            "src:bfw",
            "0.01",
            "40",
            "WINDOW",
            "600",
            "GENERATIONS",
            "3",
        ],
        &[
            "CF.RESERVE",
            "src:cf",
            "64",
            "BUCKETSIZE",
            "4",
            "EXPANSION",
            "2",
        ],
        &["CF.RESERVE", "src:cf1", "32", "BUCKETSIZE", "1"],
    ];
    for command in setup {
        c.call(command);
    }
    for i in 0..300 {
        for (command, key) in [
            ("BF.ADD", "src:bf"),
            ("BF.ADD", "src:bfns"),
            ("BF.ADD", "src:bfw"),
            ("BF.ADD", "src:bfct"),
            ("CF.ADD", "src:cf"),
            ("CF.ADD", "src:cf1"),
        ] {
            c.call(&[command.to_string(), key.to_string(), format!("s{i}")]);
        }
    }
    for i in (0..300).step_by(4) {
        c.call(&[
            "BF.DEL".to_string(),
            "src:bfct".to_string(),
            format!("s{i}"),
        ]);
    }
    let mut scandumps = vec![
        ("BF.LOADCHUNK", scandump(c, "BF.SCANDUMP", "src:bfct")),
        ("BF.LOADCHUNK", scandump(c, "BF.SCANDUMP", "src:bf")),
        ("BF.LOADCHUNK", scandump(c, "BF.SCANDUMP", "src:bfns")),
        ("BF.LOADCHUNK", scandump(c, "BF.SCANDUMP", "src:bfw")),
        ("CF.LOADCHUNK", scandump(c, "CF.SCANDUMP", "src:cf")),
        ("CF.LOADCHUNK", scandump(c, "CF.SCANDUMP", "src:cf1")),
    ];
    let (sparse_dump, sparse_chunks) = sparse_source(c);
    scandumps.push(("BF.LOADCHUNK", sparse_chunks));
    let mut dumps: Vec<Vec<u8>> = [
        "src:bf", "src:bfns", "src:bfw", "src:bfct", "src:cf", "src:cf1",
    ]
    .iter()
    .map(|k| call!(c, "DUMP", *k).bytes())
    .collect();
    dumps.push(sparse_dump);
    for key in [
        "src:bf", "src:bfns", "src:bfw", "src:bfct", "src:cf", "src:cf1",
    ] {
        call!(c, "DEL", key);
    }
    Sources { scandumps, dumps }
}

/// A sparse Bloom filter's DUMP payload, and its own LOADCHUNK form (what AOF rewrite emits:
/// a `bloomrsS` header, then the hash pairs) rebuilt from that payload's fields.
fn sparse_source(c: &mut Client) -> (Vec<u8>, Vec<(i64, Vec<u8>)>) {
    assert_eq!(
        call!(c, "CONFIG", "SET", "bf.bf-sparse-max-bytes", "4096"),
        ok()
    );
    assert_eq!(call!(c, "BF.RESERVE", "src:sp", "0.01", "1000"), ok());
    for i in 0..50 {
        call!(c, "BF.ADD", "src:sp", format!("s{i}").as_str());
    }
    assert_eq!(
        call!(c, "CONFIG", "SET", "bf.bf-sparse-max-bytes", "0"),
        ok()
    );
    assert_eq!(call!(c, "TYPE", "src:sp"), Simple("bloomrsSP".into()));
    let dump = call!(c, "DUMP", "src:sp").bytes();
    call!(c, "DEL", "src:sp");
    let fields = Payload::parse(&dump).fields;
    let (
        [RdbField::Unsigned(capacity), RdbField::Double(error), RdbField::Unsigned(growth), RdbField::Unsigned(options), RdbField::Buffer(hashes)],
        _,
    ) = (&fields[..], ())
    else {
        panic!("a sparse payload has five fields: {fields:?}");
    };
    let mut header = b"bloomrsS".to_vec();
    header.extend_from_slice(&1u32.to_le_bytes());
    header.extend_from_slice(&capacity.to_le_bytes());
    header.extend_from_slice(&error.to_le_bytes());
    header.extend_from_slice(&(*growth as u32).to_le_bytes());
    header.extend_from_slice(&(*options as u32).to_le_bytes());
    let end = 1 + hashes.len() as i64;
    (dump, vec![(1, header), (end, hashes.clone())])
}

fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>) {
    for _ in 0..1 + rng.below(4) {
        if bytes.is_empty() {
            bytes.push(rng.next() as u8);
        }
        match rng.below(6) {
            0 => bytes.truncate(rng.below(bytes.len() + 1)),
            1 => bytes.extend(rng.bytes(16)),
            2 => {
                // Overwrite a little-endian word with a boundary value.
                let at = rng.below(bytes.len());
                let value =
                    *rng.pick(&[0u64, 1, u64::MAX, 1 << 63, 1 << 32, 65535, 65536, 1 << 56]);
                for (i, b) in value.to_le_bytes().iter().enumerate() {
                    if let Some(slot) = bytes.get_mut(at + i) {
                        *slot = *b;
                    }
                }
            }
            _ => {
                let at = rng.below(bytes.len());
                bytes[at] = rng.next() as u8;
            }
        }
    }
}

fn loadchunk_sequence(rng: &mut Rng, sources: &Sources) -> Vec<Vec<Vec<u8>>> {
    let (command, chunks) = rng.pick(&sources.scandumps);
    let key = format!("c:{}", rng.below(KEYS));
    let mut sequence = Vec::new();
    for (i, (iter, bytes)) in chunks.iter().enumerate() {
        let mut bytes = bytes.clone();
        let mut iter = *iter;
        if i == 0 && rng.below(2) == 0 || i > 0 && rng.below(4) == 0 {
            mutate(rng, &mut bytes);
        }
        if rng.below(6) == 0 {
            iter = *rng.pick(&[0i64, 1, -1, iter + 1, iter - 1, i64::MAX, i64::MIN, 1 << 40]);
        }
        sequence.push(vec![
            command.as_bytes().to_vec(),
            key.clone().into_bytes(),
            iter.to_string().into_bytes(),
            bytes,
        ]);
    }
    sequence
}

fn restore_command(rng: &mut Rng, sources: &Sources) -> Vec<Vec<u8>> {
    let mut payload = rng.pick(&sources.dumps).clone();
    let trailer = payload.split_off(payload.len() - 10);
    mutate(rng, &mut payload);
    payload.extend_from_slice(&trailer);
    let payload = with_valid_crc(&payload);
    let key = format!("c:{}", rng.below(KEYS));
    vec![
        b"RESTORE".to_vec(),
        key.into_bytes(),
        b"0".to_vec(),
        payload,
        b"REPLACE".to_vec(),
    ]
}

/// Keys the chaos never writes: their answers must not change.
fn tracked_setup(c: &mut Client) -> Vec<(String, Vec<String>)> {
    let mut tracked = Vec::new();
    for i in 0..3 {
        let bf = format!("t:bf:{i}");
        let cf = format!("t:cf:{i}");
        // The last tracked Bloom filter is a counting one.
        let counting: &[&str] = if i == 2 { &["COUNTING"] } else { &[] };
        let mut reserve = vec!["BF.RESERVE", bf.as_str(), "0.01", "100"];
        reserve.extend_from_slice(counting);
        assert_eq!(c.call(&reserve), ok());
        assert_eq!(call!(c, "CF.RESERVE", cf.as_str(), "200"), ok());
        let items: Vec<String> = (0..300).map(|j| format!("item{j}")).collect();
        for item in &items {
            call!(c, "BF.ADD", bf.as_str(), item.as_str());
            call!(c, "CF.ADD", cf.as_str(), item.as_str());
        }
        tracked.push((bf, items.clone()));
        tracked.push((cf, items));
    }
    tracked
}

fn tracked_state(c: &mut Client, tracked: &[(String, Vec<String>)]) -> Vec<Reply> {
    let mut state = Vec::new();
    for (key, items) in tracked {
        let family = &key[2..4].to_uppercase();
        let mut args = vec![format!("{family}.MEXISTS"), key.clone()];
        args.extend(items.iter().cloned());
        state.push(c.call(&args));
        state.push(c.call(&[format!("{family}.INFO"), key.clone()]));
        state.push(call!(c, "DEBUG", "DIGEST-VALUE", key.as_str()));
    }
    state
}

#[test]
fn chaos() {
    let total: usize = std::env::var("CHAOS_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50_000);
    let maxmemory = MAXMEMORY.to_string();
    let mut server = Server::build(&[], &["--maxmemory", &maxmemory]);
    let mut c = server.client();
    assert_eq!(call!(c, "SET", "c:string", "v"), ok());
    assert_eq!(call!(c, "RPUSH", "c:list", "v"), Int(1));
    let tracked = tracked_setup(&mut c);
    let expected = tracked_state(&mut c, &tracked);
    assert!(
        expected.iter().all(|r| !matches!(r, Error(_))),
        "{expected:?}"
    );
    let sources = sources(&mut c);
    let mut rng = Rng(0x5eed_b10c_0f11_7e55);
    let (mut sent, mut errors, mut batches) = (0usize, 0usize, 0usize);
    let mut peak = 0i64;
    // Refused by the server (memory already over maxmemory) and by the module's admission.
    let (mut oom, mut refused) = (0usize, 0usize);
    let mut slowest = std::time::Duration::ZERO;
    while sent < total {
        if batches == 2 {
            // From here on, the filters the chaos creates start sparse.
            assert_eq!(
                call!(c, "CONFIG", "SET", "bf.bf-sparse-max-bytes", "4096"),
                ok()
            );
        }
        // Valkey 9 has no such setting any more.
        if batches == 4 && call!(c, "CONFIG", "GET", "sanitize-dump-payload") != Array(vec![]) {
            assert_eq!(
                call!(c, "CONFIG", "SET", "sanitize-dump-payload", "yes"),
                ok()
            );
        }
        let mut batch: Vec<Vec<Vec<u8>>> = Vec::new();
        while batch.len() < 500 {
            match rng.below(10) {
                0 => batch.extend(loadchunk_sequence(&mut rng, &sources)),
                1 => batch.push(restore_command(&mut rng, &sources)),
                2..=5 => batch.push(plausible_command(&mut rng)),
                _ => {
                    let command = random_command(&mut rng);
                    if command[1].starts_with(b"t:") && is_write(&command[0]) {
                        continue;
                    }
                    batch.push(command);
                }
            }
        }
        for command in &batch {
            c.send(command);
        }
        for _ in &batch {
            if let Error(text) = c.read() {
                errors += 1;
                if text.starts_with("OOM ") {
                    oom += 1;
                } else if text.contains("Insufficient memory") {
                    refused += 1;
                }
            }
        }
        sent += batch.len();
        batches += 1;
        assert!(
            server.alive(),
            "the server died during batch {batches}\n{}",
            server.log()
        );
        assert_eq!(call!(c, "PING"), Simple("PONG".into()));
        assert_eq!(
            tracked_state(&mut c, &tracked),
            expected,
            "tracked keys changed in batch {batches}"
        );
        let used = used_memory(&mut c);
        peak = peak.max(used);
        assert!(
            used <= MAXMEMORY + SLACK,
            "used_memory {used} after batch {batches}, maxmemory {MAXMEMORY}"
        );
        if batches % 10 == 0 || sent >= total {
            slowest = slowest
                .max(persist(&mut c, &["SAVE"]))
                .max(persist(&mut c, &["DEBUG", "RELOAD"]));
            assert_eq!(tracked_state(&mut c, &tracked), expected);
        }
    }
    let info = call!(c, "INFO", "memory").text();
    let server_peak = info
        .lines()
        .find_map(|l| l.strip_prefix("used_memory_peak:"))
        .unwrap_or("?")
        .trim()
        .to_string();
    println!(
        "chaos: {sent} commands sent, {errors} errors returned ({oom} OOM from the server, \
         {refused} insufficient memory from the module), 0 crashes, {batches} batches; \
         used_memory after a batch at most {peak} (maxmemory {MAXMEMORY}, slack {SLACK}); \
         used_memory_peak {server_peak}; slowest SAVE or DEBUG RELOAD {slowest:?}"
    );
}
