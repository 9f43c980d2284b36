//! `bitap`: `--fuzzy K` on the GPU (see `bitap.wgsl`): the query's packed
//! pattern chain (`query::bitap`) as one table buffer, its own bind-group
//! layout (the segment's bytes, line starts, result bits, the table and a
//! small uniform) and one pipeline per chain width (1, 2, 4, 8 words) and
//! K (0..=3), each built on first use, once per context and thread. The
//! pattern of tier 2's driver (`shift_and.rs`; what they share is in
//! `per_line.rs`), without undecided lines: a fuzzy match is decided by
//! the 256-entry masks for every byte.

// In a browser (one thread) wgpu's handles are neither `Send` nor `Sync`.
#![cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]

use std::sync::Arc;

use super::count::PopCount;
pub(crate) use super::per_line::width_for;
use super::per_line::{self, Built};
use super::{Grid, KernelDriver, Module, SegmentRun, View};
use crate::error::Error;
use crate::gpu::context::{Ctx, GpuContext};
use crate::gpu::pipelines::{buffer_entry, compute_pipeline};
use crate::gpu::segment::{entry, ResidentSegment};
use crate::gpu::GpuKernel;
use crate::query::bitap::Bitap;

/// The shader module.
pub(crate) const MODULE: Module = Module {
    label: "bitap",
    view: View::U32,
    wgsl: include_str!("bitap.wgsl"),
    entry_points: &["bitap"],
};

/// Words of the uniform.
const BP_WORDS: usize = 4;

/// The table buffer's words (masks at `w` words per byte, then `S`, then
/// `E`) and the uniform of `b`, laid out for a pipeline of `w` words.
pub(crate) fn tables(b: &Bitap, w: usize) -> (Vec<u32>, [u32; BP_WORDS]) {
    let bw = b.words;
    let mut t = vec![0u32; 256 * w + 2 * w];
    for c in 0..256 {
        t[c * w..c * w + bw].copy_from_slice(&b.masks[c * bw..(c + 1) * bw]);
    }
    let s_off = 256 * w;
    let e_off = s_off + w;
    t[s_off..s_off + bw].copy_from_slice(&b.starts);
    t[e_off..e_off + bw].copy_from_slice(&b.ends);
    let bp = [u32::from(b.all), s_off as u32, e_off as u32, 0];
    (t, bp)
}

/// The layout and pipeline of one context, width and K.
pub(crate) struct BitapPipes {
    layout: wgpu::BindGroupLayout,
    pipeline: wgpu::ComputePipeline,
}

thread_local! {
    /// Keyed by (width, K).
    static PIPES: Built<(usize, u32), BitapPipes> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The layout and pipeline for `ctx`, `w` chain words and `k` edits, built
/// on first use (async: the browser cannot block on the error scope).
pub(crate) async fn pipes(ctx: &GpuContext, w: usize, k: u32) -> Result<Arc<BitapPipes>, Error> {
    if let Some(m) = per_line::cached(&PIPES, ctx, &(w, k)) {
        return Ok(m);
    }
    let c = &ctx.inner;
    let scope = c.device.push_error_scope(wgpu::ErrorFilter::Validation);
    let storage = |read_only| wgpu::BufferBindingType::Storage { read_only };
    let uniform = wgpu::BufferBindingType::Uniform;
    let layout = c
        .device
        .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("bitap"),
            entries: &[
                buffer_entry(1, uniform),
                buffer_entry(2, storage(true)),
                buffer_entry(3, storage(true)),
                buffer_entry(6, storage(false)),
                buffer_entry(10, storage(true)),
                buffer_entry(12, uniform),
            ],
        });
    let pl = c
        .device
        .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("bitap"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
    let module = c.device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("bitap"),
        source: wgpu::ShaderSource::Wgsl(MODULE.source().into()),
    });
    let consts = [("W", w as f64), ("K", f64::from(k))];
    let pipeline = compute_pipeline(&c.device, &pl, &module, "bitap", &consts);
    if let Some(e) = scope.pop().await {
        return Err(Error::backend(format!(
            "GPU bitap kernel compilation failed: {e}"
        )));
    }
    let m = Arc::new(BitapPipes { layout, pipeline });
    per_line::keep(&PIPES, ctx, (w, k), m.clone());
    Ok(m)
}

/// The driver: one thread per line of every segment, then the engine's
/// pop-count of the result bits.
pub(crate) struct BitapDriver<'a> {
    pipeline: &'a wgpu::ComputePipeline,
    binds: Vec<wgpu::BindGroup>,
    count: PopCount<'a>,
    grid: Grid,
}

impl<'a> BitapDriver<'a> {
    /// The driver of `b` over `segments`, on the pipeline built for
    /// `width_for(b.words)` and `b.k`.
    pub(crate) fn new(
        c: &'a Ctx,
        pipes: &'a BitapPipes,
        b: &Bitap,
        segments: &[ResidentSegment],
    ) -> BitapDriver<'a> {
        let w = width_for(b.words);
        let (t, bp) = tables(b, w);
        let dev = &c.device;
        let tbuf = per_line::words_buffer(c, "bitap tables", &t, wgpu::BufferUsages::STORAGE);
        let ubuf = per_line::words_buffer(c, "bitap params", &bp, wgpu::BufferUsages::UNIFORM);
        let binds = segments
            .iter()
            .map(|s| {
                let sb = &s.buffers;
                dev.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("bitap segment"),
                    layout: &pipes.layout,
                    entries: &[
                        entry(1, &sb.params),
                        entry(2, &sb.data),
                        entry(3, &sb.starts),
                        entry(6, &sb.result_bits),
                        entry(10, &tbuf),
                        entry(12, &ubuf),
                    ],
                })
            })
            .collect();
        BitapDriver {
            pipeline: &pipes.pipeline,
            binds,
            count: PopCount {
                result: &c.pipes.count_result,
                candidates: None,
            },
            grid: c.grid(),
        }
    }
}

impl KernelDriver for BitapDriver<'_> {
    fn label(&self) -> &'static str {
        GpuKernel::Bitap.name()
    }

    fn clear(&self, enc: &mut wgpu::CommandEncoder, seg: &ResidentSegment) {
        enc.clear_buffer(&seg.buffers.result_bits, 0, None);
        enc.clear_buffer(&seg.buffers.counters, 0, None);
    }

    fn record(&self, pass: &mut wgpu::ComputePass<'_>, run: SegmentRun<'_>) {
        let own = &self.binds[run.index];
        per_line::record_lines(pass, run, own, self.pipeline, &self.count, self.grid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::kernels::per_line::WIDTHS;
    use crate::gpu::kernels::tests::validated;
    use crate::query::{QueryBuilder, Syntax};

    /// Every width's and K's pipeline validates with naga, its overrides
    /// applied as wgpu applies them (no 64-bit integers, no subgroups:
    /// WebGPU runs it).
    #[test]
    fn every_pipeline_builds() {
        let (module, info) = validated(
            "bitap",
            &MODULE.source(),
            naga::valid::Capabilities::empty(),
        );
        for w in WIDTHS {
            for k in 0..=3u32 {
                let mut consts = naga::back::PipelineConstants::default();
                consts.insert("W".to_string(), w as f64);
                consts.insert("K".to_string(), f64::from(k));
                let ep = Some((naga::ShaderStage::Compute, "bitap"));
                if let Err(e) =
                    naga::back::pipeline_constants::process_overrides(&module, &info, ep, &consts)
                {
                    panic!("bitap pipeline W = {w}, K = {k}: {e:?}");
                }
            }
        }
    }

    /// The tables keep every word of the chain at the pipeline's width,
    /// and the uniform points at S and E.
    #[test]
    fn tables_are_padded_to_the_pipeline_width() {
        let q = QueryBuilder::new()
            .syntax(Syntax::Fuzzy(2))
            .build(&["a".repeat(40), "xyz".to_string()])
            .unwrap();
        let b = Bitap::for_query(&q).unwrap();
        assert_eq!(b.words, 2);
        let (t, bp) = tables(&b, 4);
        assert_eq!(bp, [0, 256 * 4, 256 * 4 + 4, 0]);
        assert_eq!(t.len(), 256 * 4 + 8);
        for c in 0..256 {
            assert_eq!(&t[c * 4..c * 4 + 2], &b.masks[c * 2..c * 2 + 2]);
            assert_eq!(&t[c * 4 + 2..c * 4 + 4], &[0, 0]);
        }
        assert_eq!(&t[1024..1026], &b.starts[..]);
        assert_eq!(&t[1028..1030], &b.ends[..]);
        assert_eq!(width_for(3), 4);
    }
}
