//! The `BF.*` commands: the arguments parsed by `syntax::bf`, then one call into the Bloom
//! core, then the reply.

use std::ffi::CStr;

use super::config;
use super::errors::*;
use super::ffi::{Args, Ctx, Slot};
use super::stats;
use super::types::BLOOM_TYPE;
use crate::bloom::{format_g, AddError, Chain, ChunkError, CreateError, HeaderError};
use crate::syntax::bf::{
    parse_bf_info_field, parse_bf_insert, parse_bf_loadchunk, parse_bf_reserve,
    parse_bf_scandump_iterator, ArgError, BfInfoField, BloomOptions, DEFAULT_GROWTH,
};

/// How a missing key is created by BF.ADD / BF.MADD / BF.INSERT without options: the
/// module's settings (`bf-expansion-factor` 0 means non-scaling, as in RedisBloom 8).
fn default_options() -> BloomOptions {
    let expansion = config::BF_EXPANSION.get();
    BloomOptions {
        capacity: config::bf_initial_size(),
        error: config::bf_error_rate(),
        growth: u32::try_from(expansion)
            .ok()
            .filter(|g| *g > 0)
            .unwrap_or(DEFAULT_GROWTH),
        scaling: expansion != 0,
    }
}

/// The reply text of each BF.* argument error.
fn arg_error(e: ArgError) -> CommandError {
    let text = match e {
        ArgError::Arity => return CommandError::Arity,
        ArgError::BadErrorRate => BAD_ERROR_RATE,
        ArgError::ErrorRateRange => ERROR_RATE_RANGE,
        ArgError::BadCapacity => BAD_CAPACITY,
        ArgError::CapacityRange => CAPACITY_RANGE,
        ArgError::NoExpansion => NO_EXPANSION,
        ArgError::NonScalingExpansion => NONSCALING_EXPAND,
        ArgError::BadExpansion => BAD_EXPANSION,
        ArgError::ExpansionRange => EXPANSION_RANGE,
        ArgError::InsertUnknownOption => INSERT_UNKNOWN_ARGUMENT,
        ArgError::InsertBadErrorRate => INSERT_BAD_ERROR_RATE,
        ArgError::InsertBadExpansion => INSERT_BAD_EXPANSION,
        ArgError::InsertBadCapacity => INSERT_BAD_CAPACITY,
        ArgError::InsertOutOfRange => INSERT_BAD_ARGUMENT,
        ArgError::UnknownInfoField => INVALID_INFO_FIELD,
        ArgError::ScanIteratorNotNumeric => SCANDUMP_NOT_NUMERIC,
        ArgError::LoadIteratorNotNumeric => LOADCHUNK_NOT_NUMERIC,
    };
    CommandError::Reply(text)
}

fn create_error(e: CreateError) -> CommandError {
    match e {
        CreateError::TooLarge => INSUFFICIENT_MEMORY_CREATE.into(),
        CreateError::Invalid => BF_COULD_NOT_CREATE.into(),
    }
}

fn add_error(e: AddError) -> &'static CStr {
    match e {
        AddError::Full => BF_FULL,
        AddError::CannotGrow => BF_PROBLEM_INSERTING,
    }
}

/// BF.RESERVE key error_rate capacity [EXPANSION expansion] [NONSCALING]
pub fn reserve(ctx: Ctx, args: Args) -> CommandResult {
    let options = parse_bf_reserve(&args).map_err(arg_error)?;
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, true);
    match key.slot::<Chain>(&BLOOM_TYPE) {
        Slot::Empty => {}
        Slot::Ours(_) => return Err(ITEM_EXISTS.into()),
        Slot::WrongType => return Err(WRONG_TYPE.into()),
    }
    let chain = Chain::new(
        options.capacity,
        options.error,
        options.growth,
        options.scaling,
        config::max_filter_bytes(),
    )
    .map_err(create_error)?;
    key.set(&BLOOM_TYPE, chain);
    ctx.reply_ok();
    ctx.replicate_verbatim();
    ctx.notify(c"bf.reserve", key_name);
    Ok(())
}

/// BF.ADD key item
pub fn add(ctx: Ctx, args: Args) -> CommandResult {
    if args.len() != 3 {
        return Err(CommandError::Arity);
    }
    insert_items(ctx, args, 2, Some(default_options()), false, c"bf.add")
}

/// BF.MADD key item [item ...]
pub fn madd(ctx: Ctx, args: Args) -> CommandResult {
    if args.len() < 3 {
        return Err(CommandError::Arity);
    }
    insert_items(ctx, args, 2, Some(default_options()), true, c"bf.madd")
}

/// BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] ITEMS item [item ...]
pub fn insert(ctx: Ctx, args: Args) -> CommandResult {
    let spec = parse_bf_insert(&args, default_options()).map_err(arg_error)?;
    insert_items(ctx, args, spec.items_at, spec.create, true, c"bf.insert")
}

/// Adds `args[first..]` to the key, creating it with `create` when missing.
fn insert_items(
    ctx: Ctx,
    args: Args,
    first: usize,
    create: Option<BloomOptions>,
    multi: bool,
    event: &CStr,
) -> CommandResult {
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, true);
    let max_bytes = config::max_filter_bytes();
    let mut changed = false;
    let chain = match (key.slot::<Chain>(&BLOOM_TYPE), create) {
        (Slot::Ours(chain), _) => chain,
        (Slot::WrongType, _) => return Err(WRONG_TYPE.into()),
        (Slot::Empty, None) => return Err(NOT_FOUND.into()),
        (Slot::Empty, Some(o)) => {
            let chain = Chain::new(o.capacity, o.error, o.growth, o.scaling, max_bytes)
                .map_err(create_error)?;
            replicate_creation(ctx, args, &o);
            changed = true;
            key.set(&BLOOM_TYPE, chain)
        }
    };
    if multi {
        ctx.reply_array_postponed();
    }
    let mut replied = 0;
    chain.add_each(args.items(first), max_bytes, |outcome| {
        replied += 1;
        match outcome {
            Ok(added) => {
                changed |= added;
                ctx.reply_bool(added);
                true
            }
            // A full non-scaling filter ends the batch; a failed scale-out does not.
            Err(e) => {
                ctx.reply_error(add_error(e));
                e != AddError::Full
            }
        }
    });
    if multi {
        ctx.set_array_len(replied);
    }
    ctx.replicate_verbatim();
    if changed {
        ctx.notify(event, key_name);
    }
    Ok(())
}

/// Deviation D10: a filter created implicitly is propagated as an explicit BF.RESERVE, so a
/// replica or the AOF builds it with the primary's parameters, not its own defaults.
fn replicate_creation(ctx: Ctx, args: Args, o: &BloomOptions) {
    let Some(key) = args.raw(1) else { return };
    let error = format!("{:?}", o.error);
    let capacity = o.capacity.to_string();
    if o.scaling {
        let growth = o.growth.to_string();
        ctx.replicate(
            c"BF.RESERVE",
            key,
            &[
                error.as_bytes(),
                capacity.as_bytes(),
                b"EXPANSION",
                growth.as_bytes(),
            ],
        );
    } else {
        ctx.replicate(
            c"BF.RESERVE",
            key,
            &[error.as_bytes(), capacity.as_bytes(), b"NONSCALING"],
        );
    }
}

/// BF.EXISTS key item
pub fn exists(ctx: Ctx, args: Args) -> CommandResult {
    if args.len() != 3 {
        return Err(CommandError::Arity);
    }
    check_items(ctx, args, false)
}

/// BF.MEXISTS key item [item ...]
pub fn mexists(ctx: Ctx, args: Args) -> CommandResult {
    if args.len() < 3 {
        return Err(CommandError::Arity);
    }
    check_items(ctx, args, true)
}

fn check_items(ctx: Ctx, args: Args, multi: bool) -> CommandResult {
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, false);
    // A missing key or one of another type answers "not present" for every item.
    let chain = match key.slot::<Chain>(&BLOOM_TYPE) {
        Slot::Ours(chain) => Some(&*chain),
        _ => None,
    };
    if multi {
        ctx.reply_array(args.len() - 2);
    }
    match chain {
        Some(chain) => chain.contains_each(args.items(2), |found| ctx.reply_bool(found)),
        None => args.items(2).for_each(|_| ctx.reply_bool(false)),
    }
    Ok(())
}

/// Opens a key that must hold a Bloom filter, for reading.
fn with_chain(
    ctx: Ctx,
    args: Args,
    body: impl FnOnce(&mut Chain) -> CommandResult,
) -> CommandResult {
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, false);
    match key.slot::<Chain>(&BLOOM_TYPE) {
        Slot::Ours(chain) => body(chain),
        Slot::Empty => Err(NOT_FOUND.into()),
        Slot::WrongType => Err(WRONG_TYPE.into()),
    }
}

/// BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION]
pub fn info(ctx: Ctx, args: Args) -> CommandResult {
    if !(2..=3).contains(&args.len()) {
        return Err(CommandError::Arity);
    }
    with_chain(ctx, args, |chain| {
        let growth = chain.is_scaling().then_some(i64::from(chain.growth));
        let fields: [(BfInfoField, &CStr, Option<i64>); 5] = [
            (
                BfInfoField::Capacity,
                c"Capacity",
                Some(chain.capacity() as i64),
            ),
            (
                BfInfoField::Size,
                c"Size",
                Some(chain.reported_bytes() as i64),
            ),
            (
                BfInfoField::Filters,
                c"Number of filters",
                Some(chain.links.len() as i64),
            ),
            (
                BfInfoField::Items,
                c"Number of items inserted",
                Some(chain.size as i64),
            ),
            (BfInfoField::Expansion, c"Expansion rate", growth),
        ];
        let reply_value = |value: Option<i64>| match value {
            Some(v) => ctx.reply_int(v),
            None => ctx.reply_null(),
        };
        // RedisBloom reads the field only once the key is found.
        let Some(wanted) = parse_bf_info_field(&args).map_err(arg_error)? else {
            ctx.reply_map(fields.len());
            for (_, name, value) in fields {
                ctx.reply_simple(name);
                reply_value(value);
            }
            return Ok(());
        };
        let (_, name, value) = fields
            .into_iter()
            .find(|(field, _, _)| *field == wanted)
            .ok_or(INVALID_INFO_FIELD)?;
        if ctx.is_resp3() {
            ctx.reply_map(1);
            ctx.reply_simple(name);
        } else {
            ctx.reply_array(1);
        }
        reply_value(value);
        Ok(())
    })
}

/// BF.CARD key
pub fn card(ctx: Ctx, args: Args) -> CommandResult {
    if args.len() != 2 {
        return Err(CommandError::Arity);
    }
    match with_chain(ctx, args, |chain| {
        ctx.reply_int(chain.size as i64);
        Ok(())
    }) {
        Err(CommandError::Reply(e)) if e == NOT_FOUND => {
            ctx.reply_int(0);
            Ok(())
        }
        other => other,
    }
}

/// BF.DEBUG key
pub fn debug(ctx: Ctx, args: Args) -> CommandResult {
    if args.len() != 2 {
        return Err(CommandError::Arity);
    }
    with_chain(ctx, args, |chain| {
        ctx.reply_array(chain.links.len() + 1);
        ctx.reply_bulk(format!("size:{}", chain.size).as_bytes());
        let width = if chain.is_64bit() { 64 } else { 32 };
        for link in &chain.links {
            let bits = if link.bits == 0 {
                1u64 << link.n2
            } else {
                link.bits
            };
            let line = format!(
                "bytes:{} bits:{} hashes:{} hashwidth:{} capacity:{} size:{} ratio:{}",
                link.bytes(),
                bits,
                link.hashes,
                width,
                link.entries,
                link.size,
                format_g(link.error)
            );
            ctx.reply_bulk(line.as_bytes());
        }
        Ok(())
    })
}

/// BF.SCANDUMP key iterator
pub fn scandump(ctx: Ctx, args: Args) -> CommandResult {
    if args.len() != 3 {
        return Err(CommandError::Arity);
    }
    with_chain(ctx, args, |chain| {
        // RedisBloom reads the iterator only once the key is found.
        let iter = parse_bf_scandump_iterator(&args).map_err(arg_error)?;
        ctx.reply_array(2);
        if iter == 0 {
            ctx.reply_int(1);
            ctx.reply_bulk(&chain.encode_header());
            return Ok(());
        }
        match chain.chunk_at(iter) {
            Some(chunk) => {
                ctx.reply_int(chunk.next);
                ctx.reply_bulk(chunk.bytes);
            }
            None => {
                ctx.reply_int(0);
                ctx.reply_bulk(b"");
            }
        }
        Ok(())
    })
}

/// BF.LOADCHUNK key iterator data
pub fn loadchunk(ctx: Ctx, args: Args) -> CommandResult {
    let iter = parse_bf_loadchunk(&args).map_err(arg_error)?;
    let data = args.bytes(3);
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, true);
    match key.slot::<Chain>(&BLOOM_TYPE) {
        Slot::WrongType => return Err(WRONG_TYPE.into()),
        Slot::Empty if iter != 1 => return Err(NOT_FOUND.into()),
        Slot::Empty => {
            let chain = Chain::from_header(data, config::max_filter_bytes()).map_err(|e| {
                stats::count(&stats::REJECTED_CHUNKS);
                match e {
                    HeaderError::BadData => BAD_DATA,
                    HeaderError::TooLarge => INSUFFICIENT_MEMORY_CREATE,
                }
            })?;
            key.set(&BLOOM_TYPE, chain);
        }
        Slot::Ours(chain) => chain.load_chunk(iter, data).map_err(|e| {
            stats::count(&stats::REJECTED_CHUNKS);
            match e {
                ChunkError::BadData => BAD_DATA,
                ChunkError::NoLink => NO_LINK,
                ChunkError::TooBig => CHUNK_TOO_BIG,
            }
        })?,
    }
    ctx.reply_ok();
    ctx.replicate_verbatim();
    ctx.notify(c"bf.loadchunk", key_name);
    Ok(())
}
