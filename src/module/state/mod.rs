//! Module-wide state that never calls the server: every reply text and the one place that
//! words core errors (`errors`), the settings and load arguments (`settings`), the memory
//! admission policy (`admission`, asking the server through a trait the FFI room implements),
//! the totals of `INFO bf` and the counting allocator (`stats`), which server loaded the module
//! and what it allows (`host`), and what fault injection asked for (`fault`, test builds only). Imports only the pure core; every other room may
//! import it.

pub mod admission;
pub mod errors;
#[cfg(feature = "fault-injection")]
pub mod fault;
pub mod host;
pub mod settings;
pub mod stats;
