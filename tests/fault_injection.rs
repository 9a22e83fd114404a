//! Deviation D11: a panic inside the module — in a command handler or in a type callback —
//! is caught at the FFI boundary. The client gets an error, the Redis log gets the message, and
//! the server and its data stay up. Runs against the `fault-injection` build that `make test`
//! makes (`target/fault-injection/release/libbloomrs.so`, or `BLOOMRS_FAULT_MODULE`).
pub mod common;

use common::*;

#[test]
fn a_panic_in_a_command_answers_an_error_and_the_server_stays_up() {
    let mut s = Server::with_module(fault_module());
    let mut c = s.client();
    assert_eq!(call!(c, "BF.ADD", "k", "x"), Int(1));
    assert_eq!(
        call!(c, "BF.__FAULT"),
        err("ERR bloomrs internal error (see the server log)")
    );
    assert!(s.alive());
    assert_eq!(call!(c, "PING"), Simple("PONG".into()));
    assert_eq!(call!(c, "BF.EXISTS", "k", "x"), Int(1));
    assert!(
        s.log().contains("bloomrs: internal error: panicked at"),
        "{}",
        s.log()
    );
    assert!(s.log().contains("fault injected by BF.__FAULT"));
    // Again, to show the module keeps working after a caught panic.
    assert_eq!(
        call!(c, "BF.__FAULT"),
        err("ERR bloomrs internal error (see the server log)")
    );
    assert_eq!(call!(c, "BF.ADD", "k", "y"), Int(1));
}

#[test]
fn a_panic_inside_an_array_of_replies_ends_the_array_with_the_error() {
    // A batch command (BF.MADD, BF.INSERT) replies each item into an array whose length it
    // gives at the end: a panic midway must not leave the array without one, which would
    // stop the server.
    let mut s = Server::with_module(fault_module());
    let mut c = s.client();
    let internal = err("ERR bloomrs internal error (see the server log)");
    assert_eq!(
        call!(c, "BF.__FAULT", "ARRAY", "3"),
        Array(vec![Int(0), Int(1), Int(2), internal.clone()])
    );
    assert_eq!(call!(c, "BF.__FAULT", "ARRAY", "0"), Array(vec![internal]));
    assert!(s.alive());
    assert_eq!(call!(c, "PING"), Simple("PONG".into()));
    assert_eq!(
        call!(c, "BF.MADD", "k", "x", "y"),
        Array(vec![Int(1), Int(1)])
    );
    assert!(s.log().contains("fault injected by BF.__FAULT ARRAY"));
}

#[test]
fn a_panic_in_a_type_callback_is_contained() {
    let mut s = Server::with_module(fault_module());
    let mut c = s.client();
    assert_eq!(call!(c, "BF.RESERVE", "k", "0.01", "100000"), ok());
    let normal = call!(c, "MEMORY", "USAGE", "k").int();
    assert_eq!(value_memory(&mut c, "k"), 137_944);
    assert_eq!(call!(c, "BF.__FAULT", "MEMORY"), ok());
    // The memory-usage callback panics; its guard answers 0 bytes for the value.
    assert!(call!(c, "MEMORY", "USAGE", "k").int() < 1000);
    assert!(s.alive());
    assert!(s.log().contains("fault injected into a type callback"));
    assert_eq!(call!(c, "MEMORY", "USAGE", "k").int(), normal);
    assert_eq!(call!(c, "BF.CARD", "k"), Int(0));
}

#[test]
fn the_release_build_has_no_fault_command() {
    let s = Server::start();
    let mut c = s.client();
    assert_eq!(
        call!(c, "BF.__FAULT"),
        err("ERR unknown command 'BF.__FAULT', with args beginning with: ")
    );
}
