//! `brute-line`: one thread per line scans its line (the naive baseline).
use super::count::PopCount;
use super::{Grid, KernelDriver, Module, SegmentRun, View};
use crate::gpu::segment::ResidentSegment;
use crate::gpu::GpuKernel;

/// The shader module.
pub(crate) const MODULE: Module = Module {
    label: "brute-line",
    view: View::U32,
    wgsl: include_str!("brute_line.wgsl"),
    entry_points: &["brute_line"],
};

/// The driver: one thread per line.
pub(crate) struct BruteLine<'a> {
    pub(crate) pipeline: &'a wgpu::ComputePipeline,
    /// The pop-counts after it.
    pub(crate) count: PopCount<'a>,
    pub(crate) grid: Grid,
}

impl KernelDriver for BruteLine<'_> {
    fn label(&self) -> &'static str {
        GpuKernel::BruteLine.name()
    }

    fn clear(&self, enc: &mut wgpu::CommandEncoder, seg: &ResidentSegment) {
        enc.clear_buffer(&seg.buffers.result_bits, 0, None);
        enc.clear_buffer(&seg.buffers.counters, 0, None);
    }

    fn record(&self, pass: &mut wgpu::ComputePass<'_>, run: SegmentRun<'_>) {
        let s = run.segment;
        pass.set_bind_group(0, run.bind, &[]);
        self.grid
            .run(pass, self.pipeline, u64::from(s.n_lines).div_ceil(256));
        self.count.record(pass, s, self.grid);
    }
}
