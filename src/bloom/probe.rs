//! Where an item's bits are in a link. RedisBloom's i-th position is `(a + i*b mod 2^64) mod m`
//! (m = the link's bit count, or 2^n2 for legacy links). Computed as written that is one
//! 64-bit modulo per probe; here each link reduces `a` and `b` once per item and every further
//! position is an addition and a conditional subtraction, with a correction whenever
//! `a + i*b` wraps past 2^64. Same positions, far less arithmetic: a 21-hash link of a grown
//! chain costs two reductions instead of twenty-one. Links of our own kinds may probe by
//! [`Spread`] instead (the chain's `OPT_SPREAD`), never a RedisBloom value.

use super::ItemHash;
use crate::hash::fmix64;

/// `x mod d` for a fixed divisor without a division instruction: Lemire, Kaser and Kurz,
/// "Faster remainder by direct computation" (2019), with a 128-bit constant so the result is
/// exact for every 64-bit `x`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Modulus {
    divisor: u64,
    magic: u128,
    /// 2^64 mod divisor: what a wrap past 2^64 takes away from a position.
    wrap: u64,
}

impl Modulus {
    pub(super) fn new(divisor: u64) -> Self {
        // ceil(2^128 / d), which wraps to 0 for d = 1 (and every x mod 1 is 0). A zero divisor
        // cannot pass the link validation; it would reduce everything to 0.
        let magic = u128::MAX
            .checked_div(u128::from(divisor))
            .map_or(0, |q| q.wrapping_add(1));
        let wrap = (u128::from(u64::MAX) + 1)
            .checked_rem(u128::from(divisor))
            .map_or(0, |r| r as u64);
        Modulus {
            divisor,
            magic,
            wrap,
        }
    }

    #[inline]
    pub(super) fn reduce(&self, x: u64) -> u64 {
        let fraction = self.magic.wrapping_mul(u128::from(x));
        let divisor = u128::from(self.divisor);
        // The top 64 bits of the 192-bit product fraction * divisor.
        let low = (fraction & u128::from(u64::MAX)) * divisor;
        let high = (fraction >> 64) * divisor;
        ((high + (low >> 64)) >> 64) as u64
    }

    /// An item's probe positions in a link with `hashes` hash functions.
    #[inline]
    pub(super) fn probes(&self, hash: ItemHash, hashes: u32) -> Probes {
        self.probes_from(self.reduce(hash.a), hash, hashes)
    }

    /// The same, when the first position (`reduce(hash.a)`) is known already.
    #[inline]
    pub(super) fn probes_from(&self, first: u64, hash: ItemHash, hashes: u32) -> Probes {
        Probes {
            sum: hash.a,
            b: hash.b,
            position: first,
            strides: self.strides(hash.b),
            divisor: self.divisor,
            left: hashes,
        }
    }

    /// What adding `b` to a probe hash adds to its position: `b mod d`, and `b - 2^64 mod d`
    /// when the addition wraps past 2^64.
    #[inline]
    pub(super) fn strides(&self, b: u64) -> Strides {
        let stride = self.reduce(b);
        let wrapped = if stride >= self.wrap {
            stride - self.wrap
        } else {
            stride.wrapping_add(self.divisor.wrapping_sub(self.wrap))
        };
        Strides { stride, wrapped }
    }
}

/// `(x + y) mod d` for `x, y < d`, without overflow.
#[inline]
fn add_mod(x: u64, y: u64, divisor: u64) -> u64 {
    let (sum, over) = x.overflowing_add(y);
    if over || sum >= divisor {
        sum.wrapping_sub(divisor)
    } else {
        sum
    }
}

/// The two steps of a position from one probe to the next (see [`Modulus::strides`]).
#[derive(Clone, Copy, Default)]
pub(super) struct Strides {
    stride: u64,
    wrapped: u64,
}

impl Strides {
    #[inline]
    pub(super) fn step(&self, wrapped: bool) -> u64 {
        if wrapped {
            self.wrapped
        } else {
            self.stride
        }
    }
}

/// An item's remaining probe positions in one link.
#[derive(Clone, Copy)]
pub(super) struct Probes {
    /// a + i*b mod 2^64 for the next probe i.
    sum: u64,
    b: u64,
    /// sum mod the divisor.
    position: u64,
    strides: Strides,
    divisor: u64,
    left: u32,
}

impl Iterator for Probes {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let at = self.position;
        let (sum, wrapped) = self.sum.overflowing_add(self.b);
        self.sum = sum;
        self.position = add_mod(at, self.strides.step(wrapped), self.divisor);
        Some(at)
    }
}
/// An item's probe positions in a link of our own kinds' spread probing: probe `i` (from 1)
/// reads position `fmix64(a + i·(b | 1)) · m / 2^64`. RedisBloom's double hashing reduces
/// `a + i·b` modulo `m`, and every link built with rounding holds a multiple of 64 bits: an
/// item whose `b` shares a large power of two with `m` probes a few positions over and over,
/// and on links of a few hundred bits (the first links of a chain at a tight rate) such items
/// read present several times as often as the sizing assumes. Here the `k` sums are distinct
/// (an odd step), the mix spreads each over all 64 bits and the multiply maps it onto `m`
/// whatever its factors: the positions are as good as independent at every size.
#[derive(Clone, Copy)]
pub(super) struct Spread {
    sum: u64,
    step: u64,
    divisor: u64,
    left: u32,
}

impl Spread {
    #[inline]
    pub(super) fn new(hash: ItemHash, divisor: u64, hashes: u32) -> Self {
        Spread {
            sum: hash.a,
            step: hash.b | 1,
            divisor,
            left: hashes,
        }
    }
}

impl Iterator for Spread {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        self.sum = self.sum.wrapping_add(self.step);
        let mixed = u128::from(fmix64(self.sum));
        Some(((mixed * u128::from(self.divisor)) >> 64) as u64)
    }
}

/// The positions of either probing, as one iterator.
#[derive(Clone, Copy)]
pub(super) enum Positions {
    RedisBloom(Probes),
    Spread(Spread),
}

impl Iterator for Positions {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        match self {
            Positions::RedisBloom(probes) => probes.next(),
            Positions::Spread(spread) => spread.next(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    fn divisors(next: &mut impl FnMut() -> u64) -> Vec<u64> {
        let mut divisors = vec![
            1u64,
            2,
            3,
            7,
            64,
            1152,
            1 << 14,
            4_800_000_000,
            u64::MAX,
            u64::MAX - 1,
            1 << 63,
            (1 << 63) + 1,
        ];
        divisors.extend((0..2000).map(|i| next() >> (i % 64)).filter(|d| *d > 0));
        divisors
    }

    #[test]
    fn reducer_is_an_exact_modulo() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        for d in divisors(&mut next) {
            let reducer = Modulus::new(d);
            let edges = [
                0,
                1,
                d - 1,
                d,
                d.wrapping_add(1),
                u64::MAX,
                u64::MAX - 1,
                d.wrapping_mul(2),
            ];
            for x in edges.into_iter().chain((0..500).map(|_| next())) {
                assert_eq!(reducer.reduce(x), x % d, "{x} mod {d}");
            }
        }
    }

    #[test]
    fn probes_are_redisbloom_positions() {
        // (a + i*b mod 2^64) mod d as RedisBloom writes it, across wraps past 2^64, for hashes
        // of both widths (legacy 32-bit hashes never wrap).
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        for d in divisors(&mut next) {
            let modulus = Modulus::new(d);
            for _ in 0..20 {
                let wide = ItemHash {
                    a: next(),
                    b: next(),
                };
                let narrow = ItemHash {
                    a: next() >> 32,
                    b: next() >> 32,
                };
                for hash in [
                    wide,
                    narrow,
                    ItemHash {
                        a: u64::MAX,
                        b: u64::MAX,
                    },
                ] {
                    let expected =
                        (0..40u64).map(|i| hash.a.wrapping_add(i.wrapping_mul(hash.b)) % d);
                    assert!(modulus.probes(hash, 40).eq(expected), "{hash:?} mod {d}");
                }
            }
        }
    }

    #[test]
    fn spread_positions_stay_inside_the_link_and_spread_over_it() {
        let mut next = xorshift(0x5eed_5bed);
        for d in [1u64, 64, 384, 768, 1 << 14, 4_800_000_000, u64::MAX] {
            let mut seen = std::collections::HashSet::new();
            for _ in 0..200 {
                let hash = ItemHash {
                    a: next(),
                    b: next(),
                };
                let positions: Vec<u64> = Spread::new(hash, d, 10).collect();
                assert_eq!(positions.len(), 10);
                assert!(positions.iter().all(|p| *p < d), "{d}");
                seen.extend(positions);
            }
            // 2,000 positions over 384 bits leave few of them unread.
            if d == 384 {
                assert!(seen.len() > 370, "{}", seen.len());
            }
        }
        // A step sharing every power of two with the link's bits still probes ten places.
        let hash = ItemHash { a: 7, b: 384 << 20 };
        let distinct: std::collections::HashSet<u64> = Spread::new(hash, 384, 10).collect();
        assert!(distinct.len() >= 9, "{distinct:?}");
        assert_eq!(
            Modulus::new(384)
                .probes(hash, 10)
                .collect::<std::collections::HashSet<_>>()
                .len(),
            1
        );
    }

    #[test]
    fn probes_stop_after_the_hash_count() {
        let probes = Modulus::new(1152).probes(ItemHash { a: 1, b: 2 }, 3);
        assert_eq!(probes.count(), 3);
        assert_eq!(Modulus::new(1152).probes(ItemHash::default(), 0).count(), 0);
    }
}
