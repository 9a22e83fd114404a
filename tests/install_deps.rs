//! The dependency check of `scripts/install-deps.sh` against made-up directory trees: bindgen
//! needs the C library libclang, and libclang-cpp (the C++ interface) is not it.

use std::path::{Path, PathBuf};
use std::process::Command;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install-deps.sh")
}

/// A temporary root holding the given files (empty), removed on drop.
struct Tree(PathBuf);

impl Tree {
    fn new(name: &str, files: &[&str]) -> Tree {
        let root = std::env::temp_dir().join(format!("bloomrs-deps-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for file in files {
            let path = root.join(file.trim_start_matches('/'));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, b"").unwrap();
        }
        std::fs::create_dir_all(&root).unwrap();
        Tree(root)
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `install-deps.sh --probe libclang` with the tree as root; (found, output).
fn probe(tree: &Tree, libclang_path: Option<&Path>) -> (bool, String) {
    let mut command = Command::new("bash");
    command
        .arg(script())
        .args(["--probe", "libclang"])
        .env("DEPS_ROOT", &tree.0)
        .env_remove("LIBCLANG_PATH");
    if let Some(path) = libclang_path {
        command.env("LIBCLANG_PATH", path);
    }
    let output = command.output().expect("bash runs");
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.success(), text)
}

#[test]
fn libclang_cpp_alone_is_missing() {
    let tree = Tree::new(
        "cpp",
        &[
            "/usr/lib/llvm-14/lib/libclang-cpp.so.14",
            "/usr/lib/x86_64-linux-gnu/libclang-cpp.so.14",
            "/usr/lib/llvm-14/lib/libLLVM-14.so",
        ],
    );
    let (found, text) = probe(&tree, None);
    assert!(!found, "{text}");
    assert!(text.starts_with("missing: "), "{text}");
}

#[test]
fn empty_tree_is_missing() {
    let tree = Tree::new("empty", &[]);
    let (found, text) = probe(&tree, None);
    assert!(!found, "{text}");
}

#[test]
fn versioned_libclang_so_1_is_present() {
    let tree = Tree::new(
        "so1",
        &[
            "/usr/lib/llvm-14/lib/libclang-cpp.so.14",
            "/usr/lib/llvm-14/lib/libclang.so.1",
        ],
    );
    let (found, text) = probe(&tree, None);
    assert!(found, "{text}");
    assert!(
        text.contains("/usr/lib/llvm-14/lib/libclang.so.1"),
        "{text}"
    );
}

#[test]
fn libclang_dash_version_is_present() {
    let tree = Tree::new("dash", &["/usr/lib/x86_64-linux-gnu/libclang-14.so"]);
    let (found, text) = probe(&tree, None);
    assert!(found, "{text}");
    assert!(text.contains("libclang-14.so"), "{text}");
}

#[test]
fn libclang_under_usr_local_llvm_is_present() {
    let tree = Tree::new("local", &["/usr/local/llvm17/lib/libclang-17.so.17"]);
    let (found, text) = probe(&tree, None);
    assert!(found, "{text}");
}

#[test]
fn libclang_path_is_honoured() {
    let tree = Tree::new("env", &["/opt/clang/lib/libclang.so"]);
    let (found, text) = probe(&tree, Some(&tree.0.join("opt/clang/lib")));
    assert!(found, "{text}");
    assert!(text.contains("LIBCLANG_PATH"), "{text}");

    let (found, text) = probe(&tree, Some(&tree.0.join("opt/clang/lib/libclang.so")));
    assert!(found, "{text}");
}

#[test]
fn libclang_path_without_the_library_is_missing() {
    let tree = Tree::new(
        "env-cpp",
        &[
            "/opt/clang/lib/libclang-cpp.so.14",
            "/usr/lib/llvm-14/lib/libclang.so.1",
        ],
    );
    // The user's setting wins: bindgen looks only there.
    let (found, text) = probe(&tree, Some(&tree.0.join("opt/clang/lib")));
    assert!(!found, "{text}");
    assert!(text.contains("LIBCLANG_PATH"), "{text}");
}

#[test]
fn a_binary_of_the_wrong_kind_is_missing() {
    // A `redis-server` that is really another program (here: a script naming Valkey) counts as
    // missing and says why.
    let tree = Tree::new("bin", &[]);
    let bin = tree.0.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("redis-server");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'Valkey server v=8.0.1 sha=0 malloc=libc'\n",
    )
    .unwrap();
    let old = bin.join("valkey-server");
    std::fs::write(&old, "#!/bin/sh\necho 'Valkey server v=7.2.5 sha=0'\n").unwrap();
    for file in [&fake, &old] {
        let status = Command::new("chmod").arg("+x").arg(file).status().unwrap();
        assert!(status.success());
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |name: &str| {
        let output = Command::new("bash")
            .arg(script())
            .args(["--probe", name])
            .env("PATH", &path)
            .output()
            .unwrap();
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    let (found, text) = run("redis-server");
    assert!(!found, "{text}");
    assert!(text.contains("is not Redis server"), "{text}");
    let (found, text) = run("valkey-server");
    assert!(!found, "{text}");
    assert!(text.contains("older than 8.0"), "{text}");
}

/// Runs `install-deps.sh ARGS` with `BLOOMRS_SERVER_CACHE` set to `cache`; (success, stdout).
fn run_with_cache(cache: &Path, args: &[&str]) -> (bool, String) {
    let output = Command::new("bash")
        .arg(script())
        .args(args)
        .env("BLOOMRS_SERVER_CACHE", cache)
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// Writes an executable script at `path` that prints `version` for `--version`.
fn fake_server(path: &Path, version: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("#!/bin/sh\necho '{version}'\n")).unwrap();
    let status = Command::new("chmod").arg("+x").arg(path).status().unwrap();
    assert!(status.success());
}

#[test]
fn a_built_server_counts_by_what_its_binary_says() {
    let tree = Tree::new("built", &[]);
    let cache = tree.0.join("servers");
    // Nothing built yet.
    let (found, text) = run_with_cache(&cache, &["--probe", "redis8"]);
    assert!(!found, "{text}");
    assert!(
        text.starts_with("missing: no Redis server 8.0.x built"),
        "{text}"
    );
    // A Redis 8.0 build counts; --server names its binary.
    let redis = cache.join("redis-8.0.2/bin/redis-server");
    fake_server(
        &redis,
        "Redis server v=8.0.2 sha=00000000:1 malloc=jemalloc-5.3.0 bits=64",
    );
    let (found, text) = run_with_cache(&cache, &["--probe", "redis8"]);
    assert!(found, "{text}");
    assert_eq!(text, format!("present: {} 8.0.2\n", redis.display()));
    let (found, text) = run_with_cache(&cache, &["--server", "redis8"]);
    assert!(found, "{text}");
    assert_eq!(text, format!("{}\n", redis.display()));
    // A directory named like Valkey 8.1 whose binary is another version or program does not.
    fake_server(
        &cache.join("valkey-8.1.1/bin/valkey-server"),
        "Valkey server v=8.0.1 sha=0",
    );
    fake_server(
        &cache.join("valkey-8.1.2/bin/valkey-server"),
        "Redis server v=8.1.2 sha=0",
    );
    let (found, text) = run_with_cache(&cache, &["--probe", "valkey81"]);
    assert!(!found, "{text}");
    let (found, _) = run_with_cache(&cache, &["--server", "valkey81"]);
    assert!(!found);
    // Valkey 8.1 and 9.1 come from the same source package into the same cache: each name
    // takes only its own series.
    let valkey9 = cache.join("valkey-9.1.2/bin/valkey-server");
    fake_server(&valkey9, "Valkey server v=9.1.2 sha=0");
    let (found, text) = run_with_cache(&cache, &["--probe", "valkey9"]);
    assert!(found, "{text}");
    assert_eq!(text, format!("present: {} 9.1.2\n", valkey9.display()));
    let (found, text) = run_with_cache(&cache, &["--probe", "valkey81"]);
    assert!(!found, "{text}");
    assert!(
        text.contains("Valkey server 8.1.x") && text.contains("Debian 13"),
        "{text}"
    );
    let (found, text) = run_with_cache(&cache, &["--probe", "valkey-9"]);
    assert!(!found, "{text}");
}

#[test]
fn help_prints_the_usage_and_an_unknown_option_is_named() {
    let help = Command::new("bash")
        .arg(script())
        .arg("--help")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(help.status.success(), "{text}");
    assert!(text.starts_with("Usage:"), "{text}");
    assert!(text.contains("--check"), "{text}");
    let bogus = Command::new("bash")
        .arg(script())
        .arg("--bogus")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&bogus.stderr);
    assert_eq!(bogus.status.code(), Some(2), "{text}");
    assert!(
        text.starts_with("error: unknown option: --bogus\nUsage:"),
        "{text}"
    );
}
