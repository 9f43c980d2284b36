//! Loki's HTTP parameters (`logsieve_server::loki`): the Loki routes
//! (`query_range`, `query`, `labels`, `label/NAME/values`, `series`,
//! `index/stats`) called in-process through their router on a ready CPU
//! session over a small generated corpus, with parameters made of the
//! fuzzer's bytes (times in ns, s or RFC 3339, `since`, `step`, `limit`,
//! `direction`, the LogQL query, `match[]`), as a query string or a form
//! body. Checks: no panic; never a 5xx; an error is Loki's shape (a
//! 4xx with a plain-text message); a success is `{"status":"success"}`
//! JSON (`index/stats`: Loki's bare object).
//!
//! Input: byte 0 = route (modulo 6), byte 1 = bit 0 POST with a form body
//! (else GET with a query string), bit 1 the rest as a raw query string;
//! else the rest is `\n`-separated parameters, each a name byte (an index
//! into NAMES) then the value (percent-encoded here).
#![no_main]
// The server types nest deeply (see api_json).
#![recursion_limit = "256"]
use std::sync::OnceLock;
use std::time::Duration;

use axum::body::Body;
use axum::http::{header, Method, Request};
use axum::Router;
use libfuzzer_sys::fuzz_target;
use logsieve::gen::{generate, GenOptions};
use logsieve::stats::{ColumnOptions, Columns, FieldSpec};
use logsieve::{Corpus, Session};
use logsieve_server::{loki, AppState, Limits, Ready};
use tower::ServiceExt;

const NAMES: &[&str] = &[
    "query",
    "start",
    "end",
    "since",
    "step",
    "limit",
    "direction",
    "time",
    "match[]",
    "match",
    "interval",
];

const ROUTES: &[&str] = &[
    "/loki/api/v1/query_range",
    "/loki/api/v1/query",
    "/loki/api/v1/labels",
    "/loki/api/v1/label/level/values",
    "/loki/api/v1/series",
    "/loki/api/v1/index/stats",
];

struct World {
    rt: tokio::runtime::Runtime,
    app: Router,
}

fn world() -> &'static World {
    static W: OnceLock<World> = OnceLock::new();
    W.get_or_init(|| {
        let data = generate(&GenOptions {
            lines: 200,
            ..Default::default()
        });
        let corpus = Corpus::from_bytes("a.log", data);
        let fields: Vec<FieldSpec> = ["level", "host"]
            .iter()
            .filter_map(|n| FieldSpec::builtin(n))
            .collect();
        let cols = Columns::build(
            &corpus,
            &ColumnOptions {
                time_format: None,
                year: 2026,
                doc_years: vec![],
                doc_mtimes: vec![None],
                fields,
            },
        );
        let mut s = Session::new(corpus);
        s.set_columns(cols);
        let state = AppState::new(
            Limits {
                timeout: Duration::from_secs(30),
                max_in_flight: 4,
                max_body: 1 << 20,
                threads: 1,
                ..Limits::default()
            },
            None,
        );
        state.set_ready(Ready::new(s));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        World {
            rt,
            app: loki::routes().with_state(state),
        }
    })
}

fn enc(s: &[u8]) -> String {
    s.iter()
        .map(|&b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let (route, mode, rest) = (data[0], data[1], &data[2..]);
    let path = ROUTES[usize::from(route) % ROUTES.len()];
    let params = if mode & 2 != 0 {
        // Raw: what the client sent, as far as a URI allows it.
        match std::str::from_utf8(rest) {
            Ok(s) => s.to_string(),
            Err(_) => return,
        }
    } else {
        rest.split(|&b| b == b'\n')
            .filter_map(|p| p.split_first())
            .map(|(&n, v)| {
                format!(
                    "{}={}",
                    enc(NAMES[usize::from(n) % NAMES.len()].as_bytes()),
                    enc(v)
                )
            })
            .collect::<Vec<_>>()
            .join("&")
    };
    let req = if mode & 1 != 0 {
        Request::builder()
            .method(Method::POST)
            .uri(path)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(params))
    } else {
        Request::builder()
            .method(Method::GET)
            .uri(format!("{path}?{params}"))
            .body(Body::empty())
    };
    // A string no URI can hold never reaches the server.
    let Ok(req) = req else {
        return;
    };
    let w = world();
    let resp =
        w.rt.block_on(w.app.clone().oneshot(req))
            .expect("the router is infallible");
    let status = resp.status();
    let ctype = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let bytes = w.rt.block_on(async {
        axum::body::to_bytes(resp.into_body(), 64 << 20)
            .await
            .expect("the body is readable")
    });
    let text = String::from_utf8_lossy(&bytes);
    assert!(!status.is_server_error(), "{path} {status}: {text}");
    if status.is_success() {
        let v: serde_json::Value = serde_json::from_slice(&bytes).expect("a success is JSON");
        // index/stats answers a bare object, as Loki does.
        if path.ends_with("index/stats") {
            assert!(v["streams"].is_u64() && v["entries"].is_u64(), "{v}");
        } else {
            assert_eq!(v["status"], "success", "{v}");
        }
    } else {
        assert!(status.is_client_error(), "{path} {status}: {text}");
        assert!(ctype.starts_with("text/plain"), "{path} {status}: {ctype}");
        assert!(!text.trim().is_empty(), "{path} {status}: an empty message");
    }
});
