//! `plain-read`: vec4<u32> reads of the resident corpus and a trivial
//! reduction: the memory-bandwidth ceiling that `scan` is measured against.
use super::{Grid, Module, View};
use crate::gpu::segment::ResidentSegment;

/// The shader module.
pub(crate) const MODULE: Module = Module {
    label: "plain-read",
    view: View::Vec4,
    wgsl: include_str!("plain_read.wgsl"),
    entry_points: &["plain_read"],
};

/// A value the XOR of a vec4 is compared with (any value works).
pub(crate) const MAGIC: u32 = 0x9E37_79B9;

/// vec4<u32> loads per thread (`VPT` in plain_read.wgsl). 1 and 4 measured
/// the same on the H100 (0.066 vs 0.067 ms for 194 MB).
pub(crate) const VPT: u64 = 4;

/// Records the plain read of every segment, the pipeline set once.
pub(crate) fn record(
    pass: &mut wgpu::ComputePass<'_>,
    pipeline: &wgpu::ComputePipeline,
    segments: &[ResidentSegment],
    binds: &[wgpu::BindGroup],
    grid: Grid,
) {
    pass.set_pipeline(pipeline);
    for (s, b) in segments.iter().zip(binds) {
        pass.set_bind_group(0, b, &[]);
        let (x, y) = grid.dims(u64::from(s.n_bytes).div_ceil(16).div_ceil(256 * VPT));
        pass.dispatch_workgroups(x, y, 1);
    }
}
