//! What a server holds, read back so a test can compare it: every key (sorted), a number from
//! `INFO`, the fields of an INFO-style reply, a Bloom key's observable state (SCANDUMP chunks, `BF.INFO`, `BF.DEBUG`), the answers
//! of `BF.MEXISTS`, and adding many items in batches.

use super::client::{Array, Bulk, Client, Int, Map, Reply};
use super::rdb::scandump;

/// Every key of the server, sorted.
pub fn sorted_keys(client: &mut Client) -> Vec<String> {
    let mut keys: Vec<String> = client
        .call(&["KEYS", "*"])
        .array()
        .iter()
        .map(Reply::text)
        .collect();
    keys.sort();
    keys
}

/// The number `INFO <section>` gives for `name` (e.g. `used_memory` in `memory`).
pub fn info_int(client: &mut Client, section: &str, name: &str) -> i64 {
    let info = client.call(&["INFO", section]).text();
    info.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in INFO {section}"))
}

/// An INFO-style reply (`BF.INFO`, `CF.INFO`: a RESP2 flat list or a RESP3 map) as
/// `(field, value)` pairs, in the server's order.
pub fn info_fields(reply: Reply) -> Vec<(String, Reply)> {
    match reply {
        Array(items) => items
            .chunks(2)
            .map(|pair| (pair[0].text(), pair[1].clone()))
            .collect(),
        Map(pairs) => pairs.into_iter().map(|(k, v)| (k.text(), v)).collect(),
        other => panic!("not an INFO reply: {other:?}"),
    }
}

/// `BF.MADD`s `items` into `key`, 200 a command.
pub fn madd_in_batches(client: &mut Client, key: &str, items: &[String]) {
    for batch in items.chunks(200) {
        let mut args = vec!["BF.MADD".to_string(), key.to_string()];
        args.extend(batch.iter().cloned());
        client.call(&args);
    }
}

/// The answers of `BF.MEXISTS key items...`.
pub fn mexists(client: &mut Client, key: &str, items: &[String]) -> Vec<Reply> {
    let mut args = vec!["BF.MEXISTS".to_string(), key.to_string()];
    args.extend(items.iter().cloned());
    client.call(&args).array()
}

/// What a Bloom-family key shows of itself: its SCANDUMP chunks (iterator, bytes), then its
/// `BF.INFO` and `BF.DEBUG` replies.
pub fn bloom_state(client: &mut Client, key: &str) -> Vec<Reply> {
    let mut out = Vec::new();
    for (iter, bytes) in scandump(client, "BF.SCANDUMP", key) {
        out.push(Int(iter));
        out.push(Bulk(bytes));
    }
    out.push(client.call(&["BF.INFO", key]));
    out.push(client.call(&["BF.DEBUG", key]));
    out
}
