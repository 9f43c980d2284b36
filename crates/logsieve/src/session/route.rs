//! The routing point: for every request kind and every front end, where a
//! query runs (CPU or GPU) and on which [`Kernel`], with the reasons.
//!
//! [`route`] is the one function that decides. It takes what is known about
//! the request, the corpus and the GPU ([`RouteInput`]) and returns a typed
//! [`Route`]; the executor ([`super::Session::execute`]) and the browser's
//! async executor run what it says and nothing else. "Can the GPU run this?"
//! is [`crate::support::kernel_support`]; "does the GPU pay?" is
//! [`crate::planner::plan`].

use crate::corpus::Corpus;
use crate::kernel::Kernel;
use crate::options::{BackendChoice, SearchOptions};
use crate::planner::{self, Calibration, Choice, Decision, DeviceClass};
use crate::query::Query;
use crate::results::Want;
use crate::support::{kernel_support, stats_support, PrefilterPlan, Unsupported};
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
#[derive(Clone, Debug)]
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
    /// The planner's decision, when the planner decided.
    pub decision: Option<Decision>,
    /// Tier 1's plan on a [`Backend::GpuPrefilter`] route: the literals
    /// chosen here (`planner::tier1_literals`, the set that finds the
    /// fewest lines of this corpus), which the executor runs as they are.
    pub prefilter: Option<PrefilterPlan>,
    /// On a GPU route over a corpus spread over several places (GPU
    /// shards, the host tier): who searches each part ([`split`]).
    /// `None`: one device holds the whole corpus.
    pub split: Option<Split>,
}

impl Route {
    fn cpu(reason: impl Into<String>, decision: Option<Decision>) -> Route {
        Route {
            backend: Backend::Cpu,
            reason: reason.into(),
            split: None,
            forced: false,
            decision,
            prefilter: None,
        }
    }

    /// True when the route runs on the GPU.
    pub fn is_gpu(&self) -> bool {
        self.backend.kernel().is_some()
    }
}

/// The kernel that runs `request` on the GPU when `asked` is asked for, or
/// why it cannot run there.
fn gpu_kernel(
    request: &RequestKind<'_>,
    asked: Option<Kernel>,
) -> Result<(Kernel, Option<String>), String> {
    match request {
        RequestKind::Search(q) => kernel_support(q, asked)
            .map(|p| (p.kernel, p.note))
            .map_err(|u| u.to_string()),
        RequestKind::PatternCounts(q) => {
            // Per-pattern counts always run a many-literal kernel.
            let asked = asked
                .filter(|k| k.multi().is_some())
                .or(Some(Kernel::Bloom));
            kernel_support(q, asked)
                .map(|p| (p.kernel, p.note))
                .map_err(|u| u.to_string())
        }
        RequestKind::Stats(Some(q)) => stats_support(Some(q))
            .map(|_| (Kernel::Stats, None))
            .map_err(|u| u.to_string()),
        RequestKind::Stats(None) => Ok((Kernel::Stats, None)),
    }
}

/// Tier 1 for `request` when the GPU kernels cannot run it directly
/// (`None`: they can, or the request is not a search): the candidate set
/// of required literals with the lowest estimated cost on this corpus
/// (`planner::tier1_literals`).
fn tier1(
    input: &RouteInput<'_>,
    direct: &Result<(Kernel, Option<String>), String>,
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
            let (backend, reason) = match (&direct, tier1(input, &direct)) {
                (Ok((kernel, note)), _) => (
                    Backend::Gpu(*kernel),
                    with_note("forced with --backend gpu".to_string(), note.clone()),
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
            })
        }
        BackendChoice::Auto => Ok(route_auto(input)),
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
    // 15-21 GB/s on session 9's build machine, and 8-9 before (the
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
    let decision = planner::plan(&planner::PlanInput {
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
    });
    match (&decision.choice, supported, prefilter) {
        // Tier 2 chosen over tier 1 by the planner.
        (Choice::Gpu(Kernel::ShiftAnd), Err(_), Some(Ok(_))) => Route {
            backend: Backend::Gpu(Kernel::ShiftAnd),
            reason: decision.summary(),
            forced: false,
            decision: Some(decision),
            split: None,
            prefilter: None,
        },
        (Choice::Gpu(_), Ok((kernel, note)), _) => Route {
            backend: Backend::Gpu(kernel),
            reason: with_note(decision.summary(), note),
            forced: false,
            decision: Some(decision),
            split: None,
            prefilter: None,
        },
        (Choice::GpuPrefilter(_), _, Some(Ok(p))) => Route {
            backend: Backend::GpuPrefilter(p.kernel),
            reason: with_note(decision.summary(), p.note.clone()),
            forced: false,
            decision: Some(decision),
            split: None,
            prefilter: Some(p),
        },
        _ => Route::cpu(decision.summary(), Some(decision)),
    }
}
