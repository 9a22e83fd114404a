//! The `BF.*` commands: the arguments parsed by `syntax::bf`, then one call into whatever
//! kind of Bloom filter the key holds (`kinds`), then the reply.

use std::ffi::CStr;

use crate::bloom::{format_g, AddError, MAX_CHUNK};
use crate::budget::Budget;
use crate::counting::DeleteError;
use crate::module::ffi::{Args, Ctx, Slot};
use crate::module::kinds::{self, Applied, BloomValue, ForeignInfo, InfoValue, Write};
use crate::module::state::errors::*;
use crate::module::state::settings;
use crate::module::state::stats;
use crate::syntax::bf::{
    parse_bf_estimate, parse_bf_info_field, parse_bf_insert, parse_bf_loadchunk, parse_bf_reserve,
    parse_bf_scandump_iterator, BfInfoField, BloomOptions, DEFAULT_GROWTH,
};
use crate::syntax::valkey_bloom::parse_valkey_insert;
use crate::syntax::ByteArgs;

/// How a missing key is created by BF.ADD / BF.MADD / BF.INSERT without options: the
/// module's settings (`bf-expansion-factor` 0 means non-scaling, as in RedisBloom 8).
fn default_options() -> BloomOptions {
    let expansion = settings::BF_EXPANSION.get();
    let window = settings::bf_window();
    let scaling = expansion != 0;
    let compact = settings::bf_compact() && scaling;
    BloomOptions {
        capacity: settings::bf_initial_size(),
        error: settings::bf_error_rate(),
        growth: u32::try_from(expansion)
            .ok()
            .filter(|g| *g > 0)
            .unwrap_or(DEFAULT_GROWTH),
        scaling,
        window,
        counting: false,
        // Compact wherever it grows (with bf-window: a compact windowed filter).
        compact,
        // Blocked where nothing else is (bf-compact wins over bf-blocked).
        blocked: settings::bf_blocked() && !compact && window.is_none(),
        static_set: false,
    }
}

/// BF.RESERVE key error_rate capacity [EXPANSION expansion] [NONSCALING]
pub fn reserve(ctx: Ctx, args: Args) -> CommandResult {
    let options = parse_bf_reserve(&args)?;
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, true);
    match kinds::lookup(&mut key) {
        Slot::Empty => {}
        Slot::Ours(_) => return Err(ITEM_EXISTS.into()),
        Slot::WrongType => return Err(WRONG_TYPE.into()),
    }
    let mut write = Write::new(ctx);
    let (_, announced) = kinds::create(&mut key, &options, &mut write)?;
    write.verbatim = !announced;
    ctx.reply_ok();
    write.finish(ctx, &mut key, key_name, &Applied::none());
    ctx.notify(c"bf.reserve", key_name);
    Ok(())
}

/// BF.ADD key item
pub fn add(ctx: Ctx, args: Args) -> CommandResult {
    args.exactly(3)?;
    insert_items(ctx, args, 2, Some(default_options()), Reply::One, c"bf.add")
}

/// BF.MADD key item [item ...]
pub fn madd(ctx: Ctx, args: Args) -> CommandResult {
    args.at_least(3)?;
    insert_items(
        ctx,
        args,
        2,
        Some(default_options()),
        Reply::Each,
        c"bf.madd",
    )
}

/// BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] ITEMS item [item ...]
pub fn insert(ctx: Ctx, args: Args) -> CommandResult {
    // valkey-bloom's own options (SEED, TIGHTENING, VALIDATESCALETO): its grammar and filter.
    let dialect = kinds::valkey_bloom::insert_defaults();
    if let Some(spec) = parse_valkey_insert(&args, dialect) {
        let spec = spec?;
        kinds::valkey_bloom::create_for_insert(ctx, args, &spec)?;
        let reply = Reply::EachPropagatingItems;
        return insert_items(ctx, args, spec.items_at, None, reply, c"bf.insert");
    }
    let spec = parse_bf_insert(&args, default_options())?;
    let reply = Reply::EachPropagatingItems;
    insert_items(ctx, args, spec.items_at, spec.create, reply, c"bf.insert")
}

/// How an add command replies, and what it propagates when every item applied.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reply {
    /// One integer (BF.ADD); the command is propagated.
    One,
    /// An array (BF.MADD); the command is propagated.
    Each,
    /// An array (BF.INSERT), and the items are propagated as `BF.MADD`: the options were read
    /// against this server's settings (`bf-window` decides whether `GENERATIONS` alone is
    /// valid), which a replica must not read them against again.
    EachPropagatingItems,
}

/// Adds `args[first..]` to the key, creating it with `create` when missing. Propagates the
/// creation as an explicit one (deviation D10), then the command when every item applied,
/// else the applied items only (see [`Write::finish`]).
fn insert_items(
    ctx: Ctx,
    args: Args,
    first: usize,
    create: Option<BloomOptions>,
    reply: Reply,
    event: &CStr,
) -> CommandResult {
    let multi = reply != Reply::One;
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, true);
    let mut write = Write::new(ctx);
    if reply == Reply::EachPropagatingItems {
        write.verbatim = false;
    }
    let mut changed = false;
    let filter = match (kinds::lookup(&mut key), create) {
        (Slot::Ours(filter), _) => filter,
        (Slot::WrongType, _) => return Err(WRONG_TYPE.into()),
        (Slot::Empty, None) => return Err(NOT_FOUND.into()),
        (Slot::Empty, Some(o)) => {
            let (filter, announced) = kinds::create(&mut key, &o, &mut write)?;
            if !announced {
                announce_creation(&mut write, &o, &*filter);
            }
            changed = true;
            filter
        }
    };
    if multi {
        ctx.reply_array_postponed();
    }
    let integers = filter.answers_integers();
    let mut applied = Applied::of(args, first);
    let mut answer = |outcome: Result<bool, AddError>| {
        applied.record(outcome.is_ok());
        match outcome {
            Ok(added) => {
                changed |= added;
                reply_answer(ctx, integers, added);
                true
            }
            // A full non-scaling filter ends the batch; a failed scale-out does not.
            Err(e) => {
                ctx.reply_refusal(e.text());
                e != AddError::Full
            }
        }
    };
    if multi {
        filter.add_each(&mut args.items(first), &mut write, &mut answer);
    } else {
        answer(filter.add_one(args.bytes(first), &mut write));
    }
    if multi {
        ctx.set_array_len(applied.answered());
    }
    write.finish(ctx, &mut key, key_name, &applied);
    if changed {
        ctx.notify(event, key_name);
    }
    Ok(())
}

/// Deviation D10: a filter created implicitly is propagated as an explicit BF.RESERVE, so a
/// replica or the AOF builds it with the primary's parameters, not its own defaults; where
/// BF.RESERVE cannot say them all (a non-scaling filter keeps an expansion BF.RESERVE refuses
/// to take), as `BF.LOADCHUNK key 1 <header>` of the new filter, which every copy loads
/// through the same validator.
fn announce_creation(write: &mut Write, options: &BloomOptions, filter: &dyn BloomValue) {
    let args = reserve_args(options);
    let mut argv: Vec<&[u8]> = vec![b"BF.RESERVE", b"key"];
    argv.extend(args.iter().map(Vec::as_slice));
    if parse_bf_reserve(&ByteArgs(&argv)) == Ok(*options) {
        write.effect(c"BF.RESERVE", args);
    } else {
        write.effect(c"BF.LOADCHUNK", vec![b"1".to_vec(), filter.header()]);
    }
}

/// BF.RESERVE's arguments after the key for `o`.
fn reserve_args(o: &BloomOptions) -> Vec<Vec<u8>> {
    let mut args = vec![
        format!("{:?}", o.error).into_bytes(),
        o.capacity.to_string().into_bytes(),
    ];
    if o.scaling {
        args.push(b"EXPANSION".to_vec());
        args.push(o.growth.to_string().into_bytes());
    } else {
        args.push(b"NONSCALING".to_vec());
    }
    if let Some(window) = o.window {
        args.push(b"WINDOW".to_vec());
        args.push(window.seconds.to_string().into_bytes());
        args.push(b"GENERATIONS".to_vec());
        args.push(window.generations.to_string().into_bytes());
    }
    if o.counting {
        args.push(b"COUNTING".to_vec());
    }
    if o.compact {
        args.push(b"COMPACT".to_vec());
    }
    if o.blocked {
        args.push(b"BLOCKED".to_vec());
    }
    if o.static_set {
        args.push(b"STATIC".to_vec());
    }
    args
}

/// BF.DEL key item
pub fn del(ctx: Ctx, args: Args) -> CommandResult {
    args.exactly(3)?;
    delete_items(ctx, args, false)
}

/// BF.MDEL key item [item ...]
pub fn mdel(ctx: Ctx, args: Args) -> CommandResult {
    args.at_least(3)?;
    delete_items(ctx, args, true)
}

/// Deletes `args[2..]` from a counting filter: 1 deleted, 0 not deleted (absent, or held by
/// more than one link, so which one took its adds is unknown).
fn delete_items(ctx: Ctx, args: Args, multi: bool) -> CommandResult {
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, true);
    let mut write = Write::new(ctx);
    let deletes = match kinds::lookup(&mut key) {
        Slot::Ours(filter) => filter.deletes().ok_or(NOT_COUNTING)?,
        Slot::Empty => return Err(NOT_FOUND.into()),
        Slot::WrongType => return Err(WRONG_TYPE.into()),
    };
    if multi {
        ctx.reply_array(args.len() - 2);
    }
    let mut changed = false;
    deletes.delete_each(
        &mut args.items(2),
        &mut write,
        &mut |outcome| match outcome {
            Ok(deleted) => {
                changed |= deleted;
                ctx.reply_bool(deleted);
            }
            // Nothing changed: the item stays, at worst as a false positive. An error here
            // would be one on every replica too, so the reply is 0 and INFO bf counts it.
            Err(DeleteError::Ambiguous) => {
                stats::count(&stats::AMBIGUOUS_DELETES);
                ctx.reply_bool(false);
            }
        },
    );
    write.finish(ctx, &mut key, key_name, &Applied::none());
    if changed {
        ctx.notify(c"bf.del", key_name);
    }
    Ok(())
}

/// BF.EXISTS key item
pub fn exists(ctx: Ctx, args: Args) -> CommandResult {
    args.exactly(3)?;
    check_items(ctx, args, false)
}

/// BF.MEXISTS key item [item ...]
pub fn mexists(ctx: Ctx, args: Args) -> CommandResult {
    args.at_least(3)?;
    check_items(ctx, args, true)
}

fn check_items(ctx: Ctx, args: Args, multi: bool) -> CommandResult {
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, false);
    // A missing key or one of another type answers "not present" for every item.
    let filter = match kinds::lookup(&mut key) {
        Slot::Ours(filter) => Some(&*filter),
        _ => None,
    };
    if !multi {
        let found = filter.is_some_and(|filter| filter.contains_one(args.bytes(2)));
        reply_answer(ctx, filter.is_some_and(|f| f.answers_integers()), found);
        return Ok(());
    }
    ctx.reply_array(args.len() - 2);
    match filter {
        Some(filter) => {
            let integers = filter.answers_integers();
            let answer = &mut |found| reply_answer(ctx, integers, found);
            filter.contains_each(&mut args.items(2), answer);
        }
        None => args.items(2).for_each(|_| ctx.reply_bool(false)),
    }
    Ok(())
}

/// An add's or a lookup's answer: RedisBloom's boolean, or an integer for a kind that answers
/// so in RESP3 too.
fn reply_answer(ctx: Ctx, integers: bool, answer: bool) {
    if integers {
        ctx.reply_int(i64::from(answer));
    } else {
        ctx.reply_bool(answer);
    }
}

/// Opens a key that must hold a Bloom filter, for reading.
fn with_filter(
    ctx: Ctx,
    args: Args,
    body: impl FnOnce(&mut dyn BloomValue) -> CommandResult,
) -> CommandResult {
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, false);
    match kinds::lookup(&mut key) {
        Slot::Ours(filter) => body(filter),
        Slot::Empty => Err(NOT_FOUND.into()),
        Slot::WrongType => Err(WRONG_TYPE.into()),
    }
}

/// BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION | RATE]
pub fn info(ctx: Ctx, args: Args) -> CommandResult {
    if !(2..=3).contains(&args.len()) {
        return Err(CommandError::Arity);
    }
    with_filter(ctx, args, |filter| {
        let rate_asked = args.len() == 3 && args.bytes(2).eq_ignore_ascii_case(b"RATE");
        if let Some(foreign) = filter.foreign_info().filter(|_| !rate_asked) {
            return foreign_info(ctx, args, foreign);
        }
        let info = filter.info();
        let standard: [(Option<BfInfoField>, &CStr, Option<i64>); 5] = [
            (
                Some(BfInfoField::Capacity),
                c"Capacity",
                Some(info.capacity as i64),
            ),
            (Some(BfInfoField::Size), c"Size", Some(info.size as i64)),
            (
                Some(BfInfoField::Filters),
                c"Number of filters",
                Some(info.filters as i64),
            ),
            (
                Some(BfInfoField::Items),
                c"Number of items inserted",
                Some(info.items as i64),
            ),
            (
                Some(BfInfoField::Expansion),
                c"Expansion rate",
                info.expansion.map(i64::from),
            ),
        ];
        let extra = info
            .extra
            .iter()
            .map(|(name, value)| (None, *name, Some(*value)));
        let fields: Vec<_> = standard.into_iter().chain(extra).collect();
        let reply_value = |value: Option<i64>| match value {
            Some(v) => ctx.reply_int(v),
            None => ctx.reply_null(),
        };
        // RedisBloom reads the field only once the key is found.
        let Some(wanted) = parse_bf_info_field(&args)? else {
            ctx.reply_map(fields.len());
            for (_, name, value) in fields {
                ctx.reply_simple(name);
                reply_value(value);
            }
            return Ok(());
        };
        let one_field = |name: &CStr| {
            if ctx.is_resp3() {
                ctx.reply_map(1);
                ctx.reply_simple(name);
            } else {
                ctx.reply_array(1);
            }
        };
        if wanted == BfInfoField::Rate {
            one_field(c"Rate");
            ctx.reply_bulk(format_g(filter.estimated_rate()).as_bytes());
            return Ok(());
        }
        let (_, name, value) = fields
            .into_iter()
            .find(|(field, _, _)| *field == Some(wanted))
            .ok_or(INVALID_INFO_FIELD)?;
        one_field(name);
        reply_value(value);
        Ok(())
    })
}

/// BF.ESTIMATE error_rate capacity [the options of BF.RESERVE]: the `Size` a filter of that
/// kind holding `capacity` items would report, and its bits per item; creates nothing.
pub fn estimate(ctx: Ctx, args: Args) -> CommandResult {
    let options = parse_bf_estimate(&args)?;
    let size = kinds::estimated_size(&options)?;
    let bits_per_item = size as f64 * 8.0 / options.capacity as f64;
    ctx.reply_map(2);
    ctx.reply_simple(c"Size");
    ctx.reply_int(stats::saturating(size));
    ctx.reply_simple(c"Bits per item");
    ctx.reply_bulk(format_g(bits_per_item).as_bytes());
    Ok(())
}

/// BF.INFO of a kind that answers in another module's words: every field as a flat array,
/// or one field bare (that module's reply shapes, in RESP2 and RESP3 alike).
fn foreign_info(ctx: Ctx, args: Args, foreign: ForeignInfo) -> CommandResult {
    let reply_value = |value: InfoValue| match value {
        InfoValue::Int(v) => ctx.reply_int(v),
        InfoValue::Double(v) => ctx.reply_double(v),
        InfoValue::Null => ctx.reply_null(),
        InfoValue::Refused(_) => {}
    };
    let refused = |value: &InfoValue| match value {
        InfoValue::Refused(text) => Some(*text),
        _ => None,
    };
    if args.len() == 2 {
        if let Some(text) = foreign.fields.iter().find_map(|(_, _, v)| refused(v)) {
            return Err(CommandError::Reply(text));
        }
        ctx.reply_array(foreign.fields.len() * 2);
        for (name, _, value) in foreign.fields {
            ctx.reply_simple(name);
            reply_value(value);
        }
        return Ok(());
    }
    let wanted = args.bytes(2);
    let (_, _, value) = foreign
        .fields
        .into_iter()
        .find(|(_, keyword, _)| keyword.as_bytes().eq_ignore_ascii_case(wanted))
        .ok_or(CommandError::Reply(foreign.unknown_field))?;
    if let Some(text) = refused(&value) {
        return Err(CommandError::Reply(text));
    }
    reply_value(value);
    Ok(())
}

/// BF.CARD key: items past what an integer reply holds (only a crafted value has them) are
/// answered as the largest, as `BF.INFO` answers them.
pub fn card(ctx: Ctx, args: Args) -> CommandResult {
    args.exactly(2)?;
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, false);
    match kinds::lookup(&mut key) {
        Slot::Ours(filter) => ctx.reply_int(stats::saturating(filter.card())),
        Slot::Empty => ctx.reply_int(0),
        Slot::WrongType => return Err(WRONG_TYPE.into()),
    }
    Ok(())
}

/// BF.DEBUG key
pub fn debug(ctx: Ctx, args: Args) -> CommandResult {
    args.exactly(2)?;
    with_filter(ctx, args, |filter| {
        let lines = filter.debug_lines();
        ctx.reply_array(lines.len() + 1);
        ctx.reply_bulk(format!("size:{}", filter.card()).as_bytes());
        for line in lines {
            ctx.reply_bulk(line.as_bytes());
        }
        Ok(())
    })
}

/// BF.SCANDUMP key iterator
pub fn scandump(ctx: Ctx, args: Args) -> CommandResult {
    args.exactly(3)?;
    with_filter(ctx, args, |filter| {
        // RedisBloom reads the iterator only once the key is found.
        let iter = parse_bf_scandump_iterator(&args)?;
        if iter == 0 {
            ctx.reply_array(2);
            ctx.reply_int(1);
            ctx.reply_bulk(&filter.header());
            return Ok(());
        }
        // The chunk first: a refusal is the whole reply.
        let limit = ctx.admission().limit(0);
        let chunk = filter.chunk_at(iter, limit, MAX_CHUNK)?;
        ctx.reply_array(2);
        match chunk {
            Some((next, bytes)) => {
                ctx.reply_int(next);
                ctx.reply_bulk(&bytes);
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
    let iter = parse_bf_loadchunk(&args)?;
    let data = args.bytes(3);
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, true);
    let admission = ctx.admission();
    match kinds::lookup(&mut key) {
        Slot::WrongType => return Err(WRONG_TYPE.into()),
        Slot::Empty if iter != 1 => return Err(NOT_FOUND.into()),
        Slot::Empty => {
            kinds::create_from_header(&mut key, data, &admission)
                .inspect_err(|_| stats::count(&stats::REJECTED_CHUNKS))?;
        }
        Slot::Ours(filter) => {
            let limit = admission.limit(filter.info().size);
            filter
                .load_chunk(iter, data, limit)
                .inspect_err(|_| stats::count(&stats::REJECTED_CHUNKS))?
        }
    }
    ctx.reply_ok();
    ctx.replicate_verbatim();
    ctx.notify(c"bf.loadchunk", key_name);
    Ok(())
}
