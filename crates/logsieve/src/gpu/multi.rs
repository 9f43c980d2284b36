//! Many literals at once on the GPU (issue 5): the kernels `trie`, `ac`
//! and `prefix-hash`, per-line result bits and per-pattern counts.

use crate::corpus::Corpus;
use crate::error::Error;
use crate::query::Query;

use super::{GpuCorpus, GpuKernel};

/// The GPU kernels for many literals (`--gpu-kernel trie|ac|prefix-hash`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MultiKernel {
    /// A walk of the pattern trie from every start position.
    Trie,
    /// Failure-free Aho-Corasick (PFAC): a dense goto table, one walk per
    /// start byte.
    Ac,
    /// A hash of the first bytes at every position, then verification.
    PrefixHash,
}

impl MultiKernel {
    /// Every multi-literal kernel, in the order benchmarks list them.
    pub const ALL: [MultiKernel; 3] = [MultiKernel::Trie, MultiKernel::Ac, MultiKernel::PrefixHash];

    /// The fastest, used when no kernel is named.
    pub const DEFAULT: MultiKernel = MultiKernel::Trie;

    /// The kernel's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            MultiKernel::Trie => "trie",
            MultiKernel::Ac => "ac",
            MultiKernel::PrefixHash => "prefix-hash",
        }
    }

    /// The kernel with this name.
    pub fn from_name(name: &str) -> Option<MultiKernel> {
        MultiKernel::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The multi-literal kernel for a `--gpu-kernel` choice: the named one,
    /// or the default for the single-literal kernels and none.
    pub fn choose(k: Option<GpuKernel>) -> MultiKernel {
        k.and_then(GpuKernel::multi).unwrap_or(MultiKernel::DEFAULT)
    }
}

impl GpuCorpus {
    /// Lines containing each pattern of `q`, and its non-overlapping
    /// occurrences, counted on the GPU with `kernel`
    /// ([`crate::pattern_counts`] defines them).
    pub fn count_per_pattern(
        &self,
        _corpus: &Corpus,
        _q: &Query,
        kernel: MultiKernel,
    ) -> Result<(Vec<u64>, Vec<u64>), Error> {
        Err(Error::backend(format!(
            "GPU kernel {} is not built yet",
            kernel.name()
        )))
    }
}

impl From<MultiKernel> for GpuKernel {
    fn from(k: MultiKernel) -> GpuKernel {
        match k {
            MultiKernel::Trie => GpuKernel::Trie,
            MultiKernel::Ac => GpuKernel::Ac,
            MultiKernel::PrefixHash => GpuKernel::PrefixHash,
        }
    }
}
