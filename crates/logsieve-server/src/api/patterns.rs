//! `POST /api/v1/patterns`: per-pattern lines and occurrences.

use super::*;

/// Per-pattern lines and occurrences (`--count-per-pattern`): each pattern
/// counted as if searched alone, over the served files or those of
/// `files`, and with `since`/`until` over the lines in that time window
/// (as `search` takes them).
#[utoipa::path(
    post,
    path = "/api/v1/patterns",
    request_body = PatternsRequest,
    responses(
        (status = 200, body = PatternsResponse),
        (status = 400, body = ErrorBody), (status = 404, description = "unknown watchlist", body = ErrorBody), (status = 413, body = ErrorBody), (status = 422, body = ErrorBody),
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
        let held = hold(&state)?;
        let cancel = Cancel::new();
        let _guard = cancel.on_drop();
        let t0 = Instant::now();
        let threads = state.limits().threads;
        let (resp, _held) = run_blocking(&state, &cancel, held, move |c| {
            run_patterns(&ready, &req, threads, c)
        })
        .await?;
        state
            .0
            .metrics
            .query("patterns", &resp.backend.name, t0.elapsed());
        Ok::<_, ApiError>(Json(resp).into_response())
    }
    .await;
    res.unwrap_or_else(|e| counted(&state, e))
}

fn run_patterns(
    ready: &Ready,
    req: &PatternsRequest,
    threads: usize,
    cancel: &Cancel,
) -> Result<PatternsResponse, ApiError> {
    // REGRESSION: per-pattern counts ran on one thread (the options'
    // default) where a search of the same patterns used every core: 0.7 s
    // against 11 ms for two literals over 1M lines on a 2-core machine.
    let docs = search::select_files(ready, req.files.as_deref())?;
    let opts = SearchOptions {
        backend: req.backend.choice(),
        threads,
        scope: search::scope(ready, &docs, &req.since, &req.until)?,
        ..Default::default()
    };
    let (wl, query) = match &req.watchlist {
        Some(name) => {
            watchlists::exclusive(&[
                ("patterns", !req.patterns.is_empty()),
                ("syntax", req.syntax != SyntaxName::default()),
                ("fuzzy_k", req.fuzzy_k.is_some()),
                ("ignore_case", req.ignore_case),
                ("word", req.word),
                ("line", req.line),
            ])?;
            (Some(watchlists::find(ready, name)?), None)
        }
        None => {
            let q = build_query(
                &req.patterns,
                req.syntax,
                req.fuzzy_k,
                req.ignore_case,
                req.word,
                req.line,
                false,
                ready.session.tuning().cpu_multi,
            )?;
            (None, Some(q))
        }
    };
    let request = match (&wl, &query) {
        (Some(w), _) => Request::Watchlist(w),
        (None, Some(q)) => Request::PatternCounts(q),
        (None, None) => unreachable!("a watchlist or a query"),
    };
    let session = &ready.session;
    let route = session.route(&request, &opts).map_err(ApiError::from_lib)?;
    let c = match session
        .execute_with(&request, &route, &opts, cancel)
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
