//! One link of a scalable Bloom filter: an array of positions with its own capacity, error
//! rate and number of hash functions, sized and probed exactly as RedisBloom's `struct bloom`.
//! What a position holds (a bit, or a counter) is the link's [`Cells`].

use std::marker::PhantomData;

use super::cells::{Bits, Cells};
use super::growth::{ChainLink, SetLink};
use super::probe::{Modulus, Positions, Probes, Spread};
use super::{ItemHash, ERROR_TIGHTENING};

/// ln(2), with the digits RedisBloom uses: the hash count is `ceil(LN2 * bpe)`, and the last
/// digits decide the ceiling for some error rates.
#[allow(clippy::approx_constant)]
const LN2: f64 = 0.693_147_180_559_945;
/// ln(2)², with the digits RedisBloom uses.
const LN2_SQUARED: f64 = 0.480_453_013_918_201;
/// More hash functions than any error rate a double can hold needs (`-log2(5e-324)` ≈ 1075);
/// a dump asking for more is refused instead of turning every add into a long loop.
pub const MAX_HASHES: u32 = 1100;

/// Below this size a link's bit array stays in the CPU caches and prefetching across items
/// would only cost time.
const PREFETCH_MIN_BYTES: usize = 256 * 1024;

/// A hint to load the cache line holding `ptr`; it never faults, whatever the address.
#[inline]
pub(crate) fn prefetch(ptr: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; it reads nothing and cannot fault.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(ptr.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ptr;
}

/// `len` zero bytes, or None if the allocator refuses them. The memory is asked zeroed of the
/// allocator, which serves a large block with pages fresh from the kernel and writes none of
/// them: creating a big filter does not stall the server zeroing it, and its memory appears as
/// items are added. Callers check the size against the memory limits first.
pub(crate) fn zeroed_array(len: usize) -> Option<Box<[u8]>> {
    if len == 0 {
        return Some(Box::default());
    }
    let layout = std::alloc::Layout::array::<u8>(len).ok()?;
    // SAFETY: the layout has a non-zero size; a non-null block from the global allocator with
    // the layout of `[u8; len]` holds `len` initialized (zero) bytes, which the box owns and
    // frees with that same layout.
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout);
        (!ptr.is_null()).then(|| Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)))
    }
}

/// Chain option bits, as stored in headers and RDB values.
pub const OPT_NOROUND: u32 = 1;
pub const OPT_ENTS_IS_BITS: u32 = 2;
pub const OPT_FORCE64: u32 = 4;
pub const OPT_NO_SCALING: u32 = 8;
/// RedisBloom's option bits: every other bit is refused in its values.
pub const OPT_ALL: u32 = OPT_NOROUND | OPT_ENTS_IS_BITS | OPT_FORCE64 | OPT_NO_SCALING;
/// Links probe by [`Spread`](super::probe::Spread) rather than RedisBloom's double hashing:
/// set in our own kinds' chains only (a windowed generation's), which accept it beside
/// [`OPT_ALL`].
pub const OPT_SPREAD: u32 = 16;

/// Why a link could not be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkError {
    /// The parameters describe no valid link (RedisBloom's `bloom_init` returning 1).
    Invalid,
    /// The bit array would be larger than allowed.
    TooLarge,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Link<C: Cells = Bits> {
    /// Capacity: items this link takes before the chain grows.
    pub entries: u64,
    pub error: f64,
    /// Bits per entry.
    pub bpe: f64,
    pub hashes: u32,
    /// Bits used for positions (`bytes * 8` for every link built here).
    pub bits: u64,
    /// log2 of the bit count for legacy power-of-two links, 0 otherwise.
    pub n2: u8,
    /// Items added to this link.
    pub size: u64,
    pub force64: bool,
    /// Probes by [`Spread`] (the chain's `OPT_SPREAD`), else as RedisBloom's links.
    pub spread: bool,
    pub array: Box<[u8]>,
    /// Reduces probe hashes modulo `bits` (or 2^n2); derived from them.
    modulus: Modulus,
    cells: PhantomData<C>,
}

/// The geometry of a link before its bit array exists, so sizes can be checked first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkShape {
    pub entries: u64,
    pub error: f64,
    pub bpe: f64,
    pub hashes: u32,
    pub bits: u64,
    pub bytes: u64,
    pub n2: u8,
}

/// Bits per entry for a target error rate.
pub fn bits_per_entry(error: f64) -> f64 {
    (-(error.ln() / LN2_SQUARED)).abs()
}

/// The number of hash functions RedisBloom derives from bits per entry.
pub fn hashes_for(bpe: f64) -> Option<u32> {
    let h = (LN2 * bpe).ceil();
    (h.is_finite() && h >= 1.0 && h <= f64::from(MAX_HASHES)).then_some(h as u32)
}

impl LinkShape {
    /// Sizes a link for `entries` items at `error`, under the chain's `options`.
    pub fn new(entries: u64, error: f64, options: u32) -> Result<Self, LinkError> {
        if entries < 1 || !(error > 0.0 && error < 1.0) {
            return Err(LinkError::Invalid);
        }
        let bpe = bits_per_entry(error);
        let hashes = hashes_for(bpe).ok_or(LinkError::Invalid)?;
        let mut entries = entries;
        let mut n2 = 0u8;
        let wanted = entries as f64 * bpe;
        let bits = if options & OPT_ENTS_IS_BITS != 0 {
            if entries > 63 {
                return Err(LinkError::Invalid);
            }
            n2 = entries as u8;
            let bits = 1u64 << n2;
            entries = (bits as f64 / bpe) as u64;
            bits
        } else if options & OPT_NOROUND != 0 {
            // A product of 2^64 or more would wrap in RedisBloom and build a tiny filter.
            if wanted >= 18_446_744_073_709_551_616.0 {
                return Err(LinkError::TooLarge);
            }
            (wanted as u64).max(1)
        } else {
            if wanted.is_nan() || wanted < 1.0 {
                return Err(LinkError::Invalid);
            }
            let exponent = wanted.log2().floor();
            if exponent >= 63.0 {
                return Err(LinkError::TooLarge);
            }
            n2 = exponent as u8 + 1;
            let bits = 1u64 << n2;
            let spare_items = ((bits as f64 - wanted) as u64) as f64 / bpe;
            entries = entries.saturating_add(spare_items as u64);
            bits
        };
        let bytes = bits
            .div_ceil(64)
            .checked_mul(8)
            .ok_or(LinkError::TooLarge)?;
        let bits = bytes.checked_mul(8).ok_or(LinkError::TooLarge)?;
        Ok(Self {
            entries,
            error,
            bpe,
            hashes,
            bits,
            bytes,
            n2,
        })
    }

    /// The same geometry with the array sized for `C` cells (a bit array is already).
    pub fn with_cells<C: Cells>(self) -> Result<Self, LinkError> {
        let bytes = C::array_bytes(self.bits).ok_or(LinkError::TooLarge)?;
        Ok(Self { bytes, ..self })
    }
}

/// The false-positive rate of a Bloom link of `bits` positions and `hashes` probes holding
/// `items`: `(1 - e^(-k·n/m))^k`, the classic estimate from its fill.
pub fn fill_rate(bits: u64, hashes: u32, items: u64) -> f64 {
    if bits == 0 || items == 0 {
        return 0.0;
    }
    let k = f64::from(hashes);
    let set = 1.0 - (-k * items as f64 / bits as f64).exp();
    set.powf(k).clamp(0.0, 1.0)
}

/// The rate of filters read one after the other (a chain's links, a window's generations):
/// an absent item is reported present when any of them reports it.
pub fn combined_rate(rates: impl IntoIterator<Item = f64>) -> f64 {
    1.0 - rates
        .into_iter()
        .fold(1.0, |clear, rate| clear * (1.0 - rate.clamp(0.0, 1.0)))
}

impl<C: Cells> Link<C> {
    /// The false-positive rate estimated from this link's fill ([`fill_rate`]).
    pub fn estimated_rate(&self) -> f64 {
        let bits = if self.bits == 0 {
            1u64 << self.n2.min(63)
        } else {
            self.bits
        };
        fill_rate(bits, self.hashes, self.size)
    }

    /// A chain's estimated rate: its links' combined.
    pub fn chain_rate<'a>(links: impl IntoIterator<Item = &'a Self>) -> f64
    where
        C: 'a,
    {
        combined_rate(links.into_iter().map(Link::estimated_rate))
    }

    /// Allocates the zeroed array of a shape whose size the caller has checked, for a chain
    /// of these `options` (which say how the link hashes and probes).
    pub fn allocate(shape: &LinkShape, options: u32) -> Result<Self, LinkError> {
        let bytes = usize::try_from(shape.bytes).map_err(|_| LinkError::TooLarge)?;
        let array = zeroed_array(bytes).ok_or(LinkError::TooLarge)?;
        Ok(Self::from_parts(shape, options, 0, array))
    }

    /// Builds a link of a chain of these `options` around an existing bit array (loaded from
    /// a dump).
    pub fn from_parts(shape: &LinkShape, options: u32, size: u64, array: Box<[u8]>) -> Self {
        Self {
            entries: shape.entries,
            error: shape.error,
            bpe: shape.bpe,
            hashes: shape.hashes,
            bits: shape.bits,
            n2: shape.n2,
            size,
            force64: options & OPT_FORCE64 != 0,
            spread: options & OPT_SPREAD != 0,
            array,
            modulus: Modulus::new(Self::modulus(shape.bits, shape.n2)),
            cells: PhantomData,
        }
    }

    pub fn bytes(&self) -> u64 {
        self.array.len() as u64
    }

    /// The modulus positions are reduced by: the bit count, or 2^n2 for legacy links.
    fn modulus(bits: u64, n2: u8) -> u64 {
        if n2 > 0 {
            1u64.checked_shl(u32::from(n2)).unwrap_or(0)
        } else {
            bits
        }
    }

    /// An item's probe positions in this link.
    #[inline]
    fn positions(&self, hash: ItemHash) -> Positions {
        if self.spread {
            Positions::Spread(self.spread_positions(hash))
        } else {
            Positions::RedisBloom(self.modulus.probes(hash, self.hashes))
        }
    }

    #[inline]
    fn spread_positions(&self, hash: ItemHash) -> Spread {
        Spread::new(hash, Self::modulus(self.bits, self.n2), self.hashes)
    }

    /// An item's probe positions in this link, as byte index and cell selector.
    #[inline]
    fn probes(&self, hash: ItemHash) -> impl Iterator<Item = (usize, u8)> {
        self.positions(hash).map(C::locate)
    }

    /// Every probe of an item (byte index and cell selector), for kinds that do more with
    /// their cells than set and test them.
    #[inline]
    pub fn probes_of(&self, hash: ItemHash) -> impl Iterator<Item = (usize, u8)> + '_ {
        self.probes(hash)
    }

    /// An item's first probe position.
    #[inline]
    fn first_position(&self, hash: ItemHash) -> u64 {
        self.modulus.reduce(hash.a)
    }

    /// Starts loading the bytes of an item's first `probes` probes in a link too large for
    /// the caches, so that the cache misses of several items overlap instead of following
    /// one another (for batches of items).
    #[inline]
    pub fn prefetch(&self, hash: ItemHash, probes: usize) {
        if self.array.len() < PREFETCH_MIN_BYTES {
            return;
        }
        let at = |byte: usize| prefetch(self.array.as_ptr().wrapping_add(byte));
        if probes == 1 && !self.spread {
            return at(C::locate(self.first_position(hash)).0);
        }
        for (byte, _) in self.probes(hash).take(probes) {
            at(byte);
        }
    }

    /// Whether every probed cell is occupied.
    #[inline]
    pub fn contains(&self, hash: ItemHash) -> bool {
        if self.spread {
            return self
                .spread_positions(hash)
                .all(|position| self.is_set(C::locate(position)));
        }
        // Most absent items fail at the first probe or the second, so the stride (a second
        // reduction) is only computed once the first cell is found occupied.
        let first = self.first_position(hash);
        if self.hashes == 0 {
            return true;
        }
        if !self.is_set(C::locate(first)) {
            return false;
        }
        let mut rest: Probes = self.modulus.probes_from(first, hash, self.hashes);
        rest.next();
        rest.all(|position| self.is_set(C::locate(position)))
    }

    #[inline]
    fn is_set(&self, (byte, selector): (usize, u8)) -> bool {
        self.array
            .get(byte)
            .is_some_and(|b| C::is_set(*b, selector))
    }

    /// Records the item in every probed cell; true if at least one was unoccupied.
    #[inline]
    pub fn insert(&mut self, hash: ItemHash) -> bool {
        let mut changed = false;
        self.update_cells(hash, |byte, selector| changed |= C::insert(byte, selector));
        changed
    }

    /// Applies `update` to the byte and selector of every probed cell, for kinds that do more
    /// with their cells than record items (a counting link takes them back).
    #[inline]
    pub fn update_cells(&mut self, hash: ItemHash, mut update: impl FnMut(&mut u8, u8)) {
        for position in self.positions(hash) {
            let (byte, selector) = C::locate(position);
            if let Some(b) = self.array.get_mut(byte) {
                update(b, selector);
            }
        }
    }

    pub fn shape(&self) -> LinkShape {
        LinkShape {
            entries: self.entries,
            error: self.error,
            bpe: self.bpe,
            hashes: self.hashes,
            bits: self.bits,
            bytes: self.bytes(),
            n2: self.n2,
        }
    }
}

/// RedisBloom's integrity check for a link read from a dump, tightened so that every probe
/// stays inside the array: `bits` positions of `C` may not exceed the array, nor may `2^n2`.
pub fn validate_shape<C: Cells>(shape: &LinkShape) -> Result<(), &'static str> {
    if !(shape.error > 0.0 && shape.error < 1.0) {
        return Err("error rate out of range");
    }
    if shape.n2 > 63 {
        return Err("n2 out of range");
    }
    // The array is the bits' bytes rounded up to whole 64-bit words, as RedisBloom sizes it
    // (its oldest encodings kept fewer bits than the array holds, never more words): a header
    // may not ask for a larger array than its bits use.
    let fits = C::array_bytes(shape.bits)
        .and_then(|needed| needed.checked_next_multiple_of(8))
        .is_some_and(|words| words == shape.bytes);
    if shape.bits == 0 || !fits {
        return Err("bit count does not match the array");
    }
    if shape.n2 != 0 && shape.bits < (1u64 << shape.n2) {
        return Err("bit count smaller than 2^n2");
    }
    if hashes_for(shape.bpe) != Some(shape.hashes) {
        return Err("hash count does not match bits per entry");
    }
    Ok(())
}

/// Whether a link's bits hold its capacity, as every link RedisBloom builds does (its bits
/// per entry from its error rate, its bits from capacity × bits per entry, rounded up; the
/// oldest encoding derived its bits the same way), by the stored bits per entry and by its
/// error rate's, whichever asks more (a header may misstate one of them: issue 35's raised
/// error rate keeps its bits per entry). RedisBloom 8.8's `test_arbitrary_offset` LOADCHUNKs
/// a link of 8 bits said to hold 3.6e14 items, which RedisBloom accepts: the link never
/// fills, or is full already and the next link, sized from that capacity, cannot be
/// allocated, so every add that must grow answers `problem inserting into filter`.
pub fn holds_its_capacity(shape: &LinkShape) -> bool {
    let bpe = shape.bpe.max(bits_per_entry(shape.error));
    shape.entries as f64 * bpe <= shape.bits as f64 + 1.0
}

/// RedisBloom's links (and counting links): sized by the classic formula, each next link
/// `growth` times the capacity at half the error rate, under the chain's options.
impl<C: Cells> ChainLink for Link<C> {
    type Shape = LinkShape;
    const MAX_LINKS: u64 = super::MAX_LINKS;
    const CHAIN_OVERHEAD: u64 = 32;
    const LINK_OVERHEAD: u64 = 64;

    #[inline]
    fn contains(&self, hash: ItemHash) -> bool {
        Link::contains(self, hash)
    }
    #[inline]
    fn insert(&mut self, hash: ItemHash) -> bool {
        Link::insert(self, hash)
    }
    fn size(&self) -> u64 {
        self.size
    }
    fn size_mut(&mut self) -> &mut u64 {
        &mut self.size
    }
    fn capacity(&self) -> u64 {
        self.entries
    }
    fn bytes(&self) -> u64 {
        Link::bytes(self)
    }
    fn next_shape(&self, growth: u32, options: u32) -> Option<LinkShape> {
        let entries = self.entries.checked_mul(u64::from(growth))?;
        LinkShape::new(entries, self.error * ERROR_TIGHTENING, options)
            .and_then(LinkShape::with_cells::<C>)
            .ok()
    }
    fn shape_bytes(shape: &LinkShape) -> u64 {
        shape.bytes
    }
    fn allocate(shape: &LinkShape, options: u32) -> Option<Self> {
        Link::allocate(shape, options).ok()
    }
}

impl SetLink for Link<Bits> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_arrays_are_zero_or_refused() {
        assert_eq!(zeroed_array(0).as_deref(), Some(&[][..]));
        let array = zeroed_array(1 << 20).unwrap();
        assert!(array.len() == 1 << 20 && array.iter().all(|&b| b == 0));
        // Past isize::MAX there is no layout to ask for.
        assert!(zeroed_array(usize::MAX).is_none());
    }

    fn noround(entries: u64, error: f64) -> LinkShape {
        LinkShape::new(entries, error, OPT_NOROUND | OPT_FORCE64).unwrap()
    }

    #[test]
    fn sizing_table_of_a_default_chain() {
        // BF.RESERVE g 0.01 100: link i has capacity 100*2^i and error 0.01*0.5^(i+1).
        let expected = [
            (100, 144, 8),
            (200, 312, 9),
            (400, 696, 10),
            (800, 1536, 11),
            (1600, 3360, 12),
            (3200, 7304, 13),
        ];
        let mut error = 0.005;
        for (entries, bytes, hashes) in expected {
            let shape = noround(entries, error);
            assert_eq!(
                (shape.entries, shape.bytes, shape.bits, shape.hashes),
                (entries, bytes, bytes * 8, hashes)
            );
            error *= 0.5;
        }
    }

    #[test]
    fn sizing_with_expansion_four() {
        let bytes: Vec<u64> = (0..6)
            .map(|i| noround(1000 * 4u64.pow(i), 0.001 * 0.5f64.powi(i as i32 + 1)).bytes)
            .collect();
        assert_eq!(bytes, [1984, 8632, 37416, 161192, 690920, 2948328]);
    }

    #[test]
    fn extreme_error_rates() {
        let tiny = noround(1, 1e-300 / 2.0);
        assert_eq!((tiny.bits, tiny.hashes), (1472, 998));
        let loose = noround(1, 0.999999 / 2.0);
        assert_eq!((loose.bits, loose.hashes), (64, 2));
    }

    #[test]
    fn product_beyond_u64_is_too_large() {
        assert_eq!(
            LinkShape::new(u64::MAX / 2, 0.01, OPT_NOROUND),
            Err(LinkError::TooLarge)
        );
    }

    #[test]
    fn legacy_power_of_two_sizing() {
        // A legacy chain's second link for 40 items at 0.005 gets 512 bits and capacity 46.
        let shape = LinkShape::new(40, 0.005, 0).unwrap();
        assert_eq!((shape.bits, shape.entries, shape.n2), (512, 46, 9));
    }

    #[test]
    fn invalid_parameters() {
        assert_eq!(
            LinkShape::new(0, 0.01, OPT_NOROUND),
            Err(LinkError::Invalid)
        );
        assert_eq!(LinkShape::new(1, 0.0, OPT_NOROUND), Err(LinkError::Invalid));
        assert_eq!(LinkShape::new(1, 1.0, OPT_NOROUND), Err(LinkError::Invalid));
        assert_eq!(
            LinkShape::new(1, f64::NAN, OPT_NOROUND),
            Err(LinkError::Invalid)
        );
    }

    #[test]
    fn probes_of_foo_in_a_default_link() {
        let shape = noround(100, 0.005);
        let mut link: Link = Link::allocate(&shape, OPT_FORCE64).unwrap();
        let hash = ItemHash {
            a: 0x822b4f99b121f10d,
            b: 0x9d63d52a557f61c2,
        };
        assert!(link.insert(hash));
        let set: Vec<u64> = (0..link.bits)
            .filter(|p| link.array[(p >> 3) as usize] & (1 << (p & 7)) != 0)
            .collect();
        let mut expected = vec![269, 847, 145, 723, 21, 599, 25, 475];
        expected.sort();
        assert_eq!(set, expected);
        assert!(link.contains(hash));
        assert!(!link.insert(hash));
    }

    fn xorshift_from(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    /// RedisBloom's check written out: every bit `(a + i*b mod 2^64) mod bits` set.
    fn naive_contains(link: &Link, hash: ItemHash) -> bool {
        (0..u64::from(link.hashes)).all(|i| {
            let p = hash.a.wrapping_add(i.wrapping_mul(hash.b)) % link.bits;
            link.array[(p >> 3) as usize] & (1 << (p & 7)) != 0
        })
    }

    /// Links of assorted sizes and hash counts, each with a share of its bits set at random.
    fn links(count: usize, next: &mut impl FnMut() -> u64) -> Vec<Link> {
        (0..count)
            .map(|i| {
                let entries = 1 + next() % 300;
                let error = 0.5f64.powi(1 + (i % 12) as i32);
                let shape = LinkShape::new(entries, error, OPT_NOROUND | OPT_FORCE64).unwrap();
                let mut link = Link::allocate(&shape, OPT_FORCE64).unwrap();
                let density = next() % 100;
                for byte in link.array.iter_mut() {
                    for bit in 0..8 {
                        if next() % 100 < density {
                            *byte |= 1 << bit;
                        }
                    }
                }
                link
            })
            .collect()
    }

    #[test]
    fn chains_answer_as_redisbloom_writes_the_check() {
        let mut next = xorshift_from(0x9e37_79b9_7f4a_7c15);
        let mut answers = [0; 2];
        for count in [0, 1, 2, 3, 14, 31, 32, 33, 70] {
            let links = links(count, &mut next);
            for _ in 0..3000 {
                let hash = ItemHash {
                    a: next(),
                    b: next(),
                };
                let expected = links.iter().any(|link| naive_contains(link, hash));
                assert_eq!(
                    links.iter().rev().any(|link| link.contains(hash)),
                    expected,
                    "{count} links"
                );
                answers[usize::from(expected)] += 1;
            }
        }
        // Both answers occur often, so the comparison covers hits and misses.
        assert!(answers.iter().all(|n| *n > 1000), "{answers:?}");
    }
}
