//! The multi-literal kernels' (issue 5) window into the resident corpus:
//! a child module of `resident`, so that the segments, the result bit sets
//! and the readback buffers are reused without changing their shape.

use super::{GpuCorpus, GpuSearch};
use crate::corpus::Corpus;
use crate::error::Error;
use crate::query::Query;
use crate::Want;

use crate::gpu::MultiKernel;

impl GpuCorpus {
    /// [`GpuCorpus::search_max`] for the multi-literal kernels.
    pub(crate) fn search_multi(
        &self,
        _corpus: &Corpus,
        _q: &Query,
        kernel: MultiKernel,
        _want: Want,
        _max_count: Option<u64>,
    ) -> Result<GpuSearch, Error> {
        if let Some(r) = crate::gpu::unsupported_reason(_q) {
            return Err(Error::backend(format!("the GPU cannot run this query: {r}")));
        }
        Err(Error::backend(format!(
            "GPU kernel {} is not built yet",
            kernel.name()
        )))
    }
}
