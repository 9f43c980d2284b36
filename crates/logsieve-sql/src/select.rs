//! A [`Pred`] evaluated over a session: the selected line ids per
//! document.
//!
//! Text leaves are engine searches through the session's one route (the
//! GPU when the corpus is resident); literal leaves under one OR go as one
//! multi-pattern query. Time, field and file leaves are tests on the
//! columns, applied to the engine's hits when an AND has both (a time
//! window over a sorted document is a line range).

use logsieve::stats::{Columns, NO_TIME};
use logsieve::{Query, QueryBuilder, SearchOptions, Session, Syntax};
use rayon::prelude::*;

use crate::pushdown::{Leaf, Pred, Text};

/// One document's selected lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DocSel {
    /// Every line.
    All,
    /// These line ids, ascending.
    Ids(Vec<u64>),
    /// The lines `start..end`.
    Range(u64, u64),
    /// This many lines, which are not known (a count where no column is
    /// read: `count(*)`).
    Count(u64),
}

impl DocSel {
    /// The number of lines selected of a document of `n` lines.
    pub fn len(&self, n: u64) -> u64 {
        match self {
            DocSel::All => n,
            DocSel::Ids(v) => v.len() as u64,
            DocSel::Range(a, b) => b.saturating_sub(*a),
            DocSel::Count(c) => *c,
        }
    }

    /// The `k`-th selected line (`k < len`).
    pub fn nth(&self, k: u64) -> u64 {
        match self {
            DocSel::All => k,
            DocSel::Ids(v) => v[k as usize],
            DocSel::Range(a, _) => a + k,
            DocSel::Count(_) => unreachable!("a count is read for no column"),
        }
    }

    /// As explicit ids, for a document of `n` lines.
    fn ids(self, n: u64) -> Vec<u64> {
        match self {
            DocSel::All => (0..n).collect(),
            DocSel::Ids(v) => v,
            DocSel::Range(a, b) => (a..b.max(a)).collect(),
            DocSel::Count(_) => unreachable!("a count is never combined"),
        }
    }
}

/// What evaluating a predicate needs.
pub struct Eval<'a> {
    /// The session searched.
    pub session: &'a Session,
    /// Options of each engine search (backend, threads).
    pub opts: &'a SearchOptions,
    /// The backend of each engine search, in order (for `EXPLAIN
    /// ANALYZE` and the API's answer).
    pub backends: Vec<String>,
}

impl Eval<'_> {
    fn lines(&self, doc: usize) -> u64 {
        self.session.corpus().docs()[doc].lines().len()
    }

    fn docs(&self) -> usize {
        self.session.corpus().docs().len()
    }

    /// The rows of every document that `p` (none: every row) selects,
    /// as counts when `count_only` and one engine count answers it.
    ///
    /// `file` tests at the top of `p` choose whole documents: they are
    /// decided once per document, never per line, so `text AND file IN
    /// (..)` (a cluster worker's scan of its shards) stays one engine
    /// count.
    pub fn scan(&mut self, p: Option<&Pred>, count_only: bool) -> Result<Vec<DocSel>, String> {
        let Some(p) = p else {
            return Ok(vec![DocSel::All; self.docs()]);
        };
        let (files, rest): (Vec<&Pred>, Vec<&Pred>) = match p {
            Pred::And(v) => v.iter().partition(|c| is_file(c)),
            p if is_file(p) => (vec![p], Vec::new()),
            p => (Vec::new(), vec![p]),
        };
        let docs = self.session.corpus().docs();
        let keep: Vec<bool> = docs
            .iter()
            .map(|d| {
                files.iter().all(|f| match f {
                    Pred::Leaf(Leaf::File(names), neg) => {
                        names.iter().any(|n| n == d.name()) != *neg
                    }
                    _ => unreachable!("partitioned above"),
                })
            })
            .collect();
        let none = |c: bool| {
            if c {
                DocSel::Count(0)
            } else {
                DocSel::Ids(Vec::new())
            }
        };
        // `... AND false` (a cluster's padding task): no search at all.
        let never = rest.iter().any(|c| matches!(c, Pred::Const(false)));
        if never || !keep.contains(&true) {
            return Ok(vec![none(count_only); keep.len()]);
        }
        let rest = match rest.len() {
            0 => Pred::Const(true),
            1 => rest[0].clone(),
            _ => Pred::And(rest.into_iter().cloned().collect()),
        };
        let (sel, counted) = match count_only.then(|| self.count(&rest)).transpose()? {
            Some(Some(c)) => (c, true),
            _ => (self.select(&rest)?, false),
        };
        Ok(sel
            .into_iter()
            .zip(keep)
            .map(|(s, k)| if k { s } else { none(counted) })
            .collect())
    }

    /// The rows of every document that `p` selects.
    pub fn select(&mut self, p: &Pred) -> Result<Vec<DocSel>, String> {
        match p {
            Pred::Const(true) => Ok(vec![DocSel::All; self.docs()]),
            Pred::Const(false) => Ok(vec![DocSel::Ids(Vec::new()); self.docs()]),
            Pred::Leaf(Leaf::Text(t), neg) => {
                let hits = self.search(&[t])?;
                Ok(if *neg { self.complement(hits) } else { hits })
            }
            Pred::Leaf(..) => Ok(self.filter(vec![DocSel::All; self.docs()], &[p])),
            Pred::And(children) => {
                let (text, rows): (Vec<&Pred>, Vec<&Pred>) =
                    children.iter().partition(|c| c.has_text());
                let mut sel: Option<Vec<DocSel>> = None;
                for c in text {
                    let s = self.select(c)?;
                    sel = Some(match sel {
                        None => s,
                        Some(prev) => intersect(prev, s),
                    });
                }
                let sel = match sel {
                    Some(s) => s,
                    None => self.windows(&rows),
                };
                Ok(self.filter(sel, &rows))
            }
            Pred::Or(children) => {
                // Positive literal leaves: one multi-pattern search.
                let (lits, rest): (Vec<&Pred>, Vec<&Pred>) = children
                    .iter()
                    .partition(|c| matches!(c, Pred::Leaf(Leaf::Text(t), false) if mergeable(t)));
                let mut sel: Option<Vec<DocSel>> = None;
                let mut groups: Vec<Vec<&Text>> = Vec::new();
                for c in &lits {
                    let Pred::Leaf(Leaf::Text(t), _) = c else {
                        unreachable!("partitioned above")
                    };
                    match groups
                        .iter_mut()
                        .find(|g| (g[0].fold, g[0].word) == (t.fold, t.word))
                    {
                        Some(g) => g.push(t),
                        None => groups.push(vec![t]),
                    }
                }
                for g in groups {
                    let s = self.search(&g)?;
                    sel = Some(match sel {
                        None => s,
                        Some(prev) => union(prev, s),
                    });
                }
                for c in rest {
                    let s = self.select(c)?;
                    sel = Some(match sel {
                        None => s,
                        Some(prev) => union(prev, s),
                    });
                }
                Ok(sel.unwrap_or_else(|| vec![DocSel::Ids(Vec::new()); self.docs()]))
            }
        }
    }

    /// The number of lines `p` selects per document, when one engine
    /// count answers it (a text test, or positive literals under one
    /// OR): no line id is gathered. `None` otherwise.
    pub fn count(&mut self, p: &Pred) -> Result<Option<Vec<DocSel>>, String> {
        let texts: Vec<&Text> = match p {
            Pred::Leaf(Leaf::Text(t), false) => vec![t],
            Pred::Or(v) => {
                let mut out = Vec::new();
                for c in v {
                    match c {
                        Pred::Leaf(Leaf::Text(t), false) if mergeable(t) => out.push(t),
                        _ => return Ok(None),
                    }
                }
                if out
                    .iter()
                    .any(|t| (t.fold, t.word) != (out[0].fold, out[0].word))
                {
                    return Ok(None);
                }
                out
            }
            _ => return Ok(None),
        };
        let q = query(&texts)?;
        let opts = SearchOptions {
            want: logsieve::Want::Count,
            ..self.opts.clone()
        };
        let res = self.session.search(&q, &opts).map_err(|e| e.to_string())?;
        self.backends.push(res.backend.to_string());
        Ok(Some(
            res.docs
                .into_iter()
                .map(|d| DocSel::Count(d.count))
                .collect(),
        ))
    }

    /// One engine search for the texts (several: any of them).
    fn search(&mut self, texts: &[&Text]) -> Result<Vec<DocSel>, String> {
        let q = query(texts)?;
        let res = self
            .session
            .search(&q, self.opts)
            .map_err(|e| e.to_string())?;
        self.backends.push(res.backend.to_string());
        Ok(res.docs.into_iter().map(|d| DocSel::Ids(d.lines)).collect())
    }

    fn complement(&self, sel: Vec<DocSel>) -> Vec<DocSel> {
        sel.into_iter()
            .enumerate()
            .map(|(d, s)| match s {
                DocSel::All => DocSel::Ids(Vec::new()),
                s => {
                    let n = self.lines(d);
                    let ids = s.ids(n);
                    if ids.is_empty() {
                        return DocSel::All;
                    }
                    let mut out = Vec::with_capacity((n as usize).saturating_sub(ids.len()));
                    let mut next = 0u64;
                    for &i in &ids {
                        out.extend(next..i);
                        next = i + 1;
                    }
                    out.extend(next..n);
                    DocSel::Ids(out)
                }
            })
            .collect()
    }

    /// The lines a positive time window among `rows` allows, per
    /// document: a line range where the document is sorted, else all.
    fn windows(&self, rows: &[&Pred]) -> Vec<DocSel> {
        let window = rows.iter().find_map(|p| match p {
            Pred::Leaf(Leaf::Time { lo, hi }, false) => Some((*lo, *hi)),
            _ => None,
        });
        let cols = self.session.columns();
        (0..self.docs())
            .map(|d| match (window, cols) {
                (Some((lo, hi)), Some(cols)) if cols.docs()[d].sorted => {
                    let dc = &cols.docs()[d];
                    let t = &dc.times;
                    let a = lo.map_or(0, |lo| t.partition_point(|&x| x < lo));
                    let b = hi.map_or(t.len(), |hi| t.partition_point(|&x| x < hi));
                    let a = (a as u64).max(dc.leading);
                    DocSel::Range(a, (b as u64).max(a))
                }
                _ => DocSel::All,
            })
            .collect()
    }

    /// `sel` narrowed to the rows where every one of `rows` (column
    /// tests, no text) holds.
    fn filter(&self, sel: Vec<DocSel>, rows: &[&Pred]) -> Vec<DocSel> {
        if rows.is_empty() {
            return sel;
        }
        let corpus = self.session.corpus();
        let cols = self.session.columns();
        sel.into_iter()
            .enumerate()
            .map(|(d, s)| {
                let row = Row {
                    cols,
                    doc: d,
                    name: corpus.docs()[d].name(),
                };
                let keep = |&i: &u64| rows.iter().all(|p| row.holds(p, i));
                let (a, b) = match s {
                    DocSel::All => (0, self.lines(d)),
                    DocSel::Range(a, b) => (a, b),
                    DocSel::Count(_) => unreachable!("a count is never filtered"),
                    DocSel::Ids(ids) => {
                        return DocSel::Ids(ids.into_iter().filter(|i| keep(i)).collect())
                    }
                };
                let chunks: Vec<u64> = (a / CHUNK..b.div_ceil(CHUNK)).collect();
                DocSel::Ids(
                    chunks
                        .par_iter()
                        .flat_map_iter(|&c| {
                            ((c * CHUNK).max(a)..((c + 1) * CHUNK).min(b)).filter(keep)
                        })
                        .collect(),
                )
            })
            .collect()
    }
}

/// Lines per task of a column scan.
const CHUNK: u64 = 1 << 16;

/// One line's columns, for column tests.
struct Row<'a> {
    cols: Option<&'a Columns>,
    doc: usize,
    name: &'a str,
}

impl Row<'_> {
    /// Whether `p` (no text leaves) is true of line `i`.
    fn holds(&self, p: &Pred, i: u64) -> bool {
        match p {
            Pred::Const(b) => *b,
            Pred::And(v) => v.iter().all(|c| self.holds(c, i)),
            Pred::Or(v) => v.iter().any(|c| self.holds(c, i)),
            // `Some(v)`: the leaf's value; `None`: null (neither it nor
            // its negation holds).
            Pred::Leaf(l, neg) => self.value(l, i).is_some_and(|v| v != *neg),
        }
    }

    fn value(&self, l: &Leaf, i: u64) -> Option<bool> {
        match l {
            Leaf::File(names) => Some(names.iter().any(|n| n == self.name)),
            Leaf::Time { lo, hi } => {
                let t = time(self.cols, self.doc, i)?;
                Some(lo.is_none_or(|lo| t >= lo) && hi.is_none_or(|hi| t < hi))
            }
            Leaf::TimeNull => Some(time(self.cols, self.doc, i).is_none()),
            Leaf::Field { field, values } => {
                let v = field_value(self.cols, self.doc, *field, i)?;
                Some(values.iter().any(|x| x == v))
            }
            Leaf::FieldNull(f) => Some(field_value(self.cols, self.doc, *f, i).is_none()),
            Leaf::Text(_) => unreachable!("text leaves are searched, not tested"),
        }
    }
}

/// Line `i`'s time (ms), `None` when it has none of its own or before
/// it (SQL's null).
pub fn time(cols: Option<&Columns>, doc: usize, i: u64) -> Option<i64> {
    let dc = &cols?.docs()[doc];
    let t = *dc.times.get(i as usize)?;
    (t != NO_TIME && i >= dc.leading).then_some(t)
}

/// Line `i`'s value of field `f`, `None` when it has none.
pub fn field_value(cols: Option<&Columns>, doc: usize, f: usize, i: u64) -> Option<&[u8]> {
    let cols = cols?;
    let code = *cols.docs()[doc].codes.get(f)?.get(i as usize)?;
    cols.fields()[f].value(code)
}

/// The engine queries `p` will run (to prepare the session for them).
pub fn queries(p: &Pred) -> Result<Vec<Query>, String> {
    fn walk<'a>(p: &'a Pred, out: &mut Vec<&'a Text>) {
        match p {
            Pred::Leaf(Leaf::Text(t), _) => out.push(t),
            Pred::And(v) | Pred::Or(v) => v.iter().for_each(|c| walk(c, out)),
            _ => {}
        }
    }
    let mut texts = Vec::new();
    walk(p, &mut texts);
    texts.into_iter().map(|t| query(&[t])).collect()
}

/// A test on `file` alone.
fn is_file(p: &Pred) -> bool {
    matches!(p, Pred::Leaf(Leaf::File(_), _))
}

/// A literal that can share a multi-pattern search.
fn mergeable(t: &Text) -> bool {
    !t.regex && !t.whole && !t.pattern.is_empty()
}

/// The engine query of `texts` (any of them).
pub(crate) fn query(texts: &[&Text]) -> Result<Query, String> {
    let t0 = texts[0];
    let mut b = QueryBuilder::new();
    b.syntax(if t0.regex {
        Syntax::Regex
    } else {
        Syntax::Fixed
    })
    .case_insensitive(t0.fold)
    .word(t0.word)
    .whole_line(t0.whole);
    let pats: Vec<&str> = texts.iter().map(|t| t.pattern.as_str()).collect();
    b.build(&pats).map_err(|e| e.to_string())
}

fn intersect(a: Vec<DocSel>, b: Vec<DocSel>) -> Vec<DocSel> {
    a.into_iter()
        .zip(b)
        .map(|(x, y)| match (x, y) {
            (DocSel::All, s) | (s, DocSel::All) => s,
            (DocSel::Range(a, b), DocSel::Range(c, d)) => {
                DocSel::Range(a.max(c), b.min(d).max(a.max(c)))
            }
            (DocSel::Range(a, b), DocSel::Ids(v)) | (DocSel::Ids(v), DocSel::Range(a, b)) => {
                DocSel::Ids(v.into_iter().filter(|i| (a..b).contains(i)).collect())
            }
            (DocSel::Count(_), _) | (_, DocSel::Count(_)) => {
                unreachable!("a count is never combined")
            }
            (DocSel::Ids(x), DocSel::Ids(y)) => {
                let (mut i, mut j, mut out) = (0, 0, Vec::new());
                while i < x.len() && j < y.len() {
                    match x[i].cmp(&y[j]) {
                        std::cmp::Ordering::Less => i += 1,
                        std::cmp::Ordering::Greater => j += 1,
                        std::cmp::Ordering::Equal => {
                            out.push(x[i]);
                            i += 1;
                            j += 1;
                        }
                    }
                }
                DocSel::Ids(out)
            }
        })
        .collect()
}

fn union(a: Vec<DocSel>, b: Vec<DocSel>) -> Vec<DocSel> {
    a.into_iter()
        .zip(b)
        .map(|(x, y)| match (x, y) {
            (DocSel::All, _) | (_, DocSel::All) => DocSel::All,
            (x, y) => {
                // Ranges are within the document: u64::MAX bounds them.
                let (x, y) = (x.ids(u64::MAX), y.ids(u64::MAX));
                let (mut i, mut j) = (0, 0);
                let mut out = Vec::with_capacity(x.len() + y.len());
                while i < x.len() || j < y.len() {
                    let v = match (x.get(i), y.get(j)) {
                        (Some(&a), Some(&b)) if a == b => {
                            i += 1;
                            j += 1;
                            a
                        }
                        (Some(&a), Some(&b)) if a < b => {
                            i += 1;
                            a
                        }
                        (Some(_), Some(&b)) => {
                            j += 1;
                            b
                        }
                        (Some(&a), None) => {
                            i += 1;
                            a
                        }
                        (None, Some(&b)) => {
                            j += 1;
                            b
                        }
                        (None, None) => unreachable!("loop condition"),
                    };
                    out.push(v);
                }
                DocSel::Ids(out)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use logsieve::{Corpus, Document};

    fn session() -> Session {
        let mut corpus = Corpus::from_bytes("a.log", b"x ERROR 1\ny ok\nERROR 3\n".to_vec());
        corpus.push(Document::from_bytes("b.log", b"z ERROR 2\n".to_vec()));
        Session::new(corpus)
    }

    fn error() -> Pred {
        Pred::Leaf(
            Leaf::Text(Text {
                pattern: "ERROR".into(),
                regex: false,
                fold: false,
                whole: false,
                word: false,
            }),
            false,
        )
    }

    fn file(name: &str, neg: bool) -> Pred {
        Pred::Leaf(Leaf::File(vec![name.into()]), neg)
    }

    /// REGRESSION: `text AND file IN (..)` gathered every hit's id and
    /// tested its file per line; the file test now picks documents and
    /// the text stays one engine count.
    #[test]
    fn file_tests_pick_documents_and_keep_the_count() {
        let s = session();
        let opts = SearchOptions::default();
        let mut ev = Eval {
            session: &s,
            opts: &opts,
            backends: Vec::new(),
        };
        let p = Pred::And(vec![error(), file("a.log", false)]);
        assert_eq!(
            ev.scan(Some(&p), true).unwrap(),
            [DocSel::Count(2), DocSel::Count(0)]
        );
        assert_eq!(
            ev.scan(Some(&p), false).unwrap(),
            [DocSel::Ids(vec![0, 2]), DocSel::Ids(Vec::new())]
        );
        let p = Pred::And(vec![error(), file("a.log", true)]);
        assert_eq!(
            ev.scan(Some(&p), true).unwrap(),
            [DocSel::Count(0), DocSel::Count(1)]
        );
        // A file alone: whole documents, no search.
        let before = ev.backends.len();
        assert_eq!(
            ev.scan(Some(&file("b.log", false)), false).unwrap(),
            [DocSel::Ids(Vec::new()), DocSel::All]
        );
        // No document left: no search either.
        let p = Pred::And(vec![error(), file("c.log", false)]);
        assert_eq!(
            ev.scan(Some(&p), true).unwrap(),
            [DocSel::Count(0), DocSel::Count(0)]
        );
        let p = Pred::And(vec![error(), Pred::Const(false)]);
        assert_eq!(
            ev.scan(Some(&p), false).unwrap(),
            [DocSel::Ids(Vec::new()), DocSel::Ids(Vec::new())]
        );
        assert_eq!(ev.backends.len(), before);
        assert_eq!(ev.scan(None, true).unwrap(), [DocSel::All, DocSel::All]);
    }
}
