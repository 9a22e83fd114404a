//! valkey-bloom's fixtures (`tests/fixtures/valkey-bloom/`): the RDB file, the `BF.LOAD`
//! commands of its AOF, the items and probes of each key, and checking a server's answers
//! against the ones valkey-bloom gave.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::client::*;
use super::server::parse_aof;

/// A file of the fixtures.
pub fn valkey_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/valkey-bloom")
        .join(name)
}

/// What valkey-bloom answered, per key (see the fixtures' README).
pub fn valkey_answers() -> Vec<Value> {
    let text = std::fs::read_to_string(valkey_fixture("answers.json")).unwrap();
    let all: Value = serde_json::from_str(&text).unwrap();
    all["keys"].as_array().unwrap().clone()
}

/// The `BF.LOAD key blob` commands valkey-bloom's AOF rewrite wrote.
pub fn valkey_loads() -> Vec<Vec<Vec<u8>>> {
    let base = std::fs::read(valkey_fixture("appendonlydir/appendonly.aof.2.base.aof")).unwrap();
    parse_aof(&base)
        .into_iter()
        .filter(|command| command[0] == b"BF.LOAD")
        .collect()
}

/// Item `n` of a key, as its record says they were made.
pub fn valkey_item(spec: &Value, n: u64) -> Vec<u8> {
    let prefix = spec["items"]["prefix"].as_str().unwrap();
    let mut out = format!("{prefix}{n}").into_bytes();
    if spec["items"]["gen"] == "binary" {
        if n == 0 {
            return Vec::new();
        }
        out.extend_from_slice(&[0, 0xff, (n % 256) as u8]);
    }
    out
}

/// A key's probes: positive, then negative.
pub fn valkey_probes(spec: &Value) -> Vec<Vec<u8>> {
    let p = &spec["probes"];
    let step = p["pos_step"].as_u64().unwrap();
    let prefix = spec["items"]["prefix"].as_str().unwrap();
    let mut out: Vec<Vec<u8>> = (0..p["pos_count"].as_u64().unwrap())
        .map(|i| valkey_item(spec, i * step))
        .collect();
    out.extend(
        (0..p["neg_count"].as_u64().unwrap()).map(|j| format!("{prefix}neg:{j}").into_bytes()),
    );
    out
}

/// `BF.MEXISTS` of `items` as a string of 0 and 1, and `BF.EXISTS` of the first ones agreeing.
pub fn valkey_exists_bits(c: &mut Client, key: &str, items: &[Vec<u8>]) -> String {
    let mut bits = String::new();
    for batch in items.chunks(500) {
        let mut args = vec![b"BF.MEXISTS".to_vec(), key.as_bytes().to_vec()];
        args.extend(batch.iter().cloned());
        for reply in c.call(&args).array() {
            bits.push(if reply == Int(1) { '1' } else { '0' });
        }
    }
    for (i, probe) in items.iter().take(20).enumerate() {
        let one = c.call(&[b"BF.EXISTS".as_slice(), key.as_bytes(), probe]);
        assert_eq!(
            one,
            Int(i64::from(&bits[i..=i] == "1")),
            "{key} BF.EXISTS {i}"
        );
    }
    bits
}

/// The recorded `BF.INFO` as the reply valkey-bloom gives (RESP2): `Size` left out unless
/// `size` is true.
pub fn assert_valkey_info(c: &mut Client, key: &str, recorded: &Value, size: bool) {
    let reply = c.call(&["BF.INFO", key]).array();
    // valkey-bloom's order (the recorded object's keys come sorted).
    let order = [
        "Capacity",
        "Size",
        "Number of filters",
        "Number of items inserted",
        "Error rate",
        "Expansion rate",
        "Tightening ratio",
        "Max scaled capacity",
    ];
    let fields: Vec<(&str, &Value)> = order
        .iter()
        .filter_map(|name| Some((*name, recorded.get(*name)?)))
        .collect();
    assert_eq!(fields.len(), recorded.as_object().unwrap().len(), "{key}");
    assert_eq!(reply.len(), fields.len() * 2, "{key}: {reply:?}");
    for (pair, (name, value)) in reply.chunks(2).zip(fields) {
        assert_eq!(pair[0], Simple(name.to_string()), "{key}");
        let expected = match value {
            Value::Null => Nil,
            Value::String(text) => bulk(text),
            Value::Number(n) => Int(n.as_i64().unwrap()),
            other => panic!("{other:?}"),
        };
        match (&pair[1], &expected) {
            // Redis 7.0 writes doubles with 17 digits, Valkey 8 the shortest form: the same
            // double either way.
            (Bulk(got), Bulk(recorded)) => {
                let number =
                    |bytes: &[u8]| -> f64 { std::str::from_utf8(bytes).unwrap().parse().unwrap() };
                assert_eq!(number(got), number(recorded), "{key} {name}");
            }
            _ if name == "Size" && !size => {}
            _ => assert_eq!(pair[1], expected, "{key} {name}"),
        }
    }
    let capacity = recorded["Capacity"].as_i64().unwrap();
    assert_eq!(
        c.call(&["BF.INFO", key, "capacity"]),
        Int(capacity),
        "{key}"
    );
    let items = recorded["Number of items inserted"].as_i64().unwrap();
    assert_eq!(c.call(&["BF.INFO", key, "ITEMS"]), Int(items), "{key}");
    let rate: f64 = recorded["Error rate"].as_str().unwrap().parse().unwrap();
    let got = c.call(&["BF.INFO", key, "ERROR"]).text();
    assert_eq!(got.parse::<f64>().unwrap(), rate, "{key}");
    assert_eq!(
        c.call(&["BF.INFO", key, "NOSUCHFIELD"]),
        err("ERR invalid information value"),
        "{key}"
    );
}

/// Every recorded answer of every key, then the 1,000 further adds and the answers after them.
pub fn assert_answers_as_valkey_bloom(c: &mut Client, size: bool) {
    for spec in valkey_answers() {
        let key = spec["key"].as_str().unwrap();
        let probes = valkey_probes(&spec);
        assert_eq!(
            valkey_exists_bits(c, key, &probes),
            spec["exists_bits"].as_str().unwrap(),
            "{key}"
        );
        assert_eq!(
            c.call(&["BF.CARD", key]),
            Int(spec["card"].as_i64().unwrap()),
            "{key}"
        );
        assert_valkey_info(c, key, &spec["info"], size);
        let prefix = spec["items"]["prefix"].as_str().unwrap();
        let extra: Vec<Vec<u8>> = (0..1000)
            .map(|j| format!("{prefix}x:{j}").into_bytes())
            .collect();
        let errors: Vec<String> = spec["extra"]["add_errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e.as_str().unwrap().trim_start_matches("E:").to_string())
            .collect();
        let mut codes = String::new();
        for x in &extra {
            match c.call(&[b"BF.ADD".as_slice(), key.as_bytes(), x]) {
                Int(1) => codes.push('1'),
                Int(0) => codes.push('0'),
                Error(text) => {
                    assert!(errors.contains(&text), "{key}: {text}");
                    codes.push('E');
                }
                other => panic!("{key}: {other:?}"),
            }
        }
        assert_eq!(codes, spec["extra"]["add_codes"].as_str().unwrap(), "{key}");
        let post = &spec["post"];
        assert_eq!(
            valkey_exists_bits(c, key, &probes),
            post["exists_bits"].as_str().unwrap(),
            "{key}"
        );
        let extra_bits = post["extra_exists_bits"].as_str().unwrap();
        assert_eq!(valkey_exists_bits(c, key, &extra), extra_bits, "{key}");
        assert_eq!(
            c.call(&["BF.CARD", key]),
            Int(post["card"].as_i64().unwrap()),
            "{key}"
        );
        assert_valkey_info(c, key, &post["info"], size);
    }
}

/// `hex:...` as bytes.
pub fn valkey_unhex(text: &str) -> Vec<u8> {
    let hex = text.strip_prefix("hex:").unwrap();
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

/// A figure of `million/<name>.txt` (see the fixtures' README).
pub fn million_figure(name: &str, figure: &str) -> i64 {
    let text = std::fs::read_to_string(valkey_fixture(&format!("million/{name}.txt"))).unwrap();
    text.lines()
        .find_map(|line| line.strip_prefix(figure)?.trim().parse().ok())
        .unwrap()
}

/// The million fixtures' probes (50,000 added items, then 50,000 never added) and the
/// answers recorded for object `name`, one character each.
pub fn million_probes(name: &str) -> (Vec<Vec<u8>>, String) {
    let added = (0..50_000).map(|i| format!("million:{}", 20 * i));
    let absent = (0..50_000).map(|j| format!("million:neg:{j}"));
    let probes: Vec<Vec<u8>> = added.chain(absent).map(String::into_bytes).collect();
    let recorded = std::fs::read(valkey_fixture(&format!("million/{name}.probes"))).unwrap();
    let bits = (0..probes.len())
        .map(|at| {
            if recorded[at / 8] & (1 << (at % 8)) != 0 {
                '1'
            } else {
                '0'
            }
        })
        .collect();
    (probes, bits)
}
