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

/// Where a search hands over its selected lines while it runs, before its
/// answer: a printer that writes a line while the search has it in the
/// CPU's cache (as ripgrep does) instead of reading every printed line
/// back from memory afterwards (a page-table walk and a cache miss each:
/// 2.5 ms of 36 for 20k lines of a 194 MB file, against rg's 0.5).
///
/// What is handed over is always in the answer too; an engine that does
/// not stream hands over nothing, and the caller prints from the answer.
/// [`Session::execute_streamed`](crate::Session::execute_streamed).
pub trait HitSink {
    /// The next selected lines of document `doc`, in order after those
    /// handed over before: their starts and, when line ids were asked
    /// for, their ids (else empty). Only the CPU engine on a document it
    /// searches in one part without `-v` calls this.
    fn lines(&mut self, doc: usize, starts: &[u64], ids: &[u64]);
    /// Document `doc` is searched and `hits` is its whole answer (the
    /// lines handed over before included). The CPU engine calls it for
    /// each document, in order; other engines do not.
    fn doc_done(&mut self, doc: usize, hits: &DocHits);
}

/// A sink that keeps nothing ([`Session::execute_with`](crate::Session::execute_with)).
pub(crate) struct NoSink;

impl HitSink for NoSink {
    fn lines(&mut self, _: usize, _: &[u64], _: &[u64]) {}
    fn doc_done(&mut self, _: usize, _: &DocHits) {}
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
