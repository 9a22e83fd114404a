//! Unit tests of the cuckoo core against the reference's documented vectors.
