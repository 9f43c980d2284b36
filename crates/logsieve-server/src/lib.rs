/*!
`logsieve serve`: a log corpus loaded once — files, directories, `.gz`, or
generated logs — kept resident in one [`logsieve::Session`] (on the GPU
when a hardware adapter exists) and queried over HTTP by many clients.

# Overview

* [`run`] is the whole command: check the flags, bind, print `listening on
  http://ADDR:PORT/`, load on a thread of its own while the API already
  answers (`/api/v1/health` says `loading`, queries 503), serve until
  SIGINT/SIGTERM.
* [`serve_with`] serves a [`router`] on a listener you bound, with an
  [`AppState`] you control (tests load it themselves with
  [`AppState::set_ready`]).
* Routes ([`api`]): `GET /api/v1/health`, `POST /api/v1/search` (NDJSON in
  ripgrep's `--json` schema, from [`logsieve::rg_json`], or one JSON
  object for counts), `POST /api/v1/stats`, `POST /api/v1/patterns`,
  `GET /api/v1/openapi.json`, `GET /metrics`, and `GET /api/v1/tail`
  (server-sent events: new lines that match, from now on; [`tail`]). Every query goes through the
  session's one routing point (`Session::route` then `Session::execute`) on
  a blocking thread; the server decides nothing about backends.
* Limits: body size (413), in-flight queries (429), a deadline (504), all
  answered as `{"error": {"kind", "message"}}`; a panic in a handler is
  caught and answered 500.

# Example

```no_run
# async fn f() -> std::io::Result<()> {
use logsieve::{Corpus, Session};
use logsieve_server::{serve_with, AppState, Limits, Ready};

let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
let state = AppState::new(Limits::default(), None);
state.set_ready(Ready::new(Session::new(Corpus::from_bytes("a.log", b"x\n".to_vec()))));
serve_with(listener, state, std::future::pending()).await
# }
```

# Features

* `tls` (default): `--tls-cert/--tls-key` with rustls (ring provider).
*/
#![deny(missing_docs)]
// Proving the session `Send + Sync` walks wgpu's resource types (a
// watchlist keeps its GPU tables and counters): deeper than the default
// 128.
#![recursion_limit = "256"]

pub mod api;
pub mod append;
pub use logsieve::auth;
pub mod error;
pub mod follow;
pub mod live;
pub mod load;
pub mod loki;
pub mod metrics;
pub mod page;
pub mod state;
pub mod tail;
#[cfg(feature = "tls")]
pub mod tls;

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::cors::{AllowOrigin, CorsLayer};

pub use error::ApiError;
pub use load::{GpuMode, LoadConfig, Source};
pub use state::{AppState, Limits, Ready, ReadyRef};

/// Everything `logsieve serve` was asked.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// Where to listen (`127.0.0.1:8788` by default; port 0 = any).
    pub listen: SocketAddr,
    /// `--token-file`.
    pub token_file: Option<PathBuf>,
    /// `--tls-cert`, `--tls-key`.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// `--cors ORIGIN` (repeatable); none: no CORS headers.
    pub cors: Vec<String>,
    /// Limits per request.
    pub limits: Limits,
    /// What to load and how.
    pub load: LoadConfig,
    /// `--web-dir`: the wasm bundle of the page at `/` (built by
    /// `scripts/build-web.sh`); `None`: looked for in [`page::default_dirs`].
    pub web_dir: Option<PathBuf>,
    /// `--cluster ADDR[,ADDR...]` and the workers' token: answer from a
    /// cluster's workers instead of loading files.
    pub cluster: Option<(String, Option<String>)>,
}

/// A failure of `logsieve serve` before or while serving (exit 2).
#[derive(Debug)]
pub struct ServeError(pub String);

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ServeError {}

/// The routes, the token check, limits and panic catching, without CORS;
/// the page at `/` without its wasm bundle.
pub fn router(state: AppState) -> Router {
    router_with_page(state, page::Page::default())
}

/// [`router`] with the page `page` at `/` (public: the token guards the
/// API, not the page's files).
pub fn router_with_page(state: AppState, mut page: page::Page) -> Router {
    let max_body = state.limits().max_body;
    page.api = true;
    page.token = state.0.token.is_some();
    let mut routes = Router::new();
    if append::enabled() {
        routes = routes.route("/api/v1/_test/append", post(append::route));
    }
    routes
        .merge(api::routes().0)
        .merge(loki::routes())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(max_body))
        .layer(middleware::from_fn_with_state(state.clone(), require_token))
        .merge(page::routes(page))
        .layer(CatchPanicLayer::custom(panicked))
        .with_state(state)
}

async fn not_found() -> Response {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        "no such route (see GET /api/v1/openapi.json)",
    )
    .into_response()
}

async fn method_not_allowed() -> Response {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this route does not take this method (see GET /api/v1/openapi.json)",
    )
    .into_response()
}

fn panicked(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    tracing::error!("a handler panicked");
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal",
        "the server failed on this request (a bug: please report it)",
    )
    .into_response()
}

/// With a token configured, every request carries `Authorization: Bearer
/// TOKEN` or is answered 401.
async fn require_token(State(state): State<AppState>, req: Request, next: Next) -> Response {
    if let Some(token) = &state.0.token {
        // A CORS preflight carries no credentials.
        let preflight = req.method() == Method::OPTIONS;
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .map(|v| v.as_bytes());
        if !preflight && !auth::authorized(given, token) {
            state.0.metrics.error("unauthorized");
            let mut r = ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "this server needs `Authorization: Bearer TOKEN` (the token of its --token-file)",
            )
            .into_response();
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return r;
        }
    }
    next.run(req).await
}

fn cors_layer(origins: &[String]) -> Result<CorsLayer, ServeError> {
    let list = origins
        .iter()
        .map(|o| {
            HeaderValue::from_str(o).map_err(|_| ServeError(format!("--cors {o:?}: not an origin")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(CorsLayer::new()
        .allow_origin(AllowOrigin::list(list))
        .allow_methods([Method::GET, Method::POST])
        .allow_headers([header::CONTENT_TYPE, header::AUTHORIZATION])
        .expose_headers([
            header::HeaderName::from_static("x-logsieve-backend"),
            header::HeaderName::from_static("x-logsieve-total"),
            header::HeaderName::from_static("x-logsieve-next-cursor"),
        ]))
}

/// Serves `state` on `listener` until `shutdown` completes, then lets
/// requests in flight finish.
pub async fn serve_with<L>(
    listener: L,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()>
where
    L: axum::serve::Listener,
    L::Addr: std::fmt::Debug,
{
    let app = router(state.clone());
    serve_router(listener, app, closing_tails(state, shutdown)).await
}

/// `shutdown`, then the end of every live tail: a graceful shutdown
/// waits for open responses, and a tail's never ends by itself.
async fn closing_tails(state: AppState, shutdown: impl Future<Output = ()> + Send + 'static) {
    shutdown.await;
    state.live().close();
}

async fn serve_router<L>(
    listener: L,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()>
where
    L: axum::serve::Listener,
    L::Addr: std::fmt::Debug,
{
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
}

/// SIGINT or SIGTERM.
async fn signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}

/// Logs to stderr through `tracing`, filtered by `LOGSIEVE_LOG` (an
/// `EnvFilter`, e.g. `info` or `logsieve_server=debug`); quiet (warnings)
/// by default.
pub fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("LOGSIEVE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// Makes `state` the front of the cluster of `addrs` (exit 2 when no
/// worker answers).
#[cfg(feature = "cluster")]
async fn front(
    state: &AppState,
    addrs: &str,
    token: Option<String>,
    threads: usize,
) -> Result<(), ServeError> {
    let urls =
        logsieve_cluster::worker_urls(addrs).map_err(|e| ServeError(format!("--cluster: {e}")))?;
    let cluster = std::sync::Arc::new(logsieve_cluster::Cluster::new(urls, token));
    let f = api::cluster::Front::connect(cluster, threads)
        .await
        .map_err(|e| ServeError(format!("--cluster: {e}")))?;
    state.set_front(f);
    Ok(())
}

#[cfg(not(feature = "cluster"))]
async fn front(_: &AppState, _: &str, _: Option<String>, _: usize) -> Result<(), ServeError> {
    Err(ServeError(
        "--cluster: this build has no cluster front (cargo feature `cluster` of logsieve-server)"
            .into(),
    ))
}

/// `logsieve serve`: checks, binds, prints the address, loads in the
/// background, serves until a signal. An `Err` is exit code 2.
pub fn run(config: ServeConfig) -> Result<(), ServeError> {
    let token = config
        .token_file
        .as_deref()
        .map(auth::read_token_file)
        .transpose()
        .map_err(ServeError)?;
    auth::check_listen(&config.listen, token.is_some()).map_err(ServeError)?;
    if config.cluster.is_none() {
        load::check(&config.load).map_err(ServeError)?;
    }
    let cors = (!config.cors.is_empty())
        .then(|| cors_layer(&config.cors))
        .transpose()?;
    #[cfg(feature = "tls")]
    let tls = config
        .tls
        .as_ref()
        .map(|(c, k)| tls::acceptor(c, k))
        .transpose()
        .map_err(ServeError)?;
    #[cfg(not(feature = "tls"))]
    if config.tls.is_some() {
        return Err(ServeError(
            "--tls-cert: this build has no TLS (cargo feature `tls` of logsieve-server)".into(),
        ));
    }
    // `--gpu on` fails before anything is served when there is no GPU.
    if config.load.gpu == GpuMode::On && config.cluster.is_none() {
        logsieve::gpu::GpuContext::shared_with(&config.load.tuning.gpu)
            .map_err(|e| ServeError(format!("--gpu on: {e}")))?;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| ServeError(format!("cannot start the runtime: {e}")))?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .map_err(|e| ServeError(format!("--listen {}: {e}", config.listen)))?;
        let addr = listener
            .local_addr()
            .map_err(|e| ServeError(e.to_string()))?;
        let state = AppState::new(config.limits.clone(), token);
        if let Some((addrs, token)) = &config.cluster {
            front(&state, addrs, token.clone(), config.limits.threads).await?;
        }
        let mut app = router_with_page(state.clone(), page::Page::find(config.web_dir.as_deref()));
        if let Some(c) = cors {
            app = app.layer(c);
        }
        // A load that fails (`--gpu on` whose upload fails) stops the
        // server with its error.
        let (fail_tx, fail_rx) = tokio::sync::oneshot::channel::<String>();
        if config.cluster.is_none() {
            let state = state.clone();
            let load = config.load.clone();
            std::thread::Builder::new()
                .name("logsieve-load".into())
                .spawn(move || {
                    if let Err(e) = load::load(&load, &state) {
                        let _ = fail_tx.send(e);
                    }
                })
                .map_err(|e| ServeError(format!("cannot start the loader: {e}")))?;
        }
        let failed = std::sync::Arc::new(std::sync::Mutex::new(None::<String>));
        let failed2 = failed.clone();
        let shutdown = closing_tails(state.clone(), async move {
            tokio::select! {
                _ = signal() => {}
                Ok(e) = fail_rx => { *failed2.lock().unwrap_or_else(|p| p.into_inner()) = Some(e); }
            }
        });
        #[cfg(feature = "tls")]
        let scheme = if tls.is_some() { "https" } else { "http" };
        #[cfg(not(feature = "tls"))]
        let scheme = "http";
        println!("listening on {scheme}://{addr}/");
        use std::io::Write;
        let _ = std::io::stdout().flush();
        #[cfg(feature = "tls")]
        let served = match tls {
            Some(acceptor) => {
                serve_router(tls::TlsListener::new(listener, acceptor), app, shutdown).await
            }
            None => serve_router(listener, app, shutdown).await,
        };
        #[cfg(not(feature = "tls"))]
        let served = serve_router(listener, app, shutdown).await;
        served.map_err(|e| ServeError(e.to_string()))?;
        let failure = failed.lock().unwrap_or_else(|p| p.into_inner()).take();
        match failure {
            Some(e) => Err(ServeError(e)),
            None => Ok(()),
        }
    })?;
    // The loader thread may still be reading: do not wait for it.
    rt.shutdown_timeout(Duration::from_millis(100));
    Ok(())
}
