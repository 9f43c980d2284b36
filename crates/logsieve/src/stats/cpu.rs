//! The CPU side of the stats pipeline: the columns scanned in tiles on all
//! cores (`run_cpu`), or over some lines only (`run_cpu_lines`, a host tier's
//! part), with the one accumulator both use; and merging stats of parts.

use std::collections::HashMap;
use std::ops::Range;

use rayon::prelude::*;

use super::{
    sort_groups, Columns, DocColumns, Group, Plan, Stats, StatsQuery, DENSE_KEYS, NO_TIME,
};
use crate::corpus::{Corpus, Document};
use crate::error::Error;

struct Acc {
    selected: u64,
    dense: Vec<u64>,
    sparse: HashMap<u64, u64>,
    buckets: Vec<u64>,
}

impl Acc {
    fn new(plan: &Plan) -> Acc {
        let dense_n = if plan.fields.is_empty() || plan.nkeys > DENSE_KEYS {
            0
        } else {
            plan.nkeys as usize
        };
        Acc {
            selected: 0,
            dense: vec![0; dense_n],
            sparse: HashMap::new(),
            buckets: vec![0; plan.hist.map_or(0, |h| h.2 as usize)],
        }
    }

    fn merge(mut self, o: Acc) -> Acc {
        self.selected += o.selected;
        for (a, b) in self.dense.iter_mut().zip(&o.dense) {
            *a += b;
        }
        for (k, v) in o.sparse {
            *self.sparse.entry(k).or_default() += v;
        }
        for (a, b) in self.buckets.iter_mut().zip(&o.buckets) {
            *a += b;
        }
        self
    }
}

/// Counts line `l` of a document if its time is inside the window.
#[inline]
fn visit(acc: &mut Acc, plan: &Plan, q: &StatsQuery, dc: &DocColumns, l: usize) {
    let t = dc.times[l];
    if !q.in_window(t) {
        return;
    }
    acc.selected += 1;
    if !plan.fields.is_empty() {
        let mut k = 0u64;
        for (&f, &s) in plan.fields.iter().zip(&plan.strides) {
            k += u64::from(dc.codes[f][l]) * s;
        }
        if acc.dense.is_empty() {
            *acc.sparse.entry(k).or_default() += 1;
        } else {
            acc.dense[k as usize] += 1;
        }
    }
    if let Some((start, bucket, n)) = plan.hist {
        if t != NO_TIME && t >= start {
            let b = ((t - start) / bucket) as u64;
            if b < n {
                acc.buckets[b as usize] += 1;
            }
        }
    }
}

/// The lines of a document a window can select (a superset; every line is
/// still checked): a line range found by binary search on the times when
/// they are sorted, or on their running maximum `M` otherwise — a line
/// before the first `M >= since` has `t <= M < since`, and a line with
/// `M >= until + disorder` has `t >= M - disorder >= until`.
pub(crate) fn candidate_lines(dc: &DocColumns, q: &StatsQuery) -> Range<usize> {
    let n = dc.times.len();
    let (key, slack) = if dc.sorted {
        (&dc.times, 0)
    } else if dc.running_max.len() == n {
        (&dc.running_max, dc.disorder)
    } else {
        return 0..n;
    };
    let lo = q.since.map_or(0, |s| key.partition_point(|&t| t < s));
    let hi = q
        .until
        .map_or(n, |u| key.partition_point(|&t| t < u.saturating_add(slack)));
    lo..hi.max(lo)
}

/// Runs `q` on the CPU with `threads` threads (0 = all cores): the window
/// narrows sorted documents to a line range, the CPU engine searches only
/// those lines' bytes, and the selected lines are counted from the columns.
pub fn run_cpu(
    corpus: &Corpus,
    cols: &Columns,
    q: &StatsQuery,
    threads: usize,
) -> Result<Stats, Error> {
    check_shape(corpus, cols)?;
    let plan = Plan::new(cols, q)?;
    // 0 = all cores: rayon's global pool (building a pool per query costs
    // ~0.1 ms, more than a narrow window's whole scan).
    let global = threads == 0;
    let threads = if global {
        rayon::current_num_threads()
    } else {
        threads
    };
    let work = || {
        let mut total = Acc::new(&plan);
        for (doc, dc) in corpus.docs().iter().zip(cols.docs()) {
            let range = candidate_lines(dc, q);
            if range.is_empty() {
                continue;
            }
            let parts = split(range, threads);
            let acc = parts
                .into_par_iter()
                .map(|r| scan_part(doc, dc, &plan, q, r))
                .reduce(|| Acc::new(&plan), Acc::merge);
            total = total.merge(acc);
        }
        total
    };
    let acc = if threads > 1 && !global {
        match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
            Ok(p) => p.install(work),
            Err(_) => work(),
        }
    } else {
        work()
    };
    let Acc {
        selected,
        dense,
        sparse,
        buckets,
    } = acc;
    let stats = if dense.is_empty() {
        plan.finish(cols, selected, sparse.into_iter(), buckets)
    } else {
        let it = dense.into_iter().enumerate().map(|(k, c)| (k as u64, c));
        plan.finish(cols, selected, it, buckets)
    };
    Ok(stats)
}

/// [`run_cpu`] over some lines only, `parts` (document, lines), on one
/// thread each part, with the histogram laid over `span` ([`Plan::over`]):
/// the host tier of a corpus whose other lines are on GPUs (`span` the
/// corpus's: the counts add up with the other parts', [`Stats::merge`]),
/// or a request's scope (`span` that of the scope's documents).
pub(crate) fn run_cpu_lines(
    span: (Option<i64>, Option<i64>),
    corpus: &Corpus,
    cols: &Columns,
    q: &StatsQuery,
    parts: &[(usize, Range<u64>)],
) -> Result<Stats, Error> {
    check_shape(corpus, cols)?;
    let plan = Plan::over(span, cols, q)?;
    let acc = parts
        .par_iter()
        .map(|(di, r)| {
            let (doc, dc) = (&corpus.docs()[*di], &cols.docs()[*di]);
            let w = candidate_lines(dc, q);
            let lo = w.start.max(r.start as usize);
            let hi = w.end.min(r.end as usize);
            if lo >= hi {
                return Acc::new(&plan);
            }
            scan_part(doc, dc, &plan, q, lo..hi)
        })
        .reduce(|| Acc::new(&plan), Acc::merge);
    let Acc {
        selected,
        dense,
        sparse,
        buckets,
    } = acc;
    Ok(if dense.is_empty() {
        plan.finish(cols, selected, sparse.into_iter(), buckets)
    } else {
        let it = dense.into_iter().enumerate().map(|(k, c)| (k as u64, c));
        plan.finish(cols, selected, it, buckets)
    })
}

impl Stats {
    /// Adds the counts of `other`, the same query's answer over other
    /// lines of the same columns (a shard, the host tier): selected lines,
    /// groups by key (in the order [`Stats`] documents) and histogram
    /// buckets add up.
    pub fn merge(mut self, other: Stats) -> Stats {
        self.selected += other.selected;
        let mut by_key: HashMap<Vec<Option<Vec<u8>>>, u64> = HashMap::new();
        for g in self.groups.drain(..).chain(other.groups) {
            *by_key.entry(g.key).or_default() += g.count;
        }
        self.groups = by_key
            .into_iter()
            .map(|(key, count)| Group { key, count })
            .collect();
        sort_groups(&mut self.groups);
        match (&mut self.histogram, other.histogram) {
            (Some(a), Some(b)) => {
                if a.counts.len() < b.counts.len() {
                    a.counts.resize(b.counts.len(), 0);
                }
                for (x, y) in a.counts.iter_mut().zip(b.counts) {
                    *x += y;
                }
            }
            (None, Some(b)) => self.histogram = Some(b),
            _ => {}
        }
        self
    }
}

pub(crate) fn check_shape(corpus: &Corpus, cols: &Columns) -> Result<(), Error> {
    let ok = corpus.docs().len() == cols.docs().len()
        && corpus
            .docs()
            .iter()
            .zip(cols.docs())
            .all(|(d, c)| d.lines().len() == c.times.len() as u64);
    if ok {
        Ok(())
    } else {
        Err(Error::query("the columns were built for another corpus"))
    }
}

/// Splits a line range into about `n` parts (at least 64K lines each).
pub(crate) fn split(r: Range<usize>, n: usize) -> Vec<Range<usize>> {
    let len = r.end - r.start;
    let n = n.clamp(1, len.div_ceil(1 << 16).max(1));
    (0..n)
        .map(|i| r.start + len * i / n..r.start + len * (i + 1) / n)
        .filter(|p| !p.is_empty())
        .collect()
}

/// Counts the selected lines among lines `r` of one document.
fn scan_part(doc: &Document, dc: &DocColumns, plan: &Plan, q: &StatsQuery, r: Range<usize>) -> Acc {
    let mut acc = Acc::new(plan);
    let Some(query) = q.search else {
        for l in r {
            visit(&mut acc, plan, q, dc, l);
        }
        return acc;
    };
    let hay = doc.data();
    let starts = doc.lines().starts();
    let byte = |l: usize| (starts[l] as usize).min(hay.len());
    let (b0, b1) = (byte(r.start), byte(r.end));
    let mut next = r.start; // the first line not yet decided (for -v)
    crate::cpu::for_each_match(query, hay, b0, b1, |ls, _| {
        // The line starting at `ls`, searched among the lines from `next`.
        let l = next + starts[next..r.end].partition_point(|&s| (s as usize) < ls);
        if query.invert() {
            for u in next..l {
                visit(&mut acc, plan, q, dc, u);
            }
        } else {
            visit(&mut acc, plan, q, dc, l);
        }
        next = l + 1;
        true
    });
    if query.invert() {
        for u in next..r.end {
            visit(&mut acc, plan, q, dc, u);
        }
    }
    acc
}
