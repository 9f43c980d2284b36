//! `--json`: ripgrep's JSON Lines schema (`begin`, `match`, `context`,
//! `end`, `summary`), so tools that read `rg --json` read ours.
//!
//! Text that is valid UTF-8 is written as `{"text": ...}`, anything else as
//! `{"bytes": <base64>}`, as ripgrep does. Context lines (`-A/-B/-C`) are
//! `context` messages with no submatch; `match` objects carry every
//! submatch.

use std::io::{self, Write};
use std::time::Instant;

use logsieve::rg_json::{
    data, elapsed, emit, emit_record, submatches_of, Data, LineData, LineRecord, Stats,
};
use logsieve::{Corpus, Query, SearchResult};
use serde_json::json;

/// Prints a search result as `rg --json` would (the records are the
/// library's, [`logsieve::rg_json`]; this driver adds `-U` blocks, and
/// context found around the search's line starts without a line index).
pub struct JsonPrinter<'a> {
    query: &'a Query,
    /// Names the pattern(s) of each submatch (index and text).
    namer: logsieve::PatternNamer,
    before: u64,
    after: u64,
    max_count: Option<u64>,
}

impl<'a> JsonPrinter<'a> {
    /// A printer naming the submatches of `query`.
    pub fn new(query: &'a Query) -> JsonPrinter<'a> {
        JsonPrinter {
            query,
            namer: logsieve::PatternNamer::new(query),
            before: 0,
            after: 0,
            max_count: None,
        }
    }

    /// `-m`: with `-U`, at most this many match records per file.
    pub fn max_count(mut self, m: Option<u64>) -> JsonPrinter<'a> {
        self.max_count = m;
        self
    }

    /// `-U`: one `match` record per block of lines (every line a match
    /// spans; matches sharing a line share it), submatches relative to
    /// the block, and `context` records around the blocks (`-A/-B/-C`),
    /// as rg prints them.
    fn multiline_records<W: Write>(
        &self,
        out: &mut W,
        name: &[u8],
        hay: &[u8],
        st: &mut Stats,
    ) -> io::Result<()> {
        let blocks = self.query.multiline_blocks(hay, self.max_count);
        let ranges: Vec<std::ops::Range<usize>> = blocks.iter().map(|b| b.lines.clone()).collect();
        let (mut at, mut id) = (0usize, 0u64);
        for spot in super::blocks_with_context(hay, &ranges, self.before, self.after) {
            let b = match spot {
                super::BlockSpot::Block(i) => &blocks[i],
                super::BlockSpot::Context(start) => {
                    id += memchr::memchr_iter(b'\n', &hay[at..start]).count() as u64;
                    at = start;
                    let end =
                        memchr::memchr(b'\n', &hay[start..]).map_or(hay.len(), |i| start + i + 1);
                    let r = LineRecord {
                        kind: "context",
                        data: LineData {
                            path: Data::of(name),
                            lines: Data::of(&hay[start..end]),
                            line_number: id + 1,
                            absolute_offset: start as u64,
                            submatches: Vec::new(),
                        },
                    };
                    st.bytes_printed += emit_record(out, &r)?;
                    continue;
                }
            };
            id += memchr::memchr_iter(b'\n', &hay[at..b.lines.start]).count() as u64;
            at = b.lines.start;
            let text = &hay[b.lines.start..(b.lines.end + 1).min(hay.len())];
            let subs = submatches_of(
                self.query,
                &self.namer,
                hay,
                b.matches.iter().cloned(),
                b.lines.start,
            );
            st.matched_lines +=
                1 + memchr::memchr_iter(b'\n', &hay[b.lines.clone()]).count() as u64;
            st.matches += subs.len() as u64;
            let r = LineRecord {
                kind: "match",
                data: LineData {
                    path: Data::of(name),
                    lines: Data::of(text),
                    line_number: id + 1,
                    absolute_offset: b.lines.start as u64,
                    submatches: subs,
                },
            };
            st.bytes_printed += emit_record(out, &r)?;
        }
        Ok(())
    }

    /// Lines of context before and after each selected line (`-B`, `-A`).
    pub fn context(mut self, before: u64, after: u64) -> JsonPrinter<'a> {
        self.before = before;
        self.after = after;
        self
    }

    /// Writes `begin`/`match`/`end` per file with a hit, then the summary.
    pub fn print<W: Write>(
        &self,
        out: &mut W,
        corpus: &Corpus,
        result: &SearchResult,
        t0: Instant,
    ) -> io::Result<()> {
        let mut total = Stats::default();
        let search_time = result.backend.elapsed;
        for (doc, hits) in corpus.docs().iter().zip(&result.docs) {
            let mut st = Stats {
                searches: 1,
                bytes_searched: doc.data().len() as u64,
                ..Default::default()
            };
            if !hits.lines.is_empty() {
                st.searches_with_match = 1;
                let path = data(doc.name().as_bytes());
                st.bytes_printed += emit(out, &json!({"type": "begin", "data": {"path": path}}))?;
                let hay = doc.data();
                let multiline = self.query.multiline() && !self.query.invert();
                // The lines come with their start offsets from the search,
                // context found around them (no line index is built); by
                // line id when the search gave no starts (-v).
                let items: Vec<(u64, bool, Option<u64>)> = if multiline {
                    self.multiline_records(out, doc.name().as_bytes(), hay, &mut st)?;
                    Vec::new()
                } else if hits.starts.len() == hits.lines.len() {
                    super::context_at(hay, &hits.starts, &hits.lines, self.before, self.after)
                        .into_iter()
                        .filter_map(|i| match i {
                            super::Spot::Line {
                                start,
                                id,
                                selected,
                            } => Some((id, selected, Some(start))),
                            super::Spot::Break => None,
                        })
                        .collect()
                } else {
                    super::with_context(&hits.lines, self.before, self.after, doc.lines().len())
                        .into_iter()
                        .filter_map(|i| match i {
                            super::Item::Line { id, selected } => Some((id, selected, None)),
                            super::Item::Break => None,
                        })
                        .collect()
                };
                // rg's check on a mapped file: the first 64 KiB, then each
                // printed line.
                let mut binary_offset = super::Source::binary_offset(doc);
                for (id, selected, start) in items {
                    let (start, line) = match start {
                        Some(s) => (s, doc.line_at(s)),
                        None => (doc.lines().line_range(id).start, doc.line(id)),
                    };
                    let end = start as usize + line.len();
                    // The line as printed includes its terminator, as rg does.
                    let with_term = &hay[start as usize..(end + 1).min(hay.len())];
                    if binary_offset.is_none() {
                        binary_offset = memchr::memchr(0, line).map(|j| start + j as u64);
                    }
                    let subs = if self.query.invert() || !selected {
                        Vec::new()
                    } else {
                        submatches_of(
                            self.query,
                            &self.namer,
                            line,
                            self.query.find_iter_line(line),
                            0,
                        )
                    };
                    if selected {
                        st.matched_lines += 1;
                        st.matches += subs.len() as u64;
                    }
                    let r = LineRecord {
                        kind: if selected { "match" } else { "context" },
                        data: LineData {
                            path: Data::of(doc.name().as_bytes()),
                            lines: Data::of(with_term),
                            line_number: id + 1,
                            absolute_offset: start,
                            submatches: subs,
                        },
                    };
                    st.bytes_printed += emit_record(out, &r)?;
                }
                let end = json!({
                    "type": "end",
                    "data": {
                        "path": path,
                        "binary_offset": binary_offset,
                        "stats": st.to_json(search_time),
                    }
                });
                st.bytes_printed += emit(out, &end)?;
            }
            total.add(&st);
        }
        let summary = json!({
            "type": "summary",
            "data": {
                "elapsed_total": elapsed(t0.elapsed()),
                "stats": total.to_json(search_time),
            }
        });
        emit(out, &summary)?;
        Ok(())
    }
}
