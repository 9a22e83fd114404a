//! Every write a command accepts can be saved, loaded and replicated, exactly: a seeded random
//! workload of every BF./CF. command over every kind (scaling, non-scaling, counting, windowed,
//! sparse, compact, blocked Bloom filters; static sets, built and frozen; Cuckoo filters) with
//! valid, boundary and hostile arguments, against a primary and a replica that run
//! **different** module settings, both with `propagation-error-behavior panic` (a replica, or
//! a server loading its AOF, dies on any error reply to a propagated command).
//!
//! After every batch both servers answer, the replica has applied everything, and every key
//! holds the same kind, `DEBUG DIGEST-VALUE` and absolute expiry on both. Every few batches one
//! persistence step runs in turn: `DEBUG RELOAD` (primary, replica), `BGREWRITEAOF` +
//! `DEBUG LOADAOF` with and without `aof-use-rdb-preamble` (primary, replica), a restart from the
//! RDB and from the AOF (primary, replica) and a full resync, each keeping every key as it was.
//! Settings change mid-run with `CONFIG SET` on either side, and the primary's clock moves
//! (`BF.__FAULT CLOCK` of the fault-injection build) so windowed filters change generations.
//!
//! A seed sends the same commands every run, except that times (`BF.RETIRE`, `RESTORE ...
//! ABSTTL`) are taken from the clock; keys about to expire are deleted (on the primary) before a
//! comparison, so an expiry cannot race it.
//!
//! `BLOOMRS_SEED` picks the seed (decimal or 0x-hex; a fixed one by default),
//! `BLOOMRS_REPL_OPS` the number of operations (default 50,000: 500 batches of 100, a persistence
//! step after every third, about 30 s per server on a quiet machine);
//! `scripts/chaos.sh` runs it longer. A failure prints the seed, the batch, what diverged or
//! died, the last commands (with their replies) sent to each key involved, the settings and
//! clock moves before it, and the servers' logs. `BLOOMRS_REPL_KEEP_GOING=1` reports each
//! failure, starts the pair over empty and goes on, failing at the end.
pub mod common;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::*;

const DEFAULT_SEED: u64 = 0x19_b100_5eed;
const DEFAULT_OPS: usize = 50_000;
const BATCH: usize = 100;
/// A persistence step after every this many batches.
const PERSIST_EVERY: usize = 3;
/// Commands remembered per key for the failure report.
const RING: usize = 20;
/// Commands remembered in all (more than a batch sends): a replica that died on one of them
/// names only the command.
const RECENT: usize = 160;

/// Bloom keys, Cuckoo keys: few, so every key is hit again and again.
const BLOOM_KEYS: usize = 8;
const CUCKOO_KEYS: usize = 4;

/// splitmix64: small, seedable with any value, and the same on every machine.
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
    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
    /// Mostly a valid value, sometimes a boundary or hostile one.
    fn value<'a>(&mut self, valid: &[&'a str], hostile: &[&'a str]) -> &'a str {
        if self.chance(4) {
            self.pick(hostile)
        } else {
            self.pick(valid)
        }
    }
}

// --- Argument pools ------------------------------------------------------------------------

const BF_ERRORS: &[&str] = &["0.01", "0.1", "0.001", "0.05", "0.5", "0.9", "0.999999"];
const BF_ERRORS_HOSTILE: &[&str] = &[
    "0",
    "1",
    "-0.1",
    "nan",
    "inf",
    "-inf",
    "1e-300",
    "5e-324",
    "2",
    "0x10",
    "",
    "0.0000001",
];
const BF_CAPACITIES: &[&str] = &["1", "2", "3", "10", "50", "100", "500", "1000", "20000"];
const CAPACITIES_HOSTILE: &[&str] = &[
    "0",
    "-1",
    "100000",
    "1000000",
    "4294967296",
    "4294967297",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551616",
    "nan",
    "inf",
    "1e3",
];
const BF_EXPANSIONS: &[&str] = &["1", "2", "3", "4", "10", "32768"];
const BF_EXPANSIONS_HOSTILE: &[&str] = &[
    "0",
    "-1",
    "65536",
    "4294967295",
    "4294967296",
    "4294967297",
    "9223372036854775807",
    "18446744073709551616",
    "nan",
    "inf",
    "2.5",
];
const WINDOWS: &[&str] = &["1", "2", "60", "3600", "86400", "2592000"];
const WINDOWS_HOSTILE: &[&str] = &[
    "0",
    "-1",
    "315360000",
    "315360001",
    "4294967296",
    "9223372036854775807",
    "nan",
];
const GENERATIONS: &[&str] = &["2", "3", "4", "8", "32"];
const GENERATIONS_HOSTILE: &[&str] = &["1", "0", "33", "-1", "4294967298"];
const CF_CAPACITIES: &[&str] = &["4", "8", "16", "64", "100", "1000"];
const CF_CAPACITIES_HOSTILE: &[&str] = &[
    "1",
    "2",
    "3",
    "0",
    "-1",
    "510",
    "1073741824",
    "4294967296",
    "9223372036854775807",
    "nan",
];
const BUCKETS: &[&str] = &["1", "2", "4", "8"];
const BUCKETS_HOSTILE: &[&str] = &["0", "255", "256", "-1", "65536", "4294967297"];
const ITERATIONS: &[&str] = &["1", "5", "20", "500"];
const ITERATIONS_HOSTILE: &[&str] = &["0", "65535", "65536", "-1", "4294967297"];
const CF_EXPANSIONS: &[&str] = &["0", "1", "2", "4"];
const CF_EXPANSIONS_HOSTILE: &[&str] = &["32768", "32769", "-1", "65536", "4294967296"];

/// Settings `CONFIG SET` changes mid-run, with values (valid and boundary; the server refuses
/// what is out of range or breaks a rule between settings, and nothing changes then).
const SETTINGS: &[(&str, &[&str])] = &[
    ("bf.bf-sparse-max-bytes", &["0", "0", "256", "2kb", "64kb"]),
    (
        "bf.bf-window",
        &["0", "0", "0", "1", "60", "3600", "315360000"],
    ),
    ("bf.bf-window-generations", &["2", "3", "4", "32"]),
    ("bf.bf-expansion-factor", &["0", "1", "2", "3", "32768"]),
    ("bf.bf-error-rate", &["0.01", "0.001", "0.5", "0.999"]),
    ("bf.bf-initial-size", &["1", "2", "50", "100", "5000"]),
    (
        "bf.max-filter-bytes",
        &["1024", "64kb", "256kb", "1mb", "4gb"],
    ),
    ("bf.cf-bucket-size", &["1", "2", "4", "255"]),
    ("bf.cf-initial-size", &["2", "64", "510", "1024"]),
    ("bf.cf-max-iterations", &["1", "5", "20"]),
    ("bf.cf-expansion-factor", &["0", "1", "2", "4"]),
    ("bf.cf-max-expansions", &["1", "2", "4", "32"]),
    ("bf.bf-valkey-bloom", &["no", "no", "yes"]),
    ("bf.bloom-use-random-seed", &["yes", "no"]),
];

/// The primary: sparse filters, a tight `maxmemory`, a lower `bf.max-filter-bytes`, its own
/// defaults for implicit creation.
const PRIMARY_SETTINGS: &[(&str, &str)] = &[
    ("maxmemory", "8mb"),
    ("maxmemory-policy", "noeviction"),
    // A replica that starts over syncs at once instead of after 5 seconds.
    ("repl-diskless-sync-delay", "0"),
    ("bf.bf-sparse-max-bytes", "2kb"),
    ("bf.max-filter-bytes", "1mb"),
    ("bf.bf-expansion-factor", "3"),
    ("bf.bf-error-rate", "0.001"),
    ("bf.bf-initial-size", "50"),
    ("bf.cf-bucket-size", "4"),
    ("bf.cf-initial-size", "64"),
    ("bf.cf-max-iterations", "5"),
    ("bf.cf-expansion-factor", "2"),
    ("bf.cf-max-expansions", "4"),
];

/// The replica: dense filters, windowed implicit creation, RedisBloom's defaults otherwise,
/// and an AOF of its own.
const REPLICA_SETTINGS: &[(&str, &str)] = &[
    ("bf.bf-sparse-max-bytes", "0"),
    ("bf.bf-window", "86400"),
    ("bf.bf-window-generations", "8"),
    ("appendonly", "yes"),
    ("aof-use-rdb-preamble", "no"),
];

/// How long one reply may take: every command here answers in milliseconds, so a read that
/// waits this long is a command that never answers.
const REPLY_TIMEOUT: Duration = Duration::from_secs(30);
/// The replication link's settings on both servers (see `launch_primary`).
const QUIET_LINK: [&str; 4] = [
    "--repl-ping-replica-period",
    "3600",
    "--repl-timeout",
    "7200",
];

fn connect(server: &Server) -> Client {
    let mut client = server.client();
    client.set_reply_timeout(REPLY_TIMEOUT);
    client
}

fn unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// One command as the report prints it: printable arguments as they are, others escaped,
/// long ones cut.
fn show(args: &[Vec<u8>]) -> String {
    args.iter()
        .map(|arg| {
            let plain = !arg.is_empty()
                && arg.len() <= 40
                && arg.iter().all(|b| b.is_ascii_graphic() && *b != b'"');
            if plain {
                String::from_utf8_lossy(arg).into_owned()
            } else {
                let (text, more) = escaped_head(arg, 24);
                format!("\"{text}{more}\"")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn words(parts: &[&str]) -> Vec<Vec<u8>> {
    parts.iter().map(|p| p.as_bytes().to_vec()).collect()
}

/// One operation of the workload.
enum Op {
    /// A single command; its key is the second word.
    One(Vec<Vec<u8>>),
    /// SCANDUMP of `source` into LOADCHUNKs of `target` (`mutate`: the header gets a boundary
    /// value at this byte offset).
    Copy {
        family: &'static str,
        source: String,
        target: String,
        mutate: Option<(usize, u64)>,
    },
    /// DUMP of `source`, RESTORE into `target` with these trailing arguments.
    Restore {
        source: String,
        target: String,
        ttl: &'static str,
        extra: Vec<&'static str>,
    },
    /// A transaction of single commands.
    Multi(Vec<Vec<Vec<u8>>>),
    /// Single commands one after the other (a DEL, then a reservation).
    Seq(Vec<Vec<Vec<u8>>>),
}

struct Workload {
    rng: Rng,
}

impl Workload {
    fn bloom_key(&mut self) -> String {
        format!("b{}", self.rng.below(BLOOM_KEYS))
    }
    fn cuckoo_key(&mut self) -> String {
        format!("c{}", self.rng.below(CUCKOO_KEYS))
    }
    /// Mostly the family's own keys, sometimes the other family's (WRONGTYPE paths).
    fn key(&mut self, bloom: bool) -> String {
        if bloom != self.rng.chance(20) {
            self.bloom_key()
        } else {
            self.cuckoo_key()
        }
    }
    fn any_key(&mut self) -> String {
        let bloom = self.rng.below(BLOOM_KEYS + CUCKOO_KEYS) < BLOOM_KEYS;
        self.key(bloom)
    }
    /// Two keys for COPY, RENAME, RESTORE: mostly of the same family.
    fn key_pair(&mut self) -> (String, String) {
        let source = self.any_key();
        let target = if self.rng.chance(5) {
            self.any_key()
        } else {
            self.key(source.starts_with('b'))
        };
        (source, target)
    }

    /// Mostly a few dozen items (repeats, hot counters), sometimes one of a thousand (filters
    /// fill and scale out), an empty, binary or long one.
    fn item(&mut self) -> Vec<u8> {
        match self.rng.below(40) {
            0..=9 => b"hot".to_vec(),
            10 => Vec::new(),
            11 => vec![0, 255, b'\r', b'\n'],
            12 => vec![b'x'; 300],
            13..=17 => format!("j{}", self.rng.below(1000)).into_bytes(),
            _ => format!("i{}", self.rng.below(60)).into_bytes(),
        }
    }
    fn items(&mut self, most: usize) -> Vec<Vec<u8>> {
        let n = 1 + self.rng.below(most);
        (0..n).map(|_| self.item()).collect()
    }

    fn op(&mut self) -> Op {
        let bloom = self.bloom_key();
        let key = self.key(true);
        let r = &mut self.rng;
        match r.below(100) {
            0..=7 => {
                let reserve = self.bf_reserve(key.clone());
                self.fresh(key, reserve)
            }
            8..=17 => {
                let item = self.item();
                Op::One(vec![b"BF.ADD".to_vec(), key.into_bytes(), item])
            }
            18..=24 => {
                let mut args = words(&["BF.MADD", &key]);
                args.extend(self.items(8));
                Op::One(args)
            }
            25..=33 => Op::One(self.bf_insert(key)),
            34..=36 => Op::One(self.bf_read(key)),
            37..=39 => Op::One(self.bf_retire(key)),
            40 => Op::One(words(&["BF.PROMOTE", &key])),
            // Static builders freeze: the effects reach the replica and the AOF.
            41 => Op::One(words(&["BF.FREEZE", &key])),
            42..=45 => {
                let item = self.item();
                Op::One(vec![b"BF.DEL".to_vec(), key.into_bytes(), item])
            }
            46..=48 => {
                let mut args = words(&["BF.MDEL", &key]);
                args.extend(self.items(6));
                Op::One(args)
            }
            49..=51 => {
                let target = self.bloom_key();
                let mutate = self
                    .rng
                    .chance(4)
                    .then(|| (self.rng.below(80), self.boundary_word()));
                Op::Copy {
                    family: "BF",
                    source: bloom,
                    target,
                    mutate,
                }
            }
            52..=55 => {
                let reserve = self.cf_reserve();
                let key = String::from_utf8_lossy(&reserve[1]).into_owned();
                self.fresh(key, reserve)
            }
            56..=62 => {
                let name = if self.rng.chance(3) {
                    "CF.ADDNX"
                } else {
                    "CF.ADD"
                };
                let key = self.key(false);
                let item = self.item();
                Op::One(vec![name.as_bytes().to_vec(), key.into_bytes(), item])
            }
            63..=67 => Op::One(self.cf_insert()),
            68..=71 => {
                let key = self.key(false);
                let item = self.item();
                Op::One(vec![b"CF.DEL".to_vec(), key.into_bytes(), item])
            }
            72 => {
                let key = self.key(false);
                Op::One(words(&["CF.COMPACT", &key]))
            }
            73..=74 => Op::One(self.cf_read()),
            75..=77 => {
                let source = self.cuckoo_key();
                let target = self.cuckoo_key();
                let mutate = self
                    .rng
                    .chance(4)
                    .then(|| (self.rng.below(40), self.boundary_word()));
                Op::Copy {
                    family: "CF",
                    source,
                    target,
                    mutate,
                }
            }
            78..=80 => {
                let key = self.any_key();
                let name = if self.rng.chance(2) { "DEL" } else { "UNLINK" };
                Op::One(words(&[name, &key]))
            }
            81 => {
                let key = self.any_key();
                let (name, value) = match self.rng.below(6) {
                    0 => ("EXPIRE", "100000"),
                    1 => ("EXPIRE", "0"),
                    2 => ("PEXPIRE", "1"),
                    3 => ("EXPIRE", "9223372036854775807"),
                    4 => ("EXPIREAT", "4102444800"),
                    _ => ("PERSIST", ""),
                };
                if value.is_empty() {
                    Op::One(words(&[name, &key]))
                } else {
                    Op::One(words(&[name, &key, value]))
                }
            }
            82..=84 => {
                let (source, target) = self.key_pair();
                let mut args = words(&["COPY", &source, &target]);
                if self.rng.chance(2) {
                    args.push(b"REPLACE".to_vec());
                }
                Op::One(args)
            }
            85..=87 => {
                let (source, target) = self.key_pair();
                let ttl = self.rng.pick(&["0", "0", "100000000"]);
                let mut extra = Vec::new();
                if !self.rng.chance(4) {
                    extra.push("REPLACE");
                }
                if ttl != "0" && self.rng.chance(2) {
                    extra.push("ABSTTL");
                }
                Op::Restore {
                    source,
                    target,
                    ttl,
                    extra,
                }
            }
            88 => {
                let (source, target) = self.key_pair();
                Op::One(words(&["RENAME", &source, &target]))
            }
            89..=90 => {
                let n = 1 + self.rng.below(4);
                let commands = (0..n)
                    .map(|_| loop {
                        if let Op::One(args) = self.op() {
                            break args;
                        }
                    })
                    .collect();
                Op::Multi(commands)
            }
            91..=92 => Op::One(self.loadchunk_garbage()),
            _ => {
                // Large filters, so memory meets the primary's maxmemory and
                // max-filter-bytes: scale-outs and creations are refused there.
                let key = self.key(true);
                let mut args = if self.rng.chance(3) {
                    // A small first link whose next one is large: adds of new items scale
                    // out, refused past max-filter-bytes or what maxmemory leaves.
                    let capacity = self.rng.pick(&["20", "50"]);
                    let expansion = self.rng.pick(&["1024", "8192", "32768"]);
                    words(&["BF.RESERVE", &key, "0.01", capacity, "EXPANSION", expansion])
                } else {
                    let capacity = self
                        .rng
                        .pick(&["20000", "100000", "400000", "800000", "1000000"]);
                    words(&["BF.RESERVE", &key, "0.01", capacity])
                };
                match self.rng.below(4) {
                    0 => args.extend(words(&["EXPANSION", "4"])),
                    1 => args.push(b"COUNTING".to_vec()),
                    2 => args.extend(words(&["WINDOW", "3600", "GENERATIONS", "2"])),
                    _ => {}
                }
                self.fresh(key, args)
            }
        }
    }

    /// A creation, half the time on a key just deleted (so it is not refused as existing).
    fn fresh(&mut self, key: String, create: Vec<Vec<u8>>) -> Op {
        if self.rng.chance(2) {
            Op::Seq(vec![words(&["DEL", &key]), create])
        } else {
            Op::One(create)
        }
    }

    fn boundary_word(&mut self) -> u64 {
        let values = [
            0u64,
            1,
            2,
            u64::MAX,
            1 << 63,
            1 << 32,
            (1 << 32) + 1,
            65535,
            65536,
            255,
        ];
        values[self.rng.below(values.len())]
    }

    fn bf_reserve(&mut self, key: String) -> Vec<Vec<u8>> {
        let r = &mut self.rng;
        let error = r.value(BF_ERRORS, BF_ERRORS_HOSTILE);
        let capacity = r.value(BF_CAPACITIES, CAPACITIES_HOSTILE);
        let mut args = words(&["BF.RESERVE", &key, error, capacity]);
        if r.chance(3) {
            let expansion = r.value(BF_EXPANSIONS, BF_EXPANSIONS_HOSTILE);
            args.extend(words(&["EXPANSION", expansion]));
        }
        if r.chance(3) {
            args.push(b"NONSCALING".to_vec());
        }
        match r.below(6) {
            0 | 1 => {
                args.extend(words(&["WINDOW", r.value(WINDOWS, WINDOWS_HOSTILE)]));
                if r.chance(2) {
                    let generations = r.value(GENERATIONS, GENERATIONS_HOSTILE);
                    args.extend(words(&["GENERATIONS", generations]));
                }
            }
            2 | 3 => args.push(b"COUNTING".to_vec()),
            _ => {}
        }
        if r.chance(8) {
            // The compact kind (refused with NONSCALING or a window).
            args.push(b"COMPACT".to_vec());
        }
        if r.chance(8) {
            // The blocked kind (refused with the other layouts).
            args.push(b"BLOCKED".to_vec());
        }
        if r.chance(8) {
            // Static sets (refused with the other layouts).
            args.push(b"STATIC".to_vec());
        }
        if r.chance(30) {
            // Options in another order, or one too many.
            let at = 4 + r.below(args.len() - 3);
            args.insert(at.min(args.len()), b"COUNTING".to_vec());
        }
        args
    }

    fn bf_insert(&mut self, key: String) -> Vec<Vec<u8>> {
        let mut args = words(&["BF.INSERT", &key]);
        let r = &mut self.rng;
        if r.chance(2) {
            args.extend(words(&[
                "CAPACITY",
                r.value(BF_CAPACITIES, CAPACITIES_HOSTILE),
            ]));
        }
        if r.chance(3) {
            args.extend(words(&["ERROR", r.value(BF_ERRORS, BF_ERRORS_HOSTILE)]));
        }
        if r.chance(3) {
            let expansion = r.value(BF_EXPANSIONS, BF_EXPANSIONS_HOSTILE);
            args.extend(words(&["EXPANSION", expansion]));
        }
        if r.chance(8) {
            args.push(b"NOCREATE".to_vec());
        }
        if r.chance(3) {
            args.push(b"NONSCALING".to_vec());
        }
        match r.below(6) {
            0 => {
                args.extend(words(&["WINDOW", r.value(WINDOWS, WINDOWS_HOSTILE)]));
                if r.chance(2) {
                    let generations = r.value(GENERATIONS, GENERATIONS_HOSTILE);
                    args.extend(words(&["GENERATIONS", generations]));
                }
            }
            1 => args.extend(words(&[
                "GENERATIONS",
                r.value(GENERATIONS, GENERATIONS_HOSTILE),
            ])),
            2 | 3 => args.push(b"COUNTING".to_vec()),
            _ => {}
        }
        if r.chance(8) {
            args.push(b"COMPACT".to_vec());
        }
        if r.chance(8) {
            args.push(b"BLOCKED".to_vec());
        }
        if r.chance(8) {
            args.push(b"STATIC".to_vec());
        }
        // valkey-bloom's own options: its grammar, and its filters.
        if r.chance(10) {
            let (word, values) = match r.below(3) {
                0 => ("TIGHTENING", ["0.5", "0.9", "1"]),
                1 => (
                    "SEED",
                    [
                        "valkey-bloom-seed-of-32-bytes-xx",
                        "sEED-of-32-bytes-valkey-bloom-yy",
                        "short",
                    ],
                ),
                _ => ("VALIDATESCALETO", ["1000", "0", "100000000000"]),
            };
            args.extend(words(&[word, r.pick(&values)]));
        }
        args.push(b"ITEMS".to_vec());
        args.extend(self.items(8));
        args
    }

    fn bf_read(&mut self, key: String) -> Vec<Vec<u8>> {
        let r = &mut self.rng;
        match r.below(6) {
            0 => {
                let mut args = words(&["BF.MEXISTS", &key]);
                args.extend(self.items(5));
                args
            }
            1 => words(&["BF.INFO", &key]),
            2 => words(&["BF.CARD", &key]),
            3 => words(&["BF.DEBUG", &key]),
            4 => words(&["BF.SCANDUMP", &key, r.pick(&["0", "1", "2", "-1"])]),
            _ => {
                let item = self.item();
                vec![b"BF.EXISTS".to_vec(), key.into_bytes(), item]
            }
        }
    }

    fn bf_retire(&mut self, key: String) -> Vec<Vec<u8>> {
        let now = unix_ms();
        let r = &mut self.rng;
        let at = match r.below(12) {
            0 => "9223372036854775807".to_string(),
            1 => "9223372036854775806".to_string(),
            2 => "18446744073709551615".to_string(),
            3 => r.pick(&["0", "-1", "1", "nan", "1e18"]).to_string(),
            4 => (now - 86_400_000).to_string(),
            5 => (now + 30 * 86_400_000).to_string(),
            _ => {
                let ahead = [0i64, 1000, 60_000, 3_600_000, 86_400_000];
                (now + ahead[r.below(ahead.len())]).to_string()
            }
        };
        words(&["BF.RETIRE", &key, &at])
    }

    fn cf_reserve(&mut self) -> Vec<Vec<u8>> {
        let key = self.key(false);
        let r = &mut self.rng;
        let capacity = r.value(CF_CAPACITIES, CF_CAPACITIES_HOSTILE);
        let mut args = words(&["CF.RESERVE", &key, capacity]);
        let mut options = vec![
            ("BUCKETSIZE", r.value(BUCKETS, BUCKETS_HOSTILE)),
            ("MAXITERATIONS", r.value(ITERATIONS, ITERATIONS_HOSTILE)),
            ("EXPANSION", r.value(CF_EXPANSIONS, CF_EXPANSIONS_HOSTILE)),
        ];
        options.retain(|_| r.chance(2));
        for (name, value) in options {
            args.extend(words(&[name, value]));
        }
        args
    }

    fn cf_insert(&mut self) -> Vec<Vec<u8>> {
        let key = self.key(false);
        let r = &mut self.rng;
        let name = if r.chance(2) {
            "CF.INSERT"
        } else {
            "CF.INSERTNX"
        };
        let mut args = words(&[name, &key]);
        if r.chance(2) {
            let capacity = r.value(CF_CAPACITIES, CF_CAPACITIES_HOSTILE);
            args.extend(words(&["CAPACITY", capacity]));
        }
        if r.chance(8) {
            args.push(b"NOCREATE".to_vec());
        }
        args.push(b"ITEMS".to_vec());
        args.extend(self.items(10));
        args
    }

    fn cf_read(&mut self) -> Vec<Vec<u8>> {
        let key = self.key(false);
        let r = &mut self.rng;
        match r.below(5) {
            0 => {
                let mut args = words(&["CF.MEXISTS", &key]);
                args.extend(self.items(5));
                args
            }
            1 => words(&["CF.INFO", &key]),
            2 => {
                let item = self.item();
                vec![b"CF.COUNT".to_vec(), key.into_bytes(), item]
            }
            3 => words(&["CF.SCANDUMP", &key, r.pick(&["0", "1", "-1"])]),
            _ => words(&["CF.DEBUG", &key]),
        }
    }

    /// A LOADCHUNK that is not a SCANDUMP chunk: refused on both sides, or applied on both.
    fn loadchunk_garbage(&mut self) -> Vec<Vec<u8>> {
        let bloom = self.rng.chance(2);
        let key = self.key(bloom);
        let family = if bloom { "BF" } else { "CF" };
        let r = &mut self.rng;
        let iter = r.pick(&["1", "0", "-1", "2", "9223372036854775807", "97"]);
        let len = r.below(90);
        let data: Vec<u8> = (0..len).map(|_| r.next() as u8).collect();
        let mut args = words(&[&format!("{family}.LOADCHUNK"), &key, iter]);
        args.push(data);
        args
    }
}

/// Which server of the pair.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Side {
    Primary,
    Replica,
}

/// The pair under test, the workload, and what the report needs.
struct Run {
    seed: u64,
    work: Workload,
    primary: Server,
    replica: Server,
    p: Client,
    r: Client,
    /// The last commands sent to each key, with their replies.
    rings: HashMap<String, VecDeque<String>>,
    /// Settings changes, clock moves and persistence steps, most recent last.
    events: VecDeque<String>,
    /// The last commands of all.
    recent: VecDeque<String>,
    batch: usize,
    sent: usize,
    /// `BF.__FAULT CLOCK` offsets (ms) in force on each side.
    clocks: [i64; 2],
    /// Whether each side has `appendonly yes` now.
    aof: [bool; 2],
    keep_going: bool,
    failures: Vec<String>,
    steps: usize,
    compared: usize,
    /// Error replies the primary gave.
    errors: usize,
    /// How many of each error reply (its first words), for the summary.
    error_kinds: BTreeMap<String, usize>,
    /// How many of the key comparisons were of each type.
    kinds: BTreeMap<String, usize>,
}

/// Why a check failed, and the keys that differ (with how).
type Mismatch = (String, Vec<(String, String)>);

fn keys_of_diff(diff: &[(String, String)]) -> Vec<String> {
    diff.iter().map(|(key, _)| key.clone()).collect()
}

fn push_ring(ring: &mut VecDeque<String>, line: String, len: usize) {
    if ring.len() == len {
        ring.pop_front();
    }
    ring.push_back(line);
}

fn startup_args(settings: &[(&str, &str)]) -> Vec<String> {
    settings
        .iter()
        .flat_map(|(name, value)| [format!("--{name}"), value.to_string()])
        .collect()
}

impl Run {
    fn start(seed: u64, keep_going: bool) -> Run {
        let primary = Run::launch_primary();
        let replica = Run::launch_replica(primary.port);
        let (p, r) = (connect(&primary), connect(&replica));
        let mut run = Run {
            seed,
            work: Workload { rng: Rng(seed) },
            primary,
            replica,
            p,
            r,
            rings: HashMap::new(),
            events: VecDeque::new(),
            recent: VecDeque::new(),
            batch: 0,
            sent: 0,
            clocks: [0, 0],
            aof: [false, true],
            keep_going,
            failures: Vec::new(),
            steps: 0,
            compared: 0,
            errors: 0,
            error_kinds: BTreeMap::new(),
            kinds: BTreeMap::new(),
        };
        wait_replica_linked(&mut run.r);
        run
    }

    fn launch_primary() -> Server {
        let mut config = startup_args(PRIMARY_SETTINGS);
        config.extend(["--propagation-error-behavior".into(), "panic".into()]);
        // No PING to the replica between the run's own writes but the first after start-up
        // (`Server::after_first_ping`): one that arrives while the replica runs DEBUG
        // LOADAOF is answered -LOADING, which `propagation-error-behavior panic` turns into a
        // panic of the server. With no pings the link's timeout is lengthened to match, on
        // both sides.
        config.extend(QUIET_LINK.iter().map(|a| a.to_string()));
        let config: Vec<&str> = config.iter().map(String::as_str).collect();
        Server::with_module_and_config(fault_module(), &config)
    }

    fn launch_replica(primary_port: u16) -> Server {
        let mut config = startup_args(REPLICA_SETTINGS);
        config.extend(["--propagation-error-behavior".into(), "panic".into()]);
        config.extend(QUIET_LINK.iter().map(|a| a.to_string()));
        let port = primary_port.to_string();
        config.extend(["--replicaof".into(), "127.0.0.1".into(), port]);
        let config: Vec<&str> = config.iter().map(String::as_str).collect();
        Server::with_module_and_config(fault_module(), &config)
    }

    fn event(&mut self, line: String) {
        let line = format!("[batch {}, op {}] {line}", self.batch, self.sent);
        push_ring(&mut self.events, line, 40);
    }

    fn record(&mut self, keys: &[String], args: &[Vec<u8>], reply: &str) {
        if reply.starts_with("Error(") {
            self.errors += 1;
        }
        // Errors at the top and inside arrays (a partly applied multi-item write).
        for error in reply.split("Error(\"").skip(1) {
            let text: String = error.chars().take_while(|c| *c != '"').take(40).collect();
            *self.error_kinds.entry(text).or_default() += 1;
        }
        let line = format!("{} -> {reply}", show(args));
        let mut keys = keys.to_vec();
        keys.sort();
        keys.dedup();
        for key in &keys {
            let ring = self.rings.entry(key.clone()).or_default();
            push_ring(ring, line.clone(), RING);
        }
        push_ring(&mut self.recent, line, RECENT);
    }

    /// Sends a command to the primary; None if the primary died.
    fn send(&mut self, args: &[Vec<u8>], keys: &[String]) -> Option<Reply> {
        self.p.send(args);
        self.sent += 1;
        let reply = self.p.try_read();
        let shown = match &reply {
            Some(reply) => format!("{reply:?}"),
            None if self.primary.alive() => {
                format!("(no reply within {} s)", REPLY_TIMEOUT.as_secs())
            }
            None => "(no reply: the server died)".to_string(),
        };
        self.record(keys, args, &shown);
        reply
    }

    /// The keys a command names: the second word, and the third for COPY and RENAME.
    fn keys_of(args: &[Vec<u8>]) -> Vec<String> {
        let name = String::from_utf8_lossy(&args[0]).to_uppercase();
        let count = if matches!(name.as_str(), "COPY" | "RENAME") {
            2
        } else {
            1
        };
        args[1..]
            .iter()
            .take(count)
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .collect()
    }

    /// Runs one operation; false if the primary died.
    fn run_op(&mut self, op: Op) -> bool {
        match op {
            Op::One(args) => {
                let keys = Run::keys_of(&args);
                self.send(&args, &keys).is_some()
            }
            Op::Seq(commands) => commands
                .iter()
                .all(|command| self.send(command, &Run::keys_of(command)).is_some()),
            Op::Multi(commands) => {
                let keys: Vec<String> = commands.iter().flat_map(|c| Run::keys_of(c)).collect();
                if self.send(&words(&["MULTI"]), &keys).is_none() {
                    return false;
                }
                for command in &commands {
                    if self.send(command, &Run::keys_of(command)).is_none() {
                        return false;
                    }
                }
                self.send(&words(&["EXEC"]), &keys).is_some()
            }
            Op::Copy {
                family,
                source,
                target,
                mutate,
            } => {
                let keys = [source.clone(), target.clone()];
                let mut chunks = Vec::new();
                let mut iter = "0".to_string();
                loop {
                    let scandump = words(&[&format!("{family}.SCANDUMP"), &source, &iter]);
                    let Some(reply) = self.send(&scandump, &keys) else {
                        return false;
                    };
                    let Array(parts) = reply else { break };
                    let (Some(Int(next)), Some(Bulk(data))) = (parts.first(), parts.get(1)) else {
                        break;
                    };
                    if *next == 0 {
                        break;
                    }
                    chunks.push((*next, data.clone()));
                    iter = next.to_string();
                }
                for (i, (iter, mut data)) in chunks.into_iter().enumerate() {
                    if let (0, Some((at, value))) = (i, mutate) {
                        for (j, byte) in value.to_le_bytes().iter().enumerate() {
                            if let Some(slot) = data.get_mut(at + j) {
                                *slot = *byte;
                            }
                        }
                    }
                    let mut args = words(&[&format!("{family}.LOADCHUNK"), &target]);
                    args.push(iter.to_string().into_bytes());
                    args.push(data);
                    if self.send(&args, &keys).is_none() {
                        return false;
                    }
                }
                true
            }
            Op::Restore {
                source,
                target,
                ttl,
                extra,
            } => {
                let keys = [source.clone(), target.clone()];
                let Some(reply) = self.send(&words(&["DUMP", &source]), &keys) else {
                    return false;
                };
                let Bulk(payload) = reply else { return true };
                let mut args = words(&["RESTORE", &target]);
                let ttl = if extra.contains(&"ABSTTL") {
                    (unix_ms() + 100_000_000).to_string()
                } else {
                    ttl.to_string()
                };
                args.push(ttl.into_bytes());
                args.push(payload);
                args.extend(words(&extra));
                self.send(&args, &keys).is_some()
            }
        }
    }

    fn client(&mut self, side: Side) -> &mut Client {
        match side {
            Side::Primary => &mut self.p,
            Side::Replica => &mut self.r,
        }
    }

    fn server(&mut self, side: Side) -> &mut Server {
        match side {
            Side::Primary => &mut self.primary,
            Side::Replica => &mut self.replica,
        }
    }

    /// CONFIG SET on one side; a value the server took is kept for its restarts.
    fn config_set(&mut self, side: Side, name: &str, value: &str) {
        let reply = self.client(side).call(&["CONFIG", "SET", name, value]);
        if reply == ok() {
            set_startup(self.server(side), name, value);
        }
        self.event(format!("{side:?}: CONFIG SET {name} {value} -> {reply:?}"));
    }

    /// Between batches: sometimes a setting changes on one side, sometimes the clocks move.
    fn between_batches(&mut self) {
        if self.work.rng.chance(2) {
            let side = if self.work.rng.chance(3) {
                Side::Replica
            } else {
                Side::Primary
            };
            let (name, values) = SETTINGS[self.work.rng.below(SETTINGS.len())];
            let value = self.work.rng.pick(values);
            self.config_set(side, name, value);
        }
        if self.work.rng.chance(3) {
            // The primary's clock only moves forward; the replica's anywhere (it must not
            // matter).
            let steps = [1000i64, 30_000, 600_000, 3_600_000, 86_400_000];
            self.clocks[0] += steps[self.work.rng.below(steps.len())];
            let replica = [-86_400_000i64, 0, 3_600_000, 20 * 86_400_000];
            self.clocks[1] = replica[self.work.rng.below(replica.len())];
            self.apply_clocks();
        }
    }

    fn apply_clocks(&mut self) {
        let [primary, replica] = self.clocks.map(|c| c.to_string());
        let a = self.p.call(&["BF.__FAULT", "CLOCK", primary.as_str()]);
        let b = self.r.call(&["BF.__FAULT", "CLOCK", replica.as_str()]);
        self.event(format!(
            "clocks: primary +{primary} ms ({a:?}), replica {replica} ms ({b:?})"
        ));
    }

    /// Deletes (on the primary, so the replica follows) keys that expire within 30 seconds:
    /// their expiry would race the comparison. Every key name of the workload is looked up,
    /// not only those KEYS lists: KEYS skips a key whose time has passed without deleting it,
    /// and a primary that then reloads (DEBUG RELOAD, a restart followed by a partial resync)
    /// drops it without telling its replica, which keeps it (hidden from reads) and later
    /// refuses a RESTORE onto that name or answers a COPY differently. The lookup deletes it
    /// and propagates the deletion, as the server does for any expired key it touches.
    fn settle(&mut self) -> bool {
        let mut keys: Vec<String> = (0..BLOOM_KEYS)
            .map(|n| format!("b{n}"))
            .chain((0..CUCKOO_KEYS).map(|n| format!("c{n}")))
            .collect();
        keys.extend(self.p.call(&["KEYS", "*"]).array().iter().map(Reply::text));
        keys.sort();
        keys.dedup();
        for key in keys {
            let ttl = self.p.call(&["PTTL", key.as_str()]);
            if matches!(ttl, Int(ms) if (0..30_000).contains(&ms))
                && self
                    .send(&words(&["DEL", &key]), std::slice::from_ref(&key))
                    .is_none()
            {
                return false;
            }
        }
        true
    }

    /// Both alive, the replica caught up, and the same keys on both; `expected` (the
    /// primary's keyspace before a persistence step) must hold too.
    fn check(&mut self, what: &str, expected: Option<&BTreeMap<String, KeyState>>) -> bool {
        if !self.primary.alive() {
            return self.fail(&format!("{what}: the primary died"), &[]);
        }
        if !self.replica.alive() {
            return self.fail(&format!("{what}: the replica died"), &[]);
        }
        let compared = guarded(|| -> Result<Vec<String>, Mismatch> {
            if !self.settle() {
                return Err(("the primary died".into(), Vec::new()));
            }
            self.sync().map_err(|why| (why, Vec::new()))?;
            let primary = keyspace(&mut self.p);
            if let Some(expected) = expected {
                let diff = keyspace_diff(expected, &primary);
                if !diff.is_empty() {
                    return Err(("the primary changed".into(), diff));
                }
            }
            let replica = keyspace(&mut self.r);
            let diff = keyspace_diff(&primary, &replica);
            if !diff.is_empty() {
                return Err(("primary / replica differ".into(), diff));
            }
            Ok(primary
                .values()
                .map(|state| state.kind.clone())
                .collect::<Vec<_>>())
        });
        match compared {
            Ok(Ok(kinds)) => {
                self.compared += kinds.len();
                for kind in kinds {
                    *self.kinds.entry(kind).or_default() += 1;
                }
                true
            }
            Ok(Err((why, diff))) if !diff.is_empty() => {
                let diff_report = guarded(|| self.fail_diff_lines(&diff)).unwrap_or_default();
                self.fail(
                    &format!("{what}: {why}\n{diff_report}"),
                    &keys_of_diff(&diff),
                )
            }
            Ok(Err((why, _))) => self.fail(&format!("{what}: {why}"), &[]),
            Err(panic) => {
                let alive = [self.primary.alive(), self.replica.alive()];
                let why = format!(
                    "{panic} (primary alive: {}, replica alive: {})",
                    alive[0], alive[1]
                );
                self.fail(&format!("{what}: {why}"), &[])
            }
        }
    }

    /// Waits until the replica is linked and has applied everything the primary sent.
    fn sync(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if !self.replica.alive() {
                return Err("the replica died".into());
            }
            if !self.primary.alive() {
                return Err("the primary died".into());
            }
            let linked = self
                .r
                .call(&["INFO", "replication"])
                .text()
                .contains("master_link_status:up");
            if linked {
                let target = repl_offset(&mut self.p, "master_repl_offset:");
                if target.is_some() && repl_offset(&mut self.r, "slave_repl_offset:") == target {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                return Err("the replica did not catch up within 60 s".into());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// How each differing key differs, and its `BF.DEBUG`/`CF.DEBUG` on both sides.
    fn fail_diff_lines(&mut self, diff: &[(String, String)]) -> String {
        let mut lines = Vec::new();
        for (key, how) in diff {
            lines.push(format!("  {key}: {how}"));
            for side in [Side::Primary, Side::Replica] {
                let c = self.client(side);
                let kind = c.call(&["TYPE", key.as_str()]).text();
                let debug = match kind.as_str() {
                    "MBbloomCF" => c.call(&["CF.DEBUG", key.as_str()]),
                    "none" => Nil,
                    _ => c.call(&["BF.DEBUG", key.as_str()]),
                };
                lines.push(format!("    {side:?}: {kind} {debug:?}"));
            }
        }
        lines.join("\n")
    }

    /// Reports a failure: panics, or with keep-going records it and starts the pair over.
    fn fail(&mut self, what: &str, keys: &[String]) -> bool {
        let mut report = format!(
            "replication_random FAILED (seed {:#x}, BLOOMRS_SEED={}), batch {}, after {} \
             operations, on {}:\n{what}\n",
            self.seed,
            self.seed,
            self.batch,
            self.sent,
            server_binary()
        );
        // Keys named in the report and in the servers' last log lines.
        let logs = [
            ("primary", log_tail(&self.primary, 25)),
            ("replica", log_tail(&self.replica, 25)),
        ];
        let mut named: Vec<String> = keys.to_vec();
        let mut known: Vec<&String> = self.rings.keys().collect();
        known.sort();
        for key in known {
            let quoted = [
                format!("'{key}'"),
                format!("\"{key}\""),
                format!(" {key} "),
                format!("\\n{key}\\r"),
            ];
            if logs
                .iter()
                .any(|(_, log)| quoted.iter().any(|q| log.contains(q.as_str())))
                && !named.contains(key)
            {
                named.push(key.clone());
            }
        }
        for key in &named {
            report.push_str(&format!("last commands on {key}:\n"));
            for line in self.rings.get(key).into_iter().flatten() {
                report.push_str(&format!("  {line}\n"));
            }
        }
        report.push_str("last commands sent:\n");
        for line in &self.recent {
            report.push_str(&format!("  {line}\n"));
        }
        report.push_str("settings, clocks and persistence steps before it:\n");
        for line in &self.events {
            report.push_str(&format!("  {line}\n"));
        }
        for (side, log) in &logs {
            report.push_str(&format!("{side} log (last lines):\n{log}\n"));
        }
        if !self.keep_going {
            panic!("{report}");
        }
        eprintln!("{report}");
        self.failures
            .push(what.lines().next().unwrap_or_default().to_string());
        self.start_over();
        false
    }

    /// Keep-going mode: both servers start over, empty, with their current settings.
    fn start_over(&mut self) {
        self.primary.kill();
        self.replica.kill();
        remove_data(&self.primary);
        remove_data(&self.replica);
        try_restart(&mut self.primary).expect("the primary starts empty");
        let port = self.primary.port;
        set_startup_replicaof(&mut self.replica, port);
        try_restart(&mut self.replica).expect("the replica starts empty");
        self.p = connect(&self.primary);
        self.r = connect(&self.replica);
        wait_replica_linked(&mut self.r);
        self.apply_clocks();
        self.rings.clear();
        self.event("started over after a failure".into());
    }

    /// Restarts one side on its own files; false (reported) if it did not come up.
    fn restart(&mut self, side: Side) -> bool {
        if let Err(why) = try_restart(self.server(side)) {
            let what = format!("{side:?} did not restart: {why}");
            return self.fail(&what, &[]);
        }
        match side {
            Side::Primary => {
                self.p = connect(&self.primary);
                let port = self.primary.port;
                set_startup_replicaof(&mut self.replica, port);
                let port = port.to_string();
                let reply = self.r.call(&["REPLICAOF", "127.0.0.1", port.as_str()]);
                assert_eq!(reply, ok(), "REPLICAOF");
            }
            Side::Replica => self.r = connect(&self.replica),
        }
        self.apply_clocks();
        true
    }

    /// Turns the AOF on (waiting for its first rewrite), with or without an RDB preamble.
    fn aof_on(&mut self, side: Side, preamble: bool) {
        let preamble = if preamble { "yes" } else { "no" };
        self.config_set(side, "aof-use-rdb-preamble", preamble);
        let index = side as usize;
        if !self.aof[index] {
            self.config_set(side, "appendonly", "yes");
            self.aof[index] = true;
        }
        wait_for_persistence(self.client(side));
    }

    /// Runs a persistence command; false (reported) if it failed or killed the server.
    fn persist(&mut self, side: Side, command: &[&str]) -> bool {
        let args = words(command);
        let c = self.client(side);
        let reply = guarded(|| {
            c.send(&args);
            c.try_read()
        })
        .ok()
        .flatten();
        let line = format!("{side:?}: {} -> {reply:?}", command.join(" "));
        self.event(line.clone());
        match reply {
            Some(Simple(_)) => true,
            _ => self.fail(&format!("persistence step failed: {line}"), &[]),
        }
    }

    /// One persistence step, in turn; every key must be as it was, on both servers.
    fn persistence_step(&mut self) -> bool {
        let step = self.steps;
        self.steps += 1;
        if !self.check("before a persistence step", None) {
            return false;
        }
        let before = keyspace(&mut self.p);
        let preamble = step % 2 == 0;
        let name = match step % 11 {
            0 => {
                if !self.persist(Side::Primary, &["DEBUG", "RELOAD"]) {
                    return false;
                }
                "DEBUG RELOAD on the primary"
            }
            1 => {
                self.primary.after_first_ping();
                if !self.persist(Side::Replica, &["DEBUG", "RELOAD"]) {
                    return false;
                }
                "DEBUG RELOAD on the replica"
            }
            2..=4 => {
                let preamble = step % 11 == 3;
                self.aof_on(Side::Primary, preamble);
                if !self.persist(Side::Primary, &["BGREWRITEAOF"]) {
                    return false;
                }
                wait_for_persistence(&mut self.p);
                if !self.persist(Side::Primary, &["DEBUG", "LOADAOF"]) {
                    return false;
                }
                if preamble {
                    "BGREWRITEAOF (RDB preamble) + DEBUG LOADAOF on the primary"
                } else {
                    "BGREWRITEAOF (no preamble) + DEBUG LOADAOF on the primary"
                }
            }
            5 => {
                self.aof_on(Side::Replica, preamble);
                if !self.persist(Side::Replica, &["BGREWRITEAOF"]) {
                    return false;
                }
                wait_for_persistence(&mut self.r);
                self.primary.after_first_ping();
                if !self.persist(Side::Replica, &["DEBUG", "LOADAOF"]) {
                    return false;
                }
                "BGREWRITEAOF + DEBUG LOADAOF on the replica"
            }
            6 | 8 => {
                let side = if step % 11 == 6 {
                    Side::Primary
                } else {
                    Side::Replica
                };
                wait_for_persistence(self.client(side));
                if !self.persist(side, &["SAVE"]) {
                    return false;
                }
                set_startup(self.server(side), "appendonly", "no");
                self.aof[side as usize] = false;
                if !self.restart(side) {
                    return false;
                }
                if side == Side::Primary {
                    "a restart of the primary from its RDB"
                } else {
                    "a restart of the replica from its RDB"
                }
            }
            7 | 9 => {
                let side = if step % 11 == 7 {
                    Side::Primary
                } else {
                    Side::Replica
                };
                self.aof_on(side, preamble);
                set_startup(self.server(side), "appendonly", "yes");
                if !self.restart(side) {
                    return false;
                }
                if side == Side::Primary {
                    "a restart of the primary from its AOF"
                } else {
                    "a restart of the replica from its AOF"
                }
            }
            _ => {
                self.replica.kill();
                remove_data(&self.replica);
                if !self.restart(Side::Replica) {
                    return false;
                }
                "a full resync of an empty replica"
            }
        };
        self.event(format!("persistence step: {name}"));
        self.check(&format!("after {name}"), Some(&before))
    }
}

#[test]
fn random_writes_replicate_save_and_load_exactly() {
    let seed = std::env::var("BLOOMRS_SEED")
        .ok()
        .filter(|s| !s.is_empty())
        .map(|s| match s.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).expect("BLOOMRS_SEED in hex"),
            None => s.parse().expect("BLOOMRS_SEED: a number"),
        })
        .unwrap_or(DEFAULT_SEED);
    let total: usize = std::env::var("BLOOMRS_REPL_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_OPS);
    let keep_going = std::env::var("BLOOMRS_REPL_KEEP_GOING").is_ok_and(|v| v == "1");
    println!("replication_random: seed {seed:#x}, {total} operations");
    let started = Instant::now();
    let mut run = Run::start(seed, keep_going);
    let mut operations = 0;
    while operations < total {
        run.batch += 1;
        if let Err(panic) = guarded(|| run.between_batches()) {
            run.fail(&format!("settings, clocks: {panic}"), &[]);
            continue;
        }
        for _ in 0..BATCH {
            let op = run.work.op();
            operations += 1;
            match guarded(|| run.run_op(op)) {
                Ok(true) => {}
                Ok(false) => {
                    let what = match run.recent.back() {
                        Some(last) => format!("the primary died or did not answer: {last}"),
                        None => "the primary died or did not answer".to_string(),
                    };
                    run.fail(&what, &[]);
                    break;
                }
                Err(panic) => {
                    run.fail(&panic, &[]);
                    break;
                }
            }
        }
        if !run.check("after the batch", None) {
            continue;
        }
        if run.batch % PERSIST_EVERY == 0 {
            if let Err(panic) = guarded(|| run.persistence_step()) {
                run.fail(&format!("persistence step: {panic}"), &[]);
            }
        }
    }
    if let Err(panic) = guarded(|| run.persistence_step()) {
        run.fail(&format!("persistence step: {panic}"), &[]);
    }
    let summary = format!(
        "replication_random: seed {seed:#x} on {}: {operations} operations ({} commands, \
         {} error replies) in {} batches, {} persistence steps, {} key \
         comparisons, {:.1} s",
        server_binary(),
        run.sent,
        run.errors,
        run.batch,
        run.steps,
        run.compared,
        started.elapsed().as_secs_f64()
    );
    println!("{summary}");
    println!("replication_random: key types compared: {:?}", run.kinds);
    let mut errors: Vec<(&String, &usize)> = run.error_kinds.iter().collect();
    errors.sort_by(|a, b| b.1.cmp(a.1));
    println!(
        "replication_random: most frequent errors: {:?}",
        &errors[..errors.len().min(60)]
    );
    assert!(
        run.failures.is_empty(),
        "{} failures (reported above): {:#?}",
        run.failures.len(),
        run.failures
    );
}
