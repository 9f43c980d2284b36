//! The web page, served at `/` by `logsieve serve` and by `logsieve web`.
//!
//! The page's own files (`crates/logsieve-web/www/`: HTML, JS, CSS,
//! 64 KB in all) are compiled into the binary, so a plain `cargo install`
//! serves them and they always match the server that serves them. The
//! WebAssembly engine (`pkg/`, the in-browser engine for files dropped into
//! the page) is built by `scripts/build-web.sh` (a wasm32 build plus
//! wasm-bindgen: minutes, and a toolchain CI does not build every run), so
//! it is read at run time from a folder when one holds it ([`Page::find`]);
//! without it the page offers the server's corpus alone.
//!
//! `GET /page.json` tells the page what it has: `{"api", "wasm", "token"}`
//! (the API of a `logsieve serve` behind it, the wasm engine, whether the
//! API wants a bearer token). The page's files and `/page.json` are public
//! even with `--token-file`: they hold no log data (the same bytes as any
//! logsieve binary); every `/api` route still checks the token.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use axum::extract::{Path as UrlPath, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

/// The page talks to this server only: scripts, the wasm module, its
/// worker and its fetches are all same-origin (the logs never leave).
pub const CSP: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; \
                       style-src 'self'; img-src 'self' data:; connect-src 'self'; \
                       worker-src 'self'; object-src 'none'; base-uri 'none'";

/// The page's files, compiled in: (URL path, content type, bytes).
const FILES: &[(&str, &str, &[u8])] = &[
    (
        "index.html",
        "text/html; charset=utf-8",
        include_bytes!("../../logsieve-web/www/index.html"),
    ),
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../logsieve-web/www/app.js"),
    ),
    (
        "server.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../logsieve-web/www/server.js"),
    ),
    (
        "worker.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../logsieve-web/www/worker.js"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_bytes!("../../logsieve-web/www/style.css"),
    ),
];

/// The file of the wasm bundle that says a folder holds one.
const WASM: &str = "pkg/logsieve_web_bg.wasm";

/// What `/` serves: the compiled-in page, and the wasm bundle's folder
/// when there is one.
#[derive(Clone, Debug, Default)]
pub struct Page {
    /// A folder built by `scripts/build-web.sh` (its `pkg/` is served).
    pub bundle: Option<PathBuf>,
    /// True when the `/api/v1` routes are served beside the page.
    pub api: bool,
    /// True when the API wants `Authorization: Bearer TOKEN`.
    pub token: bool,
}

/// True when `dir` holds a wasm bundle.
pub fn has_bundle(dir: &Path) -> bool {
    dir.join(WASM).is_file()
}

/// Where the wasm bundle is looked for when no folder is named:
/// `$LOGSIEVE_WEB_DIR`, `target/web` beside the executable's folder
/// (`target/release/logsieve` → `target/web`, where `scripts/build-web.sh`
/// writes), `$XDG_DATA_HOME/logsieve/web` (default
/// `~/.local/share/logsieve/web`, for an installed binary), `./target/web`.
pub fn default_dirs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(d) = std::env::var_os("LOGSIEVE_WEB_DIR") {
        out.push(PathBuf::from(d));
    }
    if let Ok(exe) = std::env::current_exe() {
        if let Some(target) = exe.parent().and_then(Path::parent) {
            out.push(target.join("web"));
        }
    }
    if let Some(d) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        out.push(PathBuf::from(d).join("logsieve/web"));
    } else if let Some(h) = std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        out.push(PathBuf::from(h).join(".local/share/logsieve/web"));
    }
    out.push(PathBuf::from("target/web"));
    out
}

impl Page {
    /// The page with the wasm bundle of `dir` (only that folder), or of the
    /// first of [`default_dirs`] that holds one; none found: the page
    /// without its in-browser engine.
    pub fn find(dir: Option<&Path>) -> Page {
        let bundle = match dir {
            Some(d) => has_bundle(d).then(|| d.to_path_buf()),
            None => default_dirs().into_iter().find(|d| has_bundle(d)),
        };
        Page {
            bundle,
            ..Page::default()
        }
    }

    /// `/page.json`.
    pub fn describe(&self) -> String {
        serde_json::json!({
            "api": self.api,
            "wasm": self.bundle.is_some(),
            "token": self.token,
        })
        .to_string()
    }

    /// The content type and bytes of the URL path `path` (no query), or
    /// `None` (404). Only the page's own files, `/page.json`, and files
    /// under the bundle's `pkg/` are served.
    pub fn get(&self, path: &str) -> Option<(&'static str, Vec<u8>)> {
        let name = path.trim_start_matches('/');
        let name = if name.is_empty() { "index.html" } else { name };
        if name == "page.json" {
            return Some(("application/json", self.describe().into_bytes()));
        }
        if let Some((_, ctype, bytes)) = FILES.iter().find(|(n, _, _)| *n == name) {
            return Some((ctype, bytes.to_vec()));
        }
        let rest = name.strip_prefix("pkg/")?;
        let file = inside(&self.bundle.as_ref()?.join("pkg"), rest)?;
        let bytes = std::fs::read(&file).ok()?;
        Some((content_type(&file), bytes))
    }
}

/// The file `rel` names inside `dir`, or `None` for anything that would
/// leave it (`..`, absolute, a bad percent escape).
pub fn inside(dir: &Path, rel: &str) -> Option<PathBuf> {
    let rel = percent_decode(rel)?;
    let mut out = dir.to_path_buf();
    let mut any = false;
    for c in Path::new(&rel).components() {
        match c {
            Component::Normal(p) => {
                out.push(p);
                any = true;
            }
            Component::CurDir => {}
            _ => return None,
        }
    }
    any.then_some(out)
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

/// The content type of a served file, by extension.
pub fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") | Some("mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("wasm") => "application/wasm",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    }
}

/// The page's routes (GET and HEAD), to be merged outside the token check.
pub fn routes<S: Clone + Send + Sync + 'static>(page: Page) -> Router<S> {
    let page = Arc::new(page);
    let one = |p: &'static str| {
        let page = page.clone();
        get(move || async move { respond(&page, p) })
    };
    Router::new()
        .route("/", one("/"))
        .route("/index.html", one("/index.html"))
        .route("/page.json", one("/page.json"))
        .route("/app.js", one("/app.js"))
        .route("/server.js", one("/server.js"))
        .route("/worker.js", one("/worker.js"))
        .route("/style.css", one("/style.css"))
        .route(
            "/pkg/{*rest}",
            get(
                |State(page): State<Arc<Page>>, UrlPath(rest): UrlPath<String>| async move {
                    respond(&page, &format!("/pkg/{rest}"))
                },
            )
            .with_state(page.clone()),
        )
}

fn respond(page: &Page, path: &str) -> Response {
    match page.get(path) {
        Some((ctype, body)) => {
            let mut r = body.into_response();
            let h = r.headers_mut();
            h.insert(header::CONTENT_TYPE, HeaderValue::from_static(ctype));
            h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            h.insert(
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(CSP),
            );
            h.insert(
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            );
            r
        }
        None => {
            let msg = if path.starts_with("/pkg/") && page.bundle.is_none() {
                "no wasm bundle is served (scripts/build-web.sh builds one; --web-dir names it)"
            } else {
                "not found"
            };
            crate::ApiError::new(StatusCode::NOT_FOUND, "not_found", msg).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_the_bundle() {
        let d = Path::new("/srv/web/pkg");
        assert_eq!(inside(d, "a.js"), Some(PathBuf::from("/srv/web/pkg/a.js")));
        assert_eq!(
            inside(d, "s/a%20b.js"),
            Some(PathBuf::from("/srv/web/pkg/s/a b.js"))
        );
        assert_eq!(inside(d, "../etc/passwd"), None);
        assert_eq!(inside(d, "%2e%2e/etc/passwd"), None);
        assert_eq!(inside(d, "/etc/passwd"), None);
        assert_eq!(inside(d, "a/%zz"), None);
        assert_eq!(inside(d, ""), None);
        assert_eq!(content_type(Path::new("x.wasm")), "application/wasm");
    }

    #[test]
    fn the_page_is_compiled_in_and_pkg_needs_a_bundle() {
        let p = Page::default();
        let (t, b) = p.get("/").unwrap();
        assert_eq!(t, "text/html; charset=utf-8");
        assert!(String::from_utf8(b).unwrap().contains("app.js"));
        assert!(p.get("/pkg/logsieve_web.js").is_none());
        assert!(p.get("/Cargo.toml").is_none());
        let j: serde_json::Value = serde_json::from_slice(&p.get("/page.json").unwrap().1).unwrap();
        assert_eq!(
            j,
            serde_json::json!({"api": false, "wasm": false, "token": false})
        );
    }
}
