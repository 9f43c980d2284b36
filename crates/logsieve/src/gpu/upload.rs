//! The upload step: the corpus into GPU memory, once.
//!
//! Each document is cut into segments no larger than one storage binding
//! (and no more lines than a per-line array binding holds); a line too
//! large for a binding becomes an oversized segment that the CPU searches.
//! For each GPU segment the host builds its line offsets and block hints
//! and creates its typed buffers ([`SegmentBuffers`]); then the bytes are
//! staged through wgpu's own staging memory in chunks, each filled on all
//! cores while the previous ones copy.

use std::ops::Range;
use std::time::Duration;

// `std::time::Instant` panics on wasm32; this is the same type natively.
use web_time::Instant;

use super::context::Ctx;
use super::segment::{ResidentSegment, SegmentBuffers};
use crate::corpus::{Corpus, Document, Segment};
use crate::error::Error;

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
    /// The largest segment in bytes. `None`: the context's
    /// [`GpuTuning::max_segment`](crate::gpu::GpuTuning::max_segment) if
    /// set, else the adapter's `max_storage_buffer_binding_size` (less
    /// padding). Tests set it small to force many segments.
    pub max_segment: Option<u64>,
    /// The staging chunk in bytes (default 8 MiB). Tests set it small so
    /// that the upload waits for chunks in flight many times.
    pub staging_chunk: Option<u64>,
    /// Staging chunks in flight (default 3, at least 1).
    pub staging_slots: Option<usize>,
    /// log2 of the bytes per line hint (default 6; clamped to 4..=16).
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

pub(crate) fn round_up(x: u64, to: u64) -> u64 {
    x.div_ceil(to) * to
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

/// The corpus cut into segments, each indexed and given its buffers (the
/// bytes not yet staged).
pub(crate) struct Planned {
    pub(crate) segments: Vec<ResidentSegment>,
    /// Segments holding one line too large for a binding: searched on the
    /// CPU and merged.
    pub(crate) cpu_segments: Vec<(usize, Segment)>,
    /// Each document's size and line count.
    pub(crate) shape: Vec<(u64, u64)>,
    /// Bytes of every segment's result bits together (the bits readback).
    pub(crate) bits_total: u64,
}

/// `s` cut to the lines `r` of its document (line starts `starts`,
/// document length `len`), or `None` when they do not meet.
fn clip(s: &Segment, r: &Range<u64>, starts: &[u64], len: u64) -> Option<Segment> {
    let lo = s.lines.start.max(r.start);
    let hi = s.lines.end.min(r.end);
    if lo >= hi {
        return None;
    }
    if lo == s.lines.start && hi == s.lines.end {
        return Some(s.clone());
    }
    Some(Segment {
        lines: lo..hi,
        bytes: starts[lo as usize].min(len)..starts[hi as usize].min(len),
        oversized: s.oversized,
    })
}

/// The segment limits of a context: the largest segment in bytes, the
/// most lines of one segment, and log2 of the bytes per block hint.
pub(crate) struct Limits {
    pub(crate) max_seg: u64,
    pub(crate) max_lines: u64,
    pub(crate) blk_shift: u64,
}

/// The limits for `c` with `opts` (a `max_segment` of `None` falls back
/// to the context's tuning, then to the binding limit).
pub(crate) fn limits(c: &Ctx, opts: &UploadOptions) -> Limits {
    let bind_max = c
        .info
        .max_storage_buffer_binding_size
        .min(c.info.max_buffer_size);
    let requested = opts
        .max_segment
        .or(c.tuning.max_segment)
        .unwrap_or(u64::MAX);
    // u32 offsets with i32 arithmetic in the kernels: stay below 2 GiB.
    // (The context guarantees bind_max >= 64 KiB, so cap >= 1.)
    let cap = bind_max.saturating_sub(TAIL_PAD + 16).min((1 << 31) - 4096);
    Limits {
        max_seg: requested.clamp(1, cap),
        max_lines: (bind_max / 16).saturating_sub(1).max(1),
        blk_shift: u64::from(opts.block_shift.unwrap_or(BLK_SHIFT).clamp(4, 16)),
    }
}

/// Plans the segments of `corpus` for the context `c` and creates each
/// one's buffers, its line offsets and block hints uploaded. A `max_segment`
/// of `None` in `opts` falls back to the context's tuning. With `holds`,
/// only those lines (document, line range) are planned: a shard of a
/// corpus spread over several devices; the other lines are not this
/// corpus's (neither uploaded nor searched on the CPU here).
pub(crate) fn plan(
    c: &Ctx,
    corpus: &Corpus,
    opts: &UploadOptions,
    holds: Option<&[(usize, Range<u64>)]>,
) -> Planned {
    let Limits {
        max_seg,
        max_lines,
        blk_shift,
    } = limits(c, opts);
    let mut segs = Vec::new();
    let mut cpu_segs = Vec::new();
    let mut shape = Vec::new();
    let mut bits_at = 0u64;
    for (di, doc) in corpus.docs().iter().enumerate() {
        shape.push((doc.data().len() as u64, doc.lines().len()));
        let starts = doc.lines().starts();
        let len = doc.data().len() as u64;
        let mine: Option<Vec<&Range<u64>>> =
            holds.map(|h| h.iter().filter(|(d, _)| *d == di).map(|(_, r)| r).collect());
        if mine.as_ref().is_some_and(|m| m.is_empty()) {
            continue;
        }
        let planned = plan_segments(doc, max_seg, max_lines);
        let clipped: Vec<Segment> = match &mine {
            None => planned,
            Some(m) => planned
                .iter()
                .flat_map(|s| m.iter().filter_map(|r| clip(s, r, starts, len)))
                .collect(),
        };
        for s in clipped {
            if s.oversized {
                cpu_segs.push((di, s));
                continue;
            }
            let seg = new_segment(c, di, &s, starts, blk_shift, None, bits_at);
            bits_at += u64::from(seg.cap_words) * 4;
            segs.push(seg);
        }
    }
    Planned {
        segments: segs,
        cpu_segments: cpu_segs,
        shape,
        bits_total: bits_at,
    }
}

/// Room a segment opened for appended lines keeps: its bytes and lines.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Room {
    pub(crate) bytes: u64,
    pub(crate) lines: u64,
}

/// The GPU segment of document `di` holding `s` (line starts `starts`
/// of the document), its buffers created, its line offsets and block
/// hints written (not its bytes: [`stage`] or [`fill_segment`]). With
/// `room`, every buffer is sized for that many bytes and lines, so that
/// appended lines fill it in place ([`grow_segment`]).
pub(crate) fn new_segment(
    c: &Ctx,
    di: usize,
    s: &Segment,
    starts: &[u64],
    blk_shift: u64,
    room: Option<Room>,
    bits_at: u64,
) -> ResidentSegment {
    let dev = &c.device;
    let base = s.bytes.start;
    let n_bytes = s.bytes.end - base;
    let n_lines = s.lines.end - s.lines.start;
    let local: Vec<u32> = starts[s.lines.start as usize..=s.lines.end as usize]
        .iter()
        .map(|&x| (x - base) as u32)
        .collect();
    let blk = block_hints(&local, n_bytes, blk_shift);
    let n_words = n_lines.div_ceil(32);
    let (cap_bytes, cap_lines) = room.map_or((n_bytes, n_lines), |r| {
        (r.bytes.max(n_bytes), r.lines.max(n_lines))
    });
    let cap_words = cap_lines.div_ceil(32);
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
    // A segment without room gets buffers of its contents' size; one with
    // room, buffers of its capacity, written after.
    let init = |label: &str, words: &[u32], cap_words: u64, usage| {
        let contents: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        if room.is_none() {
            return c.buffer_with(label, &contents, usage);
        }
        let b = mk(label, cap_words * 4, usage | wgpu::BufferUsages::COPY_DST);
        write_padded(c, &b, 0, &contents);
        b
    };
    // Created in the order of their bindings' names in
    // `SegmentBuffers::named`.
    let data = mk(
        "data",
        round_up(cap_bytes, 16) + TAIL_PAD,
        storage | wgpu::BufferUsages::COPY_DST,
    );
    let starts_buf = init("starts", &local, cap_lines + 1, storage);
    let block_hints = init("blk", &blk, cap_bytes.div_ceil(1 << blk_shift) + 1, storage);
    let candidates = mk("cand", cap_words * 4, bits);
    let result_bits = mk("result", cap_words * 4, bits);
    let counters = mk("counters", 16, bits);
    let params = init(
        "seg",
        &[
            n_bytes as u32,
            n_lines as u32,
            n_words as u32,
            blk_shift as u32,
        ],
        4,
        wgpu::BufferUsages::UNIFORM,
    );
    ResidentSegment {
        doc: di,
        lines: s.lines.clone(),
        bytes: s.bytes.clone(),
        n_bytes: n_bytes as u32,
        n_lines: n_lines as u32,
        n_words: n_words as u32,
        cap_bytes: cap_bytes as u32,
        cap_lines: cap_lines as u32,
        cap_words: cap_words as u32,
        buffers: SegmentBuffers {
            params,
            data,
            starts: starts_buf,
            block_hints,
            candidates,
            result_bits,
            counters,
        },
        bits_at,
    }
}

/// Writes `bytes` at `offset` of `buf` (both multiples of 4 after
/// padding `bytes` with zeros), through the queue: applied before the next
/// submission. Returns the bytes written.
fn write_padded(c: &Ctx, buf: &wgpu::Buffer, offset: u64, bytes: &[u8]) -> u64 {
    if bytes.is_empty() {
        return 0;
    }
    let mut v = bytes.to_vec();
    v.resize(round_up(v.len() as u64, 4) as usize, 0);
    c.queue.write_buffer(buf, offset, &v);
    v.len() as u64
}

/// Writes the bytes of `doc` from the segment's byte `from` to its end,
/// then '\n' padding to the end of what the kernels read past it, into
/// its `data` buffer. `from` is rounded down to 4 (the queue's copy
/// alignment): those bytes are written again with the values they hold.
/// Returns the bytes written.
pub(crate) fn fill_segment(c: &Ctx, s: &ResidentSegment, doc: &[u8], from: u64) -> u64 {
    let from = from & !3;
    let n = u64::from(s.n_bytes);
    let end = (round_up(n, 16) + TAIL_PAD).min(s.buffers.data.size());
    let mut v = Vec::with_capacity((end - from) as usize);
    let src = (s.bytes.start + from) as usize..(s.bytes.start + n) as usize;
    v.extend_from_slice(&doc[src]);
    v.resize((end - from) as usize, b'\n');
    c.queue.write_buffer(&s.buffers.data, from, &v);
    v.len() as u64
}

/// Appends the lines `s.lines.end..last` of the document (bytes `doc`,
/// line starts `starts`) to segment `s`, which has room for them: its
/// bytes, line offsets, block hints and uniform are written past what it
/// holds, nothing before. Returns the bytes written to the device.
pub(crate) fn grow_segment(
    c: &Ctx,
    s: &mut ResidentSegment,
    doc: &[u8],
    starts: &[u64],
    last: u64,
    blk_shift: u64,
) -> u64 {
    let len = doc.len() as u64;
    let base = s.bytes.start;
    let old_n = u64::from(s.n_bytes);
    let old_lines = u64::from(s.n_lines);
    let end = starts[last as usize].min(len);
    let new_n = end - base;
    let new_lines = last - s.lines.start;
    debug_assert!(new_n <= u64::from(s.cap_bytes) && new_lines <= u64::from(s.cap_lines));
    s.lines.end = last;
    s.bytes.end = end;
    s.n_bytes = new_n as u32;
    s.n_lines = new_lines as u32;
    s.n_words = new_lines.div_ceil(32) as u32;
    let mut written = fill_segment(c, s, doc, old_n);
    // The line offsets past the old end (its sentinel rewritten).
    let first = s.lines.start as usize;
    let local: Vec<u8> = starts[first + old_lines as usize..=last as usize]
        .iter()
        .flat_map(|&x| ((x - base) as u32).to_le_bytes())
        .collect();
    written += write_padded(c, &s.buffers.starts, old_lines * 4, &local);
    // The block hints from the first block that started past the old end
    // (the old last entry pointed at the old last byte).
    let seg_starts = &starts[first..=last as usize];
    let k0 = old_n.div_ceil(1 << blk_shift);
    let nb = new_n.div_ceil(1 << blk_shift) + 1;
    let hints: Vec<u8> = (k0..nb)
        .flat_map(|k| {
            let p = (k << blk_shift).min(new_n.saturating_sub(1));
            let li = seg_starts
                .partition_point(|&x| x - base <= p)
                .saturating_sub(1);
            (li as u32).to_le_bytes()
        })
        .collect();
    written += write_padded(c, &s.buffers.block_hints, k0 * 4, &hints);
    let prm: Vec<u8> = [s.n_bytes, s.n_lines, s.n_words, blk_shift as u32]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    written += write_padded(c, &s.buffers.params, 0, &prm);
    written
}

/// Stages every segment's bytes (then '\n' padding) into its `data`
/// buffer, calling `progress(bytes_staged, bytes_total)` after each chunk
/// is submitted, and waits for the copies.
pub(crate) async fn stage(
    c: &Ctx,
    corpus: &Corpus,
    segs: &[ResidentSegment],
    opts: &UploadOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<UploadStats, Error> {
    let dev = &c.device;
    let mut pieces: Vec<(usize, Range<u64>)> = Vec::new();
    for (si, s) in segs.iter().enumerate() {
        let size = s.buffers.data.size();
        let mut off = 0;
        while off < size {
            let n = opts
                .staging_chunk
                .map_or(STAGING_CHUNK, |c| round_up(c.max(16), 16))
                .min(size - off);
            pieces.push((si, off..off + n));
            off += n;
        }
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
                .and_then(|n| c.queue.write_buffer_with(&s.buffers.data, r.start, n))
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
    Ok(us)
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
