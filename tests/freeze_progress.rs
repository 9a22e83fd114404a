//! A freeze shows how far it is: while `BF.FREEZE` runs, `BF.INFO` of the key adds `Freeze
//! step` (1 builds the table off the main thread, 2 propagates it in steps), `Freeze done`
//! and `Freeze total` (hashes read, then table bytes sent), and `INFO bf` counts the freezes
//! running (`bf_static_freezing`) and describes the oldest (`bf_static_freeze`). Runs against
//! the `fault-injection` build, whose `BF.__FAULT FREEZE <step-bytes> <hold-after>` holds the
//! freeze part-way through propagating its table.

pub mod common;

use std::time::{Duration, Instant};

use common::*;

/// Table bytes per step (a 200k-item table at 1 % is about 48 steps).
const STEP: u64 = 4096;

fn info_bf(c: &mut Client) -> Vec<(String, String)> {
    call!(c, "INFO", "bf")
        .text()
        .lines()
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect()
}

fn info_value(c: &mut Client, name: &str) -> String {
    info_bf(c)
        .into_iter()
        .find(|(field, _)| field == name)
        .map(|(_, value)| value)
        .unwrap_or_else(|| panic!("no {name} in INFO bf"))
}

/// The `Freeze *` fields of `BF.INFO key`: (step, done, total), if a freeze runs.
fn freeze_fields(c: &mut Client, key: &str) -> Option<(i64, i64, i64)> {
    let fields = info_fields(call!(c, "BF.INFO", key));
    let get = |name: &str| {
        fields
            .iter()
            .find(|(field, _)| field == name)
            .map(|(_, value)| value.int())
    };
    Some((
        get("Freeze step")?,
        get("Freeze done")?,
        get("Freeze total")?,
    ))
}

#[test]
fn a_running_freeze_shows_its_step_and_how_far_it_is() {
    let s = Server::with_module(fault_module());
    let mut c = s.client();
    let items: Vec<String> = (0..200_000).map(|i| format!("id:{i}")).collect();
    assert_eq!(
        call!(c, "BF.RESERVE", "ids", "0.01", "1000", "STATIC"),
        ok()
    );
    madd_in_batches(&mut c, "ids", &items);
    assert_eq!(freeze_fields(&mut c, "ids"), None);
    assert_eq!(info_value(&mut c, "bf_static_freezing"), "0");
    assert_eq!(info_value(&mut c, "bf_static_freeze"), "none");

    // Held after 10 of its steps: the table is built and a part of it propagated.
    assert_eq!(
        call!(c, "BF.__FAULT", "FREEZE", STEP.to_string(), "10"),
        ok()
    );
    let mut freezer = s.client();
    freezer.send(&["BF.FREEZE", "ids"]);
    let deadline = Instant::now() + Duration::from_secs(60);
    let (step, done, total) = loop {
        if let Some(fields @ (2, done, _)) = freeze_fields(&mut c, "ids") {
            if done == (10 * STEP) as i64 {
                break fields;
            }
        }
        assert!(Instant::now() < deadline, "the freeze never reached step 2");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(step, 2);
    assert!(total > done, "{done} of {total}");
    assert_eq!(info_value(&mut c, "bf_static_freezing"), "1");
    assert_eq!(
        info_value(&mut c, "bf_static_freeze"),
        format!("step=propagate,done={done},total={total},next=commit")
    );

    // Let it go: it completes, and the progress goes with it.
    assert_eq!(
        call!(c, "BF.__FAULT", "FREEZE", STEP.to_string(), "-1"),
        ok()
    );
    assert_eq!(freezer.read(), ok());
    assert_eq!(freeze_fields(&mut c, "ids"), None);
    assert_eq!(info_value(&mut c, "bf_static_freezing"), "0");
    assert_eq!(info_value(&mut c, "bf_static_freeze"), "none");
}

#[test]
fn the_build_step_counts_the_hashes_it_reads() {
    let s = Server::start();
    let mut c = s.client();
    let items: Vec<String> = (0..2_000_000).map(|i| format!("id:{i}")).collect();
    assert_eq!(
        call!(c, "BF.RESERVE", "ids", "0.01", "1000", "STATIC"),
        ok()
    );
    for batch in items.chunks(10_000) {
        let mut args = vec!["BF.MADD".to_string(), "ids".to_string()];
        args.extend(batch.iter().cloned());
        c.send(&args);
    }
    for _ in items.chunks(10_000) {
        c.read();
    }
    let mut freezer = s.client();
    freezer.send(&["BF.FREEZE", "ids"]);
    // Whatever step each look finds, its figures are within their totals; the build step's
    // total is twice the items (each attempt reads every hash twice).
    let mut seen = Vec::new();
    freezer.set_reply_timeout(Duration::from_millis(5));
    while freezer.try_read().is_none() {
        if let Some((step, done, total)) = freeze_fields(&mut c, "ids") {
            assert!((0..=total).contains(&done), "{done} of {total}");
            if step == 1 {
                assert_eq!(total, 4_000_000);
            }
            seen.push(step);
        }
    }
    assert_eq!(freeze_fields(&mut c, "ids"), None);
    assert_eq!(info_value(&mut c, "bf_static_freezing"), "0");
    eprintln!("steps seen while freezing 2M items: {seen:?}");
}
