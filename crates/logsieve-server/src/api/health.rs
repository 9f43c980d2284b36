//! `GET /api/v1/health`, `/api/v1/openapi.json` and `/metrics`.

use super::*;

/// The follower's state (`serve --follow`).
#[derive(Serialize, ToSchema)]
pub struct FollowHealth {
    /// Files followed now (open handles).
    pub files: u64,
    /// Bytes appended to the corpus since the load.
    pub bytes_appended: u64,
    /// Lines appended since the load.
    pub lines_appended: u64,
    /// Files adopted after the load.
    pub new_files: u64,
    /// Files recognised as copies of held content (not ingested).
    pub copies: u64,
    /// Renames and truncations seen.
    pub renames: u64,
    /// Truncations seen (the old content stays searchable).
    pub truncations: u64,
    /// Batches applied.
    pub batches: u64,
    /// Wall time of the last batch, poll to searchable (ms); the lag
    /// adds at most the poll interval when file events are lost.
    pub last_batch_ms: f64,
    /// The longest batch so far (ms).
    pub max_batch_ms: f64,
    /// True when file events are watched; false: the poll timer only.
    pub events: bool,
    /// `--retain` in ms, when set.
    pub retain_ms: Option<i64>,
    /// `--max-resident` in bytes, when set.
    pub max_resident: Option<u64>,
    /// Bytes of lines evicted by the retention bound since the load (no
    /// longer searchable by any backend).
    pub evicted_bytes: u64,
    /// Lines evicted since the load. Line numbers stay those of the
    /// whole file: a kept line keeps its number.
    pub evicted_lines: u64,
    /// Evictions applied.
    pub evictions: u64,
    /// The last eviction's preparation beside queries (ms): the kept
    /// suffix copied and uploaded.
    pub last_evict_prepare_ms: f64,
    /// The last eviction's time under the write lock (ms).
    pub last_evict_lock_ms: f64,
    /// Bytes of lines held now.
    pub held_bytes: u64,
    /// The oldest time held (RFC 3339, UTC; null without timestamps): a
    /// query or tail asking for earlier lines gets what is held.
    pub oldest: Option<String>,
    /// The same, in ms since the epoch.
    pub oldest_ms: Option<i64>,
}

impl FollowHealth {
    fn of(f: crate::follow::FollowStatus) -> FollowHealth {
        FollowHealth {
            files: f.stats.files,
            bytes_appended: f.stats.bytes_appended,
            lines_appended: f.stats.lines_appended,
            new_files: f.stats.new_files,
            copies: f.stats.copies,
            renames: f.stats.renames,
            truncations: f.stats.truncations,
            batches: f.batches,
            last_batch_ms: f.last_batch_ms,
            max_batch_ms: f.max_batch_ms,
            events: f.events,
            retain_ms: f.retention.and_then(|r| r.max_age_ms),
            max_resident: f.retention.and_then(|r| r.max_bytes),
            evicted_bytes: f.evicted_bytes,
            evicted_lines: f.evicted_lines,
            evictions: f.evictions,
            last_evict_prepare_ms: f.last_evict_prepare_ms,
            last_evict_lock_ms: f.last_evict_lock_ms,
            held_bytes: f.held_bytes,
            oldest: f.oldest_ms.map(logsieve::stats::format_ms),
            oldest_ms: f.oldest_ms,
        }
    }
}

/// The server's state.
#[derive(Serialize, ToSchema)]
pub struct Health {
    /// `loading` until the corpus answers queries, then `ready`.
    pub status: String,
    /// While loading: what is being done (`reading`, `columns`, `gpu`).
    pub phase: String,
    /// Bytes held in memory (decompressed).
    pub bytes: u64,
    /// Lines held over all files (0 while loading; after evictions,
    /// `--retain`, the kept ones).
    pub lines: u64,
    /// Files loaded (while loading: read so far).
    pub files: u64,
    /// `cpu`, or `gpu` when the corpus is resident on a GPU (null while
    /// loading).
    pub backend: Option<String>,
    /// The GPU adapter's name when the corpus is resident on it.
    pub gpu: Option<String>,
    /// Load progress, 0 to 1 (1 when ready).
    pub progress: f64,
    /// Where stats queries find their columns once ready: `gpu` (uploaded
    /// beside queries after the load; `uploading` until then, and a stats
    /// query waits for it), `host` (no GPU), or why the upload failed
    /// (stats then run on the CPU). Null while loading.
    pub stats_columns: Option<String>,
    /// With `--follow`: what the follower has done (absent without it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub follow: Option<FollowHealth>,
    /// Paths given that could not be read, each with why (absent when
    /// every one was read); the rest is served.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
}

/// Whether the corpus is loaded, and how far the load is.
#[utoipa::path(get, path = "/api/v1/health", responses((status = 200, body = Health)))]
pub async fn health(State(state): State<AppState>) -> Json<Health> {
    #[cfg(feature = "cluster")]
    if let Some(f) = state.front() {
        return Json(super::cluster::health(&f).await);
    }
    let p = state.progress();
    Json(match state.ready() {
        Some(r) => Health {
            status: "ready".into(),
            phase: "ready".into(),
            bytes: r.session.corpus().total_bytes(),
            lines: r.lines,
            files: r.session.corpus().docs().len() as u64,
            backend: Some(r.backend.clone()),
            gpu: r.gpu.clone(),
            progress: 1.0,
            stats_columns: state.stats_columns(),
            follow: state.follow().map(FollowHealth::of),
            failed: state.failed(),
        },
        None => Health {
            status: "loading".into(),
            phase: state.0.phase.lock().map(|p| *p).unwrap_or("reading").into(),
            bytes: p.bytes_loaded,
            lines: 0,
            files: p.files_done,
            backend: None,
            gpu: None,
            stats_columns: None,
            follow: None,
            failed: state.failed(),
            // The reading phase is most of a load; columns and the GPU
            // upload take the last tenth.
            progress: (p.fraction() * 0.9).min(0.9),
        },
    })
}

/// The OpenAPI document of this API.
#[utoipa::path(get, path = "/api/v1/openapi.json", responses((status = 200, description = "OpenAPI 3 JSON", content_type = "application/json")))]
pub async fn openapi() -> Response {
    match super::document() {
        Ok(s) => ([(header::CONTENT_TYPE, "application/json")], s.clone()).into_response(),
        Err(e) => {
            ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.clone()).into_response()
        }
    }
}

/// Prometheus metrics: queries by kind and backend, latency histogram,
/// resident bytes (host and GPU), load progress, routes kept by the route
/// memo and planned.
#[utoipa::path(get, path = "/metrics", responses((status = 200, description = "Prometheus text format", content_type = "text/plain")))]
pub async fn metrics(State(state): State<AppState>) -> Response {
    let ready = state.ready();
    let g = crate::metrics::Gauges {
        host_bytes: ready.as_ref().map_or(state.progress().bytes_loaded, |r| {
            r.session.corpus().total_bytes()
        }),
        gpu_bytes: ready
            .as_ref()
            .and_then(|r| r.session.gpu().map(|g| g.resident_bytes()))
            .unwrap_or(0),
        progress: if ready.is_some() {
            1.0
        } else {
            state.progress().fraction() * 0.9
        },
        ready: ready.is_some(),
        in_flight: state.in_flight(),
    };
    let mut text = state.0.metrics.render(&g);
    if let Some(r) = &ready {
        crate::metrics::render_routes(&mut text, r.session.route_counts());
        crate::metrics::render_fusion(&mut text, &r.session.fusion_profile());
        crate::metrics::render_coalesced(&mut text, r.session.coalesced_counts());
    }
    if let Some(f) = state.follow() {
        use std::fmt::Write;
        let s = f.stats;
        for (name, help, v) in [
            (
                "logsieve_follow_files",
                "Files followed now.",
                s.files as f64,
            ),
            (
                "logsieve_follow_appended_bytes_total",
                "Bytes appended since the load.",
                s.bytes_appended as f64,
            ),
            (
                "logsieve_follow_appended_lines_total",
                "Lines appended since the load.",
                s.lines_appended as f64,
            ),
            (
                "logsieve_follow_truncations_total",
                "Truncations seen.",
                s.truncations as f64,
            ),
            (
                "logsieve_follow_copies_total",
                "Files recognised as copies of held content.",
                s.copies as f64,
            ),
            (
                "logsieve_follow_batches_total",
                "Batches applied.",
                f.batches as f64,
            ),
            (
                "logsieve_follow_last_batch_seconds",
                "Wall time of the last batch, poll to searchable.",
                f.last_batch_ms / 1e3,
            ),
            (
                "logsieve_follow_max_batch_seconds",
                "The longest batch so far.",
                f.max_batch_ms / 1e3,
            ),
            (
                "logsieve_follow_evicted_bytes_total",
                "Bytes evicted by the retention bound.",
                f.evicted_bytes as f64,
            ),
            (
                "logsieve_follow_evicted_lines_total",
                "Lines evicted by the retention bound.",
                f.evicted_lines as f64,
            ),
            (
                "logsieve_follow_evictions_total",
                "Evictions applied.",
                f.evictions as f64,
            ),
            (
                "logsieve_follow_held_bytes",
                "Bytes of lines held.",
                f.held_bytes as f64,
            ),
            (
                "logsieve_follow_last_evict_lock_seconds",
                "The last eviction's time under the write lock.",
                f.last_evict_lock_ms / 1e3,
            ),
        ]
        .into_iter()
        .chain(f.oldest_ms.map(|t| {
            (
                "logsieve_follow_oldest_retained_seconds",
                "The oldest time held (seconds since the epoch).",
                t as f64 / 1e3,
            )
        })) {
            let _ = writeln!(
                text,
                "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {v}"
            );
        }
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text).into_response()
}
