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
//! let admission = ctx.admission();
//! let filter = NewKind::new(options, admission.limit(0)).map_err(create_error)?;
//! filter.add(item, &admission)?;
//! ```
//!
//! A Bloom kind's commands get one ready in their `kinds::Write` (`write.admission`); the
//! shared type callbacks (RDB load, so RESTORE; COPY) already use
//! `ffi::server::callback_admission()` for every type registered through `types::callbacks`.
//!
//! The policy is plain Rust: it asks a [`Server`] who is calling and how full memory is, and
//! the FFI room answers from the live server, so nothing here calls the module API.

use super::settings;
use crate::budget::Budget;

/// What the context flags say about a caller, as far as memory admission cares.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Caller {
    /// `maxmemory` is set.
    pub maxmemory: bool,
    /// The server is loading an RDB or AOF (start-up, DEBUG RELOAD, a replica's full sync).
    pub loading: bool,
    /// The command came from the primary over the replication link.
    pub replicated: bool,
    /// The server is a replica.
    pub replica: bool,
}

/// What admission asks the server, only when the core is about to allocate. The FFI room
/// implements it on the live server (`ffi::server::Live`); this file never calls the server.
pub trait Server: Copy {
    /// Who is calling.
    fn caller(&self) -> Caller;
    /// `maxmemory` in bytes, 0 when not set.
    fn maxmemory(&self) -> u64;
    /// Used memory as a fraction of `maxmemory`, as Redis counts it for eviction.
    fn used_memory_ratio(&self) -> f64;
}

/// The memory budget of one command or callback.
#[derive(Clone, Copy)]
pub struct Admission<S> {
    server: S,
}

impl<S: Server> Admission<S> {
    pub fn new(server: S) -> Self {
        Admission { server }
    }

    /// Bytes `maxmemory` still allows this caller to allocate, or None without a limit.
    fn headroom(&self, caller: Caller) -> Option<u64> {
        if !caller.maxmemory {
            return None;
        }
        let maxmemory = self.server.maxmemory();
        if maxmemory == 0 {
            return None;
        }
        Some(headroom(maxmemory, self.server.used_memory_ratio()))
    }
}

impl<S: Server> Admission<S> {
    /// Whether the caller is a client, whom the configured limits bind (not a load, the
    /// primary's commands or a replica, which follow what the primary applied).
    pub fn binds(&self) -> bool {
        let caller = self.server.caller();
        !(caller.loading || caller.replicated || caller.replica)
    }
}

/// The limit a refused allocation met, as a refusal names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// `bf.max-filter-bytes`, in bytes.
    Setting(u64),
    /// `maxmemory`, in bytes: what it leaves free was below the setting.
    Maxmemory(u64),
}

impl<S: Server> Admission<S> {
    /// Which limit binds this caller now: `maxmemory` when what it leaves free is below
    /// `bf.max-filter-bytes`, else the setting.
    pub fn bound(&self) -> Bound {
        let cap = settings::max_filter_bytes();
        match self.headroom(self.server.caller()) {
            Some(room) if self.binds() && room < cap => Bound::Maxmemory(self.server.maxmemory()),
            _ => Bound::Setting(cap),
        }
    }
}

impl<S: Server> Budget for Admission<S> {
    fn limit(&self, current: u64) -> u64 {
        let caller = self.server.caller();
        if !self.binds() {
            return STRUCTURAL_MAX_BYTES;
        }
        limit(settings::max_filter_bytes(), current, self.headroom(caller))
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

    /// A server as admission sees it, without one.
    #[derive(Clone, Copy)]
    struct Fixed {
        caller: Caller,
        maxmemory: u64,
        ratio: f64,
    }

    impl Server for Fixed {
        fn caller(&self) -> Caller {
            self.caller
        }
        fn maxmemory(&self) -> u64 {
            self.maxmemory
        }
        fn used_memory_ratio(&self) -> f64 {
            self.ratio
        }
    }

    #[test]
    fn only_a_client_is_limited() {
        let client = Caller {
            maxmemory: true,
            ..Caller::default()
        };
        let server = |caller| Fixed {
            caller,
            maxmemory: 1 << 20,
            ratio: 0.5,
        };
        let cap = settings::max_filter_bytes();
        assert_eq!(Admission::new(server(client)).limit(0), cap.min(1 << 19));
        let followers = [
            Caller {
                loading: true,
                ..client
            },
            Caller {
                replicated: true,
                ..client
            },
            Caller {
                replica: true,
                ..client
            },
        ];
        for caller in followers {
            let admission = Admission::new(server(caller));
            assert_eq!(admission.limit(0), STRUCTURAL_MAX_BYTES, "{caller:?}");
        }
        let unlimited = Admission::new(server(Caller::default()));
        assert_eq!(unlimited.limit(0), cap);
    }

    #[test]
    fn headroom_is_what_the_ratio_leaves() {
        assert_eq!(headroom(1000, 0.25), 750);
        assert_eq!(headroom(1000, 1.5), 0);
        assert_eq!(headroom(1000, 0.0), 1000);
    }
}
