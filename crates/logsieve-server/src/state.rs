//! What every handler shares: the session once loaded, the load's
//! progress, the limits and the counters.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

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
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            timeout: Duration::from_secs(30),
            max_in_flight: 64,
            max_body: 1 << 20,
            threads: 0,
            max_tails: 256,
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
        }
    }
}

pub(crate) struct Inner {
    /// The session answering queries: set once loaded, replaced by a
    /// grown one when lines are appended ([`AppState::replace_ready`]).
    pub ready: RwLock<Option<Arc<Ready>>>,
    pub progress: Mutex<LoadProgress>,
    /// Phase of the load after reading (`columns`, `gpu`), for `/health`.
    pub phase: Mutex<&'static str>,
    pub limits: Limits,
    pub slots: Arc<Semaphore>,
    pub token: Option<String>,
    pub metrics: Metrics,
    pub in_flight: AtomicU64,
    /// Appended lines, for live tails (`serve --follow`).
    pub live: LiveHub,
    /// Live tail slots (`--max-tails`).
    pub tails: Arc<Semaphore>,
}

/// The handlers' shared state: cheap to clone.
#[derive(Clone)]
pub struct AppState(pub(crate) Arc<Inner>);

impl AppState {
    /// A server still loading, with `limits` and, when set, a bearer
    /// `token` every request must carry.
    pub fn new(limits: Limits, token: Option<String>) -> AppState {
        AppState(Arc::new(Inner {
            ready: RwLock::new(None),
            progress: Mutex::new(LoadProgress::default()),
            phase: Mutex::new("reading"),
            slots: Arc::new(Semaphore::new(limits.max_in_flight.max(1))),
            tails: Arc::new(Semaphore::new(limits.max_tails)),
            limits,
            token,
            metrics: Metrics::default(),
            in_flight: AtomicU64::new(0),
            live: LiveHub::default(),
        }))
    }

    /// Records the load's progress (`/health`, `/metrics`).
    pub fn set_progress(&self, p: LoadProgress) {
        *self.0.progress.lock().unwrap_or_else(|e| e.into_inner()) = p;
    }

    /// Names the load's current phase (`reading`, `columns`, `gpu`).
    pub fn set_phase(&self, phase: &'static str) {
        *self.0.phase.lock().unwrap_or_else(|e| e.into_inner()) = phase;
    }

    /// Makes `ready` answer queries. A second call is ignored.
    pub fn set_ready(&self, ready: Ready) {
        let mut r = self.0.ready.write().unwrap_or_else(|e| e.into_inner());
        if r.is_none() {
            *r = Some(Arc::new(ready));
        }
    }

    /// Replaces the session with `ready` (one holding more lines):
    /// queries already running keep the one they started with.
    pub fn replace_ready(&self, ready: Ready) {
        *self.0.ready.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(ready));
    }

    /// The session, once ready.
    pub fn ready(&self) -> Option<Arc<Ready>> {
        self.0
            .ready
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
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
