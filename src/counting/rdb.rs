//! The `bloomrsCT` RDB value: the counter width and the number of adds held, then the chain in
//! `MBbloom--`'s field order (its newest encoding), read back through the chain's own loader
//! and checks.

use super::{Counter4, CountingFilter};
use crate::bloom::{self, Cells, Chain, Link};
use crate::rdb::{LoadError, RdbRead, RdbWrite};

pub const ENCODING_VERSION: i32 = 1;

impl CountingFilter {
    pub fn save(&self, w: &mut impl RdbWrite) {
        w.write_unsigned(Counter4::WIDTH);
        w.write_unsigned(self.items);
        self.chain.save(w);
    }

    pub fn load(r: &mut impl RdbRead, encver: i32, max_bytes: u64) -> Result<Self, LoadError> {
        if encver != ENCODING_VERSION {
            return Err(LoadError::UnknownVersion(encver));
        }
        if r.read_unsigned()? != Counter4::WIDTH {
            return Err(LoadError::Invalid("counter width"));
        }
        let items = r.read_unsigned()?;
        let chain = Chain::<Link<Counter4>>::read(r, bloom::ENCODING_VERSION, max_bytes)?;
        Self::from_checked(chain, items).map_err(LoadError::Invalid)
    }
}
