//! `/loki/api/v1/tail` over a WebSocket (a minimal client here: the
//! handshake and unmasked server frames): the replay since `start` (the
//! `limit` newest lines, as `query_range` selects them), then the lines
//! appended (through the test-only appender) that the LogQL query selects,
//! against the naive oracle; the message shape of Loki's documentation;
//! Loki's errors (400 text) for what a tail does not take; 429 past
//! `--max-tails`.

// The server state holds the session: proving it `Send + Sync` walks
// wgpu's types, deeper than the default 128 (as in the library).
#![recursion_limit = "256"]

mod common;
#[path = "../../logsieve/tests/common/mod.rs"]
#[allow(unused_imports)]
mod library;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use common::TestServer;
use library::Flags;
use logsieve::Syntax;
use logsieve_server::append::append;
use logsieve_server::Limits;
use serde_json::Value;

/// An open tail: text messages read as they come.
struct Ws(BufReader<TcpStream>);

/// Percent-encodes a query parameter.
fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl Ws {
    /// Opens `/loki/api/v1/tail?PARAMS`; `Err(status, body)` on refusal.
    fn open(addr: SocketAddr, params: &str) -> Result<Ws, (u16, String)> {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(
            s,
            "GET /loki/api/v1/tail?{params} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        )
        .unwrap();
        let mut r = BufReader::new(s);
        let mut status = String::new();
        r.read_line(&mut status).unwrap();
        let code: u16 = status.split(' ').nth(1).unwrap().parse().unwrap();
        let mut len = 0usize;
        loop {
            let mut h = String::new();
            r.read_line(&mut h).unwrap();
            if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                len = v.trim().parse().unwrap();
            }
            if h == "\r\n" {
                break;
            }
        }
        if code != 101 {
            let mut body = vec![0u8; len];
            r.read_exact(&mut body).unwrap();
            return Err((code, String::from_utf8_lossy(&body).into_owned()));
        }
        Ok(Ws(r))
    }

    /// The next text message (pings skipped), as JSON.
    fn message(&mut self) -> Value {
        loop {
            let mut h = [0u8; 2];
            self.0.read_exact(&mut h).unwrap();
            let op = h[0] & 0x0f;
            let mut len = (h[1] & 0x7f) as u64;
            if len == 126 {
                let mut b = [0u8; 2];
                self.0.read_exact(&mut b).unwrap();
                len = u16::from_be_bytes(b) as u64;
            } else if len == 127 {
                let mut b = [0u8; 8];
                self.0.read_exact(&mut b).unwrap();
                len = u64::from_be_bytes(b);
            }
            let mut payload = vec![0u8; len as usize];
            self.0.read_exact(&mut payload).unwrap();
            assert_eq!(h[0] & 0x80, 0x80, "fragmented message");
            if op == 1 {
                return serde_json::from_slice(&payload).unwrap();
            }
            assert!(op == 9 || op == 10, "unexpected frame opcode {op}");
        }
    }

    /// `(stamp in ns, line)` of messages until `n` lines came.
    fn stamped(&mut self, n: usize) -> Vec<(i64, String)> {
        let mut out = Vec::new();
        while out.len() < n {
            let m = self.message();
            check_shape(&m);
            for s in m["streams"].as_array().unwrap() {
                for v in s["values"].as_array().unwrap() {
                    out.push((
                        v[0].as_str().unwrap().parse().unwrap(),
                        v[1].as_str().unwrap().to_string(),
                    ));
                }
            }
        }
        out
    }

    /// `(filename, line)` of messages until `n` lines came.
    fn lines(&mut self, n: usize) -> Vec<(String, String)> {
        let mut out = Vec::new();
        while out.len() < n {
            let m = self.message();
            check_shape(&m);
            for s in m["streams"].as_array().unwrap() {
                let f = s["stream"]["filename"].as_str().unwrap().to_string();
                for v in s["values"].as_array().unwrap() {
                    out.push((f.clone(), v[1].as_str().unwrap().to_string()));
                }
            }
        }
        out
    }
}

/// The shape of Loki's documented tail message: `streams` of `stream`
/// (labels) and `values` (`["<ns>", "<line>"]`), and `dropped_entries`.
fn check_shape(m: &Value) {
    let o = m.as_object().unwrap();
    let mut keys: Vec<&str> = o.keys().map(|k| k.as_str()).collect();
    keys.sort();
    assert_eq!(keys, ["dropped_entries", "streams"]);
    for s in m["streams"].as_array().unwrap() {
        assert!(s["stream"].is_object());
        for v in s["values"].as_array().unwrap() {
            let v = v.as_array().unwrap();
            assert_eq!(v.len(), 2);
            assert!(v[0].as_str().unwrap().parse::<i64>().unwrap() > 0);
            assert!(v[1].is_string());
        }
    }
}

#[test]
fn loki_tail_replays_then_follows_appended_lines() {
    let srv = TestServer::ready(common::session(400), Limits::default(), None);
    // The replay: the 5 newest INFO lines of a.log (times from the stats
    // columns), oldest first.
    let q = enc(r#"{filename="a.log"} |= "INFO""#);
    let mut ws = Ws::open(srv.addr, &format!("query={q}&start=0&limit=5")).unwrap();
    let replay = ws.message();
    check_shape(&replay);
    let values = replay["streams"][0]["values"].as_array().unwrap();
    assert_eq!(values.len(), 5);
    let ts: Vec<i64> = values
        .iter()
        .map(|v| v[0].as_str().unwrap().parse().unwrap())
        .collect();
    assert!(ts.windows(2).all(|w| w[0] <= w[1]));
    assert!(values
        .iter()
        .all(|v| v[1].as_str().unwrap().contains("INFO")));
    // Chained filters over both files, from now on.
    let q2 = enc(r#"{filename=~"a.log|b.log"} |~ "user=u\\d+" != "INFO""#);
    let mut ws2 = Ws::open(srv.addr, &format!("query={q2}&delay_for=0")).unwrap();
    let more = library::generated(300, 11);
    let cut = more[..more.len() / 2]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    append(&srv.state, "a.log", &more[..cut]).unwrap();
    append(&srv.state, "b.log", &more[cut..]).unwrap();
    let lines_of = |data: &[u8], pats: &[&str], syn: Syntax, f: &str| -> Vec<String> {
        let text = String::from_utf8_lossy(data).into_owned();
        let all: Vec<&str> = text.lines().collect();
        library::naive(data, &library::pats(pats), syn, Flags::parse(f))
            .into_iter()
            .map(|i| all[i as usize].to_string())
            .collect()
    };
    let want1: Vec<(String, String)> = lines_of(&more[..cut], &["INFO"], Syntax::Fixed, "")
        .into_iter()
        .map(|l| ("a.log".to_string(), l))
        .collect();
    // Each live line is stamped with its own time (the generated lines'
    // timestamps lie days away from now), the one the replay of the same
    // line gives (query_range's).
    let live = ws.stamped(want1.len());
    assert_eq!(
        live.iter().map(|(_, l)| l.clone()).collect::<Vec<_>>(),
        want1.iter().map(|(_, l)| l.clone()).collect::<Vec<_>>()
    );
    let now_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64;
    assert!(live
        .iter()
        .all(|(t, _)| (*t - now_ns).abs() > 3_600_000_000_000));
    let mut ws3 = Ws::open(srv.addr, &format!("query={q}&start=0&limit=100000")).unwrap();
    let replayed: std::collections::HashMap<String, i64> =
        ws3.stamped(1).into_iter().map(|(t, l)| (l, t)).collect();
    for (t, l) in &live {
        assert_eq!(replayed.get(l), Some(t), "{l}");
    }
    let mut want2 = Vec::new();
    for (name, part) in [("a.log", &more[..cut]), ("b.log", &more[cut..])] {
        let users = lines_of(part, &[r"user=u\d+"], Syntax::Regex, "");
        let not_info = lines_of(part, &["INFO"], Syntax::Fixed, "v");
        for l in users.into_iter().filter(|l| not_info.contains(l)) {
            want2.push((name.to_string(), l));
        }
    }
    assert!(!want2.is_empty());
    assert_eq!(ws2.lines(want2.len()), want2);
}

#[test]
fn loki_tail_errors_as_loki_answers_them() {
    let srv = TestServer::ready(
        common::session(100),
        Limits {
            max_tails: 1,
            ..Default::default()
        },
        None,
    );
    let bad = |q: &str| Ws::open(srv.addr, q).err().unwrap();
    let metric = enc(r#"count_over_time({filename="a.log"}[1m])"#);
    assert_eq!(bad(&format!("query={metric}")).0, 400);
    let host = enc(r#"{host="web-1"}"#);
    let (code, msg) = bad(&format!("query={host}"));
    assert_eq!(code, 400);
    assert!(msg.contains("filename only"), "{msg}");
    let q = enc(r#"{filename="a.log"}"#);
    assert_eq!(bad(&format!("query={q}&delay_for=6")).0, 400);
    assert_eq!(bad("query=%7B").0, 400);
    let _open = Ws::open(srv.addr, &format!("query={q}")).unwrap();
    assert_eq!(bad(&format!("query={q}")).0, 429);
}
