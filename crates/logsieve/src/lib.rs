/*!
logsieve searches logs held in memory — on the GPU when one helps, on all CPU
cores otherwise — through one backend-neutral API.

# Overview

* A [`Corpus`] holds the documents (files, stdin, generated data). Each
  [`Document`] has a lazily built [`LineIndex`] and splits into
  [`Segment`]s for backends whose buffers are bounded.
* A [`Query`] is built by a [`QueryBuilder`]: regex (default), fixed strings,
  wildcards or fuzzy, with `-i`, `-w`, `-x`, `-v`. The analysis notices a
  regex that is a plain literal.
* An [`Engine`] owns a corpus and answers queries; [`SearchResult`] says
  which backend ran and why.

# Example

```
use logsieve::{Corpus, Engine, QueryBuilder, SearchOptions, Syntax};

let corpus = Corpus::from_bytes("app.log", b"ok\nERROR_503 upstream\nok\n".to_vec());
let engine = Engine::new(corpus);
let query = QueryBuilder::new().syntax(Syntax::Fixed).build(&["ERROR_503"]).unwrap();
let res = engine.search(&query, &SearchOptions::default()).unwrap();
assert_eq!(res.docs[0].count, 1);
assert_eq!(res.docs[0].lines, vec![1]);
println!("{}", res.backend);
```

# Features

* `gpu` (default): the wgpu backend.
*/
#![deny(missing_docs)]

pub mod corpus;
pub mod cpu;
mod error;
pub mod gen;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod pattern_counts;
pub mod pipeline;
pub mod planner;
pub mod query;

pub use corpus::{Corpus, Document, LineIndex, LoadOptions, Segment};
pub use error::{Error, ErrorKind};
pub use pattern_counts::{PatternCounts, PatternNamer};
pub use query::{CaseMode, Query, QueryBuilder, QueryKind, Syntax};

use std::time::Duration;

/// What a search should produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Want {
    /// Only the number of selected lines.
    Count,
    /// The selected line ids too.
    #[default]
    Lines,
}

/// Which backend to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// Let the planner decide.
    #[default]
    Auto,
    /// The CPU engine.
    Cpu,
    /// The GPU engine (an error if it cannot run the query).
    Gpu,
}

/// Options for one search.
#[derive(Clone, Debug)]
pub struct SearchOptions {
    /// Which backend.
    pub backend: BackendChoice,
    /// CPU threads for one document; 0 means all cores.
    pub threads: usize,
    /// Count only, or the line ids too.
    pub want: Want,
    /// Stop after this many selected lines per document (`-m`).
    pub max_count: Option<u64>,
    /// Gather the planner's informational factors too (`--explain`).
    pub explain: bool,
    /// The GPU kernel (`--gpu-kernel`); `None` picks the best, `scan`.
    #[cfg(feature = "gpu")]
    pub gpu_kernel: Option<gpu::GpuKernel>,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            backend: BackendChoice::Auto,
            threads: 1,
            want: Want::Lines,
            max_count: None,
            explain: false,
            #[cfg(feature = "gpu")]
            gpu_kernel: None,
        }
    }
}

/// The selected lines of one document.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DocHits {
    /// Number of selected lines (after `-v` and `-m`).
    pub count: u64,
    /// Selected line ids, ascending (empty when only counting).
    pub lines: Vec<u64>,
}

/// Which backend answered, and why.
#[derive(Clone, Debug)]
pub struct BackendReport {
    /// Short name, e.g. `cpu/memmem` or `gpu/scan`.
    pub name: String,
    /// Why the planner chose it (or "forced").
    pub reason: String,
    /// Wall time of the search.
    pub elapsed: Duration,
}

impl std::fmt::Display for BackendReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.name, self.reason)
    }
}

/// The answer to one query.
#[derive(Clone, Debug)]
pub struct SearchResult {
    /// One entry per document, in corpus order.
    pub docs: Vec<DocHits>,
    /// Which backend ran.
    pub backend: BackendReport,
    /// The planner's decision, for `--backend auto`.
    pub plan: Option<planner::Decision>,
}

impl SearchResult {
    /// Selected lines over all documents.
    pub fn total(&self) -> u64 {
        self.docs.iter().map(|d| d.count).sum()
    }
}

/// A corpus held for searching, and the backends that can search it.
pub struct Engine {
    corpus: Corpus,
    calibration: std::sync::Mutex<planner::Calibration>,
    /// The device the calibration belongs to (`cpu` without a GPU).
    calibration_device: String,
    /// A warning from loading the calibration file, for the caller to show.
    calibration_warning: Option<String>,
    #[cfg(feature = "gpu")]
    gpu: Option<gpu::GpuCorpus>,
}

impl Engine {
    /// An engine over `corpus` (CPU only until a GPU backend is attached).
    pub fn new(corpus: Corpus) -> Engine {
        Engine {
            corpus,
            calibration: std::sync::Mutex::new(planner::Calibration::defaults(
                planner::DeviceClass::Other,
            )),
            calibration_device: "cpu".to_string(),
            calibration_warning: None,
            #[cfg(feature = "gpu")]
            gpu: None,
        }
    }

    /// The corpus.
    pub fn corpus(&self) -> &Corpus {
        &self.corpus
    }

    /// Runs `query` over every document.
    pub fn search(&self, query: &Query, opts: &SearchOptions) -> Result<SearchResult, Error> {
        match opts.backend {
            BackendChoice::Cpu => Ok(self.search_cpu(query, opts, "forced with --backend cpu")),
            #[cfg(not(feature = "gpu"))]
            BackendChoice::Gpu => Err(Error::backend(
                "the GPU backend is not available in this build (feature `gpu` is off)",
            )),
            #[cfg(not(feature = "gpu"))]
            BackendChoice::Auto => Ok(self.search_planned(query, opts)),
            #[cfg(feature = "gpu")]
            BackendChoice::Gpu => self.search_gpu_forced(query, opts),
            #[cfg(feature = "gpu")]
            BackendChoice::Auto => Ok(self.search_planned(query, opts)),
        }
    }

    /// Runs `query` on the CPU engine.
    pub fn search_cpu(&self, query: &Query, opts: &SearchOptions, reason: &str) -> SearchResult {
        let t = std::time::Instant::now();
        let copts = cpu::CpuOptions {
            threads: opts.threads,
            want: opts.want,
            max_count: opts.max_count,
        };
        let docs = self
            .corpus
            .docs()
            .iter()
            .map(|d| cpu::search_doc(d, query, &copts))
            .collect();
        let threads = cpu::resolve_threads(opts.threads);
        SearchResult {
            docs,
            backend: BackendReport {
                name: format!("cpu/{} x{threads}", query.cpu_matcher_name()),
                reason: reason.to_string(),
                elapsed: t.elapsed(),
            },
            plan: None,
        }
    }

    /// Asks the planner where `query` should run on this engine now
    /// (inhibitors, scores, calibrated speeds), without running it.
    pub fn plan(&self, query: &Query, opts: &SearchOptions) -> planner::Decision {
        self.plan_with(query, opts, false)
    }

    /// Plans as if a discrete GPU could be started for this query: start-up
    /// and upload count against it. A one-shot caller (the CLI) asks this
    /// before paying for an adapter; for corpora a CPU scans in less time
    /// than a GPU takes to start, the answer is the CPU.
    pub fn plan_cold(&self, query: &Query, opts: &SearchOptions) -> planner::Decision {
        self.plan_with(query, opts, true)
    }

    fn plan_with(&self, query: &Query, opts: &SearchOptions, cold: bool) -> planner::Decision {
        // Density only decides for line output (the inhibitor); for counts
        // the sample is informational, so it is taken only for --explain.
        let sample = if opts.want == Want::Lines || opts.explain {
            planner::sample(&self.corpus, query, 16, opts.explain)
        } else {
            planner::SampleStats::default()
        };
        let mut cal = self
            .calibration
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let lines = self
            .corpus
            .docs()
            .iter()
            .map(|d| d.has_line_index().then(|| d.lines().len()))
            .sum::<Option<u64>>();
        let threads = cpu::resolve_threads(opts.threads);
        let (mut gpu, unsupported) = self.gpu_for_planner(query);
        let mut resident = gpu.is_some();
        if cold && gpu.is_none() {
            let cpu = cal.cpu_gbps;
            cal = planner::Calibration::defaults(planner::DeviceClass::Discrete);
            cal.cpu_gbps = cpu;
            gpu = Some((
                planner::DeviceClass::Discrete,
                "a GPU (not started)".to_string(),
            ));
            resident = false;
        }
        let unsupported = unsupported.or_else(|| {
            #[cfg(feature = "gpu")]
            {
                gpu::unsupported_reason(query)
            }
            #[cfg(not(feature = "gpu"))]
            {
                Some("built without the GPU backend".to_string())
            }
        });
        planner::plan(&planner::PlanInput {
            query,
            want: opts.want,
            bytes: self.corpus.total_bytes(),
            lines,
            threads,
            resident,
            gpu,
            gpu_unsupported: unsupported,
            sample,
            calibration: &cal,
        })
    }

    /// Folds a measured run into the calibration.
    pub fn record(&self, m: &planner::Measurement) {
        self.calibration
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .record(m);
    }

    /// The current calibration.
    pub fn calibration(&self) -> planner::Calibration {
        self.calibration
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// A warning from loading the calibration file (corrupt file ignored).
    pub fn calibration_warning(&self) -> Option<&str> {
        self.calibration_warning.as_deref()
    }

    /// Persists the calibration in the user's cache directory.
    pub fn save_calibration(&self) -> std::io::Result<()> {
        self.calibration().save(&self.calibration_device)
    }

    fn record_result(&self, r: &SearchResult, opts: &SearchOptions) {
        let backend = match r.backend.name.strip_prefix("gpu/") {
            Some(k) => planner::MeasuredBackend::Gpu {
                kernel: k.to_string(),
            },
            None => planner::MeasuredBackend::Cpu {
                threads: cpu::resolve_threads(opts.threads),
            },
        };
        // Early exits (-m) and inverted searches do not measure throughput.
        if opts.max_count.is_none() {
            self.record(&planner::Measurement {
                backend,
                bytes: self.corpus.total_bytes(),
                seconds: r.backend.elapsed.as_secs_f64(),
            });
        }
    }

    fn search_planned(&self, query: &Query, opts: &SearchOptions) -> SearchResult {
        let decision = self.plan(query, opts);
        let mut r = match &decision.choice {
            planner::Choice::Cpu => self.search_cpu(query, opts, &decision.summary()),
            planner::Choice::Gpu(k) => self.search_gpu_planned(query, opts, k, &decision),
        };
        self.record_result(&r, opts);
        r.plan = Some(decision);
        r
    }

    #[cfg(not(feature = "gpu"))]
    fn gpu_for_planner(
        &self,
        _q: &Query,
    ) -> (Option<(planner::DeviceClass, String)>, Option<String>) {
        (None, None)
    }

    #[cfg(not(feature = "gpu"))]
    fn search_gpu_planned(
        &self,
        query: &Query,
        opts: &SearchOptions,
        _kernel: &str,
        _d: &planner::Decision,
    ) -> SearchResult {
        self.search_cpu(query, opts, "built without the GPU backend")
    }
}

// ---- GPU backend (issue 3). The planner issue replaces `search_auto`. ----
#[cfg(feature = "gpu")]
impl Engine {
    /// Opens the process's GPU context ([`gpu::GpuContext::shared`]) and
    /// uploads the corpus. On error the engine stays CPU-only.
    pub fn attach_gpu(&mut self) -> Result<(), Error> {
        let ctx = gpu::GpuContext::shared()?;
        self.attach_gpu_with(&ctx, gpu::UploadOptions::default())
    }

    /// Uploads the corpus to `ctx` with `opts` (e.g. a small segment size).
    pub fn attach_gpu_with(
        &mut self,
        ctx: &gpu::GpuContext,
        opts: gpu::UploadOptions,
    ) -> Result<(), Error> {
        let g = gpu::GpuCorpus::upload_with(ctx, &self.corpus, opts)?;
        let info = g.context().info();
        let class = planner::DeviceClass::from_wgpu(&info.device_type, info.is_software);
        let (mut cal, warning) = planner::Calibration::load(&info.name, class);
        if cal.samples == 0 {
            cal.upload_gbps = g.upload_gbps().max(0.1);
        }
        *self
            .calibration
            .get_mut()
            .unwrap_or_else(|p| p.into_inner()) = cal;
        self.calibration_device = info.name.clone();
        self.calibration_warning = warning;
        self.gpu = Some(g);
        Ok(())
    }

    /// The resident GPU corpus, once attached.
    pub fn gpu(&self) -> Option<&gpu::GpuCorpus> {
        self.gpu.as_ref()
    }

    fn run_gpu(
        &self,
        g: &gpu::GpuCorpus,
        query: &Query,
        opts: &SearchOptions,
        reason: String,
    ) -> Result<SearchResult, Error> {
        let t = std::time::Instant::now();
        let kernel = gpu::GpuKernel::effective(opts.gpu_kernel, query);
        // A multi-literal kernel that cannot take the set (bloom with a
        // pattern shorter than 4 bytes) runs another: say so.
        let asked = kernel.multi().map(|_| {
            opts.gpu_kernel
                .and_then(gpu::GpuKernel::multi)
                .unwrap_or(gpu::MultiKernel::DEFAULT)
        });
        let reason = match asked.and_then(|k| k.fallback_note(query)) {
            Some(n) => format!("{reason}; {n}"),
            None => reason,
        };
        let r = g.search_max(&self.corpus, query, kernel, opts.want, opts.max_count)?;
        Ok(SearchResult {
            docs: r.docs,
            backend: BackendReport {
                name: format!("gpu/{}", kernel.name()),
                reason,
                elapsed: t.elapsed(),
            },
            plan: None,
        })
    }

    fn search_gpu_forced(
        &self,
        query: &Query,
        opts: &SearchOptions,
    ) -> Result<SearchResult, Error> {
        let Some(g) = &self.gpu else {
            return Err(Error::backend(
                "--backend gpu: no GPU attached (no adapter, or the upload failed)",
            ));
        };
        if let Some(r) = gpu::unsupported_reason(query) {
            return Err(Error::backend(format!("--backend gpu: {r}")));
        }
        self.run_gpu(g, query, opts, "forced with --backend gpu".to_string())
    }

    fn gpu_for_planner(
        &self,
        q: &Query,
    ) -> (Option<(planner::DeviceClass, String)>, Option<String>) {
        match &self.gpu {
            None => (None, None),
            Some(g) => {
                let info = g.context().info();
                let class = planner::DeviceClass::from_wgpu(&info.device_type, info.is_software);
                (Some((class, info.name.clone())), gpu::unsupported_reason(q))
            }
        }
    }

    fn search_gpu_planned(
        &self,
        query: &Query,
        opts: &SearchOptions,
        kernel: &str,
        d: &planner::Decision,
    ) -> SearchResult {
        let Some(g) = &self.gpu else {
            return self.search_cpu(query, opts, "no GPU attached");
        };
        let mut o = opts.clone();
        o.gpu_kernel = gpu::GpuKernel::from_name(kernel).or(Some(gpu::GpuKernel::Scan));
        match self.run_gpu(g, query, &o, d.summary()) {
            Ok(r) => r,
            Err(e) => self.search_cpu(
                query,
                opts,
                &format!("GPU failed ({e}); fell back to the CPU"),
            ),
        }
    }
}
