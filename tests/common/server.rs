//! Server processes: which program and module build a test runs (`BLOOMRS_SERVER`,
//! `BLOOMRS_MODULE`, the fault-injection build, a library preloaded into it), starting a `Server` on a free loopback port in
//! its own data directory (from a given RDB file too), restarting and killing it, a server that
//! must refuse to start, the AOF files it writes, and waiting for what it does in the background
//! (persistence, lazy free, replication).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::client::{bulk, Client, Int, Simple};

pub fn module_path() -> PathBuf {
    let path = std::env::var_os("BLOOMRS_MODULE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/libbloomrs.so")
        });
    assert!(
        path.exists(),
        "{} is missing: run `cargo build --release` (or `make test`) first",
        path.display()
    );
    path
}

/// The server binary the tests start: `BLOOMRS_SERVER` (`redis-server`, `valkey-server`, or the
/// path of any server binary, such as the Redis 8.0 and Valkey 8.1 that `scripts/install-deps.sh`
/// builds), `redis-server` by default.
pub fn server_binary() -> String {
    std::env::var("BLOOMRS_SERVER")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "redis-server".to_string())
}

/// Every server program present here, for the tests that move data between servers:
/// `BLOOMRS_SERVERS` (binaries or paths separated by `:`, as `scripts/integration.sh` sets it),
/// else `redis-server`, `valkey-server` and the servers `scripts/install-deps.sh` built into its
/// cache (`BLOOMRS_SERVER_CACHE`, by default `$XDG_CACHE_HOME/bloomrs/servers` or
/// `~/.cache/bloomrs/servers`); only those whose `--version` answers.
pub fn all_servers() -> Vec<String> {
    let listed = std::env::var("BLOOMRS_SERVERS")
        .ok()
        .filter(|s| !s.is_empty());
    let mut servers: Vec<String> = match listed {
        Some(list) => list.split(':').map(str::to_string).collect(),
        None => {
            let mut found = vec!["redis-server".to_string(), "valkey-server".to_string()];
            found.extend(cached_servers());
            found
        }
    };
    servers.retain(|binary| installed(binary));
    servers.dedup();
    servers
}

/// The servers in `scripts/install-deps.sh`'s build cache, sorted by directory name.
fn cached_servers() -> Vec<String> {
    let cache = std::env::var_os("BLOOMRS_SERVER_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("bloomrs/servers"))
        })
        .or_else(|| {
            std::env::var_os("HOME").map(|d| PathBuf::from(d).join(".cache/bloomrs/servers"))
        });
    let Some(Ok(entries)) = cache.map(std::fs::read_dir) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    dirs.sort();
    // `redis-8.0.2/bin/redis-server`, `valkey-8.1.1/bin/valkey-server` (Valkey also installs a
    // `redis-server` link to itself, which is not another server).
    dirs.iter()
        .filter_map(|dir| {
            let name = dir.file_name()?.to_str()?;
            let product = name.split('-').next()?;
            Some(dir.join("bin").join(format!("{product}-server")))
        })
        .filter(|path| path.is_file())
        .map(|path| path.display().to_string())
        .collect()
}

/// Whether a server program can be run here (`--version` answers).
pub fn installed(binary: &str) -> bool {
    Command::new(binary)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A command that runs a server program. `BLOOMRS_SERVER_PRELOAD` names a library the server
/// loads first (`LD_PRELOAD`), as the AddressSanitizer runtime an instrumented module needs
/// (`scripts/asan.sh`); unset, the server runs as installed.
fn server_command(binary: &str) -> Command {
    let mut command = Command::new(binary);
    if let Some(library) = std::env::var_os("BLOOMRS_SERVER_PRELOAD").filter(|v| !v.is_empty()) {
        command.env("LD_PRELOAD", library);
    }
    command
}

/// Whether the tests run against Valkey.
pub fn is_valkey() -> bool {
    server_binary().contains("valkey")
}

/// The command-line client that goes with the server: `redis-cli` or `valkey-cli`.
pub fn cli_binary() -> String {
    let server = server_binary();
    match server.rfind("-server") {
        Some(at) => format!("{}-cli", &server[..at]),
        None => "redis-cli".to_string(),
    }
}

static NEXT_DIR: AtomicUsize = AtomicUsize::new(0);

/// A new, empty data directory for one test server.
fn fresh_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "bloomrs-test-{}-{}",
        std::process::id(),
        NEXT_DIR.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The data directory of the server answering on `port`, if one answers PING there.
fn probe_dir(port: u16) -> Option<String> {
    let stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut writer = stream.try_clone().ok()?;
    let mut reader = BufReader::new(stream);
    writer.write_all(b"PING\r\nCONFIG GET dir\r\n").ok()?;
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    if line != "+PONG\r\n" {
        return None;
    }
    let mut lines = Vec::new();
    for _ in 0..5 {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        lines.push(line.trim_end().to_string());
    }
    // *2, $3, dir, $<len>, <path>
    lines.get(4).cloned()
}

/// A free loopback port whose cluster bus port (port + 10000) is free too.
fn free_port() -> u16 {
    loop {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        if port < 55000 && TcpListener::bind(("127.0.0.1", port + 10000)).is_ok() {
            return port;
        }
    }
}

/// A server (see `server_binary`) with the module, in its own data directory, killed on drop.
pub struct Server {
    child: Option<Child>,
    /// The server program (`redis-server`, `valkey-server`, or a path).
    pub binary: String,
    /// The module build this server loads.
    pub module: PathBuf,
    pub port: u16,
    pub dir: PathBuf,
    pub module_args: Vec<String>,
    pub config: Vec<String>,
    /// The configuration file it starts from (`with_conf_file`), which then loads the module.
    pub conf_file: Option<PathBuf>,
    /// When it last came up (started or restarted).
    pub started: Instant,
}

/// How long after start-up a primary may still send its first PING (see
/// `Server::after_first_ping`): about a second, and the rest is margin for a loaded machine,
/// whose cron runs late.
const FIRST_PING_WITHIN: Duration = Duration::from_millis(2500);

impl Server {
    pub fn start() -> Server {
        Server::build(&[], &[])
    }

    /// `module_args` follow the module path; `config` are extra `--name value` settings.
    pub fn build(module_args: &[&str], config: &[&str]) -> Server {
        Server::launch_in(fresh_dir(), module_path(), module_args, config)
    }

    /// A server that loads another build of the module.
    pub fn with_module(module: PathBuf) -> Server {
        Server::launch_in(fresh_dir(), module, &[], &[])
    }

    /// Another build of the module, with extra `--name value` settings.
    pub fn with_module_and_config(module: PathBuf, config: &[&str]) -> Server {
        Server::launch_in(fresh_dir(), module, &[], config)
    }

    /// A replica of `primary` loading `module`, with extra `--name value` settings after
    /// `--propagation-error-behavior panic` (so `config` may relax it).
    pub fn replica_of(primary: &Server, module: PathBuf, config: &[&str]) -> Server {
        let port = primary.port.to_string();
        let mut args = vec![
            "--replicaof",
            "127.0.0.1",
            &port,
            "--propagation-error-behavior",
            "panic",
        ];
        args.extend_from_slice(config);
        Server::launch_in(fresh_dir(), module, &[], &args)
    }

    /// A server started from a configuration file in its data directory holding `lines` (after
    /// the module's `loadmodule` line, so module settings may follow), for tests of `CONFIG
    /// REWRITE` and configuration-file lines. `restart` starts it from the same file.
    pub fn with_conf_file(lines: &[&str]) -> Server {
        let dir = fresh_dir();
        let conf = dir.join("redis.conf");
        let mut text = format!("loadmodule {}\n", module_path().display());
        for line in lines {
            text.push_str(line);
            text.push('\n');
        }
        std::fs::write(&conf, text).unwrap();
        let mut server = Server {
            child: None,
            binary: server_binary(),
            module: module_path(),
            port: 0,
            dir,
            module_args: Vec::new(),
            config: Vec::new(),
            conf_file: Some(conf),
            started: Instant::now(),
        };
        if let Err(why) = server.launch() {
            panic!("{} did not start: {why}", server.binary);
        }
        server
    }

    /// A server of another program than `server_binary()` (e.g. `valkey-server` while the
    /// suite runs on `redis-server`), for tests that move data between servers.
    pub fn build_on(binary: &str, module_args: &[&str], config: &[&str]) -> Server {
        Server::launch_program(binary, fresh_dir(), module_path(), module_args, config)
    }

    fn launch_in(dir: PathBuf, module: PathBuf, module_args: &[&str], config: &[&str]) -> Server {
        Server::launch_program(&server_binary(), dir, module, module_args, config)
    }

    fn launch_program(
        binary: &str,
        dir: PathBuf,
        module: PathBuf,
        module_args: &[&str],
        config: &[&str],
    ) -> Server {
        let mut server = Server {
            child: None,
            binary: binary.to_string(),
            module,
            port: 0,
            dir,
            module_args: module_args.iter().map(|s| s.to_string()).collect(),
            config: config.iter().map(|s| s.to_string()).collect(),
            conf_file: None,
            started: Instant::now(),
        };
        if let Err(why) = server.launch() {
            panic!("{binary} did not start: {why}");
        }
        server
    }

    fn launch(&mut self) -> Result<(), String> {
        for _attempt in 0..5 {
            self.port = free_port();
            let mut command = server_command(&self.binary);
            if let Some(conf) = &self.conf_file {
                command.arg(conf);
            }
            command
                .arg("--port")
                .arg(self.port.to_string())
                .args([
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--enable-debug-command",
                    "yes",
                    "--appendonly",
                    "no",
                ])
                .arg("--dir")
                .arg(&self.dir)
                .arg("--logfile")
                .arg(self.dir.join("redis.log"))
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            if self.conf_file.is_none() {
                command
                    .arg("--loadmodule")
                    .arg(&self.module)
                    .args(&self.module_args);
            }
            command.args(&self.config);
            let child = command
                .spawn()
                .map_err(|e| format!("cannot run {}: {e}", self.binary))?;
            self.child = Some(child);
            if self.wait_ready() {
                self.started = Instant::now();
                return Ok(());
            }
            self.kill();
        }
        Err(format!("log:\n{}", self.log()))
    }

    fn wait_ready(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Some(Ok(Some(_))) = self.child.as_mut().map(|c| c.try_wait()) {
                return false;
            }
            // Another server may hold the port (a free-port race): make sure it is this one.
            if let Some(dir) = probe_dir(self.port) {
                return self
                    .dir
                    .canonicalize()
                    .is_ok_and(|ours| ours.to_string_lossy() == dir);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    pub fn client(&self) -> Client {
        Client::connect(self.port)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("redis.log")).unwrap_or_default()
    }

    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops the server (SIGKILL, nothing saved) and starts it again on the same directory.
    /// Waits, on a primary, until its first PING to its replicas is past, before a replica
    /// loads while linked (`DEBUG RELOAD`, `DEBUG LOADAOF`). The primary's replication cron
    /// counts its seconds from zero at start-up and PINGs the replicas on its first run
    /// whatever `repl-ping-replica-period`, about a second after start-up (later when loading
    /// advanced the server's cron count), by when a replica has linked: a PING that reaches
    /// the replica while it loads is answered -LOADING, which `propagation-error-behavior
    /// panic` turns into a panic of the replica.
    pub fn after_first_ping(&self) {
        let quiet = self.started + FIRST_PING_WITHIN;
        if let Some(left) = quiet.checked_duration_since(Instant::now()) {
            std::thread::sleep(left);
        }
    }

    pub fn restart(&mut self) {
        self.kill();
        if let Err(why) = self.launch() {
            panic!("{} did not restart: {why}", self.binary);
        }
    }

    /// Sends the process a signal by name (`STOP`, `CONT`): a replica stopped this way lags
    /// its primary until it is continued.
    pub fn signal(&self, name: &str) {
        let pid = self
            .child
            .as_ref()
            .map(Child::id)
            .expect("the server is running");
        let status = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(pid.to_string())
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -{name} {pid}");
    }

    /// Waits (up to 30 s) for the process to exit by itself, as after `SHUTDOWN`.
    pub fn wait_exit(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.alive() {
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.as_mut().map(|c| c.try_wait()), Some(Ok(None)))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Runs the server with the module and the given load arguments, expecting it to refuse to
/// start; returns its log.
pub fn failed_start_log(module_args: &[&str]) -> String {
    let dir = std::env::temp_dir().join(format!(
        "bloomrs-fail-{}-{}",
        std::process::id(),
        NEXT_DIR.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("redis.log");
    let status = server_command(&server_binary())
        // No TCP listener (a unix socket instead), so it cannot take a port another test is
        // about to use.
        .args(["--port", "0", "--save", ""])
        .arg("--unixsocket")
        .arg(dir.join("redis.sock"))
        .arg("--logfile")
        .arg(&log)
        .arg("--loadmodule")
        .arg(module_path())
        .args(module_args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(!status.success(), "the server started with {module_args:?}");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    text
}

/// Starts `binary` on a copy of `rdb` as its `dump.rdb`, expecting it to refuse the file and
/// exit; returns its log. Panics if it is still running after 20 seconds.
pub fn refused_rdb_log(binary: &str, rdb: &Path) -> String {
    let dir = fresh_dir();
    std::fs::copy(rdb, dir.join("dump.rdb")).unwrap();
    let log = dir.join("redis.log");
    let mut child = server_command(binary)
        // No TCP listener, as in `failed_start_log`.
        .args(["--port", "0", "--save", "", "--dbfilename", "dump.rdb"])
        .arg("--unixsocket")
        .arg(dir.join("redis.sock"))
        .arg("--dir")
        .arg(&dir)
        .arg("--logfile")
        .arg(&log)
        .arg("--loadmodule")
        .arg(module_path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        status.is_some_and(|s| !s.success()),
        "{binary} loaded the file ({status:?}); log:\n{text}"
    );
    text
}

impl Server {
    /// Starts a server whose data directory holds a copy of `rdb` as its `dump.rdb`.
    pub fn with_rdb(rdb: &Path) -> Server {
        Server::with_rdb_on(&server_binary(), rdb)
    }

    /// `with_rdb` on another server program.
    pub fn with_rdb_on(binary: &str, rdb: &Path) -> Server {
        let dir = fresh_dir();
        std::fs::copy(rdb, dir.join("dump.rdb")).unwrap();
        let config = ["--dbfilename", "dump.rdb"];
        Server::launch_program(binary, dir, module_path(), &[], &config)
    }
}

/// Settings of a server that appends every write to its AOF and syncs it at once, with
/// (`preamble` "yes") or without ("no") an RDB preamble in rewrites.
pub fn aof_always(preamble: &str) -> [&str; 6] {
    [
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
        "--aof-use-rdb-preamble",
        preamble,
    ]
}

/// Every command in the AOF files of a server directory (base file if it is an AOF, then the
/// incremental files), in order.
pub fn aof_commands(dir: &Path) -> Vec<Vec<Vec<u8>>> {
    let aof_dir = dir.join("appendonlydir");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&aof_dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "aof"));
    // base before incr, then by sequence number
    files.sort_by_key(|p| {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        (!name.contains(".base."), name)
    });
    files
        .iter()
        .flat_map(|file| parse_aof(&std::fs::read(file).unwrap()))
        .collect()
}

/// The commands of one AOF file (a sequence of RESP arrays of bulk strings).
pub fn parse_aof(bytes: &[u8]) -> Vec<Vec<Vec<u8>>> {
    let mut commands = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        assert_eq!(bytes[at], b'*', "unexpected AOF content at byte {at}");
        let (count, after) = resp_length(bytes, at);
        at = after;
        let mut command = Vec::new();
        for _ in 0..count {
            let (len, after) = resp_length(bytes, at);
            at = after;
            command.push(bytes[at..at + len].to_vec());
            at += len + 2;
        }
        commands.push(command);
    }
    commands
}

/// The number of a RESP `*count` or `$len` line starting at `at`, and where the next line starts.
fn resp_length(bytes: &[u8], at: usize) -> (usize, usize) {
    let end = at + bytes[at..].windows(2).position(|w| w == b"\r\n").unwrap();
    let number = std::str::from_utf8(&bytes[at + 1..end])
        .unwrap()
        .parse()
        .unwrap();
    (number, end + 2)
}

/// A command's arguments as text (bytes that are not UTF-8 replaced).
pub fn command_words(command: &[Vec<u8>]) -> Vec<String> {
    command
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

/// A server that shows what it propagates: its implicit creations use other defaults than the
/// module's own (error rate 0.001, capacity 500), and every write goes to its AOF at once (read
/// back with `aof_written`).
pub fn propagating_server() -> Server {
    Server::build(
        &["ERROR_RATE", "0.001", "INITIAL_SIZE", "500"],
        &aof_always("yes"),
    )
}

/// The commands in a server's AOF as text once persistence is done, without the `SELECT`,
/// `MULTI` and `EXEC` the server adds around them.
pub fn aof_written(server: &Server, client: &mut Client) -> Vec<Vec<String>> {
    wait_for_persistence(client);
    aof_commands(&server.dir)
        .iter()
        .map(|command| command_words(command))
        .filter(|words| {
            !matches!(
                words[0].to_uppercase().as_str(),
                "SELECT" | "MULTI" | "EXEC"
            )
        })
        .collect()
}

/// A server that notifies every generic and keyspace event by its name (`KEg`), a client, and a
/// second client subscribed to every keyevent channel of database 0 (read it with `events`).
pub fn keyevent_server() -> (Server, Client, Client) {
    let server = Server::build(&[], &["--notify-keyspace-events", "KEg"]);
    let client = server.client();
    let mut subscriber = server.client();
    let reply = subscriber.call(&["PSUBSCRIBE", "__keyevent@0__:*"]);
    assert_eq!(reply.array()[0], bulk("psubscribe"));
    (server, client, subscriber)
}

/// Keys and the items added to each, as a kind's persistence tests populate them.
pub type Populated = Vec<(String, Vec<String>)>;

/// A kind's persistence story, with the AOF rewritten both with and without the RDB
/// preamble: what `snapshot` reads of the keys `populate` wrote is the same after
/// `DEBUG RELOAD`, and after an AOF rewrite and a restart. Without the preamble, the rewritten
/// AOF holds `headers.0` values as `BF.LOADCHUNK` headers starting with `headers.1` (when
/// given). `after` checks the restarted server further.
pub fn reload_restart_and_aof_rewrite(
    populate: fn(&mut Client) -> Populated,
    snapshot: fn(&mut Client, &Populated) -> Vec<super::client::Reply>,
    headers: Option<(usize, &[u8])>,
    after: fn(&mut Client),
) {
    for preamble in ["no", "yes"] {
        let config = ["--appendonly", "yes", "--aof-use-rdb-preamble", preamble];
        let mut s = Server::build(&[], &config);
        let mut c = s.client();
        let keys = populate(&mut c);
        let before = snapshot(&mut c, &keys);
        assert_eq!(c.call(&["DEBUG", "RELOAD"]), Simple("OK".into()));
        assert_eq!(snapshot(&mut c, &keys), before);
        rewrite_aof(&mut c);
        if let (Some((count, magic)), "no") = (headers, preamble) {
            let commands = aof_commands(&s.dir);
            let found: Vec<&Vec<Vec<u8>>> = commands
                .iter()
                .filter(|cmd| cmd[0] == b"BF.LOADCHUNK" && cmd[2] == b"1")
                .collect();
            assert_eq!(found.len(), count);
            assert!(found.iter().all(|cmd| cmd[3].starts_with(magic)));
        }
        s.restart();
        let mut c = s.client();
        assert_eq!(snapshot(&mut c, &keys), before, "preamble {preamble}");
        after(&mut c);
    }
}

/// Starts an AOF rewrite and waits until it is done and the AOF buffer written. A save the
/// server began meanwhile (a replica's sync) only delays it: the rewrite is then scheduled.
pub fn rewrite_aof(client: &mut Client) {
    wait_for_persistence(client);
    let reply = client.call(&["BGREWRITEAOF"]);
    let started = Simple("Background append only file rewriting started".into());
    let scheduled = Simple("Background append only file rewriting scheduled".into());
    assert!(reply == started || reply == scheduled, "{reply:?}");
    wait_for_persistence(client);
}

/// Waits until no AOF rewrite or RDB save runs and the AOF buffer is in the file.
pub fn wait_for_persistence(client: &mut Client) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let info = client.call(&["INFO", "persistence"]).text();
        let busy = [
            "aof_rewrite_in_progress:1",
            "aof_rewrite_scheduled:1",
            "rdb_bgsave_in_progress:1",
        ]
        .iter()
        .any(|flag| info.contains(flag));
        // With appendfsync everysec the server answers before it writes its AOF buffer when
        // a background fsync is slow (it postpones the write up to two seconds): a test that
        // reads the file waits for the buffer to be written.
        let unwritten = info
            .lines()
            .find_map(|line| line.strip_prefix("aof_buffer_length:"))
            .is_some_and(|len| len.trim() != "0");
        if !busy && !unwritten {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "persistence did not finish: {info}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until the server has no object waiting to be freed in the background. Valkey 8 frees
/// lazily by default (`lazyfree-lazy-user-flush`, `-user-del`, ... are `yes`), so after a
/// `FLUSHALL` or `DEL` the module's free callbacks may still be running on another thread.
pub fn wait_lazyfree(client: &mut Client) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let memory = client.call(&["INFO", "memory"]).text();
        let pending = memory
            .lines()
            .find_map(|l| l.strip_prefix("lazyfree_pending_objects:"))
            .map(|v| v.trim().to_string());
        if pending.as_deref().is_none_or(|v| v == "0") {
            return;
        }
        assert!(Instant::now() < deadline, "lazy free did not finish");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The `fault-injection` build that `make test` makes (`target/fault-injection/release/
/// libbloomrs.so`, or `BLOOMRS_FAULT_MODULE`).
pub fn fault_module() -> PathBuf {
    let path = std::env::var_os("BLOOMRS_FAULT_MODULE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("target/fault-injection/release/libbloomrs.so")
        });
    assert!(
        path.exists(),
        "{} is missing: run `cargo build --release --features fault-injection --target-dir target/fault-injection` (make test does)",
        path.display()
    );
    path
}

/// Waits until a replica's link to its primary is up.
pub fn wait_replica_linked(replica: &mut Client) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !replica
        .call(&["INFO", "replication"])
        .text()
        .contains("master_link_status:up")
    {
        assert!(Instant::now() < deadline, "replica did not connect");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until the replica has applied everything the primary propagated.
pub fn wait_replica_synced(primary: &mut Client, replica: &mut Client) {
    assert_eq!(primary.call(&["WAIT", "1", "10000"]), Int(1));
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let target = repl_offset(primary, "master_repl_offset:");
        if target.is_some() && repl_offset(replica, "slave_repl_offset:") == target {
            return;
        }
        assert!(Instant::now() < deadline, "replica did not catch up");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A replication offset from INFO replication (`field` is `master_repl_offset:` or
/// `slave_repl_offset:`), if the server reports it.
pub fn repl_offset(client: &mut Client, field: &str) -> Option<i64> {
    let info = client.call(&["INFO", "replication"]).text();
    info.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().parse().ok())
}
