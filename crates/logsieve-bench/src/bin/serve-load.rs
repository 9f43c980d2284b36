//! Load generator for `logsieve serve`: literal count queries over loopback
//! HTTP, one keep-alive connection per client, and the latency of each
//! request from its first byte written to its last byte read.
//!
//! Usage: `serve-load --addr 127.0.0.1:PORT [--clients N] [--seconds S]
//! [--pause-ms MS] [--warmup N] [--patterns A,B,C] [--syntax literal|regex]
//! [--watchlist-file FILE]`.
//!
//! With `--watchlist-file` (one literal a line, e.g. a 10k IOC list) the
//! list is defined once (`PUT /api/v1/watchlists/serve-load`) and every
//! request is its per-pattern count (`POST /api/v1/patterns` naming it);
//! the checked answer is the sum of the lines of every pattern.
//! Prints one line: requests, requests per second, p50, p90, p99 and max
//! latency in ms, and the count of every pattern seen (which must be the
//! same in every answer: the run fails on a mismatch or an HTTP error).
//!
//! The queries rotate over `--patterns` (default: the five reference
//! literals), so concurrent clients ask different things.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Args {
    addr: String,
    clients: usize,
    seconds: f64,
    pause: Duration,
    warmup: usize,
    patterns: Vec<String>,
    syntax: String,
    watchlist: Option<String>,
}

fn parse() -> Args {
    let mut a = Args {
        addr: "127.0.0.1:8788".into(),
        clients: 1,
        seconds: 5.0,
        pause: Duration::ZERO,
        warmup: 20,
        syntax: "literal".into(),
        watchlist: None,
        patterns: [
            "ERROR_503",
            "192.168.1",
            "error",
            "NullPointerException",
            "x",
        ]
        .map(String::from)
        .to_vec(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(f) = it.next() {
        let v = it.next().unwrap_or_default();
        match f.as_str() {
            "--addr" => a.addr = v,
            "--clients" => a.clients = v.parse().expect("--clients N"),
            "--seconds" => a.seconds = v.parse().expect("--seconds S"),
            "--pause-ms" => a.pause = Duration::from_millis(v.parse().expect("--pause-ms MS")),
            "--warmup" => a.warmup = v.parse().expect("--warmup N"),
            "--patterns" => a.patterns = v.split(',').map(String::from).collect(),
            // Patterns are split on commas: a regex with a comma cannot
            // be given here.
            "--syntax" => a.syntax = v,
            "--watchlist-file" => a.watchlist = Some(v),
            _ => {
                eprintln!("usage: serve-load --addr HOST:PORT [--clients N] [--seconds S] [--pause-ms MS] [--warmup N] [--patterns A,B] [--syntax literal|regex] [--watchlist-file FILE]");
                std::process::exit(2)
            }
        }
    }
    a
}

/// One keep-alive HTTP/1.1 connection.
struct Conn {
    addr: String,
    reader: BufReader<TcpStream>,
}

impl Conn {
    fn open(addr: &str) -> std::io::Result<Conn> {
        let s = TcpStream::connect(addr)?;
        s.set_nodelay(true)?;
        Ok(Conn {
            addr: addr.to_string(),
            reader: BufReader::new(s),
        })
    }

    /// POSTs `body` to `path`; the status and the body (chunked or sized).
    fn post(&mut self, path: &str, body: &str) -> std::io::Result<(u16, Vec<u8>)> {
        self.send("POST", path, body)
    }

    /// Sends `method path` with a JSON `body`; the status and the body.
    fn send(&mut self, method: &str, path: &str, body: &str) -> std::io::Result<(u16, Vec<u8>)> {
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.addr,
            body.len()
        );
        self.reader.get_mut().write_all(req.as_bytes())?;
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
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            let lower = l.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                len = v.trim().parse::<usize>().ok();
            } else if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
                chunked = true;
            }
        }
        let mut out = Vec::new();
        if chunked {
            loop {
                line.clear();
                self.reader.read_line(&mut line)?;
                let n = usize::from_str_radix(line.trim(), 16)
                    .map_err(|_| std::io::Error::other(format!("bad chunk size {line:?}")))?;
                let mut chunk = vec![0; n + 2];
                self.reader.read_exact(&mut chunk)?;
                if n == 0 {
                    break;
                }
                out.extend_from_slice(&chunk[..n]);
            }
        } else if let Some(n) = len {
            out.resize(n, 0);
            self.reader.read_exact(&mut out)?;
        }
        Ok((status, out))
    }
}

fn count_query(pattern: &str, syntax: &str) -> String {
    serde_json::json!({"patterns": [pattern], "syntax": syntax, "output": "count"}).to_string()
}

fn total_of(body: &[u8]) -> Option<u64> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    if let Some(rows) = v.get("patterns").and_then(|p| p.as_array()) {
        return rows.iter().map(|r| r.get("lines")?.as_u64()).sum();
    }
    v.get("total")?.as_u64()
}

const WATCHLIST: &str = "serve-load";

/// Defines the watchlist of `file`'s lines; the label of its answers.
fn define_watchlist(addr: &str, file: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
    let pats: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
    let body = serde_json::json!({ "patterns": pats }).to_string();
    let mut conn = Conn::open(addr).map_err(|e| format!("connect: {e}"))?;
    match conn.send("PUT", &format!("/api/v1/watchlists/{WATCHLIST}"), &body) {
        Ok((200 | 201, _)) => Ok(format!("watchlist[{}]", pats.len())),
        Ok((s, b)) => Err(format!(
            "PUT watchlist: HTTP {s}: {}",
            String::from_utf8_lossy(&b)
        )),
        Err(e) => Err(format!("PUT watchlist: {e}")),
    }
}

fn main() {
    let mut a = parse();
    let watch = a
        .watchlist
        .as_deref()
        .map(|f| match define_watchlist(&a.addr, f) {
            Ok(label) => label,
            Err(e) => {
                eprintln!("serve-load: {e}");
                std::process::exit(1)
            }
        });
    if let Some(label) = &watch {
        a.patterns = vec![label.clone()];
    }
    let deadline = Instant::now() + Duration::from_secs_f64(a.seconds);
    let latencies = Arc::new(Mutex::new(Vec::<Duration>::new()));
    let counts = Arc::new(Mutex::new(BTreeMap::<
        String,
        std::collections::BTreeSet<u64>,
    >::new()));
    let errors = Arc::new(Mutex::new(Vec::<String>::new()));
    let t0 = Instant::now();
    let mut workers = Vec::new();
    for c in 0..a.clients {
        let (addr, pats, pause, warmup) = (a.addr.clone(), a.patterns.clone(), a.pause, a.warmup);
        let syntax = a.syntax.clone();
        let watch = watch.is_some();
        let (latencies, counts, errors) = (latencies.clone(), counts.clone(), errors.clone());
        workers.push(std::thread::spawn(move || {
            let mut conn = match Conn::open(&addr) {
                Ok(c) => c,
                Err(e) => {
                    errors.lock().unwrap().push(format!("connect: {e}"));
                    return;
                }
            };
            let mut mine = Vec::new();
            let mut i = c;
            let mut done = 0usize;
            while Instant::now() < deadline {
                if !pause.is_zero() {
                    std::thread::sleep(pause);
                }
                let p = &pats[i % pats.len()];
                i += 1;
                let t = Instant::now();
                let sent = if watch {
                    let body = serde_json::json!({ "watchlist": WATCHLIST }).to_string();
                    conn.post("/api/v1/patterns", &body)
                } else {
                    conn.post("/api/v1/search", &count_query(p, &syntax))
                };
                match sent {
                    Ok((200, body)) => {
                        let took = t.elapsed();
                        match total_of(&body) {
                            Some(n) => {
                                counts
                                    .lock()
                                    .unwrap()
                                    .entry(p.clone())
                                    .or_default()
                                    .insert(n);
                            }
                            None => errors
                                .lock()
                                .unwrap()
                                .push(format!("no total in {}", String::from_utf8_lossy(&body))),
                        }
                        done += 1;
                        if done > warmup {
                            mine.push(took);
                        }
                    }
                    Ok((s, body)) => {
                        errors
                            .lock()
                            .unwrap()
                            .push(format!("HTTP {s}: {}", String::from_utf8_lossy(&body)));
                        return;
                    }
                    Err(e) => {
                        errors.lock().unwrap().push(format!("request: {e}"));
                        return;
                    }
                }
            }
            latencies.lock().unwrap().extend(mine);
        }));
    }
    for w in workers {
        let _ = w.join();
    }
    let wall = t0.elapsed().as_secs_f64();
    let mut l = latencies.lock().unwrap().clone();
    l.sort();
    let pct = |p: f64| {
        if l.is_empty() {
            f64::NAN
        } else {
            l[((l.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1e3
        }
    };
    let counts = counts.lock().unwrap();
    let mut bad = errors.lock().unwrap().clone();
    for (p, seen) in counts.iter() {
        if seen.len() != 1 {
            bad.push(format!("{p}: answers differ: {seen:?}"));
        }
    }
    let answers: Vec<String> = counts
        .iter()
        .map(|(p, s)| format!("{p}={}", s.iter().next().copied().unwrap_or(0)))
        .collect();
    println!(
        "clients {} pause {} ms: {} requests in {:.1} s = {:.0}/s; p50 {:.3} ms, p90 {:.3}, p99 {:.3}, max {:.3}; {}",
        a.clients,
        a.pause.as_millis(),
        l.len(),
        wall,
        l.len() as f64 / wall,
        pct(0.5),
        pct(0.9),
        pct(0.99),
        pct(1.0),
        answers.join(" ")
    );
    if !bad.is_empty() {
        for b in bad.iter().take(5) {
            eprintln!("serve-load: {b}");
        }
        std::process::exit(1);
    }
}
