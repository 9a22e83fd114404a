//! Attacks from outside (windowed filters, valkey-bloom's values): a seeded generator, a fault-injection primary
//! that appends every write to its AOF with a replica of it, and the comparisons an attack
//! ends each round with (replica and AOF reload holding every key byte for byte, with the
//! same absolute expiry). Campaigns run `BLOOMRS_ATTACK_SECS` seconds (a few by default)
//! from `BLOOMRS_ATTACK_SEED` (the clock by default; a failure prints it).

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::client::{ok, Array, Client, Error, Int, Reply};
use super::clock::info_field;
use super::pair::guarded;
use super::rdb::scandump;
use super::server::{
    fault_module, rewrite_aof, wait_for_persistence, wait_replica_linked, wait_replica_synced,
    Server,
};
use super::state::mexists;
use super::state::sorted_keys;

/// splitmix64: seedable with any value, the same on every machine.
pub struct Rng(pub u64);

impl Rng {
    pub fn word(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.word() % n.max(1) as u64) as usize
    }
    pub fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
    pub fn choose<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// How long a campaign runs: `BLOOMRS_ATTACK_SECS`, else `default` seconds.
pub fn attack_duration(default: u64) -> Duration {
    let secs = std::env::var("BLOOMRS_ATTACK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default);
    Duration::from_secs(secs)
}

/// The seed of a campaign: `BLOOMRS_ATTACK_SEED`, else `default` (fixed, so that `make test`
/// runs the same campaign every time); printed, so a failure can be replayed.
pub fn attack_seed(what: &str, default: u64) -> u64 {
    let seed = std::env::var("BLOOMRS_ATTACK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default);
    eprintln!("{what}: BLOOMRS_ATTACK_SEED={seed}");
    seed
}

/// How many rounds a campaign runs: `BLOOMRS_ATTACK_ROUNDS`, else `default`.
pub fn attack_rounds(default: usize) -> usize {
    std::env::var("BLOOMRS_ATTACK_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A `SEED` for valkey-bloom's `BF.INSERT` (32 bytes).
pub const VB_SEED: &str = "valkey-bloom-seed-of-32-bytes-xx";

/// The `BF.LOAD` blob of a valkey-bloom key (its SCANDUMP header after the magic).
pub fn blob_of(c: &mut Client, key: &str) -> Vec<u8> {
    let header = scandump(c, "BF.SCANDUMP", key)[0].1.clone();
    assert!(header.starts_with(b"bloomrsL"), "{key}");
    header[8..].to_vec()
}

/// Unix time in milliseconds on this machine (the servers' clock before any offset).
pub fn local_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// A fault-injection primary writing every command to its AOF at once, and its replica
/// (which dies on any error reply to a propagated command); DUMP payloads uncompressed.
pub struct Rig {
    pub primary: Server,
    pub replica: Server,
    pub p: Client,
    pub r: Client,
}

const UNCOMPRESSED: [&str; 2] = ["--rdbcompression", "no"];

impl Rig {
    pub fn start() -> Rig {
        let mut config = vec!["--appendonly", "yes", "--appendfsync", "always"];
        config.extend(UNCOMPRESSED);
        let primary = Server::with_module_and_config(fault_module(), &config);
        let replica = Server::replica_of(&primary, fault_module(), &UNCOMPRESSED);
        let (mut p, mut r) = (primary.client(), replica.client());
        wait_replica_linked(&mut r);
        limit_filters(&mut p);
        limit_filters(&mut r);
        Rig {
            primary,
            replica,
            p,
            r,
        }
    }

    /// Both servers still answer (the message names the dead one, with its log's tail).
    pub fn assert_alive(&mut self, context: &str) {
        for (name, server) in [
            ("primary", &mut self.primary),
            ("replica", &mut self.replica),
        ] {
            assert!(
                server.alive(),
                "{context}: the {name} died:\n{}",
                tail(&server.log(), 40)
            );
        }
    }

    /// The replica holds every key of the primary, byte for byte and with the same expiry.
    pub fn assert_replica_identical(&mut self, context: &str) {
        self.assert_alive(context);
        let synced = guarded(|| wait_replica_synced(&mut self.p, &mut self.r));
        self.assert_alive(context);
        synced.unwrap_or_else(|e| panic!("{context}: {e}"));
        let primary = dumps(&mut self.p);
        let replica = dumps(&mut self.r);
        assert_same(&primary, &replica, &format!("{context}: replica"));
    }

    /// Kills the primary and starts it from its AOF: every key that had not expired comes
    /// back byte for byte with its expiry; the replica then follows it again. The clock
    /// offset is lost (the caller sets it again).
    pub fn assert_aof_reloads(&mut self, context: &str) {
        self.reload_aof(None, context);
    }

    /// `assert_aof_reloads` after an AOF rewrite with (`preamble` "yes") or without ("no")
    /// an RDB preamble: the keys as the module's AOF callback writes them.
    pub fn assert_aof_rewrite_reloads(&mut self, preamble: &str, context: &str) {
        self.reload_aof(Some(preamble), context);
    }

    fn reload_aof(&mut self, rewrite: Option<&str>, context: &str) {
        wait_for_persistence(&mut self.p);
        if let Some(preamble) = rewrite {
            let set = ["CONFIG", "SET", "aof-use-rdb-preamble", preamble];
            assert_eq!(self.p.call(&set), ok());
            rewrite_aof(&mut self.p);
        }
        let before = dumps(&mut self.p);
        self.primary.restart();
        self.p = self.primary.client();
        limit_filters(&mut self.p);
        let after = dumps(&mut self.p);
        let soon = local_ms() + 2_000;
        let kept = |all: &BTreeMap<String, (Reply, Reply)>| -> BTreeMap<String, (Reply, Reply)> {
            all.iter()
                .filter(|(_, (_, at))| !matches!(at, Int(t) if *t >= 0 && *t < soon))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        assert_same(
            &kept(&before),
            &kept(&after),
            &format!("{context}: AOF reload"),
        );
        let port = self.primary.port.to_string();
        let reply = self.r.call(&["REPLICAOF", "127.0.0.1", port.as_str()]);
        assert!(matches!(reply, Reply::Simple(_)), "{reply:?}");
        wait_replica_linked(&mut self.r);
    }
}

/// Filters of at most 64 MiB: a crafted capacity may ask for gigabytes, which the default
/// limit (4 GiB) grants, more than a shared test machine should give.
fn limit_filters(c: &mut Client) {
    let set = ["CONFIG", "SET", "bf.max-filter-bytes", "67108864"];
    assert_eq!(c.call(&set), ok());
}

fn tail(log: &str, lines: usize) -> String {
    let all: Vec<&str> = log.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Every key's DUMP payload and PEXPIRETIME.
pub fn dumps(c: &mut Client) -> BTreeMap<String, (Reply, Reply)> {
    sorted_keys(c)
        .into_iter()
        .map(|key| {
            let dump = c.call(&["DUMP", key.as_str()]);
            let at = c.call(&["PEXPIRETIME", key.as_str()]);
            (key, (dump, at))
        })
        .collect()
}

/// Two key sets hold the same payloads and expiries (keys missing on one side named).
pub fn assert_same(
    a: &BTreeMap<String, (Reply, Reply)>,
    b: &BTreeMap<String, (Reply, Reply)>,
    context: &str,
) {
    let names = |m: &BTreeMap<String, (Reply, Reply)>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(a), names(b), "{context}: keys");
    for (key, value) in a {
        assert_eq!(Some(value), b.get(key), "{context}: {key}");
    }
}

/// Waits until `done` holds, up to ten seconds.
pub fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A windowed value answers every read and write, reads what is added to it (unless its
/// window is under a minute, which may have forgotten it already), and dumps and loads
/// again both ways (DUMP and RESTORE, SCANDUMP and LOADCHUNK), the same.
pub fn exercise(c: &mut Client, key: &str, what: &str) {
    let info = c.call(&["BF.INFO", key]);
    assert!(matches!(info, Array(_)), "{what}: BF.INFO {info:?}");
    for command in [&["BF.DEBUG", key][..], &["BF.CARD", key], &["TYPE", key]] {
        let reply = c.call(command);
        assert!(!matches!(reply, Error(_)), "{what}: {command:?} {reply:?}");
    }
    let window = info_field(c, key, "Window").int();
    let fresh: Vec<String> = (0..40).map(|i| format!("fresh:{what}:{i}")).collect();
    let mut args = vec!["BF.MADD".to_string(), key.to_string()];
    args.extend(fresh.iter().cloned());
    let added = c.call(&args).array();
    let single = c.call(&["BF.ADD", key, "single"]);
    let exists = mexists(c, key, &fresh);
    for ((item, reply), present) in fresh.iter().zip(&added).zip(&exists) {
        // A window of a few milliseconds may have forgotten it already.
        if matches!(reply, Int(_)) && window >= 60 {
            assert_eq!(*present, Int(1), "{what}: {item} added, then absent");
        }
    }
    if matches!(single, Int(_)) && window >= 60 {
        assert_eq!(c.call(&["BF.EXISTS", key, "single"]), Int(1), "{what}");
    }
    // What exists dumps and loads again, both ways.
    let dump = c.call(&["DUMP", key]).bytes();
    let copy = format!("{key}:restored");
    let restore = c.call(&[b"RESTORE".as_slice(), copy.as_bytes(), b"0", &dump]);
    assert_eq!(restore, ok(), "{what}: its own DUMP");
    let chunks = scandump(c, "BF.SCANDUMP", key);
    let again = format!("{key}:loaded");
    for (iter, bytes) in &chunks {
        let iter = iter.to_string();
        let reply = c.call(&[
            b"BF.LOADCHUNK".as_slice(),
            again.as_bytes(),
            iter.as_bytes(),
            bytes,
        ]);
        assert_eq!(reply, ok(), "{what}: its own SCANDUMP at {iter}");
    }
    assert_eq!(scandump(c, "BF.SCANDUMP", &again), chunks, "{what}");
}
