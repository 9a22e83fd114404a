//! The primitives a module value is made of in an RDB file or a DUMP payload: unsigned
//! integers, doubles and string buffers, in a fixed order. The filters encode and decode
//! themselves through these traits, so the same code serves Redis's `RedisModuleIO` (in the
//! Redis layer) and the in-memory stream used by tests and fuzzers.

use std::collections::VecDeque;

/// Why a value could not be read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// The stream ended early or a primitive could not be read.
    Io,
    /// The primitives were read but do not describe a valid filter.
    Invalid(&'static str),
    /// The value would need more memory than the per-filter limit allows.
    TooLarge,
    /// An encoding version newer than this module understands.
    UnknownVersion(i32),
}

/// A source of RDB primitives.
pub trait RdbRead {
    fn read_unsigned(&mut self) -> Result<u64, LoadError>;
    fn read_double(&mut self) -> Result<f64, LoadError>;
    fn read_buffer(&mut self) -> Result<Vec<u8>, LoadError>;
}

/// A sink of RDB primitives.
pub trait RdbWrite {
    fn write_unsigned(&mut self, value: u64);
    fn write_double(&mut self, value: f64);
    fn write_buffer(&mut self, bytes: &[u8]);
}

/// One primitive of an in-memory stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Field {
    Unsigned(u64),
    Double(f64),
    Buffer(Vec<u8>),
}

/// An in-memory RDB stream: what a value wrote, to be read back in the same order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemoryRdb {
    pub fields: VecDeque<Field>,
}

impl MemoryRdb {
    pub fn new() -> Self {
        Self::default()
    }
}

impl RdbWrite for MemoryRdb {
    fn write_unsigned(&mut self, value: u64) {
        self.fields.push_back(Field::Unsigned(value));
    }
    fn write_double(&mut self, value: f64) {
        self.fields.push_back(Field::Double(value));
    }
    fn write_buffer(&mut self, bytes: &[u8]) {
        self.fields.push_back(Field::Buffer(bytes.to_vec()));
    }
}

impl RdbRead for MemoryRdb {
    fn read_unsigned(&mut self) -> Result<u64, LoadError> {
        match self.fields.pop_front() {
            Some(Field::Unsigned(v)) => Ok(v),
            _ => Err(LoadError::Io),
        }
    }
    fn read_double(&mut self) -> Result<f64, LoadError> {
        match self.fields.pop_front() {
            Some(Field::Double(v)) => Ok(v),
            _ => Err(LoadError::Io),
        }
    }
    fn read_buffer(&mut self) -> Result<Vec<u8>, LoadError> {
        match self.fields.pop_front() {
            Some(Field::Buffer(v)) => Ok(v),
            _ => Err(LoadError::Io),
        }
    }
}

/// A module value decoded from a Redis DUMP payload (or an RDB module value): the module type
/// id (name and encoding version), and the primitives in order.
#[derive(Debug, Clone, PartialEq)]
pub struct ModulePayload {
    pub type_id: u64,
    pub fields: MemoryRdb,
}

impl ModulePayload {
    /// The encoding version stored in the low 10 bits of the type id.
    pub fn encoding_version(&self) -> i32 {
        (self.type_id & 1023) as i32
    }

    /// Decodes `RDB_TYPE_MODULE_2` + module id + opcode-tagged primitives + EOF opcode, as in a
    /// DUMP payload (the 10-byte version and checksum trailer, if present, is not checked).
    /// Strings longer than `max_string` are refused before anything is allocated for them.
    pub fn decode(payload: &[u8], max_string: usize) -> Result<ModulePayload, LoadError> {
        let mut input = PayloadReader {
            bytes: payload,
            max_string,
        };
        if input.byte()? != RDB_TYPE_MODULE_2 {
            return Err(LoadError::Invalid("not a module value"));
        }
        let type_id = input.length()?;
        let mut fields = MemoryRdb::new();
        loop {
            match input.length()? {
                OPCODE_EOF => break,
                OPCODE_UINT => fields.write_unsigned(input.length()?),
                OPCODE_SINT => fields.write_unsigned(input.length()?),
                OPCODE_DOUBLE => fields.write_double(f64::from_le_bytes(input.array()?)),
                OPCODE_STRING => {
                    let string = input.string()?;
                    fields.fields.push_back(Field::Buffer(string));
                }
                _ => return Err(LoadError::Invalid("unknown opcode")),
            }
        }
        Ok(ModulePayload { type_id, fields })
    }
}

const RDB_TYPE_MODULE_2: u8 = 7;
const OPCODE_EOF: u64 = 0;
const OPCODE_SINT: u64 = 1;
const OPCODE_UINT: u64 = 2;
const OPCODE_DOUBLE: u64 = 4;
const OPCODE_STRING: u64 = 5;

struct PayloadReader<'a> {
    bytes: &'a [u8],
    max_string: usize,
}

impl<'a> PayloadReader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], LoadError> {
        if n > self.bytes.len() {
            return Err(LoadError::Io);
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], LoadError> {
        let (head, rest) = self.bytes.split_first_chunk::<N>().ok_or(LoadError::Io)?;
        self.bytes = rest;
        Ok(*head)
    }

    fn byte(&mut self) -> Result<u8, LoadError> {
        Ok(self.array::<1>()?[0])
    }

    fn big_endian(&mut self, n: usize) -> Result<u64, LoadError> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, b| acc << 8 | u64::from(*b)))
    }

    /// Redis's length encoding.
    fn length(&mut self) -> Result<u64, LoadError> {
        let first = self.byte()?;
        match first >> 6 {
            0 => Ok(u64::from(first & 0x3f)),
            1 => Ok(u64::from(first & 0x3f) << 8 | u64::from(self.byte()?)),
            2 if first == 0x80 => self.big_endian(4),
            2 if first == 0x81 => self.big_endian(8),
            _ => Err(LoadError::Invalid("bad length encoding")),
        }
    }

    fn checked_len(&self, len: u64) -> Result<usize, LoadError> {
        usize::try_from(len)
            .ok()
            .filter(|l| *l <= self.max_string)
            .ok_or(LoadError::TooLarge)
    }

    /// A string: plain, a small integer, or LZF-compressed.
    fn string(&mut self) -> Result<Vec<u8>, LoadError> {
        let first = *self.bytes.first().ok_or(LoadError::Io)?;
        if first >> 6 != 3 {
            let len = self.length()?;
            let len = self.checked_len(len)?;
            return Ok(self.take(len)?.to_vec());
        }
        self.take(1)?;
        match first & 0x3f {
            0 => Ok((self.byte()? as i8).to_string().into_bytes()),
            1 => Ok(i16::from_le_bytes(self.array()?).to_string().into_bytes()),
            2 => Ok(i32::from_le_bytes(self.array()?).to_string().into_bytes()),
            3 => {
                let compressed = self.length()?;
                let compressed = self.checked_len(compressed)?;
                let len = self.length()?;
                let len = self.checked_len(len)?;
                lzf_decompress(self.take(compressed)?, len)
            }
            _ => Err(LoadError::Invalid("bad string encoding")),
        }
    }
}

/// LZF decompression into exactly `len` bytes.
fn lzf_decompress(input: &[u8], len: usize) -> Result<Vec<u8>, LoadError> {
    const BAD: LoadError = LoadError::Invalid("bad LZF data");
    let mut out: Vec<u8> = Vec::with_capacity(len);
    let mut rest = input;
    while let Some((&ctrl, tail)) = rest.split_first() {
        rest = tail;
        let ctrl = usize::from(ctrl);
        if ctrl < 32 {
            if ctrl + 1 > rest.len() || out.len() + ctrl + 1 > len {
                return Err(BAD);
            }
            let (literal, tail) = rest.split_at(ctrl + 1);
            out.extend_from_slice(literal);
            rest = tail;
            continue;
        }
        let mut run = ctrl >> 5;
        if run == 7 {
            let (&extra, tail) = rest.split_first().ok_or(BAD)?;
            run += usize::from(extra);
            rest = tail;
        }
        let (&low, tail) = rest.split_first().ok_or(BAD)?;
        rest = tail;
        let back = ((ctrl & 0x1f) << 8) + usize::from(low) + 1;
        let start = out.len().checked_sub(back).ok_or(BAD)?;
        if out.len() + run + 2 > len {
            return Err(BAD);
        }
        for i in start..start + run + 2 {
            let byte = *out.get(i).ok_or(BAD)?;
            out.push(byte);
        }
    }
    if out.len() == len {
        Ok(out)
    } else {
        Err(BAD)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BF_EXAMPLE: &str = "07813016e5a289bef804020c020202050202020a047b14ae47e17a743f020804e9862fb2350e264002408002000510130d884fc6552d3278d0e2dcd0cf0daf020a0214047b14ae47e17a643f0209044af7d49edef02840024100020005200400000000000080000002000800200080000002000c202001884000021080000202000a00c0f199f88b94cd92";

    fn unhex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn decodes_the_reference_bloom_dump() {
        let decoded = ModulePayload::decode(&unhex(BF_EXAMPLE), 1 << 20).unwrap();
        assert_eq!(decoded.type_id, 0x3016_e5a2_89be_f804);
        assert_eq!(decoded.encoding_version(), 4);
        let fields: Vec<Field> = decoded.fields.fields.into_iter().collect();
        assert_eq!(fields.len(), 4 + 2 * 8);
        assert_eq!(
            &fields[..6],
            &[
                Field::Unsigned(12),
                Field::Unsigned(2),
                Field::Unsigned(5),
                Field::Unsigned(2),
                Field::Unsigned(10),
                Field::Double(0.005)
            ]
        );
        assert_eq!(
            fields[10],
            Field::Buffer(unhex("130d884fc6552d3278d0e2dcd0cf0daf"))
        );
    }

    #[test]
    fn refuses_broken_payloads() {
        let good = unhex(BF_EXAMPLE);
        assert_eq!(
            ModulePayload::decode(&good[..good.len() - 20], 1 << 20),
            Err(LoadError::Io)
        );
        assert_eq!(ModulePayload::decode(&[], 1 << 20), Err(LoadError::Io));
        assert_eq!(
            ModulePayload::decode(&[6], 1 << 20),
            Err(LoadError::Invalid("not a module value"))
        );
        assert_eq!(
            ModulePayload::decode(&[7, 1, 9], 1 << 20),
            Err(LoadError::Invalid("unknown opcode"))
        );
        assert_eq!(
            ModulePayload::decode(
                &[7, 1, 5, 0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
                1 << 20
            ),
            Err(LoadError::TooLarge)
        );
        assert_eq!(
            ModulePayload::decode(&[7, 1, 5, 10, 1, 2], 1 << 20),
            Err(LoadError::Io)
        );
        assert_eq!(
            ModulePayload::decode(&[7, 1, 0xff], 1 << 20),
            Err(LoadError::Invalid("bad length encoding"))
        );
    }

    #[test]
    fn lzf() {
        // "aaaaaaaaaa": a literal 'a' then a back-reference of length 9 at distance 1.
        assert_eq!(
            lzf_decompress(&[0, b'a', 7 << 5, 0, 0], 10),
            Ok(vec![b'a'; 10])
        );
        assert_eq!(
            lzf_decompress(&[0, b'a', 0xe0, 0, 0], 10).map(|v| v.len()),
            Ok(10)
        );
        assert!(lzf_decompress(&[0, b'a', 1 << 5, 5], 10).is_err());
        assert!(lzf_decompress(&[5, b'a'], 10).is_err());
        assert!(lzf_decompress(&[0, b'a'], 2).is_err());
    }
}
