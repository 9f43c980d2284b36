//! `--server URL`: `search` and `stats` asked of a running `logsieve
//! serve` rather than run over files here.
//!
//! The flags become the server's JSON request; the answer is turned back
//! into what the local printers read (a [`RemoteFile`] per file, the
//! `DocHits` of its selected lines, `Stats`, `PatternCounts`), so one
//! printer per format serves both sides and the output is the same bytes.
//! `--json` and `stats --json` pass the server's body through: it is
//! written by the same library encoders as the local output (only the
//! `elapsed` times differ).
//!
//! The HTTP client is plain HTTP/1.1 over a `TcpStream` (`Connection:
//! close`, chunked bodies decoded), the whole answer read before printing.
//! No TLS: an `https://` URL is refused with a message saying so.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use base64::Engine as _;
use logsieve::DocHits;
use serde_json::Value;

use crate::printer::Source;

/// The environment variable that sets `--server`.
pub const SERVER_ENV: &str = "LOGSIEVE_SERVER";

/// `--server`, else `LOGSIEVE_SERVER` (empty: unset).
pub fn server_url(flag: &Option<String>) -> Option<String> {
    flag.clone()
        .or_else(|| std::env::var(SERVER_ENV).ok())
        .filter(|s| !s.is_empty())
}

/// A server's address, from its URL.
pub struct Server {
    url: String,
    /// `host:port`, as connected to and sent in `Host`.
    authority: String,
    /// The path the API sits under (`""` at the root).
    prefix: String,
}

/// An answer: status, headers, body (de-chunked).
pub struct Response {
    pub status: u16,
    headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// A header's value (names compared without case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

impl Server {
    /// Parses `http://HOST[:PORT][/PREFIX]` (no scheme: `http`).
    pub fn parse(url: &str) -> Result<Server, String> {
        let rest = if let Some(r) = url.strip_prefix("http://") {
            r
        } else if url.starts_with("https://") {
            return Err(format!(
                "--server {url}: https is not supported by this client (no TLS); use http:// or a local TLS-terminating tunnel"
            ));
        } else if url.contains("://") {
            return Err(format!("--server {url}: only http:// URLs are supported"));
        } else {
            url
        };
        let (authority, prefix) = match rest.find('/') {
            Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
            None => (rest, ""),
        };
        if authority.is_empty() {
            return Err(format!("--server {url}: no host"));
        }
        let authority = if authority.rsplit_once(':').is_some_and(|(_, p)| {
            !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && !p.contains(']')
        }) {
            authority.to_string()
        } else {
            format!("{authority}:80")
        };
        Ok(Server {
            url: url.to_string(),
            authority,
            prefix: prefix.to_string(),
        })
    }

    /// POSTs `body` as JSON to `path` (under `/api/v1`); a status other
    /// than 200 is an error carrying the server's message.
    pub fn post(&self, path: &str, body: &Value) -> Result<Response, String> {
        let body = serde_json::to_vec(body).map_err(|e| e.to_string())?;
        let resp = self
            .request("POST", &format!("{}/api/v1/{path}", self.prefix), &body)
            .map_err(|e| format!("--server {}: {e}", self.url))?;
        if resp.status == 200 {
            return Ok(resp);
        }
        // The server's errors are `{"error": {"kind", "message"}}`.
        let msg = serde_json::from_slice::<Value>(&resp.body)
            .ok()
            .and_then(|v| v["error"]["message"].as_str().map(str::to_string))
            .unwrap_or_else(|| String::from_utf8_lossy(&resp.body).trim().to_string());
        Err(format!("server answered {}: {msg}", resp.status))
    }

    /// The URL as given.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Sends `method path` (under the URL's prefix) with a JSON `body` on
    /// a new connection and returns it, the answer unread (a stream).
    pub fn send(&self, method: &str, path: &str, body: &[u8]) -> std::io::Result<TcpStream> {
        let mut s = self.connect()?;
        let head = format!(
            "{method} {}{path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\nUser-Agent: logsieve/{}\r\n\r\n",
            self.prefix,
            self.authority,
            body.len(),
            env!("CARGO_PKG_VERSION"),
        );
        s.write_all(head.as_bytes())?;
        let _ = s.write_all(body);
        Ok(s)
    }

    fn connect(&self) -> std::io::Result<TcpStream> {
        let addrs: Vec<_> = self.authority.to_socket_addrs()?.collect();
        let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "no address");
        let mut stream = None;
        for a in addrs {
            match TcpStream::connect_timeout(&a, Duration::from_secs(10)) {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last = e,
            }
        }
        stream.ok_or_else(|| std::io::Error::new(last.kind(), format!("cannot connect: {last}")))
    }

    fn request(&self, method: &str, path: &str, body: &[u8]) -> std::io::Result<Response> {
        let mut s = self.connect()?;
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\nUser-Agent: logsieve/{}\r\n\r\n",
            self.authority,
            body.len(),
            env!("CARGO_PKG_VERSION"),
        );
        s.write_all(head.as_bytes())?;
        // A server may answer (413) before reading all of the body.
        let _ = s.write_all(body);
        let mut raw = Vec::new();
        s.read_to_end(&mut raw)?;
        parse(&raw).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "not an HTTP response (is it a logsieve server?)",
            )
        })
    }
}

/// Parses a whole HTTP/1.1 answer (head and body, chunks decoded).
pub fn parse(raw: &[u8]) -> Option<Response> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..end]).ok()?;
    let mut lines = head.split("\r\n");
    let status: u16 = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut resp = Response {
        status,
        headers,
        body: raw[end + 4..].to_vec(),
    };
    if resp
        .header("transfer-encoding")
        .is_some_and(|v| v.contains("chunked"))
    {
        resp.body = dechunk(&resp.body)?;
    }
    Some(resp)
}

fn dechunk(mut b: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    while let Some(nl) = b.windows(2).position(|w| w == b"\r\n") {
        let size_text = std::str::from_utf8(&b[..nl]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        b = &b[nl + 2..];
        if size == 0 {
            break;
        }
        out.extend_from_slice(b.get(..size)?);
        b = b.get(size + 2..).unwrap_or(&[]);
    }
    Some(out)
}

/// `{"text": ...}` or `{"bytes": base64}` (ripgrep's JSON data) as bytes.
pub fn data_bytes(v: &Value) -> Vec<u8> {
    if let Some(t) = v["text"].as_str() {
        return t.as_bytes().to_vec();
    }
    v["bytes"]
        .as_str()
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .unwrap_or_default()
}

/// The part of a served file the server sent back: its name and the
/// selected and context lines, by line id. Lines it did not send read as
/// empty (the printer asks only for the ones sent).
#[derive(Default)]
pub struct RemoteFile {
    name: String,
    /// Line id → (start offset, text without `\n`).
    lines: BTreeMap<u64, (u64, Vec<u8>)>,
    binary_offset: Option<u64>,
}

impl RemoteFile {
    fn named(name: String) -> RemoteFile {
        RemoteFile {
            name,
            ..Default::default()
        }
    }
}

impl Source for RemoteFile {
    fn name(&self) -> &str {
        &self.name
    }
    fn line(&self, id: u64) -> &[u8] {
        self.lines.get(&id).map_or(&[], |(_, t)| &t[..])
    }
    fn line_start(&self, id: u64) -> u64 {
        self.lines.get(&id).map_or(0, |(s, _)| *s)
    }
    fn line_at(&self, start: u64) -> &[u8] {
        self.lines
            .values()
            .find(|(s, _)| *s == start)
            .map_or(&[], |(_, t)| &t[..])
    }
    /// The server sends context up to the file's end, never past it, so
    /// the last line sent bounds the context the printer asks for.
    fn line_count(&self) -> u64 {
        self.lines.keys().next_back().map_or(0, |&l| l + 1)
    }
    fn binary_offset(&self) -> Option<u64> {
        self.binary_offset
    }
}

/// Files and their hits, rebuilt from an answer, and how many files the
/// server searched.
pub struct Answer {
    pub files: Vec<(RemoteFile, DocHits)>,
    pub searched: u64,
}

/// Rebuilds the files from a `lines` answer (NDJSON in ripgrep's schema:
/// `begin`, `match`, `context`, `end`, `summary`).
pub fn read_lines(body: &[u8]) -> Result<Answer, String> {
    let mut files: Vec<(RemoteFile, DocHits)> = Vec::new();
    let mut searched = 0;
    for line in body.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let v: Value = serde_json::from_slice(line)
            .map_err(|e| format!("the server's answer is not NDJSON: {e}"))?;
        let d = &v["data"];
        match v["type"].as_str() {
            Some("begin") => {
                let name = String::from_utf8_lossy(&data_bytes(&d["path"])).into_owned();
                files.push((RemoteFile::named(name), DocHits::default()));
            }
            Some(kind @ ("match" | "context")) => {
                let Some((file, hits)) = files.last_mut() else {
                    return Err("the server's answer has a line before its file".into());
                };
                let id = d["line_number"].as_u64().unwrap_or(1).saturating_sub(1);
                let start = d["absolute_offset"].as_u64().unwrap_or(0);
                let mut text = data_bytes(&d["lines"]);
                if text.last() == Some(&b'\n') {
                    text.pop();
                }
                file.lines.insert(id, (start, text));
                if kind == "match" {
                    hits.lines.push(id);
                    hits.count += 1;
                }
            }
            Some("end") => {
                if let Some((file, _)) = files.last_mut() {
                    file.binary_offset = d["binary_offset"].as_u64();
                }
            }
            Some("summary") => searched = d["stats"]["searches"].as_u64().unwrap_or(0),
            _ => {}
        }
    }
    Ok(Answer { files, searched })
}

/// Rebuilds the files from a `count` answer: every searched file, with its
/// count and no lines.
pub fn read_counts(body: &[u8]) -> Result<Answer, String> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| format!("the server's answer is not JSON: {e}"))?;
    let files: Vec<(RemoteFile, DocHits)> = v["files"]
        .as_array()
        .map(|a| a.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|f| {
            let name = f["path"].as_str().unwrap_or_default().to_string();
            let hits = DocHits {
                count: f["count"].as_u64().unwrap_or(0),
                ..Default::default()
            };
            (RemoteFile::named(name), hits)
        })
        .collect();
    Ok(Answer {
        searched: files.len() as u64,
        files,
    })
}

/// The request fields a [`logsieve::Query`] fixes: `patterns`, `syntax`,
/// `fuzzy_k`, `ignore_case`, `word`, and `line` and `invert` where the
/// endpoint takes them. The server builds the same query from them (smart
/// case was resolved here).
pub fn query_fields(
    q: &logsieve::Query,
    line: bool,
    invert: bool,
) -> Result<serde_json::Map<String, Value>, String> {
    use logsieve::CaseMode;
    let patterns = q
        .patterns()
        .iter()
        .map(|p| {
            String::from_utf8(p.clone())
                .map(Value::String)
                .map_err(|_| "--server: a pattern that is not UTF-8 cannot be sent".to_string())
        })
        .collect::<Result<Vec<_>, _>>()?;
    let (syntax, k) = q.syntax().name();
    let mut m = serde_json::Map::new();
    m.insert("patterns".into(), Value::Array(patterns));
    m.insert("syntax".into(), syntax.into());
    if let Some(k) = k {
        m.insert("fuzzy_k".into(), k.into());
    }
    m.insert(
        "ignore_case".into(),
        (q.case() != CaseMode::Sensitive).into(),
    );
    m.insert("word".into(), q.word().into());
    if line {
        m.insert("line".into(), q.whole_line().into());
    }
    if invert {
        m.insert("invert".into(), q.invert().into());
    }
    Ok(m)
}

/// `--backend` as the API names it.
pub fn backend_name(b: crate::flags::BackendArg) -> &'static str {
    match b {
        crate::flags::BackendArg::Auto => "auto",
        crate::flags::BackendArg::Cpu => "cpu",
        crate::flags::BackendArg::Gpu => "gpu",
    }
}
