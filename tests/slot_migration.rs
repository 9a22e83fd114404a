//! Valkey 9's atomic slot migration (`CLUSTER MIGRATESLOTS`): the module declares it handles it
//! on Valkey 9 and later only, and a slot holding filters of every kind moves whole. Valkey
//! streams the slot's keys to the target as the commands each type's AOF-rewrite callback
//! emits (`BF.LOADCHUNK`/`CF.LOADCHUNK`), then the writes made meanwhile, then hands the slot
//! over during a short write pause. The cluster is three primaries with one replica each; every
//! key ends on the target byte for byte (`DUMP`), its replica holds the same digests, writes
//! sent during the migration (following MOVED as a cluster client does) are all there, and a
//! migration cancelled midway (during the snapshot, and once it is streaming) leaves the source
//! whole and serving and the target empty.
//!
//! The cluster tests run where the server is Valkey 9 or later and say why they skip elsewhere.
pub mod common;

use common::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Whether the server under test is Valkey 9 or later; says so when it is not.
fn on_valkey9() -> bool {
    let server = Server::start();
    let info = server_info(&mut server.client());
    let yes = info.is_valkey() && info.at_least(9, 0);
    if !yes {
        println!("skipped: {info} has no atomic slot migration (CLUSTER MIGRATESLOTS, Valkey 9+)");
    }
    yes
}

#[test]
fn the_module_declares_atomic_slot_migration_on_valkey_9_only() {
    let server = Server::start();
    let mut c = server.client();
    let info = server_info(&mut c);
    let modules = call!(c, "INFO", "modules").text();
    let line = modules
        .lines()
        .find(|line| line.starts_with("module:name=bf,"))
        .unwrap_or_else(|| panic!("{modules}"));
    // The bit means something else (or nothing) on Redis and older Valkey: never set there.
    let options = if info.is_valkey() && info.at_least(9, 0) {
        "options=[handle-io-errors|handle-atomic-slot-migration]"
    } else {
        "options=[handle-io-errors]"
    };
    assert!(line.ends_with(options), "{info}: {line}");
}

/// The hash tag every key of the test shares, so they are all in one slot.
const TAG: &str = "{mig}";

fn key(name: &str) -> String {
    format!("{TAG}:{name}")
}

fn words(text: &[&str]) -> Vec<String> {
    text.iter().map(|s| s.to_string()).collect()
}

/// `command key item...` in batches of 200.
fn batches(command: &str, key: &str, items: &[String]) -> Vec<Vec<String>> {
    items
        .chunks(200)
        .map(|batch| {
            let mut args = vec![command.to_string(), key.to_string()];
            args.extend(batch.iter().cloned());
            args
        })
        .collect()
}

fn items(prefix: &str, range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("{prefix}:{i}")).collect()
}

/// The keys of the slot: every kind, and which of them take writes during the migrations (their
/// expected bytes then come from a standalone server that got the same commands).
struct Slot {
    keys: Vec<String>,
    written: Vec<String>,
}

/// The cluster and a standalone server that get the same commands.
struct Both<'a> {
    cluster: &'a mut ClusterClient,
    mirror: &'a mut Client,
}

impl Both<'_> {
    fn run(&mut self, command: Vec<String>) {
        let reply = self.cluster.call(&command);
        assert!(!matches!(reply, Error(_)), "{command:?}: {reply:?}");
        assert_eq!(self.mirror.call(&command), reply, "{command:?}");
    }

    /// Creates a filter whose bytes hold a decision of the primary's (a compact filter's
    /// placement secret): on the cluster, then on the mirror as its `DUMP`, so that the same
    /// commands after it answer and write the same on both.
    fn create(&mut self, command: Vec<String>) {
        let reply = self.cluster.call(&command);
        assert!(!matches!(reply, Error(_)), "{command:?}: {reply:?}");
        let key = command[1].as_str();
        let dump = self.cluster.call(&["DUMP", key]).bytes();
        let restore = [b"RESTORE".as_slice(), key.as_bytes(), b"0", &dump];
        assert_eq!(self.mirror.call(&restore), ok(), "{command:?}");
    }

    fn run_all(&mut self, commands: Vec<Vec<String>>) {
        commands.into_iter().for_each(|command| self.run(command));
    }
}

/// Builds a filter of every kind in the slot, with the same commands on `mirror`, a standalone
/// server (except the windowed filter, whose bytes hold the primary's clock).
fn build(cluster: &mut ClusterClient, source: &mut Client, mirror: &mut Client) -> Slot {
    let mut both = Both { cluster, mirror };
    // A default chain grown to several links.
    let chain = key("chain");
    both.run(words(&[
        "BF.RESERVE",
        &chain,
        "0.01",
        "1000",
        "EXPANSION",
        "2",
    ]));
    both.run_all(batches("BF.MADD", &chain, &items("chain", 0..20_000)));
    // A filter past the 16 MiB of one LOADCHUNK chunk (two chunks in the stream).
    let large = key("large");
    both.run(words(&[
        "BF.RESERVE",
        &large,
        "0.001",
        "12000000",
        "NONSCALING",
    ]));
    both.run_all(batches("BF.MADD", &large, &items("large", 0..1000)));
    // Counting, with deletions.
    let counting = key("counting");
    both.run(words(&[
        "BF.RESERVE",
        &counting,
        "0.01",
        "5000",
        "COUNTING",
    ]));
    both.run_all(batches("BF.MADD", &counting, &items("counting", 0..4000)));
    both.run_all(batches("BF.MDEL", &counting, &items("counting", 0..1000)));
    // Blocked.
    let blocked = key("blocked");
    both.run(words(&["BF.RESERVE", &blocked, "0.01", "5000", "BLOCKED"]));
    both.run_all(batches("BF.MADD", &blocked, &items("blocked", 0..4000)));
    // Compact counting with heavy duplicates: 100 items added 40 times each.
    let duplicates = key("compact-counting");
    let reserve = [
        "BF.RESERVE",
        &duplicates,
        "0.01",
        "100",
        "COMPACT",
        "COUNTING",
    ];
    both.create(words(&reserve));
    for _ in 0..40 {
        both.run_all(batches("BF.MADD", &duplicates, &items("dup", 0..100)));
    }
    // A cuckoo filter grown to several sub-filters, with deletions.
    let cuckoo = key("cuckoo");
    both.run(words(&["CF.RESERVE", &cuckoo, "500", "EXPANSION", "2"]));
    for mut command in batches("CF.INSERT", &cuckoo, &items("cuckoo", 0..3000)) {
        command.insert(2, "ITEMS".into());
        both.run(command);
    }
    for item in items("cuckoo", 0..200) {
        both.run(words(&["CF.DEL", &cuckoo, &item]));
    }
    // Sparse: created while the setting allows it, on the source and on the mirror alike.
    let sparse = key("sparse");
    let sparse_max = |both: &mut Both, source: &mut Client, bytes: &str| {
        for c in [source, &mut *both.mirror] {
            let reply = call!(c, "CONFIG", "SET", "bf.bf-sparse-max-bytes", bytes);
            assert_eq!(reply, ok());
        }
    };
    sparse_max(&mut both, source, "65536");
    both.run(words(&["BF.RESERVE", &sparse, "0.01", "10000"]));
    both.run_all(batches("BF.MADD", &sparse, &items("sparse", 0..300)));
    sparse_max(&mut both, source, "0");
    // Compact, caught with its split pointer inside a level (BF.DEBUG's `split:` not 0), else
    // simply grown through many splits.
    let compact = key("compact");
    both.create(words(&["BF.RESERVE", &compact, "0.01", "100", "COMPACT"]));
    let mut added = 0;
    let mut mid_growth = false;
    while added < 50_000 && !mid_growth {
        both.run_all(batches(
            "BF.MADD",
            &compact,
            &items("compact", added..added + 50),
        ));
        added += 50;
        let debug = both.cluster.call(&["BF.DEBUG", &compact]);
        mid_growth = added > 5_000
            && debug
                .array()
                .iter()
                .any(|line| line.text().contains(" split:") && !line.text().contains(" split:0 "));
    }
    println!("compact filter: {added} items, mid-growth: {mid_growth}");
    // Static sets: a builder still taking items, and one frozen into a binary fuse filter.
    let builder = key("static-builder");
    let frozen = key("static-frozen");
    for name in [&builder, &frozen] {
        both.run(words(&["BF.RESERVE", name, "0.001", "1000", "STATIC"]));
        both.run_all(batches("BF.MADD", name, &items(name, 0..5000)));
    }
    both.run(words(&["BF.FREEZE", &frozen]));
    // Windowed: its generations carry the primary's clock, so it is built on the cluster only.
    let windowed = key("windowed");
    let reserve = [
        "BF.RESERVE",
        &windowed,
        "0.01",
        "2000",
        "WINDOW",
        "3600",
        "GENERATIONS",
        "4",
    ];
    assert_eq!(both.cluster.call(&reserve), ok());
    for command in batches("BF.MADD", &windowed, &items("windowed", 0..3000)) {
        assert!(matches!(both.cluster.call(&command), Array(_)));
    }
    // Compact windowed: its secret is the primary's too, so it is built on the cluster only.
    let feed = key("feed");
    let reserve = [
        "BF.RESERVE",
        &feed,
        "0.01",
        "100",
        "COMPACT",
        "WINDOW",
        "3600",
    ];
    assert_eq!(both.cluster.call(&reserve), ok());
    for command in batches("BF.MADD", &feed, &items("feed", 0..3000)) {
        assert!(matches!(both.cluster.call(&command), Array(_)));
    }
    // valkey-bloom's filter, made with its own options and grown to several filters.
    let valkey_bloom = key("valkey-bloom");
    let seed = "valkey-bloom-seed-of-32-bytes-xx";
    let insert = ["BF.INSERT", &valkey_bloom, "CAPACITY", "500", "SEED", seed];
    both.run(words(&insert));
    both.run_all(batches(
        "BF.MADD",
        &valkey_bloom,
        &items("valkey-bloom", 0..4000),
    ));
    // Each key is the kind it should be; the chain and the cuckoo filter grew.
    let kinds = [
        (&chain, "MBbloom--"),
        (&large, "MBbloom--"),
        (&counting, "bloomrsCT"),
        (&blocked, "bloomrsBK"),
        (&duplicates, "bloomrsCP"),
        (&cuckoo, "MBbloomCF"),
        (&sparse, "bloomrsSP"),
        (&compact, "bloomrsCP"),
        (&windowed, "bloomrsWN"),
        (&feed, "bloomrsWC"),
        (&builder, "bloomrsST"),
        (&frozen, "bloomrsST"),
        (&valkey_bloom, "bloomfltr"),
    ];
    for (key, kind) in kinds {
        assert_eq!(
            both.cluster.call(&["TYPE", key]),
            Simple(kind.into()),
            "{key}"
        );
    }
    let links = both.cluster.call(&["BF.INFO", &chain, "FILTERS"]).array()[0].int();
    let sub_filters = both.cluster.call(&["CF.INFO", &cuckoo]).array()[5].int();
    assert!(
        links > 3 && sub_filters > 2,
        "{links} links, {sub_filters} sub-filters"
    );
    Slot {
        keys: vec![
            chain.clone(),
            large,
            counting,
            blocked,
            duplicates,
            cuckoo.clone(),
            sparse,
            compact.clone(),
            windowed,
            feed,
            builder,
            frozen,
            valkey_bloom.clone(),
            key("created"),
        ],
        written: vec![chain, cuckoo, compact, valkey_bloom, key("created")],
    }
}

/// The writes a client sends to the slot while a migration runs, through a cluster client
/// that starts at the source; each command is kept to replay on the mirror.
struct Writer {
    stop: Arc<AtomicBool>,
    /// Writes done so far.
    done: Arc<AtomicUsize>,
    /// MOVED and ASK replies followed so far.
    redirected: Arc<AtomicUsize>,
    thread: JoinHandle<Vec<Vec<String>>>,
}

impl Writer {
    fn start(port: u16, round: &str) -> Writer {
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicUsize::new(0));
        let redirected = Arc::new(AtomicUsize::new(0));
        let (stop_, done_, redirected_) = (stop.clone(), done.clone(), redirected.clone());
        let round = round.to_string();
        let thread = std::thread::spawn(move || {
            let mut cluster = ClusterClient::new(port);
            let mut sent = Vec::new();
            let mut i = 0;
            while !stop_.load(Ordering::Relaxed) {
                let item = format!("{round}:{i}");
                let command = match i % 5 {
                    0 => words(&["BF.ADD", &key("chain"), &item]),
                    1 => words(&["CF.ADD", &key("cuckoo"), &item]),
                    2 => words(&["BF.ADD", &key("compact"), &item]),
                    3 => words(&["BF.ADD", &key("valkey-bloom"), &item]),
                    _ => words(&["BF.ADD", &key("created"), &item]),
                };
                let reply = cluster.call(&command);
                assert!(matches!(reply, Int(_)), "{command:?}: {reply:?}");
                sent.push(command);
                i += 1;
                done_.store(i, Ordering::Relaxed);
                redirected_.store(cluster.redirections, Ordering::Relaxed);
            }
            sent
        });
        Writer {
            stop,
            done,
            redirected,
            thread,
        }
    }

    /// Waits until `more` writes past the current count are done.
    fn wait_for(&self, more: usize) {
        let target = self.done.load(Ordering::Relaxed) + more;
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.done.load(Ordering::Relaxed) < target {
            assert!(Instant::now() < deadline, "the writes stalled");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn finish(self) -> Vec<Vec<String>> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("the writer")
    }
}

/// `CLUSTER GETSLOTMIGRATIONS` as maps of text.
fn migrations(c: &mut Client) -> Vec<HashMap<String, String>> {
    call!(c, "CLUSTER", "GETSLOTMIGRATIONS")
        .array()
        .iter()
        .map(|job| {
            let fields = match job {
                Map(pairs) => pairs.clone(),
                Array(flat) => flat
                    .chunks(2)
                    .map(|pair| (pair[0].clone(), pair[1].clone()))
                    .collect(),
                other => panic!("{other:?}"),
            };
            fields
                .into_iter()
                .map(|(name, value)| {
                    let value = match value {
                        Int(n) => n.to_string(),
                        other => other.text(),
                    };
                    (name.text(), value)
                })
                .collect()
        })
        .collect()
}

fn migration_names(c: &mut Client) -> Vec<String> {
    migrations(c)
        .into_iter()
        .map(|job| job["name"].clone())
        .collect()
}

/// Waits until the job `name` on `c` is in one of `states`; returns its state.
fn wait_state(c: &mut Client, name: &str, states: &[&str]) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let jobs = migrations(c);
        if let Some(job) = jobs.iter().find(|job| job["name"] == name) {
            if states.contains(&job["state"].as_str()) {
                return job["state"].clone();
            }
            assert!(
                Instant::now() < deadline,
                "job {name} not in {states:?}: {job:?}"
            );
        }
        assert!(Instant::now() < deadline, "no job {name}: {jobs:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts `CLUSTER MIGRATESLOTS` of `slot` from `source` to `target_id`; the job's name.
fn migrate(source: &mut Client, slot: i64, target_id: &str) -> String {
    let known = migration_names(source);
    let slot = slot.to_string();
    let reply = call!(
        source,
        "CLUSTER",
        "MIGRATESLOTS",
        "SLOTSRANGE",
        slot.as_str(),
        slot.as_str(),
        "NODE",
        target_id
    );
    assert_eq!(reply, ok());
    migration_names(source)
        .into_iter()
        .find(|name| !known.contains(name))
        .expect("a new migration job")
}

/// Waits until `c` answers `count` for `CLUSTER COUNTKEYSINSLOT slot`.
fn wait_count(c: &mut Client, slot: i64, count: i64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let now = call!(c, "CLUSTER", "COUNTKEYSINSLOT", slot.to_string()).int();
        if now == count {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{now} keys in slot {slot}, not {count}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What each key of the slot should be: its `DUMP` on `node` where it took no writes, on the
/// mirror (after the same writes) where it did.
fn expected(slot: &Slot, node: &mut Client, mirror: &mut Client) -> Vec<Vec<u8>> {
    slot.keys
        .iter()
        .map(|key| {
            let from = if slot.written.contains(key) {
                &mut *mirror
            } else {
                &mut *node
            };
            call!(from, "DUMP", key.as_str()).bytes()
        })
        .collect()
}

fn dumps(c: &mut Client, keys: &[String]) -> Vec<Vec<u8>> {
    keys.iter()
        .map(|key| call!(c, "DUMP", key.as_str()).bytes())
        .collect()
}

fn digests(c: &mut Client, keys: &[String]) -> Vec<Reply> {
    keys.iter()
        .map(|key| call!(c, "DEBUG", "DIGEST-VALUE", key.as_str()))
        .collect()
}

/// Replays the writes on the mirror, each with the reply the cluster gave (not checked: a
/// `BF.ADD` answers the same on both only if the values were the same, which `DUMP` checks).
fn replay(mirror: &mut Client, writes: &[Vec<String>]) {
    for command in writes {
        assert!(matches!(mirror.call(command), Int(_)), "{command:?}");
    }
}

/// Every item the writes added is in its filter on the node `c` reaches.
fn assert_writes_present(cluster: &mut ClusterClient, writes: &[Vec<String>]) {
    for command in writes {
        let exists = if command[0] == "CF.ADD" {
            "CF.EXISTS"
        } else {
            "BF.EXISTS"
        };
        let reply = cluster.call(&[exists, command[1].as_str(), command[2].as_str()]);
        assert_eq!(reply, Int(1), "{command:?}");
    }
}

/// How a cancelled migration is held midway.
#[derive(Clone, Copy, Debug)]
enum Midway {
    /// While the source's child streams the snapshot, slowed to a key every 0.3 s
    /// (`rdb-key-save-delay`): the target holds part of the slot.
    Snapshot,
    /// Once the snapshot is sent and the writes stream (`DEBUG SLOTMIGRATION PREVENT-PAUSE`):
    /// the target holds the whole slot, not yet its own.
    Streaming,
}

#[test]
fn every_kind_moves_with_migrateslots() {
    if !on_valkey9() {
        return;
    }
    let nodes = start_cluster(3, 1, &[]);
    let (primaries, replicas) = nodes.split_at(3);
    let mut any = primaries[0].client();
    let slot = call!(any, "CLUSTER", "KEYSLOT", key("chain")).int();
    let owner = slot_owner(&mut any, slot);
    let source = primaries.iter().find(|n| n.port == owner).unwrap();
    let target = primaries.iter().find(|n| n.port != source.port).unwrap();
    let replica_of = |primary: &Server| {
        replicas
            .iter()
            .find(|r| primary_of(r, &nodes).port == primary.port)
            .unwrap()
    };
    let (source_replica, target_replica) = (replica_of(source), replica_of(target));
    let (mut s, mut t) = (source.client(), target.client());
    let (mut sr, mut tr) = (source_replica.client(), target_replica.client());
    let target_id = node_id(&mut t);

    let standalone = Server::start();
    let mut mirror = standalone.client();
    let mut cluster = ClusterClient::new(source.port);
    let slot_keys = build(&mut cluster, &mut s, &mut mirror);
    let keys = slot_keys.keys.clone();
    assert_eq!(
        call!(s, "CLUSTER", "COUNTKEYSINSLOT", slot.to_string()),
        Int(keys.len() as i64 - 1),
        "every key but the one the writes create"
    );
    let stored = &keys[..keys.len() - 1];
    let bytes: usize = dumps(&mut s, stored).iter().map(Vec::len).sum();
    let memory: i64 = stored
        .iter()
        .map(|key| call!(s, "MEMORY", "USAGE", key.as_str()).int())
        .sum();
    println!(
        "slot {slot}: {} keys, {memory} bytes in memory, {bytes} bytes of DUMP (compressed)",
        stored.len()
    );

    // Cancelled midway, twice: the source keeps everything and serves, the target (and its
    // replica) drop what they had received.
    let mut all_writes = Vec::new();
    for (round, midway) in [Midway::Snapshot, Midway::Streaming]
        .into_iter()
        .enumerate()
    {
        let before_cancel = dumps(&mut s, &keys[..keys.len() - 1]);
        let writer = Writer::start(source.port, &format!("cancel{round}"));
        match midway {
            Midway::Snapshot => assert_eq!(
                call!(s, "CONFIG", "SET", "rdb-key-save-delay", "300000"),
                ok()
            ),
            Midway::Streaming => assert_eq!(
                call!(s, "DEBUG", "SLOTMIGRATION", "PREVENT-PAUSE", "1"),
                ok()
            ),
        }
        let job = migrate(&mut s, slot, &target_id);
        match midway {
            Midway::Snapshot => {
                wait_state(&mut s, &job, &["snapshotting"]);
                std::thread::sleep(Duration::from_millis(700));
                assert_eq!(
                    wait_state(
                        &mut s,
                        &job,
                        &["snapshotting", "replicating", "waiting-to-pause"]
                    ),
                    "snapshotting"
                );
            }
            Midway::Streaming => {
                wait_state(&mut s, &job, &["waiting-to-pause"]);
            }
        }
        writer.wait_for(200);
        assert_eq!(call!(s, "CLUSTER", "CANCELSLOTMIGRATIONS"), ok());
        assert_eq!(wait_state(&mut s, &job, &["cancelled"]), "cancelled");
        assert_eq!(wait_state(&mut t, &job, &["failed"]), "failed");
        writer.wait_for(200);
        let writes = writer.finish();
        assert_eq!(call!(s, "CONFIG", "SET", "rdb-key-save-delay", "0"), ok());
        assert_eq!(
            call!(s, "DEBUG", "SLOTMIGRATION", "PREVENT-PAUSE", "0"),
            ok()
        );
        println!("cancelled at {midway:?}: {} writes meanwhile", writes.len());
        replay(&mut mirror, &writes);
        all_writes.extend(writes);
        wait_count(&mut t, slot, 0);
        wait_count(&mut tr, slot, 0);
        assert_eq!(slot_owner(&mut s, slot), source.port);
        // The source is whole: the keys without writes as before, the others as the mirror.
        let now = dumps(&mut s, &keys);
        assert_eq!(now, expected(&slot_keys, &mut s, &mut mirror));
        for (key, (was, is)) in keys.iter().zip(before_cancel.iter().zip(&now)) {
            if !slot_keys.written.contains(key) {
                assert_eq!(was, is, "{key}");
            }
        }
        assert_eq!(call!(s, "WAIT", "1", "10000"), Int(1));
        assert_eq!(digests(&mut sr, &keys), digests(&mut s, &keys));
    }

    // Migrated whole, with writes during the snapshot, the streaming, the pause and after.
    let before = expected(&slot_keys, &mut s, &mut mirror);
    let source_digests = digests(&mut s, &keys);
    assert_eq!(
        call!(s, "DEBUG", "SLOTMIGRATION", "PREVENT-PAUSE", "1"),
        ok()
    );
    let writer = Writer::start(source.port, "migrate");
    writer.wait_for(100);
    let started = Instant::now();
    let done_at_start = writer.done.load(Ordering::Relaxed);
    let job = migrate(&mut s, slot, &target_id);
    wait_state(&mut s, &job, &["waiting-to-pause"]);
    let done_at_snapshot = writer.done.load(Ordering::Relaxed);
    writer.wait_for(300);
    assert_eq!(
        call!(s, "DEBUG", "SLOTMIGRATION", "PREVENT-PAUSE", "0"),
        ok()
    );
    assert_eq!(
        wait_state(&mut s, &job, &["success", "failed", "cancelled"]),
        "success"
    );
    let done_at_success = writer.done.load(Ordering::Relaxed);
    assert_eq!(
        wait_state(&mut t, &job, &["success", "failed", "cancelled"]),
        "success"
    );
    let took = started.elapsed();
    // The writes go on until the client has been sent to the target.
    let deadline = Instant::now() + Duration::from_secs(30);
    while writer.redirected.load(Ordering::Relaxed) == 0 {
        assert!(Instant::now() < deadline, "the writer was never redirected");
        std::thread::sleep(Duration::from_millis(5));
    }
    writer.wait_for(100);
    let writes = writer.finish();
    println!(
        "migrated in {took:?} (held streaming for 300 writes): {} writes between MIGRATESLOTS \
         and success ({} while the snapshot was sent), {} in this round, {} keys, {bytes} bytes",
        done_at_success - done_at_start,
        done_at_snapshot - done_at_start,
        writes.len(),
        keys.len()
    );
    replay(&mut mirror, &writes);
    all_writes.extend(writes);

    for c in primaries
        .iter()
        .map(Server::client)
        .collect::<Vec<_>>()
        .iter_mut()
    {
        let deadline = Instant::now() + Duration::from_secs(30);
        while slot_owner(c, slot) != target.port {
            assert!(Instant::now() < deadline, "the slot did not move");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    // Every key on the target as it was on the source, or as the mirror after the same writes.
    let after = expected(&slot_keys, &mut t, &mut mirror);
    assert_eq!(dumps(&mut t, &keys), after);
    for (key, (was, is)) in keys.iter().zip(before.iter().zip(&after)) {
        if !slot_keys.written.contains(key) {
            assert_eq!(was, is, "{key}");
        }
    }
    let target_digests = digests(&mut t, &keys);
    for (key, (was, is)) in keys.iter().zip(source_digests.iter().zip(&target_digests)) {
        if !slot_keys.written.contains(key) {
            assert_eq!(was, is, "{key}");
        }
    }
    assert_eq!(call!(t, "WAIT", "1", "10000"), Int(1));
    assert_eq!(digests(&mut tr, &keys), target_digests);
    wait_count(&mut s, slot, 0);
    wait_count(&mut sr, slot, 0);
    let mut fresh = ClusterClient::new(source.port);
    assert_writes_present(&mut fresh, &all_writes);
    assert_eq!(
        fresh.call(&["BF.EXISTS", &key("chain"), "chain:19999"]),
        Int(1)
    );
    println!(
        "{} writes in all, each present on the target",
        all_writes.len()
    );
}
