//! What the one-thread-per-line automaton kernels share — tier 2's
//! `shift-and` and fuzzy's `bitap`: their state widths, the per-context
//! cache of their pipelines, their table and uniform buffers, and the
//! recording of one segment (the kernel's own bind group, one thread per
//! line, then the engine's pop-counts).

// In a browser (one thread) wgpu's handles are neither `Send` nor `Sync`.
#![cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]

use std::cell::RefCell;
use std::sync::{Arc, Weak};
use std::thread::LocalKey;

use super::count::PopCount;
use super::{Grid, SegmentRun};
use crate::gpu::context::{Ctx, GpuContext};

/// The state widths a pipeline is built for, in 32-bit words (WGSL has no
/// u64; a pipeline constant, so the loops unroll).
pub(crate) const WIDTHS: [usize; 4] = [1, 2, 4, 8];

/// The smallest pipeline width for `words` state words.
pub(crate) fn width_for(words: usize) -> usize {
    WIDTHS.into_iter().find(|&w| w >= words).unwrap_or(8)
}

/// Built pipelines per context (and key: a width, K), kept thread-local
/// (wgpu's handles are not `Send` in a browser); entries of dropped
/// contexts are dropped on the next lookup.
pub(crate) type Built<K, V> = RefCell<Vec<(Weak<Ctx>, K, Arc<V>)>>;

/// The pipelines built for `ctx` and `key` in `cache`, if any.
pub(crate) fn cached<K: PartialEq + 'static, V: 'static>(
    cache: &'static LocalKey<Built<K, V>>,
    ctx: &GpuContext,
    key: &K,
) -> Option<Arc<V>> {
    cache.with(|p| {
        let mut p = p.borrow_mut();
        p.retain(|(c, ..)| c.strong_count() > 0);
        p.iter()
            .find(|(c, k, _)| std::ptr::eq(c.as_ptr(), Arc::as_ptr(&ctx.inner)) && k == key)
            .map(|(.., v)| v.clone())
    })
}

/// Keeps `v`, built for `ctx` and `key`, in `cache`.
pub(crate) fn keep<K: 'static, V: 'static>(
    cache: &'static LocalKey<Built<K, V>>,
    ctx: &GpuContext,
    key: K,
    v: Arc<V>,
) {
    cache.with(|p| p.borrow_mut().push((Arc::downgrade(&ctx.inner), key, v)));
}

/// A buffer holding `words` (little-endian), for `usage`.
pub(crate) fn words_buffer(
    c: &Ctx,
    label: &str,
    words: &[u32],
    usage: wgpu::BufferUsages,
) -> wgpu::Buffer {
    let bytes: Vec<u8> = words.iter().flat_map(|x| x.to_le_bytes()).collect();
    c.buffer_with(label, &bytes, usage)
}

/// Records `pipeline` over the lines of `run`'s segment with the kernel's
/// own bind group `own`, then `count`'s pop-counts in the engine's bind
/// group.
pub(crate) fn record_lines(
    pass: &mut wgpu::ComputePass<'_>,
    run: SegmentRun<'_>,
    own: &wgpu::BindGroup,
    pipeline: &wgpu::ComputePipeline,
    count: &PopCount<'_>,
    grid: Grid,
) {
    let s = run.segment;
    pass.set_bind_group(0, own, &[]);
    grid.run(pass, pipeline, u64::from(s.n_lines).div_ceil(256));
    pass.set_bind_group(0, run.bind, &[]);
    count.record(pass, s, grid);
}
