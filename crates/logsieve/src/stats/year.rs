//! The year of year-less timestamps (syslog `Nov 20 10:00:00`, logcat,
//! Proxifier `10.30 16:49:06`).
//!
//! One rule for every input: a document's year-less stamps end in the most
//! recent year that does not put its last one after the document's
//! reference time (a day of slack, since such formats are usually local
//! time and are read as UTC), and each backwards jump of more than
//! [`WRAP_MS`] between consecutive year-less stamps starts the next year
//! (`Dec 31` → `Jan 1`, Proxifier's `10.30` → `07.26`). The reference is the
//! file's modification time; for input that has none (generated, in memory)
//! it is the newest line that carries its own year, in the document or
//! else in the corpus. `--year` names the first stamp's year instead.
//! Appended lines carry on from the loaded ones, with the same jump rule.

use super::NO_TIME;

/// A backwards jump larger than this between two consecutive year-less
/// stamps of one document starts a new year. Out-of-order writers stay
/// within seconds or minutes; a month back is a calendar wrap.
pub(crate) const WRAP_MS: i64 = 30 * 86_400_000;
/// How far past the reference time a year-less stamp may fall and still
/// be read in the reference's year (local time read as UTC).
pub(crate) const SLACK_MS: i64 = 86_400_000;

/// Where a document's year comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum YearSource {
    /// The first year-less stamp's year (`--year`, or nothing better known).
    Fixed(i32),
    /// The last year-less stamp falls at or before this time (ms): the
    /// modification time, or the newest dated line.
    Reference(i64),
}

/// The number of calendar wraps among the year-less stamps `lines` (times
/// read with one year, at `times[at(line)]`).
fn wraps(times: &[i64], lines: &[u64], at: impl Fn(u64) -> usize) -> i32 {
    let mut n = 0;
    let mut prev = None::<i64>;
    for &l in lines {
        let t = times[at(l)];
        if prev.is_some_and(|p| t < p - WRAP_MS) {
            n += 1;
        }
        prev = Some(t);
    }
    n
}

/// The year of the first year-less stamp among `lines` (line numbers,
/// times read with `base` at `times[line]`); `reread(line, year)` reads a
/// line's stamp with another year.
pub(crate) fn first_year(
    times: &[i64],
    lines: &[u64],
    base: i32,
    source: YearSource,
    reread: impl Fn(u64, i32) -> i64,
) -> i32 {
    match source {
        YearSource::Fixed(y) => y,
        YearSource::Reference(r) => {
            let y = super::time::year_of_ms(r);
            let Some(&last) = lines.last() else {
                return y;
            };
            let t = if y == base {
                times[last as usize]
            } else {
                reread(last, y)
            };
            let y_last = if t != NO_TIME && t > r.saturating_add(SLACK_MS) {
                y - 1
            } else {
                y
            };
            y_last - wraps(times, lines, |l| l as usize)
        }
    }
}

/// Dates the year-less stamps `lines` in order: the first in year `first`,
/// the next year after each wrap; `times[at(line)]` holds the stamp read
/// with `base` and is read again (`reread`) where its year differs.
/// `prev` is the stamp before the first (appended lines), in `base`'s
/// year. Returns the last stamp's year and time.
pub(crate) fn walk(
    times: &mut [i64],
    lines: &[u64],
    at: impl Fn(u64) -> usize,
    base: i32,
    first: i32,
    mut prev: Option<i64>,
    reread: impl Fn(u64, i32) -> i64,
) -> (i32, Option<i64>) {
    let mut y = first;
    let mut last = None;
    for &l in lines {
        let i = at(l);
        let t = times[i];
        if prev.is_some_and(|p| t < p - WRAP_MS) {
            y += 1;
        }
        prev = Some(t);
        if y != base {
            times[i] = reread(l, y);
        }
        if times[i] != NO_TIME {
            last = Some(times[i]);
        }
    }
    (y, last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::time::{days_from_civil, year_of_ms};

    /// A year-less stamp (month, day) in `year`, in ms.
    fn md(year: i32, m: u32, d: u32) -> i64 {
        days_from_civil(i64::from(year), m, d) * 86_400_000
    }

    /// Dates `stamps` (month, day) as a document's year-less lines would
    /// be, read first with `base`.
    fn date(stamps: &[(u32, u32)], base: i32, source: YearSource) -> Vec<i32> {
        let mut times: Vec<i64> = stamps.iter().map(|&(m, d)| md(base, m, d)).collect();
        let lines: Vec<u64> = (0..stamps.len() as u64).collect();
        let reread = |l: u64, y: i32| {
            let (m, d) = stamps[l as usize];
            md(y, m, d)
        };
        let first = first_year(&times, &lines, base, source, reread);
        walk(
            &mut times,
            &lines,
            |l| l as usize,
            base,
            first,
            None,
            reread,
        );
        times.iter().map(|&t| year_of_ms(t)).collect()
    }

    #[test]
    fn the_reference_dates_the_last_stamp() {
        let mtime = md(2026, 11, 24);
        // Dec 10 would be after the file was written: the year before.
        let got = date(&[(12, 9), (12, 10)], 2026, YearSource::Reference(mtime));
        assert_eq!(got, vec![2025, 2025]);
        let got = date(&[(11, 20)], 1970, YearSource::Reference(mtime));
        assert_eq!(got, vec![2026]);
        // A day of slack: Nov 25 in a file written on Nov 24 stays.
        let got = date(&[(11, 25)], 2026, YearSource::Reference(mtime));
        assert_eq!(got, vec![2026]);
    }

    #[test]
    fn a_jump_back_by_months_is_a_new_year() {
        // REGRESSION: Proxifier's 10.30 → 07.26 came out unsorted.
        let mtime = md(2026, 11, 24);
        let got = date(
            &[(10, 30), (10, 31), (7, 26), (7, 27)],
            2026,
            YearSource::Reference(mtime),
        );
        assert_eq!(got, vec![2025, 2025, 2026, 2026]);
        let got = date(
            &[(12, 31), (1, 1), (12, 31), (1, 1)],
            2026,
            YearSource::Fixed(2020),
        );
        assert_eq!(got, vec![2020, 2021, 2021, 2022]);
        // Out of order by days is not a wrap.
        let got = date(&[(6, 20), (6, 2), (6, 21)], 2026, YearSource::Fixed(2026));
        assert_eq!(got, vec![2026, 2026, 2026]);
    }

    #[test]
    fn appended_stamps_carry_on() {
        // The last loaded stamp Dec 10 2025; appended Dec 10, then Jan 2.
        let prev = md(2025, 12, 10);
        let stamps = [(12, 10), (1, 2)];
        let mut times: Vec<i64> = stamps.iter().map(|&(m, d)| md(2025, m, d)).collect();
        let (y, last) = walk(
            &mut times,
            &[0, 1],
            |l| l as usize,
            2025,
            2025,
            Some(prev),
            |l, y| md(y, stamps[l as usize].0, stamps[l as usize].1),
        );
        assert_eq!((y, last), (2026, Some(md(2026, 1, 2))));
        assert_eq!(year_of_ms(times[0]), 2025);
    }
}
