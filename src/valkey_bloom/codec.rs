//! valkey-bloom's two encodings of an object, and the one validator both pass through.
//!
//! - The RDB value (`bloomfltr`, encoding 1): filter count, expansion (u64), error rate and
//!   tightening (doubles), whether the seed is random (u64); then per filter its bytes and
//!   capacity, and the item count of the last filter only (the others are full).
//! - The `BF.LOAD` blob (how valkey-bloom rewrites an AOF): version byte 1, then bincode 1.3
//!   with fixed-width little-endian integers: expansion (u32), error rate, tightening (f64),
//!   seed random (u8), filter count (u64), and per filter its bytes (u64 length first), item
//!   count and capacity (i64).
//!
//! [`Validator`] sees the object's fields before any filter, then each filter's fields before
//! its bits are copied: no filters, a bad header, a length that does not match, k of 0, a rate
//! or ratio outside (0, 1), a seed the filters do not share, more than `max_bytes`, each is
//! refused.

use super::filter::{check_filter_bytes, Header, SipFilter};
use super::{
    grown_slots, in_unit_range, ValkeyBloom, ENCODING_VERSION, FILTER_STRUCT_BYTES, FIXED_SEED,
    MAX_EXPANSION, MAX_FILTERS, OBJECT_STRUCT_BYTES, OBJECT_VERSION, SLOT_BYTES,
};
use crate::rdb::{LoadError, RdbRead, RdbWrite};

/// Why an encoded object was refused, in valkey-bloom's categories (`BF.LOAD` answers with
/// its words for each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadBlobError {
    /// Not a well-formed object.
    Malformed(&'static str),
    /// A version byte other than 1.
    UnsupportedVersion,
    /// An expansion above 10.
    BadExpansion,
    /// An error rate or tightening ratio outside (0, 1).
    RateRange,
    /// More than [`MAX_FILTERS`] filters.
    TooManyFilters,
    /// More than the memory limit allows.
    TooLarge,
}

impl From<LoadBlobError> for LoadError {
    fn from(e: LoadBlobError) -> Self {
        match e {
            LoadBlobError::Malformed(why) => LoadError::Invalid(why),
            LoadBlobError::UnsupportedVersion => LoadError::Invalid("unsupported version"),
            LoadBlobError::BadExpansion => LoadError::Invalid("bad expansion"),
            LoadBlobError::RateRange => LoadError::Invalid("rate out of range"),
            LoadBlobError::TooManyFilters => LoadError::Invalid("too many filters"),
            LoadBlobError::TooLarge => LoadError::TooLarge,
        }
    }
}

/// The object's own fields, as both encodings carry them.
struct ObjectFields {
    count: u64,
    expansion: u64,
    fp_rate: f64,
    tightening: f64,
    seed_random: u64,
}

/// The one validator of encoded objects: the object's fields first, then each filter in order.
struct Validator {
    fields: ObjectFields,
    max_bytes: u64,
    size: u64,
    seen: u64,
    seed: Option<[u8; 32]>,
}

/// How many slots valkey-bloom's list has after `len` pushes from one slot.
fn pushed_slots(len: u64) -> u64 {
    (2..=len).fold(1, grown_slots)
}

impl Validator {
    fn new(fields: ObjectFields, slots: u64, max_bytes: u64) -> Result<Self, LoadBlobError> {
        if fields.count == 0 {
            return Err(LoadBlobError::Malformed("no filters"));
        }
        if fields.count > MAX_FILTERS as u64 {
            return Err(LoadBlobError::TooManyFilters);
        }
        if fields.expansion > u64::from(MAX_EXPANSION) {
            return Err(LoadBlobError::BadExpansion);
        }
        if !in_unit_range(fields.fp_rate) || !in_unit_range(fields.tightening) {
            return Err(LoadBlobError::RateRange);
        }
        if fields.seed_random > 1 {
            return Err(LoadBlobError::Malformed("bad seed mode"));
        }
        let size = OBJECT_STRUCT_BYTES + SLOT_BYTES * slots;
        if size > max_bytes {
            return Err(LoadBlobError::TooLarge);
        }
        Ok(Validator {
            fields,
            max_bytes,
            size,
            seen: 0,
            seed: None,
        })
    }

    /// Checks the next filter's bytes and counts.
    fn filter(&mut self, bytes: &[u8], capacity: u64, items: u64) -> Result<Header, LoadBlobError> {
        let header = check_filter_bytes(bytes).map_err(LoadBlobError::Malformed)?;
        let last = self.seen + 1 == self.fields.count;
        if capacity == 0 || i64::try_from(capacity).is_err() {
            return Err(LoadBlobError::Malformed("bad capacity"));
        }
        if items > capacity || (!last && items != capacity) {
            return Err(LoadBlobError::Malformed("bad item count"));
        }
        let first_seed = *self.seed.get_or_insert(header.seed);
        if header.seed != first_seed {
            return Err(LoadBlobError::Malformed("filters with different seeds"));
        }
        if self.fields.seed_random == 0 && header.seed != FIXED_SEED {
            return Err(LoadBlobError::Malformed(
                "fixed seed mode with another seed",
            ));
        }
        let bits = (bytes.len() - super::FILTER_HEADER_BYTES) as u64;
        self.size = self
            .size
            .saturating_add(FILTER_STRUCT_BYTES)
            .saturating_add(bits);
        if self.size > self.max_bytes {
            return Err(LoadBlobError::TooLarge);
        }
        self.seen += 1;
        Ok(header)
    }

    fn finish(self, filters: Vec<SipFilter>, slots: u64) -> ValkeyBloom {
        ValkeyBloom {
            expansion: self.fields.expansion as u32,
            fp_rate: self.fields.fp_rate,
            tightening: self.fields.tightening,
            seed_random: self.fields.seed_random == 1,
            filters,
            slots,
        }
    }
}

impl ValkeyBloom {
    /// Reads the RDB value (encoding `encver`) through the validator, within `max_bytes`.
    pub fn load(r: &mut impl RdbRead, encver: i32, max_bytes: u64) -> Result<Self, LoadError> {
        if encver != ENCODING_VERSION {
            return Err(LoadError::UnknownVersion(encver));
        }
        let fields = ObjectFields {
            count: r.read_unsigned()?,
            expansion: r.read_unsigned()?,
            fp_rate: r.read_double()?,
            tightening: r.read_double()?,
            seed_random: r.read_unsigned()?,
        };
        let count = fields.count;
        let slots = pushed_slots(count.min(MAX_FILTERS as u64));
        let mut check = Validator::new(fields, slots, max_bytes)?;
        let mut filters = Vec::new();
        for i in 0..count {
            let bytes = r.read_buffer()?;
            let capacity = r.read_unsigned()?;
            let items = if i + 1 == count {
                r.read_unsigned()?
            } else {
                capacity
            };
            let header = check.filter(&bytes, capacity, items)?;
            let bytes = bytes.into_boxed_slice();
            filters.push(SipFilter::from_checked(bytes, header, capacity, items));
        }
        Ok(check.finish(filters, slots))
    }

    /// Writes the RDB value in valkey-bloom's field order.
    pub fn save(&self, w: &mut impl RdbWrite) {
        w.write_unsigned(self.filters.len() as u64);
        w.write_unsigned(u64::from(self.expansion));
        w.write_double(self.fp_rate);
        w.write_double(self.tightening);
        w.write_unsigned(u64::from(self.seed_random));
        let last = self.filters.len().saturating_sub(1);
        for (i, filter) in self.filters.iter().enumerate() {
            w.write_buffer(filter.bytes());
            w.write_unsigned(filter.capacity);
            if i == last {
                w.write_unsigned(filter.items);
            }
        }
    }
}

/// A little-endian reader over a blob; every read is bounds-checked.
struct Blob<'a>(&'a [u8]);

impl<'a> Blob<'a> {
    fn take(&mut self, n: u64) -> Result<&'a [u8], LoadBlobError> {
        let n = usize::try_from(n)
            .ok()
            .filter(|n| *n <= self.0.len())
            .ok_or(LoadBlobError::Malformed("blob ends early"))?;
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], LoadBlobError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N as u64)?);
        Ok(out)
    }

    fn u64(&mut self) -> Result<u64, LoadBlobError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    fn count(&mut self) -> Result<u64, LoadBlobError> {
        u64::try_from(i64::from_le_bytes(self.array()?))
            .map_err(|_| LoadBlobError::Malformed("negative count"))
    }
}

/// Decodes a `BF.LOAD` blob: every field is validated before any filter's bits are copied.
pub fn decode_blob(blob: &[u8], max_bytes: u64) -> Result<ValkeyBloom, LoadBlobError> {
    let mut input = Blob(blob);
    match input.array::<1>() {
        Ok([OBJECT_VERSION]) => {}
        Ok(_) => return Err(LoadBlobError::UnsupportedVersion),
        Err(e) => return Err(e),
    }
    let expansion = u64::from(u32::from_le_bytes(input.array()?));
    let fp_rate = f64::from_le_bytes(input.array()?);
    let tightening = f64::from_le_bytes(input.array()?);
    let [seed_random] = input.array::<1>()?;
    let count = input.u64()?;
    let fields = ObjectFields {
        count,
        expansion,
        fp_rate,
        tightening,
        seed_random: u64::from(seed_random),
    };
    let slots = count.min(MAX_FILTERS as u64);
    let mut check = Validator::new(fields, slots, max_bytes)?;
    let mut parsed = Vec::new();
    for _ in 0..count {
        let len = input.u64()?;
        let bytes = input.take(len)?;
        let items = input.count()?;
        let capacity = input.count()?;
        let header = check.filter(bytes, capacity, items)?;
        parsed.push((bytes, header, capacity, items));
    }
    if !input.0.is_empty() {
        return Err(LoadBlobError::Malformed("bytes after the object"));
    }
    let filters = parsed
        .into_iter()
        .map(|(bytes, header, capacity, items)| {
            SipFilter::from_checked(bytes.into(), header, capacity, items)
        })
        .collect();
    Ok(check.finish(filters, slots))
}

/// The `BF.LOAD` blob of an object, as valkey-bloom writes it.
pub fn encode_blob(bloom: &ValkeyBloom) -> Vec<u8> {
    let filter_bytes: usize = bloom.filters.iter().map(|f| f.bytes().len() + 24).sum();
    let mut out = Vec::with_capacity(30 + filter_bytes);
    out.push(OBJECT_VERSION);
    out.extend_from_slice(&bloom.expansion.to_le_bytes());
    out.extend_from_slice(&bloom.fp_rate.to_le_bytes());
    out.extend_from_slice(&bloom.tightening.to_le_bytes());
    out.push(u8::from(bloom.seed_random));
    out.extend_from_slice(&(bloom.filters.len() as u64).to_le_bytes());
    for filter in &bloom.filters {
        out.extend_from_slice(&(filter.bytes().len() as u64).to_le_bytes());
        out.extend_from_slice(filter.bytes());
        out.extend_from_slice(&filter.items.to_le_bytes());
        out.extend_from_slice(&filter.capacity.to_le_bytes());
    }
    out
}
