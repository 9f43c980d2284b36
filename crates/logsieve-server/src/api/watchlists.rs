//! `/api/v1/watchlists`: literal sets (IOC lists) compiled once in the
//! session ([`logsieve::Session::define_watchlist`]: the CPU counter and
//! the GPU tables), then named by `POST /api/v1/patterns` and
//! `/api/v1/search` with `"watchlist": "NAME"` instead of `patterns`.

use axum::extract::Path;
use logsieve::watchlist::{MAX_PATTERNS, MAX_PATTERN_BYTES};
use logsieve::{Watchlist, WatchlistOptions};

use super::*;

/// The largest `PUT` body: 100,000 patterns of ~100 bytes, JSON-quoted
/// (the other routes keep `--max-body`).
pub const MAX_WATCHLIST_BODY: usize = 16 << 20;

/// Watchlists a server holds at most (each keeps its tables on the GPU).
pub const MAX_WATCHLISTS: usize = 64;

/// `PUT /api/v1/watchlists/NAME`.
#[derive(Deserialize, ToSchema, Clone, Debug)]
#[serde(deny_unknown_fields)]
pub struct WatchlistRequest {
    /// The literal patterns, 1 to 100,000, each 1 to 1024 bytes without
    /// a line break (duplicates are allowed and counted alike).
    pub patterns: Vec<String>,
    /// `-i`: ASCII case folding (every pattern ASCII).
    #[serde(default)]
    pub ignore_case: bool,
}

/// A watchlist as the server holds it.
#[derive(Serialize, ToSchema)]
pub struct WatchlistInfo {
    /// Its name.
    pub name: String,
    /// Patterns in it.
    pub patterns: usize,
    /// Distinct patterns (after case folding under `ignore_case`).
    pub distinct: usize,
    /// `-i`.
    pub ignore_case: bool,
    /// Host time its compilation took, ms (GPU tables not included).
    pub build_ms: f64,
    /// GPU tables uploaded and kept for it (one per device and kernel).
    pub gpu_tables: usize,
    /// The patterns, in order (`GET` of one watchlist only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub list: Option<Vec<Value>>,
}

impl WatchlistInfo {
    fn of(w: &Watchlist, with_list: bool) -> WatchlistInfo {
        WatchlistInfo {
            name: w.name().to_string(),
            patterns: w.patterns().len(),
            distinct: w.distinct(),
            ignore_case: w.options().ignore_case,
            build_ms: w.build_time().as_secs_f64() * 1e3,
            gpu_tables: w.gpu_tables_uploaded(),
            list: with_list.then(|| w.patterns().iter().map(|p| rg_json::data(p)).collect()),
        }
    }
}

/// `GET /api/v1/watchlists`.
#[derive(Serialize, ToSchema)]
pub struct WatchlistsResponse {
    /// Every watchlist, by name (without their patterns).
    pub watchlists: Vec<WatchlistInfo>,
}

/// Watchlist `name` of the session, or 404 `unknown_watchlist`.
pub(crate) fn find(ready: &Ready, name: &str) -> Result<Arc<Watchlist>, ApiError> {
    ready.session.watchlist(name).ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "unknown_watchlist",
            format!("no watchlist {name:?} (PUT /api/v1/watchlists/{name} defines it)"),
        )
    })
}

/// 400 when a request names a watchlist and also sets what the watchlist
/// fixes (`set` names the fields set).
pub(crate) fn exclusive(set: &[(&str, bool)]) -> Result<(), ApiError> {
    let given: Vec<&str> = set.iter().filter(|f| f.1).map(|f| f.0).collect();
    if given.is_empty() {
        return Ok(());
    }
    Err(ApiError::bad_request(
        "invalid_request",
        format!(
            "`watchlist` fixes the patterns and their options: drop {}",
            given.join(", ")
        ),
    ))
}

/// Defines (or replaces) a watchlist: its patterns are compiled once, and
/// uploaded to the GPU when per-pattern counts run there. 201 when new,
/// 200 when it replaced one.
#[utoipa::path(
    put,
    path = "/api/v1/watchlists/{name}",
    params(("name" = String, Path, description = "1-64 characters of A-Z a-z 0-9 . _ -")),
    request_body = WatchlistRequest,
    responses(
        (status = 201, description = "defined", body = WatchlistInfo),
        (status = 200, description = "replaced", body = WatchlistInfo),
        (status = 400, description = "bad JSON or name, no pattern, an empty pattern or one with a line break, -i with a non-ASCII pattern", body = ErrorBody),
        (status = 409, description = "64 watchlists defined already", body = ErrorBody),
        (status = 413, description = "more than 100,000 patterns, a pattern over 1024 bytes, or a body over 16 MiB", body = ErrorBody),
        (status = 422, description = "unknown field or wrong type", body = ErrorBody),
        (status = 503, body = ErrorBody), (status = 504, body = ErrorBody),
    )
)]
pub async fn put_watchlist(
    State(state): State<AppState>,
    Path(name): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let res = async {
        let req: WatchlistRequest = parse_body(body)?;
        let ready = ready(&state)?;
        logsieve::watchlist::check_name(&name).map_err(ApiError::from_lib)?;
        if req.patterns.len() > MAX_PATTERNS {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "too_many_patterns",
                format!(
                    "a watchlist holds at most {MAX_PATTERNS} patterns (got {})",
                    req.patterns.len()
                ),
            ));
        }
        if let Some(i) = req
            .patterns
            .iter()
            .position(|p| p.len() > MAX_PATTERN_BYTES)
        {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "pattern_too_long",
                format!("pattern {i} is longer than {MAX_PATTERN_BYTES} bytes"),
            ));
        }
        if ready.session.watchlist(&name).is_none()
            && ready.session.watchlists().len() >= MAX_WATCHLISTS
        {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                "too_many_watchlists",
                format!("{MAX_WATCHLISTS} watchlists are defined: DELETE one first"),
            ));
        }
        let held = hold(&state)?;
        let opts = WatchlistOptions {
            ignore_case: req.ignore_case,
            cpu_multi: ready.session.tuning().cpu_multi,
        };
        // Building the tables is not cancelled (the watchlist is kept for
        // later requests); the token only ends the wait past the deadline.
        let cancel = Cancel::new();
        let _guard = cancel.on_drop();
        // The blocking task hands back plain data, not the watchlist.
        let ((info, replaced), _held) = run_blocking(&state, &cancel, held, move |_| {
            ready
                .session
                .define_watchlist(&name, &req.patterns, opts)
                .map(|(w, replaced)| (WatchlistInfo::of(&w, false), replaced))
                .map_err(ApiError::from_lib)
        })
        .await?;
        let status = if replaced {
            StatusCode::OK
        } else {
            StatusCode::CREATED
        };
        Ok::<_, ApiError>((status, Json(info)).into_response())
    }
    .await;
    res.unwrap_or_else(|e| counted(&state, e))
}

/// One watchlist, with its patterns.
#[utoipa::path(
    get,
    path = "/api/v1/watchlists/{name}",
    params(("name" = String, Path, description = "the watchlist")),
    responses((status = 200, body = WatchlistInfo), (status = 404, body = ErrorBody), (status = 503, body = ErrorBody))
)]
pub async fn get_watchlist(State(state): State<AppState>, Path(name): Path<String>) -> Response {
    ready(&state)
        .and_then(|r| find(&r, &name))
        .map(|w| Json(WatchlistInfo::of(&w, true)).into_response())
        .unwrap_or_else(|e| counted(&state, e))
}

/// Forgets a watchlist (and its GPU tables).
#[utoipa::path(
    delete,
    path = "/api/v1/watchlists/{name}",
    params(("name" = String, Path, description = "the watchlist")),
    responses((status = 204, description = "deleted"), (status = 404, body = ErrorBody), (status = 503, body = ErrorBody))
)]
pub async fn delete_watchlist(State(state): State<AppState>, Path(name): Path<String>) -> Response {
    ready(&state)
        .and_then(|r| match r.session.remove_watchlist(&name) {
            true => Ok(StatusCode::NO_CONTENT.into_response()),
            false => find(&r, &name).map(|_| StatusCode::NO_CONTENT.into_response()),
        })
        .unwrap_or_else(|e| counted(&state, e))
}

/// Every watchlist (without their patterns).
#[utoipa::path(
    get,
    path = "/api/v1/watchlists",
    responses((status = 200, body = WatchlistsResponse), (status = 503, body = ErrorBody))
)]
pub async fn list_watchlists(State(state): State<AppState>) -> Response {
    ready(&state)
        .map(|r| {
            Json(WatchlistsResponse {
                watchlists: r
                    .session
                    .watchlists()
                    .iter()
                    .map(|w| WatchlistInfo::of(w, false))
                    .collect(),
            })
            .into_response()
        })
        .unwrap_or_else(|e| counted(&state, e))
}

/// The routes, with their own body limit ([`MAX_WATCHLIST_BODY`]).
pub fn routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    use utoipa_axum::{router::OpenApiRouter, routes};
    OpenApiRouter::new().routes(routes!(list_watchlists)).merge(
        OpenApiRouter::new()
            .routes(routes!(put_watchlist, get_watchlist, delete_watchlist))
            .layer(axum::extract::DefaultBodyLimit::max(MAX_WATCHLIST_BODY)),
    )
}
