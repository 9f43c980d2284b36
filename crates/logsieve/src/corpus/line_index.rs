//! The line index: where each line of a document starts.

use std::ops::Range;

/// The start offset of every line of a document.
///
/// `starts` holds one entry per line plus a final entry one past the last
/// line's terminator, so that line `i` is always
/// `data[starts[i] .. starts[i + 1] - 1]` — the `\n` excluded, a `\r` before
/// it kept (as ripgrep does). A last line without a trailing newline gets a
/// virtual terminator at `data.len()`. Offsets are `u64`: documents past
/// 4 GiB work.
#[derive(Clone, Debug, Default)]
pub struct LineIndex {
    pub(super) starts: Vec<u64>,
}

impl LineIndex {
    /// Builds the index of `data` with one pass of `memchr`.
    pub fn new(data: &[u8]) -> LineIndex {
        let mut starts = Vec::with_capacity(data.len() / 64 + 2);
        starts.push(0u64);
        for nl in memchr::memchr_iter(b'\n', data) {
            starts.push(nl as u64 + 1);
        }
        if data.last().is_some_and(|&b| b != b'\n') {
            // The last line has no terminator: a virtual one at data.len().
            starts.push(data.len() as u64 + 1);
        }
        if data.is_empty() {
            // No lines at all: keep only the sentinel.
            starts.truncate(1);
        }
        LineIndex { starts }
    }

    /// The number of lines.
    pub fn len(&self) -> u64 {
        self.starts.len() as u64 - 1
    }

    /// True when the document has no lines (it is empty).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The byte range of line `i`, terminator excluded.
    pub fn line_range(&self, i: u64) -> Range<u64> {
        let i = i as usize;
        self.starts[i]..self.starts[i + 1] - 1
    }

    /// Extends the index over `added`, bytes appended at offset `base` (the
    /// document's old length). When the old bytes ended in a line without
    /// a terminator, `added` continues that line (as in the file): its
    /// virtual terminator goes, and the line ends at the first `\n` of
    /// `added`. Each `\n` adds the next line's start; a last line of
    /// `added` without one gets a virtual terminator.
    pub fn extend(&mut self, base: u64, added: &[u8]) {
        if added.is_empty() {
            return;
        }
        if self.starts.last().copied() == Some(base + 1) {
            // The old last line had no terminator: it goes on.
            self.starts.pop();
        }
        debug_assert_eq!(self.starts.last().copied(), Some(base));
        self.starts
            .extend(memchr::memchr_iter(b'\n', added).map(|nl| base + nl as u64 + 1));
        if added.last() != Some(&b'\n') {
            self.starts.push(base + added.len() as u64 + 1);
        }
    }

    /// The raw start offsets (one per line, plus the end sentinel).
    pub fn starts(&self) -> &[u64] {
        &self.starts
    }

    /// The line containing byte `offset` (the line whose range or terminator
    /// holds it).
    pub fn line_of(&self, offset: u64) -> u64 {
        (self.starts.partition_point(|&s| s <= offset) - 1) as u64
    }
}
