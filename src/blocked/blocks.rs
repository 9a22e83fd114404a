//! A link's storage: 64-byte blocks, each aligned to a cache line so an item's bits cost one
//! cache miss, allocated zeroed by the allocator (no eager writes: a large link's pages are
//! only touched as items land in them, where the allocator maps fresh zero pages).

use std::alloc::{alloc_zeroed, Layout};

use super::sizing::BLOCK_BYTES;

/// One block: eight little-endian 64-bit words, on a cache line of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct Block(pub [u8; BLOCK_BYTES as usize]);

/// A link's blocks.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Blocks(Box<[Block]>);

/// The blocks could not be allocated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocError;

impl Blocks {
    /// `count` zeroed blocks, or `AllocError` when the size overflows or the allocator
    /// refuses (the caller has checked the size against the filter's budget already).
    pub fn zeroed(count: u64) -> Result<Self, AllocError> {
        let count = usize::try_from(count).map_err(|_| AllocError)?;
        if count == 0 {
            return Ok(Self::default());
        }
        let layout = Layout::array::<Block>(count).map_err(|_| AllocError)?;
        // SAFETY: the layout has a non-zero size (count >= 1 blocks of 64 bytes). A non-null
        // result is `count` zeroed, 64-aligned blocks allocated with exactly the layout that
        // `Box<[Block]>` frees them with, and all-zero bytes are a valid `Block`.
        unsafe {
            let ptr = alloc_zeroed(layout).cast::<Block>();
            if ptr.is_null() {
                return Err(AllocError);
            }
            Ok(Self(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                ptr, count,
            ))))
        }
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    #[inline]
    pub fn get(&self, index: usize) -> Option<&Block> {
        self.0.get(index)
    }

    #[inline]
    pub fn get_mut(&mut self, index: usize) -> Option<&mut Block> {
        self.0.get_mut(index)
    }

    /// The block's address, for prefetching.
    #[inline]
    pub fn address(&self, index: usize) -> *const u8 {
        self.0.as_ptr().wrapping_add(index).cast()
    }

    /// The blocks as bytes (what RDB values and SCANDUMP chunks carry).
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `Block` is `repr(C)` around `[u8; 64]` with alignment 64, so it has no
        // padding: the slice is `len * 64` initialised bytes, borrowed as long as `self`.
        unsafe { std::slice::from_raw_parts(self.0.as_ptr().cast(), self.0.len() * 64) }
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `bytes`; every byte pattern is a valid `Block`, and the borrow is
        // exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.0.as_mut_ptr().cast(), self.0.len() * 64) }
    }

    /// The storage's blocks, for active defragmentation.
    pub fn boxed(&mut self) -> &mut Box<[Block]> {
        &mut self.0
    }
}
