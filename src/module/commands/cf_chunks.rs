//! CF.SCANDUMP and CF.LOADCHUNK: a cuckoo filter copied out and back in as a header and
//! chunks of its sub-filters.

use super::cf::with_filter;
use crate::budget::Budget;
use crate::cuckoo::{CuckooFilter, HEADER_LEN, MAX_BUCKETS};
use crate::module::ffi::Admission;
use crate::module::ffi::{Args, Ctx, Slot};
use crate::module::state::errors::*;
use crate::module::state::stats;
use crate::module::types::cuckoo::{within_max_expansions, CUCKOO_TYPE};
use crate::syntax::cf::{parse_cf_loadchunk, parse_cf_scandump};

/// CF.SCANDUMP key iterator
pub fn scandump(ctx: Ctx, args: Args) -> CommandResult {
    let iter = parse_cf_scandump(&args)?;
    with_filter(ctx, args, |filter| {
        ctx.reply_array(2);
        let header = filter.encode_header();
        // An empty filter cannot be dumped (RedisBloom answers as if past the end).
        let step = match iter {
            _ if filter.num_items() == 0 => None,
            0 => Some((1, &header[..])),
            _ => filter.dump_chunk(iter),
        };
        match step {
            Some((next, bytes)) => {
                ctx.reply_int(next);
                ctx.reply_bulk(bytes);
            }
            None => {
                ctx.reply_int(0);
                ctx.reply_null();
            }
        }
        Ok(())
    })
}

/// CF.LOADCHUNK key iterator data
pub fn loadchunk(ctx: Ctx, args: Args) -> CommandResult {
    let iter = parse_cf_loadchunk(&args)?;
    let data = args.bytes(3);
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, true);
    match (key.slot::<CuckooFilter>(&CUCKOO_TYPE), iter) {
        (Slot::WrongType, _) => return Err(WRONG_TYPE.into()),
        (Slot::Ours(_), 1) => return Err(ITEM_EXISTS.into()),
        (Slot::Empty, 1) => {
            let filter = filter_from_header(data, ctx.admission())
                .inspect_err(|_| stats::count(&stats::REJECTED_CHUNKS))?;
            key.set(&CUCKOO_TYPE, filter);
        }
        (Slot::Empty, _) => return Err(NOT_FOUND.into()),
        (Slot::Ours(filter), _) => filter
            .load_chunk(iter, data)
            .map_err(CuckooChunkRefused)
            .inspect_err(|_| stats::count(&stats::REJECTED_CHUNKS))?,
    }
    ctx.reply_ok();
    // Deviation D5: every accepted chunk is propagated, not only the header.
    ctx.replicate_verbatim();
    ctx.notify(c"cf.loadchunk", key_name);
    Ok(())
}

/// A new empty filter from a CF.LOADCHUNK header. A header RedisBloom would refuse is
/// `Couldn't create filter!`; a valid one over the memory limits is deviations D1 and D13.
fn filter_from_header(data: &[u8], admission: Admission) -> Result<CuckooFilter, CommandError> {
    let header: &[u8; HEADER_LEN] = data.try_into().map_err(|_| CF_INVALID_HEADER)?;
    // The core reports 2^56 buckets as too large; RedisBloom's header check refuses it.
    let num_buckets = header
        .get(8..16)
        .and_then(|bytes| <[u8; 8]>::try_from(bytes).ok())
        .map_or(0, u64::from_le_bytes);
    if num_buckets >= MAX_BUCKETS {
        return Err(CF_HEADER_REFUSED.into());
    }
    let filter = CuckooFilter::from_header(header, admission.limit(0))
        .map_err(|e| CommandError::from(CuckooHeaderRefused(e)))?;
    if admission.binds() && !within_max_expansions(&filter) {
        return Err(CF_HEADER_REFUSED.into());
    }
    Ok(filter)
}
