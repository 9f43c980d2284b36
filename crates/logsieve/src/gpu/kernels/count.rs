//! Population counts of the per-line bit sets (matching and candidate
//! lines), so that a count query reads back 16 bytes per segment.
use super::{Grid, Module, View};
use crate::gpu::segment::ResidentSegment;

/// The shader module.
pub(crate) const MODULE: Module = Module {
    label: "count",
    view: View::U32,
    wgsl: include_str!("count.wgsl"),
    entry_points: &["count_result", "count_cand", "count_result_zero"],
};

/// The pop-counts recorded after a kernel on each segment.
pub(crate) struct PopCount<'a> {
    /// `count_result`, or `count_result_zero`, which zeroes the bits as it
    /// counts them (a count-only scan: the next scan then needs no clear).
    pub(crate) result: &'a wgpu::ComputePipeline,
    /// `count_cand`, for kernels with a prefilter phase.
    pub(crate) candidates: Option<&'a wgpu::ComputePipeline>,
}

impl PopCount<'_> {
    /// Records the counts of `seg`'s bit sets (its bind group set).
    pub(crate) fn record(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        seg: &ResidentSegment,
        grid: Grid,
    ) {
        let by_word = u64::from(seg.n_words).div_ceil(256);
        grid.run(pass, self.result, by_word);
        if let Some(p) = self.candidates {
            grid.run(pass, p, by_word);
        }
    }
}
