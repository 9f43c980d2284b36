//! `two-phase`: phase 1 a per-line histogram prefilter (one workgroup per
//! line), phase 2 one thread per byte with a binary search of the line
//! offsets and an exact compare. The design we started from, implemented as
//! specified so that its numbers can be reported.
use super::count::PopCount;
use super::{Grid, KernelDriver, Module, SegmentRun, View};
use crate::gpu::segment::ResidentSegment;
use crate::gpu::GpuKernel;

/// The shader module.
pub(crate) const MODULE: Module = Module {
    label: "two-phase",
    view: View::U32,
    wgsl: include_str!("two_phase.wgsl"),
    entry_points: &["phase1", "phase2"],
};

/// The count of each `byte & 127` bin that a line must reach to hold the
/// (already folded) pattern, packed four u8 to a u32 as the WGSL reads it.
/// A pattern is at most 64 bytes, so a count fits a u8.
pub(crate) fn need_counts(folded: &[u8]) -> [u32; 32] {
    let mut bins = [0u8; 128];
    for &b in folded {
        bins[(b & 127) as usize] += 1;
    }
    let mut out = [0u32; 32];
    for (i, &c) in bins.iter().enumerate() {
        out[i / 4] |= u32::from(c) << ((i % 4) * 8);
    }
    out
}

/// The driver: a workgroup per line, then a thread per byte.
pub(crate) struct TwoPhase<'a> {
    /// `phase1`: one workgroup per line.
    pub(crate) phase1: &'a wgpu::ComputePipeline,
    /// `phase2`: one thread per byte of the candidate lines.
    pub(crate) phase2: &'a wgpu::ComputePipeline,
    /// The pop-counts after it.
    pub(crate) count: PopCount<'a>,
    pub(crate) grid: Grid,
}

impl KernelDriver for TwoPhase<'_> {
    fn label(&self) -> &'static str {
        GpuKernel::TwoPhase.name()
    }

    fn clear(&self, enc: &mut wgpu::CommandEncoder, seg: &ResidentSegment) {
        enc.clear_buffer(&seg.buffers.result_bits, 0, None);
        enc.clear_buffer(&seg.buffers.counters, 0, None);
        enc.clear_buffer(&seg.buffers.candidates, 0, None);
    }

    fn record(&self, pass: &mut wgpu::ComputePass<'_>, run: SegmentRun<'_>) {
        let s = run.segment;
        pass.set_bind_group(0, run.bind, &[]);
        self.grid.run(pass, self.phase1, u64::from(s.n_lines));
        self.grid
            .run(pass, self.phase2, u64::from(s.n_bytes).div_ceil(256));
        self.count.record(pass, s, self.grid);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn need_counts_pack_bins() {
        let n = super::need_counts(b"aab\x81");
        // 'a' = 97 -> word 24 lane 1; 'b' = 98 -> lane 2; 0x81 & 127 = 1.
        assert_eq!(n[24], (2 << 8) | (1 << 16));
        assert_eq!(n[0], 1 << 8);
    }
}
