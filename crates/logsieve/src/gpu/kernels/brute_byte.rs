//! `brute-byte`: one thread per byte, atomic append of match positions.
//!
//! The number of matches is unknown before the run. The append buffer is
//! bounded and the counter counts past its end: after the run the host
//! compares the count with the capacity, grows the buffer to the exact
//! count and runs again; if the exact size would not fit one binding, it
//! collects the positions window by window (a window of at most `capacity`
//! bytes cannot overflow, since a byte starts at most one match). No
//! position is ever dropped.
use super::count::PopCount;
use super::{Grid, KernelDriver, Module, SegmentRun, View};
use crate::gpu::segment::ResidentSegment;
use crate::gpu::GpuKernel;

/// The shader module.
pub(crate) const MODULE: Module = Module {
    label: "brute-byte",
    view: View::U32,
    wgsl: include_str!("brute_byte.wgsl"),
    entry_points: &["brute_byte"],
};

/// The first capacity of a segment's append buffer, in positions.
pub(crate) const INITIAL_CAPACITY: u64 = 1 << 16;

/// The driver: one thread per byte (the append buffer is bound at 9).
pub(crate) struct BruteByte<'a> {
    pub(crate) pipeline: &'a wgpu::ComputePipeline,
    /// The pop-counts after it.
    pub(crate) count: PopCount<'a>,
    pub(crate) grid: Grid,
}

impl KernelDriver for BruteByte<'_> {
    fn label(&self) -> &'static str {
        GpuKernel::BruteByte.name()
    }

    fn clear(&self, enc: &mut wgpu::CommandEncoder, seg: &ResidentSegment) {
        enc.clear_buffer(&seg.buffers.result_bits, 0, None);
        enc.clear_buffer(&seg.buffers.counters, 0, None);
    }

    fn record(&self, pass: &mut wgpu::ComputePass<'_>, run: SegmentRun<'_>) {
        let s = run.segment;
        pass.set_bind_group(0, run.bind, &[]);
        self.grid
            .run(pass, self.pipeline, u64::from(s.n_bytes).div_ceil(256));
        self.count.record(pass, s, self.grid);
    }
}
