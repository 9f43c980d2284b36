//! Building and extending [`Columns`]: each line's timestamp and field
//! codes, in parallel chunks, then the year of year-less timestamps
//! ([`super::year`]) and the inherited times of unstamped lines.

use std::collections::HashMap;
use std::ops::Range;

use rayon::prelude::*;

use super::year::{self, YearSource};
use super::{Columns, DocColumns, FieldSpec, TimeRules, NO_TIME};
use crate::corpus::{Corpus, Document};

/// Lines per parallel work item when building columns.
const BUILD_CHUNK: u64 = 16 * 1024;
/// Lines sampled per document to detect its timestamp format.
const SAMPLE: u64 = 1000;

struct Chunk<'a> {
    /// Each line's time (`NO_TIME` when it has none); year-less stamps
    /// read with the chunk's base year.
    times: Vec<i64>,
    codes: Vec<Vec<u32>>,
    dicts: Vec<Vec<&'a [u8]>>,
    /// Offsets (in the chunk) of the lines whose stamp carries no year.
    yearless: Vec<u32>,
    /// The newest stamp that carries its own year.
    dated_newest: Option<i64>,
}

fn build_chunk<'a>(
    doc: &'a Document,
    rules: &TimeRules,
    year: i32,
    fields: &[FieldSpec],
    lines: Range<u64>,
) -> Chunk<'a> {
    let n = (lines.end - lines.start) as usize;
    let mut times = Vec::with_capacity(n);
    let mut codes: Vec<Vec<u32>> = fields.iter().map(|_| Vec::with_capacity(n)).collect();
    let mut dicts: Vec<Vec<&'a [u8]>> = vec![Vec::new(); fields.len()];
    let mut maps: Vec<HashMap<&'a [u8], u32>> = vec![HashMap::new(); fields.len()];
    let mut yearless = Vec::new();
    let mut dated_newest = None::<i64>;
    for (i, l) in lines.enumerate() {
        let line = doc.line(l);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let st = rules.stamp(line, year);
        if let Some(s) = st {
            if s.format.yearless() {
                yearless.push(i as u32);
            } else {
                dated_newest = Some(dated_newest.map_or(s.ms, |d| d.max(s.ms)));
            }
        }
        times.push(st.map_or(NO_TIME, |s| s.ms));
        for (f, spec) in fields.iter().enumerate() {
            let code = match spec.extract(line, st) {
                None => 0,
                Some(v) => *maps[f].entry(v).or_insert_with(|| {
                    dicts[f].push(v);
                    dicts[f].len() as u32
                }),
            };
            codes[f].push(code);
        }
    }
    Chunk {
        times,
        codes,
        dicts,
        yearless,
        dated_newest,
    }
}

/// Evenly spaced sample lines of a document (all of them when few).
fn sample_lines(doc: &Document) -> impl Iterator<Item = &[u8]> {
    let n = doc.lines().len();
    let step = n.div_ceil(SAMPLE).max(1);
    (0..n).step_by(step as usize).map(move |l| {
        let line = doc.line(l);
        line.strip_suffix(b"\r").unwrap_or(line)
    })
}

/// A document read but not finished: its stamps, year-less ones read with
/// `base`, before the year is decided (a document without a modification
/// time takes it from the newest dated line of the corpus).
struct Parsed {
    di: usize,
    rules: TimeRules,
    base: i32,
    times: Vec<i64>,
    codes: Vec<Vec<u32>>,
    /// Line numbers of the year-less stamps, in order.
    yearless: Vec<u64>,
    dated_newest: Option<i64>,
}

impl Columns {
    /// Extends the columns over what was appended to `corpus` since they
    /// were built or last extended (the follower's appended lines, new
    /// documents), with the same options: an existing document keeps its
    /// timestamp rules and its year (a year-less stamp that jumps back by
    /// months starts the next year, as at load); a new one (or one that
    /// had no lines) detects its own. Codes of values already seen are
    /// kept. Lines that came before a document's first timestamp keep no
    /// time when a timestamp arrives later. The work is O(appended lines),
    /// except once per document when its times first go out of order (its
    /// running maximum is built then).
    pub fn extend(&mut self, corpus: &Corpus) {
        // Each document's lines already counted in `oldest`/`newest`:
        // only the new times are folded in (the writer's lock holds this;
        // a pass over every line's time per batch was O(corpus)).
        let mut seen = Vec::with_capacity(corpus.docs().len());
        let mut fresh = Vec::new();
        for (di, doc) in corpus.docs().iter().enumerate() {
            let n = doc.lines().len();
            let empty = self.docs.get(di).is_some_and(|d| d.times.is_empty());
            if di >= self.docs.len() || (empty && n > 0) {
                // New, or a document that had no lines (a file created
                // empty): its rules are detected from its lines.
                fresh.push(self.parse_doc(di, doc));
                seen.push(0);
            } else {
                let d = &self.docs[di];
                seen.push(d.times.len());
                let continued = d
                    .open_line
                    .is_some_and(|(len, _)| doc.line(d.times.len() as u64 - 1).len() as u64 != len);
                if (d.times.len() as u64) < n || continued {
                    self.extend_doc(di, doc, n);
                }
            }
        }
        // A document with neither a year nor a modification time dates
        // its year-less stamps by the newest dated line: its own, else
        // the corpus's.
        let corpus_dated = self
            .docs
            .iter()
            .filter_map(|d| d.dated_newest)
            .chain(fresh.iter().filter_map(|p| p.dated_newest))
            .max();
        for p in fresh {
            let di = p.di;
            let source = self.year_source(di, p.dated_newest.or(corpus_dated));
            let d = finish_doc(&corpus.docs()[di], p, source);
            if di < self.docs.len() {
                self.docs[di] = d;
            } else {
                self.docs.push(d);
            }
        }
        for (d, &from) in self.docs.iter().zip(&seen) {
            for &t in d.times[from..].iter().filter(|&&t| t != NO_TIME) {
                self.oldest = Some(self.oldest.map_or(t, |o| o.min(t)));
                self.newest = Some(self.newest.map_or(t, |o| o.max(t)));
            }
        }
    }

    /// Where document `di`'s year comes from: `--year`, else its
    /// modification time, else the newest dated line (`dated`), else the
    /// options' year.
    fn year_source(&self, di: usize, dated: Option<i64>) -> YearSource {
        let o = &self.opts;
        match (o.doc_years.get(di), o.doc_mtimes.get(di)) {
            (Some(&y), _) => YearSource::Fixed(y),
            (None, Some(&Some(m))) => YearSource::Reference(m),
            _ => dated.map_or(YearSource::Fixed(o.year), YearSource::Reference),
        }
    }

    /// Dictionary codes of a chunk's values, in the corpus-wide
    /// dictionaries (new values get the next codes).
    fn remap(&mut self, dicts: &[Vec<&[u8]>]) -> Vec<Vec<u32>> {
        let mut per_field = Vec::with_capacity(dicts.len());
        for (f, dict) in dicts.iter().enumerate() {
            let mut remap = Vec::with_capacity(dict.len() + 1);
            remap.push(0u32);
            for v in dict {
                let values = &mut self.fields[f].values;
                let code = *self.lookup[f].entry(v.to_vec()).or_insert_with(|| {
                    values.push(v.to_vec());
                    values.len() as u32
                });
                remap.push(code);
            }
            per_field.push(remap);
        }
        per_field
    }

    fn extend_doc(&mut self, di: usize, doc: &Document, n: u64) {
        let d = &mut self.docs[di];
        if let Some((_, stamped)) = d.open_line.take() {
            // The last line went on: it is read again with the new lines.
            d.times.pop();
            for col in &mut d.codes {
                col.pop();
            }
            if !d.sorted {
                d.running_max.pop();
            }
            d.stamped = d.stamped.saturating_sub(u64::from(stamped));
        }
        let (from, rules, year) = (d.times.len() as u64, d.rules.clone(), d.year);
        // Appended lines are never leading: before a first stamp they
        // inherit no time (NO_TIME) rather than the next one's.
        d.leading = d.leading.min(from);
        let fields = self.opts.fields.clone();
        let mut ch = build_chunk(doc, &rules, year, &fields, from..n);
        let rm = self.remap(&ch.dicts);
        let d = &mut self.docs[di];
        for ((col, codes), rm) in d.codes.iter_mut().zip(&ch.codes).zip(&rm) {
            col.extend(codes.iter().map(|&c| rm[c as usize]));
        }
        // The year carries on from the loaded lines; a jump back by
        // months starts the next one.
        let lines: Vec<u64> = ch.yearless.iter().map(|&i| from + u64::from(i)).collect();
        let at = |l: u64| (l - from) as usize;
        let (y, last) = year::walk(
            &mut ch.times,
            &lines,
            at,
            year,
            year,
            d.last_yearless,
            |l, y| stamp_ms(doc, &rules, l, y),
        );
        d.year = y;
        d.last_yearless = last.or(d.last_yearless);
        d.dated_newest = match (d.dated_newest, ch.dated_newest) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        d.stamped += ch.times.iter().filter(|&&t| t != NO_TIME).count() as u64;
        d.open_line = open_line(doc, ch.times.last().is_some_and(|&t| t != NO_TIME));
        let mut last = d.times.last().copied().unwrap_or(NO_TIME);
        let mut max = if d.sorted {
            last
        } else {
            d.running_max.last().copied().unwrap_or(i64::MIN)
        };
        for &t in &ch.times {
            let t = if t == NO_TIME { last } else { t };
            last = t;
            if d.sorted && t < max {
                // No longer sorted: the running maximum of every line.
                d.sorted = false;
                let mut m = i64::MIN;
                d.running_max = d
                    .times
                    .iter()
                    .map(|&t| {
                        m = m.max(t);
                        m
                    })
                    .collect();
            }
            max = max.max(t);
            if !d.sorted {
                d.disorder = d.disorder.max(max.saturating_sub(t));
                d.running_max.push(max);
            }
            d.times.push(t);
        }
    }

    /// Reads document `di`'s stamps and codes (in parallel chunks); the
    /// year is decided after ([`finish_doc`]).
    fn parse_doc(&mut self, di: usize, doc: &Document) -> Parsed {
        let opts = self.opts.clone();
        let nf = opts.fields.len();
        let base = match self.year_source(di, None) {
            YearSource::Fixed(y) => y,
            YearSource::Reference(m) => super::time::year_of_ms(m),
        };
        let rules = TimeRules::detect(sample_lines(doc), opts.time_format, base);
        let n = doc.lines().len();
        let ranges: Vec<Range<u64>> = (0..n)
            .step_by(BUILD_CHUNK as usize)
            .map(|s| s..(s + BUILD_CHUNK).min(n))
            .collect();
        let starts: Vec<u64> = ranges.iter().map(|r| r.start).collect();
        let chunks: Vec<Chunk> = ranges
            .into_par_iter()
            .map(|r| build_chunk(doc, &rules, base, &opts.fields, r))
            .collect();
        // Merge the chunk dictionaries into the corpus-wide ones, in
        // chunk order (deterministic codes).
        let remaps: Vec<Vec<Vec<u32>>> = chunks.iter().map(|ch| self.remap(&ch.dicts)).collect();
        let mut times = Vec::with_capacity(n as usize);
        let mut codes: Vec<Vec<u32>> = (0..nf).map(|_| Vec::with_capacity(n as usize)).collect();
        let mapped: Vec<Vec<Vec<u32>>> = chunks
            .par_iter()
            .zip(&remaps)
            .map(|(ch, rm)| {
                (0..nf)
                    .map(|f| ch.codes[f].iter().map(|&c| rm[f][c as usize]).collect())
                    .collect()
            })
            .collect();
        let mut yearless = Vec::new();
        let mut dated_newest = None::<i64>;
        for ((ch, m), &start) in chunks.iter().zip(mapped).zip(&starts) {
            times.extend_from_slice(&ch.times);
            yearless.extend(ch.yearless.iter().map(|&i| start + u64::from(i)));
            dated_newest = dated_newest.max(ch.dated_newest);
            for (f, col) in m.into_iter().enumerate() {
                codes[f].extend(col);
            }
        }
        Parsed {
            di,
            rules,
            base,
            times,
            codes,
            yearless,
            dated_newest,
        }
    }
}

/// The length of `doc`'s last line and whether it is `stamped`, when it
/// has no terminator.
fn open_line(doc: &Document, stamped: bool) -> Option<(u64, bool)> {
    let n = doc.lines().len();
    (!doc.appendable() && n > 0).then(|| (doc.line(n - 1).len() as u64, stamped))
}

/// The time of line `l`'s stamp read with `year`.
fn stamp_ms(doc: &Document, rules: &TimeRules, l: u64, year: i32) -> i64 {
    let line = doc.line(l);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    rules.stamp(line, year).map_or(NO_TIME, |s| s.ms)
}

/// A parsed document's columns: the year of its year-less stamps decided
/// by `source`, then unstamped lines inherit.
fn finish_doc(doc: &Document, p: Parsed, source: YearSource) -> DocColumns {
    let Parsed {
        rules,
        base,
        mut times,
        codes,
        yearless,
        dated_newest,
        ..
    } = p;
    let reread = |l: u64, y: i32| stamp_ms(doc, &rules, l, y);
    let first = year::first_year(&times, &yearless, base, source, reread);
    let (year, last_yearless) = year::walk(
        &mut times,
        &yearless,
        |l| l as usize,
        base,
        first,
        None,
        reread,
    );
    let open = open_line(doc, times.last().is_some_and(|&t| t != NO_TIME));
    // Inherit: a line without a timestamp takes the previous line's
    // time; lines before the first timestamp take the first one.
    let stamped = times.iter().filter(|&&t| t != NO_TIME).count() as u64;
    let leading = times
        .iter()
        .position(|&t| t != NO_TIME)
        .unwrap_or(times.len()) as u64;
    let first = times.iter().copied().find(|&t| t != NO_TIME);
    let mut last = first.unwrap_or(NO_TIME);
    for t in times.iter_mut() {
        if *t == NO_TIME {
            *t = last;
        } else {
            last = *t;
        }
    }
    let (sorted, running_max, disorder) = super::order_of(&times);
    DocColumns {
        times,
        codes,
        rules,
        stamped,
        leading,
        sorted,
        disorder,
        running_max,
        year,
        last_yearless,
        dated_newest,
        open_line: open,
    }
}
