//! `POST /api/v1/search`: counts as one object, lines streamed as NDJSON.

use super::*;

/// A search answered: what the stream encoder needs.
struct Searched {
    /// The request's query, or a watchlist's (shared, not rebuilt).
    query: Arc<Query>,
    result: SearchResult,
    route: Route,
    /// Documents searched, in corpus order.
    docs: Vec<usize>,
}

fn run_search(
    ready: &Ready,
    req: &SearchRequest,
    threads: usize,
    cancel: &Cancel,
) -> Result<Searched, ApiError> {
    let query = match &req.watchlist {
        Some(name) => {
            watchlists::exclusive(&[
                ("patterns", !req.patterns.is_empty()),
                ("syntax", req.syntax != SyntaxName::default()),
                ("fuzzy_k", req.fuzzy_k.is_some()),
                ("ignore_case", req.ignore_case),
                ("word", req.word),
                ("line", req.line),
                ("invert", req.invert),
            ])?;
            watchlists::find(ready, name)?.shared_query()
        }
        None => build_query_shared(
            &req.patterns,
            req.syntax,
            req.fuzzy_k,
            req.ignore_case,
            req.word,
            req.line,
            req.invert,
            ready,
        )?,
    };
    let docs = select_files(ready, req.files.as_deref())?;
    let counting = matches!(req.output, OutputKind::Count | OutputKind::FilesWithMatches);
    let opts = SearchOptions {
        backend: req.backend.choice(),
        threads,
        want: if counting { Want::Count } else { Want::Lines },
        max_count: match req.output {
            OutputKind::FilesWithMatches => Some(req.max_count.map_or(1, |m| m.min(1))),
            _ => req.max_count,
        },
        explain: req.explain,
        scope: scope(ready, &docs, &req.since, &req.until)?,
        ..Default::default()
    };
    let request = Request::Search(&query);
    let route = ready
        .session
        .route(&request, &opts)
        .map_err(ApiError::from_lib)?;
    let result = match ready
        .session
        .execute_with(&request, &route, &opts, cancel)
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
    Ok(Searched {
        query,
        result,
        route,
        docs,
    })
}

/// The library's scope of a request: `docs` ([`select_files`]) and the
/// window of `since`/`until`, or 400.
pub(super) fn scope(
    ready: &Ready,
    docs: &[usize],
    since: &Option<String>,
    until: &Option<String>,
) -> Result<logsieve::Scope, ApiError> {
    let all = docs.len() == ready.session.corpus().docs().len();
    Ok(logsieve::Scope {
        docs: (!all).then(|| docs.to_vec()),
        since: window(ready, since.as_deref(), "since")?,
        until: window(ready, until.as_deref(), "until")?,
    })
}

/// The documents `files` names (all without it), in corpus order, or 400
/// for a name the server does not hold.
pub(super) fn select_files(
    ready: &Ready,
    files: Option<&[String]>,
) -> Result<Vec<usize>, ApiError> {
    let corpus = ready.session.corpus();
    let Some(names) = files else {
        return Ok((0..corpus.docs().len()).collect());
    };
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
    Ok(docs)
}

/// Searches the served files.
///
/// `lines` streams NDJSON in ripgrep's `--json` schema (`begin`, `match`,
/// `context`, `end`, `summary`; byte for byte what `logsieve search --json`
/// prints for the same query when no `limit`/`cursor`/context is given).
/// Response headers: `x-logsieve-backend`, `x-logsieve-total` (selected
/// lines), `x-logsieve-next-cursor` (when a `limit` left lines over). A
/// client that disconnects cancels the query: the search stops (and gives
/// its slot back) at the engine's next look, the stream at its next chunk.
#[utoipa::path(
    post,
    path = "/api/v1/search",
    request_body = SearchRequest,
    responses(
        (status = 200, description = "`lines`/`only_matching`: NDJSON, one object per line in ripgrep's `--json` schema; `count`: CountResponse; `files_with_matches`: FilesResponse", content(
            (SearchJson = "application/json"),
            (String = "application/x-ndjson"),
        )),
        (status = 400, description = "bad JSON, invalid pattern (with the caret), unknown file, bad time", body = ErrorBody),
        (status = 404, description = "unknown watchlist", body = ErrorBody),
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
    #[cfg(feature = "cluster")]
    if let Some(f) = state.front() {
        return super::cluster::search(state, &f, req).await;
    }
    let ready = ready(state)?;
    let held = hold(state)?;
    // Fires when this handler is dropped (the client hung up) or, for a
    // stream, when the response body is.
    let cancel = Cancel::new();
    let guard = cancel.on_drop();
    let t0 = Instant::now();
    let r2 = ready.clone();
    let req2 = req.clone();
    let threads = state.limits().threads;
    let (searched, held) = run_blocking(state, &cancel, held, move |c| {
        run_search(&r2, &req2, threads, c)
    })
    .await?;
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
            stream_lines(ready, searched, &req, t0, held, (cancel, guard))
        }
    }
}

/// Selected lines in corpus order, paged: `(doc, line)` pairs from the
/// cursor, at most `limit`, and the next cursor.
/// A page: `(document, line)` pairs and the next page's cursor.
type Page = (Vec<(usize, u64)>, Option<u64>);

fn page(s: &Searched, req: &SearchRequest) -> Result<Page, ApiError> {
    let skip = cursor(req)?;
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

/// Where a page starts: the request's `cursor` (a previous answer's
/// `x-logsieve-next-cursor`, the count of selected lines before it), or
/// 400.
pub(super) fn cursor(req: &SearchRequest) -> Result<u64, ApiError> {
    Ok(match req.cursor.as_deref() {
        None | Some("") => 0,
        Some(c) => c.parse::<u64>().map_err(|_| {
            ApiError::bad_request(
                "invalid_query",
                format!("cursor {c:?}: not a cursor this server gave"),
            )
        })?,
    })
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
/// client goes away the body is dropped, and with it the receiver and the
/// cancel guard: the encoder stops at its next chunk (a failed send or the
/// token) and gives the slot back.
fn stream_lines(
    ready: ReadyRef,
    searched: Searched,
    req: &SearchRequest,
    t0: Instant,
    held: Held,
    (cancel, guard): (Cancel, logsieve::cancel::CancelOnDrop),
) -> Result<Response, ApiError> {
    let (lines, next) = page(&searched, req)?;
    let total = searched.result.total();
    let backend = searched.result.backend.name.clone();
    let (tx, rx) = tokio::sync::mpsc::channel::<Vec<u8>>(4);
    let only = req.output == OutputKind::OnlyMatching;
    let (before, after) = (req.before, req.after);
    tokio::task::spawn_blocking(move || {
        let _held = held;
        let corpus = ready.session.corpus();
        let mut sink = ChunkSink {
            buf: Vec::with_capacity(CHUNK),
            tx,
            cancel,
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
    let body = Body::from_stream(futures_util::stream::unfold(
        (rx, guard),
        |(mut rx, guard)| async move {
            rx.recv()
                .await
                .map(|chunk| (Ok::<_, Infallible>(Bytes::from(chunk)), (rx, guard)))
        },
    ));
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
/// or a cancelled token (the client went away) is a `BrokenPipe` error,
/// which stops the encoder.
struct ChunkSink {
    buf: Vec<u8>,
    tx: tokio::sync::mpsc::Sender<Vec<u8>>,
    cancel: Cancel,
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
        if self.cancel.is_cancelled() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "query cancelled",
            ));
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
        let start = doc.first_offset() + doc.lines().line_range(l).start;
        for m in enc.submatches(doc.line(l)) {
            let v = serde_json::json!({
                "type": "only_match",
                "data": {
                    "path": path,
                    "line_number": doc.first_line() + l + 1,
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
