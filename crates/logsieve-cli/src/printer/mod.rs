//! Output: the standard text printer, ripgrep's JSON Lines, the per-pattern
//! report and the stats reports. Printers write to any `Write`; they choose
//! nothing about the search.

pub mod json;
pub mod per_pattern;
pub mod standard;
pub mod stats;

pub use json::JsonPrinter;
pub use standard::{Printer, Streamer};

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
    /// Where a NUL byte was found before any line is printed, for "binary
    /// file matches": for a local file, in its first 64 KiB only (rg's
    /// check on a memory-mapped file; the printer checks each printed line
    /// for the rest).
    fn binary_offset(&self) -> Option<u64>;
    /// All the file's bytes when the printer has them (a local file): then
    /// lines and context are found around the search's line starts with
    /// `memchr`/`memrchr`, and no line index is built.
    fn bytes(&self) -> Option<&[u8]> {
        None
    }
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
    /// rg searches one named file through a memory map and checks the
    /// first 64 KiB, then each line it prints, for a NUL: a whole-file scan
    /// here cost 12% of a literal search's instructions (callgrind, 39 MB).
    fn binary_offset(&self) -> Option<u64> {
        let data = self.data();
        memchr::memchr(0, &data[..data.len().min(logsieve::corpus::BINARY_SNIFF)]).map(|o| o as u64)
    }
    fn bytes(&self) -> Option<&[u8]> {
        Some(self.data())
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

/// One printed line of a file, found by offset: where it starts, its id
/// (0-based; meaningful only when the search gave ids) and whether it is
/// selected or context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spot {
    Line { start: u64, id: u64, selected: bool },
    Break,
}

/// The selected lines starting at `starts` (sorted line starts in `hay`)
/// with `before` and `after` lines of context, found by scanning around
/// each with `memrchr`/`memchr` as rg does: no line index (one entry per
/// line of the file) for a few hundred matches. `ids`, parallel to
/// `starts` or empty, numbers the lines (context lines are counted from
/// their selected line). Same groups and `--` breaks as [`with_context`].
pub fn context_at(hay: &[u8], starts: &[u64], ids: &[u64], before: u64, after: u64) -> Vec<Spot> {
    if before == 0 && after == 0 {
        // No context: the selected lines alone, no scan. Finding each
        // line's end here (for the next line's floor) read every printed
        // line from memory once more: 6.5% of `latency_ms=19\d\d`'s
        // process, 34,666 lines (perf, build machine, 2026-11-25).
        let line = |(i, &s): (usize, &u64)| Spot::Line {
            start: s,
            id: ids.get(i).copied().unwrap_or(0),
            selected: true,
        };
        return starts.iter().enumerate().map(line).collect();
    }
    // The start of the line after `s` (past `hay.len()` for a last line
    // without `\n`).
    let next = |s: usize| memchr::memchr(b'\n', &hay[s..]).map_or(hay.len(), |i| s + i) + 1;
    let mut items = Vec::with_capacity(starts.len());
    // The start of the line after the last one printed.
    let mut printed_end: Option<usize> = None;
    let mut earlier = Vec::new();
    // The lines around a match are read cold too: fetch the window of
    // the match 8 ahead (~256 bytes a line each side).
    let (back, ahead) = (
        256 * before.min(4) as usize,
        256 * (after.min(4) as usize + 1),
    );
    for (i, &s) in starts.iter().enumerate() {
        if let Some(&a) = starts.get(i + PREFETCH_AHEAD) {
            let a = a as usize;
            for at in (a.saturating_sub(back)..a + ahead).step_by(256) {
                prefetch_line(hay, at);
            }
        }
        let s = s as usize;
        let id = ids.get(i).copied().unwrap_or(0);
        let floor = printed_end.unwrap_or(0);
        earlier.clear();
        let mut first = s;
        while (earlier.len() as u64) < before && first > floor {
            // `hay[first - 1]` is the previous line's `\n`.
            first = memchr::memrchr(b'\n', &hay[floor..first - 1]).map_or(floor, |j| floor + j + 1);
            earlier.push(first);
        }
        if printed_end.is_some_and(|pe| first > pe) && (before > 0 || after > 0) {
            items.push(Spot::Break);
        }
        for (k, &p) in earlier.iter().enumerate().rev() {
            items.push(Spot::Line {
                start: p as u64,
                id: id.saturating_sub(k as u64 + 1),
                selected: false,
            });
        }
        items.push(Spot::Line {
            start: s as u64,
            id,
            selected: true,
        });
        let limit = starts.get(i + 1).map_or(usize::MAX, |&n| n as usize);
        let mut at = next(s);
        let mut k = 0u64;
        while k < after && at < hay.len() && at < limit {
            k += 1;
            items.push(Spot::Line {
                start: at as u64,
                id: id + k,
                selected: false,
            });
            at = next(at);
        }
        printed_end = Some(at);
    }
    items
}

/// One printed record of a `-U` file: a block of selected lines (its index)
/// or a context line (its start).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockSpot {
    Block(usize),
    Context(usize),
}

/// `-U` with context: the blocks `blocks` (sorted line ranges of `hay`,
/// each from a line's start to its last line's end, `\n` excluded) with
/// `before` and `after` lines of context around each, a context line
/// printed once (rg: the lines between two blocks are the first's after
/// and the second's before context). [`context_at`]'s rules, with a block
/// of lines where it has one line.
pub fn blocks_with_context(
    hay: &[u8],
    blocks: &[std::ops::Range<usize>],
    before: u64,
    after: u64,
) -> Vec<BlockSpot> {
    let next = |s: usize| memchr::memchr(b'\n', &hay[s..]).map_or(hay.len(), |i| s + i) + 1;
    let mut items = Vec::with_capacity(blocks.len());
    let mut printed_end = 0usize;
    let mut earlier = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        earlier.clear();
        let mut first = b.start;
        while (earlier.len() as u64) < before && first > printed_end {
            first = memchr::memrchr(b'\n', &hay[printed_end..first - 1])
                .map_or(printed_end, |j| printed_end + j + 1);
            earlier.push(first);
        }
        items.extend(earlier.iter().rev().map(|&p| BlockSpot::Context(p)));
        items.push(BlockSpot::Block(i));
        let limit = blocks.get(i + 1).map_or(usize::MAX, |n| n.start);
        let mut at = b.end + 1;
        let mut k = 0u64;
        while k < after && at < hay.len() && at < limit {
            k += 1;
            items.push(BlockSpot::Context(at));
            at = next(at);
        }
        printed_end = at;
    }
    items
}

/// How many printed lines ahead [`prefetch_line`] asks for.
pub const PREFETCH_AHEAD: usize = 8;

/// Asks the CPU to bring the first 256 bytes of the line at `start` into
/// its cache. The search found the printed lines long before the printer
/// reads them (they are out of the cache by then, ~200 bytes each, a few
/// KiB apart): reading each one cold cost the printer a memory round trip
/// a line (`memchr` to the line's end was 15-22% of a one-shot that
/// prints 20-35k lines, perf, build machine, 2026-11-25). Fetching a few
/// lines ahead overlaps those trips. A hint only: no effect on output.
#[inline]
pub fn prefetch_line(hay: &[u8], start: usize) {
    #[cfg(target_arch = "x86_64")]
    for at in (start..hay.len().min(start + 256)).step_by(64) {
        // SAFETY: `at` is inside `hay`; a prefetch reads nothing the
        // program sees and never faults.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                hay.as_ptr().add(at).cast::<i8>(),
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (hay, start);
}

/// The line starting at `start` in `hay` (its `\n` excluded) and the
/// offset in it of its first NUL byte, if any, from one `memchr2` pass
/// (the printer's binary check, rg's, on every printed line).
pub fn line_and_nul(hay: &[u8], start: usize) -> (&[u8], Option<usize>) {
    let rest = &hay[start.min(hay.len())..];
    match memchr::memchr2(b'\n', 0, rest) {
        Some(j) if rest[j] == 0 => {
            let end = memchr::memchr(b'\n', &rest[j..]).map_or(rest.len(), |e| j + e);
            (&rest[..end], Some(j))
        }
        Some(j) => (&rest[..j], None),
        None => (rest, None),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Line starts by hand (a last line without `\n` included).
    fn starts_of(hay: &[u8]) -> Vec<u64> {
        let mut out = Vec::new();
        let mut at = 0;
        while at < hay.len() {
            out.push(at as u64);
            at = hay[at..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(hay.len(), |i| at + i + 1);
        }
        out
    }

    /// Every file of up to 8 bytes over `a`, `\n` and NUL, every start:
    /// [`line_and_nul`] is the line up to its `\n` and the first NUL in
    /// it, as found byte by byte; [`prefetch_line`] takes every start,
    /// the end included.
    #[test]
    fn line_and_nul_agrees_with_a_byte_loop() {
        for len in 0..=8u32 {
            for code in 0..3u32.pow(len) {
                let hay: Vec<u8> = (0..len)
                    .map(|i| [b'a', b'\n', 0][(code / 3u32.pow(i) % 3) as usize])
                    .collect();
                for start in 0..=hay.len() + 1 {
                    let rest = &hay[start.min(hay.len())..];
                    let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
                    let nul = rest[..end].iter().position(|&b| b == 0);
                    assert_eq!(
                        line_and_nul(&hay, start),
                        (&rest[..end], nul),
                        "{hay:?} at {start}"
                    );
                    prefetch_line(&hay, start);
                }
            }
        }
    }

    /// Every file of up to 7 bytes over `a`, `\n`, every set of selected
    /// lines, 0-3 lines of context each side: the spots found by offset
    /// are [`with_context`]'s lines by id, at their starts, with the same
    /// breaks.
    #[test]
    fn context_by_offset_agrees_with_context_by_id() {
        for len in 0..=7u32 {
            for bits in 0..(1u32 << len) {
                let hay: Vec<u8> = (0..len)
                    .map(|i| if (bits >> i) & 1 == 1 { b'\n' } else { b'a' })
                    .collect();
                let all = starts_of(&hay);
                let n = all.len() as u64;
                for sel in 0..(1u64 << n) {
                    let ids: Vec<u64> = (0..n).filter(|i| (sel >> i) & 1 == 1).collect();
                    let starts: Vec<u64> = ids.iter().map(|&i| all[i as usize]).collect();
                    for before in 0..=3 {
                        for after in 0..=3 {
                            let want: Vec<Spot> = with_context(&ids, before, after, n)
                                .into_iter()
                                .map(|it| match it {
                                    Item::Break => Spot::Break,
                                    Item::Line { id, selected } => Spot::Line {
                                        start: all[id as usize],
                                        id,
                                        selected,
                                    },
                                })
                                .collect();
                            let got = context_at(&hay, &starts, &ids, before, after);
                            assert_eq!(got, want, "{hay:?} ids {ids:?} -B{before} -A{after}");
                        }
                    }
                }
            }
        }
    }
}
