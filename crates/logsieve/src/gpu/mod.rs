//! The GPU backend (wgpu): a corpus resident in GPU memory, searched by
//! WGSL compute kernels. The modules follow the data path:
//!
//! * `context` — [`GpuContext`]: one per process; adapter, device, queue,
//!   limits ([`GpuInfo`]), error scopes and waits; created with a
//!   [`GpuTuning`].
//! * `pipelines` — the bind-group layouts and compute pipelines, built once
//!   per context (`scan`'s lazily).
//! * `upload` — segment planning, line offsets and block hints, chunked
//!   staging of the bytes, byte frequencies ([`UploadOptions`],
//!   [`UploadStats`]).
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

mod context;
mod corpus;
mod kernels;
mod multi;
mod oneshot;
mod pattern_set;
pub(crate) mod pipelines;
mod positions;
mod readback;
mod search;
mod segment;
mod stats;
mod upload;

pub use context::{GpuContext, GpuInfo};
pub use corpus::GpuCorpus;
pub use multi::MultiKernel;
pub use search::GpuSearch;
pub use upload::{UploadOptions, UploadStats};

use crate::query::{CaseMode, Query};

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
    /// Each single-literal search prints where its host time went, and each
    /// busy wait its polls, to stderr (`LOGSIEVE_TRACE_QUERIES=1`).
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
    /// It prices the kernel's steps; results are not exact with it on.
    pub bloom_diag: u32,
}

impl GpuTuning {
    /// The tuning the `LOGSIEVE_*` variables above ask for. For front ends
    /// (CLI, benchmarks, servers): nothing inside the library reads the
    /// environment.
    pub fn from_env() -> GpuTuning {
        let var = |name: &str| std::env::var(name).ok();
        GpuTuning {
            no_immediates: std::env::var_os("LOGSIEVE_NO_IMMEDIATES").is_some(),
            trace_queries: var("LOGSIEVE_TRACE_QUERIES").as_deref() == Some("1"),
            max_segment: var("LOGSIEVE_GPU_MAX_SEGMENT").and_then(|s| s.trim().parse().ok()),
            bloom_groups: var("LOGSIEVE_GPU_BLOOM_GROUPS")
                .and_then(|s| s.trim().parse().ok())
                .filter(|&n| n > 0),
            bloom_diag: var("LOGSIEVE_BLOOM_DIAG")
                .and_then(|s| s.parse().ok())
                .unwrap_or(0),
        }
    }
}

/// The GPU kernels (`--gpu-kernel NAME`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GpuKernel {
    /// One thread per line scans its line (the naive baseline).
    BruteLine,
    /// One thread per byte; atomic append of match positions.
    BruteByte,
    /// Per-line histogram prefilter, then one thread per byte.
    TwoPhase,
    /// 16-byte coalesced loads, SWAR tests on two rare bytes (the fastest).
    Scan,
    /// A per-line presence mask built at upload as the prefilter.
    Signature,
    /// Many literals: a walk of the pattern trie per start position
    /// (`gpu/multi.rs`, `kernels/multi_common.rs`; not in [`GpuKernel::ALL`]).
    Trie,
    /// Many literals: failure-free Aho-Corasick, a dense goto table.
    Ac,
    /// Many literals: a hash of each position's first bytes, then verify.
    PrefixHash,
    /// Many literals: 16-byte streaming loads, a bit filter in workgroup
    /// memory, then a hash table and verification (patterns of at least 4
    /// bytes; shorter sets run [`GpuKernel::Ac`]).
    Bloom,
}

impl GpuKernel {
    /// Every kernel, in the order benchmarks list them.
    pub const ALL: [GpuKernel; 5] = [
        GpuKernel::BruteLine,
        GpuKernel::BruteByte,
        GpuKernel::TwoPhase,
        GpuKernel::Scan,
        GpuKernel::Signature,
    ];

    /// The kernel's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            GpuKernel::BruteLine => "brute-line",
            GpuKernel::BruteByte => "brute-byte",
            GpuKernel::TwoPhase => "two-phase",
            GpuKernel::Scan => "scan",
            GpuKernel::Signature => "signature",
            GpuKernel::Trie => "trie",
            GpuKernel::Ac => "ac",
            GpuKernel::PrefixHash => "prefix-hash",
            GpuKernel::Bloom => "bloom",
        }
    }

    /// The kernel with this name (single- or multi-literal).
    pub fn from_name(name: &str) -> Option<GpuKernel> {
        GpuKernel::ALL
            .into_iter()
            .chain(MultiKernel::ALL.map(GpuKernel::from))
            .find(|k| k.name() == name)
    }

    /// The multi-literal kernel this is, if it is one.
    pub fn multi(self) -> Option<MultiKernel> {
        match self {
            GpuKernel::Trie => Some(MultiKernel::Trie),
            GpuKernel::Ac => Some(MultiKernel::Ac),
            GpuKernel::PrefixHash => Some(MultiKernel::PrefixHash),
            GpuKernel::Bloom => Some(MultiKernel::Bloom),
            _ => None,
        }
    }

    /// The kernel that runs `q` when `k` is asked for: the single-literal
    /// kernels take one pattern, so a query of several literals (or a
    /// multi-literal kernel by name) goes to a multi-literal kernel, and
    /// `bloom` on a set with a pattern shorter than 4 bytes runs `ac`
    /// ([`MultiKernel::for_query`]).
    pub fn effective(k: Option<GpuKernel>, q: &Query) -> GpuKernel {
        let many = q.literals().is_some_and(|l| l.len() > 1);
        match k {
            Some(k) => match k.multi() {
                Some(mk) => mk.for_query(q).into(),
                None if many => MultiKernel::choose(Some(k), q).into(),
                None => k,
            },
            None if many => MultiKernel::choose(None, q).into(),
            None => GpuKernel::Scan,
        }
    }
}

impl std::fmt::Display for GpuKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The longest pattern the kernels take (it lives in the query uniform).
pub const MAX_PATTERN: usize = 64;

/// Why the GPU cannot run `q`, or `None` when it can: non-empty literals
/// (one of at most 64 bytes, or several of any length), case-sensitive or
/// ASCII `-i`, without `-w` or `-x`. (`-v` and `-m` are applied on the host.)
pub fn unsupported_reason(q: &Query) -> Option<String> {
    let Some(lits) = q.literals() else {
        return Some(format!(
            "the GPU runs literal queries only (this one is a {:?} query)",
            q.kind()
        ));
    };
    // Several literals run on the multi-literal kernels (`multi.rs`), which
    // hold patterns of any length in a table.
    if lits.iter().any(|l| l.is_empty()) {
        return Some("the empty pattern matches every line (no GPU needed)".to_string());
    }
    let lit = &lits[0];
    if lits.len() == 1 && lit.len() > MAX_PATTERN {
        return Some(format!(
            "the pattern is {} bytes; the GPU kernels take at most {MAX_PATTERN}",
            lit.len()
        ));
    }
    if q.case() == CaseMode::Unicode {
        return Some(
            "Unicode case folding (-i on a non-ASCII pattern) runs on the CPU".to_string(),
        );
    }
    if q.word() {
        return Some("-w (word boundaries) runs on the CPU".to_string());
    }
    if q.whole_line() {
        return Some("-x (whole lines) runs on the CPU".to_string());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::{QueryBuilder, Syntax};

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
        assert!(unsupported_reason(&fixed("é".as_bytes(), &|b| {
            b.case_insensitive(true);
        }))
        .is_some());
        let re = QueryBuilder::new().build(&["a+b"]).unwrap();
        assert!(unsupported_reason(&re).is_some());
    }
}
