//! The client side of every test: a minimal RESP2/RESP3 client that keeps each reply's exact
//! type (`Reply`), short constructors for expected replies (`ok`, `err`, `ints`, ...), the
//! `call!` macro with the `ToArg` conversions it accepts, `assert_replies` for tables of
//! command and exact reply, and reading keyspace notifications.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

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
                let (text, more) = escaped_head(bytes, 48);
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

    /// How long a reply may take before the read fails (120 s unless set): a long randomized
    /// run reports a command that never answers sooner.
    pub fn set_reply_timeout(&mut self, timeout: Duration) {
        self.writer
            .set_read_timeout(Some(timeout))
            .expect("set the read timeout");
    }

    pub fn resp3(&mut self) {
        assert!(matches!(self.call(&["HELLO", "3"]), Map(_)));
    }
}

/// RedisBloom's `BF.INFO` fields, in its order (a counting filter adds two after them).
pub const BF_INFO_FIELDS: [&str; 5] = [
    "Capacity",
    "Size",
    "Number of filters",
    "Number of items inserted",
    "Expansion rate",
];

/// An INFO-style RESP2 reply: each field name as a simple string, then its number.
pub fn info_reply(names: &[&str], values: &[i64]) -> Reply {
    assert_eq!(names.len(), values.len(), "one value a field");
    let pairs = names.iter().zip(values);
    Array(
        pairs
            .flat_map(|(name, value)| [Simple(name.to_string()), Int(*value)])
            .collect(),
    )
}

/// The first `limit` bytes escaped as ASCII, and `...(N bytes)` when that cut something off
/// (empty when not): long binary values printed readably.
pub fn escaped_head(bytes: &[u8], limit: usize) -> (String, String) {
    let text = bytes
        .iter()
        .take(limit)
        .flat_map(|b| std::ascii::escape_default(*b))
        .map(char::from)
        .collect();
    let more = if bytes.len() > limit {
        format!("...({} bytes)", bytes.len())
    } else {
        String::new()
    };
    (text, more)
}

/// Sends each command in turn and asserts its exact reply, naming the command that differed: a
/// table of cases for ladders of errors.
pub fn assert_replies(client: &mut Client, cases: &[(&[&str], Reply)]) {
    for (args, expected) in cases {
        assert_eq!(client.call(args), *expected, "{args:?}");
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

/// `bf.max-filter-bytes` unless a test sets it.
pub const DEFAULT_MAX_FILTER_BYTES: u64 = 4294967296;

/// The refusal of a filter larger than `bf.max-filter-bytes` allows (deviation D1):
/// RedisBloom's text, then the setting and its value.
pub fn too_large(max_filter_bytes: u64) -> Reply {
    err(&format!(
        "ERR Insufficient memory to create filter: the filter would be larger than \
         bf.max-filter-bytes ({max_filter_bytes} bytes); raise it with CONFIG SET bf.max-filter-bytes"
    ))
}

/// The reply to an item whose scale-out `bf.max-filter-bytes` refused: RedisBloom's text,
/// then the setting and its value.
pub fn cannot_grow(max_filter_bytes: u64) -> Reply {
    err(&format!(
        "ERR problem inserting into filter: the filter cannot grow its next link past \
         bf.max-filter-bytes ({max_filter_bytes} bytes); raise it with CONFIG SET bf.max-filter-bytes"
    ))
}

/// The reply to an add to a filter whose `BF.LOADCHUNK` chunks are still arriving.
pub fn still_loading() -> Reply {
    err("ERR the filter is still loading: BF.LOADCHUNK has not sent all its chunks")
}

/// The same refusals where what `maxmemory` (in bytes) leaves free was the limit.
pub fn too_large_for_maxmemory(maxmemory: u64) -> Reply {
    err(&format!(
        "ERR Insufficient memory to create filter: the filter would be larger than what \
         maxmemory ({maxmemory} bytes) leaves free; free memory or raise maxmemory"
    ))
}

/// The reply to an item whose scale-out `maxmemory` (in bytes) refused.
pub fn cannot_grow_for_maxmemory(maxmemory: u64) -> Reply {
    err(&format!(
        "ERR problem inserting into filter: the filter cannot grow its next link past what \
         maxmemory ({maxmemory} bytes) leaves free; free memory or raise maxmemory"
    ))
}

/// The reply to a cuckoo insert whose new sub-filter `bf.max-filter-bytes` refused.
pub fn cuckoo_too_large(max_filter_bytes: u64) -> Reply {
    err(&format!(
        "ERR Insufficient memory: the filter would be larger than bf.max-filter-bytes \
         ({max_filter_bytes} bytes); raise it with CONFIG SET bf.max-filter-bytes"
    ))
}

/// The same where what `maxmemory` (in bytes) leaves free was the limit.
pub fn cuckoo_too_large_for_maxmemory(maxmemory: u64) -> Reply {
    err(&format!(
        "ERR Insufficient memory: the filter would be larger than what maxmemory \
         ({maxmemory} bytes) leaves free; free memory or raise maxmemory"
    ))
}
