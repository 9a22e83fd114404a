//! The `CF.*` commands: the arguments parsed by `syntax::cf`, then one call into the cuckoo
//! core, then the reply, the propagation and the keyspace event.

use std::ffi::CStr;

use crate::budget::Budget;
use crate::cuckoo::{CuckooFilter, CuckooParams, InsertError};
use crate::module::ffi::Admission;
use crate::module::ffi::{Args, Ctx, Key, Slot};
use crate::module::state::errors::*;
use crate::module::state::settings;
use crate::module::types::cuckoo::CUCKOO_TYPE;
use crate::syntax::cf::{parse_cf_insert, parse_cf_reserve, CfInsert};
use crate::syntax::ByteArgs;

/// CF.RESERVE key capacity [BUCKETSIZE bucketsize] [MAXITERATIONS maxiterations] [EXPANSION expansion]
pub fn reserve(ctx: Ctx, args: Args) -> CommandResult {
    let params = parse_cf_reserve(&args)?;
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, true);
    match key.slot::<CuckooFilter>(&CUCKOO_TYPE) {
        Slot::Empty => {}
        Slot::Ours(_) => return Err(ITEM_EXISTS.into()),
        Slot::WrongType => return Err(WRONG_TYPE.into()),
    }
    let filter = CuckooFilter::new(params, ctx.admission().limit(0))?;
    key.set(&CUCKOO_TYPE, filter);
    ctx.reply_ok();
    ctx.replicate_verbatim();
    ctx.notify(c"cf.reserve", key_name);
    Ok(())
}

/// How CF.ADD, CF.ADDNX, CF.INSERT and CF.INSERTNX treat one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AddMode {
    /// Always another copy.
    Add,
    /// Only if the fingerprint is not found.
    AddNx,
}

/// How a missing key is created by CF.ADD / CF.ADDNX / CF.INSERT / CF.INSERTNX: the module's
/// settings (RedisBloom 2.8's fixed defaults unless changed).
fn default_params() -> CuckooParams {
    let narrow = |setting: &settings::Numeric, fallback: u16| {
        u16::try_from(setting.get()).unwrap_or(fallback)
    };
    let defaults = CuckooParams::default();
    CuckooParams {
        capacity: settings::CF_INITIAL_SIZE.get().unsigned_abs(),
        bucket_size: narrow(&settings::CF_BUCKET_SIZE, defaults.bucket_size),
        max_iterations: narrow(&settings::CF_MAX_ITERATIONS, defaults.max_iterations),
        expansion: narrow(&settings::CF_EXPANSION, defaults.expansion),
    }
}

/// The key's filter for an insert: the existing one, or a new one of `capacity` (with the
/// defaults otherwise) when `capacity` is given. Returns whether it was created.
fn filter_for_insert<'k>(
    ctx: Ctx,
    args: Args,
    key: &'k mut Key,
    capacity: Option<u64>,
) -> Result<(&'k mut CuckooFilter, bool), CommandError> {
    let mut created = false;
    if matches!(key.slot::<CuckooFilter>(&CUCKOO_TYPE), Slot::Empty) {
        let params = CuckooParams {
            capacity: capacity.ok_or(NOT_FOUND)?,
            ..default_params()
        };
        let filter = CuckooFilter::new(params, ctx.admission().limit(0))?;
        announce_creation(ctx, args, &params, &filter);
        key.set(&CUCKOO_TYPE, filter);
        created = true;
    }
    match key.slot::<CuckooFilter>(&CUCKOO_TYPE) {
        Slot::Ours(filter) => Ok((filter, created)),
        Slot::Empty => Err(NOT_FOUND.into()),
        Slot::WrongType => Err(WRONG_TYPE.into()),
    }
}

/// Deviation D10: a filter created implicitly is propagated as an explicit CF.RESERVE, so a
/// replica or the AOF builds it with the primary's parameters; where CF.RESERVE would refuse
/// them (a CAPACITY below twice a configured bucket size), as `CF.LOADCHUNK key 1 <header>`
/// of the new filter, which every copy loads through the same validator.
fn announce_creation(ctx: Ctx, args: Args, params: &CuckooParams, filter: &CuckooFilter) {
    let Some(key) = args.raw(1) else { return };
    let reserve = [
        params.capacity.to_string().into_bytes(),
        b"BUCKETSIZE".to_vec(),
        params.bucket_size.to_string().into_bytes(),
        b"MAXITERATIONS".to_vec(),
        params.max_iterations.to_string().into_bytes(),
        b"EXPANSION".to_vec(),
        params.expansion.to_string().into_bytes(),
    ];
    let reserve: Vec<&[u8]> = reserve.iter().map(Vec::as_slice).collect();
    let mut argv: Vec<&[u8]> = vec![b"CF.RESERVE", b"key"];
    argv.extend(&reserve);
    if parse_cf_reserve(&ByteArgs(&argv)) == Ok(*params) {
        ctx.replicate(c"CF.RESERVE", key, &reserve);
    } else {
        ctx.replicate(c"CF.LOADCHUNK", key, &[b"1", &filter.encode_header()]);
    }
}

/// RedisBloom refuses every insert once the filter has `CF_MAX_EXPANSIONS` sub-filters. A
/// configured limit binds clients: a command from the primary or the AOF is never refused by
/// it (the primary decided under its own setting).
fn check_expansions(ctx: Ctx, filter: &CuckooFilter) -> CommandResult {
    if !ctx.is_replayed() && u64::from(filter.num_filters()) >= settings::cf_max_expansions() {
        return Err(CF_MAX_EXPANSIONS_REACHED.into());
    }
    Ok(())
}

/// Inserts one item: `Ok(true)` inserted, `Ok(false)` already present (CF.ADDNX only).
fn add_item(
    filter: &mut CuckooFilter,
    item: &[u8],
    mode: AddMode,
    admission: Admission,
) -> Result<bool, InsertError> {
    match mode {
        AddMode::Add => filter.insert(item, admission).map(|()| true),
        AddMode::AddNx => filter.insert_unique(item, admission),
    }
}

/// CF.ADD key item
pub fn add(ctx: Ctx, args: Args) -> CommandResult {
    add_one(ctx, args, AddMode::Add, c"cf.add")
}

/// CF.ADDNX key item
pub fn addnx(ctx: Ctx, args: Args) -> CommandResult {
    add_one(ctx, args, AddMode::AddNx, c"cf.addnx")
}

fn add_one(ctx: Ctx, args: Args, mode: AddMode, event: &CStr) -> CommandResult {
    args.exactly(3)?;
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, true);
    let default_capacity = default_params().capacity;
    let (filter, created) = filter_for_insert(ctx, args, &mut key, Some(default_capacity))?;
    let outcome = check_expansions(ctx, filter).and_then(|()| {
        add_item(filter, args.bytes(2), mode, ctx.admission()).map_err(CommandError::from)
    });
    if let Ok(inserted) = outcome {
        ctx.reply_bool(inserted);
        ctx.replicate_verbatim();
    }
    if created || outcome == Ok(true) {
        ctx.notify(event, key_name);
    }
    outcome.map(|_| ())
}

/// CF.INSERT key [CAPACITY capacity] [NOCREATE] ITEMS item [item ...]
pub fn insert(ctx: Ctx, args: Args) -> CommandResult {
    insert_many(ctx, args, AddMode::Add, c"cf.insert")
}

/// CF.INSERTNX key [CAPACITY capacity] [NOCREATE] ITEMS item [item ...]
pub fn insertnx(ctx: Ctx, args: Args) -> CommandResult {
    insert_many(ctx, args, AddMode::AddNx, c"cf.insertnx")
}

fn insert_many(ctx: Ctx, args: Args, mode: AddMode, event: &CStr) -> CommandResult {
    let CfInsert { capacity, items_at } = parse_cf_insert(&args, default_params().capacity)?;
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, true);
    let (filter, created) = filter_for_insert(ctx, args, &mut key, capacity)?;
    let mut changed = created;
    if let Err(e) = check_expansions(ctx, filter) {
        if changed {
            ctx.notify(event, key_name);
        }
        return Err(e);
    }
    // CF.INSERT answers booleans in RESP3; CF.INSERTNX keeps its integers.
    let booleans = mode == AddMode::Add && ctx.is_resp3();
    ctx.reply_array(args.len() - items_at);
    let mut refused = Vec::new();
    for (at, item) in args.items(items_at).enumerate() {
        let outcome = add_item(filter, item, mode, ctx.admission());
        changed |= outcome == Ok(true);
        if outcome.is_err() {
            refused.push(at);
        }
        match (outcome, booleans) {
            (Ok(inserted), true) => ctx.reply_bool(inserted),
            (Err(_), true) => ctx.reply_bool(false),
            (Ok(inserted), false) => ctx.reply_int(i64::from(inserted)),
            (Err(_), false) => ctx.reply_int(-1),
        }
    }
    // A refused item changed nothing here, and a replica (never limited by memory settings)
    // might take it: only the applied items are propagated then.
    if refused.is_empty() {
        ctx.replicate_verbatim();
    } else {
        // `refused` is in increasing order: one walk beside the items.
        let mut next_refused = refused.iter().peekable();
        let applied: Vec<&[u8]> = (args.items(items_at).enumerate())
            .filter(|(at, _)| next_refused.next_if_eq(&at).is_none())
            .map(|(_, item)| item)
            .collect();
        if !applied.is_empty() {
            let command = match mode {
                AddMode::Add => c"CF.INSERT",
                AddMode::AddNx => c"CF.INSERTNX",
            };
            let mut argv: Vec<&[u8]> = vec![b"NOCREATE", b"ITEMS"];
            argv.extend(applied);
            ctx.replicate(command, key_name, &argv);
        }
    }
    if changed {
        ctx.notify(event, key_name);
    }
    Ok(())
}

/// The key's filter for a read that treats a missing key or another type as empty.
fn with_readable(ctx: Ctx, args: Args, body: impl FnOnce(Option<&CuckooFilter>)) -> CommandResult {
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, false);
    match key.slot::<CuckooFilter>(&CUCKOO_TYPE) {
        Slot::Ours(filter) => body(Some(&*filter)),
        _ => body(None),
    }
    Ok(())
}

/// CF.EXISTS key item
pub fn exists(ctx: Ctx, args: Args) -> CommandResult {
    args.exactly(3)?;
    with_readable(ctx, args, |filter| {
        ctx.reply_bool(filter.is_some_and(|f| f.contains(args.bytes(2))));
    })
}

/// CF.MEXISTS key item [item ...]
pub fn mexists(ctx: Ctx, args: Args) -> CommandResult {
    args.at_least(3)?;
    with_readable(ctx, args, |filter| {
        ctx.reply_array(args.len() - 2);
        for item in args.items(2) {
            ctx.reply_bool(filter.is_some_and(|f| f.contains(item)));
        }
    })
}

/// CF.COUNT key item
pub fn count(ctx: Ctx, args: Args) -> CommandResult {
    args.exactly(3)?;
    with_readable(ctx, args, |filter| {
        let count = filter.map_or(0, |f| f.count(args.bytes(2)));
        ctx.reply_int(i64::try_from(count).unwrap_or(i64::MAX));
    })
}

/// CF.DEL key item
pub fn del(ctx: Ctx, args: Args) -> CommandResult {
    args.exactly(3)?;
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, true);
    let Slot::Ours(filter) = key.slot::<CuckooFilter>(&CUCKOO_TYPE) else {
        return Err(CF_DEL_NOT_FOUND.into());
    };
    let deleted = filter.delete(args.bytes(2));
    ctx.reply_bool(deleted);
    ctx.replicate_verbatim();
    if deleted {
        ctx.notify(c"cf.del", key_name);
    }
    Ok(())
}

/// CF.COMPACT key
pub fn compact(ctx: Ctx, args: Args) -> CommandResult {
    args.exactly(2)?;
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, true);
    let Slot::Ours(filter) = key.slot::<CuckooFilter>(&CUCKOO_TYPE) else {
        return Err(CF_COMPACT_NOT_FOUND.into());
    };
    let before = occupancy(filter);
    let had_deletes = filter.num_deletes() != 0;
    filter.compact(true);
    ctx.reply_ok();
    ctx.replicate_verbatim();
    if had_deletes || occupancy(filter) != before {
        ctx.notify(c"cf.compact", key_name);
    }
    Ok(())
}

/// Occupied slots per sub-filter. Compaction changed the slots exactly when this changed: a
/// move empties a slot of its source, and the newest source loses without gaining.
fn occupancy(filter: &CuckooFilter) -> Vec<usize> {
    filter
        .sub_filters()
        .iter()
        .map(|sub| sub.slots().iter().filter(|slot| **slot != 0).count())
        .collect()
}

/// Opens a key that must hold a cuckoo filter, for reading.
pub(super) fn with_filter(
    ctx: Ctx,
    args: Args,
    body: impl FnOnce(&CuckooFilter) -> CommandResult,
) -> CommandResult {
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, false);
    match key.slot::<CuckooFilter>(&CUCKOO_TYPE) {
        Slot::Ours(filter) => body(filter),
        Slot::Empty => Err(NOT_FOUND.into()),
        Slot::WrongType => Err(WRONG_TYPE.into()),
    }
}

/// CF.INFO key
pub fn info(ctx: Ctx, args: Args) -> CommandResult {
    args.exactly(2)?;
    with_filter(ctx, args, |filter| {
        let fields: [(&CStr, u64); 8] = [
            (c"Size", filter.size_bytes()),
            (c"Number of buckets", filter.num_buckets()),
            (c"Number of filters", u64::from(filter.num_filters())),
            (c"Number of items inserted", filter.num_items()),
            (c"Number of items deleted", filter.num_deletes()),
            (c"Bucket size", u64::from(filter.bucket_size())),
            (c"Expansion rate", u64::from(filter.expansion())),
            (c"Max iterations", u64::from(filter.max_iterations())),
        ];
        ctx.reply_map(fields.len());
        for (name, value) in fields {
            ctx.reply_simple(name);
            // RedisBloom replies the unsigned counters as signed 64-bit integers.
            ctx.reply_int(value as i64);
        }
        Ok(())
    })
}

/// CF.DEBUG key
pub fn debug(ctx: Ctx, args: Args) -> CommandResult {
    args.exactly(2)?;
    with_filter(ctx, args, |filter| {
        let line = format!(
            "bktsize:{} buckets:{} items:{} deletes:{} filters:{} max_iterations:{} expansion:{}",
            filter.bucket_size(),
            filter.num_buckets(),
            filter.num_items(),
            filter.num_deletes(),
            filter.num_filters(),
            filter.max_iterations(),
            filter.expansion()
        );
        ctx.reply_bulk(line.as_bytes());
        Ok(())
    })
}
