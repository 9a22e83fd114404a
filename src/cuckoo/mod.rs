//! Cuckoo filters (in progress).
