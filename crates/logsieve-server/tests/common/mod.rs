//! The test harness: a server on 127.0.0.1:0 in a thread of its own, and
//! a minimal HTTP/1.1 client over `std::net::TcpStream` (no client crate
//! to build; `Connection: close`, chunked bodies decoded).

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use logsieve::gen::{generate, GenOptions};
use logsieve::stats::{ColumnOptions, Columns, FieldSpec};
use logsieve::{Corpus, Document, Session};
use logsieve_server::{serve_with, AppState, Limits, Ready};

/// Generated logs split in two files, `a.log` and `b.log`.
pub fn corpus(lines: u64) -> Corpus {
    let data = generate(&GenOptions {
        lines,
        ..Default::default()
    });
    // Cut at a line boundary near the middle.
    let mid = data[..data.len() / 2]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let mut c = Corpus::new();
    c.push(Document::from_bytes("a.log", data[..mid].to_vec()));
    c.push(Document::from_bytes("b.log", data[mid..].to_vec()));
    c
}

/// A CPU session over [`corpus`] with the columns the server builds
/// (level, host, and `user=user=(u\d+)`).
pub fn session(lines: u64) -> Session {
    session_over(corpus(lines))
}

/// A CPU session over `corpus` with the columns of [`session`].
pub fn session_over(corpus: Corpus) -> Session {
    let mut fields: Vec<FieldSpec> = ["level", "host"]
        .iter()
        .filter_map(|n| FieldSpec::builtin(n))
        .collect();
    fields.push(FieldSpec::parse(r"user=user=(u\d+)").unwrap());
    let cols = Columns::build(
        &corpus,
        &ColumnOptions {
            time_format: None,
            year: 2026,
            doc_years: vec![],
            doc_mtimes: vec![None; corpus.docs().len()],
            fields,
        },
    );
    let mut s = Session::new(corpus);
    s.set_columns(cols);
    s
}

/// A server in a thread; stopped (graceful shutdown) when dropped.
pub struct TestServer {
    pub addr: SocketAddr,
    pub state: AppState,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TestServer {
    /// Starts a server still loading (call `state.set_ready`).
    pub fn loading(limits: Limits, token: Option<String>) -> TestServer {
        let state = AppState::new(limits, token);
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let st = state.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                addr_tx.send(l.local_addr().unwrap()).unwrap();
                serve_with(l, st, async {
                    let _ = stop_rx.await;
                })
                .await
                .unwrap();
            });
            rt.shutdown_timeout(Duration::from_secs(1));
        });
        let addr = addr_rx.recv().unwrap();
        TestServer {
            addr,
            state,
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }

    /// Starts a server over `session`, ready.
    pub fn ready(session: Session, limits: Limits, token: Option<String>) -> TestServer {
        let s = TestServer::loading(limits, token);
        s.state.set_ready(Ready::new(session));
        s
    }

    pub fn get(&self, path: &str) -> Resp {
        request(self.addr, "GET", path, &[], b"")
    }

    pub fn post(&self, path: &str, body: &str) -> Resp {
        request(self.addr, "POST", path, &[], body.as_bytes())
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A response.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn text(&self) -> &str {
        std::str::from_utf8(&self.body).unwrap()
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }
    /// `error.kind` of an error body.
    pub fn error_kind(&self) -> String {
        self.json()["error"]["kind"].as_str().unwrap().to_string()
    }
}

/// Sends one request and reads the whole response.
pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Resp {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !body.is_empty() {
        head.push_str("Content-Type: application/json\r\n");
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).unwrap();
    // A server may answer (413) before reading a large body.
    let _ = s.write_all(body);
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    parse(&raw)
}

fn parse(raw: &[u8]) -> Resp {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no header end in {:?}", String::from_utf8_lossy(raw)));
    let head = std::str::from_utf8(&raw[..end]).unwrap();
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut body = raw[end + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked {
        body = dechunk(&body);
    }
    Resp {
        status,
        headers,
        body,
    }
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(nl) = b.windows(2).position(|w| w == b"\r\n") {
        let size_text = std::str::from_utf8(&b[..nl]).unwrap();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).unwrap();
        b = &b[nl + 2..];
        if size == 0 {
            break;
        }
        out.extend_from_slice(&b[..size]);
        b = &b[size + 2..];
    }
    out
}

/// Replaces every ripgrep duration object's numbers (wall times differ
/// run to run) so two outputs compare byte for byte.
pub fn normalize_elapsed(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("{\"secs\":") {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let close = tail.find('}').unwrap();
        out.push_str("{\"secs\":0,\"nanos\":0,\"human\":\"0s\"}");
        rest = &tail[close + 1..];
    }
    out.push_str(rest);
    zero_summary_bytes_printed(out)
}

/// The summary's `bytes_printed` zeroed: it counts the `end` messages'
/// bytes, whose elapsed times print in 2 to 8 characters (a flake seen
/// under load, 87,974 against 87,976 bytes).
fn zero_summary_bytes_printed(s: String) -> String {
    s.split_inclusive('\n')
        .map(|l| {
            match (
                l.starts_with("{\"type\":\"summary\""),
                l.find("\"bytes_printed\":"),
            ) {
                (true, Some(i)) => {
                    let start = i + "\"bytes_printed\":".len();
                    let end = start + l[start..].find(|c: char| !c.is_ascii_digit()).unwrap_or(0);
                    format!("{}0{}", &l[..start], &l[end..])
                }
                _ => l.to_string(),
            }
        })
        .collect()
}

/// The writers' random bursts (`follow.rs`, `retain.rs`): the library's
/// generator, the one every test and benchmark draws from.
#[allow(unused_imports)]
pub use logsieve::gen::SplitMix64 as Rng;
