//! The read side of Loki's HTTP API, so Grafana's Loki data source and
//! `logcli` query `logsieve serve` unchanged: `/loki/api/v1/query_range`,
//! `/query`, `/labels`, `/label/<name>/values`, `/series`,
//! `/status/buildinfo`, `/index/stats`, `/ready`, and `/tail` (WebSocket,
//! [`tail`]); and for Grafana's Logs Drilldown `/index/volume`,
//! `/index/volume_range`, `/detected_labels`, `/detected_fields`,
//! `/detected_field/<name>/values` and `/patterns` (`drilldown.rs`).
//! GET, or POST with a form-encoded body, as Loki takes them.
//!
//! Queries are LogQL ([`logsieve::logql::parse`]); line filters go to the
//! session's one route ([`eval::select`]). Answers have Loki's shapes
//! (`{"status": "success", "data": {"resultType": "streams" | "matrix" |
//! "vector" | "scalar", "result": [...], "stats": {...}}}`); errors are
//! Loki's: the message as `text/plain` with the HTTP status (400 for a bad
//! query or parameter).

mod drilldown;
pub mod eval;
mod fields;
pub mod params;
pub mod tail;

use std::time::Instant;

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use logsieve::logql::{self, Expr, MetricExpr};
use serde_json::{json, Map, Value as J};

use crate::state::{AppState, Ready, ReadyRef};
use eval::{Counted, Labels, Series, Value};
use params::{Direction, Params};

/// The Loki routes, to merge into the server's router.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/loki/api/v1/query_range",
            get(query_range).post(query_range),
        )
        .route("/loki/api/v1/query", get(query).post(query))
        .route("/loki/api/v1/labels", get(labels).post(labels))
        .route("/loki/api/v1/label", get(labels).post(labels))
        .route(
            "/loki/api/v1/label/{name}/values",
            get(label_values).post(label_values),
        )
        .route("/loki/api/v1/series", get(series).post(series))
        .route(
            "/loki/api/v1/index/stats",
            get(index_stats).post(index_stats),
        )
        .route("/loki/api/v1/tail", get(tail::tail))
        .route("/loki/api/v1/status/buildinfo", get(buildinfo))
        .route("/ready", get(ready_route))
        .merge(drilldown::routes())
}

/// An error as Loki answers it: the message as plain text, with a status.
#[derive(Debug)]
pub struct LokiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The message.
    pub message: String,
}

impl LokiError {
    /// 400.
    pub fn bad(message: impl Into<String>) -> LokiError {
        LokiError {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
        }
    }
    /// 500.
    pub fn internal(message: impl Into<String>) -> LokiError {
        LokiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: message.into(),
        }
    }
    /// A library error (a bad line filter is the client's).
    pub fn lib(e: logsieve::Error) -> LokiError {
        let api = crate::ApiError::from_lib(e);
        LokiError {
            status: api.status,
            message: api.message,
        }
    }
}

impl From<crate::ApiError> for LokiError {
    fn from(e: crate::ApiError) -> LokiError {
        LokiError {
            status: e.status,
            message: e.message,
        }
    }
}

impl IntoResponse for LokiError {
    fn into_response(self) -> Response {
        (
            self.status,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            self.message,
        )
            .into_response()
    }
}

type Answer = Result<Response, LokiError>;

fn finish(state: &AppState, r: Answer) -> Response {
    r.unwrap_or_else(|e| {
        state.0.metrics.error("loki");
        e.into_response()
    })
}

fn ready(state: &AppState) -> Result<ReadyRef, LokiError> {
    #[cfg(feature = "cluster")]
    if state.front().is_some() {
        return Err(LokiError {
            status: StatusCode::NOT_IMPLEMENTED,
            message: "the Loki API is not answered in front of a cluster (`serve --cluster` answers /api/v1/health, search, stats and sql; serve the files for Loki)".into(),
        });
    }
    state.ready().ok_or_else(|| LokiError {
        status: StatusCode::SERVICE_UNAVAILABLE,
        message: "logsieve is still loading its corpus (GET /ready says when it is ready)".into(),
    })
}

fn parse(q: &str) -> Result<Expr, LokiError> {
    logql::parse(q).map_err(|e| LokiError::bad(e.to_string()))
}

/// Runs `work` on a blocking thread, holding a query slot, under the
/// deadline (the server's own rules: 429, 504). A hang-up or the
/// deadline fires the token; the LogQL evaluation does not look at it yet,
/// so it runs to its end holding its slot (no answer is sent).
async fn blocking<T: Send + 'static>(
    state: &AppState,
    work: impl FnOnce() -> Result<T, LokiError> + Send + 'static,
) -> Result<T, LokiError> {
    let held = crate::api::hold(state)?;
    let cancel = logsieve::Cancel::new();
    let _guard = cancel.on_drop();
    let (r, _held) = crate::api::run_blocking(state, &cancel, held, move |_| Ok(work())).await?;
    r
}

fn ok(data: J) -> Response {
    Json(json!({"status": "success", "data": data})).into_response()
}

/// A sample's value as Prometheus writes it.
fn value_text(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

/// A step's time as Loki writes it: seconds, a number (ms precision).
fn secs(t_ns: i64) -> J {
    if t_ns % 1_000_000_000 == 0 {
        json!(t_ns / 1_000_000_000)
    } else {
        json!((t_ns / 1_000_000) as f64 / 1000.0)
    }
}

fn labels_json(l: &Labels) -> J {
    J::Object(
        l.iter()
            .map(|(k, v)| (k.clone(), J::String(v.clone())))
            .collect::<Map<_, _>>(),
    )
}

/// Loki's `stats.summary` (the fields Grafana shows).
fn stats(lines: u64, bytes: u64, returned: u64, t0: Instant) -> J {
    let exec = t0.elapsed().as_secs_f64();
    let per_s = |n: u64| {
        if exec > 0.0 {
            (n as f64 / exec) as u64
        } else {
            0
        }
    };
    json!({
        "summary": {
            "bytesProcessedPerSecond": per_s(bytes),
            "linesProcessedPerSecond": per_s(lines),
            "totalBytesProcessed": bytes,
            "totalLinesProcessed": lines,
            "execTime": exec,
            "queueTime": 0,
            "subqueries": 0,
            "totalEntriesReturned": returned,
            "splits": 0,
            "shards": 0,
        }
    })
}

/// The streams of a log query: the `limit` lines nearest the direction's
/// start, grouped by stream, each stream in the direction's order.
fn streams_json(ready: &Ready, sel: eval::Selection, limit: u64, dir: Direction) -> (J, u64) {
    let mut entries = sel.entries;
    let key = |e: &eval::Entry| (e.t, e.doc, e.line);
    match dir {
        Direction::Forward => entries.sort_unstable_by_key(key),
        Direction::Backward => entries.sort_unstable_by_key(|e| std::cmp::Reverse(key(e))),
    }
    entries.truncate(limit.min(usize::MAX as u64) as usize);
    let corpus = ready.session.corpus();
    let mut order: Vec<usize> = Vec::new();
    let mut values: Vec<Vec<J>> = vec![Vec::new(); sel.streams.len()];
    for e in &entries {
        if values[e.stream].is_empty() {
            order.push(e.stream);
        }
        let line = corpus.docs()[e.doc].line(e.line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        values[e.stream].push(json!([e.t.to_string(), String::from_utf8_lossy(line)]));
    }
    let result: Vec<J> = order
        .into_iter()
        .map(|s| json!({"stream": labels_json(&sel.streams[s]), "values": std::mem::take(&mut values[s])}))
        .collect();
    (J::Array(result), entries.len() as u64)
}

fn matrix_json(series: &[Series], steps: &[i64]) -> J {
    J::Array(
        series
            .iter()
            .filter(|s| s.values.iter().any(Option::is_some))
            .map(|s| {
                let values: Vec<J> = s
                    .values
                    .iter()
                    .zip(steps)
                    .filter_map(|(v, &t)| v.map(|v| json!([secs(t), value_text(v)])))
                    .collect();
                json!({"metric": labels_json(&s.labels), "values": values})
            })
            .collect(),
    )
}

/// `GET|POST /loki/api/v1/query_range`.
async fn query_range(
    State(state): State<AppState>,
    RawQuery(q): RawQuery,
    body: Bytes,
) -> Response {
    let r = async {
        let p = Params::new(q.as_deref(), &body);
        let expr = parse(p.query()?)?;
        let (start, end) = p.bounds()?;
        let limit = p.limit()?;
        let dir = p.direction()?;
        let ready = ready(&state)?;
        let threads = state.limits().threads;
        let t0 = Instant::now();
        match expr {
            Expr::Log(log) => {
                blocking(&state, move || {
                    // Log queries: start <= t < end, as Loki reads them.
                    let sel = eval::select(&ready, &log, start, end, true, false, &[], threads)?;
                    let (lines, bytes) = (sel.scanned_lines, sel.scanned_bytes);
                    let (result, n) = streams_json(&ready, sel, limit, dir);
                    Ok(ok(json!({"resultType": "streams", "result": result, "stats": stats(lines, bytes, n, t0)})))
                })
                .await
            }
            Expr::Metric(m) => {
                let step = p.step(start, end)?;
                blocking(&state, move || {
                    let mut c = Counted::default();
                    let v = eval::metric(&ready, &m, start, end, step, threads, &mut c)?;
                    let steps = params::steps(start, end, step);
                    let series = match v {
                        Value::Series(s) => s,
                        Value::Scalar(x) => vec![Series { labels: Labels::new(), values: vec![Some(x); steps.len()] }],
                    };
                    let result = matrix_json(&series, &steps);
                    let n = result.as_array().map_or(0, |a| a.len()) as u64;
                    Ok(ok(json!({"resultType": "matrix", "result": result, "stats": stats(c.lines, c.bytes, n, t0)})))
                })
                .await
            }
        }
    }
    .await;
    finish(&state, r)
}

/// `GET|POST /loki/api/v1/query`: an instant metric query at `time`.
async fn query(State(state): State<AppState>, RawQuery(q): RawQuery, body: Bytes) -> Response {
    let r = async {
        let p = Params::new(q.as_deref(), &body);
        let expr = parse(p.query()?)?;
        let t = p.time("time", params::now_ns())?;
        p.limit()?;
        p.direction()?;
        let m = match expr {
            Expr::Metric(m) => m,
            Expr::Log(_) => {
                return Err(LokiError::bad(
                    "log queries are not supported as an instant query type, please change your query to a range query type",
                ))
            }
        };
        let ready = ready(&state)?;
        let threads = state.limits().threads;
        let t0 = Instant::now();
        blocking(&state, move || {
            let mut c = Counted::default();
            let v = eval::metric(&ready, &m, t, t, 1, threads, &mut c)?;
            let (kind, result) = match (v, &m) {
                (Value::Scalar(x), MetricExpr::Number(_) | MetricExpr::Binary { .. }) => {
                    ("scalar", json!([secs(t), value_text(x)]))
                }
                (Value::Scalar(x), _) => ("scalar", json!([secs(t), value_text(x)])),
                (Value::Series(s), _) => (
                    "vector",
                    J::Array(
                        s.iter()
                            .filter_map(|s| {
                                let v = s.values.first().copied().flatten()?;
                                Some(json!({"metric": labels_json(&s.labels), "value": [secs(t), value_text(v)]}))
                            })
                            .collect(),
                    ),
                ),
            };
            let n = result.as_array().map_or(1, |a| a.len()) as u64;
            Ok(ok(json!({"resultType": kind, "result": result, "stats": stats(c.lines, c.bytes, n, t0)})))
        })
        .await
    }
    .await;
    finish(&state, r)
}

/// `GET|POST /loki/api/v1/labels`: the label names (the corpus's; the
/// time range is accepted and not used).
async fn labels(State(state): State<AppState>, RawQuery(q): RawQuery, body: Bytes) -> Response {
    let r = async {
        let p = Params::new(q.as_deref(), &body);
        p.bounds()?;
        let ready = ready(&state)?;
        Ok(ok(json!(eval::label_names(&ready))))
    }
    .await;
    finish(&state, r)
}

/// `GET|POST /loki/api/v1/label/<name>/values`: a label's values, or with
/// `query`, the values among the streams it selects in the time range.
async fn label_values(
    State(state): State<AppState>,
    Path(name): Path<String>,
    RawQuery(q): RawQuery,
    body: Bytes,
) -> Response {
    let r = async {
        let p = Params::new(q.as_deref(), &body);
        let (start, end) = p.bounds()?;
        let ready = ready(&state)?;
        let Some(qs) = p.get("query") else {
            return Ok(ok(json!(eval::label_values(&ready, &name))));
        };
        let log = match parse(qs)? {
            Expr::Log(l) => l,
            Expr::Metric(_) => return Err(LokiError::bad("query: expected a stream selector")),
        };
        let threads = state.limits().threads;
        blocking(&state, move || {
            let sel = eval::select(
                &ready,
                &log,
                start,
                end,
                true,
                false,
                std::slice::from_ref(&name),
                threads,
            )?;
            let mut v: Vec<String> = sel
                .streams
                .iter()
                .filter_map(|l| l.get(&name).cloned())
                .collect();
            v.sort();
            v.dedup();
            Ok(ok(json!(v)))
        })
        .await
    }
    .await;
    finish(&state, r)
}

/// `GET|POST /loki/api/v1/series`: the label sets of the streams that the
/// `match[]` selectors select in the time range.
async fn series(State(state): State<AppState>, RawQuery(q): RawQuery, body: Bytes) -> Response {
    let r = async {
        let p = Params::new(q.as_deref(), &body);
        let (start, end) = p.bounds()?;
        let mut sels = p.all("match[]");
        if sels.is_empty() {
            sels = p.all("match");
        }
        if sels.is_empty() {
            return Err(LokiError::bad(
                "0 matcher groups supplied: give match[]={...}",
            ));
        }
        let logs = sels
            .iter()
            .map(|s| match parse(s)? {
                Expr::Log(l) if l.filters.is_empty() => Ok(l),
                _ => Err(LokiError::bad(format!(
                    "match[] {s:?}: expected a stream selector"
                ))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let ready = ready(&state)?;
        let threads = state.limits().threads;
        blocking(&state, move || {
            let mut all: Vec<Labels> = Vec::new();
            for log in &logs {
                all.extend(
                    eval::select(&ready, log, start, end, true, false, &[], threads)?.streams,
                );
            }
            all.sort();
            all.dedup();
            Ok(ok(J::Array(all.iter().map(labels_json).collect())))
        })
        .await
    }
    .await;
    finish(&state, r)
}

/// `GET|POST /loki/api/v1/index/stats`: streams, entries and bytes a
/// selector covers in the time range (Grafana asks before a query).
async fn index_stats(
    State(state): State<AppState>,
    RawQuery(q): RawQuery,
    body: Bytes,
) -> Response {
    let r = async {
        let p = Params::new(q.as_deref(), &body);
        let (start, end) = p.bounds()?;
        let log = match parse(p.query()?)? {
            Expr::Log(l) => l,
            Expr::Metric(_) => return Err(LokiError::bad("query: expected a stream selector")),
        };
        let ready = ready(&state)?;
        let threads = state.limits().threads;
        blocking(&state, move || {
            let sel = eval::select(&ready, &log, start, end, true, false, &[], threads)?;
            let corpus = ready.session.corpus();
            let bytes: u64 = sel
                .entries
                .iter()
                .map(|e| corpus.docs()[e.doc].line(e.line).len() as u64)
                .sum();
            Ok(Json(json!({"streams": sel.streams.len(), "chunks": 0, "entries": sel.entries.len(), "bytes": bytes})).into_response())
        })
        .await
    }
    .await;
    finish(&state, r)
}

/// The Loki API version these routes follow; Grafana reads it to decide
/// which features to ask for.
pub const LOKI_API_VERSION: &str = "2.9.0";

/// `GET /loki/api/v1/status/buildinfo`.
async fn buildinfo() -> Response {
    Json(json!({
        "version": LOKI_API_VERSION,
        "revision": concat!("logsieve-", env!("CARGO_PKG_VERSION")),
        "branch": "logsieve",
        "buildUser": "logsieve",
        "buildDate": "",
        "goVersion": "",
    }))
    .into_response()
}

/// `GET /ready`: `ready` once the corpus answers queries, 503 before.
async fn ready_route(State(state): State<AppState>) -> Response {
    match state.ready() {
        Some(_) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            "ready\n",
        )
            .into_response(),
        None => LokiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            message: "not ready: the corpus is loading\n".into(),
        }
        .into_response(),
    }
}
