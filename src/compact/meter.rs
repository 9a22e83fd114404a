//! A work meter for the model check: slots a compact filter's operation read or
//! moved, counted where the table walks (runs read, clusters walked, slots shifted), the
//! step of a doubling each write moves included; apart from them only a doubling finished
//! in one go (the one case of a table crowded with void entries; see `doubling`), plus both
//! tables' slots. Only in tests and the `model-check` build; in the module it compiles to
//! nothing.

#[cfg(any(test, feature = "model-check"))]
thread_local! {
    /// (bounded work, doublings finished at once) since the last `take`.
    static WORK: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
}

/// Counts `slots` of work.
#[inline(always)]
pub fn add(slots: u64) {
    #[cfg(any(test, feature = "model-check"))]
    WORK.with(|w| {
        let (work, doubling) = w.get();
        w.set((work.saturating_add(slots), doubling));
    });
    #[cfg(not(any(test, feature = "model-check")))]
    let _ = slots;
}

/// Runs a doubling finished at once: the work counted inside it is apart, plus both tables'
/// slots.
#[inline]
pub fn doubling<T>(slots: u64, run: impl FnOnce() -> T) -> T {
    #[cfg(any(test, feature = "model-check"))]
    let before = WORK.with(|w| w.get());
    let out = run();
    #[cfg(any(test, feature = "model-check"))]
    WORK.with(|w| {
        let (work, doubling) = w.get();
        let inside = work.saturating_sub(before.0).saturating_add(slots);
        w.set((before.0, doubling.saturating_add(inside)));
    });
    #[cfg(not(any(test, feature = "model-check")))]
    let _ = slots;
    out
}

/// The work counted since the last call on this thread: bounded, and doublings finished at
/// once.
#[cfg(any(test, feature = "model-check"))]
pub fn take() -> (u64, u64) {
    WORK.with(|w| w.replace((0, 0)))
}
