//! The one error shape every endpoint answers with:
//! `{"error": {"kind", "message"}}` and an HTTP status.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

/// An error answered to a client.
#[derive(Debug)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// A stable machine-readable word (`invalid_pattern`, `timeout`, ...).
    pub kind: &'static str,
    /// For the user, as the CLI would print it (a regex error keeps its
    /// caret lines).
    pub message: String,
}

/// The body of every error response.
#[derive(Serialize, ToSchema)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// What went wrong.
#[derive(Serialize, ToSchema)]
pub struct ErrorDetail {
    /// A stable word: `bad_json`, `invalid_request`, `invalid_pattern`,
    /// `invalid_query`, `unknown_file`, `unknown_field`, `invalid_time`,
    /// `body_too_large`, `unknown_watchlist`, `too_many_patterns`,
    /// `pattern_too_long`, `too_many_watchlists`, `not_found`,
    /// `method_not_allowed`, `unauthorized`, `loading`, `too_many_requests`,
    /// `timeout`, `cancelled`, `backend`, `internal`.
    pub kind: String,
    /// For the user (multi-line for regex errors, with the caret).
    pub message: String,
}

impl ApiError {
    /// An error with `status`, `kind` and `message`.
    pub fn new(status: StatusCode, kind: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            kind,
            message: message.into(),
        }
    }

    /// 400 with `kind`.
    pub fn bad_request(kind: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, kind, message)
    }

    /// A library error: a pattern or query error is the client's (400), a
    /// backend error (a forced GPU that cannot run the query) is 422, an
    /// I/O error 500.
    pub fn from_lib(e: logsieve::Error) -> ApiError {
        use logsieve::ErrorKind;
        match e.kind() {
            ErrorKind::Pattern(_) => ApiError::bad_request("invalid_pattern", e.to_string()),
            ErrorKind::Query(_) => ApiError::bad_request("invalid_query", e.to_string()),
            ErrorKind::Backend(_) => {
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "backend", e.to_string())
            }
            // The deadline (whose 504 is answered first) or a client that
            // hung up (nobody reads this).
            ErrorKind::Cancelled => ApiError::new(
                StatusCode::GATEWAY_TIMEOUT,
                "cancelled",
                "the query was cancelled (the deadline passed or the client went away)",
            ),
            _ => ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorDetail {
                kind: self.kind.to_string(),
                message: self.message,
            },
        };
        (self.status, axum::Json(body)).into_response()
    }
}
