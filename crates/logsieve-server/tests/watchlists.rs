#![recursion_limit = "256"]
//! `/api/v1/watchlists` on loopback: define, read, list, replace, delete;
//! `patterns` and `search` naming a watchlist answer what the same
//! patterns sent inline answer; every refusal is a JSON error with its
//! status; the OpenAPI document lists the routes.
// The server state holds the session: proving it `Send + Sync` walks
// wgpu's types, deeper than the default 128 (as in the library).

mod common;

use common::{request, session, TestServer};
use logsieve_server::Limits;
use serde_json::{json, Value};

const LINES: u64 = 5_000;

fn put(srv: &TestServer, name: &str, body: &str) -> common::Resp {
    request(
        srv.addr,
        "PUT",
        &format!("/api/v1/watchlists/{name}"),
        &[],
        body.as_bytes(),
    )
}

/// Patterns that occur in the generated logs (and some that do not).
fn iocs() -> Vec<String> {
    let mut v: Vec<String> = ["ERROR", "user=u1", "GET /api", "timeout", "u1", "user=u1"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    v.extend((0..20).map(|i| format!("never-there-{i}")));
    v
}

#[test]
fn define_count_search_list_delete() {
    let srv = TestServer::ready(session(LINES), Limits::default(), None);
    let pats = iocs();
    let r = put(&srv, "iocs", &json!({ "patterns": pats }).to_string());
    assert_eq!(r.status, 201, "{}", r.text());
    let info = r.json();
    assert_eq!(info["name"], "iocs");
    assert_eq!(info["patterns"], pats.len());
    assert_eq!(info["distinct"], pats.len() - 1, "one duplicate");
    // Counts by name equal the same patterns sent inline (literal).
    for backend in ["cpu", "auto"] {
        let by_name = srv
            .post(
                "/api/v1/patterns",
                &json!({ "watchlist": "iocs", "backend": backend }).to_string(),
            )
            .json();
        let inline = srv
            .post(
                "/api/v1/patterns",
                &json!({ "patterns": pats, "syntax": "literal", "backend": backend }).to_string(),
            )
            .json();
        assert_eq!(by_name["patterns"], inline["patterns"], "{backend}");
        assert_eq!(by_name["patterns_total"], pats.len());
        let matched = by_name["patterns_matched"].as_u64().unwrap();
        assert!(matched >= 3, "test data: {matched} patterns occur");
    }
    // A search by name equals the inline search.
    let by_name = srv
        .post(
            "/api/v1/search",
            r#"{"watchlist":"iocs","output":"count","backend":"cpu"}"#,
        )
        .json();
    let inline = srv
        .post(
            "/api/v1/search",
            &json!({ "patterns": pats, "syntax": "literal", "output": "count", "backend": "cpu" })
                .to_string(),
        )
        .json();
    assert_eq!(by_name["total"], inline["total"]);
    assert!(by_name["total"].as_u64().unwrap() > 0);
    let lines_by_name = srv.post(
        "/api/v1/search",
        r#"{"watchlist":"iocs","limit":5,"backend":"cpu"}"#,
    );
    assert_eq!(lines_by_name.status, 200);
    assert!(lines_by_name.text().contains("\"type\":\"match\""));
    // Read, list, replace (200), delete (204), then 404s.
    let one = srv.get("/api/v1/watchlists/iocs").json();
    assert_eq!(one["list"].as_array().unwrap().len(), pats.len());
    assert_eq!(one["list"][0]["text"], "ERROR");
    let r = put(&srv, "iocs", r#"{"patterns":["error"],"ignore_case":true}"#);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["ignore_case"], true);
    put(&srv, "b", r#"{"patterns":["WARN"]}"#);
    let list = srv.get("/api/v1/watchlists").json();
    let names: Vec<&str> = list["watchlists"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["b", "iocs"]);
    assert!(list["watchlists"][0].get("list").is_none());
    let r = srv
        .post("/api/v1/patterns", r#"{"watchlist":"iocs"}"#)
        .json();
    let ci = srv
        .post(
            "/api/v1/patterns",
            r#"{"patterns":["error"],"syntax":"literal","ignore_case":true}"#,
        )
        .json();
    assert_eq!(r["patterns"], ci["patterns"]);
    let d = request(srv.addr, "DELETE", "/api/v1/watchlists/iocs", &[], b"");
    assert_eq!(d.status, 204);
    let d = request(srv.addr, "DELETE", "/api/v1/watchlists/iocs", &[], b"");
    assert_eq!(
        (d.status, d.error_kind()),
        (404, "unknown_watchlist".into())
    );
    let g = srv.get("/api/v1/watchlists/iocs");
    assert_eq!(
        (g.status, g.error_kind()),
        (404, "unknown_watchlist".into())
    );
    for path in ["/api/v1/patterns", "/api/v1/search"] {
        let r = srv.post(path, r#"{"watchlist":"iocs"}"#);
        assert_eq!(r.status, 404, "{path}");
        assert_eq!(r.error_kind(), "unknown_watchlist");
    }
}

#[test]
fn refusals_are_json_errors() {
    let srv = TestServer::ready(session(200), Limits::default(), None);
    let cases: Vec<(String, String, u16, &str)> = vec![
        (
            "w".into(),
            r#"{"patterns":[]}"#.into(),
            400,
            "invalid_query",
        ),
        (
            "w".into(),
            r#"{"patterns":["a",""]}"#.into(),
            400,
            "invalid_query",
        ),
        (
            "w".into(),
            r#"{"patterns":["a\nb"]}"#.into(),
            400,
            "invalid_query",
        ),
        (
            "w".into(),
            r#"{"patterns":["é"],"ignore_case":true}"#.into(),
            400,
            "invalid_query",
        ),
        (
            "w".into(),
            r#"{"patterns":"abc"}"#.into(),
            422,
            "invalid_request",
        ),
        (
            "w".into(),
            r#"{"patterns":["a"],"regex":true}"#.into(),
            422,
            "invalid_request",
        ),
        ("w".into(), r#"{"patterns":["a"#.into(), 400, "bad_json"),
        (
            "a.b-c_D".into(),
            r#"{"patterns":[]}"#.into(),
            400,
            "invalid_query",
        ),
        (
            "bad%20name".into(),
            r#"{"patterns":["a"]}"#.into(),
            400,
            "invalid_query",
        ),
        (
            "w".into(),
            json!({ "patterns": ["x".repeat(1025)] }).to_string(),
            413,
            "pattern_too_long",
        ),
    ];
    for (name, body, status, kind) in &cases {
        let r = put(&srv, name, body);
        assert_eq!(r.status, *status, "{name} {body}: {}", r.text());
        assert_eq!(r.error_kind(), *kind, "{name} {body}");
    }
    // 100,001 patterns: 413 (the body, 2.3 MB, is under the route's 16
    // MiB and over the server's default 1 MiB).
    let many: Vec<String> = (0..100_001)
        .map(|i| format!("ioc-pattern-{i:08}"))
        .collect();
    let r = put(&srv, "big", &json!({ "patterns": many }).to_string());
    assert_eq!(
        (r.status, r.error_kind()),
        (413, "too_many_patterns".into())
    );
    // 100,000 are accepted.
    let r = put(
        &srv,
        "big",
        &json!({ "patterns": &many[..100_000] }).to_string(),
    );
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.json()["distinct"], 100_000);
    // A body over 16 MiB: 413 before it is parsed.
    let huge = format!(r#"{{"patterns":["{}"]}}"#, "y".repeat(17 << 20));
    let r = put(&srv, "huge", &huge);
    assert_eq!((r.status, r.error_kind()), (413, "body_too_large".into()));
    // The other routes keep the server's body limit.
    let r = srv.post(
        "/api/v1/patterns",
        &json!({ "patterns": &many[..100_000] }).to_string(),
    );
    assert_eq!(r.status, 413);
    // A watchlist fixes the patterns and their options.
    for (path, body) in [
        (
            "/api/v1/patterns",
            r#"{"watchlist":"big","patterns":["x"]}"#,
        ),
        (
            "/api/v1/patterns",
            r#"{"watchlist":"big","ignore_case":true}"#,
        ),
        ("/api/v1/search", r#"{"watchlist":"big","invert":true}"#),
        (
            "/api/v1/search",
            r#"{"watchlist":"big","syntax":"regex","word":true}"#,
        ),
    ] {
        let r = srv.post(path, body);
        assert_eq!(
            (r.status, r.error_kind()),
            (400, "invalid_request".into()),
            "{body}"
        );
    }
    // Neither patterns nor a watchlist.
    let r = srv.post("/api/v1/patterns", "{}");
    assert_eq!((r.status, r.error_kind()), (400, "invalid_query".into()));
    // Methods.
    let r = request(srv.addr, "POST", "/api/v1/watchlists/w", &[], b"{}");
    assert_eq!(r.status, 405);
}

#[test]
fn loading_server_answers_503_and_openapi_lists_the_routes() {
    let srv = TestServer::loading(Limits::default(), None);
    let r = put(&srv, "w", r#"{"patterns":["a"]}"#);
    assert_eq!((r.status, r.error_kind()), (503, "loading".into()));
    let r = srv.get("/api/v1/watchlists");
    assert_eq!(r.status, 503);
    let doc: Value = srv.get("/api/v1/openapi.json").json();
    let paths = &doc["paths"];
    for m in ["put", "get", "delete"] {
        assert!(
            paths["/api/v1/watchlists/{name}"][m].is_object(),
            "{m} missing"
        );
    }
    assert!(paths["/api/v1/watchlists"]["get"].is_object());
    let schemas = &doc["components"]["schemas"];
    assert!(schemas["WatchlistRequest"]["properties"]["patterns"].is_object());
    assert!(schemas["PatternsRequest"]["properties"]["watchlist"].is_object());
    assert!(schemas["SearchRequest"]["properties"]["watchlist"].is_object());
}
