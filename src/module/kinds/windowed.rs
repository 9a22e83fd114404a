//! The windowed kind (`bloomrsWN`): Bloom filters that forget (`src/windowed/`), as the
//! `BF.*` commands see them through [`BloomValue`], and `BF.RETIRE`.
//!
//! Only the primary's clock retires generations. A write on the primary reads its clock, and
//! when that moves the filter into a new slot, it propagates `BF.RETIRE key <ms>` before the
//! command; a replica or an AOF replay (a replayed write) never reads its own clock but writes
//! at the filter's clock, which `BF.RETIRE` set. So every copy holds the same bytes however
//! late it replays. Reads skip logically retired generations at the local clock and change
//! nothing. The key's expiry is the primary's decision too, propagated as `PEXPIREAT`.

use std::borrow::Cow;

use redis_module::native_types::RedisType;

use super::chain::{digest_chain, link_line, relocate_chain};
use super::{aof_rewrite, digest, lookup, BloomKind, BloomValue, Chunk, Info, Write};
use crate::bloom::{combined_rate, AddError, ChunkError, CreateError, HeaderError, Link};
use crate::budget::Budget;
use crate::module::ffi::io::Digest;
use crate::module::ffi::{clock, Args, Ctx, Slot};
use crate::module::state::errors::*;
use crate::module::state::stats::{self, Measure, Measured, Totals};
use crate::module::types::{callbacks, filter_value};
use crate::syntax::bf::BloomOptions;
use crate::syntax::Argv;
use crate::windowed::{WindowParams, Windowed, ENCODING_VERSION, MAGIC};

pub static WINDOWED_TYPE: RedisType = RedisType::new(
    "bloomrsWN",
    ENCODING_VERSION,
    callbacks::<Windowed>(Some(aof_rewrite::<Windowed>), Some(digest::<Windowed>)),
);

/// The time a write applies at: the primary's clock, or for a replayed write the filter's own
/// clock (time 0 never moves it).
fn write_time(write: &Write) -> u64 {
    if write.replayed() {
        0
    } else {
        write.now_ms()
    }
}

/// Moves the filter's clock to the write's time; on the primary, a move is propagated as
/// `BF.RETIRE` ahead of the command, and the key's expiry is armed to the end of the window.
fn start_write(filter: &mut Windowed, write: &mut Write) {
    let now = write_time(write);
    let before = filter.slot;
    filter.retire(now);
    if write.replayed() {
        return;
    }
    if filter.slot != before {
        write.effect(c"BF.RETIRE", vec![now.to_string().into_bytes()]);
    }
    write.expire_at_ms = Some(filter.expiry_after(now));
}

impl BloomValue for Windowed {
    fn add_each(
        &mut self,
        items: &mut dyn Iterator<Item = &[u8]>,
        write: &mut Write,
        answer: &mut dyn FnMut(Result<bool, AddError>) -> bool,
    ) {
        start_write(self, write);
        let now = write_time(write);
        for item in items {
            if !answer(self.add(now, item, write.admission)) {
                return;
            }
        }
    }

    fn contains_each(&self, items: &mut dyn Iterator<Item = &[u8]>, answer: &mut dyn FnMut(bool)) {
        let now = clock::now_ms();
        for item in items {
            answer(self.contains(now, item));
        }
    }

    fn card(&self) -> u64 {
        Windowed::card(self, clock::now_ms())
    }

    fn estimated_rate(&self) -> f64 {
        combined_rate(
            self.live(clock::now_ms())
                .map(|generation| Link::chain_rate(&generation.chain.links)),
        )
    }

    fn info(&self) -> Info {
        let now = clock::now_ms();
        let p = &self.params;
        Info {
            capacity: self.capacity(now),
            size: self.reported_bytes(),
            filters: self.links(now),
            items: Windowed::card(self, now),
            expansion: p.scaling.then_some(p.growth),
            extra: vec![
                (c"Window", (p.window_ms / 1000) as i64),
                (c"Generations", i64::from(p.generations)),
            ],
        }
    }

    fn debug_lines(&self) -> Vec<String> {
        self.live(clock::now_ms())
            .flat_map(|g| g.chain.links.iter().map(|link| link_line(link, true)))
            .collect()
    }

    fn header(&self) -> Vec<u8> {
        self.encode_header()
    }

    fn chunk_at(&self, iter: i64, _max_bytes: u64) -> Result<Option<Chunk<'_>>, CreateError> {
        let chunk = Windowed::chunk_at(self, iter);
        Ok(chunk.map(|chunk| (chunk.next, Cow::Borrowed(chunk.bytes))))
    }

    fn load_chunk(&mut self, iter: i64, data: &[u8], _max_bytes: u64) -> Result<(), ChunkError> {
        Windowed::load_chunk(self, iter, data)
    }

    fn digest(&self, digest: &mut Digest) {
        let p = &self.params;
        for number in [
            p.window_ms,
            u64::from(p.generations),
            p.capacity,
            p.error.to_bits(),
            u64::from(p.growth),
            u64::from(p.scaling),
            self.slot,
        ] {
            digest.add_int(number);
        }
        for generation in &self.ring {
            digest.add_int(generation.slot);
            digest_chain(&generation.chain, digest);
        }
    }
}

impl BloomKind for Windowed {
    const TYPE: &'static RedisType = &WINDOWED_TYPE;
    const MAGIC: Option<&'static [u8]> = Some(MAGIC);

    /// Takes the options with a window (never with COMPACT, which the syntax refuses with one
    /// anyway). Its clock is set by its first add, and on the primary
    /// the key is armed to expire a window from now.
    fn create(options: &BloomOptions, write: &mut Write) -> Result<Option<Self>, CreateError> {
        let Some(window) = options.window.filter(|_| !options.compact) else {
            return Ok(None);
        };
        let params = WindowParams {
            window_ms: window.seconds.saturating_mul(1000),
            generations: window.generations,
            capacity: options.capacity,
            error: options.error,
            growth: options.growth,
            scaling: options.scaling,
        };
        let filter = Windowed::new(params, write.admission.limit(0))?;
        if !write.replayed() {
            write.expire_at_ms = Some(filter.expiry_after(write.now_ms()));
        }
        Ok(Some(filter))
    }

    fn from_header(header: &[u8], max_bytes: u64) -> Result<Self, HeaderError> {
        Windowed::from_header(header, max_bytes)
    }
}

filter_value!(Windowed, "a windowed Bloom filter", |value, defrag| {
    for generation in &mut value.ring {
        relocate_chain(&mut generation.chain, defrag);
    }
});

impl Measured for Windowed {
    /// Counts every held generation, retired or not, so the totals never depend on the clock.
    fn measure(&self) -> Measure {
        let items = self.ring.iter().map(|g| g.chain.size).sum::<u64>();
        let links = self
            .ring
            .iter()
            .map(|g| g.chain.links.len() as u64)
            .sum::<u64>();
        Measure {
            values: 1,
            bytes: stats::saturating(self.reported_bytes()),
            items: stats::saturating(items),
            filters: stats::saturating(links),
        }
    }
    fn totals() -> &'static Totals {
        &stats::WINDOWED
    }
}

/// BF.RETIRE key unix-time-ms: advances a windowed filter's clock and drops the generations
/// that have left its window by then; replies how many were dropped. The primary propagates
/// it ahead of a write that moved the clock; a client may send it too.
pub fn retire(ctx: Ctx, args: Args) -> CommandResult {
    args.exactly(3)?;
    let now = args
        .int(2)
        .and_then(|ms| u64::try_from(ms).ok())
        .ok_or(RETIRE_BAD_TIME)?;
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, true);
    if let Slot::WrongType = key.slot::<Windowed>(&WINDOWED_TYPE) {
        return match lookup(&mut key) {
            Slot::Ours(_) => Err(NOT_WINDOWED.into()),
            _ => Err(WRONG_TYPE.into()),
        };
    }
    let Slot::Ours(filter) = key.slot::<Windowed>(&WINDOWED_TYPE) else {
        return Err(NOT_FOUND.into());
    };
    let retired = filter.retire(now);
    ctx.reply_int(retired as i64);
    ctx.replicate_verbatim();
    if retired > 0 {
        ctx.notify(c"bf.retire", key_name);
    }
    Ok(())
}
