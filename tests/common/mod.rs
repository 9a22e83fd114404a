//! Test support: a real server (`redis-server`, or `valkey-server` with
//! `BLOOMRS_SERVER=valkey-server`) with the freshly built module on a free loopback port, and a
//! minimal RESP2/RESP3 client that keeps every reply's exact type.
//!
//! What the server (not the module) decides differs between servers and versions: the RDB
//! version in DUMP trailers, the per-key `MEMORY USAGE` overhead, log wording, extra fields in
//! `COMMAND DOCS`. Tests derive those at run time with the helpers at the end of this file
//! (`Server::rdb_version`, `Server::key_overhead`, `sync_finished_line`, `strip_display_text`,
//! ...) and assert what the module writes exactly.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

mod pair;
#[allow(unused_imports)]
pub use pair::*;

/// A reply as it came over the wire.
#[derive(Clone, PartialEq)]
pub enum Reply {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Vec<u8>),
    /// `$-1` (RESP2) or `_` (RESP3).
    Nil,
    NilArray,
    Array(Vec<Reply>),
    Bool(bool),
    Double(String),
    Map(Vec<(Reply, Reply)>),
    Set(Vec<Reply>),
    Push(Vec<Reply>),
}

pub use Reply::*;

/// Bulk strings print as text (binary bytes escaped, long ones cut) so failures stay readable.
impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bulk(bytes) => {
                let text: String = bytes
                    .iter()
                    .take(48)
                    .flat_map(|b| std::ascii::escape_default(*b))
                    .map(char::from)
                    .collect();
                let more = if bytes.len() > 48 {
                    format!("...({} bytes)", bytes.len())
                } else {
                    String::new()
                };
                write!(f, "Bulk(\"{text}\"{more})")
            }
            Simple(s) => write!(f, "Simple({s:?})"),
            Error(s) => write!(f, "Error({s:?})"),
            Int(v) => write!(f, "Int({v})"),
            Nil => write!(f, "Nil"),
            NilArray => write!(f, "NilArray"),
            Array(v) => f.debug_tuple("Array").field(v).finish(),
            Bool(v) => write!(f, "Bool({v})"),
            Double(s) => write!(f, "Double({s})"),
            Map(v) => f.debug_tuple("Map").field(v).finish(),
            Set(v) => f.debug_tuple("Set").field(v).finish(),
            Push(v) => f.debug_tuple("Push").field(v).finish(),
        }
    }
}

pub fn ok() -> Reply {
    Simple("OK".into())
}

pub fn err(text: &str) -> Reply {
    Error(text.into())
}

pub fn bulk(bytes: impl AsRef<[u8]>) -> Reply {
    Bulk(bytes.as_ref().to_vec())
}

pub fn ints(values: &[i64]) -> Reply {
    Array(values.iter().map(|v| Int(*v)).collect())
}

pub fn bools(values: &[bool]) -> Reply {
    Array(values.iter().map(|v| Bool(*v)).collect())
}

impl Reply {
    pub fn int(&self) -> i64 {
        match self {
            Int(v) => *v,
            other => panic!("expected an integer, got {other:?}"),
        }
    }
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            Bulk(v) => v.clone(),
            other => panic!("expected a bulk string, got {other:?}"),
        }
    }
    pub fn array(&self) -> Vec<Reply> {
        match self {
            Array(v) => v.clone(),
            other => panic!("expected an array, got {other:?}"),
        }
    }
    pub fn text(&self) -> String {
        match self {
            Simple(s) | Error(s) | Double(s) => s.clone(),
            Bulk(b) => String::from_utf8_lossy(b).into_owned(),
            other => panic!("expected text, got {other:?}"),
        }
    }
}

pub struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    port: u16,
}

impl Client {
    pub fn connect(port: u16) -> Client {
        let stream = TcpStream::connect(("127.0.0.1", port))
            .unwrap_or_else(|e| panic!("connect to port {port}: {e}"));
        stream
            .set_read_timeout(Some(Duration::from_secs(120)))
            .unwrap();
        Client {
            reader: BufReader::new(stream.try_clone().unwrap()),
            writer: stream,
            port,
        }
    }

    /// Sends one command without reading its reply (for pipelining).
    pub fn send<A: AsRef<[u8]>>(&mut self, args: &[A]) {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for arg in args {
            let arg = arg.as_ref();
            out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
            out.extend_from_slice(arg);
            out.extend_from_slice(b"\r\n");
        }
        self.writer.write_all(&out).expect("write");
    }

    pub fn call<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Reply {
        self.send(args);
        self.read()
    }

    /// The next reply, or None if the connection failed (the server died).
    pub fn try_read(&mut self) -> Option<Reply> {
        match self.reader.fill_buf() {
            Ok(buffered) if !buffered.is_empty() => Some(self.read()),
            _ => None,
        }
    }

    pub fn read(&mut self) -> Reply {
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("read");
        assert!(
            !line.is_empty(),
            "the server on port {} closed the connection",
            self.port
        );
        let line = line.trim_end_matches("\r\n");
        let (kind, rest) = line.split_at(1);
        let count = || rest.parse::<i64>().unwrap();
        match kind {
            "+" => Simple(rest.into()),
            "-" => Error(rest.into()),
            ":" => Int(count()),
            "_" => Nil,
            "#" => Bool(rest == "t"),
            "," => Double(rest.into()),
            "$" if count() < 0 => Nil,
            "$" => Bulk(self.read_exact(count() as usize)),
            "*" if count() < 0 => NilArray,
            "*" => Array((0..count()).map(|_| self.read()).collect()),
            "~" => Set((0..count()).map(|_| self.read()).collect()),
            ">" => Push((0..count()).map(|_| self.read()).collect()),
            "%" => Map((0..count()).map(|_| (self.read(), self.read())).collect()),
            other => panic!("unexpected reply type {other:?} in {line:?}"),
        }
    }

    fn read_exact(&mut self, len: usize) -> Vec<u8> {
        let mut buf = vec![0u8; len + 2];
        self.reader.read_exact(&mut buf).expect("read bulk");
        buf.truncate(len);
        buf
    }

    /// The port of the server this client talks to.
    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn resp3(&mut self) {
        assert!(matches!(self.call(&["HELLO", "3"]), Map(_)));
    }
}

/// Calls a command: `call!(client, "BF.ADD", "key", item)`; arguments are anything `AsRef<[u8]>`
/// after conversion with `Arg`.
#[macro_export]
macro_rules! call {
    ($client:expr, $($arg:expr),+ $(,)?) => {
        $client.call(&[$(common::arg(&$arg)),+])
    };
}

pub fn arg<T: ToArg + ?Sized>(value: &T) -> Vec<u8> {
    value.to_arg()
}

pub trait ToArg {
    fn to_arg(&self) -> Vec<u8>;
}
impl ToArg for str {
    fn to_arg(&self) -> Vec<u8> {
        self.as_bytes().to_vec()
    }
}
impl ToArg for &str {
    fn to_arg(&self) -> Vec<u8> {
        self.as_bytes().to_vec()
    }
}
impl ToArg for String {
    fn to_arg(&self) -> Vec<u8> {
        self.as_bytes().to_vec()
    }
}
impl ToArg for Vec<u8> {
    fn to_arg(&self) -> Vec<u8> {
        self.clone()
    }
}
impl ToArg for [u8] {
    fn to_arg(&self) -> Vec<u8> {
        self.to_vec()
    }
}
impl<const N: usize> ToArg for [u8; N] {
    fn to_arg(&self) -> Vec<u8> {
        self.to_vec()
    }
}
impl<const N: usize> ToArg for &[u8; N] {
    fn to_arg(&self) -> Vec<u8> {
        self.to_vec()
    }
}
impl ToArg for &[u8] {
    fn to_arg(&self) -> Vec<u8> {
        self.to_vec()
    }
}
macro_rules! int_arg {
    ($($t:ty),*) => {$(impl ToArg for $t { fn to_arg(&self) -> Vec<u8> { self.to_string().into_bytes() } })*};
}
int_arg!(i32, i64, u32, u64, usize, f64);

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

/// The server binary the tests start: `BLOOMRS_SERVER` (`redis-server` or `valkey-server`, a
/// path also works), `redis-server` by default.
pub fn server_binary() -> String {
    std::env::var("BLOOMRS_SERVER")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "redis-server".to_string())
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
}

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
        };
        if let Err(why) = server.launch() {
            panic!("{binary} did not start: {why}");
        }
        server
    }

    fn launch(&mut self) -> Result<(), String> {
        for _attempt in 0..5 {
            self.port = free_port();
            let mut command = Command::new(&self.binary);
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
                .arg("--loadmodule")
                .arg(&self.module)
                .args(&self.module_args)
                .args(&self.config)
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            let child = command
                .spawn()
                .map_err(|e| format!("cannot run {}: {e}", self.binary))?;
            self.child = Some(child);
            if self.wait_ready() {
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
    pub fn restart(&mut self) {
        self.kill();
        if let Err(why) = self.launch() {
            panic!("{} did not restart: {why}", self.binary);
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
    let status = Command::new(server_binary())
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

/// The RedisBloom fixtures shipped with the tests.
pub fn fixtures() -> serde_json::Value {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/redisbloom/fixtures.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

pub fn fixture_rdb() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/redisbloom/dump.rdb")
}

pub fn b64(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap()
}

/// All SCANDUMP chunks of a key (`BF.SCANDUMP` or `CF.SCANDUMP`), header first.
pub fn scandump(client: &mut Client, command: &str, key: &str) -> Vec<(i64, Vec<u8>)> {
    let mut chunks = Vec::new();
    let mut iter = 0i64;
    loop {
        let reply = client
            .call(&[command.to_string(), key.to_string(), iter.to_string()])
            .array();
        let next = reply[0].int();
        if next == 0 {
            break;
        }
        chunks.push((next, reply[1].bytes()));
        iter = next;
    }
    chunks
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
    let mut commands = Vec::new();
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        let mut at = 0;
        while at < bytes.len() {
            assert_eq!(
                bytes[at],
                b'*',
                "unexpected AOF content in {}",
                file.display()
            );
            let line_end =
                |from: usize| from + bytes[from..].windows(2).position(|w| w == b"\r\n").unwrap();
            let end = line_end(at);
            let count: usize = std::str::from_utf8(&bytes[at + 1..end])
                .unwrap()
                .parse()
                .unwrap();
            at = end + 2;
            let mut command = Vec::new();
            for _ in 0..count {
                let end = line_end(at);
                let len: usize = std::str::from_utf8(&bytes[at + 1..end])
                    .unwrap()
                    .parse()
                    .unwrap();
                at = end + 2;
                command.push(bytes[at..at + len].to_vec());
                at += len + 2;
            }
            commands.push(command);
        }
    }
    commands
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

/// Redis's CRC-64 (Jones polynomial, reflected, initial value 0) used by DUMP payloads.
pub fn crc64(bytes: &[u8]) -> u64 {
    let mut crc = 0u64;
    for byte in bytes {
        crc ^= u64::from(*byte);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x95ac_9329_ac4b_c9b5
            } else {
                crc >> 1
            };
        }
    }
    crc
}

/// Replaces the CRC footer of a (mutated) DUMP payload with the correct one.
pub fn with_valid_crc(payload: &[u8]) -> Vec<u8> {
    let body = &payload[..payload.len() - 8];
    [body, &crc64(body).to_le_bytes()].concat()
}

/// One primitive of a module value in a DUMP payload.
#[derive(Debug, Clone, PartialEq)]
pub enum RdbField {
    Unsigned(u64),
    Double(f64),
    Buffer(Vec<u8>),
}

fn write_length(out: &mut Vec<u8>, value: u64) {
    if value < 64 {
        out.push(value as u8);
    } else if value < 16384 {
        out.extend_from_slice(&((value as u16) | 0x4000).to_be_bytes());
    } else if value <= u64::from(u32::MAX) {
        out.push(0x80);
        out.extend_from_slice(&(value as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&value.to_be_bytes());
    }
}

fn read_length(bytes: &[u8], at: &mut usize) -> u64 {
    let first = bytes[*at];
    *at += 1;
    let wide = |at: &mut usize, n: usize| {
        *at += n;
        bytes[*at - n..*at]
            .iter()
            .fold(0, |acc, b| acc << 8 | u64::from(*b))
    };
    match first >> 6 {
        0 => u64::from(first & 0x3f),
        1 => u64::from(first & 0x3f) << 8 | wide(at, 1),
        _ if first == 0x80 => wide(at, 4),
        _ if first == 0x81 => wide(at, 8),
        _ => panic!("special encoding {first:#x} where a length belongs"),
    }
}

/// Module type ids as Redis stores them: 54 bits of name, 10 bits of encoding version.
pub const BLOOM_TYPE_ID: u64 = 0x3016_e5a2_89be_f800;
pub const CUCKOO_TYPE_ID: u64 = 0x3016_e5a2_8982_1400;

/// A module value's DUMP payload taken apart: module id (type and encoding version), the
/// primitives, and the RDB version of the trailer.
#[derive(Debug, Clone)]
pub struct Payload {
    pub module_id: u64,
    pub fields: Vec<RdbField>,
    pub version: [u8; 2],
}

impl Payload {
    /// Parses an uncompressed payload (from a server with `rdbcompression no`), checking
    /// that our CRC64 agrees with Redis's footer.
    pub fn parse(bytes: &[u8]) -> Payload {
        let (body, footer) = bytes.split_at(bytes.len() - 8);
        assert_eq!(
            crc64(body).to_le_bytes(),
            footer,
            "our CRC64 agrees with Redis"
        );
        assert_eq!(bytes[0], 7, "RDB_TYPE_MODULE_2");
        let mut at = 1;
        let module_id = read_length(bytes, &mut at);
        let mut fields = Vec::new();
        loop {
            match read_length(bytes, &mut at) {
                0 => break,
                2 => fields.push(RdbField::Unsigned(read_length(bytes, &mut at))),
                4 => {
                    fields.push(RdbField::Double(f64::from_le_bytes(
                        bytes[at..at + 8].try_into().unwrap(),
                    )));
                    at += 8;
                }
                5 if bytes[at] >> 6 == 3 => {
                    // A short buffer that looked like an integer.
                    let encoding = usize::from(bytes[at] & 0x3f);
                    let width = [1, 2, 4][encoding];
                    let raw = &bytes[at + 1..at + 1 + width];
                    let value = match width {
                        1 => i64::from(raw[0] as i8),
                        2 => i64::from(i16::from_le_bytes([raw[0], raw[1]])),
                        _ => i64::from(i32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]])),
                    };
                    at += 1 + width;
                    fields.push(RdbField::Buffer(value.to_string().into_bytes()));
                }
                5 => {
                    let len = read_length(bytes, &mut at) as usize;
                    fields.push(RdbField::Buffer(bytes[at..at + len].to_vec()));
                    at += len;
                }
                opcode => panic!("opcode {opcode}"),
            }
        }
        assert_eq!(body.len() - at, 2);
        Payload {
            module_id,
            fields,
            version: [body[at], body[at + 1]],
        }
    }

    /// Encodes the payload with a valid CRC64 footer.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![7u8];
        write_length(&mut out, self.module_id);
        for field in &self.fields {
            match field {
                RdbField::Unsigned(v) => {
                    out.push(2);
                    write_length(&mut out, *v);
                }
                RdbField::Double(v) => {
                    out.push(4);
                    out.extend_from_slice(&v.to_le_bytes());
                }
                RdbField::Buffer(b) => {
                    out.push(5);
                    write_length(&mut out, b.len() as u64);
                    out.extend_from_slice(b);
                }
            }
        }
        out.push(0);
        out.extend_from_slice(&self.version);
        let crc = crc64(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// The same payload with one primitive replaced.
    pub fn with(&self, index: usize, field: RdbField) -> Payload {
        let mut payload = self.clone();
        payload.fields[index] = field;
        payload
    }
}

/// A DUMP payload (Redis 7.0, RDB version 10) of a module value with these primitives.
pub fn module_payload(type_id: u64, encver: u64, fields: &[RdbField]) -> Vec<u8> {
    Payload {
        module_id: type_id | encver,
        fields: fields.to_vec(),
        version: 10u16.to_le_bytes(),
    }
    .encode()
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

impl ToArg for &String {
    fn to_arg(&self) -> Vec<u8> {
        self.as_bytes().to_vec()
    }
}
impl ToArg for &Vec<u8> {
    fn to_arg(&self) -> Vec<u8> {
        self.to_vec()
    }
}

// --- What the server decides ----------------------------------------------------------------
//
// Each helper asks the running server, so a test asserts the module's part exactly and the
// server's part as this server does it.

/// Name and version of the running server, from `INFO server`.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerInfo {
    /// `redis` or `valkey`.
    pub name: String,
    /// `[major, minor, patch]` of that server (Valkey's own version, not the Redis version it
    /// reports for compatibility).
    pub version: [u32; 3],
}

impl ServerInfo {
    pub fn is_valkey(&self) -> bool {
        self.name == "valkey"
    }

    /// Whether the version is at least `major.minor`.
    pub fn at_least(&self, major: u32, minor: u32) -> bool {
        (self.version[0], self.version[1]) >= (major, minor)
    }

    /// Whether the server's module API has module-defined ACL categories
    /// (`RedisModule_AddACLCategory`): Valkey 8 and Redis 7.4 onwards.
    pub fn has_module_acl_categories(&self) -> bool {
        if self.is_valkey() {
            self.at_least(8, 0)
        } else {
            self.at_least(7, 4)
        }
    }
}

impl std::fmt::Display for ServerInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [a, b, c] = self.version;
        write!(f, "{}-server {a}.{b}.{c}", self.name)
    }
}

/// The server `client` talks to.
pub fn server_info(client: &mut Client) -> ServerInfo {
    let info = client.call(&["INFO", "server"]).text();
    let field = |name: &str| {
        info.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
            .map(|v| v.trim().to_string())
    };
    let name = field("server_name").unwrap_or_else(|| "redis".to_string());
    let version = field(&format!("{name}_version"))
        .or_else(|| field("redis_version"))
        .unwrap_or_default();
    let mut parts = version.split('.').map(|p| p.parse().unwrap_or(0));
    let mut next = || parts.next().unwrap_or(0);
    ServerInfo {
        name,
        version: [next(), next(), next()],
    }
}

/// A key name of `len` bytes that no test uses (for probing the server).
fn probe_key(len: usize) -> String {
    "\u{7f}".repeat(len.max(1))
}

/// The RDB version this server writes in DUMP trailers (10 for Redis 7.0, 11 for Valkey 8 and
/// Redis 7.2, ...), read from the DUMP of a probe string key.
pub fn rdb_version(client: &mut Client) -> [u8; 2] {
    let key = probe_key(24);
    client.call(&["SET", key.as_str(), "rdb-version-probe"]);
    let dump = client.call(&["DUMP", key.as_str()]).bytes();
    client.call(&["DEL", key.as_str()]);
    let at = dump.len() - 10;
    [dump[at], dump[at + 1]]
}

/// `payload` (a DUMP payload, e.g. one RedisBloom wrote on Redis 7.0) as this server's DUMP
/// writes the same value: the body unchanged, the trailer's RDB version this server's, and the
/// CRC64 recomputed.
pub fn as_dumped_here(client: &mut Client, payload: &[u8]) -> Vec<u8> {
    with_rdb_version(payload, rdb_version(client))
}

/// `payload` with another RDB version in its trailer and a valid CRC64.
pub fn with_rdb_version(payload: &[u8], version: [u8; 2]) -> Vec<u8> {
    let body = &payload[..payload.len() - 10];
    let mut out = [body, &version].concat();
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// What `MEMORY USAGE` adds to a module value's own reported size for a key named like `key`
/// (the key's string and the table entry; Valkey embeds the key and counts less). Measured on a
/// probe key of the same name length holding an integer-encoded string, which costs the same
/// overhead plus one object header (16 bytes) on both servers.
pub fn key_overhead(client: &mut Client, key: &str) -> i64 {
    let probe = probe_key(key.len());
    client.call(&["SET", probe.as_str(), "1"]);
    let usage = client.call(&["MEMORY", "USAGE", probe.as_str()]).int();
    client.call(&["DEL", probe.as_str()]);
    usage - 16
}

/// `MEMORY USAGE` of `key` without the server's per-key overhead: the size the module's
/// memory-usage callback reported for the value.
pub fn value_memory(client: &mut Client, key: &str) -> i64 {
    let usage = client.call(&["MEMORY", "USAGE", key]).int();
    usage - key_overhead(client, key)
}

/// The replica's log line for a finished full sync: `PRIMARY <-> REPLICA ...` on Valkey 8,
/// `MASTER <-> REPLICA ...` on Redis.
pub fn sync_finished_line(info: &ServerInfo) -> &'static str {
    if info.is_valkey() && info.at_least(8, 0) {
        "PRIMARY <-> REPLICA sync: Finished with success"
    } else {
        "MASTER <-> REPLICA sync: Finished with success"
    }
}

/// A `COMMAND DOCS` reply without what the server adds by itself: Valkey gives every argument
/// a `display_text` equal to its name when the module set none.
pub fn strip_display_text(reply: &Reply) -> Reply {
    match reply {
        Array(items) => {
            let name = items
                .chunks(2)
                .find(|pair| pair[0] == Bulk(b"name".to_vec()))
                .and_then(|pair| pair.get(1).cloned());
            let mut out = Vec::new();
            let mut at = 0;
            while at < items.len() {
                let is_default_text = items[at] == Bulk(b"display_text".to_vec())
                    && name.is_some()
                    && items.get(at + 1) == name.as_ref();
                if is_default_text {
                    at += 2;
                } else {
                    out.push(strip_display_text(&items[at]));
                    at += 1;
                }
            }
            Array(out)
        }
        Map(pairs) => {
            let name = pairs
                .iter()
                .find(|(k, _)| *k == Bulk(b"name".to_vec()))
                .map(|(_, v)| v.clone());
            Map(pairs
                .iter()
                .filter(|(k, v)| {
                    !(*k == Bulk(b"display_text".to_vec()) && Some(v) == name.as_ref())
                })
                .map(|(k, v)| (strip_display_text(k), strip_display_text(v)))
                .collect())
        }
        other => other.clone(),
    }
}

/// `MEMORY USAGE` of a key restored from a RedisBloom fixture: the value's own size is the
/// `Size` RedisBloom reported in its INFO (its memory-usage callback gives the same), plus this
/// server's per-key overhead. On Redis 7.0, where the fixtures were recorded, that is exactly the
/// recorded `memory_usage`.
pub fn assert_memory_usage(client: &mut Client, key: &str, fixture: &serde_json::Value) {
    let size = fixture["info"]
        .as_array()
        .and_then(|info| info.iter().find(|pair| pair[0] == "Size"))
        .and_then(|pair| pair[1].as_i64())
        .expect("the fixture records a Size");
    let usage = client.call(&["MEMORY", "USAGE", key]).int();
    assert_eq!(usage - key_overhead(client, key), size, "{key}: value size");
    let info = server_info(client);
    if info.name == "redis" && info.version[..2] == [7, 0] {
        let recorded = fixture["memory_usage"].as_i64().unwrap();
        assert_eq!(usage, recorded, "{key}: MEMORY USAGE as recorded");
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
    let offset = |c: &mut Client, field: &str| -> Option<i64> {
        let info = c.call(&["INFO", "replication"]).text();
        info.lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.trim().parse().ok())
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let target = offset(primary, "master_repl_offset:");
        if target.is_some() && offset(replica, "slave_repl_offset:") == target {
            return;
        }
        assert!(Instant::now() < deadline, "replica did not catch up");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every command the module registered (lower case, sorted), as the server lists them.
pub fn module_commands(client: &mut Client) -> Vec<String> {
    let mut names: Vec<String> = client
        .call(&["COMMAND", "LIST", "FILTERBY", "MODULE", "bf"])
        .array()
        .iter()
        .map(|name| name.text().to_ascii_lowercase())
        .collect();
    names.sort();
    names
}

/// The ACL categories `COMMAND INFO` gives a command (`@write`, `@bloom`, ...), sorted.
pub fn command_acl_categories(client: &mut Client, command: &str) -> Vec<String> {
    let info = client.call(&["COMMAND", "INFO", command]).array();
    let mut categories: Vec<String> = info[0].array()[6].array().iter().map(Reply::text).collect();
    categories.sort();
    categories
}

/// The next `count` keyspace notifications a PSUBSCRIBEd client receives, as
/// `"<channel> <event>"`.
pub fn events(client: &mut Client, count: usize) -> Vec<String> {
    (0..count)
        .map(|_| {
            let message = client.read().array();
            assert_eq!(message[0], bulk("pmessage"));
            format!("{} {}", message[2].text(), message[3].text())
        })
        .collect()
}
