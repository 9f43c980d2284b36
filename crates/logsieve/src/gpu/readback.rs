//! The last step of a query: per-segment results back to the host, and
//! their merge into per-document hits.
//!
//! A count query reads back 16 bytes per segment (its counters, filled by
//! the pop-count kernels); a query for line ids also reads the result bit
//! sets. Both go into readback buffers made once at upload, each segment at
//! its own offset, so one map (one wait) serves every segment. The merge
//! adds the oversized segments the CPU searched, then applies `-v` and
//! `-m`: every GPU search path ends there.

use std::time::Duration;

use super::segment::ResidentSegment;
use crate::corpus::{Corpus, Segment};
use crate::error::Error;
use crate::query::Query;
use crate::DocHits;

/// The timestamp query set of a compute pass, and where it is resolved
/// and read back.
pub(crate) struct Timestamps {
    query_set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
}

/// The readback buffers of a resident corpus.
pub(crate) struct Readback {
    /// 16 bytes of counters per segment.
    pub(crate) counts: wgpu::Buffer,
    /// Every segment's result bits, at its `bits_at`.
    pub(crate) bits: wgpu::Buffer,
    /// Where the adapter has timestamps.
    pub(crate) timestamps: Option<Timestamps>,
}

/// A mapped range of `buf`, or the readback error.
fn mapped(buf: &wgpu::Buffer, size: u64) -> Result<wgpu::BufferView, Error> {
    buf.get_mapped_range(0..size)
        .map_err(|e| Error::backend(format!("GPU readback failed: {e}")))
}

/// The bytes of the bits readback that hold all `segs`' result bit sets
/// (each at its `bits_at`).
fn bits_size(segs: &[ResidentSegment]) -> u64 {
    segs.iter()
        .map(|s| s.bits_at + u64::from(s.n_words) * 4)
        .max()
        .unwrap_or(0)
}

impl Readback {
    /// The buffers for `segments` segments whose bit sets take
    /// `bits_total` bytes, with the timestamp ones when `timestamps`.
    pub(crate) fn new(
        dev: &wgpu::Device,
        segments: usize,
        bits_total: u64,
        timestamps: bool,
    ) -> Readback {
        let rb = |label: &str, size: u64| {
            dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: (size.max(16)).div_ceil(16) * 16,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let counts = rb("readback counts", segments as u64 * 16);
        let bits = rb("readback bits", bits_total);
        let timestamps = timestamps.then(|| Timestamps {
            query_set: dev.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            }),
            resolve: dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamps resolve"),
                size: 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            readback: rb("readback timestamps", 16),
        });
        Readback {
            counts,
            bits,
            timestamps,
        }
    }

    /// Each buffer with the name [`crate::gpu::GpuCorpus::buffers`]
    /// reports.
    pub(crate) fn named(&self) -> Vec<(&'static str, &wgpu::Buffer)> {
        let mut out = vec![
            ("readback/counts", &self.counts),
            ("readback/bits", &self.bits),
        ];
        if let Some(t) = &self.timestamps {
            out.push(("timestamps/resolve", &t.resolve));
            out.push(("readback/timestamps", &t.readback));
        }
        out
    }

    /// Copies every segment's counters, and with `lines` its result bits,
    /// into the readback buffers.
    pub(crate) fn copy(
        &self,
        enc: &mut wgpu::CommandEncoder,
        segs: &[ResidentSegment],
        lines: bool,
    ) {
        for (i, s) in segs.iter().enumerate() {
            enc.copy_buffer_to_buffer(&s.buffers.counters, 0, &self.counts, i as u64 * 16, 16);
            if lines && s.n_words > 0 {
                enc.copy_buffer_to_buffer(
                    &s.buffers.result_bits,
                    0,
                    &self.bits,
                    s.bits_at,
                    u64::from(s.n_words) * 4,
                );
            }
        }
    }

    /// What a query maps after its submission: the counters, with `lines`
    /// the bit sets, with `timestamps` the pass's times.
    pub(crate) fn maps(
        &self,
        segs: &[ResidentSegment],
        lines: bool,
        timestamps: bool,
    ) -> Vec<(&wgpu::Buffer, u64)> {
        let mut maps = vec![(&self.counts, segs.len() as u64 * 16)];
        if lines {
            maps.push((&self.bits, bits_size(segs)));
        }
        if let Some(t) = self.timestamps.as_ref().filter(|_| timestamps) {
            maps.push((&t.readback, 16));
        }
        maps
    }

    /// Reads the mapped counters of every segment and unmaps them.
    pub(crate) fn read_counts(&self, segs: &[ResidentSegment]) -> Result<Vec<[u32; 4]>, Error> {
        if segs.is_empty() {
            return Ok(Vec::new());
        }
        let out = {
            let v = mapped(&self.counts, segs.len() as u64 * 16)?;
            v.chunks_exact(16)
                .map(|ch| {
                    let w = |k: usize| {
                        u32::from_le_bytes(ch[k * 4..k * 4 + 4].try_into().expect("4 bytes"))
                    };
                    [w(0), w(1), w(2), w(3)]
                })
                .collect()
        };
        self.counts.unmap();
        Ok(out)
    }

    /// The third counter of the first segment's slot (mapped, then
    /// unmapped): brute-byte's appended positions after a one-segment run.
    pub(crate) fn read_first_appended(&self) -> Result<u32, Error> {
        let n = {
            let v = mapped(&self.counts, 16)?;
            u32::from_le_bytes(v[8..12].try_into().expect("4 bytes"))
        };
        self.counts.unmap();
        Ok(n)
    }

    /// Decodes the mapped result bit sets into line ids and unmaps them.
    pub(crate) fn read_bits(&self, segs: &[ResidentSegment]) -> Result<Vec<Vec<u64>>, Error> {
        let size = bits_size(segs);
        if size == 0 {
            return Ok(vec![Vec::new(); segs.len()]);
        }
        let out = {
            let v = mapped(&self.bits, size)?;
            segs.iter()
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
        self.bits.unmap();
        Ok(out)
    }

    /// The pass's timestamp writes, where the adapter has timestamps.
    pub(crate) fn timestamp_writes(&self) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        self.timestamps
            .as_ref()
            .map(|t| wgpu::ComputePassTimestampWrites {
                query_set: &t.query_set,
                beginning_of_pass_write_index: Some(0),
                end_of_pass_write_index: Some(1),
            })
    }

    /// Resolves the pass's timestamps and copies them to their readback.
    pub(crate) fn resolve_timestamps(&self, enc: &mut wgpu::CommandEncoder) {
        if let Some(t) = &self.timestamps {
            enc.resolve_query_set(&t.query_set, 0..2, &t.resolve, 0);
            enc.copy_buffer_to_buffer(&t.resolve, 0, &t.readback, 0, 16);
        }
    }

    /// The timestamp readback and its size, to map.
    pub(crate) fn timestamps_map(&self) -> Option<(&wgpu::Buffer, u64)> {
        self.timestamps.as_ref().map(|t| (&t.readback, 16))
    }

    /// The pass's GPU time from the mapped timestamps (unmapped after),
    /// with `period` nanoseconds per tick.
    pub(crate) fn read_timestamps(&self, period: f32) -> Result<Option<Duration>, Error> {
        let Some(ts) = &self.timestamps else {
            return Ok(None);
        };
        let t = {
            let v = mapped(&ts.readback, 16)?;
            let a = u64::from_le_bytes(v[0..8].try_into().expect("8 bytes"));
            let b = u64::from_le_bytes(v[8..16].try_into().expect("8 bytes"));
            b.saturating_sub(a)
        };
        ts.readback.unmap();
        Ok(Some(Duration::from_nanos(
            (t as f64 * f64::from(period)) as u64,
        )))
    }
}

/// What the GPU found, per segment: the input of [`collect`].
pub(crate) struct PerSegment {
    /// Matching lines of each segment.
    pub(crate) matched: Vec<u64>,
    /// Matching line ids of each segment (when line ids are wanted).
    pub(crate) lines: Option<Vec<Vec<u64>>>,
}

impl PerSegment {
    /// From the counters (matching lines are the first) and the decoded
    /// bit sets, if read.
    pub(crate) fn new(counts: &[[u32; 4]], lines: Option<Vec<Vec<u64>>>) -> PerSegment {
        PerSegment {
            matched: counts.iter().map(|c| u64::from(c[0])).collect(),
            lines,
        }
    }
}

/// What a search found per document before `-v` and `-m`: the matching
/// lines of the lines one part of the corpus holds (a device's shard, the
/// CPU's oversized segments, the host tier). Parts add up
/// ([`RawHits::add`]); [`RawHits::finish`] applies `-v` and `-m` once,
/// over whole documents: the one merge of every GPU path, one device or
/// many (`-m` keeps the first lines in corpus order across shards).
#[derive(Clone, Debug)]
pub(crate) struct RawHits {
    /// Matching lines per document.
    pub(crate) matched: Vec<u64>,
    /// Matching line ids per document, in any order (when line ids are
    /// wanted).
    pub(crate) lines: Option<Vec<Vec<u64>>>,
}

impl RawHits {
    /// Nothing found in `docs` documents.
    pub(crate) fn empty(docs: usize, lines: bool) -> RawHits {
        RawHits {
            matched: vec![0; docs],
            lines: lines.then(|| vec![Vec::new(); docs]),
        }
    }

    /// Adds what another part of the corpus found (disjoint lines).
    pub(crate) fn add(&mut self, other: RawHits) {
        for (a, b) in self.matched.iter_mut().zip(&other.matched) {
            *a += b;
        }
        if let (Some(a), Some(b)) = (&mut self.lines, other.lines) {
            for (x, mut y) in a.iter_mut().zip(b) {
                x.append(&mut y);
            }
        }
    }

    /// Adds the CPU's matches in bytes `bytes` of document `di` (whole
    /// lines).
    pub(crate) fn add_cpu(
        &mut self,
        corpus: &Corpus,
        q: &Query,
        di: usize,
        bytes: std::ops::Range<u64>,
    ) {
        let doc = &corpus.docs()[di];
        let idx = doc.lines();
        let matched = &mut self.matched[di];
        let mut ids = self.lines.as_mut().map(|l| &mut l[di]);
        crate::cpu::for_each_match(
            q,
            doc.data(),
            bytes.start as usize,
            bytes.end as usize,
            |ls, _| {
                *matched += 1;
                if let Some(ids) = ids.as_mut() {
                    ids.push(idx.line_of(ls as u64));
                }
                true
            },
        );
    }

    /// Per-document hits with `-v` and `-m` applied (`n_lines`: each
    /// document's line count). Every line of a document must have been
    /// searched by exactly one part.
    pub(crate) fn finish(
        self,
        n_lines: &[u64],
        invert: bool,
        max_count: Option<u64>,
    ) -> Vec<DocHits> {
        let nd = self.matched.len();
        let mut docs = Vec::with_capacity(nd);
        match self.lines {
            Some(ids) => {
                for (di, mut v) in ids.into_iter().enumerate() {
                    v.sort_unstable();
                    if invert {
                        v = crate::cpu::complement(&v, n_lines[di]);
                    }
                    if let Some(m) = max_count {
                        v.truncate(m.min(usize::MAX as u64) as usize);
                    }
                    docs.push(DocHits {
                        count: v.len() as u64,
                        lines: v,
                        starts: Vec::new(),
                    });
                }
            }
            None => {
                for (&matched, &n) in self.matched.iter().zip(n_lines) {
                    let sel = if invert { n - matched } else { matched };
                    docs.push(DocHits {
                        count: max_count.map_or(sel, |m| sel.min(m)),
                        lines: Vec::new(),
                        starts: Vec::new(),
                    });
                }
            }
        }
        docs
    }
}

/// Lines that hold a required literal of a query: what the GPU's tier 1
/// found (`support::prefilter_support`). A *prefilter's* answer: every
/// line that matches the query is among them (no false negatives), but a
/// candidate may not match (false positives), so the only way to results
/// is [`Candidates::verify`].
#[derive(Clone, Debug)]
pub(crate) struct Candidates(RawHits);

impl Candidates {
    /// What a literal kernel found for the required literals, with line
    /// ids (the lines a part of the corpus holds).
    pub(crate) fn unverified(raw: RawHits) -> Result<Candidates, crate::Error> {
        if raw.lines.is_none() {
            return Err(crate::Error::backend(
                "GPU prefilter: the literal search returned no line ids",
            ));
        }
        Ok(Candidates(raw))
    }

    /// Candidate lines, over all documents.
    pub(crate) fn len(&self) -> u64 {
        self.0.matched.iter().sum()
    }

    /// The candidates that match `q` (before `-v`), each line checked by
    /// the query's CPU matcher ([`Query::is_match_line`]); on rayon's pool
    /// of `threads` threads when there are many. Line ids are kept when
    /// `lines`, else only the counts.
    pub(crate) fn verify(self, corpus: &Corpus, q: &Query, lines: bool, threads: usize) -> RawHits {
        use rayon::prelude::*;
        // Below this many candidates one thread verifies faster than a
        // pool wakes up (~0.4 us a line against ~20 us to fan out).
        const PARALLEL_MIN: usize = 4096;
        let ids = self.0.lines.unwrap_or_default();
        let threads = crate::cpu::resolve_threads(threads);
        let mut out = RawHits::empty(corpus.docs().len(), lines);
        for (di, cand) in ids.into_iter().enumerate() {
            let doc = &corpus.docs()[di];
            let keep = |&&i: &&u64| q.is_match_line(doc.line(i));
            let confirmed: Vec<u64> = match crate::cpu::pool(threads) {
                Some(pool) if threads > 1 && cand.len() >= PARALLEL_MIN => pool.install(|| {
                    cand.par_iter()
                        .with_min_len(1024)
                        .filter(|i| keep(i))
                        .copied()
                        .collect()
                }),
                _ => cand.iter().filter(keep).copied().collect(),
            };
            out.matched[di] = confirmed.len() as u64;
            if let Some(l) = out.lines.as_mut() {
                l[di] = confirmed;
            }
        }
        out
    }
}

/// What the GPU segments `segs` found, with the CPU's oversized segments
/// `cpu_segs`, before `-v` and `-m`.
pub(crate) fn collect(
    corpus: &Corpus,
    q: &Query,
    segs: &[ResidentSegment],
    cpu_segs: &[(usize, Segment)],
    found: PerSegment,
) -> RawHits {
    let lines = found.lines.is_some();
    let mut seg_lines = found.lines.unwrap_or_default();
    let mut raw = RawHits::empty(corpus.docs().len(), lines);
    for (i, s) in segs.iter().enumerate() {
        raw.matched[s.doc] += found.matched[i];
        if let Some(ids) = raw.lines.as_mut() {
            ids[s.doc].append(&mut seg_lines[i]);
        }
    }
    for (di, seg) in cpu_segs {
        raw.add_cpu(corpus, q, *di, seg.bytes.clone());
    }
    raw
}

/// A pass's kernel time as the query traces print it
/// (`GpuTuning::trace_queries`): microseconds, or `-` without timestamps.
pub(crate) fn trace_kernel(k: Option<Duration>) -> String {
    k.map_or("-".into(), |k| format!("{:.1} us", k.as_secs_f64() * 1e6))
}
