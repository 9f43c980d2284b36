//! Live tails: the subscriber side of [`crate::live`]. A [`Tail`] turns the
//! batches the follower publishes into the hits of one query, each line
//! once and in order, whatever the tail's speed.
//!
//! * **Matching** goes through the one routing point: each batch (or the
//!   part of it the tail has not seen) becomes a small [`Session`] of one
//!   document named as the served file, routed and executed like any
//!   search ([`Session::route`] + [`Session::execute`]); line numbers and
//!   offsets are then shifted to the document's. A watchlist tail also
//!   names the pattern(s) each hit holds: a per-pattern count
//!   ([`Request::Watchlist`], routed the same way) over the hit's line —
//!   each pattern as if searched alone.
//! * **Exactly once, in order.** A tail keeps a cursor per document (the
//!   next byte it owes and that byte's line number), set at the corpus's
//!   end when it starts (after subscribing, so nothing falls between).
//!   A batch is cut to the part past the cursor; a batch past the cursor
//!   (a gap) first catches up from the session. A tail that falls more
//!   than the hub's capacity behind (`RecvError::Lagged`) catches up from
//!   the resident session, which holds every published line: each
//!   document from its cursor to its last whole line; later batches that
//!   overlap are cut. Lines of one document arrive in order; documents
//!   interleave as batches were published.
//! * **A time window** (`since`/`until`, absolute ms resolved once when
//!   the tail starts) selects by each line's time in the session's stats
//!   columns, as the search route's window does ([`StatsQuery::in_window`]:
//!   a line without a time is never inside a window). `until` also ends
//!   the tail: after the first batch that holds a line (matching or not,
//!   of a followed file) stamped at or after it, or at once when the
//!   corpus's newest line already is. The log's clock, not the wall
//!   clock: log times are often local times without a zone, and a
//!   replayed or late file would end a wall-clock window early.
//! * The server's end ([`crate::live::LiveHub::close`]) ends every tail.

use std::collections::HashMap;
use std::sync::Arc;

use logsieve::rg_json::{self, RgJson};
use logsieve::stats::{StatsQuery, NO_TIME};
use logsieve::watchlist::Watchlist;
use logsieve::{Answer, Corpus, Query, Request, SearchOptions, Session, Tuning, Want};
use serde_json::{json, Value};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{broadcast, watch};

use crate::live::Appended;
use crate::state::{AppState, Ready};

/// What a tail selects.
#[derive(Clone)]
pub struct TailSpec {
    /// The query (a watchlist's shared one for a watchlist tail).
    pub query: Arc<Query>,
    /// A watchlist tail: hits name their patterns.
    pub watchlist: Option<Arc<Watchlist>>,
    /// Only these documents, by name (all without it).
    pub files: Option<Vec<String>>,
    /// The session's tuning, for the batch sessions.
    pub tuning: Tuning,
    /// Only lines stamped at or after this time (Unix ms).
    pub since: Option<i64>,
    /// Only lines stamped before this time (Unix ms); the tail ends once
    /// an appended line is stamped at or after it.
    pub until: Option<i64>,
}

impl TailSpec {
    /// True when the tail selects by time.
    pub fn windowed(&self) -> bool {
        self.since.is_some() || self.until.is_some()
    }

    /// The search route's window test ([`StatsQuery::in_window`]).
    fn window(&self) -> StatsQuery<'static> {
        StatsQuery {
            since: self.since,
            until: self.until,
            ..Default::default()
        }
    }
}

/// One new selected line.
#[derive(Clone, Debug)]
pub struct Hit {
    /// The document's index in the served corpus.
    pub doc: usize,
    /// The document's name.
    pub name: String,
    /// 1-based line number within the document.
    pub line_number: u64,
    /// Byte offset of the line within the document.
    pub offset: u64,
    /// The line with its `\n`.
    pub text: Vec<u8>,
    /// rg's submatches (none under `-v`).
    pub submatches: Vec<Value>,
    /// A watchlist tail: the indices of the patterns the line holds.
    pub patterns: Option<Vec<usize>>,
}

impl Hit {
    /// ripgrep's `match` object (`logsieve::rg_json`'s fields, in its
    /// order); a watchlist tail adds `data.patterns`: `[{"index",
    /// "pattern"}]`, every pattern of the list the line holds.
    pub fn rg_json(&self, spec: &TailSpec) -> Value {
        let mut v = json!({
            "type": "match",
            "data": {
                "path": rg_json::data(self.name.as_bytes()),
                "lines": rg_json::data(&self.text),
                "line_number": self.line_number,
                "absolute_offset": self.offset,
                "submatches": self.submatches,
            }
        });
        if let Some(p) = &self.patterns {
            let pats = spec.query.patterns();
            v["data"]["patterns"] = p
                .iter()
                .map(|&i| json!({"index": i, "pattern": rg_json::data(&pats[i])}))
                .collect();
        }
        v
    }
}

/// The next byte a tail owes of one document, and its line number.
#[derive(Clone, Copy, Debug)]
struct Cursor {
    offset: u64,
    line: u64,
}

/// Where the tail stands in a document of `ready`: after its last `\n`.
fn end_of(ready: &Ready, doc: usize) -> Option<Cursor> {
    let d = ready.session.corpus().docs().get(doc)?;
    let data = d.data();
    let lines = d.lines();
    let n = lines.len();
    // Cursors count from the start of the file, evicted lines included
    // (`--retain`): they stay valid across an eviction.
    let (base_off, base_line) = (d.first_offset(), d.first_line());
    Some(if data.last().is_some_and(|&b| b != b'\n') {
        // A last line without its `\n` is not whole yet: it is owed.
        Cursor {
            offset: base_off + lines.line_range(n - 1).start,
            line: base_line + n,
        }
    } else {
        Cursor {
            offset: base_off + data.len() as u64,
            line: base_line + n + 1,
        }
    })
}

/// Why a tail stopped.
#[derive(Debug, PartialEq, Eq)]
pub enum Stopped {
    /// The server is stopping (or the hub is gone).
    Closed,
    /// A line stamped at or after the tail's `until` was appended (or the
    /// corpus held one when the tail started).
    Until,
}

/// One live tail (see the module's documentation).
pub struct Tail {
    spec: TailSpec,
    state: AppState,
    rx: broadcast::Receiver<Arc<Appended>>,
    closing: watch::Receiver<bool>,
    cursors: HashMap<usize, Cursor>,
    /// Set once `until` has passed: the next call ends the tail.
    ended: bool,
    /// How many times this tail lagged and caught up (for tests, metrics).
    pub catch_ups: u64,
}

impl Tail {
    /// Subscribes, then places a cursor at the end of every document the
    /// session holds now: the tail selects lines appended from now on.
    ///
    /// Both under the session's read lock: an append (written under the
    /// write lock, published after it) then lands wholly before the
    /// cursors (its batch, if received, is cut to nothing) or wholly after
    /// them. Subscribing first left a window where a batch appended
    /// between the two was put behind the cursors: a caller that saw the
    /// tail subscribed ([`crate::live::LiveHub::tails`]) and appended
    /// missed those lines.
    pub fn start(state: &AppState, spec: TailSpec) -> Tail {
        let guard = state.ready();
        let rx = state.live().subscribe();
        let closing = state.live().closing();
        let mut cursors = HashMap::new();
        let mut ended = false;
        if let Some(ready) = guard {
            for d in 0..ready.session.corpus().docs().len() {
                if let Some(c) = end_of(&ready, d) {
                    cursors.insert(d, c);
                }
            }
            // The log's clock has already passed `until`.
            let newest = ready.session.columns().and_then(|c| c.newest());
            ended = matches!((spec.until, newest), (Some(u), Some(n)) if n >= u);
        }
        Tail {
            spec,
            state: state.clone(),
            rx,
            closing,
            cursors,
            ended,
            catch_ups: 0,
        }
    }

    /// What this tail selects.
    pub fn spec(&self) -> &TailSpec {
        &self.spec
    }

    /// The hits of the next batch (possibly none), or why the tail ended.
    /// Matching runs on a blocking thread.
    pub async fn next(&mut self) -> Result<Vec<Hit>, Stopped> {
        if *self.closing.borrow() {
            return Err(Stopped::Closed);
        }
        if self.ended {
            return Err(Stopped::Until);
        }
        let got = tokio::select! {
            r = self.rx.recv() => r,
            _ = self.closing.wait_for(|&c| c) => return Err(Stopped::Closed),
        };
        let chunks = match got {
            Ok(batch) => self.take(&batch),
            Err(RecvError::Lagged(_)) => {
                self.catch_ups += 1;
                self.catch_up()
            }
            Err(RecvError::Closed) => return Err(Stopped::Closed),
        };
        if chunks.is_empty() {
            return Ok(Vec::new());
        }
        let spec = self.spec.clone();
        let state = self.state.clone();
        let (hits, passed) = tokio::task::spawn_blocking(move || {
            let mut hits = Vec::new();
            let mut passed = false;
            for c in &chunks {
                let mut h = match_chunk(&spec, c);
                if spec.windowed() {
                    let times = chunk_times(&state, c);
                    let window = spec.window();
                    h.retain(|h| {
                        let i = (h.line_number - c.first_line) as usize;
                        times.get(i).is_some_and(|&t| window.in_window(t))
                    });
                    passed |= spec
                        .until
                        .is_some_and(|u| times.iter().any(|&t| t != NO_TIME && t >= u));
                }
                hits.extend(h);
            }
            (hits, passed)
        })
        .await
        .map_err(|_| Stopped::Closed)?;
        self.ended = passed;
        Ok(hits)
    }

    fn wanted(&self, name: &str) -> bool {
        self.spec
            .files
            .as_ref()
            .is_none_or(|f| f.iter().any(|n| n == name))
    }

    /// The part of `batch` past the cursor (after what a gap owes, read
    /// from the session), advancing the cursor.
    fn take(&mut self, batch: &Appended) -> Vec<Chunk> {
        if !self.wanted(&batch.name) {
            return Vec::new();
        }
        let cur = *self
            .cursors
            .entry(batch.doc)
            .or_insert(Cursor { offset: 0, line: 1 });
        let end = batch.offset + batch.bytes.len() as u64;
        let mut out = Vec::new();
        if end <= cur.offset {
            return out;
        }
        if batch.offset > cur.offset {
            // Lines between the cursor and this batch were not seen: the
            // session holds them.
            out.extend(self.read_session(batch.doc, Some(batch.offset)));
        }
        let cur = self.cursors[&batch.doc];
        if end <= cur.offset {
            return out;
        }
        let skip = cur.offset.saturating_sub(batch.offset) as usize;
        let bytes = &batch.bytes[skip..];
        let first_line = if skip == 0 {
            batch.first_line
        } else {
            cur.line
        };
        self.cursors.insert(
            batch.doc,
            Cursor {
                offset: end,
                line: first_line + memchr::memchr_iter(b'\n', bytes).count() as u64,
            },
        );
        out.push(Chunk {
            doc: batch.doc,
            name: batch.name.clone(),
            first_line,
            offset: end - bytes.len() as u64,
            bytes: bytes.to_vec(),
        });
        out
    }

    /// After a lag: every document from its cursor to its last whole line
    /// in the session now.
    fn catch_up(&mut self) -> Vec<Chunk> {
        let Some(ready) = self.state.ready() else {
            return Vec::new();
        };
        let n = ready.session.corpus().docs().len();
        (0..n).filter_map(|d| self.read_session(d, None)).collect()
    }

    /// Document `doc` of the session from the cursor to `until` (a byte
    /// offset at a line start) or to its last whole line.
    fn read_session(&mut self, doc: usize, until: Option<u64>) -> Option<Chunk> {
        let ready = self.state.ready()?;
        let d = ready.session.corpus().docs().get(doc)?;
        if !self.wanted(d.name()) {
            return None;
        }
        let mut cur = *self
            .cursors
            .entry(doc)
            .or_insert(Cursor { offset: 0, line: 1 });
        // Lines owed but evicted since (`--retain`; a tail that lagged
        // behind the bound) are gone: the tail goes on from the oldest
        // line held.
        if cur.offset < d.first_offset() {
            cur = Cursor {
                offset: d.first_offset(),
                line: d.first_line() + 1,
            };
        }
        let data = d.data();
        let whole = end_of(&ready, doc)?.offset;
        let end = until.map_or(whole, |u| u.min(whole));
        if end <= cur.offset {
            return None;
        }
        let base = d.first_offset();
        let bytes = data[(cur.offset - base) as usize..(end - base) as usize].to_vec();
        let lines = memchr::memchr_iter(b'\n', &bytes).count() as u64;
        self.cursors.insert(
            doc,
            Cursor {
                offset: end,
                line: cur.line + lines,
            },
        );
        Some(Chunk {
            doc,
            name: d.name().to_string(),
            first_line: cur.line,
            offset: cur.offset,
            bytes,
        })
    }
}

/// Whole lines of one document to match.
struct Chunk {
    doc: usize,
    name: String,
    first_line: u64,
    offset: u64,
    bytes: Vec<u8>,
}

/// Each line's time in the session's stats columns ([`NO_TIME`] where
/// there is none: no columns, or a line they do not cover).
fn chunk_times(state: &AppState, c: &Chunk) -> Vec<i64> {
    let n = memchr::memchr_iter(b'\n', &c.bytes).count();
    let mut times = vec![NO_TIME; n];
    let Some(ready) = state.ready() else {
        return times;
    };
    let col = ready
        .session
        .columns()
        .and_then(|cols| cols.docs().get(c.doc))
        .map_or(&[][..], |d| &d.times[..]);
    // The columns hold the lines held: line numbers count evicted ones.
    let evicted = ready
        .session
        .corpus()
        .docs()
        .get(c.doc)
        .map_or(0, |d| d.first_line());
    let Some(from) = c.first_line.saturating_sub(1).checked_sub(evicted) else {
        return times;
    };
    for (i, t) in times.iter_mut().enumerate() {
        if let Some(&x) = col.get(from as usize + i) {
            *t = x;
        }
    }
    times
}

/// The hits of one chunk, through the routing point.
fn match_chunk(spec: &TailSpec, c: &Chunk) -> Vec<Hit> {
    let session = Session::with_tuning(
        Corpus::from_bytes(c.name.clone(), c.bytes.clone()),
        spec.tuning.clone(),
    );
    let opts = SearchOptions {
        threads: 1,
        want: Want::Lines,
        line_ids: true,
        ..Default::default()
    };
    let request = Request::Search(&spec.query);
    let result = match session
        .route(&request, &opts)
        .and_then(|route| session.execute(&request, &route, &opts))
    {
        Ok(Answer::Search(r)) => r,
        Ok(_) => return Vec::new(),
        Err(e) => {
            tracing::warn!("a tail's batch search failed: {e}");
            return Vec::new();
        }
    };
    let doc = &session.corpus().docs()[0];
    let enc = RgJson::new(&spec.query, session.corpus(), std::time::Duration::ZERO);
    let data = doc.data();
    result.docs[0]
        .lines
        .iter()
        .map(|&id| {
            let r = doc.lines().line_range(id);
            let text = data[r.start as usize..(r.end as usize + 1).min(data.len())].to_vec();
            let line = doc.line(id);
            Hit {
                doc: c.doc,
                name: c.name.clone(),
                line_number: c.first_line + id,
                offset: c.offset + r.start,
                submatches: enc.submatches(line),
                patterns: spec
                    .watchlist
                    .as_ref()
                    .map(|w| patterns_of(w, line, &spec.tuning)),
                text,
            }
        })
        .collect()
}

/// The patterns of watchlist `w` that line `line` holds, each as if
/// searched alone: a per-pattern count over the line, routed.
fn patterns_of(w: &Watchlist, line: &[u8], tuning: &Tuning) -> Vec<usize> {
    let mut one = line.to_vec();
    one.push(b'\n');
    let session = Session::with_tuning(Corpus::from_bytes("line", one), tuning.clone());
    let opts = SearchOptions {
        threads: 1,
        ..Default::default()
    };
    let request = Request::Watchlist(w);
    match session
        .route(&request, &opts)
        .and_then(|route| session.execute(&request, &route, &opts))
    {
        Ok(Answer::PatternCounts(pc)) => pc.matched(),
        Ok(_) => Vec::new(),
        Err(e) => {
            tracing::warn!("a watchlist tail's pattern count failed: {e}");
            Vec::new()
        }
    }
}
