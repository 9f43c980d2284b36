//! The session: the one object a caller holds. It owns the loaded corpus,
//! the stats columns once built, the GPU's resident corpus and columns when
//! a GPU pays, and the calibration; it answers every request kind through
//! one routing function ([`route::route`]) and one executor
//! ([`Session::execute`]).
//!
//! A front end (the CLI, the bench, the browser page, a server) builds a
//! [`Request`], asks [`Session::route`] (resident callers) or
//! [`Session::prepare`] (one-shot callers, which may start a GPU when it
//! pays for this one request), and hands the [`Route`] to
//! [`Session::execute`]. [`Session::search`], [`Session::count_per_pattern`]
//! and [`Session::stats`] do both steps.

mod append;
#[cfg(feature = "gpu")]
mod collect;
mod evict;
mod exec;
mod flight;
#[cfg(feature = "gpu")]
mod fuse;
mod placement;
pub mod route;
mod scope;
mod shapes;
#[cfg(feature = "gpu")]
mod shards;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};

use crate::corpus::Corpus;
use crate::error::Error;
use crate::options::{SearchOptions, Tuning};
use crate::pattern_counts::PatternCounts;
use crate::planner::{self, Calibration, DeviceClass};
use crate::query::Query;
use crate::results::{BackendReport, DocHits};
use crate::stats::{Columns, Stats, StatsQuery};
use crate::watchlist::{Watchlist, WatchlistOptions};

pub use evict::{Evicted, Eviction, Retention};
#[cfg(feature = "gpu")]
pub use fuse::FusionProfile;
pub use route::{
    Backend, GpuState, Layout, LayoutPart, MemoCounts, Place, RequestKind, Route, RouteInput, Split,
};
pub use scope::Scope;
pub use shapes::Grouped;

/// The answer to one query.
#[derive(Clone, Debug)]
pub struct SearchResult {
    /// One entry per document, in corpus order.
    pub docs: Vec<DocHits>,
    /// Which backend ran.
    pub backend: BackendReport,
    /// The planner's decision, when the planner decided.
    pub plan: Option<Arc<planner::Decision>>,
}

impl SearchResult {
    /// Selected lines over all documents.
    pub fn total(&self) -> u64 {
        self.docs.iter().map(|d| d.count).sum()
    }
}

/// One request to a [`Session`].
#[derive(Clone, Copy, Debug)]
pub enum Request<'a> {
    /// Selected lines, or their count ([`SearchOptions::want`]).
    Search(&'a Query),
    /// Lines and occurrences of every pattern (`--count-per-pattern`).
    PatternCounts(&'a Query),
    /// Time window → optional search → counts by field / time bucket,
    /// over the session's columns ([`Session::set_columns`]).
    Stats(&'a StatsQuery<'a>),
    /// [`Request::PatternCounts`] of a watchlist's patterns, with what
    /// was compiled when it was defined ([`Session::define_watchlist`]):
    /// routed as a per-pattern count of its query.
    Watchlist(&'a Watchlist),
}

impl<'a> Request<'a> {
    fn kind(&self) -> RequestKind<'a> {
        match *self {
            Request::Search(q) => RequestKind::Search(q),
            Request::PatternCounts(q) => RequestKind::PatternCounts(q),
            Request::Watchlist(w) => RequestKind::PatternCounts(w.query()),
            Request::Stats(s) => RequestKind::Stats(s.search),
        }
    }
}

/// The answer to one [`Request`].
#[derive(Debug)]
pub enum Answer {
    /// To [`Request::Search`].
    Search(SearchResult),
    /// To [`Request::PatternCounts`] and [`Request::Watchlist`].
    PatternCounts(PatternCounts),
    /// To [`Request::Stats`].
    Stats(Stats, BackendReport),
}

/// A corpus held for searching, and the backends that can search it.
pub struct Session {
    corpus: Corpus,
    tuning: Tuning,
    columns: Option<Columns>,
    /// The document appended to last: its last line is the newest, never
    /// evicted by a byte bound ([`Retention::max_bytes`]).
    last_appended: Option<usize>,
    /// The watchlists defined, by name ([`Session::define_watchlist`]).
    watchlists: RwLock<BTreeMap<String, Arc<Watchlist>>>,
    calibration: Mutex<Calibration>,
    /// The routes of recent requests ([`route::Memo`]).
    routes: route::Memo,
    /// Count requests running now, which an identical one joins
    /// ([`flight::Flights`]).
    flights: flight::Flights,
    /// The device the calibration belongs to (`cpu` without a GPU).
    calibration_device: String,
    /// A warning from loading the calibration file, for the caller to show.
    calibration_warning: Option<String>,
    /// What the caller found without starting a device
    /// ([`Session::set_adapter`]): `None` = not probed (a GPU is assumed to
    /// be a discrete one), `Some(None)` = no adapter.
    adapter: Option<Option<(DeviceClass, String)>>,
    /// The GPUs, each holding the whole corpus (one device) or a shard
    /// of it ([`Session::layout`]).
    #[cfg(feature = "gpu")]
    devices: Vec<shards::Device>,
    /// Where each line lives when the corpus is spread over several
    /// places (GPU shards, the host tier); `None` with one device holding
    /// everything.
    #[cfg(feature = "gpu")]
    layout: Option<Layout>,
    /// What happened when the GPUs were attached (an upload that failed
    /// and left its shard on the host), for every report.
    #[cfg(feature = "gpu")]
    attach_notes: Vec<String>,
    /// Test hook: the device to destroy during the next request.
    #[cfg(feature = "gpu")]
    lose_next: Mutex<Option<usize>>,
    /// Concurrent single-literal GPU counts share submissions.
    #[cfg(feature = "gpu")]
    fuser: fuse::Fuser,
    /// How the corpus was uploaded (segment size), for the lines appended
    /// later ([`Session::append_lines`]).
    #[cfg(feature = "gpu")]
    upload_options: crate::gpu::UploadOptions,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("docs", &self.corpus.docs().len())
            .field("bytes", &self.corpus.total_bytes())
            .field("gpu", &self.has_gpu())
            .finish()
    }
}

impl Session {
    /// A session over `corpus`, CPU only until a GPU is attached, with the
    /// default tuning (no calibration file).
    pub fn new(corpus: Corpus) -> Session {
        Session::with_tuning(corpus, Tuning::default())
    }

    /// A session over `corpus` with `tuning` ([`Tuning::from_env`] in front
    /// ends).
    pub fn with_tuning(corpus: Corpus, tuning: Tuning) -> Session {
        Session {
            corpus,
            tuning,
            columns: None,
            last_appended: None,
            watchlists: RwLock::new(BTreeMap::new()),
            calibration: Mutex::new(Calibration::defaults(DeviceClass::Other)),
            routes: route::Memo::default(),
            flights: flight::Flights::default(),
            calibration_device: "cpu".to_string(),
            calibration_warning: None,
            adapter: None,
            #[cfg(feature = "gpu")]
            devices: Vec::new(),
            #[cfg(feature = "gpu")]
            layout: None,
            #[cfg(feature = "gpu")]
            attach_notes: Vec::new(),
            #[cfg(feature = "gpu")]
            lose_next: Mutex::new(None),
            #[cfg(feature = "gpu")]
            fuser: fuse::Fuser::default(),
            #[cfg(feature = "gpu")]
            upload_options: crate::gpu::UploadOptions::default(),
        }
    }

    /// The corpus.
    pub fn corpus(&self) -> &Corpus {
        &self.corpus
    }

    /// The tuning the session was made with.
    pub fn tuning(&self) -> &Tuning {
        &self.tuning
    }

    /// Whether each query's phases go to stderr
    /// (`LOGSIEVE_TRACE_QUERIES=1`, `GpuTuning::trace_queries`).
    pub(crate) fn traced(&self) -> bool {
        #[cfg(feature = "gpu")]
        return self.tuning.gpu.trace_queries;
        #[cfg(not(feature = "gpu"))]
        false
    }

    /// Keeps `columns` (built from the session's corpus) for stats
    /// requests; drops GPU columns of earlier ones.
    pub fn set_columns(&mut self, columns: Columns) {
        self.columns = Some(columns);
        #[cfg(feature = "gpu")]
        for d in &mut self.devices {
            *d.columns.get_mut().unwrap_or_else(|p| p.into_inner()) = None;
        }
    }

    /// The stats columns, once set.
    pub fn columns(&self) -> Option<&Columns> {
        self.columns.as_ref()
    }

    /// True when the corpus is resident on a GPU.
    pub fn has_gpu(&self) -> bool {
        #[cfg(feature = "gpu")]
        {
            !self.devices.is_empty()
        }
        #[cfg(not(feature = "gpu"))]
        {
            false
        }
    }

    /// The GPU as the routing point sees it: resident, or `None`.
    pub fn gpu_state(&self) -> Option<GpuState> {
        #[cfg(feature = "gpu")]
        if let Some(g) = self.devices.first().map(|d| &d.corpus) {
            let info = g.context().info();
            return Some(GpuState {
                class: DeviceClass::from_wgpu(&info.device_type, info.is_software),
                name: info.name.clone(),
                resident: true,
                class_scan: !g.context().tuning().no_class_scan,
                force_class_scan: g.context().tuning().force_class_scan,
            });
        }
        None
    }

    /// The one routing decision for `request` on the session as it is
    /// now (a GPU counts only when attached).
    pub fn route(&self, request: &Request<'_>, opts: &SearchOptions) -> Result<Route, Error> {
        // A scope: a search is routed as it runs (line ids under a
        // window); counts over it are the CPU's (`scope.rs`).
        let scoped;
        let opts = match (opts.scope.is_all(), request) {
            (true, _) => opts,
            (false, Request::Search(_)) => {
                scoped = Self::scoped_options(opts);
                &scoped
            }
            (false, _) => {
                return Ok(Route::cpu(
                    "a scope (files or a time window): its lines counted on the CPU",
                    None,
                ))
            }
        };
        // Timed only when traced (`Instant::now` panics in a browser).
        let t = self.traced().then(std::time::Instant::now);
        let cal = self.calibration();
        let (r, memoised) = self.routes.route(&RouteInput {
            request: request.kind(),
            opts,
            corpus: &self.corpus,
            gpu: self.gpu_state(),
            calibration: &cal,
        })?;
        // Tier 2's split weighs the CPU at the regex's own speed (the
        // planner's `Matcher::speed`): at the literal speed the CPU looked
        // 8x faster than it is, and after one calibrated run (59 GB/s on
        // the H100) auto moved the whole shard of `\b\d{1,3}\.…` to the
        // CPU: 26 ms instead of 3.4 (docs/bench/h100-2026-11-24-regex.md).
        #[cfg(feature = "gpu")]
        let r = match (r.backend, request.kind().query()) {
            (Backend::Gpu(k @ (crate::Kernel::ShiftAnd | crate::Kernel::Bitap)), Some(q)) => {
                let mut c = cal.clone();
                c.cpu_gbps *= q.matcher.speed();
                // Tier 2's calibration is per unit (`planner::units`): the
                // split weighs bytes.
                c.gpu_gbps.insert(k, planner::tier2_gbps(&cal, k, q));
                self.with_split(r, &c, opts)
            }
            _ => self.with_split(r, &cal, opts),
        };
        if let Some(t) = t {
            eprintln!(
                "logsieve: route: {} in {:.1} us{}",
                r.backend,
                t.elapsed().as_secs_f64() * 1e6,
                if memoised { " (memoised)" } else { "" }
            );
        }
        Ok(r)
    }

    /// Count requests answered by a concurrent run of the same count
    /// (same query, options and route) since the session was made.
    pub fn coalesced_counts(&self) -> u64 {
        self.flights.shared()
    }

    /// How many routes came from the route memo and how many were
    /// planned ([`route::Memo`]), since the session was made.
    pub fn route_counts(&self) -> MemoCounts {
        self.routes.counts()
    }

    /// Tells the one-shot plan ([`Session::prepare`]) which adapter exists
    /// (its class and name), or that none does, as found by a probe that
    /// starts no device (`gpu::GpuContext::probe_adapters`). Without it,
    /// `prepare` weighs a discrete GPU it has not seen.
    pub fn set_adapter(&mut self, adapter: Option<(DeviceClass, String)>) {
        self.adapter = Some(adapter);
    }

    /// Finds which adapter exists with a probe that starts no device
    /// (`gpu::GpuContext::probe_adapters`: 23-71 ms, the Vulkan loader and
    /// its drivers) and tells the one-shot plan ([`Session::set_adapter`]).
    pub fn probe_adapter(&mut self) {
        #[cfg(all(feature = "gpu", not(target_arch = "wasm32")))]
        let best = crate::gpu::GpuContext::probe_adapters()
            .into_iter()
            .next()
            .map(|p| {
                let class = DeviceClass::from_wgpu(&p.device_type, p.is_software);
                (class, p.name)
            });
        #[cfg(not(all(feature = "gpu", not(target_arch = "wasm32"))))]
        let best = None;
        self.set_adapter(best);
    }

    /// Routes `request` for a one-shot caller: when no GPU is attached, the
    /// routing point weighs starting one (start-up and upload count against
    /// it); when that pays, or `--backend gpu` asks for it, the GPU is
    /// started and the corpus uploaded, and the request routed again. A
    /// GPU that fails to start leaves the CPU (or, when forced, an error).
    pub fn prepare(&mut self, request: &Request<'_>, opts: &SearchOptions) -> Result<Route, Error> {
        if self.has_gpu() || opts.backend == crate::BackendChoice::Cpu {
            return self.route(request, opts);
        }
        if opts.backend == crate::BackendChoice::Gpu {
            self.attach_gpu()
                .map_err(|e| Error::backend(format!("--backend gpu: {e}")))?;
            return self.route(request, opts);
        }
        let mut unseen = None;
        if self.adapter.is_none() {
            // The plan weighs a discrete GPU it has not seen; only when it
            // would pay, look before starting one (a software adapter,
            // lavapipe, is never started automatically; uploading 194 MB
            // to it took 0.23 s for a search of 42 ms on the CPU).
            let cold =
                self.cold_route(request, opts, DeviceClass::Discrete, "a GPU (not started)")?;
            if !cold.is_gpu() {
                return Ok(cold);
            }
            self.probe_adapter();
            unseen = Some(cold);
        }
        let (class, name) = match &self.adapter {
            Some(Some((class, name))) => (*class, name.clone()),
            // The probe found none (or could not run).
            _ => {
                let mut r = self.route(request, opts)?;
                let said = r
                    .decision
                    .as_ref()
                    .is_some_and(|d| d.notes.iter().any(|n| n == planner::NO_ADAPTER));
                if !said {
                    r.reason = format!("{}; {}", planner::NO_ADAPTER, r.reason);
                }
                return Ok(r);
            }
        };
        if class == DeviceClass::Software {
            let mut r = self.route(request, opts)?;
            r.reason = format!(
                "software adapter ({name}): never chosen automatically; {}",
                r.reason
            );
            return Ok(r);
        }
        // A discrete one was just weighed: the plan stands.
        if !(class == DeviceClass::Discrete && unseen.is_some()) {
            let cold = self.cold_route(request, opts, class, &format!("{name} (not started)"))?;
            if !cold.is_gpu() {
                return Ok(cold);
            }
        }
        match self.attach_gpu() {
            Ok(()) => self.route(request, opts),
            Err(e) => {
                let mut r = self.route(request, opts)?;
                r.reason = format!("GPU not available ({e}); {}", r.reason);
                Ok(r)
            }
        }
    }

    /// The route `request` would take with a GPU of `class` that holds
    /// nothing yet (the CPU's calibration kept), for [`Session::prepare`]'s
    /// choice whether to start one.
    fn cold_route(
        &self,
        request: &Request<'_>,
        opts: &SearchOptions,
        class: DeviceClass,
        name: &str,
    ) -> Result<Route, Error> {
        let mut cal = Calibration::defaults(class);
        cal.cpu_gbps = self.calibration().cpu_gbps;
        route::route(&RouteInput {
            request: request.kind(),
            opts,
            corpus: &self.corpus,
            gpu: Some(GpuState {
                class,
                name: name.to_string(),
                resident: false,
                // Whether a class string is exact here reads every byte
                // (`Document::is_ascii`): 10-20 ms of a one-shot search of
                // 194 MB on one core. The upload reads them anyway, so only
                // a resident corpus is asked.
                class_scan: false,
                force_class_scan: false,
            }),
            calibration: &cal,
        })
    }

    /// Selected lines (or their count) of `query` in every document.
    pub fn search(&self, query: &Query, opts: &SearchOptions) -> Result<SearchResult, Error> {
        let req = Request::Search(query);
        let route = self.route(&req, opts)?;
        match self.execute(&req, &route, opts)? {
            Answer::Search(r) => Ok(r),
            _ => unreachable!("a search request is answered by a search result"),
        }
    }

    /// Counts, for every pattern of `query`, the lines that contain it and
    /// its occurrences (see [`crate::pattern_counts`]). `opts.want` and
    /// `opts.max_count` are ignored.
    pub fn count_per_pattern(
        &self,
        query: &Query,
        opts: &SearchOptions,
    ) -> Result<PatternCounts, Error> {
        let req = Request::PatternCounts(query);
        let route = self.route(&req, opts)?;
        match self.execute(&req, &route, opts)? {
            Answer::PatternCounts(r) => Ok(r),
            _ => unreachable!("a per-pattern request is answered by per-pattern counts"),
        }
    }

    /// Compiles `patterns` as watchlist `name` and keeps it (replacing one
    /// of that name): the CPU counter now, and, when per-pattern counts
    /// route to the GPU, its tables uploaded to every device. Returns it,
    /// and whether it replaced one.
    pub fn define_watchlist<P: AsRef<[u8]>>(
        &self,
        name: &str,
        patterns: &[P],
        opts: WatchlistOptions,
    ) -> Result<(Arc<Watchlist>, bool), Error> {
        let w = Arc::new(Watchlist::new(name, patterns, opts)?);
        #[cfg(feature = "gpu")]
        self.prepare_watchlist(&w);
        let old = self
            .watchlists
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name.to_string(), w.clone());
        Ok((w, old.is_some()))
    }

    /// Watchlist `name`, when defined.
    pub fn watchlist(&self, name: &str) -> Option<Arc<Watchlist>> {
        self.watchlists
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned()
    }

    /// Forgets watchlist `name` (its GPU tables go with the last count
    /// still running on it); false when there was none.
    pub fn remove_watchlist(&self, name: &str) -> bool {
        self.watchlists
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(name)
            .is_some()
    }

    /// The watchlists, by name.
    pub fn watchlists(&self) -> Vec<Arc<Watchlist>> {
        self.watchlists
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// Per-pattern counts of watchlist `w` ([`Request::Watchlist`]).
    pub fn count_watchlist(
        &self,
        w: &Watchlist,
        opts: &SearchOptions,
    ) -> Result<PatternCounts, Error> {
        let req = Request::Watchlist(w);
        let route = self.route(&req, opts)?;
        match self.execute(&req, &route, opts)? {
            Answer::PatternCounts(r) => Ok(r),
            _ => unreachable!("a watchlist request is answered by per-pattern counts"),
        }
    }

    /// Runs a stats query over the session's columns.
    pub fn stats(
        &self,
        query: &StatsQuery<'_>,
        opts: &SearchOptions,
    ) -> Result<(Stats, BackendReport), Error> {
        let req = Request::Stats(query);
        let route = self.route(&req, opts)?;
        match self.execute(&req, &route, opts)? {
            Answer::Stats(s, r) => Ok((s, r)),
            _ => unreachable!("a stats request is answered by stats"),
        }
    }

    /// Folds a measured run into the calibration.
    pub fn record(&self, m: &planner::Measurement) {
        // Fixed measurements (tests of routing): the calibration stays
        // as given.
        if planner::fixed_speed(&self.corpus).is_some() {
            return;
        }
        self.calibration
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .record(m);
    }

    /// The current calibration.
    pub fn calibration(&self) -> Calibration {
        self.calibration
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// A warning from loading the calibration file (corrupt file ignored).
    pub fn calibration_warning(&self) -> Option<&str> {
        self.calibration_warning.as_deref()
    }

    /// Persists the calibration in the tuning's cache directory.
    pub fn save_calibration(&self) -> std::io::Result<()> {
        self.calibration()
            .save(self.tuning.cache_dir.as_deref(), &self.calibration_device)
    }
}

#[cfg(feature = "gpu")]
impl Session {
    /// Uploads `w`'s tables to every device when its counts route to the
    /// GPU (the routing point decides, with default options). A failure
    /// is not an error: the first count tries again, or runs on the CPU.
    fn prepare_watchlist(&self, w: &Watchlist) {
        let req = Request::Watchlist(w);
        let Ok(route) = self.route(&req, &SearchOptions::default()) else {
            return;
        };
        let Some(mk) = route.backend.kernel().and_then(|k| k.multi()) else {
            return;
        };
        for d in &self.devices {
            let _ = d.corpus.prepare_tables(w.query(), mk, w.gpu());
        }
    }

    /// Opens the GPUs the tuning selects ([`crate::gpu::GpuTuning::gpus`]:
    /// by default every discrete adapter, else the process's shared
    /// context on the best one) and uploads the corpus: whole on one
    /// device, or in shards over several and a host tier under a GPU
    /// memory budget ([`Session::attach_gpus_with`]). On error the session
    /// stays CPU-only.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn attach_gpu(&mut self) -> Result<(), Error> {
        let ctxs = crate::gpu::GpuContext::open_selected(&self.tuning.gpu)?;
        self.attach_gpus_with(&ctxs, crate::gpu::UploadOptions::default(), None)
    }

    /// In a browser a thread cannot block on the GPU: upload with
    /// `GpuCorpus::upload_async` and hand the corpus to [`Session::set_gpu`].
    #[cfg(target_arch = "wasm32")]
    pub fn attach_gpu(&mut self) -> Result<(), Error> {
        Err(Error::backend(
            "in a browser, upload with GpuCorpus::upload_async and Session::set_gpu",
        ))
    }

    /// Uploads the corpus to `ctx` with `opts` (e.g. a small segment size).
    pub fn attach_gpu_with(
        &mut self,
        ctx: &crate::gpu::GpuContext,
        opts: crate::gpu::UploadOptions,
    ) -> Result<(), Error> {
        let g = crate::gpu::GpuCorpus::upload_with(ctx, &self.corpus, opts)?;
        self.upload_options = opts;
        self.set_gpu(g);
        Ok(())
    }

    /// Takes a corpus already uploaded (the browser uploads without
    /// blocking) and the device's calibration.
    pub fn set_gpu(&mut self, g: crate::gpu::GpuCorpus) {
        self.load_calibration(&g);
        self.layout = None;
        self.attach_notes.clear();
        self.devices = vec![shards::Device::new(g)];
    }

    /// Loads the calibration of `g`'s device (the first device's, with
    /// several).
    fn load_calibration(&mut self, g: &crate::gpu::GpuCorpus) {
        let info = g.context().info();
        let class = DeviceClass::from_wgpu(&info.device_type, info.is_software);
        let (mut cal, warning) =
            Calibration::load(self.tuning.cache_dir.as_deref(), &info.name, class);
        if cal.samples == 0 {
            cal.upload_gbps = g.upload_gbps().max(0.1);
        }
        *self
            .calibration
            .get_mut()
            .unwrap_or_else(|p| p.into_inner()) = cal;
        self.calibration_device = info.name.clone();
        self.calibration_warning = warning;
    }

    /// Drops the GPUs (a lost device): later requests run on the CPU.
    pub fn detach_gpu(&mut self) {
        self.devices.clear();
        self.layout = None;
        self.attach_notes.clear();
    }

    /// The resident GPU corpus, once attached: the first device's (a
    /// shard of the corpus when there are several, or a host tier:
    /// [`Session::gpus`], [`Session::layout`]).
    pub fn gpu(&self) -> Option<&crate::gpu::GpuCorpus> {
        self.devices.first().map(|d| &d.corpus)
    }

    /// Every device's resident corpus, in device order.
    pub fn gpus(&self) -> Vec<&crate::gpu::GpuCorpus> {
        self.devices.iter().map(|d| &d.corpus).collect()
    }

    /// Where each line lives when the corpus is spread over several GPUs
    /// or a host tier; `None` with one device holding everything (or no
    /// GPU).
    pub fn layout(&self) -> Option<&Layout> {
        self.layout.as_ref()
    }

    /// Where fused GPU counts spent their time so far (all zero when
    /// none ran).
    pub fn fusion_profile(&self) -> FusionProfile {
        self.fuser.profile()
    }

    /// Test hook: counts `queries` (each one literal `scan` runs) in one
    /// fused submission, as a batch of the fuser would, and answers each
    /// as its own search would (`-v`, `-m` applied): the selected lines
    /// per document.
    #[doc(hidden)]
    pub fn count_fused_batch(
        &self,
        queries: &[&Query],
        max_count: Option<u64>,
    ) -> Result<Vec<Vec<u64>>, Error> {
        let Some(g) = self.gpu() else {
            return Err(Error::backend("no GPU attached"));
        };
        if let Some(q) = queries.iter().find(|q| !g.can_fuse(q)) {
            return Err(Error::backend(format!(
                "{:?} cannot share a submission",
                q.patterns()
            )));
        }
        let prms: Vec<_> = queries.iter().map(|q| g.scan_params(q)).collect();
        let (counts, _) = g.count_batch(&prms)?;
        Ok(queries
            .iter()
            .zip(&counts)
            .map(|(q, c)| {
                g.finish_count(&self.corpus, q, c, max_count)
                    .iter()
                    .map(|d| d.count)
                    .collect()
            })
            .collect())
    }

    /// The fuser, when this count may share a submission: a `scan` count
    /// of one literal on a whole resident corpus, natively, fusion not
    /// turned off (`GpuTuning::no_fuse`).
    pub(crate) fn fusable(
        &self,
        g: &crate::gpu::GpuCorpus,
        q: &Query,
        kernel: crate::kernel::Kernel,
        opts: &SearchOptions,
    ) -> Option<&fuse::Fuser> {
        let ok = !cfg!(target_arch = "wasm32")
            && kernel == crate::kernel::Kernel::Scan
            && opts.want == crate::Want::Count
            && !self.tuning.gpu.no_fuse
            && g.can_fuse(q);
        ok.then_some(&self.fuser)
    }

    /// Test hook: destroys device `k` during the next request that runs on
    /// the GPUs, as a driver reset would mid-query. The request is still
    /// answered (the other devices and the CPU for its shard), and its
    /// report says so.
    #[doc(hidden)]
    pub fn lose_device_during_next_request(&self, k: usize) {
        *self.lose_next.lock().unwrap_or_else(|p| p.into_inner()) = Some(k);
    }
}

#[cfg(not(feature = "gpu"))]
impl Session {
    /// Without the `gpu` feature there is no GPU to attach.
    pub fn attach_gpu(&mut self) -> Result<(), Error> {
        Err(Error::backend(
            "the GPU backend is not available in this build (feature `gpu` is off)",
        ))
    }
}
