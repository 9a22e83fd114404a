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
    /// the builder it started from takes the result as its stage, propagated in steps, then
    /// commits it. A replica's copy of the builder gets the freeze's effects (`STAGE`, the
    /// `CHUNK`s, `COMMIT`) and must hold the same value: by variant, one that follows from the
    /// start, one that resyncs after the first step (it loads the primary's snapshot, stage
    /// and all, through RDB), and one that missed the `STAGE` (an AOF written before stages
    /// were saved: `COMMIT` builds the table).
    fn advance(&mut self, now_ms: u64) {
        if now_ms < self.freeze_at {
            return;
        }
        let Some(job) = self.filter.freeze_job() else {
            return;
        };
        let Ok(frozen) = job.run() else {
            return;
        };
        let way = (self.freeze_at / 8) % 3;
        let mut replica = self.filter.clone();
        let header = self.filter.stage_frozen(frozen);
        if way != 2 {
            assert_eq!(replica.begin_stage(&header, u64::MAX), Ok(()));
        }
        let mut steps = 0;
        while let Some(step) = self.filter.next_step(MODEL_STEP_BYTES) {
            let (iter, bytes) = (step.iter, step.bytes.to_vec());
            assert_eq!(replica.stage_chunk(iter, &bytes), Ok(way != 2));
            steps += 1;
            if way == 1 && steps == 1 {
                replica = crate::model::rdb_round_trip(&self.filter, u64::MAX)
                    .expect("a builder mid-freeze reloads");
                assert_eq!(replica.staged(), self.filter.staged());
            }
        }
        assert!(self.filter.stage_is_whole(&header));
        assert!(self.filter.commit_stage(&header, u64::MAX).is_ok());
        assert!(replica.commit_stage(&header, u64::MAX).is_ok());
        assert!(job.is_last(), "the builder's hashes go with the job");
        assert_eq!(
            replica, self.filter,
            "the freeze's effects give the primary's value"
        );
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

/// Table bytes per step in the model: small, so most tables take several.
const MODEL_STEP_BYTES: u64 = 256;
