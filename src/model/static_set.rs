//! Static sets (`BF.RESERVE ... STATIC`, then `BF.FREEZE`): a builder that holds every item
//! exactly, frozen at a point of the sequence into a binary fuse filter that keeps every item
//! and refuses adds. The model's clock decides the point: the first write at or after
//! `variant * 8` ticks freezes the builder (variant 0: before any add).

use super::{Kind, Params};
use crate::fuse::StaticFilter;

#[derive(Debug, Clone, PartialEq)]
pub struct StaticKind {
    pub filter: StaticFilter,
    /// When the builder freezes (model clock, ms).
    pub freeze_at: u64,
}

impl StaticKind {
    fn with(&self, filter: StaticFilter) -> Self {
        StaticKind {
            filter,
            freeze_at: self.freeze_at,
        }
    }
}

impl Kind for StaticKind {
    const NAME: &'static str = "static";

    fn create(p: &Params, max_bytes: u64) -> Option<Self> {
        let filter = StaticFilter::new(p.capacity, p.error).ok()?;
        (filter.reported_bytes() <= max_bytes).then_some(StaticKind {
            filter,
            freeze_at: u64::from(p.variant) * 8,
        })
    }
    fn decode(data: &[u8], max_bytes: u64) -> Option<Self> {
        let filter = crate::model::codec::decode_value(data, max_bytes)?;
        Some(StaticKind {
            filter,
            freeze_at: 64,
        })
    }
    fn reload(&self, max_bytes: u64) -> Result<Self, String> {
        crate::model::rdb_round_trip(&self.filter, max_bytes).map(|f| self.with(f))
    }
    fn redump(&self, max_bytes: u64) -> Result<Self, String> {
        crate::model::codec::chunks_round_trip(&self.filter, max_bytes).map(|f| self.with(f))
    }
    /// The freeze: the job runs where the model is (the server runs it on a thread), and
    /// the builder it started from takes the result. A replica's copy of the builder gets the
    /// freeze's effects (`STAGE`, the `CHUNK`s, `COMMIT`; every other variant a replica that
    /// resynced mid-way, with no stage) and must hold the same value.
    fn advance(&mut self, now_ms: u64) {
        if now_ms < self.freeze_at {
            return;
        }
        if let Some(job) = self.filter.freeze_job() {
            if let Ok(frozen) = job.run() {
                let replica = self.filter.clone();
                let value = self.filter.frozen_value(frozen.clone());
                assert!(
                    self.filter.adopt(&job, frozen),
                    "the builder adopts its own freeze"
                );
                let resynced = self.freeze_at % 16 == 8;
                assert_eq!(
                    through_effects(replica, &value, resynced),
                    self.filter,
                    "the freeze's effects give the primary's value"
                );
            }
        }
    }
    fn add(&mut self, item: &[u8], _now_ms: u64, max_bytes: u64) -> bool {
        self.filter.add(item, &max_bytes).is_ok()
    }
    fn contains(&self, item: &[u8], _now_ms: u64) -> bool {
        self.filter.contains(item)
    }
    fn bytes(&self) -> u64 {
        self.filter.reported_bytes()
    }
    /// Whatever the operations did, the value's header still passes the checks of a stored
    /// one (a frozen table's shape, its width for the rate, its item count).
    fn check(&self, _max_bytes: u64) -> Result<(), String> {
        StaticFilter::from_header(&self.filter.encode_header(), u64::MAX)
            .map(|_| ())
            .map_err(|e| format!("its own header is refused: {e:?}"))
    }
}

/// A builder after a freeze's effects of `value`; `resynced`: without the `STAGE`.
fn through_effects(
    mut builder: StaticFilter,
    value: &StaticFilter,
    resynced: bool,
) -> StaticFilter {
    let header = value.encode_header();
    if !resynced {
        assert_eq!(builder.begin_stage(&header, u64::MAX), Ok(()));
    }
    let mut from = 0;
    while let Some(step) = value.step_at(from) {
        assert_eq!(builder.stage_chunk(step.iter, step.bytes), Ok(!resynced));
        from = step.next;
    }
    assert!(builder.commit_stage(&header, u64::MAX).is_ok());
    builder
}
