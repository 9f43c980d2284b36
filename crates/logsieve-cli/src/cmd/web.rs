//! `logsieve web`: serves the browser page on 127.0.0.1 and prints its URL.
//! The page's files are in the binary (`logsieve_server::page`); its
//! WebAssembly engine is built once by `scripts/build-web.sh` and found
//! where that writes (or `--dir`); without it, this says exactly what to
//! run and exits 2. A static file server in a page of std:
//! GET and HEAD, a thread per connection, loopback only, and a
//! Content-Security-Policy that lets the page talk to nothing but this
//! server (the logs never leave the machine).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};

use logsieve_server::page::{self, Page, CSP};

use crate::exit::{err, EXIT_ERROR};
use crate::flags::WebArgs;

/// What to run when no wasm bundle is found: the page's own files are in
/// the binary, its engine has to be built once.
fn not_built(looked: &[String]) -> String {
    format!(
        "the page's WebAssembly engine is not built (looked in {}).\n\
         In a logsieve checkout, build it once (installs the wasm32 target and \
         wasm-bindgen-cli if missing):\n    \
         scripts/build-web.sh ~/.local/share/logsieve/web\n\
         then run `logsieve web` again (or `logsieve web --dir DIR` for another folder).\n\
         No build needed to search logs in the page through a server: \
         `logsieve serve --demo` or `logsieve serve FILES...`, then open the URL it prints.",
        looked.join(", ")
    )
}

/// Runs `logsieve web` until killed; returns the exit code on a set-up error.
pub fn run(a: &WebArgs) -> i32 {
    let candidates = match &a.dir {
        Some(d) => vec![d.clone()],
        None => page::default_dirs(),
    };
    let page = Page::find(a.dir.as_deref());
    let Some(dir) = page.bundle.clone() else {
        let looked: Vec<String> = candidates.iter().map(|d| d.display().to_string()).collect();
        err(not_built(&looked));
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
        "logsieve web: serving the page (engine from {}) at http://127.0.0.1:{port}/ (Ctrl-C stops)",
        dir.display()
    );
    let _ = out.flush();
    drop(out);
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        let page = page.clone();
        std::thread::spawn(move || {
            let _ = serve(stream, &page);
        });
    }
    0
}

fn serve(stream: TcpStream, page: &Page) -> std::io::Result<()> {
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
    let path = target.split(['?', '#']).next().unwrap_or("/");
    match page.get(path) {
        Some((ctype, body)) => respond(&mut w, "200 OK", ctype, &body, method == "GET"),
        None => respond(&mut w, "404 Not Found", "text/plain", b"not found\n", true),
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
    fn the_message_says_what_to_run() {
        let m = not_built(&["target/web".into()]);
        assert!(m.contains("scripts/build-web.sh ~/.local/share/logsieve/web"));
        assert!(m.contains("logsieve serve --demo"));
    }
}
