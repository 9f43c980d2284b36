#![recursion_limit = "256"]
//! The API against the library on generated logs: every output kind,
//! stats, patterns, each limit and error, tokens, many clients, a client
//! that goes away, the OpenAPI document.
// The server state holds the session: proving it `Send + Sync` walks
// wgpu's types, deeper than the default 128 (as in the library).

mod common;

use std::time::{Duration, Instant};

use common::{normalize_elapsed, request, session, TestServer};
use logsieve::rg_json::RgJson;
use logsieve::{BackendChoice, QueryBuilder, SearchOptions, Syntax, Want};
use logsieve_server::Limits;
use serde_json::{json, Value};

const LINES: u64 = 20_000;

fn cpu() -> SearchOptions {
    SearchOptions {
        backend: BackendChoice::Cpu,
        ..Default::default()
    }
}

/// The CLI's `--json` for a fixed-string query, from the library encoder.
fn oracle_ndjson(s: &logsieve::Session, pattern: &str, before: u64, after: u64) -> String {
    let q = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .build(&[pattern])
        .unwrap();
    let res = s.search(&q, &cpu()).unwrap();
    let mut out = Vec::new();
    RgJson::new(&q, s.corpus(), res.backend.elapsed)
        .with_context(before, after)
        .write_result(&mut out, &res, Duration::ZERO)
        .unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn health_says_loading_then_ready_and_queries_wait_with_503() {
    let srv = TestServer::loading(Limits::default(), None);
    let h = srv.get("/api/v1/health").json();
    assert_eq!(h["status"], "loading");
    assert!(h["progress"].as_f64().unwrap() < 1.0);
    assert!(h["backend"].is_null());
    for path in ["/api/v1/search", "/api/v1/stats", "/api/v1/patterns"] {
        let r = srv.post(path, r#"{"patterns":["x"]}"#);
        assert_eq!(r.status, 503, "{path}");
        assert_eq!(r.error_kind(), "loading");
    }
    srv.state
        .set_ready(logsieve_server::Ready::new(session(LINES)));
    let h = srv.get("/api/v1/health").json();
    assert_eq!(h["status"], "ready");
    assert_eq!(h["files"], 2);
    assert_eq!(h["lines"], LINES);
    assert_eq!(h["backend"], "cpu");
    assert_eq!(h["progress"], 1.0);
    assert!(h["bytes"].as_u64().unwrap() > 0);
}

#[test]
fn search_answers_as_the_library_does_for_each_output_kind() {
    let oracle = session(LINES);
    let srv = TestServer::ready(session(LINES), Limits::default(), None);
    for pattern in [
        "ERROR_503",
        "192.168.1",
        "NullPointerException",
        "no such text",
    ] {
        let q = QueryBuilder::new()
            .syntax(Syntax::Fixed)
            .build(&[pattern])
            .unwrap();
        let want = oracle.search(&q, &cpu()).unwrap();

        // count
        let r = srv.post(
            "/api/v1/search",
            &json!({"patterns": [pattern], "syntax": "literal", "output": "count", "explain": true})
                .to_string(),
        );
        assert_eq!(r.status, 200, "{}", r.text());
        let c = r.json();
        assert_eq!(c["total"], want.total(), "{pattern}");
        for (i, f) in c["files"].as_array().unwrap().iter().enumerate() {
            assert_eq!(f["count"], want.docs[i].count);
            assert_eq!(f["path"], ["a.log", "b.log"][i]);
        }
        assert!(c["backend"]["name"].as_str().unwrap().starts_with("cpu"));
        assert!(c["backend"]["route"].as_str().is_some());
        assert!(c["backend"]["explain"].as_str().is_some());

        // lines: byte for byte the CLI's --json (the library encoder)
        let r = srv.post(
            "/api/v1/search",
            &json!({"patterns": [pattern], "syntax": "literal"}).to_string(),
        );
        assert_eq!(r.status, 200);
        assert_eq!(r.header("content-type"), Some("application/x-ndjson"));
        assert_eq!(
            r.header("x-logsieve-total").unwrap(),
            want.total().to_string()
        );
        assert_eq!(
            normalize_elapsed(r.text()),
            normalize_elapsed(&oracle_ndjson(&oracle, pattern, 0, 0)),
            "{pattern}"
        );

        // files_with_matches
        let r = srv.post(
            "/api/v1/search",
            &json!({"patterns": [pattern], "syntax": "literal", "output": "files_with_matches"})
                .to_string(),
        );
        let files: Vec<&str> = ["a.log", "b.log"]
            .into_iter()
            .zip(&want.docs)
            .filter(|(_, d)| d.count > 0)
            .map(|(n, _)| n)
            .collect();
        assert_eq!(r.json()["files"], json!(files));

        // only_matching: one object per match, then the summary
        let r = srv.post(
            "/api/v1/search",
            &json!({"patterns": [pattern], "syntax": "literal", "output": "only_matching"})
                .to_string(),
        );
        let objs: Vec<Value> = r
            .text()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let mut matches = 0;
        for (d, hits) in want.docs.iter().enumerate() {
            for &l in &hits.lines {
                matches += q.find_iter_line(oracle.corpus().docs()[d].line(l)).len();
            }
        }
        assert_eq!(objs.len(), matches + 1);
        for o in &objs[..matches] {
            assert_eq!(o["type"], "only_match");
            assert_eq!(o["data"]["match"]["text"], pattern);
        }
        assert_eq!(objs[matches]["data"]["matches"], matches);
    }
}

#[test]
fn search_context_max_count_files_and_windows() {
    let oracle = session(LINES);
    let srv = TestServer::ready(session(LINES), Limits::default(), None);
    // Context lines: the library encoder's, merged as grep merges them.
    let r = srv.post(
        "/api/v1/search",
        r#"{"patterns":["ERROR_503"],"syntax":"literal","before":2,"after":1}"#,
    );
    let text = r.text();
    assert!(text.contains(r#""type":"context""#));
    assert_eq!(
        normalize_elapsed(text),
        normalize_elapsed(&oracle_ndjson(&oracle, "ERROR_503", 2, 1))
    );
    // -m per file.
    let r = srv.post(
        "/api/v1/search",
        r#"{"patterns":["INFO"],"syntax":"literal","output":"count","max_count":3}"#,
    );
    assert_eq!(r.json()["total"], 6);
    // A subset of the files.
    let r = srv.post(
        "/api/v1/search",
        r#"{"patterns":["INFO"],"syntax":"literal","output":"count","files":["b.log"]}"#,
    );
    let c = r.json();
    let q = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .build(&["INFO"])
        .unwrap();
    let want = oracle.search(&q, &cpu()).unwrap();
    assert_eq!(c["total"], want.docs[1].count);
    assert_eq!(c["files"].as_array().unwrap().len(), 1);
    let r = srv.post(
        "/api/v1/search",
        r#"{"patterns":["INFO"],"files":["nope.log"]}"#,
    );
    assert_eq!(r.status, 400);
    assert_eq!(r.error_kind(), "unknown_file");
    // A time window selects by the columns' times: the same count as stats.
    let r = srv.post(
        "/api/v1/search",
        r#"{"patterns":["ERROR"],"syntax":"literal","output":"count","since":"15m"}"#,
    );
    let windowed = r.json()["total"].as_u64().unwrap();
    let s = srv
        .post(
            "/api/v1/stats",
            r#"{"patterns":["ERROR"],"syntax":"literal","since":"15m"}"#,
        )
        .json();
    assert_eq!(windowed, s["selected"].as_u64().unwrap());
    // REGRESSION (API fuzzing): an empty bound is no bound, not a 400.
    let open = srv
        .post(
            "/api/v1/stats",
            r#"{"patterns":["ERROR"],"syntax":"literal","since":"15m","until":""}"#,
        )
        .json();
    assert_eq!(open["selected"], s["selected"]);
    let r = srv.post(
        "/api/v1/search",
        r#"{"patterns":["ERROR"],"since":"yesterday-ish"}"#,
    );
    assert_eq!(r.status, 400);
    assert_eq!(r.error_kind(), "invalid_time");
}

#[test]
fn paging_with_limit_and_cursor_covers_every_line_once() {
    let oracle = session(LINES);
    let srv = TestServer::ready(session(LINES), Limits::default(), None);
    let q = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .build(&["ERROR"])
        .unwrap();
    let want = oracle.search(&q, &cpu()).unwrap();
    let mut got: Vec<(String, u64)> = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut body = json!({"patterns": ["ERROR"], "syntax": "literal", "limit": 97});
        if let Some(c) = &cursor {
            body["cursor"] = json!(c);
        }
        let r = srv.post("/api/v1/search", &body.to_string());
        assert_eq!(r.status, 200);
        for l in r.text().lines() {
            let v: Value = serde_json::from_str(l).unwrap();
            if v["type"] == "match" {
                got.push((
                    v["data"]["path"]["text"].as_str().unwrap().to_string(),
                    v["data"]["line_number"].as_u64().unwrap() - 1,
                ));
            }
        }
        pages += 1;
        match r.header("x-logsieve-next-cursor") {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    let expect: Vec<(String, u64)> = want
        .docs
        .iter()
        .zip(["a.log", "b.log"])
        .flat_map(|(d, n)| d.lines.iter().map(move |&l| (n.to_string(), l)))
        .collect();
    assert_eq!(got, expect);
    assert_eq!(pages, expect.len().div_ceil(97));
}

#[test]
fn stats_and_patterns_answer_as_the_cpu_does() {
    let oracle = session(LINES);
    let srv = TestServer::ready(session(LINES), Limits::default(), None);
    // stats: the object `logsieve stats --json` prints.
    let cols = oracle.columns().unwrap();
    let q = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .build(&["ERROR"])
        .unwrap();
    let mut sq = logsieve::stats::StatsQuery {
        search: Some(&q),
        ..Default::default()
    };
    sq.since_spec(cols, "1h").unwrap();
    sq.count_by(cols, &["level", "host"]).unwrap();
    sq.histogram = Some(60_000);
    let (st, rep) = oracle
        .stats(
            &sq,
            &SearchOptions {
                backend: BackendChoice::Cpu,
                want: Want::Count,
                ..Default::default()
            },
        )
        .unwrap();
    let names = vec!["level".to_string(), "host".to_string()];
    let want = logsieve::stats::json::stats_json(cols.span(None), &sq, &st, &names, &rep.name);
    let r = srv.post(
        "/api/v1/stats",
        r#"{"patterns":["ERROR"],"syntax":"literal","since":"1h","count_by":["level","host"],"histogram":"1m","backend":"cpu"}"#,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json(), want);
    // Without patterns, by a --field.
    let r = srv.post("/api/v1/stats", r#"{"count_by":["user"]}"#).json();
    assert_eq!(r["selected"], LINES);
    assert!(!r["groups"].as_array().unwrap().is_empty());
    let r = srv.post("/api/v1/stats", r#"{"count_by":["colour"]}"#);
    assert_eq!(r.status, 400);
    assert_eq!(r.error_kind(), "unknown_field");

    // patterns: per-pattern lines and occurrences.
    let pats = ["ERROR_503", "192.168.1.", "user=u1", "absent-pattern"];
    let q = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .build(&pats)
        .unwrap();
    let c = oracle.count_per_pattern(&q, &cpu()).unwrap();
    let r = srv.post(
        "/api/v1/patterns",
        &json!({"patterns": pats, "syntax": "literal"}).to_string(),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["patterns_total"], 4);
    assert_eq!(v["patterns_matched"], c.matched().len());
    for (i, row) in v["patterns"].as_array().unwrap().iter().enumerate() {
        assert_eq!(row["index"], i);
        assert_eq!(row["pattern"]["text"], pats[i]);
        assert_eq!(row["lines"], c.lines[i]);
        assert_eq!(row["occurrences"], c.occurrences[i]);
    }
    let v = srv
        .post(
            "/api/v1/patterns",
            &json!({"patterns": pats, "syntax": "literal", "only_matched": true}).to_string(),
        )
        .json();
    assert_eq!(v["patterns"].as_array().unwrap().len(), c.matched().len());
}

#[test]
fn errors_are_json_with_the_right_status() {
    let srv = TestServer::ready(
        session(2_000),
        Limits {
            max_body: 4096,
            ..Default::default()
        },
        None,
    );
    // An invalid regex: 400 with the caret the CLI prints.
    let r = srv.post("/api/v1/search", r#"{"patterns":["a(b"]}"#);
    assert_eq!(r.status, 400);
    assert_eq!(r.error_kind(), "invalid_pattern");
    let lib = QueryBuilder::new().build(&["a(b"]).unwrap_err().to_string();
    assert_eq!(r.json()["error"]["message"], lib);
    assert!(lib.contains('^'), "{lib}");
    // Malformed JSON: 400; an unknown field or a wrong type: 422.
    let r = srv.post("/api/v1/search", r#"{"patterns":["a"]"#);
    assert_eq!((r.status, r.error_kind().as_str()), (400, "bad_json"));
    let r = srv.post("/api/v1/search", r#"{"patterns":["a"],"colour":true}"#);
    assert_eq!(
        (r.status, r.error_kind().as_str()),
        (422, "invalid_request")
    );
    let r = srv.post("/api/v1/search", r#"{"patterns":"a"}"#);
    assert_eq!(r.status, 422);
    // REGRESSION (the API fuzz): an array took the place of the object
    // (`[]` was a stats request with every default, answered 200).
    for route in ["/api/v1/stats", "/api/v1/search", "/api/v1/patterns"] {
        let r = srv.post(route, " []");
        assert_eq!(
            (r.status, r.error_kind().as_str()),
            (422, "invalid_request"),
            "{route}"
        );
    }
    let r = srv.post("/api/v1/search", r#"{"patterns":[]}"#);
    assert_eq!((r.status, r.error_kind().as_str()), (400, "invalid_query"));
    // Too large a body: 413.
    let big = format!(r#"{{"patterns":["{}"]}}"#, "x".repeat(10_000));
    let r = srv.post("/api/v1/search", &big);
    assert_eq!((r.status, r.error_kind().as_str()), (413, "body_too_large"));
    // Unknown routes and methods: JSON too.
    let r = srv.get("/api/v1/nope");
    assert_eq!((r.status, r.error_kind().as_str()), (404, "not_found"));
    let r = srv.get("/api/v1/search");
    assert_eq!(
        (r.status, r.error_kind().as_str()),
        (405, "method_not_allowed")
    );
    // A forced GPU where there is none: 422 saying why.
    let r = srv.post("/api/v1/search", r#"{"patterns":["a"],"backend":"gpu"}"#);
    assert_eq!((r.status, r.error_kind().as_str()), (422, "backend"));
    // Still healthy.
    assert_eq!(srv.get("/api/v1/health").json()["status"], "ready");
}

/// A query slow on any machine: 24 fuzzy patterns with 3 edits, each
/// four common two-byte pieces (`er`, `or`, `in`, ...) in an order logs
/// seldom hold, so nearly every line is verified by the edit-distance
/// matcher for every pattern and most lines match none (20,000 generated
/// lines: 5,714 match, 0.26 s of CPU as a one-shot on the build machine).
/// The 5-byte `er?or` patterns before matched almost every line at the
/// first pattern, ~10 ms in all: a loaded CI machine polled the 1 ms
/// deadline after the answer was ready, and the 504 test saw a 200.
fn slow() -> String {
    const PIECES: [&str; 8] = ["er", "or", "in", "re", "at", "on", "st", "en"];
    let pats: Vec<String> = (0..24)
        .map(|i| {
            let (a, b) = (i / 3 % 8, (i / 3 + 1 + i % 3) % 8);
            let (c, d) = ((a + 3) % 8, (b + 5) % 8);
            [PIECES[a], PIECES[b], PIECES[c], PIECES[d]].concat()
        })
        .collect();
    json!({"patterns": pats, "syntax": "fuzzy", "fuzzy_k": 3, "output": "count"}).to_string()
}

#[test]
fn past_the_deadline_is_504() {
    let srv = TestServer::ready(
        session(LINES),
        Limits {
            timeout: Duration::from_millis(1),
            ..Default::default()
        },
        None,
    );
    let r = srv.post("/api/v1/search", &slow());
    assert_eq!((r.status, r.error_kind().as_str()), (504, "timeout"));
    assert_eq!(srv.get("/api/v1/health").status, 200);
}

#[test]
fn too_many_in_flight_is_429() {
    let srv = TestServer::ready(
        session(LINES),
        Limits {
            max_in_flight: 1,
            ..Default::default()
        },
        None,
    );
    let addr = srv.addr;
    // Whichever of the two arrives second gets the 429 (the quick ones can
    // take the slot first); try a few times.
    let mut saw_429 = false;
    for _ in 0..5 {
        let body = slow();
        let slow = std::thread::spawn(move || {
            request(addr, "POST", "/api/v1/search", &[], body.as_bytes())
        });
        let t0 = Instant::now();
        while !slow.is_finished() && t0.elapsed() < Duration::from_secs(60) {
            let r = srv.post("/api/v1/search", r#"{"patterns":["x"],"output":"count"}"#);
            if r.status == 429 {
                assert_eq!(r.error_kind(), "too_many_requests");
                saw_429 = true;
            } else {
                assert_eq!(r.status, 200);
            }
        }
        let r = slow.join().unwrap();
        if r.status == 429 {
            saw_429 = true;
        } else {
            assert_eq!(r.status, 200);
        }
        if saw_429 {
            break;
        }
    }
    assert!(saw_429, "no 429 while a query held the only slot");
    // The slot is free again.
    let r = srv.post("/api/v1/search", r#"{"patterns":["x"],"output":"count"}"#);
    assert_eq!(r.status, 200);
}

#[test]
fn a_token_is_checked() {
    let srv = TestServer::ready(session(1_000), Limits::default(), Some("s3cret".into()));
    let r = srv.get("/api/v1/health");
    assert_eq!((r.status, r.error_kind().as_str()), (401, "unauthorized"));
    let r = request(
        srv.addr,
        "GET",
        "/api/v1/health",
        &[("Authorization", "Bearer wrong")],
        b"",
    );
    assert_eq!(r.status, 401);
    let r = request(
        srv.addr,
        "GET",
        "/api/v1/health",
        &[("Authorization", "Bearer s3cret")],
        b"",
    );
    assert_eq!(r.status, 200);
    let r = request(
        srv.addr,
        "POST",
        "/api/v1/search",
        &[("Authorization", "Bearer s3cret")],
        br#"{"patterns":["INFO"],"output":"count"}"#,
    );
    assert_eq!(r.status, 200);
}

#[test]
fn sixty_four_clients_at_once_all_get_right_answers() {
    let oracle = session(LINES);
    let srv = TestServer::ready(session(LINES), Limits::default(), None);
    let pats = [
        "ERROR_503",
        "INFO",
        "192.168.1",
        "timeout",
        "WARN",
        "user=u1",
    ];
    let want: Vec<u64> = pats
        .iter()
        .map(|p| {
            let q = QueryBuilder::new()
                .syntax(Syntax::Fixed)
                .build(&[p])
                .unwrap();
            oracle.search(&q, &cpu()).unwrap().total()
        })
        .collect();
    let addr = srv.addr;
    let threads: Vec<_> = (0..64)
        .map(|i| {
            let p = pats[i % pats.len()];
            let w = want[i % pats.len()];
            std::thread::spawn(move || match i % 4 {
                0 | 1 => {
                    let body = json!({"patterns": [p], "syntax": "literal", "output": "count"});
                    let r = request(
                        addr,
                        "POST",
                        "/api/v1/search",
                        &[],
                        body.to_string().as_bytes(),
                    );
                    assert_eq!(r.status, 200);
                    assert_eq!(r.json()["total"], w, "{p}");
                }
                2 => {
                    let body = json!({"patterns": [p], "syntax": "literal"});
                    let r = request(
                        addr,
                        "POST",
                        "/api/v1/search",
                        &[],
                        body.to_string().as_bytes(),
                    );
                    assert_eq!(r.status, 200);
                    let n = r
                        .text()
                        .lines()
                        .filter(|l| l.starts_with(r#"{"type":"match""#))
                        .count();
                    assert_eq!(n as u64, w, "{p}");
                }
                _ => {
                    let body = json!({"patterns": [p], "syntax": "literal"});
                    let r = request(
                        addr,
                        "POST",
                        "/api/v1/stats",
                        &[],
                        body.to_string().as_bytes(),
                    );
                    assert_eq!(r.status, 200);
                    assert_eq!(r.json()["selected"], w, "{p}");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let m = srv.get("/metrics").text().to_string();
    assert!(
        m.contains(r#"logsieve_queries_total{kind="search",backend="cpu"}"#),
        "{m}"
    );
    // A stream's encoder lets go of its slot just after its last chunk.
    wait_idle(&srv);
}

/// Waits (up to 30 s) until no query is in flight, or fails.
fn wait_idle(srv: &TestServer) {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(30) {
        if srv.get("/metrics").text().contains("logsieve_in_flight 0") {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("queries still in flight: {}", srv.get("/metrics").text());
}

#[test]
fn a_client_that_goes_away_mid_stream_leaves_the_server_healthy() {
    use std::io::{Read, Write};
    let srv = TestServer::ready(session(LINES), Limits::default(), None);
    for _ in 0..8 {
        // Every line matches: a long stream; read a little, then hang up.
        let mut s = std::net::TcpStream::connect(srv.addr).unwrap();
        let body = r#"{"patterns":[""]}"#;
        write!(
            s,
            "POST /api/v1/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut buf = [0u8; 4096];
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0);
        drop(s);
    }
    // The streams stop and free their slots.
    wait_idle(&srv);
    let r = srv.post(
        "/api/v1/search",
        r#"{"patterns":["ERROR_503"],"output":"count"}"#,
    );
    assert_eq!(r.status, 200);
}

#[test]
fn the_openapi_document_parses_and_lists_every_route() {
    let srv = TestServer::ready(session(100), Limits::default(), None);
    let r = srv.get("/api/v1/openapi.json");
    assert_eq!(r.status, 200);
    let doc = r.json();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    let paths = doc["paths"].as_object().unwrap();
    for (p, m) in [
        ("/api/v1/health", "get"),
        ("/api/v1/search", "post"),
        ("/api/v1/stats", "post"),
        ("/api/v1/patterns", "post"),
        ("/api/v1/openapi.json", "get"),
        ("/metrics", "get"),
    ] {
        assert!(paths[p][m].is_object(), "{p} {m} missing");
    }
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    for s in [
        "SearchRequest",
        "Health",
        "CountResponse",
        "ErrorBody",
        "StatsRequest",
    ] {
        assert!(schemas.contains_key(s), "{s}");
    }
    // Every request field is documented.
    let props = schemas["SearchRequest"]["properties"].as_object().unwrap();
    for f in [
        "patterns",
        "syntax",
        "fuzzy_k",
        "ignore_case",
        "word",
        "line",
        "invert",
        "output",
        "max_count",
        "before",
        "after",
        "since",
        "until",
        "files",
        "explain",
        "backend",
        "limit",
        "cursor",
    ] {
        assert!(
            props[f]["description"].is_string() || props[f].is_object(),
            "{f}"
        );
    }
    // Metrics exist before any query.
    let m = srv.get("/metrics").text().to_string();
    for name in [
        "logsieve_resident_bytes{memory=\"host\"}",
        "logsieve_resident_bytes{memory=\"gpu\"}",
        "logsieve_load_progress 1",
        "logsieve_query_seconds_bucket{le=\"+Inf\"}",
    ] {
        assert!(m.contains(name), "{name} in {m}");
    }
}

/// `/metrics` counts the routes the session's memo kept and the ones it
/// planned: a repeated count is kept, `explain` always planned. (Forced
/// to the CPU: an automatic CPU run folds its time into the calibration,
/// which on this small corpus moves by more than the memo's slack.)
#[test]
fn metrics_count_the_routes_kept_and_planned() {
    let srv = TestServer::ready(session(LINES), Limits::default(), None);
    let routes = || {
        let m = srv.get("/metrics").text().to_string();
        let n = |memo: &str| -> u64 {
            let name = format!("logsieve_routes_total{{memo=\"{memo}\"}} ");
            let line = m.lines().find(|l| l.starts_with(&name));
            line.and_then(|l| l[name.len()..].parse().ok())
                .unwrap_or_else(|| panic!("{name} in {m}"))
        };
        (n("kept"), n("planned"))
    };
    let count = |explain: bool| {
        let body = json!({"patterns": ["ERROR_5\\d\\d"], "output": "count", "backend": "cpu", "explain": explain});
        let r = srv.post("/api/v1/search", &body.to_string());
        assert_eq!(r.status, 200, "{}", r.text());
    };
    let (kept, planned) = routes();
    count(false);
    count(false);
    count(false);
    assert_eq!(routes(), (kept + 2, planned + 1));
    count(true);
    assert_eq!(routes(), (kept + 2, planned + 2));
}

/// REGRESSION (schemathesis ST105, CI at `c7fa333`): `lines` answers
/// `application/x-ndjson` but the document listed only `application/json`
/// for a search's 200. Every output's content type must be documented.
#[test]
fn regression_every_search_content_type_is_in_the_openapi_document() {
    let srv = TestServer::ready(session(200), Limits::default(), None);
    let doc = srv.get("/api/v1/openapi.json").json();
    let content = doc["paths"]["/api/v1/search"]["post"]["responses"]["200"]["content"]
        .as_object()
        .expect("the 200 response has content")
        .clone();
    let mut seen = Vec::new();
    for output in ["lines", "only_matching", "count", "files_with_matches"] {
        let r = srv.post(
            "/api/v1/search",
            &json!({"patterns": ["a"], "syntax": "literal", "output": output}).to_string(),
        );
        assert_eq!(r.status, 200, "{output}");
        let ct = r.header("content-type").unwrap().to_string();
        assert!(
            content.contains_key(&ct),
            "{output}: {ct} not in {content:?}"
        );
        seen.push(ct);
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen, ["application/json", "application/x-ndjson"]);
}

/// REGRESSION (schemathesis ST202): `since`/`until` were plain strings in
/// the document, so a schema-valid request (`"until": "x"`) was refused
/// with 400. Their `pattern` now describes a subset of the forms the
/// server accepts: every string it matches must be answered 200.
#[test]
fn regression_since_until_patterns_in_the_openapi_document_are_accepted() {
    let srv = TestServer::ready(session(200), Limits::default(), None);
    let doc = srv.get("/api/v1/openapi.json").json();
    let schemas = &doc["components"]["schemas"];
    let mut pattern = None;
    for s in ["SearchRequest", "StatsRequest", "PatternsRequest"] {
        for f in ["since", "until"] {
            let p = schemas[s]["properties"][f]["pattern"]
                .as_str()
                .unwrap_or_else(|| panic!("{s}.{f} has no pattern"))
                .to_string();
            assert!(pattern.as_ref().is_none_or(|q| *q == p), "{s}.{f} differs");
            pattern = Some(p);
        }
    }
    let re = regex::Regex::new(&pattern.unwrap()).unwrap();
    let candidates = [
        "",
        " ",
        "15m",
        "2h",
        "1d",
        "1h30m",
        "500ms",
        "90s",
        "1w",
        "0s",
        "999999w1d2h3m",
        "2026-11-20",
        "2026-02-28T23:59",
        "2026-11-20T12:00:00Z",
        "2099-12-28T00:00:59",
        "1763640000",
        "1763640000000",
        " 15m ",
        "0000000000",
        // Outside the pattern (some accepted by the server all the same).
        "x",
        "15",
        "2026-13-01",
        "15 m",
        "2026-11-20T24:00",
        "-5m",
        "1y",
    ];
    let mut matched = 0;
    for c in candidates {
        if !re.is_match(c) {
            continue;
        }
        matched += 1;
        for (path, body) in [
            (
                "/api/v1/search",
                json!({"patterns": ["GET"], "output": "count", "since": c, "until": c}),
            ),
            ("/api/v1/stats", json!({"patterns": ["GET"], "since": c})),
            ("/api/v1/patterns", json!({"patterns": ["GET"], "until": c})),
        ] {
            let r = srv.post(path, &body.to_string());
            assert_eq!(r.status, 200, "{path} with {c:?}: {}", r.text());
        }
    }
    assert_eq!(matched, 19, "the pattern's reach changed");
}

/// REGRESSION (schemathesis ST201): stats without patterns accepted any
/// `fuzzy_k`, which the document bounds at 3.
#[test]
fn regression_fuzzy_k_past_3_is_refused_even_without_patterns() {
    let srv = TestServer::ready(session(100), Limits::default(), None);
    for (path, body) in [
        (
            "/api/v1/stats",
            r#"{"patterns":[],"syntax":"fuzzy","fuzzy_k":4}"#,
        ),
        (
            "/api/v1/search",
            r#"{"patterns":["GET"],"syntax":"fuzzy","fuzzy_k":4}"#,
        ),
        (
            "/api/v1/patterns",
            r#"{"patterns":["GET"],"syntax":"fuzzy","fuzzy_k":9}"#,
        ),
    ] {
        let r = srv.post(path, body);
        assert_eq!(r.status, 400, "{path}: {}", r.text());
        assert_eq!(r.error_kind(), "invalid_query");
    }
    let r = srv.post("/api/v1/stats", r#"{"patterns":[],"fuzzy_k":3}"#);
    assert_eq!(r.status, 200, "{}", r.text());
}
