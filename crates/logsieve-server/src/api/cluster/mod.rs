//! `serve --cluster`: the HTTP API in front of a logsieve cluster.
//!
//! The server holds no corpus. Each request becomes SQL over the
//! cluster's `logs` table ([`ClusterEngine`]), whose scans run on the
//! workers holding the shards. The search runs there too, pushed down to
//! each worker's engine as `grep(line, pattern, flags)`: the request's
//! `-F -i -w -x`, compiled by the same builder as a served search. Only
//! counts, groups and the page's rows cross the network.
//!
//! Served: `/api/v1/health`, `search` (counts, files, lines and
//! only-matching, paged), `stats` and `sql`, and so the page. A route
//! that needs the corpus itself (context lines, wildcard and fuzzy
//! syntax, watchlists, tails, per-pattern counts, templates, the Loki
//! API) answers 501 `not_over_cluster`.

use std::collections::BTreeMap;

use logsieve_cluster::{Cluster, ClusterEngine};
use logsieve_sql::SqlLimits;

use super::*;

mod search;
mod stats;

pub(crate) use search::search;
pub(crate) use stats::stats;

/// The cluster a server fronts.
pub struct Front {
    engine: ClusterEngine,
}

impl Front {
    /// The engine over `cluster`'s workers as they answer now (an error
    /// when none does).
    pub async fn connect(cluster: Arc<Cluster>, threads: usize) -> Result<Front, String> {
        let limits = SqlLimits::server(sql::MEMORY, sql::DEFAULT_ROWS, threads);
        Ok(Front {
            engine: ClusterEngine::connect(cluster, limits).await?,
        })
    }

    /// The engine (`POST /api/v1/sql` runs on it).
    pub fn engine(&self) -> &ClusterEngine {
        &self.engine
    }
}

/// 501 for what a cluster's front does not answer.
pub(crate) fn not_here(what: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_IMPLEMENTED,
        "not_over_cluster",
        format!("{what}: not answered in front of a cluster (`serve --cluster` answers health, search without context lines, stats and sql; serve the files for the rest)"),
    )
}

/// A SQL string literal.
fn lit(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The rows of `sql` as JSON objects (column name to value; a null is
/// absent), under the server's deadline. A worker lost with no live
/// replica, or a cluster that cannot answer, is 503.
async fn rows(state: &AppState, f: &Front, sql: &str) -> Result<Vec<Value>, ApiError> {
    let timeout = state.limits().timeout;
    let answer = match tokio::time::timeout(timeout, f.engine.query_capped(sql, None)).await {
        Err(_) => {
            return Err(ApiError::new(
                StatusCode::GATEWAY_TIMEOUT,
                "timeout",
                format!(
                    "the query took longer than {:.3} s (--timeout)",
                    timeout.as_secs_f64()
                ),
            ))
        }
        Ok(Err(e)) => {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "cluster_unavailable",
                e,
            ))
        }
        Ok(Ok(a)) => a,
    };
    let internal = |e: String| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e);
    let mut out = Vec::new();
    logsieve_sql::format::write(&mut out, &answer, logsieve_sql::format::Format::Json)
        .map_err(|e| internal(e.to_string()))?;
    match serde_json::from_slice(&out).map_err(|e| internal(e.to_string()))? {
        Value::Array(v) => Ok(v),
        _ => Err(internal("the answer is not an array of rows".into())),
    }
}

fn u64_of(row: &Value, col: &str) -> u64 {
    row.get(col).and_then(Value::as_u64).unwrap_or(0)
}

fn i64_of(row: &Value, col: &str) -> Option<i64> {
    row.get(col).and_then(Value::as_i64)
}

fn text_of(row: &Value, col: &str) -> Option<String> {
    row.get(col).and_then(Value::as_str).map(str::to_string)
}

/// Hex text (Arrow's JSON of binary) as bytes.
fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .filter_map(|i| u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok())
        .collect()
}

/// What a request selects, as a `WHERE` clause, and the query it is.
struct Selection {
    /// The conjuncts (empty: every line).
    conds: Vec<String>,
    /// The search (none: every line), for the submatches of lines.
    query: Option<Arc<Query>>,
    /// The files in scope, in the order answers list them.
    files: Vec<String>,
    /// The window, ms.
    since: Option<i64>,
    until: Option<i64>,
    /// Files whose first lines have no time (null in SQL): their count,
    /// and the first stamp they take in a served corpus's windows and
    /// histograms. Asked only for a window or a histogram.
    leading: BTreeMap<String, (u64, i64)>,
}

impl Selection {
    fn sql(&self) -> String {
        if self.conds.is_empty() {
            "TRUE".into()
        } else {
            self.conds.join(" AND ")
        }
    }

    /// The file scope alone (stats' span is its lines').
    fn file_cond(&self, all: usize) -> String {
        if self.files.len() == all {
            "TRUE".into()
        } else {
            format!(
                "file IN ({})",
                self.files
                    .iter()
                    .map(|f| lit(f))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    }
}

/// The query fields of a request.
struct Text<'a> {
    patterns: &'a [String],
    syntax: SyntaxName,
    fuzzy_k: Option<u8>,
    ignore_case: bool,
    word: bool,
    line: bool,
    invert: bool,
}

/// The shards the live workers hold now, sorted by name: name, bytes,
/// lines; and the table's fields. 503 when no worker answers.
async fn shards(f: &Front) -> Result<(Vec<(String, u64)>, u64, Vec<String>), ApiError> {
    let mut out: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut fields = None;
    let mut errors = Vec::new();
    for (url, s) in f.engine.cluster().statuses().await {
        match s {
            Ok(s) => {
                for sh in s.shards {
                    out.entry(sh.name).or_insert((sh.bytes, sh.lines));
                }
                fields.get_or_insert(s.fields);
            }
            Err(e) => errors.push(format!("{url}: {e}")),
        }
    }
    let Some(fields) = fields else {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "cluster_unavailable",
            format!("no worker answers ({})", errors.join("; ")),
        ));
    };
    let lines = out.values().map(|v| v.1).sum();
    Ok((
        out.into_iter().map(|(n, (b, _))| (n, b)).collect(),
        lines,
        fields,
    ))
}

/// The newest line's time over the cluster (relative `since`/`until`
/// count back from it, as a served corpus's do).
async fn newest(state: &AppState, f: &Front) -> Result<i64, ApiError> {
    let r = rows(state, f, "SELECT CAST(max(time) AS BIGINT) AS t FROM logs").await?;
    Ok(r.first().and_then(|r| i64_of(r, "t")).unwrap_or(0))
}

/// Timestamp literal of `ms`.
fn ts(ms: i64) -> String {
    format!("arrow_cast({ms}, 'Timestamp(Millisecond, Some(\"UTC\"))')")
}

/// The request's selection: its text test (400 for what a served search
/// refuses too; 501 for what only a served corpus answers), files (400
/// for one the cluster does not hold) and window.
#[allow(clippy::too_many_arguments)]
async fn select(
    state: &AppState,
    f: &Front,
    text: Text<'_>,
    files: Option<&[String]>,
    since: Option<&str>,
    until: Option<&str>,
    held: &[(String, u64)],
    histogram: bool,
) -> Result<Selection, ApiError> {
    check_fuzzy_k(text.fuzzy_k)?;
    let flag = match text.syntax {
        SyntaxName::Literal => "F",
        SyntaxName::Regex => "",
        SyntaxName::Wildcard => return Err(not_here("syntax wildcard")),
        SyntaxName::Fuzzy => return Err(not_here("syntax fuzzy")),
    };
    let mut conds = Vec::new();
    let mut query = None;
    if !text.patterns.is_empty() {
        // Built here as a served search builds it: a bad pattern is the
        // same 400, and the lines' submatches are this query's.
        let q = build_query(
            text.patterns,
            text.syntax,
            text.fuzzy_k,
            text.ignore_case,
            text.word,
            text.line,
            text.invert,
            logsieve::CpuMulti::default(),
        )?;
        let flags = format!(
            "{flag}{}{}{}",
            if text.ignore_case { "i" } else { "" },
            if text.word { "w" } else { "" },
            if text.line { "x" } else { "" }
        );
        let any = text
            .patterns
            .iter()
            .map(|p| format!("grep(line, {}, {})", lit(p), lit(&flags)))
            .collect::<Vec<_>>()
            .join(" OR ");
        conds.push(if text.invert {
            format!("NOT ({any})")
        } else {
            format!("({any})")
        });
        query = Some(Arc::new(q));
    }
    let files: Vec<String> = match files {
        None => held.iter().map(|(n, _)| n.clone()).collect(),
        Some(names) => {
            for n in names {
                if !held.iter().any(|(h, _)| h == n) {
                    return Err(ApiError::bad_request(
                        "unknown_file",
                        format!("files: {n:?} is not held by the cluster (GET /api/v1/health counts the files; names are as the workers loaded them)"),
                    ));
                }
            }
            // In the cluster's (name) order, as a served corpus lists
            // its documents in its own.
            held.iter()
                .filter(|(h, _)| names.contains(h))
                .map(|(h, _)| h.clone())
                .collect()
        }
    };
    if files.len() != held.len() {
        conds.push(format!(
            "file IN ({})",
            files.iter().map(|f| lit(f)).collect::<Vec<_>>().join(", ")
        ));
    }
    let (s, u) = (time_spec(since, "since")?, time_spec(until, "until")?);
    let windowed = s.is_some() || u.is_some();
    let newest = match windowed {
        true => newest(state, f).await?,
        false => 0,
    };
    let (since, until) = (s.map(|t| t.resolve(newest)), u.map(|t| t.resolve(newest)));
    let leading = match windowed || histogram {
        true => leading(state, f, &files).await?,
        false => BTreeMap::new(),
    };
    if windowed {
        let inside = |t: i64| since.is_none_or(|s| t >= s) && until.is_none_or(|u| t < u);
        let mut w = Vec::new();
        if let Some(t) = since {
            w.push(format!("time >= {}", ts(t)));
        }
        if let Some(t) = until {
            w.push(format!("time < {}", ts(t)));
        }
        let taken: Vec<String> = leading
            .iter()
            .filter(|(_, (_, first))| inside(*first))
            .map(|(n, _)| lit(n))
            .collect();
        conds.push(if taken.is_empty() {
            w.join(" AND ")
        } else {
            format!(
                "(({}) OR (time IS NULL AND file IN ({})))",
                w.join(" AND "),
                taken.join(", ")
            )
        });
    }
    Ok(Selection {
        conds,
        query,
        files,
        since,
        until,
        leading,
    })
}

/// The files of `files` whose first lines have no time, with how many
/// and the first stamp (a served corpus's columns give those lines the
/// first stamp; SQL's `time` is null there). A file without any stamp is
/// not listed: its lines are outside every window, as served.
async fn leading(
    state: &AppState,
    f: &Front,
    files: &[String],
) -> Result<BTreeMap<String, (u64, i64)>, ApiError> {
    let nulls = rows(
        state,
        f,
        "SELECT file, count(*) AS n FROM logs WHERE time IS NULL GROUP BY file",
    )
    .await?;
    let nulls: BTreeMap<String, u64> = nulls
        .iter()
        .filter_map(|r| Some((text_of(r, "file")?, u64_of(r, "n"))))
        .filter(|(n, c)| *c > 0 && files.contains(n))
        .collect();
    if nulls.is_empty() {
        return Ok(BTreeMap::new());
    }
    // Only the leading lines are null in a stamped file, so its first
    // stamp is on line `n + 1`.
    let names: Vec<String> = nulls.keys().map(|n| lit(n)).collect();
    let at: Vec<String> = nulls
        .iter()
        .map(|(n, c)| format!("(file = {} AND line_number = {})", lit(n), c + 1))
        .collect();
    let sql = format!(
        "SELECT file, CAST(time AS BIGINT) AS t FROM logs WHERE file IN ({}) AND ({})",
        names.join(", "),
        at.join(" OR ")
    );
    let mut out = BTreeMap::new();
    for r in rows(state, f, &sql).await? {
        if let (Some(n), Some(t)) = (text_of(&r, "file"), i64_of(&r, "t")) {
            if let Some(&c) = nulls.get(&n) {
                out.insert(n, (c, t));
            }
        }
    }
    Ok(out)
}

/// `/api/v1/health` in front of a cluster: the shards' files, bytes and
/// lines; `backend` is `cluster`.
pub(crate) async fn health(f: &Front) -> Health {
    let (files, bytes, lines, failed, status) = match shards(f).await {
        Ok((held, lines, _)) => (
            held.len() as u64,
            held.iter().map(|h| h.1).sum(),
            lines,
            Vec::new(),
            "ready",
        ),
        Err(e) => (0, 0, 0, vec![e.message], "unavailable"),
    };
    Health {
        status: status.into(),
        phase: "ready".into(),
        bytes,
        lines,
        files,
        backend: Some("cluster".into()),
        gpu: None,
        progress: 1.0,
        stats_columns: Some("cluster".into()),
        follow: None,
        failed,
    }
}

fn info(sql: &str, explain: bool, t0: Instant) -> BackendInfo {
    BackendInfo {
        name: "cluster".into(),
        reason: "SQL over the cluster's workers, the search pushed down to each".into(),
        route: "cluster".into(),
        route_reason: "serve --cluster".into(),
        forced: false,
        elapsed_ms: t0.elapsed().as_secs_f64() * 1e3,
        explain: explain.then(|| sql.to_string()),
    }
}
