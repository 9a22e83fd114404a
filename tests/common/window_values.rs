//! Windowed values for the attacks on them: genuine ones grown over several slots, and their
//! `SCANDUMP` headers taken apart and put back together.

use super::*;

/// A windowed SCANDUMP header taken apart.
#[derive(Debug, Clone)]
pub struct Header {
    pub magic: Vec<u8>,
    pub version: u32,
    pub window_ms: u64,
    pub generations: u32,
    pub capacity: u64,
    pub error: f64,
    pub growth: u32,
    pub flags: u32,
    pub secret: Option<u64>,
    pub slot: u64,
    pub held: u32,
    pub ring: Vec<(u64, Vec<u8>)>,
}

fn u32_at(b: &[u8], at: &mut usize) -> u32 {
    *at += 4;
    u32::from_le_bytes(b[*at - 4..*at].try_into().unwrap())
}
fn u64_at(b: &[u8], at: &mut usize) -> u64 {
    *at += 8;
    u64::from_le_bytes(b[*at - 8..*at].try_into().unwrap())
}

impl Header {
    pub fn parse(b: &[u8]) -> Header {
        let compact = &b[..8] == b"bloomrsV";
        let mut at = 8;
        let version = u32_at(b, &mut at);
        let window_ms = u64_at(b, &mut at);
        let generations = u32_at(b, &mut at);
        let capacity = u64_at(b, &mut at);
        let error = f64::from_bits(u64_at(b, &mut at));
        let growth = u32_at(b, &mut at);
        let flags = u32_at(b, &mut at);
        let secret = compact.then(|| u64_at(b, &mut at));
        let slot = u64_at(b, &mut at);
        let held = u32_at(b, &mut at);
        let mut ring = Vec::new();
        for _ in 0..held {
            let s = u64_at(b, &mut at);
            let len = u32_at(b, &mut at) as usize;
            ring.push((s, b[at..at + len].to_vec()));
            at += len;
        }
        assert_eq!(at, b.len());
        Header {
            magic: b[..8].to_vec(),
            version,
            window_ms,
            generations,
            capacity,
            error,
            growth,
            flags,
            secret,
            slot,
            held,
            ring,
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = self.magic.clone();
        out.extend(self.version.to_le_bytes());
        out.extend(self.window_ms.to_le_bytes());
        out.extend(self.generations.to_le_bytes());
        out.extend(self.capacity.to_le_bytes());
        out.extend(self.error.to_le_bytes());
        out.extend(self.growth.to_le_bytes());
        out.extend(self.flags.to_le_bytes());
        if let Some(secret) = self.secret {
            out.extend(secret.to_le_bytes());
        }
        out.extend(self.slot.to_le_bytes());
        out.extend(self.held.to_le_bytes());
        for (slot, own) in &self.ring {
            out.extend(slot.to_le_bytes());
            out.extend((own.len() as u32).to_le_bytes());
            out.extend(own);
        }
        out
    }
}

/// A genuine value: a window of `generations` fed over several slots (some left empty, some
/// grown past their share), its clock mid-slot.
pub fn genuine(c: &mut Client, key: &str, compact: bool, generations: u32, rng: &mut Rng) -> usize {
    let g = generations.to_string();
    let capacity = ["1", "10", "100"][rng.below(3)];
    let mut args = vec!["BF.RESERVE", key, "0.01", capacity];
    if compact {
        args.push("COMPACT");
    }
    args.extend(["WINDOW", "3600", "GENERATIONS", g.as_str()]);
    assert_eq!(c.call(&args), ok(), "{args:?}");
    let start = noon(c);
    let slot = 3_600_000 / i64::from(generations);
    let slots = 1 + rng.below(2 * generations as usize);
    let mut added = 0;
    for k in 0..slots {
        travel_to(c, start + k as i64 * slot);
        if rng.chance(3) {
            continue;
        }
        let n = [1, 5, 50, 400][rng.below(4)];
        let items: Vec<String> = (0..n).map(|i| format!("{key}:{k}:{i}")).collect();
        madd_in_batches(c, key, &items);
        added += n;
    }
    added
}
