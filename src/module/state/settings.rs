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

/// Plain Bloom filters that commands create start sparse while they hold at most this many
/// bytes; 0 (the default) creates them dense, as RedisBloom does.
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

/// RedisBloom 8's names for eight of the settings, which it registers without the module
/// prefix (`CONFIG SET bf-error-rate 0.001`) where the server allows that (Redis 8.0 and later,
/// `REDISMODULE_CONFIG_UNPREFIXED`). There each is registered once, with today's `bf.<name>` as
/// its alias, so both names are the same setting; both then take RedisBloom 8's ranges and
/// error replies (its `src/config.c`): a string configuration parsed by the server's own number
/// parsers, refused with ``Invalid value for `<name>` `` or
/// ``Value for `<name>` must be in the range [min, max]``.
pub struct Unprefixed {
    /// RedisBloom 8's name.
    pub name: &'static str,
    /// `"<name>|bf.<name>"`: the name and its alias, as Redis 8 takes them.
    pub names: &'static CStr,
    pub target: Target,
}

/// What an unprefixed configuration sets.
pub enum Target {
    /// `bf-error-rate`: a number strictly between 0 and 1; above 0.25 it becomes 0.25.
    ErrorRate,
    /// An integer setting within `[min, max]` (the Cuckoo initial size and bucket size also
    /// bound each other, see `unprefixed_range`).
    Integer {
        setting: &'static Numeric,
        min: i64,
        max: i64,
    },
}

/// RedisBloom 8 caps the error rate its configuration holds at this.
pub const UNPREFIXED_ERROR_RATE_CAP: f64 = 0.25;

const fn integer(
    name: &'static str,
    names: &'static CStr,
    setting: &'static Numeric,
    min: i64,
    max: i64,
) -> Unprefixed {
    Unprefixed {
        name,
        names,
        target: Target::Integer { setting, min, max },
    }
}

/// The eight, in the order RedisBloom 8 registers them (the server applies configuration-file
/// lines in registration order, which matters for the Cuckoo pair).
pub static UNPREFIXED: [Unprefixed; 8] = [
    Unprefixed {
        name: "bf-error-rate",
        names: c"bf-error-rate|bf.bf-error-rate",
        target: Target::ErrorRate,
    },
    integer(
        "bf-initial-size",
        c"bf-initial-size|bf.bf-initial-size",
        &BF_INITIAL_SIZE,
        1,
        1 << 30,
    ),
    integer(
        "bf-expansion-factor",
        c"bf-expansion-factor|bf.bf-expansion-factor",
        &BF_EXPANSION,
        0,
        32768,
    ),
    integer(
        "cf-bucket-size",
        c"cf-bucket-size|bf.cf-bucket-size",
        &CF_BUCKET_SIZE,
        1,
        255,
    ),
    integer(
        "cf-initial-size",
        c"cf-initial-size|bf.cf-initial-size",
        &CF_INITIAL_SIZE,
        4,
        1 << 30,
    ),
    integer(
        "cf-max-iterations",
        c"cf-max-iterations|bf.cf-max-iterations",
        &CF_MAX_ITERATIONS,
        1,
        65535,
    ),
    integer(
        "cf-expansion-factor",
        c"cf-expansion-factor|bf.cf-expansion-factor",
        &CF_EXPANSION,
        0,
        32768,
    ),
    integer(
        "cf-max-expansions",
        c"cf-max-expansions|bf.cf-max-expansions",
        &CF_MAX_EXPANSIONS,
        1,
        65536,
    ),
];

/// Whether `setting` is one of the eight (registered through `UNPREFIXED` where the server
/// allows unprefixed names, instead of as a numeric `bf.<name>` configuration).
pub fn has_unprefixed_name(setting: &Numeric) -> bool {
    UNPREFIXED.iter().any(|u| match u.target {
        Target::Integer { setting: s, .. } => std::ptr::eq(s, setting),
        Target::ErrorRate => false,
    })
}

/// The range an integer configuration accepts now. As in RedisBloom 8, the Cuckoo initial size
/// must be at least twice the bucket size, and the bucket size at most half the initial size
/// (and 255).
pub fn unprefixed_range(setting: &Numeric, min: i64, max: i64) -> (i64, i64) {
    if std::ptr::eq(setting, &CF_INITIAL_SIZE) {
        (CF_BUCKET_SIZE.get().saturating_mul(2), max)
    } else if std::ptr::eq(setting, &CF_BUCKET_SIZE) {
        (min, (CF_INITIAL_SIZE.get() / 2).min(max))
    } else {
        (min, max)
    }
}

/// A number the server's own parser (`RedisModule_StringToLongLong` or `StringToDouble`) read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Integer(i64),
    Float(f64),
}

/// What an unprefixed configuration shows after a change: the text as given, or another one.
#[derive(Debug, Clone, PartialEq)]
pub enum Shown {
    AsGiven,
    Text(String),
}

/// Applies a value given to an unprefixed configuration (`value` is None where the server's
/// parser read no number). A value equal to the current one is always taken: the server sets
/// each configuration to its default at load, and the default may come from a RedisBloom 2.8
/// load argument outside RedisBloom 8's range (`INITIAL_SIZE 2000000000`), which must not make
/// the module fail to load.
pub fn set_unprefixed(u: &Unprefixed, value: Option<Number>) -> Result<Shown, String> {
    let invalid = || format!("Invalid value for `{}`", u.name);
    match u.target {
        Target::ErrorRate => {
            let Some(Number::Float(rate)) = value else {
                return Err(invalid());
            };
            if rate == bf_error_rate() {
                return Ok(Shown::AsGiven);
            }
            if !(rate > 0.0 && rate < 1.0) {
                return Err(format!(
                    "Value for `{}` must be in the range ({:.6}, {:.6})",
                    u.name, 0.0, 1.0
                ));
            }
            if rate > UNPREFIXED_ERROR_RATE_CAP {
                set_bf_error_rate(UNPREFIXED_ERROR_RATE_CAP);
                return Ok(Shown::Text(UNPREFIXED_ERROR_RATE_CAP.to_string()));
            }
            set_bf_error_rate(rate);
            Ok(Shown::AsGiven)
        }
        Target::Integer { setting, min, max } => {
            let Some(Number::Integer(v)) = value else {
                return Err(invalid());
            };
            if v == setting.get() {
                return Ok(Shown::AsGiven);
            }
            let (low, high) = unprefixed_range(setting, min, max);
            if v < low || v > high {
                return Err(format!(
                    "Value for `{}` must be in the range [{low}, {high}]",
                    u.name
                ));
            }
            setting.set(v);
            Ok(Shown::AsGiven)
        }
    }
}

/// The window of implicitly created Bloom filters, if `bf-window` is set.
pub fn bf_window() -> Option<WindowSpec> {
    WindowSpec::new(BF_WINDOW.get(), BF_WINDOW_GENERATIONS.get()).ok()
}

pub fn bf_initial_size() -> u64 {
    BF_INITIAL_SIZE.get().unsigned_abs()
}

/// `bf-compact`: implicit creations make compact filters (`COMPACT`).
pub static BF_COMPACT: AtomicBool = AtomicBool::new(false);
pub const BF_COMPACT_NAME: &CStr = c"bf-compact";

pub fn bf_compact() -> bool {
    BF_COMPACT.load(Ordering::Relaxed)
}

/// `bf-blocked`: implicit creations make blocked filters (`BLOCKED`) where nothing
/// else is asked of them.
pub static BF_BLOCKED: AtomicBool = AtomicBool::new(false);
pub const BF_BLOCKED_NAME: &CStr = c"bf-blocked";

pub fn bf_blocked() -> bool {
    BF_BLOCKED.load(Ordering::Relaxed)
}

/// New Bloom filters without bloomrs's own keywords are valkey-bloom filters (`bloomfltr`),
/// which valkey-bloom reads back (off by default: RedisBloom's).
pub static BF_VALKEY_BLOOM: AtomicBool = AtomicBool::new(false);
pub const BF_VALKEY_BLOOM_NAME: &CStr = c"bf-valkey-bloom";

pub fn bf_valkey_bloom() -> bool {
    BF_VALKEY_BLOOM.load(Ordering::Relaxed)
}

/// valkey-bloom's `bloom-use-random-seed`: new valkey-bloom filters draw their seed (on, its
/// default) or take its fixed seed.
pub static BLOOM_USE_RANDOM_SEED: AtomicBool = AtomicBool::new(true);
pub const BLOOM_USE_RANDOM_SEED_NAME: &CStr = c"bloom-use-random-seed";

pub fn bloom_use_random_seed() -> bool {
    BLOOM_USE_RANDOM_SEED.load(Ordering::Relaxed)
}

/// valkey-bloom's `bloom-tightening-ratio`: the tightening of new valkey-bloom filters (a
/// string setting, as `bf-error-rate`).
static BLOOM_TIGHTENING: AtomicU64 = AtomicU64::new(0x3fe0_0000_0000_0000); // 0.5
pub const BLOOM_TIGHTENING_NAME: &CStr = c"bloom-tightening-ratio";

pub fn bloom_tightening() -> f64 {
    f64::from_bits(BLOOM_TIGHTENING.load(Ordering::Relaxed))
}

/// Sets `bloom-tightening-ratio` from its text: a number strictly between 0 and 1.
pub fn set_bloom_tightening(text: &[u8]) -> Result<(), &'static str> {
    let ratio = valkey_ratio(text, "ERR (0 < tightening ratio range < 1)")?;
    BLOOM_TIGHTENING.store(ratio.to_bits(), Ordering::Relaxed);
    Ok(())
}

/// valkey-bloom's `bloom-fp-rate`: another name of `bf-error-rate` (the error rate of filters
/// made without one), taking valkey-bloom's text and refusals.
pub const BLOOM_FP_RATE_NAME: &CStr = c"bloom-fp-rate";

/// Sets the error rate from a `bloom-fp-rate` text: a number strictly between 0 and 1.
pub fn set_bloom_fp_rate(text: &[u8]) -> Result<(), &'static str> {
    set_bf_error_rate(valkey_ratio(text, "ERR (0 < error rate range < 1)")?);
    Ok(())
}

/// Sets the error rate from a `bf-error-rate` text.
pub fn set_bf_error_rate_text(text: &[u8]) -> Result<(), &'static str> {
    set_bf_error_rate(parse_error_rate(text)?);
    Ok(())
}

/// A number strictly between 0 and 1 as valkey-bloom parses its string settings, with its
/// refusal texts.
fn valkey_ratio(text: &[u8], out_of_range: &'static str) -> Result<f64, &'static str> {
    let ratio: f64 = std::str::from_utf8(text)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .ok_or("Invalid floating-point value")?;
    if ratio > 0.0 && ratio < 1.0 {
        Ok(ratio)
    } else {
        Err(out_of_range)
    }
}

/// valkey-bloom's `bloom-defrag-enabled`: whether active defragmentation (when the server's
/// `activedefrag` runs it) moves the module's values; on by default.
pub static BLOOM_DEFRAG_ENABLED: AtomicBool = AtomicBool::new(true);
pub const BLOOM_DEFRAG_ENABLED_NAME: &CStr = c"bloom-defrag-enabled";

pub fn bloom_defrag_enabled() -> bool {
    BLOOM_DEFRAG_ENABLED.load(Ordering::Relaxed)
}

/// valkey-bloom's names for the numeric settings it shares with bloomrs, with valkey-bloom's
/// ranges: `CONFIG SET bf.bloom-capacity 1000` sets `bf-initial-size`, and reads it back. Each
/// is registered with 0, outside valkey-bloom's range, as its default: what the server applies
/// at load when the configuration does not name it, which changes nothing.
pub static VALKEY_ALIASES: [(&CStr, &Numeric, i64, i64); 3] = [
    (c"bloom-capacity", &BF_INITIAL_SIZE, 1, i64::MAX),
    (c"bloom-expansion", &BF_EXPANSION, 1, 10),
    (
        c"bloom-memory-usage-limit",
        &MAX_FILTER_BYTES,
        1024,
        i64::MAX,
    ),
];

/// An alias's value: None for the default the server applies at load (0, which changes
/// nothing), else the value, or why it is refused.
pub fn alias_value(value: i64, min: i64, max: i64) -> Result<Option<i64>, String> {
    if value == 0 {
        return Ok(None);
    }
    if value < min || value > max {
        return Err(format!(
            "argument must be between {min} and {max} inclusive"
        ));
    }
    Ok(Some(value))
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

/// valkey-bloom's settings, which it also takes as module arguments (`loadmodule ...
/// bloom-capacity 1000`, as `CONFIG SET bf.bloom-capacity 1000`).
pub const VALKEY_SETTINGS: [&str; 7] = [
    "bloom-capacity",
    "bloom-expansion",
    "bloom-memory-usage-limit",
    "bloom-fp-rate",
    "bloom-tightening-ratio",
    "bloom-use-random-seed",
    "bloom-defrag-enabled",
];

/// Splits the module arguments into RedisBloom's and the `name value` pairs that name one of
/// valkey-bloom's settings (given as pairs only where the arguments are pairs; else all stay
/// RedisBloom's, which refuses them).
pub fn split_valkey_arguments<T>(
    args: &[T],
    bytes: impl Fn(&T) -> &[u8],
) -> (Vec<&T>, Vec<(&T, &T)>) {
    let mut redisbloom = Vec::new();
    let mut valkey = Vec::new();
    if args.len() % 2 != 0 {
        return (args.iter().collect(), valkey);
    }
    for pair in args.chunks(2) {
        if let [name, value] = pair {
            let valkeys = VALKEY_SETTINGS
                .iter()
                .any(|v| v.as_bytes().eq_ignore_ascii_case(bytes(name)));
            if valkeys {
                valkey.push((name, value));
            } else {
                redisbloom.extend([name, value]);
            }
        }
    }
    (redisbloom, valkey)
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
    ) -> Result<LoadArguments, String> {
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
            return Err("Invalid number of arguments passed".to_string());
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
                    return Err("ERROR_RATE must be > 0".into());
                }
                if v >= 1.0 {
                    return Err("ERROR_RATE must be < 1".into());
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
                return Err(unrecognized(name));
            }
        }
        Ok(parsed)
    }
}

/// RedisBloom's refusal of an unknown module argument, naming it and the ones there are.
fn unrecognized(name: &[u8]) -> String {
    format!(
        "Unrecognized option `{}`: the module arguments are INITIAL_SIZE, ERROR_RATE, \
         CF_MAX_EXPANSIONS and MAX_FILTER_BYTES, and valkey-bloom's bloom-* settings, each \
         followed by its value",
        String::from_utf8_lossy(name)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Refused values change nothing, so these tests leave the settings as they are.
    #[test]
    fn unprefixed_refusals_are_redisbloom8s() {
        let rate = &UNPREFIXED[0];
        let size = &UNPREFIXED[1];
        let cases: [(&Unprefixed, Option<Number>, &str); 6] = [
            (rate, None, "Invalid value for `bf-error-rate`"),
            (
                rate,
                Some(Number::Integer(0)),
                "Invalid value for `bf-error-rate`",
            ),
            (
                rate,
                Some(Number::Float(1.0)),
                "Value for `bf-error-rate` must be in the range (0.000000, 1.000000)",
            ),
            (
                rate,
                Some(Number::Float(-0.5)),
                "Value for `bf-error-rate` must be in the range (0.000000, 1.000000)",
            ),
            (size, None, "Invalid value for `bf-initial-size`"),
            (
                size,
                Some(Number::Integer(1 << 30 | 1)),
                "Value for `bf-initial-size` must be in the range [1, 1073741824]",
            ),
        ];
        for (setting, value, reason) in cases {
            assert_eq!(
                set_unprefixed(setting, value),
                Err(reason.to_string()),
                "{} {value:?}",
                setting.name
            );
        }
        assert_eq!(bf_error_rate(), 0.01);
        assert_eq!(BF_INITIAL_SIZE.get(), 100);
    }

    #[test]
    fn unprefixed_names_alias_the_prefixed_ones() {
        for u in &UNPREFIXED {
            let names = u.names.to_str().unwrap();
            assert_eq!(names, format!("{0}|bf.{0}", u.name));
            if let Target::Integer { setting, .. } = u.target {
                assert_eq!(setting.name.to_str().unwrap(), u.name);
                assert!(has_unprefixed_name(setting));
            }
        }
        assert_eq!(BF_ERROR_RATE_NAME.to_str().unwrap(), UNPREFIXED[0].name);
        for other in [&BF_WINDOW, &MAX_FILTER_BYTES, &BF_SPARSE_MAX_BYTES] {
            assert!(!has_unprefixed_name(other));
        }
    }

    #[test]
    fn valkey_blooms_string_settings_refuse_in_its_words() {
        let range = "ERR (0 < error rate range < 1)";
        for (text, reason) in [
            (&b"1"[..], range),
            (b"0", range),
            (b"-0.5", range),
            (b"NaN", range),
            (b"abc", "Invalid floating-point value"),
            (b"", "Invalid floating-point value"),
        ] {
            assert_eq!(set_bloom_fp_rate(text), Err(reason), "{text:?}");
        }
        assert_eq!(
            set_bloom_tightening(b"1"),
            Err("ERR (0 < tightening ratio range < 1)")
        );
        assert_eq!(bf_error_rate(), 0.01);
        assert_eq!(bloom_tightening(), 0.5);
    }

    #[test]
    fn cuckoo_sizes_bound_each_other() {
        // With the defaults (bucket size 2, initial size 1024).
        assert_eq!(unprefixed_range(&CF_INITIAL_SIZE, 4, 1 << 30), (4, 1 << 30));
        assert_eq!(unprefixed_range(&CF_BUCKET_SIZE, 1, 255), (1, 255));
        assert_eq!(unprefixed_range(&BF_INITIAL_SIZE, 1, 7), (1, 7));
    }
}
