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
use crate::support::{kernel_support, stats_support};
use crate::Error;

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
}

impl Route {
    fn cpu(reason: impl Into<String>, decision: Option<Decision>) -> Route {
        Route {
            backend: Backend::Cpu,
            reason: reason.into(),
            forced: false,
            decision,
        }
    }

    /// True when the route runs on the GPU.
    pub fn is_gpu(&self) -> bool {
        matches!(self.backend, Backend::Gpu(_))
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
            let (kernel, note) = gpu_kernel(&input.request, opts.gpu_kernel)
                .map_err(|r| Error::backend(format!("--backend gpu: {r}")))?;
            Ok(Route {
                backend: Backend::Gpu(kernel),
                reason: with_note("forced with --backend gpu".to_string(), note),
                forced: true,
                decision: None,
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
            },
            _ => Route::cpu("no search: the CPU scans the columns", None),
        };
    };
    let want = input.request.want(opts);
    // Density only decides for line output (the inhibitor); for counts
    // the sample is informational, so it is taken only for --explain.
    let sample = if want == Want::Lines || opts.explain {
        planner::sample(input.corpus, query, 16, opts.explain)
    } else {
        planner::SampleStats::default()
    };
    let lines = input
        .corpus
        .docs()
        .iter()
        .map(|d| d.has_line_index().then(|| d.lines().len()))
        .sum::<Option<u64>>();
    let supported = gpu_kernel(&input.request, opts.gpu_kernel);
    let decision = planner::plan(&planner::PlanInput {
        query,
        want,
        bytes: input.corpus.total_bytes(),
        lines,
        threads: crate::cpu::resolve_threads(opts.threads),
        resident: input.gpu.as_ref().is_some_and(|g| g.resident),
        gpu: input.gpu.as_ref().map(|g| (g.class, g.name.clone())),
        gpu_unsupported: supported.as_ref().err().cloned(),
        sample,
        calibration: input.calibration,
    });
    match (&decision.choice, supported) {
        (Choice::Gpu(_), Ok((kernel, note))) => Route {
            backend: Backend::Gpu(kernel),
            reason: with_note(decision.summary(), note),
            forced: false,
            decision: Some(decision),
        },
        _ => Route::cpu(decision.summary(), Some(decision)),
    }
}
