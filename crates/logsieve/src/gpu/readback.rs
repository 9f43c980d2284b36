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

/// The bytes of all `segs`' result bit sets.
fn bits_size(segs: &[ResidentSegment]) -> u64 {
    segs.iter().map(|s| u64::from(s.n_words) * 4).sum()
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

/// What the GPU found, per segment: the input of [`merge_docs`].
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

/// Per-document hits from the GPU segments' results, merged with the
/// CPU's oversized segments `cpu_segs`, with `-v` and `-m` applied.
/// `shape`: each document's bytes and lines.
pub(crate) fn merge_docs(
    corpus: &Corpus,
    q: &Query,
    segs: &[ResidentSegment],
    cpu_segs: &[(usize, Segment)],
    shape: &[(u64, u64)],
    found: PerSegment,
    max_count: Option<u64>,
) -> Vec<DocHits> {
    let lines = found.lines.is_some();
    let mut seg_lines = found.lines.unwrap_or_default();
    let seg_matched = found.matched;
    let nd = corpus.docs().len();
    let mut matched = vec![0u64; nd];
    let mut ids: Vec<Vec<u64>> = vec![Vec::new(); nd];
    for (i, s) in segs.iter().enumerate() {
        matched[s.doc] += seg_matched[i];
        if lines {
            ids[s.doc].append(&mut seg_lines[i]);
        }
    }
    for (di, seg) in cpu_segs {
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
        let n_lines = shape[di].1;
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
                starts: Vec::new(),
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
                starts: Vec::new(),
            });
        }
    }
    docs
}
