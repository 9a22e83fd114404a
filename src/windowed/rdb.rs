//! The RDB value of a window: its parameters and clock, the secret of a keyed kind, then
//! each held generation's slot followed by the generation in its own kind's RDB form (a
//! `bloomrsWN` generation in the `MBbloom--` field order, a `bloomrsWC` one as a compact
//! filter's).

use super::{Generation, Held, Window, WindowParams};
use crate::rdb::{LoadError, RdbRead, RdbWrite};

/// The `flags` bit of a filter that does not scale inside a generation.
pub(super) const FLAG_NONSCALING: u64 = 1;
/// The `flags` bit of a filter whose generations probe by spread hashing.
pub(super) const FLAG_SPREAD: u64 = 2;

impl<G: Generation> Window<G> {
    pub fn save(&self, w: &mut impl RdbWrite) {
        let p = &self.params;
        w.write_unsigned(p.window_ms);
        w.write_unsigned(u64::from(p.generations));
        w.write_unsigned(p.capacity);
        w.write_double(p.error);
        w.write_unsigned(u64::from(p.growth));
        w.write_unsigned(flags(p));
        if G::KEYED {
            w.write_unsigned(self.secret);
        }
        w.write_unsigned(self.slot);
        w.write_unsigned(self.ring.len() as u64);
        for generation in &self.ring {
            w.write_unsigned(generation.slot);
            generation.filter.save(p, w);
        }
    }

    pub fn load(r: &mut impl RdbRead, encver: i32, max_bytes: u64) -> Result<Self, LoadError> {
        if encver != G::ENCODING_VERSION {
            return Err(LoadError::UnknownVersion(encver));
        }
        let window_ms = r.read_unsigned()?;
        let generations =
            u16::try_from(r.read_unsigned()?).map_err(|_| LoadError::Invalid("generations"))?;
        let capacity = r.read_unsigned()?;
        let error = r.read_double()?;
        let growth = narrow(r.read_unsigned()?, "growth")?;
        let (scaling, spread) =
            parse_flags(r.read_unsigned()?).ok_or(LoadError::Invalid("flags"))?;
        let params = WindowParams {
            window_ms,
            generations,
            capacity,
            error,
            growth,
            scaling,
            spread,
        };
        params.check().map_err(LoadError::Invalid)?;
        let secret = if G::KEYED { r.read_unsigned()? } else { 0 };
        let slot = r.read_unsigned()?;
        let held = r.read_unsigned()?;
        if held > u64::from(params.generations) {
            return Err(LoadError::Invalid("more generations than the window holds"));
        }
        let mut ring = Vec::with_capacity(held as usize);
        let mut used = G::window_overhead();
        for _ in 0..held {
            let generation_slot = r.read_unsigned()?;
            used = used.saturating_add(G::GENERATION_OVERHEAD);
            let budget = max_bytes.checked_sub(used).ok_or(LoadError::TooLarge)?;
            let filter = G::load(r, &params, budget)?;
            used = used.saturating_add(filter.bytes());
            ring.push(Held {
                slot: generation_slot,
                filter,
            });
        }
        let filter = Window {
            params,
            slot,
            secret,
            ring: ring.into(),
        };
        filter.validate(max_bytes)?;
        Ok(filter)
    }
}

/// The `flags` field of these parameters.
pub(super) fn flags(params: &WindowParams) -> u64 {
    let nonscaling = if params.scaling { 0 } else { FLAG_NONSCALING };
    let spread = if params.spread { FLAG_SPREAD } else { 0 };
    nonscaling | spread
}

/// Whether a `flags` field says scaling, and spread probes; None for unknown bits.
pub(super) fn parse_flags(flags: u64) -> Option<(bool, bool)> {
    if flags & !(FLAG_NONSCALING | FLAG_SPREAD) != 0 {
        return None;
    }
    Some((flags & FLAG_NONSCALING == 0, flags & FLAG_SPREAD != 0))
}

fn narrow(value: u64, field: &'static str) -> Result<u32, LoadError> {
    u32::try_from(value).map_err(|_| LoadError::Invalid(field))
}
