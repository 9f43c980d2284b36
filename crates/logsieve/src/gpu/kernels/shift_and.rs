//! `shift-and`: tier 2 of regex on the GPU (see `shift_and.wgsl`): the
//! query's position automaton (`query::glushkov`) as one table buffer, its
//! own bind-group layout (the segment's bytes, line starts, candidate and
//! result bits, the table and a small uniform) and one pipeline per state
//! width (1, 2, 4, 8 words), built once per context and thread.
//!
//! With `filter` the driver is tier 1's verifier on the GPU: it runs after
//! a literal kernel (`scan`) in the same pass; `compact` lists the lines
//! whose result bit that kernel set, and `verify_split` runs the automaton
//! over the listed lines, up to 16 threads a line while the candidates are
//! few (see `shift_and.wgsl`). It leaves the result bits to the
//! literal kernel (it clears only its own candidate bits, counters and the
//! list's count). The lists (4 bytes a line per segment) are made once per
//! corpus, on its first `shift-and` query of either tier (every automaton
//! binds them; [`AutomatonCache::get`]).

// In a browser (one thread) wgpu's handles are neither `Send` nor `Sync`.
#![cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]

use std::sync::Arc;

use super::count::PopCount;
use super::per_line::{self, Built};
use super::per_line::{width_for, WIDTHS};
use super::{Grid, KernelDriver, Module, SegmentRun, View};
use crate::error::Error;
use crate::gpu::context::{Ctx, GpuContext};
use crate::gpu::pipelines::{buffer_entry, compute_pipeline};
use crate::gpu::segment::{entry, ResidentSegment};
use crate::gpu::GpuKernel;
use crate::query::glushkov::Automaton;

/// The shader module.
pub(crate) const MODULE: Module = Module {
    label: "shift-and",
    view: View::Vec4,
    wgsl: include_str!("shift_and.wgsl"),
    entry_points: &["shift_and", "compact", "verify_split"],
};

/// Words of the uniform (a multiple of four: 16-byte rows).
const RP_WORDS: usize = 12;

/// The uniform's word that turns the filter on (`RParams::only_marked`).
const RP_FILTER: usize = 6;

/// The widths `verify_split` has a pipeline for (its paths hold the
/// state in a `vec2`).
const SPLIT_WIDTHS: [usize; 2] = [1, 2];

/// The most of the corpus's bytes (per mille) a linear automaton's first
/// positions may take for the start's skip loop to run.
const SKIP_MAX_PER_MILLE: u64 = 5;

/// Whether the kernel skips the bytes that leave the start alone as it is
/// (`first`: [`Automaton::start_skip`]), given the corpus's byte
/// frequencies `freq`. Only the kernel's paths with look-around groups or
/// more than two state words have the skip loop: the linear path without
/// groups (`run_linear`, one or two words) steps every byte, its step
/// costing little more than a skipped byte. A thread in the skip loop and
/// one in a step diverge, and a warp then pays both: the loop pays where a step is dear (the
/// follow tables, or conditional edges to check every byte) or where the
/// first positions' bytes are rare. Measured on the H100 (2026-11-25,
/// tier 2 over 194 MB, skip always on against off, one call each):
/// `user=u1\d*7 ` (tables) 1.79 → 1.18 ms, `bytes=\d{6,}$` (an edge)
/// 2.02 → 1.74, `HTTP/1\.[01]...` (`H`, 0.15% of bytes) 0.90 → 0.75; but
/// `port \d{5} ssh2` (`p`, 1.3%) 0.88 → 1.33 and `[0-9a-f]{32}` (52%)
/// 0.91 → 1.43.
fn skip_pays(a: &Automaton, first: &[u32], freq: &[u64; 256]) -> bool {
    if a.linear.is_none() || !a.groups.is_empty() {
        return true;
    }
    let aw = a.words;
    let total: u64 = freq.iter().sum();
    let hit: u64 = (0..256)
        .filter(|&b| {
            a.masks[b * aw..(b + 1) * aw]
                .iter()
                .zip(first)
                .any(|(m, f)| m & f != 0)
        })
        .map(|b| freq[b])
        .sum();
    total > 0 && hit * 1000 <= total * SKIP_MAX_PER_MILLE
}

/// The table buffer's words and the uniform of `a`, laid out for a
/// pipeline of `w` state words (`w >= a.words`); `freq`, the corpus's
/// byte frequencies, decides the start's skip loop ([`skip_pays`]).
pub(crate) fn tables(a: &Automaton, w: usize, freq: &[u64; 256]) -> (Vec<u32>, [u32; RP_WORDS]) {
    let aw = a.words;
    let mut t = vec![0u32; 256 * w];
    for b in 0..256 {
        t[b * w..b * w + aw].copy_from_slice(&a.masks[b * aw..(b + 1) * aw]);
    }
    let follow_off = t.len();
    t.resize(follow_off + w * 4 * 256 * w, 0);
    for sw in 0..aw {
        for k in 0..4 {
            for v in 0..256 {
                let from = ((sw * 4 + k) * 256 + v) * aw;
                let to = follow_off + ((sw * 4 + k) * 256 + v) * w;
                t[to..to + aw].copy_from_slice(&a.follow[from..from + aw]);
            }
        }
    }
    let last_off = t.len();
    t.extend_from_slice(&a.last);
    t.resize(last_off + w, 0);
    // The linear form (shift words, then self-loop words), when it has one.
    let lin_off = match &a.linear {
        Some(l) => {
            let at = t.len();
            t.extend_from_slice(&l.shift);
            t.resize(at + w, 0);
            t.extend_from_slice(&l.self_loop);
            t.resize(at + 2 * w, 0);
            at
        }
        None => 0,
    };
    // The start's skip set, when it has one (see `Automaton::start_skip`).
    let skip_off = match a.start_skip().filter(|f| skip_pays(a, f, freq)) {
        Some(first) => {
            let at = t.len();
            t.extend_from_slice(&first);
            t.resize(at + w, 0);
            at
        }
        None => 0,
    };
    let groups_off = t.len();
    let stride = 3 + w;
    for g in &a.groups {
        t.push(g.from);
        t.push(u32::from(g.cond));
        t.push(u32::from(g.accept));
        t.extend_from_slice(&g.to);
        t.resize(t.len() + (w - aw), 0);
    }
    let rp = [
        a.groups.len() as u32,
        u32::from(a.unicode),
        follow_off as u32,
        last_off as u32,
        groups_off as u32,
        stride as u32,
        0,
        lin_off as u32,
        skip_off as u32,
        u32::from(a.looks_at_words()),
        0,
        0,
    ];
    (t, rp)
}

/// The layout and pipelines of one context.
pub(crate) struct ShiftAndPipes {
    layout: wgpu::BindGroupLayout,
    pipes: Vec<wgpu::ComputePipeline>,
    /// `verify_split`, one per width of [`SPLIT_WIDTHS`]: tier 1's
    /// verification, several threads a line.
    split: Vec<wgpu::ComputePipeline>,
    /// `compact`: the candidates' line ids into the segment's list.
    compact: wgpu::ComputePipeline,
}

thread_local! {
    static PIPES: Built<(), ShiftAndPipes> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The layout and pipelines for `ctx`, built on first use (async: the
/// browser cannot block on the error scope).
pub(crate) async fn pipes(ctx: &GpuContext) -> Result<Arc<ShiftAndPipes>, Error> {
    if let Some(m) = per_line::cached(&PIPES, ctx, &()) {
        return Ok(m);
    }
    let c = &ctx.inner;
    let scope = c.device.push_error_scope(wgpu::ErrorFilter::Validation);
    let storage = |read_only| wgpu::BufferBindingType::Storage { read_only };
    let uniform = wgpu::BufferBindingType::Uniform;
    let layout = c
        .device
        .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("shift-and"),
            entries: &[
                buffer_entry(1, uniform),
                buffer_entry(2, storage(true)),
                buffer_entry(3, storage(true)),
                buffer_entry(5, storage(false)),
                buffer_entry(6, storage(false)),
                buffer_entry(10, storage(true)),
                buffer_entry(12, uniform),
                buffer_entry(13, storage(false)),
            ],
        });
    let pl = c
        .device
        .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("shift-and"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
    let module = c.device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("shift-and"),
        source: wgpu::ShaderSource::Wgsl(MODULE.source().into()),
    });
    let pipes = WIDTHS
        .iter()
        .map(|&w| compute_pipeline(&c.device, &pl, &module, "shift_and", &[("W", w as f64)]))
        .collect();
    let split = SPLIT_WIDTHS
        .iter()
        .map(|&w| compute_pipeline(&c.device, &pl, &module, "verify_split", &[("W", w as f64)]))
        .collect();
    let compact = compute_pipeline(&c.device, &pl, &module, "compact", &[]);
    if let Some(e) = scope.pop().await {
        return Err(Error::backend(format!(
            "GPU shift-and kernel compilation failed: {e}"
        )));
    }
    let m = Arc::new(ShiftAndPipes {
        layout,
        pipes,
        split,
        compact,
    });
    per_line::keep(&PIPES, ctx, (), m.clone());
    Ok(m)
}

/// How many compiled automata a corpus keeps resident
/// ([`AutomatonCache`]).
pub(crate) const CACHED_AUTOMATA: usize = 32;

/// A query's automaton resident on the device: its table buffer and
/// uniform (the filter flag included) and one bind group per segment of
/// the corpus it was built for. Built once and reused while it stays in
/// its corpus's [`AutomatonCache`] ("build once, reuse": a repeated query
/// uploads nothing and creates no buffer or bind group).
pub(crate) struct ResidentAutomaton {
    /// The automaton it was last asked for (the memoised one of a query
    /// shape, `support::shift_and_support`): a repeated query finds its
    /// entry by this pointer without laying its tables out again (12 µs a
    /// query on the H100 machine, 2026-11-25, of a 0.3 ms query).
    source: Arc<Automaton>,
    /// The table words and the uniform it was built from: the cache's key
    /// (exact: two automata with the same tables run alike).
    tables: Vec<u32>,
    rp: [u32; RP_WORDS],
    /// Index of its pipeline in [`ShiftAndPipes`].
    pipe: usize,
    /// Under the filter, its `verify_split` pipeline's index, when its
    /// width has one.
    split: Option<usize>,
    binds: Vec<wgpu::BindGroup>,
    /// Each segment's candidate list (binding 13), shared by every
    /// automaton of the corpus.
    lists: Arc<Vec<wgpu::Buffer>>,
    // Kept alive with the bind groups.
    _tbuf: wgpu::Buffer,
    _ubuf: wgpu::Buffer,
}

impl ResidentAutomaton {
    #[allow(clippy::too_many_arguments)]
    fn build(
        c: &Ctx,
        pipes: &ShiftAndPipes,
        source: Arc<Automaton>,
        tables: Vec<u32>,
        rp: [u32; RP_WORDS],
        w: usize,
        segments: &[ResidentSegment],
        lists: Arc<Vec<wgpu::Buffer>>,
    ) -> ResidentAutomaton {
        let dev = &c.device;
        let tbuf =
            per_line::words_buffer(c, "shift-and tables", &tables, wgpu::BufferUsages::STORAGE);
        let ubuf = per_line::words_buffer(c, "shift-and params", &rp, wgpu::BufferUsages::UNIFORM);
        let binds = segments
            .iter()
            .zip(lists.iter())
            .map(|(s, list)| {
                let b = &s.buffers;
                dev.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("shift-and segment"),
                    layout: &pipes.layout,
                    entries: &[
                        entry(1, &b.params),
                        entry(2, &b.data),
                        entry(3, &b.starts),
                        entry(5, &b.candidates),
                        entry(6, &b.result_bits),
                        entry(10, &tbuf),
                        entry(12, &ubuf),
                        entry(13, list),
                    ],
                })
            })
            .collect();
        ResidentAutomaton {
            source,
            tables,
            rp,
            pipe: WIDTHS.iter().position(|&x| x == w).unwrap_or(3),
            split: SPLIT_WIDTHS
                .iter()
                .position(|&x| x == w)
                .filter(|_| rp[RP_FILTER] != 0),
            binds,
            lists,
            _tbuf: tbuf,
            _ubuf: ubuf,
        }
    }
}

/// The automata resident on one corpus's device, least recently used
/// first, at most [`CACHED_AUTOMATA`]; dropped with the corpus (its bind
/// groups name the corpus's segment buffers).
#[derive(Default)]
pub(crate) struct AutomatonCache {
    entries: Vec<Arc<ResidentAutomaton>>,
    /// Each segment's candidate list: a count then up to one id per line.
    lists: Option<Arc<Vec<wgpu::Buffer>>>,
    /// Automata built (misses), for tests and traces.
    pub(crate) built: u64,
}

impl AutomatonCache {
    /// Drops every automaton and the candidate lists (their bind groups
    /// name the segments of the corpus as it was, and a list holds one id
    /// per line of its segment then: appended segments and lines need new
    /// ones). REGRESSION: the lists were kept, so after an append added a
    /// segment an automaton got one bind group per *old* segment and the
    /// next tier-1 query panicked (index out of bounds), caught by the
    /// H100 soak (2026-11-25) with tails appending beside regex queries.
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.lists = None;
    }

    /// The resident automaton of `a` (with `filter`) for `segments`: the
    /// cached one when its tables are the same, else built (evicting the
    /// least recently used beyond [`CACHED_AUTOMATA`]).
    pub(crate) fn get(
        &mut self,
        c: &Ctx,
        pipes: &ShiftAndPipes,
        a: &Arc<Automaton>,
        segments: &[ResidentSegment],
        filter: bool,
        freq: &[u64; 256],
    ) -> Arc<ResidentAutomaton> {
        let same = |e: &Arc<ResidentAutomaton>| {
            Arc::ptr_eq(&e.source, a) && (e.rp[RP_FILTER] != 0) == filter
        };
        if let Some(i) = self.entries.iter().position(same) {
            let e = self.entries.remove(i);
            self.entries.push(e.clone());
            return e;
        }
        let w = width_for(a.words);
        let (t, mut rp) = tables(a, w, freq);
        rp[RP_FILTER] = u32::from(filter);
        if let Some(i) = self
            .entries
            .iter()
            .position(|e| e.rp == rp && e.tables == t)
        {
            let e = self.entries.remove(i);
            self.entries.push(e.clone());
            return e;
        }
        let lists = self
            .lists
            .get_or_insert_with(|| {
                let make = |s: &ResidentSegment| {
                    c.device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("shift-and candidate list"),
                        size: (u64::from(s.n_lines) + 1) * 4,
                        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                        mapped_at_creation: false,
                    })
                };
                Arc::new(segments.iter().map(make).collect())
            })
            .clone();
        let e = Arc::new(ResidentAutomaton::build(
            c,
            pipes,
            a.clone(),
            t,
            rp,
            w,
            segments,
            lists,
        ));
        self.built += 1;
        if self.entries.len() >= CACHED_AUTOMATA {
            self.entries.remove(0);
        }
        self.entries.push(e.clone());
        e
    }
}

/// The driver: one thread per line of every segment, then the engine's
/// pop-counts of the result (matching) and candidate (undecided) bits.
pub(crate) struct ShiftAnd<'a> {
    pipeline: &'a wgpu::ComputePipeline,
    compact: &'a wgpu::ComputePipeline,
    /// Verify the lines a literal kernel marked (tier 1) instead of
    /// searching every line.
    filter: bool,
    automaton: &'a ResidentAutomaton,
    count: PopCount<'a>,
    grid: Grid,
}

impl<'a> ShiftAnd<'a> {
    /// The driver of the resident automaton `r` (from
    /// [`AutomatonCache::get`]); with its filter, over only the lines
    /// whose result bit is set when it runs (in windows, several threads
    /// a line, at one or two state words: `verify_split`).
    pub(crate) fn new(
        c: &'a Ctx,
        pipes: &'a ShiftAndPipes,
        r: &'a ResidentAutomaton,
    ) -> ShiftAnd<'a> {
        ShiftAnd {
            pipeline: match r.split {
                Some(i) => &pipes.split[i],
                None => &pipes.pipes[r.pipe],
            },
            compact: &pipes.compact,
            filter: r.rp[RP_FILTER] != 0,
            automaton: r,
            count: PopCount {
                result: &c.pipes.count_result,
                candidates: Some(&c.pipes.count_cand),
            },
            grid: c.grid(),
        }
    }
}

impl KernelDriver for ShiftAnd<'_> {
    fn label(&self) -> &'static str {
        GpuKernel::ShiftAnd.name()
    }

    fn prepare(&self, enc: &mut wgpu::CommandEncoder) {
        // Every segment's list starts empty (its count, word 0).
        if self.filter {
            for list in self.automaton.lists.iter() {
                enc.clear_buffer(list, 0, Some(4));
            }
        }
    }

    fn clear(&self, enc: &mut wgpu::CommandEncoder, seg: &ResidentSegment) {
        // Under the filter the result bits are the literal kernel's
        // candidates (it clears them itself).
        if !self.filter {
            enc.clear_buffer(&seg.buffers.result_bits, 0, None);
        }
        enc.clear_buffer(&seg.buffers.candidates, 0, None);
        enc.clear_buffer(&seg.buffers.counters, 0, None);
    }

    fn record(&self, pass: &mut wgpu::ComputePass<'_>, run: SegmentRun<'_>) {
        let own = &self.automaton.binds[run.index];
        if self.filter {
            pass.set_bind_group(0, own, &[]);
            let words = u64::from(run.segment.n_words);
            self.grid.run(pass, self.compact, words.div_ceil(256));
        }
        per_line::record_lines(pass, run, own, self.pipeline, &self.count, self.grid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::kernels::tests::validated;
    use crate::query::QueryBuilder;

    /// Every width's pipeline validates with naga, its override applied as
    /// wgpu applies it.
    #[test]
    fn every_pipeline_builds() {
        let (module, info) = validated(
            "shift-and",
            &MODULE.source(),
            naga::valid::Capabilities::empty(),
        );
        // `verify_split` at the widths it has pipelines for.
        let widths = [
            ("shift_and", &WIDTHS[..]),
            ("verify_split", &SPLIT_WIDTHS[..]),
        ];
        for (entry, ws) in widths {
            for &w in ws {
                let mut consts = naga::back::PipelineConstants::default();
                consts.insert("W".to_string(), w as f64);
                let ep = Some((naga::ShaderStage::Compute, entry));
                if let Err(e) =
                    naga::back::pipeline_constants::process_overrides(&module, &info, ep, &consts)
                {
                    panic!("{entry} pipeline W = {w}: {e:?}");
                }
            }
        }
        // `compact` (tier 1's candidate list) takes no constant.
        let ep = Some((naga::ShaderStage::Compute, "compact"));
        let none = naga::back::PipelineConstants::default();
        if let Err(e) = naga::back::pipeline_constants::process_overrides(&module, &info, ep, &none)
        {
            panic!("compact pipeline: {e:?}");
        }
    }

    /// The tables keep every word of the automaton at the pipeline's
    /// width, and the uniform points at each section.
    #[test]
    fn tables_are_padded_to_the_pipeline_width() {
        let q = QueryBuilder::new().build(&[r"\b[0-9a-f]{40}\b"]).unwrap();
        let a = Automaton::for_query(&q).unwrap();
        assert_eq!(a.words, 2);
        let w = width_for(a.words);
        assert_eq!(w, 2);
        let flat = [1u64; 256];
        let (t, rp) = tables(&a, 4, &flat);
        assert_eq!(rp[2] as usize, 256 * 4);
        assert_eq!(rp[3] as usize, 256 * 4 + 4 * 4 * 256 * 4);
        assert_eq!(rp[0] as usize, a.groups.len());
        assert_eq!(t.len(), rp[4] as usize + a.groups.len() * (3 + 4));
        // The linear form after the accepting positions, each padded.
        let l = a.linear.as_ref().expect("a linear automaton");
        let lin = rp[7] as usize;
        assert_eq!(lin, rp[3] as usize + 4);
        assert_eq!(&t[lin..lin + 2], &l.shift[..]);
        assert_eq!(&t[lin + 4..lin + 6], &l.self_loop[..]);
        assert_eq!(rp[8] as usize, lin + 8);
        assert_eq!(rp[4] as usize, lin + 8 + 4);
        for b in 0..256 {
            assert_eq!(&t[b * 4..b * 4 + 2], &a.masks[b * 2..b * 2 + 2]);
            assert_eq!(&t[b * 4 + 2..b * 4 + 4], &[0, 0]);
        }
        assert_eq!(width_for(3), 4);
        assert_eq!(width_for(8), 8);
        // `\b` at the start: its edge's targets are in the skip set, and
        // with conditional edges to check a step is dear: the loop runs.
        assert_eq!(a.start_skip().map(|f| f[0] & 0b10), Some(0b10));
        assert_eq!(
            &t[rp[8] as usize..rp[8] as usize + 2],
            &a.start_skip().unwrap()[..]
        );
        // Word conditions (`\b`): the kernel tests them; `$` alone: only
        // the line's edges.
        assert_eq!(rp[9], 1);
        let q = QueryBuilder::new().build(&[r"bytes=\d{6,}$"]).unwrap();
        let dollar = Automaton::for_query(&q).unwrap();
        assert!(!dollar.groups.is_empty());
        assert_eq!(tables(&dollar, 1, &flat).1[9], 0);
        // `ERROR_5\d\d`: its first position, `E`.
        let q = QueryBuilder::new().build(&[r"ERROR_5\d\d"]).unwrap();
        let a = Automaton::for_query(&q).unwrap();
        let first = a.start_skip().expect("a skip set");
        assert_eq!(first, vec![0b10]);
        // `E` as one byte in ten: too common for a linear automaton...
        let mut common = [1u64; 256];
        common[usize::from(b'E')] = 28;
        assert_eq!(tables(&a, 1, &common).1[8], 0);
        // ... one in a thousand: rare enough.
        let mut rare = [4u64; 256];
        rare[usize::from(b'E')] = 1;
        let (t, rp) = tables(&a, 1, &rare);
        assert_ne!(rp[8], 0);
        assert_eq!(&t[rp[8] as usize..rp[8] as usize + 1], &first[..]);
        assert_eq!(a.masks[usize::from(b'E')] & first[0], 0b10);
        assert_eq!(a.masks[usize::from(b'e')] & first[0], 0);
        // No linear form: offset 0 (the follow tables run).
        let q = QueryBuilder::new().build(&[r"ab?c"]).unwrap();
        let a = Automaton::for_query(&q).unwrap();
        assert!(a.linear.is_none());
        assert_eq!(tables(&a, 1, &flat).1[7], 0);
        // The follow tables: the skip loop runs whatever the bytes.
        assert_ne!(tables(&a, 1, &flat).1[8], 0);
    }
}
