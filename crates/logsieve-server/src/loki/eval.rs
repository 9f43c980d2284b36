//! LogQL evaluated over the served corpus: the lines a log query selects
//! (line filters through the session's one route), grouped into streams,
//! and the metric series computed from them.
//!
//! Labels: `filename` (the document's name), `service_name` (its base
//! name without extensions, [`service_name`]; a column of that name wins),
//! `detected_level` (the `level` column in Loki's words,
//! [`detected_level`]) and every stats column
//! (`host`, `level`, `--field`s); a line without a value has the label
//! empty, which is how Loki treats a missing label. A stream is one
//! distinct set of the labels the query names (in its selector or a
//! `by`/`without`) plus `filename`. Times are the stats columns' per-line
//! times; lines of a file without timestamps have none and are never
//! selected (every Loki query has a time window).

use std::collections::{BTreeMap, HashMap};

use logsieve::logql::{
    AggOp, BinOp, FilterOp, LogExpr, MatchOp, Matcher, MetricExpr, ParserStage, RangeFn,
};
use logsieve::stats::NO_TIME;
use logsieve::{Answer, Query, QueryBuilder, Request, SearchOptions, Syntax, Want};

use super::LokiError;
use crate::state::Ready;

/// A label set, sorted by name (empty values left out).
pub type Labels = BTreeMap<String, String>;

/// One selected line.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// Its time in ns.
    pub t: i64,
    /// Its document.
    pub doc: usize,
    /// Its line in the document.
    pub line: u64,
    /// Its stream (an index into [`Selection::streams`]).
    pub stream: usize,
}

/// What a log query selected in a window.
pub struct Selection {
    /// The lines, in no particular order.
    pub entries: Vec<Entry>,
    /// The streams' label sets.
    pub streams: Vec<Labels>,
    /// Lines and bytes examined (the whole corpus: the engine scans it).
    pub scanned_lines: u64,
    /// See `scanned_lines`.
    pub scanned_bytes: u64,
    /// The backend that ran the line filter (`none` without one).
    pub backend: String,
}

/// The label a file gives its lines beside `filename`, as Loki gives
/// `service_name` to streams that name no service.
pub const SERVICE: &str = "service_name";

/// `service_name` of a file: its base name without its extensions
/// (`/var/log/nginx/access.log.1` → `access`; `.hidden` stays whole).
pub fn service_name(doc_name: &str) -> String {
    let base = doc_name.rsplit(['/', '\\']).next().unwrap_or(doc_name);
    match base.split('.').next() {
        Some(stem) if !stem.is_empty() => stem.to_string(),
        _ => base.to_string(),
    }
}

/// The level label Grafana's Logs Drilldown reads: Loki's name of the
/// `level` column's value, `unknown` on a line without one.
pub const DETECTED_LEVEL: &str = "detected_level";

/// Loki's `detected_level` of a `level` column value (`WARNING` → `warn`).
pub fn detected_level(level: Option<&[u8]>) -> &'static str {
    match level.map(|l| l.to_ascii_uppercase()).as_deref() {
        None => "unknown",
        Some(b"TRACE" | b"VERBOSE") => "trace",
        Some(b"DEBUG") => "debug",
        Some(b"INFO" | b"NOTICE") => "info",
        Some(b"WARN" | b"WARNING") => "warn",
        Some(b"ERROR" | b"ERR" | b"SEVERE") => "error",
        Some(b"CRIT" | b"CRITICAL" | b"ALERT" | b"EMERG") => "critical",
        Some(b"FATAL") => "fatal",
        Some(_) => "unknown",
    }
}

/// The `level` column behind `detected_level`, when there is one and no
/// column of that name.
fn detected_source(ready: &Ready) -> Option<usize> {
    let cols = ready.session.columns()?;
    if cols.field_index(DETECTED_LEVEL).is_some() {
        return None;
    }
    cols.field_index("level")
}

/// True when `service_name` is the file's (no column of that name).
fn service_is_doc(ready: &Ready) -> bool {
    !ready.fields.iter().any(|f| f == SERVICE)
}

/// The names a query may use as labels.
pub fn label_names(ready: &Ready) -> Vec<String> {
    let mut v = vec!["filename".to_string(), SERVICE.to_string()];
    if detected_source(ready).is_some() {
        v.push(DETECTED_LEVEL.to_string());
    }
    v.extend(ready.fields.iter().cloned());
    v.sort();
    v.dedup();
    v
}

/// The values of label `name` over the corpus, sorted.
pub fn label_values(ready: &Ready, name: &str) -> Vec<String> {
    let mut v: Vec<String> = if name == "filename" {
        ready
            .session
            .corpus()
            .docs()
            .iter()
            .map(|d| d.name().to_string())
            .collect()
    } else if name == SERVICE && service_is_doc(ready) {
        ready
            .session
            .corpus()
            .docs()
            .iter()
            .map(|d| service_name(d.name()))
            .collect()
    } else if let (true, Some(f), Some(c)) = (
        name == DETECTED_LEVEL,
        detected_source(ready),
        ready.session.columns(),
    ) {
        let mut v: Vec<String> = c.fields()[f]
            .values
            .iter()
            .map(|l| detected_level(Some(l)).to_string())
            .collect();
        if c.docs().iter().any(|d| d.codes[f].contains(&0)) {
            v.push("unknown".into());
        }
        v
    } else {
        match ready
            .session
            .columns()
            .and_then(|c| c.field_index(name).map(|f| &c.fields()[f]))
        {
            Some(dict) => dict
                .values
                .iter()
                .map(|v| String::from_utf8_lossy(v).into_owned())
                .collect(),
            None => Vec::new(),
        }
    };
    v.sort();
    v.dedup();
    v
}

/// A label value test.
type Test = Box<dyn Fn(&str) -> bool + Send + Sync>;

/// A label matcher compiled: the value test.
fn matcher_test(op: MatchOp, value: &str) -> Result<Test, LokiError> {
    Ok(match op {
        MatchOp::Eq => {
            let v = value.to_string();
            Box::new(move |s| s == v)
        }
        MatchOp::Neq => {
            let v = value.to_string();
            Box::new(move |s| s != v)
        }
        MatchOp::Re | MatchOp::Nre => {
            let re = regex::Regex::new(&format!("^(?:{value})$"))
                .map_err(|e| LokiError::bad(format!("invalid regex {value:?}: {e}")))?;
            let neg = op == MatchOp::Nre;
            Box::new(move |s| re.is_match(s) != neg)
        }
    })
}

/// The line filter as a query for the engine (`-v` for the negated ones).
fn filter_query(op: FilterOp, value: &str, ready: &Ready) -> Result<Query, LokiError> {
    QueryBuilder::new()
        .syntax(if op.regex() {
            Syntax::Regex
        } else {
            Syntax::Fixed
        })
        .invert(op.negated())
        .cpu_multi(ready.session.tuning().cpu_multi)
        .build(&[value])
        .map_err(|e| LokiError::bad(format!("line filter {value:?}: {e}")))
}

/// Selects the lines of `log` with `lo < t <= hi` (`lo_inclusive`: `lo <=
/// t`), with the stream labels `extra` named beside the selector's.
#[allow(clippy::too_many_arguments)]
pub fn select(
    ready: &Ready,
    log: &LogExpr,
    lo: i64,
    hi: i64,
    lo_inclusive: bool,
    hi_inclusive: bool,
    extra: &[String],
    threads: usize,
) -> Result<Selection, LokiError> {
    let corpus = ready.session.corpus();
    let cols = ready.session.columns();
    let ndocs = corpus.docs().len();
    // Field filters on a label are matchers; the others compare the
    // fields the parser stages extract from each line.
    let labels_known = label_names(ready);
    let mut matchers: Vec<&Matcher> = log.matchers.iter().collect();
    let mut parsed_tests: Vec<(&str, Test)> = Vec::new();
    for m in &log.field_filters {
        if labels_known.contains(&m.name) {
            matchers.push(m);
        } else {
            parsed_tests.push((m.name.as_str(), matcher_test(m.op, &m.value)?));
        }
    }
    let (json, logfmt) = (
        log.parsers.contains(&ParserStage::Json),
        log.parsers.contains(&ParserStage::Logfmt),
    );
    // The labels of a stream: filename + named fields (+ service_name
    // when named).
    let mut names: Vec<String> = matchers.iter().map(|m| m.name.clone()).collect();
    names.extend(extra.iter().cloned());
    let doc_service = service_is_doc(ready);
    let with_service = doc_service && names.iter().any(|n| n == SERVICE);
    names.retain(|n| n != "filename" && !(doc_service && n == SERVICE));
    names.sort();
    names.dedup();
    // `detected_level` reads the `level` column through `detected_level()`.
    let detected = detected_source(ready);
    let field_of = |n: &str| {
        if n == DETECTED_LEVEL && detected.is_some() {
            return detected;
        }
        cols.and_then(|c| c.field_index(n))
    };
    let text_of = |n: &str, v: Option<&[u8]>| -> Option<String> {
        if n == DETECTED_LEVEL && detected.is_some() {
            return Some(detected_level(v).to_string());
        }
        v.map(|v| String::from_utf8_lossy(v).into_owned())
    };
    let key_fields: Vec<(String, Option<usize>)> =
        names.iter().map(|n| (n.clone(), field_of(n))).collect();
    // With parser stages, a named label that is no label of the lines is
    // the parsed field (`sum by (status) (... | logfmt ...)`).
    let parsed_names: Vec<&str> = if log.parsers.is_empty() {
        Vec::new()
    } else {
        names
            .iter()
            .filter(|n| !labels_known.contains(n))
            .map(String::as_str)
            .collect()
    };
    // Per matcher: on filename, a verdict per document; on a field, a
    // verdict per code (code 0 = no value = ""); on an unknown label, one
    // verdict for "" everywhere.
    let mut doc_ok = vec![true; ndocs];
    let mut code_tests: Vec<(usize, Vec<bool>)> = Vec::new();
    for m in &matchers {
        let test = matcher_test(m.op, &m.value)?;
        if m.name == "filename" {
            for (d, ok) in doc_ok.iter_mut().enumerate() {
                *ok &= test(corpus.docs()[d].name());
            }
        } else if m.name == SERVICE && doc_service {
            for (d, ok) in doc_ok.iter_mut().enumerate() {
                *ok &= test(&service_name(corpus.docs()[d].name()));
            }
        } else if let (Some(f), Some(c)) = (field_of(&m.name), cols) {
            let dict = &c.fields()[f];
            let text = |v: Option<&[u8]>| text_of(&m.name, v).unwrap_or_default();
            let mut v = vec![test(&text(None))];
            v.extend(dict.values.iter().map(|val| test(&text(Some(val)))));
            code_tests.push((f, v));
        } else if !test("") {
            doc_ok.iter_mut().for_each(|o| *o = false);
        }
    }
    // The line filters: one goes to the engine through the session's
    // route (a positive literal first: the GPU's best case), the others
    // are checked per selected line by the CPU matcher.
    let mut queries: Vec<(FilterOp, Query)> = log
        .filters
        .iter()
        .map(|f| Ok((f.op, filter_query(f.op, &f.value, ready)?)))
        .collect::<Result<_, LokiError>>()?;
    let lead = queries
        .iter()
        .position(|(op, _)| *op == FilterOp::Contains)
        .or_else(|| queries.iter().position(|(op, _)| *op == FilterOp::Regex))
        .or(if queries.is_empty() { None } else { Some(0) });
    let (engine_lines, backend) = match lead {
        None => (None, "none".to_string()),
        Some(i) => {
            let (_, q) = queries.remove(i);
            let opts = SearchOptions {
                threads,
                want: Want::Lines,
                ..Default::default()
            };
            let req = Request::Search(&q);
            let route = ready.session.route(&req, &opts).map_err(LokiError::lib)?;
            match ready
                .session
                .execute(&req, &route, &opts)
                .map_err(LokiError::lib)?
            {
                Answer::Search(r) => {
                    let name = r.backend.name.clone();
                    (
                        Some(r.docs.into_iter().map(|h| h.lines).collect::<Vec<_>>()),
                        name,
                    )
                }
                _ => {
                    return Err(LokiError::internal(
                        "a search was not answered by a search result",
                    ))
                }
            }
        }
    };
    let mut streams: Vec<Labels> = Vec::new();
    // Numeric filters: on a column, or on a parsed field.
    let numeric: Vec<(&logsieve::logql::NumericFilter, Option<usize>)> = log
        .numeric_filters
        .iter()
        .map(|f| (f, field_of(&f.name)))
        .collect();
    let numeric_parsed = numeric.iter().any(|(f, field)| {
        field.is_none() && f.name != "filename" && !(f.name == SERVICE && doc_service)
    });
    type StreamKey = (usize, Vec<u32>, Vec<String>);
    let mut stream_ids: HashMap<StreamKey, usize> = HashMap::new();
    let mut entries = Vec::new();
    let (mut scanned_lines, mut scanned_bytes) = (0u64, 0u64);
    for (d, doc) in corpus.docs().iter().enumerate() {
        scanned_lines += doc.lines().len();
        scanned_bytes += doc.data().len() as u64;
        if !doc_ok[d] {
            continue;
        }
        let Some(dc) = cols.map(|c| &c.docs()[d]) else {
            continue;
        };
        let mut visit = |l: u64| {
            let t = dc.times.get(l as usize).copied().unwrap_or(NO_TIME);
            if t == NO_TIME {
                return;
            }
            let t = t.saturating_mul(1_000_000);
            let in_lo = if lo_inclusive { t >= lo } else { t > lo };
            let in_hi = if hi_inclusive { t <= hi } else { t < hi };
            if !(in_lo && in_hi) {
                return;
            }
            if !code_tests
                .iter()
                .all(|(f, ok)| ok[dc.codes[*f][l as usize] as usize])
            {
                return;
            }
            let line = doc.line(l);
            if !queries
                .iter()
                .all(|(op, q)| q.is_match_line(line) != op.negated())
            {
                return;
            }
            let mut parsed_key: Vec<String> = Vec::new();
            if !numeric.is_empty() {
                let found = if numeric_parsed {
                    let text = line.strip_suffix(b"\r").unwrap_or(line);
                    super::fields::parse_with(text, json, logfmt, &|n| {
                        labels_known.iter().any(|k| k == n)
                    })
                } else {
                    Vec::new()
                };
                let ok = numeric.iter().all(|(f, field)| {
                    let text: Option<String> = match field {
                        Some(fi) => cols.and_then(|c| {
                            text_of(&f.name, c.fields()[*fi].value(dc.codes[*fi][l as usize]))
                        }),
                        None if f.name == "filename" => Some(doc.name().to_string()),
                        None if f.name == SERVICE && doc_service => Some(service_name(doc.name())),
                        None => found
                            .iter()
                            .find(|x| x.name == f.name)
                            .map(|x| x.value.clone()),
                    };
                    let v = text.and_then(|t| {
                        if f.duration {
                            super::fields::duration_secs(&t)
                        } else {
                            t.trim().parse::<f64>().ok()
                        }
                    });
                    v.is_some_and(|v| f.op.holds(v, f.value))
                });
                if !ok {
                    return;
                }
            }
            if !parsed_tests.is_empty() || !parsed_names.is_empty() {
                let text = line.strip_suffix(b"\r").unwrap_or(line);
                let found = super::fields::parse_with(text, json, logfmt, &|n| {
                    labels_known.iter().any(|k| k == n)
                });
                let value = |name: &str| {
                    found
                        .iter()
                        .find(|f| f.name == name)
                        .map_or("", |f| f.value.as_str())
                };
                if !parsed_tests.iter().all(|(name, test)| test(value(name))) {
                    return;
                }
                parsed_key = parsed_names.iter().map(|n| value(n).to_string()).collect();
            }
            let key: Vec<u32> = key_fields
                .iter()
                .map(|(_, f)| f.map_or(0, |f| dc.codes[f][l as usize]))
                .collect();
            let next = streams.len();
            let stream = *stream_ids
                .entry((d, key.clone(), parsed_key.clone()))
                .or_insert_with(|| {
                    let mut labels = Labels::new();
                    for (name, v) in parsed_names.iter().zip(&parsed_key) {
                        if !v.is_empty() {
                            labels.insert(name.to_string(), v.clone());
                        }
                    }
                    labels.insert("filename".into(), doc.name().to_string());
                    if with_service {
                        labels.insert(SERVICE.into(), service_name(doc.name()));
                    }
                    for ((name, f), code) in key_fields.iter().zip(&key) {
                        if let (Some(f), Some(c)) = (f, cols) {
                            if let Some(v) = text_of(name, c.fields()[*f].value(*code)) {
                                labels.insert(name.clone(), v);
                            }
                        }
                    }
                    streams.push(labels);
                    next
                });
            entries.push(Entry {
                t,
                doc: d,
                line: l,
                stream,
            });
        };
        match &engine_lines {
            Some(lines) => lines[d].iter().for_each(|&l| visit(l)),
            None => (0..doc.lines().len()).for_each(&mut visit),
        }
    }
    Ok(Selection {
        entries,
        streams,
        scanned_lines,
        scanned_bytes,
        backend,
    })
}

/// One series: labels and a value per step (`None`: no sample there).
#[derive(Clone, Debug)]
pub struct Series {
    /// The labels.
    pub labels: Labels,
    /// Per step.
    pub values: Vec<Option<f64>>,
}

/// A metric expression's value over the steps.
pub enum Value {
    /// A number, the same at every step.
    Scalar(f64),
    /// Series.
    Series(Vec<Series>),
}

/// What evaluating a metric query counted, for `stats`.
#[derive(Default)]
pub struct Counted {
    /// Lines and bytes the engine scanned.
    pub lines: u64,
    /// See `lines`.
    pub bytes: u64,
    /// The backends that ran line filters.
    pub backends: Vec<String>,
}

/// Evaluates `e` at the steps `start, start + step, ..., <= end` (ns).
pub fn metric(
    ready: &Ready,
    e: &MetricExpr,
    start: i64,
    end: i64,
    step: i64,
    threads: usize,
    counted: &mut Counted,
) -> Result<Value, LokiError> {
    let steps = super::params::steps(start, end, step);
    eval(ready, e, &steps, threads, &[], counted)
}

fn eval(
    ready: &Ready,
    e: &MetricExpr,
    steps: &[i64],
    threads: usize,
    group_labels: &[String],
    counted: &mut Counted,
) -> Result<Value, LokiError> {
    Ok(match e {
        MetricExpr::Number(n) => Value::Scalar(*n),
        MetricExpr::Vector(n) => Value::Series(vec![Series {
            labels: Labels::new(),
            values: vec![Some(*n); steps.len()],
        }]),
        MetricExpr::Range {
            func,
            log,
            range_ms,
        } => {
            let range = range_ms.saturating_mul(1_000_000);
            let (Some(&first), Some(&last)) = (steps.first(), steps.last()) else {
                return Ok(Value::Series(Vec::new()));
            };
            // Each step t counts the lines with t - range < time <= t.
            let sel = select(
                ready,
                log,
                first.saturating_sub(range),
                last,
                false,
                true,
                group_labels,
                threads,
            )?;
            counted.lines += sel.scanned_lines;
            counted.bytes += sel.scanned_bytes;
            counted.backends.push(sel.backend.clone());
            let corpus = ready.session.corpus();
            let mut per: Vec<Vec<(i64, u64)>> = vec![Vec::new(); sel.streams.len()];
            for en in &sel.entries {
                let bytes = corpus.docs()[en.doc].line(en.line).len() as u64;
                per[en.stream].push((en.t, bytes));
            }
            let secs = *range_ms as f64 / 1000.0;
            let mut out = Vec::new();
            for (labels, mut pts) in sel.streams.into_iter().zip(per) {
                pts.sort_unstable();
                let mut prefix = Vec::with_capacity(pts.len() + 1);
                prefix.push(0u64);
                for &(_, b) in &pts {
                    prefix.push(prefix.last().copied().unwrap_or(0) + b);
                }
                let values = steps
                    .iter()
                    .map(|&t| {
                        let hi = pts.partition_point(|p| p.0 <= t);
                        let lo = pts.partition_point(|p| p.0 <= t.saturating_sub(range));
                        let n = (hi - lo) as f64;
                        let b = (prefix[hi] - prefix[lo]) as f64;
                        (hi > lo).then(|| match func {
                            RangeFn::CountOverTime => n,
                            RangeFn::Rate => n / secs,
                            RangeFn::BytesOverTime => b,
                            RangeFn::BytesRate => b / secs,
                        })
                    })
                    .collect();
                out.push(Series { labels, values });
            }
            Value::Series(out)
        }
        MetricExpr::Aggregate {
            op,
            grouping,
            inner,
        } => {
            // `by (x)` must see x in the streams below; `without` needs
            // every label.
            let mut below: Vec<String> = group_labels.to_vec();
            match grouping {
                Some(g) if !g.without => below.extend(g.labels.iter().cloned()),
                Some(_) => below.extend(ready.fields.iter().cloned()),
                None => {}
            }
            let inner = match eval(ready, inner, steps, threads, &below, counted)? {
                Value::Scalar(_) => {
                    return Err(LokiError::bad(
                        "an aggregation needs a vector, not a number",
                    ))
                }
                Value::Series(s) => s,
            };
            let mut groups: BTreeMap<Labels, Vec<&Series>> = BTreeMap::new();
            for s in &inner {
                let key: Labels = match grouping {
                    None => Labels::new(),
                    Some(g) if !g.without => s
                        .labels
                        .iter()
                        .filter(|(k, _)| g.labels.contains(k))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                    Some(g) => s
                        .labels
                        .iter()
                        .filter(|(k, _)| !g.labels.contains(k))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                };
                groups.entry(key).or_default().push(s);
            }
            let out = groups
                .into_iter()
                .map(|(labels, members)| {
                    let values = (0..steps.len())
                        .map(|i| {
                            let vals: Vec<f64> =
                                members.iter().filter_map(|s| s.values[i]).collect();
                            (!vals.is_empty()).then(|| match op {
                                AggOp::Sum => vals.iter().sum(),
                                AggOp::Count => vals.len() as f64,
                                AggOp::Min => vals.iter().copied().fold(f64::INFINITY, f64::min),
                                AggOp::Max => {
                                    vals.iter().copied().fold(f64::NEG_INFINITY, f64::max)
                                }
                                AggOp::Avg => vals.iter().sum::<f64>() / vals.len() as f64,
                            })
                        })
                        .collect();
                    Series { labels, values }
                })
                .filter(|s| s.values.iter().any(Option::is_some))
                .collect();
            Value::Series(out)
        }
        MetricExpr::Binary { op, lhs, rhs } => {
            let a = eval(ready, lhs, steps, threads, group_labels, counted)?;
            let b = eval(ready, rhs, steps, threads, group_labels, counted)?;
            binary(*op, a, b)
        }
    })
}

fn binary(op: BinOp, a: Value, b: Value) -> Value {
    let map = |s: Vec<Series>, f: &dyn Fn(f64) -> f64| {
        s.into_iter()
            .map(|mut s| {
                s.values.iter_mut().for_each(|v| *v = v.map(f));
                s
            })
            .collect()
    };
    match (a, b) {
        (Value::Scalar(x), Value::Scalar(y)) => Value::Scalar(op.apply(x, y)),
        (Value::Series(s), Value::Scalar(y)) => Value::Series(map(s, &|x| op.apply(x, y))),
        (Value::Scalar(x), Value::Series(s)) => Value::Series(map(s, &|y| op.apply(x, y))),
        (Value::Series(l), Value::Series(r)) => {
            // One-to-one matching on identical label sets.
            let right: HashMap<&Labels, &Series> = r.iter().map(|s| (&s.labels, s)).collect();
            Value::Series(
                l.iter()
                    .filter_map(|s| {
                        let o = right.get(&s.labels)?;
                        let values = s
                            .values
                            .iter()
                            .zip(&o.values)
                            .map(|(a, b)| Some(op.apply((*a)?, (*b)?)))
                            .collect();
                        Some(Series {
                            labels: s.labels.clone(),
                            values,
                        })
                    })
                    .collect(),
            )
        }
    }
}
