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
