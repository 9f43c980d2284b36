#![recursion_limit = "256"]
//! The page at `/`: its files (compiled in) and the wasm bundle (from a
//! folder) with the right content types and the CSP, `/page.json`, public
//! under a token while the API is not, nothing outside the bundle served.
// The server state holds the session: proving it `Send + Sync` walks
// wgpu's types, deeper than the default 128 (as in the library).

mod common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{request, session, Resp};
use logsieve_server::page::Page;
use logsieve_server::{router_with_page, AppState, Limits, Ready};

/// A server with `page` at `/`, on 127.0.0.1:0, stopped when dropped.
struct PageServer {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl PageServer {
    fn start(page: Page, token: Option<String>) -> PageServer {
        let state = AppState::new(Limits::default(), token);
        state.set_ready(Ready::new(session(500)));
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                addr_tx.send(l.local_addr().unwrap()).unwrap();
                axum::serve(l, router_with_page(state, page))
                    .with_graceful_shutdown(async {
                        let _ = stop_rx.await;
                    })
                    .await
                    .unwrap();
            });
            rt.shutdown_timeout(Duration::from_secs(1));
        });
        PageServer {
            addr: addr_rx.recv().unwrap(),
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }

    fn get(&self, path: &str, headers: &[(&str, &str)]) -> Resp {
        request(self.addr, "GET", path, headers, b"")
    }
}

impl Drop for PageServer {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn www(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../logsieve-web/www")
        .join(name);
    std::fs::read(p).unwrap()
}

/// A folder shaped like scripts/build-web.sh's output (the bytes need not
/// be a real module: the server serves files, the browser runs them).
fn bundle(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("logsieve-page-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(d.join("pkg/snippets/x")).unwrap();
    std::fs::write(d.join("pkg/logsieve_web.js"), b"export default 1;\n").unwrap();
    std::fs::write(d.join("pkg/logsieve_web_bg.wasm"), b"\0asm\x01\0\0\0").unwrap();
    std::fs::write(d.join("pkg/snippets/x/inline0.js"), b"export {};\n").unwrap();
    std::fs::write(d.join("secret.txt"), b"not served\n").unwrap();
    d
}

#[test]
fn the_page_and_its_assets_are_served_with_their_content_types() {
    let dir = bundle("types");
    let srv = PageServer::start(Page::find(Some(&dir)), None);
    for (path, file, ctype) in [
        ("/", "index.html", "text/html; charset=utf-8"),
        ("/index.html", "index.html", "text/html; charset=utf-8"),
        ("/app.js", "app.js", "text/javascript; charset=utf-8"),
        ("/server.js", "server.js", "text/javascript; charset=utf-8"),
        ("/worker.js", "worker.js", "text/javascript; charset=utf-8"),
        ("/style.css", "style.css", "text/css; charset=utf-8"),
    ] {
        let r = srv.get(path, &[]);
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.header("content-type"), Some(ctype), "{path}");
        assert_eq!(r.body, www(file), "{path} is the compiled-in www/{file}");
        let csp = r.header("content-security-policy").unwrap_or("");
        assert!(csp.contains("connect-src 'self'"), "{path}: {csp}");
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    }
    let r = srv.get("/pkg/logsieve_web_bg.wasm", &[]);
    assert_eq!(
        (r.status, r.header("content-type")),
        (200, Some("application/wasm"))
    );
    assert_eq!(r.body, b"\0asm\x01\0\0\0");
    let r = srv.get("/pkg/logsieve_web.js", &[]);
    assert_eq!(
        (r.status, r.header("content-type")),
        (200, Some("text/javascript; charset=utf-8"))
    );
    let r = srv.get("/pkg/snippets/x/inline0.js", &[]);
    assert_eq!(r.status, 200);
    // HEAD answers as GET without a body.
    let r = request(srv.addr, "HEAD", "/app.js", &[], b"");
    assert_eq!(
        (r.status, r.header("content-type")),
        (200, Some("text/javascript; charset=utf-8"))
    );
    assert!(r.body.is_empty());
    let r = srv.get("/page.json", &[]);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(
        r.json(),
        serde_json::json!({"api": true, "wasm": true, "token": false})
    );
    // Nothing but the bundle's pkg/ comes from the folder.
    for path in [
        "/pkg/../secret.txt",
        "/pkg/%2e%2e/secret.txt",
        "/secret.txt",
        "/pkg/",
        "/pkg/nope.js",
    ] {
        let r = srv.get(path, &[]);
        assert_eq!(r.status, 404, "{path}");
        assert!(!r.text().contains("not served"), "{path}");
    }
    // The API is still there.
    assert_eq!(srv.get("/api/v1/health", &[]).json()["status"], "ready");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn without_a_bundle_the_page_says_so_and_pkg_is_404() {
    let empty = std::env::temp_dir().join(format!("logsieve-page-{}-empty", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let srv = PageServer::start(Page::find(Some(&empty)), None);
    assert_eq!(srv.get("/", &[]).status, 200);
    assert_eq!(
        srv.get("/page.json", &[]).json(),
        serde_json::json!({"api": true, "wasm": false, "token": false})
    );
    let r = srv.get("/pkg/logsieve_web.js", &[]);
    assert_eq!((r.status, r.error_kind().as_str()), (404, "not_found"));
    assert!(r.text().contains("build-web.sh"), "{}", r.text());
    let _ = std::fs::remove_dir_all(empty);
}

#[test]
fn under_a_token_the_page_is_public_and_the_api_is_not() {
    let srv = PageServer::start(Page::default(), Some("s3cret".into()));
    for path in ["/", "/app.js", "/server.js", "/worker.js", "/style.css"] {
        assert_eq!(srv.get(path, &[]).status, 200, "{path}");
    }
    assert_eq!(
        srv.get("/page.json", &[]).json(),
        serde_json::json!({"api": true, "wasm": false, "token": true})
    );
    let r = srv.get("/api/v1/health", &[]);
    assert_eq!((r.status, r.error_kind().as_str()), (401, "unauthorized"));
    assert_eq!(srv.get("/metrics", &[]).status, 401);
    // An unknown path is not a way around the token either.
    assert_eq!(srv.get("/nope", &[]).status, 401);
    let r = srv.get("/api/v1/health", &[("Authorization", "Bearer s3cret")]);
    assert_eq!(r.status, 200);
}
