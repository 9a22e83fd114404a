//! Module-wide settings: RedisBloom's load-time arguments, RedisBloom 8's configuration names
//! (readable and settable with CONFIG GET/SET, see `config_api`), and the per-filter memory
//! limit. Every setting is one atomic read on the command path.

use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

use crate::syntax::bf::{WindowSpec, MAX_WINDOW_SECONDS};
use crate::windowed;

/// Default per-filter memory limit (deviation D1): 4 GiB, far above any filter a client asks
/// for by mistake being refused, yet an allocation the machine can plausibly serve.
pub const DEFAULT_MAX_FILTER_BYTES: i64 = 4 << 30;

/// A numeric setting with its configuration name and range.
pub struct Numeric {
    pub name: &'static CStr,
    pub value: AtomicI64,
    pub min: i64,
    pub max: i64,
    /// Whether CONFIG SET takes memory units (`4gb`).
    pub memory: bool,
}

impl Numeric {
    const fn new(name: &'static CStr, default: i64, min: i64, max: i64) -> Self {
        Numeric {
            name,
            value: AtomicI64::new(default),
            min,
            max,
            memory: false,
        }
    }

    pub fn get(&self) -> i64 {
        self.value.load(Ordering::Relaxed)
    }

    pub fn set(&self, value: i64) {
        self.value.store(value, Ordering::Relaxed);
    }
}

pub static BF_INITIAL_SIZE: Numeric = Numeric::new(c"bf-initial-size", 100, 1, i64::MAX);
/// 0 makes implicitly created Bloom filters non-scaling (RedisBloom 8's meaning).
pub static BF_EXPANSION: Numeric = Numeric::new(c"bf-expansion-factor", 2, 0, 32768);
/// Seconds of the window of implicitly created Bloom filters; 0 (the default) creates
/// RedisBloom's filters.
pub static BF_WINDOW: Numeric = Numeric::new(c"bf-window", 0, 0, MAX_WINDOW_SECONDS);
pub static BF_WINDOW_GENERATIONS: Numeric = Numeric::new(
    c"bf-window-generations",
    windowed::DEFAULT_GENERATIONS as i64,
    windowed::MIN_GENERATIONS as i64,
    windowed::MAX_GENERATIONS as i64,
);
pub static CF_BUCKET_SIZE: Numeric = Numeric::new(c"cf-bucket-size", 2, 1, 255);
pub static CF_INITIAL_SIZE: Numeric = Numeric::new(c"cf-initial-size", 1024, 2, 1 << 30);
pub static CF_MAX_ITERATIONS: Numeric = Numeric::new(c"cf-max-iterations", 20, 1, 65535);
pub static CF_EXPANSION: Numeric = Numeric::new(c"cf-expansion-factor", 1, 0, 32768);
pub static CF_MAX_EXPANSIONS: Numeric = Numeric::new(c"cf-max-expansions", 32, 1, i64::MAX);
pub static MAX_FILTER_BYTES: Numeric = Numeric {
    memory: true,
    ..Numeric::new(
        c"max-filter-bytes",
        DEFAULT_MAX_FILTER_BYTES,
        1024,
        i64::MAX,
    )
};

/// Bloom filters that commands create start sparse while they hold at most this many bytes
/// (issue 16); 0 (the default) creates them dense, as RedisBloom does.
pub static BF_SPARSE_MAX_BYTES: Numeric = Numeric {
    memory: true,
    ..Numeric::new(c"bf-sparse-max-bytes", 0, 0, i64::MAX)
};

/// Every numeric setting, in the order they are registered.
pub static NUMERIC: [&Numeric; 11] = [
    &BF_INITIAL_SIZE,
    &BF_EXPANSION,
    &BF_WINDOW,
    &BF_WINDOW_GENERATIONS,
    &CF_BUCKET_SIZE,
    &CF_INITIAL_SIZE,
    &CF_MAX_ITERATIONS,
    &CF_EXPANSION,
    &CF_MAX_EXPANSIONS,
    &MAX_FILTER_BYTES,
    &BF_SPARSE_MAX_BYTES,
];

/// The error rate of implicitly created Bloom filters (`bf-error-rate`, a string setting
/// because Redis has no floating-point module configurations).
static BF_ERROR_RATE: AtomicU64 = AtomicU64::new(0x3f84_7ae1_47ae_147b); // 0.01
pub const BF_ERROR_RATE_NAME: &CStr = c"bf-error-rate";

pub fn bf_error_rate() -> f64 {
    f64::from_bits(BF_ERROR_RATE.load(Ordering::Relaxed))
}

pub fn set_bf_error_rate(rate: f64) {
    BF_ERROR_RATE.store(rate.to_bits(), Ordering::Relaxed);
}

/// Parses a `bf-error-rate` value: a number strictly between 0 and 1.
pub fn parse_error_rate(text: &[u8]) -> Result<f64, &'static str> {
    let rate: f64 = std::str::from_utf8(text)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .ok_or("error rate must be a number")?;
    if rate > 0.0 && rate < 1.0 {
        Ok(rate)
    } else {
        Err("error rate must be in the range (0, 1)")
    }
}

/// The window of implicitly created Bloom filters, if `bf-window` is set.
pub fn bf_window() -> Option<WindowSpec> {
    WindowSpec::new(BF_WINDOW.get(), BF_WINDOW_GENERATIONS.get()).ok()
}

pub fn bf_initial_size() -> u64 {
    BF_INITIAL_SIZE.get().unsigned_abs()
}

/// `bf-compact` (issue 20): implicit creations make compact filters (`COMPACT`).
pub static BF_COMPACT: AtomicBool = AtomicBool::new(false);
pub const BF_COMPACT_NAME: &CStr = c"bf-compact";

pub fn bf_compact() -> bool {
    BF_COMPACT.load(Ordering::Relaxed)
}

/// `bf-blocked` (issue 28): implicit creations make blocked filters (`BLOCKED`) where nothing
/// else is asked of them.
pub static BF_BLOCKED: AtomicBool = AtomicBool::new(false);
pub const BF_BLOCKED_NAME: &CStr = c"bf-blocked";

pub fn bf_blocked() -> bool {
    BF_BLOCKED.load(Ordering::Relaxed)
}

pub fn bf_sparse_max_bytes() -> u64 {
    BF_SPARSE_MAX_BYTES.get().unsigned_abs()
}

pub fn cf_max_expansions() -> u64 {
    CF_MAX_EXPANSIONS.get().unsigned_abs()
}

pub fn max_filter_bytes() -> u64 {
    MAX_FILTER_BYTES.get().unsigned_abs()
}

/// A change that would break a rule between two settings.
pub fn check_cross(setting: &Numeric, value: i64) -> Result<(), &'static str> {
    let (bucket, capacity) = if std::ptr::eq(setting, &CF_BUCKET_SIZE) {
        (value, CF_INITIAL_SIZE.get())
    } else if std::ptr::eq(setting, &CF_INITIAL_SIZE) {
        (CF_BUCKET_SIZE.get(), value)
    } else {
        return Ok(());
    };
    if capacity < bucket * 2 {
        return Err("cf-initial-size must be at least twice cf-bucket-size");
    }
    Ok(())
}

/// The legacy load arguments, parsed as RedisBloom parses them (same log messages on failure).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadArguments {
    pub bf_error_rate: Option<f64>,
    pub bf_initial_size: Option<i64>,
    pub cf_max_expansions: Option<i64>,
    pub max_filter_bytes: Option<i64>,
}

impl LoadArguments {
    /// Makes the arguments the settings' values (configuration files may still override them).
    pub fn apply(&self) {
        if let Some(rate) = self.bf_error_rate {
            set_bf_error_rate(rate);
        }
        let pairs = [
            (&BF_INITIAL_SIZE, self.bf_initial_size),
            (&CF_MAX_EXPANSIONS, self.cf_max_expansions),
            (&MAX_FILTER_BYTES, self.max_filter_bytes),
        ];
        for (setting, value) in pairs {
            if let Some(value) = value {
                setting.set(value);
            }
        }
    }

    /// Parses `NAME value` pairs. `int` and `double` are Redis's strict number parsers.
    pub fn parse(
        args: &[&[u8]],
        int: impl Fn(usize) -> Option<i64>,
        double: impl Fn(usize) -> Option<f64>,
    ) -> Result<LoadArguments, &'static str> {
        let mut parsed = LoadArguments {
            bf_error_rate: None,
            bf_initial_size: None,
            cf_max_expansions: None,
            max_filter_bytes: None,
        };
        // RedisBloom's packaging tool loads modules with one empty argument.
        let count = if args.len() == 1 && args.first().is_some_and(|a| a.is_empty()) {
            0
        } else {
            args.len()
        };
        if count % 2 != 0 {
            return Err("Invalid number of arguments passed");
        }
        for name_at in (0..count).step_by(2) {
            let name = args.get(name_at).copied().unwrap_or_default();
            let value = name_at + 1;
            if name.eq_ignore_ascii_case(b"INITIAL_SIZE") {
                let v = int(value).ok_or("Invalid argument for 'INITIAL_SIZE'")?;
                parsed.bf_initial_size = Some(
                    Some(v)
                        .filter(|v| *v > 0)
                        .ok_or("INITIAL_SIZE must be > 0")?,
                );
            } else if name.eq_ignore_ascii_case(b"ERROR_RATE") {
                let v = double(value).ok_or("Invalid argument for 'ERROR_RATE'")?;
                if v <= 0.0 {
                    return Err("ERROR_RATE must be > 0");
                }
                if v >= 1.0 {
                    return Err("ERROR_RATE must be < 1");
                }
                parsed.bf_error_rate = Some(v);
            } else if name.eq_ignore_ascii_case(b"CF_MAX_EXPANSIONS") {
                let v = int(value).ok_or("Invalid argument for 'CF_MAX_EXPANSIONS'")?;
                parsed.cf_max_expansions = Some(
                    Some(v)
                        .filter(|v| *v >= 1)
                        .ok_or("CF_MAX_EXPANSIONS must be an integer >= 1")?,
                );
            } else if name.eq_ignore_ascii_case(b"MAX_FILTER_BYTES") {
                let v = int(value).ok_or("Invalid argument for 'MAX_FILTER_BYTES'")?;
                parsed.max_filter_bytes = Some(
                    Some(v)
                        .filter(|v| *v >= 1024)
                        .ok_or("MAX_FILTER_BYTES must be an integer >= 1024")?,
                );
            } else {
                return Err("Unrecognized option");
            }
        }
        Ok(parsed)
    }
}
