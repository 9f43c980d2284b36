//! `POST /api/v1/stats` in front of a cluster.

use logsieve::stats::{Group, Histogram, Stats};

use super::*;

/// `POST /api/v1/stats` in front of a cluster: the `logsieve stats
/// --json` object of a served corpus, from grouped counts the workers
/// compute.
pub(crate) async fn stats(
    state: &AppState,
    f: &Front,
    req: StatsRequest,
) -> Result<Response, ApiError> {
    if req.backend != BackendName::Auto {
        return Err(not_here(
            "a forced backend (each worker routes its own scans)",
        ));
    }
    let _slot = hold(state)?;
    let t0 = Instant::now();
    let (held, _, fields) = shards(f).await?;
    for n in &req.count_by {
        if !fields.iter().any(|f| f == n) {
            return Err(ApiError::bad_request(
                "unknown_field",
                format!(
                    "count_by {n:?}: not a field of the cluster (its fields: {})",
                    fields.join(", ")
                ),
            ));
        }
    }
    let bucket = match &req.histogram {
        None => None,
        Some(h) => match logsieve::stats::time::parse_duration(h.trim()) {
            Some(ms) if ms > 0 => Some(ms),
            _ => {
                return Err(ApiError::bad_request(
                    "invalid_time",
                    format!("histogram {h:?}: expected a positive duration (30s, 1m, 15m, 1h, 1d)"),
                ))
            }
        },
    };
    let text = Text {
        patterns: &req.patterns,
        syntax: req.syntax,
        fuzzy_k: req.fuzzy_k,
        ignore_case: req.ignore_case,
        word: req.word,
        line: false,
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
        bucket.is_some(),
    )
    .await?;
    // The span of the files in scope (all their lines, as a served
    // corpus's columns have it).
    let span_sql = format!(
        "SELECT CAST(min(time) AS BIGINT) AS lo, CAST(max(time) AS BIGINT) AS hi FROM logs WHERE {}",
        sel.file_cond(held.len())
    );
    let span = rows(state, f, &span_sql).await?;
    let span = span
        .first()
        .map_or((None, None), |r| (i64_of(r, "lo"), i64_of(r, "hi")));
    let quoted: Vec<String> = req
        .count_by
        .iter()
        .map(|n| format!("\"{}\"", n.replace('"', "\"\"")))
        .collect();
    let group_sql = if quoted.is_empty() {
        format!("SELECT count(*) AS n FROM logs WHERE {}", sel.sql())
    } else {
        format!(
            "SELECT {k}, count(*) AS n FROM logs WHERE {} GROUP BY {k}",
            sel.sql(),
            k = quoted.join(", ")
        )
    };
    let mut selected = 0;
    let mut groups = Vec::new();
    for r in rows(state, f, &group_sql).await? {
        let n = u64_of(&r, "n");
        selected += n;
        if !req.count_by.is_empty() && n > 0 {
            let key = req
                .count_by
                .iter()
                .map(|c| text_of(&r, c).map(String::into_bytes))
                .collect();
            groups.push(Group { key, count: n });
        }
    }
    logsieve::stats::sort_groups(&mut groups);
    let histogram = match bucket {
        None => None,
        Some(b) => {
            let (start, b, n) = logsieve::stats::histogram_frame(span, sel.since, sel.until, b)
                .map_err(ApiError::from_lib)?;
            let mut counts = vec![0u64; n as usize];
            if n > 0 {
                let sql = format!(
                    "SELECT (CAST(time AS BIGINT) - {start}) / {b} AS k, count(*) AS n FROM logs WHERE {} AND time >= {} AND time < {} GROUP BY 1",
                    sel.sql(),
                    ts(start),
                    ts(start.saturating_add(b.saturating_mul(n as i64)))
                );
                for r in rows(state, f, &sql).await? {
                    if let Some(k) = i64_of(&r, "k").filter(|&k| k >= 0 && (k as u64) < n) {
                        counts[k as usize] += u64_of(&r, "n");
                    }
                }
                // The leading lines selected, in their first stamp's
                // bucket.
                if !sel.leading.is_empty() {
                    let sql = format!(
                        "SELECT file, count(*) AS n FROM logs WHERE {} AND time IS NULL GROUP BY file",
                        sel.sql()
                    );
                    for r in rows(state, f, &sql).await? {
                        let first =
                            text_of(&r, "file").and_then(|n| sel.leading.get(&n).map(|l| l.1));
                        let k = first.map(|t| (t - start).div_euclid(b));
                        if let Some(k) = k.filter(|&k| k >= 0 && (k as u64) < n) {
                            counts[k as usize] += u64_of(&r, "n");
                        }
                    }
                }
            }
            Some(Histogram {
                start,
                bucket: b,
                counts,
            })
        }
    };
    let s = Stats {
        selected,
        groups,
        histogram,
    };
    let q = StatsQuery {
        since: sel.since,
        until: sel.until,
        ..Default::default()
    };
    state.0.metrics.query("stats", "cluster", t0.elapsed());
    Ok(Json(stats_json(span, &q, &s, &req.count_by, "cluster")).into_response())
}
