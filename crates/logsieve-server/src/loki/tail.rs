//! `GET /loki/api/v1/tail` (WebSocket), as Loki: `query` (a LogQL log
//! query: a stream selector and line filters), `delay_for` (0-5 s,
//! accepted; lines are sent when they are searchable), `limit` (default
//! 100: at most that many lines of the replay), `start` (ns or RFC 3339,
//! default an hour ago: the lines since then are sent first, the `limit`
//! newest, as `query_range` selects them).
//!
//! Then every line appended to the served files that the query selects,
//! through a live tail ([`crate::tail`]: the line filter led by a positive
//! one runs through the session's one route, the others are checked per
//! hit by the CPU matcher, as `eval.rs` does), each line once and in
//! order. Messages are Loki's: `{"streams": [{"stream": {"filename":
//! ...}, "values": [["<ns>", "<line>"]]}], "dropped_entries": null}`.
//! Appended lines are stamped with their own time from the stats columns
//! (extended over appended lines), as the replay and `query_range` stamp
//! them; a line of a file without timestamps gets the time it is sent. A
//! live tail selects by `filename` only: a matcher on another label is a
//! 400.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use logsieve::logql::{Expr, FilterOp, LogExpr};
use logsieve::Query;
use serde_json::{json, Value as J};
use tokio::sync::OwnedSemaphorePermit;

use super::params::{now_ns, Params};
use super::{eval, parse, ready, LokiError};
use crate::state::AppState;
use crate::tail::{Hit, Tail, TailSpec};

/// What a Loki tail checks per line besides the routed filter.
struct LiveFilter {
    /// The other line filters (op, query): the CPU matcher per hit.
    rest: Vec<(FilterOp, Query)>,
    /// The `filename` matchers.
    files: Vec<(logsieve::logql::MatchOp, String)>,
}

impl LiveFilter {
    fn keeps(&self, h: &Hit) -> bool {
        let line = h.text.strip_suffix(b"\n").unwrap_or(&h.text);
        self.rest
            .iter()
            .all(|(op, q)| q.is_match_line(line) != op.negated())
            && self.files.iter().all(|(op, v)| name_test(*op, v, &h.name))
    }
}

fn name_test(op: logsieve::logql::MatchOp, v: &str, name: &str) -> bool {
    use logsieve::logql::MatchOp::*;
    match op {
        Eq => name == v,
        Neq => name != v,
        Re | Nre => regex::Regex::new(&format!("^(?:{v})$"))
            .map(|re| re.is_match(name) != (op == Nre))
            .unwrap_or(false),
    }
}

/// The upgrade, or Loki's 400 (text) for a bad query or parameter.
pub async fn tail(
    State(state): State<AppState>,
    RawQuery(q): RawQuery,
    ws: WebSocketUpgrade,
) -> Response {
    match prepare(&state, q.as_deref()) {
        Ok((tail, filter, replay, permit)) => ws
            .on_upgrade(move |socket| run(socket, state, tail, filter, replay, permit))
            .into_response(),
        Err(e) => {
            state.0.metrics.error("loki");
            e.into_response()
        }
    }
}

type Prepared = (Tail, LiveFilter, Option<J>, OwnedSemaphorePermit);

fn prepare(state: &AppState, q: Option<&str>) -> Result<Prepared, LokiError> {
    let p = Params::new(q, &[]);
    let log: LogExpr =
        match parse(p.query()?)? {
            Expr::Log(l) => l,
            Expr::Metric(_) => return Err(LokiError::bad(
                "a tail takes a log query (a stream selector and line filters), not a metric query",
            )),
        };
    if let Some(m) = log.matchers.iter().find(|m| m.name != "filename") {
        return Err(LokiError::bad(format!(
            "a live tail selects by filename only: appended lines have no `{}` label yet",
            m.name
        )));
    }
    if !log.parsers.is_empty() || !log.field_filters.is_empty() || !log.numeric_filters.is_empty() {
        return Err(LokiError::bad(
            "a live tail takes line filters only, not parser stages (| json, | logfmt)",
        ));
    }
    if let Some(d) = p.get("delay_for") {
        match d.parse::<u32>() {
            Ok(0..=5) => {}
            _ => return Err(LokiError::bad("delay_for can't be greater than 5")),
        }
    }
    let limit = p.limit()?;
    let start = p.time("start", now_ns() - 3_600_000_000_000)?;
    let ready = ready(state)?;
    // The lead filter goes to the route (a positive literal first, as
    // eval.rs chooses); without one every line passes.
    let mut queries: Vec<(FilterOp, Query)> = log
        .filters
        .iter()
        .map(|f| {
            logsieve::QueryBuilder::new()
                .syntax(if f.op.regex() {
                    logsieve::Syntax::Regex
                } else {
                    logsieve::Syntax::Fixed
                })
                .invert(f.op.negated())
                .cpu_multi(ready.session.tuning().cpu_multi)
                .build(&[&f.value])
                .map(|q| (f.op, q))
                .map_err(|e| LokiError::bad(format!("line filter {:?}: {e}", f.value)))
        })
        .collect::<Result<_, _>>()?;
    let lead = queries
        .iter()
        .position(|(op, _)| *op == FilterOp::Contains)
        .or_else(|| queries.iter().position(|(op, _)| *op == FilterOp::Regex))
        .or(if queries.is_empty() { None } else { Some(0) });
    let query = match lead {
        Some(i) => queries.remove(i).1,
        None => logsieve::QueryBuilder::new()
            .syntax(logsieve::Syntax::Fixed)
            .build(&[""])
            .map_err(LokiError::lib)?,
    };
    let filter = LiveFilter {
        rest: queries,
        files: log
            .matchers
            .iter()
            .map(|m| (m.op, m.value.clone()))
            .collect(),
    };
    let permit = state
        .0
        .tails
        .clone()
        .try_acquire_owned()
        .map_err(|_| LokiError {
            status: StatusCode::TOO_MANY_REQUESTS,
            message: format!(
                "max concurrent tail requests limit exceeded ({}: --max-tails)",
                state.limits().max_tails
            ),
        })?;
    // Subscribe before the replay reads the corpus: nothing falls between.
    let tail = Tail::start(
        state,
        TailSpec {
            query: Arc::new(query),
            watchlist: None,
            files: None,
            tuning: ready.session.tuning().clone(),
            since: None,
            until: None,
        },
    );
    let sel = eval::select(&ready, &log, start, i64::MAX, true, true, &[], 1)?;
    let mut entries = sel.entries;
    entries.sort_by_key(|e| (e.t, e.doc, e.line));
    let skip = entries
        .len()
        .saturating_sub(limit.min(usize::MAX as u64) as usize);
    let mut values: BTreeMap<usize, Vec<J>> = BTreeMap::new();
    for e in &entries[skip..] {
        let line = String::from_utf8_lossy(ready.session.corpus().docs()[e.doc].line(e.line));
        values
            .entry(e.stream)
            .or_default()
            .push(json!([e.t.to_string(), line]));
    }
    let replay = (!values.is_empty()).then(|| {
        message(
            values
                .into_iter()
                .map(|(s, v)| (super::labels_json(&sel.streams[s]), v))
                .collect(),
        )
    });
    Ok((tail, filter, replay, permit))
}

/// Loki's tail message.
fn message(streams: Vec<(J, Vec<J>)>) -> J {
    json!({
        "streams": streams
            .into_iter()
            .map(|(labels, values)| json!({"stream": labels, "values": values}))
            .collect::<Vec<_>>(),
        "dropped_entries": null,
    })
}

/// Each hit's timestamp in ns: its line's time in the stats columns (as
/// `query_range` and the replay stamp it: a line without one carries the
/// time of the line before it), else the time it is sent.
fn stamps(state: &AppState, hits: &[Hit]) -> Vec<i64> {
    let now = now_ns();
    let ready = state.ready();
    let cols = ready.as_ref().and_then(|r| r.session.columns());
    hits.iter()
        .map(|h| {
            // Line numbers count evicted lines (`--retain`); the columns
            // hold the lines held.
            let evicted = ready
                .as_ref()
                .and_then(|r| r.session.corpus().docs().get(h.doc).map(|d| d.first_line()))
                .unwrap_or(0);
            let line = h.line_number.checked_sub(1 + evicted);
            cols.and_then(|c| c.docs().get(h.doc))
                .and_then(|d| d.times.get(line? as usize))
                .copied()
                .filter(|&t| t != logsieve::stats::NO_TIME)
                .map_or(now, |t| t.saturating_mul(1_000_000))
        })
        .collect()
}

/// Hits grouped by file, in order, as one message, each stamped with
/// `stamps` (ns, parallel to `hits`).
fn live_message(hits: &[Hit], stamps: &[i64], filter: &LiveFilter) -> Option<J> {
    let mut streams: Vec<(String, Vec<J>)> = Vec::new();
    for (h, t) in hits.iter().zip(stamps).filter(|(h, _)| filter.keeps(h)) {
        let line = String::from_utf8_lossy(h.text.strip_suffix(b"\n").unwrap_or(&h.text));
        let v = json!([t.to_string(), line]);
        match streams.iter_mut().find(|s| s.0 == h.name) {
            Some(s) => s.1.push(v),
            None => streams.push((h.name.clone(), vec![v])),
        }
    }
    (!streams.is_empty()).then(|| {
        message(
            streams
                .into_iter()
                .map(|(n, v)| (json!({ "filename": n }), v))
                .collect(),
        )
    })
}

async fn run(
    mut socket: WebSocket,
    state: AppState,
    mut tail: Tail,
    filter: LiveFilter,
    replay: Option<J>,
    _permit: OwnedSemaphorePermit,
) {
    if let Some(m) = replay {
        if socket
            .send(Message::Text(m.to_string().into()))
            .await
            .is_err()
        {
            return;
        }
    }
    loop {
        // Only a close (or a broken connection) completes this branch, so
        // a ping never cancels a batch the tail is matching.
        let hits = {
            let closed = async {
                loop {
                    match socket.recv().await {
                        None | Some(Err(_)) | Some(Ok(Message::Close(_))) => break,
                        Some(Ok(_)) => {}
                    }
                }
            };
            tokio::select! {
                hits = tail.next() => hits,
                _ = closed => return,
            }
        };
        let Ok(hits) = hits else { break };
        let t = stamps(&state, &hits);
        if let Some(m) = live_message(&hits, &t, &filter) {
            if socket
                .send(Message::Text(m.to_string().into()))
                .await
                .is_err()
            {
                return;
            }
        }
    }
    let _ = socket.send(Message::Close(None)).await;
}
