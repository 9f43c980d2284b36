//! The stats pipeline's (`stats/gpu.rs`) and the shape kernels'
//! (`patterns/gpu.rs`) window into the
//! resident corpus: the per-segment line-result bit sets, and the `scan`
//! driver run without a pop-count or a readback, so that the pipeline's
//! own kernel can AND the bits with its time filter and count in the same
//! submission. Only these `pub(crate)` methods are the contract.

use std::ops::Range;

use super::corpus::GpuCorpus;
use super::kernels::scan::{self, Scan};
use crate::corpus::Corpus;
use crate::error::Error;
use crate::query::Query;

/// One GPU segment as the pipeline sees it.
pub(crate) struct SegView {
    /// The document the segment belongs to.
    pub(crate) doc: usize,
    /// Its lines in the document.
    pub(crate) lines: Range<u64>,
    /// Its matching-line bit set (before `-v`), one bit per line, set by
    /// the search kernel.
    pub(crate) result: wgpu::Buffer,
    /// Its bytes (`common.wgsl`'s `data`) and line starts plus the end
    /// (`starts`): what the shape kernels read (`patterns/gpu.rs`).
    pub(crate) data: wgpu::Buffer,
    pub(crate) starts: wgpu::Buffer,
}

impl GpuCorpus {
    /// The GPU segments, in order.
    pub(crate) fn pipeline_segments(&self) -> Vec<SegView> {
        self.segs
            .iter()
            .map(|s| SegView {
                doc: s.doc,
                lines: s.lines.clone(),
                result: s.buffers.result_bits.clone(),
                data: s.buffers.data.clone(),
                starts: s.buffers.starts.clone(),
            })
            .collect()
    }

    /// The lines the GPU does not hold (oversized lines, searched on the
    /// CPU): (document, lines).
    pub(crate) fn pipeline_cpu_lines(&self) -> Vec<(usize, Range<u64>)> {
        self.cpu_segs
            .iter()
            .map(|(d, s)| (*d, s.lines.clone()))
            .collect()
    }

    /// Errors unless `corpus` is the corpus that was uploaded.
    pub(crate) fn pipeline_check(&self, corpus: &Corpus) -> Result<(), Error> {
        self.check_corpus(corpus)
    }

    /// Records, in one command buffer: with `q`, clearing every segment's
    /// result bits and the `scan` kernel filling them; then whatever `more`
    /// encodes; and submits it. The query uniform cannot be overwritten by
    /// another search before the submission (the state lock is held).
    pub(crate) fn pipeline_submit(
        &self,
        q: Option<&Query>,
        more: impl FnOnce(&mut wgpu::CommandEncoder),
    ) -> Result<(), Error> {
        let c = &*self.ctx.inner;
        c.check_faults()?;
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        // The scan below leaves result bits set.
        st.clean = false;
        let mut enc = match q {
            Some(q) => {
                if let Err(r) = crate::support::stats_support(Some(q)) {
                    return Err(Error::backend(format!(
                        "the GPU cannot run this query: {r}"
                    )));
                }
                let (prm, _) = self.params_for(q);
                let imm = c.info.scan_immediates.then(|| scan::immediates(&prm));
                if imm.is_none() {
                    self.write_params(&prm);
                }
                let driver = Scan {
                    pipeline: c.pipes.scan.get(&c.device, scan::pipeline_of(&prm)),
                    immediates: imm.as_deref(),
                    clear_result: true,
                    count: None,
                    grid: c.grid(),
                };
                self.encode(&driver, &st.binds, false)
            }
            None => c.device.create_command_encoder(&Default::default()),
        };
        more(&mut enc);
        c.queue.submit([enc.finish()]);
        Ok(())
    }
}
