//! The timing tables of `logsieve demo` ([`demo`]) and `logsieve bench`
//! ([`reference`]): every backend on the same generated data in the same
//! run, each row's count checked against the first row's.

pub mod demo;
pub mod reference;

use std::io::Write;
use std::time::Duration;

pub(crate) use logsieve::gen::REFERENCE_QUERIES as QUERIES;

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
