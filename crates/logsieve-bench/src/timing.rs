//! What the benchmark binaries share: a median timer and the count
//! options of a forced route.

use std::time::{Duration, Instant};

use logsieve::{BackendChoice, Kernel, SearchOptions, Want};

/// Runs `f` once to warm up, then `iters` times with `gap` of idle time
/// before each (zero: back to back); the median in ms and the last result.
pub fn timed<T>(iters: usize, gap: Duration, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut out = f();
    let mut ts = Vec::with_capacity(iters.max(1));
    for _ in 0..iters.max(1) {
        if !gap.is_zero() {
            std::thread::sleep(gap);
        }
        let t = Instant::now();
        out = f();
        ts.push(t.elapsed());
    }
    ts.sort();
    (ts[ts.len() / 2].as_secs_f64() * 1e3, out)
}

/// Runs `f` back to back for `ms` milliseconds (at least once): "hot"
/// means the GPU's clocks are up. After host-only work the H100's SM clock
/// sat at 345 MHz and took about a second of back-to-back work to reach
/// 1980 MHz (2026-11-25, `nvidia-smi` sampled beside the benches); the
/// SM-bound kernels run up to 5x slower meanwhile.
pub fn warm_up(ms: u64, mut f: impl FnMut()) {
    let t = Instant::now();
    loop {
        f();
        if t.elapsed() >= Duration::from_millis(ms) {
            break;
        }
    }
}

/// Milliseconds since the Unix epoch, to line a bench's phases up with a
/// clock log (`nvidia-smi --query-gpu=timestamp,clocks.sm -lms 100`).
pub fn epoch_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

/// A count on `backend` (with `kernel` when named) and `threads` CPU threads.
pub fn count_opts(backend: BackendChoice, kernel: Option<Kernel>, threads: usize) -> SearchOptions {
    SearchOptions {
        backend,
        gpu_kernel: kernel,
        threads,
        want: Want::Count,
        ..Default::default()
    }
}
