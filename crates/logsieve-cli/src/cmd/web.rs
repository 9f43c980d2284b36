//! `logsieve web`: serves the browser page (built by `scripts/build-web.sh`)
//! on 127.0.0.1 and prints its URL. A static file server in a page of std:
//! GET and HEAD, a thread per connection, loopback only, and a
//! Content-Security-Policy that lets the page talk to nothing but this
//! server (the logs never leave the machine).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};

use crate::exit::{err, EXIT_ERROR};
use crate::flags::WebArgs;

/// Where the page is looked for when `--dir` is not given.
fn default_dirs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(d) = std::env::var_os("LOGSIEVE_WEB_DIR") {
        out.push(PathBuf::from(d));
    }
    // target/release/logsieve -> target/web
    if let Ok(exe) = std::env::current_exe() {
        if let Some(target) = exe.parent().and_then(Path::parent) {
            out.push(target.join("web"));
        }
    }
    out.push(PathBuf::from("target/web"));
    out
}

fn is_built(dir: &Path) -> bool {
    dir.join("index.html").is_file() && dir.join("pkg/logsieve_web_bg.wasm").is_file()
}

/// Runs `logsieve web` until killed; returns the exit code on a set-up error.
pub fn run(a: &WebArgs) -> i32 {
    let candidates = match &a.dir {
        Some(d) => vec![d.clone()],
        None => default_dirs(),
    };
    let Some(dir) = candidates.iter().find(|d| is_built(d)).cloned() else {
        let looked: Vec<String> = candidates.iter().map(|d| d.display().to_string()).collect();
        err(format!(
            "the web page is not built (looked in {}): run scripts/build-web.sh first, \
             or pass --dir DIR",
            looked.join(", ")
        ));
        return EXIT_ERROR;
    };
    let listener = match TcpListener::bind(("127.0.0.1", a.port)) {
        Ok(l) => l,
        Err(e) => {
            err(format!("cannot listen on 127.0.0.1:{}: {e}", a.port));
            return EXIT_ERROR;
        }
    };
    let port = listener.local_addr().map_or(a.port, |s| s.port());
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "logsieve web: serving {} at http://127.0.0.1:{port}/ (Ctrl-C stops)",
        dir.display()
    );
    let _ = out.flush();
    drop(out);
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        let dir = dir.clone();
        std::thread::spawn(move || {
            let _ = serve(stream, &dir);
        });
    }
    0
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") | Some("mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("wasm") => "application/wasm",
        Some("json") => "application/json",
        Some("png") => "image/png",
        Some("svg") => "image/svg+xml",
        _ => "application/octet-stream",
    }
}

/// The file a request path names inside `dir`, or `None` for anything that
/// tries to leave it.
fn resolve(dir: &Path, target: &str) -> Option<PathBuf> {
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let path = percent_decode(path)?;
    let mut out = dir.to_path_buf();
    for c in Path::new(path.trim_start_matches('/')).components() {
        match c {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            _ => return None,
        }
    }
    if out.is_dir() {
        out.push("index.html");
    }
    Some(out)
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

const CSP: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; \
                   style-src 'self'; img-src 'self' data:; connect-src 'self'; \
                   worker-src 'self'; object-src 'none'; base-uri 'none'";

fn serve(stream: TcpStream, dir: &Path) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    // Skip the headers.
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h == "\r\n" || h == "\n" {
            break;
        }
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("");
    let target = parts.next().unwrap_or("/");
    let mut w = stream;
    if method != "GET" && method != "HEAD" {
        return respond(
            &mut w,
            "405 Method Not Allowed",
            "text/plain",
            b"GET only\n",
            true,
        );
    }
    let file = resolve(dir, target).filter(|p| p.is_file());
    let Some(file) = file else {
        return respond(&mut w, "404 Not Found", "text/plain", b"not found\n", true);
    };
    match std::fs::read(&file) {
        Ok(body) => respond(
            &mut w,
            "200 OK",
            content_type(&file),
            &body,
            method == "GET",
        ),
        Err(_) => respond(&mut w, "404 Not Found", "text/plain", b"not found\n", true),
    }
}

fn respond(
    w: &mut TcpStream,
    status: &str,
    ctype: &str,
    body: &[u8],
    with_body: bool,
) -> std::io::Result<()> {
    write!(
        w,
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\
         Cache-Control: no-cache\r\nContent-Security-Policy: {CSP}\r\n\
         X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    if with_body {
        w.write_all(body)?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_the_folder() {
        let d = Path::new("/srv/web");
        assert_eq!(
            resolve(d, "/app.js?v=1"),
            Some(PathBuf::from("/srv/web/app.js"))
        );
        assert_eq!(
            resolve(d, "/pkg/a%20b.js"),
            Some(PathBuf::from("/srv/web/pkg/a b.js"))
        );
        assert_eq!(resolve(d, "/../etc/passwd"), None);
        assert_eq!(resolve(d, "/%2e%2e/etc/passwd"), None);
        assert_eq!(resolve(d, "/a/%zz"), None);
        assert_eq!(content_type(Path::new("x.wasm")), "application/wasm");
    }
}
