//! Command argument syntax: every BF.* and CF.* argument vector is turned into a typed spec or
//! a typed error here, in RedisBloom's exact order of checks. Nothing in this module touches
//! Redis, so the parsers are unit-tested and fuzzed without a server; the Redis layer supplies
//! the arguments through [`Argv`] (backed by Redis's own number parsers) and maps the errors to
//! their reply texts.

pub mod bf;
pub mod cf;
pub mod valkey_bloom;

#[cfg(test)]
mod tests;

/// The arguments of one command call; index 0 is the command name, 1 the key.
pub trait Argv {
    fn len(&self) -> usize;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of argument `i`, empty past the end.
    fn bytes(&self, i: usize) -> &[u8];

    /// Argument `i` as Redis's strict 64-bit integer, `None` if it is not one or is missing.
    fn int(&self, i: usize) -> Option<i64>;

    /// Argument `i` as Redis's strict double (never NaN), `None` if it is not one or is missing.
    fn double(&self, i: usize) -> Option<f64>;

    /// Whether argument `i` is `word`, compared case-insensitively as a whole.
    fn is(&self, i: usize, word: &str) -> bool {
        i < self.len() && self.bytes(i).eq_ignore_ascii_case(word.as_bytes())
    }
}

/// Arguments as plain byte strings, read with [`parse_int`] and [`parse_double`].
#[derive(Debug, Clone, Copy)]
pub struct ByteArgs<'a>(pub &'a [&'a [u8]]);

impl Argv for ByteArgs<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn bytes(&self, i: usize) -> &[u8] {
        self.0.get(i).copied().unwrap_or_default()
    }

    fn int(&self, i: usize) -> Option<i64> {
        self.0.get(i).and_then(|bytes| parse_int(bytes))
    }

    fn double(&self, i: usize) -> Option<f64> {
        self.0.get(i).and_then(|bytes| parse_double(bytes))
    }
}

/// Redis's `string2ll`: an optional `-`, then `0` alone or digits without a leading zero, in
/// the i64 range. No `+`, no spaces, no `-0`; exactly the canonical decimal form of an i64.
pub fn parse_int(bytes: &[u8]) -> Option<i64> {
    // Redis refuses 21 bytes or more before looking at them.
    if bytes.is_empty() || bytes.len() >= 21 {
        return None;
    }
    if bytes == b"0" {
        return Some(0);
    }
    let (negative, digits) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, bytes),
    };
    if !matches!(digits.first(), Some(b'1'..=b'9')) || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // Accumulating on the negative side reaches i64::MIN without overflowing.
    let mut value = 0i64;
    for digit in digits {
        value = value
            .checked_mul(10)?
            .checked_sub(i64::from(digit - b'0'))?;
    }
    if negative {
        Some(value)
    } else {
        value.checked_neg()
    }
}

/// An approximation of Redis's `getDoubleFromObject` (C `strtod` over the whole string):
/// optional sign, decimal digits with an optional fraction and exponent, or `inf`/`infinity`
/// in any case; no leading or trailing spaces or garbage; NaN, overflow to infinity and
/// underflow to zero are refused.
///
/// Known differences from glibc's `strtod`: hexadecimal floats (`0x1p3`) are refused here and
/// accepted by Redis; the last digit of a result may round differently at the very edge of the
/// subnormal range. Both only matter to the fuzzer, which compares nothing with Redis.
pub fn parse_double(bytes: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(bytes).ok()?;
    // Rust also parses `nan` and `infinity`; Redis refuses NaN and accepts infinity.
    let value: f64 = text.parse().ok()?;
    if value.is_nan() {
        return None;
    }
    let unsigned = text.trim_start_matches(['+', '-']);
    let spelled_infinite = unsigned
        .get(..3)
        .is_some_and(|head| head.eq_ignore_ascii_case("inf"));
    // strtod reports ERANGE for a finite literal that overflows or underflows to zero.
    if value.is_infinite() && !spelled_infinite {
        return None;
    }
    if value == 0.0 && mantissa_has_nonzero_digit(unsigned) {
        return None;
    }
    Some(value)
}

/// Whether the digits before the exponent are not all zero (`0.000` is zero, `1e-400` is not).
fn mantissa_has_nonzero_digit(unsigned: &str) -> bool {
    unsigned
        .bytes()
        .take_while(|b| *b != b'e' && *b != b'E')
        .any(|b| (b'1'..=b'9').contains(&b))
}
