//! The load soak of `logsieve serve` (issue 20): N clients of mixed
//! queries over loopback HTTP against a server of `--demo` logs — every
//! query kind (counts, streamed lines, per-pattern counts, stats, regex,
//! fuzzy, watchlists), some cancelled mid-stream (the client hangs up),
//! some invalid (400/422), some oversized (413) — with every answer checked
//! against a CPU-only [`Session`] over the same generated corpus, the
//! server's resident memory sampled from `/proc/PID/status`, and latency
//! percentiles per kind. The live routes too: `/loki/api/v1/query_range`
//! (log and metric queries, checked against the same CPU session) and,
//! when the server has the test appender (`LOGSIEVE_TEST_APPEND=1`,
//! [`SoakConfig::live`]), `/api/v1/tail` streams: each opens a tail on a
//! token of its own, appends lines through `POST /api/v1/_test/append`
//! (to a document of their own, `soak-tail.log`, whose lines no other
//! query of the mix matches), and checks that the tail streams exactly the
//! appended lines holding the token, in order.
//!
//! [`run`] drives a server that is already listening; the `serve-soak`
//! binary starts one (`logsieve serve --demo`) and stops it, and the CLI's
//! `tests/soak.rs` runs a short soak in CI.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use logsieve::gen::{generate, GenOptions};
use logsieve::{Corpus, QueryBuilder, SearchOptions, Session, Syntax, Want};
use serde_json::{json, Value};

/// What to run.
#[derive(Clone, Debug)]
pub struct SoakConfig {
    /// The server (loopback).
    pub addr: SocketAddr,
    /// The server's process id, for its resident memory (`None`: not sampled).
    pub pid: Option<u32>,
    /// Concurrent clients, each on its own keep-alive connection.
    pub clients: usize,
    /// How long the clients send queries.
    pub duration: Duration,
    /// The server's `--demo --lines N`: the oracle generates the same corpus.
    pub lines: u64,
    /// The server's body limit (`--max-body`, default 1 MiB): an oversized
    /// request is one byte over it.
    pub max_body: usize,
    /// The server was started with `LOGSIEVE_TEST_APPEND=1`: tail streams
    /// (with appends) are in the mix.
    pub live: bool,
}

/// What a query must answer.
#[derive(Clone, Debug)]
enum Expect {
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
struct Case {
    kind: &'static str,
    method: &'static str,
    path: String,
    body: String,
    expect: Expect,
}

/// Latencies and outcomes of one kind.
#[derive(Clone, Debug, Default)]
pub struct KindStats {
    /// Answers checked (or hang-ups done).
    pub ok: u64,
    /// Answers that differed from the oracle, or failed.
    pub failed: u64,
    /// 429 answers (all slots busy): not a failure, not checked.
    pub busy: u64,
    /// 504 answers (`--timeout` passed: the server sheds load as
    /// documented, with the error body): not a wrong answer, counted apart.
    pub timeouts: u64,
    /// Milliseconds, one per `ok` request.
    pub latencies_ms: Vec<f64>,
}

/// Resident memory samples of the server, in MiB.
#[derive(Clone, Debug, Default)]
pub struct Rss {
    /// Before any query.
    pub idle: f64,
    /// After the first tenth of the run (warm: caches, pools, GPU).
    pub warm: f64,
    /// After the last client stopped.
    pub end: f64,
    /// The largest sample.
    pub max: f64,
    /// Samples taken.
    pub samples: usize,
}

/// The soak's result.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Per kind.
    pub kinds: BTreeMap<&'static str, KindStats>,
    /// The first failures (at most 20), for the message.
    pub failures: Vec<String>,
    /// Server memory (when a pid was given).
    pub rss: Option<Rss>,
    /// Wall time of the run.
    pub elapsed: Duration,
}

impl Report {
    /// True when no answer failed.
    pub fn ok(&self) -> bool {
        self.kinds.values().all(|k| k.failed == 0)
    }

    /// Requests answered, failed, busy (429) and timed out (504) over all
    /// kinds.
    pub fn totals(&self) -> (u64, u64, u64, u64) {
        self.kinds.values().fold((0, 0, 0, 0), |t, k| {
            (t.0 + k.ok, t.1 + k.failed, t.2 + k.busy, t.3 + k.timeouts)
        })
    }

    /// A Markdown table: per kind, requests, failures, 429s, p50/p90/p99/max.
    pub fn table(&self) -> String {
        let mut s = String::from(
            "| kind | ok | failed | 429 | 504 | p50 ms | p90 ms | p99 ms | max ms |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
        );
        for (k, v) in &self.kinds {
            let mut l = v.latencies_ms.clone();
            l.sort_by(|a, b| a.total_cmp(b));
            let p = |q: f64| {
                if l.is_empty() {
                    0.0
                } else {
                    l[((l.len() - 1) as f64 * q).round() as usize]
                }
            };
            s += &format!(
                "| {k} | {} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} |\n",
                v.ok,
                v.failed,
                v.busy,
                v.timeouts,
                p(0.5),
                p(0.9),
                p(0.99),
                p(1.0)
            );
        }
        let (ok, failed, busy, timeouts) = self.totals();
        s += &format!(
            "\n{ok} answers checked, {failed} failed, {busy} busy (429), {timeouts} timed out (504) in {:.1} s ({:.0} req/s)\n",
            self.elapsed.as_secs_f64(),
            (ok + busy + timeouts) as f64 / self.elapsed.as_secs_f64().max(1e-9)
        );
        if let Some(r) = &self.rss {
            s += &format!(
                "server RSS (MiB): idle {:.1}, warm {:.1}, end {:.1}, max {:.1} ({} samples)\n",
                r.idle, r.warm, r.end, r.max, r.samples
            );
        }
        for f in &self.failures {
            s += &format!("FAILED: {f}\n");
        }
        s
    }
}

/// The watchlist the soak defines: 200 literals, some in the logs.
fn watchlist() -> Vec<String> {
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
fn cases(cfg: &SoakConfig) -> Vec<Case> {
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

/// Percent-encodes a query parameter's value.
fn url_encode(s: &str) -> String {
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

/// The events of a server-sent-events body, read as they come.
struct Sse {
    chunked: bool,
    buf: Vec<u8>,
}

impl Sse {
    /// The next event: (name, data); keep-alive comments are skipped.
    fn next(&mut self, k: &mut Conn) -> std::io::Result<(String, String)> {
        loop {
            if let Some(i) = self.buf.windows(2).position(|w| w == b"\n\n") {
                let ev: Vec<u8> = self.buf.drain(..i + 2).collect();
                let (mut name, mut data) = (String::new(), String::new());
                for l in String::from_utf8_lossy(&ev).lines() {
                    if let Some(v) = l.strip_prefix("event:") {
                        name = v.trim().to_string();
                    } else if let Some(v) = l.strip_prefix("data:") {
                        data.push_str(v.strip_prefix(' ').unwrap_or(v));
                    }
                }
                if !name.is_empty() || !data.is_empty() {
                    return Ok((name, data));
                }
                continue;
            }
            if self.chunked {
                let mut line = String::new();
                k.reader.read_line(&mut line)?;
                let n = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
                    .map_err(|_| std::io::Error::other(format!("bad chunk size {line:?}")))?;
                if n == 0 {
                    return Err(std::io::Error::other("the stream ended"));
                }
                let at = self.buf.len();
                self.buf.resize(at + n, 0);
                k.reader.read_exact(&mut self.buf[at..])?;
                line.clear();
                k.reader.read_line(&mut line)?;
            } else {
                let mut b = [0u8; 4096];
                let n = k.reader.read(&mut b)?;
                if n == 0 {
                    return Err(std::io::Error::other("the stream ended"));
                }
                self.buf.extend_from_slice(&b[..n]);
            }
        }
    }
}

/// One keep-alive HTTP/1.1 connection.
struct Conn {
    addr: SocketAddr,
    reader: BufReader<TcpStream>,
}

impl Conn {
    fn open(addr: SocketAddr) -> std::io::Result<Conn> {
        let s = TcpStream::connect_timeout(&addr, Duration::from_secs(10))?;
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(Duration::from_secs(60)))?;
        Ok(Conn {
            addr,
            reader: BufReader::new(s),
        })
    }

    fn send(&mut self, method: &str, path: &str, len: usize, body: &[u8]) -> std::io::Result<()> {
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {len}\r\n\r\n",
            self.addr
        );
        let s = self.reader.get_mut();
        s.write_all(head.as_bytes())?;
        s.write_all(body)
    }

    /// The status line and headers: (status, content-length, chunked).
    fn head(&mut self) -> std::io::Result<(u16, Option<usize>, bool)> {
        let mut line = String::new();
        self.reader.read_line(&mut line)?;
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| std::io::Error::other(format!("bad status line {line:?}")))?;
        let (mut len, mut chunked) = (None, false);
        loop {
            line.clear();
            self.reader.read_line(&mut line)?;
            let l = line.trim_end().to_ascii_lowercase();
            if l.is_empty() {
                break;
            }
            if let Some(v) = l.strip_prefix("content-length:") {
                len = v.trim().parse::<usize>().ok();
            } else if l.starts_with("transfer-encoding:") && l.contains("chunked") {
                chunked = true;
            }
        }
        Ok((status, len, chunked))
    }

    fn body(&mut self, len: Option<usize>, chunked: bool) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut line = String::new();
        if chunked {
            loop {
                line.clear();
                self.reader.read_line(&mut line)?;
                let n = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
                    .map_err(|_| std::io::Error::other(format!("bad chunk size {line:?}")))?;
                if n == 0 {
                    line.clear();
                    self.reader.read_line(&mut line)?;
                    return Ok(out);
                }
                let at = out.len();
                out.resize(at + n, 0);
                self.reader.read_exact(&mut out[at..])?;
                line.clear();
                self.reader.read_line(&mut line)?;
            }
        }
        out.resize(len.unwrap_or(0), 0);
        self.reader.read_exact(&mut out)?;
        Ok(out)
    }

    fn request(&mut self, method: &str, path: &str, body: &str) -> std::io::Result<(u16, Vec<u8>)> {
        self.send(method, path, body.len(), body.as_bytes())?;
        let (status, len, chunked) = self.head()?;
        Ok((status, self.body(len, chunked)?))
    }
}

/// Why an answer differs from what was expected, if it does.
fn check(expect: &Expect, status: u16, body: &[u8]) -> Result<(), String> {
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

/// How a request ended, when it did not fail.
#[derive(Debug)]
enum Outcome {
    /// Answered and checked.
    Checked,
    /// 429.
    Busy,
    /// 504 with the `timeout` error body.
    Timeout,
}

/// A 429 or a 504 (with its error body), when the answer is one.
fn shed(status: u16, body: &[u8]) -> Option<Outcome> {
    match status {
        429 => Some(Outcome::Busy),
        504 if check(&Expect::Status(504), status, body).is_ok() => Some(Outcome::Timeout),
        _ => None,
    }
}

/// A tail on a token of its own (`tag` is unique to this request), lines
/// appended through the test appender on the keep-alive connection, the
/// tail read until it has streamed every appended line holding the token:
/// exactly those, in order.
fn run_tail(conn: &mut Option<Conn>, addr: SocketAddr, tag: &str) -> Result<Outcome, String> {
    let io = |e: std::io::Error| format!("{e}");
    let token = format!("soaktail {tag} zq");
    let body = json!({"patterns": [token], "syntax": "literal"}).to_string();
    let mut k = Conn::open(addr).map_err(io)?;
    k.send("POST", "/api/v1/tail", body.len(), body.as_bytes())
        .map_err(io)?;
    let (status, len, chunked) = k.head().map_err(io)?;
    if status != 200 {
        let b = k.body(len, chunked).map_err(io)?;
        return shed(status, &b).ok_or_else(|| {
            format!(
                "tail: status {status}: {}",
                String::from_utf8_lossy(&b[..b.len().min(200)])
            )
        });
    }
    let mut sse = Sse {
        chunked,
        buf: Vec::new(),
    };
    let (name, _) = sse.next(&mut k).map_err(io)?;
    if name != "ready" {
        return Err(format!("tail: first event {name:?}, not ready"));
    }
    // Six lines, four with the token; none holds a pattern of the other
    // queries of the mix.
    let lines: Vec<String> = (0..6)
        .map(|j| {
            if j % 3 == 1 {
                format!("soaktail other {tag} {j}")
            } else {
                format!("{token} line {j}")
            }
        })
        .collect();
    let want: Vec<&String> = lines.iter().filter(|l| l.contains(&token)).collect();
    let text = lines.iter().map(|l| format!("{l}\n")).collect::<String>();
    let req = json!({"file": "soak-tail.log", "text": text}).to_string();
    if conn.is_none() {
        *conn = Some(Conn::open(addr).map_err(io)?);
    }
    let (st, b) = match conn
        .as_mut()
        .unwrap()
        .request("POST", "/api/v1/_test/append", &req)
    {
        Ok(r) => r,
        Err(e) => {
            *conn = None;
            return Err(format!("append: {e}"));
        }
    };
    if st != 200 {
        return Err(format!(
            "append: status {st}: {}",
            String::from_utf8_lossy(&b[..b.len().min(200)])
        ));
    }
    let mut got = Vec::new();
    while got.len() < want.len() {
        let (name, data) = sse
            .next(&mut k)
            .map_err(|e| format!("tail after {} lines: {e}", got.len()))?;
        if name != "match" {
            continue;
        }
        let v: Value = serde_json::from_str(&data).map_err(|e| format!("{e}: {data}"))?;
        let t = v["data"]["lines"]["text"].as_str().unwrap_or("");
        got.push(t.trim_end_matches('\n').to_string());
    }
    // The client hangs up (the server must free the tail).
    (got.iter().collect::<Vec<_>>() == want)
        .then_some(Outcome::Checked)
        .ok_or_else(|| format!("tail streamed {got:?}, oracle {want:?}"))
}

/// Runs one case (`tag`: unique to this request, for tails).
fn run_case(
    conn: &mut Option<Conn>,
    addr: SocketAddr,
    c: &Case,
    max_body: usize,
    tag: &str,
) -> Result<Outcome, String> {
    let io = |e: std::io::Error| format!("{e}");
    match c.expect {
        Expect::Tail => run_tail(conn, addr, tag),
        Expect::HangUp => {
            // A fresh connection, dropped after the first bytes of a large
            // stream: the server must stop the search and free the slot.
            let mut k = Conn::open(addr).map_err(io)?;
            k.send("POST", &c.path, c.body.len(), c.body.as_bytes())
                .map_err(io)?;
            let (status, len, chunked) = k.head().map_err(io)?;
            if status != 200 {
                if let Some(o) = shed(status, &k.body(len, chunked).map_err(io)?) {
                    return Ok(o);
                }
                return Err(format!("status {status} before the hang-up"));
            }
            let mut buf = [0u8; 4096];
            let _ = k.reader.read(&mut buf).map_err(io)?;
            Ok(Outcome::Checked)
        }
        Expect::Oversized => {
            // One byte over the limit. The server reads up to the limit
            // before it answers; the whole body is sent, so that nothing
            // is left unread (an unread byte makes the close a reset,
            // which can lose the answer).
            let mut k = Conn::open(addr).map_err(io)?;
            let body = vec![b' '; max_body + 1];
            k.send("POST", &c.path, body.len(), &body).map_err(io)?;
            let (status, len, chunked) = k.head().map_err(io)?;
            let body = k.body(len, chunked).map_err(io)?;
            check(&Expect::Status(413), status, &body).map(|()| Outcome::Checked)
        }
        _ => {
            if conn.is_none() {
                *conn = Some(Conn::open(addr).map_err(io)?);
            }
            let r = conn.as_mut().unwrap().request(c.method, &c.path, &c.body);
            let (status, body) = match r {
                Ok(r) => r,
                Err(e) => {
                    *conn = None;
                    return Err(format!("{e}"));
                }
            };
            if let Some(o) = shed(status, &body) {
                return Ok(o);
            }
            check(&c.expect, status, &body).map(|()| Outcome::Checked)
        }
    }
}

fn rss_mib(pid: u32) -> Option<f64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: f64 = s
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

/// Defines the soak's watchlist, then runs the clients for the duration.
pub fn run(cfg: &SoakConfig) -> Report {
    let cases = Arc::new(cases(cfg));
    let wl = json!({"patterns": watchlist()}).to_string();
    let mut c = Conn::open(cfg.addr).expect("connect to the server");
    let (status, body) = c
        .send("PUT", "/api/v1/watchlists/soak", wl.len(), wl.as_bytes())
        .and_then(|()| {
            let (s, l, ch) = c.head()?;
            Ok((s, c.body(l, ch)?))
        })
        .expect("PUT the watchlist");
    assert!(
        status < 300,
        "PUT watchlist: {status} {}",
        String::from_utf8_lossy(&body)
    );
    drop(c);

    let report = Arc::new(Mutex::new(Report::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let rss = Arc::new(Mutex::new(cfg.pid.and_then(rss_mib).map(|idle| Rss {
        idle,
        warm: idle,
        end: idle,
        max: idle,
        samples: 1,
    })));
    let t0 = Instant::now();
    let sampler = cfg.pid.map(|pid| {
        let (stop, rss, warm_at) = (stop.clone(), rss.clone(), cfg.duration / 10);
        std::thread::spawn(move || {
            let mut warm_done = false;
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(250));
                if let (Some(m), Some(r)) = (rss_mib(pid), rss.lock().unwrap().as_mut()) {
                    r.max = r.max.max(m);
                    r.samples += 1;
                    if !warm_done && t0.elapsed() >= warm_at {
                        r.warm = m;
                        warm_done = true;
                    }
                }
            }
        })
    });
    let clients: Vec<_> = (0..cfg.clients)
        .map(|ci| {
            let (cases, report, addr, deadline, max_body) = (
                cases.clone(),
                report.clone(),
                cfg.addr,
                t0 + cfg.duration,
                cfg.max_body,
            );
            std::thread::spawn(move || {
                let mut conn = None;
                let mut i = ci * 7;
                let mut local: BTreeMap<&'static str, KindStats> = BTreeMap::new();
                let mut fails = Vec::new();
                while Instant::now() < deadline {
                    let c = &cases[i % cases.len()];
                    i += 1;
                    let t = Instant::now();
                    let r = run_case(&mut conn, addr, c, max_body, &format!("c{ci}n{i}"));
                    let k = local.entry(c.kind).or_default();
                    match r {
                        Ok(Outcome::Checked) => {
                            k.ok += 1;
                            k.latencies_ms.push(t.elapsed().as_secs_f64() * 1e3);
                        }
                        Ok(Outcome::Busy) => {
                            k.busy += 1;
                            std::thread::sleep(Duration::from_millis(5));
                        }
                        Ok(Outcome::Timeout) => k.timeouts += 1,
                        Err(e) => {
                            k.failed += 1;
                            fails.push(format!(
                                "{} {}: {e}",
                                c.kind,
                                c.body.chars().take(80).collect::<String>()
                            ));
                        }
                    }
                }
                let mut r = report.lock().unwrap();
                for (name, k) in local {
                    let e = r.kinds.entry(name).or_default();
                    e.ok += k.ok;
                    e.failed += k.failed;
                    e.busy += k.busy;
                    e.timeouts += k.timeouts;
                    e.latencies_ms.extend(k.latencies_ms);
                }
                let room = 20usize.saturating_sub(r.failures.len());
                r.failures.extend(fails.into_iter().take(room));
            })
        })
        .collect();
    for c in clients {
        c.join().expect("a client thread panicked");
    }
    // The slots of hung-up streams come back: a last query is answered.
    std::thread::sleep(Duration::from_millis(500));
    let elapsed = t0.elapsed();
    stop.store(true, Ordering::Relaxed);
    if let Some(s) = sampler {
        let _ = s.join();
    }
    let mut report = Arc::try_unwrap(report).unwrap().into_inner().unwrap();
    let mut last = None;
    let c0 = &cases[0];
    match run_case(&mut last, cfg.addr, c0, cfg.max_body, "after") {
        Ok(Outcome::Checked) => {}
        other => report
            .failures
            .push(format!("the query after the soak: {other:?}")),
    }
    let mut rss = rss.lock().unwrap().clone();
    if let (Some(r), Some(pid)) = (rss.as_mut(), cfg.pid) {
        if let Some(m) = rss_mib(pid) {
            r.end = m;
            r.max = r.max.max(m);
        }
    }
    report.rss = rss;
    report.elapsed = elapsed;
    if !report.failures.is_empty() && report.ok() {
        report.kinds.entry("after").or_default().failed += 1;
    }
    report
}
