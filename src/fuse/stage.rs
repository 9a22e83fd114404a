//! A frozen table on its way to replicas and the AOF in steps: the freeze's effects.
//!
//! The primary builds the table off the main thread, then propagates it in steps of at most
//! [`STEP_BYTES`], one per event-loop turn, so neither it nor a replica copies more than one
//! step in a turn: `STAGE` (the frozen value's header: an empty stage of that shape on the
//! builder), `CHUNK`s (the table's bytes in order), then `COMMIT` (the header again: the
//! builder becomes the frozen value). Until `COMMIT` the key is the builder, answering reads.
//!
//! The stage is part of the builder's value while the freeze propagates, on the primary (the
//! whole table, with how much of it was propagated) and wherever the effects arrive (the
//! table as far as it came): RDB, DUMP and AOF rewrite carry the stage's header and the bytes
//! propagated so far (`codec`), so a snapshot taken mid-way holds exactly what the stream
//! after it completes, and a replica that resynced or restarted mid-way (or an AOF rewritten
//! mid-way, then replayed) still gets the table in steps. COPY and SCANDUMP see the builder
//! alone. Any write to the builder drops its stage. A `COMMIT` that finds no whole stage (an
//! AOF written before stages were stored) builds the same table from the builder's hashes
//! (construction is deterministic) and checks it against the header.

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
    /// Bytes of the table propagated (on the primary) or received (elsewhere), from its
    /// start: what a snapshot of the stage holds.
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

    /// The step of at most `max` bytes of a frozen value's table that starts at byte `from`,
    /// or None past the end (or for a builder).
    pub fn step_at(&self, from: u64, max: u64) -> Option<Step<'_>> {
        let State::Frozen(frozen) = &self.state else {
            return None;
        };
        let bytes = table_bytes(&frozen.table);
        let start = usize::try_from(from).ok()?;
        let rest = bytes.get(start..).filter(|rest| !rest.is_empty())?;
        let len = rest.len().min(usize::try_from(max).ok()?.max(1));
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

    /// On the primary: the frozen value a freeze built, as this builder's stage with nothing
    /// propagated yet. Its header (for `STAGE`).
    pub fn stage_frozen(&mut self, frozen: Frozen) -> Vec<u8> {
        let value = self.frozen_value(frozen);
        let header = value.encode_header();
        self.stage = Some(Box::new(Stage { value, filled: 0 }));
        header
    }

    /// On the primary: the next step of at most `max` bytes of the stage's table, counted as
    /// propagated; None once it is all propagated (or without a stage).
    pub fn next_step(&mut self, max: u64) -> Option<Step<'_>> {
        let Stage { value, filled } = self.stage.as_deref_mut()?;
        let step = value.step_at(*filled, max)?;
        *filled = step.next;
        Some(step)
    }

    /// The stage's header and the bytes of its table propagated so far: what RDB, DUMP, the
    /// AOF rewrite and the digest hold of it.
    pub fn staged(&self) -> Option<(Vec<u8>, &[u8])> {
        let stage = self.stage.as_deref()?;
        let State::Frozen(frozen) = &stage.value.state else {
            return None;
        };
        let filled = usize::try_from(stage.filled).ok()?;
        let bytes = table_bytes(&frozen.table).get(..filled)?;
        Some((stage.value.encode_header(), bytes))
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
    /// when the stage is whole and is that value (checked against this builder when it was
    /// staged), else one built here from the builder's hashes, which must come out as the
    /// header says. Hands back the builder's hashes (to be freed off the main thread).
    pub fn commit_stage(
        &mut self,
        header: &[u8],
        max_bytes: u64,
    ) -> Result<Arc<HashSet>, StageError> {
        let staged = self.stage.take().and_then(|stage| {
            let whole = stage.filled == stage.value.table_len();
            (whole && stage.value.encode_header() == header).then_some(stage.value)
        });
        let value = match staged {
            Some(value) => value,
            None => self.rebuilt(header, max_bytes)?,
        };
        if self.is_frozen() {
            return Err(StageError::NotBuilding);
        }
        match std::mem::replace(&mut self.state, value.state) {
            State::Building(set) => Ok(set),
            State::Frozen(_) => Err(StageError::NotBuilding),
        }
    }

    /// Whether `COMMIT` with this header would take the stage (rather than build the table).
    pub fn stage_is_whole(&self, header: &[u8]) -> bool {
        self.stage.as_deref().is_some_and(|stage| {
            stage.filled == stage.value.table_len() && stage.value.encode_header() == header
        })
    }

    /// The frozen value a header describes, built from this builder's hashes on the calling
    /// thread (seconds at 100M items): only for a `COMMIT` without its stage.
    fn rebuilt(&self, header: &[u8], max_bytes: u64) -> Result<StaticFilter, StageError> {
        let expected = self.frozen_for(header, max_bytes)?;
        let job = self.freeze_job().ok_or(StageError::BadData)?;
        let built = self.frozen_value(job.run().map_err(|_| StageError::BadData)?);
        if built.encode_header() != expected.encode_header() {
            return Err(StageError::BadData);
        }
        Ok(built)
    }

    /// Bytes of a frozen value's table without its padding (0 for a builder).
    fn table_len(&self) -> u64 {
        match &self.state {
            State::Frozen(frozen) => table_bytes(&frozen.table).len() as u64,
            State::Building(_) => 0,
        }
    }

    /// How far the stage's table came (bytes propagated or received) and its length.
    pub fn stage_progress(&self) -> Option<(u64, u64)> {
        let stage = self.stage.as_deref()?;
        Some((stage.filled, stage.value.table_len()))
    }

    /// Bytes the stage holds (0 without one).
    pub fn stage_bytes(&self) -> u64 {
        self.stage
            .as_ref()
            .map_or(0, |stage| stage.value.reported_bytes())
    }
}
