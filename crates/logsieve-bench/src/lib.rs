//! # logsieve-bench
//!
//! Benchmarks for logsieve, rebar-style: every engine (the CPU on one and
//! all cores, each GPU kernel, auto, ripgrep and GNU grep as processes) on
//! the same generated data in the same run, each row's count checked
//! against the first row's, so a run doubles as a correctness test.
//!
//! * [`reference`]: the reference tables of `logsieve bench` (end to end,
//!   phase-1 elimination, GPU memory, auto regret, cold one-shot).
//! * [`demo`]: the shorter timing table of `logsieve demo`.
//! * [`soak`]: the load soak of `logsieve serve` (the `serve-soak` binary).
//! * [`regex_suite`]: the suite's regexes (the `regex` and `regex-route`
//!   binaries).
//!
//! The binaries in `src/bin/` measure narrower questions (the GPU kernels,
//! many literals, the stats pipeline, the CPU against rg).

#![deny(missing_docs)]

pub mod demo;
pub mod reference;
pub mod regex_suite;
pub mod soak;
pub mod timing;

use std::io::Write;
use std::time::Duration;

/// The reference queries (all fixed strings), shared by the demo and the
/// reference tables.
pub const QUERIES: [&str; 5] = [
    "ERROR_503",
    "192.168.1",
    "error",
    "NullPointerException",
    "x",
];

/// Today's date (UTC) as YYYY-MM-DD, from the system clock.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let (y, m, d) = logsieve::gen::civil_from_days(secs.div_euclid(86_400));
    format!("{y:04}-{m:02}-{d:02}")
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A row that failed or disagreed: reported on stderr as the CLI reports
/// errors, and the run goes on.
fn warn(msg: impl std::fmt::Display) {
    let _ = writeln!(std::io::stderr(), "logsieve: {msg}");
}
