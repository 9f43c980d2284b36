//! `POST /api/v1/search` in front of a cluster: per-file counts, and a
//! page of lines as `rg --json` records with their submatches.

use logsieve::rg_json::{Data, LineData, LineRecord, Stats as RgStats};

use super::*;

/// Selected lines per file in scope, `-m` applied.
async fn counts(
    state: &AppState,
    f: &Front,
    sel: &Selection,
    max_count: Option<u64>,
) -> Result<Vec<(String, u64)>, ApiError> {
    let sql = format!(
        "SELECT file, count(*) AS n FROM logs WHERE {} GROUP BY file",
        sel.sql()
    );
    let mut by: BTreeMap<String, u64> = BTreeMap::new();
    for r in rows(state, f, &sql).await? {
        if let Some(name) = text_of(&r, "file") {
            by.insert(name, u64_of(&r, "n"));
        }
    }
    Ok(sel
        .files
        .iter()
        .map(|n| {
            let c = by.get(n).copied().unwrap_or(0);
            (n.clone(), max_count.map_or(c, |m| c.min(m)))
        })
        .collect())
}

/// `POST /api/v1/search` in front of a cluster.
pub(crate) async fn search(
    state: &AppState,
    f: &Front,
    req: SearchRequest,
) -> Result<Response, ApiError> {
    if req.watchlist.is_some() {
        return Err(not_here("watchlist"));
    }
    if req.patterns.is_empty() {
        return Err(ApiError::bad_request(
            "invalid_query",
            "`patterns` is empty: give at least one pattern",
        ));
    }
    if req.backend != BackendName::Auto {
        return Err(not_here(
            "a forced backend (each worker routes its own scans)",
        ));
    }
    let _slot = hold(state)?;
    let t0 = Instant::now();
    let (held, _, _) = shards(f).await?;
    let text = Text {
        patterns: &req.patterns,
        syntax: req.syntax,
        fuzzy_k: req.fuzzy_k,
        ignore_case: req.ignore_case,
        word: req.word,
        line: req.line,
        invert: req.invert,
    };
    let sel = select(
        state,
        f,
        text,
        req.files.as_deref(),
        req.since.as_deref(),
        req.until.as_deref(),
        &held,
        false,
    )
    .await?;
    let max_count = match req.output {
        OutputKind::FilesWithMatches => Some(req.max_count.map_or(1, |m| m.min(1))),
        _ => req.max_count,
    };
    let counted = counts(state, f, &sel, max_count).await?;
    let total: u64 = counted.iter().map(|c| c.1).sum();
    let where_ = sel.sql();
    let r = match req.output {
        OutputKind::Count => Json(CountResponse {
            total,
            files: counted
                .into_iter()
                .map(|(path, count)| FileCount { path, count })
                .collect(),
            backend: info(&where_, req.explain, t0),
        })
        .into_response(),
        OutputKind::FilesWithMatches => Json(FilesResponse {
            files: counted
                .into_iter()
                .filter(|c| c.1 > 0)
                .map(|c| c.0)
                .collect(),
            backend: info(&where_, req.explain, t0),
        })
        .into_response(),
        OutputKind::Lines | OutputKind::OnlyMatching => {
            if req.before > 0 || req.after > 0 {
                return Err(not_here("context lines (before, after)"));
            }
            lines(state, f, &req, &sel, &held, total, max_count, t0).await?
        }
    };
    state.0.metrics.query("search", "cluster", t0.elapsed());
    Ok(r)
}

/// A page of selected lines as `rg --json` NDJSON, in file then line
/// order (the order a served corpus of these files answers in).
#[allow(clippy::too_many_arguments)]
async fn lines(
    state: &AppState,
    f: &Front,
    req: &SearchRequest,
    sel: &Selection,
    held: &[(String, u64)],
    total: u64,
    max_count: Option<u64>,
    t0: Instant,
) -> Result<Response, ApiError> {
    let skip = super::super::search::cursor(req)?;
    let limit = req.limit.unwrap_or(u64::MAX);
    // Files in the answer's order: a served corpus lists its documents
    // as loaded (sorted paths), the cluster by name.
    let order: BTreeMap<&str, usize> = sel
        .files
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let mut rows_ = Vec::new();
    if limit > 0 && skip < total {
        let fetch = limit.min(total - skip);
        let cols = "file, line_number, byte_offset, line_bytes";
        let inner = match max_count {
            Some(m) => format!(
                "SELECT {cols} FROM (SELECT {cols}, row_number() OVER (PARTITION BY file ORDER BY line_number) AS k FROM logs WHERE {}) WHERE k <= {m}",
                sel.sql()
            ),
            None => format!("SELECT {cols} FROM logs WHERE {}", sel.sql()),
        };
        let sql = format!(
            "SELECT {cols} FROM ({inner}) ORDER BY file, line_number LIMIT {fetch} OFFSET {skip}"
        );
        rows_ = rows(state, f, &sql).await?;
    }
    let next = (limit != u64::MAX && skip.saturating_add(limit) < total)
        .then(|| skip.saturating_add(limit));
    let bytes: BTreeMap<&str, u64> = held.iter().map(|(n, b)| (n.as_str(), *b)).collect();
    let mut out = Vec::new();
    let only = req.output == OutputKind::OnlyMatching;
    let query = sel.query.clone();
    let mut open: Option<(String, RgStats)> = None;
    let mut total_stats = RgStats::default();
    let mut only_matches = 0u64;
    let close = |out: &mut Vec<u8>, open: Option<(String, RgStats)>, all: &mut RgStats| {
        if let Some((path, st)) = open {
            let end = serde_json::json!({
                "type": "end",
                "data": {"path": rg_json::data(path.as_bytes()), "binary_offset": null, "stats": st.to_json(t0.elapsed())}
            });
            let _ = rg_json::emit(out, &end);
            all.add(&st);
        }
    };
    let mut sorted: Vec<&Value> = rows_.iter().collect();
    sorted.sort_by_key(|r| {
        let f = r.get("file").and_then(Value::as_str).unwrap_or("");
        (
            order.get(f).copied().unwrap_or(usize::MAX),
            u64_of(r, "line_number"),
        )
    });
    for r in sorted {
        let path = text_of(r, "file").unwrap_or_default();
        let number = u64_of(r, "line_number");
        let offset = u64_of(r, "byte_offset");
        let mut text = unhex(r.get("line_bytes").and_then(Value::as_str).unwrap_or(""));
        let line_len = text.len();
        // The terminator, as rg prints it, unless the file ends here.
        if offset + (line_len as u64) < bytes.get(path.as_str()).copied().unwrap_or(u64::MAX) {
            text.push(b'\n');
        }
        let ranges = match &query {
            Some(q) if !q.invert() => q.find_iter_line(&text[..line_len]),
            _ => Vec::new(),
        };
        if only {
            for m in ranges {
                let v = serde_json::json!({
                    "type": "only_match",
                    "data": {
                        "path": rg_json::data(path.as_bytes()),
                        "line_number": number,
                        "absolute_offset": offset + m.start as u64,
                        "match": rg_json::data(&text[m.clone()]),
                        "patterns": query.as_ref().map_or(Value::Null, |q| patterns_of(q, &text[m])),
                    }
                });
                let _ = rg_json::emit(&mut out, &v);
                only_matches += 1;
            }
            continue;
        }
        if open.as_ref().is_none_or(|(p, _)| *p != path) {
            close(&mut out, open.take(), &mut total_stats);
            let v = serde_json::json!({"type": "begin", "data": {"path": rg_json::data(path.as_bytes())}});
            let mut st = RgStats {
                searches: 1,
                searches_with_match: 1,
                bytes_searched: bytes.get(path.as_str()).copied().unwrap_or(0),
                ..Default::default()
            };
            st.bytes_printed += rg_json::emit(&mut out, &v).unwrap_or(0);
            open = Some((path.clone(), st));
        }
        let subs = match &query {
            Some(q) => rg_json::submatches_of(
                q,
                &logsieve::pattern_counts::PatternNamer::new(q),
                &text,
                ranges,
                0,
            ),
            None => Vec::new(),
        };
        let rec = LineRecord {
            kind: "match",
            data: LineData {
                path: Data::of(path.as_bytes()),
                lines: Data::of(&text),
                line_number: number,
                absolute_offset: offset,
                submatches: subs,
            },
        };
        let n = rec.data.submatches.len() as u64;
        let written = rg_json::emit_record(&mut out, &rec).unwrap_or(0);
        if let Some((_, st)) = open.as_mut() {
            st.matched_lines += 1;
            st.matches += n;
            st.bytes_printed += written;
        }
    }
    if only {
        let v = serde_json::json!({"type": "summary", "data": {"matched_lines": rows_.len(), "matches": only_matches}});
        let _ = rg_json::emit(&mut out, &v);
    } else {
        close(&mut out, open.take(), &mut total_stats);
        total_stats.searches = sel.files.len() as u64;
        total_stats.bytes_searched = sel
            .files
            .iter()
            .map(|n| bytes.get(n.as_str()).copied().unwrap_or(0))
            .sum();
        let summary = serde_json::json!({
            "type": "summary",
            "data": {"elapsed_total": rg_json::elapsed(t0.elapsed()), "stats": total_stats.to_json(t0.elapsed())}
        });
        let _ = rg_json::emit(&mut out, &summary);
    }
    let mut resp = Response::new(Body::from(out));
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-ndjson"),
    );
    h.insert("x-logsieve-backend", HeaderValue::from_static("cluster"));
    h.insert("x-logsieve-total", HeaderValue::from(total));
    if let Some(n) = next {
        h.insert("x-logsieve-next-cursor", HeaderValue::from(n));
    }
    Ok(resp)
}

/// The `patterns` of an only-matching record: which of the query's the
/// match is.
fn patterns_of(q: &Query, text: &[u8]) -> Value {
    let namer = logsieve::pattern_counts::PatternNamer::new(q);
    Value::Array(
        namer
            .patterns_of(text)
            .into_iter()
            .map(|i| serde_json::json!({"index": i, "pattern": rg_json::data(&q.patterns()[i])}))
            .collect(),
    )
}
