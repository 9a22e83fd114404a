//! The `bloomrsBK` RDB value (also what DUMP/RESTORE carries): the filter's fields and every
//! link's record first, then the links' blocks as buffers of at most 16 MiB each (so loading
//! never holds a second copy of a large link), read back through the one constructor of
//! stored filters.

use super::dump::{flags, Refused};
use super::{BlockShape, Blocked};
use crate::bloom::MAX_CHUNK;
use crate::rdb::{LoadError, RdbRead, RdbWrite};

pub const ENCODING_VERSION: i32 = 1;

impl Blocked {
    pub fn save(&self, w: &mut impl RdbWrite) {
        w.write_unsigned(self.size);
        w.write_unsigned(u64::from(flags(self.is_scaling())));
        w.write_unsigned(u64::from(self.growth));
        w.write_unsigned(self.links.len() as u64);
        for link in &self.links {
            w.write_unsigned(link.shape.capacity);
            w.write_double(link.shape.error);
            w.write_unsigned(u64::from(link.shape.hashes));
            w.write_unsigned(link.shape.blocks);
            w.write_unsigned(link.size);
        }
        for link in &self.links {
            for piece in link.blocks.bytes().chunks(MAX_CHUNK as usize) {
                w.write_buffer(piece);
            }
        }
    }

    pub fn load(r: &mut impl RdbRead, encver: i32, max_bytes: u64) -> Result<Self, LoadError> {
        if encver != ENCODING_VERSION {
            return Err(LoadError::UnknownVersion(encver));
        }
        let size = r.read_unsigned()?;
        let narrow = |v: u64, what| u32::try_from(v).map_err(|_| LoadError::Invalid(what));
        let flags = narrow(r.read_unsigned()?, "flags")?;
        let growth = narrow(r.read_unsigned()?, "growth")?;
        let links = r.read_unsigned()?;
        if links == 0 || links > super::MAX_LINKS {
            return Err(LoadError::Invalid("link count out of range"));
        }
        let mut shapes = Vec::new();
        for _ in 0..links {
            let capacity = r.read_unsigned()?;
            let error = r.read_double()?;
            let hashes = narrow(r.read_unsigned()?, "bits per item")?;
            let blocks = r.read_unsigned()?;
            let shape = BlockShape {
                capacity,
                error,
                hashes,
                blocks,
            };
            shapes.push((shape, r.read_unsigned()?));
        }
        let mut filter =
            Self::from_shapes(size, growth, flags, &shapes, max_bytes).map_err(|e| match e {
                Refused::Invalid(why) => LoadError::Invalid(why),
                Refused::TooLarge => LoadError::TooLarge,
            })?;
        for link in &mut filter.links {
            for piece in link.blocks.bytes_mut().chunks_mut(MAX_CHUNK as usize) {
                let buffer = r.read_buffer()?;
                if buffer.len() != piece.len() {
                    return Err(LoadError::Invalid("block buffer of the wrong length"));
                }
                piece.copy_from_slice(&buffer);
            }
        }
        Ok(filter)
    }
}
