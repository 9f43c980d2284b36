//! What a search produces, shared by every backend and front end: the
//! selected lines of each document ([`DocHits`]) and which backend answered
//! and why ([`BackendReport`]). The whole answer with the planner's
//! decision is [`crate::SearchResult`].
//!
//! This module depends on nothing else in the crate, so the backends
//! (`cpu`, `gpu`) and the session above them all import it.

use std::time::Duration;

/// What a search should produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Want {
    /// Only the number of selected lines.
    Count,
    /// The selected line ids too.
    #[default]
    Lines,
}

/// The selected lines of one document.
#[derive(Clone, Debug, Default)]
pub struct DocHits {
    /// Number of selected lines (after `-v` and `-m`).
    pub count: u64,
    /// Selected line ids, ascending (empty when only counting, and when
    /// the caller asked for starts only: `SearchOptions::line_ids` false on
    /// the CPU).
    pub lines: Vec<u64>,
    /// The byte offset where each selected line starts, parallel to
    /// `lines`, when the backend knows it without a line index (the CPU
    /// without `-v`); empty otherwise. A printer that has them needs no
    /// line index ([`crate::Document::line_at`]): building one for 1M lines
    /// costs more than the search it serves.
    pub starts: Vec<u64>,
}

/// Two answers are equal when they select the same lines: `starts` is a
/// by-product some backends do not produce.
impl PartialEq for DocHits {
    fn eq(&self, other: &DocHits) -> bool {
        self.count == other.count && self.lines == other.lines
    }
}

impl Eq for DocHits {}

/// Which backend answered, and why.
#[derive(Clone, Debug)]
pub struct BackendReport {
    /// Short name, e.g. `cpu/memmem x1` or `gpu/scan`.
    pub name: String,
    /// Why the routing point chose it (or "forced").
    pub reason: String,
    /// Wall time of the search.
    pub elapsed: Duration,
}

impl std::fmt::Display for BackendReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.name, self.reason)
    }
}
