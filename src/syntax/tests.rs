//! The number parsers against Redis's documented behaviour, and what the BF.* and CF.*
//! syntax tests share: argument lists written as words, and tables of cases.

use std::fmt::Debug;

use super::{parse_double, parse_int, Argv, ByteArgs};

/// Runs `parse` on an argument list written as words.
pub(super) fn with_args<T>(words: &[&str], parse: impl FnOnce(&ByteArgs) -> T) -> T {
    let bytes: Vec<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
    parse(&ByteArgs(&bytes))
}

/// Asserts that `parse` answers each argument list as its case says.
pub(super) fn assert_parses<T: PartialEq + Debug>(
    parse: impl Fn(&[&str]) -> T,
    cases: &[(&[&str], T)],
) {
    for (words, expected) in cases {
        assert_eq!(&parse(words), expected, "{words:?}");
    }
}

#[test]
fn int_accepts_exactly_the_canonical_form() {
    assert_eq!(parse_int(b"0"), Some(0));
    assert_eq!(parse_int(b"7"), Some(7));
    assert_eq!(parse_int(b"-7"), Some(-7));
    assert_eq!(parse_int(b"9223372036854775807"), Some(i64::MAX));
    assert_eq!(parse_int(b"-9223372036854775808"), Some(i64::MIN));
    for refused in [
        &b""[..],
        b"-",
        b"-0",
        b"00",
        b"01",
        b"+1",
        b" 1",
        b"1 ",
        b"1.0",
        b"1e3",
        b"0x10",
        b"9223372036854775808",
        b"-9223372036854775809",
        b"99999999999999999999",
        b"000000000000000000001",
        b"1\0",
    ] {
        assert_eq!(
            parse_int(refused),
            None,
            "{:?}",
            String::from_utf8_lossy(refused)
        );
    }
}

#[test]
fn int_agrees_with_the_canonical_decimal_form() {
    for value in [
        1,
        9,
        10,
        99,
        100,
        12345,
        i64::MAX - 1,
        i64::MIN + 1,
        -1,
        -10,
    ] {
        assert_eq!(parse_int(value.to_string().as_bytes()), Some(value));
    }
}

#[test]
fn double_accepts_what_strtod_accepts() {
    assert_eq!(parse_double(b"0.01"), Some(0.01));
    assert_eq!(parse_double(b"1e3"), Some(1000.0));
    assert_eq!(parse_double(b"+.5"), Some(0.5));
    assert_eq!(parse_double(b"5."), Some(5.0));
    assert_eq!(parse_double(b"-0"), Some(-0.0));
    assert_eq!(parse_double(b"0e999"), Some(0.0));
    assert_eq!(parse_double(b"inf"), Some(f64::INFINITY));
    assert_eq!(parse_double(b"-Infinity"), Some(f64::NEG_INFINITY));
    assert!(parse_double(b"1e-310").is_some_and(|v| v > 0.0));
}

#[test]
fn double_refuses_nan_garbage_and_range_errors() {
    for refused in [
        &b""[..],
        b"nan",
        b"-NaN",
        b" 1",
        b"1 ",
        b"1x",
        b"1e",
        b".",
        b"infinite",
        b"1e400",
        b"-1e400",
        b"1e-400",
        b"0.5\0",
        b"\xff",
    ] {
        assert_eq!(
            parse_double(refused),
            None,
            "{:?}",
            String::from_utf8_lossy(refused)
        );
    }
}

#[test]
fn byte_args_read_past_the_end_as_missing() {
    let args = ByteArgs(&[b"BF.INFO", b"k"]);
    assert_eq!(args.len(), 2);
    assert_eq!(args.bytes(5), b"");
    assert_eq!(args.int(5), None);
    assert_eq!(args.double(5), None);
    assert!(!args.is(5, ""));
    assert!(args.is(0, "bf.info"));
    assert!(!args.is(0, "bf.inf"));
}
