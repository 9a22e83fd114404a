//! Totals over every Bloom and Cuckoo value of the server, for the `INFO bf` section: how many
//! values, their bytes (as MEMORY USAGE counts them), items and sub-filters, and how many
//! payloads and chunks were refused. Values report their own measure; the key wrapper in
//! `ffi` applies the difference a write command made, and the type callbacks account for
//! values that appear (RDB load, RESTORE, COPY) and disappear (free).

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::bloom::{Cells, Chain, Link};
use crate::cuckoo::CuckooFilter;

/// What one value contributes to the totals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Measure {
    pub values: i64,
    pub bytes: i64,
    pub items: i64,
    pub filters: i64,
}

/// Running totals of one value type.
pub struct Totals {
    values: AtomicI64,
    bytes: AtomicI64,
    items: AtomicI64,
    filters: AtomicI64,
}

impl Totals {
    const fn new() -> Self {
        Totals {
            values: AtomicI64::new(0),
            bytes: AtomicI64::new(0),
            items: AtomicI64::new(0),
            filters: AtomicI64::new(0),
        }
    }

    /// Adds `after - before` (a value that appeared has `before` zero; one that went, `after`).
    pub fn change(&self, before: Measure, after: Measure) {
        if before == after {
            return;
        }
        let pairs = [
            (&self.values, after.values.wrapping_sub(before.values)),
            (&self.bytes, after.bytes.wrapping_sub(before.bytes)),
            (&self.items, after.items.wrapping_sub(before.items)),
            (&self.filters, after.filters.wrapping_sub(before.filters)),
        ];
        for (total, delta) in pairs {
            total.fetch_add(delta, Ordering::Relaxed);
        }
    }

    pub fn snapshot(&self) -> Measure {
        Measure {
            values: self.values.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            items: self.items.load(Ordering::Relaxed),
            filters: self.filters.load(Ordering::Relaxed),
        }
    }
}

pub static BLOOM: Totals = Totals::new();
pub static COUNTING: Totals = Totals::new();
pub static CUCKOO: Totals = Totals::new();
pub static WINDOWED: Totals = Totals::new();
pub static COMPACT: Totals = Totals::new();
pub static BLOCKED: Totals = Totals::new();
pub static STATIC: Totals = Totals::new();
/// RDB values and RESTORE payloads the loaders refused.
pub static REJECTED_PAYLOADS: AtomicI64 = AtomicI64::new(0);
/// LOADCHUNK headers and chunks refused.
pub static REJECTED_CHUNKS: AtomicI64 = AtomicI64::new(0);
/// Deletes from counting filters left undone because more than one link held the item.
pub static AMBIGUOUS_DELETES: AtomicI64 = AtomicI64::new(0);

/// Heap allocations made by the module since it loaded (the add and lookup paths make none).
pub static ALLOCATIONS: AtomicI64 = AtomicI64::new(0);

/// A global allocator that counts allocations and hands them to `A`.
pub struct Counting<A>(pub A);

// SAFETY: every call is forwarded unchanged to the wrapped allocator.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        self.0.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        self.0.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.0.dealloc(ptr, layout);
    }
}

pub fn count(counter: &AtomicI64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// A value type whose values take part in the totals.
pub trait Measured {
    fn measure(&self) -> Measure;
    fn totals() -> &'static Totals;
}

pub fn saturating(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// What a chain of any cells contributes: its reported bytes, items and links.
pub fn chain_measure<C: Cells>(chain: &Chain<Link<C>>) -> Measure {
    Measure {
        values: 1,
        bytes: saturating(chain.reported_bytes()),
        items: saturating(chain.size),
        filters: saturating(chain.links.len() as u64),
    }
}

impl Measured for Chain {
    fn measure(&self) -> Measure {
        chain_measure(self)
    }
    fn totals() -> &'static Totals {
        &BLOOM
    }
}

impl Measured for CuckooFilter {
    fn measure(&self) -> Measure {
        Measure {
            values: 1,
            bytes: saturating(self.size_bytes()),
            items: saturating(self.num_items()),
            filters: i64::from(self.num_filters()),
        }
    }
    fn totals() -> &'static Totals {
        &CUCKOO
    }
}

/// Accounts for a value that appeared (`true`) or went away (`false`).
pub fn appeared<T: Measured>(value: &T, appeared: bool) {
    let measure = value.measure();
    if appeared {
        T::totals().change(Measure::default(), measure);
    } else {
        T::totals().change(measure, Measure::default());
    }
}

/// A running `BF.FREEZE`, as `BF.INFO` of its key and `INFO bf` show it: its thread counts
/// the hashes it has read, the main thread the table bytes it has propagated.
pub struct FreezeProgress {
    /// The freeze's [`crate::fuse::FreezeJob::id`].
    pub id: usize,
    pub items: u64,
    /// Hashes read by the current attempt (each attempt reads every hash twice).
    pub read: AtomicU64,
    /// The table's bytes once built (0 while it is being built), and those propagated.
    pub table: AtomicU64,
    pub sent: AtomicU64,
}

impl FreezeProgress {
    /// `(step, done, total)`: step 1 builds the table off the main thread (hashes read of
    /// twice the items), step 2 propagates it in steps (table bytes sent of the table's).
    pub fn now(&self) -> (i64, u64, u64) {
        let table = self.table.load(Ordering::Relaxed);
        if table == 0 {
            let total = self.items.saturating_mul(2);
            (1, self.read.load(Ordering::Relaxed).min(total), total)
        } else {
            (2, self.sent.load(Ordering::Relaxed).min(table), table)
        }
    }

    /// The line `INFO bf` shows for it.
    pub fn line(&self) -> String {
        let (step, done, total) = self.now();
        let (what, next) = match step {
            1 => ("build", "propagate"),
            _ => ("propagate", "commit"),
        };
        format!("step={what},done={done},total={total},next={next}")
    }
}

/// The freezes running, oldest first.
static FREEZES: Mutex<Vec<Arc<FreezeProgress>>> = Mutex::new(Vec::new());

fn freezes_locked() -> MutexGuard<'static, Vec<Arc<FreezeProgress>>> {
    FREEZES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Registers a freeze starting from `items` hashes.
pub fn freeze_started(id: usize, items: u64) -> Arc<FreezeProgress> {
    let progress = Arc::new(FreezeProgress {
        id,
        items,
        read: AtomicU64::new(0),
        table: AtomicU64::new(0),
        sent: AtomicU64::new(0),
    });
    freezes_locked().push(Arc::clone(&progress));
    progress
}

/// Forgets a freeze that ended (done, refused or abandoned).
pub fn freeze_ended(progress: &Arc<FreezeProgress>) {
    freezes_locked().retain(|running| !Arc::ptr_eq(running, progress));
}

/// The progress of the freeze of that id, if it runs.
pub fn freeze_of(id: usize) -> Option<Arc<FreezeProgress>> {
    freezes_locked().iter().find(|f| f.id == id).cloned()
}

/// How many freezes run, and the oldest one's `INFO bf` line (`none` without one).
pub fn freezes_now() -> (i64, String) {
    let running = freezes_locked();
    let line = running
        .first()
        .map_or_else(|| "none".to_string(), |f| f.line());
    (running.len() as i64, line)
}

/// bloomrs's own version (the crate's, which the packages carry), first field of `INFO bf`.
pub const BLOOMRS_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The numeric fields of the `INFO bf` section.
pub fn info_fields() -> [(&'static str, i64); 33] {
    let (bloom, cuckoo) = (BLOOM.snapshot(), CUCKOO.snapshot());
    let (windowed, counting) = (WINDOWED.snapshot(), COUNTING.snapshot());
    let (compact, blocked) = (COMPACT.snapshot(), BLOCKED.snapshot());
    let static_sets = STATIC.snapshot();
    [
        ("bloom_filters", bloom.values),
        ("bloom_memory_bytes", bloom.bytes),
        ("bloom_items", bloom.items),
        ("bloom_links", bloom.filters),
        ("windowed_filters", windowed.values),
        ("windowed_memory_bytes", windowed.bytes),
        ("windowed_items", windowed.items),
        ("windowed_links", windowed.filters),
        ("counting_filters", counting.values),
        ("counting_memory_bytes", counting.bytes),
        ("counting_items", counting.items),
        ("counting_links", counting.filters),
        (
            "counting_ambiguous_deletes",
            AMBIGUOUS_DELETES.load(Ordering::Relaxed),
        ),
        ("compact_filters", compact.values),
        ("compact_memory_bytes", compact.bytes),
        ("compact_items", compact.items),
        ("compact_tables", compact.filters),
        ("blocked_filters", blocked.values),
        ("blocked_memory_bytes", blocked.bytes),
        ("blocked_items", blocked.items),
        ("blocked_links", blocked.filters),
        ("static_sets", static_sets.values),
        ("static_memory_bytes", static_sets.bytes),
        ("static_items", static_sets.items),
        ("static_frozen", static_sets.filters),
        ("static_freezing", freezes_now().0),
        ("cuckoo_filters", cuckoo.values),
        ("cuckoo_memory_bytes", cuckoo.bytes),
        ("cuckoo_items", cuckoo.items),
        ("cuckoo_sub_filters", cuckoo.filters),
        (
            "rejected_payloads",
            REJECTED_PAYLOADS.load(Ordering::Relaxed),
        ),
        ("rejected_chunks", REJECTED_CHUNKS.load(Ordering::Relaxed)),
        ("module_allocations", ALLOCATIONS.load(Ordering::Relaxed)),
    ]
}
