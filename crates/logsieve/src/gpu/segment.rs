//! One resident segment: a piece of a document no larger than one storage
//! binding, with its typed buffers (the bindings of `common.wgsl`).
//!
//! Every kernel reads a segment through the same buffers, so a segment has
//! one bind group in the engine's layout whatever kernel runs; the
//! many-literal kernels bind a subset of the same buffers in their own
//! layout.

use std::ops::Range;

/// A segment's buffers, one field per binding of `common.wgsl` (binding
/// numbers in brackets). Per-line arrays hold one bit (or 16 bytes) per
/// line of the segment.
pub(crate) struct SegmentBuffers {
    /// `seg` [1]: the segment's uniform (bytes, lines, bit-set words, block
    /// shift).
    pub(crate) params: wgpu::Buffer,
    /// `data` [2]: the segment's bytes, then '\n' padding.
    pub(crate) data: wgpu::Buffer,
    /// `starts` [3]: line start offsets within the segment, plus the end.
    pub(crate) starts: wgpu::Buffer,
    /// `blk` [4]: the line holding the first byte of each block.
    pub(crate) block_hints: wgpu::Buffer,
    /// `cand` [5]: lines that passed a prefilter (two-phase, signature).
    pub(crate) candidates: wgpu::Buffer,
    /// `result` [6]: lines that match (before `-v`).
    pub(crate) result_bits: wgpu::Buffer,
    /// `counters` [7]: matching lines, candidate lines, appended positions.
    pub(crate) counters: wgpu::Buffer,
    // `sigs` [8], the per-line signatures, are only the `signature`
    // kernel's: built on its first use and kept in the corpus's state
    // (`State::signatures`), a 16-byte placeholder until then.
}

impl SegmentBuffers {
    /// Each buffer with the name [`crate::gpu::GpuCorpus::buffers`] reports
    /// (the WGSL binding's name), in upload order.
    pub(crate) fn named(&self) -> [(&'static str, &wgpu::Buffer); 7] {
        [
            ("data", &self.data),
            ("starts", &self.starts),
            ("blk", &self.block_hints),
            ("cand", &self.candidates),
            ("result", &self.result_bits),
            ("counters", &self.counters),
            ("seg", &self.params),
        ]
    }
}

/// One segment resident on the GPU.
pub(crate) struct ResidentSegment {
    /// The document it belongs to.
    pub(crate) doc: usize,
    /// Its lines in the document.
    pub(crate) lines: Range<u64>,
    /// Its bytes in the document.
    pub(crate) bytes: Range<u64>,
    pub(crate) n_bytes: u32,
    pub(crate) n_lines: u32,
    /// u32 words of each per-line bit set.
    pub(crate) n_words: u32,
    /// The bytes, lines and bit-set words its buffers have room for:
    /// `n_*` for a segment of the upload, more for one opened for
    /// appended lines (`GpuCorpus::append` fills it in place).
    pub(crate) cap_bytes: u32,
    pub(crate) cap_lines: u32,
    pub(crate) cap_words: u32,
    pub(crate) buffers: SegmentBuffers,
    /// Offset of this segment's result bits in the bits readback buffer
    /// (`cap_words` words are kept there).
    pub(crate) bits_at: u64,
}

/// A whole-buffer entry of a bind group.
pub(crate) fn entry(binding: u32, b: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: b.as_entire_binding(),
    }
}

impl ResidentSegment {
    /// The segment's bind group in the engine's `layout`, with the query
    /// uniform `params` [0], the signatures `signatures` [8] (or their
    /// placeholder) and brute-byte's append buffer `positions` [9].
    pub(crate) fn bind(
        &self,
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        positions: &wgpu::Buffer,
        signatures: &wgpu::Buffer,
        params: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        let b = &self.buffers;
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("segment"),
            layout,
            entries: &[
                entry(0, params),
                entry(1, &b.params),
                entry(2, &b.data),
                entry(3, &b.starts),
                entry(4, &b.block_hints),
                entry(5, &b.candidates),
                entry(6, &b.result_bits),
                entry(7, &b.counters),
                entry(8, signatures),
                entry(9, positions),
            ],
        })
    }
}
