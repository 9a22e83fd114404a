//! What the server decides, not the module, and so differs between servers and versions: the
//! server's name and version, the RDB version of DUMP trailers, the per-key `MEMORY USAGE`
//! overhead, log wording, extra fields in `COMMAND DOCS`, and how the server lists the module's
//! commands and their ACL categories. Each helper asks the running server, so a test asserts the
//! module's part exactly and the server's part as this server does it.

use super::client::{Array, Bulk, Client, Map, Reply};
use super::rdb::with_rdb_version;

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

/// Whether the server has unprefixed module configurations (`REDISMODULE_CONFIG_UNPREFIXED`,
/// Redis 8.0 onwards; no Valkey so far), where bloomrs registers RedisBloom 8's names
/// (`bf-error-rate`, ...) with `bf.<name>` as their alias.
pub fn has_unprefixed_configs(info: &ServerInfo) -> bool {
    !info.is_valkey() && info.at_least(8, 0)
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

/// Whether a server that writes RDB version `writes` reads files and DUMP payloads of version
/// `version`. Redis and Valkey 8 read every version up to their own. Valkey 9 numbers its own
/// versions from 80 and reads those up to its own and the ones up to 11 that Redis and Valkey
/// 8 share; 12 to 79 are Redis's later ones, which it refuses (`rdb-version-check strict`, its
/// default).
pub fn reads_rdb_version(writes: u16, version: u16) -> bool {
    if writes >= 80 {
        version <= 11 || (80..=writes).contains(&version)
    } else {
        version <= writes
    }
}

/// `payload` (a DUMP payload, e.g. one RedisBloom wrote on Redis 7.0) as this server's DUMP
/// writes the same value: the body unchanged, the trailer's RDB version this server's, and the
/// CRC64 recomputed.
pub fn as_dumped_here(client: &mut Client, payload: &[u8]) -> Vec<u8> {
    with_rdb_version(payload, rdb_version(client))
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
    // The probe's value, the integer 1, is a 16-byte object of its own, except on Valkey 9,
    // which keeps it in the key's object: there the probe's usage is all overhead.
    let info = server_info(client);
    if info.is_valkey() && info.at_least(9, 0) {
        usage
    } else {
        usage - 16
    }
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
