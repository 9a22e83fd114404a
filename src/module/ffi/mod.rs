//! The FFI room: the only files that call the raw module API. `raw` at the bottom (the `api!`
//! macro, handle types, the log, the panic guards) imports nothing of the module; above it the
//! global allocator, the clock, the server's memory state and admission, keys, the calling
//! context of a command, RDB/AOF/digest/defrag/INFO I/O for the type callbacks, the
//! registration of the settings and of the commands. May import `state` and the pure core; never `types`, `kinds` or
//! `commands`.

// The shipped module's allocator; unit tests run on the system allocator.
#[cfg(not(test))]
pub mod alloc;
pub mod blocking;
pub mod clock;
pub mod command;
pub mod config;
pub mod io;
pub mod key;
pub mod raw;
pub mod registry;
pub mod server;

pub use command::{run_command, Args, Ctx};
pub use key::{Key, Member, Slot};
pub use raw::{guard, install_panic_hook, log, RawCtx, RawString};
pub use server::{callback_admission, Admission};
