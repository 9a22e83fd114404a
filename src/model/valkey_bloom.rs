//! valkey-bloom's filter (`bloomfltr`) under the model: adds only, scaling by its rule, its
//! RDB value and its `BF.LOAD` blob (what its SCANDUMP header carries) as the round trips.

use super::codec::Codec;
use super::{Kind, Params};
use crate::rdb::MemoryRdb;
use crate::valkey_bloom::{self as vb, ValkeyBloom};

impl Codec for ValkeyBloom {
    fn save(&self, rdb: &mut MemoryRdb) {
        ValkeyBloom::save(self, rdb);
    }
    fn encoding_version(&self) -> i32 {
        vb::ENCODING_VERSION
    }
    fn load(rdb: &mut MemoryRdb, encver: i32, max_bytes: u64) -> Option<Self> {
        ValkeyBloom::load(rdb, encver, max_bytes).ok()
    }
    fn encode_header(&self) -> Vec<u8> {
        vb::encode_blob(self)
    }
    fn from_header(header: &[u8], max_bytes: u64) -> Option<Self> {
        vb::decode_blob(header, max_bytes).ok()
    }
    /// The header holds the whole value: there are no chunks to take.
    fn load_chunk(&mut self, _iter: i64, _bytes: &[u8], _max_bytes: u64) -> bool {
        false
    }
    fn chunks(&self) -> Vec<(i64, Vec<u8>)> {
        Vec::new()
    }
}

/// A valkey-bloom filter: `variant` bit 0 makes it non-scaling, bit 1 takes valkey-bloom's
/// fixed seed (else one made from the parameters).
#[derive(Debug, Clone)]
pub struct ValkeyKind(pub ValkeyBloom);

/// The same filters and parameters: the encodings carry everything but the slots of the
/// filter list that valkey-bloom's `Size` counts, which it too sizes anew on `BF.LOAD`.
impl PartialEq for ValkeyKind {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (&self.0, &other.0);
        a.filters() == b.filters()
            && a.expansion() == b.expansion()
            && a.fp_rate().to_bits() == b.fp_rate().to_bits()
            && a.tightening().to_bits() == b.tightening().to_bits()
            && a.seed_random() == b.seed_random()
    }
}

impl Kind for ValkeyKind {
    const NAME: &'static str = "valkey-bloom";

    fn create(p: &Params, max_bytes: u64) -> Option<Self> {
        let fixed = p.variant & 2 != 0;
        let mut seed = vb::FIXED_SEED;
        if !fixed {
            seed[..8].copy_from_slice(&p.capacity.to_le_bytes());
            seed[8..16].copy_from_slice(&p.error.to_bits().to_le_bytes());
        }
        let params = vb::Params {
            capacity: p.capacity,
            fp_rate: p.error,
            tightening: vb::DEFAULT_TIGHTENING,
            expansion: if p.variant & 1 == 0 { p.expansion } else { 0 },
            seed,
            seed_random: !fixed,
        };
        ValkeyBloom::new(&params, max_bytes).ok().map(ValkeyKind)
    }
    through_codec!(ValkeyKind);
    fn add(&mut self, item: &[u8], _now_ms: u64, max_bytes: u64) -> bool {
        self.0.add(item, &max_bytes).is_ok()
    }
    fn contains(&self, item: &[u8], _now_ms: u64) -> bool {
        self.0.contains(item)
    }
    fn bytes(&self) -> u64 {
        self.0.size()
    }
    /// The counts stay consistent: every filter but the last full, none past its capacity.
    fn check(&self, max_bytes: u64) -> Result<(), String> {
        let filters = self.0.filters();
        let last = filters.len().saturating_sub(1);
        for (i, f) in filters.iter().enumerate() {
            if f.items > f.capacity || (i < last && f.items != f.capacity) {
                return Err(format!("filter {i} holds {} of {}", f.items, f.capacity));
            }
        }
        if self.0.size() > max_bytes {
            return Err("over the memory cap".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{run, Limits, Ops};
    use crate::test_rng::Rng;

    #[test]
    fn valkey_bloom_keeps_every_item_through_random_sequences() {
        let limits = Limits {
            max_bytes: 4 << 20,
            small_bytes: 4 << 10,
            cadence: 1000,
            scan_items: 64,
            max_steps: 6_000,
        };
        for (i, (capacity, expansion)) in [(1, 2), (10, 4), (100, 1)].into_iter().enumerate() {
            for (e, error) in [0.5, 1e-9, 0.01].into_iter().enumerate() {
                for variant in [0u8, 1, 2] {
                    let p = Params {
                        capacity,
                        error,
                        expansion,
                        variant,
                    };
                    let value = ValkeyKind::create(&p, limits.max_bytes).expect("created");
                    let seed = 0x4900 + (i * 16 + e * 4) as u64 + u64::from(variant);
                    let mut rng = Rng::new(seed);
                    let bytes: Vec<u8> = (0..4000).map(|_| rng.next() as u8).collect();
                    let report = run(value, Ops::new(&bytes), &limits);
                    assert!(report.adds > 0, "{p:?}: {report:?}");
                }
            }
        }
    }
}
