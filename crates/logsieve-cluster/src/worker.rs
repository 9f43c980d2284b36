//! A worker: one resident session, its shards' scans served through
//! datafusion-distributed's worker service, and its status beside it on
//! the same port. The session may grow while it serves (a follower
//! appending lines and adding files): each scan reads it as it is then,
//! and the status reports it as it is now.

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use axum::{Json, Router};
use datafusion::error::DataFusionError;
use datafusion::execution::FunctionRegistry;
use datafusion_distributed::{DistributedExt, Worker, WorkerQueryContext};
use logsieve::{SearchOptions, Session};
use parking_lot::RwLock;

use crate::scan::{Held, ShardCodec};
use crate::status::{WorkerStatus, STATUS_PATH};

/// What a worker serves.
pub struct WorkerConfig {
    /// The bearer token every request must carry (none: loopback only,
    /// which the caller checks).
    pub token: Option<String>,
    /// Where the corpus is, for the status (`cpu` or the adapter).
    pub device: String,
    /// Each engine search's options.
    pub opts: SearchOptions,
    /// A follower appends to the session (the status says so).
    pub following: bool,
}

struct Shared {
    held: Arc<Held>,
    fields: Vec<String>,
    device: String,
    listen: String,
    token: Option<String>,
    following: bool,
}

/// `true` when `headers` carry `token` (or none is asked).
fn authorized(token: &Option<String>, headers: &http::HeaderMap) -> bool {
    let Some(t) = token else { return true };
    logsieve::auth::authorized(
        headers
            .get(http::header::AUTHORIZATION)
            .map(|v| v.as_bytes()),
        t,
    )
}

/// Serves `session` on `listener` until the process ends (or the task
/// is dropped).
pub async fn serve(
    session: Arc<RwLock<Session>>,
    config: WorkerConfig,
    listener: tokio::net::TcpListener,
) -> Result<(), String> {
    let listen = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    {
        let s = session.read();
        let mut names = BTreeSet::new();
        for d in s.corpus().docs() {
            if !names.insert(d.name()) {
                return Err(format!(
                    "two files are named {:?}: a shard's name must be unique",
                    d.name()
                ));
            }
        }
    }
    let held = Arc::new(Held::new(session, config.opts)?);
    let fields = held.table.shape().fields().to_vec();
    let shared = Arc::new(Shared {
        held: held.clone(),
        fields,
        device: config.device,
        listen,
        token: config.token.clone(),
        following: config.following,
    });
    let token = config.token;
    let worker = Worker::from_session_builder(move |ctx: WorkerQueryContext| {
        let held = held.clone();
        let ok = authorized(&token, &ctx.headers);
        async move {
            if !ok {
                return Err(DataFusionError::Execution(
                    "this worker refused the query: a missing or wrong token".into(),
                ));
            }
            let mut b = ctx.builder;
            b.config().get_or_insert_default().set_extension(held);
            let mut state = b.with_distributed_user_codec(ShardCodec).build();
            state.register_udf(Arc::new(logsieve_sql::grep()))?;
            Ok(state)
        }
    });
    let status = Router::new()
        .route(STATUS_PATH, get(status))
        .with_state(shared);
    let routes = tonic::service::Routes::from(status).add_service(worker.into_worker_server());
    let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
    tonic::transport::Server::builder()
        .accept_http1(true)
        .add_routes(routes)
        .serve_with_incoming(incoming)
        .await
        .map_err(|e| format!("the worker's server stopped: {e}"))
}

async fn status(
    State(s): State<Arc<Shared>>,
    headers: HeaderMap,
) -> Result<Json<WorkerStatus>, (StatusCode, String)> {
    if !authorized(&s.token, &headers) {
        return Err((
            StatusCode::UNAUTHORIZED,
            "a missing or wrong token (authorization: Bearer TOKEN)".into(),
        ));
    }
    Ok(Json(WorkerStatus {
        listen: s.listen.clone(),
        shards: s.held.shards(),
        fields: s.fields.clone(),
        device: s.device.clone(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        following: s.following,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_checked_when_one_is_set() {
        let mut h = http::HeaderMap::new();
        assert!(authorized(&None, &h));
        let t = Some("s3cret".to_string());
        assert!(!authorized(&t, &h));
        h.insert(http::header::AUTHORIZATION, "Bearer nope".parse().unwrap());
        assert!(!authorized(&t, &h));
        h.insert(
            http::header::AUTHORIZATION,
            "Bearer s3cret".parse().unwrap(),
        );
        assert!(authorized(&t, &h));
    }
}
