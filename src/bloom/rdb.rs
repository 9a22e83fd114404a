//! The `MBbloom--` RDB value, in RedisBloom's field order. Encoding version 4 is written;
//! versions 0 to 4 are read.

use super::cells::Cells;
use super::link::{validate_shape, Link, LinkShape};
use super::Chain;
use crate::rdb::{LoadError, RdbRead, RdbWrite};

pub const ENCODING_VERSION: i32 = 4;
/// First encoding with `bits` and `n2` per link.
const MIN_BITS_ENC: i32 = 1;
/// First encoding with the chain's options.
const MIN_OPTIONS_ENC: i32 = 2;
/// First encoding with the chain's growth.
const MIN_GROWTH_ENC: i32 = 4;

impl Chain {
    pub fn load(r: &mut impl RdbRead, encver: i32, max_bytes: u64) -> Result<Chain, LoadError> {
        Self::read(r, encver, max_bytes)
    }
}

/// The field order serves every kind of cell: a link's array is a buffer either way.
impl<C: Cells> Chain<Link<C>> {
    pub fn save(&self, w: &mut impl RdbWrite) {
        w.write_unsigned(self.size);
        w.write_unsigned(self.links.len() as u64);
        w.write_unsigned(u64::from(self.options));
        w.write_unsigned(u64::from(self.growth));
        for link in &self.links {
            w.write_unsigned(link.entries);
            w.write_double(link.error);
            w.write_unsigned(u64::from(link.hashes));
            w.write_double(link.bpe);
            w.write_unsigned(link.bits);
            w.write_unsigned(u64::from(link.n2));
            w.write_buffer(&link.array);
            w.write_unsigned(link.size);
        }
    }

    /// Reads a chain of `C` cells in `MBbloom--`'s encoding `encver`, through its checks.
    pub fn read(r: &mut impl RdbRead, encver: i32, max_bytes: u64) -> Result<Self, LoadError> {
        Self::read_with(r, encver, max_bytes, super::OPT_ALL)
    }

    /// `read` for a kind whose chains may carry these option bits.
    pub fn read_with(
        r: &mut impl RdbRead,
        encver: i32,
        max_bytes: u64,
        known_options: u32,
    ) -> Result<Self, LoadError> {
        if !(0..=ENCODING_VERSION).contains(&encver) {
            return Err(LoadError::UnknownVersion(encver));
        }
        let size = r.read_unsigned()?;
        let nlinks = r.read_unsigned()?;
        let options = if encver >= MIN_OPTIONS_ENC {
            u32::try_from(r.read_unsigned()?).map_err(|_| LoadError::Invalid("options"))?
        } else {
            0
        };
        let growth = if encver >= MIN_GROWTH_ENC {
            u32::try_from(r.read_unsigned()?).map_err(|_| LoadError::Invalid("growth"))?
        } else {
            2
        };
        if nlinks == 0 {
            return Err(LoadError::Invalid("no links"));
        }
        if nlinks > super::MAX_LINKS {
            return Err(LoadError::Invalid("too many links"));
        }
        let mut links = Vec::new();
        let mut total_bytes = 0u64;
        for _ in 0..nlinks {
            let link = load_link(r, encver, options)?;
            total_bytes = total_bytes.saturating_add(link.bytes());
            if super::reported_size::<Link<C>>(links.len() as u64 + 1, total_bytes)
                .is_none_or(|s| s > max_bytes)
            {
                return Err(LoadError::TooLarge);
            }
            links.push(link);
        }
        let chain = Chain::from_links(size, options, growth, links);
        chain
            .validate_with(max_bytes, known_options)
            .map_err(LoadError::Invalid)?;
        Ok(chain)
    }
}

fn load_link<C: Cells>(
    r: &mut impl RdbRead,
    encver: i32,
    options: u32,
) -> Result<Link<C>, LoadError> {
    let entries = r.read_unsigned()?;
    let error = r.read_double()?;
    let hashes = u32::try_from(r.read_unsigned()?).map_err(|_| LoadError::Invalid("hashes"))?;
    let bpe = r.read_double()?;
    let (bits, n2) = if encver >= MIN_BITS_ENC {
        let bits = r.read_unsigned()?;
        let n2 = u8::try_from(r.read_unsigned()?).map_err(|_| LoadError::Invalid("n2"))?;
        (bits, n2)
    } else {
        // The oldest encoding kept no bit count; RedisBloom derived it like this.
        ((entries as f64 * bpe) as u64, 0)
    };
    let array = r.read_buffer()?.into_boxed_slice();
    let size = r.read_unsigned()?;
    let shape = LinkShape {
        entries,
        error,
        bpe,
        hashes,
        bits,
        bytes: array.len() as u64,
        n2,
    };
    validate_shape::<C>(&shape).map_err(LoadError::Invalid)?;
    Ok(Link::from_parts(&shape, options, size, array))
}
