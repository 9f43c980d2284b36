//! The standard text printer: lines with optional file name (inline or as a
//! heading), line number, column, byte offset, context and colour; `-c`,
//! `-l`, `--files-without-match`, `-o`, `-r`, `--vimgrep`, `--passthru`,
//! `--trim` and `-0` — ripgrep's output.

use std::io::{self, Write};
use std::ops::Range;

use logsieve::{Corpus, DocHits, Query};

use super::{context_at, with_context, Item, Source, Spot};
use crate::flags::SearchArgs;

/// Prints a search result as `rg` would.
pub struct Printer<'a> {
    pub a: &'a SearchArgs,
    pub query: &'a Query,
    pub color: bool,
    pub with_filename: bool,
    pub line_number: bool,
    /// The file name on its own line above its lines (`--heading`).
    pub heading: bool,
}

const C_PATH: &str = "\x1b[0m\x1b[35m";
const C_LINE: &str = "\x1b[0m\x1b[32m";
const C_MATCH: &str = "\x1b[0m\x1b[1m\x1b[31m";
const C_RESET: &str = "\x1b[0m";

/// Where a printed line or match sits, for its prefix.
struct At {
    id: u64,
    /// The 1-based column, on selected lines and matches.
    column: Option<usize>,
    /// The absolute byte offset of the line or match.
    offset: u64,
    selected: bool,
}

impl Printer<'_> {
    fn column(&self) -> bool {
        self.a.column || self.a.vimgrep
    }

    /// `\r\n` after `-o` matches, counts and paths under `--crlf`, as rg
    /// (whole lines keep their own terminator).
    fn terminator(&self) -> &'static [u8] {
        if self.a.crlf {
            b"\r\n"
        } else {
            b"\n"
        }
    }

    pub fn print<W: Write>(
        &self,
        out: &mut W,
        corpus: &Corpus,
        result: &logsieve::SearchResult,
    ) -> io::Result<()> {
        self.print_files(out, corpus.docs().iter().zip(&result.docs))
    }

    /// Prints each file's hits, in order: the loaded corpus's files or
    /// the ones a server answered for.
    pub fn print_files<'d, W: Write, S: Source + 'd>(
        &self,
        out: &mut W,
        files: impl IntoIterator<Item = (&'d S, &'d DocHits)>,
    ) -> io::Result<()> {
        let mut printed = false;
        for (doc, hits) in files {
            self.file(out, doc, hits, &mut printed)?;
        }
        Ok(())
    }

    /// Prints one file's hits; `printed` says whether an earlier file
    /// printed something (for the separator before this one).
    fn file<W: Write, S: Source>(
        &self,
        out: &mut W,
        doc: &S,
        hits: &DocHits,
        printed: &mut bool,
    ) -> io::Result<()> {
        let a = self.a;
        if a.files_with_matches || a.files_without_match {
            if (hits.count > 0) == a.files_with_matches {
                self.path(out, doc)?;
                out.write_all(if a.null { b"\0" } else { self.terminator() })?;
            }
            return Ok(());
        }
        if a.count {
            // As rg 13: a file without a selected line prints nothing, one
            // file or many, unless --include-zero (grep's way).
            if hits.count == 0 && !a.pipeline.include_zero {
                return Ok(());
            }
            if self.with_filename {
                self.path(out, doc)?;
                out.write_all(if a.null { b"\0" } else { b":" })?;
            }
            write!(out, "{}", hits.count)?;
            out.write_all(self.terminator())?;
            return Ok(());
        }
        // Without line numbers the search gives only starts.
        if hits.lines.is_empty() && hits.starts.is_empty() {
            return Ok(());
        }
        let (spots, by_start) = self.spots(doc, hits);
        // rg stops at a NUL in a context line before the first
        // selected one with nothing printed for the file, not even
        // the message (no match was reached).
        let first = spots.iter().find_map(|s| match *s {
            Spot::Line {
                start,
                id,
                selected,
            } => Some((start, id, selected)),
            Spot::Break => None,
        });
        if let Some((start, id, false)) = first {
            let line = if by_start {
                doc.line_at(start)
            } else {
                doc.line(id)
            };
            let binary = doc.binary_offset().is_some();
            if !a.input.text && (binary || memchr::memchr(0, line).is_some()) {
                return Ok(());
            }
        }
        if !self.open(out, doc, printed)? {
            return Ok(());
        }
        match (self.multiline_only(), doc.bytes()) {
            (true, Some(hay)) => self.match_pieces(out, doc, hay),
            (false, Some(hay)) if self.multiline_spans() => {
                let spans = Spans::new(self.query.multiline_blocks(hay, a.max_count));
                if a.vimgrep {
                    self.vimgrep_matches(out, doc, hay, &spans)
                } else {
                    self.lines(out, doc, spots, by_start, Some(&spans))
                        .map(drop)
                }
            }
            _ => self.lines(out, doc, spots, by_start, None).map(drop),
        }
    }

    /// What comes before a file's first printed line: the separator from
    /// the file before, "binary file matches" (then false: nothing more of
    /// it is printed), or the heading.
    fn open<W: Write, S: Source>(
        &self,
        out: &mut W,
        doc: &S,
        printed: &mut bool,
    ) -> io::Result<bool> {
        let a = self.a;
        // With context, rg puts `--` between files as well as between
        // groups of one file (a blank line instead under --heading).
        let context = !a.passthru
            && [a.after_context, a.before_context, a.context]
                .iter()
                .any(|c| c.is_some_and(|n| n > 0));
        if self.heading && *printed {
            out.write_all(b"\n")?;
        } else if context && *printed {
            out.write_all(b"--\n")?;
        }
        *printed = true;
        if let Some(off) = doc.binary_offset().filter(|_| !a.input.text) {
            if self.with_filename {
                self.path(out, doc)?;
                write!(out, ": ")?;
            }
            writeln!(
                out,
                "binary file matches (found \"\\0\" byte around offset {off})"
            )?;
            return Ok(false);
        }
        if self.heading {
            self.path(out, doc)?;
            out.write_all(if a.null { b"\0" } else { b"\n" })?;
        }
        Ok(true)
    }

    /// True when a file's lines can be printed piece by piece as the
    /// search finds them ([`Streamer`]): each printed line stands alone
    /// (no context, no `-U`), and the pieces come in order (no `-v`).
    fn streams(&self) -> bool {
        let a = self.a;
        let context = a.passthru
            || [a.after_context, a.before_context, a.context]
                .iter()
                .any(|c| c.is_some_and(|n| n > 0));
        !(context
            || a.count
            || a.files_with_matches
            || a.files_without_match
            || a.multiline
            || self.query.invert())
    }

    /// `-U -o`: each match is printed line piece by line piece (rg).
    fn multiline_only(&self) -> bool {
        self.query.multiline() && self.a.only_matching && !self.query.invert()
    }

    /// `-U` with colour, `--column` or `--vimgrep`: the matches, found
    /// over the whole file, decide what a line shows (a line's own search
    /// cannot see a match that crosses its `\n`).
    fn multiline_spans(&self) -> bool {
        self.query.multiline()
            && !self.query.invert()
            && (self.color || self.column())
            && self.a.replace.is_none()
    }

    /// `-U --vimgrep`: one line per match, the line where it starts, with
    /// the match's column on that line, as rg prints it.
    fn vimgrep_matches<W: Write, S: Source>(
        &self,
        out: &mut W,
        doc: &S,
        hay: &[u8],
        spans: &Spans,
    ) -> io::Result<()> {
        let (mut at, mut id) = (0usize, 0u64);
        for m in &spans.matches {
            id += memchr::memchr_iter(b'\n', &hay[at..m.start]).count() as u64;
            at = m.start;
            let ls = memchr::memrchr(b'\n', &hay[..m.start]).map_or(0, |i| i + 1);
            let le = memchr::memchr(b'\n', &hay[m.start..]).map_or(hay.len(), |i| m.start + i);
            let spot = At {
                id,
                column: Some(m.start - ls + 1),
                offset: ls as u64,
                selected: true,
            };
            self.prefix(out, doc, &spot)?;
            // rg colours only this match's piece on the line.
            let piece = m.start - ls..m.end.min(le) - ls;
            self.text(out, &hay[ls..le], true, || vec![piece])?;
        }
        Ok(())
    }

    /// `-U -o`: every match's pieces, one per line it spans (empty ones
    /// skipped), each with its own line number and the match's offset,
    /// as rg prints them.
    fn match_pieces<W: Write, S: Source>(
        &self,
        out: &mut W,
        doc: &S,
        hay: &[u8],
    ) -> io::Result<()> {
        let (mut at, mut id) = (0usize, 0u64);
        for b in self.query.multiline_blocks(hay, self.a.max_count) {
            for m in &b.matches {
                let mut piece = m.start;
                loop {
                    let end =
                        memchr::memchr(b'\n', &hay[piece..m.end]).map_or(m.end, |i| piece + i);
                    if end > piece {
                        id += memchr::memchr_iter(b'\n', &hay[at..piece]).count() as u64;
                        at = piece;
                        // rg 13: every piece's column is the match's,
                        // counted from its block's first byte.
                        let spot = At {
                            id,
                            column: Some(m.start - b.lines.start + 1),
                            offset: m.start as u64,
                            selected: true,
                        };
                        self.prefix(out, doc, &spot)?;
                        self.matched(out, self.trimmed(&hay[piece..end]))?;
                        out.write_all(self.terminator())?;
                    }
                    if end >= m.end {
                        break;
                    }
                    piece = end + 1;
                }
            }
        }
        Ok(())
    }

    fn path<W: Write, S: Source>(&self, out: &mut W, doc: &S) -> io::Result<()> {
        if self.color {
            write!(out, "{C_PATH}{}{C_RESET}", doc.name())
        } else {
            write!(out, "{}", doc.name())
        }
    }

    fn prefix<W: Write, S: Source>(&self, out: &mut W, doc: &S, at: &At) -> io::Result<()> {
        let sep = if at.selected { b':' } else { b'-' };
        if self.with_filename && !self.heading {
            self.path(out, doc)?;
            out.write_all(&[if self.a.null { b'\0' } else { sep }])?;
        }
        if self.line_number {
            if self.color {
                write!(out, "{C_LINE}{}{C_RESET}", at.id + 1)?;
            } else {
                write!(out, "{}", at.id + 1)?;
            }
            out.write_all(&[sep])?;
        }
        // rg wraps the column and the offset in resets (their colour spec
        // is empty) when colouring.
        if let Some(c) = at.column.filter(|_| self.column()) {
            if self.color {
                write!(out, "{C_RESET}{c}{C_RESET}")?;
            } else {
                write!(out, "{c}")?;
            }
            out.write_all(&[sep])?;
        }
        if self.a.byte_offset {
            if self.color {
                write!(out, "{C_RESET}{}{C_RESET}", at.offset)?;
            } else {
                write!(out, "{}", at.offset)?;
            }
            out.write_all(&[sep])?;
        }
        Ok(())
    }

    /// The matches to show on `line` (starting at byte `start` of its
    /// file): its own matches, or under `-U` the pieces of the file's
    /// matches that fall on it, cut at its end (`\r` too under `--crlf`).
    fn matches(&self, line: &[u8], start: u64, spans: Option<&Spans>) -> Vec<Range<usize>> {
        let mut out = Vec::new();
        self.matches_into(line, start, spans, &mut out);
        out
    }

    /// [`Printer::matches`] into `out` (cleared first): `-o` reuses one
    /// vector for every line.
    fn matches_into(
        &self,
        line: &[u8],
        start: u64,
        spans: Option<&Spans>,
        out: &mut Vec<Range<usize>>,
    ) {
        out.clear();
        if self.query.invert() {
            return;
        }
        if let Some(spans) = spans {
            let end = if self.a.crlf && line.last() == Some(&b'\r') {
                line.len() - 1
            } else {
                line.len()
            };
            out.extend(spans.pieces(start as usize, end));
            return;
        }
        self.query.find_iter_line_into(line, out);
        out.retain(|m| !m.is_empty());
    }

    /// The file's printed lines with their starts: around the search's
    /// line starts in the file's bytes when both are there (no line
    /// index), else by line id.
    fn spots<S: Source>(&self, doc: &S, hits: &DocHits) -> (Vec<Spot>, bool) {
        let a = self.a;
        let ids = &hits.lines[..];
        let (before, after) = if a.only_matching || a.vimgrep {
            // One output line per match, never context lines.
            (0, 0)
        } else if a.passthru {
            (u64::MAX, u64::MAX)
        } else {
            (
                a.before_context.or(a.context).unwrap_or(0),
                a.after_context.or(a.context).unwrap_or(0),
            )
        };
        let by_start =
            !hits.starts.is_empty() && (ids.is_empty() || ids.len() == hits.starts.len());
        if let (Some(hay), true) = (doc.bytes(), by_start) {
            return (context_at(hay, &hits.starts, ids, before, after), true);
        }
        if by_start && before == 0 && after == 0 {
            let spots = hits
                .starts
                .iter()
                .enumerate()
                .map(|(i, &start)| Spot::Line {
                    start,
                    id: ids.get(i).copied().unwrap_or(0),
                    selected: true,
                });
            return (spots.collect(), true);
        }
        let n = doc.line_count();
        let spots = with_context(ids, before.min(n), after.min(n), n)
            .into_iter()
            .map(|item| match item {
                Item::Break => Spot::Break,
                Item::Line { id, selected } => Spot::Line {
                    start: doc.line_start(id),
                    id,
                    selected,
                },
            })
            .collect();
        (spots, false)
    }

    /// Prints `spots`; true when a NUL in a printed line stopped the
    /// file's output ("binary file matches").
    fn lines<W: Write, S: Source>(
        &self,
        out: &mut W,
        doc: &S,
        spots: Vec<Spot>,
        by_start: bool,
        spans: Option<&Spans>,
    ) -> io::Result<bool> {
        let a = self.a;
        // rg's check on a mapped file: a NUL in a printed line ends the
        // file's output with "binary file matches" once a selected line was
        // reached (the first 64 KiB were checked before any line).
        let check_nul = !a.input.text;
        let mut any_selected = false;
        let mut found = Vec::new();
        let hay = doc.bytes().filter(|_| by_start);
        for (k, &spot) in spots.iter().enumerate() {
            let Spot::Line {
                start,
                id,
                selected,
            } = spot
            else {
                out.write_all(b"--\n")?;
                continue;
            };
            if let (Some(hay), Some(Spot::Line { start: ahead, .. })) =
                (hay, spots.get(k + super::PREFETCH_AHEAD))
            {
                super::prefetch_line(hay, *ahead as usize);
            }
            let (line, nul) = match hay {
                // The line's end and a NUL in it in one pass.
                Some(hay) if check_nul => super::line_and_nul(hay, start as usize),
                _ => {
                    let line = if by_start {
                        doc.line_at(start)
                    } else {
                        doc.line(id)
                    };
                    let nul = check_nul.then(|| memchr::memchr(0, line)).flatten();
                    (line, nul)
                }
            };
            if let Some(j) = nul {
                if selected || any_selected {
                    if self.with_filename {
                        self.path(out, doc)?;
                        write!(out, ": ")?;
                    }
                    writeln!(
                        out,
                        "binary file matches (found \"\\0\" byte around offset {})",
                        start + j as u64
                    )?;
                }
                return Ok(true);
            }
            any_selected |= selected;
            if a.only_matching || a.vimgrep {
                // One output line per match (--vimgrep prints the whole line
                // each time, -o the match).
                self.matches_into(line, start, spans, &mut found);
                for m in found.drain(..) {
                    let at = At {
                        id,
                        column: Some(m.start + 1),
                        offset: start + if a.only_matching { m.start as u64 } else { 0 },
                        selected: true,
                    };
                    self.prefix(out, doc, &at)?;
                    if a.only_matching {
                        // The match itself is borrowed: no allocation a
                        // match (`-o` prints one line per match).
                        let text: std::borrow::Cow<[u8]> = match &a.replace {
                            Some(r) => self
                                .query
                                .expand_match(line, m, &crate::input::os_to_bytes(r))
                                .into(),
                            None => line[m].into(),
                        };
                        self.matched(out, self.trimmed(&text))?;
                        out.write_all(self.terminator())?;
                    } else {
                        // rg colours only the match this line is for.
                        self.text(out, line, true, || vec![m.clone()])?;
                    }
                }
            } else {
                self.line(out, doc, (id, start), line, selected, spans)?;
            }
        }
        Ok(false)
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

    fn line<W: Write, S: Source>(
        &self,
        out: &mut W,
        doc: &S,
        (id, start): (u64, u64),
        line: &[u8],
        selected: bool,
        spans: Option<&Spans>,
    ) -> io::Result<()> {
        // The column costs a second match of the line: only when printed.
        // Under -U rg gives every line of a block the column of the
        // block's first match, counted from the block's start.
        let column = match spans {
            _ if !(selected && self.column()) => None,
            Some(spans) => spans.column(start as usize),
            None => self.matches(line, start, None).first().map(|m| m.start + 1),
        };
        let at = At {
            id,
            column,
            offset: start,
            selected,
        };
        self.prefix(out, doc, &at)?;
        self.text(out, line, selected, || self.matches(line, start, spans))
    }

    /// A line's text (trimmed, replaced, coloured as asked) and `\n`.
    /// `shown`: the matches to colour on the line, asked for only when
    /// the line is coloured.
    fn text<W: Write>(
        &self,
        out: &mut W,
        line: &[u8],
        selected: bool,
        shown: impl FnOnce() -> Vec<Range<usize>>,
    ) -> io::Result<()> {
        let a = self.a;
        if let (Some(r), true) = (&a.replace, selected) {
            let replaced = self.query.replace_line(line, &crate::input::os_to_bytes(r));
            out.write_all(self.trimmed(&replaced))?;
            return out.write_all(b"\n");
        }
        let cut = line.len() - self.trimmed(line).len();
        if self.color && selected {
            // Adjacent matches are one coloured run, as rg prints them.
            let mut runs: Vec<Range<usize>> = Vec::new();
            for m in shown() {
                match runs.last_mut() {
                    Some(r) if r.end == m.start => r.end = m.end,
                    _ => runs.push(m),
                }
            }
            let mut at = cut;
            for m in runs {
                let m = m.start.max(cut)..m.end.max(cut);
                out.write_all(&line[at..m.start])?;
                if !m.is_empty() {
                    self.matched(out, &line[m.clone()])?;
                }
                at = m.end;
            }
            out.write_all(&line[at..])?;
        } else {
            out.write_all(&line[cut..])?;
        }
        out.write_all(b"\n")
    }

    fn trimmed<'b>(&self, line: &'b [u8]) -> &'b [u8] {
        if self.a.trim {
            trim(line)
        } else {
            line
        }
    }
}

/// Prints a search's files while it runs ([`logsieve::HitSink`]): a piece
/// of a file's lines as soon as the CPU engine has searched it (the lines
/// are still in the cache: printing 20k lines of a 194 MB file afterwards
/// cost 2.5 ms more than a count, rg 0.5), each file as soon as it is
/// searched, and what no engine handed over at the end
/// ([`Streamer::finish`]). A failed write (a reader that has gone, as
/// `| head`) cancels the search.
pub struct Streamer<'p, W> {
    printer: &'p Printer<'p>,
    out: &'p mut W,
    docs: &'p [logsieve::Document],
    cancel: logsieve::Cancel,
    /// Pieces are printed ([`Printer::streams`]); else whole files only.
    pieces: bool,
    /// Per file: lines printed from pieces, and whether it was opened
    /// and stopped (a NUL, "binary file matches").
    progress: Vec<(usize, bool, bool)>,
    /// Files printed whole, in order: the next one is the only one whose
    /// pieces are printed.
    done: usize,
    printed: bool,
    error: Option<io::Error>,
}

impl<'p, W: Write> Streamer<'p, W> {
    /// A streamer writing to `out`; a failed write cancels `cancel`.
    pub fn new(
        printer: &'p Printer<'p>,
        out: &'p mut W,
        corpus: &'p Corpus,
        cancel: logsieve::Cancel,
    ) -> Self {
        Streamer {
            pieces: printer.streams(),
            printer,
            out,
            docs: corpus.docs(),
            cancel,
            progress: vec![(0, false, false); corpus.docs().len()],
            done: 0,
            printed: false,
            error: None,
        }
    }

    /// The first write error, which cancelled the search.
    pub fn error(&mut self) -> Option<io::Error> {
        self.error.take()
    }

    /// Prints the files no engine handed over (a backend that does not
    /// stream): the search's whole answer for them.
    pub fn finish(&mut self, result: &logsieve::SearchResult) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        for k in self.done..self.docs.len().min(result.docs.len()) {
            self.printer
                .file(self.out, &self.docs[k], &result.docs[k], &mut self.printed)?;
        }
        self.done = self.docs.len();
        Ok(())
    }

    fn piece(&mut self, k: usize, starts: &[u64], ids: &[u64]) -> io::Result<()> {
        let doc = &self.docs[k];
        let (lines, opened, stopped) = &mut self.progress[k];
        if *stopped || starts.is_empty() {
            return Ok(());
        }
        if !*opened {
            *opened = true;
            if !self.printer.open(self.out, doc, &mut self.printed)? {
                *stopped = true;
                return Ok(());
            }
        }
        let spots = context_at(doc.data(), starts, ids, 0, 0);
        *stopped = self.printer.lines(self.out, doc, spots, true, None)?;
        *lines += starts.len();
        Ok(())
    }

    fn record(&mut self, r: io::Result<()>) {
        if let Err(e) = r {
            self.error = Some(e);
            self.cancel.cancel();
        }
    }
}

impl<W: Write> logsieve::HitSink for Streamer<'_, W> {
    fn lines(&mut self, doc: usize, starts: &[u64], ids: &[u64]) {
        if self.pieces && self.error.is_none() && doc == self.done {
            let r = self.piece(doc, starts, ids);
            self.record(r);
        }
    }

    fn doc_done(&mut self, doc: usize, hits: &DocHits) {
        if self.error.is_some() || doc != self.done {
            return;
        }
        let (lines, opened, _) = self.progress[doc];
        let r = if opened {
            // The rest after the pieces (none when every piece came).
            let ids = hits.lines.get(lines..).unwrap_or_default();
            self.piece(doc, hits.starts.get(lines..).unwrap_or_default(), ids)
        } else {
            self.printer
                .file(self.out, &self.docs[doc], hits, &mut self.printed)
        };
        self.done += 1;
        self.record(r);
    }
}

/// `--trim`: leading ASCII whitespace removed.
fn trim(bytes: &[u8]) -> &[u8] {
    let k = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    &bytes[k..]
}

/// `-U`: a file's matches, found over its whole buffer, for the lines
/// printed from it (colour, `--column`, `--vimgrep`).
struct Spans {
    /// Every match, left to right, as absolute byte ranges (they do not
    /// overlap, so their ends ascend too).
    matches: Vec<Range<usize>>,
    /// Each block's lines (from the first line's start to the last
    /// line's end) and its first match's start.
    blocks: Vec<(Range<usize>, usize)>,
}

impl Spans {
    fn new(blocks: Vec<logsieve::cpu::multiline::Block>) -> Spans {
        let mut spans = Spans {
            matches: Vec::new(),
            blocks: Vec::with_capacity(blocks.len()),
        };
        for b in blocks {
            spans.blocks.push((
                b.lines.clone(),
                b.matches.first().map_or(b.lines.start, |m| m.start),
            ));
            spans.matches.extend(b.matches);
        }
        spans
    }

    /// The non-empty pieces of the matches on the line `start..start +
    /// len`, relative to the line: rg closes a match's colour at each line
    /// end and opens it again on the next line.
    fn pieces(&self, start: usize, len: usize) -> Vec<Range<usize>> {
        let end = start + len;
        let first = self.matches.partition_point(|m| m.end <= start);
        self.matches[first..]
            .iter()
            .take_while(|m| m.start < end)
            .map(|m| m.start.max(start) - start..m.end.min(end) - start)
            .filter(|r| !r.is_empty())
            .collect()
    }

    /// The 1-based column of the first match of the block holding the
    /// line at `start`, counted from the block's start (rg 13).
    fn column(&self, start: usize) -> Option<usize> {
        let i = self.blocks.partition_point(|(lines, _)| lines.end < start);
        self.blocks
            .get(i)
            .filter(|(lines, _)| lines.start <= start)
            .map(|(lines, first)| first - lines.start + 1)
    }
}
