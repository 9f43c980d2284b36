//! The GPU backend (wgpu): a corpus resident in GPU memory, searched by
//! WGSL compute kernels for single-literal queries.
//!
//! * [`GpuContext`]: one per process; adapter, device, pipelines built once.
//! * [`GpuCorpus`]: the corpus uploaded once, as segments no larger than the
//!   adapter's storage-binding limit, with line offsets and per-line
//!   signatures; a query writes one small uniform and dispatches.
//! * [`GpuKernel`]: the kernels, each selectable, all exact (every candidate
//!   is verified against the pattern on the GPU).
//!
//! Data flow of a query: the host folds the pattern (`-i`), picks the rare
//! bytes from the byte frequencies gathered at upload, writes the uniform;
//! one command buffer clears the per-line bit sets, runs the kernel on every
//! segment and pop-counts the result bits; the host reads back 16 bytes per
//! segment (and the bit sets when line ids are wanted), applies `-v` and
//! `-m`, and merges the oversized segments that the CPU searched.

pub(crate) mod context;
mod kernels;
mod multi;
mod resident;

pub use context::{GpuContext, GpuInfo};
pub use resident::{GpuCorpus, GpuSearch, UploadOptions, UploadStats};

use crate::query::Query;

pub use crate::kernel::{Kernel as GpuKernel, MultiKernel};
pub use crate::support::MAX_PATTERN;

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
