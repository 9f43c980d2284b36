//! The multi-literal kernels' (issue 5) window into the resident corpus:
//! a child module of `resident`, so that the segments, the result bit sets,
//! the pop-count pipeline and the readback buffers are reused without
//! changing their shape. The kernels and their tables are in `gpu/multi.rs`.

use web_time::Instant;
use wgpu::util::DeviceExt;

use super::{GpuCorpus, GpuSearch, State};
use crate::corpus::Corpus;
use crate::cpu::multi::{count_doc, count_range, GroupCounts, Occurrences, PatternSet};
use crate::error::Error;
use crate::gpu::kernels;
use crate::gpu::multi::{self, MultiKernel, Uploaded};
use crate::query::Query;
use crate::results::Want;

/// What one multi-literal run read back.
struct Run {
    /// Per segment: [matching lines, .., .., ..].
    counts: Vec<[u32; 4]>,
    /// Per segment: matching line ids (with `lines`).
    seg_lines: Vec<Vec<u64>>,
    /// Per group: lines lo/hi, occurrences lo/hi; then the overlap flags.
    pcounts: Vec<u32>,
    kernel_time: Option<std::time::Duration>,
}

impl GpuCorpus {
    /// [`GpuCorpus::search_max`] for the multi-literal kernels.
    pub(crate) async fn search_multi(
        &self,
        corpus: &Corpus,
        q: &Query,
        kernel: MultiKernel,
        want: Want,
        max_count: Option<u64>,
    ) -> Result<GpuSearch, Error> {
        let t0 = Instant::now();
        let lines = want == Want::Lines;
        let (_, run) = self.run_multi(corpus, q, kernel, lines, false).await?;
        let seg_matched: Vec<u64> = run.counts.iter().map(|c| u64::from(c[0])).collect();
        let docs = self.merge_docs(corpus, q, &seg_matched, run.seg_lines, lines, max_count);
        Ok(GpuSearch {
            docs,
            kernel_time: run.kernel_time,
            end_to_end: t0.elapsed(),
            candidates: None,
            positions: None,
        })
    }

    /// Lines containing each pattern of `q`, and its non-overlapping
    /// occurrences, counted on the GPU with `kernel` (the module
    /// [`crate::pattern_counts`] defines them; `bloom` runs `ac` for
    /// patterns shorter than 4 bytes). Blocks (natively only).
    pub fn count_per_pattern(
        &self,
        corpus: &Corpus,
        q: &Query,
        kernel: MultiKernel,
    ) -> Result<(Vec<u64>, Vec<u64>), Error> {
        let (up, run) = pollster::block_on(self.run_multi(corpus, q, kernel, false, true))?;
        let set = &up.tables.set;
        let g = set.uniq.len();
        let w = |i: usize| u64::from(run.pcounts[i]) | (u64::from(run.pcounts[i + 1]) << 32);
        let mut c = GroupCounts::zero(g);
        for k in 0..g {
            c.lines[k] = w(4 * k);
            c.occurrences[k] = w(4 * k + 2);
        }
        let lens: Vec<usize> = set.uniq.iter().map(|p| p.len()).collect();
        // Lines too large for a binding were never uploaded: the CPU
        // counts them.
        if !self.cpu_segs.is_empty() {
            if let Some(occ) = Occurrences::new(set.clone(), q.cpu_multi()) {
                for (di, seg) in &self.cpu_segs {
                    let hay = corpus.docs()[*di].data();
                    let r = count_range(
                        &occ,
                        &lens,
                        hay,
                        seg.bytes.start as usize,
                        seg.bytes.end as usize,
                    );
                    c.add(&r);
                }
            }
        }
        // Self-overlapping occurrences were flagged: recount those
        // patterns' occurrences exactly on the CPU (rare in IOC lists).
        let flagged: Vec<usize> = (0..g).filter(|&k| run.pcounts[4 * g + k] != 0).collect();
        if !flagged.is_empty() {
            let sub: Vec<Vec<u8>> = flagged.iter().map(|&k| set.uniq[k].clone()).collect();
            let sub = PatternSet::new(&sub, set.fold);
            let sub_lens: Vec<usize> = sub.uniq.iter().map(|p| p.len()).collect();
            if let Some(occ) = Occurrences::new(sub, q.cpu_multi()) {
                let mut exact = GroupCounts::zero(sub_lens.len());
                for d in corpus.docs() {
                    exact.add(&count_doc(&occ, &sub_lens, d.data(), 0));
                }
                for (j, &k) in flagged.iter().enumerate() {
                    c.occurrences[k] = exact.occurrences[j];
                }
            }
        }
        let lines = set.group_of.iter().map(|&k| c.lines[k as usize]).collect();
        let occs = set
            .group_of
            .iter()
            .map(|&k| c.occurrences[k as usize])
            .collect();
        Ok((lines, occs))
    }

    /// Runs `kernel` (resolved by [`MultiKernel::for_query`]) over every
    /// segment: result bits (read back with `lines`), per-segment counts,
    /// and with `per_pattern` the counters. Returns the tables it ran
    /// with.
    // The state lock is held across the awaits, as in `search_async`: it
    // serialises searches that share the result and readback buffers.
    #[allow(clippy::await_holding_lock)]
    async fn run_multi(
        &self,
        corpus: &Corpus,
        q: &Query,
        kernel: MultiKernel,
        lines: bool,
        per_pattern: bool,
    ) -> Result<(std::sync::Arc<Uploaded>, Run), Error> {
        if let Err(r) = crate::support::kernel_support(q, Some(kernel.into())) {
            return Err(Error::backend(format!(
                "the GPU cannot run this query: {r}"
            )));
        }
        self.check_corpus(corpus)?;
        let c = &*self.ctx.inner;
        c.check_faults()?;
        let max_binding = c
            .info
            .max_storage_buffer_binding_size
            .min(c.info.max_buffer_size);
        let kernel = kernel.for_query(q);
        let pipes = multi::pipes(&self.ctx)?;
        let st = self.lock_state()?;
        let r = c
            .scoped(async {
                let up = pipes.tables(c, q, kernel, max_binding)?;
                let run = self
                    .run_multi_inner(&up, &pipes, kernel, lines, per_pattern, &st)
                    .await?;
                Ok((up, run))
            })
            .await;
        if r.is_err() {
            // The upload itself may be what failed (out of memory): never
            // reuse those tables.
            pipes.forget_tables();
        }
        r
    }

    async fn run_multi_inner(
        &self,
        up: &Uploaded,
        pipes: &multi::MultiPipes,
        kernel: MultiKernel,
        lines: bool,
        per_pattern: bool,
        st: &State,
    ) -> Result<Run, Error> {
        let c = &*self.ctx.inner;
        let dev = &c.device;
        let tables = &up.tables;
        let tbuf = &up.buf;
        let mbuf = dev.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("multi params"),
            contents: &tables.params(per_pattern),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let g = tables.set.uniq.len() as u64;
        let psize = (5 * g * 4).div_ceil(16).max(1) * 16;
        let pbuf = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("multi counts"),
            size: psize,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let prb = per_pattern.then(|| {
            dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some("readback multi counts"),
                size: psize,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        });
        fn e(binding: u32, b: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
            wgpu::BindGroupEntry {
                binding,
                resource: b.as_entire_binding(),
            }
        }
        let binds: Vec<wgpu::BindGroup> = self
            .segs
            .iter()
            .map(|s| {
                dev.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("multi segment"),
                    layout: &pipes.layout,
                    entries: &[
                        e(1, s.buf("seg")),
                        e(2, s.buf("data")),
                        e(3, s.buf("starts")),
                        e(4, s.buf("blk")),
                        e(6, s.buf("result")),
                        e(10, tbuf),
                        e(11, &pbuf),
                        e(12, &mbuf),
                    ],
                })
            })
            .collect();
        let max_groups = kernels::bloom::max_groups();
        let mut enc = dev.create_command_encoder(&Default::default());
        enc.clear_buffer(&pbuf, 0, None);
        for s in &self.segs {
            enc.clear_buffer(s.buf("result"), 0, None);
            enc.clear_buffer(s.buf("counters"), 0, None);
        }
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(kernel.name()),
                timestamp_writes: self.timestamp_writes(),
            });
            for (i, s) in self.segs.iter().enumerate() {
                pass.set_pipeline(pipes.pipe(kernel));
                pass.set_bind_group(0, &binds[i], &[]);
                let groups = match kernel {
                    // A grid-stride loop over the segment's vec4s.
                    MultiKernel::Bloom => u64::from(s.n_bytes).div_ceil(16 * 256).min(max_groups),
                    _ => u64::from(s.n_bytes).div_ceil(256),
                };
                let (x, y) = c.grid(groups);
                pass.dispatch_workgroups(x, y, 1);
                // The engine's pop-count of the result bits, in its layout.
                pass.set_pipeline(&c.pipes.count_result);
                pass.set_bind_group(0, &st.binds[i], &[]);
                let (x, y) = c.grid(u64::from(s.n_words).div_ceil(256));
                pass.dispatch_workgroups(x, y, 1);
            }
        }
        self.copy_readbacks(&mut enc, lines);
        if let Some(rb) = &prb {
            enc.copy_buffer_to_buffer(&pbuf, 0, rb, 0, psize);
        }
        self.resolve_timestamps(&mut enc);
        c.queue.submit([enc.finish()]);
        let mut maps = vec![(&self.rb_counts, self.segs.len() as u64 * 16)];
        let bits_size: u64 = self.segs.iter().map(|s| u64::from(s.n_words) * 4).sum();
        if lines {
            maps.push((&self.rb_bits, bits_size));
        }
        if let Some((_, _, rb)) = &self.ts {
            maps.push((rb, 16));
        }
        if let Some(rb) = &prb {
            maps.push((rb, psize));
        }
        c.map_many_async(&maps).await?;
        let counts = self.read_counts()?;
        let kernel_time = self.read_timestamps()?;
        let seg_lines = if lines { self.read_bits()? } else { Vec::new() };
        let pcounts = match &prb {
            Some(rb) => {
                let v = {
                    let m = rb
                        .get_mapped_range(0..psize)
                        .map_err(|e| Error::backend(format!("GPU readback failed: {e}")))?;
                    m.chunks_exact(4)
                        .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
                        .collect()
                };
                rb.unmap();
                v
            }
            None => Vec::new(),
        };
        Ok(Run {
            counts,
            seg_lines,
            pcounts,
            kernel_time,
        })
    }
}
