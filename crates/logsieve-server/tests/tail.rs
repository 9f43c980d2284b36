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
mod oracle;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::TestServer;
use logsieve::{Corpus, Document, Session, Syntax, Tuning};
use logsieve_server::append::append;
use logsieve_server::tail::{Hit, Tail, TailSpec};
use logsieve_server::{AppState, Limits, Ready};
use oracle::{Flags, CASES};
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
        let Ok(q) = oracle::build(&case.patterns(), case.syntax, case.flags()) else {
            continue;
        };
        let state = state_over(&[("case.log", FIRST)]);
        let spec = TailSpec {
            query: Arc::new(q),
            watchlist: None,
            files: None,
            tuning: Tuning::default(),
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
    let initial = oracle::generated(50, 1);
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
    let more = oracle::generated(400, 7);
    let parts = batches(&more, 9);
    let mut tails: Vec<Tail> = queries
        .iter()
        .map(|(p, syn, f, files)| {
            let q = oracle::build(&oracle::pats(p), *syn, Flags::parse(f)).unwrap();
            Tail::start(
                &state,
                TailSpec {
                    query: Arc::new(q),
                    watchlist: None,
                    files: files.map(|f| vec![f.to_string()]),
                    tuning: Tuning::default(),
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
            for l in oracle::naive(&appended[k], &oracle::pats(p), *syn, Flags::parse(f)) {
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
    let q = oracle::build(&oracle::pats(&["hit"]), Syntax::Fixed, Flags::default()).unwrap();
    let spec = TailSpec {
        query: Arc::new(q),
        watchlist: None,
        files: None,
        tuning: Tuning::default(),
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
                !oracle::naive(
                    format!("{line}\n").as_bytes(),
                    &oracle::pats(&[pats[i]]),
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
