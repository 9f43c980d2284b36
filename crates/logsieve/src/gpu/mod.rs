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

pub use context::{AdapterProbe, GpuContext, GpuInfo};
pub use corpus::GpuCorpus;
pub use search::GpuSearch;
pub use upload::{UploadOptions, UploadStats};

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

/// Why the GPU cannot run `q`, or `None` when it can
/// ([`crate::support::gpu_support`], the one support check, as a string).
pub fn unsupported_reason(q: &Query) -> Option<String> {
    crate::support::gpu_support(q)
        .err()
        .map(|u| u.reason().to_string())
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
