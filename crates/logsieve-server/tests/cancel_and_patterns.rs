#![recursion_limit = "256"]
//! Cancellation (a client that hangs up, a query past its deadline: the
//! search stops and gives its slot back, and the next answers are right)
//! and `POST /api/v1/patterns` over a time window and a file subset
//! against a naive count.
// The server state holds the session: proving it `Send + Sync` walks
// wgpu's types, deeper than the default 128 (as in the library).

mod common;

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use common::{corpus, session, TestServer};
use logsieve::Session;
use logsieve_server::Limits;
use serde_json::json;

/// A query that runs for about a minute on two cores here: 1,000 fuzzy
/// patterns of six random letters with 3 edits verify ~30 KB/s on one
/// core (measured with `logsieve search -c -j1`: 60 s for 2 MB), over
/// 20,000 lines (3.9 MB). Cancelled, it stops at its next candidate line.
fn slow_body() -> String {
    let mut x: u64 = 1;
    let pats: Vec<String> = (0..1000)
        .map(|_| {
            (0..6)
                .map(|_| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (b'a' + ((x >> 33) % 26) as u8) as char
                })
                .collect()
        })
        .collect();
    json!({"patterns": pats, "syntax": "fuzzy", "fuzzy_k": 3, "output": "count", "backend": "cpu"})
        .to_string()
}

fn metric(srv: &TestServer, name: &str) -> u64 {
    let text = srv.get("/metrics").text().to_string();
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or(0)
}

/// Waits until the gauge says `n` queries are in flight (or fails after
/// `limit`: far longer than cancelling takes, far shorter than the slow
/// query runs).
fn wait_in_flight(srv: &TestServer, n: u64, limit: Duration) {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if metric(srv, "logsieve_in_flight ") == n {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("in flight never became {n}: {}", srv.get("/metrics").text());
}

/// Sends `body` to `/api/v1/search` and returns the open connection.
fn send(srv: &TestServer, body: &str) -> std::net::TcpStream {
    let mut s = std::net::TcpStream::connect(srv.addr).unwrap();
    write!(
        s,
        "POST /api/v1/search HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    s
}

const CHECK: &str =
    r#"{"patterns":["ERROR_503"],"syntax":"literal","output":"count","backend":"cpu"}"#;

fn check_total(oracle: &Session) -> u64 {
    let q = logsieve::QueryBuilder::new()
        .syntax(logsieve::Syntax::Fixed)
        .build(&["ERROR_503"])
        .unwrap();
    oracle
        .search(
            &q,
            &logsieve::SearchOptions {
                backend: logsieve::BackendChoice::Cpu,
                ..Default::default()
            },
        )
        .unwrap()
        .total()
}

#[test]
fn a_client_that_hangs_up_cancels_its_search_and_frees_its_slot() {
    let srv = TestServer::ready(
        Session::new(corpus(20_000)),
        Limits {
            max_in_flight: 1,
            ..Default::default()
        },
        None,
    );
    let want = check_total(&Session::new(corpus(20_000)));
    for round in 0..2 {
        let s = send(&srv, &slow_body());
        // The search holds the only slot: a second query is refused.
        wait_in_flight(&srv, 1, Duration::from_secs(30));
        let r = srv.post("/api/v1/search", CHECK);
        assert_eq!(r.status, 429, "{}", r.text());
        drop(s);
        // Cancelled, it gives the slot back at its next candidate line;
        // run to its end it would hold it for about a minute.
        wait_in_flight(&srv, 0, Duration::from_secs(10));
        assert_eq!(
            metric(&srv, "logsieve_errors_total{kind=\"cancelled\"}"),
            round + 1
        );
        let r = srv.post("/api/v1/search", CHECK);
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.json()["total"], want);
    }
}

#[test]
fn past_the_deadline_the_search_stops_and_frees_its_slot() {
    let srv = TestServer::ready(
        Session::new(corpus(20_000)),
        Limits {
            max_in_flight: 1,
            timeout: Duration::from_millis(1),
            ..Default::default()
        },
        None,
    );
    let mut s = send(&srv, &slow_body());
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 504"), "{answer}");
    assert!(answer.contains("\"timeout\""), "{answer}");
    wait_in_flight(&srv, 0, Duration::from_secs(10));
    assert_eq!(metric(&srv, "logsieve_errors_total{kind=\"cancelled\"}"), 1);
    // The slot is free: the next query gets it (and meets the same 1 ms
    // deadline, so no answer is checked here; the hang-up test checks).
    let r = srv.post("/api/v1/search", CHECK);
    assert_ne!(r.status, 429, "{}", r.text());
}

#[test]
fn a_stream_whose_client_hangs_up_stops_and_frees_its_slot() {
    let srv = TestServer::ready(
        Session::new(corpus(50_000)),
        Limits {
            max_in_flight: 1,
            ..Default::default()
        },
        None,
    );
    // Every line matches: a long stream. Read a little, then hang up.
    let mut s = send(&srv, r#"{"patterns":[""],"backend":"cpu"}"#);
    let mut buf = [0u8; 4096];
    assert!(s.read(&mut buf).unwrap() > 0);
    drop(s);
    wait_in_flight(&srv, 0, Duration::from_secs(10));
    let r = srv.post("/api/v1/search", CHECK);
    assert_eq!(r.status, 200, "{}", r.text());
}

/// Naive per-pattern counts over some lines: lines containing each
/// pattern and its non-overlapping occurrences.
fn naive(lines: &[&[u8]], pats: &[&str]) -> Vec<(u64, u64)> {
    pats.iter()
        .map(|p| {
            let p = p.as_bytes();
            let mut l = 0;
            let mut o = 0;
            for line in lines {
                let mut i = 0;
                let mut hit = false;
                while i + p.len() <= line.len() {
                    if &line[i..i + p.len()] == p {
                        hit = true;
                        o += 1;
                        i += p.len();
                    } else {
                        i += 1;
                    }
                }
                l += u64::from(hit);
            }
            (l, o)
        })
        .collect()
}

#[test]
fn patterns_take_a_time_window_and_files() {
    let oracle = session(20_000);
    let srv = TestServer::ready(session(20_000), Limits::default(), None);
    let cols = oracle.columns().unwrap();
    let newest = cols.newest().unwrap();
    let pats = ["ERROR_503", "192.168.1.", "user=u1", "absent-pattern", "e"];
    for (since, until, files) in [
        (Some("30m"), None, None),
        (Some("1h"), Some("10m"), Some(vec!["b.log"])),
        (None, None, Some(vec!["a.log"])),
        (None, Some("20m"), Some(vec!["a.log", "b.log"])),
        (Some("1000d"), None, None),
        (Some("1s"), Some("2s"), None),
    ] {
        let mut q = logsieve::stats::StatsQuery::default();
        if let Some(s) = since {
            q.since_spec(cols, s).unwrap();
        }
        if let Some(u) = until {
            q.until = Some(logsieve::stats::TimeSpec::parse(u).unwrap().resolve(newest));
        }
        let mut lines: Vec<&[u8]> = Vec::new();
        for (d, doc) in oracle.corpus().docs().iter().enumerate() {
            if files.as_ref().is_some_and(|f| !f.contains(&doc.name())) {
                continue;
            }
            for (l, &t) in cols.docs()[d].times.iter().enumerate() {
                if q.in_window(t) {
                    lines.push(doc.line(l as u64));
                }
            }
        }
        let want = naive(&lines, &pats);
        for backend in ["auto", "cpu"] {
            let mut body = json!({"patterns": pats, "syntax": "literal", "backend": backend});
            if let Some(s) = since {
                body["since"] = json!(s);
            }
            if let Some(u) = until {
                body["until"] = json!(u);
            }
            if let Some(f) = &files {
                body["files"] = json!(f);
            }
            let r = srv.post("/api/v1/patterns", &body.to_string());
            assert_eq!(r.status, 200, "{}", r.text());
            let v = r.json();
            let rows = v["patterns"].as_array().unwrap();
            assert_eq!(rows.len(), pats.len());
            for (i, row) in rows.iter().enumerate() {
                assert_eq!(
                    (
                        row["lines"].as_u64().unwrap(),
                        row["occurrences"].as_u64().unwrap()
                    ),
                    want[i],
                    "{since:?} {until:?} {files:?} {}",
                    pats[i]
                );
            }
            let matched = want.iter().filter(|w| w.0 > 0).count();
            assert_eq!(v["patterns_matched"], matched);
        }
    }
    let r = srv.post(
        "/api/v1/patterns",
        r#"{"patterns":["x"],"files":["nope.log"]}"#,
    );
    assert_eq!((r.status, r.error_kind().as_str()), (400, "unknown_file"));
    let r = srv.post(
        "/api/v1/patterns",
        r#"{"patterns":["x"],"since":"yesterday-ish"}"#,
    );
    assert_eq!((r.status, r.error_kind().as_str()), (400, "invalid_time"));
}
