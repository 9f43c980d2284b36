//! Stats over logs, a columnar pipeline: time range → search → group-by.
//!
//! At load, [`Columns::build`] parses every line's timestamp and extracts
//! its fields into dictionary-encoded columns (one `u32` code per line and
//! field; code 0 means the line has no value). A query ([`StatsQuery`])
//! then selects the lines inside a time window that match an optional
//! search, and counts them by the values of some fields (nested keys) and/or
//! by time bucket ([`Stats`]).
//!
//! Two backends answer with identical results: the CPU path here (the
//! search by the CPU engine, then a scan of the columns on all cores), and
//! the GPU path in [`gpu`] (columns resident next to the corpus; time filter
//! → search bits → AND → counts in workgroup memory → one readback).
//!
//! # Example
//!
//! ```
//! use logsieve::stats::{ColumnOptions, Columns, FieldSpec, StatsQuery};
//! use logsieve::{Corpus, QueryBuilder, Syntax};
//!
//! let log = b"2026-11-20T10:00:00Z web-01 INFO ok from 192.168.1.7\n\
//!             2026-11-20T10:05:00Z web-02 ERROR failed from 192.168.1.9\n\
//!             2026-11-20T10:20:00Z web-01 INFO ok from 192.168.1.4\n";
//! let corpus = Corpus::from_bytes("app.log", log.to_vec());
//! let opts = ColumnOptions { fields: vec![FieldSpec::host(), FieldSpec::level()], ..Default::default() };
//! let cols = Columns::build(&corpus, &opts);
//! let q = QueryBuilder::new().syntax(Syntax::Fixed).build(&["192.168.1."]).unwrap();
//! let mut sq = StatsQuery::new(&cols);
//! sq.search = Some(&q);
//! sq.since_spec(&cols, "10m").unwrap();           // 10 minutes before 10:20
//! sq.count_by(&cols, &["host"]).unwrap();
//! let stats = logsieve::stats::run_cpu(&corpus, &cols, &sq, 1).unwrap();
//! assert_eq!(stats.selected, 1);                   // only the 10:20 line
//! assert_eq!(stats.groups[0].key, vec![Some(b"web-01".to_vec())]);
//! ```

pub mod fields;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod json;
pub mod time;

mod build;
mod year;

use std::collections::HashMap;

use crate::corpus::Corpus;
use crate::error::Error;
use crate::query::Query;

mod cpu;
pub use cpu::run_cpu;
#[cfg(test)]
use cpu::split;
pub(crate) use cpu::{check_shape, run_cpu_lines};
pub use fields::{FieldKind, FieldSpec};
pub use time::{format_ms, Stamp, TimeFormat, TimeRules, TimeSpec, NO_TIME};

/// Each document's modification time (ms since the epoch) when it is a
/// file that can be read (`None` for stdin and generated data): what
/// [`ColumnOptions::doc_mtimes`] dates year-less stamps by.
#[cfg(not(target_arch = "wasm32"))]
pub fn file_mtimes(corpus: &Corpus) -> Vec<Option<i64>> {
    corpus
        .docs()
        .iter()
        .map(|d| {
            let t = std::fs::metadata(d.name())
                .and_then(|m| m.modified())
                .ok()?;
            Some(match t.duration_since(std::time::UNIX_EPOCH) {
                Ok(d) => d.as_millis() as i64,
                Err(e) => -(e.duration().as_millis() as i64),
            })
        })
        .collect()
}

/// How columns are built.
#[derive(Clone, Debug)]
pub struct ColumnOptions {
    /// Force one timestamp format (`--time-format`); `None` detects it per
    /// document from a sample.
    pub time_format: Option<TimeFormat>,
    /// The first year-less timestamp's year (syslog, logcat) in documents
    /// with no entry in `doc_years`, no modification time and no dated
    /// line anywhere in the corpus.
    pub year: i32,
    /// Per-document years (by document index), e.g. `--year`; overrides
    /// `year` and `doc_mtimes`.
    pub doc_years: Vec<i32>,
    /// Per-document modification times (ms since the epoch, by document
    /// index), for documents without an entry in `doc_years`: year-less
    /// timestamps end in the most recent year that does not put the last
    /// one after the file was last written (a day of slack, since
    /// year-less formats are usually local time and are read as UTC), a
    /// jump back by months being a new year. `Dec 10` in a file written
    /// on 2026-11-24 is 2025-12-10. A document without one (`None`, or
    /// missing) takes the newest line that carries a year as its
    /// reference, its own or else the corpus's; `year` only when there is
    /// none.
    pub doc_mtimes: Vec<Option<i64>>,
    /// The fields to extract.
    pub fields: Vec<FieldSpec>,
}

impl Default for ColumnOptions {
    fn default() -> Self {
        ColumnOptions {
            time_format: None,
            year: 1970,
            doc_years: Vec::new(),
            doc_mtimes: Vec::new(),
            fields: Vec::new(),
        }
    }
}

/// One field's dictionary: code `k >= 1` stands for `values[k - 1]`; code 0
/// for "no value".
#[derive(Clone, Debug)]
pub struct FieldDict {
    /// The field's name.
    pub name: String,
    /// The distinct values, in order of first appearance.
    pub values: Vec<Vec<u8>>,
}

impl FieldDict {
    /// The number of codes, "no value" included.
    pub fn cardinality(&self) -> u64 {
        self.values.len() as u64 + 1
    }

    /// The value of `code` (`None` for 0).
    pub fn value(&self, code: u32) -> Option<&[u8]> {
        (code > 0).then(|| self.values[code as usize - 1].as_slice())
    }
}

/// One document's columns.
#[derive(Clone, Debug, Default)]
pub struct DocColumns {
    /// Each line's time in ms ([`NO_TIME`] only when the document has no
    /// timestamp at all); lines without a timestamp inherit the previous
    /// line's, and leading ones the first timestamp's.
    pub times: Vec<i64>,
    /// Per field, each line's code.
    pub codes: Vec<Vec<u32>>,
    /// The detected timestamp rules.
    pub rules: TimeRules,
    /// Lines that carry their own timestamp.
    pub stamped: u64,
    /// Lines before the first one that carries a timestamp: their `times`
    /// are the first stamp's (a window keeps a file's preamble with its
    /// first entry), but they have no time of their own (SQL's `time`
    /// is null there).
    pub leading: u64,
    /// True when `times` never decreases.
    pub sorted: bool,
    /// How far a line's time falls below the latest time before it, at
    /// most (0 when sorted). Logs mixing second and millisecond stamps, or
    /// several writers, are nearly sorted: a window is then still a line
    /// range, widened by this much.
    pub disorder: i64,
    /// The running maximum of `times` (empty when the document is sorted
    /// or has no times).
    running_max: Vec<i64>,
    /// The year of the last year-less stamp (appended ones carry on from
    /// it; see [`year`]).
    pub year: i32,
    /// The last year-less stamp's time, for appended lines.
    last_yearless: Option<i64>,
    /// The newest stamp that carries its own year.
    dated_newest: Option<i64>,
    /// The length of the document's last line when it had no terminator
    /// (appended bytes continue it: it is read again).
    open_line: Option<(u64, bool)>,
}

/// The columns of a whole corpus: per document times and codes, and one
/// dictionary per field shared by all documents.
#[derive(Clone, Debug, Default)]
pub struct Columns {
    fields: Vec<FieldDict>,
    docs: Vec<DocColumns>,
    oldest: Option<i64>,
    newest: Option<i64>,
    /// How they were built, to extend them over appended lines
    /// ([`Columns::extend`]).
    opts: ColumnOptions,
    /// Each field's value → code, for appended lines.
    lookup: Vec<HashMap<Vec<u8>, u32>>,
}

impl Columns {
    /// Builds the columns of every document (in parallel on rayon's pool).
    pub fn build(corpus: &Corpus, opts: &ColumnOptions) -> Columns {
        let mut c = Columns {
            fields: opts
                .fields
                .iter()
                .map(|f| FieldDict {
                    name: f.name.clone(),
                    values: Vec::new(),
                })
                .collect(),
            docs: Vec::with_capacity(corpus.docs().len()),
            oldest: None,
            newest: None,
            opts: opts.clone(),
            lookup: vec![HashMap::new(); opts.fields.len()],
        };
        c.extend(corpus);
        c
    }

    /// The columns of `corpus` (the corpus these columns were built
    /// over) without each document's first `cuts[d]` lines (an eviction,
    /// `serve --follow --retain`; a missing entry cuts nothing). The
    /// kept lines keep their times (a line without a timestamp keeps the
    /// time it inherited from an evicted line) and their values;
    /// dictionaries keep only the values still used, numbered in order
    /// of first use (as a build over the kept lines numbers them);
    /// order, disorder and the oldest/newest times are those of the kept
    /// lines. O(kept lines + evicted lines): made beside readers, never
    /// under a writer's lock.
    pub fn without_prefix(&self, corpus: &Corpus, cuts: &[u64]) -> Columns {
        let nf = self.fields.len();
        let mut remap: Vec<Vec<u32>> = self
            .fields
            .iter()
            .map(|f| {
                let mut m = vec![u32::MAX; f.values.len() + 1];
                m[0] = 0;
                m
            })
            .collect();
        let mut fields: Vec<FieldDict> = self
            .fields
            .iter()
            .map(|f| FieldDict {
                name: f.name.clone(),
                values: Vec::new(),
            })
            .collect();
        let mut docs = Vec::with_capacity(self.docs.len());
        let (mut oldest, mut newest) = (None::<i64>, None::<i64>);
        for (di, d) in self.docs.iter().enumerate() {
            let cut = cuts.get(di).copied().unwrap_or(0).min(d.times.len() as u64) as usize;
            let times = d.times[cut..].to_vec();
            let mut codes = Vec::with_capacity(nf);
            for (f, col) in d.codes.iter().enumerate() {
                let mut out = Vec::with_capacity(col.len() - cut);
                for &c in &col[cut..] {
                    let m = &mut remap[f][c as usize];
                    if *m == u32::MAX {
                        fields[f]
                            .values
                            .push(self.fields[f].values[c as usize - 1].clone());
                        *m = fields[f].values.len() as u32;
                    }
                    out.push(*m);
                }
                codes.push(out);
            }
            // Lines that carried their own timestamp among the evicted
            // ones (the times do not say: an unstamped line inherits).
            let gone_stamped = corpus.docs().get(di).map_or(0, |doc| {
                (0..cut as u64)
                    .filter(|&l| {
                        let line = doc.line(l);
                        let line = line.strip_suffix(b"\r").unwrap_or(line);
                        d.rules.stamp(line, d.year).is_some()
                    })
                    .count() as u64
            });
            for &t in times.iter().filter(|&&t| t != NO_TIME) {
                oldest = Some(oldest.map_or(t, |o| o.min(t)));
                newest = Some(newest.map_or(t, |o| o.max(t)));
            }
            let (sorted, running_max, disorder) = order_of(&times);
            docs.push(DocColumns {
                times,
                codes,
                rules: d.rules.clone(),
                stamped: d.stamped.saturating_sub(gone_stamped),
                leading: d.leading.saturating_sub(cut as u64),
                sorted,
                disorder,
                running_max,
                year: d.year,
                last_yearless: d.last_yearless,
                dated_newest: d.dated_newest,
                open_line: d.open_line,
            });
        }
        let lookup = fields
            .iter()
            .map(|f| {
                f.values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (v.clone(), i as u32 + 1))
                    .collect()
            })
            .collect();
        Columns {
            fields,
            docs,
            oldest,
            newest,
            opts: self.opts.clone(),
            lookup,
        }
    }

    /// The field dictionaries, in [`ColumnOptions::fields`] order.
    pub fn fields(&self) -> &[FieldDict] {
        &self.fields
    }

    /// The index of the field called `name`.
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }

    /// Per-document columns, in corpus order.
    pub fn docs(&self) -> &[DocColumns] {
        &self.docs
    }

    /// The oldest time in the corpus.
    pub fn oldest(&self) -> Option<i64> {
        self.oldest
    }

    /// The newest time in the corpus (durations in `--since 15m` count back
    /// from it).
    pub fn newest(&self) -> Option<i64> {
        self.newest
    }

    /// The oldest and newest times of documents `docs` (by index; `None`:
    /// the whole corpus, [`Columns::oldest`] and [`Columns::newest`]), for
    /// an answer scoped to some files. A sorted document costs its two
    /// ends, another a pass over its times.
    pub fn span(&self, docs: Option<&[usize]>) -> (Option<i64>, Option<i64>) {
        let Some(docs) = docs else {
            return (self.oldest, self.newest);
        };
        let (mut oldest, mut newest) = (None::<i64>, None::<i64>);
        let mut add = |t: i64| {
            oldest = Some(oldest.map_or(t, |o| o.min(t)));
            newest = Some(newest.map_or(t, |o| o.max(t)));
        };
        for d in self
            .docs
            .iter()
            .enumerate()
            .filter(|(i, _)| docs.contains(i))
        {
            let times = &d.1.times;
            if d.1.sorted {
                // NO_TIME is i64::MIN: the unstamped lines lead.
                let first = times.partition_point(|&t| t == NO_TIME);
                if let (Some(&a), Some(&b)) = (times.get(first), times.last()) {
                    add(a);
                    add(b);
                }
            } else {
                times
                    .iter()
                    .filter(|&&t| t != NO_TIME)
                    .for_each(|&t| add(t));
            }
        }
        (oldest, newest)
    }
}

/// Whether `times` never decrease, and when they do their running maximum
/// and how far a time falls below it at most (a window is then a line
/// range widened by that much).
fn order_of(times: &[i64]) -> (bool, Vec<i64>, i64) {
    let sorted = times.windows(2).all(|w| w[0] <= w[1]);
    let mut running_max = Vec::new();
    let mut disorder = 0i64;
    if !sorted {
        running_max.reserve_exact(times.len());
        let mut m = i64::MIN;
        for &t in times {
            m = m.max(t);
            disorder = disorder.max(m.saturating_sub(t));
            running_max.push(m);
        }
    }
    (sorted, running_max, disorder)
}

/// Above this many time buckets a histogram is refused (a bucket too small
/// for the range is a typo, not a query).
pub const MAX_BUCKETS: u64 = 100_000;

/// What to select and how to count it.
#[derive(Clone, Debug, Default)]
pub struct StatsQuery<'a> {
    /// The text search; `None` selects every line.
    pub search: Option<&'a Query>,
    /// Lines at or after this time (ms).
    pub since: Option<i64>,
    /// Lines before this time (ms).
    pub until: Option<i64>,
    /// Field indices to count by (nested keys, outermost first).
    pub count_by: Vec<usize>,
    /// Histogram bucket width in ms.
    pub histogram: Option<i64>,
}

impl<'a> StatsQuery<'a> {
    /// A query selecting every line, counting nothing.
    pub fn new(_cols: &Columns) -> StatsQuery<'a> {
        StatsQuery::default()
    }

    /// Sets `since` from user text (`15m`, `2026-11-20T10:00`).
    pub fn since_spec(&mut self, cols: &Columns, s: &str) -> Result<(), Error> {
        self.since = Some(resolve(cols, TimeSpec::parse(s)?));
        Ok(())
    }

    /// Sets `until` from user text.
    pub fn until_spec(&mut self, cols: &Columns, s: &str) -> Result<(), Error> {
        self.until = Some(resolve(cols, TimeSpec::parse(s)?));
        Ok(())
    }

    /// Sets the count-by fields by name.
    pub fn count_by(&mut self, cols: &Columns, names: &[&str]) -> Result<(), Error> {
        self.count_by = names
            .iter()
            .map(|n| {
                cols.field_index(n).ok_or_else(|| {
                    let known: Vec<&str> = cols.fields().iter().map(|f| f.name.as_str()).collect();
                    Error::query(format!(
                        "unknown field {n:?} (known: {}; add one with --field NAME=REGEX)",
                        known.join(", ")
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(())
    }

    /// True when `t` is inside the window.
    #[inline]
    pub fn in_window(&self, t: i64) -> bool {
        if self.since.is_none() && self.until.is_none() {
            return true;
        }
        t != NO_TIME && self.since.is_none_or(|s| t >= s) && self.until.is_none_or(|u| t < u)
    }
}

fn resolve(cols: &Columns, spec: TimeSpec) -> i64 {
    // An empty corpus has no newest entry: a duration then selects nothing
    // either way, so any anchor works.
    spec.resolve(cols.newest().unwrap_or(0))
}

/// One row of a count-by table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// The value of each count-by field (`None`: the line has none).
    pub key: Vec<Option<Vec<u8>>>,
    /// Selected lines with this key.
    pub count: u64,
}

/// Counts per time bucket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    /// Start of the first bucket (ms; a multiple of `bucket`).
    pub start: i64,
    /// Bucket width (ms).
    pub bucket: i64,
    /// Selected lines per bucket.
    pub counts: Vec<u64>,
}

/// The answer to a [`StatsQuery`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    /// Selected lines (window and search).
    pub selected: u64,
    /// Count-by rows, by count descending, then key ascending (no value
    /// last); empty without count-by fields.
    pub groups: Vec<Group>,
    /// The histogram, when asked for.
    pub histogram: Option<Histogram>,
}

/// The shape of the counting, shared by the CPU and GPU paths: the flat key
/// of a line is `sum(code[f] * stride[f])`.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub(crate) fields: Vec<usize>,
    pub(crate) strides: Vec<u64>,
    /// Number of flat keys (1 without count-by).
    pub(crate) nkeys: u64,
    /// `(start, bucket, buckets)` of the histogram.
    pub(crate) hist: Option<(i64, i64, u64)>,
}

/// Flat keys up to this many are counted in a dense array.
pub(crate) const DENSE_KEYS: u64 = 1 << 22;

impl Plan {
    pub(crate) fn new(cols: &Columns, q: &StatsQuery) -> Result<Plan, Error> {
        Plan::over(cols.span(None), cols, q)
    }

    /// [`Plan::new`] for the lines whose oldest and newest times are
    /// `span` ([`Columns::span`]): the histogram's buckets run from the
    /// window's start (or `span`'s oldest) to its end (or `span`'s newest).
    pub(crate) fn over(
        span: (Option<i64>, Option<i64>),
        cols: &Columns,
        q: &StatsQuery,
    ) -> Result<Plan, Error> {
        for &f in &q.count_by {
            if f >= cols.fields().len() {
                return Err(Error::query(format!(
                    "count-by field index {f} out of range"
                )));
            }
        }
        let mut strides = vec![0u64; q.count_by.len()];
        let mut nkeys: u64 = 1;
        for (i, &f) in q.count_by.iter().enumerate().rev() {
            strides[i] = nkeys;
            nkeys = nkeys
                .checked_mul(cols.fields()[f].cardinality())
                .ok_or_else(|| Error::query("too many distinct count-by keys"))?;
        }
        let hist = q
            .histogram
            .map(|b| histogram_frame(span, q.since, q.until, b))
            .transpose()?;
        Ok(Plan {
            fields: q.count_by.clone(),
            strides,
            nkeys,
            hist,
        })
    }

    /// Turns flat-key counts into [`Stats`].
    pub(crate) fn finish(
        &self,
        cols: &Columns,
        selected: u64,
        keys: impl Iterator<Item = (u64, u64)>,
        buckets: Vec<u64>,
    ) -> Stats {
        let mut groups = Vec::new();
        if !self.fields.is_empty() {
            for (k, count) in keys {
                if count == 0 {
                    continue;
                }
                let key = self
                    .fields
                    .iter()
                    .zip(&self.strides)
                    .map(|(&f, &s)| {
                        let d = &cols.fields()[f];
                        let code = (k / s) % d.cardinality();
                        d.value(code as u32).map(<[u8]>::to_vec)
                    })
                    .collect();
                groups.push(Group { key, count });
            }
            sort_groups(&mut groups);
        }
        let histogram = self.hist.map(|(start, bucket, _)| Histogram {
            start,
            bucket,
            counts: buckets,
        });
        Stats {
            selected,
            groups,
            histogram,
        }
    }
}

/// The histogram's buckets, `(start, bucket, n)`, for buckets of `b` ms
/// over lines whose oldest and newest times are `span`: from the window's
/// start (or the oldest line's) down to a multiple of `b`, to its end (or
/// past the newest line). Every front end's histogram is this one.
pub fn histogram_frame(
    span: (Option<i64>, Option<i64>),
    since: Option<i64>,
    until: Option<i64>,
    b: i64,
) -> Result<(i64, i64, u64), Error> {
    if b <= 0 {
        return Err(Error::query("the histogram bucket must be positive"));
    }
    let lo = since.or(span.0);
    let hi = until.or(span.1.map(|n| n.saturating_add(1)));
    Ok(match (lo, hi) {
        (Some(lo), Some(hi)) if hi > lo => {
            let start = lo.div_euclid(b) * b;
            let n = (hi as i128 - start as i128 + b as i128 - 1) / b as i128;
            if n > MAX_BUCKETS as i128 {
                return Err(Error::query(format!(
                    "--histogram: {n} buckets of {b} ms; at most {MAX_BUCKETS} (use a wider bucket or a narrower window)"
                )));
            }
            (start, b, n as u64)
        }
        (Some(lo), _) => (lo.div_euclid(b) * b, b, 0),
        _ => (0, b, 0),
    })
}

/// Count-by rows by count descending, then key ascending (no value last).
pub fn sort_groups(groups: &mut [Group]) {
    groups.sort_by(|a, b| {
        b.count.cmp(&a.count).then_with(|| {
            // No value sorts last.
            let ka = a.key.iter().map(|v| (v.is_none(), v.as_deref()));
            let kb = b.key.iter().map(|v| (v.is_none(), v.as_deref()));
            ka.cmp(kb)
        })
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_tiles() {
        for (len, n) in [(0usize, 3usize), (10, 3), (1 << 20, 7), (70_000, 2)] {
            let parts = split(5..5 + len, n);
            let mut at = 5;
            for p in &parts {
                assert_eq!(p.start, at);
                at = p.end;
            }
            assert_eq!(at, 5 + len);
        }
    }
}
