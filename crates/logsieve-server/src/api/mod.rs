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
use logsieve::rg_json::{self, RgJson};
use logsieve::session::Route;
use logsieve::stats::{json::stats_json, StatsQuery, TimeSpec};
use logsieve::{
    Answer, BackendChoice, Cancel, Query, QueryBuilder, Request, SearchOptions, SearchResult,
    Syntax, Want,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::OwnedSemaphorePermit;
use utoipa::{OpenApi, ToSchema};

use crate::error::{ApiError, ErrorBody};
use crate::state::{AppState, Ready, ReadyRef};

#[cfg(feature = "cluster")]
pub mod cluster;
mod health;
mod patterns;
mod search;
#[cfg(feature = "sql")]
pub mod sql;
mod stats;
pub mod tail;
mod templates;
mod types;
pub mod watchlists;

pub use health::{health, metrics, openapi, FollowHealth, Health};
pub use patterns::patterns;
pub use search::search;
pub use stats::stats;
pub use tail::{tail, TailRequest};
pub use templates::{templates, TemplateRow, TemplatesRequest, TemplatesResponse};
pub use types::*;

/// The OpenAPI 3 document's info and schemas (`GET /api/v1/openapi.json`);
/// its paths come from the routes themselves ([`routes`]).
#[derive(OpenApi)]
#[openapi(
    info(
        title = "logsieve serve",
        description = "A log corpus loaded once and searched many times: lines as NDJSON in ripgrep's --json schema, counts, stats and per-pattern counts as JSON. With --token-file every route needs `Authorization: Bearer TOKEN`. In front of a cluster (`serve --cluster`) health, search (without context lines, wildcard or fuzzy syntax), stats and sql are answered from the workers; every other route answers 501 `not_over_cluster`, and a shard no live worker holds 503 `cluster_unavailable`."
    ),
    components(schemas(
        Health,
        FollowHealth,
        SearchRequest,
        SyntaxName,
        OutputKind,
        BackendName,
        CountResponse,
        FileCount,
        BackendInfo,
        FilesResponse,
        SearchJson,
        StatsRequest,
        PatternsRequest,
        PatternsResponse,
        PatternRow,
        TemplatesRequest,
        TemplatesResponse,
        TemplateRow,
        TailRequest,
        watchlists::WatchlistRequest,
        watchlists::WatchlistInfo,
        watchlists::WatchlistsResponse,
        ErrorBody,
        crate::error::ErrorDetail
    ))
)]
pub struct ApiDoc;

/// The `/api/v1` routes and `/metrics`, and the OpenAPI document made from
/// the same list of handlers (each with its `#[utoipa::path]`): a route
/// is served and documented, or neither.
pub fn routes() -> (axum::Router<AppState>, utoipa::openapi::OpenApi) {
    use utoipa_axum::{router::OpenApiRouter, routes};
    let r = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(health::health))
        .routes(routes!(search::search))
        .routes(routes!(stats::stats))
        .routes(routes!(patterns::patterns))
        .routes(routes!(templates::templates))
        .routes(routes!(tail::tail))
        .routes(routes!(health::openapi))
        .routes(routes!(health::metrics))
        .merge(watchlists::routes());
    #[cfg(feature = "sql")]
    let r = r.routes(routes!(sql::sql));
    r.split_for_parts()
}

/// The document [`routes`] made, as served (made once).
pub(crate) fn document() -> &'static Result<String, String> {
    static DOC: std::sync::OnceLock<Result<String, String>> = std::sync::OnceLock::new();
    DOC.get_or_init(|| routes().1.to_json().map_err(|e| e.to_string()))
}

// ---------------------------------------------------------------- plumbing

/// Parses a JSON body: malformed JSON is 400 `bad_json`, a well-formed
/// body of the wrong shape (not an object, an unknown field, a wrong
/// type) 422 `invalid_request`, a body over the limit 413.
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
    // Every request body is a JSON object; serde's derived structs would
    // also take an array of their fields in order (`[]`: every default).
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if first.is_some_and(|&b| b == b'[') {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
            "the body is a JSON object of the request's fields, not an array",
        ));
    }
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
fn ready(state: &AppState) -> Result<ReadyRef, ApiError> {
    #[cfg(feature = "cluster")]
    if state.front().is_some() {
        return Err(cluster::not_here("this route"));
    }
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
pub(crate) fn slot(state: &AppState) -> Result<OwnedSemaphorePermit, ApiError> {
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

/// What a running query holds: its slot and its place in the in-flight
/// gauge. The blocking work owns it, so both are given back when the
/// search stops — at its end, or as soon as its cancel token stops it.
pub(crate) struct Held {
    _permit: OwnedSemaphorePermit,
    _in_flight: InFlight,
}

/// A slot (or 429) and the in-flight count, for one query.
pub(crate) fn hold(state: &AppState) -> Result<Held, ApiError> {
    Ok(Held {
        _permit: slot(state)?,
        _in_flight: InFlight::new(state),
    })
}

/// Runs `work` on a blocking thread (the HTTP workers never block on a
/// search) under the request deadline, with `cancel`, the request's
/// token: the handler's guard fires it when the client hangs up (hyper
/// drops the handler), and the deadline fires it here, answering 504.
/// The search stops at the engine's next look at the token and only then
/// gives `held` back (returned with the answer otherwise: a stream keeps
/// its slot while it encodes). A search stopped by the token is counted
/// as `logsieve_errors_total{kind="cancelled"}`.
pub(crate) async fn run_blocking<T: Send + 'static>(
    state: &AppState,
    cancel: &Cancel,
    held: Held,
    work: impl FnOnce(&Cancel) -> Result<T, ApiError> + Send + 'static,
) -> Result<(T, Held), ApiError> {
    let timeout = state.limits().timeout;
    let token = cancel.clone();
    let st = state.clone();
    let task = tokio::task::spawn_blocking(move || {
        let r = work(&token);
        if matches!(&r, Err(e) if e.kind == "cancelled") {
            st.0.metrics.error("cancelled");
        }
        r.map(|v| (v, held))
    });
    match tokio::time::timeout(timeout, task).await {
        Ok(Ok(r)) => r,
        Ok(Err(join)) => Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            format!("the query failed: {join}"),
        )),
        Err(_) => Err({
            cancel.cancel();
            ApiError::new(
                StatusCode::GATEWAY_TIMEOUT,
                "timeout",
                format!(
                    "the query took longer than {:.3} s (--timeout)",
                    timeout.as_secs_f64()
                ),
            )
        }),
    }
}

/// Counts an error answer in the metrics and returns it.
fn counted(state: &AppState, e: ApiError) -> Response {
    state.0.metrics.error(e.kind);
    e.into_response()
}

/// `fuzzy_k` past 3 is refused whether or not a query is built from it
/// (stats without patterns built none and accepted any value; REGRESSION:
/// schemathesis ST201, a value the document rules out was accepted).
fn check_fuzzy_k(k: Option<u8>) -> Result<(), ApiError> {
    match k {
        Some(k) if k > 3 => Err(ApiError::bad_request(
            "invalid_query",
            format!("`fuzzy_k` is {k}: at most 3 edits"),
        )),
        _ => Ok(()),
    }
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
    cpu_multi: logsieve::CpuMulti,
) -> Result<Query, ApiError> {
    if patterns.is_empty() {
        return Err(ApiError::bad_request(
            "invalid_query",
            "`patterns` is empty: give at least one pattern",
        ));
    }
    check_fuzzy_k(fuzzy_k)?;
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
        .cpu_multi(cpu_multi)
        .build(patterns)
        .map_err(ApiError::from_lib)
}

/// [`build_query`] through the session's [`crate::state::QueryCache`]:
/// a request asked before gets the query built then (a regex's parse and
/// compile were most of a resident GPU count's server time).
#[allow(clippy::too_many_arguments)]
fn build_query_shared(
    patterns: &[String],
    syntax: SyntaxName,
    fuzzy_k: Option<u8>,
    ignore_case: bool,
    word: bool,
    line: bool,
    invert: bool,
    ready: &Ready,
) -> Result<Arc<Query>, ApiError> {
    // Every field the query depends on; patterns length-prefixed, so no
    // two requests share a key.
    let mut key = format!("{syntax:?} {fuzzy_k:?} {ignore_case} {word} {line} {invert}");
    for p in patterns {
        key.push_str(&format!(" {}:{p}", p.len()));
    }
    ready.queries.get_or_build(key, || {
        build_query(
            patterns,
            syntax,
            fuzzy_k,
            ignore_case,
            word,
            line,
            invert,
            ready.session.tuning().cpu_multi,
        )
    })
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

/// A time spec (`since`, `until`) as given, or 400.
fn time_spec(spec: Option<&str>, name: &str) -> Result<Option<TimeSpec>, ApiError> {
    // An empty bound is no bound, as an omitted one (forms and clients
    // send `until=""`; REGRESSION: the API fuzzer's 400 on a valid body).
    let Some(s) = spec.filter(|s| !s.trim().is_empty()) else {
        return Ok(None);
    };
    TimeSpec::parse(s)
        .map(Some)
        .map_err(|e| ApiError::bad_request("invalid_time", format!("{name}: {e}")))
}

/// A time spec resolved against the newest line, or 400.
fn window(ready: &Ready, spec: Option<&str>, name: &str) -> Result<Option<i64>, ApiError> {
    let Some(t) = time_spec(spec, name)? else {
        return Ok(None);
    };
    let newest = ready
        .session
        .columns()
        .and_then(|c| c.newest())
        .unwrap_or(0);
    Ok(Some(t.resolve(newest)))
}
