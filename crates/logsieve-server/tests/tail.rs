//! Live tails (`/api/v1/tail`, `logsieve_server::tail`) against the
//! library's naive oracle over appended batches: the shared table of cases
//! and generated logs (every query kind, `-v`, several patterns, a files
//! subset), a tail too slow for the broadcast that catches up from the
//! session, many concurrent tails over HTTP, the 429 past `--max-tails`, a
//! disconnected client's slot given back, a watchlist tail's patterns
//! against each pattern searched alone.
//!
//! Lines are appended with `logsieve_server::append::append` (the
//! test-only appender: grow the session, then publish to the hub).

// Proving the state `Send + Sync` walks wgpu's types (as the library does).
#![recursion_limit = "256"]

mod common;
#[path = "../../logsieve/tests/common/mod.rs"]
#[allow(unused_imports)]
mod library;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::TestServer;
use library::{Flags, CASES};
use logsieve::{Corpus, Document, Session, Syntax, Tuning};
use logsieve_server::append::append;
use logsieve_server::tail::{Hit, Tail, TailSpec};
use logsieve_server::{AppState, Limits, Ready};
use serde_json::Value;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A ready state over `docs` (no server).
fn state_over(docs: &[(&str, &[u8])]) -> AppState {
    let state = AppState::new(Limits::default(), None);
    let mut c = Corpus::new();
    for (n, d) in docs {
        c.push(Document::from_bytes(*n, d.to_vec()));
    }
    state.set_ready(Ready::new(Session::new(c)));
    state
}

/// Hits until `want` arrived (or 10 s passed).
fn drain(rt: &tokio::runtime::Runtime, tail: &mut Tail, want: usize) -> Vec<Hit> {
    let mut hits = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while hits.len() < want && Instant::now() < deadline {
        let r = rt.block_on(async {
            tokio::time::timeout(Duration::from_millis(500), tail.next()).await
        });
        match r {
            Ok(Ok(h)) => hits.extend(h),
            _ => break,
        }
    }
    hits
}

/// Line `i`'s (0-based) offset in `data`.
fn offsets(data: &[u8]) -> Vec<u64> {
    let mut v = vec![0u64];
    for (i, &b) in data.iter().enumerate() {
        if b == b'\n' {
            v.push(i as u64 + 1);
        }
    }
    v
}

/// Whole lines of `data` cut into up to `n` batches at line boundaries.
fn batches(data: &[u8], n: usize) -> Vec<&[u8]> {
    let offs = offsets(data);
    let lines = offs.len() - 1;
    let per = lines.div_ceil(n.max(1)).max(1);
    (0..lines)
        .step_by(per)
        .map(|s| &data[offs[s] as usize..offs[(s + per).min(lines)] as usize])
        .collect()
}

/// The served file's line before the case's.
const FIRST: &[u8] = b"\xff first line, never selected?\n";

/// The table of cases: each case's corpus appended in two batches to a
/// served file that already holds a line; a tail started before sees
/// exactly the case's expected lines, numbered after the first.
#[test]
fn tail_equals_the_table_of_cases() {
    let rt = rt();
    let mut checked = 0;
    for case in CASES {
        let mut corpus = case.corpus.to_vec();
        if corpus.is_empty() {
            continue;
        }
        if corpus.last() != Some(&b'\n') {
            corpus.push(b'\n');
        }
        let Ok(q) = library::build(&case.patterns(), case.syntax, case.flags()) else {
            continue;
        };
        let state = state_over(&[("case.log", FIRST)]);
        let spec = TailSpec {
            query: Arc::new(q),
            watchlist: None,
            files: None,
            tuning: Tuning::default(),
            since: None,
            until: None,
        };
        let mut tail = Tail::start(&state, spec);
        for b in batches(&corpus, 2) {
            append(&state, "case.log", b).unwrap();
        }
        let hits = drain(&rt, &mut tail, case.expected.len());
        let got: Vec<u64> = hits.iter().map(|h| h.line_number - 2).collect();
        assert_eq!(got, case.expected, "case {}", case.name);
        let offs = offsets(&corpus);
        let base = FIRST.len() as u64;
        for h in &hits {
            let i = (h.line_number - 2) as usize;
            assert_eq!(h.offset, base + offs[i], "case {}", case.name);
            assert_eq!(
                h.text,
                &corpus[offs[i] as usize..offs[i + 1] as usize],
                "case {}",
                case.name
            );
        }
        checked += 1;
    }
    assert!(checked > 50, "only {checked} cases ran");
}

/// Generated logs in two files, appended in batches of both; tails of
/// every query kind, `-v`, several patterns and a files subset each get
/// the oracle's lines, once, in order per file.
#[test]
fn tails_equal_the_oracle_over_appended_batches() {
    let rt = rt();
    let initial = library::generated(50, 1);
    let state = state_over(&[("a.log", &initial), ("b.log", &initial)]);
    let queries: &[(&[&str], Syntax, &str, Option<&str>)] = &[
        (&["ERROR"], Syntax::Fixed, "", None),
        (&["error"], Syntax::Fixed, "i", None),
        (&["ERROR", "WARN"], Syntax::Fixed, "", None),
        (&[r"status=5\d\d"], Syntax::Regex, "", None),
        (&["GET"], Syntax::Fixed, "w", Some("b.log")),
        (&["*timeout*"], Syntax::Wildcard, "", None),
        (&["INFO"], Syntax::Fixed, "v", None),
        (&["eror"], Syntax::Fuzzy(1), "", None),
        (&["user=u1"], Syntax::Regex, "iv", Some("a.log")),
    ];
    let more = library::generated(400, 7);
    let parts = batches(&more, 9);
    let mut tails: Vec<Tail> = queries
        .iter()
        .map(|(p, syn, f, files)| {
            let q = library::build(&library::pats(p), *syn, Flags::parse(f)).unwrap();
            Tail::start(
                &state,
                TailSpec {
                    query: Arc::new(q),
                    watchlist: None,
                    files: files.map(|f| vec![f.to_string()]),
                    tuning: Tuning::default(),
                    since: None,
                    until: None,
                },
            )
        })
        .collect();
    // Alternate files: a.log gets parts 0, 2, 4, ..., b.log the others.
    let mut appended: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
    for (i, p) in parts.iter().enumerate() {
        let f = i % 2;
        append(&state, ["a.log", "b.log"][f], p).unwrap();
        appended[f].extend_from_slice(p);
    }
    let first = (offsets(&initial).len() - 1) as u64;
    for ((p, syn, f, files), tail) in queries.iter().zip(&mut tails) {
        let mut want: Vec<(String, u64)> = Vec::new();
        for (k, name) in ["a.log", "b.log"].iter().enumerate() {
            if files.is_some_and(|f| f != *name) {
                continue;
            }
            for l in library::naive(&appended[k], &library::pats(p), *syn, Flags::parse(f)) {
                want.push((name.to_string(), first + l + 1));
            }
        }
        let hits = drain(&rt, tail, want.len());
        // In order within each file; files interleave as published.
        let mut got: Vec<(String, u64)> = hits
            .iter()
            .map(|h| (h.name.clone(), h.line_number))
            .collect();
        for name in ["a.log", "b.log"] {
            let nums: Vec<u64> = got.iter().filter(|g| g.0 == name).map(|g| g.1).collect();
            assert!(nums.windows(2).all(|w| w[0] < w[1]), "{p:?}: order");
        }
        got.sort();
        want.sort();
        assert_eq!(got, want, "query {p:?} {f:?} {files:?}");
        // Nothing more comes.
        assert!(drain(&rt, tail, 1).is_empty(), "{p:?}: extra lines");
    }
}

/// A tail that reads nothing while more batches than the hub keeps
/// (1,024) are published lags, catches up from the session, and still
/// gets every matching line once, in order.
#[test]
fn a_lagging_tail_catches_up_from_the_session() {
    let rt = rt();
    let state = state_over(&[("a.log", b"start\n"), ("b.log", b"start\n")]);
    let q = library::build(&library::pats(&["hit"]), Syntax::Fixed, Flags::default()).unwrap();
    let spec = TailSpec {
        query: Arc::new(q),
        watchlist: None,
        files: None,
        tuning: Tuning::default(),
        since: None,
        until: None,
    };
    let mut slow = Tail::start(&state, spec.clone());
    let mut want = Vec::new();
    for i in 0..1100u64 {
        let name = if i % 3 == 0 { "b.log" } else { "a.log" };
        let text = if i % 2 == 0 {
            format!("hit {i}\nmiss {i}\n")
        } else {
            format!("miss {i}\n")
        };
        append(&state, name, text.as_bytes()).unwrap();
        if i % 2 == 0 {
            want.push(format!("hit {i}\n"));
        }
    }
    let hits = drain(&rt, &mut slow, want.len());
    assert!(slow.catch_ups >= 1, "the tail never lagged");
    let mut got: Vec<String> = hits
        .iter()
        .map(|h| String::from_utf8(h.text.clone()).unwrap())
        .collect();
    // Per file in order; every line once.
    for name in ["a.log", "b.log"] {
        let nums: Vec<u64> = hits
            .iter()
            .filter(|h| h.name == name)
            .map(|h| h.line_number)
            .collect();
        assert!(nums.windows(2).all(|w| w[0] < w[1]), "{name}: order");
    }
    got.sort();
    want.sort();
    assert_eq!(got, want);
    assert!(drain(&rt, &mut slow, 1).is_empty());
    // Line numbers and offsets are the document's.
    let ready = state.ready().unwrap();
    for h in &hits {
        let d = &ready.session.corpus().docs()[h.doc];
        let r = d.lines().line_range(h.line_number - 1);
        assert_eq!(r.start, h.offset);
        assert_eq!(&d.data()[r.start as usize..=r.end as usize], &h.text[..]);
    }
}

// ------------------------------------------------------------ over HTTP

/// An open `GET /api/v1/tail`: server-sent events read as they come.
struct SseClient {
    reader: BufReader<TcpStream>,
    /// Bytes of the current chunk still to read.
    left: usize,
}

impl SseClient {
    /// Opens a tail; `Err(status, body)` when the server refuses.
    fn open(addr: SocketAddr, query: &str) -> Result<SseClient, (u16, String)> {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(
            s,
            "GET /api/v1/tail?{query} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut reader = BufReader::new(s);
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        let code: u16 = status.split(' ').nth(1).unwrap().parse().unwrap();
        let mut chunked = false;
        let mut len = 0usize;
        loop {
            let mut h = String::new();
            reader.read_line(&mut h).unwrap();
            let l = h.to_ascii_lowercase();
            chunked |= l.starts_with("transfer-encoding: chunked");
            if let Some(v) = l.strip_prefix("content-length:") {
                len = v.trim().parse().unwrap();
            }
            if h == "\r\n" {
                break;
            }
        }
        if code != 200 {
            let mut body = vec![0u8; len];
            reader.read_exact(&mut body).unwrap();
            return Err((code, String::from_utf8_lossy(&body).into_owned()));
        }
        assert!(chunked);
        let mut c = SseClient { reader, left: 0 };
        let (ev, data) = c.event().unwrap();
        assert_eq!(ev, "ready", "{data}");
        Ok(c)
    }

    fn line(&mut self) -> Option<String> {
        let mut out = Vec::new();
        loop {
            if self.left == 0 {
                let mut size = String::new();
                if self.reader.read_line(&mut size).ok()? == 0 {
                    return None;
                }
                if size.trim().is_empty() {
                    continue;
                }
                self.left = usize::from_str_radix(size.trim(), 16).ok()?;
                if self.left == 0 {
                    return None;
                }
            }
            let buf = self.reader.fill_buf().ok()?;
            if buf.is_empty() {
                return None;
            }
            let n = buf.len().min(self.left);
            let nl = buf[..n].iter().position(|&b| b == b'\n');
            let take = nl.map_or(n, |i| i + 1);
            out.extend_from_slice(&buf[..take]);
            self.reader.consume(take);
            self.left -= take;
            if self.left == 0 {
                let mut crlf = [0u8; 2];
                self.reader.read_exact(&mut crlf).ok()?;
            }
            if nl.is_some() {
                return Some(String::from_utf8(out).unwrap());
            }
        }
    }

    /// The next event (comments skipped): its name and data.
    fn event(&mut self) -> Option<(String, String)> {
        let (mut ev, mut data) = (String::new(), String::new());
        loop {
            let l = self.line()?;
            let l = l.trim_end_matches('\n');
            if l.is_empty() {
                if !data.is_empty() || !ev.is_empty() {
                    return Some((ev, data));
                }
            } else if let Some(v) = l.strip_prefix("event:") {
                ev = v.trim().to_string();
            } else if let Some(v) = l.strip_prefix("data:") {
                data.push_str(v.strip_prefix(' ').unwrap_or(v));
            }
        }
    }

    /// `n` match objects.
    fn matches(&mut self, n: usize) -> Vec<Value> {
        (0..n)
            .map(|_| {
                let (ev, data) = self.event().expect("a match event");
                assert_eq!(ev, "match");
                serde_json::from_str(&data).unwrap()
            })
            .collect()
    }
}

fn served(limits: Limits) -> TestServer {
    let mut c = Corpus::new();
    c.push(Document::from_bytes("a.log", b"old ERROR line\n".to_vec()));
    c.push(Document::from_bytes("b.log", b"old line\n".to_vec()));
    TestServer::ready(Session::new(c), limits, None)
}

/// Many tails over HTTP each get their lines as ripgrep `match` objects;
/// past `--max-tails` a JSON 429; a client that goes away frees its slot;
/// bad queries are the search endpoint's 400s.
#[test]
fn http_tails_limits_and_freed_slots() {
    let srv = served(Limits {
        max_tails: 6,
        ..Default::default()
    });
    let queries = [
        "pattern=ERROR&syntax=literal",
        "pattern=error&ignore_case=true",
        "pattern=ERROR&pattern=WARN",
        "pattern=ERROR&invert=true",
        "pattern=ERROR&file=b.log",
        "pattern=W*N&syntax=wildcard",
    ];
    let mut tails: Vec<SseClient> = queries
        .iter()
        .map(|q| SseClient::open(srv.addr, q).unwrap())
        .collect();
    let (code, body) = SseClient::open(srv.addr, "pattern=x").err().unwrap();
    assert_eq!(code, 429);
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["error"]["kind"], "too_many_tails");
    let text = b"new ERROR one\nnew WARN two\nquiet three\n";
    append(&srv.state, "a.log", text).unwrap();
    append(&srv.state, "b.log", text).unwrap();
    // (query index, matches expected: file, line number, offset, text)
    let lines = ["new ERROR one\n", "new WARN two\n", "quiet three\n"];
    let expect: [&[(&str, u64, usize)]; 6] = [
        &[("a.log", 2, 0), ("b.log", 2, 0)],
        &[("a.log", 2, 0), ("b.log", 2, 0)],
        &[
            ("a.log", 2, 0),
            ("a.log", 3, 1),
            ("b.log", 2, 0),
            ("b.log", 3, 1),
        ],
        &[
            ("a.log", 3, 1),
            ("a.log", 4, 2),
            ("b.log", 3, 1),
            ("b.log", 4, 2),
        ],
        &[("b.log", 2, 0)],
        &[("a.log", 3, 1), ("b.log", 3, 1)],
    ];
    for (t, want) in tails.iter_mut().zip(expect) {
        let got = t.matches(want.len());
        for (g, &(file, n, l)) in got.iter().zip(want) {
            assert_eq!(g["type"], "match");
            assert_eq!(g["data"]["path"]["text"], file);
            assert_eq!(g["data"]["line_number"], n);
            assert_eq!(g["data"]["lines"]["text"], lines[l]);
            let base = if file == "a.log" { 15 } else { 9 };
            let off: usize = lines[..l].iter().map(|s| s.len()).sum();
            assert_eq!(g["data"]["absolute_offset"], (base + off) as u64);
        }
    }
    // The submatches are rg's.
    append(&srv.state, "a.log", b"x ERROR y ERROR\n").unwrap();
    let m = &tails[0].matches(1)[0];
    assert_eq!(m["data"]["submatches"][1]["start"], 10);
    assert_eq!(m["data"]["submatches"][1]["match"]["text"], "ERROR");
    // Hang up one client: its slot comes back (once the server writes to
    // the closed connection).
    drop(tails.pop());
    let deadline = Instant::now() + Duration::from_secs(10);
    let reopened = loop {
        append(&srv.state, "a.log", b"WARN again\n").unwrap();
        match SseClient::open(srv.addr, "pattern=x") {
            Ok(c) => break c,
            Err((429, _)) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(50))
            }
            Err(e) => panic!("{e:?}"),
        }
    };
    drop(reopened);
    // Bad queries: the search endpoint's errors.
    let bad = |q: &str| {
        let r = common::request(srv.addr, "GET", &format!("/api/v1/tail?{q}"), &[], b"");
        (r.status, r.error_kind())
    };
    assert_eq!(bad("pattern=a(").0, 400);
    assert_eq!(bad("pattern=a&file=nope.log"), (400, "unknown_file".into()));
    assert_eq!(bad("watchlist=nope"), (404, "unknown_watchlist".into()));
    assert_eq!(bad("pattern=a&ignore_case=maybe").0, 400);
    assert_eq!(bad("").0, 400);
    // POST with the search endpoint's JSON fields.
    let r = common::request(
        srv.addr,
        "POST",
        "/api/v1/tail",
        &[],
        br#"{"patterns":["a"],"output":"count"}"#,
    );
    assert_eq!(r.status, 422);
    // The server stops with tails open (the drop joins its thread).
}

/// A watchlist tail's `patterns` are, for each line, the patterns that
/// match it searched alone (overlapping and case-folded ones included).
#[test]
fn watchlist_tail_names_each_pattern_searched_alone() {
    let srv = served(Limits::default());
    let pats = ["abc", "bc", "ERROR", "c d", "zzz"];
    let body = serde_json::json!({"patterns": pats, "ignore_case": true}).to_string();
    let r = common::request(
        srv.addr,
        "PUT",
        "/api/v1/watchlists/iocs",
        &[],
        body.as_bytes(),
    );
    assert_eq!(r.status, 201, "{}", r.text());
    let mut t = SseClient::open(srv.addr, "watchlist=iocs").unwrap();
    let text = "xABC d\nnothing\nerror bc\nabc ERROR zzz\nc d\n";
    append(&srv.state, "b.log", text.as_bytes()).unwrap();
    let want: Vec<&str> = text
        .lines()
        .filter(|l| {
            pats.iter()
                .any(|p| l.to_lowercase().contains(&p.to_lowercase()))
        })
        .collect();
    let got = t.matches(want.len());
    for (g, line) in got.iter().zip(&want) {
        assert_eq!(g["data"]["lines"]["text"], format!("{line}\n"));
        let named: Vec<u64> = g["data"]["patterns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["index"].as_u64().unwrap())
            .collect();
        // Each pattern searched alone, by the oracle.
        let alone: Vec<u64> = (0..pats.len())
            .filter(|&i| {
                !library::naive(
                    format!("{line}\n").as_bytes(),
                    &library::pats(&[pats[i]]),
                    Syntax::Fixed,
                    Flags::parse("i"),
                )
                .is_empty()
            })
            .map(|i| i as u64)
            .collect();
        assert_eq!(named, alone, "{line}");
        for p in g["data"]["patterns"].as_array().unwrap() {
            assert_eq!(
                p["pattern"]["text"],
                pats[p["index"].as_u64().unwrap() as usize]
            );
        }
    }
}

/// The OpenAPI document describes the tail.
#[test]
fn openapi_documents_the_tail() {
    let srv = served(Limits::default());
    let v = srv.get("/api/v1/openapi.json").json();
    assert!(v["paths"]["/api/v1/tail"]["get"].is_object());
    assert!(v["components"]["schemas"]["TailRequest"].is_object());
}

// ------------------------------------------------------- time windows

/// 2026-11-21T10:00:00.000Z: every stamped test line is this plus up to
/// 99 ms.
const T0: i64 = 1_795_255_200_000;

/// A line stamped `T0 + ms` (`None`: no stamp, so it takes the previous
/// line's time, as the stats columns do).
fn stamped(ms: Option<u8>, text: &str) -> String {
    match ms {
        Some(ms) => format!("2026-11-21T10:00:00.{ms:03}Z INFO {text}\n"),
        None => format!("    at {text}\n"),
    }
}

/// A ready state over `docs` with the stats columns the server builds.
fn state_with_columns(docs: &[(&str, &[u8])]) -> AppState {
    use logsieve::stats::{ColumnOptions, Columns};
    let state = AppState::new(Limits::default(), None);
    let mut c = Corpus::new();
    for (n, d) in docs {
        c.push(Document::from_bytes(*n, d.to_vec()));
    }
    let cols = Columns::build(
        &c,
        &ColumnOptions {
            time_format: None,
            year: 2026,
            doc_years: vec![],
            doc_mtimes: vec![None; c.docs().len()],
            fields: vec![],
        },
    );
    let mut s = Session::new(c);
    s.set_columns(cols);
    state.set_ready(Ready::new(s));
    state
}

/// The naive times of `lines`: a stamp's own, else the previous line's
/// (starting from `prev`).
fn naive_times(lines: &[String], mut prev: i64) -> Vec<i64> {
    lines
        .iter()
        .map(|l| {
            if let Some(ms) = l.strip_prefix("2026-11-21T10:00:00.") {
                prev = T0 + ms[..3].parse::<i64>().unwrap();
            }
            prev
        })
        .collect()
}

/// One random time-window case: lines (stamp or not, hit or not) cut into
/// batches, a window of `since`/`until` drawn from the same 0..30 ms (so
/// lines fall on, just before and just after both bounds), a query.
#[derive(Debug, Clone)]
struct WindowCase {
    lines: Vec<(Option<u8>, bool)>,
    cuts: Vec<usize>,
    since: Option<u8>,
    until: Option<u8>,
    query: usize,
}

fn window_case() -> impl proptest::strategy::Strategy<Value = WindowCase> {
    use proptest::prelude::*;
    (
        proptest::collection::vec(
            (proptest::option::weighted(0.8, 0u8..30), any::<bool>()),
            1..40,
        ),
        proptest::collection::vec(0usize..40, 0..6),
        proptest::option::weighted(0.7, 0u8..30),
        proptest::option::weighted(0.7, 0u8..30),
        0usize..4,
    )
        .prop_map(|(lines, cuts, since, until, query)| WindowCase {
            lines,
            cuts,
            since,
            until,
            query,
        })
}

/// Runs a case through a [`Tail`] and checks it against the naive oracle:
/// the hits are the matching lines stamped inside the window, from the
/// batches up to the first one holding a line stamped at or after
/// `until` (none when the first line already is), then the tail ends
/// ([`Stopped::Until`]); without such a line it stays open.
fn check_window_case(rt: &tokio::runtime::Runtime, case: &WindowCase) {
    use logsieve_server::tail::Stopped;
    let queries: [(&str, Syntax, &str); 4] = [
        ("hit", Syntax::Fixed, ""),
        ("HIT", Syntax::Fixed, "i"),
        ("h.t", Syntax::Regex, ""),
        ("hit", Syntax::Fixed, "v"),
    ];
    let (pat, syntax, flags) = queries[case.query];
    let first = stamped(Some(0), "first line hit");
    let state = state_with_columns(&[("t.log", first.as_bytes())]);
    let q = library::build(&library::pats(&[pat]), syntax, Flags::parse(flags)).unwrap();
    let since = case.since.map(|s| T0 + s as i64);
    let until = case.until.map(|u| T0 + u as i64);
    let mut tail = Tail::start(
        &state,
        TailSpec {
            query: Arc::new(q),
            watchlist: None,
            files: None,
            tuning: Tuning::default(),
            since,
            until,
        },
    );
    let lines: Vec<String> = case
        .lines
        .iter()
        .enumerate()
        .map(|(i, &(ms, hit))| stamped(ms, &format!("{} {i}", if hit { "hit" } else { "miss" })))
        .collect();
    let mut cuts: Vec<usize> = case.cuts.iter().map(|&c| c.min(lines.len())).collect();
    cuts.extend([0, lines.len()]);
    cuts.sort_unstable();
    cuts.dedup();
    for w in cuts.windows(2) {
        append(&state, "t.log", lines[w[0]..w[1]].concat().as_bytes()).unwrap();
    }
    // The oracle.
    let times = naive_times(&lines, T0);
    let ends_at_once = until.is_some_and(|u| T0 >= u);
    let mut want: Vec<u64> = Vec::new();
    let mut ended = ends_at_once;
    if !ended {
        for w in cuts.windows(2) {
            for i in w[0]..w[1] {
                let in_window =
                    since.is_none_or(|s| times[i] >= s) && until.is_none_or(|u| times[i] < u);
                let hit = !library::naive(
                    lines[i].as_bytes(),
                    &library::pats(&[pat]),
                    syntax,
                    Flags::parse(flags),
                )
                .is_empty();
                if in_window && hit {
                    want.push(i as u64 + 2);
                }
            }
            if until.is_some_and(|u| times[w[0]..w[1]].iter().any(|&t| t >= u)) {
                ended = true;
                break;
            }
        }
    }
    // The tail: one `next` per batch, then one more.
    let mut got = Vec::new();
    let mut stopped = None;
    for k in 0..cuts.len() {
        let wait = if k + 1 < cuts.len() { 10_000 } else { 100 };
        match rt.block_on(async {
            tokio::time::timeout(Duration::from_millis(wait), tail.next()).await
        }) {
            Ok(Ok(h)) => got.extend(h.iter().map(|h| h.line_number)),
            Ok(Err(e)) => {
                stopped = Some(e);
                break;
            }
            Err(_) => break,
        }
    }
    assert_eq!(got, want, "{case:?}");
    assert_eq!(stopped, ended.then_some(Stopped::Until), "{case:?}");
}

/// Tails with `since`/`until` against the naive oracle on random lines and
/// windows (every bound hit exactly, from just before and just after).
#[test]
fn tail_time_windows_equal_the_oracle() {
    use proptest::prelude::*;
    let rt = rt();
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 96,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    runner
        .run(&window_case(), |case| {
            check_window_case(&rt, &case);
            Ok(())
        })
        .unwrap();
}

/// Every `since`/`until` pair over one fixed set of lines: a boundary
/// sweep of the window over each line's time.
#[test]
fn tail_time_window_boundary_sweep() {
    let rt = rt();
    let lines: Vec<(Option<u8>, bool)> = vec![
        (Some(3), true),
        (None, true),
        (Some(5), true),
        (Some(4), true),
        (Some(7), false),
        (None, true),
        (Some(9), true),
    ];
    for since in (0..=10).map(Some).chain([None]) {
        for until in (0..=10).map(Some).chain([None]) {
            for cuts in [vec![], vec![2], vec![1, 3, 5]] {
                check_window_case(
                    &rt,
                    &WindowCase {
                        lines: lines.clone(),
                        cuts,
                        since,
                        until,
                        query: 0,
                    },
                );
            }
        }
    }
}

/// Over HTTP: `since`/`until` select what the search route selects with the
/// same window over the appended lines; the line past `until` ends the
/// stream with `event: end`; an `until` already passed ends it at once;
/// a bad time is the search's 400.
#[test]
fn http_tail_time_window_equals_the_search_window() {
    let first = stamped(Some(0), "first hit");
    let mut c = Corpus::new();
    c.push(Document::from_bytes("t.log", first.into_bytes()));
    let cols = logsieve::stats::Columns::build(
        &c,
        &logsieve::stats::ColumnOptions {
            time_format: None,
            year: 2026,
            doc_years: vec![],
            doc_mtimes: vec![None],
            fields: vec![],
        },
    );
    let mut s = Session::new(c);
    s.set_columns(cols);
    let srv = TestServer::ready(
        s,
        Limits {
            max_tails: 1,
            ..Default::default()
        },
        None,
    );
    let iso = |ms: i64| logsieve::stats::format_ms(T0 + ms);
    let window = format!("since={}&until={}", iso(10), iso(30));
    let mut t = SseClient::open(srv.addr, &format!("pattern=hit&syntax=literal&{window}")).unwrap();
    let batches = [
        vec![
            stamped(Some(5), "hit early"),
            stamped(Some(10), "hit on since"),
            stamped(Some(15), "miss"),
            stamped(None, "hit inherits 15"),
        ],
        vec![
            stamped(Some(29), "hit last ms"),
            stamped(Some(30), "hit on until: ends the tail"),
            stamped(Some(20), "hit late but inside, same batch"),
        ],
        vec![stamped(Some(12), "hit after the end")],
    ];
    for b in &batches {
        append(&srv.state, "t.log", b.concat().as_bytes()).unwrap();
    }
    // The search route, same window, over the lines of the first two
    // batches (line 1 is the corpus's own; the third batch came after
    // the end).
    let body = serde_json::json!({
        "patterns": ["hit"], "syntax": "literal", "output": "lines",
        "since": iso(10), "until": iso(30),
    });
    let r = srv.post("/api/v1/search", &body.to_string());
    assert_eq!(r.status, 200);
    let last = 1 + batches[0].len() + batches[1].len();
    let want: Vec<(u64, String)> = r
        .text()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "match")
        .map(|v| {
            (
                v["data"]["line_number"].as_u64().unwrap(),
                v["data"]["lines"]["text"].as_str().unwrap().to_string(),
            )
        })
        .filter(|(n, _)| *n > 1 && *n as usize <= last)
        .collect();
    assert_eq!(want.len(), 4, "{want:?}");
    let got: Vec<(u64, String)> = t
        .matches(want.len())
        .iter()
        .map(|v| {
            (
                v["data"]["line_number"].as_u64().unwrap(),
                v["data"]["lines"]["text"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(got, want);
    let (ev, data) = t.event().expect("the end event");
    assert_eq!(ev, "end");
    let end: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(end["reason"], "until");
    assert_eq!(end["until_ms"], T0 + 30);
    assert!(t.event().is_none(), "the stream ends after `end`");
    // The slot came back with the end (--max-tails 1): an `until` the
    // corpus has passed ends at once.
    let mut t = SseClient::open(srv.addr, &format!("pattern=hit&until={}", iso(20))).unwrap();
    let (ev, _) = t.event().expect("the end event");
    assert_eq!(ev, "end");
    assert!(t.event().is_none());
    // Durations count back from the newest line at the start (T0 + 30):
    // `since=5ms` skips what is stamped before T0 + 25.
    let mut t = SseClient::open(srv.addr, "pattern=hit&since=5ms").unwrap();
    append(
        &srv.state,
        "t.log",
        [
            stamped(Some(24), "hit too old"),
            stamped(Some(25), "hit new"),
        ]
        .concat()
        .as_bytes(),
    )
    .unwrap();
    let m = t.matches(1);
    assert!(m[0]["data"]["lines"]["text"]
        .as_str()
        .unwrap()
        .contains("hit new"));
    drop(t);
    // Bad times: the search's 400.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let r = common::request(
            srv.addr,
            "GET",
            "/api/v1/tail?pattern=a&since=yesterday-ish",
            &[],
            b"",
        );
        if r.status == 429 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        assert_eq!((r.status, r.error_kind()), (400, "invalid_time".into()));
        break;
    }
    let r = common::request(
        srv.addr,
        "POST",
        "/api/v1/tail",
        &[],
        br#"{"patterns":["a"],"until":"soon"}"#,
    );
    assert_eq!((r.status, r.error_kind()), (400, "invalid_time".into()));
}

/// A tail lagging behind an eviction (`serve --follow --max-resident`):
/// the lines it owed that were evicted are gone, and it goes on from the
/// oldest line held — each later line once, in order, numbered and
/// placed as in the whole file.
#[test]
fn a_lagging_tail_across_an_eviction() {
    let rt = rt();
    let state = state_over(&[("a.log", b"start\n")]);
    let q = library::build(&library::pats(&["hit"]), Syntax::Fixed, Flags::default()).unwrap();
    let mut slow = Tail::start(
        &state,
        TailSpec {
            query: Arc::new(q),
            watchlist: None,
            files: None,
            tuning: Tuning::default(),
            since: None,
            until: None,
        },
    );
    let line = |i: u64| format!("hit {i:05}\n");
    for i in 0..1100 {
        append(&state, "a.log", line(i).as_bytes()).unwrap();
    }
    let r = logsieve::session::Retention {
        max_bytes: Some(1000),
        ..Default::default()
    };
    let (ev, _, _) = logsieve_server::follow::evict_now(&state, &r).expect("an eviction");
    assert!(ev.lines > 1000);
    for i in 1100..1150 {
        append(&state, "a.log", line(i).as_bytes()).unwrap();
    }
    let hits = drain(&rt, &mut slow, usize::MAX);
    assert!(slow.catch_ups >= 1, "the tail never lagged");
    let ready = state.ready().unwrap();
    let d = &ready.session.corpus().docs()[0];
    // Every line held, once, in order: line n of the file is "hit n - 2".
    assert_eq!(hits.len() as u64, d.lines().len());
    for (k, h) in hits.iter().enumerate() {
        let n = d.first_line() + k as u64 + 1;
        assert_eq!(h.line_number, n);
        assert_eq!(h.text, line(n - 2).as_bytes());
        assert_eq!(h.offset, 6 + (n - 2) * 10);
    }
    assert_eq!(hits.last().unwrap().text, line(1149).as_bytes());
}
