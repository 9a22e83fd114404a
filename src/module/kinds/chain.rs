//! What every kind built on a chain of links shares (the plain chain itself, the counting
//! filter's counters, each generation of a windowed filter): RedisBloom's `BF.INFO` fields and
//! `BF.DEBUG` line, the digest, and the defragmentation of the links.

use crate::bloom::{format_g, Cells, Chain, Link};
use crate::module::ffi::io::{Defrag, Digest};

use super::Info;

impl Info {
    /// RedisBloom's five fields of a chain, whatever its cells.
    pub fn of_chain<C: Cells>(chain: &Chain<Link<C>>) -> Info {
        Info {
            capacity: chain.capacity(),
            size: chain.reported_bytes(),
            filters: chain.links.len() as u64,
            items: chain.size,
            expansion: chain.is_scaling().then_some(chain.growth),
            extra: Vec::new(),
        }
    }
}

/// Every field and array of a chain, for `DEBUG DIGEST-VALUE`.
pub fn digest_chain<C: Cells>(chain: &Chain<Link<C>>, digest: &mut Digest) {
    for number in [
        chain.size,
        u64::from(chain.options),
        u64::from(chain.growth),
    ] {
        digest.add_int(number);
    }
    for link in &chain.links {
        for number in [
            link.entries,
            link.error.to_bits(),
            u64::from(link.hashes),
            link.bpe.to_bits(),
        ] {
            digest.add_int(number);
        }
        for number in [link.bits, u64::from(link.n2), link.size] {
            digest.add_int(number);
        }
        digest.add_bytes(&link.array);
    }
}

/// Moves a chain's heap blocks (active defragmentation).
pub fn relocate_chain<C: Cells>(chain: &mut Chain<Link<C>>, defrag: &Defrag) {
    defrag.vec(&mut chain.links);
    for link in &mut chain.links {
        defrag.bytes(&mut link.array);
    }
}

/// One link's line of `BF.DEBUG`, as RedisBloom prints it.
pub fn link_line<C: Cells>(link: &Link<C>, force64: bool) -> String {
    let bits = if link.bits == 0 {
        1u64 << link.n2
    } else {
        link.bits
    };
    let width = if force64 { 64 } else { 32 };
    format!(
        "bytes:{} bits:{} hashes:{} hashwidth:{} capacity:{} size:{} ratio:{}",
        link.bytes(),
        bits,
        link.hashes,
        width,
        link.entries,
        link.size,
        format_g(link.error)
    )
}
