//! A test-only way to append lines to the served corpus and publish them
//! to the live tails, so tails can be tested without the follower
//! (`serve --follow`).
//!
//! [`append`] rebuilds the session on the CPU with one document grown
//! (the other documents copied, watchlists defined again, no stats
//! columns), swaps it in ([`AppState::replace_ready`]) and only then
//! publishes the [`Appended`] batch, as the follower's contract asks. It
//! copies the whole corpus per call: for tests, never for production.
//!
//! `POST /api/v1/_test/append` (`{"file": NAME, "text": LINES}`; a new
//! name adds a document) exists only when the server starts with
//! `LOGSIEVE_TEST_APPEND=1` in its environment (the page's end-to-end
//! test uses it); it is not in the OpenAPI document.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use logsieve::{Corpus, Document, Session};
use serde::Deserialize;

use crate::error::ApiError;
use crate::live::Appended;
use crate::state::{AppState, Ready};

/// The environment variable that turns the test route on.
pub const TEST_APPEND_ENV: &str = "LOGSIEVE_TEST_APPEND";

/// True when `LOGSIEVE_TEST_APPEND=1`.
pub fn enabled() -> bool {
    std::env::var(TEST_APPEND_ENV).is_ok_and(|v| v == "1")
}

/// Appends `text` (whole lines: a missing last `\n` is added) to the
/// document named `name` (a new document when none is), swaps the grown
/// session in, then publishes the batch. Returns what was published.
pub fn append(state: &AppState, name: &str, text: &[u8]) -> Result<Appended, String> {
    let old = state.ready().ok_or("the corpus is still loading")?;
    let mut bytes = text.to_vec();
    if bytes.last().is_some_and(|&b| b != b'\n') {
        bytes.push(b'\n');
    }
    let docs = old.session.corpus().docs();
    let doc = docs
        .iter()
        .position(|d| d.name() == name)
        .unwrap_or(docs.len());
    let mut corpus = Corpus::new();
    let mut appended = None;
    for i in 0..docs.len().max(doc + 1) {
        let (dname, mut data) = match docs.get(i) {
            Some(d) => (d.name().to_string(), d.data().to_vec()),
            None => (name.to_string(), Vec::new()),
        };
        if i == doc {
            if data.last().is_some_and(|&b| b != b'\n') {
                data.push(b'\n');
            }
            let first_line = memchr::memchr_iter(b'\n', &data).count() as u64 + 1;
            appended = Some(Appended {
                doc,
                name: dname.clone(),
                first_line,
                offset: data.len() as u64,
                bytes: Arc::from(&bytes[..]),
            });
            data.extend_from_slice(&bytes);
        }
        corpus.push(Document::from_bytes(dname, data));
    }
    let session = Session::with_tuning(corpus, old.session.tuning().clone());
    for w in old.session.watchlists() {
        session
            .define_watchlist(w.name(), &w.patterns()[..], w.options())
            .map_err(|e| e.to_string())?;
    }
    state.replace_ready(Ready::new(session));
    let batch = appended.ok_or("nothing appended")?;
    state.live().publish(batch.clone());
    Ok(batch)
}

/// `POST /api/v1/_test/append`'s body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppendRequest {
    /// The document's name.
    pub file: String,
    /// Lines to append.
    pub text: String,
}

/// `POST /api/v1/_test/append` (only with `LOGSIEVE_TEST_APPEND=1`).
pub async fn route(State(state): State<AppState>, Json(req): Json<AppendRequest>) -> Response {
    let st = state.clone();
    let r = tokio::task::spawn_blocking(move || append(&st, &req.file, req.text.as_bytes())).await;
    match r {
        Ok(Ok(b)) => Json(serde_json::json!({
            "doc": b.doc, "first_line": b.first_line, "offset": b.offset,
        }))
        .into_response(),
        Ok(Err(e)) => {
            ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "not_ready", e).into_response()
        }
        Err(e) => ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string())
            .into_response(),
    }
}
