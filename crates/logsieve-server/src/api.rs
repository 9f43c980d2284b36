//! The routes under `/api/v1`, their request and response types (every
//! field documented in the OpenAPI document, [`ApiDoc`]), and the work
//! each one hands to the [`Session`](logsieve::Session) on a blocking
//! thread.

use std::convert::Infallible;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use logsieve::pipeline::{json::stats_json, StatsQuery, TimeSpec};
use logsieve::rg_json::{self, RgJson};
use logsieve::session::Route;
use logsieve::{
    Answer, BackendChoice, Query, QueryBuilder, Request, SearchOptions, SearchResult, Syntax, Want,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::OwnedSemaphorePermit;
use utoipa::{OpenApi, ToSchema};

use crate::error::{ApiError, ErrorBody};
use crate::state::{AppState, Ready};

/// The OpenAPI 3 document (`GET /api/v1/openapi.json`).
#[derive(OpenApi)]
#[openapi(
    info(
        title = "logsieve serve",
        description = "A log corpus loaded once and searched many times: lines as NDJSON in ripgrep's --json schema, counts, stats and per-pattern counts as JSON. With --token-file every route needs `Authorization: Bearer TOKEN`."
    ),
    paths(health, search, stats, patterns, openapi, metrics),
    components(schemas(
        Health,
        SearchRequest,
        SyntaxName,
        OutputKind,
        BackendName,
        CountResponse,
        FileCount,
        BackendInfo,
        FilesResponse,
        StatsRequest,
        PatternsRequest,
        PatternsResponse,
        PatternRow,
        ErrorBody,
        crate::error::ErrorDetail
    ))
)]
pub struct ApiDoc;

// ---------------------------------------------------------------- health

/// The server's state.
#[derive(Serialize, ToSchema)]
pub struct Health {
    /// `loading` until the corpus answers queries, then `ready`.
    pub status: String,
    /// While loading: what is being done (`reading`, `columns`, `gpu`).
    pub phase: String,
    /// Bytes held in memory (decompressed).
    pub bytes: u64,
    /// Lines over all files (0 while loading).
    pub lines: u64,
    /// Files loaded (while loading: read so far).
    pub files: u64,
    /// `cpu`, or `gpu` when the corpus is resident on a GPU (null while
    /// loading).
    pub backend: Option<String>,
    /// The GPU adapter's name when the corpus is resident on it.
    pub gpu: Option<String>,
    /// Load progress, 0 to 1 (1 when ready).
    pub progress: f64,
}

/// Whether the corpus is loaded, and how far the load is.
#[utoipa::path(get, path = "/api/v1/health", responses((status = 200, body = Health)))]
pub async fn health(State(state): State<AppState>) -> Json<Health> {
    let p = state.progress();
    Json(match state.ready() {
        Some(r) => Health {
            status: "ready".into(),
            phase: "ready".into(),
            bytes: r.session.corpus().total_bytes(),
            lines: r.lines,
            files: r.session.corpus().docs().len() as u64,
            backend: Some(r.backend.clone()),
            gpu: r.gpu.clone(),
            progress: 1.0,
        },
        None => Health {
            status: "loading".into(),
            phase: state.0.phase.lock().map(|p| *p).unwrap_or("reading").into(),
            bytes: p.bytes_loaded,
            lines: 0,
            files: p.files_done,
            backend: None,
            gpu: None,
            // The reading phase is most of a load; columns and the GPU
            // upload take the last tenth.
            progress: (p.fraction() * 0.9).min(0.9),
        },
    })
}

/// The OpenAPI document of this API.
#[utoipa::path(get, path = "/api/v1/openapi.json", responses((status = 200, description = "OpenAPI 3 JSON", content_type = "application/json")))]
pub async fn openapi() -> Response {
    match ApiDoc::openapi().to_json() {
        Ok(s) => ([(header::CONTENT_TYPE, "application/json")], s).into_response(),
        Err(e) => ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string())
            .into_response(),
    }
}

/// Prometheus metrics: queries by kind and backend, latency histogram,
/// resident bytes (host and GPU), load progress.
#[utoipa::path(get, path = "/metrics", responses((status = 200, description = "Prometheus text format", content_type = "text/plain")))]
pub async fn metrics(State(state): State<AppState>) -> Response {
    let ready = state.ready();
    let g = crate::metrics::Gauges {
        host_bytes: ready.as_ref().map_or(state.progress().bytes_loaded, |r| {
            r.session.corpus().total_bytes()
        }),
        gpu_bytes: ready
            .as_ref()
            .and_then(|r| r.session.gpu().map(|g| g.resident_bytes()))
            .unwrap_or(0),
        progress: if ready.is_some() {
            1.0
        } else {
            state.progress().fraction() * 0.9
        },
        ready: ready.is_some(),
        in_flight: state.in_flight(),
    };
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.0.metrics.render(&g),
    )
        .into_response()
}

// ---------------------------------------------------------------- requests

/// How patterns are read.
#[derive(Deserialize, ToSchema, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SyntaxName {
    /// Fixed strings (`-F`).
    Literal,
    /// Regular expressions (the default, as the CLI).
    #[default]
    Regex,
    /// `*` any run of bytes, `?` one byte (`--wildcard`).
    Wildcard,
    /// Within `fuzzy_k` edits (`--fuzzy K`).
    Fuzzy,
}

/// What a search answers with.
#[derive(Deserialize, ToSchema, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum OutputKind {
    /// Selected lines as NDJSON in ripgrep's `--json` schema (the default).
    #[default]
    Lines,
    /// One JSON object: the selected lines per file and in total.
    Count,
    /// NDJSON: one `{"type":"only_match","data":{"path","line_number",
    /// "absolute_offset","match","patterns"}}` per match (the offset is the
    /// match's), then `{"type":"summary","data":{"matched_lines","matches"}}`.
    OnlyMatching,
    /// One JSON object: the files with a selected line.
    FilesWithMatches,
}

/// Which backend runs the query (the routing point decides for `auto`).
#[derive(Deserialize, ToSchema, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BackendName {
    /// The routing point chooses.
    #[default]
    Auto,
    /// The CPU engine.
    Cpu,
    /// The GPU, or an error (422) saying why not.
    Gpu,
}

impl BackendName {
    fn choice(self) -> BackendChoice {
        match self {
            BackendName::Auto => BackendChoice::Auto,
            BackendName::Cpu => BackendChoice::Cpu,
            BackendName::Gpu => BackendChoice::Gpu,
        }
    }
}

/// `POST /api/v1/search`.
#[derive(Deserialize, ToSchema, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct SearchRequest {
    /// Patterns; a line is selected when any matches (`-e`, repeatable).
    pub patterns: Vec<String>,
    /// How the patterns are read (default `regex`).
    #[serde(default)]
    pub syntax: SyntaxName,
    /// Edits allowed with `syntax: fuzzy` (0..=3, default 1).
    #[serde(default)]
    pub fuzzy_k: Option<u8>,
    /// `-i`.
    #[serde(default)]
    pub ignore_case: bool,
    /// `-w`: whole words.
    #[serde(default)]
    pub word: bool,
    /// `-x`: whole lines.
    #[serde(default)]
    pub line: bool,
    /// `-v`: select lines that do not match.
    #[serde(default)]
    pub invert: bool,
    /// `lines` (default), `count`, `only_matching`, `files_with_matches`.
    #[serde(default)]
    pub output: OutputKind,
    /// `-m`: at most this many selected lines per file.
    #[serde(default)]
    pub max_count: Option<u64>,
    /// `-B`: context lines before each match (`lines` output).
    #[serde(default)]
    pub before: u64,
    /// `-A`: context lines after each match (`lines` output).
    #[serde(default)]
    pub after: u64,
    /// Lines at or after this time (`2026-11-20T10:00`, epoch seconds, or a
    /// duration before the newest line: `15m`), through the stats columns.
    #[serde(default)]
    pub since: Option<String>,
    /// Lines before this time (same forms as `since`).
    #[serde(default)]
    pub until: Option<String>,
    /// Only these served files (by name, as `/health`'s loader named them;
    /// an unknown name is a 400).
    #[serde(default)]
    pub files: Option<Vec<String>>,
    /// Add the routing decision (`count`, `files_with_matches`).
    #[serde(default)]
    pub explain: bool,
    /// `auto` (default), `cpu`, `gpu`.
    #[serde(default)]
    pub backend: BackendName,
    /// At most this many selected lines in this answer (`lines`,
    /// `only_matching`); the response header `x-logsieve-next-cursor`
    /// then holds the cursor of the next page, when there is one.
    #[serde(default)]
    pub limit: Option<u64>,
    /// Where the page starts: a previous answer's `x-logsieve-next-cursor`.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// Which backend ran, and why.
#[derive(Serialize, ToSchema)]
pub struct BackendInfo {
    /// What ran: `cpu/memmem x2`, `gpu/scan`, ...
    pub name: String,
    /// Why it ran there (a GPU failure that fell back says so).
    pub reason: String,
    /// The routing point's choice: `cpu` or `gpu/KERNEL`.
    pub route: String,
    /// The routing point's reason.
    pub route_reason: String,
    /// True when the request forced the backend.
    pub forced: bool,
    /// Search time in ms.
    pub elapsed_ms: f64,
    /// The planner's decision in words, when `explain` was asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<String>,
}

/// One file's count.
#[derive(Serialize, ToSchema)]
pub struct FileCount {
    /// The file's name.
    pub path: String,
    /// Selected lines in it.
    pub count: u64,
}

/// `output: count`.
#[derive(Serialize, ToSchema)]
pub struct CountResponse {
    /// Selected lines over the files searched.
    pub total: u64,
    /// Per file, in corpus order (files with no selected line included).
    pub files: Vec<FileCount>,
    /// The backend and route.
    pub backend: BackendInfo,
}

/// `output: files_with_matches`.
#[derive(Serialize, ToSchema)]
pub struct FilesResponse {
    /// Files with a selected line, in corpus order.
    pub files: Vec<String>,
    /// The backend and route.
    pub backend: BackendInfo,
}

/// `POST /api/v1/stats`: `logsieve stats --json` over the served columns.
#[derive(Deserialize, ToSchema, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct StatsRequest {
    /// Only lines matching one of these (none: every line).
    #[serde(default)]
    pub patterns: Vec<String>,
    /// How the patterns are read (default `regex`).
    #[serde(default)]
    pub syntax: SyntaxName,
    /// Edits allowed with `syntax: fuzzy`.
    #[serde(default)]
    pub fuzzy_k: Option<u8>,
    /// `-i`.
    #[serde(default)]
    pub ignore_case: bool,
    /// `-w`.
    #[serde(default)]
    pub word: bool,
    /// `-v`.
    #[serde(default)]
    pub invert: bool,
    /// Window start (as `search`'s `since`).
    #[serde(default)]
    pub since: Option<String>,
    /// Window end, exclusive.
    #[serde(default)]
    pub until: Option<String>,
    /// Fields to count by, nested (`level`, `host`, the server's `--field`s).
    #[serde(default)]
    pub count_by: Vec<String>,
    /// Histogram bucket width (`30s`, `1m`, `1h`).
    #[serde(default)]
    pub histogram: Option<String>,
    /// `auto` (default), `cpu`, `gpu`.
    #[serde(default)]
    pub backend: BackendName,
}

/// `POST /api/v1/patterns`: per-pattern lines and occurrences.
#[derive(Deserialize, ToSchema, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct PatternsRequest {
    /// The patterns (an IOC list).
    pub patterns: Vec<String>,
    /// How the patterns are read (default `regex`).
    #[serde(default)]
    pub syntax: SyntaxName,
    /// Edits allowed with `syntax: fuzzy`.
    #[serde(default)]
    pub fuzzy_k: Option<u8>,
    /// `-i`.
    #[serde(default)]
    pub ignore_case: bool,
    /// `-w`.
    #[serde(default)]
    pub word: bool,
    /// `-x`.
    #[serde(default)]
    pub line: bool,
    /// Only patterns that occur (`--patterns-matched`).
    #[serde(default)]
    pub only_matched: bool,
    /// `auto` (default), `cpu`, `gpu`.
    #[serde(default)]
    pub backend: BackendName,
}

/// One pattern's counts.
#[derive(Serialize, ToSchema)]
pub struct PatternRow {
    /// Its index in the request.
    pub index: usize,
    /// `{"text": ...}` (or `{"bytes": base64}`).
    #[schema(value_type = Object)]
    pub pattern: Value,
    /// Lines that contain it, as if searched alone.
    pub lines: u64,
    /// Its non-overlapping occurrences.
    pub occurrences: u64,
}

/// The per-pattern answer (`--count-per-pattern --json` as one object).
#[derive(Serialize, ToSchema)]
pub struct PatternsResponse {
    /// One row per pattern (only those found with `only_matched`).
    pub patterns: Vec<PatternRow>,
    /// Patterns asked for.
    pub patterns_total: usize,
    /// Patterns found.
    pub patterns_matched: usize,
    /// The backend that counted.
    pub backend: BackendInfo,
}

// ---------------------------------------------------------------- plumbing

/// Parses a JSON body: malformed JSON is 400 `bad_json`, a well-formed
/// body of the wrong shape (unknown field, wrong type) 422
/// `invalid_request`, a body over the limit 413.
fn parse_body<T: serde::de::DeserializeOwned>(
    body: Result<Bytes, BytesRejection>,
) -> Result<T, ApiError> {
    let body = body.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::new(e.status(), "body_too_large", e.body_text())
        } else {
            ApiError::new(e.status(), "bad_request", e.body_text())
        }
    })?;
    serde_json::from_slice(&body).map_err(|e| {
        if e.is_data() {
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_request",
                e.to_string(),
            )
        } else {
            ApiError::bad_request("bad_json", e.to_string())
        }
    })
}

/// The session, or 503 while loading.
fn ready(state: &AppState) -> Result<Arc<Ready>, ApiError> {
    state.ready().ok_or_else(|| {
        let p = state.progress().fraction() * 90.0;
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "loading",
            format!(
                "the corpus is still loading ({p:.0}%); GET /api/v1/health says when it is ready"
            ),
        )
    })
}

/// A query slot, or 429.
fn slot(state: &AppState) -> Result<OwnedSemaphorePermit, ApiError> {
    state.0.slots.clone().try_acquire_owned().map_err(|_| {
        ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_requests",
            format!(
                "{} queries are running (--max-in-flight); retry later",
                state.limits().max_in_flight
            ),
        )
    })
}

/// Counts a query in flight while alive.
struct InFlight(AppState);

impl InFlight {
    fn new(state: &AppState) -> InFlight {
        state
            .0
            .in_flight
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        InFlight(state.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0
             .0
            .in_flight
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Runs `work` on a blocking thread (the HTTP workers never block on a
/// search) under the request deadline: past it, 504 (the search itself
/// runs to its end, holding its slot, but nobody waits for it).
async fn run_blocking<T: Send + 'static>(
    state: &AppState,
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let timeout = state.limits().timeout;
    let task = tokio::task::spawn_blocking(work);
    match tokio::time::timeout(timeout, task).await {
        Ok(Ok(r)) => r,
        Ok(Err(join)) => Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            format!("the query failed: {join}"),
        )),
        Err(_) => Err(ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            "timeout",
            format!(
                "the query took longer than {:.3} s (--timeout)",
                timeout.as_secs_f64()
            ),
        )),
    }
}

/// Counts an error answer in the metrics and returns it.
fn counted(state: &AppState, e: ApiError) -> Response {
    state.0.metrics.error(e.kind);
    e.into_response()
}

#[allow(clippy::too_many_arguments)]
fn build_query(
    patterns: &[String],
    syntax: SyntaxName,
    fuzzy_k: Option<u8>,
    ignore_case: bool,
    word: bool,
    line: bool,
    invert: bool,
    ready: &Ready,
) -> Result<Query, ApiError> {
    if patterns.is_empty() {
        return Err(ApiError::bad_request(
            "invalid_query",
            "`patterns` is empty: give at least one pattern",
        ));
    }
    let syntax = match syntax {
        SyntaxName::Literal => Syntax::Fixed,
        SyntaxName::Regex => Syntax::Regex,
        SyntaxName::Wildcard => Syntax::Wildcard,
        SyntaxName::Fuzzy => Syntax::Fuzzy(fuzzy_k.unwrap_or(1)),
    };
    QueryBuilder::new()
        .syntax(syntax)
        .case_insensitive(ignore_case)
        .word(word)
        .whole_line(line)
        .invert(invert)
        .cpu_multi(ready.session.tuning().cpu_multi)
        .build(patterns)
        .map_err(ApiError::from_lib)
}

fn route_name(r: &Route) -> String {
    r.backend.to_string()
}

fn backend_info(route: &Route, report: &logsieve::BackendReport, explain: bool) -> BackendInfo {
    BackendInfo {
        name: report.name.clone(),
        reason: report.reason.clone(),
        route: route_name(route),
        route_reason: route.reason.clone(),
        forced: route.forced,
        elapsed_ms: report.elapsed.as_secs_f64() * 1e3,
        explain: explain.then(|| {
            route
                .decision
                .as_ref()
                .map_or_else(|| route.reason.clone(), |d| d.explain())
        }),
    }
}

/// A time spec resolved against the newest line, or 400.
fn window(ready: &Ready, spec: Option<&str>, name: &str) -> Result<Option<i64>, ApiError> {
    let Some(s) = spec else { return Ok(None) };
    let t = TimeSpec::parse(s)
        .map_err(|e| ApiError::bad_request("invalid_time", format!("{name}: {e}")))?;
    let newest = ready
        .session
        .columns()
        .and_then(|c| c.newest())
        .unwrap_or(0);
    Ok(Some(t.resolve(newest)))
}

// ---------------------------------------------------------------- search

/// A search answered: what the stream encoder needs.
struct Searched {
    query: Query,
    result: SearchResult,
    route: Route,
    /// Documents searched, in corpus order.
    docs: Vec<usize>,
}

fn run_search(ready: &Ready, req: &SearchRequest, threads: usize) -> Result<Searched, ApiError> {
    let query = build_query(
        &req.patterns,
        req.syntax,
        req.fuzzy_k,
        req.ignore_case,
        req.word,
        req.line,
        req.invert,
        ready,
    )?;
    let corpus = ready.session.corpus();
    let docs: Vec<usize> = match &req.files {
        None => (0..corpus.docs().len()).collect(),
        Some(names) => {
            let mut docs = Vec::new();
            for n in names {
                match corpus.docs().iter().position(|d| d.name() == n) {
                    Some(i) => docs.push(i),
                    None => {
                        return Err(ApiError::bad_request(
                            "unknown_file",
                            format!("files: {n:?} is not served (GET /api/v1/health counts the files; names are as loaded)"),
                        ))
                    }
                }
            }
            docs.sort_unstable();
            docs.dedup();
            docs
        }
    };
    let since = window(ready, req.since.as_deref(), "since")?;
    let until = window(ready, req.until.as_deref(), "until")?;
    let windowed = since.is_some() || until.is_some();
    let counting = matches!(req.output, OutputKind::Count | OutputKind::FilesWithMatches);
    let max_count = match req.output {
        OutputKind::FilesWithMatches => Some(req.max_count.map_or(1, |m| m.min(1))),
        _ => req.max_count,
    };
    let opts = SearchOptions {
        backend: req.backend.choice(),
        threads,
        // A window selects lines by their times: line ids are needed.
        want: if counting && !windowed {
            Want::Count
        } else {
            Want::Lines
        },
        // Under a window, -m applies to the lines in the window.
        max_count: if windowed { None } else { max_count },
        explain: req.explain,
        ..Default::default()
    };
    let request = Request::Search(&query);
    let route = ready
        .session
        .route(&request, &opts)
        .map_err(ApiError::from_lib)?;
    let mut result = match ready
        .session
        .execute(&request, &route, &opts)
        .map_err(ApiError::from_lib)?
    {
        Answer::Search(r) => r,
        _ => {
            return Err(ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "a search was not answered by a search result",
            ))
        }
    };
    if windowed {
        let cols = ready.session.columns();
        let q = StatsQuery {
            since,
            until,
            ..Default::default()
        };
        for (d, hits) in result.docs.iter_mut().enumerate() {
            let times = cols.map(|c| &c.docs()[d].times[..]).unwrap_or(&[]);
            hits.lines
                .retain(|&l| times.get(l as usize).is_some_and(|&t| q.in_window(t)));
            if let Some(m) = max_count {
                hits.lines.truncate(m.min(usize::MAX as u64) as usize);
            }
            hits.count = hits.lines.len() as u64;
        }
    }
    // Files not asked for count as not searched.
    for (d, hits) in result.docs.iter_mut().enumerate() {
        if docs.binary_search(&d).is_err() {
            hits.count = 0;
            hits.lines.clear();
        }
    }
    Ok(Searched {
        query,
        result,
        route,
        docs,
    })
}

/// Searches the served files.
///
/// `lines` streams NDJSON in ripgrep's `--json` schema (`begin`, `match`,
/// `context`, `end`, `summary`; byte for byte what `logsieve search --json`
/// prints for the same query when no `limit`/`cursor`/context is given).
/// Response headers: `x-logsieve-backend`, `x-logsieve-total` (selected
/// lines), `x-logsieve-next-cursor` (when a `limit` left lines over). A
/// client that disconnects stops the stream.
#[utoipa::path(
    post,
    path = "/api/v1/search",
    request_body = SearchRequest,
    responses(
        (status = 200, description = "`lines`/`only_matching`: NDJSON (application/x-ndjson), one object per line; `count`: CountResponse; `files_with_matches`: FilesResponse", body = CountResponse),
        (status = 400, description = "bad JSON, invalid pattern (with the caret), unknown file, bad time", body = ErrorBody),
        (status = 413, description = "request body too large", body = ErrorBody),
        (status = 422, description = "unknown field or wrong type; a forced backend that cannot run the query", body = ErrorBody),
        (status = 429, description = "too many queries in flight", body = ErrorBody),
        (status = 503, description = "still loading", body = ErrorBody),
        (status = 504, description = "past the deadline (--timeout)", body = ErrorBody),
    )
)]
pub async fn search(
    State(state): State<AppState>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    match search_inner(&state, body).await {
        Ok(r) => r,
        Err(e) => counted(&state, e),
    }
}

async fn search_inner(
    state: &AppState,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let req: SearchRequest = parse_body(body)?;
    let ready = ready(state)?;
    let permit = slot(state)?;
    let in_flight = InFlight::new(state);
    let t0 = Instant::now();
    let r2 = ready.clone();
    let req2 = req.clone();
    let threads = state.limits().threads;
    let searched = run_blocking(state, move || run_search(&r2, &req2, threads)).await?;
    state
        .0
        .metrics
        .query("search", &searched.result.backend.name, t0.elapsed());
    let info = backend_info(&searched.route, &searched.result.backend, req.explain);
    let corpus = ready.session.corpus();
    match req.output {
        OutputKind::Count => {
            let files = searched
                .docs
                .iter()
                .map(|&d| FileCount {
                    path: corpus.docs()[d].name().to_string(),
                    count: searched.result.docs[d].count,
                })
                .collect();
            Ok(Json(CountResponse {
                total: searched.result.total(),
                files,
                backend: info,
            })
            .into_response())
        }
        OutputKind::FilesWithMatches => {
            let files = searched
                .docs
                .iter()
                .filter(|&&d| searched.result.docs[d].count > 0)
                .map(|&d| corpus.docs()[d].name().to_string())
                .collect();
            Ok(Json(FilesResponse {
                files,
                backend: info,
            })
            .into_response())
        }
        OutputKind::Lines | OutputKind::OnlyMatching => {
            stream_lines(ready, searched, &req, t0, permit, in_flight)
        }
    }
}

/// Selected lines in corpus order, paged: `(doc, line)` pairs from the
/// cursor, at most `limit`, and the next cursor.
/// A page: `(document, line)` pairs and the next page's cursor.
type Page = (Vec<(usize, u64)>, Option<u64>);

fn page(s: &Searched, req: &SearchRequest) -> Result<Page, ApiError> {
    let skip = match req.cursor.as_deref() {
        None | Some("") => 0,
        Some(c) => c.parse::<u64>().map_err(|_| {
            ApiError::bad_request(
                "invalid_query",
                format!("cursor {c:?}: not a cursor this server gave"),
            )
        })?,
    };
    let limit = req.limit.unwrap_or(u64::MAX);
    let mut out = Vec::new();
    let mut seen = 0u64;
    let mut next = None;
    'docs: for &d in &s.docs {
        for &l in &s.result.docs[d].lines {
            if seen >= skip {
                if out.len() as u64 >= limit {
                    next = Some(seen);
                    break 'docs;
                }
                out.push((d, l));
            }
            seen += 1;
        }
    }
    Ok((out, next))
}

/// Header-safe: visible ASCII only.
fn header_text(s: &str) -> HeaderValue {
    let clean: String = s
        .chars()
        .map(|c| if (' '..='~').contains(&c) { c } else { '?' })
        .collect();
    HeaderValue::from_str(&clean).unwrap_or_else(|_| HeaderValue::from_static("?"))
}

/// The streamed answer: the encoder runs on a blocking thread and hands
/// ~64 KiB chunks to the response body through a small channel; when the
/// client goes away the body (and its receiver) is dropped, the next send
/// fails and the encoder stops.
fn stream_lines(
    ready: Arc<Ready>,
    searched: Searched,
    req: &SearchRequest,
    t0: Instant,
    permit: OwnedSemaphorePermit,
    in_flight: InFlight,
) -> Result<Response, ApiError> {
    let (lines, next) = page(&searched, req)?;
    let total = searched.result.total();
    let backend = searched.result.backend.name.clone();
    let (tx, rx) = tokio::sync::mpsc::channel::<Vec<u8>>(4);
    let only = req.output == OutputKind::OnlyMatching;
    let (before, after) = (req.before, req.after);
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let _in_flight = in_flight;
        let corpus = ready.session.corpus();
        let mut sink = ChunkSink {
            buf: Vec::with_capacity(CHUNK),
            tx,
        };
        let res = if only {
            write_only_matching(&mut sink, &searched, &lines, corpus)
        } else {
            write_rg_json(&mut sink, &searched, &lines, corpus, before, after, t0)
        };
        match res.and_then(|_| sink.flush()) {
            Ok(()) => {}
            Err(e) => tracing::debug!("stream stopped: {e}"),
        }
    });
    let body = Body::from_stream(futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|chunk| (Ok::<_, Infallible>(Bytes::from(chunk)), rx))
    }));
    let mut resp = Response::new(body);
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-ndjson"),
    );
    h.insert("x-logsieve-backend", header_text(&backend));
    h.insert("x-logsieve-total", HeaderValue::from(total));
    if let Some(n) = next {
        h.insert("x-logsieve-next-cursor", HeaderValue::from(n));
    }
    Ok(resp)
}

const CHUNK: usize = 64 << 10;

/// A `Write` that sends full chunks down the channel; a send that fails
/// (the client went away) is a `BrokenPipe` error, which stops the encoder.
struct ChunkSink {
    buf: Vec<u8>,
    tx: tokio::sync::mpsc::Sender<Vec<u8>>,
}

impl Write for ChunkSink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(b);
        if self.buf.len() >= CHUNK {
            self.flush()?;
        }
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK));
        self.tx
            .blocking_send(chunk)
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "client gone"))
    }
}

fn write_rg_json(
    out: &mut ChunkSink,
    s: &Searched,
    lines: &[(usize, u64)],
    corpus: &logsieve::Corpus,
    before: u64,
    after: u64,
    t0: Instant,
) -> std::io::Result<()> {
    let mut enc =
        RgJson::new(&s.query, corpus, s.result.backend.elapsed).with_context(before, after);
    let mut i = 0;
    for &d in &s.docs {
        enc.begin_doc(d);
        while i < lines.len() && lines[i].0 == d {
            enc.line(out, lines[i].1)?;
            i += 1;
        }
        enc.end_doc(out)?;
    }
    enc.summary(out, t0.elapsed())
}

fn write_only_matching(
    out: &mut ChunkSink,
    s: &Searched,
    lines: &[(usize, u64)],
    corpus: &logsieve::Corpus,
) -> std::io::Result<()> {
    let enc = RgJson::new(&s.query, corpus, Duration::ZERO);
    let mut matches = 0u64;
    for &(d, l) in lines {
        let doc = &corpus.docs()[d];
        let path = rg_json::data(doc.name().as_bytes());
        let start = doc.lines().line_range(l).start;
        for m in enc.submatches(doc.line(l)) {
            let v = serde_json::json!({
                "type": "only_match",
                "data": {
                    "path": path,
                    "line_number": l + 1,
                    "absolute_offset": start + m["start"].as_u64().unwrap_or(0),
                    "match": m["match"],
                    "patterns": m["patterns"],
                }
            });
            serde_json::to_writer(&mut *out, &v).map_err(std::io::Error::other)?;
            out.write_all(b"\n")?;
            matches += 1;
        }
    }
    let v = serde_json::json!({"type": "summary", "data": {"matched_lines": lines.len(), "matches": matches}});
    serde_json::to_writer(&mut *out, &v).map_err(std::io::Error::other)?;
    out.write_all(b"\n")
}

// ---------------------------------------------------------------- stats

/// Counts lines in a time window, optionally matching patterns, by field
/// and time bucket: the object `logsieve stats --json` prints (`selected`,
/// `since`, `until`, `oldest`, `newest`, `count_by`, `groups`,
/// `histogram`, `backend`).
#[utoipa::path(
    post,
    path = "/api/v1/stats",
    request_body = StatsRequest,
    responses(
        (status = 200, description = "the `logsieve stats --json` object", content_type = "application/json"),
        (status = 400, body = ErrorBody), (status = 413, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 429, body = ErrorBody), (status = 503, body = ErrorBody), (status = 504, body = ErrorBody),
    )
)]
pub async fn stats(State(state): State<AppState>, body: Result<Bytes, BytesRejection>) -> Response {
    let res = async {
        let req: StatsRequest = parse_body(body)?;
        let ready = ready(&state)?;
        let _permit = slot(&state)?;
        let _in_flight = InFlight::new(&state);
        let t0 = Instant::now();
        let (v, backend) = run_blocking(&state, move || run_stats(&ready, &req)).await?;
        state.0.metrics.query("stats", &backend, t0.elapsed());
        Ok::<_, ApiError>(Json(v).into_response())
    }
    .await;
    res.unwrap_or_else(|e| counted(&state, e))
}

fn run_stats(ready: &Ready, req: &StatsRequest) -> Result<(Value, String), ApiError> {
    let query = if req.patterns.is_empty() {
        None
    } else {
        Some(build_query(
            &req.patterns,
            req.syntax,
            req.fuzzy_k,
            req.ignore_case,
            req.word,
            false,
            req.invert,
            ready,
        )?)
    };
    let cols = ready.session.columns().ok_or_else(|| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "no stats columns",
        )
    })?;
    let mut q = StatsQuery {
        search: query.as_ref(),
        since: window(ready, req.since.as_deref(), "since")?,
        until: window(ready, req.until.as_deref(), "until")?,
        ..Default::default()
    };
    let names: Vec<&str> = req.count_by.iter().map(|s| s.as_str()).collect();
    q.count_by(cols, &names)
        .map_err(|e| ApiError::bad_request("unknown_field", e.to_string()))?;
    if let Some(h) = &req.histogram {
        match logsieve::pipeline::time::parse_duration(h.trim()) {
            Some(ms) if ms > 0 => q.histogram = Some(ms),
            _ => {
                return Err(ApiError::bad_request(
                    "invalid_time",
                    format!("histogram {h:?}: expected a positive duration (30s, 1m, 15m, 1h, 1d)"),
                ))
            }
        }
    }
    let opts = SearchOptions {
        backend: req.backend.choice(),
        want: Want::Count,
        ..Default::default()
    };
    let (s, report) = ready.session.stats(&q, &opts).map_err(ApiError::from_lib)?;
    Ok((
        stats_json(cols, &q, &s, &req.count_by, &report.name),
        report.name,
    ))
}

// ---------------------------------------------------------------- patterns

/// Per-pattern lines and occurrences (`--count-per-pattern`): each pattern
/// counted as if searched alone.
#[utoipa::path(
    post,
    path = "/api/v1/patterns",
    request_body = PatternsRequest,
    responses(
        (status = 200, body = PatternsResponse),
        (status = 400, body = ErrorBody), (status = 413, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 429, body = ErrorBody), (status = 503, body = ErrorBody), (status = 504, body = ErrorBody),
    )
)]
pub async fn patterns(
    State(state): State<AppState>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let res = async {
        let req: PatternsRequest = parse_body(body)?;
        let ready = ready(&state)?;
        let _permit = slot(&state)?;
        let _in_flight = InFlight::new(&state);
        let t0 = Instant::now();
        let resp = run_blocking(&state, move || run_patterns(&ready, &req)).await?;
        state
            .0
            .metrics
            .query("patterns", &resp.backend.name, t0.elapsed());
        Ok::<_, ApiError>(Json(resp).into_response())
    }
    .await;
    res.unwrap_or_else(|e| counted(&state, e))
}

fn run_patterns(ready: &Ready, req: &PatternsRequest) -> Result<PatternsResponse, ApiError> {
    let query = build_query(
        &req.patterns,
        req.syntax,
        req.fuzzy_k,
        req.ignore_case,
        req.word,
        req.line,
        false,
        ready,
    )?;
    let opts = SearchOptions {
        backend: req.backend.choice(),
        ..Default::default()
    };
    let request = Request::PatternCounts(&query);
    let route = ready
        .session
        .route(&request, &opts)
        .map_err(ApiError::from_lib)?;
    let c = match ready
        .session
        .execute(&request, &route, &opts)
        .map_err(ApiError::from_lib)?
    {
        Answer::PatternCounts(c) => c,
        _ => {
            return Err(ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "a per-pattern request was not answered by counts",
            ))
        }
    };
    let rows = (0..c.patterns.len())
        .filter(|&i| !req.only_matched || c.lines[i] > 0)
        .map(|i| PatternRow {
            index: i,
            pattern: rg_json::data(&c.patterns[i]),
            lines: c.lines[i],
            occurrences: c.occurrences[i],
        })
        .collect();
    Ok(PatternsResponse {
        patterns: rows,
        patterns_total: c.patterns.len(),
        patterns_matched: c.matched().len(),
        backend: backend_info(&route, &c.backend, false),
    })
}
