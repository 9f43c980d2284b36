//! The routing point: for every request kind and every front end, where a
//! query runs (CPU or GPU) and on which [`Kernel`], with the reasons.
//!
//! [`route`] is the one function that decides. It takes what is known about
//! the request, the corpus and the GPU ([`RouteInput`]) and returns a typed
//! [`Route`]; the executor ([`super::Session::execute`]) and the browser's
//! async executor run what it says and nothing else. "Can the GPU run this?"
//! is [`crate::support::kernel_support`]; "does the GPU pay?" is
//! [`crate::planner::plan`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::corpus::Corpus;
use crate::kernel::Kernel;
use crate::options::{BackendChoice, SearchOptions};
use crate::planner::{self, Calibration, Choice, Decision, DeviceClass};
use crate::query::{Query, QueryShape};
use crate::results::Want;
use crate::support::{kernel_support, stats_support, GpuPlan, GpuWork, PrefilterPlan, Unsupported};
use crate::Error;

pub(crate) use super::placement::LineMap;
pub use super::placement::{
    layout, resident_cost, split, DeviceState, Layout, LayoutPart, Place, Split,
};

/// What is asked, without the data it is asked of.
#[derive(Clone, Copy, Debug)]
pub enum RequestKind<'a> {
    /// Selected lines or their count ([`SearchOptions::want`]).
    Search(&'a Query),
    /// Lines and occurrences per pattern.
    PatternCounts(&'a Query),
    /// Time window, optional search, counts by field and time bucket.
    Stats(Option<&'a Query>),
}

impl<'a> RequestKind<'a> {
    /// The text query, if the request has one.
    pub fn query(&self) -> Option<&'a Query> {
        match *self {
            RequestKind::Search(q) | RequestKind::PatternCounts(q) => Some(q),
            RequestKind::Stats(q) => q,
        }
    }

    /// What the GPU must produce: per-pattern and stats answers are counts.
    fn want(&self, opts: &SearchOptions) -> Want {
        match self {
            RequestKind::Search(_) => opts.want,
            RequestKind::PatternCounts(_) | RequestKind::Stats(_) => Want::Count,
        }
    }
}

/// The GPU as the routing point sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuState {
    /// Its class (a software adapter is never chosen automatically).
    pub class: DeviceClass,
    /// The adapter's name.
    pub name: String,
    /// True when the corpus is uploaded; false when a GPU could be started
    /// and the corpus uploaded for this request (a one-shot caller).
    pub resident: bool,
    /// Tier 1 may run a class string as itself (`support::class_scan`);
    /// false with `GpuTuning::no_class_scan`.
    pub class_scan: bool,
    /// It always does, whatever the estimates (`GpuTuning::force_class_scan`).
    pub force_class_scan: bool,
}

/// Everything [`route`] weighs.
#[derive(Clone, Debug)]
pub struct RouteInput<'a> {
    /// The request.
    pub request: RequestKind<'a>,
    /// The caller's options (backend, kernel, threads, output).
    pub opts: &'a SearchOptions,
    /// The corpus.
    pub corpus: &'a Corpus,
    /// The GPU: resident, startable (cold) or none.
    pub gpu: Option<GpuState>,
    /// Throughputs and latencies.
    pub calibration: &'a Calibration,
}

/// Where a request runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The CPU engine.
    Cpu,
    /// The GPU, with this kernel.
    Gpu(Kernel),
    /// Tier 1, for a search the GPU kernels cannot run directly: this
    /// literal kernel finds the lines holding a required literal
    /// ([`crate::support::prefilter_support`]): candidates, which the
    /// CPU matcher verifies one by one; `-v` and `-m` on the host.
    GpuPrefilter(Kernel),
}

/// The route's short name: `cpu`, `gpu/scan`, `gpu/scan+verify` (the names
/// reports and the server show; nothing routes on them).
impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Backend::Cpu => f.write_str("cpu"),
            Backend::Gpu(k) => write!(f, "gpu/{}", k.name()),
            Backend::GpuPrefilter(k) => write!(f, "gpu/{}+verify", k.name()),
        }
    }
}

impl Backend {
    /// The GPU kernel it runs, if any.
    pub fn kernel(self) -> Option<Kernel> {
        match self {
            Backend::Cpu => None,
            Backend::Gpu(k) | Backend::GpuPrefilter(k) => Some(k),
        }
    }
}

/// The typed plan of one request: made once by [`route`], carried to the
/// executor unchanged.
#[derive(Clone, Debug)]
pub struct Route {
    /// Where it runs.
    pub backend: Backend,
    /// Why, in one line (`--explain`, the page, the bench).
    pub reason: String,
    /// True when the caller forced the backend (`--backend cpu|gpu`): a
    /// GPU failure is then an error, not a fall back to the CPU.
    pub forced: bool,
    /// The planner's decision, when the planner decided (shared: a kept
    /// route and every result of it hold the one decision).
    pub decision: Option<Arc<Decision>>,
    /// Tier 1's plan on a [`Backend::GpuPrefilter`] route: the literals
    /// chosen here (`planner::tier1_literals`, the set that finds the
    /// fewest lines of this corpus), which the executor runs as they are.
    pub prefilter: Option<PrefilterPlan>,
    /// On a GPU route over a corpus spread over several places (GPU
    /// shards, the host tier): who searches each part ([`split`]).
    /// `None`: one device holds the whole corpus.
    pub split: Option<Split>,
    /// On a [`Backend::Gpu`] route: support's plan, its kernel and the
    /// work it compiled (the automaton, the bitap chains), which the
    /// executor hands to the GPU as it is.
    pub job: Option<GpuPlan>,
}

impl Route {
    pub(crate) fn cpu(reason: impl Into<String>, decision: Option<Arc<Decision>>) -> Route {
        Route {
            backend: Backend::Cpu,
            reason: reason.into(),
            split: None,
            forced: false,
            decision,
            prefilter: None,
            job: None,
        }
    }

    /// True when the route runs on the GPU.
    pub fn is_gpu(&self) -> bool {
        self.backend.kernel().is_some()
    }
}

/// The kernel that runs `request` on the GPU when `asked` is asked for, or
/// why it cannot run there.
fn gpu_kernel(request: &RequestKind<'_>, asked: Option<Kernel>) -> Result<GpuPlan, String> {
    let stats = GpuPlan {
        kernel: Kernel::Stats,
        note: None,
        work: GpuWork::Literals,
    };
    match request {
        RequestKind::Search(q) => kernel_support(q, asked).map_err(|u| u.to_string()),
        RequestKind::PatternCounts(q) => {
            // Per-pattern counts always run a many-literal kernel.
            let asked = asked
                .filter(|k| k.multi().is_some())
                .or(Some(Kernel::Bloom));
            kernel_support(q, asked).map_err(|u| u.to_string())
        }
        RequestKind::Stats(Some(q)) => stats_support(Some(q))
            .map(|_| stats)
            .map_err(|u| u.to_string()),
        RequestKind::Stats(None) => Ok(stats),
    }
}

/// Tier 1 for `request` when the GPU kernels cannot run it directly
/// (`None`: they can, or the request is not a search): the candidate set
/// of required literals with the lowest estimated cost on this corpus
/// (`planner::tier1_literals`).
fn tier1(
    input: &RouteInput<'_>,
    direct: &Result<GpuPlan, String>,
) -> Option<Result<planner::Tier1Literals, Unsupported>> {
    let (RequestKind::Search(q), Err(_)) = (&input.request, direct) else {
        return None;
    };
    let bytes = input.corpus.total_bytes() as f64;
    Some(planner::tier1_literals(
        q,
        &planner::Tier1Input {
            corpus: input.corpus,
            asked: input.opts.gpu_kernel,
            bytes,
            lines: corpus_lines(input.corpus).map_or(bytes / 200.0, |l| l as f64),
            threads: crate::cpu::resolve_threads(input.opts.threads) as f64,
            calibration: input.calibration,
            // No GPU to run them: the static pick, the corpus untouched.
            sample: input.gpu.is_some(),
            class_scan: input.gpu.as_ref().is_some_and(|g| g.class_scan),
            force_classes: input.gpu.as_ref().is_some_and(|g| g.force_class_scan),
        },
    ))
}

/// The corpus's lines, when every document's line index is built.
fn corpus_lines(corpus: &Corpus) -> Option<u64> {
    corpus
        .docs()
        .iter()
        .map(|d| d.has_line_index().then(|| d.lines().len()))
        .sum::<Option<u64>>()
}

fn with_note(reason: String, note: Option<String>) -> String {
    match note {
        Some(n) => format!("{reason}; {n}"),
        None => reason,
    }
}

/// Decides where a request runs. The only routing decision in logsieve.
///
/// * `--backend cpu`: the CPU.
/// * `--backend gpu`: the GPU with the asked (or best) kernel, or an error
///   saying why it cannot (no GPU, or the query's shape).
/// * auto: the planner ([`planner::plan`]): inhibitors, then scores.
///   Stats without a search go to the GPU only when the corpus is
///   resident on real hardware: scanning the columns is cheap on the CPU.
pub fn route(input: &RouteInput<'_>) -> Result<Route, Error> {
    let opts = input.opts;
    match opts.backend {
        BackendChoice::Cpu => Ok(Route {
            forced: true,
            ..Route::cpu("forced with --backend cpu", None)
        }),
        BackendChoice::Gpu => {
            if input.gpu.as_ref().is_none_or(|g| !g.resident) {
                return Err(Error::backend(
                    "--backend gpu: no GPU attached (no adapter, or the upload failed)",
                ));
            }
            let direct = gpu_kernel(&input.request, opts.gpu_kernel);
            let mut prefilter = None;
            let job = direct.as_ref().ok().cloned();
            let (backend, reason) = match (&direct, tier1(input, &direct)) {
                (Ok(p), _) => (
                    Backend::Gpu(p.kernel),
                    with_note("forced with --backend gpu".to_string(), p.note.clone()),
                ),
                (Err(_), Some(Ok(t))) if t.best().plan.classes.is_some() => {
                    let p = t.best().plan.clone();
                    let what = p.classes.as_ref().map_or(String::new(), |c| c.describe());
                    let required = p.describe();
                    prefilter = Some(p);
                    (
                        Backend::GpuPrefilter(Kernel::Scan),
                        format!(
                            "forced with --backend gpu; tier 1: the regex is {what} (required: \
                             {required}), one scan pass each on its rarest bytes, exact"
                        ),
                    )
                }
                (Err(_), Some(Ok(t))) => {
                    let p = t.best().plan.clone();
                    let r = (
                        Backend::GpuPrefilter(p.kernel),
                        with_note(
                            format!(
                                "forced with --backend gpu; tier 1: GPU prefilter on {} ({}){}, \
                                 candidates verified by {}{}",
                                p.describe(),
                                p.kernel.name(),
                                t.best().share.map_or(String::new(), |s| format!(
                                    ", candidates {:.2}% of lines (sample)",
                                    s * 100.0
                                )),
                                p.verify.name(),
                                match t.rejected() {
                                    r if r.is_empty() => String::new(),
                                    r => format!("; rejected: {r}"),
                                }
                            ),
                            p.note.clone(),
                        ),
                    );
                    prefilter = Some(p);
                    r
                }
                (Err(r), Some(Err(t))) => {
                    return Err(Error::backend(format!(
                        "--backend gpu: {r}; GPU prefilter: {t}"
                    )))
                }
                (Err(r), None) => return Err(Error::backend(format!("--backend gpu: {r}"))),
            };
            Ok(Route {
                backend,
                reason,
                forced: true,
                decision: None,
                split: None,
                prefilter,
                job,
            })
        }
        BackendChoice::Auto => Ok(route_auto(input)),
    }
}

/// The routes of recent requests, so that a repeated one is not planned
/// again ([`Memo::route`]).
///
/// A route is a function of its [`RouteInput`] and of what the corpus's
/// own memo keeps (the planner's samples and timings): the key is the
/// input itself, the corpus by its [`Corpus::epoch`] and its line count
/// (the line index is built lazily), the query by its shape
/// (`Query::memo_key`: queries of at most 4 KiB of patterns; longer ones
/// are planned every time), the calibration by the estimates it gives
/// for this corpus, within [`Memo::CALIBRATION_SLACK`] of the ones the
/// route was planned with ([`near`]; every GPU run folds its time in: a
/// count of one literal, even forced, moved it each time, and an exact
/// key missed after every such query).
/// `--explain` always plans afresh: it shows the estimates of now.
/// Planning a regex costs 6-26 µs back to back
/// on the build machine (`regex-route`, auto: tier 1's candidate sets,
/// the sample's memo, the reasons' text; mostly allocation and
/// formatting; 0.4 µs from the memo). On the H200 (2026-11-29, the
/// `route:` lines of `LOGSIEVE_TRACE_QUERIES=1`) `\b(GET|POST) /api/v\d/`
/// took 25-33 µs repeated back to back and 93-147 µs after 100 ms idle.
#[derive(Debug, Default)]
pub struct Memo {
    entries: std::sync::Mutex<Vec<(MemoKey, Route)>>,
    /// Routes answered from `entries`, and routes planned ([`MemoCounts`]).
    memoised: AtomicU64,
    planned: AtomicU64,
}

/// How many routes [`Memo::route`] answered from the memo and how many it
/// planned (`--explain`, long queries and errors among them): for
/// `GET /metrics` and the benches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoCounts {
    /// Routes answered from the memo.
    pub memoised: u64,
    /// Routes planned.
    pub planned: u64,
}

/// What a memoised route was planned from ([`Memo`]).
#[derive(Debug)]
struct MemoKey {
    /// [`request_code`].
    request: u8,
    query: Option<QueryShape>,
    /// [`corpus_key`].
    corpus: (u64, Option<u64>),
    /// The corpus's bytes (one epoch holds one set of bytes), which
    /// [`near`] weighs the kernels by: kept, not summed over the
    /// documents on every lookup.
    bytes: u64,
    opts: SearchOptions,
    gpu: Option<GpuState>,
    calibration: Calibration,
}

/// The request kind as a memo keys it: 0 search, 1 per-pattern counts, 2
/// stats.
fn request_code(r: &RequestKind<'_>) -> u8 {
    match r {
        RequestKind::Search(_) => 0,
        RequestKind::PatternCounts(_) => 1,
        RequestKind::Stats(_) => 2,
    }
}

/// The corpus as a memo keys it: [`Corpus::epoch`] and the line count,
/// when the index is built (it is built lazily).
fn corpus_key(c: &Corpus) -> (u64, Option<u64>) {
    (c.epoch(), corpus_lines(c))
}

impl MemoKey {
    /// The key of `input` (kept when its route is), or `None` when its
    /// query's patterns are too long to copy.
    fn of(input: &RouteInput<'_>) -> Option<MemoKey> {
        let query = match input.request.query() {
            Some(q) => Some(q.memo_key()?),
            None => None,
        };
        Some(MemoKey {
            request: request_code(&input.request),
            query,
            corpus: corpus_key(input.corpus),
            bytes: input.corpus.total_bytes(),
            opts: input.opts.clone(),
            gpu: input.gpu.clone(),
            calibration: input.calibration.clone(),
        })
    }

    /// The same request as `input` on the same corpus (`corpus`: its
    /// [`corpus_key`]) and GPU, compared without a copy: a route planned
    /// with another calibration is replaced, not kept beside (an
    /// automatic run folds its time into the calibration: repeated, it
    /// would fill the memo with its own stale routes).
    fn same_request(&self, input: &RouteInput<'_>, corpus: (u64, Option<u64>)) -> bool {
        let query = match (&self.query, input.request.query()) {
            (Some(s), Some(q)) => q.has_shape(s),
            (s, q) => s.is_none() && q.is_none(),
        };
        self.request == request_code(&input.request)
            && self.corpus == corpus
            && query
            && self.opts == *input.opts
            && self.gpu == input.gpu
    }

    /// The same request, planned under a calibration near `input`'s
    /// ([`near`]).
    fn matches(&self, input: &RouteInput<'_>, corpus: (u64, Option<u64>)) -> bool {
        self.same_request(input, corpus) && near(&self.calibration, input.calibration, self.bytes)
    }
}

/// True when every estimate the planner reads from `a` is within
/// [`Memo::CALIBRATION_SLACK`] of the one from `b` (the same kernels
/// measured; both calibrated, or both defaults), for a corpus of `bytes`.
///
/// A GPU kernel is compared by its time over the corpus, its fixed cost
/// and its pass (`gpu_latency_ms + bytes / gpu_gbps`), as the planner
/// prices it, not by its throughput alone: a resident count of 194 MB
/// takes 0.10-0.16 ms on the H200, most of it the fixed cost, so the
/// throughput each run measures (`Calibration::record`) moved by 2x and
/// more from run to run while the kernel's time moved by a few percent
/// (2026-11-29: the literal-scan column's count moved the throughput
/// past the slack between most auto routes of `ERROR_5\d\d`, which were
/// planned again, 38 of 90 memoised). Tier 2's kernels are calibrated
/// per unit (`planner::units`), and priced at a multiple of the bytes: their
/// throughputs are compared as they are.
fn near(a: &Calibration, b: &Calibration, bytes: u64) -> bool {
    let close = |x: f64, y: f64| {
        x == y || (x > 0.0 && y > 0.0 && (x / y).max(y / x) <= Memo::CALIBRATION_SLACK)
    };
    let weighed = |c: &Calibration, k: Kernel, gbps: f64| match planner::per_unit(k) {
        true => gbps,
        false => c.gpu_latency_ms + bytes as f64 / (gbps.max(1e-9) * 1e6),
    };
    close(a.cpu_gbps, b.cpu_gbps)
        && close(a.gpu_latency_ms, b.gpu_latency_ms)
        && close(a.upload_gbps, b.upload_gbps)
        && close(a.gpu_startup_ms, b.gpu_startup_ms)
        && close(a.crossover_bytes as f64, b.crossover_bytes as f64)
        && (a.samples == 0) == (b.samples == 0)
        && a.gpu_gbps.len() == b.gpu_gbps.len()
        && a.gpu_gbps
            .iter()
            .zip(&b.gpu_gbps)
            .all(|((ka, va), (kb, vb))| {
                ka == kb && close(weighed(a, *ka, *va), weighed(b, *kb, *vb))
            })
}

impl Memo {
    /// The requests whose routes are kept (least recently used dropped).
    const CAPACITY: usize = 64;

    /// How far each number of the calibration may have moved since a kept
    /// route was planned (a factor): the planner's estimates, and so its
    /// choices, are no finer than that (the bench's goal for auto is
    /// within 1.1x of the best route).
    pub const CALIBRATION_SLACK: f64 = 1.1;

    /// [`route`] of `input`, from the memo when the same input was routed
    /// before; the flag is true then. Errors are not kept.
    pub fn route(&self, input: &RouteInput<'_>) -> Result<(Route, bool), Error> {
        let kept = !input.opts.explain && input.request.query().is_none_or(Query::memoised);
        // Looked up without building a key: a hit copies nothing but the
        // route.
        let corpus = corpus_key(input.corpus);
        if let (true, Ok(mut m)) = (kept, self.entries.lock()) {
            if let Some(i) = m.iter().position(|(k, _)| k.matches(input, corpus)) {
                let e = m.remove(i);
                let r = e.1.clone();
                m.push(e);
                self.memoised.fetch_add(1, Ordering::Relaxed);
                return Ok((r, true));
            }
        }
        self.planned.fetch_add(1, Ordering::Relaxed);
        let r = route(input)?;
        if !kept {
            return Ok((r, false));
        }
        if let (Some(key), Ok(mut m)) = (MemoKey::of(input), self.entries.lock()) {
            m.retain(|(k, _)| !k.same_request(input, corpus));
            if m.len() >= Self::CAPACITY {
                m.remove(0);
            }
            m.push((key, r.clone()));
        }
        Ok((r, false))
    }

    /// Routes answered from the memo and routes planned, since it was
    /// made.
    pub fn counts(&self) -> MemoCounts {
        MemoCounts {
            memoised: self.memoised.load(Ordering::Relaxed),
            planned: self.planned.load(Ordering::Relaxed),
        }
    }

    /// Routes kept.
    pub fn len(&self) -> usize {
        self.entries.lock().map_or(0, |m| m.len())
    }

    /// True when no route is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn route_auto(input: &RouteInput<'_>) -> Route {
    let opts = input.opts;
    let Some(query) = input.request.query() else {
        // Stats over the columns alone.
        return match &input.gpu {
            Some(g) if g.resident && g.class != DeviceClass::Software => Route {
                backend: Backend::Gpu(Kernel::Stats),
                reason: format!("GPU {} attached", g.name),
                forced: false,
                decision: None,
                split: None,
                prefilter: None,
                job: None,
            },
            _ => Route::cpu("no search: the CPU scans the columns", None),
        };
    };
    let want = input.request.want(opts);
    let supported = gpu_kernel(&input.request, opts.gpu_kernel);
    let tier1 = tier1(input, &supported);
    let prefilter = tier1.as_ref().map(|r| {
        r.as_ref()
            .map(|t| t.best().plan.clone())
            .map_err(Clone::clone)
    });
    // Density only decides for line output (the inhibitor); for counts
    // the sample is informational, so it is taken only for --explain.
    // Tier 1 needs its candidate share.
    // Fuzzy needs the CPU's speed on this corpus (the sample's timing:
    // `planner::cpu_estimate`).
    let fuzzy = matches!(query.syntax(), crate::query::Syntax::Fuzzy(_));
    let sampled = want == Want::Lines || opts.explain || fuzzy || matches!(prefilter, Some(Ok(_)));
    // This machine's scan speed (`planner::scan_probe`, once per corpus)
    // when the CPU's estimate is read: against a GPU, or by --explain.
    // Probed before the sample, whose timing of a literal's finder reads
    // the probe's pages: after it, memchr read them from the cache at
    // 15-21 GB/s on the 2026-11-26 build machine (`19e3983`), and 8-9 before (the
    // literals' estimates 0.75-0.85x their runs, a regex's 2.1x).
    let probe = (opts.explain || input.gpu.is_some()).then(|| planner::scan_probe(input.corpus));
    let mut sample = if sampled {
        planner::sample(input.corpus, query, 16, opts.explain)
    } else {
        planner::SampleStats::default()
    };
    if let Some(p) = probe {
        (sample.scan_gbps, sample.fault_gbps) = p;
        // The finder's speed on this corpus weighs the CPU against a GPU
        // for counts too (no sample): at the matcher's own factor, 1,000
        // request ids (the prefix table's 0.1) were estimated at 353 ms
        // against 42 run, and a one-shot count started a GPU for them.
        if sample.cpu_speed == 0.0 {
            sample.cpu_speed = planner::finder_speed(input.corpus, query);
        }
    }
    // Tier 1's candidates are the chosen set's, counted on the same
    // windows.
    if let Some(Ok(t)) = &tier1 {
        if let Some(share) = t.best().share {
            sample.candidates = (share * sample.lines as f64).round() as u64;
        }
    }
    let rejected = match &tier1 {
        Some(Ok(t)) if t.options.len() > 1 => Some(t.rejected()),
        _ => None,
    };
    let lines = corpus_lines(input.corpus);
    let decision = Arc::new(planner::plan(&planner::PlanInput {
        query,
        want,
        line_ids: opts.line_ids,
        bytes: input.corpus.total_bytes(),
        lines,
        threads: crate::cpu::resolve_threads(opts.threads),
        resident: input.gpu.as_ref().is_some_and(|g| g.resident),
        gpu: input.gpu.as_ref().map(|g| (g.class, g.name.clone())),
        gpu_unsupported: supported.as_ref().err().cloned(),
        prefilter: prefilter.clone(),
        tier1_rejected: rejected,
        sample,
        calibration: input.calibration,
    }));
    match (&decision.choice, supported, prefilter) {
        // Tier 2 chosen over tier 1 by the planner.
        (Choice::Gpu(Kernel::ShiftAnd), Err(_), Some(Ok(_))) => Route {
            backend: Backend::Gpu(Kernel::ShiftAnd),
            reason: decision.summary(),
            forced: false,
            decision: Some(decision),
            split: None,
            prefilter: None,
            // The planner priced the automaton that support compiled.
            job: kernel_support(query, Some(Kernel::ShiftAnd)).ok(),
        },
        (Choice::Gpu(_), Ok(p), _) => Route {
            backend: Backend::Gpu(p.kernel),
            reason: with_note(decision.summary(), p.note.clone()),
            forced: false,
            decision: Some(decision),
            split: None,
            prefilter: None,
            job: Some(p),
        },
        (Choice::GpuPrefilter(_), _, Some(Ok(p))) => Route {
            backend: Backend::GpuPrefilter(p.kernel),
            reason: with_note(decision.summary(), p.note.clone()),
            forced: false,
            decision: Some(decision),
            split: None,
            prefilter: Some(p),
            job: None,
        },
        _ => Route::cpu(decision.summary(), Some(decision)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{generate, GenOptions};
    use crate::results::Want;
    use crate::QueryBuilder;

    fn lines(n: u64, seed: u64) -> Vec<u8> {
        generate(&GenOptions {
            lines: n,
            seed,
            ..Default::default()
        })
    }

    fn discrete() -> Option<GpuState> {
        Some(GpuState {
            class: DeviceClass::Discrete,
            name: "discrete (routing only)".to_string(),
            resident: true,
            class_scan: true,
            force_class_scan: false,
        })
    }

    fn counts(backend: BackendChoice) -> SearchOptions {
        SearchOptions {
            backend,
            // REGRESSION: the CPU's estimate read this machine's cores and
            // (before measurements were fixed in tests) its measured scan
            // speed, and a loaded machine planned the CPU where the test
            // expects the GPU. Routes in tests depend on their inputs only.
            threads: 2,
            want: Want::Count,
            ..Default::default()
        }
    }

    /// The memo counts the routes it kept and the ones it planned.
    #[test]
    fn the_counts_say_which_routes_were_memoised() {
        let corpus = Corpus::from_bytes("t", lines(1000, 7));
        let regex = QueryBuilder::new().build(&[r"ERROR_5\d\d"]).unwrap();
        let cal = Calibration::defaults(DeviceClass::Discrete);
        let auto = counts(BackendChoice::Auto);
        let explain = SearchOptions {
            explain: true,
            ..auto.clone()
        };
        let memo = Memo::default();
        for opts in [&auto, &auto, &explain, &auto] {
            memo.route(&RouteInput {
                request: RequestKind::Search(&regex),
                opts,
                corpus: &corpus,
                gpu: discrete(),
                calibration: &cal,
            })
            .unwrap();
        }
        let want = MemoCounts {
            memoised: 2,
            planned: 2,
        };
        assert_eq!(memo.counts(), want);
    }

    /// The calibration's GPU kernels are compared by their time over the
    /// corpus (fixed cost and pass), tier 2's by their throughput.
    #[test]
    fn a_kernel_is_weighed_by_its_time_over_the_corpus() {
        let mut a = Calibration::defaults(DeviceClass::Discrete);
        a.gpu_latency_ms = 0.09;
        a.gpu_gbps.insert(Kernel::Scan, 6000.0);
        a.gpu_gbps.insert(Kernel::ShiftAnd, 100.0);
        let moved = |k: Kernel, f: f64| {
            let mut b = a.clone();
            *b.gpu_gbps.get_mut(&k).unwrap() *= f;
            b
        };
        // 194 MB at 6 TB/s: 0.032 ms of pass after 0.09 of fixed cost
        // (0.122 ms); 1.4x faster 0.113 ms, within 1.1x; 3x slower 0.187.
        let bytes = 194_000_000;
        assert!(near(&a, &moved(Kernel::Scan, 1.4), bytes));
        assert!(!near(&a, &moved(Kernel::Scan, 1.0 / 3.0), bytes));
        // A thousandth of the bytes: the fixed cost is all of it.
        assert!(near(&a, &moved(Kernel::Scan, 1.0 / 3.0), bytes / 1000));
        assert!(!near(&a, &moved(Kernel::ShiftAnd, 1.15), bytes / 1000));
        assert!(near(&a, &moved(Kernel::ShiftAnd, 1.05), bytes));
    }

    /// A memoised route is the one [`route`] plans for the same input, and
    /// any difference in the input (options, query, GPU, calibration, the
    /// corpus's contents) plans again.
    #[test]
    fn the_memo_gives_the_planned_route_and_plans_again_when_the_input_changes() {
        let mut corpus = Corpus::from_bytes("t", lines(1000, 7));
        let regex = QueryBuilder::new().build(&[r"ERROR_5\d\d"]).unwrap();
        let other = QueryBuilder::new().build(&[r"ERROR_4\d\d"]).unwrap();
        let (auto, forced) = (counts(BackendChoice::Auto), counts(BackendChoice::Gpu));
        let explain = SearchOptions {
            explain: true,
            ..auto.clone()
        };
        let cal = Calibration::defaults(DeviceClass::Discrete);
        let mut faster = cal.clone();
        faster.cpu_gbps *= 2.0;
        let memo = Memo::default();
        let ask = |corpus: &Corpus, q: &Query, opts: &SearchOptions, gpu, cal: &Calibration| {
            let input = RouteInput {
                request: RequestKind::Search(q),
                opts,
                corpus,
                gpu,
                calibration: cal,
            };
            let (r, hit) = memo.route(&input).unwrap();
            // Memoised or not, the route is the one planned now.
            assert_eq!(format!("{r:?}"), format!("{:?}", route(&input).unwrap()));
            (r, hit)
        };
        for opts in [&auto, &forced] {
            assert!(!ask(&corpus, &regex, opts, discrete(), &cal).1);
            assert!(ask(&corpus, &regex, opts, discrete(), &cal).1);
        }
        assert_eq!(memo.len(), 2);
        // --explain plans afresh every time (it shows the estimates of now).
        assert!(!ask(&corpus, &regex, &explain, discrete(), &cal).1);
        assert!(!ask(&corpus, &regex, &explain, discrete(), &cal).1);
        assert!(!ask(&corpus, &other, &auto, discrete(), &cal).1);
        assert!(!ask(&corpus, &regex, &auto, None, &cal).1);
        assert_eq!(memo.len(), 4);
        // Another calibration replaces the route planned with the first.
        assert!(!ask(&corpus, &regex, &auto, discrete(), &faster).1);
        assert_eq!(memo.len(), 4);
        assert!(ask(&corpus, &regex, &auto, discrete(), &faster).1);
        // One within the slack of the one planned with gets the kept
        // route: the one planned with `faster`.
        let mut near_faster = faster.clone();
        near_faster.cpu_gbps *= 1.05;
        *near_faster.gpu_gbps.get_mut(&Kernel::Scan).unwrap() /= 1.05;
        let input = RouteInput {
            request: RequestKind::Search(&regex),
            opts: &auto,
            corpus: &corpus,
            gpu: discrete(),
            calibration: &near_faster,
        };
        let (kept, hit) = memo.route(&input).unwrap();
        let planned = route(&RouteInput {
            calibration: &faster,
            ..input.clone()
        });
        assert!(hit);
        assert_eq!(format!("{kept:?}"), format!("{:?}", planned.unwrap()));
        // 1.05 x 1.05 away: beyond the slack, planned again.
        let mut beyond = near_faster.clone();
        beyond.cpu_gbps *= 1.05;
        let again = RouteInput {
            calibration: &beyond,
            ..input
        };
        assert!(!memo.route(&again).unwrap().1);
        // A kernel is weighed by its time over the corpus: on 1,000 lines
        // its fixed cost is nearly all of it, so the throughput twice as
        // high keeps the route, and a thousandth (the pass now 4x the
        // fixed cost) plans again.
        let scaled = |f: f64| {
            let mut c = beyond.clone();
            *c.gpu_gbps.get_mut(&Kernel::Scan).unwrap() *= f;
            c
        };
        let (twice, slow) = (scaled(2.0), scaled(1e-3));
        let kept = RouteInput {
            calibration: &twice,
            ..again.clone()
        };
        assert!(memo.route(&kept).unwrap().1);
        let planned = RouteInput {
            calibration: &slow,
            ..again.clone()
        };
        assert!(!memo.route(&planned).unwrap().1);
        assert!(memo.route(&planned).unwrap().1);
        // The same bytes in another corpus, and the corpus grown: planned
        // again, and for 1,000 lines (under the crossover) the CPU, for
        // 31,000 the GPU.
        let literal = QueryBuilder::new().build(&["ERROR"]).unwrap();
        let (small, hit) = ask(&corpus, &literal, &auto, discrete(), &cal);
        assert!(!hit && small.backend == Backend::Cpu, "{small:?}");
        let copy = Corpus::from_bytes("t", corpus.docs()[0].data().to_vec());
        assert_ne!(copy.epoch(), corpus.epoch());
        assert!(!ask(&copy, &literal, &auto, discrete(), &cal).1);
        let before = corpus.epoch();
        corpus.append(0, &lines(30_000, 8)).unwrap();
        assert_ne!(corpus.epoch(), before);
        let (grown, hit) = ask(&corpus, &literal, &auto, discrete(), &cal);
        assert!(
            !hit && grown.backend == Backend::Gpu(Kernel::Scan),
            "{grown:?}"
        );
        assert!(ask(&corpus, &literal, &auto, discrete(), &cal).1);
    }

    /// Queries of more than 4 KiB of patterns are planned every time (their
    /// key would be a copy of them), and the memo keeps the most recent 64.
    #[test]
    fn long_queries_are_not_kept_and_the_memo_is_bounded() {
        let corpus = Corpus::from_bytes("t", lines(200, 9));
        let cal = Calibration::defaults(DeviceClass::Discrete);
        let opts = counts(BackendChoice::Auto);
        let memo = Memo::default();
        // Routed through the memo: true when the route was kept.
        let kept = |q: &Query| {
            let input = RouteInput {
                request: RequestKind::Search(q),
                opts: &opts,
                corpus: &corpus,
                gpu: discrete(),
                calibration: &cal,
            };
            memo.route(&input).unwrap().1
        };
        let pats: Vec<String> = (0..300).map(|i| format!("request-{i:010}")).collect();
        let long = QueryBuilder::new().build(&pats).unwrap();
        assert!(!kept(&long) && !kept(&long) && !kept(&long));
        assert!(memo.is_empty());
        let queries: Vec<Query> = (0..Memo::CAPACITY + 1)
            .map(|i| QueryBuilder::new().build(&[format!("user=u{i}")]).unwrap())
            .collect();
        assert!(queries.iter().all(|q| !kept(q)));
        assert_eq!(memo.len(), Memo::CAPACITY);
        // The first was dropped, the last kept.
        assert!(kept(&queries[Memo::CAPACITY]));
        assert!(!kept(&queries[0]));
    }
}
