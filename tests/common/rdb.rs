//! A filter's serialized forms: DUMP payloads taken apart and built (`Payload`, `RdbField`,
//! `module_payload`) with Redis's CRC-64 and RDB trailer, the module type ids, and the SCANDUMP
//! chunks of a key.

use super::client::{err, ok, Client, Int, Reply};

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

/// Sends every chunk to `command` (`BF.LOADCHUNK` or `CF.LOADCHUNK`) for `key`, in order,
/// asserting that each is accepted.
pub fn load_chunks(client: &mut Client, command: &str, key: &str, chunks: &[(i64, Vec<u8>)]) {
    for (iter, bytes) in chunks {
        let reply = client.call(&[
            command.as_bytes(),
            key.as_bytes(),
            iter.to_string().as_bytes(),
            bytes,
        ]);
        assert_eq!(reply, ok(), "{command} {key} {iter}");
    }
}

/// Sends each named header chunk to `command` (`BF.LOADCHUNK` or `CF.LOADCHUNK`) for `key`,
/// asserting the exact `error` and that no key was created.
pub fn assert_headers_refused(
    client: &mut Client,
    command: &str,
    key: &str,
    headers: &[(&str, Vec<u8>)],
    error: &Reply,
) {
    for (what, header) in headers {
        let reply = client.call(&[command.as_bytes(), key.as_bytes(), b"1", header]);
        assert_eq!(reply, *error, "{what}");
        assert_eq!(client.call(&["EXISTS", key]), Int(0), "{what}");
    }
}

/// Puts `key` back from its own DUMP payload: refused over the existing key (`BUSYKEY`), then
/// restored once the key is deleted.
pub fn restore_from_own_dump(client: &mut Client, key: &str) {
    let payload = client.call(&["DUMP", key]).bytes();
    let restore =
        |client: &mut Client| client.call(&[b"RESTORE".as_slice(), key.as_bytes(), b"0", &payload]);
    let busy = err("BUSYKEY Target key name already exists.");
    assert_eq!(restore(client), busy, "{key}");
    assert_eq!(client.call(&["DEL", key]), Int(1), "{key}");
    assert_eq!(restore(client), ok(), "{key}");
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

/// The plain Bloom type id as Redis stores it: 54 bits of name, 10 bits of encoding version.
pub const BLOOM_TYPE_ID: u64 = 0x3016_e5a2_89be_f800;

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

/// `payload` with another RDB version in its trailer and a valid CRC64.
pub fn with_rdb_version(payload: &[u8], version: [u8; 2]) -> Vec<u8> {
    let body = &payload[..payload.len() - 10];
    let mut out = [body, &version].concat();
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}
