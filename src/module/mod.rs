//! The Redis layer: module registration, load arguments, commands and data types. It parses,
//! calls the core and replies; no filter logic lives here.

mod acl;
mod bf;
mod cf;
mod cf_chunks;
mod docs;
#[cfg(feature = "fault-injection")]
mod fault;
mod ffi;
mod kinds;
mod state;
mod types;

use std::ffi::{c_int, CStr};

use redis_module::{raw, redis_module, Context, RedisString, Status};

use ffi::{api, run_command, RawCtx, RawString};
use state::{settings, stats};
use types::cuckoo::CUCKOO_TYPE;

// Redis's allocator, so MEMORY USAGE and INFO memory see the filters, counted for the
// `bf_module_allocations` INFO field; unit tests run without a server on the system allocator.
#[cfg(not(test))]
type Allocator = stats::Counting<redis_module::alloc::RedisAlloc>;
#[cfg(not(test))]
const ALLOCATOR: Allocator = stats::Counting(redis_module::alloc::RedisAlloc);
#[cfg(test)]
type Allocator = stats::Counting<std::alloc::System>;
#[cfg(test)]
const ALLOCATOR: Allocator = stats::Counting(std::alloc::System);

/// `major * 10000 + minor * 100 + patch`, as RedisBloom numbers its versions.
const MODULE_VERSION: i32 = parse_decimal(env!("CARGO_PKG_VERSION_MAJOR")) * 10000
    + parse_decimal(env!("CARGO_PKG_VERSION_MINOR")) * 100
    + parse_decimal(env!("CARGO_PKG_VERSION_PATCH"));

const fn parse_decimal(text: &str) -> i32 {
    let bytes = text.as_bytes();
    let mut value = 0;
    let mut i = 0;
    while i < bytes.len() {
        value = value * 10 + (bytes[i] - b'0') as i32;
        i += 1;
    }
    value
}

type Handler = extern "C" fn(RawCtx, *mut RawString, c_int) -> c_int;

/// Wraps a handler in an `extern "C"` entry point that catches panics.
macro_rules! entry {
    ($handler:path) => {{
        extern "C" fn entry(ctx: RawCtx, argv: *mut RawString, argc: c_int) -> c_int {
            run_command(ctx, argv, argc, $handler)
        }
        entry as Handler
    }};
}

/// Write commands that may allocate, read-only ones, and deletes (writes that never grow).
const WRITE: &CStr = c"write deny-oom";
const READ: &CStr = c"readonly fast";
/// Reads that copy or build up to a 16 MiB chunk for the reply.
const READ_CHUNK: &CStr = c"readonly";
const WRITE_FAST: &CStr = c"write fast";

fn commands() -> Vec<(&'static CStr, Handler, &'static CStr)> {
    vec![
        (c"bf.reserve", entry!(bf::reserve), WRITE),
        (c"bf.add", entry!(bf::add), WRITE),
        (c"bf.madd", entry!(bf::madd), WRITE),
        (c"bf.insert", entry!(bf::insert), WRITE),
        (c"bf.exists", entry!(bf::exists), READ),
        (c"bf.mexists", entry!(bf::mexists), READ),
        (c"bf.info", entry!(bf::info), READ),
        (c"bf.card", entry!(bf::card), READ),
        (c"bf.debug", entry!(bf::debug), READ),
        (c"bf.scandump", entry!(bf::scandump), READ_CHUNK),
        (c"bf.loadchunk", entry!(bf::loadchunk), WRITE),
        (c"bf.retire", entry!(kinds::windowed::retire), WRITE_FAST),
        (c"bf.promote", entry!(kinds::sparse::promote), WRITE),
        (c"bf.del", entry!(bf::del), WRITE_FAST),
        (c"bf.mdel", entry!(bf::mdel), WRITE_FAST),
        (c"cf.reserve", entry!(cf::reserve), WRITE),
        (c"cf.add", entry!(cf::add), WRITE),
        (c"cf.addnx", entry!(cf::addnx), WRITE),
        (c"cf.insert", entry!(cf::insert), WRITE),
        (c"cf.insertnx", entry!(cf::insertnx), WRITE),
        (c"cf.exists", entry!(cf::exists), READ),
        (c"cf.mexists", entry!(cf::mexists), READ),
        (c"cf.count", entry!(cf::count), READ),
        (c"cf.del", entry!(cf::del), WRITE_FAST),
        // RedisBloom registers CF.COMPACT read-only although it rewrites the value.
        (c"cf.compact", entry!(cf::compact), READ),
        (c"cf.scandump", entry!(cf_chunks::scandump), READ_CHUNK),
        (c"cf.loadchunk", entry!(cf_chunks::loadchunk), WRITE),
        (c"cf.info", entry!(cf::info), READ),
        (c"cf.debug", entry!(cf::debug), READ),
        #[cfg(feature = "fault-injection")]
        (c"bf.__fault", entry!(fault::inject), READ),
    ]
}

fn init(ctx: &Context, args: &[RedisString]) -> Status {
    ffi::install_panic_hook();
    let bytes: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
    if args.len() == 1 {
        ffi::log(
            c"notice",
            "Found empty string. Assuming ramp-packer validation",
        );
    }
    let parsed = settings::LoadArguments::parse(
        &bytes,
        |i| args.get(i).and_then(|a| a.parse_integer().ok()),
        |i| args.get(i).and_then(|a| a.parse_float().ok()),
    );
    match parsed {
        Ok(arguments) => arguments.apply(),
        Err(reason) => {
            ffi::log(c"warning", reason);
            return Status::Err;
        }
    }
    if let Err(reason) = kinds::register_types(ctx.ctx) {
        ffi::log(c"warning", &reason);
        return Status::Err;
    }
    ffi::io::register_info(ctx.ctx);
    ffi::server::watch_memory(ctx.ctx);
    if let Err(reason) = ffi::config::register(ctx.ctx) {
        ffi::log(c"warning", &reason);
        return Status::Err;
    }
    // SAFETY: called once during module load with the load context.
    unsafe {
        api!(RedisModule_SetModuleOptions)(
            ctx.ctx,
            raw::REDISMODULE_OPTIONS_HANDLE_IO_ERRORS as c_int,
        )
    };
    if let Err(reason) = acl::register_families(ctx.ctx) {
        ffi::log(c"warning", &reason);
        return Status::Err;
    }
    for (name, handler, flags) in commands() {
        // SAFETY: registers a static entry point under a NUL-terminated name; key at 1.
        let status = unsafe {
            api!(RedisModule_CreateCommand)(
                ctx.ctx,
                name.as_ptr(),
                Some(handler),
                flags.as_ptr(),
                1,
                1,
                1,
            )
        };
        if status != raw::REDISMODULE_OK as c_int {
            ffi::log(c"warning", &format!("cannot register {name:?}"));
            return Status::Err;
        }
        if let Err(reason) = acl::assign(ctx.ctx, name, flags) {
            ffi::log(c"warning", &reason);
            return Status::Err;
        }
        if cfg!(feature = "fault-injection") && name == c"bf.__fault" {
            continue;
        }
        if let Err(reason) = docs::describe(ctx.ctx, name) {
            ffi::log(c"warning", &reason);
            return Status::Err;
        }
    }
    ffi::log(
        c"notice",
        &format!("bloomrs version {} loaded", env!("CARGO_PKG_VERSION")),
    );
    Status::Ok
}

redis_module! {
    name: "bf",
    version: MODULE_VERSION,
    allocator: (Allocator, ALLOCATOR),
    // The Bloom kinds' types are registered from `kinds::KINDS` in `init`.
    data_types: [CUCKOO_TYPE],
    init: init,
}
