//! Output: the standard text printer, ripgrep's JSON Lines, the per-pattern
//! report and the stats reports. Printers write to any `Write`; they choose
//! nothing about the search.

pub mod json;
pub mod per_pattern;
pub mod standard;
pub mod stats;

pub use json::JsonPrinter;
pub use standard::Printer;

/// What the text printer reads of a file. A loaded [`logsieve::Document`]
/// is one; so is the partial file rebuilt from a server's answer
/// (`crate::remote`), which holds only the lines the server sent: one
/// printer per format, whichever side searched.
pub trait Source {
    /// The name printed before its lines.
    fn name(&self) -> &str;
    /// Line `id` (0-based), without its `\n`.
    fn line(&self, id: u64) -> &[u8];
    /// The absolute byte offset where line `id` starts.
    fn line_start(&self, id: u64) -> u64;
    /// The line starting at byte `start` (a search's `DocHits::starts`).
    fn line_at(&self, start: u64) -> &[u8];
    /// Lines in the file (context stops at the last).
    fn line_count(&self) -> u64;
    /// Where a NUL byte was found, for "binary file matches".
    fn binary_offset(&self) -> Option<u64>;
}

impl Source for logsieve::Document {
    fn name(&self) -> &str {
        logsieve::Document::name(self)
    }
    fn line(&self, id: u64) -> &[u8] {
        logsieve::Document::line(self, id)
    }
    fn line_start(&self, id: u64) -> u64 {
        self.lines().line_range(id).start
    }
    fn line_at(&self, start: u64) -> &[u8] {
        logsieve::Document::line_at(self, start)
    }
    fn line_count(&self) -> u64 {
        self.lines().len()
    }
    fn binary_offset(&self) -> Option<u64> {
        logsieve::Document::binary_offset(self)
    }
}

/// One step of a file's output with context: a line (selected or context)
/// or the `--` break between groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item {
    Line { id: u64, selected: bool },
    Break,
}

/// The selected lines `ids` (sorted) of a file of `n` lines, with `before`
/// and `after` lines of context, groups that do not touch separated by a
/// [`Item::Break`] — shared by the text and JSON printers.
pub fn with_context(ids: &[u64], before: u64, after: u64, n: u64) -> Vec<Item> {
    let mut items = Vec::with_capacity(ids.len());
    let mut last: Option<u64> = None;
    for (i, &id) in ids.iter().enumerate() {
        let mut start = id.saturating_sub(before);
        if let Some(l) = last {
            start = start.max(l + 1);
            if (after > 0 || before > 0) && start > l + 1 {
                items.push(Item::Break);
            }
        }
        for c in start..id {
            items.push(Item::Line {
                id: c,
                selected: false,
            });
        }
        items.push(Item::Line { id, selected: true });
        last = Some(id);
        let next = ids.get(i + 1).copied().unwrap_or(u64::MAX);
        let stop = id.saturating_add(after).min(n.saturating_sub(1));
        let mut c = id + 1;
        while c <= stop && c < next {
            items.push(Item::Line {
                id: c,
                selected: false,
            });
            last = Some(c);
            c += 1;
        }
    }
    items
}

/// A writer that counts the bytes written through it (`--stats`).
pub struct Counting<W> {
    pub inner: W,
    pub bytes: u64,
}

impl<W: std::io::Write> std::io::Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
