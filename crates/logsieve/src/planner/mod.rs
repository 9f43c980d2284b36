//! The planner: per query, CPU or GPU, which kernel, and why.
//!
//! Two stages, in this order:
//!
//! 1. **Inhibitors** — categorical reasons that force the CPU whatever the
//!    scores: a query no GPU path runs ([`crate::support::gpu_support`]'s categorical
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
use crate::kernel::Kernel;
use crate::query::{CaseMode, Query};
use crate::results::Want;
use crate::support::{PrefilterPlan, Unsupported};

mod calibration;
mod cost;
mod decide;
mod explain;
mod sample;
mod tier1;
pub use calibration::{Calibration, MeasuredBackend, Measurement};
pub(crate) use cost::unit_default_gbps;
pub use cost::{
    bitap_units, cpu_base, cpu_estimate, per_unit, shift_and_units, tier2_gbps, units,
    VERIFY_MS_PER_LINE,
};
pub use decide::{inhibitors, multi_kernel, plan};
pub(crate) use sample::cpu_speed as finder_speed;
pub(crate) use sample::fixed_speed;
pub use sample::{histogram_elimination, sample, scan_probe, SampleStats, PROBE_BYTES};
use sample::{memo_key, sample_windows};
pub use tier1::{
    kernel_gbps, literal_counts, passes, tier1_gpu_ms, tier1_literals, Tier1Input, Tier1Literals,
    Tier1Option,
};

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

#[cfg(test)]
mod tests {
    use super::sample::{probe_doc, sample_uncached};
    use super::*;
    use crate::support::gpu_support;
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
