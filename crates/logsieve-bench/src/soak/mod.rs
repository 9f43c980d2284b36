//! The load soak of `logsieve serve`: N clients of mixed
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
use std::io::Read;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::http::{Conn, Sse};
use cases::{cases, check, watchlist, Case, Expect};

mod cases;

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
