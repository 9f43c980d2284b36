//! The resident corpus: upload once, search many times.

use std::ops::Range;
use std::sync::Mutex;
use std::time::Duration;

// `std::time::Instant` panics on wasm32; this is the same type natively.
use web_time::Instant;

use wgpu::util::DeviceExt;

use crate::corpus::{Corpus, Document, Segment};
use crate::error::Error;
use crate::query::{CaseMode, Query};
use crate::results::{DocHits, Want};

use super::context::{Ctx, GpuContext};
use super::kernels::{brute_byte, params as P, plain_read, scan, signature, two_phase};
use super::{unsupported_reason, GpuKernel};

// The columnar pipeline (issue 6) reads the result bit sets.
mod pipeline_hook;
// Many literals (issue 5): the trie / ac / prefix-hash / bloom kernels.
mod multi_hook;

/// Bytes of '\n' after a segment's data (beyond rounding up to 16): the
/// scan kernel reads up to 16 + 64 bytes past its own 16, and a pattern
/// (never containing '\n') cannot match there.
const TAIL_PAD: u64 = 128;

/// The staging chunk of the upload: each is filled on all cores and
/// submitted on its own. 8 MiB gives the fill 32 pieces of 256 KiB.
const STAGING_CHUNK: u64 = 8 << 20;

/// log2 of the bytes per block hint: `blk[k]` is the line holding byte
/// `k << BLK_SHIFT`, which bounds the search for a match's line. Measured
/// on the H100 (scan `x`, 194 MB, kernel ms): with the kernel of
/// 2026-11-22's second session, 0.098 with 256-byte blocks, 0.094 with
/// 128, 0.092-0.093 with 64 and 32; with the third session's kernel, 0.081
/// with 128 and 0.079 with 64. The hints take 4 bytes per block (6% of the
/// corpus at 64).
const BLK_SHIFT: u32 = 6;

/// Staging chunks in flight: one filling while the others copy.
const STAGING_SLOTS: usize = 3;

/// Options for [`GpuCorpus::upload_with`].
#[derive(Clone, Copy, Debug, Default)]
pub struct UploadOptions {
    /// The largest segment in bytes. `None`: the environment variable
    /// `LOGSIEVE_GPU_MAX_SEGMENT` if set, else the adapter's
    /// `max_storage_buffer_binding_size` (less padding). Tests set it small
    /// to force many segments.
    pub max_segment: Option<u64>,
    /// The staging chunk in bytes (default 8 MiB). Tests set it small so
    /// that the upload waits for chunks in flight many times.
    pub staging_chunk: Option<u64>,
    /// Staging chunks in flight (default 3, at least 1).
    pub staging_slots: Option<usize>,
    /// log2 of the bytes per line hint (default 7; clamped to 4..=16).
    /// Tests vary it so that a block holds many lines or part of one.
    pub block_shift: Option<u32>,
}

/// Where an upload's time went (see [`GpuCorpus::upload_stats`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct UploadStats {
    /// Getting staging memory from wgpu (`write_buffer_with`).
    pub stage: Duration,
    /// Waiting for a chunk in flight before staging another.
    pub wait: Duration,
    /// Copying the bytes into staging memory (all cores).
    pub fill: Duration,
    /// Submitting the chunks.
    pub submit: Duration,
    /// The final wait for the last copies.
    pub wait_end: Duration,
    /// The staging chunk size used, in bytes.
    pub chunk: u64,
    /// The staging chunks in flight.
    pub slots: usize,
}

/// The result of one GPU search.
#[derive(Clone, Debug)]
pub struct GpuSearch {
    /// One entry per document, as the CPU engine returns them.
    pub docs: Vec<DocHits>,
    /// GPU time of the query's compute pass (timestamps), when supported.
    pub kernel_time: Option<Duration>,
    /// Wall time from writing the parameters to the answer on the host.
    pub end_to_end: Duration,
    /// Lines that survived phase 1 (two-phase, signature): the elimination
    /// rate is `1 - candidates / lines`.
    pub candidates: Option<u64>,
    /// Byte offsets in the document of every match start (overlapping
    /// matches included), per document, ascending: brute-byte with
    /// [`Want::Lines`] only.
    pub positions: Option<Vec<Vec<u64>>>,
}

/// One segment resident on the GPU.
struct GpuSeg {
    doc: usize,
    lines: Range<u64>,
    bytes: Range<u64>,
    n_bytes: u32,
    n_lines: u32,
    n_words: u32,
    buffers: Vec<(String, wgpu::Buffer)>,
    /// Offset of this segment's result bits in the bits readback buffer.
    bits_at: u64,
}

impl GpuSeg {
    fn buf(&self, name: &str) -> &wgpu::Buffer {
        &self
            .buffers
            .iter()
            .find(|(n, _)| n == name)
            .expect("segment buffer")
            .1
    }
}

/// What a search changes: brute-byte's append buffers grow, and with them
/// the bind groups.
struct State {
    positions: Vec<wgpu::Buffer>,
    binds: Vec<wgpu::BindGroup>,
    /// Every segment's result bits are zero (a count-only scan zeroes them
    /// as it counts them), so the next scan needs no clear.
    clean: bool,
    /// `clean` as [`GpuCorpus::lock_state`] found it (which marks the bits
    /// dirty for whoever holds the lock, until they say otherwise).
    was_clean: bool,
}

/// A corpus resident in GPU memory: every segment's bytes, line offsets,
/// block hints, per-line signatures and bit sets, uploaded once.
pub struct GpuCorpus {
    ctx: GpuContext,
    segs: Vec<GpuSeg>,
    /// Segments holding one line too large for a binding: searched on the
    /// CPU and merged.
    cpu_segs: Vec<(usize, Segment)>,
    /// Each document's size and line count, to check that a search is given
    /// the corpus that was uploaded.
    shape: Vec<(u64, u64)>,
    freq: Box<[u64; 256]>,
    upload_time: Duration,
    upload_stats: UploadStats,
    index_time: Duration,
    upload_bytes: u64,
    params: wgpu::Buffer,
    rb_counts: wgpu::Buffer,
    rb_bits: wgpu::Buffer,
    ts: Option<(wgpu::QuerySet, wgpu::Buffer, wgpu::Buffer)>,
    /// Whether single-literal searches bracket their pass with timestamps
    /// (`GpuSearch::kernel_time`); see [`GpuCorpus::set_timestamps`].
    timestamps: std::sync::atomic::AtomicBool,
    state: Mutex<State>,
}

impl std::fmt::Debug for GpuCorpus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuCorpus")
            .field("segments", &self.segs.len())
            .field("cpu_segments", &self.cpu_segs.len())
            .field("bytes", &self.upload_bytes)
            .finish()
    }
}

fn round_up(x: u64, to: u64) -> u64 {
    x.div_ceil(to) * to
}

/// The byte frequencies of the corpus, from a sample: the scan kernel
/// tests the pattern's rarest bytes. Small documents are counted whole;
/// large ones 4 KiB in every 256 KiB, which ranks bytes just as well.
fn byte_freq(corpus: &Corpus) -> Box<[u64; 256]> {
    let mut f = Box::new([0u64; 256]);
    for_sample(corpus, |s| s.iter().for_each(|&b| f[b as usize] += 1));
    f
}

/// `LOGSIEVE_TRACE_QUERIES=1`: each single-literal GPU search prints where
/// its host time went (to stderr), read once per process.
pub(crate) fn trace_queries() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("LOGSIEVE_TRACE_QUERIES").as_deref() == Ok("1"))
}

/// Calls `f` on the sample of each document the frequency tables count.
fn for_sample(corpus: &Corpus, mut f: impl FnMut(&[u8])) {
    for d in corpus.docs() {
        let data = d.data();
        if data.len() <= 4 << 20 {
            f(data);
        } else {
            for c in data.chunks(256 << 10) {
                f(&c[..c.len().min(4096)]);
            }
        }
    }
}

/// The bytes of a segment's buffer at `range`: the document's bytes, then
/// '\n' padding.
fn fill_piece(dst: wgpu::WriteOnly<'_, [u8]>, src: &[u8], range: Range<u64>) {
    let (start, end) = (range.start as usize, range.end as usize);
    let from_src = src.len().clamp(start, end) - start;
    let (mut a, mut b) = dst.split_at(from_src);
    if from_src > 0 {
        copy_parallel(&mut a, &src[start..start + from_src]);
    }
    b.fill(b'\n');
}

/// The block hints of a segment with line starts `local` (plus the end
/// sentinel): entry k is the line holding byte `k << shift` (the last byte
/// for blocks past the end), one more entry than blocks. Built on all
/// cores (3M entries for 194 MB at 64-byte blocks).
fn block_hints(local: &[u32], n_bytes: u64, shift: u64) -> Vec<u32> {
    use rayon::prelude::*;
    const PART: usize = 1 << 16;
    let nb = n_bytes.div_ceil(1 << shift) + 1;
    let pos = |k: u64| (k << shift).min(n_bytes.saturating_sub(1)) as u32;
    let mut blk = vec![0u32; nb as usize];
    blk.par_chunks_mut(PART).enumerate().for_each(|(ci, out)| {
        let k0 = (ci * PART) as u64;
        // The last line starting at or before the part's first byte.
        let mut li = local.partition_point(|&x| x <= pos(k0)).saturating_sub(1);
        for (j, o) in out.iter_mut().enumerate() {
            let p = pos(k0 + j as u64);
            while local[li + 1] <= p {
                li += 1;
            }
            *o = li as u32;
        }
    });
    blk
}

/// Copies into mapped memory on several threads: one core's memcpy into
/// write-combined memory is slower than the PCIe link.
fn copy_parallel(dst: &mut wgpu::WriteOnly<'_, [u8]>, src: &[u8]) {
    use rayon::prelude::*;
    const PIECE: usize = 256 << 10;
    if src.len() < 2 * PIECE {
        dst.copy_from_slice(src);
        return;
    }
    let mut parts = Vec::new();
    let mut rest = dst.slice(..);
    let mut off = 0;
    while off < src.len() {
        let n = PIECE.min(src.len() - off);
        let (a, b) = rest.split_at(n);
        parts.push((SendWriteOnly(a), &src[off..off + n]));
        rest = b;
        off += n;
    }
    parts
        .into_par_iter()
        .for_each(|(mut d, s)| d.0.copy_from_slice(s));
}

/// A disjoint part of a mapped range, handed to one copying thread.
struct SendWriteOnly<'a>(wgpu::WriteOnly<'a, [u8]>);

// SAFETY: `WriteOnly<'a, [u8]>` is an exclusive, write-only view like
// `&'a mut [u8]`, which is `Send`; wgpu only implements `Send` for sized
// `T`. Each part covers a disjoint range (made by `split_at`) and is written
// by exactly one thread while the buffer stays mapped for the whole scope.
unsafe impl Send for SendWriteOnly<'_> {}

/// Splits a document into GPU segments (bounded in bytes and in lines, since
/// per-line arrays are bound too) and oversized ones for the CPU.
fn plan_segments(doc: &Document, max_bytes: u64, max_lines: u64) -> Vec<Segment> {
    let starts = doc.lines().starts();
    let len = doc.data().len() as u64;
    let mut out = Vec::new();
    for s in doc.segments(max_bytes) {
        if s.oversized || s.lines.end - s.lines.start <= max_lines {
            out.push(s);
            continue;
        }
        let mut first = s.lines.start;
        while first < s.lines.end {
            let last = (first + max_lines).min(s.lines.end);
            out.push(Segment {
                lines: first..last,
                bytes: starts[first as usize]..starts[last as usize].min(len),
                oversized: false,
            });
            first = last;
        }
    }
    out
}

impl GpuCorpus {
    /// Uploads `corpus` with the default segment size.
    pub fn upload(ctx: &GpuContext, corpus: &Corpus) -> Result<GpuCorpus, Error> {
        GpuCorpus::upload_with(ctx, corpus, UploadOptions::default())
    }

    /// Uploads `corpus`: segments, line offsets, block hints; builds the
    /// per-line signatures on the GPU. Errors on out-of-memory or any
    /// device error. Blocks (natively only: in a browser use
    /// [`GpuCorpus::upload_async`]).
    pub fn upload_with(
        ctx: &GpuContext,
        corpus: &Corpus,
        opts: UploadOptions,
    ) -> Result<GpuCorpus, Error> {
        pollster::block_on(Self::upload_async(ctx, corpus, opts, &mut |_, _| {}))
    }

    /// [`GpuCorpus::upload_with`] without blocking, calling
    /// `progress(bytes_staged, bytes_total)` after each staging chunk is
    /// submitted (a browser shows it as a progress bar).
    pub async fn upload_async(
        ctx: &GpuContext,
        corpus: &Corpus,
        opts: UploadOptions,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<GpuCorpus, Error> {
        let c = &*ctx.inner;
        c.check_faults()?;
        let dev = &c.device;
        let oom = dev.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let val = dev.push_error_scope(wgpu::ErrorFilter::Validation);
        let res = Self::upload_inner(ctx, corpus, opts, progress).await;
        let v = val.pop().await;
        let o = oom.pop().await;
        if let Some(e) = o {
            return Err(Error::backend(format!(
                "out of GPU memory uploading {} bytes: {e}",
                corpus.total_bytes()
            )));
        }
        if let Some(e) = v {
            return Err(Error::backend(format!("GPU upload failed: {e}")));
        }
        c.check_faults()?;
        res
    }

    async fn upload_inner(
        ctx: &GpuContext,
        corpus: &Corpus,
        opts: UploadOptions,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<GpuCorpus, Error> {
        let c = &*ctx.inner;
        let dev = &c.device;
        let bind_max = c
            .info
            .max_storage_buffer_binding_size
            .min(c.info.max_buffer_size);
        let requested = opts
            .max_segment
            .or_else(|| {
                std::env::var("LOGSIEVE_GPU_MAX_SEGMENT")
                    .ok()
                    .and_then(|s| s.trim().parse().ok())
            })
            .unwrap_or(u64::MAX);
        // u32 offsets with i32 arithmetic in the kernels: stay below 2 GiB.
        // (The context guarantees bind_max >= 64 KiB, so cap >= 1.)
        let cap = bind_max.saturating_sub(TAIL_PAD + 16).min((1 << 31) - 4096);
        let max_seg = requested.clamp(1, cap);
        let max_lines = (bind_max / 16).saturating_sub(1).max(1);

        let freq = byte_freq(corpus);
        let t_index = Instant::now();
        let blk_shift = u64::from(opts.block_shift.unwrap_or(BLK_SHIFT).clamp(4, 16));
        let mut segs = Vec::new();
        let mut cpu_segs = Vec::new();
        let mut shape = Vec::new();
        let mut bits_at = 0u64;
        for (di, doc) in corpus.docs().iter().enumerate() {
            shape.push((doc.data().len() as u64, doc.lines().len()));
            let starts = doc.lines().starts();
            for s in plan_segments(doc, max_seg, max_lines) {
                if s.oversized {
                    cpu_segs.push((di, s));
                    continue;
                }
                let base = s.bytes.start;
                let n_bytes = s.bytes.end - base;
                let n_lines = s.lines.end - s.lines.start;
                let local: Vec<u32> = starts[s.lines.start as usize..=s.lines.end as usize]
                    .iter()
                    .map(|&x| (x - base) as u32)
                    .collect();
                let blk = block_hints(&local, n_bytes, blk_shift);
                let n_words = n_lines.div_ceil(32);
                let storage = wgpu::BufferUsages::STORAGE;
                let bits = storage | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
                let mk = |label: &str, size: u64, usage| {
                    dev.create_buffer(&wgpu::BufferDescriptor {
                        label: Some(label),
                        size: round_up(size.max(4), 16),
                        usage,
                        mapped_at_creation: false,
                    })
                };
                let init = |label: &str, words: &[u32], usage| {
                    dev.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some(label),
                        contents: &words
                            .iter()
                            .flat_map(|w| w.to_le_bytes())
                            .collect::<Vec<_>>(),
                        usage,
                    })
                };
                let buffers = vec![
                    (
                        "data".to_string(),
                        mk(
                            "data",
                            round_up(n_bytes, 16) + TAIL_PAD,
                            storage | wgpu::BufferUsages::COPY_DST,
                        ),
                    ),
                    ("starts".to_string(), init("starts", &local, storage)),
                    ("blk".to_string(), init("blk", &blk, storage)),
                    ("cand".to_string(), mk("cand", n_words * 4, bits)),
                    ("result".to_string(), mk("result", n_words * 4, bits)),
                    ("counters".to_string(), mk("counters", 16, bits)),
                    ("sigs".to_string(), mk("sigs", n_lines * 16, storage)),
                    (
                        "seg".to_string(),
                        init(
                            "seg",
                            &[
                                n_bytes as u32,
                                n_lines as u32,
                                n_words as u32,
                                blk_shift as u32,
                            ],
                            wgpu::BufferUsages::UNIFORM,
                        ),
                    ),
                ];
                segs.push(GpuSeg {
                    doc: di,
                    lines: s.lines.clone(),
                    bytes: s.bytes.clone(),
                    n_bytes: n_bytes as u32,
                    n_lines: n_lines as u32,
                    n_words: n_words as u32,
                    buffers,
                    bits_at,
                });
                bits_at += n_words * 4;
            }
        }

        let mut index_time = t_index.elapsed();
        // Stage the bytes in chunks, each filled on several threads and
        // copied while the next one fills.
        let t0 = Instant::now();
        let mut upload_bytes = 0u64;
        let mut pieces: Vec<(usize, Range<u64>)> = Vec::new();
        for (si, s) in segs.iter().enumerate() {
            let size = s.buf("data").size();
            let mut off = 0;
            while off < size {
                let n = opts
                    .staging_chunk
                    .map_or(STAGING_CHUNK, |c| round_up(c.max(16), 16))
                    .min(size - off);
                pieces.push((si, off..off + n));
                off += n;
            }
            upload_bytes += u64::from(s.n_bytes);
        }
        let all: u64 = pieces.iter().map(|p| p.1.end - p.1.start).sum();
        let chunk_max = opts
            .staging_chunk
            .map_or(STAGING_CHUNK, |c| round_up(c.max(16), 16));
        let slot_size = chunk_max.min(round_up(all.max(16), 16));
        let slots = opts.staging_slots.unwrap_or(STAGING_SLOTS).max(1);
        let mut us = UploadStats {
            chunk: slot_size,
            slots,
            ..Default::default()
        };
        // The chunks: runs of pieces that fit one staging chunk.
        let mut chunks: Vec<(usize, usize, u64)> = Vec::new();
        let mut i = 0;
        while i < pieces.len() {
            let mut total = 0;
            let mut j = i;
            while j < pieces.len()
                && (j == i || total + pieces[j].1.end - pieces[j].1.start <= slot_size)
            {
                total += pieces[j].1.end - pieces[j].1.start;
                j += 1;
            }
            chunks.push((i, j, total));
            i = j;
        }
        // Each chunk goes through wgpu's own staging memory
        // (`write_buffer_with`: sub-allocated, not zeroed), filled on all
        // cores and submitted on its own, with at most `slots` chunks in
        // flight. Buffers created mapped cost more than the fill (the
        // driver pins them, wgpu zeroes them): a ring of 3 x 8 MiB of them
        // measured 14-17 GB/s on the H100 machine, this path 21-23.
        let mut inflight: std::collections::VecDeque<wgpu::SubmissionIndex> = Default::default();
        let mut staged = 0u64;
        for &(i, j, total) in &chunks {
            if inflight.len() >= slots {
                let idx = inflight.pop_front().expect("a chunk in flight");
                let t = Instant::now();
                // In a browser the copy into staging memory happens in
                // `writeBuffer` itself: nothing to wait for.
                #[cfg(not(target_arch = "wasm32"))]
                dev.poll(wgpu::PollType::Wait {
                    submission_index: Some(idx),
                    timeout: None,
                })
                .map_err(|e| Error::backend(format!("GPU wait failed: {e}")))?;
                #[cfg(target_arch = "wasm32")]
                let _ = idx;
                us.wait += t.elapsed();
            }
            for (si, r) in &pieces[i..j] {
                let s = &segs[*si];
                let doc = &corpus.docs()[s.doc];
                let src = &doc.data()[s.bytes.start as usize..s.bytes.end as usize];
                let t = Instant::now();
                let mut view = wgpu::BufferSize::new(r.end - r.start)
                    .and_then(|n| c.queue.write_buffer_with(s.buf("data"), r.start, n))
                    .ok_or_else(|| Error::backend("GPU staging memory could not be had"))?;
                us.stage += t.elapsed();
                let t = Instant::now();
                fill_piece(view.slice(..), src, r.clone());
                us.fill += t.elapsed();
            }
            let t = Instant::now();
            inflight.push_back(c.queue.submit([]));
            us.submit += t.elapsed();
            staged += total;
            progress(staged, all);
        }
        let t = Instant::now();
        c.wait_async().await?;
        us.wait_end = t.elapsed();
        let upload_time = t0.elapsed();

        let params = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("params"),
            size: (P::WORDS * 4) as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let positions: Vec<wgpu::Buffer> = segs
            .iter()
            .map(|_| Self::positions_buffer(c, brute_byte::INITIAL_CAPACITY))
            .collect();
        let binds: Vec<wgpu::BindGroup> = segs
            .iter()
            .zip(&positions)
            .map(|(s, p)| Self::bind(c, s, p, &params))
            .collect();
        let rb = |label: &str, size: u64| {
            dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: round_up(size.max(16), 16),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let rb_counts = rb("readback counts", segs.len() as u64 * 16);
        let rb_bits = rb("readback bits", bits_at);
        let ts = c.info.timestamps.then(|| {
            (
                dev.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("timestamps"),
                    ty: wgpu::QueryType::Timestamp,
                    count: 2,
                }),
                dev.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("timestamps resolve"),
                    size: 16,
                    usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                }),
                rb("readback timestamps", 16),
            )
        });

        // The per-line signatures, built once on the GPU.
        let t_sig = Instant::now();
        let mut enc = dev.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pass.set_pipeline(&c.pipes.sig_build);
            for (s, b) in segs.iter().zip(&binds) {
                pass.set_bind_group(0, b, &[]);
                let (x, y) = c.grid(u64::from(s.n_lines));
                pass.dispatch_workgroups(x, y, 1);
            }
        }
        c.queue.submit([enc.finish()]);
        c.wait_async().await?;
        index_time += t_sig.elapsed();

        Ok(GpuCorpus {
            ctx: ctx.clone(),
            segs,
            cpu_segs,
            shape,
            freq,
            upload_time,
            upload_stats: us,
            index_time,
            upload_bytes,
            params,
            rb_counts,
            rb_bits,
            ts,
            timestamps: std::sync::atomic::AtomicBool::new(false),
            state: Mutex::new(State {
                positions,
                binds,
                // wgpu zero-initialises new buffers.
                clean: true,
                was_clean: true,
            }),
        })
    }

    fn positions_buffer(c: &Ctx, capacity: u64) -> wgpu::Buffer {
        c.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("positions"),
            size: round_up(capacity.max(4) * 4, 16),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        })
    }

    fn bind(
        c: &Ctx,
        s: &GpuSeg,
        positions: &wgpu::Buffer,
        params: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        fn e(binding: u32, b: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
            wgpu::BindGroupEntry {
                binding,
                resource: b.as_entire_binding(),
            }
        }
        c.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("segment"),
            layout: &c.layout,
            entries: &[
                e(0, params),
                e(1, s.buf("seg")),
                e(2, s.buf("data")),
                e(3, s.buf("starts")),
                e(4, s.buf("blk")),
                e(5, s.buf("cand")),
                e(6, s.buf("result")),
                e(7, s.buf("counters")),
                e(8, s.buf("sigs")),
                e(9, positions),
            ],
        })
    }

    /// Upload throughput of the corpus bytes, in GB/s (10^9 bytes/s).
    pub fn upload_gbps(&self) -> f64 {
        self.upload_bytes as f64 / self.upload_time.as_secs_f64().max(1e-9) / 1e9
    }

    /// Where the upload's time went.
    pub fn upload_stats(&self) -> UploadStats {
        self.upload_stats
    }

    /// How long the transfer of the corpus bytes took (staging, copies, the
    /// final wait): what [`GpuCorpus::upload_gbps`] divides by.
    pub fn upload_time(&self) -> Duration {
        self.upload_time
    }

    /// How long the rest of the upload took: per-segment line offsets and
    /// block hints (host), their buffers, and the signatures (GPU).
    pub fn index_time(&self) -> Duration {
        self.index_time
    }

    /// Corpus bytes resident on the GPU (oversized lines excluded).
    pub fn resident_bytes(&self) -> u64 {
        self.upload_bytes
    }

    /// The number of GPU segments.
    pub fn segment_count(&self) -> usize {
        self.segs.len()
    }

    /// The context this corpus lives in.
    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// Every GPU buffer and its size, segment buffers named `segN/NAME`.
    pub fn buffers(&self) -> Vec<(String, u64)> {
        let st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = vec![
            ("params".to_string(), self.params.size()),
            ("readback/counts".to_string(), self.rb_counts.size()),
            ("readback/bits".to_string(), self.rb_bits.size()),
        ];
        if let Some((_, a, b)) = &self.ts {
            out.push(("timestamps/resolve".to_string(), a.size()));
            out.push(("readback/timestamps".to_string(), b.size()));
        }
        for (i, s) in self.segs.iter().enumerate() {
            for (n, b) in &s.buffers {
                out.push((format!("seg{i}/{n}"), b.size()));
            }
            out.push((format!("seg{i}/positions"), st.positions[i].size()));
        }
        out
    }

    fn check_corpus(&self, corpus: &Corpus) -> Result<(), Error> {
        let same = corpus.docs().len() == self.shape.len()
            && corpus
                .docs()
                .iter()
                .zip(&self.shape)
                .all(|(d, &(bytes, _))| d.data().len() as u64 == bytes);
        if same {
            Ok(())
        } else {
            Err(Error::backend(
                "GPU search given a corpus other than the one uploaded",
            ))
        }
    }

    /// The query uniform.
    fn params_for(&self, q: &Query) -> ([u32; P::WORDS], Vec<u8>) {
        let lit = &q.literals().expect("checked by unsupported_reason")[0];
        let fold = q.case() == CaseMode::Ascii;
        let folded = if fold {
            lit.to_ascii_lowercase()
        } else {
            lit.clone()
        };
        let mut p = [0u32; P::WORDS];
        for (i, &b) in folded.iter().enumerate() {
            p[P::PAT + i] = u32::from(b);
            p[P::PATW + i / 4] |= u32::from(b) << ((i % 4) * 8);
        }
        p[P::NEED..P::NEED + 32].copy_from_slice(&two_phase::need_counts(&folded));
        p[P::SIG..P::SIG + 4].copy_from_slice(&signature::query_mask(&folded));
        p[P::PAT_LEN] = folded.len() as u32;
        p[P::FOLD] = u32::from(fold);
        let pick = scan::pick_rare(&folded, fold, &self.freq);
        let bcast = |b: u8| u32::from(b) * 0x0101_0101;
        let or_mask = |b: u8| {
            if fold && b.is_ascii_lowercase() {
                0x2020_2020
            } else {
                0
            }
        };
        p[P::R1] = pick.r1 as u32;
        p[P::B1] = bcast(folded[pick.r1]);
        p[P::OR1] = or_mask(folded[pick.r1]);
        p[P::DENSE] = u32::from(pick.dense);
        if let Some(r2) = pick.r2 {
            p[P::D2] = (r2 as i32 - pick.r1 as i32) as u32;
            p[P::B2] = bcast(folded[r2]);
            p[P::OR2] = or_mask(folded[r2]);
        }
        p[P::WIN_LO] = 0;
        p[P::WIN_HI] = u32::MAX;
        p[P::MAGIC] = plain_read::MAGIC;
        (p, folded)
    }

    fn write_params(&self, p: &[u32; P::WORDS]) {
        let bytes: Vec<u8> = p.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.ctx.inner.queue.write_buffer(&self.params, 0, &bytes);
    }

    /// Timestamps on: single-literal searches report their kernel time
    /// (`GpuSearch::kernel_time`), at the price of the timestamp writes,
    /// their resolve and one more readback (0.02-0.03 ms a query on the
    /// H100; docs/bench). Off by default: a search that only wants its
    /// answer does not pay for a profile. The plain-read ceiling and the
    /// many-literal kernels always use them.
    pub fn set_timestamps(&self, on: bool) {
        self.timestamps
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// The timestamp query set and buffers, when this search uses them.
    fn query_ts(&self) -> Option<&(wgpu::QuerySet, wgpu::Buffer, wgpu::Buffer)> {
        self.ts
            .as_ref()
            .filter(|_| self.timestamps.load(std::sync::atomic::Ordering::Relaxed))
    }

    fn timestamp_writes(&self) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        self.ts
            .as_ref()
            .map(|(qs, _, _)| wgpu::ComputePassTimestampWrites {
                query_set: qs,
                beginning_of_pass_write_index: Some(0),
                end_of_pass_write_index: Some(1),
            })
    }

    fn resolve_timestamps(&self, enc: &mut wgpu::CommandEncoder) {
        if let Some((qs, resolve, rb)) = &self.ts {
            enc.resolve_query_set(qs, 0..2, resolve, 0);
            enc.copy_buffer_to_buffer(resolve, 0, rb, 0, 16);
        }
    }

    /// Reads the mapped timestamp readback and unmaps it.
    fn read_timestamps(&self) -> Result<Option<Duration>, Error> {
        let Some((_, _, rb)) = &self.ts else {
            return Ok(None);
        };
        let c = &*self.ctx.inner;
        let t = {
            let v = rb
                .get_mapped_range(0..16)
                .map_err(|e| Error::backend(format!("GPU readback failed: {e}")))?;
            let a = u64::from_le_bytes(v[0..8].try_into().expect("8 bytes"));
            let b = u64::from_le_bytes(v[8..16].try_into().expect("8 bytes"));
            b.saturating_sub(a)
        };
        rb.unmap();
        Ok(Some(Duration::from_nanos(
            (t as f64 * f64::from(c.ts_period)) as u64,
        )))
    }

    /// Runs the plain-read bandwidth kernel over every segment and returns
    /// its GPU time (timestamps), or the wall time of the submission when
    /// the adapter has no timestamps.
    pub fn plain_read(&self) -> Result<Duration, Error> {
        let c = &*self.ctx.inner;
        c.check_faults()?;
        let st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let (p, _) = self.params_for_plain();
        self.write_params(&p);
        let t = Instant::now();
        let mut enc = c.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("plain-read"),
                timestamp_writes: self.timestamp_writes(),
            });
            pass.set_pipeline(&c.pipes.plain_read);
            for (s, b) in self.segs.iter().zip(&st.binds) {
                pass.set_bind_group(0, b, &[]);
                let (x, y) = c.grid(
                    u64::from(s.n_bytes)
                        .div_ceil(16)
                        .div_ceil(256 * plain_read::VPT),
                );
                pass.dispatch_workgroups(x, y, 1);
            }
        }
        self.resolve_timestamps(&mut enc);
        c.queue.submit([enc.finish()]);
        c.wait()?;
        let wall = t.elapsed();
        if let Some((_, _, rb)) = &self.ts {
            c.map_many(&[(rb, 16)])?;
        }
        let kt = self.read_timestamps()?;
        c.check_faults()?;
        Ok(kt.unwrap_or(wall))
    }

    fn params_for_plain(&self) -> ([u32; P::WORDS], ()) {
        let mut p = [0u32; P::WORDS];
        p[P::MAGIC] = plain_read::MAGIC;
        (p, ())
    }

    /// Searches the uploaded `corpus` (the same one that was uploaded) for
    /// `q` with `kernel`. Errors when the query is unsupported
    /// ([`unsupported_reason`]), the corpus differs, or the device fails;
    /// a result is never silently wrong.
    pub fn search(
        &self,
        corpus: &Corpus,
        q: &Query,
        kernel: GpuKernel,
        want: Want,
    ) -> Result<GpuSearch, Error> {
        self.search_max(corpus, q, kernel, want, None)
    }

    /// [`GpuCorpus::search`] with `-m`: at most `max_count` selected lines
    /// per document. Blocks (natively only: in a browser use
    /// [`GpuCorpus::search_async`]).
    pub fn search_max(
        &self,
        corpus: &Corpus,
        q: &Query,
        kernel: GpuKernel,
        want: Want,
        max_count: Option<u64>,
    ) -> Result<GpuSearch, Error> {
        pollster::block_on(self.search_async(corpus, q, kernel, want, max_count))
    }

    /// [`GpuCorpus::search_max`] without blocking. Natively, searches of
    /// one corpus from several threads take turns; in a browser (one
    /// thread) a search started while another awaits the GPU is an error.
    // The state lock is held across the awaits on purpose: it serialises
    // searches of this corpus (they share the parameter and readback
    // buffers). Natively the future runs on the caller's thread under
    // `block_on`; on wasm32 the lock is only ever tried.
    #[allow(clippy::await_holding_lock)]
    pub async fn search_async(
        &self,
        corpus: &Corpus,
        q: &Query,
        kernel: GpuKernel,
        want: Want,
        max_count: Option<u64>,
    ) -> Result<GpuSearch, Error> {
        if kernel == GpuKernel::Stats {
            return Err(Error::backend(
                "the stats kernel counts columns; it does not search",
            ));
        }
        if let Some(mk) = GpuKernel::effective(Some(kernel), q).multi() {
            return self.search_multi(corpus, q, mk, want, max_count).await;
        }
        if let Some(r) = unsupported_reason(q) {
            return Err(Error::backend(format!(
                "the GPU cannot run this query: {r}"
            )));
        }
        self.check_corpus(corpus)?;
        let c = &*self.ctx.inner;
        c.check_faults()?;
        let mut st = self.lock_state()?;
        c.scoped(self.search_inner(corpus, q, kernel, want, max_count, &mut st))
            .await
    }

    async fn search_inner(
        &self,
        corpus: &Corpus,
        q: &Query,
        kernel: GpuKernel,
        want: Want,
        max_count: Option<u64>,
        st: &mut State,
    ) -> Result<GpuSearch, Error> {
        let c = &*self.ctx.inner;
        let t0 = Instant::now();
        let use_ts = self.query_ts().is_some();
        let (prm, folded) = self.params_for(q);
        let t_params = Instant::now();
        let scan = kernel == GpuKernel::Scan;
        // Natively scan's parameters travel as immediate data.
        let imm = (scan && c.info.scan_immediates).then(|| scan::immediates(&prm));
        if imm.is_none() {
            self.write_params(&prm);
        }
        let t_write = t_params.elapsed();
        let phased = matches!(kernel, GpuKernel::TwoPhase | GpuKernel::Signature);
        let lines = want == Want::Lines;
        // scan zeroes its counters itself, and its result bits are already
        // zero after a count-only scan (whose pop-count zeroes them).
        let skip_result = scan && st.was_clean;
        let zero_after = scan && !lines;
        let mut enc = c.device.create_command_encoder(&Default::default());
        for s in &self.segs {
            if !skip_result {
                enc.clear_buffer(s.buf("result"), 0, None);
            }
            if !scan {
                enc.clear_buffer(s.buf("counters"), 0, None);
            }
            if phased {
                enc.clear_buffer(s.buf("cand"), 0, None);
            }
        }
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(kernel.name()),
                timestamp_writes: self.timestamp_writes().filter(|_| use_ts),
            });
            for (s, b) in self.segs.iter().zip(&st.binds) {
                pass.set_bind_group(0, b, &[]);
                let by_line = u64::from(s.n_lines).div_ceil(256);
                let by_byte = u64::from(s.n_bytes).div_ceil(256);
                let run = |pass: &mut wgpu::ComputePass<'_>, p, groups| {
                    pass.set_pipeline(p);
                    let (x, y) = c.grid(groups);
                    pass.dispatch_workgroups(x, y, 1);
                };
                match kernel {
                    GpuKernel::BruteLine => run(&mut pass, &c.pipes.brute_line, by_line),
                    GpuKernel::BruteByte => run(&mut pass, &c.pipes.brute_byte, by_byte),
                    GpuKernel::TwoPhase => {
                        run(&mut pass, &c.pipes.two_phase_p1, u64::from(s.n_lines));
                        run(&mut pass, &c.pipes.two_phase_p2, by_byte);
                    }
                    GpuKernel::Scan => c.record_scan(&mut pass, s.n_bytes, &prm, imm.as_deref()),
                    GpuKernel::Signature => {
                        run(&mut pass, &c.pipes.sig_p1, by_line);
                        run(&mut pass, &c.pipes.two_phase_p2, by_byte);
                    }
                    GpuKernel::Trie | GpuKernel::Ac | GpuKernel::PrefixHash | GpuKernel::Bloom => {
                        unreachable!("search_max routes these to multi_hook")
                    }
                    GpuKernel::Stats => unreachable!("search_async refuses the stats kernel"),
                }
                let by_word = u64::from(s.n_words).div_ceil(256);
                if zero_after {
                    run(&mut pass, &c.pipes.count_result_zero, by_word);
                } else {
                    run(&mut pass, &c.pipes.count_result, by_word);
                }
                if phased {
                    run(&mut pass, &c.pipes.count_cand, by_word);
                }
            }
        }
        self.copy_readbacks(&mut enc, lines);
        if use_ts {
            self.resolve_timestamps(&mut enc);
        }
        let t_enc = t0.elapsed();
        c.queue.submit([enc.finish()]);
        let t_sub = t0.elapsed();

        // One wait for every readback this query needs.
        let mut maps = vec![(&self.rb_counts, self.segs.len() as u64 * 16)];
        let bits_size: u64 = self.segs.iter().map(|s| u64::from(s.n_words) * 4).sum();
        if lines {
            maps.push((&self.rb_bits, bits_size));
        }
        if let Some((_, _, rb)) = self.ts.as_ref().filter(|_| use_ts) {
            maps.push((rb, 16));
        }
        c.map_many_async(&maps).await?;
        if trace_queries() {
            eprintln!(
                "logsieve: {} query: params {:.1} us, encoded at {:.1} us, submitted at {:.1} us, mapped at {:.1} us",
                kernel.name(),
                t_write.as_secs_f64() * 1e6,
                t_enc.as_secs_f64() * 1e6,
                t_sub.as_secs_f64() * 1e6,
                t0.elapsed().as_secs_f64() * 1e6
            );
        }
        let counts = self.read_counts()?;
        let kernel_time = match use_ts {
            true => self.read_timestamps()?,
            false => None,
        };
        let mut seg_lines: Vec<Vec<u64>> = Vec::new();
        if lines {
            seg_lines = self.read_bits()?;
        }

        // brute-byte: grow an overflowed append buffer to the exact count
        // (up to one binding), and with line ids wanted, collect every
        // position.
        let mut positions = None;
        if kernel == GpuKernel::BruteByte {
            let bind_max = c.info.max_storage_buffer_binding_size / 4;
            for (i, s) in self.segs.iter().enumerate() {
                let need = u64::from(counts[i][2]);
                let cap = st.positions[i].size() / 4;
                if need > cap {
                    let p = Self::positions_buffer(c, need.min(bind_max));
                    st.binds[i] = Self::bind(c, s, &p, &self.params);
                    st.positions[i] = p;
                }
            }
            if lines {
                let mut per_doc = vec![Vec::new(); corpus.docs().len()];
                for (i, s) in self.segs.iter().enumerate() {
                    let got = self
                        .collect_positions(st, i, u64::from(counts[i][2]), &prm, s.n_bytes)
                        .await?;
                    per_doc[s.doc].extend(got.into_iter().map(|p| s.bytes.start + u64::from(p)));
                }
                for (di, seg) in &self.cpu_segs {
                    let doc = &corpus.docs()[*di];
                    per_doc[*di].extend(cpu_positions(
                        doc,
                        seg,
                        &folded,
                        q.case() == CaseMode::Ascii,
                    ));
                }
                per_doc.iter_mut().for_each(|v| v.sort_unstable());
                positions = Some(per_doc);
            }
        }

        // Merge per document: GPU segments, then the CPU's oversized ones.
        let seg_matched: Vec<u64> = counts.iter().map(|c| u64::from(c[0])).collect();
        let docs = self.merge_docs(corpus, q, &seg_matched, seg_lines, lines, max_count);
        let candidates = phased.then(|| {
            counts.iter().map(|c| u64::from(c[1])).sum::<u64>() + self.cpu_segs.len() as u64
        });
        // The pop-count zeroed the result bits.
        st.clean = zero_after;
        Ok(GpuSearch {
            docs,
            kernel_time,
            end_to_end: t0.elapsed(),
            candidates,
            positions,
        })
    }

    /// Copies every segment's counters, and with `lines` its result bits,
    /// into the readback buffers.
    pub(super) fn copy_readbacks(&self, enc: &mut wgpu::CommandEncoder, lines: bool) {
        for (i, s) in self.segs.iter().enumerate() {
            enc.copy_buffer_to_buffer(s.buf("counters"), 0, &self.rb_counts, i as u64 * 16, 16);
            if lines && s.n_words > 0 {
                enc.copy_buffer_to_buffer(
                    s.buf("result"),
                    0,
                    &self.rb_bits,
                    s.bits_at,
                    u64::from(s.n_words) * 4,
                );
            }
        }
    }

    /// Reads the mapped counters of every segment and unmaps them.
    fn read_counts(&self) -> Result<Vec<[u32; 4]>, Error> {
        if self.segs.is_empty() {
            return Ok(Vec::new());
        }
        let size = self.segs.len() as u64 * 16;
        let out = {
            let v = self
                .rb_counts
                .get_mapped_range(0..size)
                .map_err(|e| Error::backend(format!("GPU readback failed: {e}")))?;
            v.chunks_exact(16)
                .map(|ch| {
                    let w = |k: usize| {
                        u32::from_le_bytes(ch[k * 4..k * 4 + 4].try_into().expect("4 bytes"))
                    };
                    [w(0), w(1), w(2), w(3)]
                })
                .collect()
        };
        self.rb_counts.unmap();
        Ok(out)
    }

    /// Decodes the mapped result bit sets into line ids and unmaps them.
    fn read_bits(&self) -> Result<Vec<Vec<u64>>, Error> {
        let size: u64 = self.segs.iter().map(|s| u64::from(s.n_words) * 4).sum();
        if size == 0 {
            return Ok(vec![Vec::new(); self.segs.len()]);
        }
        let out = {
            let v = self
                .rb_bits
                .get_mapped_range(0..size)
                .map_err(|e| Error::backend(format!("GPU readback failed: {e}")))?;
            self.segs
                .iter()
                .map(|s| {
                    let mut ids = Vec::new();
                    let at = s.bits_at as usize;
                    for w in 0..s.n_words as usize {
                        let o = at + w * 4;
                        let mut bits = u32::from_le_bytes(v[o..o + 4].try_into().expect("4 bytes"));
                        while bits != 0 {
                            let b = bits.trailing_zeros();
                            bits &= bits - 1;
                            let local = (w as u64) * 32 + u64::from(b);
                            if local < u64::from(s.n_lines) {
                                ids.push(s.lines.start + local);
                            }
                        }
                    }
                    ids
                })
                .collect()
        };
        self.rb_bits.unmap();
        Ok(out)
    }

    /// All match positions of segment `i` (relative to the segment), given
    /// the count from the run that just finished. When the count exceeds
    /// the append buffer (which has already been grown as far as one binding
    /// allows), the kernel is re-run on byte windows no larger than the
    /// buffer: a window of `cap` bytes holds at most `cap` match starts.
    async fn collect_positions(
        &self,
        st: &State,
        i: usize,
        count: u64,
        prm: &[u32; P::WORDS],
        n_bytes: u32,
    ) -> Result<Vec<u32>, Error> {
        let cap = st.positions[i].size() / 4;
        let windows: Vec<Option<(u32, u32)>> = if count <= cap {
            // The run that just finished may have overflowed the old buffer;
            // re-run it once into the grown one when so.
            vec![None]
        } else {
            let step = cap.clamp(1, u64::from(u32::MAX)) as u32;
            (0..n_bytes)
                .step_by(step as usize)
                .map(|lo| Some((lo, lo.saturating_add(step).min(n_bytes))))
                .collect()
        };
        let mut out = Vec::with_capacity(count as usize);
        for w in windows {
            let mut p = *prm;
            if let Some((lo, hi)) = w {
                p[P::WIN_LO] = lo;
                p[P::WIN_HI] = hi;
            }
            out.extend(self.run_positions(st, i, &p).await?);
        }
        if w_total_mismatch(&out, count) {
            return Err(Error::backend(format!(
                "GPU brute-byte found {} positions, then {} on re-reading: not trusting either",
                count,
                out.len()
            )));
        }
        Ok(out)
    }

    /// Runs brute-byte on segment `i` with parameters `p` and reads the
    /// appended positions back (the caller guarantees they fit).
    async fn run_positions(
        &self,
        st: &State,
        i: usize,
        p: &[u32; P::WORDS],
    ) -> Result<Vec<u32>, Error> {
        let c = &*self.ctx.inner;
        let s = &self.segs[i];
        self.write_params(p);
        let mut enc = c.device.create_command_encoder(&Default::default());
        enc.clear_buffer(s.buf("counters"), 0, None);
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pass.set_bind_group(0, &st.binds[i], &[]);
            pass.set_pipeline(&c.pipes.brute_byte);
            let (x, y) = c.grid(u64::from(s.n_bytes).div_ceil(256));
            pass.dispatch_workgroups(x, y, 1);
        }
        enc.copy_buffer_to_buffer(s.buf("counters"), 0, &self.rb_counts, 0, 16);
        c.queue.submit([enc.finish()]);
        let n = u64::from(self.read_counts_first().await?);
        let cap = st.positions[i].size() / 4;
        if n > cap {
            return Err(Error::backend(format!(
                "GPU brute-byte: {n} positions in a window of a buffer of {cap}"
            )));
        }
        if n == 0 {
            return Ok(Vec::new());
        }
        let size = n * 4;
        let rb = c.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback positions"),
            size: round_up(size, 4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = c.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(&st.positions[i], 0, &rb, 0, size);
        c.queue.submit([enc.finish()]);
        c.map_many_async(&[(&rb, size)]).await?;
        let out = {
            let v = rb
                .get_mapped_range(0..size)
                .map_err(|e| Error::backend(format!("GPU readback failed: {e}")))?;
            v.chunks_exact(4)
                .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
                .collect()
        };
        rb.unmap();
        Ok(out)
    }

    async fn read_counts_first(&self) -> Result<u32, Error> {
        let c = &*self.ctx.inner;
        c.map_many_async(&[(&self.rb_counts, 16)]).await?;
        let n = {
            let v = self
                .rb_counts
                .get_mapped_range(0..16)
                .map_err(|e| Error::backend(format!("GPU readback failed: {e}")))?;
            u32::from_le_bytes(v[8..12].try_into().expect("4 bytes"))
        };
        self.rb_counts.unmap();
        Ok(n)
    }
}

fn w_total_mismatch(out: &[u32], count: u64) -> bool {
    out.len() as u64 != count
}

/// Match starts (overlapping) in an oversized segment, found on the CPU.
fn cpu_positions(doc: &Document, seg: &Segment, folded: &[u8], fold: bool) -> Vec<u64> {
    let data = &doc.data()[seg.bytes.start as usize..seg.bytes.end as usize];
    let m = folded.len();
    let eq = |a: u8, b: u8| {
        if fold {
            a.to_ascii_lowercase() == b
        } else {
            a == b
        }
    };
    let mut out = Vec::new();
    if data.len() < m {
        return out;
    }
    for p in 0..=data.len() - m {
        if data[p..p + m].iter().zip(folded).all(|(&a, &b)| eq(a, b)) {
            out.push(seg.bytes.start + p as u64);
        }
    }
    out
}

impl GpuCorpus {
    /// The per-corpus scratch state. Natively a search waits for another
    /// one on the same corpus; in a browser nothing may block, so a second
    /// concurrent search is an error. The holder is assumed to leave result
    /// bits set (`clean` false) unless it says otherwise.
    fn lock_state(&self) -> Result<std::sync::MutexGuard<'_, State>, Error> {
        fn mark(mut st: std::sync::MutexGuard<'_, State>) -> std::sync::MutexGuard<'_, State> {
            st.was_clean = st.clean;
            st.clean = false;
            st
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            Ok(mark(self.state.lock().unwrap_or_else(|p| p.into_inner())))
        }
        #[cfg(target_arch = "wasm32")]
        {
            match self.state.try_lock() {
                Ok(st) => Ok(mark(st)),
                Err(std::sync::TryLockError::Poisoned(p)) => Ok(mark(p.into_inner())),
                Err(std::sync::TryLockError::WouldBlock) => Err(Error::backend(
                    "a GPU search of this corpus is already running",
                )),
            }
        }
    }

    /// Per-document hits from the GPU segments' match counts and line ids,
    /// merged with the CPU's oversized segments, with `-v` and `-m`
    /// applied. Every GPU search path ends here.
    pub(super) fn merge_docs(
        &self,
        corpus: &Corpus,
        q: &Query,
        seg_matched: &[u64],
        mut seg_lines: Vec<Vec<u64>>,
        lines: bool,
        max_count: Option<u64>,
    ) -> Vec<DocHits> {
        let nd = corpus.docs().len();
        let mut matched = vec![0u64; nd];
        let mut ids: Vec<Vec<u64>> = vec![Vec::new(); nd];
        for (i, s) in self.segs.iter().enumerate() {
            matched[s.doc] += seg_matched[i];
            if lines {
                ids[s.doc].append(&mut seg_lines[i]);
            }
        }
        for (di, seg) in &self.cpu_segs {
            let doc = &corpus.docs()[*di];
            let idx = doc.lines();
            crate::cpu::for_each_match(
                q,
                doc.data(),
                seg.bytes.start as usize,
                seg.bytes.end as usize,
                |ls, _| {
                    matched[*di] += 1;
                    if lines {
                        ids[*di].push(idx.line_of(ls as u64));
                    }
                    true
                },
            );
        }
        let mut docs = Vec::with_capacity(nd);
        for di in 0..nd {
            let n_lines = self.shape[di].1;
            if lines {
                let mut v = std::mem::take(&mut ids[di]);
                v.sort_unstable();
                if q.invert() {
                    v = crate::cpu::complement(&v, n_lines);
                }
                if let Some(m) = max_count {
                    v.truncate(m.min(usize::MAX as u64) as usize);
                }
                docs.push(DocHits {
                    count: v.len() as u64,
                    lines: v,
                });
            } else {
                let sel = if q.invert() {
                    n_lines - matched[di]
                } else {
                    matched[di]
                };
                docs.push(DocHits {
                    count: max_count.map_or(sel, |m| sel.min(m)),
                    lines: Vec::new(),
                });
            }
        }
        docs
    }
}

#[cfg(test)]
mod tests {
    /// Every hint is the line holding its block's first byte, across the
    /// parts the hints are built in.
    #[test]
    fn block_hints_name_the_line_of_each_block() {
        // Lines of 1..=300 bytes, 40K of them (several parts of hints at
        // 16-byte blocks).
        let mut local = vec![0u32];
        let mut x = 7u64;
        for _ in 0..40_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            local.push(local.last().unwrap() + 1 + ((x >> 33) % 300) as u32);
        }
        let n_bytes = u64::from(*local.last().unwrap());
        for shift in [4, 6, 12] {
            let blk = super::block_hints(&local, n_bytes, shift);
            assert_eq!(blk.len() as u64, n_bytes.div_ceil(1 << shift) + 1);
            for (k, &l) in blk.iter().enumerate() {
                let p = ((k as u64) << shift).min(n_bytes - 1) as u32;
                let l = l as usize;
                assert!(local[l] <= p && p < local[l + 1], "shift {shift} block {k}");
            }
        }
    }
}
