//! The GPU backend (wgpu): a corpus resident in GPU memory, searched by
//! WGSL compute kernels. The modules follow the data path:
//!
//! * `context` — [`GpuContext`]: one per process; adapter, device, queue,
//!   limits ([`GpuInfo`]), error scopes and waits; created with a
//!   [`GpuTuning`].
//! * `pipelines` — the bind-group layouts and compute pipelines, built once
//!   per context (`scan`'s lazily).
//! * `upload` — segment planning, line offsets and block hints, chunked
//!   staging of the bytes ([`UploadOptions`], [`UploadStats`]).
//! * `rare` — byte frequencies and a sample of the corpus, kept at
//!   upload: which two bytes `scan` tests for a pattern.
//! * `segment` — one resident segment and its typed buffers.
//! * `corpus` — [`GpuCorpus`]: the corpus uploaded once, as segments no
//!   larger than the adapter's storage-binding limit; a query writes one
//!   small uniform and dispatches.
//! * `kernels` — one `.rs` + `.wgsl` pair per kernel; each `.rs` holds the
//!   kernel's driver (`KernelDriver`: clear, record per segment, its own
//!   readback).
//! * `search` (one literal, [`GpuSearch`]), `pattern_set` (many literals,
//!   per-pattern counts), `positions` (brute-byte's match starts), `stats`
//!   (the stats pipeline's view): each runs a driver over the segments.
//! * `readback` — per-segment results back to the host and their merge
//!   with the CPU's oversized segments, `-v` and `-m`.
//! * [`GpuKernel`] / [`MultiKernel`]: the kernels, each selectable, all
//!   exact (every candidate is verified against the pattern on the GPU).

#[cfg(not(target_arch = "wasm32"))]
mod append;
mod context;
mod corpus;
pub(crate) mod fused;
mod fuzzy;
mod kernels;
mod multi;
mod oneshot;
mod pattern_set;
pub(crate) mod pipelines;
mod positions;
mod rare;
pub(crate) mod readback;
mod run;
mod search;
mod segment;
mod skip;
mod stats;
mod tier2;
mod upload;
mod warm;

#[cfg(not(target_arch = "wasm32"))]
pub use context::list_adapters;
pub use context::{AdapterProbe, GpuContext, GpuInfo};
pub use corpus::GpuCorpus;
/// bloom's stage counts on the host (benchmarks: the work per stage).
#[doc(hidden)]
pub use kernels::bloom::{bloom_stages, BloomStages};
pub use pattern_set::PreparedTables;
pub use search::GpuSearch;
pub use skip::or_skip;
pub use upload::{UploadOptions, UploadStats};

/// A query's uniform words (`kernels/common.wgsl`'s `Params`).
pub(crate) type ScanParams = [u32; kernels::params::WORDS];

use crate::query::Query;

pub use crate::kernel::{Kernel as GpuKernel, MultiKernel};
pub use crate::support::MAX_PATTERN;

/// The GPU backend's tuning and diagnostic switches, passed in when the
/// context is created ([`GpuContext::new_with`]) instead of read from the
/// environment inside the library: front ends choose once
/// ([`GpuTuning::from_env`]) and every layer below carries the choice.
/// The default is the behaviour with no variable set.
#[derive(Clone, Debug, Default)]
pub struct GpuTuning {
    /// `scan` takes its parameters from the uniform buffer even where the
    /// adapter has immediate data (push constants), as in a browser
    /// (`LOGSIEVE_NO_IMMEDIATES`): tests drive the uniform path natively.
    pub no_immediates: bool,
    /// Never run a regex as a class string on `scan`
    /// (`LOGSIEVE_NO_CLASS_SCAN`): tier 1 then scans its literals and the
    /// automaton verifies, as before class strings; tests drive both.
    pub no_class_scan: bool,
    /// Run a regex as a class string wherever it is one, whatever the
    /// estimates (`LOGSIEVE_FORCE_CLASS_SCAN`): tests drive the kernel on
    /// any corpus.
    pub force_class_scan: bool,
    /// One `scan` pass a class string even where two would share one
    /// (`LOGSIEVE_NO_CLASS_PAIRS`): the A/B of `scan::class_passes`.
    pub no_class_pairs: bool,
    /// Each single-literal or class-string search prints where its host
    /// time went (and its kernel time, with timestamps on), and each busy
    /// wait its polls, to stderr (`LOGSIEVE_TRACE_QUERIES=1`).
    pub trace_queries: bool,
    /// The largest GPU segment in bytes when [`UploadOptions::max_segment`]
    /// is `None` (`LOGSIEVE_GPU_MAX_SEGMENT`); `None`: the adapter's
    /// storage-binding limit (less padding).
    pub max_segment: Option<u64>,
    /// Workgroups per `bloom` dispatch at most (`LOGSIEVE_GPU_BLOOM_GROUPS`;
    /// `None` or 0: the measured default, 512): benchmarks, and tests that
    /// make the grid-stride loop walk many strides.
    pub bloom_groups: Option<u32>,
    /// `bloom`'s diagnostic switch, written to its uniform
    /// (`LOGSIEVE_BLOOM_DIAG`: 1 skips verification, 4 every probe; 0 off).
    /// It prices the kernel's steps; results are not exact with 1 or 4.
    /// 8 moves the filter of sets past 32k keys to global memory (exact;
    /// measured slower on the H100, kept for the comparison). 16 builds
    /// the pipeline with verification compiled out (wrong results; against
    /// 1 it prices the verification code's presence in the kernel).
    pub bloom_diag: u32,
    /// The parts `bloom`'s workgroup filter is split into
    /// (`LOGSIEVE_BLOOM_PARTS`, 1..=8; `None` or 0: one). Each part is a
    /// full-size filter in its own workgroups, which read the corpus again
    /// and test only the positions whose key falls in their part: P times
    /// the filter bits a key for P passes over the corpus (the 100k
    /// comparison on the H100; tests force 2, 3 and 7).
    pub bloom_parts: Option<u32>,
    /// Which adapters a session opens, one device each (`--gpus`,
    /// `LOGSIEVE_GPUS`).
    pub gpus: GpuSelection,
    /// GPU memory the resident corpus may take over all devices together,
    /// in bytes (`--gpu-memory`, `LOGSIEVE_GPU_MEMORY`); what does not fit
    /// stays in host memory, searched by the CPU. `None`: what the devices
    /// hold.
    pub gpu_memory: Option<u64>,
    /// Which lines live on the GPUs when not all of them fit.
    pub placement: Placement,
    /// Concurrent single-literal counts each take their own submission
    /// instead of sharing one (`LOGSIEVE_NO_FUSE=1`): the before/after
    /// switch of the fused counts (`session/fuse.rs`).
    pub no_fuse: bool,
    /// Per-pattern counts read back this many listed patterns (those that
    /// hit, listed on the GPU) and the full counters when more hit
    /// (`LOGSIEVE_PATTERN_LIST`; 0: the full counters always, the path
    /// before the list). `None`: half again the last count's hits (an
    /// eighth of the patterns at first). Tests force both paths.
    pub pattern_list: Option<usize>,
}

/// Which adapters to open (`--gpus all|N|0,2`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum GpuSelection {
    /// Every discrete adapter; without one, the best adapter (as a single
    /// device).
    #[default]
    All,
    /// The first `n` adapters in preference order (discrete, integrated,
    /// others, software). Above the number found, adapters are opened
    /// again, each as its own device (how tests run several devices on
    /// one software adapter).
    Count(usize),
    /// These adapters, by index in preference order (`logsieve gpu-info`
    /// order).
    List(Vec<usize>),
}

impl GpuSelection {
    /// Parses `all`, a count `N` (at least 1) or a list `0,2`.
    pub fn parse(s: &str) -> Result<GpuSelection, String> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("all") {
            return Ok(GpuSelection::All);
        }
        if s.contains(',') {
            let v = s
                .split(',')
                .map(|x| x.trim().parse::<usize>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| format!("--gpus: {s:?} is not a list of adapter indices"))?;
            return Ok(GpuSelection::List(v));
        }
        match s.parse::<usize>() {
            Ok(0) => Err("--gpus: 0 devices; use --backend cpu".to_string()),
            Ok(n) => Ok(GpuSelection::Count(n)),
            Err(_) => Err(format!(
                "--gpus: {s:?}: expected all, a count (2) or a list of indices (0,2)"
            )),
        }
    }
}

/// Which part of the corpus lives on the GPUs when not all of it fits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Placement {
    /// The last lines of the corpus (most queries look at recent logs).
    #[default]
    Newest,
    /// The first lines.
    Oldest,
}

/// Parses a size in bytes with an optional `K`, `M`, `G` or `T` suffix
/// (powers of 1024; `KiB`, `MB` and the like read the same), e.g. `512M`.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{s:?}: expected a size such as 512M or 8G"))?;
    let shift = match unit.trim().to_ascii_uppercase().trim_end_matches('B') {
        "" => 0,
        "K" | "KI" => 10,
        "M" | "MI" => 20,
        "G" | "GI" => 30,
        "T" | "TI" => 40,
        _ => return Err(format!("{s:?}: unknown size suffix (K, M, G, T)")),
    };
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("{s:?}: too large"))
}

impl GpuTuning {
    /// The tuning the `LOGSIEVE_*` variables above ask for. For front ends
    /// (CLI, benchmarks, servers): nothing inside the library reads the
    /// environment.
    pub fn from_env() -> GpuTuning {
        let var = |name: &str| std::env::var(name).ok();
        GpuTuning {
            no_immediates: std::env::var_os("LOGSIEVE_NO_IMMEDIATES").is_some(),
            no_class_scan: std::env::var_os("LOGSIEVE_NO_CLASS_SCAN").is_some(),
            no_class_pairs: std::env::var_os("LOGSIEVE_NO_CLASS_PAIRS").is_some(),
            force_class_scan: std::env::var_os("LOGSIEVE_FORCE_CLASS_SCAN").is_some(),
            trace_queries: var("LOGSIEVE_TRACE_QUERIES").as_deref() == Some("1"),
            max_segment: var("LOGSIEVE_GPU_MAX_SEGMENT").and_then(|s| s.trim().parse().ok()),
            bloom_groups: var("LOGSIEVE_GPU_BLOOM_GROUPS")
                .and_then(|s| s.trim().parse().ok())
                .filter(|&n| n > 0),
            bloom_diag: var("LOGSIEVE_BLOOM_DIAG")
                .and_then(|s| s.parse().ok())
                .unwrap_or(0),
            bloom_parts: var("LOGSIEVE_BLOOM_PARTS")
                .and_then(|s| s.trim().parse().ok())
                .filter(|&n| n > 0),
            gpus: var("LOGSIEVE_GPUS")
                .and_then(|s| GpuSelection::parse(&s).ok())
                .unwrap_or_default(),
            gpu_memory: var("LOGSIEVE_GPU_MEMORY").and_then(|s| parse_size(&s).ok()),
            placement: match var("LOGSIEVE_GPU_PLACEMENT").as_deref() {
                Some("oldest") => Placement::Oldest,
                _ => Placement::Newest,
            },
            no_fuse: var("LOGSIEVE_NO_FUSE").as_deref() == Some("1"),
            pattern_list: var("LOGSIEVE_PATTERN_LIST").and_then(|s| s.trim().parse().ok()),
        }
    }
}

/// Why the GPU's literal kernels cannot run `q`, or `None` when they can
/// ([`crate::support::literal_support`], the one support check, as a
/// string; tier 2 is [`crate::support::shift_and_support`]).
pub fn unsupported_reason(q: &Query) -> Option<String> {
    // The literal kernels (what `GpuCorpus::search` with one of them
    // runs); tier 2 is `GpuKernel::ShiftAnd`, checked by
    // `support::shift_and_support`.
    crate::support::literal_support(q, None)
        .err()
        .map(|u| u.reason().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::{QueryBuilder, Syntax};

    #[test]
    fn selections_and_sizes_parse() {
        assert_eq!(GpuSelection::parse("all"), Ok(GpuSelection::All));
        assert_eq!(GpuSelection::parse("3"), Ok(GpuSelection::Count(3)));
        assert_eq!(
            GpuSelection::parse("0, 2"),
            Ok(GpuSelection::List(vec![0, 2]))
        );
        assert!(GpuSelection::parse("0").is_err());
        assert!(GpuSelection::parse("x").is_err());
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("3M"), Ok(3 << 20));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("1gb"), Ok(1 << 30));
        assert!(parse_size("1X").is_err());
        assert!(parse_size("").is_err());
    }

    #[test]
    fn kernel_names_round_trip() {
        for k in GpuKernel::ALL {
            assert_eq!(GpuKernel::from_name(k.name()), Some(k));
        }
        assert_eq!(GpuKernel::from_name("nope"), None);
    }

    #[test]
    fn unsupported_reasons() {
        let fixed = |p: &[u8], f: &dyn Fn(&mut QueryBuilder)| {
            let mut b = QueryBuilder::new();
            b.syntax(Syntax::Fixed);
            f(&mut b);
            b.build(&[p]).unwrap()
        };
        assert_eq!(unsupported_reason(&fixed(b"error", &|_| {})), None);
        assert_eq!(
            unsupported_reason(&fixed(b"error", &|b| {
                b.case_insensitive(true).invert(true);
            })),
            None
        );
        assert_eq!(unsupported_reason(&fixed(&[b'a'; 64], &|_| {})), None);
        assert!(unsupported_reason(&fixed(&[b'a'; 65], &|_| {})).is_some());
        assert!(unsupported_reason(&fixed(b"", &|_| {})).is_some());
        // Several literals: the multi-literal kernels, any length.
        assert_eq!(unsupported_reason(&fixed(b"a\nb", &|_| {})), None);
        let long = [vec![b'a'; 100], b"b".to_vec()].join(&b'\n');
        assert_eq!(unsupported_reason(&fixed(&long, &|_| {})), None);
        assert!(unsupported_reason(&fixed(b"a\n\nb", &|_| {})).is_some());
        assert!(unsupported_reason(&fixed(b"err", &|b| {
            b.word(true);
        }))
        .is_some());
        assert!(unsupported_reason(&fixed(b"err", &|b| {
            b.whole_line(true);
        }))
        .is_some());
        // The literal kernels' reasons (tier 2 runs both: support.rs).
        assert!(unsupported_reason(&fixed("é".as_bytes(), &|b| {
            b.case_insensitive(true);
        }))
        .is_some());
        let re = QueryBuilder::new().build(&["a+b"]).unwrap();
        assert!(unsupported_reason(&re).is_some());
        assert!(crate::support::shift_and_support(&re).is_ok());
    }
}
