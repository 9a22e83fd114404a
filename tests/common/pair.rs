//! A primary and its replica under a long randomized run: what every key holds (kind, digest,
//! absolute expiry) to compare the two servers and a server before and after a reload, startup
//! settings that follow `CONFIG SET` so a restart keeps them, and restarts that report a server
//! refusing to start instead of panicking.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::client::{Client, Reply};
use super::server::Server;
use super::state::sorted_keys;

/// What one key holds, as two servers holding the same value agree on it.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyState {
    /// `TYPE` (the module type name for filters).
    pub kind: String,
    /// `DEBUG DIGEST-VALUE`: a digest of the whole value.
    pub digest: Reply,
    /// `PEXPIRETIME`: the absolute expiry in Unix ms, -1 without one.
    pub expire_at: i64,
}

/// Every key of the server and what it holds, by name.
pub fn keyspace(c: &mut Client) -> BTreeMap<String, KeyState> {
    sorted_keys(c)
        .into_iter()
        .map(|key| {
            let kind = c.call(&["TYPE", key.as_str()]).text();
            let digest = c.call(&["DEBUG", "DIGEST-VALUE", key.as_str()]);
            let expire_at = match c.call(&["PEXPIRETIME", key.as_str()]) {
                Reply::Int(at) => at,
                other => panic!("PEXPIRETIME {key}: {other:?}"),
            };
            let state = KeyState {
                kind,
                digest,
                expire_at,
            };
            (key, state)
        })
        .collect()
}

/// The keys whose state differs between `a` and `b` (missing on one side included), each with
/// a line saying how.
pub fn keyspace_diff(
    a: &BTreeMap<String, KeyState>,
    b: &BTreeMap<String, KeyState>,
) -> Vec<(String, String)> {
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|key| match (a.get(key), b.get(key)) {
            (Some(x), Some(y)) if x == y => None,
            (x, y) => Some((key.clone(), format!("{x:?} / {y:?}"))),
        })
        .collect()
}

/// Makes `--name value` part of the server's startup settings (replacing an earlier value), so
/// a restart keeps what `CONFIG SET` changed.
pub fn set_startup(server: &mut Server, name: &str, value: &str) {
    let flag = format!("--{name}");
    let config = &mut server.config;
    // Single-value settings only; `--replicaof host port` is replaced whole by the caller.
    match config.iter().position(|c| *c == flag) {
        Some(at) if at + 1 < config.len() => config[at + 1] = value.to_string(),
        _ => config.extend([flag, value.to_string()]),
    }
}

/// Points a replica's startup settings at the primary on `port`.
pub fn set_startup_replicaof(server: &mut Server, port: u16) {
    let config = &mut server.config;
    if let Some(at) = config.iter().position(|c| c == "--replicaof") {
        config.drain(at..(at + 3).min(config.len()));
    }
    config.extend([
        "--replicaof".to_string(),
        "127.0.0.1".to_string(),
        port.to_string(),
    ]);
}

/// Restarts the server on its directory (SIGKILL, then start with its startup settings); the
/// error carries the log when it would not start.
pub fn try_restart(server: &mut Server) -> Result<(), String> {
    catch_unwind(AssertUnwindSafe(|| server.restart())).map_err(|panic| {
        panic
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_else(|| "the server did not restart".to_string())
    })
}

/// Removes the server's RDB and AOF files (kill it first), so it starts with nothing.
pub fn remove_data(server: &Server) {
    let _ = std::fs::remove_file(server.dir.join("dump.rdb"));
    let _ = std::fs::remove_dir_all(server.dir.join("appendonlydir"));
}

/// The last `lines` lines of the server's log before any crash report, then the crash
/// report's reason (`Guru Meditation`, `ASSERTION FAILED`, ...) if there is one.
pub fn log_tail(server: &Server, lines: usize) -> String {
    let log = server.log();
    let all: Vec<&str> = log.lines().collect();
    let report = all
        .iter()
        .position(|l| l.contains("BUG REPORT START"))
        .unwrap_or(all.len());
    let mut out: Vec<&str> = all[report.saturating_sub(lines)..report].to_vec();
    out.extend(all[report..].iter().filter(|l| {
        [
            "Guru Meditation",
            "ASSERTION FAILED",
            "PANIC",
            "crashed by signal",
        ]
        .iter()
        .any(|reason| l.contains(reason))
    }));
    out.join("\n")
}

/// Runs `f`, turning a panic (a server that died under a call, a reply of an unexpected
/// shape) into its message, silently: the caller reports it with what the servers say.
pub fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = catch_unwind(AssertUnwindSafe(f)).map_err(|panic| {
        panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic without a message".to_string())
    });
    std::panic::set_hook(hook);
    result
}
