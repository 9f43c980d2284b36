//! The benchmarks' HTTP/1.1 client over loopback (the soak, `serve-load`):
//! one keep-alive connection ([`Conn`]) and a reader of server-sent events
//! ([`Sse`]).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Percent-encodes a query parameter's value.
pub fn url_encode(s: &str) -> String {
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
pub struct Sse {
    /// The body is chunked.
    pub chunked: bool,
    /// Bytes read and not yet returned as events.
    pub buf: Vec<u8>,
}

impl Sse {
    /// The next event: (name, data); keep-alive comments are skipped.
    pub fn next(&mut self, k: &mut Conn) -> std::io::Result<(String, String)> {
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
pub struct Conn {
    addr: SocketAddr,
    /// The connection, buffered for reading.
    pub reader: BufReader<TcpStream>,
}

impl Conn {
    /// Connects to `addr` (`host:port`, the first address it resolves to).
    pub fn connect(addr: &str) -> std::io::Result<Conn> {
        let a = addr
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| std::io::Error::other(format!("{addr} resolves to no address")))?;
        Conn::open(a)
    }

    /// Connects to `addr` (10 s to connect, 60 s a read).
    pub fn open(addr: SocketAddr) -> std::io::Result<Conn> {
        let s = TcpStream::connect_timeout(&addr, Duration::from_secs(10))?;
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(Duration::from_secs(60)))?;
        Ok(Conn {
            addr,
            reader: BufReader::new(s),
        })
    }

    /// Sends a request's head and its `len`-byte JSON `body`.
    pub fn send(
        &mut self,
        method: &str,
        path: &str,
        len: usize,
        body: &[u8],
    ) -> std::io::Result<()> {
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {len}\r\n\r\n",
            self.addr
        );
        let s = self.reader.get_mut();
        s.write_all(head.as_bytes())?;
        s.write_all(body)
    }

    /// The status line and headers: (status, content-length, chunked).
    pub fn head(&mut self) -> std::io::Result<(u16, Option<usize>, bool)> {
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

    /// The body after [`Conn::head`] (chunked or of `len` bytes).
    pub fn body(&mut self, len: Option<usize>, chunked: bool) -> std::io::Result<Vec<u8>> {
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

    /// Sends `method path` with a JSON `body`; the status and the body.
    pub fn request(
        &mut self,
        method: &str,
        path: &str,
        body: &str,
    ) -> std::io::Result<(u16, Vec<u8>)> {
        self.send(method, path, body.len(), body.as_bytes())?;
        let (status, len, chunked) = self.head()?;
        Ok((status, self.body(len, chunked)?))
    }
}
