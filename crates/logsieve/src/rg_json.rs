//! ripgrep's `--json` schema (JSON Lines: `begin`, `match`, `context`,
//! `end`, `summary`), encoded from a [`SearchResult`] and its corpus, so
//! every front end (the CLI's `--json`, the server's NDJSON) writes the
//! same bytes and tools written for `rg --json` read them.
//!
//! Text that is valid UTF-8 is written as `{"text": ...}`, anything else as
//! `{"bytes": <base64>}`, as ripgrep does. Every submatch also names its
//! pattern(s) (`"patterns": [{"index", "pattern"}]`, an extension ripgrep
//! does not have). Context lines are written only when asked for
//! ([`RgJson::with_context`]); with none, the output is byte for byte what
//! `logsieve search --json` prints.
//!
//! The encoder is incremental ([`RgJson::begin_doc`], [`RgJson::line`],
//! [`RgJson::end_doc`], [`RgJson::summary`]) so a server can stream a
//! large answer in chunks; [`RgJson::write_result`] writes a whole one.
//!
//! ```
//! use logsieve::{rg_json::RgJson, Corpus, QueryBuilder, SearchOptions, Session, Syntax};
//! let session = Session::new(Corpus::from_bytes("a.log", b"ok\nERROR_503 x\n".to_vec()));
//! let q = QueryBuilder::new().syntax(Syntax::Fixed).build(&["ERROR_503"]).unwrap();
//! let res = session.search(&q, &SearchOptions::default()).unwrap();
//! let mut out = Vec::new();
//! RgJson::new(&q, session.corpus(), res.backend.elapsed)
//!     .write_result(&mut out, &res, std::time::Duration::ZERO)
//!     .unwrap();
//! let text = String::from_utf8(out).unwrap();
//! assert!(text.starts_with(r#"{"type":"begin","data":{"path":{"text":"a.log"}}}"#));
//! assert_eq!(text.lines().count(), 4); // begin, match, end, summary
//! ```

use std::io::{self, Write};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};

use crate::corpus::{Corpus, Document};
use crate::pattern_counts::PatternNamer;
use crate::query::Query;
use crate::session::SearchResult;

/// `{"text": ...}` for UTF-8, `{"bytes": base64}` otherwise.
pub fn data(bytes: &[u8]) -> Value {
    match std::str::from_utf8(bytes) {
        Ok(s) => json!({ "text": s }),
        Err(_) => json!({ "bytes": base64::engine::general_purpose::STANDARD.encode(bytes) }),
    }
}

/// ripgrep's duration object.
pub fn elapsed(d: Duration) -> Value {
    json!({
        "secs": d.as_secs(),
        "nanos": d.subsec_nanos(),
        "human": format!("{:.6}s", d.as_secs_f64()),
    })
}

/// ripgrep's per-file and total statistics.
#[derive(Default, Clone, Copy, Debug)]
pub struct Stats {
    /// Files searched.
    pub searches: u64,
    /// Files with a selected line.
    pub searches_with_match: u64,
    /// Bytes searched.
    pub bytes_searched: u64,
    /// Bytes written.
    pub bytes_printed: u64,
    /// Lines selected.
    pub matched_lines: u64,
    /// Submatches written.
    pub matches: u64,
}

impl Stats {
    /// ripgrep's `stats` object, with `elapsed`.
    pub fn to_json(self, el: Duration) -> Value {
        json!({
            "elapsed": elapsed(el),
            "searches": self.searches,
            "searches_with_match": self.searches_with_match,
            "bytes_searched": self.bytes_searched,
            "bytes_printed": self.bytes_printed,
            "matched_lines": self.matched_lines,
            "matches": self.matches,
        })
    }

    /// Adds `o`'s counts (a file's into the total).
    pub fn add(&mut self, o: &Stats) {
        self.searches += o.searches;
        self.searches_with_match += o.searches_with_match;
        self.bytes_searched += o.bytes_searched;
        self.bytes_printed += o.bytes_printed;
        self.matched_lines += o.matched_lines;
        self.matches += o.matches;
    }
}

/// Writes one JSON value and a newline; returns the bytes written.
pub fn emit<W: Write>(out: &mut W, v: &Value) -> io::Result<u64> {
    let s = serde_json::to_string(v).map_err(io::Error::other)?;
    out.write_all(s.as_bytes())?;
    out.write_all(b"\n")?;
    Ok(s.len() as u64 + 1)
}

/// Text as rg writes it: `{"text": ...}` when UTF-8, else base64 bytes
/// (what [`data`] makes, serialized without a `Value`).
pub enum Data<'a> {
    /// Valid UTF-8.
    Text(&'a str),
    /// Anything else.
    Bytes(&'a [u8]),
}

impl<'a> Data<'a> {
    /// The text of `bytes`.
    pub fn of(bytes: &'a [u8]) -> Data<'a> {
        match std::str::from_utf8(bytes) {
            Ok(s) => Data::Text(s),
            Err(_) => Data::Bytes(bytes),
        }
    }
}

impl serde::Serialize for Data<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(1))?;
        match self {
            Data::Text(t) => m.serialize_entry("text", t)?,
            Data::Bytes(b) => m.serialize_entry(
                "bytes",
                &base64::engine::general_purpose::STANDARD.encode(b),
            )?,
        }
        m.end()
    }
}

/// A `match` or `context` record, serialized field by field in rg's order
/// (a `json!` value per line, an ordered map, cost 45k instructions a
/// line: a third of a `--json` search of 705 lines).
#[derive(serde::Serialize)]
pub struct LineRecord<'a> {
    /// `match` or `context`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The record.
    pub data: LineData<'a>,
}

/// A line record's `data`.
#[derive(serde::Serialize)]
pub struct LineData<'a> {
    /// The file.
    pub path: Data<'a>,
    /// The line(s), terminator included.
    pub lines: Data<'a>,
    /// 1-based, in the whole file.
    pub line_number: u64,
    /// The first byte's offset in the whole file.
    pub absolute_offset: u64,
    /// The submatches (none in a `context` record).
    pub submatches: Vec<Submatch<'a>>,
}

/// One submatch, and the pattern(s) it is (an extension to rg's schema).
#[derive(serde::Serialize)]
pub struct Submatch<'a> {
    /// The matched text.
    #[serde(rename = "match")]
    pub text: Data<'a>,
    /// Its start in the record's `lines`.
    pub start: usize,
    /// Its end in the record's `lines`.
    pub end: usize,
    /// The patterns it is.
    pub patterns: Vec<PatternRef<'a>>,
}

/// A pattern by its index in the query and its text.
#[derive(serde::Serialize)]
pub struct PatternRef<'a> {
    /// The pattern's index in the query.
    pub index: usize,
    /// Its text.
    pub pattern: Data<'a>,
}

/// Writes one line record and a newline; returns the bytes written.
pub fn emit_record<W: Write>(out: &mut W, r: &LineRecord) -> io::Result<u64> {
    let s = serde_json::to_vec(r).map_err(io::Error::other)?;
    out.write_all(&s)?;
    out.write_all(b"\n")?;
    Ok(s.len() as u64 + 1)
}

/// The submatches `ranges` of `line` (or of a block: offsets relative to
/// its start, `base`), each naming its patterns.
pub fn submatches_of<'a>(
    query: &'a Query,
    namer: &PatternNamer,
    hay: &'a [u8],
    ranges: impl IntoIterator<Item = std::ops::Range<usize>>,
    base: usize,
) -> Vec<Submatch<'a>> {
    ranges
        .into_iter()
        .map(|m| {
            let text = &hay[m.clone()];
            let patterns = namer
                .patterns_of(text)
                .into_iter()
                .map(|i| PatternRef {
                    index: i,
                    pattern: Data::of(&query.patterns()[i]),
                })
                .collect();
            Submatch {
                text: Data::of(text),
                start: m.start - base,
                end: m.end - base,
                patterns,
            }
        })
        .collect()
}

/// The document being written, between `begin_doc` and `end_doc`.
struct Open {
    doc: usize,
    path: Value,
    stats: Stats,
    /// The last line written (match or context), for context merging.
    last: Option<u64>,
    /// After-context owed up to this line (inclusive).
    after_until: Option<u64>,
}

/// The encoder: one per answer. See the module docs.
pub struct RgJson<'a> {
    query: &'a Query,
    corpus: &'a Corpus,
    namer: PatternNamer,
    search_time: Duration,
    before: u64,
    after: u64,
    total: Stats,
    open: Option<Open>,
}

impl<'a> RgJson<'a> {
    /// An encoder for answers of `query` over `corpus`; `search_time` is
    /// written as each file's `elapsed` (the CLI writes the backend's time).
    pub fn new(query: &'a Query, corpus: &'a Corpus, search_time: Duration) -> RgJson<'a> {
        RgJson {
            query,
            corpus,
            namer: PatternNamer::new(query),
            search_time,
            before: 0,
            after: 0,
            total: Stats::default(),
            open: None,
        }
    }

    /// Writes up to `before` lines before and `after` lines after each
    /// match as `context` objects (merged as grep merges them).
    pub fn with_context(mut self, before: u64, after: u64) -> RgJson<'a> {
        self.before = before;
        self.after = after;
        self
    }

    /// Starts document `doc` (an index into the corpus). Nothing is
    /// written until its first line: a file without lines gets no `begin`
    /// (ripgrep's rule), but counts as searched.
    pub fn begin_doc(&mut self, doc: usize) {
        let d = &self.corpus.docs()[doc];
        self.open = Some(Open {
            doc,
            path: data(d.name().as_bytes()),
            stats: Stats {
                searches: 1,
                bytes_searched: d.data().len() as u64,
                ..Default::default()
            },
            last: None,
            after_until: None,
        });
    }

    fn doc(&self) -> &'a Document {
        let o = self.open.as_ref().expect("begin_doc first");
        &self.corpus.docs()[o.doc]
    }

    /// Writes selected line `id` of the open document (ids ascending),
    /// preceded by `begin` for the first and by any context owed.
    pub fn line<W: Write>(&mut self, out: &mut W, id: u64) -> io::Result<()> {
        let doc = self.doc();
        let first = self.open.as_ref().is_some_and(|o| o.last.is_none());
        if first {
            let o = self.open.as_mut().expect("open");
            o.stats.searches_with_match = 1;
            let v = json!({"type": "begin", "data": {"path": o.path}});
            o.stats.bytes_printed += emit(out, &v)?;
        }
        // Context owed after the previous match, then before this one.
        let (last, after_until) = {
            let o = self.open.as_ref().expect("open");
            (o.last, o.after_until)
        };
        let mut next = last.map_or(0, |l| l + 1);
        if let Some(until) = after_until {
            while next <= until && next < id {
                self.context(out, doc, next)?;
                next += 1;
            }
        }
        let from = next.max(id.saturating_sub(self.before));
        for c in from..id {
            self.context(out, doc, c)?;
        }
        self.matched(out, doc, id)?;
        let o = self.open.as_mut().expect("open");
        o.last = Some(id);
        o.after_until = (self.after > 0).then(|| id.saturating_add(self.after));
        Ok(())
    }

    /// Writes the open document's remaining after-context and its `end`
    /// (when it had a line).
    pub fn end_doc<W: Write>(&mut self, out: &mut W) -> io::Result<()> {
        let doc = self.doc();
        let (last, after_until) = {
            let o = self.open.as_ref().expect("open");
            (o.last, o.after_until)
        };
        if let (Some(last), Some(until)) = (last, after_until) {
            let n = doc.lines().len();
            for c in last + 1..=until.min(n.saturating_sub(1)) {
                self.context(out, doc, c)?;
            }
        }
        let mut o = self.open.take().expect("open");
        if o.last.is_some() {
            let end = json!({
                "type": "end",
                "data": {
                    "path": o.path,
                    "binary_offset": doc.binary_offset(),
                    "stats": o.stats.to_json(self.search_time),
                }
            });
            o.stats.bytes_printed += emit(out, &end)?;
        }
        self.total.add(&o.stats);
        Ok(())
    }

    /// Writes the `summary` (`elapsed_total` is the caller's wall time).
    pub fn summary<W: Write>(&mut self, out: &mut W, elapsed_total: Duration) -> io::Result<()> {
        let summary = json!({
            "type": "summary",
            "data": {
                "elapsed_total": elapsed(elapsed_total),
                "stats": self.total.to_json(self.search_time),
            }
        });
        emit(out, &summary)?;
        Ok(())
    }

    /// Writes a whole answer: every document of the corpus with its lines,
    /// then the summary — what `logsieve search --json` prints.
    pub fn write_result<W: Write>(
        &mut self,
        out: &mut W,
        result: &SearchResult,
        elapsed_total: Duration,
    ) -> io::Result<()> {
        for (i, hits) in result.docs.iter().enumerate() {
            self.begin_doc(i);
            for &id in &hits.lines {
                self.line(out, id)?;
            }
            self.end_doc(out)?;
        }
        self.summary(out, elapsed_total)
    }

    /// The line with its terminator, as rg prints it, and its offset
    /// in the whole file (bytes evicted before the held ones counted:
    /// [`Document::first_offset`]).
    fn line_text(doc: &Document, id: u64) -> (&[u8], u64) {
        let r = doc.lines().line_range(id);
        let hay = doc.data();
        (
            &hay[r.start as usize..(r.end as usize + 1).min(hay.len())],
            doc.first_offset() + r.start,
        )
    }

    fn context<W: Write>(&mut self, out: &mut W, doc: &Document, id: u64) -> io::Result<()> {
        let o = self.open.as_mut().expect("open");
        let (text, offset) = Self::line_text(doc, id);
        let r = LineRecord {
            kind: "context",
            data: LineData {
                path: Data::of(doc.name().as_bytes()),
                lines: Data::of(text),
                line_number: doc.first_line() + id + 1,
                absolute_offset: offset,
                submatches: Vec::new(),
            },
        };
        o.stats.bytes_printed += emit_record(out, &r)?;
        o.last = Some(id);
        Ok(())
    }

    /// The submatches of a selected line (none under `-v`).
    pub fn submatches(&self, line: &[u8]) -> Vec<Value> {
        self.line_submatches(line)
            .iter()
            .map(|m| serde_json::to_value(m).unwrap_or(Value::Null))
            .collect()
    }

    fn line_submatches<'l>(&'l self, line: &'l [u8]) -> Vec<Submatch<'l>> {
        if self.query.invert() {
            return Vec::new();
        }
        submatches_of(
            self.query,
            &self.namer,
            line,
            self.query.find_iter_line(line),
            0,
        )
    }

    fn matched<W: Write>(&mut self, out: &mut W, doc: &Document, id: u64) -> io::Result<()> {
        let (text, offset) = Self::line_text(doc, id);
        let line = doc.line(id);
        let subs = self.line_submatches(line);
        let r = LineRecord {
            kind: "match",
            data: LineData {
                path: Data::of(doc.name().as_bytes()),
                lines: Data::of(text),
                line_number: doc.first_line() + id + 1,
                absolute_offset: offset,
                submatches: subs,
            },
        };
        let n = r.data.submatches.len() as u64;
        let bytes = emit_record(out, &r)?;
        let o = self.open.as_mut().expect("open");
        o.stats.matched_lines += 1;
        o.stats.matches += n;
        o.stats.bytes_printed += bytes;
        Ok(())
    }
}
