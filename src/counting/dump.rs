//! BF.SCANDUMP / BF.LOADCHUNK of a counting filter. The header (iterator 0's chunk) is our
//! own: a magic, a version and the counter width, then RedisBloom's chain header with each
//! link's byte count being its counter array's:
//!
//! ```text
//! magic "bloomrsC" | version u32 = 1 | counter bits u32 = 4 | adds held u64
//! | chain header (RedisBloom's)
//! ```
//!
//! The data chunks address the links' counter arrays exactly as a plain chain's chunks address
//! its bit arrays. Read as RedisBloom's first header field (the item count), the magic would
//! be above 7·10^18 items, more than any filter holds, so the headers are told apart by it.

use super::{Counter4, CountingFilter};
use crate::bloom::{Cells, Chain, HeaderError, Link};

/// The first eight bytes of every counting header.
pub const MAGIC: &[u8; 8] = b"bloomrsC";
const HEADER_VERSION: u32 = 1;
const PREFIX: usize = 24;

impl CountingFilter {
    /// The header SCANDUMP returns at iterator 0.
    pub fn encode_header(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&HEADER_VERSION.to_le_bytes());
        out.extend_from_slice(&(Counter4::WIDTH as u32).to_le_bytes());
        out.extend_from_slice(&self.items.to_le_bytes());
        out.extend_from_slice(&self.chain.encode_header());
        out
    }

    /// An empty filter (all counters zero) shaped as a LOADCHUNK header describes.
    pub fn from_header(header: &[u8], max_bytes: u64) -> Result<Self, HeaderError> {
        let (prefix, chain_header) = header
            .split_first_chunk::<PREFIX>()
            .ok_or(HeaderError::BadData)?;
        let (magic, rest) = prefix.split_at(MAGIC.len());
        let field = |at: usize| {
            rest.get(at..at + 4)
                .and_then(|b| b.try_into().ok())
                .map(u32::from_le_bytes)
        };
        let expected = (Some(HEADER_VERSION), Some(Counter4::WIDTH as u32));
        if magic != MAGIC || (field(0), field(4)) != expected {
            return Err(HeaderError::BadData);
        }
        let mut items = [0u8; 8];
        items.copy_from_slice(rest.get(8..16).ok_or(HeaderError::BadData)?);
        let chain = Chain::<Link<Counter4>>::decode_header(chain_header, max_bytes)?;
        Self::from_checked(chain, u64::from_le_bytes(items)).map_err(|_| HeaderError::BadData)
    }
}
