#![recursion_limit = "256"]
//! The routes Grafana's Logs Drilldown calls (`/loki/api/v1/index/volume`,
//! `/index/volume_range`, `/detected_labels`, `/detected_fields`,
//! `/detected_field/<name>/values`, `/patterns`) against oracles computed
//! from the columns and the library's miner over the same corpus, in the
//! shapes of Loki's API documentation; bad parameters as Loki's 400s.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use common::TestServer;
use logsieve::patterns::{Miner, MinerOptions};
use logsieve::stats::{ColumnOptions, Columns, FieldSpec};
use logsieve::{Corpus, Session};
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

fn get(srv: &TestServer, path: &str, params: &[(&str, &str)]) -> common::Resp {
    let q: Vec<String> = params
        .iter()
        .map(|(k, v)| format!("{k}={}", enc(v)))
        .collect();
    srv.get(&format!("{path}?{}", q.join("&")))
}

/// One line as the oracle sees it.
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
        for l in 0..doc.lines().len() {
            let mut labels = Labels::new();
            labels.insert("filename".into(), doc.name().into());
            // `a.log` → `a`: the file's base name without extensions.
            let service = doc.name().split('.').next().unwrap().to_string();
            labels.insert("service_name".into(), service);
            for (f, dict) in cols.fields().iter().enumerate() {
                if let Some(v) = dict.value(cols.docs()[d].codes[f][l as usize]) {
                    labels.insert(dict.name.clone(), String::from_utf8_lossy(v).into());
                }
            }
            // Loki's names of the level column's values.
            let detected = match labels.get("level").map(String::as_str) {
                None => "unknown",
                Some("DEBUG") => "debug",
                Some("INFO") => "info",
                Some("WARN") => "warn",
                Some("ERROR") => "error",
                Some(other) => panic!("a level the generator does not write: {other}"),
            };
            labels.insert("detected_level".into(), detected.into());
            out.push(Line {
                t: cols.docs()[d].times[l as usize] * 1_000_000,
                labels,
                text: doc.line(l).to_vec(),
                doc: d,
                line: l,
            });
        }
    }
    out
}

fn bounds(all: &[Line]) -> (i64, i64) {
    (
        all.iter().map(|l| l.t).min().unwrap(),
        all.iter().map(|l| l.t).max().unwrap(),
    )
}

fn metric_of(v: &Value) -> Labels {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect()
}

/// A sample's time in ms from Loki's seconds (an integer or a float with
/// ms precision).
fn ms_of(v: &Value) -> i64 {
    (v.as_f64().unwrap() * 1000.0).round() as i64
}

#[test]
fn volume_matches_the_columns() {
    let session = common::session(3000);
    let all = lines(&session);
    let (oldest, newest) = bounds(&all);
    let srv = TestServer::ready(session, Limits::default(), None);
    let (s, e) = (oldest.to_string(), (newest + 1).to_string());
    // (query, targetLabels, aggregateBy, labels of the oracle's series)
    let cases: &[(&str, &str, &str)] = &[
        (r#"{filename=~".+"}"#, "", "series"),
        (r#"{service_name=~".+"}"#, "", "series"),
        (r#"{service_name="b"}"#, "level", "series"),
        (r#"{level=~".+"}"#, "", "series"),
        (r#"{host=~"web-0[12]", level!="DEBUG"}"#, "", "series"),
        (r#"{filename="a.log"}"#, "level", "series"),
        (r#"{filename=~".+"}"#, "", "labels"),
        (r#"{filename=~".+"}"#, "host,level", "labels"),
    ];
    for &(q, targets, agg) in cases {
        let Ok(logsieve::logql::Expr::Log(log)) = logsieve::logql::parse(q) else {
            panic!("{q}")
        };
        let keep: BTreeSet<String> = if !targets.is_empty() {
            targets.split(',').map(str::to_string).collect()
        } else if agg == "series" {
            log.matchers.iter().map(|m| m.name.clone()).collect()
        } else {
            [
                "detected_level",
                "filename",
                "host",
                "level",
                "service_name",
                "user",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect()
        };
        let mut want: BTreeMap<Labels, u64> = BTreeMap::new();
        for l in &all {
            let ok = log.matchers.iter().all(|m| {
                let v = l.labels.get(&m.name).map_or("", |s| s.as_str());
                let re = regex::Regex::new(&format!("^(?:{})$", m.value)).unwrap();
                match m.op {
                    logsieve::logql::MatchOp::Eq => v == m.value,
                    logsieve::logql::MatchOp::Neq => v != m.value,
                    logsieve::logql::MatchOp::Re => re.is_match(v),
                    logsieve::logql::MatchOp::Nre => !re.is_match(v),
                }
            });
            if !ok || l.t < oldest || l.t > newest + 1 {
                continue;
            }
            let sub: Labels = l
                .labels
                .iter()
                .filter(|(k, _)| keep.contains(*k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if agg == "series" {
                *want.entry(sub).or_default() += l.text.len() as u64;
            } else {
                for k in sub.keys() {
                    let one: Labels = [(k.clone(), String::new())].into_iter().collect();
                    *want.entry(one).or_default() += l.text.len() as u64;
                }
            }
        }
        assert!(!want.is_empty(), "{q}");
        let r = get(
            &srv,
            "/loki/api/v1/index/volume",
            &[
                ("query", q),
                ("start", &s),
                ("end", &e),
                ("targetLabels", targets),
                ("aggregateBy", agg),
                ("limit", "1000"),
            ],
        );
        assert_eq!(r.status, 200, "{q}: {}", r.text());
        let v = r.json();
        assert_eq!(v["status"], "success");
        assert_eq!(v["data"]["resultType"], "vector", "{q}");
        let result = v["data"]["result"].as_array().unwrap();
        let mut got: BTreeMap<Labels, u64> = BTreeMap::new();
        let mut prev = u64::MAX;
        for row in result {
            let bytes: u64 = row["value"][1].as_str().unwrap().parse().unwrap();
            assert!(bytes <= prev, "{q}: largest first");
            prev = bytes;
            assert_eq!(
                ms_of(&row["value"][0]),
                (newest + 1) / 1_000_000,
                "{q}: at end"
            );
            got.insert(metric_of(&row["metric"]), bytes);
        }
        assert_eq!(got, want, "{q} targetLabels={targets} aggregateBy={agg}");
        // limit keeps the largest.
        let r = get(
            &srv,
            "/loki/api/v1/index/volume",
            &[
                ("query", q),
                ("start", &s),
                ("end", &e),
                ("targetLabels", targets),
                ("aggregateBy", agg),
                ("limit", "1"),
            ],
        );
        let top = want.values().max().copied().unwrap();
        let v = r.json();
        assert_eq!(v["data"]["result"].as_array().unwrap().len(), 1);
        assert_eq!(v["data"]["result"][0]["value"][1], top.to_string());
    }

    // volume_range: Loki's buckets (aligned to the step, named by their
    // end: 1 ms before the next, the last by `end`), per level.
    let step_s = 600i64;
    let step = step_s * 1_000_000_000;
    let end = newest + 1;
    let aligned = oldest - oldest.rem_euclid(step);
    let mut want: BTreeMap<(Labels, i64), u64> = BTreeMap::new();
    for l in all.iter().filter(|l| l.labels.contains_key("level")) {
        let k = (l.t - aligned) / step;
        let name = (aligned + (k + 1) * step - 1_000_000).min(end);
        let lab: Labels = [("level".to_string(), l.labels["level"].clone())]
            .into_iter()
            .collect();
        *want.entry((lab, name / 1_000_000)).or_default() += l.text.len() as u64;
    }
    let r = get(
        &srv,
        "/loki/api/v1/index/volume_range",
        &[
            ("query", r#"{level=~".+"}"#),
            ("start", &s),
            ("end", &end.to_string()),
            ("step", &step_s.to_string()),
            ("limit", "1000"),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["data"]["resultType"], "matrix");
    let mut got: BTreeMap<(Labels, i64), u64> = BTreeMap::new();
    for row in v["data"]["result"].as_array().unwrap() {
        for p in row["values"].as_array().unwrap() {
            got.insert(
                (metric_of(&row["metric"]), ms_of(&p[0])),
                p[1].as_str().unwrap().parse().unwrap(),
            );
        }
    }
    assert_eq!(got, want);
}

#[test]
fn detected_labels_match_the_columns() {
    let session = common::session(2000);
    let all = lines(&session);
    let (oldest, newest) = bounds(&all);
    let srv = TestServer::ready(session, Limits::default(), None);
    let (s, e) = (oldest.to_string(), (newest + 1).to_string());
    for q in [
        None,
        Some(r#"{level="ERROR"}"#),
        Some(r#"{filename="a.log"}"#),
    ] {
        let mut want: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for l in &all {
            if let Some(q) = q {
                if q.contains("ERROR") && l.labels.get("level").map(String::as_str) != Some("ERROR")
                {
                    continue;
                }
                if q.contains("a.log") && l.labels["filename"] != "a.log" {
                    continue;
                }
            }
            for (k, v) in &l.labels {
                want.entry(k.clone()).or_default().insert(v.clone());
            }
        }
        let mut params = vec![("start", s.as_str()), ("end", e.as_str())];
        if let Some(q) = q {
            params.push(("query", q));
        }
        let r = get(&srv, "/loki/api/v1/detected_labels", &params);
        assert_eq!(r.status, 200, "{q:?}: {}", r.text());
        let v = r.json();
        let got: BTreeMap<String, u64> = v["detectedLabels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                (
                    d["label"].as_str().unwrap().to_string(),
                    d["cardinality"].as_u64().unwrap(),
                )
            })
            .collect();
        let want: BTreeMap<String, u64> =
            want.into_iter().map(|(k, v)| (k, v.len() as u64)).collect();
        assert_eq!(got, want, "{q:?}");
    }
}

/// A corpus of logfmt and JSON lines, a minute apart, in `app.log`.
fn fields_session() -> Session {
    let rows = [
        r#"2026-11-20T10:00:00Z level=INFO status=200 dur=5ms size=10KB ok=true ratio=0.5 msg="hello world" path=/a"#,
        r#"2026-11-20T10:01:00Z level=WARN status=404 dur=1.5s size=2MiB ok=false ratio=1.25 msg="not found" path=/b"#,
        r#"2026-11-20T10:02:00Z level=INFO status=200 dur=12ms size=512B ok=true ratio=2 msg=hi path=/a"#,
        r#"{"time":"2026-11-20T10:03:00Z","level":"ERROR","req":{"id":7,"method":"GET"},"tags":["x"],"latency":"20ms"}"#,
        r#"{"time":"2026-11-20T10:04:00Z","level":"INFO","req":{"id":8,"method":"PUT"},"latency":"3ms"}"#,
    ];
    let mut text = rows.join("\n");
    text.push('\n');
    let corpus = Corpus::from_bytes("app.log", text.into_bytes());
    let cols = Columns::build(
        &corpus,
        &ColumnOptions {
            year: 2026,
            doc_mtimes: vec![None],
            fields: vec![FieldSpec::level()],
            ..Default::default()
        },
    );
    let mut s = Session::new(corpus);
    s.set_columns(cols);
    s
}

#[test]
fn detected_fields_as_loki_infers_them() {
    let srv = TestServer::ready(fields_session(), Limits::default(), None);
    let (s, e) = ("2026-11-20T09:00:00Z", "2026-11-20T11:00:00Z");
    let r = get(
        &srv,
        "/loki/api/v1/detected_fields",
        &[
            ("query", r#"{filename="app.log"}"#),
            ("start", s),
            ("end", e),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["limit"], 1000);
    let got: BTreeMap<String, (String, u64, Vec<String>)> = v["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let parsers = f["parsers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap().to_string())
                .collect();
            (
                f["label"].as_str().unwrap().to_string(),
                (
                    f["type"].as_str().unwrap().to_string(),
                    f["cardinality"].as_u64().unwrap(),
                    parsers,
                ),
            )
        })
        .collect();
    let lf = || vec!["logfmt".to_string()];
    let js = || vec!["json".to_string()];
    let mut want = BTreeMap::new();
    // `level` is a label of these lines (the level column): Loki names the
    // parsed key `level_extracted`. The type is the oldest line's (Loki
    // scans newest first and keeps the last type seen).
    for (k, t, c, p) in [
        (
            "level_extracted",
            "string",
            3,
            vec!["json".to_string(), "logfmt".to_string()],
        ),
        ("status", "int", 2, lf()),
        ("dur", "duration", 3, lf()),
        ("size", "bytes", 3, lf()),
        ("ok", "boolean", 2, lf()),
        ("ratio", "float", 3, lf()),
        ("msg", "string", 3, lf()),
        ("path", "string", 2, lf()),
        ("time", "string", 2, js()),
        ("req_id", "int", 2, js()),
        ("req_method", "string", 2, js()),
        ("latency", "duration", 2, js()),
    ] {
        want.insert(k.to_string(), (t.to_string(), c as u64, p));
    }
    assert_eq!(got, want);
    let req_id = v["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["label"] == "req_id")
        .unwrap();
    assert_eq!(req_id["jsonPath"], serde_json::json!(["req", "id"]));

    // line_limit: the newest lines only.
    let r = get(
        &srv,
        "/loki/api/v1/detected_fields",
        &[
            ("query", r#"{filename="app.log"}"#),
            ("start", s),
            ("end", e),
            ("line_limit", "2"),
        ],
    );
    let v = r.json();
    let names: BTreeSet<&str> = v["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["latency", "level_extracted", "req_id", "req_method", "time"]
            .into_iter()
            .collect()
    );

    // Values: Loki's documented shape; bytes rewritten as Loki writes them.
    let r = get(
        &srv,
        "/loki/api/v1/detected_field/size/values",
        &[
            ("query", r#"{filename="app.log"}"#),
            ("start", s),
            ("end", e),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.json(),
        serde_json::json!({"values": ["10kB", "2.1MB", "512B"], "limit": 1000})
    );
    let r = get(
        &srv,
        "/loki/api/v1/detected_field/status/values",
        &[
            ("query", r#"{filename="app.log"} |= "level=INFO""#),
            ("start", s),
            ("end", e),
        ],
    );
    assert_eq!(
        r.json(),
        serde_json::json!({"values": ["200"], "limit": 1000})
    );
    let r = get(
        &srv,
        "/loki/api/v1/detected_field/nope/values",
        &[
            ("query", r#"{filename="app.log"}"#),
            ("start", s),
            ("end", e),
        ],
    );
    assert_eq!(r.json(), serde_json::json!({}));
}

#[test]
fn detected_fields_of_generated_logs() {
    let session = common::session(2000);
    let all = lines(&session);
    let (oldest, newest) = bounds(&all);
    let srv = TestServer::ready(session, Limits::default(), None);
    let (s, e) = (oldest.to_string(), (newest + 1).to_string());
    let r = get(
        &srv,
        "/loki/api/v1/detected_fields",
        &[
            ("query", r#"{filename=~".+"}"#),
            ("start", &s),
            ("end", &e),
            ("line_limit", "300"),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    let by: HashMap<String, Value> = v["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["label"].as_str().unwrap().to_string(), f.clone()))
        .collect();
    // The oracle: the newest 300 lines, `latency_ms=N` by a regex. `user`
    // is a column here: the parsed key is `user_extracted`.
    let mut newest_first: Vec<&Line> = all.iter().collect();
    newest_first.sort_by_key(|l| std::cmp::Reverse((l.t, l.doc, l.line)));
    newest_first.truncate(300);
    let re = regex::bytes::Regex::new(r" latency_ms=(\d+)").unwrap();
    let lat: BTreeSet<Vec<u8>> = newest_first
        .iter()
        .filter_map(|l| re.captures(&l.text).map(|c| c[1].to_vec()))
        .collect();
    assert_eq!(by["latency_ms"]["type"], "int");
    assert_eq!(by["latency_ms"]["cardinality"], lat.len() as u64);
    assert_eq!(by["user_extracted"]["type"], "string");
    assert!(!by.contains_key("user"));
    assert_eq!(by["msg"]["parsers"], serde_json::json!(["logfmt"]));
}

#[test]
fn patterns_match_the_miner() {
    let session = common::session(3000);
    let all = lines(&session);
    let (oldest, newest) = bounds(&all);
    let srv = TestServer::ready(session, Limits::default(), None);
    let step_s = 300i64;
    let step = step_s * 1_000_000_000;
    let end = newest + 1;
    // The oracle: the library's miner over the selected lines in time
    // order, each line counted under its template's final text.
    let mut sel: Vec<&Line> = all
        .iter()
        .filter(|l| l.labels["filename"] == "a.log")
        .collect();
    sel.sort_by_key(|l| (l.t, l.doc, l.line));
    let mut m = Miner::new(MinerOptions::default());
    let texts: Vec<&[u8]> = sel.iter().map(|l| &l.text[..]).collect();
    let mut ids = Vec::new();
    m.add_in_order(&texts, &mut ids);
    let mut want: BTreeMap<(String, String), BTreeMap<i64, u64>> = BTreeMap::new();
    for (l, id) in sel.iter().zip(ids) {
        let level = l.labels["detected_level"].clone();
        let b = (l.t - l.t.rem_euclid(step)) / 1_000_000_000;
        *want
            .entry((m.pattern(id), level))
            .or_default()
            .entry(b)
            .or_default() += 1;
    }
    let r = get(
        &srv,
        "/loki/api/v1/patterns",
        &[
            ("query", r#"{filename="a.log"}"#),
            ("start", &oldest.to_string()),
            ("end", &end.to_string()),
            ("step", &format!("{step_s}s")),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["status"], "success");
    let mut got: BTreeMap<(String, String), BTreeMap<i64, u64>> = BTreeMap::new();
    let mut total = 0;
    let mut prev = u64::MAX;
    for p in v["data"].as_array().unwrap() {
        let key = (
            p["pattern"].as_str().unwrap().to_string(),
            p["level"].as_str().unwrap().to_string(),
        );
        let mut sum = 0;
        for s in p["samples"].as_array().unwrap() {
            let (t, n) = (s[0].as_i64().unwrap(), s[1].as_u64().unwrap());
            assert_eq!(t % step_s, 0, "aligned to the step");
            sum += n;
            *got.entry(key.clone()).or_default().entry(t).or_default() += n;
        }
        assert!(sum <= prev, "largest first");
        prev = sum;
        total += sum;
    }
    assert_eq!(total as usize, sel.len());
    assert_eq!(got, want);
    assert!(
        got.len() > 3 && got.len() < sel.len() / 10,
        "{} patterns",
        got.len()
    );
}

#[test]
fn bad_parameters_are_loki_400s() {
    let srv = TestServer::ready(common::session(200), Limits::default(), None);
    let sel = r#"{filename=~".+"}"#;
    for (path, params, needle) in [
        ("/loki/api/v1/index/volume", vec![], "query"),
        (
            "/loki/api/v1/index/volume",
            vec![("query", sel), ("aggregateBy", "pods")],
            "invalid aggregation option",
        ),
        (
            "/loki/api/v1/index/volume",
            vec![("query", sel), ("limit", "-1")],
            "limit must be a positive value",
        ),
        (
            "/loki/api/v1/index/volume",
            vec![("query", sel), ("limit", "ten")],
            "limit",
        ),
        (
            "/loki/api/v1/index/volume",
            vec![("query", r#"{filename=~".+"} |= "x""#)],
            "matchers",
        ),
        (
            "/loki/api/v1/index/volume",
            vec![("query", sel), ("start", "2"), ("end", "1")],
            "end timestamp",
        ),
        (
            "/loki/api/v1/index/volume_range",
            vec![("query", sel), ("step", "0")],
            "zero or negative",
        ),
        (
            "/loki/api/v1/index/volume_range",
            vec![("query", "{")],
            "parse error",
        ),
        ("/loki/api/v1/detected_fields", vec![], "query"),
        (
            "/loki/api/v1/detected_fields",
            vec![("query", sel), ("line_limit", "0")],
            "positive",
        ),
        (
            "/loki/api/v1/detected_fields",
            vec![("query", sel), ("limit", "0")],
            "positive",
        ),
        (
            "/loki/api/v1/detected_fields",
            vec![("query", sel), ("field_limit", "x")],
            "field_limit",
        ),
        (
            "/loki/api/v1/detected_field/user/values",
            vec![("query", "count_over_time({a=\"b\"}[1m])")],
            "stream selector",
        ),
        (
            "/loki/api/v1/detected_labels",
            vec![("query", "{")],
            "parse error",
        ),
        ("/loki/api/v1/patterns", vec![], "query"),
        (
            "/loki/api/v1/patterns",
            vec![("query", sel), ("step", "-5s")],
            "duration",
        ),
        (
            "/loki/api/v1/patterns",
            vec![
                ("query", sel),
                ("start", "0"),
                ("end", "86400"),
                ("step", "1"),
            ],
            "11,000",
        ),
    ] {
        let r = get(&srv, path, &params);
        assert_eq!(r.status, 400, "{path} {params:?}: {}", r.text());
        assert!(
            r.header("content-type").unwrap().starts_with("text/plain"),
            "{path}"
        );
        assert!(r.text().contains(needle), "{path} {params:?}: {}", r.text());
    }
    // The limits Drilldown reads before a service page.
    let v = srv.get("/loki/api/v1/drilldown-limits").json();
    assert_eq!(v["pattern_ingester_enabled"], true);
    assert_eq!(v["limits"]["volume_enabled"], true);
    assert_eq!(v["limits"]["query_timeout"], "30s");
    assert!(v["version"].is_string());
    // POST with a form body is accepted as GET is.
    let r = srv.post(
        "/loki/api/v1/detected_labels",
        &format!("query={}", enc(sel)),
    );
    assert_eq!(r.status, 200, "{}", r.text());
}

#[test]
fn templates_route_matches_the_miner() {
    let session = common::session(2000);
    let all = lines(&session);
    let srv = TestServer::ready(session, Limits::default(), None);
    // The oracle: every served line in file order through the miner's
    // reference (lines grouped by shape one by one).
    let mut m = Miner::new(MinerOptions::default());
    let texts: Vec<&[u8]> = all.iter().map(|l| &l.text[..]).collect();
    m.add_in_order(&texts, &mut Vec::new());
    let mut want: Vec<(String, u64)> = m
        .templates()
        .into_iter()
        .map(|t| (t.pattern, t.count))
        .collect();
    want.sort_by_key(|t| std::cmp::Reverse(t.1));
    let r = srv.get("/api/v1/patterns/templates?limit=10000&step=1h");
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["lines"], all.len() as u64);
    assert_eq!(v["total"], want.len() as u64);
    assert_eq!(v["step_ms"], 3_600_000);
    let got: Vec<(String, u64)> = v["templates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let n = t["count"].as_u64().unwrap();
            let per: u64 = t["samples"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| {
                    assert_eq!(s[0].as_i64().unwrap() % 3_600_000, 0);
                    s[1].as_u64().unwrap()
                })
                .sum();
            assert_eq!(per, n, "samples sum to the count");
            (t["pattern"].as_str().unwrap().to_string(), n)
        })
        .collect();
    assert_eq!(got, want);
    // POST with JSON, a file and a limit: the largest of that file.
    let r = srv.post(
        "/api/v1/patterns/templates",
        r#"{"files": ["b.log"], "limit": 3, "sim_threshold": 0.5}"#,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    let b_lines = all
        .iter()
        .filter(|l| l.labels["filename"] == "b.log")
        .count();
    assert_eq!(v["lines"], b_lines as u64);
    assert_eq!(v["templates"].as_array().unwrap().len(), 3);
    for (path, body, status) in [
        ("/api/v1/patterns/templates?limit=0", None, 400),
        ("/api/v1/patterns/templates?depth=2", None, 400),
        ("/api/v1/patterns/templates?files=nope.log", None, 400),
        ("/api/v1/patterns/templates?step=soon", None, 400),
        (
            "/api/v1/patterns/templates",
            Some(r#"{"limit": 5, "colour": 1}"#),
            422,
        ),
        ("/api/v1/patterns/templates", Some("{"), 400),
        // REGRESSION (the API fuzz): a POST's query parameters were not
        // read, so one out of its range was accepted.
        (
            "/api/v1/patterns/templates?sim_threshold=-1",
            Some(r#"{"sim_threshold": 0.0}"#),
            400,
        ),
        ("/api/v1/patterns/templates?limit=3", Some("{}"), 200),
    ] {
        let r = match body {
            None => srv.get(path),
            Some(b) => srv.post(path, b),
        };
        assert_eq!(r.status, status, "{path} {body:?}: {}", r.text());
    }
    // The OpenAPI document lists the route and its fields.
    let doc = srv.get("/api/v1/openapi.json").json();
    let p = &doc["paths"]["/api/v1/patterns/templates"];
    assert!(p["get"].is_object() && p["post"].is_object());
    let props = &doc["components"]["schemas"]["TemplatesRequest"]["properties"];
    for f in [
        "since",
        "until",
        "files",
        "limit",
        "step",
        "sim_threshold",
        "depth",
    ] {
        assert!(props[f].is_object(), "{f}");
    }
    assert_eq!(props["limit"]["maximum"].as_f64(), Some(10000.0));
}

#[test]
fn label_filter_stages_select_as_matchers() {
    let session = common::session(2000);
    let all = lines(&session);
    let (oldest, newest) = bounds(&all);
    let srv = TestServer::ready(session, Limits::default(), None);
    let (s, e) = (oldest.to_string(), (newest + 1).to_string());
    // Drilldown's level filter and its volume by level.
    let want = all
        .iter()
        .filter(|l| l.labels["service_name"] == "a" && l.labels["detected_level"] == "error")
        .count();
    assert!(want > 0);
    let r = get(
        &srv,
        "/loki/api/v1/query_range",
        &[
            (
                "query",
                r#"{service_name="a"} | detected_level != "" | detected_level=~"error""#,
            ),
            ("start", &s),
            ("end", &e),
            ("limit", "100000"),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    let got: usize = v["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|st| {
            assert_eq!(st["stream"]["detected_level"], "error");
            st["values"].as_array().unwrap().len()
        })
        .sum();
    assert_eq!(got, want);
    let r = get(
        &srv,
        "/loki/api/v1/query",
        &[
            (
                "query",
                r#"sum(count_over_time({service_name="a"} [2d])) by (detected_level)"#,
            ),
            ("time", &e),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let mut per: BTreeMap<String, u64> = BTreeMap::new();
    for row in r.json()["data"]["result"].as_array().unwrap() {
        let n: f64 = row["value"][1].as_str().unwrap().parse().unwrap();
        per.insert(
            row["metric"]["detected_level"].as_str().unwrap().into(),
            n as u64,
        );
    }
    let mut want: BTreeMap<String, u64> = BTreeMap::new();
    for l in all.iter().filter(|l| l.labels["service_name"] == "a") {
        *want.entry(l.labels["detected_level"].clone()).or_default() += 1;
    }
    assert_eq!(per, want);
}

#[test]
fn parser_stages_and_field_filters_select_lines() {
    let srv = TestServer::ready(fields_session(), Limits::default(), None);
    let (s, e) = ("2026-11-20T09:00:00Z", "2026-11-20T11:00:00Z");
    let count = |q: &str| -> usize {
        let r = get(
            &srv,
            "/loki/api/v1/query_range",
            &[("query", q), ("start", s), ("end", e), ("limit", "100")],
        );
        assert_eq!(r.status, 200, "{q}: {}", r.text());
        r.json()["data"]["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|st| st["values"].as_array().unwrap().len())
            .sum()
    };
    let sel = r#"{service_name="app"}"#;
    // Drilldown's mixed parser stage alone selects every line.
    let mixed = "| json | logfmt | drop __error__, __error_details__";
    assert_eq!(count(&format!("{sel} {mixed}")), 5);
    // A field filter on a logfmt field, on a JSON field, on a label.
    assert_eq!(count(&format!(r#"{sel} {mixed} | status="200""#)), 2);
    assert_eq!(
        count(&format!(r#"{sel} {mixed} | req_method=~"GET|PUT""#)),
        2
    );
    assert_eq!(
        count(&format!(r#"{sel} {mixed} | detected_level="info""#)),
        3
    );
    assert_eq!(count(&format!(r#"{sel} | logfmt | path!="""#)), 3);
    // `| json` alone extracts nothing from logfmt lines.
    assert_eq!(count(&format!(r#"{sel} | json | status="200""#)), 0);
    // Numeric filters: a number, a duration, on a JSON field.
    assert_eq!(count(&format!(r#"{sel} {mixed} | status >= 300"#)), 1);
    assert_eq!(count(&format!(r#"{sel} {mixed} | dur > 10ms"#)), 2);
    assert_eq!(count(&format!(r#"{sel} {mixed} | latency <= 5ms"#)), 1);
    assert_eq!(count(&format!(r#"{sel} {mixed} | req_id == 7"#)), 1);
    assert_eq!(count(&format!(r#"{sel} {mixed} | ratio != 2"#)), 2);
    // A breakdown by a label with a field filter, as Drilldown asks.
    let r = get(
        &srv,
        "/loki/api/v1/query",
        &[
            (
                "query",
                &format!(
                    r#"sum by (detected_level) (count_over_time({sel} {mixed} | dur!="" [2h]))"#
                ),
            ),
            ("time", e),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let mut per: BTreeMap<String, String> = BTreeMap::new();
    for row in r.json()["data"]["result"].as_array().unwrap() {
        per.insert(
            row["metric"]["detected_level"].as_str().unwrap().into(),
            row["value"][1].as_str().unwrap().into(),
        );
    }
    let want: BTreeMap<String, String> = [("info", "2"), ("warn", "1")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(per, want);
    // Grouped by a parsed field (Drilldown's field breakdown).
    let r = get(
        &srv,
        "/loki/api/v1/query",
        &[
            (
                "query",
                &format!(r#"sum by (status) (count_over_time({sel} | logfmt | status!="" [2h]))"#),
            ),
            ("time", e),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let mut per: BTreeMap<String, String> = BTreeMap::new();
    for row in r.json()["data"]["result"].as_array().unwrap() {
        per.insert(
            row["metric"]["status"].as_str().unwrap().into(),
            row["value"][1].as_str().unwrap().into(),
        );
    }
    let want: BTreeMap<String, String> = [("200", "2"), ("404", "1")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(per, want);
}

#[test]
fn pattern_filters_select_the_pattern_lines() {
    let session = common::session(2000);
    let all = lines(&session);
    let (oldest, newest) = bounds(&all);
    let srv = TestServer::ready(session, Limits::default(), None);
    let (s, e) = (oldest.to_string(), (newest + 1).to_string());
    let sel = r#"{filename="a.log"}"#;
    let r = get(
        &srv,
        "/loki/api/v1/patterns",
        &[("query", sel), ("start", &s), ("end", &e)],
    );
    let v = r.json();
    let top = &v["data"][0];
    let pattern = top["pattern"].as_str().unwrap();
    let n: u64 = top["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s[1].as_u64().unwrap())
        .sum();
    let count = |q: String| -> u64 {
        let r = get(
            &srv,
            "/loki/api/v1/query_range",
            &[
                ("query", &q),
                ("start", &s),
                ("end", &e),
                ("limit", "100000"),
            ],
        );
        assert_eq!(r.status, 200, "{q}: {}", r.text());
        r.json()["data"]["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|st| st["values"].as_array().unwrap().len() as u64)
            .sum()
    };
    let quoted = serde_json::to_string(pattern).unwrap();
    let with = count(format!("{sel} |> {quoted}"));
    let without = count(format!("{sel} !> {quoted}"));
    let a_lines = all
        .iter()
        .filter(|l| l.labels["filename"] == "a.log")
        .count() as u64;
    // Every line of the pattern matches it (other templates' lines may too).
    assert!(with >= n, "{with} < {n} for {pattern}");
    assert_eq!(with + without, a_lines);
}
