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
    // A file subset: counted by a session of its own (the field indices
    // are the served ones: its columns keep the fields in order).
    let sub = file_subset(ready, served, &docs);
    let session = sub.as_ref().unwrap_or(&ready.session);
    let cols = session.columns().ok_or_else(no_columns)?;
    let opts = SearchOptions {
        backend: req.backend.choice(),
        want: Want::Count,
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
        stats_json(cols.span(None), &q, &s, &req.count_by, &report.name),
        report.name,
    ))
}

/// The served documents `docs` (in corpus order) as a session of their
/// own, for stats over them alone, or `None` when `docs` is every
/// document. The other documents stay in it, empty, so that document
/// indices are the served ones; its columns are the served columns
/// without the other documents' lines, so a kept line keeps the time and
/// values it was served with, and `oldest`/`newest` are those of the kept
/// lines. Counted on the CPU: no GPU holds the copy. O(the kept bytes).
fn file_subset(
    ready: &Ready,
    cols: &logsieve::stats::Columns,
    docs: &[usize],
) -> Option<logsieve::Session> {
    let corpus = ready.session.corpus();
    if docs.len() == corpus.docs().len() {
        return None;
    }
    let mut kept = logsieve::Corpus::new();
    let mut cuts = Vec::with_capacity(corpus.docs().len());
    for (d, doc) in corpus.docs().iter().enumerate() {
        let keep = docs.binary_search(&d).is_ok();
        let data = if keep {
            doc.data().to_vec()
        } else {
            Vec::new()
        };
        kept.push(logsieve::Document::from_bytes(doc.name(), data));
        cuts.push(if keep { 0 } else { u64::MAX });
    }
    // No corpus given: a document cut whole needs no count of its stamped
    // lines (it has no line left to count them over).
    let mut session = logsieve::Session::with_tuning(kept, ready.session.tuning().clone());
    session.set_columns(cols.without_prefix(&logsieve::Corpus::new(), &cuts));
    Some(session)
}
