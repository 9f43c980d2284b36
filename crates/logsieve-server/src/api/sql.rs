//! `POST /api/v1/sql`: SQL over the resident corpus (`logsieve_sql`).
//!
//! Queries only (no DDL, DML or `SET`: `CREATE EXTERNAL TABLE` cannot
//! read the server's files), under DataFusion's memory pool, a row cap,
//! the server's timeout and its query slots. Filters the engine answers
//! run on the resident corpus (the GPU when it is there).

use super::*;
use logsieve_sql::{SqlEngine, SqlLimits};

/// The longest query text taken (bytes).
pub const MAX_QUERY_BYTES: usize = 65_536;

/// The most rows one answer holds.
pub const MAX_ROWS: usize = 1_000_000;

/// The rows an answer holds by default.
pub const DEFAULT_ROWS: usize = 10_000;

/// DataFusion's memory pool per query (sorts, joins, aggregates).
pub const MEMORY: usize = 4 << 30;

/// The answer's encoding.
#[derive(Clone, Copy, Debug, Default, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SqlFormat {
    /// `{"columns": [...], "rows": [{...}], ...}`.
    #[default]
    Json,
    /// An Arrow IPC stream (`application/vnd.apache.arrow.stream`);
    /// `x-logsieve-truncated: true` when the row cap cut it.
    Arrow,
}

/// A SQL query over the table `logs` (file, line_number, byte_offset,
/// time, level, host, the served `--field`s, line, line_bytes) and the
/// watchlists' tables `watchlist_<name>(idx, pattern)`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SqlRequest {
    /// One SQL statement (a query).
    #[schema(min_length = 1, max_length = 65536)]
    pub query: String,
    /// `json` (default) or `arrow`.
    #[serde(default)]
    pub format: SqlFormat,
    /// Rows kept (default 10000, at most 1000000); more are cut and
    /// `truncated` says so.
    #[schema(minimum = 1, maximum = 1000000)]
    pub max_rows: Option<usize>,
}

/// A column of the answer.
#[derive(Serialize, ToSchema)]
pub struct SqlColumn {
    /// Its name.
    pub name: String,
    /// Its Arrow type, as DataFusion prints it (`Utf8`, `Int64`,
    /// `Timestamp(ms, "UTC")`).
    pub r#type: String,
}

/// The answer to a SQL query (`format: json`).
#[derive(Serialize, ToSchema)]
pub struct SqlResponse {
    /// The columns, in order.
    pub columns: Vec<SqlColumn>,
    /// The rows, each an object of column name to value (JSON's
    /// encoding of Arrow's: timestamps as RFC 3339 text, binary as hex).
    #[schema(value_type = Vec<Object>)]
    pub rows: Value,
    /// Rows returned.
    pub row_count: usize,
    /// More rows came than `max_rows`.
    pub truncated: bool,
    /// Time the query took, in ms.
    pub elapsed_ms: f64,
}

/// The source of the `logs` table: the served session, as it is when a
/// scan starts (a weak link: the state owns the engine).
struct Served(std::sync::Weak<crate::state::Inner>);

impl std::fmt::Debug for Served {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("served corpus")
    }
}

struct Held(ReadyRef);

impl logsieve_sql::Snapshot for Held {
    fn session(&self) -> &logsieve::Session {
        &self.0.session
    }
}

impl logsieve_sql::Source for Served {
    fn snapshot(&self) -> Result<Arc<dyn logsieve_sql::Snapshot>, String> {
        let state = AppState(self.0.upgrade().ok_or("the server is stopping")?);
        let ready = state.ready().ok_or("the corpus is still loading")?;
        Ok(Arc::new(Held(ready)))
    }
}

/// The server's engine (made once: DataFusion's function registry and
/// the tables), over the served session.
fn engine(state: &AppState) -> Result<Arc<SqlEngine>, ApiError> {
    state
        .0
        .sql
        .get_or_init(|| {
            let threads = state.limits().threads;
            let opts = SearchOptions {
                threads,
                ..Default::default()
            };
            let limits = SqlLimits::server(MEMORY, DEFAULT_ROWS, threads);
            let source = Arc::new(Served(Arc::downgrade(&state.0)));
            SqlEngine::new(source, opts, limits).map(Arc::new)
        })
        .clone()
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e))
}

/// The runtime SQL queries run on (DataFusion's operators), beside the
/// server's HTTP workers.
fn runtime() -> Result<&'static tokio::runtime::Runtime, ApiError> {
    static RT: std::sync::OnceLock<Result<tokio::runtime::Runtime, String>> =
        std::sync::OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .thread_name("logsieve-sql")
            .enable_time()
            .build()
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.clone()))
}

/// Runs one SQL query (a query, not a statement) over the served corpus:
/// JSON rows, or an Arrow IPC stream with `format: arrow`. A SQL error
/// (syntax, an unknown column, a type) is 400 `invalid_sql` with
/// DataFusion's message; a query over the memory pool is 400 too.
#[utoipa::path(
    post,
    path = "/api/v1/sql",
    request_body = SqlRequest,
    responses(
        (status = 200, body = SqlResponse, description = "rows (JSON), or an Arrow IPC stream with `format: arrow` (content type `application/vnd.apache.arrow.stream`)"),
        (status = 400, body = ErrorBody), (status = 413, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 429, body = ErrorBody), (status = 503, body = ErrorBody), (status = 504, body = ErrorBody),
    )
)]
pub async fn sql(State(state): State<AppState>, body: Result<Bytes, BytesRejection>) -> Response {
    let res = async {
        let req: SqlRequest = parse_body(body)?;
        if req.query.trim().is_empty() {
            return Err(ApiError::bad_request("invalid_sql", "the query is empty"));
        }
        if req.query.len() > MAX_QUERY_BYTES {
            return Err(ApiError::bad_request(
                "invalid_sql",
                format!("the query has {} bytes, more than {MAX_QUERY_BYTES}", req.query.len()),
            ));
        }
        let max_rows = req.max_rows.unwrap_or(DEFAULT_ROWS);
        if !(1..=MAX_ROWS).contains(&max_rows) {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_request",
                format!("max_rows {max_rows}: between 1 and {MAX_ROWS}"),
            ));
        }
        #[cfg(feature = "cluster")]
        if let Some(f) = state.front() {
            let _held = hold(&state)?;
            let t0 = Instant::now();
            let timeout = state.limits().timeout;
            let answer = match tokio::time::timeout(timeout, f.engine().query_capped(&req.query, Some(max_rows))).await {
                Err(_) => return Err(ApiError::new(StatusCode::GATEWAY_TIMEOUT, "timeout", format!("the query took longer than {:.3} s (--timeout)", timeout.as_secs_f64()))),
                Ok(Err(e)) => {
                    // A cluster that cannot place every shard is 503; the
                    // rest is the query's own error.
                    return Err(match f.engine().cluster().placement().await {
                        Err(p) => ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "cluster_unavailable", p),
                        Ok(_) => ApiError::bad_request("invalid_sql", e),
                    });
                }
                Ok(Ok(a)) => a,
            };
            state.0.metrics.query("sql", "cluster", t0.elapsed());
            return respond(&answer, req.format, t0.elapsed());
        }
        let _ready = ready(&state)?;
        let engine = engine(&state)?;
        let held = hold(&state)?;
        let cancel = Cancel::new();
        let _guard = cancel.on_drop();
        let t0 = Instant::now();
        let (answer, _held) = run_blocking(&state, &cancel, held, move |c| {
            let c = c.clone();
            runtime()?.block_on(async move {
                let watch = async {
                    while !c.is_cancelled() {
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                };
                tokio::select! {
                    r = engine.query_capped(&req.query, Some(max_rows)) => r.map_err(|e| ApiError::bad_request("invalid_sql", e)),
                    _ = watch => Err(ApiError::new(StatusCode::GATEWAY_TIMEOUT, "cancelled", "the query was cancelled")),
                }
            })
        })
        .await?;
        let elapsed = t0.elapsed();
        state.0.metrics.query("sql", "sql", elapsed);
        respond(&answer, req.format, elapsed)
    }
    .await;
    res.unwrap_or_else(|e| counted(&state, e))
}

/// The answer in the request's format.
fn respond(
    answer: &logsieve_sql::Answer,
    format: SqlFormat,
    elapsed: Duration,
) -> Result<Response, ApiError> {
    match format {
        SqlFormat::Arrow => {
            let mut out = Vec::new();
            logsieve_sql::format::write(&mut out, answer, logsieve_sql::format::Format::Arrow)
                .map_err(|e| {
                    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string())
                })?;
            let mut r = (StatusCode::OK, out).into_response();
            let h = r.headers_mut();
            h.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/vnd.apache.arrow.stream"),
            );
            h.insert(
                "x-logsieve-truncated",
                HeaderValue::from_static(if answer.truncated { "true" } else { "false" }),
            );
            Ok(r)
        }
        SqlFormat::Json => {
            let mut out = Vec::new();
            logsieve_sql::format::write(&mut out, answer, logsieve_sql::format::Format::Json)
                .map_err(|e| {
                    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string())
                })?;
            let rows: Value = serde_json::from_slice(&out).map_err(|e| {
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string())
            })?;
            let columns = answer
                .schema
                .fields()
                .iter()
                .map(|f| SqlColumn {
                    name: f.name().clone(),
                    r#type: f.data_type().to_string(),
                })
                .collect();
            Ok(Json(SqlResponse {
                columns,
                rows,
                row_count: answer.rows,
                truncated: answer.truncated,
                elapsed_ms: elapsed.as_secs_f64() * 1000.0,
            })
            .into_response())
        }
    }
}
