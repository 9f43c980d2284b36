//! The histogram's time axis: the span it shows and its bucket width.

use logsieve::stats::{Columns, NO_TIME};

/// The time range the histogram shows: the 0.1% and 99.9% quantiles of
/// the lines' times (a sample of up to ~64k lines), so that one odd
/// timestamp (a misread date, a year-less line from another year) does not
/// squash everything into one bar; lines outside fall in the edge buckets.
pub(crate) fn time_span(cols: &Columns) -> Option<(i64, i64)> {
    let total: usize = cols.docs().iter().map(|d| d.times.len()).sum();
    let step = (total / 65_536).max(1);
    let mut t: Vec<i64> = cols
        .docs()
        .iter()
        .flat_map(|d| d.times.iter().step_by(step).copied())
        .filter(|&t| t != NO_TIME)
        .collect();
    if t.is_empty() {
        return None;
    }
    t.sort_unstable();
    let q = |f: f64| t[((t.len() - 1) as f64 * f).round() as usize];
    Some((q(0.001), q(0.999)))
}

/// A round bucket width (ms) giving at most ~60 buckets over `span` ms.
pub(crate) fn nice_bucket(span: i64) -> i64 {
    const S: i64 = 1000;
    const WIDTHS: [i64; 16] = [
        S,
        5 * S,
        10 * S,
        30 * S,
        60 * S,
        300 * S,
        600 * S,
        900 * S,
        1800 * S,
        3600 * S,
        3 * 3600 * S,
        6 * 3600 * S,
        12 * 3600 * S,
        86400 * S,
        7 * 86400 * S,
        30 * 86400 * S,
    ];
    let span = span.max(1);
    WIDTHS
        .into_iter()
        .find(|w| span / w < 60)
        .unwrap_or_else(|| (span / 60).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_buckets() {
        assert_eq!(nice_bucket(0), 1000);
        assert_eq!(nice_bucket(59_000), 1000);
        assert_eq!(nice_bucket(86_400_000), 1_800_000);
        assert!(nice_bucket(i64::MAX / 2) > 0);
    }
}
