//! The standard text printer: lines with optional file name, line number,
//! context and colour; `-c`, `-l` and `-o` — ripgrep's output.

use std::io::{self, Write};

use logsieve::{Corpus, DocHits, Document, Query};

use crate::flags::SearchArgs;

/// Prints a search result as `rg` would.
pub struct Printer<'a> {
    pub a: &'a SearchArgs,
    pub query: &'a Query,
    pub color: bool,
    pub with_filename: bool,
    pub line_number: bool,
}

const C_PATH: &str = "\x1b[0m\x1b[35m";
const C_LINE: &str = "\x1b[0m\x1b[32m";
const C_MATCH: &str = "\x1b[0m\x1b[1m\x1b[31m";
const C_RESET: &str = "\x1b[0m";

impl Printer<'_> {
    pub fn print<W: Write>(
        &self,
        out: &mut W,
        corpus: &Corpus,
        result: &logsieve::SearchResult,
    ) -> io::Result<()> {
        // With context, rg puts `--` between files as well as between
        // groups of one file.
        let a = self.a;
        let context = [a.after_context, a.before_context, a.context]
            .iter()
            .any(|c| c.is_some_and(|n| n > 0));
        let mut printed = false;
        for (doc, hits) in corpus.docs().iter().zip(&result.docs) {
            if self.a.files_with_matches {
                if hits.count > 0 {
                    self.path(out, doc)?;
                    writeln!(out)?;
                }
                continue;
            }
            if self.a.count {
                if self.with_filename {
                    if hits.count > 0 {
                        self.path(out, doc)?;
                        writeln!(out, ":{}", hits.count)?;
                    }
                } else {
                    writeln!(out, "{}", hits.count)?;
                }
                continue;
            }
            if hits.lines.is_empty() {
                continue;
            }
            if context && printed {
                out.write_all(b"--\n")?;
            }
            printed = true;
            if let Some(off) = doc.binary_offset() {
                if self.with_filename {
                    self.path(out, doc)?;
                    write!(out, ": ")?;
                }
                writeln!(
                    out,
                    "binary file matches (found \"\\0\" byte around offset {off})"
                )?;
                continue;
            }
            self.lines(out, doc, hits)?;
        }
        Ok(())
    }

    fn path<W: Write>(&self, out: &mut W, doc: &Document) -> io::Result<()> {
        if self.color {
            write!(out, "{C_PATH}{}{C_RESET}", doc.name())
        } else {
            write!(out, "{}", doc.name())
        }
    }

    fn prefix<W: Write>(&self, out: &mut W, doc: &Document, id: u64, sep: u8) -> io::Result<()> {
        if self.with_filename {
            self.path(out, doc)?;
            out.write_all(&[sep])?;
        }
        if self.line_number {
            if self.color {
                write!(out, "{C_LINE}{}{C_RESET}", id + 1)?;
            } else {
                write!(out, "{}", id + 1)?;
            }
            out.write_all(&[sep])?;
        }
        Ok(())
    }

    fn lines<W: Write>(&self, out: &mut W, doc: &Document, hits: &DocHits) -> io::Result<()> {
        let a = self.a;
        let ids = &hits.lines[..];
        // The line's bytes from its start offset when the search gave them
        // (no line index is built), else from the index.
        let text = |i: usize, id: u64| match hits.starts.get(i) {
            Some(&s) if hits.starts.len() == ids.len() => doc.line_at(s),
            _ => doc.line(id),
        };
        if a.only_matching {
            if self.query.invert() {
                return Ok(());
            }
            for (i, &id) in ids.iter().enumerate() {
                let line = text(i, id);
                for m in self.query.find_iter_line(line) {
                    if m.is_empty() {
                        continue;
                    }
                    self.prefix(out, doc, id, b':')?;
                    self.matched(out, &line[m])?;
                    out.write_all(b"\n")?;
                }
            }
            return Ok(());
        }
        let after = a.after_context.or(a.context).unwrap_or(0);
        let before = a.before_context.or(a.context).unwrap_or(0);
        if after == 0 && before == 0 {
            for (i, &id) in ids.iter().enumerate() {
                self.line(out, doc, id, text(i, id), true)?;
            }
            return Ok(());
        }
        let n = doc.lines().len();
        let mut last: Option<u64> = None;
        for (i, &id) in ids.iter().enumerate() {
            let mut start = id.saturating_sub(before);
            if let Some(l) = last {
                start = start.max(l + 1);
                if (after > 0 || before > 0) && start > l + 1 {
                    out.write_all(b"--\n")?;
                }
            }
            for c in start..id {
                self.line(out, doc, c, doc.line(c), false)?;
            }
            self.line(out, doc, id, text(i, id), true)?;
            last = Some(id);
            let next = ids.get(i + 1).copied().unwrap_or(u64::MAX);
            let stop = id.saturating_add(after).min(n.saturating_sub(1));
            let mut c = id + 1;
            while c <= stop && c < next {
                self.line(out, doc, c, doc.line(c), false)?;
                last = Some(c);
                c += 1;
            }
        }
        Ok(())
    }

    fn matched<W: Write>(&self, out: &mut W, bytes: &[u8]) -> io::Result<()> {
        if self.color {
            out.write_all(C_MATCH.as_bytes())?;
            out.write_all(bytes)?;
            out.write_all(C_RESET.as_bytes())
        } else {
            out.write_all(bytes)
        }
    }

    fn line<W: Write>(
        &self,
        out: &mut W,
        doc: &Document,
        id: u64,
        line: &[u8],
        is_match: bool,
    ) -> io::Result<()> {
        self.prefix(out, doc, id, if is_match { b':' } else { b'-' })?;
        if self.color && is_match && !self.query.invert() {
            // Adjacent matches are one coloured run, as rg prints them.
            let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
            for m in self.query.find_iter_line(line) {
                match runs.last_mut() {
                    Some(r) if r.end == m.start => r.end = m.end,
                    _ => runs.push(m),
                }
            }
            let mut at = 0;
            for m in runs {
                out.write_all(&line[at..m.start])?;
                self.matched(out, &line[m.clone()])?;
                at = m.end;
            }
            out.write_all(&line[at..])?;
        } else {
            out.write_all(line)?;
        }
        out.write_all(b"\n")
    }
}
