//! The argument parsers of every command: the input, split on NUL bytes, is the argument list
//! after each command name in turn. Every parser either returns a spec within the ranges the
//! command promises or refuses, never panics; the integer parser accepts exactly the canonical
//! decimal form of an i64.
#![no_main]

use bloomrs::compact::MIN_ERROR;
use bloomrs::syntax::bf::{self, BloomOptions, DEFAULT_GROWTH};
use bloomrs::syntax::cf;
use bloomrs::syntax::{parse_double, parse_int, Argv, ByteArgs};
use bloomrs::windowed::{MAX_GENERATIONS, MIN_GENERATIONS};
use libfuzzer_sys::fuzz_target;

const DEFAULTS: BloomOptions = BloomOptions {
    capacity: 100,
    error: 0.01,
    growth: DEFAULT_GROWTH,
    scaling: true,
    window: None,
    counting: false,
    compact: false,
    blocked: false,
    static_set: false,
};

/// The module's settings when `bf.bf-window` is set: BF.INSERT creates windowed filters.
const WINDOWED_DEFAULTS: BloomOptions = BloomOptions {
    window: Some(bf::WindowSpec {
        seconds: 3600,
        generations: 8,
    }),
    ..DEFAULTS
};

fuzz_target!(|data: &[u8]| {
    let words: Vec<&[u8]> = data.split(|b| *b == 0).collect();
    for word in &words {
        check_numbers(word);
    }
    let command = |name: &'static [u8]| {
        let mut argv: Vec<&[u8]> = vec![name];
        argv.extend_from_slice(&words);
        argv
    };
    check_bf_reserve(&ByteArgs(&command(b"BF.RESERVE")));
    check_bf_insert(&ByteArgs(&command(b"BF.INSERT")));
    check_bf_others(&ByteArgs(&command(b"BF.INFO")));
    check_bf_others(&ByteArgs(&command(b"BF.SCANDUMP")));
    check_bf_others(&ByteArgs(&command(b"BF.LOADCHUNK")));
    check_cf_reserve(&ByteArgs(&command(b"CF.RESERVE")));
    check_cf_insert(&ByteArgs(&command(b"CF.INSERT")));
    check_cf_chunks(&ByteArgs(&command(b"CF.SCANDUMP")));
    check_cf_chunks(&ByteArgs(&command(b"CF.LOADCHUNK")));
});

fn check_numbers(word: &[u8]) {
    let canonical = std::str::from_utf8(word)
        .ok()
        .and_then(|text| text.parse::<i64>().ok())
        .filter(|value| value.to_string().as_bytes() == word);
    assert_eq!(parse_int(word), canonical);
    if let Some(value) = canonical {
        assert_eq!(parse_double(word), Some(value as f64));
    }
    assert!(!parse_double(word).is_some_and(f64::is_nan));
}

/// Whatever a parser accepts is in the range every kind's constructor and validator accept:
/// growth at least 1 (no truncation of EXPANSION to 32 bits), a window within its bounds,
/// never a counting filter with a window, and each layout with only what it composes with.
fn check_created(options: &BloomOptions) {
    assert!(options.error > 0.0 && options.error < 1.0);
    assert!(options.capacity >= 1 && options.capacity <= i64::MAX as u64);
    assert!(options.growth >= 1, "growth {}", options.growth);
    if let Some(window) = options.window {
        assert!(window.seconds >= 1 && window.seconds <= bf::MAX_WINDOW_SECONDS as u64);
        assert!((MIN_GENERATIONS..=MAX_GENERATIONS).contains(&u32::from(window.generations)));
        assert!(!options.counting);
    }
    // A compact filter grows, with a window (the feed filter) or without, at a rate its
    // fingerprints reach (each generation's share of it when windowed).
    if options.compact {
        assert!(options.scaling);
        let shares = options.window.map_or(1, |w| w.generations);
        assert!(options.error / f64::from(shares) >= MIN_ERROR);
    }
    // A blocked filter is its own layout: neither counting, compact nor windowed.
    if options.blocked {
        assert!(!options.counting && !options.compact && options.window.is_none());
    }
    // So is a static set: a builder of hashes, then a fuse filter.
    if options.static_set {
        assert!(!options.counting && !options.compact && !options.blocked);
        assert!(options.window.is_none());
    }
}

/// Whether a whole word (WINDOW, COUNTING, ...) is among the arguments from `from` on.
fn has_word(args: &ByteArgs, from: usize, word: &str) -> bool {
    (from..args.len()).any(|i| args.bytes(i).eq_ignore_ascii_case(word.as_bytes()))
}

fn check_bf_reserve(args: &ByteArgs) {
    let parsed = bf::parse_bf_reserve(args);
    // The window's four words, COUNTING, COMPACT, BLOCKED and STATIC widen RedisBloom's arity
    // when present.
    let most = 7
        + 4 * usize::from(has_word(args, 4, "WINDOW"))
        + usize::from(has_word(args, 4, "COUNTING"))
        + usize::from(has_word(args, 4, "COMPACT"))
        + usize::from(has_word(args, 4, "BLOCKED"))
        + usize::from(has_word(args, 4, "STATIC"));
    let arity = (4..=most).contains(&args.len());
    assert_eq!(parsed == Err(bf::ArgError::Arity), !arity);
    if let Ok(options) = parsed {
        check_created(&options);
        assert!(options.scaling || options.growth == DEFAULT_GROWTH);
        assert_eq!(options.counting, has_word(args, 4, "COUNTING"));
        assert_eq!(options.window.is_some(), has_word(args, 4, "WINDOW"));
        assert_eq!(options.compact, has_word(args, 4, "COMPACT"));
        assert_eq!(options.blocked, has_word(args, 4, "BLOCKED"));
        assert_eq!(options.static_set, has_word(args, 4, "STATIC"));
    }
}

fn check_bf_insert(args: &ByteArgs) {
    check_bf_insert_with(args, DEFAULTS);
    check_bf_insert_with(args, WINDOWED_DEFAULTS);
    let counting = BloomOptions {
        counting: true,
        ..DEFAULTS
    };
    check_bf_insert_with(args, counting);
    let compact = BloomOptions {
        compact: true,
        ..DEFAULTS
    };
    check_bf_insert_with(args, compact);
    let blocked = BloomOptions {
        blocked: true,
        ..DEFAULTS
    };
    check_bf_insert_with(args, blocked);
}

fn check_bf_insert_with(args: &ByteArgs, defaults: BloomOptions) {
    let Ok(spec) = bf::parse_bf_insert(args, defaults) else {
        return;
    };
    assert!(spec.items_at >= 3 && spec.items_at < args.len());
    let items = args.bytes(spec.items_at - 1);
    assert!(items.first().is_some_and(|b| b.eq_ignore_ascii_case(&b'i')));
    if let Some(options) = spec.create {
        check_created(&options);
    }
}

fn check_bf_others(args: &ByteArgs) {
    if bf::parse_bf_info_field(args).is_ok() {
        assert!((2..=3).contains(&args.len()));
    }
    if bf::parse_bf_scandump_iterator(args).is_ok() {
        assert_eq!(args.len(), 3);
    }
    if bf::parse_bf_loadchunk(args).is_ok() {
        assert_eq!(args.len(), 4);
    }
}

fn check_cf_reserve(args: &ByteArgs) {
    let Ok(params) = cf::parse_cf_reserve(args) else {
        return;
    };
    assert!(args.len() >= 3 && args.len() % 2 == 1);
    assert!((1..=255).contains(&params.bucket_size));
    assert!(params.max_iterations >= 1);
    assert!(params.expansion <= 32768);
    assert!(params.capacity >= 2 * u64::from(params.bucket_size));
    assert!(params.capacity <= i64::MAX as u64);
}

fn check_cf_insert(args: &ByteArgs) {
    let Ok(spec) = cf::parse_cf_insert(args, 1024) else {
        return;
    };
    assert!(spec.items_at >= 3 && spec.items_at < args.len());
    if let Some(capacity) = spec.capacity {
        assert!(capacity >= cf::MIN_INSERT_CAPACITY as u64 && capacity <= i64::MAX as u64);
    }
}

fn check_cf_chunks(args: &ByteArgs) {
    if let Ok(iter) = cf::parse_cf_scandump(args) {
        assert!(iter >= 0 && args.len() == 3);
    }
    if let Ok(iter) = cf::parse_cf_loadchunk(args) {
        assert!(iter != 0 && args.len() == 4);
    }
}
