//! Replays every cuckoo key of the RedisBloom fixtures (`tests/fixtures/redisbloom`) and checks
//! each recorded reply, the CF.INFO numbers, the SCANDUMP bytes and the DUMP payload.

use base64::Engine as _;
use serde_json::Value;

use super::{CuckooFilter, CuckooParams, MAX_CHUNK_BYTES};
use crate::rdb::{Field, MemoryRdb};

const MAX_BYTES: u64 = 1 << 30;
/// RedisBloom's default `CF_MAX_EXPANSIONS`, enforced by the command layer before any add.
const CF_MAX_EXPANSIONS: u16 = 32;

fn fixtures() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/redisbloom/fixtures.json"
    );
    let text = std::fs::read_to_string(path).expect("fixtures readable");
    serde_json::from_str(&text).expect("fixtures are JSON")
}

fn cuckoo_keys() -> Vec<(String, Value)> {
    let all = fixtures();
    let keys = all["keys"].as_object().expect("keys object").clone();
    let cuckoo: Vec<_> = keys
        .into_iter()
        .filter(|(_, v)| v["type"] == "cf")
        .collect();
    assert_eq!(cuckoo.len(), 5);
    cuckoo
}

fn item(key: &str, i: u64) -> Vec<u8> {
    format!("{key}/{i}").into_bytes()
}

fn b64(text: &Value) -> Vec<u8> {
    let text = text.as_str().expect("base64 string");
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .expect("valid base64")
}

fn int(value: &Value) -> u64 {
    value.as_u64().expect("non-negative integer")
}

fn arg<'a>(args: &'a [Value], name: &str) -> Option<&'a str> {
    let at = args.iter().position(|a| a.as_str() == Some(name))?;
    args.get(at + 1)?.as_str()
}

/// The filter as the recorded `create` command left it.
fn create(spec: &Value) -> CuckooFilter {
    let Some(args) = spec["create"].as_array() else {
        return CuckooFilter::new(CuckooParams::default(), MAX_BYTES).expect("default filter");
    };
    let parse = |name| arg(args, name).map(|v| v.parse::<u64>().expect("number"));
    match args[0].as_str() {
        Some("CF.RESERVE") => {
            let params = CuckooParams {
                capacity: args[2].as_str().expect("capacity").parse().expect("number"),
                bucket_size: parse("BUCKETSIZE").unwrap_or(2) as u16,
                max_iterations: parse("MAXITERATIONS").unwrap_or(20) as u16,
                expansion: parse("EXPANSION").unwrap_or(1) as u16,
            };
            CuckooFilter::new(params, MAX_BYTES).expect("reserved filter")
        }
        Some("CF.INSERTNX") => {
            let capacity = parse("CAPACITY").expect("capacity");
            let params = CuckooParams {
                capacity,
                ..CuckooParams::default()
            };
            let mut filter = CuckooFilter::new(params, MAX_BYTES).expect("created filter");
            let at = args.iter().position(|a| a == "ITEMS").expect("ITEMS");
            for item in &args[at + 1..] {
                let item = item.as_str().expect("item").as_bytes();
                assert_eq!(filter.insert_unique(item, MAX_BYTES), Ok(true));
            }
            filter
        }
        other => panic!("unexpected create command {other:?}"),
    }
}

/// CF.ADD / CF.ADDNX reply as an integer.
fn add(filter: &mut CuckooFilter, command: &str, item: &[u8]) -> u64 {
    assert!(filter.num_filters() < CF_MAX_EXPANSIONS);
    match command {
        "CF.ADD" => filter
            .insert(item, MAX_BYTES)
            .map(|()| 1)
            .expect("inserted"),
        "CF.ADDNX" => filter
            .insert_unique(item, MAX_BYTES)
            .map(u64::from)
            .expect("inserted"),
        other => panic!("unexpected add command {other}"),
    }
}

/// Replays the recorded build, asserting every add and delete reply.
fn build(key: &str, spec: &Value) -> CuckooFilter {
    let mut filter = create(spec);
    let command = spec["add"].as_str().expect("add command");
    let replies = spec["add_replies"].as_array().expect("add replies");
    assert_eq!(replies.len() as u64, int(&spec["added"]));
    for (i, reply) in replies.iter().enumerate() {
        assert_eq!(
            add(&mut filter, command, &item(key, i as u64)),
            int(reply),
            "{key} add {i}"
        );
    }
    // The recorded counts (2 for the repeated items of the CF.ADDNX key too) show that the
    // repeats went in as plain CF.ADD, duplicates included.
    for i in 0..int(&spec["repeated"]) {
        assert_eq!(add(&mut filter, "CF.ADD", &item(key, i)), 1);
    }
    let del_replies = spec["del_replies"].as_array().expect("del replies");
    assert_eq!(del_replies.len() as u64, int(&spec["deleted"]));
    for (i, reply) in del_replies.iter().enumerate() {
        let deleted = filter.delete(&item(key, i as u64));
        assert_eq!(u64::from(deleted), int(reply), "{key} del {i}");
    }
    filter
}

fn assert_answers(key: &str, spec: &Value, filter: &CuckooFilter) {
    let present: String = (0..int(&spec["added"]))
        .map(|i| {
            if filter.contains(&item(key, i)) {
                '1'
            } else {
                '0'
            }
        })
        .collect();
    assert_eq!(
        present,
        spec["present_answers"].as_str().expect("answers"),
        "{key}"
    );
    let probes: String = (0..20000)
        .map(|j| filter.contains(format!("{key}/probe/{j}").as_bytes()))
        .map(|found| if found { '1' } else { '0' })
        .collect();
    assert_eq!(
        probes,
        spec["probe_answers"].as_str().expect("answers"),
        "{key}"
    );
    let counts: Vec<u64> = (0..20).map(|i| filter.count(&item(key, i))).collect();
    let expected: Vec<u64> = spec["counts_first_20"]
        .as_array()
        .expect("counts")
        .iter()
        .map(int)
        .collect();
    assert_eq!(counts, expected, "{key}");
}

fn assert_info(key: &str, spec: &Value, filter: &CuckooFilter) {
    let info = [
        ("Size", filter.size_bytes()),
        ("Number of buckets", filter.num_buckets()),
        ("Number of filters", u64::from(filter.num_filters())),
        ("Number of items inserted", filter.num_items()),
        ("Number of items deleted", filter.num_deletes()),
        ("Bucket size", u64::from(filter.bucket_size())),
        ("Expansion rate", u64::from(filter.expansion())),
        ("Max iterations", u64::from(filter.max_iterations())),
    ];
    let recorded: Vec<(String, u64)> = spec["info"]
        .as_array()
        .expect("info")
        .iter()
        .map(|pair| (pair[0].as_str().expect("name").to_owned(), int(&pair[1])))
        .collect();
    let ours: Vec<(String, u64)> = info.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    assert_eq!(ours, recorded, "{key}");
}

/// The recorded SCANDUMP: `[1, header]` then `[next iterator, chunk]` pairs.
fn recorded_scandump(spec: &Value) -> Vec<(i64, Vec<u8>)> {
    let steps = spec["scandump"].as_array().expect("scandump");
    steps
        .iter()
        .map(|step| (step[0].as_i64().expect("iterator"), b64(&step[1])))
        .collect()
}

#[test]
fn fixtures_replay_replies_info_and_scandump() {
    for (key, spec) in cuckoo_keys() {
        let filter = build(&key, &spec);
        assert_info(&key, &spec, &filter);
        assert_answers(&key, &spec, &filter);

        let mut ours = vec![(1, filter.encode_header().to_vec())];
        ours.extend(filter.chunks().map(|(next, chunk)| (next, chunk.to_vec())));
        assert_eq!(ours, recorded_scandump(&spec), "{key}");
        let rewrite: Vec<(i64, Vec<u8>)> = filter
            .rewrite_chunks(MAX_CHUNK_BYTES)
            .map(|(it, bytes)| (it, bytes.into_owned()))
            .collect();
        assert_eq!(rewrite, ours, "{key}");
    }
}

#[test]
fn fixtures_load_back_from_scandump() {
    for (key, spec) in cuckoo_keys() {
        let steps = recorded_scandump(&spec);
        let (first, rest) = steps.split_first().expect("header step");
        assert_eq!(first.0, 1);
        let mut loaded = CuckooFilter::from_header(&first.1, MAX_BYTES).expect("valid header");
        for (iterator, chunk) in rest {
            loaded.load_chunk(*iterator, chunk).expect("chunk loads");
        }
        assert_info(&key, &spec, &loaded);
        assert_answers(&key, &spec, &loaded);
        assert_eq!(loaded, build(&key, &spec), "{key}");
    }
}

#[test]
fn fixtures_dump_payload_matches_rdb_codec() {
    for (key, spec) in cuckoo_keys() {
        let (encver, fields) = decode_dump(&b64(&spec["dump"]));
        assert_eq!(encver, 4, "{key}");
        let mut stream = MemoryRdb {
            fields: fields.clone().into(),
        };
        let loaded = CuckooFilter::load(&mut stream, encver, MAX_BYTES).expect("loads");
        assert!(stream.fields.is_empty());
        let built = build(&key, &spec);
        assert_eq!(loaded, built, "{key}");
        let mut saved = MemoryRdb::new();
        built.save(&mut saved);
        assert_eq!(Vec::from(saved.fields), fields, "{key}");
    }
}

/// Decodes a Redis DUMP payload of a module value (RDB_TYPE_MODULE_2) into its encoding
/// version and primitives.
pub(super) fn decode_dump(payload: &[u8]) -> (i32, Vec<Field>) {
    let mut input = DumpReader {
        bytes: payload,
        at: 0,
    };
    assert_eq!(input.byte(), 7, "RDB_TYPE_MODULE_2");
    let module_id = input.length();
    let encver = (module_id & 1023) as i32;
    let mut fields = Vec::new();
    loop {
        match input.length() {
            0 => break,
            2 => fields.push(Field::Unsigned(input.length())),
            5 => fields.push(Field::Buffer(input.string())),
            opcode => panic!("unexpected opcode {opcode}"),
        }
    }
    assert_eq!(
        payload.len() - input.at,
        10,
        "RDB version and CRC64 trailer"
    );
    (encver, fields)
}

struct DumpReader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl DumpReader<'_> {
    fn byte(&mut self) -> u8 {
        self.at += 1;
        self.bytes[self.at - 1]
    }

    fn take(&mut self, n: usize) -> &[u8] {
        self.at += n;
        &self.bytes[self.at - n..self.at]
    }

    fn big_endian(&mut self, n: usize) -> u64 {
        self.take(n)
            .iter()
            .fold(0, |acc, &b| acc << 8 | u64::from(b))
    }

    /// Redis length encoding (the special string encodings are handled by `string`).
    fn length(&mut self) -> u64 {
        let first = self.byte();
        match first >> 6 {
            0 => u64::from(first & 0x3f),
            1 => u64::from(first & 0x3f) << 8 | u64::from(self.byte()),
            2 if first == 0x80 => self.big_endian(4),
            2 if first == 0x81 => self.big_endian(8),
            _ => panic!("special encoding where a length was expected"),
        }
    }

    fn string(&mut self) -> Vec<u8> {
        let first = self.bytes[self.at];
        if first >> 6 != 3 {
            let len = self.length() as usize;
            return self.take(len).to_vec();
        }
        self.at += 1;
        match first & 0x3f {
            0 => (self.byte() as i8).to_string().into_bytes(),
            1 => i16::from_le_bytes([self.byte(), self.byte()])
                .to_string()
                .into_bytes(),
            3 => {
                let compressed_len = self.length() as usize;
                let len = self.length() as usize;
                let out = lzf_decompress(self.take(compressed_len));
                assert_eq!(out.len(), len);
                out
            }
            other => panic!("unexpected string encoding {other}"),
        }
    }
}

fn lzf_decompress(input: &[u8]) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::new();
    let mut at = 0;
    while at < input.len() {
        let ctrl = usize::from(input[at]);
        at += 1;
        if ctrl < 32 {
            out.extend_from_slice(&input[at..at + ctrl + 1]);
            at += ctrl + 1;
            continue;
        }
        let mut len = ctrl >> 5;
        if len == 7 {
            len += usize::from(input[at]);
            at += 1;
        }
        let back = ((ctrl & 0x1f) << 8) + usize::from(input[at]) + 1;
        at += 1;
        let start = out.len() - back;
        for i in 0..len + 2 {
            out.push(out[start + i]);
        }
    }
    out
}
