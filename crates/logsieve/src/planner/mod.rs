//! The planner: per query, CPU or GPU, which kernel, and why.
//!
//! Two stages, in this order:
//!
//! 1. **Inhibitors** — categorical reasons that force the CPU whatever the
//!    scores: a query no GPU path runs ([`gpu_support`]'s categorical
//!    reasons: `-U` and `-P`; one literal longer than 64 bytes; `--fuzzy`
//!    patterns past the `bitap` chain's 256 bits; a regex, wildcard or
//!    Unicode `-i` that neither tier takes), and high match density (more
//!    than 100 selected lines per 1,000, estimated from a sample) when line
//!    ids are wanted — then the result transfer and per-line work on the
//!    host dominate. Regexes, wildcards and fuzzy patterns are not
//!    inhibitors as such: tier 1 scans a required literal set (or a class
//!    string) and verifies, tier 2 runs the position automaton
//!    (`shift-and`), fuzzy runs on `bitap`; the kernels' reason for a regex
//!    is dropped when tier 1 takes it ([`plan`]). A shape the kernels do
//!    not run (the empty pattern, say) is a note, not an inhibitor.
//!    Calibration never overrides an inhibitor.
//! 2. **Scores** — estimated milliseconds for each side from continuous
//!    factors: corpus bytes; resident on the GPU or not (then start-up and
//!    upload count); device class (a software adapter such as lavapipe is
//!    never chosen automatically; the crossover is 500 KB on a discrete GPU,
//!    2 MB on an integrated one); pattern length and the estimated phase-1
//!    elimination; expected result size to read back; measured CPU and GPU
//!    throughput and the fixed dispatch/readback latency, all calibrated from
//!    earlier runs on this device and kept in the user's cache directory.
//!
//! [`Decision`] carries every inhibitor and factor so that `--explain` can
//! print them.

use crate::corpus::Corpus;
use crate::kernel::{Kernel, MultiKernel};
use crate::query::{CaseMode, Query};
use crate::results::Want;
use crate::support::{gpu_support, PrefilterPlan, Unsupported};

mod calibration;
mod sample;
mod tier1;
pub use calibration::{Calibration, MeasuredBackend, Measurement};
pub(crate) use sample::cpu_speed as finder_speed;
pub(crate) use sample::fixed_speed;
pub use sample::{histogram_elimination, sample, scan_probe, SampleStats, PROBE_BYTES};
use sample::{memo_key, sample_windows};
pub use tier1::{
    kernel_gbps, literal_counts, passes, tier1_gpu_ms, tier1_literals, Tier1Input, Tier1Literals,
    Tier1Option,
};

/// CPU time to verify one candidate line of tier 1 with the query's own
/// matcher, ms: the per-line cost `cpu_estimate` uses for a line a regex
/// re-checks (~0.4 us on the 2-core build machine, 2026-11-24).
pub const VERIFY_MS_PER_LINE: f64 = 4e-4;

/// The many-literal kernel for `query`, and why (for `--explain`).
pub fn multi_kernel(query: &Query) -> (Kernel, String) {
    let shortest = query.patterns().iter().map(|p| p.len()).min().unwrap_or(0);
    let kernel = MultiKernel::DEFAULT.for_query(query);
    let why = match MultiKernel::DEFAULT.fallback_note(query) {
        Some(_) => format!(
            "{} ({} needs >= {}-byte patterns; shortest {shortest})",
            kernel.name(),
            MultiKernel::DEFAULT.name(),
            MultiKernel::BLOOM_MIN_LEN
        ),
        None => format!("{} (shortest pattern {shortest} bytes)", kernel.name()),
    };
    (kernel.into(), why)
}

/// Match density above which line output stays on the CPU (per line).
pub const DENSITY_LIMIT: f64 = 0.1;

/// What kind of GPU the adapter is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceClass {
    /// A discrete card with its own memory.
    Discrete,
    /// Integrated graphics sharing system memory.
    Integrated,
    /// A software renderer (lavapipe, SwiftShader, WARP).
    Software,
    /// Anything else (virtual GPUs, unknown).
    Other,
}

impl DeviceClass {
    /// Maps wgpu's device-type name (`DiscreteGpu`, `IntegratedGpu`, `Cpu`,
    /// `VirtualGpu`, `Other`) and the software flag.
    pub fn from_wgpu(device_type: &str, is_software: bool) -> DeviceClass {
        if is_software || device_type == "Cpu" {
            DeviceClass::Software
        } else if device_type == "DiscreteGpu" {
            DeviceClass::Discrete
        } else if device_type == "IntegratedGpu" {
            DeviceClass::Integrated
        } else {
            DeviceClass::Other
        }
    }
}

/// Everything the planner weighs for one query.
#[derive(Clone, Debug)]
pub struct PlanInput<'a> {
    /// The query.
    pub query: &'a Query,
    /// Count only or line ids.
    pub want: Want,
    /// With [`Want::Lines`]: ids counted too (`SearchOptions::line_ids`);
    /// false costs no newline-counting pass.
    pub line_ids: bool,
    /// Corpus bytes.
    pub bytes: u64,
    /// Corpus lines, when known.
    pub lines: Option<u64>,
    /// CPU threads available to this search.
    pub threads: usize,
    /// The GPU, if an adapter exists: its class and name.
    pub gpu: Option<(DeviceClass, String)>,
    /// True when the corpus is already uploaded.
    pub resident: bool,
    /// Why the GPU kernels cannot run this query shape (beyond the
    /// categorical inhibitors), if they cannot.
    pub gpu_unsupported: Option<String>,
    /// Tier 1 (the required literals on the GPU, candidates verified on
    /// the CPU), for a search the GPU kernels cannot run directly: `None`
    /// when not considered (the kernels run it, or not a search),
    /// `Some(Err(_))` when it cannot run ([`crate::support::prefilter_support`]).
    pub prefilter: Option<Result<PrefilterPlan, Unsupported>>,
    /// Tier 1's other candidate sets, with their shares and estimates,
    /// when the routing point chose among several
    /// ([`Tier1Literals::rejected`]): for `--explain`.
    pub tier1_rejected: Option<String>,
    /// Sample statistics.
    pub sample: SampleStats,
    /// Throughputs and latencies.
    pub calibration: &'a Calibration,
}

/// One scored factor, for `--explain`.
#[derive(Clone, Debug)]
pub struct Factor {
    /// What it is.
    pub name: &'static str,
    /// Its value, human-readable.
    pub value: String,
    /// Its contribution in estimated milliseconds (CPU side, GPU side).
    pub ms: (f64, f64),
}

/// Where the planner sends a query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Choice {
    /// The CPU engine.
    Cpu,
    /// The GPU, with this kernel.
    Gpu(Kernel),
    /// Tier 1: this literal kernel finds the required literals' candidate
    /// lines, the CPU verifies them.
    GpuPrefilter(Kernel),
}

/// The note of a decision made without a GPU adapter.
pub const NO_ADAPTER: &str = "no GPU adapter";

/// The planner's decision and its reasons.
#[derive(Clone, Debug)]
pub struct Decision {
    /// Where the query goes.
    pub choice: Choice,
    /// Categorical inhibitors that forced the CPU.
    pub inhibitors: Vec<String>,
    /// Other reasons the GPU was not considered (no adapter, software).
    pub notes: Vec<String>,
    /// Scored factors (empty when an inhibitor decided).
    pub factors: Vec<Factor>,
    /// Estimated total ms, CPU and GPU (when scored).
    pub estimate_ms: Option<(f64, f64)>,
    /// Estimated CPU ms, also when the GPU was not scored (an inhibitor,
    /// no adapter): for `--explain`, and to check the model.
    pub cpu_estimate_ms: Option<f64>,
    /// The CPU speed behind the estimate and where it comes from
    /// ([`cpu_base`]): for `--explain`.
    pub cpu_basis: String,
    /// When tier 1 was scored: its literals, candidate share and verify
    /// time in one line (the route's reason).
    pub tier1: Option<String>,
}

impl Decision {
    /// A one-line reason.
    pub fn summary(&self) -> String {
        if let Some(i) = self.inhibitors.first() {
            return format!("inhibitor: {i}");
        }
        if let Some(n) = self.notes.first() {
            return n.clone();
        }
        let est = match self.estimate_ms {
            Some((c, g)) => format!("estimated cpu {c:.3} ms vs gpu {g:.3} ms"),
            None => "no estimate".to_string(),
        };
        match &self.tier1 {
            Some(t) => format!("{est}; {t}"),
            None => est,
        }
    }

    /// A multi-line report for `--explain`.
    pub fn explain(&self) -> String {
        let mut s = String::new();
        let choice = match &self.choice {
            Choice::Cpu => "cpu".to_string(),
            Choice::Gpu(k) => format!("gpu/{}", k.name()),
            Choice::GpuPrefilter(k) => format!("gpu/{}+verify (tier 1)", k.name()),
        };
        s.push_str(&format!("plan: {choice}\n"));
        if self.inhibitors.is_empty() {
            s.push_str("inhibitors: none\n");
        } else {
            for i in &self.inhibitors {
                s.push_str(&format!("inhibitor: {i}\n"));
            }
        }
        for n in &self.notes {
            s.push_str(&format!("note: {n}\n"));
        }
        if let Some(t) = &self.tier1 {
            s.push_str(&format!("{t}\n"));
        }
        if !self.factors.is_empty() {
            s.push_str("factors (estimated ms: cpu | gpu):\n");
            for f in &self.factors {
                s.push_str(&format!(
                    "  {:<26} {:<24} {:>9.3} | {:>9.3}\n",
                    f.name, f.value, f.ms.0, f.ms.1
                ));
            }
        }
        if let Some((c, g)) = self.estimate_ms {
            s.push_str(&format!("estimate: cpu {c:.3} ms, gpu {g:.3} ms\n"));
        } else if let Some(c) = self.cpu_estimate_ms {
            s.push_str(&format!(
                "estimate: cpu {c:.3} ms (the GPU was not scored)\n"
            ));
        }
        if !self.cpu_basis.is_empty() {
            s.push_str(&format!("cpu speed: {}\n", self.cpu_basis));
        }
        s
    }
}

/// The categorical inhibitors for a query (empty: the GPU may run it):
/// the query's shape ([`gpu_support`], the one support check) and, for line
/// output, the match density.
pub fn inhibitors(query: &Query, want: Want, sample: &SampleStats) -> Vec<String> {
    let mut out = Vec::new();
    if let Err(u) = gpu_support(query) {
        if u.is_categorical() {
            out.push(u.reason().to_string());
        }
    }
    if want == Want::Lines && sample.density() > DENSITY_LIMIT {
        out.push(format!(
            "high match density (est. {:.0} matching lines per 1,000 > {:.0})",
            sample.density() * 1000.0,
            DENSITY_LIMIT * 1000.0
        ));
    }
    out
}

/// The CPU's time for `input`, in ms: the corpus scanned at the calibrated
/// single-literal speed times the chosen matcher's factor (`Matcher::speed`),
/// the per-thread efficiency, a cost per matching line (~0.1 us to find the
/// line and resume; ~0.2 us when a candidate line is verified by a regex),
/// and for line output one newline-counting pass for line ids (~20 GB/s).
pub fn cpu_estimate(input: &PlanInput<'_>) -> f64 {
    let bytes = input.bytes as f64;
    let threads = input.threads.max(1) as f64;
    let m = &input.query.matcher;
    let gbps = cpu_gbps(input);
    let lines = input.lines.unwrap_or((bytes / 200.0) as u64) as f64;
    // A regex that finds each match itself pays no second check: 1M
    // matching lines of `\d{4}-\d\d` ran in 126 ms on the H100 machine's
    // CPU (80 ms on the build machine), 97 ms of it the scan at 2 GB/s:
    // 29 ms for the matches (5e-5 a line until the 2026-11-26
    // measurement at `19e3983` put the regex's estimate at 2.1x its run
    // on that day's build machine).
    // A verified line: `-w admin`'s 14,730 lines took 2.3-3.2 ms over the
    // scan's estimate on an AMD EPYC build machine (0.15-0.22 us a line;
    // 2026-11-26, one thread); at 0.4 us the shape was estimated at
    // 1.9-2.1x its run there and 1.9-2.0x on the H100 host's Xeon.
    let per_line_ms = match &**m {
        crate::cpu::matcher::Matcher::Regex { .. } => 3e-5,
        _ if m.verifies() => 2e-4,
        _ => 1e-4,
    };
    let matches = input.sample.density() * lines * per_line_ms / threads;
    let ids = match input.want {
        Want::Lines if input.line_ids || input.query.invert() => bytes / 20e9 * 1e3,
        _ => 0.0,
    };
    bytes / (gbps * 1e9) * 1e3 + matches + ids + fault_ms(input)
}

/// The CPU's time mapping a lazily mapped corpus's pages as it reads
/// them, in ms ([`SampleStats::fault_gbps`]; 0 when none are left to
/// map): the same for every matcher, so added to the scan, not folded
/// into its speed (folded in, the `-i` literals were estimated at 2x
/// their run on the build machine).
fn fault_ms(input: &PlanInput<'_>) -> f64 {
    let g = input.sample.fault_gbps;
    if g > 0.0 {
        let threads = input.threads.max(1) as f64;
        input.bytes as f64 / (g * 1e9) * 1e3 / (1.0 + 0.8 * (threads - 1.0))
    } else {
        0.0
    }
}

/// The CPU's speed for `input`, GB/s on all its threads: the calibrated
/// single-literal speed times the matcher's factor (`Matcher::speed`) and
/// the per-thread efficiency (~0.8 per extra thread, measured). A fuzzy
/// matcher's speed is the sample's, when timed: its pigeonhole pieces
/// decide it (H100 machine, 1 thread, 194 MB, 2026-11-25: 2.4 GB/s for
/// `--fuzzy 3` of a 38-byte pattern, 9-byte pieces; 0.16 GB/s for `-i
/// --fuzzy 1 fr33m0ney`), which no fixed factor fits.
fn cpu_gbps(input: &PlanInput<'_>) -> f64 {
    let threads = input.threads.max(1) as f64;
    let m = &input.query.matcher;
    // The finder's speed on this corpus when the sample measured it
    // (`SampleStats::cpu_speed`: a rare byte or pair), else the matcher's.
    let speed = match input.sample.cpu_speed {
        s if s > 0.0 => s,
        _ => m.speed(),
    };
    let one = match (&**m, input.sample.cpu_gbps()) {
        (crate::cpu::matcher::Matcher::Fuzzy(_), Some(g)) => g,
        _ => cpu_base(input).0 * speed,
    };
    one * (1.0 + 0.8 * (threads - 1.0))
}

/// The single-literal speed the matchers' factors multiply, GB/s on one
/// thread, and where it comes from (for `--explain`): this machine's
/// [`scan_probe`] over the rare byte's factor when measured, else the
/// calibration's (8 GB/s by default: the H100 machine's Xeon, one thread;
/// refined by recorded runs).
pub fn cpu_base(input: &PlanInput<'_>) -> (f64, String) {
    let probe = input.sample.scan_gbps;
    let rare = crate::cpu::RARE_BYTE_SPEED;
    if probe > 0.0 {
        let base = probe / rare;
        let faults = match input.sample.fault_gbps {
            g if g > 0.0 => format!("; page faults of the lazy map {g:.1} GB/s"),
            _ => String::new(),
        };
        return (
            base,
            format!("{base:.1} GB/s a thread for a literal (probe: memchr at {probe:.1} GB/s over 1 MiB of the corpus, / {rare}){faults}"),
        );
    }
    let c = input.calibration;
    let from = if c.samples == 0 {
        "default: the H100 machine's Xeon"
    } else {
        "calibrated"
    };
    (
        c.cpu_gbps,
        format!("{:.1} GB/s a thread for a literal ({from})", c.cpu_gbps),
    )
}

/// The bitap kernel's work per corpus byte for `q`, in 32-bit state-word
/// updates: K + 1 rows of the chain's words, times 4.5 when the chain
/// spans more than one word (its state arrays then leave registers). On
/// the H100 (194 MB, 2026-11-25) one-word chains ran at 265-291 GB/s x
/// units (K = 1, 2), the 38-byte `--fuzzy 3` chain (2 words, 8 units) at
/// 60: 4.5x slower per unit. `None` when `q` has no bitap chain. The
/// calibration keeps bitap's speed in bytes x units per second, so that a
/// one-word run does not make a long chain look fast (the 38-byte
/// pattern went to `bitap`, 25.8 ms, against 6.8 ms on the CPU).
pub fn bitap_units(q: &Query) -> Option<f64> {
    let b = crate::query::bitap::Bitap::for_query(q).ok()?;
    let spill = if b.words > 1 { 4.5 } else { 1.0 };
    Some(f64::from(b.k + 1) * b.words as f64 * spill)
}

/// The cost of a byte of `q`'s automaton on the `shift-and` kernel, in
/// units of the linear path's (`run_linear`: the extended shift-and form,
/// no look-around groups, one or two state words): 1, else 2 (the step
/// with groups or follow tables). On the H100 (194 MB, 2026-11-25, tier 2
/// over every line) the linear path's regexes took 0.54-0.67 ms, the
/// others 0.82-1.95 (1.3-3.2x, median 1.9: `\b(GET|POST) /api/v\d/`
/// 1.26, `user=u1\d*7 ` 1.30). The calibration keeps `shift-and`'s speed
/// in bytes x units per second, as bitap's ([`bitap_units`]): with one
/// rate for every automaton a linear one made the others look fast, and
/// tier 1 chose the denser literal ` /api/v` (17.5% of lines, 0.34 ms)
/// over `GET /api/v`, `POST /api/v` (12.2%, 0.28 ms; measured 2026-11-25 at `ef5693c`).
pub fn shift_and_units(q: &Query) -> f64 {
    match crate::support::shift_and_support(q) {
        Ok(a) if a.linear_path() => 1.0,
        _ => 2.0,
    }
}

/// `shift-and`'s speed for `q`, GB/s of corpus: the calibrated speed per
/// unit (before any run, an eighth of the literal kernels': brute-line,
/// also a thread per line, ran at ~1/8 of scan on the H100) over
/// [`shift_and_units`].
pub fn shift_and_gbps(c: &Calibration, q: &Query) -> f64 {
    let g = c.gpu_gbps.get(&Kernel::ShiftAnd).copied();
    g.unwrap_or_else(|| c.best_kernel().1 / 8.0) / shift_and_units(q)
}

/// The bitap kernel's speed in bytes x [`bitap_units`] per second before
/// any run: half the literal kernels' (measured on the H100: 265-291
/// against `scan`'s ~500).
pub(crate) fn bitap_default_gbps(c: &Calibration) -> f64 {
    c.best_kernel().1 / 2.0
}

/// ` x2` when `scan` runs once per literal of a set, else nothing.
fn passes_note(t: &PrefilterPlan) -> String {
    match passes(t) {
        1 => String::new(),
        n => format!(" x{n}"),
    }
}

/// `; rejected: ...` when the routing point chose among several sets.
fn rejected_note(input: &PlanInput<'_>) -> String {
    match &input.tier1_rejected {
        Some(r) if !r.is_empty() => format!("; rejected: {r}"),
        _ => String::new(),
    }
}

/// Decides where `input.query` runs.
pub fn plan(input: &PlanInput<'_>) -> Decision {
    let mut inhib = inhibitors(input.query, input.want, &input.sample);
    // The kernels' categorical reason (a regex, say) inhibits only when
    // tier 1 cannot take the query either; then it says why.
    if let Err(u) = gpu_support(input.query) {
        if let Some(at) = inhib.iter().position(|i| i == u.reason()) {
            match &input.prefilter {
                Some(Ok(_)) => {
                    inhib.remove(at);
                }
                Some(Err(t)) => inhib[at] = format!("{}; GPU prefilter: {}", u.reason(), t),
                None => {}
            }
        }
    }
    let tier1 = match &input.prefilter {
        Some(Ok(p)) => Some(p),
        _ => None,
    };
    let mut d = Decision {
        choice: Choice::Cpu,
        inhibitors: inhib,
        notes: Vec::new(),
        factors: Vec::new(),
        estimate_ms: None,
        cpu_estimate_ms: Some(cpu_estimate(input)),
        cpu_basis: cpu_base(input).1,
        tier1: None,
    };
    if !d.inhibitors.is_empty() {
        return d;
    }
    if let (Some(r), None) = (&input.gpu_unsupported, tier1) {
        d.notes
            .push(format!("GPU kernels do not run this query: {r}"));
        return d;
    }
    let Some((class, name)) = &input.gpu else {
        d.notes.push(NO_ADAPTER.to_string());
        return d;
    };
    if *class == DeviceClass::Software {
        d.notes.push(format!(
            "{name} is a software adapter: never chosen automatically (use --backend gpu)"
        ));
        return d;
    }
    let c = input.calibration;
    let bytes = input.bytes as f64;
    let mut f = Vec::new();
    let threads = input.threads.max(1) as f64;
    // Parallel efficiency on one document: measured ~0.8 per extra thread;
    // the chosen matcher's speed (`cpu_estimate`).
    let cpu_gbps = cpu_gbps(input);
    let cpu_all = cpu_estimate(input);
    let cpu_scan = bytes / (cpu_gbps * 1e9) * 1e3;
    f.push(Factor {
        name: "corpus bytes",
        value: format!("{:.1} MB", bytes / 1e6),
        ms: (cpu_scan, 0.0),
    });
    let multi = input.query.literals().is_some_and(|l| l.len() > 1);
    let (kernel, gpu_gbps) = if let Some(cs) = tier1.and_then(|t| t.classes.as_ref()) {
        // The class strings on `scan`, one pass each, exact
        // (`query::classes`).
        f.push(Factor {
            name: "tier 1 class strings",
            value: format!("{}: scan tests two bytes, then the classes", cs.describe()),
            ms: (0.0, 0.0),
        });
        (Kernel::Scan, c.best_kernel().1 / cs.alts.len() as f64)
    } else if let Some(t) = tier1 {
        f.push(Factor {
            name: "tier 1 literals",
            value: format!("{} ({})", t.describe(), t.kernel.name()),
            ms: (0.0, 0.0),
        });
        if let Some(r) = &input.tier1_rejected {
            f.push(Factor {
                name: "tier 1 sets rejected",
                value: r.clone(),
                ms: (0.0, 0.0),
            });
        }
        // One scan pass per literal when a few run on scan.
        (t.kernel, kernel_gbps(t, c))
    } else if multi {
        // Many literals: the multi-literal kernel, at its calibrated speed
        // (before any run, a tenth of the single-literal kernels').
        let (k, why) = multi_kernel(input.query);
        f.push(Factor {
            name: "multi-literal kernel",
            value: why,
            ms: (0.0, 0.0),
        });
        let g = c.gpu_gbps.get(&k).copied();
        (k, g.unwrap_or_else(|| c.best_kernel().1 / 10.0))
    } else if gpu_support(input.query).is_ok_and(|p| p.kernel == Kernel::ShiftAnd) {
        // Tier 2: the regex automaton, one thread per line, at its
        // calibrated speed.
        f.push(Factor {
            name: "tier 2 automaton",
            value: format!(
                "shift-and, one thread per line, {:.0} units a byte",
                shift_and_units(input.query)
            ),
            ms: (0.0, 0.0),
        });
        (Kernel::ShiftAnd, shift_and_gbps(c, input.query))
    } else if let Some(units) = gpu_support(input.query)
        .ok()
        .filter(|p| p.kernel == Kernel::Bitap)
        .and_then(|_| bitap_units(input.query))
    {
        // Fuzzy: the bitap kernel, one thread per line, its speed per
        // state-word update (calibrated, else `bitap_default_gbps`)
        // divided by the chain's updates per byte.
        f.push(Factor {
            name: "fuzzy kernel",
            value: format!("bitap, {units:.1} word updates a byte"),
            ms: (0.0, 0.0),
        });
        let g = c.gpu_gbps.get(&Kernel::Bitap).copied();
        (
            Kernel::Bitap,
            g.unwrap_or_else(|| bitap_default_gbps(c)) / units,
        )
    } else {
        c.best_kernel()
    };
    let gpu_scan = bytes / (gpu_gbps * 1e9) * 1e3;
    f.push(Factor {
        name: "throughput (calibrated)",
        value: format!("cpu {:.1} / gpu {:.0} GB/s", cpu_gbps, gpu_gbps),
        ms: (0.0, gpu_scan),
    });
    f.push(Factor {
        name: "dispatch + readback",
        value: format!("{:.3} ms fixed", c.gpu_latency_ms),
        ms: (0.0, c.gpu_latency_ms),
    });
    // Start-up and upload when the corpus is not resident (one-shot).
    let mut cold_ms = 0.0;
    if !input.resident {
        let up = bytes / (c.upload_gbps * 1e9) * 1e3;
        cold_ms = up + c.gpu_startup_ms;
        f.push(Factor {
            name: "upload (not resident)",
            value: format!("{:.1} GB/s", c.upload_gbps),
            ms: (0.0, up),
        });
        f.push(Factor {
            name: "GPU start-up",
            value: "adapter+device+pipelines".to_string(),
            ms: (0.0, c.gpu_startup_ms),
        });
    } else {
        f.push(Factor {
            name: "residency",
            value: "corpus resident on GPU".to_string(),
            ms: (0.0, 0.0),
        });
    }
    let lines = input.lines.unwrap_or((bytes / 200.0) as u64) as f64;
    let density = input.sample.density();
    let readback = match input.want {
        // Tier 1 verified on the CPU reads back its candidates instead
        // (below).
        _ if tier1.is_some_and(|t| t.verify == crate::support::Verifier::Cpu) => 0.0,
        // Count: a few bytes per segment. Lines: one bit per line, then
        // decoding the selected ids on the host.
        Want::Count => 0.0,
        Want::Lines => lines / 8.0 / 10e9 * 1e3 + density * lines * 2e-6,
    };
    let faults = fault_ms(input);
    if faults > 0.0 {
        f.push(Factor {
            name: "page faults (lazy map)",
            value: format!("{:.1} GB/s", input.sample.fault_gbps),
            ms: (faults, 0.0),
        });
    }
    f.push(Factor {
        name: "expected matches",
        value: format!("{:.2}% of lines", density * 100.0),
        ms: ((cpu_all - cpu_scan - faults).max(0.0), readback),
    });
    if let Some(t) = tier1 {
        let share = input.sample.candidate_share();
        let n = share * lines;
        if let Some(cs) = &t.classes {
            d.tier1 = Some(format!(
                "tier 1: the regex is {}: one scan pass each on its rarest bytes, the \
                 classes tested at each survivor, exact (nothing to verify){}",
                cs.describe(),
                rejected_note(input)
            ));
        } else if t.verify == crate::support::Verifier::Gpu {
            // The automaton over the candidate lines, in the literal's
            // submission: their share of the bytes at tier 2's speed, no
            // readback (`gpu::tier2`).
            let g2 = shift_and_gbps(c, input.query);
            let verify = share * bytes / (g2 * 1e9) * 1e3;
            f.push(Factor {
                name: "candidate share",
                value: format!("{:.2}% of lines (sample)", share * 100.0),
                ms: (0.0, 0.0),
            });
            f.push(Factor {
                name: "verify on GPU",
                value: format!("{n:.0} lines, shift-and at {:.0} GB/s", g2),
                ms: (0.0, verify),
            });
            d.tier1 = Some(format!(
                "tier 1: GPU prefilter on {} ({}{}), candidates {:.2}% of lines, GPU verify (shift-and) est. {verify:.3} ms{}",
                t.describe(),
                t.kernel.name(),
                passes_note(t),
                share * 100.0,
                rejected_note(input)
            ));
        } else {
            // Candidates come back as line ids (the bit sets, decoded),
            // then each is verified on the CPU.
            let back = lines / 8.0 / 10e9 * 1e3 + n * 2e-6;
            let verify = n * VERIFY_MS_PER_LINE / threads;
            f.push(Factor {
                name: "candidate share",
                value: format!("{:.2}% of lines (sample)", share * 100.0),
                ms: (0.0, back),
            });
            f.push(Factor {
                name: "verify on CPU",
                value: format!("{n:.0} lines, {threads:.0} threads"),
                ms: (0.0, verify),
            });
            d.tier1 = Some(format!(
                "tier 1: GPU prefilter on {} ({}{}), candidates {:.2}% of lines, CPU verify est. {verify:.3} ms{}",
                t.describe(),
                t.kernel.name(),
                passes_note(t),
                share * 100.0,
                rejected_note(input)
            ));
        }
    }
    f.push(Factor {
        name: "phase-1 elimination",
        value: format!("{:.1}% (sample)", input.sample.elimination() * 100.0),
        ms: (0.0, 0.0),
    });
    f.push(Factor {
        name: "device",
        value: format!("{class:?} {name}"),
        ms: (0.0, 0.0),
    });
    let cpu_total: f64 = f.iter().map(|x| x.ms.0).sum();
    let gpu_total: f64 = f.iter().map(|x| x.ms.1).sum();
    d.estimate_ms = Some((cpu_total, gpu_total));
    let cross = c.crossover_bytes;
    f.push(Factor {
        name: "crossover",
        value: format!("{:.0} KB", cross as f64 / 1e3),
        ms: (0.0, 0.0),
    });
    d.factors = f;
    if input.bytes < cross {
        d.notes.push(format!(
            "corpus below the {:.0} KB crossover",
            cross as f64 / 1e3
        ));
        return d;
    }
    // Tier 2 instead of tier 1 when its whole scan is estimated cheaper
    // than tier 1's verification (a required literal on most lines: on the
    // H100 `trace=[0-9a-f]{32}`, 69% candidates, took 8.5 ms on tier 1 and
    // 3.3 on tier 2; docs/bench/h100-2026-11-24-regex.md).
    if tier1.is_some() && crate::support::shift_and_support(input.query).is_ok() {
        let g2 = shift_and_gbps(c, input.query);
        // Tier 2 pays start-up and upload too when not resident
        // (REGRESSION: without them one-shot `-w`, `-x` and prefix-literal
        // regexes started the GPU: 436-496 ms against rg's 32-43 on the
        // H100 machine, docs/bench/h100-2026-11-25-merged.md).
        let t2 = bytes / (g2 * 1e9) * 1e3 + c.gpu_latency_ms + cold_ms;
        if t2 < gpu_total && t2 < cpu_total {
            d.factors.push(Factor {
                name: "tier 2 instead of tier 1",
                value: format!("shift-and est. {t2:.3} ms < tier 1 {gpu_total:.3} ms"),
                ms: (0.0, 0.0),
            });
            d.tier1 = Some(format!(
                "tier 2 (shift-and, est. {t2:.3} ms) beats {}",
                d.tier1.take().unwrap_or_default()
            ));
            d.choice = Choice::Gpu(Kernel::ShiftAnd);
            return d;
        }
    }
    if gpu_total < cpu_total {
        d.choice = match tier1 {
            Some(_) => Choice::GpuPrefilter(kernel),
            None => Choice::Gpu(kernel),
        };
    }
    d
}

#[cfg(test)]
mod tests {
    use super::sample::{probe_doc, sample_uncached};
    use super::*;
    use crate::{QueryBuilder, Syntax};

    fn q(p: &str, syntax: Syntax, ci: bool) -> Query {
        QueryBuilder::new()
            .syntax(syntax)
            .case_insensitive(ci)
            .build(&[p])
            .unwrap()
    }

    fn input<'a>(
        query: &'a Query,
        cal: &'a Calibration,
        bytes: u64,
        resident: bool,
    ) -> PlanInput<'a> {
        PlanInput {
            query,
            want: Want::Count,
            line_ids: true,
            bytes,
            lines: Some(bytes / 200),
            threads: 1,
            gpu: Some((DeviceClass::Discrete, "test gpu".into())),
            resident,
            gpu_unsupported: None,
            // As the route offers it: tier 1 for what the kernels cannot
            // run directly.
            prefilter: gpu_support(query)
                .is_err()
                .then(|| crate::support::prefilter_support(query, None)),
            tier1_rejected: None,
            sample: SampleStats {
                lines: 1000,
                matching: 1,
                rejected: 900,
                candidates: 2,
                ..Default::default()
            },
            calibration: cal,
        }
    }

    #[test]
    fn inhibitors_name_their_cause() {
        let cal = Calibration::defaults(DeviceClass::Discrete);
        let cases = [
            // Tier 1 takes `ERR.R` and `ERR*R` (required literal `ERR`),
            // tier 2 `E.R.R` and `E*R*R` (no required literal); these
            // have no required literal and too large an automaton.
            (q(r"E.{300}R", Syntax::Regex, false), "regex"),
            (
                q(&format!("E{}R", "?".repeat(300)), Syntax::Wildcard, false),
                "wildcard",
            ),
            // Fuzzy over the bitap chain (256 pattern bytes).
            (q(&"E".repeat(300), Syntax::Fuzzy(1), false), "fuzzy"),
            (q(&"a".repeat(65), Syntax::Fixed, false), "longer than 64"),
        ];
        for (query, want) in &cases {
            let d = plan(&input(query, &cal, 1 << 30, true));
            assert_eq!(d.choice, Choice::Cpu);
            assert!(
                d.inhibitors.iter().any(|i| i.contains(want)),
                "{want}: {:?}",
                d.inhibitors
            );
            assert!(d.summary().contains(want));
        }
    }

    #[test]
    fn tier1_takes_regexes_with_required_literals() {
        // Tier 2 calibrated slow (before any run it would take the
        // many-literal case, `erreur é`, scored at bloom's default).
        let mut cal = Calibration::defaults(DeviceClass::Discrete);
        cal.gpu_gbps.insert(Kernel::ShiftAnd, 10.0);
        for (query, lit) in [
            (q(r"ERROR_5\d\d", Syntax::Regex, false), "ERROR_5"),
            (q("ERR.R", Syntax::Regex, false), "ERR"),
            (q("GET /*HTTP", Syntax::Wildcard, false), "GET /"),
            (q("erreur é", Syntax::Fixed, true), " é"),
        ] {
            let d = plan(&input(&query, &cal, 1 << 30, true));
            assert!(d.inhibitors.is_empty(), "{lit}: {:?}", d.inhibitors);
            assert!(matches!(d.choice, Choice::GpuPrefilter(_)), "{lit}");
            let e = d.explain();
            assert!(
                e.contains("tier 1") && e.to_lowercase().contains(&lit.to_lowercase()),
                "{e}"
            );
            assert!(e.contains("candidate share") && e.contains("verify"), "{e}");
        }
        // Many candidates verified on the GPU (one literal on scan): the
        // automaton over them costs less than over every line (tier 2).
        let query = q(r"ERROR_5\d\d", Syntax::Regex, false);
        let mut inp = input(&query, &cal, 1 << 30, true);
        inp.sample.candidates = 900;
        inp.sample.matching = 50;
        let d = plan(&inp);
        assert_eq!(d.choice, Choice::GpuPrefilter(Kernel::Scan));
        assert!(d.explain().contains("verify on GPU"), "{}", d.explain());
        // Two literals: a scan pass each, verified on the GPU; the
        // estimate counts both passes.
        let query = q(r"(ERROR|WARN)_5\d\d", Syntax::Regex, false);
        let mut inp = input(&query, &cal, 1 << 30, true);
        inp.sample.candidates = 900;
        inp.sample.matching = 50;
        let d = plan(&inp);
        assert_eq!(d.choice, Choice::GpuPrefilter(Kernel::Scan));
        assert!(d.explain().contains("(scan x2)"), "{}", d.explain());
        let one = plan(&input(
            &q(r"ERROR_5\d\d", Syntax::Regex, false),
            &cal,
            1 << 30,
            true,
        ));
        let two = plan(&input(&query, &cal, 1 << 30, true));
        let (g1, g2) = (one.estimate_ms.unwrap().1, two.estimate_ms.unwrap().1);
        assert!(g2 > g1, "two passes {g2} vs one {g1}");
        // Verified on the CPU (five literals: a many-literal kernel),
        // verifying them costs more than tier 2's whole scan (and than
        // the CPU's).
        let query = q(r"(AAAA|BBBB|CCCC|DDDD|EEEE)_5\d\d", Syntax::Regex, false);
        let mut inp = input(&query, &cal, 1 << 30, true);
        inp.sample.candidates = 900;
        inp.sample.matching = 50;
        let d = plan(&inp);
        assert_eq!(d.choice, Choice::Gpu(Kernel::ShiftAnd));
        assert!(d.explain().contains("tier 2"), "{}", d.explain());
        // Without tier 2 (too large an automaton) the CPU answers.
        let query = q(r"ERROR_5\d{300}", Syntax::Regex, false);
        let mut inp = input(&query, &cal, 1 << 30, true);
        inp.sample.candidates = 900;
        inp.sample.matching = 50;
        assert_eq!(plan(&inp).choice, Choice::Cpu);
        // Fuzzy over the bitap chain has no GPU route; the inhibitor
        // says so.
        let fz = q(&"E".repeat(300), Syntax::Fuzzy(1), false);
        let d = plan(&input(&fz, &cal, 1 << 30, true));
        assert_eq!(d.choice, Choice::Cpu);
        assert!(d.inhibitors[0].contains("fuzzy"), "{:?}", d.inhibitors);
    }

    #[test]
    fn fuzzy_goes_to_bitap_when_resident_and_large() {
        let cal = Calibration::defaults(DeviceClass::Discrete);
        let fz = q("NullPointerExceptoin", Syntax::Fuzzy(1), false);
        let mut inp = input(&fz, &cal, 194_000_000, true);
        inp.threads = 16;
        let d = plan(&inp);
        assert!(d.inhibitors.is_empty(), "{:?}", d.inhibitors);
        assert_eq!(d.choice, Choice::Gpu(Kernel::Bitap));
        assert!(d.explain().contains("bitap"), "{}", d.explain());
        // Below the crossover the CPU answers.
        let small = input(&fz, &cal, 100_000, true);
        assert_eq!(plan(&small).choice, Choice::Cpu);
    }

    /// The bitap estimate grows with the chain's state words and K, and
    /// the CPU's with the sample's measured speed: with the H100's
    /// numbers (one-word chains at ~275 GB/s x units, 16 threads, 194 MB;
    /// docs/bench/h100-2026-11-25-merged-2.md §3) auto sends the 38-byte
    /// two-word `--fuzzy 3` pattern to the CPU (6.8 ms there, 25.8 on
    /// `bitap`) and the one-word patterns to `bitap`.
    #[test]
    fn fuzzy_estimates_grow_with_the_chain() {
        let long = q(
            "Failed password for invalid user admin",
            Syntax::Fuzzy(3),
            false,
        );
        let short = q("NullPointerExceptoin", Syntax::Fuzzy(2), false);
        assert_eq!(bitap_units(&short), Some(3.0));
        assert_eq!(bitap_units(&long), Some(4.0 * 2.0 * 4.5));
        assert_eq!(bitap_units(&q("x.y", Syntax::Regex, false)), None);
        let mut cal = Calibration::defaults(DeviceClass::Discrete);
        cal.gpu_gbps.insert(Kernel::Bitap, 275.0);
        // (query, CPU x1 ms on the H100 machine, expected choice)
        for (query, cpu_x1_ms, want) in [
            (&long, 81.3, Choice::Cpu),
            (&short, 51.4, Choice::Gpu(Kernel::Bitap)),
        ] {
            let mut inp = input(query, &cal, 194_000_000, true);
            inp.threads = 16;
            inp.sample.cpu_bytes = 1 << 16;
            inp.sample.cpu_ns = ((1u64 << 16) as f64 / (194e6 / (cpu_x1_ms * 1e6))) as u64;
            let d = plan(&inp);
            assert_eq!(d.choice, want, "{}", d.explain());
            assert!(d.explain().contains("word updates"), "{}", d.explain());
        }
        // Before any bitap run, the defaults decide alike.
        let cal = Calibration::defaults(DeviceClass::Discrete);
        let mut inp = input(&long, &cal, 194_000_000, true);
        inp.threads = 16;
        inp.sample.cpu_bytes = 1 << 16;
        inp.sample.cpu_ns = ((1u64 << 16) as f64 / 2.4) as u64;
        assert_eq!(plan(&inp).choice, Choice::Cpu);
        // A measured one-word run is kept per unit: it does not make the
        // long chain look fast.
        let mut cal = Calibration::defaults(DeviceClass::Discrete);
        cal.record(&Measurement {
            backend: MeasuredBackend::Gpu {
                kernel: Kernel::Bitap,
            },
            bytes: 194_000_000 * 3,
            seconds: 0.002,
        });
        let mut inp = input(&long, &cal, 194_000_000, true);
        inp.threads = 16;
        inp.sample.cpu_bytes = 1 << 16;
        inp.sample.cpu_ns = ((1u64 << 16) as f64 / 2.4) as u64;
        assert_eq!(plan(&inp).choice, Choice::Cpu, "{}", plan(&inp).explain());
    }

    /// Tier 1 verified on the GPU is priced by its candidate share (the
    /// compacted list: one thread per candidate line), against tier 2 and
    /// the CPU, with a fixed calibration near the H100's (scan 500 GB/s,
    /// tier 2 43: 194 MB in ~4.5 ms) and the shares of the generated
    /// corpus (docs/bench/h100-2026-11-25-merged-2.md §2).
    #[test]
    fn tier1_is_priced_by_its_candidate_share() {
        let mut cal = Calibration::defaults(DeviceClass::Discrete);
        cal.gpu_gbps.insert(Kernel::ShiftAnd, 43.0);
        let bytes = 194_000_000;
        let plan_with = |cal: &Calibration, p: &str, candidates: u64, matching: u64| {
            let query = q(p, Syntax::Regex, false);
            let mut inp = input(&query, cal, bytes, true);
            inp.threads = 16;
            inp.sample.candidates = candidates;
            inp.sample.matching = matching;
            let d = plan(&inp);
            let gpu = d.estimate_ms.map(|e| e.1);
            (d.choice.clone(), gpu, d.explain())
        };
        // 7.6% candidates, 0.8% matching: the scan plus 7.6% of tier 2,
        // whose step (follow tables) costs two units a byte.
        let (choice, gpu, e) = plan_with(&cal, r"user=u1\d*7 ", 76, 8);
        assert_eq!(choice, Choice::GpuPrefilter(Kernel::Scan), "{e}");
        assert_eq!(
            shift_and_units(&q(r"user=u1\d*7 ", Syntax::Regex, false)),
            2.0
        );
        let t2 = bytes as f64 / 43e6 * 2.0;
        let scan = bytes as f64 / 500e6;
        let want = scan + 0.076 * t2 + cal.gpu_latency_ms;
        assert!((gpu.unwrap() - want).abs() < 0.05, "{e}");
        // 69% candidates (a literal on most lines): still the scan plus
        // 69% of tier 2, below tier 2 over every line.
        let (choice, _, e) = plan_with(&cal, r"trace=[0-9a-f]{32}", 690, 690);
        assert_eq!(choice, Choice::GpuPrefilter(Kernel::Scan), "{e}");
        // Tier 2 calibrated as fast as the scan: the whole automaton
        // beats the scan plus the verify.
        cal.gpu_gbps.insert(Kernel::ShiftAnd, 500.0);
        let (choice, _, e) = plan_with(&cal, r"trace=[0-9a-f]{32}", 690, 690);
        assert_eq!(choice, Choice::Gpu(Kernel::ShiftAnd), "{e}");
    }

    #[test]
    fn tier2_first_run_averages_in() {
        // REGRESSION: the first tier-2 run (pipeline compilation, 0.47 s
        // on the H100) became the kernel's whole calibration, and auto
        // never chose the GPU again for a regex it runs in 3.4 ms.
        let mut cal = Calibration::defaults(DeviceClass::Discrete);
        let default = cal.best_kernel().1 / 8.0;
        cal.record(&Measurement {
            backend: MeasuredBackend::Gpu {
                kernel: Kernel::ShiftAnd,
            },
            bytes: 194_000_000,
            seconds: 0.467,
        });
        assert!(cal.gpu_gbps[&Kernel::ShiftAnd] > 0.7 * default);
        // A regex of the linear path without a required literal.
        let query = q(r"[0-9a-f]{32}", Syntax::Regex, false);
        assert_eq!(shift_and_units(&query), 1.0);
        let mut inp = input(&query, &cal, 194_000_000, true);
        inp.threads = 16;
        let d = plan(&inp);
        assert_eq!(d.choice, Choice::Gpu(Kernel::ShiftAnd), "{}", d.explain());
    }

    #[test]
    fn tier2_takes_regexes_without_required_literals() {
        let cal = Calibration::defaults(DeviceClass::Discrete);
        for query in [
            // (`E.R.R` would be a class string, tier 1's on its `E`.)
            q("E.R.+R", Syntax::Regex, false),
            q("E*R*R", Syntax::Wildcard, false),
            // `é` under Unicode -i (2 bytes: no literal worth searching).
            q("é", Syntax::Fixed, true),
        ] {
            let d = plan(&input(&query, &cal, 1 << 30, true));
            assert!(d.inhibitors.is_empty(), "{:?}", d.inhibitors);
            assert_eq!(d.choice, Choice::Gpu(Kernel::ShiftAnd));
            assert!(d.explain().contains("tier 2"), "{}", d.explain());
        }
    }

    #[test]
    fn density_inhibits_line_output_only() {
        let cal = Calibration::defaults(DeviceClass::Discrete);
        let query = q("x", Syntax::Fixed, false);
        let mut inp = input(&query, &cal, 1 << 30, true);
        inp.sample = SampleStats {
            lines: 1000,
            matching: 250,
            ..Default::default()
        };
        assert!(matches!(plan(&inp).choice, Choice::Gpu(_)));
        inp.want = Want::Lines;
        let d = plan(&inp);
        assert_eq!(d.choice, Choice::Cpu);
        assert!(d.inhibitors[0].contains("density"));
    }

    #[test]
    fn resident_large_corpus_goes_to_gpu_small_stays() {
        let cal = Calibration::defaults(DeviceClass::Discrete);
        let query = q("ERROR_503", Syntax::Regex, false);
        assert!(matches!(
            plan(&input(&query, &cal, 200_000_000, true)).choice,
            Choice::Gpu(_)
        ));
        assert_eq!(
            plan(&input(&query, &cal, 100_000, true)).choice,
            Choice::Cpu
        );
        // Not resident: start-up + upload of 200 MB never pays for one query.
        assert_eq!(
            plan(&input(&query, &cal, 200_000_000, false)).choice,
            Choice::Cpu
        );
        // REGRESSION: nor for tier 2 standing in for tier 1 (many
        // candidates), which left start-up and upload out of its estimate.
        let mut cal = Calibration::defaults(DeviceClass::Discrete);
        cal.gpu_gbps.insert(Kernel::ShiftAnd, 10.0);
        let query = q(r"latency_ms=19\d\d", Syntax::Regex, false);
        let mut inp = input(&query, &cal, 200_000_000, false);
        inp.sample.candidates = 900;
        inp.sample.matching = 50;
        assert_eq!(plan(&inp).choice, Choice::Cpu, "{}", plan(&inp).explain());
        inp.resident = true;
        assert_eq!(plan(&inp).choice, Choice::GpuPrefilter(Kernel::Scan));
    }

    #[test]
    fn software_adapters_are_never_automatic() {
        let cal = Calibration::defaults(DeviceClass::Software);
        let query = q("ERROR_503", Syntax::Fixed, false);
        let mut inp = input(&query, &cal, 1 << 30, true);
        inp.gpu = Some((DeviceClass::Software, "llvmpipe".into()));
        let d = plan(&inp);
        assert_eq!(d.choice, Choice::Cpu);
        assert!(d.summary().contains("software"));
    }

    /// A WebGPU adapter is `Other`: its defaults (a software device's)
    /// keep a 200 MB resident corpus on one CPU thread; a probe of the
    /// adapter and the CPU decides by what they measured, either way.
    #[test]
    fn a_probe_routes_an_adapter_of_unknown_class() {
        let query = q("ERROR_503", Syntax::Fixed, false);
        let bytes: u64 = 200 << 20;
        let route = |cal: &Calibration| {
            let mut inp = input(&query, cal, bytes, true);
            inp.gpu = Some((DeviceClass::Other, "webgpu".into()));
            plan(&inp).choice
        };
        let defaults = Calibration::defaults(DeviceClass::Other);
        assert_eq!(route(&defaults), Choice::Cpu);
        let cpu = Measurement {
            backend: MeasuredBackend::Cpu { threads: 1 },
            bytes: 8 << 20,
            seconds: 0.016,
        };
        let gpu = |seconds: f64| Measurement {
            backend: MeasuredBackend::Gpu {
                kernel: Kernel::Scan,
            },
            bytes,
            seconds,
        };
        // 6 ms on the GPU against ~420 ms on the CPU.
        let mut fast = defaults.clone();
        fast.adopt(&[cpu.clone(), gpu(0.006)]);
        assert_eq!(route(&fast), Choice::Gpu(Kernel::Scan));
        assert!((fast.cpu_gbps - (8u64 << 20) as f64 / 0.016 / 1e9).abs() < 1e-9);
        assert_eq!(fast.gpu_latency_ms, 5.0);
        // A run shorter than the default fixed cost lowers it.
        let mut faster = defaults.clone();
        faster.adopt(&[cpu.clone(), gpu(0.002)]);
        assert_eq!(faster.gpu_latency_ms, 2.0);
        assert_eq!(route(&faster), Choice::Gpu(Kernel::Scan));
        // A GPU slower than the CPU stays unused.
        let mut slow = defaults.clone();
        slow.adopt(&[cpu, gpu(0.9)]);
        assert_eq!(route(&slow), Choice::Cpu);
    }

    /// A repeated query's sample comes from the corpus's memo, the same
    /// as sampled; flags are part of the key; adding a document empties it.
    #[test]
    fn samples_are_memoised_per_corpus_and_query() {
        let mut corpus = Corpus::from_bytes("a", b"x ERROR_512\ny\nERROR_5\n".repeat(100));
        let q = QueryBuilder::new().build(&[r"ERROR_5\d\d"]).unwrap();
        // The counts are the same sampled again; the timing is the
        // memo's (a fresh sample times afresh).
        let counts = |s: SampleStats| (s.lines, s.matching, s.rejected, s.candidates);
        let first = sample(&corpus, &q, 16, false);
        assert_eq!(
            counts(first),
            counts(sample_uncached(&corpus, &q, 16, false))
        );
        assert_eq!(sample(&corpus, &q, 16, false), first);
        assert!(first.cpu_bytes > 0);
        assert_eq!(corpus.samples.lock().unwrap().entries_len(), 1);
        let v = QueryBuilder::new()
            .invert(true)
            .build(&[r"ERROR_5\d\d"])
            .unwrap();
        sample(&corpus, &v, 16, false);
        assert_eq!(corpus.samples.lock().unwrap().entries_len(), 2);
        corpus.push(crate::Document::from_bytes("b", b"ERROR_599\n".repeat(50)));
        assert_eq!(corpus.samples.lock().unwrap().entries_len(), 0);
        let after = sample(&corpus, &q, 16, false);
        assert_eq!(
            counts(after),
            counts(sample_uncached(&corpus, &q, 16, false))
        );
        assert!(after.matching > first.matching);
    }

    #[test]
    fn the_cpu_base_is_the_probe_when_measured_else_the_calibration() {
        let cal = Calibration::defaults(DeviceClass::Discrete);
        let lit = q("ERROR_503", Syntax::Fixed, false);
        let mut i = input(&lit, &cal, 200 << 20, false);
        i.gpu = None;
        // Not measured: the calibration's 8 GB/s, said to be the default.
        let (base, why) = cpu_base(&i);
        assert_eq!(base, cal.cpu_gbps);
        assert!(why.contains("default"), "{why}");
        let before = cpu_estimate(&i);
        let d = plan(&i);
        assert!(
            d.explain().contains("cpu speed: 8.0 GB/s"),
            "{}",
            d.explain()
        );
        // A probe at 24 GB/s: the base is 24 / 1.5 = 16 GB/s, the
        // estimate's scan half as long, and --explain says why.
        i.sample.scan_gbps = 24.0;
        let (base, why) = cpu_base(&i);
        assert!((base - 16.0).abs() < 1e-9, "{base}");
        assert!(why.contains("probe"), "{why}");
        let scan = |gbps: f64| (200u64 << 20) as f64 / (gbps * 1e9) * 1e3;
        let want = before - scan(8.0 * lit.matcher.speed()) + scan(16.0 * lit.matcher.speed());
        assert!((cpu_estimate(&i) - want).abs() < 1e-9);
        assert!(plan(&i).explain().contains("cpu speed: 16.0 GB/s"));
        // Page faults of a lazy map add their own time, for every matcher
        // alike, and are named (with a GPU to weigh, as a factor).
        let scanned = cpu_estimate(&i);
        i.sample.fault_gbps = 10.0;
        let faults = (200u64 << 20) as f64 / 10e9 * 1e3;
        assert!((cpu_estimate(&i) - scanned - faults).abs() < 1e-9);
        assert!(plan(&i)
            .explain()
            .contains("page faults of the lazy map 10.0 GB/s"));
        i.gpu = Some((DeviceClass::Discrete, "test gpu".into()));
        let d = plan(&i);
        let f = d
            .factors
            .iter()
            .find(|f| f.name == "page faults (lazy map)");
        assert!(f.is_some_and(|f| (f.ms.0 - faults).abs() < 1e-9), "{d:?}");
        let sum: f64 = d.factors.iter().map(|f| f.ms.0).sum();
        assert!((sum - cpu_estimate(&i)).abs() < 1e-6, "{sum} {d:?}");
        // Recorded runs are named as such when no probe ran.
        let mut cal = Calibration::defaults(DeviceClass::Discrete);
        cal.record(&Measurement {
            backend: MeasuredBackend::Cpu { threads: 1 },
            bytes: 10_000_000_000,
            seconds: 1.0,
        });
        let i = input(&lit, &cal, 200 << 20, false);
        let (base, why) = cpu_base(&i);
        assert_eq!(base, cal.cpu_gbps);
        assert!(why.contains("calibrated"), "{why}");
    }

    #[test]
    fn the_scan_probe_runs_once_per_corpus_and_only_on_large_ones() {
        // Under 4 MiB: not measured (the calibration decides).
        let small = Corpus::from_bytes("a", b"x ERROR_512\n".repeat(1000));
        assert_eq!(scan_probe(&small), (0.0, 0.0));
        let mut corpus = Corpus::from_bytes("a", b"x ERROR_512 y\n".repeat(400_000));
        let first = scan_probe(&corpus);
        assert!(first.0 > 0.0 && first.0.is_finite(), "{first:?}");
        // Bytes in memory: no page faults to pay.
        assert_eq!(first.1, 0.0);
        // Memoised: the same value, one memo entry.
        assert_eq!(scan_probe(&corpus), first);
        assert_eq!(corpus.samples.lock().unwrap().entries_len(), 1);
        // Emptied with the samples when a document is added.
        corpus.push(crate::Document::from_bytes("b", b"z\n".to_vec()));
        assert_eq!(corpus.samples.lock().unwrap().entries_len(), 0);
        assert!(scan_probe(&corpus).0 > 0.0);
        // A binary document (NUL bytes everywhere) is still timed.
        let doc = |b: u8, n: usize| crate::Document::from_bytes("c", vec![b; n]);
        assert!(probe_doc(&doc(0, 4 * PROBE_BYTES), None).0 > 0.0);
        assert_eq!(probe_doc(&doc(b'a', 4 * PROBE_BYTES - 1), None), (0.0, 0.0));
    }

    #[test]
    fn calibration_round_trips_and_corrupt_files_warn() {
        let dir = std::env::temp_dir().join(format!("logsieve-cal-{}", std::process::id()));
        let d = Some(dir.as_path());
        let mut c = Calibration::defaults(DeviceClass::Discrete);
        c.record(&Measurement {
            backend: MeasuredBackend::Gpu {
                kernel: Kernel::Scan,
            },
            bytes: 200_000_000,
            seconds: 0.0002,
        });
        c.record(&Measurement {
            backend: MeasuredBackend::Cpu { threads: 1 },
            bytes: 200_000_000,
            seconds: 0.02,
        });
        assert_eq!(c.samples, 2);
        c.save(d, "Test GPU #1").unwrap();
        let (back, warn) = Calibration::load(d, "Test GPU #1", DeviceClass::Discrete);
        assert!(warn.is_none());
        assert_eq!(back.samples, 2);
        assert!((back.cpu_gbps - c.cpu_gbps).abs() < 1e-9);
        std::fs::write(Calibration::path_for(&dir, "Test GPU #1"), "{not json").unwrap();
        let (def, warn) = Calibration::load(d, "Test GPU #1", DeviceClass::Discrete);
        assert!(warn.unwrap().contains("corrupt"));
        assert_eq!(def, Calibration::defaults(DeviceClass::Discrete));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn sample_estimates_density_and_elimination() {
        let data = logsieve_sample_corpus();
        let corpus = Corpus::from_bytes("s", data);
        let query = q("ERROR_503", Syntax::Fixed, false);
        let s = sample(&corpus, &query, 64, true);
        assert!(s.lines > 1000);
        assert!(s.density() < 0.01);
        assert!(s.elimination() > 0.5, "elimination {}", s.elimination());
        let x = q("x", Syntax::Fixed, false);
        let sx = sample(&corpus, &x, 64, true);
        assert!(sx.density() > 0.02);
        // One byte: the histogram admits exactly the lines that match (up
        // to the scaling of the 256-line histogram sample).
        let admitted = sx.lines - sx.rejected;
        assert!(admitted.abs_diff(sx.matching) * 10 < sx.lines, "{sx:?}");
        // The match count is exact over the sampled windows: compare with
        // the naive count over the same corpus for a single window.
        let one = sample(&corpus, &x, 1, false);
        let first_window_lines: Vec<&[u8]> = corpus.docs()[0]
            .data()
            .split(|&b| b == b'\n')
            .take(one.lines as usize)
            .collect();
        let naive = first_window_lines
            .iter()
            .filter(|l| l.contains(&b'x'))
            .count() as u64;
        assert_eq!(one.matching, naive);
    }

    fn logsieve_sample_corpus() -> Vec<u8> {
        crate::gen::generate(&crate::gen::GenOptions {
            lines: 50_000,
            seed: 5,
            ..Default::default()
        })
    }
}
