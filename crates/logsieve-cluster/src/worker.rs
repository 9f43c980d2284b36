//! A worker: one resident session, its shards' scans served through
//! datafusion-distributed's worker service, and its status beside it on
//! the same port.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use axum::{Json, Router};
use datafusion::error::DataFusionError;
use datafusion_distributed::{DistributedExt, Worker, WorkerQueryContext};
use logsieve::{SearchOptions, Session};
use logsieve_sql::table::LogsTable;
use logsieve_sql::Local;
use parking_lot::Mutex;

use crate::scan::{Held, ShardCodec};
use crate::status::{ShardInfo, WorkerStatus, STATUS_PATH};

/// What a worker serves.
pub struct WorkerConfig {
    /// The bearer token every request must carry (none: loopback only,
    /// which the caller checks).
    pub token: Option<String>,
    /// Where the corpus is, for the status (`cpu` or the adapter).
    pub device: String,
    /// Each engine search's options.
    pub opts: SearchOptions,
}

struct Shared {
    held: Arc<Held>,
    shards: Vec<ShardInfo>,
    fields: Vec<String>,
    device: String,
    listen: String,
    token: Option<String>,
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
    session: Session,
    config: WorkerConfig,
    listener: tokio::net::TcpListener,
) -> Result<(), String> {
    let listen = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    let shards: Vec<ShardInfo> = session
        .corpus()
        .docs()
        .iter()
        .map(|d| ShardInfo {
            name: d.name().to_string(),
            bytes: d.data().len() as u64,
            lines: d.lines().len(),
            scans: 0,
        })
        .collect();
    let mut names = BTreeMap::new();
    for s in &shards {
        if names.insert(s.name.clone(), 0u64).is_some() {
            return Err(format!(
                "two files are named {:?}: a shard's name must be unique",
                s.name
            ));
        }
    }
    let table = LogsTable::new(Local::new(session), config.opts, true)?;
    let fields = table.shape().fields().to_vec();
    let held = Arc::new(Held {
        table,
        scans: Mutex::new(names),
    });
    let shared = Arc::new(Shared {
        held: held.clone(),
        shards,
        fields,
        device: config.device,
        listen,
        token: config.token.clone(),
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
            Ok(b.with_distributed_user_codec(ShardCodec).build())
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
    let scans = s.held.scans.lock().clone();
    Ok(Json(WorkerStatus {
        listen: s.listen.clone(),
        shards: s
            .shards
            .iter()
            .map(|sh| ShardInfo {
                scans: scans.get(&sh.name).copied().unwrap_or(0),
                ..sh.clone()
            })
            .collect(),
        fields: s.fields.clone(),
        device: s.device.clone(),
        version: env!("CARGO_PKG_VERSION").to_string(),
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
