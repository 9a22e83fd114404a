//! Input framing shared by the targets: a length-prefixed header, then chunks as
//! `(iterator: i64 LE, length: u32 LE, bytes)`.

/// Memory cap the targets build filters under: large enough for the fixtures (the largest is
/// about 0.5 MiB), small enough that no input makes the fuzzer allocate and zero much.
pub const MAX_BYTES: u64 = 1 << 20;

pub struct Frames<'a> {
    pub rest: &'a [u8],
}

impl<'a> Frames<'a> {
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.rest.len() {
            return None;
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Some(head)
    }

    pub fn u32(&mut self) -> Option<u32> {
        self.take(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn i64(&mut self) -> Option<i64> {
        self.take(8).map(|b| i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
    }

    /// A length-prefixed byte string (the length is cut to what is left).
    pub fn blob(&mut self) -> Option<&'a [u8]> {
        let len = self.u32()? as usize;
        self.take(len.min(self.rest.len()))
    }

    /// The next chunk: its iterator and bytes.
    pub fn chunk(&mut self) -> Option<(i64, &'a [u8])> {
        let iter = self.i64()?;
        Some((iter, self.blob()?))
    }
}
