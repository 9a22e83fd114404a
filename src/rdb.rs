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
