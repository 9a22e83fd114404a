//! Module-wide settings: RedisBloom's load-time arguments plus the per-filter memory limit.

use std::sync::atomic::{AtomicU64, Ordering};

/// Default per-filter memory limit (deviation D1): 4 GiB, far above any filter a client asks
/// for by mistake being refused, yet an allocation the machine can plausibly serve.
pub const DEFAULT_MAX_FILTER_BYTES: u64 = 4 << 30;

static BF_ERROR_RATE: AtomicU64 = AtomicU64::new(0x3f84_7ae1_47ae_147b); // 0.01
static BF_INITIAL_SIZE: AtomicU64 = AtomicU64::new(100);
static CF_MAX_EXPANSIONS: AtomicU64 = AtomicU64::new(32);
static MAX_FILTER_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_MAX_FILTER_BYTES);

pub fn bf_error_rate() -> f64 {
    f64::from_bits(BF_ERROR_RATE.load(Ordering::Relaxed))
}

pub fn bf_initial_size() -> u64 {
    BF_INITIAL_SIZE.load(Ordering::Relaxed)
}

pub fn cf_max_expansions() -> u64 {
    CF_MAX_EXPANSIONS.load(Ordering::Relaxed)
}

pub fn max_filter_bytes() -> u64 {
    MAX_FILTER_BYTES.load(Ordering::Relaxed)
}

/// The settings as parsed from the module's load arguments.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    pub bf_error_rate: f64,
    pub bf_initial_size: u64,
    pub cf_max_expansions: u64,
    pub max_filter_bytes: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            bf_error_rate: 0.01,
            bf_initial_size: 100,
            cf_max_expansions: 32,
            max_filter_bytes: DEFAULT_MAX_FILTER_BYTES,
        }
    }
}

impl Settings {
    pub fn apply(&self) {
        BF_ERROR_RATE.store(self.bf_error_rate.to_bits(), Ordering::Relaxed);
        BF_INITIAL_SIZE.store(self.bf_initial_size, Ordering::Relaxed);
        CF_MAX_EXPANSIONS.store(self.cf_max_expansions, Ordering::Relaxed);
        MAX_FILTER_BYTES.store(self.max_filter_bytes, Ordering::Relaxed);
    }

    /// Parses `NAME value` pairs as RedisBloom does, with the same log messages on failure.
    /// `int` and `double` are Redis's strict number parsers.
    pub fn parse(
        args: &[&[u8]],
        int: impl Fn(usize) -> Option<i64>,
        double: impl Fn(usize) -> Option<f64>,
    ) -> Result<Settings, &'static str> {
        let mut settings = Settings::default();
        // RedisBloom's packaging tool loads modules with one empty argument.
        let count = if args.len() == 1 && args[0].is_empty() {
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
                settings.bf_initial_size = u64::try_from(v)
                    .ok()
                    .filter(|v| *v > 0)
                    .ok_or("INITIAL_SIZE must be > 0")?;
            } else if name.eq_ignore_ascii_case(b"ERROR_RATE") {
                let v = double(value).ok_or("Invalid argument for 'ERROR_RATE'")?;
                if v <= 0.0 {
                    return Err("ERROR_RATE must be > 0");
                }
                if v >= 1.0 {
                    return Err("ERROR_RATE must be < 1");
                }
                settings.bf_error_rate = v;
            } else if name.eq_ignore_ascii_case(b"CF_MAX_EXPANSIONS") {
                let v = int(value).ok_or("Invalid argument for 'CF_MAX_EXPANSIONS'")?;
                settings.cf_max_expansions = u64::try_from(v)
                    .ok()
                    .filter(|v| *v >= 1)
                    .ok_or("CF_MAX_EXPANSIONS must be an integer >= 1")?;
            } else if name.eq_ignore_ascii_case(b"MAX_FILTER_BYTES") {
                let v = int(value).ok_or("Invalid argument for 'MAX_FILTER_BYTES'")?;
                settings.max_filter_bytes = u64::try_from(v)
                    .ok()
                    .filter(|v| *v >= 1024)
                    .ok_or("MAX_FILTER_BYTES must be an integer >= 1024")?;
            } else {
                return Err("Unrecognized option");
            }
        }
        Ok(settings)
    }
}
