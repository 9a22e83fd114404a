//! The syntax of the BF.* commands (reference §4.1–4.9): what each accepts, what it refuses,
//! and in which order it checks.

use super::Argv;

/// Expansion of filters created without one.
pub const DEFAULT_GROWTH: u32 = 2;

/// Why a BF.* argument vector was refused; each variant is one reply text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgError {
    /// Redis's wrong-number-of-arguments error.
    Arity,
    /// BF.RESERVE: the error rate is not a double.
    BadErrorRate,
    /// BF.RESERVE: the error rate is not strictly between 0 and 1.
    ErrorRateRange,
    /// BF.RESERVE: the capacity is not an integer.
    BadCapacity,
    /// BF.RESERVE: the capacity is not positive.
    CapacityRange,
    /// BF.RESERVE: EXPANSION is the last argument.
    NoExpansion,
    /// BF.RESERVE: EXPANSION together with NONSCALING.
    NonScalingExpansion,
    /// BF.RESERVE: the expansion is not an integer.
    BadExpansion,
    /// BF.RESERVE: the expansion is below 1.
    ExpansionRange,
    /// An expansion past 32 bits (deviation D15).
    ExpansionTooLarge,
    /// BF.INSERT: an option word starting with none of `c`, `e`, `i`, `n`.
    InsertUnknownOption,
    /// BF.INSERT: the ERROR value is not a double.
    InsertBadErrorRate,
    /// BF.INSERT: the EXPANSION value is not an integer.
    InsertBadExpansion,
    /// BF.INSERT: the CAPACITY value is not an integer.
    InsertBadCapacity,
    /// BF.INSERT: error rate, capacity or expansion out of range.
    InsertOutOfRange,
    /// BF.INFO: not one of the five field names.
    UnknownInfoField,
    /// BF.SCANDUMP: the iterator is not an integer.
    ScanIteratorNotNumeric,
    /// BF.LOADCHUNK: the iterator is not an integer.
    LoadIteratorNotNumeric,
    /// WINDOW without a whole number of seconds in range.
    WindowRange,
    /// GENERATIONS without an integer in range.
    GenerationsRange,
    /// GENERATIONS for a filter that has no window.
    GenerationsWithoutWindow,
    /// COUNTING together with a window (a counting filter does not forget).
    CountingWithWindow,
    /// COMPACT together with NONSCALING (a compact filter grows by doubling).
    CompactNonScaling,
    /// COMPACT with a window whose generations' share of the error rate is tighter than a
    /// compact filter takes.
    CompactWindowErrorRate,
    /// COMPACT with an error rate tighter than its slots hold up to the largest table.
    CompactErrorRate,
    /// BLOCKED together with COMPACT (two layouts for one filter).
    BlockedWithCompact,
    /// BLOCKED together with COUNTING (a blocked filter's cells are bits).
    BlockedWithCounting,
    /// BLOCKED together with a window.
    BlockedWithWindow,
    /// STATIC together with another layout (WINDOW, COUNTING, COMPACT or BLOCKED).
    StaticWithLayout,
}

/// Longest WINDOW in seconds (ten 365-day years, the core's limit).
pub const MAX_WINDOW_SECONDS: i64 = (crate::windowed::MAX_WINDOW_MS / 1000) as i64;

/// `WINDOW seconds [GENERATIONS g]`: a filter that forgets what is older than the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowSpec {
    pub seconds: u64,
    pub generations: u16,
}

impl WindowSpec {
    /// A window of `seconds` with `generations`, if both are in range.
    pub fn new(seconds: i64, generations: i64) -> Result<Self, ArgError> {
        if !(1..=MAX_WINDOW_SECONDS).contains(&seconds) {
            return Err(ArgError::WindowRange);
        }
        let generations = u16::try_from(generations)
            .ok()
            .filter(|g| {
                (crate::windowed::MIN_GENERATIONS..=crate::windowed::MAX_GENERATIONS)
                    .contains(&u32::from(*g))
            })
            .ok_or(ArgError::GenerationsRange)?;
        Ok(WindowSpec {
            seconds: seconds.unsigned_abs(),
            generations,
        })
    }
}

/// How a Bloom filter is created: by BF.RESERVE, or implicitly by BF.ADD / BF.MADD / BF.INSERT.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BloomOptions {
    pub capacity: u64,
    pub error: f64,
    pub growth: u32,
    pub scaling: bool,
    /// A windowed filter's window (`None` for RedisBloom's filters).
    pub window: Option<WindowSpec>,
    /// `COUNTING` (deviation D12): counters instead of bits, so items can be deleted.
    pub counting: bool,
    /// `COMPACT` (deviation D17): one fingerprint table that doubles, instead of a chain of
    /// links; with `counting`, one that deletes.
    pub compact: bool,
    /// `BLOCKED`: every item's bits in one cache-line block (a chain of blocked links).
    pub blocked: bool,
    /// `STATIC`: a builder of the items' hashes that `BF.FREEZE` turns into a binary fuse
    /// filter (a static set).
    pub static_set: bool,
}

/// BF.INSERT: how to create a missing key (`None` for NOCREATE) and where the items start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BfInsert {
    pub create: Option<BloomOptions>,
    pub items_at: usize,
}

/// A single field of BF.INFO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BfInfoField {
    Capacity,
    Size,
    Filters,
    Items,
    Expansion,
    /// bloomrs's own: the false-positive rate estimated from the filter's fill. Never part
    /// of the full reply, which stays RedisBloom's.
    Rate,
}

/// BF.RESERVE key error_rate capacity [EXPANSION expansion] [NONSCALING]
/// [WINDOW seconds [GENERATIONS g]] [COUNTING] [COMPACT] [BLOCKED] [STATIC]
pub fn parse_bf_reserve(args: &impl Argv) -> Result<BloomOptions, ArgError> {
    // Deviation D3: keywords are looked for among the optional arguments only. RedisBloom's
    // arity is widened by the window options only when WINDOW is there, and by COUNTING
    // (deviation D12) only when it is there.
    let window_at = (4..args.len()).find(|i| args.is(*i, "WINDOW"));
    let counting = (4..args.len()).any(|i| args.is(i, "COUNTING"));
    let compact = (4..args.len()).any(|i| args.is(i, "COMPACT"));
    let blocked = (4..args.len()).any(|i| args.is(i, "BLOCKED"));
    let static_set = (4..args.len()).any(|i| args.is(i, "STATIC"));
    let most = 7
        + if window_at.is_some() { 4 } else { 0 }
        + usize::from(counting)
        + usize::from(compact)
        + usize::from(blocked)
        + usize::from(static_set);
    if !(4..=most).contains(&args.len()) {
        return Err(ArgError::Arity);
    }
    let error = args.double(2).ok_or(ArgError::BadErrorRate)?;
    if !(error > 0.0 && error < 1.0) {
        return Err(ArgError::ErrorRateRange);
    }
    let capacity = args.int(3).ok_or(ArgError::BadCapacity)?;
    if capacity <= 0 {
        return Err(ArgError::CapacityRange);
    }
    let scaling = !(4..args.len()).any(|i| args.is(i, "NONSCALING"));
    let growth = reserve_growth(args, scaling)?;
    let window = reserve_window(args, window_at)?;
    if counting && window.is_some() {
        return Err(ArgError::CountingWithWindow);
    }
    check_compact(compact, scaling, window, error)?;
    check_blocked(blocked, counting, compact, window)?;
    check_static(
        static_set,
        counting || compact || blocked || window.is_some(),
    )?;
    Ok(BloomOptions {
        capacity: capacity.unsigned_abs(),
        error,
        growth,
        scaling,
        window,
        counting,
        compact,
        blocked,
        static_set,
    })
}

/// A static set is its own layout: a builder of hashes, then a fuse filter.
fn check_static(static_set: bool, other_layout: bool) -> Result<(), ArgError> {
    if static_set && other_layout {
        return Err(ArgError::StaticWithLayout);
    }
    Ok(())
}

/// A blocked filter is its own layout: no counters, no fingerprint table, no window.
fn check_blocked(
    blocked: bool,
    counting: bool,
    compact: bool,
    window: Option<WindowSpec>,
) -> Result<(), ArgError> {
    match (blocked, compact, counting, window) {
        (false, ..) => Ok(()),
        (true, true, _, _) => Err(ArgError::BlockedWithCompact),
        (true, _, true, _) => Err(ArgError::BlockedWithCounting),
        (true, _, _, Some(_)) => Err(ArgError::BlockedWithWindow),
        (true, false, false, None) => Ok(()),
    }
}

/// A compact filter grows by splitting; with a window, each generation takes its share of
/// the error rate, which must still be one a compact filter takes.
fn check_compact(
    compact: bool,
    scaling: bool,
    window: Option<WindowSpec>,
    error: f64,
) -> Result<(), ArgError> {
    let tight = |e: f64| e > 0.0 && e < crate::compact::MIN_ERROR;
    match (compact, scaling, window) {
        (true, false, _) => Err(ArgError::CompactNonScaling),
        (true, _, None) if tight(error) => Err(ArgError::CompactErrorRate),
        (true, _, Some(w)) if tight(error / f64::from(w.generations)) => {
            Err(ArgError::CompactWindowErrorRate)
        }
        _ => Ok(()),
    }
}

/// `WINDOW seconds [GENERATIONS g]` among the optional arguments of BF.RESERVE.
fn reserve_window(
    args: &impl Argv,
    window_at: Option<usize>,
) -> Result<Option<WindowSpec>, ArgError> {
    let generations_at = (4..args.len()).find(|i| args.is(*i, "GENERATIONS"));
    let Some(at) = window_at else {
        return match generations_at {
            Some(_) => Err(ArgError::GenerationsWithoutWindow),
            None => Ok(None),
        };
    };
    let seconds = args.int(at + 1).ok_or(ArgError::WindowRange)?;
    let generations = match generations_at {
        Some(g) => args.int(g + 1).ok_or(ArgError::GenerationsRange)?,
        None => i64::from(crate::windowed::DEFAULT_GENERATIONS),
    };
    WindowSpec::new(seconds, generations).map(Some)
}

/// The value after the first EXPANSION among the optional arguments of BF.RESERVE.
fn reserve_growth(args: &impl Argv, scaling: bool) -> Result<u32, ArgError> {
    let Some(at) = (4..args.len()).find(|i| args.is(*i, "EXPANSION")) else {
        return Ok(DEFAULT_GROWTH);
    };
    if at + 1 == args.len() {
        return Err(ArgError::NoExpansion);
    }
    if !scaling {
        return Err(ArgError::NonScalingExpansion);
    }
    let expansion = args.int(at + 1).ok_or(ArgError::BadExpansion)?;
    if expansion < 1 {
        return Err(ArgError::ExpansionRange);
    }
    // RedisBloom keeps the expansion in 32 bits and truncates a larger one (to 0 for 2^32,
    // a filter that cannot grow); here it is refused (deviation D15).
    u32::try_from(expansion).map_err(|_| ArgError::ExpansionTooLarge)
}

/// BF.INSERT's options while they are read; range-checked once all are in.
struct InsertOptions {
    capacity: i64,
    error: f64,
    expansion: i64,
    scaling: bool,
    create: bool,
    window: Option<i64>,
    generations: Option<i64>,
    counting: bool,
    /// COMPACT was given (the module's default applies only where nothing contradicts it).
    compact: bool,
    /// BLOCKED was given (likewise).
    blocked: bool,
    /// STATIC was given.
    static_set: bool,
}

/// Where BF.INSERT goes after one option word.
enum Step {
    Next(usize),
    Items(usize),
}

/// BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING]
/// [WINDOW seconds] [GENERATIONS g] [COUNTING] [COMPACT] [BLOCKED] [STATIC] ITEMS item [item ...]
///
/// `defaults` are the options of a filter created without them (the module's settings).
pub fn parse_bf_insert(args: &impl Argv, defaults: BloomOptions) -> Result<BfInsert, ArgError> {
    if args.len() < 4 {
        return Err(ArgError::Arity);
    }
    let mut options = InsertOptions {
        capacity: i64::try_from(defaults.capacity).unwrap_or(i64::MAX),
        error: defaults.error,
        expansion: i64::from(defaults.growth),
        scaling: defaults.scaling,
        create: true,
        window: None,
        generations: None,
        counting: defaults.counting,
        compact: false,
        blocked: false,
        static_set: false,
    };
    let mut i = 2;
    let items_at = loop {
        if i >= args.len() {
            return Err(ArgError::Arity);
        }
        match insert_option(args, i, &mut options)? {
            Step::Next(next) => i = next,
            Step::Items(at) => break at,
        }
    };
    if items_at >= args.len() {
        return Err(ArgError::Arity);
    }
    // A counting or blocked filter takes no window, not even the module's default.
    let own_window = options.window.is_some() || options.generations.is_some();
    let windowless = options.counting || options.blocked || options.static_set;
    let window = if windowless && !own_window {
        None
    } else {
        insert_window(&options, defaults.window)?
    };
    if options.counting && window.is_some() {
        return Err(ArgError::CountingWithWindow);
    }
    check_compact(options.compact, options.scaling, window, options.error)?;
    check_blocked(options.blocked, options.counting, options.compact, window)?;
    let layout = options.counting || options.compact || options.blocked || window.is_some();
    check_static(options.static_set, layout)?;
    // The module's defaults (bf-compact, then bf-blocked) make compact or blocked what
    // nothing asks otherwise: an explicit BLOCKED is not made compact too.
    let own = options.blocked || options.static_set;
    let compact = options.compact || (defaults.compact && !own && options.scaling);
    let blocked = options.blocked
        || (defaults.blocked
            && !compact
            && !options.counting
            && !options.static_set
            && window.is_none());
    let InsertOptions {
        capacity,
        error,
        expansion,
        scaling,
        create,
        counting,
        static_set,
        ..
    } = options;
    // As in BF.RESERVE, the expansion must fit 32 bits (deviation D15).
    let growth = u32::try_from(expansion).map_err(|_| ArgError::InsertOutOfRange)?;
    if !(error > 0.0 && error < 1.0) || capacity < 1 || growth < 1 {
        return Err(ArgError::InsertOutOfRange);
    }
    let create = create.then_some(BloomOptions {
        capacity: capacity.unsigned_abs(),
        error,
        growth,
        scaling,
        window,
        counting,
        compact,
        blocked,
        static_set,
    });
    Ok(BfInsert { create, items_at })
}

/// BF.INSERT's window: its own WINDOW and GENERATIONS over the module's default window.
fn insert_window(
    options: &InsertOptions,
    default: Option<WindowSpec>,
) -> Result<Option<WindowSpec>, ArgError> {
    let seconds = options
        .window
        .or(default.map(|w| i64::try_from(w.seconds).unwrap_or(i64::MAX)));
    let Some(seconds) = seconds else {
        return match options.generations {
            Some(_) => Err(ArgError::GenerationsWithoutWindow),
            None => Ok(None),
        };
    };
    let generations = options.generations.unwrap_or_else(|| {
        i64::from(default.map_or(crate::windowed::DEFAULT_GENERATIONS, |w| {
            u32::from(w.generations)
        }))
    });
    WindowSpec::new(seconds, generations).map(Some)
}

/// Reads the option word at `i`. RedisBloom looks only at its leading letters: `i` is ITEMS,
/// `er` ERROR, any other `e` EXPANSION, `c` CAPACITY, `n` with `c` third NOCREATE, any other
/// `n` NONSCALING. A repeated option overrides the earlier one. The window options, COUNTING,
/// COMPACT and BLOCKED are whole words (WINDOW, GENERATIONS, COUNTING, COMPACT, BLOCKED), so no
/// word RedisBloom refused changes meaning; COUNTING and COMPACT come before those rules, which
/// would read them as CAPACITY (deviations D12, D17).
fn insert_option(
    args: &impl Argv,
    i: usize,
    options: &mut InsertOptions,
) -> Result<Step, ArgError> {
    let word = args.bytes(i);
    let letter = |n: usize| word.get(n).map(u8::to_ascii_lowercase);
    let has_value = i + 1 < args.len();
    let is = |name: &str| word.eq_ignore_ascii_case(name.as_bytes());
    if is("COUNTING") {
        options.counting = true;
        return Ok(Step::Next(i + 1));
    }
    if is("COMPACT") {
        options.compact = true;
        return Ok(Step::Next(i + 1));
    }
    if is("BLOCKED") {
        options.blocked = true;
        return Ok(Step::Next(i + 1));
    }
    if is("STATIC") {
        options.static_set = true;
        return Ok(Step::Next(i + 1));
    }
    if is("WINDOW") || is("GENERATIONS") {
        if !has_value {
            return Err(ArgError::Arity);
        }
        let (value, refusal) = if is("WINDOW") {
            (&mut options.window, ArgError::WindowRange)
        } else {
            (&mut options.generations, ArgError::GenerationsRange)
        };
        *value = Some(args.int(i + 1).ok_or(refusal)?);
        return Ok(Step::Next(i + 2));
    }
    match letter(0) {
        Some(b'i') => return Ok(Step::Items(i + 1)),
        Some(b'e' | b'c') if !has_value => return Err(ArgError::Arity),
        Some(b'e') if letter(1) == Some(b'r') => {
            options.error = args.double(i + 1).ok_or(ArgError::InsertBadErrorRate)?;
        }
        Some(b'e') => {
            options.expansion = args.int(i + 1).ok_or(ArgError::InsertBadExpansion)?;
        }
        Some(b'c') => {
            options.capacity = args.int(i + 1).ok_or(ArgError::InsertBadCapacity)?;
        }
        Some(b'n') => {
            if letter(2) == Some(b'c') {
                options.create = false;
            } else {
                options.scaling = false;
            }
            return Ok(Step::Next(i + 1));
        }
        _ => return Err(ArgError::InsertUnknownOption),
    }
    Ok(Step::Next(i + 2))
}

/// The arguments of a command that has no key, read as if a key stood at position 1.
struct WithKey<'a, A>(&'a A);

impl<A: Argv> Argv for WithKey<'_, A> {
    fn len(&self) -> usize {
        self.0.len() + 1
    }

    fn bytes(&self, i: usize) -> &[u8] {
        match i {
            0 => self.0.bytes(0),
            1 => b"",
            _ => self.0.bytes(i - 1),
        }
    }

    fn int(&self, i: usize) -> Option<i64> {
        (i >= 2).then(|| self.0.int(i - 1)).flatten()
    }

    fn double(&self, i: usize) -> Option<f64> {
        (i >= 2).then(|| self.0.double(i - 1)).flatten()
    }
}

/// BF.ESTIMATE error_rate capacity [the options of BF.RESERVE]: the same options, checked the
/// same way, with no key.
pub fn parse_bf_estimate(args: &impl Argv) -> Result<BloomOptions, ArgError> {
    parse_bf_reserve(&WithKey(args))
}

/// BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION | RATE]: the one field asked
/// for, or `None` for all. RedisBloom reads the field only after finding the key.
pub fn parse_bf_info_field(args: &impl Argv) -> Result<Option<BfInfoField>, ArgError> {
    const FIELDS: [(&str, BfInfoField); 6] = [
        ("capacity", BfInfoField::Capacity),
        ("size", BfInfoField::Size),
        ("filters", BfInfoField::Filters),
        ("items", BfInfoField::Items),
        ("expansion", BfInfoField::Expansion),
        ("rate", BfInfoField::Rate),
    ];
    match args.len() {
        2 => Ok(None),
        3 => FIELDS
            .iter()
            .find(|(word, _)| args.is(2, word))
            .map(|(_, field)| Some(*field))
            .ok_or(ArgError::UnknownInfoField),
        _ => Err(ArgError::Arity),
    }
}

/// The iterator of BF.SCANDUMP key iterator, which RedisBloom reads only after finding the key
/// (so a missing key wins over a bad iterator). The arity is checked before the key.
pub fn parse_bf_scandump_iterator(args: &impl Argv) -> Result<i64, ArgError> {
    if args.len() != 3 {
        return Err(ArgError::Arity);
    }
    args.int(2).ok_or(ArgError::ScanIteratorNotNumeric)
}

/// BF.LOADCHUNK key iterator data: the iterator, read before the key is opened.
pub fn parse_bf_loadchunk(args: &impl Argv) -> Result<i64, ArgError> {
    if args.len() != 4 {
        return Err(ArgError::Arity);
    }
    args.int(2).ok_or(ArgError::LoadIteratorNotNumeric)
}

#[cfg(test)]
#[path = "bf_tests.rs"]
mod tests;
