//! The module's global allocator: Redis's own (`RedisModule_Alloc`/`Free`, so MEMORY USAGE and
//! INFO memory see the filters), plus zeroed allocations through `RedisModule_Calloc`. The crate's
//! allocator zeroes by writing every byte after allocating; jemalloc's calloc hands out pages
//! fresh from the kernel without touching them, so creating a 100M-item filter costs page-table
//! work, not a 120 MB memset on the main thread, and its pages appear as they are first written.

use std::alloc::{GlobalAlloc, Layout};

use redis_module::alloc::RedisAlloc;
use redis_module::raw;

/// Redis's allocator with a lazy zeroed allocation.
#[derive(Default, Debug, Clone, Copy)]
pub struct ServerAlloc;

// SAFETY: allocations and frees go to Redis's allocator (the crate's, for `alloc`/`dealloc`);
// a zeroed block and a resized one are asked of the same allocator, with the size rounded up
// to the alignment as the crate does (jemalloc aligns a block to its size class), so
// `dealloc` frees them alike.
unsafe impl GlobalAlloc for ServerAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        RedisAlloc.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let size = (layout.size() + layout.align() - 1) & !(layout.align() - 1);
        match raw::RedisModule_Calloc {
            Some(calloc) => calloc(1, size).cast(),
            // Before the API is bound: the crate's path, which reports the missing allocator.
            None => RedisAlloc.alloc_zeroed(layout),
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        RedisAlloc.dealloc(ptr, layout);
    }

    /// Redis's realloc, which keeps a block in place while its size class holds (a segment
    /// of a compact filter grows a word at a time); without it a resize copies every time.
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let size = (new_size + layout.align() - 1) & !(layout.align() - 1);
        match raw::RedisModule_Realloc {
            Some(realloc) => realloc(ptr.cast(), size).cast(),
            // Before the API is bound: the crate's path, which reports the missing allocator.
            None => RedisAlloc.realloc(ptr, layout, new_size),
        }
    }
}
