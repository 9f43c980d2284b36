#![recursion_limit = "256"]
//! The Loki API against the library's naive CPU oracle over generated logs:
//! streams (lines, per stream, both directions, limits), metric values per
//! step, labels and series; Loki's documented response shapes; errors as
//! Loki answers them (text/plain, 400).
// The server state holds the session: proving it `Send + Sync` walks
// wgpu's types, deeper than the default 128 (as in the library).

mod common;
#[path = "../../logsieve/tests/common/mod.rs"]
#[allow(unused_imports)]
mod library;

use std::collections::BTreeMap;

use common::TestServer;
use library::{Flags, NaiveMatcher};
use logsieve::logql::{parse, Expr, FilterOp, LogExpr, MatchOp};
use logsieve::{Session, Syntax};
use logsieve_server::Limits;
use serde_json::Value;

type Labels = BTreeMap<String, String>;

fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// One line as the oracle sees it: its time in ns, every label, its text.
struct Line {
    t: i64,
    labels: Labels,
    text: Vec<u8>,
    doc: usize,
    line: u64,
}

fn lines(s: &Session) -> Vec<Line> {
    let cols = s.columns().unwrap();
    let mut out = Vec::new();
    for (d, doc) in s.corpus().docs().iter().enumerate() {
        let text = doc.data();
        for (l, raw) in library::naive_lines(text).into_iter().enumerate() {
            let mut labels = Labels::new();
            labels.insert("filename".into(), doc.name().into());
            for (f, dict) in cols.fields().iter().enumerate() {
                if let Some(v) = dict.value(cols.docs()[d].codes[f][l]) {
                    labels.insert(dict.name.clone(), String::from_utf8_lossy(v).into());
                }
            }
            out.push(Line {
                t: cols.docs()[d].times[l] * 1_000_000,
                labels,
                text: raw.strip_suffix(b"\n").unwrap_or(raw).to_vec(),
                doc: d,
                line: l as u64,
            });
        }
    }
    out
}

/// Does the oracle select this line for `log`?
fn selects(log: &LogExpr, l: &Line) -> bool {
    let label_ok = log.matchers.iter().all(|m| {
        let v = l.labels.get(&m.name).map_or("", |s| s.as_str());
        let re = || regex::Regex::new(&format!("^(?:{})$", m.value)).unwrap();
        match m.op {
            MatchOp::Eq => v == m.value,
            MatchOp::Neq => v != m.value,
            MatchOp::Re => re().is_match(v),
            MatchOp::Nre => !re().is_match(v),
        }
    });
    label_ok
        && log.filters.iter().all(|f| {
            let syntax = if f.op.regex() {
                Syntax::Regex
            } else {
                Syntax::Fixed
            };
            let m = NaiveMatcher::new(&[f.value.as_bytes().to_vec()], syntax, Flags::default());
            m.is_match(&l.text) != matches!(f.op, FilterOp::NotContains | FilterOp::NotRegex)
        })
}

/// The stream labels: filename plus the labels named.
fn stream_of(l: &Line, names: &[String]) -> Labels {
    l.labels
        .iter()
        .filter(|(k, _)| *k == "filename" || names.contains(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn labels_of(v: &Value) -> Labels {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect()
}

fn get(srv: &TestServer, path: &str, params: &[(&str, &str)]) -> common::Resp {
    let q: Vec<String> = params
        .iter()
        .map(|(k, v)| format!("{k}={}", enc(v)))
        .collect();
    srv.get(&format!("{path}?{}", q.join("&")))
}

#[test]
fn log_queries_match_the_oracle_in_both_directions() {
    let session = common::session(3000);
    let all = lines(&session);
    let (oldest, newest) = (
        all.iter().map(|l| l.t).min().unwrap(),
        all.iter().map(|l| l.t).max().unwrap(),
    );
    let srv = TestServer::ready(session, Limits::default(), None);
    let mid = oldest + (newest - oldest) / 2;
    let mut selected = 0;
    let queries = [
        r#"{filename="a.log"}"#,
        r#"{filename=~".+"} |= "ERROR""#,
        r#"{level="ERROR"} |= "503" != "timeout""#,
        r#"{host=~"web-0[12]", level!="INFO"} |~ "user=u[0-9]+" !~ "(?i)debug""#,
        r#"{filename!="a.log", level=~".+"} != "a""#,
        r#"{host="nope"}"#,
        r#"{filename="b.log"} |= "" |~ "5\\d\\d""#,
    ];
    for q in queries {
        let Ok(Expr::Log(log)) = parse(q) else {
            panic!("{q}")
        };
        let names: Vec<String> = log.matchers.iter().map(|m| m.name.clone()).collect();
        for (dir, limit, start, end) in [
            ("backward", 100_000u64, oldest, newest + 1),
            ("forward", 37, oldest, newest + 1),
            ("backward", 5, mid, newest),
            ("forward", 1000, mid, mid + 600_000_000_000),
        ] {
            let mut want: Vec<&Line> = all
                .iter()
                .filter(|l| l.t >= start && l.t < end && selects(&log, l))
                .collect();
            want.sort_by_key(|l| (l.t, l.doc, l.line));
            if dir == "backward" {
                want.reverse();
            }
            want.truncate(limit as usize);
            let mut want_streams: BTreeMap<Labels, Vec<(String, String)>> = BTreeMap::new();
            for l in &want {
                want_streams
                    .entry(stream_of(l, &names))
                    .or_default()
                    .push((l.t.to_string(), String::from_utf8_lossy(&l.text).into()));
            }
            let (s, e, n) = (start.to_string(), end.to_string(), limit.to_string());
            let r = get(
                &srv,
                "/loki/api/v1/query_range",
                &[
                    ("query", q),
                    ("start", &s),
                    ("end", &e),
                    ("limit", &n),
                    ("direction", dir),
                ],
            );
            assert_eq!(r.status, 200, "{q}: {}", r.text());
            let v = r.json();
            assert_eq!(v["status"], "success");
            assert_eq!(v["data"]["resultType"], "streams");
            assert!(v["data"]["stats"]["summary"]["totalLinesProcessed"]
                .as_u64()
                .is_some());
            let mut got: BTreeMap<Labels, Vec<(String, String)>> = BTreeMap::new();
            for st in v["data"]["result"].as_array().unwrap() {
                let vals = st["values"].as_array().unwrap().iter().map(|p| {
                    (
                        p[0].as_str().unwrap().to_string(),
                        p[1].as_str().unwrap().to_string(),
                    )
                });
                let prev = got.insert(labels_of(&st["stream"]), vals.collect());
                assert!(prev.is_none(), "{q}: a stream twice");
            }
            assert_eq!(got, want_streams, "{q} {dir} limit {limit}");
            selected += want.len();
        }
    }
    // The table selects lines (no empty agreement only).
    assert!(selected > 1000, "{selected}");
}

#[test]
fn metric_queries_match_the_oracle_per_step() {
    let session = common::session(3000);
    let all = lines(&session);
    let (oldest, newest) = (
        all.iter().map(|l| l.t).min().unwrap(),
        all.iter().map(|l| l.t).max().unwrap(),
    );
    let srv = TestServer::ready(session, Limits::default(), None);
    // (query, range in ns, per-line value, aggregation labels: None = per stream)
    type Case<'a> = (&'a str, &'a str, Option<&'a [&'a str]>);
    let cases: &[Case] = &[
        (
            r#"count_over_time({filename=~".+"} |= "ERROR" [5m])"#,
            "count",
            None,
        ),
        (r#"rate({level="WARN"}[1m])"#, "rate", None),
        (
            r#"bytes_over_time({host=~"web.*"} != "200" [10m])"#,
            "bytes",
            None,
        ),
        (
            r#"sum by (level) (count_over_time({filename=~".+"}[5m]))"#,
            "count",
            Some(&["level"]),
        ),
        (
            r#"sum(count_over_time({level=~"ERROR|WARN"} |~ "5\\d\\d" [2m])) by (host)"#,
            "count",
            Some(&["host"]),
        ),
        (r#"sum(rate({filename="a.log"}[5m]))"#, "rate", Some(&[])),
    ];
    let step = 120_000_000_000i64;
    let start = oldest - 60_000_000_000;
    for &(q, kind, agg) in cases {
        let Ok(Expr::Metric(m)) = parse(q) else {
            panic!("{q}")
        };
        let (log, range_ms) = find_range(&m);
        let range = range_ms * 1_000_000;
        let names: Vec<String> = log
            .matchers
            .iter()
            .map(|m| m.name.clone())
            .chain(agg.unwrap_or(&[]).iter().map(|s| s.to_string()))
            .collect();
        let mut want: BTreeMap<Labels, Vec<(i64, f64)>> = BTreeMap::new();
        let mut t = start;
        while t <= newest {
            let mut per: BTreeMap<Labels, f64> = BTreeMap::new();
            for l in all
                .iter()
                .filter(|l| l.t > t - range && l.t <= t && selects(log, l))
            {
                let key = match agg {
                    None => stream_of(l, &names),
                    Some(by) => stream_of(l, &names)
                        .into_iter()
                        .filter(|(k, _)| by.contains(&k.as_str()))
                        .collect(),
                };
                let add = match kind {
                    "bytes" => l.text.len() as f64,
                    "rate" => 1.0 / (range_ms as f64 / 1000.0),
                    _ => 1.0,
                };
                *per.entry(key).or_default() += add;
            }
            for (k, v) in per {
                want.entry(k).or_default().push((t, v));
            }
            t += step;
        }
        let (s, e) = (start.to_string(), newest.to_string());
        let r = get(
            &srv,
            "/loki/api/v1/query_range",
            &[("query", q), ("start", &s), ("end", &e), ("step", "120")],
        );
        assert_eq!(r.status, 200, "{q}: {}", r.text());
        let v = r.json();
        assert_eq!(v["data"]["resultType"], "matrix", "{q}");
        let mut got: BTreeMap<Labels, Vec<(i64, f64)>> = BTreeMap::new();
        for sr in v["data"]["result"].as_array().unwrap() {
            let pts = sr["values"].as_array().unwrap().iter().map(|p| {
                let t = (p[0].as_f64().unwrap() * 1000.0).round() as i64 * 1_000_000;
                (t, p[1].as_str().unwrap().parse::<f64>().unwrap())
            });
            got.insert(labels_of(&sr["metric"]), pts.collect());
        }
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>(),
            "{q}"
        );
        for (k, w) in &want {
            let g = &got[k];
            assert_eq!(g.len(), w.len(), "{q} {k:?}");
            for (a, b) in g.iter().zip(w) {
                assert_eq!(a.0, b.0, "{q} {k:?}");
                assert!(
                    (a.1 - b.1).abs() <= 1e-9 * b.1.abs().max(1.0),
                    "{q} {k:?}: {a:?} vs {b:?}"
                );
            }
        }
        // The instant query at the last step equals the matrix's last column.
        let r = get(
            &srv,
            "/loki/api/v1/query",
            &[("query", q), ("time", &newest.to_string())],
        );
        assert_eq!(r.status, 200, "{q}: {}", r.text());
        let v = r.json();
        assert_eq!(v["data"]["resultType"], "vector");
        for sample in v["data"]["result"].as_array().unwrap() {
            assert_eq!(sample["value"].as_array().unwrap().len(), 2);
            assert!(sample["value"][1].as_str().unwrap().parse::<f64>().is_ok());
        }
    }
}

fn find_range(m: &logsieve::logql::MetricExpr) -> (&LogExpr, i64) {
    use logsieve::logql::MetricExpr as M;
    match m {
        M::Range { log, range_ms, .. } => (log, *range_ms),
        M::Aggregate { inner, .. } => find_range(inner),
        other => panic!("{other:?}"),
    }
}

/// The shapes of Loki's documentation: labels, label values, series,
/// buildinfo, ready, vector(1)+vector(1) (Grafana's health check), POST
/// forms, and errors.
#[test]
fn shapes_and_errors_as_loki_documents_them() {
    let session = common::session(500);
    let all = lines(&session);
    let newest = all.iter().map(|l| l.t).max().unwrap();
    let srv = TestServer::ready(session, Limits::default(), None);
    let r = srv.get("/loki/api/v1/labels");
    assert_eq!(
        r.json(),
        serde_json::json!({"status": "success", "data": ["detected_level", "filename", "host", "level", "service_name", "user"]})
    );
    let r = srv.get("/loki/api/v1/label/filename/values");
    assert_eq!(r.json()["data"], serde_json::json!(["a.log", "b.log"]));
    // service_name: the file's base name without extensions.
    let r = srv.get("/loki/api/v1/label/service_name/values");
    assert_eq!(r.json()["data"], serde_json::json!(["a", "b"]));
    let r = srv.get("/loki/api/v1/label/level/values");
    let mut levels: Vec<String> = all
        .iter()
        .filter_map(|l| l.labels.get("level").cloned())
        .collect();
    levels.sort();
    levels.dedup();
    assert_eq!(r.json()["data"], serde_json::json!(levels));
    // series: match[] repeated, POST form-encoded.
    let body = format!(
        "match[]={}&match[]={}&start=0&end={}",
        enc(r#"{filename="a.log"}"#),
        enc(r#"{level="ERROR"}"#),
        newest + 1
    );
    let r = common::request(
        srv.addr,
        "POST",
        "/loki/api/v1/series",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        body.as_bytes(),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    let got: Vec<Labels> = v["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(labels_of)
        .collect();
    let mut want: Vec<Labels> = all
        .iter()
        .map(|l| stream_of(l, &[]))
        .filter(|l| l["filename"] == "a.log")
        .collect();
    want.extend(
        all.iter()
            .filter(|l| l.labels.get("level").map(|s| s.as_str()) == Some("ERROR"))
            .map(|l| stream_of(l, &["level".into()])),
    );
    want.sort();
    want.dedup();
    assert_eq!(got, want);
    let r = srv.get("/loki/api/v1/status/buildinfo");
    assert!(r.json()["version"].as_str().is_some());
    let r = srv.get("/ready");
    assert_eq!((r.status, r.text()), (200, "ready\n"));
    let r = get(
        &srv,
        "/loki/api/v1/query",
        &[("query", "vector(1)+vector(1)"), ("time", "1700000000")],
    );
    assert_eq!(
        r.json()["data"]["result"],
        serde_json::json!([{"metric": {}, "value": [1700000000, "2"]}])
    );
    // Errors: Loki's text/plain with 400.
    for (q, words) in [
        (
            r#"{filename="a.log"} | unpack"#,
            "parse error at line 1, col 20: pipeline stage `| unpack`",
        ),
        (
            r#"{filename=~".*"}"#,
            "at least one regexp or equality matcher",
        ),
        (
            r#"topk(2, rate({host="a"}[1m]))"#,
            "`topk` is not supported",
        ),
    ] {
        let r = get(&srv, "/loki/api/v1/query_range", &[("query", q)]);
        assert_eq!(r.status, 400, "{q}");
        assert!(r.header("content-type").unwrap().starts_with("text/plain"));
        assert!(r.text().contains(words), "{q}: {}", r.text());
    }
    for (path, words) in [
        ("/loki/api/v1/query_range", "query parameter is required"),
        ("/loki/api/v1/query_range?query=%7Bhost%3D%22a%22%7D&start=yesterday", "invalid start"),
        ("/loki/api/v1/query_range?query=%7Bhost%3D%22a%22%7D&limit=-1", "limit must be a positive value"),
        ("/loki/api/v1/query_range?query=%7Bhost%3D%22a%22%7D&direction=up", "invalid direction"),
        ("/loki/api/v1/query_range?query=rate(%7Bhost%3D%22a%22%7D%5B1m%5D)&start=0&end=86400&step=1", "11,000 points"),
        ("/loki/api/v1/query?query=%7Bhost%3D%22a%22%7D", "log queries are not supported as an instant query"),
        ("/loki/api/v1/series", "0 matcher groups"),
    ] {
        let r = srv.get(path);
        assert_eq!(r.status, 400, "{path}: {}", r.text());
        assert!(r.text().contains(words), "{path}: {}", r.text());
    }
    // While loading: /ready and queries 503.
    let loading = TestServer::loading(Limits::default(), None);
    assert_eq!(loading.get("/ready").status, 503);
    assert_eq!(loading.get("/loki/api/v1/labels").status, 503);
}
