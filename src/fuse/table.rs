//! The frozen filter: a 3-wise binary fuse filter (Graf & Lemire, "Binary Fuse Filters: Fast
//! and Smaller Than Xor Filters", 2022) of `width`-bit fingerprints packed end to end. An item
//! is present when the xor of its three slots equals its fingerprint; the three slots lie in
//! three consecutive segments of `segment_length` slots, chosen from the item's 64-bit hash
//! mixed with the filter's seed.
//!
//! The table is followed by [`PADDING`] zero bytes, so reading any slot is one unaligned
//! 8-byte load with no bounds branch that input could reach: [`Shape::check`] guarantees
//! every slot a hash can name lies inside the table.

/// Zero bytes after the packed slots: a slot of up to 32 bits at any bit offset is read as
/// one little-endian `u64` starting at its first byte.
pub const PADDING: usize = 8;
/// Widest fingerprint (a false-positive rate of 2^-32).
pub const MAX_WIDTH: u32 = 32;
/// Longest segment (the reference implementation's cap).
pub const MAX_SEGMENT_LENGTH: u32 = 1 << 18;
/// Most slots a table has: slot indices are `u32`.
pub const MAX_SLOTS: u64 = 1 << 32;

/// The geometry of a table and its seed: what a lookup needs besides the slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Fingerprint bits (1 to [`MAX_WIDTH`]).
    pub width: u32,
    /// Slots per segment: a power of two up to [`MAX_SEGMENT_LENGTH`].
    pub segment_length: u32,
    /// Segments a hash's first slot can fall in; 0 for an empty filter (no slots at all).
    pub segment_count: u32,
    /// Mixed into every item hash; the one that made construction succeed.
    pub seed: u64,
}

/// Why a stored shape is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShapeError {
    Invalid(&'static str),
    TooLarge,
}

impl Shape {
    /// Slots of the table: two segments past the last one a first slot can fall in.
    pub fn slots(&self) -> u64 {
        if self.segment_count == 0 {
            return 0;
        }
        (u64::from(self.segment_count) + 2) * u64::from(self.segment_length)
    }

    /// Bytes of the table, padding included.
    pub fn bytes(&self) -> u64 {
        (self.slots() * u64::from(self.width)).div_ceil(8) + PADDING as u64
    }

    /// The checks every shape read from outside passes before anything is allocated for it.
    pub fn check(&self) -> Result<(), ShapeError> {
        if !(1..=MAX_WIDTH).contains(&self.width) {
            return Err(ShapeError::Invalid("fingerprint width out of range"));
        }
        let length = self.segment_length;
        if !length.is_power_of_two() || length > MAX_SEGMENT_LENGTH {
            return Err(ShapeError::Invalid("segment length out of range"));
        }
        if self.slots() > MAX_SLOTS {
            return Err(ShapeError::TooLarge);
        }
        Ok(())
    }

    /// The three slots of a mixed hash. The first lies below `segment_count *
    /// segment_length`; the others one and two segments further, moved within their segment
    /// by an xor smaller than its length: all three are below [`Shape::slots`].
    #[inline]
    pub fn slots_of(&self, mixed: u64) -> [u64; 3] {
        let length = u64::from(self.segment_length);
        let span = u64::from(self.segment_count) * length;
        let first = ((u128::from(mixed) * u128::from(span)) >> 64) as u64;
        let mask = length - 1;
        [
            first,
            (first + length) ^ ((mixed >> 18) & mask),
            (first + 2 * length) ^ (mixed & mask),
        ]
    }

    #[inline]
    pub fn mask(&self) -> u64 {
        (1u64 << self.width) - 1
    }
}

/// The reference implementation's mixer (MurmurHash3's 64-bit finalizer) of an item hash
/// plus the seed: a bijection, so distinct item hashes stay distinct.
#[inline]
pub fn mix(hash: u64, seed: u64) -> u64 {
    crate::hash::fmix64(hash.wrapping_add(seed))
}

/// An item's fingerprint, before masking to the width.
#[inline]
pub fn fingerprint(mixed: u64) -> u64 {
    mixed ^ (mixed >> 32)
}

/// A frozen filter's table: its shape and packed slots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub shape: Shape,
    /// `shape.bytes()` bytes: the packed slots, then [`PADDING`] zeros.
    pub slots: Vec<u8>,
}

impl Table {
    /// An all-zero table of a checked shape (whose size the caller has admitted), or None if
    /// it cannot be addressed.
    pub fn zeroed(shape: Shape) -> Option<Self> {
        let len = usize::try_from(shape.bytes()).ok()?;
        // Asked of the allocator zeroed: a large table's pages are not written here.
        Some(Table {
            shape,
            slots: vec![0u8; len],
        })
    }

    /// The slot at `index` (below `shape.slots()`).
    #[inline]
    pub fn get(&self, index: u64) -> u64 {
        let bit = index * u64::from(self.shape.width);
        let at = (bit / 8) as usize;
        let word = self
            .slots
            .get(at..at + 8)
            .and_then(|w| w.try_into().ok())
            .map_or(0, u64::from_le_bytes);
        (word >> (bit % 8)) & self.shape.mask()
    }

    /// Sets the slot at `index` (below `shape.slots()`) to `value` (within the width).
    pub fn set(&mut self, index: u64, value: u64) {
        let bit = index * u64::from(self.shape.width);
        let at = (bit / 8) as usize;
        let shift = bit % 8;
        let mask = self.shape.mask() << shift;
        if let Some(bytes) = self.slots.get_mut(at..at + 8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(bytes);
            let word = u64::from_le_bytes(word);
            let word = (word & !mask) | ((value << shift) & mask);
            bytes.copy_from_slice(&word.to_le_bytes());
        }
    }

    /// Whether the item whose 64-bit hash is `hash` may be present: three reads, no branch
    /// on the slots.
    #[inline]
    pub fn contains(&self, hash: u64) -> bool {
        if self.shape.segment_count == 0 {
            return false;
        }
        let mixed = mix(hash, self.shape.seed);
        let [a, b, c] = self.shape.slots_of(mixed);
        (fingerprint(mixed) ^ self.get(a) ^ self.get(b) ^ self.get(c)) & self.shape.mask() == 0
    }

    /// Starts loading the three slots of the item whose hash is `hash`.
    #[inline]
    pub fn prefetch(&self, hash: u64) {
        if self.shape.segment_count == 0 {
            return;
        }
        let width = u64::from(self.shape.width);
        for slot in self.shape.slots_of(mix(hash, self.shape.seed)) {
            let at = (slot * width / 8) as usize;
            crate::bloom::prefetch(self.slots.as_ptr().wrapping_add(at));
        }
    }
}
