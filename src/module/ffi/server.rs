//! The module API about the server as a whole: which server it is ([`host`], read at load,
//! and the module options that follow from it); for memory admission, who is calling (a
//! client, the primary, a load), how full memory is, and `maxmemory` as configured; and the
//! [`Admission`] that `state::admission` decides with, reading them from the live server.

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use redis_module::raw;

use super::raw::{api, guard, log, RawCtx};
use crate::module::state::admission::{self, Caller, Server};
use crate::module::state::host::Host;

/// Valkey's `VALKEYMODULE_OPTIONS_HANDLE_ATOMIC_SLOT_MIGRATION` (`valkeymodule.h`, Valkey 9.0):
/// the module copes with keys of a slot being loaded on the target before the slot is its own
/// (and dropped again if the migration is cancelled). The Redis headers the bindings come from
/// do not have it.
const HANDLE_ATOMIC_SLOT_MIGRATION: c_int = 1 << 5;

/// Which server loaded the module, from `INFO server` and the module API's version.
pub fn host(ctx: RawCtx) -> Host {
    // SAFETY: takes no arguments; filled in since Redis 6.0.
    let api_version = unsafe { raw::RedisModule_GetServerVersion.map_or(0, |f| f()) };
    // SAFETY: `ctx` is the load context; the fields' text is copied before the info is freed,
    // and the names are NUL-terminated.
    let (name, valkey_version) = unsafe {
        let info = api!(RedisModule_GetServerInfo)(ctx, c"server".as_ptr());
        if info.is_null() {
            (None, None)
        } else {
            let field = |name: &std::ffi::CStr| {
                let text = api!(RedisModule_ServerInfoGetFieldC)(info, name.as_ptr());
                (!text.is_null()).then(|| std::ffi::CStr::from_ptr(text).to_bytes().to_vec())
            };
            let fields = (field(c"server_name"), field(c"valkey_version"));
            api!(RedisModule_FreeServerInfo)(ctx, info);
            fields
        }
    };
    Host::from_info(name.as_deref(), valkey_version.as_deref(), api_version)
}

/// Declares the module options: failed RDB reads are reported (`HANDLE_IO_ERRORS`), and, on
/// Valkey 9 and later, atomic slot migration is handled: a migration streams each key as the
/// commands its type's AOF-rewrite callback emits, which rebuild it byte for byte, and the
/// module keeps no state per key outside the keyspace that an imported or dropped key would
/// leave wrong.
pub fn declare_options(ctx: RawCtx, host: &Host) {
    let mut options = raw::REDISMODULE_OPTIONS_HANDLE_IO_ERRORS as c_int;
    if host.has_atomic_slot_migration() {
        options |= HANDLE_ATOMIC_SLOT_MIGRATION;
    }
    // SAFETY: called once during module load with the load context.
    unsafe { api!(RedisModule_SetModuleOptions)(ctx, options) };
}

/// What the context flags say about a caller, as far as memory admission cares.
pub fn caller_from_flags(flags: c_int) -> Caller {
    let has = |flag: u32| flags & flag as c_int != 0;
    Caller {
        maxmemory: has(raw::REDISMODULE_CTX_FLAGS_MAXMEMORY),
        loading: has(raw::REDISMODULE_CTX_FLAGS_LOADING),
        replicated: has(raw::REDISMODULE_CTX_FLAGS_REPLICATED),
        replica: has(raw::REDISMODULE_CTX_FLAGS_SLAVE),
    }
}

/// A context without a client, made at load, for the type callbacks (RESTORE, COPY) that get
/// none: its flags are the server's.
static SERVER_CTX: AtomicPtr<raw::RedisModuleCtx> = AtomicPtr::new(std::ptr::null_mut());

/// The server's flags, for a type callback (no client: never `replicated`).
pub fn server_caller() -> Caller {
    let ctx = SERVER_CTX.load(Ordering::Relaxed);
    if ctx.is_null() {
        return Caller::default();
    }
    // SAFETY: `ctx` is the detached context made in `init`, never freed while loaded.
    caller_from_flags(unsafe { api!(RedisModule_GetContextFlags)(ctx) })
}

/// Whether the server asks modules to hold back anything that would propagate: clients paused
/// for writes (`CLIENT PAUSE ... WRITE` or `ALL`), a `FAILOVER` in progress, a `SHUTDOWN`
/// waiting for its replicas. A write propagated then stops the server on its own assertion.
pub fn replica_traffic_paused() -> bool {
    // SAFETY: takes no arguments; callable from the main thread at any time (Redis 6.0+).
    unsafe { api!(RedisModule_AvoidReplicaTraffic)() != 0 }
}

/// Used memory as a fraction of `maxmemory`, counted as Redis counts it for eviction (without
/// replication and AOF buffers); 0 when `maxmemory` is not set.
pub fn used_memory_ratio() -> f64 {
    // SAFETY: takes no arguments; callable from the main thread at any time.
    f64::from(unsafe { api!(RedisModule_GetUsedMemoryRatio)() })
}

/// `maxmemory` from the server's INFO, or None if it cannot be read.
pub fn read_maxmemory(ctx: RawCtx) -> Option<u64> {
    // SAFETY: `ctx` is a live context; the info data is freed before returning, and the
    // field name is NUL-terminated.
    unsafe {
        let info = api!(RedisModule_GetServerInfo)(ctx, c"memory".as_ptr());
        if info.is_null() {
            return None;
        }
        let mut error: c_int = 0;
        let value =
            api!(RedisModule_ServerInfoGetFieldUnsigned)(info, c"maxmemory".as_ptr(), &mut error);
        api!(RedisModule_FreeServerInfo)(ctx, info);
        (error == 0).then_some(value)
    }
}

/// `maxmemory` as last read (0: not set).
static MAXMEMORY: AtomicU64 = AtomicU64::new(0);

/// `maxmemory` in bytes, 0 when not set. Read at load and after every configuration change,
/// so a command pays one atomic load.
pub fn maxmemory() -> u64 {
    MAXMEMORY.load(Ordering::Relaxed)
}

fn refresh_maxmemory(ctx: RawCtx) {
    if let Some(value) = read_maxmemory(ctx) {
        MAXMEMORY.store(value, Ordering::Relaxed);
    }
}

/// Makes the client-less context, reads `maxmemory`, and reads it again after every
/// configuration change (Redis 7.0's config event).
pub fn watch_memory(ctx: RawCtx) {
    // SAFETY: called once during module load with the load context.
    let detached = unsafe { api!(RedisModule_GetDetachedThreadSafeContext)(ctx) };
    SERVER_CTX.store(detached, Ordering::Relaxed);
    refresh_maxmemory(ctx);
    let event = raw::RedisModuleEvent {
        id: raw::REDISMODULE_EVENT_CONFIG,
        dataver: 1,
    };
    // SAFETY: a static callback for an event every supported server (Redis 7.0+, Valkey)
    // knows.
    let status =
        unsafe { api!(RedisModule_SubscribeToServerEvent)(ctx, event, Some(config_event)) };
    if status != raw::REDISMODULE_OK as c_int {
        log(
            c"warning",
            "bloomrs: cannot follow configuration changes; maxmemory is read at load only",
        );
    }
}

/// # Safety
/// Called by Redis with a live context after CONFIG SET changed settings.
unsafe extern "C" fn config_event(
    ctx: *mut raw::RedisModuleCtx,
    _eid: raw::RedisModuleEvent,
    _subevent: u64,
    _data: *mut c_void,
) {
    guard((), || refresh_maxmemory(ctx))
}

/// The server as a command or a type callback sees it, read only when an admission is asked
/// (an add that finds room never asks).
#[derive(Clone, Copy)]
pub struct Live {
    /// The command's context; null for a type callback (RESTORE's load, COPY), which has no
    /// client and reads the server's flags.
    ctx: RawCtx,
}

impl Live {
    pub(super) fn command(ctx: RawCtx) -> Live {
        Live { ctx }
    }
}

impl Server for Live {
    fn caller(&self) -> Caller {
        if self.ctx.is_null() {
            return server_caller();
        }
        // SAFETY: `ctx` is the live context of the command this admission belongs to.
        caller_from_flags(unsafe { api!(RedisModule_GetContextFlags)(self.ctx) })
    }

    fn maxmemory(&self) -> u64 {
        maxmemory()
    }

    fn used_memory_ratio(&self) -> f64 {
        used_memory_ratio()
    }
}

/// The memory budget of one command or callback, on the live server.
pub type Admission = admission::Admission<Live>;

/// For a type callback (RESTORE's load, COPY), which has no client.
pub fn callback_admission() -> Admission {
    Admission::new(Live {
        ctx: std::ptr::null_mut(),
    })
}
