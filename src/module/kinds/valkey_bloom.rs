//! The valkey-bloom kind (`bloomfltr`): values valkey-bloom 1.0.1 wrote, loaded from an RDB,
//! a `RESTORE` of its `DUMP`, or `BF.LOAD` (its AOF form), answered as valkey-bloom answers
//! them and written back in its encodings (RDB, DUMP, AOF rewrite as `BF.LOAD`), so a user can
//! go back to it. Its own command is `BF.LOAD key blob`. With `bf-valkey-bloom` on, new
//! filters are of this kind too.

use std::ffi::c_void;

use redis_module::native_types::RedisType;
use redis_module::raw;

use super::{
    add_one_by_one, digest, store, BloomKind, BloomValue, Chunk, ForeignInfo, Info, InfoValue,
    Write,
};
use crate::bloom::{AddError, ChunkError, CreateError, HeaderError};
use crate::budget::Budget;
use crate::module::ffi::io::{emit_blob, value_ref, Digest};
use crate::module::ffi::{guard, Args, Ctx, RawString, Slot};
use crate::module::state::errors::*;
use crate::module::state::settings;
use crate::module::state::stats::{self, saturating, Measure, Measured, Totals};
use crate::module::types::{callbacks, filter_value};
use crate::syntax::bf::BloomOptions;
use crate::syntax::valkey_bloom::{ValkeyDefaults, ValkeyInsert};
use crate::valkey_bloom::{
    decode_blob, encode_blob, MakeError, Params, ValkeyBloom, DEFAULT_OBJECT_LIMIT, FIXED_SEED,
    MAX_EXPANSION,
};

pub static VALKEY_BLOOM_TYPE: RedisType = RedisType::new(
    "bloomfltr",
    crate::valkey_bloom::ENCODING_VERSION,
    callbacks::<ValkeyBloom>(Some(aof_rewrite), Some(digest::<ValkeyBloom>)),
);

/// The first bytes of this kind's SCANDUMP header (the rest is the `BF.LOAD` blob).
pub const MAGIC: &[u8; 8] = b"bloomrsL";

filter_value!(ValkeyBloom, "a valkey-bloom filter", |value, defrag| {
    defrag.vec(value.filters_mut());
    for filter in value.filters_mut() {
        defrag.bytes(filter.storage_mut());
    }
});

impl Measured for ValkeyBloom {
    fn measure(&self) -> Measure {
        Measure {
            values: 1,
            bytes: saturating(self.size()),
            items: saturating(self.card()),
            filters: saturating(self.filters().len() as u64),
        }
    }
    fn totals() -> &'static Totals {
        &stats::BLOOM
    }
}

/// AOF rewrite as valkey-bloom writes it: `BF.LOAD key blob`.
///
/// # Safety
/// Called by Redis with a live AOF handle, the key name and a valkey-bloom value.
unsafe extern "C" fn aof_rewrite(io: *mut raw::RedisModuleIO, key: RawString, value: *mut c_void) {
    guard((), || {
        if let Some(value) = value_ref::<ValkeyBloom>(value) {
            emit_blob(io, c"BF.LOAD", key, &encode_blob(value));
        }
    })
}

impl BloomValue for ValkeyBloom {
    /// Adds in order; the first refusal ends the batch, as in valkey-bloom.
    fn add_each(
        &mut self,
        items: &mut dyn Iterator<Item = &[u8]>,
        write: &mut Write,
        answer: &mut dyn FnMut(Result<bool, AddError>) -> bool,
    ) {
        let admission = write.admission;
        add_one_by_one(
            items,
            &mut |outcome| {
                let refused = outcome.is_err();
                answer(outcome) && !refused
            },
            |item| self.add(item, &admission).map_err(AddError::ValkeyBloom),
        );
    }

    fn contains_each(&self, items: &mut dyn Iterator<Item = &[u8]>, answer: &mut dyn FnMut(bool)) {
        items.for_each(|item| answer(self.contains(item)));
    }

    fn card(&self) -> u64 {
        ValkeyBloom::card(self)
    }

    fn estimated_rate(&self) -> f64 {
        ValkeyBloom::estimated_rate(self)
    }

    fn info(&self) -> Info {
        Info {
            capacity: self.capacity(),
            size: self.size(),
            filters: self.filters().len() as u64,
            items: ValkeyBloom::card(self),
            expansion: (self.expansion() > 0).then_some(self.expansion()),
            extra: Vec::new(),
        }
    }

    fn answers_integers(&self) -> bool {
        true
    }

    fn foreign_info(&self) -> Option<ForeignInfo> {
        let int = |v: u64| InfoValue::Int(saturating(v));
        let mut fields = vec![
            (c"Capacity", "CAPACITY", int(self.capacity())),
            (c"Size", "SIZE", int(self.size())),
            (
                c"Number of filters",
                "FILTERS",
                int(self.filters().len() as u64),
            ),
            (
                c"Number of items inserted",
                "ITEMS",
                int(ValkeyBloom::card(self)),
            ),
            (c"Error rate", "ERROR", InfoValue::Double(self.fp_rate())),
        ];
        if self.expansion() == 0 {
            fields.push((c"Expansion rate", "EXPANSION", InfoValue::Null));
        } else {
            let max = match self.max_scaled_capacity(DEFAULT_OBJECT_LIMIT) {
                Ok(max) => int(max),
                Err(e) => InfoValue::Refused(e.text()),
            };
            fields.push((
                c"Expansion rate",
                "EXPANSION",
                int(u64::from(self.expansion())),
            ));
            fields.push((
                c"Tightening ratio",
                "TIGHTENING",
                InfoValue::Double(self.tightening()),
            ));
            fields.push((c"Max scaled capacity", "MAXSCALEDCAPACITY", max));
        }
        Some(ForeignInfo {
            fields,
            unknown_field: VB_INVALID_INFO,
        })
    }

    fn debug_lines(&self) -> Vec<String> {
        self.filters()
            .iter()
            .map(|f| {
                format!(
                    "bytes:{} hashes:{} capacity:{} items:{}",
                    f.bits().len(),
                    f.hashes(),
                    f.capacity,
                    f.items
                )
            })
            .collect()
    }

    /// The whole value in one header: [`MAGIC`] then its `BF.LOAD` blob; there are no chunks.
    fn header(&self) -> Vec<u8> {
        let mut header = MAGIC.to_vec();
        header.extend_from_slice(&encode_blob(self));
        header
    }

    fn chunk_at(
        &self,
        _iter: i64,
        _max_bytes: u64,
        _limit: u64,
    ) -> Result<Option<Chunk<'_>>, CreateError> {
        Ok(None)
    }

    fn load_chunk(&mut self, _iter: i64, _data: &[u8], _max_bytes: u64) -> Result<(), ChunkError> {
        Err(ChunkError::BadData)
    }

    fn digest(&self, digest: &mut Digest) {
        for number in [
            u64::from(self.expansion()),
            self.fp_rate().to_bits(),
            self.tightening().to_bits(),
            u64::from(self.seed_random()),
        ] {
            digest.add_int(number);
        }
        for filter in self.filters() {
            digest.add_int(filter.capacity);
            digest.add_int(filter.items);
            digest.add_bytes(filter.bytes());
        }
    }
}

impl BloomKind for ValkeyBloom {
    const TYPE: &'static RedisType = &VALKEY_BLOOM_TYPE;
    const MAGIC: Option<&'static [u8]> = Some(MAGIC);

    const ANNOUNCES: bool = true;

    /// Takes the options of a filter without bloomrs's own keywords when `bf-valkey-bloom` is
    /// on and a client of the primary creates it: its seed drawn (or valkey-bloom's fixed one,
    /// `bloom-use-random-seed no`), and `BF.LOAD` of the new value queued, which makes every
    /// copy the same.
    fn create(options: &BloomOptions, write: &mut Write) -> Result<Option<Self>, CreateError> {
        let o = options;
        let plain = o.window.is_none() && !o.counting && !o.compact && !o.blocked && !o.static_set;
        if !plain || !settings::bf_valkey_bloom() || write.replayed() {
            return Ok(None);
        }
        let seed_random = settings::bloom_use_random_seed();
        let params = Params {
            capacity: o.capacity,
            fp_rate: o.error,
            tightening: settings::bloom_tightening(),
            expansion: if o.scaling { o.growth } else { 0 },
            seed: new_seed(seed_random, || write.random_nonzero()),
            seed_random,
        };
        let value = ValkeyBloom::new(&params, write.admission.limit(0)).map_err(|e| match e {
            MakeError::Invalid => CreateError::Invalid,
            MakeError::TooLarge => CreateError::TooLarge,
        })?;
        write.effect(c"BF.LOAD", vec![encode_blob(&value)]);
        Ok(Some(value))
    }

    fn from_header(header: &[u8], max_bytes: u64) -> Result<Self, HeaderError> {
        let blob = header.strip_prefix(MAGIC).ok_or(HeaderError::BadData)?;
        decode_blob(blob, max_bytes).map_err(|e| match e {
            crate::valkey_bloom::LoadBlobError::TooLarge => HeaderError::TooLarge,
            _ => HeaderError::BadData,
        })
    }
}

/// A new filter's seed: drawn from `draw`, or valkey-bloom's fixed one.
fn new_seed(random: bool, mut draw: impl FnMut() -> u64) -> [u8; 32] {
    if !random {
        return FIXED_SEED;
    }
    let mut seed = [0u8; 32];
    for word in seed.chunks_exact_mut(8) {
        word.copy_from_slice(&draw().to_le_bytes());
    }
    seed
}

/// What valkey-bloom's `BF.INSERT` creates before its options: the module's settings.
pub fn insert_defaults() -> ValkeyDefaults {
    let expansion = u32::try_from(settings::BF_EXPANSION.get()).unwrap_or(0);
    ValkeyDefaults {
        capacity: settings::bf_initial_size(),
        fp_rate: settings::bf_error_rate(),
        tightening: settings::bloom_tightening(),
        expansion: expansion.min(MAX_EXPANSION),
        seed_random: settings::bloom_use_random_seed(),
    }
}

/// valkey-bloom's `BF.INSERT` on a missing key: the filter its options describe, stored,
/// propagated as `BF.LOAD` of the new value (the command's items follow as `BF.MADD`) and
/// announced as `bf.insert`.
pub fn create_for_insert(ctx: Ctx, args: Args, spec: &ValkeyInsert) -> CommandResult {
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, true);
    if !matches!(super::lookup(&mut key), Slot::Empty) || !spec.create {
        return Ok(());
    }
    let params = Params {
        capacity: spec.capacity,
        fp_rate: spec.fp_rate,
        tightening: spec.tightening,
        expansion: spec.expansion,
        seed: spec
            .seed
            .unwrap_or_else(|| new_seed(spec.seed_random, || ctx.random_u64())),
        seed_random: spec.seed_random,
    };
    let value = ValkeyBloom::new(&params, ctx.admission().limit(0)).map_err(|e| match e {
        MakeError::Invalid => CommandError::Reply(BF_COULD_NOT_CREATE),
        MakeError::TooLarge => CommandError::Reply(VB_OVER_LIMIT),
    })?;
    let blob = encode_blob(&value);
    store(&mut key, value);
    ctx.replicate(c"BF.LOAD", key_name, &[&blob]);
    // With items, adding them announces the key (the first item always goes into a new
    // filter); without, the creation itself does.
    if spec.items_at >= args.len() {
        ctx.notify(c"bf.insert", key_name);
    }
    Ok(())
}

/// BF.LOAD key blob: a valkey-bloom object from the blob its AOF rewrite writes.
pub fn load(ctx: Ctx, args: Args) -> CommandResult {
    args.exactly(3)?;
    let key_name = args.raw(1).ok_or(CommandError::Arity)?;
    let mut key = ctx.open_key(key_name, true);
    match super::lookup(&mut key) {
        Slot::Empty => {}
        Slot::Ours(_) => return Err(VB_KEY_EXISTS.into()),
        Slot::WrongType => return Err(WRONG_TYPE.into()),
    }
    let value = decode_blob(args.bytes(2), ctx.admission().limit(0))
        .inspect_err(|_| stats::count(&stats::REJECTED_PAYLOADS))?;
    store(&mut key, value);
    ctx.reply_ok();
    ctx.replicate_verbatim();
    ctx.notify(c"bf.load", key_name);
    Ok(())
}
