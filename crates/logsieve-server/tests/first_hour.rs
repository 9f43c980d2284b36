#![recursion_limit = "256"]
//! What a first user of `logsieve serve` meets: stats over some of the
//! served files (`files`, as `search` takes it), and the page at `/`
//! saying which server it searches, its corpus and its backend.
// The server state holds the session: proving it `Send + Sync` walks
// wgpu's types, deeper than the default 128 (as in the library).

mod common;

use common::{corpus, session_over, TestServer};
use logsieve::{Corpus, Document};
use logsieve_server::Limits;
use serde_json::{json, Value};

const LINES: u64 = 4000;

/// The two generated files, `a.log` and `b.log`, served together, and a
/// server over `name` alone.
fn both_and_one(name: &str) -> (TestServer, TestServer) {
    let both = corpus(LINES);
    let doc = both.docs().iter().find(|d| d.name() == name).unwrap();
    let mut one = Corpus::new();
    one.push(Document::from_bytes(name, doc.data().to_vec()));
    (
        TestServer::ready(session_over(both), Limits::default(), None),
        TestServer::ready(session_over(one), Limits::default(), None),
    )
}

fn stats(srv: &TestServer, body: &Value) -> Value {
    let r = srv.post("/api/v1/stats", &body.to_string());
    assert_eq!(r.status, 200, "{body}: {}", r.text());
    r.json()
}

#[test]
fn stats_over_some_files_are_the_stats_of_a_server_of_those_files() {
    for name in ["a.log", "b.log"] {
        let (both, one) = both_and_one(name);
        for body in [
            json!({"count_by": ["level"]}),
            json!({"count_by": ["level", "host"], "histogram": "1m"}),
            json!({"patterns": ["error"], "ignore_case": true, "count_by": ["user"], "histogram": "5m"}),
            json!({"patterns": ["INFO"], "syntax": "literal", "invert": true, "count_by": ["host"]}),
            json!({"until": "2099-12-28", "count_by": ["level"], "backend": "cpu"}),
        ] {
            let mut sub = body.clone();
            sub["files"] = json!([name]);
            let got = stats(&both, &sub);
            let want = stats(&one, &body);
            for key in [
                "selected",
                "since",
                "until",
                "oldest",
                "newest",
                "count_by",
                "groups",
                "histogram",
            ] {
                assert_eq!(got[key], want[key], "{name} {body}: {key}");
            }
            assert!(got["selected"].as_u64().unwrap() > 0, "{name} {body}");
            assert!(
                !got["groups"].as_array().unwrap().is_empty(),
                "{name} {body}"
            );
            assert!(got["backend"].as_str().is_some_and(|b| !b.is_empty()));
        }
        // Over fewer lines than the whole corpus.
        let all = stats(&both, &json!({}))["selected"].as_u64().unwrap();
        let part = stats(&both, &json!({"files": [name]}))["selected"]
            .as_u64()
            .unwrap();
        assert!(part < all, "{name}: {part} of {all}");
    }
}

#[test]
fn stats_over_every_file_named_are_the_stats_without_files() {
    let (both, _) = both_and_one("a.log");
    let body = json!({"count_by": ["level", "host"], "histogram": "1m"});
    let mut named = body.clone();
    // Named twice and out of corpus order: the same documents.
    named["files"] = json!(["b.log", "a.log", "b.log"]);
    assert_eq!(stats(&both, &named), stats(&both, &body));
    // An empty list selects no file.
    let none = stats(&both, &json!({"files": [], "count_by": ["level"]}));
    assert_eq!(none["selected"], 0);
    assert_eq!(none["groups"], json!([]));
}

#[test]
fn stats_over_an_unknown_file_is_a_400_naming_it() {
    let (both, _) = both_and_one("a.log");
    for body in [
        json!({"files": ["nope.log"]}),
        json!({"files": ["a.log", "nope.log"], "count_by": ["level"]}),
    ] {
        let r = both.post("/api/v1/stats", &body.to_string());
        assert_eq!(r.status, 400, "{body}: {}", r.text());
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(r.error_kind(), "unknown_file");
        let msg = r.json()["error"]["message"].as_str().unwrap().to_string();
        assert!(msg.contains("\"nope.log\""), "{msg}");
    }
    // The same error as search's.
    let s = both.post(
        "/api/v1/search",
        r#"{"patterns":["x"],"files":["nope.log"]}"#,
    );
    let t = both.post("/api/v1/stats", r#"{"files":["nope.log"]}"#);
    assert_eq!(s.json()["error"], t.json()["error"]);
}

#[test]
fn the_openapi_document_lists_the_stats_files() {
    let (both, _) = both_and_one("a.log");
    let doc = both.get("/api/v1/openapi.json").json();
    let req = &doc["components"]["schemas"]["StatsRequest"];
    let files = &req["properties"]["files"];
    assert!(files.is_object(), "{req}");
    assert!(
        files.to_string().contains("\"string\""),
        "a list of names: {files}"
    );
    assert!(files["description"]
        .as_str()
        .is_some_and(|d| d.contains("400")));
}

#[test]
fn the_served_page_names_the_server_its_corpus_and_backend() {
    let (both, _) = both_and_one("a.log");
    let r = both.get("/");
    assert_eq!(r.status, 200);
    let html = r.text().to_string();
    // Served by `logsieve serve`: the page searches the server, so it
    // does not claim that nothing leaves the tab.
    assert!(!html.contains("nothing is uploaded anywhere"), "{html}");
    assert!(!html.contains("not built"), "{html}");
    for id in [
        r#"id="server""#,
        r#"id="server-origin""#,
        r#"id="server-corpus""#,
        r#"id="server-backend""#,
        r#"id="tab-note""#,
    ] {
        assert!(html.contains(id), "{id} in the page");
    }
    for label in [">server<", ">corpus<", ">backend<"] {
        assert!(html.contains(label), "{label} in the page");
    }
    // The page knows it is a server's, and has no in-tab engine here.
    assert_eq!(
        both.get("/page.json").json(),
        json!({"api": true, "wasm": false, "token": false})
    );
    // Its script fills those in from /api/v1/health.
    let js = both.get("/app.js").text().to_string();
    for needle in [
        "server-origin",
        "server-corpus",
        "server-backend",
        "tab-note",
    ] {
        assert!(js.contains(needle), "app.js fills {needle}");
    }
    let h = both.get("/api/v1/health").json();
    assert_eq!(
        (h["files"].as_u64(), h["backend"].as_str()),
        (Some(2), Some("cpu"))
    );
}
