//! What the targets of the Bloom kinds check alike: a filter comes from an RDB payload or from
//! a LOADCHUNK header and chunks (after a mode byte), and whatever is accepted saves, dumps and
//! loads back identically. Each target names its kind's codecs with `stored!`.

use std::fmt::Debug;

use bloomrs::rdb::{MemoryRdb, ModulePayload};

#[path = "common.rs"]
mod common;
pub use common::{Frames, MAX_BYTES};

/// A kind's RDB and LOADCHUNK codecs, under the targets' memory cap.
pub trait Stored: Sized + Clone + PartialEq + Debug {
    fn load(fields: &mut MemoryRdb, encver: i32) -> Option<Self>;
    fn save(&self, rdb: &mut MemoryRdb);
    /// The encoding version `save` writes.
    fn encoding_version() -> i32;
    fn from_header(header: &[u8]) -> Option<Self>;
    fn encode_header(&self) -> Vec<u8>;
    /// Whether the chunk was taken.
    fn load_chunk(&mut self, iter: i64, bytes: &[u8]) -> bool;
    /// The chunks after the header, as `(iterator, bytes)`.
    fn dump(&self) -> Vec<(i64, Vec<u8>)>;
}

/// `Stored` for `$kind`, whose RDB and header codecs take the usual arguments; loading a chunk
/// and dumping differ by kind and are given as closures of the filter.
macro_rules! stored {
    ($kind:ident, $version:expr,
     load_chunk: |$f:ident, $iter:ident, $bytes:ident| $load_chunk:expr,
     dump: |$g:ident| $dump:expr) => {
        impl $crate::stored::Stored for $kind {
            fn load(fields: &mut bloomrs::rdb::MemoryRdb, encver: i32) -> Option<Self> {
                $kind::load(fields, encver, $crate::stored::MAX_BYTES).ok()
            }
            fn save(&self, rdb: &mut bloomrs::rdb::MemoryRdb) {
                $kind::save(self, rdb)
            }
            fn encoding_version() -> i32 {
                $version
            }
            fn from_header(header: &[u8]) -> Option<Self> {
                $kind::from_header(header, $crate::stored::MAX_BYTES).ok()
            }
            fn encode_header(&self) -> Vec<u8> {
                $kind::encode_header(self).to_vec()
            }
            fn load_chunk(&mut self, $iter: i64, $bytes: &[u8]) -> bool {
                let $f = self;
                $load_chunk
            }
            fn dump(&self) -> Vec<(i64, Vec<u8>)> {
                let $g = self;
                $dump
            }
        }
    };
}

/// The filter `data` describes: after a mode byte, an RDB payload (even) or a LOADCHUNK header
/// and chunks (odd). Also the bytes after the mode byte, for the targets' items.
pub fn decode<T: Stored>(data: &[u8]) -> Option<(T, &[u8])> {
    let (&mode, rest) = data.split_first()?;
    let filter = if mode & 1 == 0 { from_rdb(rest) } else { from_chunks(rest) };
    Some((filter?, rest))
}

/// The filter an RDB payload (a DUMP's module value) holds.
pub fn from_rdb<T: Stored>(data: &[u8]) -> Option<T> {
    let payload = ModulePayload::decode(data, MAX_BYTES as usize).ok()?;
    let encver = payload.encoding_version();
    let mut fields = payload.fields;
    T::load(&mut fields, encver)
}

/// The filter a LOADCHUNK header and chunks build, framed as `Frames` reads them.
pub fn from_chunks<T: Stored>(data: &[u8]) -> Option<T> {
    let mut frames = Frames { rest: data };
    let header = frames.blob()?;
    let mut filter = T::from_header(header)?;
    assert_eq!(filter.encode_header(), header, "a header says one filter one way");
    while let Some((iter, bytes)) = frames.chunk() {
        let before = filter.clone();
        if !filter.load_chunk(iter, bytes) {
            assert_eq!(filter, before, "a refused chunk changes nothing");
        }
    }
    Some(filter)
}

/// The filter saved and loaded, and dumped and loaded chunk by chunk, is the filter.
pub fn check_round_trips<T: Stored>(filter: &T) {
    let mut saved = MemoryRdb::new();
    filter.save(&mut saved);
    let reloaded = T::load(&mut saved, T::encoding_version()).expect("own value");
    assert_eq!(&reloaded, filter);
    let mut copy = T::from_header(&filter.encode_header()).expect("own header");
    for (iter, bytes) in filter.dump() {
        assert!(copy.load_chunk(iter, &bytes), "own chunk");
    }
    assert_eq!(&copy, filter);
}
