//! `signature`: a per-line 128-bit presence mask of `byte & 127`, built on
//! the GPU once at upload (16 bytes per line, resident); a query's phase 1
//! reads 16 bytes per line instead of the line; phase 2 is two-phase's.
use super::count::PopCount;
use super::{Grid, KernelDriver, Module, SegmentRun, View};
use crate::gpu::segment::ResidentSegment;
use crate::gpu::GpuKernel;

/// The shader module.
pub(crate) const MODULE: Module = Module {
    label: "signature",
    view: View::U32,
    wgsl: include_str!("signature.wgsl"),
    entry_points: &["build", "phase1"],
};

/// The presence bits a line needs to hold the (already folded) pattern.
pub(crate) fn query_mask(folded: &[u8]) -> [u32; 4] {
    let mut m = [0u32; 4];
    for &b in folded {
        let b = b & 127;
        m[(b >> 5) as usize] |= 1 << (b & 31);
    }
    m
}

/// Records the signatures' build over every segment (at upload: one
/// thread per line), the pipeline set once.
pub(crate) fn record_build(
    pass: &mut wgpu::ComputePass<'_>,
    build: &wgpu::ComputePipeline,
    segments: &[ResidentSegment],
    binds: &[wgpu::BindGroup],
    grid: Grid,
) {
    pass.set_pipeline(build);
    for (s, b) in segments.iter().zip(binds) {
        pass.set_bind_group(0, b, &[]);
        let (x, y) = grid.dims(u64::from(s.n_lines));
        pass.dispatch_workgroups(x, y, 1);
    }
}

/// The driver: the signatures' phase 1, then two-phase's phase 2.
pub(crate) struct Signature<'a> {
    /// signature's `phase1`: one thread per line.
    pub(crate) phase1: &'a wgpu::ComputePipeline,
    /// two-phase's `phase2`.
    pub(crate) phase2: &'a wgpu::ComputePipeline,
    /// The pop-counts after it.
    pub(crate) count: PopCount<'a>,
    pub(crate) grid: Grid,
}

impl KernelDriver for Signature<'_> {
    fn label(&self) -> &'static str {
        GpuKernel::Signature.name()
    }

    fn clear(&self, enc: &mut wgpu::CommandEncoder, seg: &ResidentSegment) {
        enc.clear_buffer(&seg.buffers.result_bits, 0, None);
        enc.clear_buffer(&seg.buffers.counters, 0, None);
        enc.clear_buffer(&seg.buffers.candidates, 0, None);
    }

    fn record(&self, pass: &mut wgpu::ComputePass<'_>, run: SegmentRun<'_>) {
        let s = run.segment;
        pass.set_bind_group(0, run.bind, &[]);
        self.grid
            .run(pass, self.phase1, u64::from(s.n_lines).div_ceil(256));
        self.grid
            .run(pass, self.phase2, u64::from(s.n_bytes).div_ceil(256));
        self.count.record(pass, s, self.grid);
    }
}
