//! `GET|POST /api/v1/tail`: new lines that match a query, from now on, as
//! server-sent events (see [`crate::tail`] for how each line arrives once
//! and in order).
//!
//! Server-sent events rather than a WebSocket: the stream goes one way, it
//! is plain HTTP (the CLI's HTTP/1.1 client and `curl -N` read it, proxies
//! pass it), the browser reads it with `fetch` (which, unlike a WebSocket,
//! can carry the `Authorization` header), and axum's `Sse` sends the
//! keep-alive comments proxies need.

use std::collections::VecDeque;
use std::time::Duration;

use axum::extract::RawQuery;
use axum::http::Method;
use axum::response::sse::{Event, KeepAlive, Sse};

use super::*;
use crate::loki::params::Params;
use crate::tail::{Stopped, Tail, TailSpec};
use logsieve::stats::format_ms;

with_query_fields! {
/// A tail's query: the query fields of `POST /api/v1/search` (with a
/// `watchlist`, each hit carries `data.patterns`, the list's patterns the
/// line holds). As a GET, the same names as URL parameters (`pattern` or
/// `patterns` and `files` or `file` repeated; booleans
/// `true`/`false`/`1`/`0`).
#[derive(Deserialize, ToSchema, Clone, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct TailRequest {
    /// `-v`: new lines that do not match.
    #[serde(default)]
    pub invert: bool,
    /// Only these served files (by name; an unknown name is a 400).
    #[serde(default)]
    pub files: Option<Vec<String>>,
    /// Skip appended lines stamped before this time (the search's forms:
    /// `2026-11-20T10:00`, epoch seconds, or a duration before the newest
    /// line *when the tail starts*: `15m`); lines are timed by the stats
    /// columns, as the search's window; empty: no bound.
    #[schema(
        pattern = r"^ *(([0-9]{1,6}(ms|s|m|h|d|w)){1,4}|[0-9]{10}|[0-9]{13}|20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])(T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?Z?)?)? *$"
    )]
    #[serde(default)]
    pub since: Option<String>,
    /// Select lines stamped before this time (the same forms) and end the
    /// tail (`event: end`) after the first batch of appended lines that
    /// holds a line stamped at or after it, or at once when the newest
    /// line already is; empty: no bound.
    #[schema(
        pattern = r"^ *(([0-9]{1,6}(ms|s|m|h|d|w)){1,4}|[0-9]{10}|[0-9]{13}|20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])(T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?Z?)?)? *$"
    )]
    #[serde(default)]
    pub until: Option<String>,
}
}

impl TailRequest {
    fn from_params(p: &Params) -> Result<TailRequest, ApiError> {
        let flag = |name: &str| -> Result<bool, ApiError> {
            match p.get(name) {
                None | Some("false" | "0" | "") => Ok(false),
                Some("true" | "1") => Ok(true),
                Some(v) => Err(ApiError::bad_request(
                    "invalid_request",
                    format!("{name}={v:?}: true or false"),
                )),
            }
        };
        let syntax = match p.get("syntax") {
            None | Some("") => SyntaxName::default(),
            Some(s) => serde_json::from_value(Value::String(s.into())).map_err(|_| {
                ApiError::bad_request(
                    "invalid_request",
                    format!("syntax={s:?}: literal, regex, wildcard or fuzzy"),
                )
            })?,
        };
        let fuzzy_k = match p.get("fuzzy_k") {
            None | Some("") => None,
            Some(k) => Some(k.parse().map_err(|_| {
                ApiError::bad_request("invalid_request", format!("fuzzy_k={k:?}: 0 to 3"))
            })?),
        };
        let mut patterns: Vec<String> = p.all("pattern").into_iter().map(String::from).collect();
        patterns.extend(p.all("patterns").into_iter().map(String::from));
        let mut files: Vec<String> = p.all("file").into_iter().map(String::from).collect();
        files.extend(p.all("files").into_iter().map(String::from));
        Ok(TailRequest {
            patterns,
            watchlist: p
                .get("watchlist")
                .filter(|w| !w.is_empty())
                .map(String::from),
            syntax,
            fuzzy_k,
            ignore_case: flag("ignore_case")?,
            word: flag("word")?,
            line: flag("line")?,
            invert: flag("invert")?,
            files: (!files.is_empty()).then_some(files),
            since: p.get("since").map(String::from),
            until: p.get("until").map(String::from),
        })
    }

    /// The tail's spec, or the search endpoint's 400/404.
    fn spec(&self, ready: &Ready) -> Result<TailSpec, ApiError> {
        let (query, watchlist) = match &self.watchlist {
            Some(name) => {
                watchlists::exclusive(&[
                    ("patterns", !self.patterns.is_empty()),
                    ("syntax", self.syntax != SyntaxName::default()),
                    ("fuzzy_k", self.fuzzy_k.is_some()),
                    ("ignore_case", self.ignore_case),
                    ("word", self.word),
                    ("line", self.line),
                    ("invert", self.invert),
                ])?;
                let w = watchlists::find(ready, name)?;
                (w.shared_query(), Some(w))
            }
            None => (
                Arc::new(build_query(
                    &self.patterns,
                    self.syntax,
                    self.fuzzy_k,
                    self.ignore_case,
                    self.word,
                    self.line,
                    self.invert,
                    ready.session.tuning().cpu_multi,
                )?),
                None,
            ),
        };
        search::select_files(ready, self.files.as_deref())?;
        Ok(TailSpec {
            query,
            watchlist,
            files: self.files.clone(),
            tuning: ready.session.tuning().clone(),
            // Resolved once, now: a duration is before the newest line
            // the corpus holds when the tail starts.
            since: window(ready, self.since.as_deref(), "since")?,
            until: window(ready, self.until.as_deref(), "until")?,
        })
    }
}

/// The last event of a stream the server ends: `event: end` with
/// `{"reason": "until", "until": RFC 3339}` (a line stamped at or after
/// `until` was appended) or `{"reason": "closed"}` (the server stops).
fn end_event(why: Stopped, spec: &TailSpec) -> Event {
    let data = match (why, spec.until) {
        (Stopped::Until, Some(u)) => serde_json::json!({
            "reason": "until",
            "until": format_ms(u),
            "until_ms": u,
        }),
        _ => serde_json::json!({ "reason": "closed" }),
    };
    Event::default().event("end").data(data.to_string())
}

/// How often an idle tail sends a keep-alive comment.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Streams new lines that match a query, from now on, as server-sent
/// events (`text/event-stream`), for as long as the client stays.
///
/// Events: first `event: ready` with `{"files": N}` (the tail is
/// subscribed: every line appended from here on is considered), then one
/// `event: match` per selected line, its data a ripgrep `--json` `match`
/// object (`path`, `lines`, `line_number`, `absolute_offset`,
/// `submatches`; a watchlist tail adds `patterns`: `[{"index",
/// "pattern"}]`, every pattern of the list the line holds, each as if
/// searched alone). Every selected line arrives once, in order within its
/// file, even for a client too slow for the broadcast (it catches up from
/// the resident corpus). A `: keep-alive` comment every 15 s while idle.
/// `since`/`until` keep the lines stamped inside the window (the
/// search's time forms and rules; durations count back from the newest
/// line when the tail starts); a line stamped at or after `until` ends the
/// tail. The server's end of a stream is an `event: end` (`{"reason":
/// "until"}` or `{"reason": "closed"}` when the server stops), then the
/// stream closes. At most `--max-tails` tails at once (429 past it); a
/// client that disconnects frees its slot.
#[utoipa::path(
    method(get, post),
    path = "/api/v1/tail",
    params(
        ("pattern" = Option<Vec<String>>, Query, description = "a pattern (repeatable; `patterns` too)"),
        ("watchlist" = Option<String>, Query, description = "a watchlist's name instead of patterns"),
        ("syntax" = Option<String>, Query, description = "literal, regex (default), wildcard, fuzzy"),
        ("fuzzy_k" = Option<u8>, Query, description = "edits for fuzzy (default 1)"),
        ("ignore_case" = Option<bool>, Query, description = "-i"),
        ("word" = Option<bool>, Query, description = "-w"),
        ("line" = Option<bool>, Query, description = "-x"),
        ("invert" = Option<bool>, Query, description = "-v"),
        ("file" = Option<Vec<String>>, Query, description = "only this served file (repeatable; `files` too)"),
        ("since" = Option<String>, Query, description = "skip lines stamped before this time (as search's since)"),
        ("until" = Option<String>, Query, description = "lines stamped before this time; a line at or after it ends the tail"),
    ),
    request_body(content = TailRequest, description = "POST: the same fields as JSON", content_type = "application/json"),
    responses(
        (status = 200, description = "text/event-stream: `ready`, then `match` events (ripgrep JSON `match` objects); `end` when the server ends it"),
        (status = 400, description = "invalid pattern (with the caret), unknown file, bad time", body = ErrorBody),
        (status = 404, description = "unknown watchlist", body = ErrorBody),
        (status = 422, description = "unknown field or wrong type", body = ErrorBody),
        (status = 429, description = "too many tails (--max-tails)", body = ErrorBody),
        (status = 503, description = "still loading", body = ErrorBody),
    )
)]
pub async fn tail(
    State(state): State<AppState>,
    method: Method,
    RawQuery(q): RawQuery,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    match tail_inner(&state, method, q, body) {
        Ok(r) => r,
        Err(e) => counted(&state, e),
    }
}

fn tail_inner(
    state: &AppState,
    method: Method,
    q: Option<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let req: TailRequest = if method == Method::POST {
        parse_body(body)?
    } else {
        TailRequest::from_params(&Params::new(q.as_deref(), &[]))?
    };
    let ready = ready(state)?;
    let spec = req.spec(&ready)?;
    let permit = state.0.tails.clone().try_acquire_owned().map_err(|_| {
        ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_tails",
            format!(
                "{} live tails are open (--max-tails); close one or retry later",
                state.limits().max_tails
            ),
        )
    })?;
    let files = ready.session.corpus().docs().len();
    let tail = Tail::start(state, spec);
    let first = Event::default()
        .event("ready")
        .data(serde_json::json!({ "files": files }).to_string());
    let pending: VecDeque<Event> = VecDeque::from([first]);
    // The stream owns the slot: hyper drops it when the client goes away.
    // `Some(permit)` while open; `None` once the `end` event is queued.
    let stream = futures_util::stream::unfold(
        (tail, pending, Some(permit)),
        |(mut tail, mut pending, mut permit)| async move {
            loop {
                if let Some(e) = pending.pop_front() {
                    return Some((Ok::<_, Infallible>(e), (tail, pending, permit)));
                }
                permit.as_ref()?;
                match tail.next().await {
                    Ok(hits) => {
                        for h in hits {
                            let v = h.rg_json(tail.spec());
                            pending.push_back(Event::default().event("match").data(v.to_string()));
                        }
                    }
                    Err(why) => {
                        pending.push_back(end_event(why, tail.spec()));
                        permit = None;
                    }
                }
            }
        },
    );
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE).text("keep-alive"))
        .into_response())
}
