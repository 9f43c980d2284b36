//! The routes Grafana's Logs Drilldown calls beside the query API:
//! `/loki/api/v1/index/volume`, `/index/volume_range`, `/detected_labels`,
//! `/detected_fields`, `/detected_field/<name>/values`, `/patterns` and
//! `/drilldown-limits`, with Loki 3's parameters, shapes and 400s.
//!
//! * Volume is the bytes of the selected lines (their text, without the
//!   line terminator) per series or per label, from the stats columns'
//!   labels; Loki sums the chunks' sizes instead.
//! * Detected labels are `filename` and the columns' fields with the
//!   number of distinct values among the selected lines; a label whose
//!   values all look like IDs (numbers, UUIDs) is left out, as Loki does.
//! * Detected fields are parsed from the newest `line_limit` selected
//!   lines ([`super::fields`]); cardinalities are exact.
//! * Patterns are mined with Drain ([`logsieve::patterns`]) over every
//!   selected line, counted per step and per level.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use logsieve::logql::{Expr, LogExpr};
use logsieve::patterns::{Miner, MinerOptions};
use serde_json::{json, Map, Value as J};

use super::eval::{self, Labels};
use super::fields;
use super::params::Params;
use super::{blocking, finish, labels_json, ok, parse, ready, secs, stats, value_text, LokiError};
use crate::state::{AppState, Ready};

/// The routes, merged into the Loki router.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/loki/api/v1/index/volume", get(volume).post(volume))
        .route(
            "/loki/api/v1/index/volume_range",
            get(volume_range).post(volume_range),
        )
        .route(
            "/loki/api/v1/detected_labels",
            get(detected_labels).post(detected_labels),
        )
        .route(
            "/loki/api/v1/detected_fields",
            get(detected_fields).post(detected_fields),
        )
        .route(
            "/loki/api/v1/detected_field/{name}/values",
            get(field_values).post(field_values),
        )
        .route("/loki/api/v1/patterns", get(patterns).post(patterns))
        .route("/loki/api/v1/drilldown-limits", get(drilldown_limits))
}

/// A duration as Prometheus' `model.Duration` writes it (`30s`, `2m`).
fn prom_duration(d: std::time::Duration) -> String {
    let s = d.as_secs();
    match s {
        0 if d.is_zero() => "0s".to_string(),
        0 => format!("{}ms", d.as_millis()),
        s if s % 3600 == 0 => format!("{}h", s / 3600),
        s if s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

/// `GET /loki/api/v1/drilldown-limits`: what Logs Drilldown reads before
/// a service page (Loki 3.5's shape: `limits`, `pattern_ingester_enabled`,
/// `version`). Patterns and volume are on; no query length or lookback
/// limit (`0s`); `query_timeout` is `--timeout`.
async fn drilldown_limits(State(state): State<AppState>) -> Response {
    let limits = state.limits();
    Json(json!({
        "limits": {
            "discover_log_levels": true,
            "discover_service_name": [],
            "log_level_fields": ["level"],
            "max_entries_limit_per_query": 5000,
            "max_line_size_truncate": false,
            "max_query_bytes_read": "0B",
            "max_query_length": "0s",
            "max_query_lookback": "0s",
            "max_query_range": "0s",
            "max_query_series": 500,
            "metric_aggregation_enabled": false,
            "pattern_persistence_enabled": false,
            "query_timeout": prom_duration(limits.timeout),
            "retention_period": "0s",
            "retention_stream": [],
            "volume_enabled": true,
            "volume_max_series": 1000,
        },
        "pattern_ingester_enabled": true,
        "version": super::LOKI_API_VERSION,
    }))
    .into_response()
}

/// Loki's default `limit` of the volume routes.
pub const VOLUME_LIMIT: u64 = 100;
/// Loki's default `line_limit` of the detected-field routes.
pub const LINE_LIMIT: u64 = 100;
/// Loki's default `limit` of the detected-field routes.
pub const FIELD_LIMIT: u64 = 1000;

/// A stream selector: line filters allowed with `filters`, else a 400 as
/// Loki's matcher-only routes give.
fn selector(s: &str, filters: bool) -> Result<LogExpr, LokiError> {
    match parse(s)? {
        Expr::Log(l) if filters || l.filters.is_empty() => Ok(l),
        Expr::Log(_) => Err(LokiError::bad(format!(
            "{s:?}: expected stream matchers only, such as {{job=\"foo\"}}"
        ))),
        Expr::Metric(_) => Err(LokiError::bad(format!(
            "{s:?}: expected a stream selector, not a metric query"
        ))),
    }
}

/// A positive integer parameter (Loki's `parseInt` then `> 0`); `zero`:
/// what 0 means (`None`: a 400).
fn positive(p: &Params, names: &[&str], default: u64, zero: Option<u64>) -> Result<u64, LokiError> {
    let Some((name, s)) = names.iter().find_map(|n| p.get(n).map(|v| (*n, v))) else {
        return Ok(default);
    };
    match s.parse::<i64>() {
        Ok(0) if zero.is_some() => Ok(zero.unwrap_or(default)),
        Ok(n) if n > 0 && n <= u32::MAX as i64 => Ok(n as u64),
        Ok(n) if n > 0 => Err(LokiError::bad(format!(
            "{name} value {n} is out of range [0, {}]",
            u32::MAX
        ))),
        Ok(_) => Err(LokiError::bad("limit must be a positive value")),
        Err(_) => Err(LokiError::bad(format!(
            "invalid {name} {s:?}: expected an integer"
        ))),
    }
}

/// Every label a line may have: `filename` and the columns' fields.
fn all_labels(ready: &Ready) -> Vec<String> {
    eval::label_names(ready)
}

/// Loki's label-set text, `{a="x", b="y"}`.
fn labels_text(l: &Labels) -> String {
    let parts: Vec<String> = l
        .iter()
        .map(|(k, v)| format!("{k}={}", J::String(v.clone())))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// The volume routes' request.
struct VolumeReq {
    log: LogExpr,
    start: i64,
    end: i64,
    step: i64,
    limit: u64,
    by_series: bool,
    targets: Vec<String>,
}

fn volume_req(p: &Params, range: bool) -> Result<VolumeReq, LokiError> {
    let log = selector(p.query()?, false)?;
    let limit = positive(p, &["limit"], VOLUME_LIMIT, Some(VOLUME_LIMIT))?;
    let (start, end) = p.bounds()?;
    let by_series = match p.get("aggregateBy") {
        None | Some("series") => true,
        Some("labels") => false,
        Some(_) => return Err(LokiError::bad("invalid aggregation option")),
    };
    let targets: Vec<String> = p
        .get("targetLabels")
        .map(|s| {
            s.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let step = if range { p.step(start, end)? } else { 0 };
    Ok(VolumeReq {
        log,
        start,
        end,
        step,
        limit,
        by_series,
        targets,
    })
}

/// Per bucket (its time, ns), bytes per series name; and each name's
/// labels. A range's buckets are Loki's: aligned to the step, each named
/// by its end (1 ms before the next, the last by `end`).
#[allow(clippy::type_complexity)]
fn volumes(
    ready: &Ready,
    r: &VolumeReq,
    threads: usize,
) -> Result<
    (
        BTreeMap<i64, HashMap<String, u64>>,
        HashMap<String, Labels>,
        u64,
        u64,
    ),
    LokiError,
> {
    let every = all_labels(ready);
    let sel = eval::select(ready, &r.log, r.start, r.end, true, true, &every, threads)?;
    let keep: BTreeSet<String> = if !r.targets.is_empty() {
        r.targets.iter().cloned().collect()
    } else if r.by_series {
        r.log.matchers.iter().map(|m| m.name.clone()).collect()
    } else {
        every.iter().cloned().collect()
    };
    // Each stream's names and labels.
    let names: Vec<Vec<(String, Labels)>> = sel
        .streams
        .iter()
        .map(|s| {
            if r.by_series {
                let l: Labels = s
                    .iter()
                    .filter(|(k, _)| keep.contains(*k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                vec![(labels_text(&l), l)]
            } else {
                s.keys()
                    .filter(|k| keep.contains(*k))
                    .map(|k| {
                        let l: Labels = [(k.clone(), String::new())].into_iter().collect();
                        (k.clone(), l)
                    })
                    .collect()
            }
        })
        .collect();
    let corpus = ready.session.corpus();
    let mut buckets: BTreeMap<i64, HashMap<String, u64>> = BTreeMap::new();
    let mut label_sets: HashMap<String, Labels> = HashMap::new();
    const MS: i64 = 1_000_000;
    let aligned = if r.step > 0 {
        r.start - r.start.rem_euclid(r.step)
    } else {
        r.start
    };
    for e in &sel.entries {
        let bucket = if r.step > 0 {
            let k = (e.t.saturating_sub(aligned)) / r.step;
            aligned
                .saturating_add((k + 1).saturating_mul(r.step))
                .saturating_sub(MS)
                .min(r.end)
        } else {
            r.end
        };
        let bytes = corpus.docs()[e.doc].line(e.line).len() as u64;
        let per = buckets.entry(bucket).or_default();
        for (name, l) in &names[e.stream] {
            *per.entry(name.clone()).or_default() += bytes;
            label_sets.entry(name.clone()).or_insert_with(|| l.clone());
        }
    }
    Ok((buckets, label_sets, sel.scanned_lines, sel.scanned_bytes))
}

/// Loki's `ToPrometheusResponse`: per bucket the `limit` largest, then a
/// series per name, a vector when no name has two samples, else a matrix,
/// sorted by the first sample (largest first), then by name.
fn volume_json(
    buckets: BTreeMap<i64, HashMap<String, u64>>,
    label_sets: &HashMap<String, Labels>,
    limit: u64,
) -> J {
    let mut samples: HashMap<String, Vec<(i64, u64)>> = HashMap::new();
    for (t, per) in buckets {
        let mut v: Vec<(String, u64)> = per.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v.truncate(limit as usize);
        for (name, bytes) in v {
            samples.entry(name).or_default().push((t, bytes));
        }
    }
    let matrix = samples.values().any(|s| s.len() > 1);
    let mut series: Vec<(String, Vec<(i64, u64)>)> = samples.into_iter().collect();
    series.sort_by(|a, b| b.1[0].1.cmp(&a.1[0].1).then_with(|| a.0.cmp(&b.0)));
    let result: Vec<J> = series
        .into_iter()
        .map(|(name, s)| {
            let metric = label_sets
                .get(&name)
                .map_or(J::Object(Map::new()), labels_json);
            if matrix {
                let values: Vec<J> = s
                    .iter()
                    .map(|&(t, b)| json!([secs(t), value_text(b as f64)]))
                    .collect();
                json!({"metric": metric, "values": values})
            } else {
                let (t, b) = s[0];
                json!({"metric": metric, "value": [secs(t), value_text(b as f64)]})
            }
        })
        .collect();
    json!({"resultType": if matrix { "matrix" } else { "vector" }, "result": result})
}

async fn volume_route(state: AppState, q: Option<String>, body: Bytes, range: bool) -> Response {
    let r = async {
        let p = Params::new(q.as_deref(), &body);
        let req = volume_req(&p, range)?;
        let ready = ready(&state)?;
        let threads = state.limits().threads;
        let t0 = Instant::now();
        blocking(&state, move || {
            let (buckets, sets, lines, bytes) = volumes(&ready, &req, threads)?;
            let mut data = volume_json(buckets, &sets, req.limit);
            let n = data["result"].as_array().map_or(0, Vec::len) as u64;
            data["stats"] = stats(lines, bytes, n, t0);
            Ok(ok(data))
        })
        .await
    }
    .await;
    finish(&state, r)
}

/// `GET|POST /loki/api/v1/index/volume`.
async fn volume(State(state): State<AppState>, RawQuery(q): RawQuery, body: Bytes) -> Response {
    volume_route(state, q, body, false).await
}

/// `GET|POST /loki/api/v1/index/volume_range`.
async fn volume_range(
    State(state): State<AppState>,
    RawQuery(q): RawQuery,
    body: Bytes,
) -> Response {
    volume_route(state, q, body, true).await
}

/// Loki's `shouldRejectLabel`: no values, or every value an ID (a number
/// or a UUID) unless they are all `0`/`1` and at most two.
pub fn reject_label(values: &BTreeSet<String>) -> bool {
    if values.is_empty() {
        return true;
    }
    if values.len() <= 2 && values.iter().all(|v| v == "0" || v == "1") {
        return false;
    }
    values
        .iter()
        .all(|v| v.parse::<f64>().is_ok() || is_uuid(v))
}

fn is_uuid(s: &str) -> bool {
    let s = s
        .strip_prefix("urn:uuid:")
        .unwrap_or(s)
        .trim_start_matches('{')
        .trim_end_matches('}');
    let b = s.as_bytes();
    match b.len() {
        32 => b.iter().all(u8::is_ascii_hexdigit),
        36 => b.iter().enumerate().all(|(i, c)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                *c == b'-'
            } else {
                c.is_ascii_hexdigit()
            }
        }),
        _ => false,
    }
}

/// The detected labels of a selection: label → its distinct values.
pub fn label_values_in(
    ready: &Ready,
    log: &LogExpr,
    start: i64,
    end: i64,
    threads: usize,
) -> Result<BTreeMap<String, BTreeSet<String>>, LokiError> {
    let every = all_labels(ready);
    let sel = eval::select(ready, log, start, end, true, true, &every, threads)?;
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for s in &sel.streams {
        for (k, v) in s {
            out.entry(k.clone()).or_default().insert(v.clone());
        }
    }
    Ok(out)
}

/// `GET|POST /loki/api/v1/detected_labels`: `{"detectedLabels": [{"label",
/// "cardinality"}]}`, `query` optional.
async fn detected_labels(
    State(state): State<AppState>,
    RawQuery(q): RawQuery,
    body: Bytes,
) -> Response {
    let r = async {
        let p = Params::new(q.as_deref(), &body);
        let log = match p.get("query") {
            Some(s) => selector(s, false)?,
            None => LogExpr::default(),
        };
        let (start, end) = p.bounds()?;
        let ready = ready(&state)?;
        let threads = state.limits().threads;
        blocking(&state, move || {
            let values = label_values_in(&ready, &log, start, end, threads)?;
            const STATIC: [&str; 4] = ["cluster", "namespace", "instance", "pod"];
            let labels: Vec<J> = values
                .iter()
                .filter(|(k, v)| STATIC.contains(&k.as_str()) || !reject_label(v))
                .map(|(k, v)| json!({"label": k, "cardinality": v.len()}))
                .collect();
            Ok(Json(json!({"detectedLabels": labels})).into_response())
        })
        .await
    }
    .await;
    finish(&state, r)
}

/// The detected-field routes' request.
struct FieldsReq {
    log: LogExpr,
    start: i64,
    end: i64,
    line_limit: u64,
    limit: u64,
}

fn fields_req(p: &Params) -> Result<FieldsReq, LokiError> {
    let log = selector(p.query()?, true)?;
    let (start, end) = p.bounds()?;
    let line_limit = positive(p, &["line_limit"], LINE_LIMIT, None)?;
    let limit = positive(p, &["limit", "field_limit"], FIELD_LIMIT, None)?;
    p.step(start, end)?;
    Ok(FieldsReq {
        log,
        start,
        end,
        line_limit,
        limit,
    })
}

/// One detected field, accumulated.
#[derive(Debug, Default)]
pub struct FieldAcc {
    /// The type of the last value seen (Loki's rule).
    pub kind: &'static str,
    /// The distinct values.
    pub values: BTreeSet<String>,
    /// `json`, `logfmt`, in order of first use.
    pub parsers: Vec<&'static str>,
    /// The JSON path, when parsed from JSON.
    pub json_path: Option<Vec<String>>,
}

/// The fields of the newest `line_limit` lines of the selection, at most
/// `limit` of them (the first found), by name.
pub fn detected(
    ready: &Ready,
    log: &LogExpr,
    start: i64,
    end: i64,
    line_limit: u64,
    limit: u64,
    threads: usize,
) -> Result<BTreeMap<String, FieldAcc>, LokiError> {
    let every = all_labels(ready);
    let sel = eval::select(ready, log, start, end, true, false, &every, threads)?;
    let mut entries = sel.entries;
    entries.sort_unstable_by_key(|e| std::cmp::Reverse((e.t, e.doc, e.line)));
    entries.truncate(line_limit.min(usize::MAX as u64) as usize);
    let corpus = ready.session.corpus();
    let mut out: BTreeMap<String, FieldAcc> = BTreeMap::new();
    for e in &entries {
        let labels = &sel.streams[e.stream];
        let line = corpus.docs()[e.doc].line(e.line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        for f in fields::parse_line(line, &|n| labels.contains_key(n)) {
            if !out.contains_key(&f.name) && out.len() as u64 >= limit {
                continue;
            }
            let acc = out.entry(f.name).or_default();
            acc.kind = fields::value_type(&f.value);
            if !acc.parsers.contains(&f.parser) {
                acc.parsers.push(f.parser);
            }
            if f.json_path.is_some() {
                acc.json_path = f.json_path;
            }
            acc.values.insert(f.value);
        }
    }
    Ok(out)
}

/// `GET|POST /loki/api/v1/detected_fields`: `{"fields": [{"label", "type",
/// "cardinality", "parsers", "jsonPath"?}], "limit"}` (`{}` without a
/// field, as Loki answers).
async fn detected_fields(
    State(state): State<AppState>,
    RawQuery(q): RawQuery,
    body: Bytes,
) -> Response {
    let r = async {
        let p = Params::new(q.as_deref(), &body);
        let req = fields_req(&p)?;
        let ready = ready(&state)?;
        let threads = state.limits().threads;
        blocking(&state, move || {
            let found = detected(
                &ready,
                &req.log,
                req.start,
                req.end,
                req.line_limit,
                req.limit,
                threads,
            )?;
            if found.is_empty() {
                return Ok(Json(json!({})).into_response());
            }
            let list: Vec<J> = found
                .into_iter()
                .map(|(name, f)| {
                    let mut o = json!({"label": name, "type": f.kind, "cardinality": f.values.len(), "parsers": f.parsers});
                    if let Some(p) = f.json_path {
                        o["jsonPath"] = json!(p);
                    }
                    o
                })
                .collect();
            Ok(Json(json!({"fields": list, "limit": req.limit})).into_response())
        })
        .await
    }
    .await;
    finish(&state, r)
}

/// The values of field `name` in the newest `line_limit` selected lines
/// (bytes values rewritten as Loki writes them), sorted, at most `limit`.
#[allow(clippy::too_many_arguments)]
pub fn field_values_in(
    ready: &Ready,
    log: &LogExpr,
    name: &str,
    start: i64,
    end: i64,
    line_limit: u64,
    limit: u64,
    threads: usize,
) -> Result<Vec<String>, LokiError> {
    let every = all_labels(ready);
    let sel = eval::select(ready, log, start, end, true, false, &every, threads)?;
    let mut entries = sel.entries;
    entries.sort_unstable_by_key(|e| std::cmp::Reverse((e.t, e.doc, e.line)));
    entries.truncate(line_limit.min(usize::MAX as u64) as usize);
    let corpus = ready.session.corpus();
    let mut values: BTreeSet<String> = BTreeSet::new();
    for e in &entries {
        if values.len() as u64 >= limit {
            break;
        }
        let labels = &sel.streams[e.stream];
        let line = corpus.docs()[e.doc].line(e.line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        for f in fields::parse_line(line, &|n| labels.contains_key(n)) {
            if f.name == name {
                values.insert(fields::listed_value(&f.value));
            }
        }
    }
    Ok(values.into_iter().collect())
}

/// `GET|POST /loki/api/v1/detected_field/<name>/values`: `{"values": [...],
/// "limit"}` (`{}` without a value).
async fn field_values(
    State(state): State<AppState>,
    Path(name): Path<String>,
    RawQuery(q): RawQuery,
    body: Bytes,
) -> Response {
    let r = async {
        let p = Params::new(q.as_deref(), &body);
        let req = fields_req(&p)?;
        let ready = ready(&state)?;
        let threads = state.limits().threads;
        blocking(&state, move || {
            let v = field_values_in(
                &ready,
                &req.log,
                &name,
                req.start,
                req.end,
                req.line_limit,
                req.limit,
                threads,
            )?;
            if v.is_empty() {
                return Ok(Json(json!({})).into_response());
            }
            Ok(Json(json!({"values": v, "limit": req.limit})).into_response())
        })
        .await
    }
    .await;
    finish(&state, r)
}

/// One pattern's series: its text, its level and the count per step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatternSeries {
    /// The template.
    pub pattern: String,
    /// The lines' `detected_level` (`unknown` without a level).
    pub level: String,
    /// (step start in s, lines), non-zero steps only, in time order.
    pub samples: Vec<(i64, u64)>,
}

/// Mines the selected lines (in time order) and counts each template's
/// lines per level and per step (`t - t % step`, as Loki aligns them),
/// largest total first.
pub fn pattern_series(
    ready: &Ready,
    log: &LogExpr,
    start: i64,
    end: i64,
    step: i64,
    threads: usize,
) -> Result<Vec<PatternSeries>, LokiError> {
    let mut names = all_labels(ready);
    names.retain(|n| n == eval::DETECTED_LEVEL);
    let sel = eval::select(ready, log, start, end, true, false, &names, threads)?;
    let mut entries = sel.entries;
    entries.sort_unstable_by_key(|e| (e.t, e.doc, e.line));
    let corpus = ready.session.corpus();
    let mut miner = Miner::new(MinerOptions::default());
    let mut counts: BTreeMap<(u32, String), BTreeMap<i64, u64>> = BTreeMap::new();
    // The entries as runs of one document's lines, in time order.
    let mut runs: Vec<(usize, Vec<u64>)> = Vec::new();
    for e in &entries {
        match runs.last_mut() {
            Some((d, ls)) if *d == e.doc => ls.push(e.line),
            _ => runs.push((e.doc, vec![e.line])),
        }
    }
    let grouped = ready
        .session
        .group_shapes(&runs, logsieve::BackendChoice::Auto)
        .map_err(LokiError::lib)?;
    let mut ids = Vec::new();
    miner.add_grouped(
        &grouped.shapes,
        |i| corpus.docs()[entries[i].doc].line(entries[i].line),
        &mut ids,
    );
    for (e, &id) in entries.iter().zip(&ids) {
        let level = sel.streams[e.stream]
            .get(eval::DETECTED_LEVEL)
            .map_or_else(|| "unknown".to_string(), String::clone);
        let bucket = e.t - e.t.rem_euclid(step);
        *counts
            .entry((id, level))
            .or_default()
            .entry(bucket)
            .or_default() += 1;
    }
    let mut out: Vec<(u64, PatternSeries)> = counts
        .into_iter()
        .map(|((id, level), per)| {
            let total = per.values().sum();
            let samples = per
                .into_iter()
                .map(|(t, n)| (t.div_euclid(1_000_000_000), n))
                .collect();
            (
                total,
                PatternSeries {
                    pattern: miner.pattern(id),
                    level,
                    samples,
                },
            )
        })
        .collect();
    out.sort_by_key(|s| std::cmp::Reverse(s.0));
    Ok(out.into_iter().map(|(_, s)| s).collect())
}

/// `GET|POST /loki/api/v1/patterns`: `{"status": "success", "data":
/// [{"pattern", "level", "samples": [[s, n], ...]}]}`.
async fn patterns(State(state): State<AppState>, RawQuery(q): RawQuery, body: Bytes) -> Response {
    let r = async {
        let p = Params::new(q.as_deref(), &body);
        let log = selector(p.query()?, true)?;
        let (start, end) = p.bounds()?;
        let step = p.step(start, end)?;
        let ready = ready(&state)?;
        let threads = state.limits().threads;
        blocking(&state, move || {
            let series = pattern_series(&ready, &log, start, end, step, threads)?;
            let data: Vec<J> = series
                .into_iter()
                .map(|s| {
                    let samples: Vec<J> = s.samples.iter().map(|&(t, n)| json!([t, n])).collect();
                    json!({"pattern": s.pattern, "level": s.level, "samples": samples})
                })
                .collect();
            Ok(Json(json!({"status": "success", "data": data})).into_response())
        })
        .await
    }
    .await;
    finish(&state, r)
}
