//! A freeze that something joins mid-way: the frozen table travels in steps
//! (`BF.FREEZE key STAGE/CHUNK/COMMIT`), and the stage is part of the builder's value while
//! it does, so a replica that syncs or restarts mid-freeze, and an AOF rewritten mid-freeze,
//! get the rest of the table in the same steps and never build it on their main thread; a
//! pause, a failover or a shutdown that holds writes back holds the steps back too. Runs
//! against the `fault-injection` build, whose `BF.__FAULT FREEZE <step-bytes> <hold-after>`
//! makes the steps small and holds the freeze after some of them.
pub mod common;

use std::time::{Duration, Instant};

use common::*;

/// Table bytes per step in these tests (a 200k-item table at 1 % is about 48 steps).
const STEP: u64 = 4096;
/// What the log says when a `COMMIT` has to build the table itself.
const REBUILT: &str = "without its whole stage";

fn ids(prefix: &str, n: u32) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}/{i}")).collect()
}

fn builder(c: &mut Client, key: &str, items: &[String]) {
    assert_eq!(call!(c, "BF.RESERVE", key, "0.01", "1000", "STATIC"), ok());
    madd_in_batches(c, key, items);
}

/// Makes the freeze's steps `STEP` bytes and holds it after `steps` of them (-1: go on).
fn hold_after(c: &mut Client, steps: i64) {
    let steps = steps.to_string();
    assert_eq!(
        call!(c, "BF.__FAULT", "FREEZE", STEP.to_string(), steps),
        ok()
    );
}

/// The stage's line of BF.DEBUG (`stage:<bytes> of:<table bytes> ...`), if the key has one.
fn stage(c: &mut Client, key: &str) -> Option<String> {
    call!(c, "BF.DEBUG", key)
        .array()
        .iter()
        .map(Reply::text)
        .find(|line| line.starts_with("stage:"))
}

/// Waits until the key's stage holds `steps` steps of the table.
fn wait_stage(c: &mut Client, key: &str, steps: u64) -> String {
    let want = format!("stage:{} ", steps * STEP);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(line) = stage(c, key).filter(|line| line.starts_with(&want)) {
            return line;
        }
        assert!(Instant::now() < deadline, "the freeze did not reach {want}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// What a replica or a reload must hold the same of a key.
fn fingerprint(c: &mut Client, key: &str) -> (Reply, Reply) {
    (
        call!(c, "DEBUG", "DIGEST-VALUE", key),
        call!(c, "BF.CARD", key),
    )
}

fn dump(c: &mut Client, key: &str) -> Reply {
    call!(c, "DUMP", key)
}

fn assert_frozen_with_every_item(c: &mut Client, key: &str, items: &[String]) {
    let info = info_fields(call!(c, "BF.INFO", key));
    assert!(info.contains(&("Frozen".to_string(), Int(1))), "{info:?}");
    assert!(mexists(c, key, items).iter().all(|a| *a == Int(1)));
}

/// A replica attached (full sync) while the primary is mid-way through propagating a frozen
/// table gets the builder with the stage as far as it went, takes the rest in steps, and ends
/// byte-identical without building anything.
#[test]
fn a_replica_that_syncs_mid_freeze_takes_the_rest_in_steps() {
    let p = Server::with_module(fault_module());
    let mut c = p.client();
    let items = ids("s", 200_000);
    builder(&mut c, "k", &items);
    hold_after(&mut c, 10);
    let mut f = p.client();
    f.send(&["BF.FREEZE", "k"]);
    let line = wait_stage(&mut c, "k", 10);
    let r = Server::replica_of(&p, fault_module(), &[]);
    let mut rc = r.client();
    wait_replica_linked(&mut rc);
    wait_replica_synced(&mut c, &mut rc);
    // The full sync carried the builder and the stage as far as it was propagated.
    assert_eq!(stage(&mut rc, "k"), Some(line));
    assert_eq!(fingerprint(&mut rc, "k"), fingerprint(&mut c, "k"));
    assert_eq!(dump(&mut rc, "k"), dump(&mut c, "k"));
    assert_eq!(call!(rc, "BF.EXISTS", "k", "s/7"), Int(1));
    hold_after(&mut c, -1);
    assert_eq!(f.read(), ok());
    wait_replica_synced(&mut c, &mut rc);
    assert_frozen_with_every_item(&mut rc, "k", &items);
    assert_eq!(stage(&mut rc, "k"), None);
    assert_eq!(fingerprint(&mut rc, "k"), fingerprint(&mut c, "k"));
    assert_eq!(dump(&mut rc, "k"), dump(&mut c, "k"));
    assert!(!r.log().contains(REBUILT), "{}", r.log());
}

/// A replica that saved mid-freeze and went down while the primary finished: it restarts
/// from its own RDB (the stage as far as it came), resumes the stream and takes the rest.
#[test]
fn a_replica_restarted_mid_freeze_takes_the_rest_in_steps() {
    let p = Server::with_module(fault_module());
    let mut c = p.client();
    let mut r = Server::replica_of(&p, fault_module(), &[]);
    let mut rc = r.client();
    wait_replica_linked(&mut rc);
    let items = ids("r", 200_000);
    builder(&mut c, "k", &items);
    hold_after(&mut c, 10);
    let mut f = p.client();
    f.send(&["BF.FREEZE", "k"]);
    let line = wait_stage(&mut c, "k", 10);
    wait_replica_synced(&mut c, &mut rc);
    assert_eq!(stage(&mut rc, "k"), Some(line.clone()));
    assert_eq!(call!(rc, "SAVE"), ok());
    r.kill();
    // The rest of the table and COMMIT go out while the replica is down.
    hold_after(&mut c, -1);
    assert_eq!(f.read(), ok());
    r.restart();
    let mut rc = r.client();
    wait_replica_linked(&mut rc);
    wait_replica_synced(&mut c, &mut rc);
    assert_frozen_with_every_item(&mut rc, "k", &items);
    assert_eq!(fingerprint(&mut rc, "k"), fingerprint(&mut c, "k"));
    assert_eq!(dump(&mut rc, "k"), dump(&mut c, "k"));
    assert!(!r.log().contains(REBUILT), "{}", r.log());
}

/// BGREWRITEAOF mid-freeze, then a restart from the AOF: the rewrite holds the builder and
/// its stage (in the RDB preamble, or as `STAGE` and the `CHUNK`s so far without one), the
/// file after it the rest of the steps, and the replay ends as the freeze did.
#[test]
fn an_aof_rewritten_mid_freeze_replays_the_freeze() {
    for preamble in ["no", "yes"] {
        let mut s = Server::with_module_and_config(fault_module(), &aof_always(preamble));
        let mut c = s.client();
        let items = ids("a", 200_000);
        builder(&mut c, "k", &items);
        hold_after(&mut c, 10);
        let mut f = s.client();
        f.send(&["BF.FREEZE", "k"]);
        wait_stage(&mut c, "k", 10);
        rewrite_aof(&mut c);
        hold_after(&mut c, -1);
        assert_eq!(f.read(), ok());
        wait_for_persistence(&mut c);
        let before = (fingerprint(&mut c, "k"), dump(&mut c, "k"));
        let written: Vec<Vec<String>> = aof_commands(&s.dir)
            .iter()
            .map(|command| command_words(command))
            .filter(|w| w[0].eq_ignore_ascii_case("BF.FREEZE"))
            .collect();
        let count = |form: &str| written.iter().filter(|w| w[2] == form).count();
        let steps = written.iter().filter(|w| w[2] == "CHUNK").count();
        if preamble == "no" {
            // The rewrite's STAGE and its 10 CHUNKs, then the rest: every step once.
            assert_eq!((count("STAGE"), count("COMMIT")), (1, 1));
            assert!(steps > 10, "{steps}");
        } else {
            // The stage is in the preamble: the file after it holds the steps from the 11th.
            assert_eq!((count("STAGE"), count("COMMIT")), (0, 1));
            let first = written
                .iter()
                .find(|w| w[2] == "CHUNK")
                .map(|w| w[3].clone());
            assert_eq!(first, Some((11 * STEP + 1).to_string()));
        }
        s.restart();
        let mut c = s.client();
        assert_eq!((fingerprint(&mut c, "k"), dump(&mut c, "k")), before);
        assert_frozen_with_every_item(&mut c, "k", &items);
        assert!(!s.log().contains(REBUILT), "{}", s.log());
    }
}

/// RENAME or MOVE of a builder mid-freeze: the freeze answers that nothing was frozen, and
/// the builder keeps the stage it was carrying, the same on the primary and on its replica (a
/// stage nothing completes: reads are the builder's, DUMP carries it), until a new item drops
/// it on both (an item held already keeps it on both); then it freezes again. A COPY never
/// has a stage, and the original goes on freezing.
#[test]
fn a_builder_renamed_or_moved_mid_freeze_keeps_a_stage_nothing_completes() {
    let p = Server::with_module(fault_module());
    let mut c = p.client();
    let r = Server::replica_of(&p, fault_module(), &[]);
    let mut rc = r.client();
    wait_replica_linked(&mut rc);
    let items = ids("m", 100_000);
    let changed = err(
        "ERR the key changed during BF.FREEZE (deleted, renamed, replaced or expired): nothing was frozen",
    );
    for change in ["RENAME", "MOVE", "COPY"] {
        builder(&mut c, "k", &items);
        let card = call!(c, "BF.CARD", "k");
        hold_after(&mut c, 3);
        let mut f = p.client();
        f.send(&["BF.FREEZE", "k"]);
        let line = wait_stage(&mut c, "k", 3);
        let (db, key) = match change {
            "RENAME" => {
                assert_eq!(call!(c, "RENAME", "k", "moved"), ok());
                ("0", "moved")
            }
            "MOVE" => {
                assert_eq!(call!(c, "MOVE", "k", "1"), Int(1));
                ("1", "k")
            }
            _ => {
                assert_eq!(call!(c, "COPY", "k", "copy"), Int(1));
                ("0", "copy")
            }
        };
        hold_after(&mut c, -1);
        let stale = if change == "COPY" {
            assert_eq!(f.read(), ok());
            None
        } else {
            assert_eq!(f.read(), changed, "{change}");
            Some(line)
        };
        wait_replica_synced(&mut c, &mut rc);
        for client in [&mut c, &mut rc] {
            assert_eq!(call!(client, "SELECT", db), ok());
        }
        assert_eq!(stage(&mut c, key), stale, "{change}");
        assert_eq!(stage(&mut rc, key), stale, "{change}");
        assert_eq!(call!(rc, "BF.CARD", key), card);
        assert_eq!(call!(rc, "BF.EXISTS", key, "m/5"), Int(1));
        assert_eq!(dump(&mut rc, key), dump(&mut c, key), "{change}");
        assert_eq!(call!(c, "BF.ADD", key, "m/5"), Int(0));
        assert_eq!(call!(c, "BF.ADD", key, "new"), Int(1));
        wait_replica_synced(&mut c, &mut rc);
        assert_eq!(stage(&mut c, key), None, "{change}");
        assert_eq!(stage(&mut rc, key), None, "{change}");
        assert_eq!(call!(c, "BF.FREEZE", key), ok());
        wait_replica_synced(&mut c, &mut rc);
        assert_eq!(dump(&mut rc, key), dump(&mut c, key), "{change}");
        assert_eq!(
            fingerprint(&mut rc, key),
            fingerprint(&mut c, key),
            "{change}"
        );
        for client in [&mut c, &mut rc] {
            assert_eq!(call!(client, "SELECT", "0"), ok());
        }
        assert_eq!(call!(c, "FLUSHALL"), ok());
    }
    assert!(!r.log().contains(REBUILT), "{}", r.log());
}

/// The freeze's client on a primary demoted mid-freeze: the server unblocks it itself (Redis
/// 7.0 and Valkey answer `UNBLOCKED ...` to every blocked client when the role changes), or
/// the freeze answers that it stopped.
fn assert_stopped_by_demotion(reply: Reply) {
    let text = match &reply {
        Error(text) => text.clone(),
        _ => String::new(),
    };
    let demoted = "ERR the server became a replica during BF.FREEZE: nothing was frozen here";
    assert!(
        text.starts_with("UNBLOCKED") || text == demoted,
        "{reply:?}"
    );
}

/// A primary demoted mid-freeze, while the construction runs and while the table is being
/// propagated: the freeze stops (its client is told), and the server holds what
/// its new primary holds. In the second case the new primary is its former replica, promoted
/// with the builder and the stage as far as it came; it freezes the builder again, and the
/// demoted server follows it to the same bytes.
#[test]
fn a_primary_demoted_mid_freeze_stops_and_follows_its_new_primary() {
    // While the construction runs: 1M items take a few hundred milliseconds to build.
    let p = Server::with_module(fault_module());
    let other = Server::with_module(fault_module());
    let mut c = p.client();
    let items = ids("d", 1_000_000);
    builder(&mut c, "k", &items);
    let mut f = p.client();
    f.send(&["BF.FREEZE", "k"]);
    let freezing = ("Freezing".to_string(), Int(1));
    while !info_fields(call!(c, "BF.INFO", "k")).contains(&freezing) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let port = other.port.to_string();
    assert_eq!(call!(c, "REPLICAOF", "127.0.0.1", port.as_str()), ok());
    assert_stopped_by_demotion(f.read());
    let mut oc = other.client();
    wait_replica_linked(&mut c);
    wait_replica_synced(&mut oc, &mut c);
    assert_eq!(call!(c, "EXISTS", "k"), Int(0));
    drop((p, other));

    // While the table is being propagated: a failover to the replica.
    let p = Server::with_module(fault_module());
    let r = Server::replica_of(&p, fault_module(), &[]);
    let mut c = p.client();
    let mut rc = r.client();
    wait_replica_linked(&mut rc);
    let items = ids("e", 100_000);
    builder(&mut c, "k", &items);
    hold_after(&mut c, 3);
    let mut f = p.client();
    f.send(&["BF.FREEZE", "k"]);
    let line = wait_stage(&mut c, "k", 3);
    wait_replica_synced(&mut c, &mut rc);
    assert_eq!(call!(rc, "REPLICAOF", "NO", "ONE"), ok());
    let port = r.port.to_string();
    assert_eq!(call!(c, "REPLICAOF", "127.0.0.1", port.as_str()), ok());
    assert_stopped_by_demotion(f.read());
    wait_replica_linked(&mut c);
    wait_replica_synced(&mut rc, &mut c);
    assert_eq!(stage(&mut rc, "k"), Some(line.clone()));
    assert_eq!(stage(&mut c, "k"), Some(line));
    assert_eq!(dump(&mut c, "k"), dump(&mut rc, "k"));
    // The new primary freezes its builder; the stage it had is replaced by the new one.
    assert_eq!(call!(rc, "BF.FREEZE", "k"), ok());
    wait_replica_synced(&mut rc, &mut c);
    assert_frozen_with_every_item(&mut c, "k", &items);
    assert_eq!(dump(&mut c, "k"), dump(&mut rc, "k"));
    assert_eq!(fingerprint(&mut c, "k"), fingerprint(&mut rc, "k"));
}

/// Ends the freeze's hold and pauses clients (`WRITE` or `ALL`) in one EXEC, so that the
/// freeze's next step falls inside the pause.
fn release_into_pause(p: &Server, mode: &str, ms: u64) {
    let mut m = p.client();
    let step = STEP.to_string();
    let ms = ms.to_string();
    assert_eq!(call!(m, "MULTI"), ok());
    assert_eq!(
        m.call(&["BF.__FAULT", "FREEZE", step.as_str(), "-1"]),
        Simple("QUEUED".into())
    );
    assert_eq!(
        m.call(&["CLIENT", "PAUSE", ms.as_str(), mode]),
        Simple("QUEUED".into())
    );
    assert_eq!(call!(m, "EXEC"), Array(vec![ok(), ok()]));
}

/// Clients paused for writes or for everything while a freeze has steps left to propagate,
/// on a primary with a replica and an AOF: no step runs inside the pause (a write propagated
/// then stops the server on its own assertion), and the freeze completes once it ends, the
/// replica and the AOF with it.
#[test]
fn a_freeze_holds_its_steps_while_clients_are_paused() {
    for mode in ["WRITE", "ALL"] {
        let mut p = Server::with_module_and_config(fault_module(), &["--appendonly", "yes"]);
        let r = Server::replica_of(&p, fault_module(), &[]);
        let mut c = p.client();
        let mut rc = r.client();
        wait_replica_linked(&mut rc);
        let items = ids("p", 100_000);
        builder(&mut c, "k", &items);
        hold_after(&mut c, 3);
        let mut f = p.client();
        f.send(&["BF.FREEZE", "k"]);
        let line = wait_stage(&mut c, "k", 3);
        release_into_pause(&p, mode, 1000);
        std::thread::sleep(Duration::from_millis(300));
        assert!(p.alive(), "{mode}: {}", p.log());
        if mode == "WRITE" {
            // Reads go on in a write pause: the stage is where the pause found it.
            assert_eq!(stage(&mut c, "k"), Some(line));
        }
        assert_eq!(f.read(), ok(), "{mode}");
        wait_replica_synced(&mut c, &mut rc);
        assert_frozen_with_every_item(&mut rc, "k", &items);
        assert_eq!(dump(&mut rc, "k"), dump(&mut c, "k"));
        wait_for_persistence(&mut c);
        let before = (fingerprint(&mut c, "k"), dump(&mut c, "k"));
        p.restart();
        let mut c = p.client();
        assert_eq!(
            (fingerprint(&mut c, "k"), dump(&mut c, "k")),
            before,
            "{mode}"
        );
    }
}

/// A primary and its replica, the primary's freeze of `k` held after 3 steps of the table,
/// then the replica stopped (`SIGSTOP`) and a write it has not seen (`last`): what a
/// `FAILOVER` or a `SHUTDOWN` then waits for. Returns the primary's client, the replica's
/// and the freeze's, the stage's line, and the items.
struct Lagging {
    c: Client,
    rc: Client,
    f: Client,
    line: String,
    items: Vec<String>,
}

fn freeze_with_a_lagging_replica(p: &Server, r: &Server) -> Lagging {
    let mut c = p.client();
    let mut rc = r.client();
    wait_replica_linked(&mut rc);
    let items = ids("l", 100_000);
    builder(&mut c, "k", &items);
    hold_after(&mut c, 3);
    let mut f = p.client();
    f.send(&["BF.FREEZE", "k"]);
    let line = wait_stage(&mut c, "k", 3);
    wait_replica_synced(&mut c, &mut rc);
    r.signal("STOP");
    assert_eq!(call!(c, "SET", "last", "1"), ok());
    Lagging {
        c,
        rc,
        f,
        line,
        items,
    }
}

/// A freeze with steps left when a `FAILOVER` starts, its replica lagging: the primary holds
/// writes back until the replica catches up and no step runs meanwhile; then the roles
/// change, the freeze stops, and the former primary follows the new one's bytes.
#[test]
fn a_freeze_holds_its_steps_through_a_failover_then_stops() {
    let mut p = Server::with_module(fault_module());
    let r = Server::replica_of(&p, fault_module(), &[]);
    let Lagging {
        mut c,
        mut rc,
        mut f,
        line,
        ..
    } = freeze_with_a_lagging_replica(&p, &r);
    assert_eq!(call!(c, "FAILOVER"), ok());
    hold_after(&mut c, -1);
    std::thread::sleep(Duration::from_millis(300));
    assert!(p.alive(), "{}", p.log());
    assert_eq!(stage(&mut c, "k"), Some(line));
    r.signal("CONT");
    assert_stopped_by_demotion(f.read());
    wait_replica_linked(&mut c);
    wait_replica_synced(&mut rc, &mut c);
    assert_eq!(call!(c, "GET", "last"), bulk("1"));
    assert_eq!(dump(&mut c, "k"), dump(&mut rc, "k"));
    assert_eq!(fingerprint(&mut c, "k"), fingerprint(&mut rc, "k"));
}

/// `SHUTDOWN` waiting for a lagging replica while a freeze has steps left: no step runs in
/// its pause, the server saves and exits, and after the restart it holds what it had
/// acknowledged (the write before the shutdown, the builder with its stage).
#[test]
fn a_shutdown_mid_freeze_saves_what_it_acknowledged() {
    let mut p = Server::with_module(fault_module());
    let r = Server::replica_of(&p, fault_module(), &[]);
    // The freeze's client stays connected: the shutdown finds its freeze in flight.
    let Lagging {
        mut c,
        f: _freezing,
        line,
        items,
        ..
    } = freeze_with_a_lagging_replica(&p, &r);
    let mut s = p.client();
    s.send(&["SHUTDOWN", "SAVE"]);
    std::thread::sleep(Duration::from_millis(200));
    hold_after(&mut c, -1);
    std::thread::sleep(Duration::from_millis(300));
    assert!(p.alive(), "{}", p.log());
    assert_eq!(stage(&mut c, "k"), Some(line.clone()));
    r.signal("CONT");
    p.wait_exit();
    p.restart();
    let mut c = p.client();
    assert_eq!(call!(c, "GET", "last"), bulk("1"));
    assert_eq!(stage(&mut c, "k"), Some(line));
    assert_eq!(call!(c, "BF.CARD", "k"), Int(100_000));
    assert!(mexists(&mut c, "k", &items).iter().all(|a| *a == Int(1)));
}
