//! A request's scope ([`Scope`]): which documents and which time window
//! it is about, honoured in one place for every backend. A search runs
//! as routed, with line ids under a window, and the executor keeps the
//! hits inside the scope before `-m`; per-pattern counts and stats count
//! the scope's lines only, on the CPU (the GPU's many-literal and stats
//! kernels count whole segments).

use std::ops::Range;

use super::Session;
use crate::error::Error;
use crate::results::{DocHits, Want};
use crate::stats::{Stats, StatsQuery};

/// Which lines a request is about; everything by default.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Scope {
    /// The documents, by index in the corpus (any order, repeats
    /// allowed); `None`: every document.
    pub docs: Option<Vec<usize>>,
    /// Lines stamped at or after this time (ms since the epoch). Under a
    /// window a line without a time is outside it.
    pub since: Option<i64>,
    /// Lines stamped before this time (ms since the epoch).
    pub until: Option<i64>,
}

impl Scope {
    /// True when the scope is the whole corpus.
    pub fn is_all(&self) -> bool {
        self.docs.is_none() && !self.windowed()
    }

    /// True when a time window is set.
    pub fn windowed(&self) -> bool {
        self.since.is_some() || self.until.is_some()
    }

    /// Whether document `d` is in the scope.
    pub fn has_doc(&self, d: usize) -> bool {
        self.docs.as_ref().is_none_or(|ds| ds.contains(&d))
    }

    /// Keeps the lines of `h` (line ids, with their starts when it has
    /// one per line) whose time in `times` (the document's stats column)
    /// is inside the window, the first `cap` of them, and counts them. A
    /// line with no time is outside a window. Without a window only the
    /// cap applies. O(hits).
    pub fn keep_window(&self, times: &[i64], h: &mut DocHits, cap: u64) {
        let w = self.window();
        let windowed = self.windowed();
        let keep: Vec<bool> = h
            .lines
            .iter()
            .map(|&l| !windowed || times.get(l as usize).is_some_and(|&t| w.in_window(t)))
            .collect();
        let cap = cap.min(usize::MAX as u64) as usize;
        let pick = |v: &mut Vec<u64>| {
            let mut k = keep.iter();
            v.retain(|_| *k.next().unwrap_or(&false));
            v.truncate(cap);
        };
        if h.starts.len() == h.lines.len() {
            pick(&mut h.starts);
        } else {
            h.starts.clear();
        }
        pick(&mut h.lines);
        h.count = h.lines.len() as u64;
    }

    /// The window as the stats pipeline's, whose test it shares.
    fn window(&self) -> StatsQuery<'static> {
        StatsQuery {
            since: self.since,
            until: self.until,
            ..Default::default()
        }
    }
}

impl Session {
    /// Each line's time in document `d` (empty without columns: under a
    /// window, no line is then inside it).
    fn times_of(&self, d: usize) -> &[i64] {
        self.columns()
            .and_then(|c| c.docs().get(d))
            .map_or(&[][..], |c| &c.times[..])
    }

    /// The lines of `scope`, as (document, ascending runs of its lines),
    /// documents in corpus order.
    pub(super) fn scope_runs(&self, scope: &Scope) -> Vec<(usize, Range<u64>)> {
        let w = scope.window();
        let mut out = Vec::new();
        for (d, doc) in self.corpus.docs().iter().enumerate() {
            if !scope.has_doc(d) {
                continue;
            }
            let n = doc.lines().len();
            if !scope.windowed() {
                if n > 0 {
                    out.push((d, 0..n));
                }
                continue;
            }
            let times = self.times_of(d);
            let mut start = None;
            for i in 0..n {
                let inside = times.get(i as usize).is_some_and(|&t| w.in_window(t));
                match (inside, start) {
                    (true, None) => start = Some(i),
                    (false, Some(s)) => {
                        out.push((d, s..i));
                        start = None;
                    }
                    _ => {}
                }
            }
            if let Some(s) = start {
                out.push((d, s..n));
            }
        }
        out
    }

    /// The options a search in `scope` runs with: line ids under a
    /// window (its test is per line), and `-m` applied afterwards to the
    /// lines inside it.
    pub(super) fn scoped_options(opts: &crate::SearchOptions) -> crate::SearchOptions {
        let mut o = opts.clone();
        o.scope = Scope::default();
        if opts.scope.windowed() {
            o.want = Want::Lines;
            o.line_ids = true;
            o.max_count = None;
        }
        o
    }

    /// Keeps the hits of `docs` inside `opts.scope` (the search ran with
    /// [`Session::scoped_options`]): documents outside it count nothing;
    /// under a window, a line counts when its time is inside, up to
    /// `-m` per document.
    pub(super) fn keep_in_scope(&self, opts: &crate::SearchOptions, docs: &mut [DocHits]) {
        let scope = &opts.scope;
        for (d, h) in docs.iter_mut().enumerate() {
            if !scope.has_doc(d) {
                *h = DocHits::default();
                continue;
            }
            if !scope.windowed() {
                continue;
            }
            let cap = opts.max_count.unwrap_or(u64::MAX);
            scope.keep_window(self.times_of(d), h, cap);
            if opts.want == Want::Count {
                h.lines.clear();
                h.starts.clear();
            }
        }
    }

    /// Stats over the lines of `scope`: its documents, and the stricter of
    /// its window and the query's; the histogram over the span of its
    /// documents' times.
    pub(super) fn scoped_stats(&self, q: &StatsQuery<'_>, scope: &Scope) -> Result<Stats, Error> {
        let Some(cols) = self.columns() else {
            return Err(Error::query(
                "stats: the session has no columns (Session::set_columns)",
            ));
        };
        let stricter = |a: Option<i64>, b: Option<i64>, f: fn(i64, i64) -> i64| match (a, b) {
            (Some(a), Some(b)) => Some(f(a, b)),
            (a, b) => a.or(b),
        };
        let mut q = q.clone();
        q.since = stricter(q.since, scope.since, i64::max);
        q.until = stricter(q.until, scope.until, i64::min);
        let parts: Vec<(usize, Range<u64>)> = self
            .corpus
            .docs()
            .iter()
            .enumerate()
            .filter(|&(d, _)| scope.has_doc(d))
            .map(|(d, doc)| (d, 0..doc.lines().len()))
            .collect();
        let span = cols.span(scope.docs.as_deref());
        crate::stats::run_cpu_lines(span, &self.corpus, cols, &q, &parts)
    }
}
