//! A test-only way to append lines to the served corpus and publish them
//! to the live tails, so tails can be tested without the follower
//! (`serve --follow`).
//!
//! [`append`] grows the session as the follower does (under its write
//! lock) and only then publishes the [`Appended`] batch, as the
//! follower's contract asks: a tail test needs no files being written.
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
use logsieve::Document;
use serde::Deserialize;

use crate::error::ApiError;
use crate::live::Appended;
use crate::state::AppState;

/// The environment variable that turns the test route on.
pub const TEST_APPEND_ENV: &str = "LOGSIEVE_TEST_APPEND";

/// True when `LOGSIEVE_TEST_APPEND=1`.
pub fn enabled() -> bool {
    std::env::var(TEST_APPEND_ENV).is_ok_and(|v| v == "1")
}

/// Appends `text` (whole lines: a missing last `\n` is added) to the
/// document named `name` (a new document when none is) through the
/// follower's own write path (`Session::append_lines` /
/// `Session::push_document` under the session's write lock), then
/// publishes the batch. Returns what was published.
pub fn append(state: &AppState, name: &str, text: &[u8]) -> Result<Appended, String> {
    let lock = state.ready_lock().ok_or("the corpus is still loading")?;
    let mut bytes = text.to_vec();
    if bytes.last().is_some_and(|&b| b != b'\n') {
        bytes.push(b'\n');
    }
    let batch = {
        let mut w = lock.write();
        let ready = &mut *w;
        let docs = ready.session.corpus().docs();
        let doc = docs
            .iter()
            .position(|d| d.name() == name)
            .unwrap_or(docs.len());
        let (first_line, offset) = if doc == docs.len() {
            let d = Document::from_bytes(name, bytes.clone());
            ready.session.push_document(d).map_err(|e| e.to_string())?;
            (1, 0)
        } else {
            let offset = docs[doc].first_offset() + docs[doc].data().len() as u64;
            let first = ready
                .session
                .append_lines(doc, &bytes)
                .map_err(|e| e.to_string())?;
            (first + 1, offset)
        };
        ready.lines += memchr::memchr_iter(b'\n', &bytes).count() as u64;
        Appended {
            doc,
            name: name.to_string(),
            first_line,
            offset,
            bytes: Arc::from(&bytes[..]),
        }
    };
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
