//! Every kind from a client library: `scripts/clients/every_kind.py` (the redis-py calls
//! `docs/clients.md` shows) run against a real server with the module. It needs a Python with
//! redis-py: `BLOOMRS_PYTHON`, else the benchmark suite's `.venv` (`scripts/bench/setup.sh`),
//! else `python3`, else Debian's `/usr/bin/python3` (`scripts/install-deps.sh` installs its
//! `python3-redis`); with none the test fails, naming what to install.

pub mod common;

use std::path::Path;
use std::process::Command;

use common::*;

/// A Python interpreter that imports redis-py, if there is one.
fn python_with_redis() -> Option<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let venv = root.join(".venv/bin/python").display().to_string();
    let candidates = [
        std::env::var("BLOOMRS_PYTHON").ok(),
        Some(venv),
        Some("python3".into()),
        Some("/usr/bin/python3".into()),
    ];
    candidates.into_iter().flatten().find(|python| {
        Command::new(python)
            .args(["-c", "import redis"])
            .output()
            .is_ok_and(|out| out.status.success())
    })
}

#[test]
fn redis_py_reaches_every_kind() {
    let python = python_with_redis()
        .expect("no Python imports redis-py: run scripts/install-deps.sh (Debian's python3-redis)");
    let server = Server::start();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/clients/every_kind.py");
    let out = Command::new(&python)
        .arg(script)
        .arg(server.client().port().to_string())
        .output()
        .expect("run the redis-py examples");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
