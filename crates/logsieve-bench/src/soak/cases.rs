//! The soak's mix of requests ([`cases`]) and how each answer is checked
//! against the CPU session's ([`check`]).

use logsieve::gen::{generate, GenOptions};
use logsieve::{Corpus, QueryBuilder, SearchOptions, Session, Syntax, Want};
use serde_json::{json, Value};

use super::SoakConfig;
use crate::http::url_encode;

/// What a query must answer.
#[derive(Clone, Debug)]
pub(super) enum Expect {
    /// `output: count`: the total.
    Count(u64),
    /// `output: lines` with `limit`: these line numbers (1-based), in order.
    Lines(Vec<u64>),
    /// `patterns`: lines per pattern.
    Patterns(Vec<u64>),
    /// `stats`: `selected`, and the groups summing to it.
    Stats(u64),
    /// An error status with the JSON error shape.
    Status(u16),
    /// A large stream the client hangs up on after its first bytes.
    HangUp,
    /// A body one byte over the limit: 413.
    Oversized,
    /// A Loki metric query over everything: one point, this value.
    LokiCount(u64),
    /// A Loki log query: `min(limit, want.len())` entries, each the text
    /// of a line the oracle selects (`want`, sorted).
    LokiLines {
        /// The query's `limit`.
        limit: usize,
        /// Every line the oracle selects, sorted.
        want: Vec<String>,
    },
    /// A tail on a token of this request's own, lines appended, the tail
    /// read until it has streamed them (see the module docs).
    Tail,
}

/// One query of the mix.
#[derive(Clone, Debug)]
pub(super) struct Case {
    pub(super) kind: &'static str,
    pub(super) method: &'static str,
    pub(super) path: String,
    pub(super) body: String,
    pub(super) expect: Expect,
}

/// The watchlist the soak defines: 200 literals, some in the logs.
pub(super) fn watchlist() -> Vec<String> {
    let mut v: Vec<String> = (0..190)
        .map(|i| format!("10.{}.{}.{}", i % 7, i % 13, i))
        .collect();
    v.extend(
        [
            "ERROR_503",
            "192.168.1",
            "NullPointerException",
            "timeout",
            "GET /api",
        ]
        .map(String::from),
    );
    v.extend((0..5).map(|i| format!("user=u{i}")));
    v
}

/// The query mix and each answer, from a CPU session over the corpus.
pub(super) fn cases(cfg: &SoakConfig) -> Vec<Case> {
    let data = generate(&GenOptions {
        lines: cfg.lines,
        ..Default::default()
    });
    let s = Session::new(Corpus::from_bytes("demo.log", data));
    let cpu = |want| SearchOptions {
        backend: logsieve::BackendChoice::Cpu,
        want,
        ..Default::default()
    };
    let build = |syntax: Syntax, ci: bool, pats: &[&str]| {
        QueryBuilder::new()
            .syntax(syntax)
            .case_insensitive(ci)
            .build(pats)
            .unwrap()
    };
    let count = |syntax, ci, pats: &[&str]| {
        let q = build(syntax, ci, pats);
        s.search(&q, &cpu(Want::Count)).unwrap().docs[0].count
    };
    let lines = |syntax, pats: &[&str], limit: usize| {
        let q = build(syntax, false, pats);
        let r = s.search(&q, &cpu(Want::Lines)).unwrap();
        r.docs[0]
            .lines
            .iter()
            .take(limit)
            .map(|l| l + 1)
            .collect::<Vec<u64>>()
    };
    let per_pattern = |pats: &[&str]| {
        let q = build(Syntax::Fixed, false, pats);
        s.count_per_pattern(&q, &cpu(Want::Count)).unwrap().lines
    };
    let case = |kind, path: &str, body: Value, expect| Case {
        kind,
        method: "POST",
        path: path.to_string(),
        body: body.to_string(),
        expect,
    };
    let search = "/api/v1/search";
    let mut v = Vec::new();
    for p in ["ERROR_503", "192.168.1", "error", "NullPointerException"] {
        v.push(case(
            "count",
            search,
            json!({"patterns": [p], "syntax": "literal", "output": "count"}),
            Expect::Count(count(Syntax::Fixed, false, &[p])),
        ));
    }
    v.push(case(
        "count",
        search,
        json!({"patterns": ["error"], "syntax": "literal", "ignore_case": true, "output": "count"}),
        Expect::Count(count(Syntax::Fixed, true, &["error"])),
    ));
    for p in [r"ERROR_5\d\d", r"user=u[0-9]+\b.*(timeout|refused)"] {
        v.push(case(
            "regex",
            search,
            json!({"patterns": [p], "output": "count"}),
            Expect::Count(count(Syntax::Regex, false, &[p])),
        ));
    }
    v.push(case(
        "fuzzy",
        search,
        json!({"patterns": ["NullPointerExeption"], "syntax": "fuzzy", "fuzzy_k": 1, "output": "count"}),
        Expect::Count(count(Syntax::Fuzzy(1), false, &["NullPointerExeption"])),
    ));
    for (syntax, name, p) in [
        (Syntax::Fixed, "literal", "ERROR_503"),
        (Syntax::Regex, "regex", r"192\.168\.1\.\d+"),
    ] {
        v.push(case(
            "lines",
            search,
            json!({"patterns": [p], "syntax": name, "output": "lines", "limit": 300}),
            Expect::Lines(lines(syntax, &[p], 300)),
        ));
    }
    let pats = ["ERROR", "WARN", "GET", "192.168.1", "absent-pattern"];
    v.push(case(
        "patterns",
        "/api/v1/patterns",
        json!({"patterns": pats}),
        Expect::Patterns(per_pattern(&pats)),
    ));
    v.push(case(
        "stats",
        "/api/v1/stats",
        json!({"patterns": ["ERROR"], "syntax": "literal", "count_by": ["level"]}),
        Expect::Stats(count(Syntax::Fixed, false, &["ERROR"])),
    ));
    let wl = watchlist();
    let wl_refs: Vec<&str> = wl.iter().map(String::as_str).collect();
    v.push(case(
        "watchlist",
        search,
        json!({"watchlist": "soak", "output": "count"}),
        Expect::Count(count(Syntax::Fixed, false, &wl_refs)),
    ));
    v.push(case(
        "watchlist",
        "/api/v1/patterns",
        json!({"watchlist": "soak"}),
        Expect::Patterns(per_pattern(&wl_refs)),
    ));
    v.push(case(
        "cancelled",
        search,
        json!({"patterns": ["e"], "syntax": "literal", "output": "lines"}),
        Expect::HangUp,
    ));
    v.push(case(
        "invalid",
        search,
        json!({"patterns": ["("]}),
        Expect::Status(400),
    ));
    v.push(Case {
        kind: "invalid",
        method: "POST",
        path: search.into(),
        body: r#"{"patterns": ["x""#.into(),
        expect: Expect::Status(400),
    });
    v.push(case(
        "invalid",
        search,
        json!({"patterns": ["x"], "no_such_field": 1}),
        Expect::Status(422),
    ));
    v.push(case(
        "invalid",
        search,
        json!({"patterns": ["x"], "since": "yesterday-ish"}),
        Expect::Status(400),
    ));
    v.push(Case {
        kind: "oversized",
        method: "POST",
        path: search.into(),
        body: String::new(),
        expect: Expect::Oversized,
    });
    // Loki: every line of the demo corpus has its time (2026), inside
    // [0, 2100): a metric over 100 years ending in 2100 counts them all.
    const END_NS: i64 = 4_102_444_800_000_000_000;
    let loki = |kind, q: &str, extra: &str, expect| Case {
        kind,
        method: "GET",
        path: format!("/loki/api/v1/query_range?query={}{extra}", url_encode(q)),
        body: String::new(),
        expect,
    };
    for p in ["ERROR_503", "NullPointerException"] {
        v.push(loki(
            "loki-metric",
            &format!(r#"sum(count_over_time({{filename=~".+"}} |= "{p}" [36500d]))"#),
            &format!("&start={END_NS}&end={END_NS}&step=60"),
            Expect::LokiCount(count(Syntax::Fixed, false, &[p])),
        ));
    }
    let texts = |syntax, p: &str| {
        let q = build(syntax, false, &[p]);
        let r = s.search(&q, &cpu(Want::Lines)).unwrap();
        let doc = &s.corpus().docs()[0];
        let mut t: Vec<String> = r.docs[0]
            .lines
            .iter()
            .map(|&l| {
                let b = doc.line(l);
                String::from_utf8_lossy(b.strip_suffix(b"\n").unwrap_or(b)).into_owned()
            })
            .collect();
        t.sort();
        t
    };
    for (syntax, op, p) in [
        (Syntax::Fixed, "|=", "ERROR_503"),
        (Syntax::Regex, "|~", r"192\.168\.1\.\d+"),
    ] {
        // A raw (backtick) LogQL string: the regex as it is.
        v.push(loki(
            "loki-lines",
            &format!(r#"{{filename=~".+"}} {op} `{p}`"#),
            &format!("&start=0&end={END_NS}&limit=200&direction=forward"),
            Expect::LokiLines {
                limit: 200,
                want: texts(syntax, p),
            },
        ));
    }
    if cfg.live {
        for _ in 0..2 {
            v.push(Case {
                kind: "tail",
                method: "POST",
                path: "/api/v1/tail".into(),
                body: String::new(),
                expect: Expect::Tail,
            });
        }
    }
    v
}

/// Why an answer differs from what was expected, if it does.
pub(super) fn check(expect: &Expect, status: u16, body: &[u8]) -> Result<(), String> {
    let text = || String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
    let json = || serde_json::from_slice::<Value>(body).map_err(|e| format!("{e}: {}", text()));
    let want_status = match expect {
        Expect::Status(s) => *s,
        _ => 200,
    };
    if status != want_status {
        return Err(format!(
            "status {status}, expected {want_status}: {}",
            text()
        ));
    }
    match expect {
        Expect::Count(n) => {
            let v = json()?;
            (v["total"].as_u64() == Some(*n))
                .then_some(())
                .ok_or_else(|| format!("total {}, oracle {n}", v["total"]))
        }
        Expect::Lines(want) => {
            let mut got = Vec::new();
            for l in body.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                let v: Value = serde_json::from_slice(l).map_err(|e| e.to_string())?;
                if v["type"] == "match" {
                    got.push(v["data"]["line_number"].as_u64().unwrap_or(0));
                }
            }
            (got == *want).then_some(()).ok_or_else(|| {
                format!(
                    "{} line numbers, oracle {} (first {:?})",
                    got.len(),
                    want.len(),
                    got.first()
                )
            })
        }
        Expect::Patterns(want) => {
            let v = json()?;
            let got: Vec<u64> = v["patterns"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|r| r["lines"].as_u64().unwrap_or(u64::MAX))
                        .collect()
                })
                .unwrap_or_default();
            (got == *want).then_some(()).ok_or_else(|| {
                format!(
                    "per-pattern lines differ from the oracle's ({} rows)",
                    got.len()
                )
            })
        }
        Expect::Stats(n) => {
            let v = json()?;
            let sum: u64 = v["groups"]
                .as_array()
                .map_or(0, |g| g.iter().filter_map(|g| g["count"].as_u64()).sum());
            (v["selected"].as_u64() == Some(*n) && sum == *n)
                .then_some(())
                .ok_or_else(|| format!("selected {} (groups {sum}), oracle {n}", v["selected"]))
        }
        Expect::Status(_) => {
            let v = json()?;
            (v["error"]["kind"].is_string() && v["error"]["message"].is_string())
                .then_some(())
                .ok_or_else(|| format!("not the error shape: {}", text()))
        }
        Expect::LokiCount(n) => {
            let v = json()?;
            let r = &v["data"]["result"];
            let got = if *n == 0 && r.as_array().is_some_and(Vec::is_empty) {
                Some("0".to_string())
            } else {
                r[0]["values"][0][1].as_str().map(str::to_string)
            };
            (v["status"] == "success" && got.as_deref() == Some(n.to_string().as_str()))
                .then_some(())
                .ok_or_else(|| format!("Loki value {got:?}, oracle {n}: {}", text()))
        }
        Expect::LokiLines { limit, want } => {
            let v = json()?;
            let mut got = 0usize;
            for stream in v["data"]["result"].as_array().into_iter().flatten() {
                for e in stream["values"].as_array().into_iter().flatten() {
                    let t = e[1].as_str().unwrap_or("");
                    if want.binary_search_by(|w| w.as_str().cmp(t)).is_err() {
                        return Err(format!(
                            "Loki returned a line the oracle does not select: {t:?}"
                        ));
                    }
                    got += 1;
                }
            }
            (got == want.len().min(*limit))
                .then_some(())
                .ok_or_else(|| format!("{got} Loki entries, oracle {} (limit {limit})", want.len()))
        }
        Expect::HangUp | Expect::Oversized | Expect::Tail => Ok(()),
    }
}
