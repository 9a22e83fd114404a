//! How much memory a filter may take: the question every allocating path of the core asks
//! before it allocates. A plain `u64` is a fixed cap on the filter's reported size; the Redis
//! layer answers with the cap and what `maxmemory` still allows (deviation D13).

/// The most bytes (as the filter reports its size) a filter may reach.
pub trait Budget {
    /// The limit for a filter that has `current` bytes now and is about to grow; a new filter
    /// asks with `current` 0. Asked only when an allocation is about to happen, so an add
    /// that finds room pays nothing.
    fn limit(&self, current: u64) -> u64;
}

/// A fixed cap, whatever the filter holds now.
impl Budget for u64 {
    fn limit(&self, _current: u64) -> u64 {
        *self
    }
}

impl<B: Budget + ?Sized> Budget for &B {
    fn limit(&self, current: u64) -> u64 {
        (**self).limit(current)
    }
}
