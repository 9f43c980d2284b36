//! What a worker reports: its shards, fields, device and scan counts —
//! `GET /cluster/v1/status` on the worker's one port, beside its gRPC
//! service — and the coordinator's client for it.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The status route's path.
pub const STATUS_PATH: &str = "/cluster/v1/status";

/// One shard a worker holds: one file of the corpus.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ShardInfo {
    /// The file's name as the worker loaded it (the shard's key: every
    /// worker given the same paths names it the same).
    pub name: String,
    /// Its bytes.
    pub bytes: u64,
    /// Its lines.
    pub lines: u64,
    /// Scans of it this worker ran.
    pub scans: u64,
}

/// A worker's report.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkerStatus {
    /// The address it listens on.
    pub listen: String,
    /// The shards it holds, in load order.
    pub shards: Vec<ShardInfo>,
    /// The `logs` table's field columns (`level`, `host`, `--field`s).
    pub fields: Vec<String>,
    /// Where its corpus is: the GPU adapter's name, or `cpu`.
    pub device: String,
    /// The logsieve version.
    pub version: String,
    /// It follows its files (`--follow`): its shards grow, and new
    /// files become shards.
    #[serde(default)]
    pub following: bool,
}

/// A worker's address as a URL: `HOST:PORT` or `http://HOST:PORT`.
pub fn worker_url(addr: &str) -> Result<url::Url, String> {
    let a = addr.trim();
    if a.starts_with("https://") {
        return Err(format!(
            "worker {a}: https is not supported between nodes (use http:// and a token)"
        ));
    }
    let full = if a.starts_with("http://") {
        a.to_string()
    } else {
        format!("http://{a}")
    };
    let u = url::Url::parse(&full).map_err(|e| format!("worker {a:?}: {e}"))?;
    if u.host_str().is_none() || u.port().is_none() {
        return Err(format!("worker {a:?}: expected HOST:PORT"));
    }
    Ok(u)
}

/// The comma-separated list of `--cluster ADDR[,ADDR...]`.
pub fn worker_urls(list: &str) -> Result<Vec<url::Url>, String> {
    let mut out: Vec<url::Url> = Vec::new();
    for a in list.split(',').filter(|a| !a.trim().is_empty()) {
        let u = worker_url(a)?;
        if !out.contains(&u) {
            out.push(u);
        }
    }
    if out.is_empty() {
        return Err("--cluster: no worker address given".into());
    }
    Ok(out)
}

/// `GET /cluster/v1/status` of the worker at `url` (HTTP/1.1, within
/// `timeout`).
pub async fn fetch(
    url: &url::Url,
    token: Option<&str>,
    timeout: Duration,
) -> Result<WorkerStatus, String> {
    let host = url.host_str().unwrap_or("127.0.0.1");
    let port = url.port().unwrap_or(80);
    let work = async {
        let mut s = tokio::net::TcpStream::connect((host, port))
            .await
            .map_err(|e| format!("cannot connect: {e}"))?;
        let _ = s.set_nodelay(true);
        let auth = token.map_or(String::new(), |t| format!("authorization: Bearer {t}\r\n"));
        let req = format!(
            "GET {STATUS_PATH} HTTP/1.1\r\nhost: {host}:{port}\r\n{auth}connection: close\r\n\r\n"
        );
        s.write_all(req.as_bytes())
            .await
            .map_err(|e| format!("cannot send: {e}"))?;
        let mut raw = Vec::new();
        s.read_to_end(&mut raw)
            .await
            .map_err(|e| format!("cannot read: {e}"))?;
        Ok::<_, String>(raw)
    };
    let raw = tokio::time::timeout(timeout, work)
        .await
        .map_err(|_| format!("no answer in {} ms", timeout.as_millis()))??;
    let head_end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("a truncated answer")?;
    let head = String::from_utf8_lossy(&raw[..head_end]);
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse::<u16>().ok())
        .ok_or("not an HTTP answer")?;
    let body = &raw[head_end + 4..];
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body).ok_or("a bad chunked body")?
    } else {
        body.to_vec()
    };
    if status != 200 {
        return Err(format!(
            "HTTP {status}: {}",
            String::from_utf8_lossy(&body).trim()
        ));
    }
    serde_json::from_slice(&body).map_err(|e| format!("not a worker's status: {e}"))
}

fn dechunk(mut b: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let nl = b.windows(2).position(|w| w == b"\r\n")?;
        let size = usize::from_str_radix(std::str::from_utf8(&b[..nl]).ok()?.trim(), 16).ok()?;
        b = &b[nl + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(b.get(..size)?);
        b = b.get(size + 2..)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_with_or_without_a_scheme_and_refuse_https() {
        assert_eq!(
            worker_url("127.0.0.1:7001").unwrap().as_str(),
            "http://127.0.0.1:7001/"
        );
        assert_eq!(
            worker_url("http://localhost:7002").unwrap().as_str(),
            "http://localhost:7002/"
        );
        assert!(worker_url("https://h:1").unwrap_err().contains("https"));
        assert!(worker_url("h").unwrap_err().contains("HOST:PORT"));
        let v = worker_urls("a:1, a:1,b:2,").unwrap();
        assert_eq!(v.len(), 2);
        assert!(worker_urls(" , ").is_err());
    }

    #[test]
    fn chunked_bodies_are_joined() {
        assert_eq!(
            dechunk(b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n").unwrap(),
            b"abcde"
        );
        assert!(dechunk(b"9\r\nab").is_none());
    }
}
