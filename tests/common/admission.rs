//! Memory admission (deviation D13): measuring `used_memory` across a refused command, and
//! the helpers the admission tests share.
//!
//! "Changes nothing" is checked on `used_memory`: it may grow by at most `NOISE` (256 KiB:
//! client buffers and the server's own bookkeeping, such as its error statistics, move it by
//! tens of KiB), while every refused allocation in the tests is megabytes. A refused command
//! is sent on its own connection, closed before measuring, so its query buffer (a RESTORE
//! payload is megabytes) is not counted. It may shrink meanwhile (seen on Valkey 8.1 on a
//! loaded machine: 282 KB less across a refused header), which no refusal can cause.

use super::*;
use std::time::{Duration, Instant};

/// How far `used_memory` may grow across a refused command.
pub const NOISE: i64 = 256 * 1024;

/// Deviation D1: RedisBloom's text, then the limit that was met.
pub const D1: &str = "ERR Insufficient memory to create filter: ";

/// A server with the module and `maxmemory`.
pub fn server_with_maxmemory(maxmemory: &str) -> Server {
    Server::build(&[], &["--maxmemory", maxmemory])
}

pub fn used_memory(c: &mut Client) -> i64 {
    info_int(c, "memory", "used_memory")
}

/// Runs `command`, expects an error starting with `reply`, and checks that memory use did not
/// grow and the key was not created. Returns the error's text.
pub fn refused(c: &mut Client, command: &[&[u8]], reply: &str, key: &str) -> String {
    let before = used_memory(c);
    let mut sender = Client::connect(c.port());
    let answer = sender.call(command);
    assert!(
        matches!(&answer, Error(text) if text.starts_with(reply)),
        "{:?}: {answer:?}",
        command_text(command)
    );
    drop(sender);
    wait_until("the sender to disconnect", || {
        info_int(c, "clients", "connected_clients") == 1
    });
    let after = used_memory(c);
    assert!(
        after - before <= NOISE,
        "{:?} grew used_memory from {before} to {after}",
        command_text(command)
    );
    assert_eq!(c.call(&["EXISTS", key]), Int(0));
    match answer {
        Error(text) => text,
        _ => String::new(),
    }
}

pub fn bytes<'a>(words: &[&'a str]) -> Vec<&'a [u8]> {
    words.iter().map(|w| w.as_bytes()).collect()
}

pub fn command_text(command: &[&[u8]]) -> Vec<String> {
    command
        .iter()
        .map(|a| String::from_utf8_lossy(&a[..a.len().min(40)]).into_owned())
        .collect()
}

/// Deletes keys and waits until their memory is back: large values are freed in the
/// background (lazy free is on by default on Valkey 8, and they are large enough for it).
pub fn delete(c: &mut Client, keys: &[&str]) {
    let mut command = vec!["DEL"];
    command.extend(keys);
    assert_eq!(c.call(&command), Int(keys.len() as i64));
    wait_until("lazy free", || {
        info_int(c, "memory", "lazyfree_pending_objects") == 0
    });
}

/// Checks that `used_memory` grew by at most `NOISE` since `before`.
pub fn assert_quiet(c: &mut Client, before: i64) {
    let after = used_memory(c);
    assert!(
        after - before <= NOISE,
        "used_memory grew from {before} to {after}"
    );
}

/// Waits until `done`, for at most 30 s.
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}
