//! `POST /api/v1/stats`: `logsieve stats --json` over the served columns.

use super::*;

/// Counts lines in a time window, optionally matching patterns, by field
/// and time bucket, over the served files or those of `files`: the object
/// `logsieve stats --json` prints (`selected`, `since`, `until`, `oldest`,
/// `newest`, `count_by`, `groups`, `histogram`, `backend`).
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
        #[cfg(feature = "cluster")]
        if let Some(f) = state.front() {
            return super::cluster::stats(&state, &f, req).await;
        }
        let ready = ready(&state)?;
        let held = hold(&state)?;
        let cancel = Cancel::new();
        let _guard = cancel.on_drop();
        let t0 = Instant::now();
        let ((v, backend), _held) =
            run_blocking(&state, &cancel, held, move |c| run_stats(&ready, &req, c)).await?;
        state.0.metrics.query("stats", &backend, t0.elapsed());
        Ok::<_, ApiError>(Json(v).into_response())
    }
    .await;
    res.unwrap_or_else(|e| counted(&state, e))
}

fn run_stats(
    ready: &Ready,
    req: &StatsRequest,
    cancel: &Cancel,
) -> Result<(Value, String), ApiError> {
    check_fuzzy_k(req.fuzzy_k)?;
    let docs = search::select_files(ready, req.files.as_deref())?;
    let query = if req.patterns.is_empty() {
        None
    } else {
        Some(build_query_shared(
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
    let no_columns = || {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "no stats columns",
        )
    };
    let served = ready.session.columns().ok_or_else(no_columns)?;
    let mut q = StatsQuery {
        search: query.as_deref(),
        since: window(ready, req.since.as_deref(), "since")?,
        until: window(ready, req.until.as_deref(), "until")?,
        ..Default::default()
    };
    let names: Vec<&str> = req.count_by.iter().map(|s| s.as_str()).collect();
    q.count_by(served, &names)
        .map_err(|e| ApiError::bad_request("unknown_field", e.to_string()))?;
    if let Some(h) = &req.histogram {
        match logsieve::stats::time::parse_duration(h.trim()) {
            Some(ms) if ms > 0 => q.histogram = Some(ms),
            _ => {
                return Err(ApiError::bad_request(
                    "invalid_time",
                    format!("histogram {h:?}: expected a positive duration (30s, 1m, 15m, 1h, 1d)"),
                ))
            }
        }
    }
    // A file subset is the request's scope (the library counts its lines
    // alone); the window is the stats query's own.
    let scope = search::scope(ready, &docs, &None, &None)?;
    let span = served.span(scope.docs.as_deref());
    let session = &ready.session;
    let opts = SearchOptions {
        backend: req.backend.choice(),
        want: Want::Count,
        scope,
        ..Default::default()
    };
    let request = Request::Stats(&q);
    let route = session.route(&request, &opts).map_err(ApiError::from_lib)?;
    let (s, report) = match session
        .execute_with(&request, &route, &opts, cancel)
        .map_err(ApiError::from_lib)?
    {
        Answer::Stats(s, r) => (s, r),
        _ => {
            return Err(ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "a stats request was not answered by stats",
            ))
        }
    };
    Ok((
        stats_json(span, &q, &s, &req.count_by, &report.name),
        report.name,
    ))
}
