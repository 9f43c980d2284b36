//! Per-pattern answers for many-pattern queries (IOC lists): how many lines
//! hold each pattern, how often it occurs, and which pattern(s) a submatch
//! is.
//!
//! Each pattern is counted as if it were searched alone with the query's
//! flags (`-i`, `-w`, `-x`; `-v` and `-m` do not apply): `lines[i]` is the
//! number of lines in which pattern `i` matches, `occurrences[i]` the number
//! of its non-overlapping matches, leftmost first (what `-o` would print for
//! that pattern alone; the empty pattern has none). Duplicates get the same
//! counts. Totals are over every document of the corpus.
//!
//! The CPU computes them in one pass over the corpus for literal sets of
//! more than [`ALONE_MAX`] patterns (the overlapping matches of every
//! pattern, then a per-pattern line and overlap check), else by searching
//! each pattern alone. The GPU kernels for
//! many literals (`trie`, `ac`, `prefix-hash`, `bloom`) count on the GPU
//! with atomics.

use std::collections::HashMap;
use std::ops::Range;

use crate::cpu::multi::{count_doc, count_range, GroupCounts, Occurrences, PatternSet};
use crate::error::Error;
use crate::query::{CaseMode, Query, QueryBuilder, Syntax};
use crate::results::{BackendReport, Want};

/// Lines and occurrences of each pattern of a query.
#[derive(Clone, Debug)]
pub struct PatternCounts {
    /// The query's patterns, in order (after splitting on newlines);
    /// shared with a watchlist's, not copied per count.
    pub patterns: std::sync::Arc<[Vec<u8>]>,
    /// Lines containing each pattern.
    pub lines: Vec<u64>,
    /// Non-overlapping occurrences of each pattern.
    pub occurrences: Vec<u64>,
    /// Which backend counted, and why.
    pub backend: BackendReport,
}

impl PatternCounts {
    /// Indices of the patterns found at least once.
    pub fn matched(&self) -> Vec<usize> {
        (0..self.patterns.len())
            .filter(|&i| self.lines[i] > 0)
            .collect()
    }
}

/// The literal set of `q` when the one-pass counter applies: every pattern
/// a literal, byte or ASCII folding, no `-w`/`-x`.
pub(crate) fn literal_set(q: &Query) -> Option<&[Vec<u8>]> {
    let lits = q.literals()?;
    if q.word() || q.whole_line() || q.case() == CaseMode::Unicode {
        return None;
    }
    Some(lits)
}

/// Up to this many patterns, a literal set is counted by searching each
/// pattern alone (its fastest finder: a rare byte, memmem) rather than by
/// the one-pass counter, which finds every occurrence of every pattern
/// with one automaton: two literals over 1M generated lines (194 MB) took
/// 0.34 s in one pass against 0.01 s for a count search of both on the
/// 2-core build machine (2026-12-01). The one pass wins when the patterns
/// are many (a watchlist: one pass instead of thousands).
pub(crate) const ALONE_MAX: usize = 8;

/// True when `q`'s per-pattern counts take the one-pass counter.
pub(crate) fn one_pass(q: &Query) -> bool {
    q.patterns().len() > ALONE_MAX && literal_set(q).is_some()
}

/// A query for pattern `p` alone, with `q`'s flags (not `-v`).
pub(crate) fn single(q: &Query, p: &[u8], whole_line: bool) -> Result<Query, Error> {
    QueryBuilder::new()
        .syntax(q.syntax())
        .case_insensitive(q.case() != CaseMode::Sensitive)
        .word(q.word() && !whole_line)
        .whole_line(q.whole_line() || whole_line)
        .cpu_multi(q.cpu_multi())
        .build(&[p])
}

/// The one-pass CPU counter of a literal set ([`literal_set`]), built
/// once: the distinct patterns' automaton (Aho-Corasick, or the hashed
/// prefix table for large sets) and the map back to the query's patterns.
/// A watchlist keeps it ([`crate::watchlist`]): building it is most of a
/// 10k-pattern count's host time.
pub(crate) struct CpuCounter {
    n: usize,
    /// The query's non-empty patterns (indices).
    nonempty: Vec<usize>,
    /// Each non-empty pattern's group (distinct folded pattern).
    group_of: Vec<u32>,
    /// Each group's length.
    lens: Vec<usize>,
    /// Each group's patterns (indices into the query's), ascending.
    members: Vec<Vec<u32>>,
    occ: Option<Occurrences>,
}

impl CpuCounter {
    /// The counter of `q`, when `q` is a literal set.
    pub(crate) fn new(q: &Query) -> Option<CpuCounter> {
        let lits = literal_set(q)?;
        let n = q.patterns().len();
        let fold = q.case() == CaseMode::Ascii;
        // The empty pattern is on every line and never printed by -o.
        let nonempty: Vec<usize> = (0..n).filter(|&i| !lits[i].is_empty()).collect();
        let pats: Vec<Vec<u8>> = nonempty.iter().map(|&i| lits[i].clone()).collect();
        let set = PatternSet::new(&pats, fold);
        let lens: Vec<usize> = set.uniq.iter().map(|p| p.len()).collect();
        let group_of = set.group_of.clone();
        let mut members = vec![Vec::new(); lens.len()];
        for (k, &i) in nonempty.iter().enumerate() {
            members[group_of[k] as usize].push(i as u32);
        }
        Some(CpuCounter {
            n,
            nonempty,
            group_of,
            lens,
            members,
            occ: Occurrences::new(set, q.cpu_multi()),
        })
    }

    /// The patterns (indices, ascending) that occur in `line`.
    pub(crate) fn patterns_in(&self, line: &[u8]) -> Vec<u32> {
        let mut groups = Vec::new();
        if let Some(occ) = &self.occ {
            occ.for_each(line, 0, line.len(), |_, g| groups.push(g));
        }
        groups.sort_unstable();
        groups.dedup();
        let mut out: Vec<u32> = groups
            .iter()
            .flat_map(|&g| self.members[g as usize].iter().copied())
            .collect();
        out.sort_unstable();
        out
    }

    /// Lines and occurrences of each pattern over `corpus`; `cancel` is
    /// looked at between documents.
    pub(crate) fn count(
        &self,
        corpus: &crate::Corpus,
        threads: usize,
        cancel: &crate::Cancel,
    ) -> Result<(Vec<u64>, Vec<u64>), Error> {
        // Only an empty pattern needs the line total (a pass over the
        // corpus: watchlists hold no empty pattern).
        let total_lines: u64 = if self.nonempty.len() < self.n {
            corpus
                .docs()
                .iter()
                .map(|d| crate::cpu::count_lines(d.data()))
                .sum()
        } else {
            0
        };
        let mut g = GroupCounts::zero(self.lens.len());
        if let Some(occ) = &self.occ {
            for d in corpus.docs() {
                cancel.check()?;
                g.add(&count_doc(occ, &self.lens, d.data(), threads));
            }
        }
        Ok(self.answer(&g, total_lines))
    }

    /// [`CpuCounter::count`] over `runs` only: (document, ascending runs
    /// of its lines).
    pub(crate) fn count_runs(
        &self,
        corpus: &crate::Corpus,
        runs: &[(usize, Range<u64>)],
        cancel: &crate::Cancel,
    ) -> Result<(Vec<u64>, Vec<u64>), Error> {
        let total_lines = runs.iter().map(|(_, r)| r.end - r.start).sum();
        let mut g = GroupCounts::zero(self.lens.len());
        if let Some(occ) = &self.occ {
            for (d, r) in runs {
                cancel.check()?;
                let doc = &corpus.docs()[*d];
                let b = run_bytes(doc, r);
                g.add(&count_range(occ, &self.lens, doc.data(), b.start, b.end));
            }
        }
        Ok(self.answer(&g, total_lines))
    }

    /// The query's per-pattern answer from its groups' counts.
    fn answer(&self, g: &GroupCounts, total_lines: u64) -> (Vec<u64>, Vec<u64>) {
        let mut lines = vec![total_lines; self.n];
        let mut occs = vec![0u64; self.n];
        for (k, &i) in self.nonempty.iter().enumerate() {
            let grp = self.group_of[k] as usize;
            lines[i] = g.lines[grp];
            occs[i] = g.occurrences[grp];
        }
        (lines, occs)
    }
}

/// The bytes of lines `r` of `doc`.
fn run_bytes(doc: &crate::Document, r: &Range<u64>) -> Range<usize> {
    let st = doc.lines().starts();
    let len = doc.data().len() as u64;
    st[r.start as usize].min(len) as usize..st[r.end as usize].min(len) as usize
}

/// Per-pattern counts over `runs` of `corpus` (document, ascending runs
/// of its lines): a request's scope. `counter` is a watchlist's; a
/// literal set past [`ALONE_MAX`] builds its own, anything else searches
/// each pattern alone over the runs.
pub(crate) fn cpu_counts_in(
    corpus: &crate::Corpus,
    q: &Query,
    counter: Option<&CpuCounter>,
    runs: &[(usize, Range<u64>)],
    cancel: &crate::Cancel,
) -> Result<(Vec<u64>, Vec<u64>), Error> {
    let built;
    let counter = match counter {
        Some(c) => Some(c),
        None if one_pass(q) => {
            built = CpuCounter::new(q);
            built.as_ref()
        }
        None => None,
    };
    if let Some(c) = counter {
        return c.count_runs(corpus, runs, cancel);
    }
    let n = q.patterns().len();
    let mut lines = vec![0u64; n];
    let mut occs = vec![0u64; n];
    for (i, p) in q.patterns().iter().enumerate() {
        let one = single(q, p, false)?;
        for (d, r) in runs {
            let doc = &corpus.docs()[*d];
            let b = run_bytes(doc, r);
            crate::cpu::for_each_match_until(&one, doc.data(), b.start, b.end, cancel, |ls, _| {
                lines[i] += 1;
                occs[i] += one
                    .find_iter_line(doc.line(doc.lines().line_of(ls as u64)))
                    .iter()
                    .filter(|m| !m.is_empty())
                    .count() as u64;
                true
            });
            cancel.check()?;
        }
    }
    Ok((lines, occs))
}

/// Per-pattern counts on the CPU; `cancel` is looked at between
/// documents (one pass) and inside each pattern's search (each alone).
pub(crate) fn cpu_counts(
    corpus: &crate::Corpus,
    q: &Query,
    threads: usize,
    cancel: &crate::Cancel,
) -> Result<(Vec<u64>, Vec<u64>), Error> {
    let n = q.patterns().len();
    if one_pass(q) {
        if let Some(c) = CpuCounter::new(q) {
            return c.count(corpus, threads, cancel);
        }
    }
    // Anything else: each pattern searched alone.
    let mut lines = vec![0u64; n];
    let mut occs = vec![0u64; n];
    let copts = crate::cpu::CpuOptions {
        threads,
        want: Want::Lines,
        max_count: None,
        line_ids: true,
    };
    for (i, p) in q.patterns().iter().enumerate() {
        let one = single(q, p, false)?;
        for d in corpus.docs() {
            let hits = crate::cpu::search_doc_cancellable(d, &one, &copts, cancel)?;
            lines[i] += hits.count;
            for &id in &hits.lines {
                occs[i] += one
                    .find_iter_line(d.line(id))
                    .iter()
                    .filter(|m| !m.is_empty())
                    .count() as u64;
            }
        }
    }
    Ok((lines, occs))
}

/// Names the pattern(s) a submatch is, for `--json`: for literal queries
/// every pattern equal to the matched text (duplicates and, under `-i`,
/// case variants included); otherwise every pattern that, alone, matches
/// the whole text.
#[derive(Debug)]
pub struct PatternNamer {
    how: Naming,
}

#[derive(Debug)]
enum Naming {
    Literal {
        fold: bool,
        by_text: HashMap<Vec<u8>, Vec<usize>>,
    },
    Each(Vec<Query>),
}

/// Above this many non-literal patterns, submatches are not named (one
/// compiled query per pattern would cost more than the search).
const NAMER_MAX_QUERIES: usize = 1000;

impl PatternNamer {
    /// A namer for `q`'s patterns.
    pub fn new(q: &Query) -> PatternNamer {
        if let Some(lits) = q.literals().filter(|_| q.case() != CaseMode::Unicode) {
            let fold = q.case() == CaseMode::Ascii;
            let mut by_text: HashMap<Vec<u8>, Vec<usize>> = HashMap::new();
            for (i, l) in lits.iter().enumerate() {
                let k = if fold {
                    l.to_ascii_lowercase()
                } else {
                    l.clone()
                };
                by_text.entry(k).or_default().push(i);
            }
            return PatternNamer {
                how: Naming::Literal { fold, by_text },
            };
        }
        let mut each = Vec::new();
        if q.patterns().len() <= NAMER_MAX_QUERIES {
            // Fuzzy cannot be anchored (-x); its unanchored match is close
            // enough for naming.
            let anchor = !matches!(q.syntax(), Syntax::Fuzzy(_));
            for p in q.patterns() {
                match single(q, p, anchor) {
                    Ok(one) => each.push(one),
                    Err(_) => {
                        return PatternNamer {
                            how: Naming::Each(Vec::new()),
                        }
                    }
                }
            }
        }
        PatternNamer {
            how: Naming::Each(each),
        }
    }

    /// The indices of the patterns `text` (a submatch) is.
    pub fn patterns_of(&self, text: &[u8]) -> Vec<usize> {
        match &self.how {
            Naming::Literal { fold, by_text } => {
                let k = if *fold {
                    text.to_ascii_lowercase()
                } else {
                    text.to_vec()
                };
                by_text.get(&k).cloned().unwrap_or_default()
            }
            Naming::Each(qs) => (0..qs.len())
                .filter(|&i| qs[i].is_match_line(text))
                .collect(),
        }
    }
}
