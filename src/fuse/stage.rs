//! A frozen table on its way to replicas and the AOF in steps: the freeze's effects.
//!
//! The primary builds the table off the main thread, then propagates it in steps of at most
//! [`STEP_BYTES`], one per event-loop turn, so neither it nor a replica copies more than one
//! step in a turn: `STAGE` (the frozen value's header: an empty stage of that shape on the
//! builder), `CHUNK`s (the table's bytes in order), then `COMMIT` (the header again: the
//! builder becomes the frozen value). Until `COMMIT` the key is the builder, answering reads.
//!
//! The stage lives only in memory, beside the builder: RDB, DUMP, AOF rewrite, COPY and
//! SCANDUMP see the builder alone. So a replica that resynced (or restarted, or an AOF
//! rewritten) mid-way holds the builder without a stage: later `CHUNK`s are ignored and
//! `COMMIT` builds the same table from the builder's hashes (construction is deterministic)
//! and checks it against the header. Any write to the builder drops its stage.

use std::sync::Arc;

use super::codec::table_bytes;
use super::{Frozen, HashSet, State, StaticFilter};
use crate::bloom::{load_chunk_in, HeaderError};

/// Table bytes propagated per step (one event-loop turn on the primary and on a replica).
pub const STEP_BYTES: u64 = 4 << 20;

/// A frozen value arriving in steps, beside the builder it will replace.
#[derive(Debug, PartialEq)]
pub struct Stage {
    value: StaticFilter,
    /// Bytes of the table received, from its start.
    filled: u64,
}

/// Why a freeze effect does not apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StageError {
    /// A header or chunk that is malformed or does not describe this builder's freeze.
    BadData,
    /// A header over the memory limits.
    TooLarge,
    /// The key holds a frozen filter, not a builder.
    NotBuilding,
}

impl From<HeaderError> for StageError {
    fn from(e: HeaderError) -> Self {
        match e {
            HeaderError::BadData => StageError::BadData,
            HeaderError::TooLarge => StageError::TooLarge,
        }
    }
}

/// One step of a frozen table: where the next one starts, the LOADCHUNK iterator that
/// addresses it (one past its last byte, plus one), and its bytes.
pub struct Step<'a> {
    pub next: u64,
    pub iter: i64,
    pub bytes: &'a [u8],
}

impl StaticFilter {
    /// The frozen value a builder becomes with `frozen`: its header and steps are what the
    /// freeze propagates.
    pub fn frozen_value(&self, frozen: Frozen) -> StaticFilter {
        StaticFilter {
            error: self.error,
            capacity: self.capacity,
            state: State::Frozen(frozen),
            stage: None,
        }
    }

    /// The step of a frozen value's table that starts at byte `from`, or None past the end
    /// (or for a builder).
    pub fn step_at(&self, from: u64) -> Option<Step<'_>> {
        let State::Frozen(frozen) = &self.state else {
            return None;
        };
        let bytes = table_bytes(&frozen.table);
        let start = usize::try_from(from).ok()?;
        let rest = bytes.get(start..).filter(|rest| !rest.is_empty())?;
        let len = rest.len().min(STEP_BYTES as usize);
        let next = from.checked_add(len as u64)?;
        Some(Step {
            next,
            iter: i64::try_from(next.checked_add(1)?).ok()?,
            bytes: rest.get(..len)?,
        })
    }

    /// The frozen value a header describes, if it is this builder's: frozen, of the same
    /// rate and capacity, holding as many items. Sized against `max_bytes` before anything
    /// is allocated.
    fn frozen_for(&self, header: &[u8], max_bytes: u64) -> Result<StaticFilter, StageError> {
        let State::Building(set) = &self.state else {
            return Err(StageError::NotBuilding);
        };
        let value = StaticFilter::from_header(header, max_bytes)?;
        let same = value.error.to_bits() == self.error.to_bits()
            && value.capacity == self.capacity
            && value.card() == set.len();
        if !value.is_frozen() || !same {
            return Err(StageError::BadData);
        }
        Ok(value)
    }

    /// `STAGE`: an empty stage shaped as the header says (replacing any stage there was).
    pub fn begin_stage(&mut self, header: &[u8], max_bytes: u64) -> Result<(), StageError> {
        let value = self.frozen_for(header, max_bytes)?;
        self.stage = Some(Box::new(Stage { value, filled: 0 }));
        Ok(())
    }

    /// `CHUNK`: the next bytes of the stage's table, at LOADCHUNK iterator `iter`. Without a
    /// stage, or out of order, the chunk is ignored and any stage dropped (`COMMIT` then builds
    /// the table itself): false.
    pub fn stage_chunk(&mut self, iter: i64, data: &[u8]) -> Result<bool, StageError> {
        if self.is_frozen() {
            return Err(StageError::NotBuilding);
        }
        let len = data.len() as u64;
        let start = u64::try_from(iter)
            .ok()
            .and_then(|end| end.checked_sub(len)?.checked_sub(1));
        let Some(stage) = self.stage.as_mut() else {
            return Ok(false);
        };
        let State::Frozen(frozen) = &mut stage.value.state else {
            return Err(StageError::BadData);
        };
        if start != Some(stage.filled) {
            self.stage = None;
            return Ok(false);
        }
        let end = frozen
            .table
            .slots
            .len()
            .saturating_sub(super::table::PADDING);
        let bytes = frozen.table.slots.get_mut(..end).unwrap_or_default();
        if load_chunk_in(std::iter::once(bytes), iter, data).is_err() {
            self.stage = None;
            return Err(StageError::BadData);
        }
        stage.filled += len;
        Ok(true)
    }

    /// `COMMIT`: the builder becomes the frozen value the header describes: its stage's table
    /// when the stage is whole and is that value, else one built here from the builder's
    /// hashes, which must come out as the header says. Hands back the builder's hashes (to be
    /// freed off the main thread).
    pub fn commit_stage(
        &mut self,
        header: &[u8],
        max_bytes: u64,
    ) -> Result<Arc<HashSet>, StageError> {
        let expected = self.frozen_for(header, max_bytes)?;
        let staged = self.stage.take().and_then(|stage| {
            let whole = stage.filled == stage.value.table_len();
            (whole && stage.value.encode_header() == header).then_some(stage.value)
        });
        let value = match staged {
            Some(value) => value,
            None => {
                let job = self.freeze_job().ok_or(StageError::BadData)?;
                let built = self.frozen_value(job.run().map_err(|_| StageError::BadData)?);
                if built.encode_header() != expected.encode_header() {
                    return Err(StageError::BadData);
                }
                built
            }
        };
        match std::mem::replace(&mut self.state, value.state) {
            State::Building(set) => Ok(set),
            State::Frozen(_) => Err(StageError::NotBuilding),
        }
    }

    /// Bytes of a frozen value's table without its padding (0 for a builder).
    fn table_len(&self) -> u64 {
        match &self.state {
            State::Frozen(frozen) => table_bytes(&frozen.table).len() as u64,
            State::Building(_) => 0,
        }
    }

    /// Bytes the stage holds (0 without one).
    pub fn stage_bytes(&self) -> u64 {
        self.stage
            .as_ref()
            .map_or(0, |stage| stage.value.reported_bytes())
    }
}
