//! What every handler shares: the session once loaded, the load's
//! progress, the limits and the counters.

use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use parking_lot::RwLock;

use logsieve::corpus::follow::FollowStats;
use logsieve::corpus::LoadProgress;
use logsieve::Session;
use tokio::sync::Semaphore;

use crate::live::LiveHub;
use crate::metrics::Metrics;

/// Per-request limits.
#[derive(Clone, Debug)]
pub struct Limits {
    /// The deadline of a query's search phase (504 past it).
    pub timeout: Duration,
    /// Queries running at once (429 past it).
    pub max_in_flight: usize,
    /// The largest request body (413 past it).
    pub max_body: usize,
    /// CPU threads per query (0 = all cores).
    pub threads: usize,
    /// Live tails open at once (`--max-tails`; 429 past it).
    pub max_tails: usize,
    /// `--keep-warm`: while no query runs, a tiny GPU dispatch this often,
    /// so that the next query finds the device's clocks up (`None`: off).
    pub keep_warm: Option<Duration>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            timeout: Duration::from_secs(30),
            max_in_flight: 64,
            max_body: 1 << 20,
            threads: 0,
            max_tails: 256,
            keep_warm: None,
        }
    }
}

/// The loaded corpus and what describes it.
pub struct Ready {
    /// The one object every query goes through.
    pub session: Session,
    /// `backend` of `/health`: `cpu`, or `gpu` when the corpus is resident.
    pub backend: String,
    /// The GPU adapter's name, when resident.
    pub gpu: Option<String>,
    /// The field names the stats columns hold (`level`, `host`, `--field`s).
    pub fields: Vec<String>,
    /// Lines over all files.
    pub lines: u64,
    /// The queries of recent requests, built once each
    /// ([`crate::api`]'s `build_query_shared`).
    pub(crate) queries: QueryCache,
}

/// Compiled queries by what a request asked (patterns, syntax and flags):
/// a query does not depend on the corpus, so a repeated request skips
/// parsing and compiling its regex. At most [`QueryCache::MAX`] entries;
/// when full it starts again empty.
#[derive(Default)]
pub(crate) struct QueryCache {
    held: Mutex<std::collections::HashMap<String, Arc<logsieve::Query>>>,
}

impl QueryCache {
    /// Entries kept at most.
    pub(crate) const MAX: usize = 256;

    /// The query kept under `key`, else `build`'s, kept.
    pub(crate) fn get_or_build<E>(
        &self,
        key: String,
        build: impl FnOnce() -> Result<logsieve::Query, E>,
    ) -> Result<Arc<logsieve::Query>, E> {
        if let Some(q) = self
            .held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return Ok(q.clone());
        }
        let q = Arc::new(build()?);
        let mut h = self.held.lock().unwrap_or_else(|p| p.into_inner());
        if h.len() >= Self::MAX {
            h.clear();
        }
        h.insert(key, q.clone());
        Ok(q)
    }

    /// Entries held now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.held.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

impl Ready {
    /// Wraps a session whose columns (if any) are set.
    pub fn new(session: Session) -> Ready {
        let gpu = session.gpu_state().map(|g| g.name);
        let fields = session
            .columns()
            .map(|c| c.fields().iter().map(|f| f.name.clone()).collect())
            .unwrap_or_default();
        let lines = session
            .corpus()
            .docs()
            .iter()
            .map(|d| d.lines().len())
            .sum();
        Ready {
            backend: if gpu.is_some() { "gpu" } else { "cpu" }.to_string(),
            gpu,
            fields,
            lines,
            session,
            queries: QueryCache::default(),
        }
    }
}

/// How long a query waits for the follower's write to finish before it
/// reads beside a waiting write (see [`AppState::ready`]).
const WRITER_FIRST: Duration = Duration::from_millis(50);

/// A read of the ready session: queries hold one for their whole work, so
/// they see the corpus of one moment (never half of an appended batch).
/// Cloning reads again (recursively: it never waits behind a writer
/// that waits for this one).
pub struct ReadyRef(lock_api::ArcRwLockReadGuard<parking_lot::RawRwLock, Ready>);

impl Deref for ReadyRef {
    type Target = Ready;
    fn deref(&self) -> &Ready {
        &self.0
    }
}

impl Clone for ReadyRef {
    fn clone(&self) -> ReadyRef {
        let lock = lock_api::ArcRwLockReadGuard::rwlock(&self.0);
        ReadyRef(lock.read_arc_recursive())
    }
}

pub(crate) struct Inner {
    /// The session behind a lock: many readers (queries), one writer (the
    /// follower's short appends).
    pub ready: OnceLock<Arc<RwLock<Ready>>>,
    /// The follower's state, with `--follow`.
    pub follow: Mutex<Option<FollowStatus>>,
    pub progress: Mutex<LoadProgress>,
    /// Phase of the load after reading (`columns`, `gpu`), for `/health`.
    pub phase: Mutex<&'static str>,
    /// Paths the load could not read (the rest is served), for `/health`.
    pub failed: Mutex<Vec<String>>,
    /// Where stats run from once ready, for `/health` (`stats_columns`).
    pub stats_columns: Mutex<Option<String>>,
    pub limits: Limits,
    pub slots: Arc<Semaphore>,
    pub token: Option<String>,
    pub metrics: Metrics,
    pub in_flight: AtomicU64,
    /// Appended lines, for live tails (`serve --follow`).
    pub live: LiveHub,
    /// Live tail slots (`--max-tails`).
    pub tails: Arc<Semaphore>,
    /// `POST /api/v1/sql`'s engine, made at the first query.
    #[cfg(feature = "sql")]
    pub sql: OnceLock<Result<Arc<logsieve_sql::SqlEngine>, String>>,
    /// With `serve --cluster`: the cluster every answer comes from.
    #[cfg(feature = "cluster")]
    pub front: OnceLock<Arc<crate::api::cluster::Front>>,
}

/// The handlers' shared state: cheap to clone.
#[derive(Clone)]
pub struct AppState(pub(crate) Arc<Inner>);

impl AppState {
    /// A server still loading, with `limits` and, when set, a bearer
    /// `token` every request must carry.
    pub fn new(limits: Limits, token: Option<String>) -> AppState {
        AppState(Arc::new(Inner {
            ready: OnceLock::new(),
            follow: Mutex::new(None),
            progress: Mutex::new(LoadProgress::default()),
            phase: Mutex::new("reading"),
            failed: Mutex::new(Vec::new()),
            stats_columns: Mutex::new(None),
            slots: Arc::new(Semaphore::new(limits.max_in_flight.max(1))),
            tails: Arc::new(Semaphore::new(limits.max_tails)),
            limits,
            token,
            metrics: Metrics::default(),
            in_flight: AtomicU64::new(0),
            live: LiveHub::default(),
            #[cfg(feature = "sql")]
            sql: OnceLock::new(),
            #[cfg(feature = "cluster")]
            front: OnceLock::new(),
        }))
    }

    /// Makes this server a front of `front`'s cluster (`serve --cluster`):
    /// it loads nothing. A second call is ignored.
    #[cfg(feature = "cluster")]
    pub fn set_front(&self, front: crate::api::cluster::Front) {
        let _ = self.0.front.set(Arc::new(front));
    }

    /// The cluster this server fronts, with `serve --cluster`.
    #[cfg(feature = "cluster")]
    pub fn front(&self) -> Option<Arc<crate::api::cluster::Front>> {
        self.0.front.get().cloned()
    }

    /// Records the load's progress (`/health`, `/metrics`).
    pub fn set_progress(&self, p: LoadProgress) {
        *self.0.progress.lock().unwrap_or_else(|e| e.into_inner()) = p;
    }

    /// Names the load's current phase (`reading`, `columns`, `gpu`).
    pub fn set_phase(&self, phase: &'static str) {
        *self.0.phase.lock().unwrap_or_else(|e| e.into_inner()) = phase;
    }

    /// Says where stats run from (`/health`'s `stats_columns`).
    pub fn set_stats_columns(&self, s: String) {
        *self
            .0
            .stats_columns
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(s);
    }

    /// `/health`'s `stats_columns`.
    pub fn stats_columns(&self) -> Option<String> {
        self.0
            .stats_columns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Records the paths the load could not read (`/health`'s `failed`).
    pub fn set_failed(&self, failed: Vec<String>) {
        *self.0.failed.lock().unwrap_or_else(|e| e.into_inner()) = failed;
    }

    /// The paths the load could not read, with why.
    pub fn failed(&self) -> Vec<String> {
        self.0
            .failed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Makes `ready` answer queries. A second call is ignored.
    pub fn set_ready(&self, ready: Ready) {
        let _ = self.0.ready.set(Arc::new(RwLock::new(ready)));
    }

    /// The session, once ready, read for as long as the result is held.
    /// While the follower writes (a short section: its bytes were read
    /// before) a query waits; while the follower *waits* for long queries
    /// to finish, a new query waits at most [`WRITER_FIRST`] and then
    /// reads beside it, so neither side starves.
    pub fn ready(&self) -> Option<ReadyRef> {
        let lock = self.0.ready.get()?;
        Some(ReadyRef(
            lock.try_read_arc_for(WRITER_FIRST)
                .unwrap_or_else(|| lock.read_arc_recursive()),
        ))
    }

    /// The lock itself (the follower writes through it).
    pub(crate) fn ready_lock(&self) -> Option<Arc<RwLock<Ready>>> {
        self.0.ready.get().cloned()
    }

    /// Records the follower's state (`/health`, `/metrics`).
    pub(crate) fn set_follow(&self, s: FollowStatus) {
        *self.0.follow.lock().unwrap_or_else(|e| e.into_inner()) = Some(s);
    }

    /// The follower's state, with `--follow`.
    pub fn follow(&self) -> Option<FollowStatus> {
        *self.0.follow.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The load's progress.
    pub fn progress(&self) -> LoadProgress {
        *self.0.progress.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The limits.
    pub fn limits(&self) -> &Limits {
        &self.0.limits
    }

    /// The broadcast of appended lines (the follower publishes, tails
    /// subscribe).
    pub fn live(&self) -> &LiveHub {
        &self.0.live
    }

    pub(crate) fn in_flight(&self) -> u64 {
        self.0.in_flight.load(Ordering::Relaxed)
    }
}

/// What `/health` and `/metrics` show of the follower.
#[derive(Clone, Copy, Debug, Default)]
pub struct FollowStatus {
    /// The tracker's counters.
    pub stats: FollowStats,
    /// Batches applied.
    pub batches: u64,
    /// Wall time of the last batch: poll, apply, publish (ms).
    pub last_batch_ms: f64,
    /// The longest batch so far (ms).
    pub max_batch_ms: f64,
    /// True when file events are watched (false: the timer only).
    pub events: bool,
    /// The retention bound (`--retain`, `--max-resident`), when set.
    pub retention: Option<logsieve::session::Retention>,
    /// Bytes evicted by the retention bound since the load.
    pub evicted_bytes: u64,
    /// Lines evicted since the load.
    pub evicted_lines: u64,
    /// Evictions applied.
    pub evictions: u64,
    /// Wall time of the last eviction's preparation, beside queries (ms).
    pub last_evict_prepare_ms: f64,
    /// Wall time of the last eviction under the write lock (ms).
    pub last_evict_lock_ms: f64,
    /// Bytes held after the last batch.
    pub held_bytes: u64,
    /// The oldest time held (ms since the epoch, from the stats
    /// columns), after the last batch.
    pub oldest_ms: Option<i64>,
}

#[cfg(test)]
mod query_cache_tests {
    use super::QueryCache;

    fn q(p: &str) -> Result<logsieve::Query, logsieve::Error> {
        logsieve::QueryBuilder::new()
            .syntax(logsieve::Syntax::Regex)
            .build(&[p])
    }

    #[test]
    fn a_repeated_request_gets_the_query_built_before() {
        let c = QueryCache::default();
        let a = c.get_or_build("k1".into(), || q(r"ERROR_5\d\d")).unwrap();
        let b = c
            .get_or_build("k1".into(), || -> Result<_, logsieve::Error> {
                panic!("built again")
            })
            .unwrap();
        assert!(std::sync::Arc::ptr_eq(&a, &b));
        assert!(c.get_or_build("bad".into(), || q("(")).is_err());
        assert_eq!(c.len(), 1);
        for k in 0..QueryCache::MAX + 3 {
            c.get_or_build(format!("n{k}"), || q("x")).unwrap();
        }
        assert!(c.len() <= QueryCache::MAX);
    }
}
