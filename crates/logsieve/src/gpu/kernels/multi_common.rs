//! The many-literal kernels' (`trie`, `ac`, `prefix-hash`, `bloom`) shared
//! host side, beside `multi_common.wgsl`: their pattern tables, uniform,
//! pipelines and driver.
//!
//! A query's patterns become one table buffer (built on the host: tens of
//! ms for 10k patterns, then kept with its upload for as long as the same
//! set is searched again): the distinct patterns (folded under `-i`) with
//! their bytes, then the kernel's structure (each kernel's `table` in its
//! own file) — a compact trie, a dense goto table over byte classes, hashed
//! 4-byte prefixes, or a bit filter and a hash table of L-byte keys.
//! `trie`, `ac` and `prefix-hash` run one thread per start position of
//! every resident segment; `bloom` streams 16 bytes per thread and tests
//! all 16 positions from registers. Each sets the per-line result bits the
//! single-literal kernels use (so the same pop-count and readback give
//! counts and line ids), and with per-pattern counts adds to 64-bit
//! (two-word) counters per pattern with atomics. The bind-group layout is
//! their own (the segment's bytes, line offsets and result bits, plus the
//! table, the counters and a small uniform); pipelines are built once per
//! context and thread.

// In a browser (one thread) wgpu's handles are neither `Send` nor `Sync`,
// so these `Arc`s are only shared within the thread there; natively they
// are `Send + Sync`.
#![cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use super::count::PopCount;
use super::pattern_list::{self, Listed};
use super::{ac, bloom, prefix_hash, set_params as SP, trie, Grid, KernelDriver, SegmentRun};
use crate::cpu::multi::PatternSet;
use crate::error::Error;
use crate::gpu::context::{Ctx, GpuContext};
use crate::gpu::multi::MultiKernel;
use crate::gpu::pipelines::LiteralSetPipes;
use crate::gpu::segment::{entry, ResidentSegment};
use crate::query::{CaseMode, Query};

/// A query's pattern tables, ready to upload.
#[derive(Debug)]
pub(crate) struct Tables {
    /// The distinct (folded) patterns: group `g` is `set.uniq[g]`.
    pub(crate) set: PatternSet,
    /// The table buffer's words.
    pub(crate) words: Vec<u32>,
    /// The uniform (without `per_pattern`, set per run).
    pub(crate) mp: [u32; SP::WORDS],
    /// The patterns (as given) of each group, where some group has
    /// several (duplicates, or case variants under `-i`); `None`: pattern
    /// `g` is group `g` (groups are numbered in order of first use).
    members: Option<Members>,
}

/// The patterns of each group: group `g`'s are
/// `pats[start[g]..start[g + 1]]`.
#[derive(Debug)]
struct Members {
    start: Vec<u32>,
    pats: Vec<u32>,
}

impl Tables {
    /// The patterns (as given) counted by group `g`.
    pub(crate) fn patterns_of(&self, g: u32) -> impl Iterator<Item = usize> + '_ {
        let (one, many) = match &self.members {
            None => (Some(g as usize), &[][..]),
            Some(m) => (
                None,
                &m.pats[m.start[g as usize] as usize..m.start[g as usize + 1] as usize],
            ),
        };
        one.into_iter().chain(many.iter().map(|&p| p as usize))
    }
}

/// [`Members`] of `set`, `None` when every group has one pattern.
fn members(set: &PatternSet) -> Option<Members> {
    let g = set.uniq.len();
    if g == set.group_of.len() {
        return None;
    }
    let mut start = vec![0u32; g + 1];
    for &k in &set.group_of {
        start[k as usize + 1] += 1;
    }
    for k in 0..g {
        start[k + 1] += start[k];
    }
    let mut at = start.clone();
    let mut pats = vec![0u32; set.group_of.len()];
    for (p, &k) in set.group_of.iter().enumerate() {
        pats[at[k as usize] as usize] = p as u32;
        at[k as usize] += 1;
    }
    Some(Members { start, pats })
}

impl Tables {
    /// Builds the tables of `q` for `kernel`; errors when they would not
    /// fit one storage binding of `max_binding` bytes, or when `bloom` is
    /// asked for patterns shorter than 4 bytes (callers resolve the kernel
    /// with [`MultiKernel::for_query`] first). `bloom_words`: the words of
    /// the bloom pipeline's filter; `diag`: bloom's diagnostic switch
    /// ([`bloom::DIAG_GLOBAL_FILTER`] allows the global filter);
    /// `bloom_parts`: the parts of bloom's filter (0: one;
    /// [`crate::gpu::GpuTuning::bloom_parts`]).
    pub(crate) fn build(
        q: &Query,
        kernel: MultiKernel,
        max_binding: u64,
        bloom_words: u32,
        diag: u32,
        bloom_parts: u32,
    ) -> Result<Tables, Error> {
        if let Err(r) = crate::support::kernel_support(q, Some(kernel.into())) {
            return Err(Error::backend(format!(
                "the GPU cannot run this query: {r}"
            )));
        }
        let lits = q.literals().expect("checked by kernel_support");
        let fold = q.case() == CaseMode::Ascii;
        let set = PatternSet::new(lits, fold);
        let g = set.uniq.len();
        if g >= 1 << 23 {
            return Err(Error::backend(format!(
                "{g} distinct patterns: the GPU tables hold at most {}",
                (1 << 23) - 1
            )));
        }
        let mut mpw = [0u32; SP::WORDS];
        mpw[SP::FOLD] = u32::from(fold);
        mpw[SP::N_GROUPS] = g as u32;
        // The pattern table and the bytes.
        let mut words: Vec<u32> = Vec::new();
        let mut bytes: Vec<u8> = Vec::new();
        for p in &set.uniq {
            words.push(bytes.len() as u32);
            words.push(p.len() as u32);
            bytes.extend_from_slice(p);
        }
        mpw[SP::PAT_OFF] = 0;
        mpw[SP::BYTES_OFF] = words.len() as u32;
        bytes.resize(bytes.len().div_ceil(4) * 4, 0);
        words.extend(
            bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes"))),
        );
        let base = words.len();
        match kernel {
            MultiKernel::Trie => trie::table(&set, &mut words, &mut mpw),
            MultiKernel::Ac => ac::table(&set, &mut words, &mut mpw, max_binding)?,
            MultiKernel::PrefixHash => prefix_hash::table(&set, &mut words, &mut mpw),
            MultiKernel::Bloom => bloom::table(
                &set,
                &mut words,
                &mut mpw,
                bloom_words,
                diag & bloom::DIAG_GLOBAL_FILTER != 0,
                bloom_parts,
            )?,
        }
        let size = words.len() as u64 * 4;
        if size > max_binding || words.len() > u32::MAX as usize / 2 {
            return Err(Error::backend(format!(
                "the {} tables of {g} patterns take {:.1} MB, more than one GPU binding ({:.1} MB)",
                kernel.name(),
                size as f64 / 1e6,
                max_binding as f64 / 1e6
            )));
        }
        debug_assert!(words.len() >= base);
        Ok(Tables {
            members: members(&set),
            set,
            words,
            mp: mpw,
        })
    }

    /// The uniform for one run; `diag` is bloom's diagnostic switch
    /// ([`crate::gpu::GpuTuning::bloom_diag`]).
    pub(crate) fn params(&self, per_pattern: bool, diag: u32) -> Vec<u8> {
        let mut m = self.mp;
        m[SP::PER_PATTERN] = u32::from(per_pattern);
        m[SP::DIAG] = diag;
        m.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

/// A pattern set's tables, uploaded, with what they were built from.
pub(crate) struct Uploaded {
    pub(crate) kernel: MultiKernel,
    fold: bool,
    lits: Vec<Vec<u8>>,
    pub(crate) tables: Tables,
    pub(crate) buf: wgpu::Buffer,
    /// The per-pattern counters, their list and their readbacks, made on
    /// the first per-pattern run and reused (runs on one device are
    /// serialised by its state lock): 100k patterns take 2 MB each, made
    /// per count before watchlists.
    per_pattern: std::sync::OnceLock<PerPatternBuffers>,
    /// Groups the last per-pattern count listed (`usize::MAX`: none yet):
    /// sizes the next count's readback ([`pattern_list::capacity`]).
    last_listed: AtomicUsize,
}

impl Uploaded {
    /// Records how many groups a count listed (the next count reads back
    /// room for half again as many).
    pub(crate) fn set_listed(&self, n: usize) {
        self.last_listed.store(n, Ordering::Relaxed);
    }

    fn listed(&self) -> Option<usize> {
        match self.last_listed.load(Ordering::Relaxed) {
            usize::MAX => None,
            n => Some(n),
        }
    }
}

/// A set's per-pattern buffers on one device.
struct PerPatternBuffers {
    /// Per group: lines lo/hi, occurrences lo/hi; then the overlap flags.
    counters: wgpu::Buffer,
    counters_readback: wgpu::Buffer,
    counters_size: u64,
    /// `list_patterns`' output: the head, then room for every group.
    list: wgpu::Buffer,
    /// Where a prefix of `list` is read back.
    list_readback: wgpu::Buffer,
    /// `list_patterns`' bind group (the counters, the list, the uniform).
    list_bind: wgpu::BindGroup,
}

/// The many-literal kernels' pipelines of one context, and the last
/// pattern set's tables.
pub(crate) struct MultiPipes {
    pub(crate) pipes: LiteralSetPipes,
    /// The last pattern set's uploaded tables: an IOC list is typically
    /// searched again and again, and 10k patterns cost tens of ms to
    /// build and upload. One set at a time, so that at most one table
    /// stays resident.
    last: Mutex<Option<Arc<Uploaded>>>,
}

impl MultiPipes {
    /// The tables of `q` for `kernel`, uploaded: the last ones when `q`
    /// has the same patterns and case mode, else built and uploaded (and
    /// kept in their place). `kernel` must be resolved already
    /// ([`MultiKernel::for_query`]).
    pub(crate) fn tables(
        &self,
        c: &Ctx,
        q: &Query,
        kernel: MultiKernel,
        max_binding: u64,
    ) -> Result<Arc<Uploaded>, Error> {
        let lits = q.literals().unwrap_or_default();
        let fold = q.case() == CaseMode::Ascii;
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(u) = last.as_ref() {
            if u.kernel == kernel && u.fold == fold && u.lits[..] == *lits {
                return Ok(u.clone());
            }
        }
        // Drop the old table before the new one is uploaded.
        *last = None;
        let u = self.upload(c, q, kernel, max_binding)?;
        *last = Some(u.clone());
        Ok(u)
    }

    /// Builds the tables of `q` for `kernel` (resolved) and uploads them,
    /// kept by nobody: a watchlist holds its own
    /// ([`crate::gpu::PreparedTables`]).
    pub(crate) fn upload(
        &self,
        c: &Ctx,
        q: &Query,
        kernel: MultiKernel,
        max_binding: u64,
    ) -> Result<Arc<Uploaded>, Error> {
        let lits = q.literals().unwrap_or_default();
        let fold = q.case() == CaseMode::Ascii;
        let tables = Tables::build(
            q,
            kernel,
            max_binding,
            self.pipes.bloom_words,
            c.tuning.bloom_diag,
            c.tuning.bloom_parts.unwrap_or(0),
        )?;
        let words: Vec<u8> = tables.words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let buf = c.buffer_with("multi tables", &words, wgpu::BufferUsages::STORAGE);
        Ok(Arc::new(Uploaded {
            kernel,
            fold,
            lits: lits.to_vec(),
            tables,
            buf,
            per_pattern: Default::default(),
            last_listed: AtomicUsize::new(usize::MAX),
        }))
    }

    /// Drops the kept tables (after a failed run).
    pub(crate) fn forget_tables(&self) {
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

thread_local! {
    /// Built once per context (and thread: WebGPU handles are not `Send`).
    static PIPES: RefCell<Vec<(Weak<Ctx>, Arc<MultiPipes>)>> = const { RefCell::new(Vec::new()) };
}

/// The layout and pipelines for `ctx`, built on first use.
pub(crate) fn pipes(ctx: &GpuContext) -> Result<Arc<MultiPipes>, Error> {
    let found = PIPES.with(|p| {
        let mut p = p.borrow_mut();
        p.retain(|(w, _)| w.strong_count() > 0);
        p.iter()
            .find(|(w, _)| std::ptr::eq(w.as_ptr(), Arc::as_ptr(&ctx.inner)))
            .map(|(_, m)| m.clone())
    });
    if let Some(m) = found {
        return Ok(m);
    }
    let m = Arc::new(build_pipes(&ctx.inner)?);
    PIPES.with(|p| p.borrow_mut().push((Arc::downgrade(&ctx.inner), m.clone())));
    Ok(m)
}

fn build_pipes(c: &Ctx) -> Result<MultiPipes, Error> {
    let scope = c.device.push_error_scope(wgpu::ErrorFilter::Validation);
    let pipes = LiteralSetPipes::build(
        &c.device,
        c.info.max_compute_workgroup_storage_size,
        c.tuning.bloom_diag,
        c.tuning.bloom_parts.is_some_and(|p| p > 1),
    );
    if let Some(e) = pollster::block_on(scope.pop()) {
        return Err(Error::backend(format!(
            "GPU multi-literal kernel compilation failed: {e}"
        )));
    }
    Ok(MultiPipes {
        pipes,
        last: Mutex::new(None),
    })
}

/// The driver of the many-literal kernels: `kernel`'s pipeline over each
/// segment in the set's own bind group, then the engine's pop-count of the
/// result bits in the segment's engine bind group; with per-pattern counts,
/// their buffer cleared first, the groups that hit listed last
/// (`pattern_list.wgsl`), and the list read back (or the counters).
pub(crate) struct LiteralSet<'a> {
    /// The kernel, resolved ([`MultiKernel::for_query`]).
    pub(crate) kernel: MultiKernel,
    pipeline: &'a wgpu::ComputePipeline,
    /// Each segment's bind group in the many-literal layout.
    binds: Vec<wgpu::BindGroup>,
    /// Per pattern: lines lo/hi, occurrences lo/hi; then the overlap flags.
    counts: wgpu::Buffer,
    /// With per-pattern counts: what is read back.
    per_pattern: Option<PerPatternRun<'a>>,
    /// `count_result`, in the engine's layout.
    count: PopCount<'a>,
    /// Workgroups per `bloom` dispatch at most, per part of its filter.
    max_groups: u64,
    /// `bloom`'s filter parts: its dispatch has this many workgroups per
    /// stride.
    parts: u64,
    grid: Grid,
}

/// A per-pattern run's readback.
struct PerPatternRun<'a> {
    bufs: &'a PerPatternBuffers,
    list: &'a wgpu::ComputePipeline,
    /// Distinct patterns.
    groups: usize,
    /// Listed entries read back; 0: the full counters instead (the list
    /// is not made).
    capacity: usize,
}

impl PerPatternRun<'_> {
    fn list_bytes(&self) -> u64 {
        ((pattern_list::HEAD + pattern_list::ENTRY * self.capacity) * 4) as u64
    }
}

/// What a per-pattern run read back.
pub(crate) enum CountersRead {
    /// The groups that hit (in no particular order); every other group's
    /// counts are zero.
    Listed(Vec<Listed>),
    /// Every counter word (per group lines lo/hi, occurrences lo/hi; then
    /// the overlap flags): more groups hit than the list's readback had
    /// room for (`listed`), or the list is off (`listed` None).
    Full {
        words: Vec<u32>,
        listed: Option<usize>,
    },
}

/// Words of `buf`'s mapped range `0..bytes`, unmapped after.
fn mapped_words(buf: &wgpu::Buffer, bytes: u64) -> Result<Vec<u32>, Error> {
    let v = {
        let m = buf
            .get_mapped_range(0..bytes)
            .map_err(|e| Error::backend(format!("GPU readback failed: {e}")))?;
        m.chunks_exact(4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect()
    };
    buf.unmap();
    Ok(v)
}

impl<'a> LiteralSet<'a> {
    /// The driver of `kernel` with the uploaded tables `up` over
    /// `segments`, counting per pattern when `per_pattern`.
    pub(crate) fn new(
        c: &'a Ctx,
        pipes: &'a MultiPipes,
        up: &'a Uploaded,
        kernel: MultiKernel,
        segments: &[ResidentSegment],
        per_pattern: bool,
    ) -> Result<LiteralSet<'a>, Error> {
        let dev = &c.device;
        let tables = &up.tables;
        let parts = tables.mp[SP::PARTS].max(1);
        let pipeline = match kernel {
            MultiKernel::Bloom => pipes.pipes.bloom(parts).ok_or_else(|| {
                Error::backend(format!(
                    "bloom tables in {parts} parts but no pipeline for them"
                ))
            })?,
            _ => pipes.pipes.pipe(kernel),
        };
        let mbuf = c.buffer_with(
            "multi params",
            &tables.params(per_pattern, c.tuning.bloom_diag),
            wgpu::BufferUsages::UNIFORM,
        );
        let groups = tables.set.uniq.len();
        let (pbuf, per_pattern) = match per_pattern {
            true => {
                let bufs = up
                    .per_pattern
                    .get_or_init(|| per_pattern_buffers(c, &pipes.pipes.list_layout, groups));
                let run = PerPatternRun {
                    bufs,
                    list: &pipes.pipes.list,
                    groups,
                    capacity: pattern_list::capacity(groups, up.listed(), c.tuning.pattern_list),
                };
                (bufs.counters.clone(), Some(run))
            }
            // The kernels touch the counters only with per-pattern counts.
            false => (
                dev.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("multi counts (unused)"),
                    size: 16,
                    usage: wgpu::BufferUsages::STORAGE,
                    mapped_at_creation: false,
                }),
                None,
            ),
        };
        let binds = segments
            .iter()
            .map(|s| {
                let b = &s.buffers;
                dev.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("multi segment"),
                    layout: &pipes.pipes.layout,
                    entries: &[
                        entry(1, &b.params),
                        entry(2, &b.data),
                        entry(3, &b.starts),
                        entry(4, &b.block_hints),
                        entry(6, &b.result_bits),
                        entry(10, &up.buf),
                        entry(11, &pbuf),
                        entry(12, &mbuf),
                    ],
                })
            })
            .collect();
        Ok(LiteralSet {
            kernel,
            pipeline,
            binds,
            counts: pbuf,
            per_pattern,
            count: PopCount {
                result: &c.pipes.count_result,
                candidates: None,
            },
            max_groups: bloom::max_groups(c.tuning.bloom_groups),
            parts: u64::from(parts),
            grid: c.grid(),
        })
    }

    /// The per-pattern counts read back (their readback mapped; unmapped
    /// after): the listed groups, or `Full` with no words when more were
    /// listed than read back (then [`LiteralSet::read_full`]). `None`
    /// without per-pattern counts.
    pub(crate) fn read_counts(&self) -> Result<Option<CountersRead>, Error> {
        let Some(run) = &self.per_pattern else {
            return Ok(None);
        };
        let b = run.bufs;
        if run.capacity == 0 {
            return Ok(Some(CountersRead::Full {
                words: mapped_words(&b.counters_readback, b.counters_size)?,
                listed: None,
            }));
        }
        // Only the entries listed leave the mapping.
        let (n, listed) = {
            let m = b
                .list_readback
                .get_mapped_range(0..run.list_bytes())
                .map_err(|e| Error::backend(format!("GPU readback failed: {e}")))?;
            let n = u32::from_le_bytes(m[..4].try_into().expect("4 bytes")) as usize;
            let used = (pattern_list::HEAD + pattern_list::ENTRY * n.min(run.capacity)) * 4;
            let words: Vec<u32> = m[..used]
                .chunks_exact(4)
                .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
                .collect();
            (n, pattern_list::entries(&words, run.capacity))
        };
        b.list_readback.unmap();
        Ok(Some(match listed {
            Some(l) => CountersRead::Listed(l),
            None => CountersRead::Full {
                words: Vec::new(),
                listed: Some(n),
            },
        }))
    }

    /// The full counters, copied and read back in a second round trip
    /// (more groups hit than the list's readback had room for). Blocks
    /// natively as any readback.
    pub(crate) async fn read_full(&self, c: &Ctx) -> Result<Vec<u32>, Error> {
        let Some(run) = &self.per_pattern else {
            return Ok(Vec::new());
        };
        let b = run.bufs;
        let mut enc = c.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(&b.counters, 0, &b.counters_readback, 0, b.counters_size);
        c.queue.submit([enc.finish()]);
        c.map_many_async(&[(&b.counters_readback, b.counters_size)])
            .await?;
        mapped_words(&b.counters_readback, b.counters_size)
    }
}

/// A set's per-pattern buffers for `groups` distinct patterns.
fn per_pattern_buffers(
    c: &Ctx,
    list_layout: &wgpu::BindGroupLayout,
    groups: usize,
) -> PerPatternBuffers {
    let dev = &c.device;
    let g = groups as u64;
    let buffer = |label: &str, size: u64, usage: wgpu::BufferUsages| {
        dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage,
            mapped_at_creation: false,
        })
    };
    let storage =
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
    let readback = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
    let counters_size = (5 * g * 4).div_ceil(16).max(1) * 16;
    let list_size =
        ((pattern_list::HEAD as u64 + pattern_list::ENTRY as u64 * g) * 4).div_ceil(16) * 16;
    let counters = buffer("multi counts", counters_size, storage);
    let list = buffer("pattern list", list_size, storage);
    let mut params = [0u32; 4];
    params[0] = groups as u32;
    let params: Vec<u8> = params.iter().flat_map(|w| w.to_le_bytes()).collect();
    let params = c.buffer_with("pattern list params", &params, wgpu::BufferUsages::UNIFORM);
    let list_bind = dev.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("pattern list"),
        layout: list_layout,
        entries: &[entry(11, &counters), entry(13, &list), entry(14, &params)],
    });
    PerPatternBuffers {
        counters_readback: buffer("readback multi counts", counters_size, readback),
        counters,
        counters_size,
        list_readback: buffer("readback pattern list", list_size, readback),
        list,
        list_bind,
    }
}

impl KernelDriver for LiteralSet<'_> {
    fn label(&self) -> &'static str {
        self.kernel.name()
    }

    fn prepare(&self, enc: &mut wgpu::CommandEncoder) {
        if let Some(run) = &self.per_pattern {
            enc.clear_buffer(&self.counts, 0, None);
            if run.capacity > 0 {
                enc.clear_buffer(&run.bufs.list, 0, Some(16));
            }
        }
    }

    fn clear(&self, enc: &mut wgpu::CommandEncoder, seg: &ResidentSegment) {
        enc.clear_buffer(&seg.buffers.result_bits, 0, None);
        enc.clear_buffer(&seg.buffers.counters, 0, None);
    }

    fn record(&self, pass: &mut wgpu::ComputePass<'_>, run: SegmentRun<'_>) {
        let s = run.segment;
        pass.set_pipeline(self.pipeline);
        pass.set_bind_group(0, &self.binds[run.index], &[]);
        let groups = match self.kernel {
            // A grid-stride loop over the segment's vec4s, per part.
            MultiKernel::Bloom => {
                u64::from(s.n_bytes).div_ceil(16 * 256).min(self.max_groups) * self.parts
            }
            _ => u64::from(s.n_bytes).div_ceil(256),
        };
        let (x, y) = self.grid.dims(groups);
        pass.dispatch_workgroups(x, y, 1);
        // The engine's pop-count of the result bits, in its layout.
        pass.set_pipeline(self.count.result);
        pass.set_bind_group(0, run.bind, &[]);
        let (x, y) = self.grid.dims(u64::from(s.n_words).div_ceil(256));
        pass.dispatch_workgroups(x, y, 1);
    }

    fn finish(&self, pass: &mut wgpu::ComputePass<'_>) {
        // After every segment's counts: list the groups that hit.
        if let Some(run) = self.per_pattern.as_ref().filter(|r| r.capacity > 0) {
            pass.set_pipeline(run.list);
            pass.set_bind_group(0, &run.bufs.list_bind, &[]);
            let (x, y) = self.grid.dims((run.groups as u64).div_ceil(256));
            pass.dispatch_workgroups(x, y, 1);
        }
    }

    fn copy_out(&self, enc: &mut wgpu::CommandEncoder) {
        if let Some(run) = &self.per_pattern {
            let b = run.bufs;
            match run.capacity {
                0 => enc.copy_buffer_to_buffer(
                    &b.counters,
                    0,
                    &b.counters_readback,
                    0,
                    b.counters_size,
                ),
                _ => enc.copy_buffer_to_buffer(&b.list, 0, &b.list_readback, 0, run.list_bytes()),
            }
        }
    }

    fn readback(&self) -> Option<(&wgpu::Buffer, u64)> {
        self.per_pattern.as_ref().map(|run| match run.capacity {
            0 => (&run.bufs.counters_readback, run.bufs.counters_size),
            _ => (&run.bufs.list_readback, run.list_bytes()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::{QueryBuilder, Syntax};

    fn q(p: &[&[u8]], ci: bool) -> Query {
        QueryBuilder::new()
            .syntax(Syntax::Fixed)
            .case_insensitive(ci)
            .build(p)
            .unwrap()
    }

    #[test]
    fn trie_is_narrow_when_small_and_wide_when_large() {
        let t = Tables::build(
            &q(&[b"ab", b"abc", b"b"], false),
            MultiKernel::Trie,
            1 << 30,
            4096,
            0,
            0,
        )
        .unwrap();
        assert_eq!(t.mp[SP::B], 1);
        assert_eq!(t.set.uniq.len(), 3);
        let many: Vec<Vec<u8>> = (0..20_000u32)
            .map(|i| format!("{:08x}{i}", i.wrapping_mul(2_654_435_761)).into_bytes())
            .collect();
        let big = QueryBuilder::new()
            .syntax(Syntax::Fixed)
            .build(&many)
            .unwrap();
        let t = Tables::build(&big, MultiKernel::Trie, 1 << 30, 4096, 0, 0).unwrap();
        assert_eq!(t.mp[SP::B], 0);
    }

    #[test]
    fn each_pattern_is_counted_by_its_group() {
        for (pats, ci) in [
            (&[&b"abcd"[..], b"efgh", b"ijkl"][..], false),
            (
                &[&b"abcd"[..], b"efgh", b"abcd", b"ABCD", b"efgh"][..],
                true,
            ),
            (&[&b"abcd"[..], b"ABCD", b"abcd"][..], false),
        ] {
            let t = Tables::build(&q(pats, ci), MultiKernel::Trie, 1 << 30, 4096, 0, 0).unwrap();
            let mut seen = vec![0; pats.len()];
            for g in 0..t.set.uniq.len() as u32 {
                for p in t.patterns_of(g) {
                    assert_eq!(t.set.group_of[p], g);
                    seen[p] += 1;
                }
            }
            assert_eq!(seen, vec![1; pats.len()], "{pats:?}");
        }
    }

    #[test]
    fn oversized_tables_are_an_error_not_a_panic() {
        let e = Tables::build(
            &q(&[b"abc", b"abd"], false),
            MultiKernel::Ac,
            64,
            4096,
            0,
            0,
        )
        .unwrap_err();
        assert!(e.to_string().contains("trie"), "{e}");
        assert!(Tables::build(
            &q(&[b"", b"abd"], false),
            MultiKernel::Trie,
            1 << 30,
            4096,
            0,
            0
        )
        .is_err());
        // bloom refuses what it cannot hold (callers resolve to ac first).
        let e = Tables::build(
            &q(&[b"abc", b"abcd"], false),
            MultiKernel::Bloom,
            1 << 30,
            4096,
            0,
            0,
        )
        .unwrap_err();
        assert!(e.to_string().contains("at least 4 bytes"), "{e}");
    }
}
