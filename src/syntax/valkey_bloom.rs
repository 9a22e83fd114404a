//! valkey-bloom's `BF.INSERT` grammar, for the calls that use its own options (`SEED`,
//! `TIGHTENING`, `VALIDATESCALETO`): its checks, in its order, with its numbers read as it
//! reads them (Rust's `str::parse`). A call without those options is RedisBloom's (`bf.rs`).

use super::Argv;
use crate::valkey_bloom::{in_unit_range, ScaleError, ValkeyBloom, FIXED_SEED, MAX_EXPANSION};

/// The words only valkey-bloom's `BF.INSERT` has.
const OWN_WORDS: [&str; 3] = ["SEED", "TIGHTENING", "VALIDATESCALETO"];
/// Every option of either grammar that takes a value.
const VALUED: [&str; 8] = [
    "ERROR",
    "CAPACITY",
    "EXPANSION",
    "SEED",
    "TIGHTENING",
    "VALIDATESCALETO",
    "WINDOW",
    "GENERATIONS",
];

/// What a valkey-bloom filter is made of when `BF.INSERT` creates one, before its options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValkeyDefaults {
    pub capacity: u64,
    pub fp_rate: f64,
    pub tightening: f64,
    /// 0: non-scaling.
    pub expansion: u32,
    /// Whether a new filter draws its seed (else valkey-bloom's fixed seed).
    pub seed_random: bool,
}

/// A valkey-bloom `BF.INSERT`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValkeyInsert {
    pub capacity: u64,
    pub fp_rate: f64,
    pub tightening: f64,
    pub expansion: u32,
    /// The seed given with `SEED`, else None (drawn or fixed as the defaults say).
    pub seed: Option<[u8; 32]>,
    pub seed_random: bool,
    pub create: bool,
    /// Where the items start (the argument count when there are none).
    pub items_at: usize,
}

/// Why valkey-bloom refuses a `BF.INSERT` (its texts in `state::errors`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValkeyArgError {
    Arity,
    BadErrorRate,
    ErrorRateRange,
    BadTightening,
    TighteningRange,
    BadCapacity,
    CapacityZero,
    InvalidSeed,
    BadExpansion,
    UnknownArgument,
    NonScalingWithScaleTo,
    ScaleTo(ScaleError),
}

/// Whether the call uses one of valkey-bloom's own options before its items.
fn uses_own_words(args: &impl Argv) -> bool {
    let mut i = 2;
    while i < args.len() && !args.is(i, "ITEMS") {
        if OWN_WORDS.iter().any(|w| args.is(i, w)) {
            return true;
        }
        i += if VALUED.iter().any(|w| args.is(i, w)) {
            2
        } else {
            1
        };
    }
    false
}

fn text(args: &impl Argv, i: usize) -> String {
    String::from_utf8_lossy(args.bytes(i)).into_owned()
}

/// A number in `(0, 1)` as valkey-bloom reads an error rate or a tightening ratio.
fn unit(
    args: &impl Argv,
    i: usize,
    bad: ValkeyArgError,
    range: ValkeyArgError,
) -> Result<f64, ValkeyArgError> {
    match text(args, i).parse::<f64>() {
        Ok(v) if in_unit_range(v) => Ok(v),
        Ok(_) => Err(range),
        Err(_) => Err(bad),
    }
}

/// A capacity as valkey-bloom reads one (also `VALIDATESCALETO`'s).
fn capacity(args: &impl Argv, i: usize) -> Result<u64, ValkeyArgError> {
    match text(args, i).parse::<i64>() {
        Ok(0) => Err(ValkeyArgError::CapacityZero),
        Ok(v) if v >= 1 => Ok(v.unsigned_abs()),
        _ => Err(ValkeyArgError::BadCapacity),
    }
}

/// valkey-bloom's `BF.INSERT key [ERROR e] [CAPACITY c] [EXPANSION x] [NONSCALING]
/// [TIGHTENING r] [SEED s] [VALIDATESCALETO n] [NOCREATE] [ITEMS item ...]`, when the call
/// uses its own options; None for RedisBloom's calls.
pub fn parse_valkey_insert(
    args: &impl Argv,
    defaults: ValkeyDefaults,
) -> Option<Result<ValkeyInsert, ValkeyArgError>> {
    uses_own_words(args).then(|| parse(args, defaults))
}

fn parse(args: &impl Argv, d: ValkeyDefaults) -> Result<ValkeyInsert, ValkeyArgError> {
    use ValkeyArgError as E;
    let mut spec = ValkeyInsert {
        capacity: d.capacity,
        fp_rate: d.fp_rate,
        tightening: d.tightening,
        expansion: d.expansion,
        seed: None,
        seed_random: d.seed_random,
        create: true,
        items_at: args.len(),
    };
    let mut scale_to = None;
    let mut items = false;
    let mut i = 2;
    while i < args.len() {
        let valued = VALUED.iter().any(|w| args.is(i, w));
        if valued && i + 1 >= args.len() {
            return Err(E::Arity);
        }
        if args.is(i, "ERROR") {
            spec.fp_rate = unit(args, i + 1, E::BadErrorRate, E::ErrorRateRange)?;
        } else if args.is(i, "TIGHTENING") {
            spec.tightening = unit(args, i + 1, E::BadTightening, E::TighteningRange)?;
        } else if args.is(i, "CAPACITY") {
            spec.capacity = capacity(args, i + 1)?;
        } else if args.is(i, "SEED") {
            let seed: [u8; 32] = args.bytes(i + 1).try_into().map_err(|_| E::InvalidSeed)?;
            spec.seed = Some(seed);
            spec.seed_random = seed != FIXED_SEED;
        } else if args.is(i, "NOCREATE") {
            spec.create = false;
        } else if args.is(i, "NONSCALING") {
            spec.expansion = 0;
        } else if args.is(i, "EXPANSION") {
            spec.expansion = text(args, i + 1)
                .parse::<u32>()
                .ok()
                .filter(|x| (1..=MAX_EXPANSION).contains(x))
                .ok_or(E::BadExpansion)?;
        } else if args.is(i, "VALIDATESCALETO") {
            scale_to = Some(capacity(args, i + 1)?);
        } else if args.is(i, "ITEMS") {
            items = true;
            spec.items_at = i + 1;
            break;
        } else {
            return Err(E::UnknownArgument);
        }
        i += if valued { 2 } else { 1 };
    }
    if items && spec.items_at >= args.len() {
        return Err(E::Arity);
    }
    if let Some(target) = scale_to {
        if spec.expansion == 0 {
            return Err(E::NonScalingWithScaleTo);
        }
        ValkeyBloom::scaled_capacity(
            spec.capacity,
            spec.fp_rate,
            spec.tightening,
            spec.expansion,
            crate::valkey_bloom::DEFAULT_OBJECT_LIMIT,
            Some(target),
        )
        .map_err(E::ScaleTo)?;
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::ByteArgs;

    const DEFAULTS: ValkeyDefaults = ValkeyDefaults {
        capacity: 100,
        fp_rate: 0.01,
        tightening: 0.5,
        expansion: 2,
        seed_random: true,
    };

    fn parsed(words: &[&str]) -> Option<Result<ValkeyInsert, ValkeyArgError>> {
        let argv: Vec<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
        parse_valkey_insert(&ByteArgs(&argv), DEFAULTS)
    }

    #[test]
    fn only_its_own_options_make_a_call_valkey_blooms() {
        assert_eq!(parsed(&["BF.INSERT", "k", "ITEMS", "SEED"]), None);
        assert_eq!(
            parsed(&["BF.INSERT", "k", "CAPACITY", "SEED", "ITEMS", "a"]),
            None
        );
        assert_eq!(
            parsed(&["BF.INSERT", "k", "WINDOW", "10", "ITEMS", "a"]),
            None
        );
        let spec = parsed(&["BF.INSERT", "k", "tightening", "0.6", "ITEMS", "a"]);
        assert_eq!(spec.unwrap().unwrap().tightening, 0.6);
    }

    #[test]
    fn its_checks_in_its_order() {
        use ValkeyArgError as E;
        let seed = "s".repeat(32);
        let cases: [(&[&str], Result<(), E>); 12] = [
            (&["SEED", "short"], Err(E::InvalidSeed)),
            (&["SEED", &seed, "ERROR", "x"], Err(E::BadErrorRate)),
            (&["SEED", &seed, "ERROR", "1"], Err(E::ErrorRateRange)),
            (&["TIGHTENING", "x"], Err(E::BadTightening)),
            (&["TIGHTENING", "0"], Err(E::TighteningRange)),
            (&["SEED", &seed, "CAPACITY", "0"], Err(E::CapacityZero)),
            (&["SEED", &seed, "CAPACITY", "-1"], Err(E::BadCapacity)),
            (&["SEED", &seed, "EXPANSION", "11"], Err(E::BadExpansion)),
            (&["SEED", &seed, "BOGUS"], Err(E::UnknownArgument)),
            (&["SEED", &seed, "ITEMS"], Err(E::Arity)),
            (&["SEED"], Err(E::Arity)),
            (
                &["VALIDATESCALETO", "10", "NONSCALING"],
                Err(E::NonScalingWithScaleTo),
            ),
        ];
        for (words, expected) in cases {
            let mut all = vec!["BF.INSERT", "k"];
            all.extend_from_slice(words);
            let got = parsed(&all).unwrap().map(|_| ());
            assert_eq!(got, expected, "{words:?}");
        }
        let over = parsed(&["BF.INSERT", "k", "VALIDATESCALETO", "100000000000"]);
        assert_eq!(over, Some(Err(E::ScaleTo(ScaleError::OverLimit))));
    }

    #[test]
    fn a_seed_is_random_unless_it_is_the_fixed_one() {
        let fixed: Vec<u8> = FIXED_SEED.to_vec();
        let argv: Vec<&[u8]> = vec![b"BF.INSERT", b"k", b"SEED", &fixed, b"ITEMS", b"a"];
        let spec = parse_valkey_insert(&ByteArgs(&argv), DEFAULTS)
            .unwrap()
            .unwrap();
        assert_eq!(spec.seed, Some(FIXED_SEED));
        assert!(!spec.seed_random);
        assert_eq!(spec.items_at, 5);
        let spec = parsed(&["BF.INSERT", "k", "SEED", &"a".repeat(32)])
            .unwrap()
            .unwrap();
        assert!(spec.seed_random);
        assert_eq!(spec.items_at, 4);
    }
}
