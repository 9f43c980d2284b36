//! The library's one error type.

use std::fmt;

/// An error from loading, query building or searching. The message is meant
/// for the user as is.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
}

/// What went wrong, for callers that branch on it.
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Reading an input failed.
    Io {
        /// The path (or `<stdin>`).
        path: String,
        /// The underlying error.
        err: std::io::Error,
    },
    /// A pattern could not be compiled; the message shows where.
    Pattern(String),
    /// A query option is invalid (e.g. `--fuzzy 9`).
    Query(String),
    /// A backend could not run this query or corpus (no GPU adapter, limits
    /// too small, device lost, ...).
    Backend(String),
    /// The caller cancelled the request ([`crate::Cancel`]): no answer.
    Cancelled,
}

impl Error {
    pub(crate) fn io(path: &str, err: std::io::Error) -> Error {
        Error {
            kind: ErrorKind::Io {
                path: path.to_string(),
                err,
            },
        }
    }

    /// A pattern error with a message for the user.
    pub fn pattern(msg: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Pattern(msg.into()),
        }
    }

    /// An invalid-query error with a message for the user.
    pub fn query(msg: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Query(msg.into()),
        }
    }

    /// A backend error with a message for the user.
    pub fn backend(msg: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Backend(msg.into()),
        }
    }

    /// A request cancelled by its caller ([`crate::Cancel`]).
    pub fn cancelled() -> Error {
        Error {
            kind: ErrorKind::Cancelled,
        }
    }

    /// True for [`ErrorKind::Cancelled`].
    pub fn is_cancelled(&self) -> bool {
        matches!(self.kind, ErrorKind::Cancelled)
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Io { path, err } => {
                let msg = match err.kind() {
                    std::io::ErrorKind::NotFound => "No such file or directory".to_string(),
                    std::io::ErrorKind::PermissionDenied => "Permission denied".to_string(),
                    _ => err.to_string(),
                };
                write!(f, "{path}: {msg}")
            }
            ErrorKind::Pattern(m) => write!(f, "{m}"),
            ErrorKind::Query(m) => write!(f, "{m}"),
            ErrorKind::Backend(m) => write!(f, "{m}"),
            ErrorKind::Cancelled => write!(f, "the request was cancelled"),
        }
    }
}

impl std::error::Error for Error {}
