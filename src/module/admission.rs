//! Memory admission (deviation D13): the one place that decides how large a filter may become
//! in the current command or callback. Two limits apply:
//!
//! - `bf.max-filter-bytes`, the absolute cap on one filter's reported size;
//! - under `maxmemory`, what is left of it: a client command (or RESTORE, or COPY) may not
//!   allocate more than `maxmemory` minus the memory in use, as Redis counts it for eviction.
//!   Redis checks `deny-oom` before a command runs, while memory may still be low; this check
//!   runs just before the allocation, with the size known.
//!
//! Both bind clients only. Never limited by either, so nothing is lost and replicas stay
//! identical: loading an RDB or AOF (start-up, DEBUG RELOAD, a replica's full sync; the
//! server's LOADING flag), commands from the primary (REPLICATED), and anything on a replica;
//! only structural validation applies there. Redis 7.0.15 and Valkey 8 already
//! leave the MAXMEMORY flag off on a replica under the default `replica-ignore-maxmemory yes`;
//! the replica checks keep that true where a server reports it anyway, and cover RESTORE and
//! COPY, whose callbacks cannot tell the primary from a client. (With
//! `replica-ignore-maxmemory no` the server itself refuses the primary's commands with OOM
//! before they reach the module.)
//!
//! How a path uses it, whatever the kind of filter: pass an [`Admission`] wherever the core
//! takes a [`Budget`] (adds that may scale out), and create or load with
//! `admission.limit(0)` as the core's `max_bytes`. The core asks only when it is about to
//! allocate, so an add that finds room costs nothing here; a refusal is the core's "too
//! large", which the command already turns into D1's error (or the add's own error text):
//!
//! ```ignore
//! let admission = Admission::command(ctx);
//! let filter = NewKind::new(options, admission.limit(0)).map_err(create_error)?;
//! filter.add(item, &admission)?;
//! ```
//!
//! A Bloom kind's commands get one ready in their `kinds::Write` (`write.admission`); the
//! shared type callbacks (RDB load, so RESTORE; COPY) already use [`Admission::callback`] for
//! every type registered through `types::callbacks`.

use super::config;
use super::ffi::Ctx;
use super::ffi_server::{self, Caller};
use crate::budget::Budget;

/// The memory budget of one command or callback.
#[derive(Clone, Copy)]
pub struct Admission {
    caller: Option<Ctx>,
}

impl Admission {
    /// For a command handler.
    pub fn command(ctx: Ctx) -> Admission {
        Admission { caller: Some(ctx) }
    }

    /// For a type callback (RESTORE's load, COPY), which has no client.
    pub fn callback() -> Admission {
        Admission { caller: None }
    }

    fn caller(&self) -> Caller {
        match self.caller {
            Some(ctx) => ctx.caller(),
            None => ffi_server::server_caller(),
        }
    }

    /// Bytes `maxmemory` still allows this caller to allocate, or None without a limit.
    fn headroom(caller: Caller) -> Option<u64> {
        if !caller.maxmemory {
            return None;
        }
        let maxmemory = ffi_server::maxmemory();
        if maxmemory == 0 {
            return None;
        }
        Some(headroom(maxmemory, ffi_server::used_memory_ratio()))
    }
}

impl Budget for Admission {
    fn limit(&self, current: u64) -> u64 {
        let caller = self.caller();
        if caller.loading || caller.replicated || caller.replica {
            return STRUCTURAL_MAX_BYTES;
        }
        limit(config::max_filter_bytes(), current, Self::headroom(caller))
    }
}

/// What binds a write that follows the primary (its commands, loading, a replica): no
/// configured limit, only what any setting of `bf.max-filter-bytes` could allow, so a replica
/// or a reload never refuses what the primary applied.
pub const STRUCTURAL_MAX_BYTES: u64 = i64::MAX as u64;

/// What is left under `maxmemory` when `ratio` of it is in use.
fn headroom(maxmemory: u64, ratio: f64) -> u64 {
    let used = (ratio.max(0.0) * maxmemory as f64) as u64;
    maxmemory.saturating_sub(used)
}

/// The most bytes a filter of `current` bytes may reach: the cap, and under `maxmemory` no
/// more than the headroom on top of what it has (as the allocator will count it).
fn limit(cap: u64, current: u64, headroom: Option<u64>) -> u64 {
    match headroom {
        Some(room) => cap.min(current.saturating_add(allocator_floor(room))),
        None => cap,
    }
}

/// The largest allocation size class of jemalloc (Redis's allocator) at most `bytes`: sizes
/// between two powers of two come in four classes, so a request is rounded up by up to a
/// quarter, and an allocation of at most this many bytes takes at most `bytes`.
fn allocator_floor(bytes: u64) -> u64 {
    if bytes < 64 {
        return bytes;
    }
    let step = 1u64 << (63 - bytes.leading_zeros() - 2);
    bytes & !(step - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// jemalloc's size class for a request above 64 bytes: between two powers of two, four
    /// classes a quarter of the lower power apart.
    fn size_class(request: u64) -> u64 {
        let power = 1u64 << (63 - (request - 1).leading_zeros());
        let step = power / 4;
        request.div_ceil(step) * step
    }

    #[test]
    fn allocator_floor_is_a_size_class_that_fits() {
        for bytes in (64..20_000).chain([1 << 20, (1 << 20) + 1, 5 << 20, (5 << 20) - 1]) {
            let floor = allocator_floor(bytes);
            assert!(floor <= bytes, "{bytes}");
            assert_eq!(size_class(floor), floor, "{bytes} -> {floor}");
            assert!(
                size_class(floor + 1) > bytes,
                "{bytes}: a larger request would fit"
            );
        }
    }

    #[test]
    fn the_cap_applies_without_maxmemory() {
        assert_eq!(limit(4096, 0, None), 4096);
        assert_eq!(limit(4096, 1_000_000, None), 4096);
    }

    #[test]
    fn maxmemory_leaves_the_headroom_on_top_of_the_current_size() {
        assert_eq!(limit(u64::MAX, 0, Some(1 << 20)), 1 << 20);
        assert_eq!(limit(u64::MAX, 1000, Some(1 << 20)), 1000 + (1 << 20));
        assert_eq!(limit(1 << 10, 1000, Some(1 << 20)), 1 << 10);
        // 5 MiB + 1 rounds up to the 6 MiB class: only 5 MiB fits in that room.
        assert_eq!(limit(u64::MAX, 0, Some((6 << 20) - 1)), 5 << 20);
        assert_eq!(limit(u64::MAX, u64::MAX - 1, Some(1 << 20)), u64::MAX);
    }

    #[test]
    fn headroom_is_what_the_ratio_leaves() {
        assert_eq!(headroom(1000, 0.25), 750);
        assert_eq!(headroom(1000, 1.5), 0);
        assert_eq!(headroom(1000, 0.0), 1000);
    }
}
