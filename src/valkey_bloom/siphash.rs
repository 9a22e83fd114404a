//! SipHash-1-3 (one compression round per word, three finalisation rounds), the keyed hash
//! valkey-bloom's filters take their bit positions from. Written from the SipHash paper
//! (Aumasson and Bernstein); `tests.rs` checks it against published vectors.

/// The four state words after keying.
#[derive(Clone, Copy)]
struct State([u64; 4]);

impl State {
    fn new(k0: u64, k1: u64) -> State {
        State([
            k0 ^ 0x736f_6d65_7073_6575,
            k1 ^ 0x646f_7261_6e64_6f6d,
            k0 ^ 0x6c79_6765_6e65_7261,
            k1 ^ 0x7465_6462_7974_6573,
        ])
    }

    #[inline]
    fn round(&mut self) {
        let [v0, v1, v2, v3] = &mut self.0;
        *v0 = v0.wrapping_add(*v1);
        *v1 = v1.rotate_left(13) ^ *v0;
        *v0 = v0.rotate_left(32);
        *v2 = v2.wrapping_add(*v3);
        *v3 = v3.rotate_left(16) ^ *v2;
        *v0 = v0.wrapping_add(*v3);
        *v3 = v3.rotate_left(21) ^ *v0;
        *v2 = v2.wrapping_add(*v1);
        *v1 = v1.rotate_left(17) ^ *v2;
        *v2 = v2.rotate_left(32);
    }

    #[inline]
    fn compress(&mut self, word: u64) {
        self.0[3] ^= word;
        self.round();
        self.0[0] ^= word;
    }
}

/// SipHash-1-3 of the concatenation of `parts` under the key `(k0, k1)` (each the key's
/// half as a little-endian word), as a streaming hasher fed `parts` in order would give.
pub fn sip13(k0: u64, k1: u64, parts: &[&[u8]]) -> u64 {
    let mut state = State::new(k0, k1);
    let mut pending = [0u8; 8];
    let mut filled = 0usize;
    let mut total = 0u64;
    for part in parts {
        total = total.wrapping_add(part.len() as u64);
        let mut rest = *part;
        if filled > 0 {
            let take = rest.len().min(8 - filled);
            let (head, tail) = rest.split_at(take);
            pending[filled..filled + take].copy_from_slice(head);
            filled += take;
            rest = tail;
            if filled < 8 {
                continue;
            }
            state.compress(u64::from_le_bytes(pending));
        }
        let mut words = rest.chunks_exact(8);
        for word in &mut words {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(word);
            state.compress(u64::from_le_bytes(bytes));
        }
        let tail = words.remainder();
        pending[..tail.len()].copy_from_slice(tail);
        filled = tail.len();
    }
    let mut last = [0u8; 8];
    last[..filled].copy_from_slice(&pending[..filled]);
    last[7] = total as u8;
    state.compress(u64::from_le_bytes(last));
    state.0[2] ^= 0xff;
    for _ in 0..3 {
        state.round();
    }
    let [v0, v1, v2, v3] = state.0;
    v0 ^ v1 ^ v2 ^ v3
}
