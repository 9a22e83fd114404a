//! How a Bloom kind's write command records what it decides besides the value's own change
//! ([`Write`]): the memory limits, the primary's clock, replication effects queued in order,
//! the key's expiry and a replacement value; and what became of each item of a multi-item
//! write ([`Applied`]). The command applies all of it once with [`Write::finish`].

use std::cell::OnceCell;
use std::ffi::CStr;

use crate::module::ffi::{Admission, Args, Ctx, Key, RawString};

/// One command propagated to replicas and the AOF, after the first `after` items.
struct Effect {
    after: usize,
    command: &'static CStr,
    args: Vec<Vec<u8>>,
}

/// What became of each item of a multi-item write: applied (answered without an error) or
/// not. Items past the last answer were never processed (a batch that stopped early). Nothing
/// is allocated unless an item fails.
pub struct Applied<'a> {
    /// The command's arguments and where its items start; None: no item accounting.
    items: Option<(Args<'a>, usize)>,
    answered: usize,
    /// Items answered with an error, by position.
    failed: Vec<usize>,
}

impl<'a> Applied<'a> {
    /// No item accounting: the command propagates as the write decides (`verbatim`).
    pub fn none() -> Self {
        Applied {
            items: None,
            answered: 0,
            failed: Vec::new(),
        }
    }

    /// The items `args[first..]`.
    pub fn of(args: Args<'a>, first: usize) -> Self {
        Applied {
            items: Some((args, first)),
            ..Self::none()
        }
    }

    /// Records the outcome of the next item.
    pub fn record(&mut self, ok: bool) {
        if !ok {
            self.failed.push(self.answered);
        }
        self.answered += 1;
    }

    /// Items answered so far.
    pub fn answered(&self) -> usize {
        self.answered
    }

    /// Every item was answered, none with an error.
    fn whole(&self) -> bool {
        match self.items {
            None => true,
            Some((args, first)) => {
                self.failed.is_empty() && first.saturating_add(self.answered) >= args.len()
            }
        }
    }

    /// Propagates `BF.MADD key items...` of the applied items among the first `to` items,
    /// from `from` on (nothing when there are none). Without a failure among them they are a
    /// run of the command's own arguments, passed as they are: the usual case allocates
    /// nothing.
    fn propagate(&self, ctx: Ctx, key_name: RawString, from: usize, to: usize) {
        let Some((args, first)) = self.items else {
            return;
        };
        let to = to.min(self.answered);
        if from >= to {
            return;
        }
        let failed_here = self.failed.iter().any(|at| (from..to).contains(at));
        if !failed_here {
            let items = args.raw_range(first + from, first + to);
            ctx.replicate_strings(c"BF.MADD", key_name, items);
            return;
        }
        // `failed` is in increasing order: one walk beside the items.
        let mut next_failed = self.failed.iter().skip_while(|at| **at < from).peekable();
        let items: Vec<RawString> = (from..to)
            .filter(|at| next_failed.next_if_eq(&at).is_none())
            .filter_map(|at| args.raw(first + at))
            .collect();
        if !items.is_empty() {
            ctx.replicate_strings(c"BF.MADD", key_name, &items);
        }
    }
}

/// What a write command decides besides the value's own change, applied by [`Write::finish`].
pub struct Write {
    /// How large the filter may become: `bf.max-filter-bytes` and, for a client, what
    /// `maxmemory` leaves (deviation D13); neither binds a replayed write.
    pub admission: Admission,
    ctx: Ctx,
    /// The primary's clock when the command first asked for it ([`Write::now_ms`]).
    now_ms: OnceCell<u64>,
    /// [`Write::replayed`], read once.
    replayed: OnceCell<bool>,
    /// Propagate the command as received when every item applied; a kind that replaces it
    /// by effects of its own turns this off.
    pub verbatim: bool,
    /// Set the key to expire at this Unix time in milliseconds (propagated as `PEXPIREAT`).
    pub expire_at_ms: Option<u64>,
    /// A value that takes the key's place (another encoding, possibly another module type);
    /// the kind keeps writing into it for the rest of the command.
    pub replacement: Option<Box<dyn Replacement>>,
    effects: Vec<Effect>,
}

/// A value that can take a key's place: any Bloom kind.
pub trait Replacement {
    fn store(self: Box<Self>, key: &mut Key);
}

impl Write {
    pub fn new(ctx: Ctx) -> Self {
        Write {
            admission: ctx.admission(),
            ctx,
            now_ms: OnceCell::new(),
            replayed: OnceCell::new(),
            verbatim: true,
            expire_at_ms: None,
            replacement: None,
            effects: Vec::new(),
        }
    }

    /// The primary's clock, in Unix milliseconds: read when a kind first asks (most writes
    /// never do), then the same for the rest of the command.
    pub fn now_ms(&self) -> u64 {
        *self.now_ms.get_or_init(|| self.ctx.now_ms())
    }

    /// A random number other than zero, drawn on the primary (a kind propagates what it
    /// decided with it as an effect; a replayed command never draws).
    pub fn random_nonzero(&self) -> u64 {
        loop {
            let drawn = self.ctx.random_u64();
            if drawn != 0 {
                return drawn;
            }
        }
    }

    /// The command replays the primary's decisions (from the primary, or from the AOF): it
    /// must not read the clock, and sets no expiry of its own (`PEXPIREAT` follows it). Read
    /// from the context flags when a kind first asks.
    pub fn replayed(&self) -> bool {
        *self.replayed.get_or_init(|| self.ctx.is_replayed())
    }

    /// Queues `command key args...` for replicas and the AOF, before the command's items.
    pub fn effect(&mut self, command: &'static CStr, args: Vec<Vec<u8>>) {
        self.effect_after(0, command, args);
    }

    /// Queues `command key args...` after the first `after` items of the command (a change
    /// of encoding in the middle of a batch).
    pub fn effect_after(&mut self, after: usize, command: &'static CStr, args: Vec<Vec<u8>>) {
        self.effects.push(Effect {
            after,
            command,
            args,
        });
    }

    /// Stores the replacement, and propagates exactly what the command changed: the effects,
    /// then the command as received when every item applied and no effect falls between
    /// them, else `BF.MADD` of the applied items around the effects (a reply that holds an
    /// error is never propagated); then the expiry the key got (last, so that it finds the
    /// key whichever of them created it).
    pub fn finish(mut self, ctx: Ctx, key: &mut Key, key_name: RawString, applied: &Applied) {
        if let Some(replacement) = self.replacement.take() {
            replacement.store(key);
        }
        let verbatim =
            self.verbatim && applied.whole() && self.effects.iter().all(|e| e.after == 0);
        let mut next = 0;
        for effect in &self.effects {
            if !verbatim {
                applied.propagate(ctx, key_name, next, effect.after);
                next = next.max(effect.after);
            }
            let args: Vec<&[u8]> = effect.args.iter().map(Vec::as_slice).collect();
            ctx.replicate(effect.command, key_name, &args);
        }
        if verbatim {
            ctx.replicate_verbatim();
        } else {
            applied.propagate(ctx, key_name, next, usize::MAX);
        }
        // An expiry the key holds already is the replicas' too: set and told once a slot.
        let wanted = self
            .expire_at_ms
            .map(|at| i64::try_from(at).unwrap_or(i64::MAX));
        if let Some(at) = wanted.filter(|&at| key.expire_at() != Some(at)) {
            let at = key.set_expire_at(at as u64).to_string();
            ctx.replicate(c"PEXPIREAT", key_name, &[at.as_bytes()]);
        }
    }
}
