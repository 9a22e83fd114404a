//! What every benchmark of the core measures with: the items, the fixed pseudo-random draws
//! of them, and the clock (the thread's CPU time, the median of the rounds).

use std::hint::black_box;

/// The item numbered `i`, as the benchmarks and the tests of the module write it.
pub fn item(i: u64) -> Vec<u8> {
    format!("{i:012}").into_bytes()
}

/// A fixed pseudo-random sequence of items in `0..range`.
pub fn draws(range: u64, count: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut state = seed | 1;
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            item(state % range)
        })
        .collect()
}

/// CPU time of this thread, in nanoseconds: unlike wall time it leaves out the time the
/// thread waited for a core, which dominates on a busy machine.
pub fn cpu_ns() -> f64 {
    #[repr(C)]
    struct Timespec {
        seconds: i64,
        nanoseconds: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, time: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut time = Timespec {
        seconds: 0,
        nanoseconds: 0,
    };
    // SAFETY: clock_gettime writes one timespec, which `time` is, and reads nothing else.
    unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut time) };
    time.seconds as f64 * 1e9 + time.nanoseconds as f64
}

/// Median nanoseconds of `body` over `rounds` runs.
pub fn median(rounds: usize, mut body: impl FnMut()) -> f64 {
    let mut samples: Vec<f64> = (0..rounds)
        .map(|_| {
            let start = cpu_ns();
            body();
            cpu_ns() - start
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// Median nanoseconds per item of `body` over `rounds` passes over `items`.
pub fn time(rounds: usize, items: &[Vec<u8>], mut body: impl FnMut(&[u8])) -> f64 {
    median(rounds, || items.iter().for_each(|it| body(it))) / items.len() as f64
}

/// Median nanoseconds per item of `lookup` (one BF.MEXISTS) over `reads` cut into batches of
/// `batch` items.
pub fn per_batch_item(
    rounds: usize,
    reads: &[Vec<u8>],
    batch: usize,
    mut lookup: impl FnMut(&[Vec<u8>]),
) -> f64 {
    let batches: Vec<&[Vec<u8>]> = reads.chunks_exact(batch).collect();
    let ns = median(rounds, || batches.iter().for_each(|b| lookup(b)));
    ns / (batches.len() * batch) as f64
}

/// Adds the items `0..items` with `add`; CPU nanoseconds per add.
pub fn fill<R>(items: u64, mut add: impl FnMut(&[u8]) -> R) -> f64 {
    let start = cpu_ns();
    for i in 0..items {
        black_box(add(&item(i)));
    }
    (cpu_ns() - start) / items as f64
}
