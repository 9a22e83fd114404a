//! A write refused by `bf.max-filter-bytes` changes nothing a replica does not change: a
//! primary and its replica (which panics on any propagation error) hold the same valkey-bloom
//! and compact windowed filters, byte for byte (`DUMP`), after batches where some items were
//! refused and others applied, and after adds refused in a slot the window had not opened.
pub mod common;

use common::*;
use std::time::{SystemTime, UNIX_EPOCH};

/// A pair with a replica that applied everything the primary propagated so far.
fn pair() -> (Server, Server, Client, Client) {
    let primary = Server::start();
    let replica = Server::replica_of(&primary, module_path(), &[]);
    let (p, mut r) = (primary.client(), replica.client());
    wait_replica_linked(&mut r);
    (primary, replica, p, r)
}

/// Every key of the primary holds the same bytes (`DUMP`) and expiry on the replica.
fn assert_identical(p: &mut Client, r: &mut Client) {
    wait_replica_synced(p, r);
    let keys = sorted_keys(p);
    assert_eq!(sorted_keys(r), keys);
    for key in &keys {
        assert_eq!(call!(r, "DUMP", key), call!(p, "DUMP", key), "{key}");
        assert_eq!(
            call!(r, "PEXPIRETIME", key),
            call!(p, "PEXPIRETIME", key),
            "{key}"
        );
    }
}

/// How many of a reply's answers are refusals.
fn refusals(reply: &Reply) -> usize {
    reply
        .array()
        .iter()
        .filter(|a| matches!(a, Error(_)))
        .count()
}

fn madd(c: &mut Client, key: &str, items: impl Iterator<Item = String>) -> Reply {
    let mut args = vec!["BF.MADD".to_string(), key.to_string()];
    args.extend(items);
    c.call(&args)
}

#[test]
fn batches_with_refused_items_leave_identical_copies() {
    let (_primary, _replica, mut p, mut r) = pair();
    let reserve = call!(
        p,
        "BF.RESERVE",
        "wc",
        "0.01",
        "100",
        "COMPACT",
        "WINDOW",
        "60"
    );
    assert_eq!(reserve, ok());
    let insert = call!(
        p,
        "BF.INSERT",
        "vb",
        "CAPACITY",
        "10",
        "TIGHTENING",
        "0.5",
        "ITEMS",
        "first"
    );
    assert_eq!(insert, ints(&[1]));
    assert_eq!(
        call!(p, "CONFIG", "SET", "bf.max-filter-bytes", "4000"),
        ok()
    );
    // valkey-bloom ends a batch at its first refusal; a compact window goes on past one.
    let mut refused = [0, 0];
    for (n, (key, batches)) in [("vb", 200), ("wc", 300)].into_iter().enumerate() {
        for b in 0..batches {
            let reply = madd(&mut p, key, (0..20).map(|i| format!("{key}:{b}:{i}")));
            refused[n] += refusals(&reply);
        }
    }
    assert!(refused.iter().all(|&n| n > 0), "refusals: {refused:?}");
    assert_identical(&mut p, &mut r);
}

#[test]
fn an_add_refused_in_a_new_slot_opens_no_generation() {
    let (_primary, _replica, mut p, mut r) = pair();
    // Windows of four 900 s slots, holding 0 to 798 items in the current slot; then each
    // moved one slot on and added to under a limit some of them cannot grow past.
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    let next_slot = (now.as_millis() as u64 + 900_000).to_string();
    let keys: Vec<String> = (0..400).map(|i| format!("w{i}")).collect();
    for (held, key) in keys.iter().enumerate() {
        let reserve = call!(
            p,
            "BF.RESERVE",
            key,
            "0.01",
            "100",
            "COMPACT",
            "WINDOW",
            "3600"
        );
        assert_eq!(reserve, ok());
        if held > 0 {
            madd(&mut p, key, (0..2 * held).map(|i| format!("item:{i}")));
        }
        assert_eq!(call!(p, "BF.RETIRE", key, &next_slot), Int(0));
    }
    assert_eq!(
        call!(p, "CONFIG", "SET", "bf.max-filter-bytes", "1100"),
        ok()
    );
    let mut refused = 0;
    for key in &keys {
        let filters = call!(p, "BF.INFO", key, "FILTERS");
        if matches!(call!(p, "BF.ADD", key, "new"), Error(_)) {
            refused += 1;
            assert_eq!(call!(p, "BF.INFO", key, "FILTERS"), filters, "{key}");
        }
    }
    assert!(refused > 0 && refused < keys.len(), "refused {refused}");
    assert_identical(&mut p, &mut r);
}
