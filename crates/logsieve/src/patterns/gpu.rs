//! Lines grouped by shape ([`super::shape`]) on the GPU that holds the
//! corpus, in two passes over the picked lines' segments:
//!
//! 1. `shape_key` hashes each line's shape into 64 bits, one thread per
//!    line; the host reads the keys back (8 bytes a line) and groups the
//!    picked lines by key on every core, in order of their first line.
//! 2. `shape_mark` reads each picked line beside its group's first line
//!    (the first lines copied into one small buffer), token by token, and
//!    marks per group the digit tokens whose values differ, and any line
//!    whose shape is not its group's.
//!
//! So the host never reads the lines: it merges keys and reads the marks of
//! a few hundred groups. Grouping stays exact: a key shared by two shapes
//! is found by the second pass, and then the caller groups on the CPU
//! ([`Refused`]), as it does when a picked line is held on the host (an
//! oversized line). A group with a varying digit token past the 64th of
//! its line (64 bits of marks) has its lines compared on the host.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::time::Duration;

use web_time::Instant;

use rayon::prelude::*;

use super::shape::{self, Group, Shapes};
use super::tokens::is_delimiter;
use crate::corpus::Corpus;
use crate::error::Error;
use crate::gpu::pipelines::buffer_entry as entry;
use crate::gpu::GpuCorpus;

/// The kernels' WGSL (the delimiter masks are prepended, [`source`]).
const WGSL: &str = include_str!("shape.wgsl");
/// `marks`' flags, as the WGSL's.
const F_OTHER: u32 = 1;
const F_WIDE: u32 = 2;

/// The flags of group `g` in the marks read back.
fn flags_of(m: &[u32], g: u32) -> u32 {
    m[3 * g as usize + 2]
}

/// Lines one thread groups before the parts are merged.
const PART: usize = 16_384;
/// Workgroups of one dispatch at most (threads stride over the lines).
const MAX_GROUPS: u32 = 4096;

/// Why the GPU left the grouping to the CPU (the answer is the same).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// A picked line is held on the host (longer than a segment).
    HostLine,
    /// Two shapes share a key, or a line's shape is not its group's.
    Collision,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Refused::HostLine => "a picked line is held on the host",
            Refused::Collision => "two shapes share a key",
        })
    }
}

/// The keys are hashes already: used as they are.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

type KeyMap<V> = HashMap<u64, V, BuildHasherDefault<KeyHasher>>;

/// The WGSL with the delimiter masks of [`is_delimiter`] (bytes 32..127,
/// 32 to a word) prepended: the tokenizer's one definition.
fn source() -> String {
    let mask = |from: u8| -> u32 {
        (0..32u8).fold(0, |m, i| match is_delimiter(from + i) {
            true => m | 1 << i,
            false => m,
        })
    };
    format!(
        "const D1: u32 = {}u;\nconst D2: u32 = {}u;\nconst D3: u32 = {}u;\n{WGSL}",
        mask(32),
        mask(64),
        mask(96)
    )
}

/// The shape kernels of one GPU context, compiled once.
pub(crate) struct ShapeKernels {
    key_layout: wgpu::BindGroupLayout,
    mark_layout: wgpu::BindGroupLayout,
    key: wgpu::ComputePipeline,
    mark: wgpu::ComputePipeline,
}

impl ShapeKernels {
    pub(crate) fn new(g: &GpuCorpus) -> ShapeKernels {
        let dev = &g.context().inner.device;
        let ro = wgpu::BufferBindingType::Storage { read_only: true };
        let rw = wgpu::BufferBindingType::Storage { read_only: false };
        let uni = wgpu::BufferBindingType::Uniform;
        let layout = |label, entries: &[wgpu::BindGroupLayoutEntry]| {
            dev.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some(label),
                entries,
            })
        };
        let key_layout = layout(
            "shape key",
            &[entry(0, uni), entry(1, ro), entry(2, ro), entry(3, rw)],
        );
        let mark_layout = layout(
            "shape mark",
            &[
                entry(0, uni),
                entry(1, ro),
                entry(2, ro),
                entry(4, ro),
                entry(5, ro),
                entry(6, ro),
                entry(7, rw),
            ],
        );
        let module = dev.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("shape"),
            source: wgpu::ShaderSource::Wgsl(source().into()),
        });
        let pipe = |l: &wgpu::BindGroupLayout, ep: &str| {
            let pl = dev.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(ep),
                bind_group_layouts: &[Some(l)],
                immediate_size: 0,
            });
            crate::gpu::pipelines::compute_pipeline(dev, &pl, &module, ep, &[])
        };
        ShapeKernels {
            key: pipe(&key_layout, "shape_key"),
            mark: pipe(&mark_layout, "shape_mark"),
            key_layout,
            mark_layout,
        }
    }
}

/// A segment holding picked lines.
struct Used {
    n_lines: u32,
    info: wgpu::Buffer,
    data: wgpu::Buffer,
    starts: wgpu::Buffer,
    /// Its first word in the keys' readback.
    at: u64,
}

fn words(w: &[u32]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Groups `picked` (per document, in the order given, its lines in
/// ascending order) of `corpus`, resident as `g`, by shape: the same
/// [`Shapes`] as [`shape::group`] over those lines, `first` and `of_line`
/// indexing them in that order; or why the CPU must group them.
pub(crate) fn group(
    k: &ShapeKernels,
    g: &GpuCorpus,
    corpus: &Corpus,
    picked: &[(usize, Vec<u64>)],
) -> Result<Result<Shapes, Refused>, Error> {
    g.check_whole()?;
    g.pipeline_check(corpus)?;
    let t0 = Instant::now();
    let segs = g.pipeline_segments();
    // Each picked line's segment and its index there (seg << 32 | line).
    let mut by_doc: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, s) in segs.iter().enumerate() {
        by_doc.entry(s.doc).or_default().push(i);
    }
    let mut loc: Vec<u64> = Vec::with_capacity(picked.iter().map(|p| p.1.len()).sum());
    for (doc, lines) in picked {
        let mine: &[usize] = by_doc.get(doc).map_or(&[], |v| v);
        let part: Option<Vec<u64>> = lines
            .par_iter()
            .map(|&l| {
                let j = mine.partition_point(|&s| segs[s].lines.end <= l);
                let s = *mine.get(j)?;
                let r = &segs[s].lines;
                (r.start <= l).then(|| ((s as u64) << 32) | (l - r.start))
            })
            .collect();
        match part {
            Some(p) => loc.extend(p),
            None => return Ok(Err(Refused::HostLine)),
        }
    }
    if loc.is_empty() {
        return Ok(Ok(Shapes::default()));
    }
    let c = &*g.context().inner;
    let dev = &c.device;
    let mut wanted = vec![false; segs.len()];
    for &x in &loc {
        wanted[(x >> 32) as usize] = true;
    }
    let mut used: Vec<Used> = Vec::new();
    let mut slot = vec![usize::MAX; segs.len()];
    let mut words_at = 0u64;
    for (i, s) in segs.iter().enumerate() {
        if !wanted[i] {
            continue;
        }
        let n_lines = (s.lines.end - s.lines.start) as u32;
        let threads = n_lines.div_ceil(256).clamp(1, MAX_GROUPS) * 256;
        slot[i] = used.len();
        used.push(Used {
            n_lines,
            info: c.buffer_with(
                "shape info",
                &words(&[n_lines, threads, 0, 0]),
                wgpu::BufferUsages::UNIFORM,
            ),
            data: s.data.clone(),
            starts: s.starts.clone(),
            at: words_at,
        });
        words_at += 2 * u64::from(n_lines);
    }
    let storage = wgpu::BufferUsages::STORAGE;
    let buf = |label, size: u64, usage| {
        dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: size.max(16).next_multiple_of(16),
            usage,
            mapped_at_creation: false,
        })
    };
    let bind = |layout, entries: &[wgpu::BindGroupEntry]| {
        dev.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("shape"),
            layout,
            entries,
        })
    };
    fn e(binding: u32, b: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
        wgpu::BindGroupEntry {
            binding,
            resource: b.as_entire_binding(),
        }
    }
    let dispatch = |enc: &mut wgpu::CommandEncoder,
                    pipe: &wgpu::ComputePipeline,
                    binds: &[wgpu::BindGroup]| {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("shape"),
            timestamp_writes: None,
        });
        pass.set_pipeline(pipe);
        for (u, b) in used.iter().zip(binds) {
            pass.set_bind_group(0, b, &[]);
            pass.dispatch_workgroups(u.n_lines.div_ceil(256).clamp(1, MAX_GROUPS), 1, 1);
        }
    };
    pollster::block_on(
        c.scoped_as("grouping lines by shape", "shape grouping", async {
            // Pass 1: the keys.
            let keys: Vec<wgpu::Buffer> = used
                .iter()
                .map(|u| {
                    buf(
                        "shape keys",
                        8 * u64::from(u.n_lines),
                        storage | wgpu::BufferUsages::COPY_SRC,
                    )
                })
                .collect();
            let rb = buf(
                "shape keys readback",
                4 * words_at,
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            );
            let binds: Vec<wgpu::BindGroup> = used
                .iter()
                .zip(&keys)
                .map(|(u, kb)| {
                    bind(
                        &k.key_layout,
                        &[e(0, &u.info), e(1, &u.data), e(2, &u.starts), e(3, kb)],
                    )
                })
                .collect();
            g.pipeline_submit(None, |enc| {
                dispatch(enc, &k.key, &binds);
                for (u, kb) in used.iter().zip(&keys) {
                    enc.copy_buffer_to_buffer(kb, 0, &rb, 4 * u.at, 8 * u64::from(u.n_lines));
                }
            })?;
            c.map_many(&[(&rb, 4 * words_at)])?;
            let key: Vec<u64> = {
                let v = rb
                    .get_mapped_range(0..4 * words_at)
                    .map_err(|e| Error::backend(format!("GPU readback failed: {e}")))?;
                let w: &[u8] = &v;
                loc.par_iter()
                    .map(|&x| {
                        let u = &used[slot[(x >> 32) as usize]];
                        let i = (u.at + 2 * (x & 0xffff_ffff)) as usize * 4;
                        let lo = u32::from_le_bytes(w[i..i + 4].try_into().expect("4 bytes"));
                        let hi = u32::from_le_bytes(w[i + 4..i + 8].try_into().expect("4 bytes"));
                        (u64::from(hi) << 32) | u64::from(lo)
                    })
                    .collect()
            };
            rb.unmap();
            let t_keys = t0.elapsed();
            // The groups, in order of their first line.
            let (firsts, of_line) = group_keys(&key);
            let t_grouped = t0.elapsed();
            // Pass 2: each picked line beside its group's first line.
            // Per segment line, its group as the kernel reads it (bytes,
            // so that the upload copies nothing more; 0xff bytes are the
            // kernel's NONE, a line not picked).
            let mut gid: Vec<Vec<u8>> = used
                .iter()
                .map(|u| vec![0xff; 4 * u.n_lines as usize])
                .collect();
            for (&x, &gi) in loc.iter().zip(&of_line) {
                let at = 4 * (x & 0xffff_ffff) as usize;
                gid[slot[(x >> 32) as usize]][at..at + 4].copy_from_slice(&gi.to_le_bytes());
            }
            let line_of = |i: usize| {
                let x = loc[i];
                let s = &segs[(x >> 32) as usize];
                shape::bare(corpus.docs()[s.doc].line(s.lines.start + (x & 0xffff_ffff)))
            };
            let mut reps: Vec<u8> = Vec::new();
            let mut rep_at: Vec<u32> = Vec::with_capacity(2 * firsts.len());
            for &(first, _) in &firsts {
                rep_at.push(reps.len() as u32);
                reps.extend_from_slice(line_of(first));
                rep_at.push(reps.len() as u32);
            }
            reps.resize(reps.len().next_multiple_of(16) + 16, b'\n');
            let gid_bufs: Vec<wgpu::Buffer> = gid
                .iter()
                .map(|v| {
                    let b = buf(
                        "shape groups",
                        v.len() as u64,
                        storage | wgpu::BufferUsages::COPY_DST,
                    );
                    c.queue.write_buffer(&b, 0, v);
                    b
                })
                .collect();
            let reps_buf = c.buffer_with("shape firsts", &reps, storage);
            let rep_at_buf = c.buffer_with("shape first ranges", &words(&rep_at), storage);
            let marks_size = 12 * firsts.len() as u64;
            let marks = buf(
                "shape marks",
                marks_size,
                storage | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            );
            let marks_rb = buf(
                "shape marks readback",
                marks_size,
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            );
            let binds: Vec<wgpu::BindGroup> = used
                .iter()
                .zip(&gid_bufs)
                .map(|(u, gb)| {
                    bind(
                        &k.mark_layout,
                        &[
                            e(0, &u.info),
                            e(1, &u.data),
                            e(2, &u.starts),
                            e(4, gb),
                            e(5, &reps_buf),
                            e(6, &rep_at_buf),
                            e(7, &marks),
                        ],
                    )
                })
                .collect();
            g.pipeline_submit(None, |enc| {
                enc.clear_buffer(&marks, 0, None);
                dispatch(enc, &k.mark, &binds);
                enc.copy_buffer_to_buffer(&marks, 0, &marks_rb, 0, marks_size);
            })?;
            c.map_many(&[(&marks_rb, marks_size)])?;
            let m: Vec<u32> = {
                let v = marks_rb
                    .get_mapped_range(0..marks_size)
                    .map_err(|e| Error::backend(format!("GPU readback failed: {e}")))?;
                v.chunks_exact(4)
                    .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
                    .collect()
            };
            marks_rb.unmap();
            let t_marked = t0.elapsed();
            let mut groups = Vec::with_capacity(firsts.len());
            let mut wide = Vec::new();
            for (gi, &(first, count)) in firsts.iter().enumerate() {
                let (lo, hi, flags) = (m[3 * gi], m[3 * gi + 1], m[3 * gi + 2]);
                if flags & F_OTHER != 0 {
                    return Ok(Err(Refused::Collision));
                }
                if flags & F_WIDE != 0 {
                    wide.push(gi);
                }
                let (tokens, digits) = shape::digit_tokens(line_of(first));
                let mut varies = vec![false; tokens as usize];
                let bits = (u64::from(hi) << 32) | u64::from(lo);
                for (ord, d) in digits.iter().enumerate().take(64) {
                    if bits >> ord & 1 == 1 {
                        varies[d[2] as usize] = true;
                    }
                }
                groups.push(Group {
                    first,
                    count,
                    varies,
                });
            }
            // A varying digit token past the 64th: that group's lines are
            // compared with its first line here (their shape is its shape).
            if !wide.is_empty() {
                let mut members: Vec<Vec<usize>> = vec![Vec::new(); firsts.len()];
                for (i, &gi) in of_line.iter().enumerate() {
                    if flags_of(&m, gi) & F_WIDE != 0 {
                        members[gi as usize].push(i);
                    }
                }
                for gi in wide {
                    let g = &mut groups[gi];
                    let a = line_of(g.first);
                    let (_, da) = shape::digit_tokens(a);
                    for &i in &members[gi] {
                        let b = line_of(i);
                        let (_, db) = shape::digit_tokens(b);
                        for (x, y) in da.iter().zip(&db) {
                            if a[x[0] as usize..x[1] as usize] != b[y[0] as usize..y[1] as usize] {
                                g.varies[x[2] as usize] = true;
                            }
                        }
                    }
                }
            }
            if c.tuning.trace_queries {
                let ms = |d: Duration| d.as_secs_f64() * 1e3;
                eprintln!(
                    "logsieve: shape grouping: {} lines, {} groups; keys read at {:.2} ms, \
                 grouped at {:.2} ms, marks read at {:.2} ms, done at {:.2} ms",
                    loc.len(),
                    groups.len(),
                    ms(t_keys),
                    ms(t_grouped),
                    ms(t_marked),
                    ms(t0.elapsed())
                );
            }
            Ok(Ok(Shapes { groups, of_line }))
        }),
    )
}

/// The groups of `key` (one per picked line): each group's first line and
/// its line count, in order of first lines, and each line's group.
fn group_keys(key: &[u64]) -> (Vec<(usize, u64)>, Vec<u32>) {
    // Each part's keys in order of their first line there.
    let parts: Vec<Vec<(u64, usize, u64)>> = key
        .par_chunks(PART)
        .enumerate()
        .map(|(p, c)| {
            let mut at: KeyMap<usize> = KeyMap::default();
            let mut out: Vec<(u64, usize, u64)> = Vec::new();
            for (i, &k) in c.iter().enumerate() {
                match at.get(&k) {
                    Some(&j) => out[j].2 += 1,
                    None => {
                        at.insert(k, out.len());
                        out.push((k, p * PART + i, 1));
                    }
                }
            }
            out
        })
        .collect();
    let mut id: KeyMap<u32> = KeyMap::default();
    let mut firsts: Vec<(usize, u64)> = Vec::new();
    for part in parts {
        for (k, first, n) in part {
            match id.get(&k) {
                Some(&g) => firsts[g as usize].1 += n,
                None => {
                    id.insert(k, firsts.len() as u32);
                    firsts.push((first, n));
                }
            }
        }
    }
    let of_line = key.par_iter().map(|k| id[k]).collect();
    (firsts, of_line)
}

#[cfg(test)]
mod tests {
    #[test]
    fn wgsl_validates_with_naga() {
        let src = super::source();
        let module = naga::front::wgsl::parse_str(&src)
            .unwrap_or_else(|e| panic!("{}", e.emit_to_string(&src)));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        )
        .validate(&module)
        .unwrap_or_else(|e| panic!("{}", e.emit_to_string(&src)));
    }

    #[test]
    fn keys_group_in_order_of_first_lines() {
        let key: Vec<u64> = (0..100_000u64).map(|i| (i * 7919) % 13).collect();
        let (firsts, of_line) = super::group_keys(&key);
        assert_eq!(firsts.len(), 13);
        for (g, &(first, n)) in firsts.iter().enumerate() {
            assert_eq!(of_line[first] as usize, g);
            assert!(key[..first].iter().all(|&k| k != key[first]));
            assert_eq!(n, key.iter().filter(|&&k| k == key[first]).count() as u64);
        }
        for (i, &g) in of_line.iter().enumerate() {
            assert_eq!(key[i], key[firsts[g as usize].0]);
        }
    }
}
