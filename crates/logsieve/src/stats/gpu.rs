//! The GPU path of the pipeline: columns resident next to the corpus, one
//! submission per query (search kernel → time filter AND search bits →
//! counts in workgroup memory → global counters), one small readback.
//!
//! The columns follow the engine's segments (one times buffer and one codes
//! buffer per segment) so that line `i` of a segment is bit `i` of the
//! engine's result bit set for that segment. Times are two `u32` words per
//! line (offset in ms from the oldest entry), never 64-bit integers, so the
//! kernel stays portable to WebGPU in a browser.

use crate::gpu::pipelines::buffer_entry as entry;
use std::ops::Range;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::{check_shape, Columns, Plan, Stats, StatsQuery, NO_TIME};
use crate::corpus::Corpus;
use crate::error::Error;
use crate::gpu::{GpuContext, GpuCorpus};

/// The kernel's WGSL.
pub(crate) const WGSL: &str = include_str!("gpu.wgsl");

/// Workgroups per segment dispatch at most: each thread walks lines with a
/// grid stride, so the workgroup-memory flush (one pass over the counters
/// per workgroup) stays small next to the line work.
const MAX_GROUPS: u64 = 512;
/// Counters that fit in workgroup memory (`WG_SLOTS` in the WGSL).
const WG_SLOTS: u64 = 2048;
/// Counters at most (64 MiB of `u32`).
const MAX_SLOTS: u64 = 1 << 24;
/// Count-by fields at most on the GPU.
const MAX_BY: usize = 4;
/// Words of the query uniform.
const QWORDS: usize = 24;

const F_BITS: u32 = 1;
const F_INVERT: u32 = 2;
const F_SINCE: u32 = 4;
const F_UNTIL: u32 = 8;
const F_HIST: u32 = 16;
const F_KEYS: u32 = 32;

struct PSeg {
    lines: Range<u64>,
    groups: u32,
    sinfo: wgpu::Buffer,
    times: wgpu::Buffer,
    codes: wgpu::Buffer,
    result: wgpu::Buffer,
}

/// Buffers a query may grow, and the bind groups that name them.
struct Aux {
    counts: wgpu::Buffer,
    rb: wgpu::Buffer,
    slots_cap: u64,
    edges: wgpu::Buffer,
    edges_cap: u64,
    binds: Vec<wgpu::BindGroup>,
}

/// The columns of a corpus resident on the GPU, next to its [`GpuCorpus`].
pub struct GpuColumns {
    ctx: GpuContext,
    segs: Vec<PSeg>,
    cpu_lines: Vec<(usize, Range<u64>)>,
    base: i64,
    nfields: u32,
    layout: wgpu::BindGroupLayout,
    pipe_wg: wgpu::ComputePipeline,
    pipe_global: wgpu::ComputePipeline,
    qbuf: wgpu::Buffer,
    aux: Mutex<Aux>,
    upload_time: Duration,
}

impl std::fmt::Debug for GpuColumns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuColumns")
            .field("segments", &self.segs.len())
            .field("fields", &self.nfields)
            .finish()
    }
}

/// A GPU answer and its timing.
#[derive(Clone, Debug)]
pub struct GpuStats {
    /// The answer (identical to the CPU path's).
    pub stats: Stats,
    /// Wall time from writing the parameters to the counts on the host.
    pub end_to_end: Duration,
}

fn round_up(x: u64, to: u64) -> u64 {
    x.div_ceil(to) * to
}

/// `t` as the kernel's two words: the offset from `base`, clamped at 0.
fn rel(t: i64, base: i64) -> [u32; 2] {
    if t == NO_TIME {
        return [u32::MAX, u32::MAX];
    }
    let r = (t as i128 - base as i128).clamp(0, u64::MAX as i128 - 1) as u64;
    [(r >> 32) as u32, r as u32]
}

impl GpuColumns {
    /// Uploads `cols` next to `g`, the resident form of `corpus`.
    pub fn upload(g: &GpuCorpus, corpus: &Corpus, cols: &Columns) -> Result<GpuColumns, Error> {
        g.pipeline_check(corpus)?;
        check_shape(corpus, cols)?;
        let ctx = g.context().clone();
        let c = &*ctx.inner;
        c.check_faults()?;
        pollster::block_on(
            c.scoped_as("uploading the columns", "column upload", async {
                Self::upload_inner(&ctx, g, cols)
            }),
        )
    }

    fn upload_inner(ctx: &GpuContext, g: &GpuCorpus, cols: &Columns) -> Result<GpuColumns, Error> {
        let t0 = Instant::now();
        let c = &*ctx.inner;
        let dev = &c.device;
        let base = cols.oldest().unwrap_or(0);
        let nf = cols.fields().len();
        let storage = wgpu::BufferUsages::STORAGE;
        let bytes = |w: &[u32]| -> Vec<u8> {
            let mut v: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
            v.resize(round_up(v.len().max(16) as u64, 16) as usize, 0);
            v
        };
        let mut segs = Vec::new();
        for sv in g.pipeline_segments() {
            let dc = &cols.docs()[sv.doc];
            let (a, b) = (sv.lines.start as usize, sv.lines.end as usize);
            let times: Vec<u32> = dc.times[a..b]
                .par_iter()
                .flat_map_iter(|&t| rel(t, base))
                .collect();
            let codes: Vec<u32> = (a..b)
                .into_par_iter()
                .flat_map_iter(|l| dc.codes.iter().map(move |col| col[l]))
                .collect();
            let n_lines = (b - a) as u64;
            let groups = n_lines.div_ceil(256).clamp(1, MAX_GROUPS);
            let nthreads = groups * 256;
            let init = |label: &str, contents: &[u8], usage| c.buffer_with(label, contents, usage);
            segs.push(PSeg {
                lines: sv.lines.clone(),
                groups: groups as u32,
                sinfo: init(
                    "pipeline seg",
                    &bytes(&[n_lines as u32, nthreads as u32, 0, 0]),
                    wgpu::BufferUsages::UNIFORM,
                ),
                times: init("pipeline times", &bytes(&times), storage),
                codes: init("pipeline codes", &bytes(&codes), storage),
                result: sv.result,
            });
        }
        let layout = dev.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("pipeline"),
            entries: &[
                entry(0, wgpu::BufferBindingType::Uniform),
                entry(1, wgpu::BufferBindingType::Uniform),
                entry(2, wgpu::BufferBindingType::Storage { read_only: true }),
                entry(3, wgpu::BufferBindingType::Storage { read_only: true }),
                entry(4, wgpu::BufferBindingType::Storage { read_only: true }),
                entry(5, wgpu::BufferBindingType::Storage { read_only: true }),
                entry(6, wgpu::BufferBindingType::Storage { read_only: false }),
            ],
        });
        let pl = dev.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("pipeline"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let module = dev.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("pipeline"),
            source: wgpu::ShaderSource::Wgsl(WGSL.into()),
        });
        let pipe = |ep: &str| {
            dev.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(ep),
                layout: Some(&pl),
                module: &module,
                entry_point: Some(ep),
                compilation_options: Default::default(),
                cache: None,
            })
        };
        let pipe_wg = pipe("count_wg");
        let pipe_global = pipe("count_global");
        let qbuf = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("pipeline query"),
            size: (QWORDS * 4) as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut me = GpuColumns {
            ctx: ctx.clone(),
            segs,
            cpu_lines: g.pipeline_cpu_lines(),
            base,
            nfields: nf as u32,
            layout,
            pipe_wg,
            pipe_global,
            qbuf,
            aux: Mutex::new(Aux {
                counts: Self::counts_buf(dev, 0),
                rb: Self::rb_buf(dev, 0),
                slots_cap: 0,
                edges: Self::edges_buf(dev, 0),
                edges_cap: 0,
                binds: Vec::new(),
            }),
            upload_time: Duration::ZERO,
        };
        {
            let aux = me.aux.get_mut().unwrap_or_else(|p| p.into_inner());
            Self::grow(dev, &me.segs, &me.layout, &me.qbuf, aux, 4096, 1024);
        }
        c.wait()?;
        me.upload_time = t0.elapsed();
        Ok(me)
    }

    fn counts_buf(dev: &wgpu::Device, slots: u64) -> wgpu::Buffer {
        dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("pipeline counts"),
            size: round_up(slots.max(4) * 4, 16),
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    fn rb_buf(dev: &wgpu::Device, slots: u64) -> wgpu::Buffer {
        dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("pipeline readback"),
            size: round_up(slots.max(4) * 4, 16),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    fn edges_buf(dev: &wgpu::Device, edges: u64) -> wgpu::Buffer {
        dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("pipeline edges"),
            size: round_up(edges.max(2) * 8, 16),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Makes room for `slots` counters and `edges` edges (rebinding).
    fn grow(
        dev: &wgpu::Device,
        segs: &[PSeg],
        layout: &wgpu::BindGroupLayout,
        qbuf: &wgpu::Buffer,
        aux: &mut Aux,
        slots: u64,
        edges: u64,
    ) {
        let mut rebind = aux.binds.len() != segs.len();
        if slots > aux.slots_cap {
            let cap = slots.next_power_of_two();
            aux.counts = Self::counts_buf(dev, cap);
            aux.rb = Self::rb_buf(dev, cap);
            aux.slots_cap = cap;
            rebind = true;
        }
        if edges > aux.edges_cap {
            let cap = edges.next_power_of_two();
            aux.edges = Self::edges_buf(dev, cap);
            aux.edges_cap = cap;
            rebind = true;
        }
        if !rebind {
            return;
        }
        fn e(binding: u32, b: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
            wgpu::BindGroupEntry {
                binding,
                resource: b.as_entire_binding(),
            }
        }
        aux.binds = segs
            .iter()
            .map(|s| {
                dev.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("pipeline segment"),
                    layout,
                    entries: &[
                        e(0, qbuf),
                        e(1, &s.sinfo),
                        e(2, &s.result),
                        e(3, &s.times),
                        e(4, &s.codes),
                        e(5, &aux.edges),
                        e(6, &aux.counts),
                    ],
                })
            })
            .collect();
    }

    /// How long the column upload took.
    pub fn upload_time(&self) -> Duration {
        self.upload_time
    }

    /// Why the GPU cannot run `q`, or `None` when it can.
    pub fn unsupported(&self, cols: &Columns, q: &StatsQuery) -> Option<String> {
        if let Some(s) = q.search {
            if let Err(r) = crate::support::stats_support(Some(s)) {
                return Some(r.to_string());
            }
        }
        if q.count_by.len() > MAX_BY {
            return Some(format!(
                "the GPU counts by at most {MAX_BY} fields (asked for {})",
                q.count_by.len()
            ));
        }
        match Plan::new(cols, q) {
            Err(e) => Some(e.to_string()),
            Ok(p) => {
                let slots = Self::slots(&p);
                (slots > MAX_SLOTS || p.nkeys > u64::from(u32::MAX)).then(|| {
                    format!("{slots} counters are too many for the GPU (at most {MAX_SLOTS})")
                })
            }
        }
    }

    fn slots(p: &Plan) -> u64 {
        let keys = if p.fields.is_empty() { 0 } else { p.nkeys };
        1u64.saturating_add(keys)
            .saturating_add(p.hist.map_or(0, |h| h.2))
    }

    /// Runs `q` on the GPU. `g` and `corpus` must be those the columns
    /// were uploaded with. Errors when the GPU cannot run the query
    /// ([`GpuColumns::unsupported`]) or the device fails; a result is
    /// never silently wrong.
    pub fn run(
        &self,
        g: &GpuCorpus,
        corpus: &Corpus,
        cols: &Columns,
        q: &StatsQuery,
    ) -> Result<GpuStats, Error> {
        g.check_whole()?;
        self.run_part(g, corpus, cols, q)
    }

    /// [`GpuColumns::run`] over the lines `g` holds (a shard's stats add
    /// up with the other parts', [`Stats::merge`]).
    pub(crate) fn run_part(
        &self,
        g: &GpuCorpus,
        corpus: &Corpus,
        cols: &Columns,
        q: &StatsQuery,
    ) -> Result<GpuStats, Error> {
        if let Some(r) = self.unsupported(cols, q) {
            return Err(Error::backend(format!(
                "the GPU cannot run this query: {r}"
            )));
        }
        g.pipeline_check(corpus)?;
        check_shape(corpus, cols)?;
        if cols.fields().len() as u32 != self.nfields {
            return Err(Error::backend("GPU columns uploaded from other columns"));
        }
        let c = &*self.ctx.inner;
        c.check_faults()?;
        let mut aux = self.aux.lock().unwrap_or_else(|p| p.into_inner());
        pollster::block_on(c.scoped_as("during the pipeline", "pipeline", async {
            self.run_inner(g, corpus, cols, q, &mut aux)
        }))
    }

    fn run_inner(
        &self,
        g: &GpuCorpus,
        corpus: &Corpus,
        cols: &Columns,
        q: &StatsQuery,
        aux: &mut Aux,
    ) -> Result<GpuStats, Error> {
        let c = &*self.ctx.inner;
        let t0 = Instant::now();
        let plan = Plan::new(cols, q)?;
        let keys = !plan.fields.is_empty();
        let nkeys = if keys { plan.nkeys } else { 0 };
        let nb = plan.hist.map_or(0, |h| h.2);
        let slots = Self::slots(&plan);
        Self::grow(
            &c.device,
            &self.segs,
            &self.layout,
            &self.qbuf,
            aux,
            slots,
            nb + 1,
        );

        let mut w = [0u32; QWORDS];
        let mut flags = 0;
        if let Some(s) = q.search {
            flags |= F_BITS;
            if s.invert() {
                flags |= F_INVERT;
            }
        }
        if let Some(s) = q.since {
            flags |= F_SINCE;
            // Before the oldest entry, every time qualifies.
            let r = if s <= self.base {
                [0, 0]
            } else {
                rel(s, self.base)
            };
            w[4..6].copy_from_slice(&r);
        }
        if let Some(u) = q.until {
            flags |= F_UNTIL;
            // At or before the oldest entry, nothing qualifies.
            let r = if u <= self.base {
                [0, 0]
            } else {
                rel(u, self.base)
            };
            w[6..8].copy_from_slice(&r);
        }
        if keys {
            flags |= F_KEYS;
        }
        if nb > 0 {
            flags |= F_HIST;
        }
        w[0] = flags;
        w[1] = self.nfields;
        w[2] = nkeys as u32;
        w[3] = nb as u32;
        w[8] = plan.fields.len() as u32;
        w[9] = slots as u32;
        for (i, (&f, &s)) in plan.fields.iter().zip(&plan.strides).enumerate() {
            w[12 + i] = f as u32;
            w[16 + i] = s as u32;
        }
        let wb: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
        c.queue.write_buffer(&self.qbuf, 0, &wb);
        if let Some((start, bucket, n)) = plan.hist.filter(|h| h.2 > 0) {
            let e: Vec<u8> = (0..=n)
                .flat_map(|k| rel(start + k as i64 * bucket, self.base))
                .flat_map(|x| x.to_le_bytes())
                .collect();
            c.queue.write_buffer(&aux.edges, 0, &e);
        }
        let size = slots * 4;
        let use_wg = slots <= WG_SLOTS;
        g.pipeline_submit(q.search, |enc| {
            enc.clear_buffer(&aux.counts, 0, Some(round_up(size, 4)));
            {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("pipeline count"),
                    timestamp_writes: None,
                });
                pass.set_pipeline(if use_wg {
                    &self.pipe_wg
                } else {
                    &self.pipe_global
                });
                for (s, b) in self.segs.iter().zip(&aux.binds) {
                    if s.lines.is_empty() {
                        continue;
                    }
                    pass.set_bind_group(0, b, &[]);
                    pass.dispatch_workgroups(s.groups, 1, 1);
                }
            }
            enc.copy_buffer_to_buffer(&aux.counts, 0, &aux.rb, 0, size);
        })?;
        let map_size = round_up(size, 8).min(aux.rb.size());
        c.map_many(&[(&aux.rb, map_size)])?;
        let counts: Vec<u64> = {
            let v = aux
                .rb
                .get_mapped_range(0..map_size)
                .map_err(|e| Error::backend(format!("GPU readback failed: {e}")))?;
            v.chunks_exact(4)
                .take(slots as usize)
                .map(|b| u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
                .collect()
        };
        aux.rb.unmap();
        let mut selected = counts[0];
        let mut key_counts: Vec<u64> = counts[1..1 + nkeys as usize].to_vec();
        let mut buckets: Vec<u64> = counts[1 + nkeys as usize..].to_vec();
        // Lines the GPU does not hold (oversized): counted here, exactly as
        // the kernel would.
        for (di, lines) in &self.cpu_lines {
            let doc = &corpus.docs()[*di];
            let dc = &cols.docs()[*di];
            for l in lines.clone() {
                if let Some(s) = q.search {
                    if s.is_match_line(doc.line(l)) == s.invert() {
                        continue;
                    }
                }
                let l = l as usize;
                let t = dc.times[l];
                if !q.in_window(t) {
                    continue;
                }
                selected += 1;
                if keys {
                    let k: u64 = plan
                        .fields
                        .iter()
                        .zip(&plan.strides)
                        .map(|(&f, &s)| u64::from(dc.codes[f][l]) * s)
                        .sum();
                    key_counts[k as usize] += 1;
                }
                if let Some((start, bucket, n)) = plan.hist {
                    if t != NO_TIME && t >= start && ((t - start) / bucket) < n as i64 {
                        buckets[((t - start) / bucket) as usize] += 1;
                    }
                }
            }
        }
        let it = key_counts
            .into_iter()
            .enumerate()
            .map(|(k, c)| (k as u64, c));
        let stats = plan.finish(cols, selected, it, buckets);
        Ok(GpuStats {
            stats,
            end_to_end: t0.elapsed(),
        })
    }
}

#[cfg(test)]
mod tests {
    /// The kernel parses and validates with naga (no adapter needed).
    #[test]
    fn wgsl_validates_with_naga() {
        let module = naga::front::wgsl::parse_str(super::WGSL)
            .unwrap_or_else(|e| panic!("{}", e.emit_to_string(super::WGSL)));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        )
        .validate(&module)
        .unwrap_or_else(|e| panic!("{}", e.emit_to_string(super::WGSL)));
        for ep in ["count_wg", "count_global"] {
            assert!(module.entry_points.iter().any(|e| e.name == ep), "{ep}");
        }
    }

    #[test]
    fn relative_times() {
        assert_eq!(super::rel(super::NO_TIME, 0), [u32::MAX, u32::MAX]);
        assert_eq!(super::rel(5, 10), [0, 0]);
        assert_eq!(super::rel((1 << 32) + 7, 0), [1, 7]);
    }
}
