//! The Redis layer: it parses, calls the core and replies; no filter logic lives here. This
//! file is the module's entry (the `redis_module!` block and `init`: load arguments, data
//! types, INFO, the memory watch, settings, then every command of the table). The layer is
//! split into rooms by role, each importing only from the rooms below it (checked by
//! `layers::tests`):
//!
//! - `commands/`: the `BF.*` and `CF.*` handlers, and the one command table;
//! - `kinds/`: the Bloom family, its registry and one file per kind;
//! - `types/`: the type callbacks every filter shares, and the cuckoo type;
//! - `ffi/`: the only room that calls the module API, `raw.rs` at its bottom;
//! - `state/`: what never calls the server: reply texts, settings, admission, stats.

mod commands;
mod ffi;
mod kinds;
#[cfg(test)]
mod layers;
mod state;
mod types;

use redis_module::{redis_module, Context, RedisString, Status};

use commands::table::{self, Command};
use ffi::{registry, RawCtx};
use state::{settings, stats};
use types::cuckoo::CUCKOO_TYPE;

// Redis's allocator, so MEMORY USAGE and INFO memory see the filters, counted for the
// `bf_module_allocations` INFO field; unit tests run without a server on the system allocator.
#[cfg(not(test))]
type Allocator = stats::Counting<ffi::alloc::ServerAlloc>;
#[cfg(not(test))]
const ALLOCATOR: Allocator = stats::Counting(ffi::alloc::ServerAlloc);
#[cfg(test)]
type Allocator = stats::Counting<std::alloc::System>;
#[cfg(test)]
const ALLOCATOR: Allocator = stats::Counting(std::alloc::System);

/// The version `MODULE LIST` reports: RedisBloom 2.8.20's (`major * 10000 + minor * 100 + patch`),
/// whose replies bloomrs mirrors. Clients tell RedisBloom from other `bf` modules by it, so it
/// stays RedisBloom's; bloomrs's own version is the `bf_bloomrs_version` field of `INFO bf`.
const MODULE_VERSION: i32 = 20820;

fn init(ctx: &Context, args: &[RedisString]) -> Status {
    ffi::install_panic_hook();
    let (args, valkey_arguments) = settings::split_valkey_arguments(args, RedisString::as_slice);
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
            ffi::log(c"warning", &reason);
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
    for (name, value) in valkey_arguments {
        if let Err(reason) = ffi::config::set_by_name(name.as_slice(), value.as_slice()) {
            ffi::log(c"warning", &reason);
            return Status::Err;
        }
    }
    ffi::server::declare_options(ctx.ctx, &ffi::server::host(ctx.ctx));
    let families = table::FAMILIES.iter().map(|(_, category)| *category);
    if let Err(reason) = registry::add_acl_categories(ctx.ctx, families) {
        ffi::log(c"warning", &reason);
        return Status::Err;
    }
    for command in table::COMMANDS {
        if let Err(reason) = register(ctx.ctx, command) {
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

/// Registers one command of the table, then its ACL categories and its documentation.
fn register(ctx: RawCtx, command: &Command) -> Result<(), String> {
    let name = command.name;
    let has_key = !table::KEYLESS.contains(&name);
    registry::create_command(ctx, name, command.handler, command.flags, has_key)?;
    registry::set_acl_categories(ctx, name, || table::acl_categories(command))?;
    match &command.doc {
        Some(doc) => registry::set_command_info(ctx, name, doc),
        None => Ok(()),
    }
}

redis_module! {
    name: "bf",
    version: MODULE_VERSION,
    allocator: (Allocator, ALLOCATOR),
    // The Bloom kinds' types are registered from `kinds::KINDS` in `init`.
    data_types: [CUCKOO_TYPE],
    init: init,
}
