//! Many literals at once on the GPU (issue 5): the kernels `trie`, `ac`,
//! `prefix-hash` and `bloom`, per-line result bits and per-pattern counts.
//!
//! A query's patterns become one table buffer (built on the host: tens of
//! ms for 10k patterns, then kept with its upload for as long as the same
//! set is searched again): the distinct patterns (folded under `-i`) with
//! their bytes, then the kernel's structure — a compact trie, a dense goto
//! table over byte classes, hashed 4-byte prefixes, or a bit filter and a
//! hash table of L-byte keys. `trie`, `ac` and `prefix-hash` run one
//! thread per start position of every resident segment; `bloom` streams
//! 16 bytes per thread and tests all 16 positions from registers. Each
//! sets the per-line result bits the single-literal kernels use (so the
//! same pop-count and readback give counts and line ids), and with
//! per-pattern counts adds to 64-bit (two-word) counters per pattern with
//! atomics. The bind-group layout is this module's own (the segment's
//! bytes, line offsets and result bits, plus the table, the counters and a
//! small uniform); pipelines are built once per context and thread.

// In a browser (one thread) wgpu's handles are neither `Send` nor `Sync`,
// so these `Arc`s are only shared within the thread there; natively they
// are `Send + Sync`.
#![cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]

use std::cell::RefCell;
use std::sync::{Arc, Mutex, Weak};

use wgpu::util::DeviceExt;

use crate::cpu::multi::{bucket_starts, PatternSet};
use crate::error::Error;
use crate::query::{CaseMode, Query};

use super::context::{Ctx, GpuContext};
use super::kernels;

pub use crate::kernel::MultiKernel;

/// Words of the `MParams` uniform.
pub(crate) const MP_WORDS: usize = 16;

/// A query's pattern tables, ready to upload.
#[derive(Debug)]
pub(crate) struct Tables {
    /// The distinct (folded) patterns: group `g` is `set.uniq[g]`.
    pub(crate) set: PatternSet,
    /// The table buffer's words.
    pub(crate) words: Vec<u32>,
    /// The uniform (without `per_pattern`, set per run).
    pub(crate) mp: [u32; MP_WORDS],
}

/// Field offsets of `MParams` (multi_common.wgsl).
mod mp {
    pub(super) const FOLD: usize = 0;
    pub(super) const PER_PATTERN: usize = 1;
    pub(super) const N_GROUPS: usize = 2;
    pub(super) const PAT_OFF: usize = 3;
    pub(super) const BYTES_OFF: usize = 4;
    pub(super) const A: usize = 5;
    pub(super) const B: usize = 6;
    pub(super) const C: usize = 7;
    pub(super) const D: usize = 8;
    pub(super) const E: usize = 9;
    pub(super) const F: usize = 10;
    pub(super) const DIAG: usize = 11;
    pub(super) const G: usize = 12;
    pub(super) const H: usize = 13;
}

/// bloom's key of a pattern (or of a corpus position): the little-endian
/// words of bytes [0, 4) and [l - 4, l).
fn bloom_key(p: &[u8], l: usize) -> (u32, u32) {
    let w = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes"));
    (w(&p[..4]), w(&p[l - 4..l]))
}

/// bloom's two hashes of a key, as bloom.wgsl computes them: the first
/// probe's, of bytes [0, 4), and the second's (also the bucket's), of the
/// whole key.
fn bloom_hash(a: u32, b: u32) -> (u32, u32) {
    let x = a.wrapping_mul(0x9E37_79B1);
    (x, (x ^ b).wrapping_mul(0x85EB_CA77))
}

/// bloom's workgroup filter for a key (`lb` bits in all): the word (from
/// the first probe's hash, of bytes [0, 4)) and its three bits, one from
/// the first hash and two from the second. All in one word: one
/// workgroup-memory load a position.
fn bloom_bits(a: u32, b: u32, lb: u32) -> (u32, u32, u32, u32) {
    let (x, y) = bloom_hash(a, b);
    (
        x >> (32 - (lb - 5)),
        (x >> (27 - (lb - 5))) & 31,
        y >> 27,
        (y >> 22) & 31,
    )
}

/// bloom's third hash of a key (from the second), whose top bits index the
/// verification filter.
fn bloom_hash3(y: u32) -> u32 {
    (y ^ (y >> 15)).wrapping_mul(0x2C1B_3C6D)
}

/// A pointer trie of the groups (node 0 the root), children by label.
struct Trie {
    children: Vec<Vec<(u8, u32)>>,
    /// Group + 1 ending at each node, 0 for none.
    term: Vec<u32>,
}

impl Trie {
    fn new(set: &PatternSet) -> Trie {
        let mut t = Trie {
            children: vec![Vec::new()],
            term: vec![0],
        };
        for (g, p) in set.uniq.iter().enumerate() {
            let mut n = 0usize;
            for &b in p {
                n = match t.children[n].binary_search_by_key(&b, |c| c.0) {
                    Ok(i) => t.children[n][i].1 as usize,
                    Err(i) => {
                        let id = t.children.len() as u32;
                        t.children[n].insert(i, (b, id));
                        t.children.push(Vec::new());
                        t.term.push(0);
                        id as usize
                    }
                };
            }
            t.term[n] = g as u32 + 1;
        }
        t
    }
}

impl Tables {
    /// Builds the tables of `q` for `kernel`; errors when they would not
    /// fit one storage binding of `max_binding` bytes, or when `bloom` is
    /// asked for patterns shorter than 4 bytes (callers resolve the kernel
    /// with [`MultiKernel::for_query`] first). `bloom_words`: the words of
    /// the bloom pipeline's filter.
    pub(crate) fn build(
        q: &Query,
        kernel: MultiKernel,
        max_binding: u64,
        bloom_words: u32,
    ) -> Result<Tables, Error> {
        if let Err(r) = crate::support::kernel_support(q, Some(kernel.into())) {
            return Err(Error::backend(format!(
                "the GPU cannot run this query: {r}"
            )));
        }
        let lits = q.literals().expect("checked by unsupported");
        let fold = q.case() == CaseMode::Ascii;
        let set = PatternSet::new(lits, fold);
        let g = set.uniq.len();
        if g >= 1 << 23 {
            return Err(Error::backend(format!(
                "{g} distinct patterns: the GPU tables hold at most {}",
                (1 << 23) - 1
            )));
        }
        let mut mpw = [0u32; MP_WORDS];
        mpw[mp::FOLD] = u32::from(fold);
        mpw[mp::N_GROUPS] = g as u32;
        // The pattern table and the bytes.
        let mut words: Vec<u32> = Vec::new();
        let mut bytes: Vec<u8> = Vec::new();
        for p in &set.uniq {
            words.push(bytes.len() as u32);
            words.push(p.len() as u32);
            bytes.extend_from_slice(p);
        }
        mpw[mp::PAT_OFF] = 0;
        mpw[mp::BYTES_OFF] = words.len() as u32;
        bytes.resize(bytes.len().div_ceil(4) * 4, 0);
        words.extend(
            bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes"))),
        );
        let base = words.len();
        match kernel {
            MultiKernel::Trie => Self::trie(&set, &mut words, &mut mpw),
            MultiKernel::Ac => Self::ac(&set, &mut words, &mut mpw, max_binding)?,
            MultiKernel::PrefixHash => Self::prefix_hash(&set, &mut words, &mut mpw),
            MultiKernel::Bloom => Self::bloom(&set, &mut words, &mut mpw, bloom_words)?,
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
            set,
            words,
            mp: mpw,
        })
    }

    /// The compact trie (trie.wgsl describes the layout).
    fn trie(set: &PatternSet, words: &mut Vec<u32>, mpw: &mut [u32; MP_WORDS]) {
        let t = Trie::new(set);
        let n = t.children.len();
        let size = |i: usize, narrow: bool| {
            let c = t.children[i].len();
            1 + c.div_ceil(4) + if narrow { c.div_ceil(2) } else { c }
        };
        // Offsets relative to the section; word 0 is a dummy so that 0
        // means "no child". The root is not stored (its children are the
        // 256-entry table).
        let total_narrow: usize = 1 + (1..n).map(|i| size(i, true)).sum::<usize>();
        let narrow = total_narrow <= 0xFFFF;
        let mut off = vec![0u32; n];
        let mut at = 1usize;
        for (i, o) in off.iter_mut().enumerate().skip(1) {
            *o = at as u32;
            at += size(i, narrow);
        }
        let sec = words.len();
        mpw[mp::A] = sec as u32;
        mpw[mp::B] = u32::from(narrow);
        words.resize(sec + at, 0);
        for i in 1..n {
            let ch = &t.children[i];
            let c = ch.len();
            let o = sec + off[i] as usize;
            words[o] = c as u32 | (t.term[i] << 9);
            let nl = c.div_ceil(4);
            for w in 0..nl {
                let mut v = 0u32;
                for k in 0..4 {
                    // Padded with the last label: the first hit is real.
                    let lab = ch[(w * 4 + k).min(c - 1)].0;
                    v |= u32::from(lab) << (8 * k);
                }
                words[o + 1 + w] = v;
            }
            let cb = o + 1 + nl;
            for (k, &(_, child)) in ch.iter().enumerate() {
                let co = off[child as usize];
                if narrow {
                    words[cb + k / 2] |= co << (16 * (k % 2));
                } else {
                    words[cb + k] = co;
                }
            }
        }
        mpw[mp::C] = words.len() as u32;
        let mut root = [0u32; 256];
        for &(b, child) in &t.children[0] {
            root[b as usize] = off[child as usize];
        }
        words.extend_from_slice(&root);
    }

    /// The dense goto table of failure-free Aho-Corasick (ac.wgsl).
    fn ac(
        set: &PatternSet,
        words: &mut Vec<u32>,
        mpw: &mut [u32; MP_WORDS],
        max_binding: u64,
    ) -> Result<(), Error> {
        let t = Trie::new(set);
        let mut class = [0u32; 256];
        let mut nc = 1u32;
        for p in &set.uniq {
            for &b in p {
                if class[b as usize] == 0 {
                    class[b as usize] = nc;
                    nc += 1;
                }
            }
        }
        let states = t.children.len() + 1;
        let cells = states as u64 * u64::from(nc);
        if cells * 4 > max_binding {
            return Err(Error::backend(format!(
                "the ac goto table of {} states x {nc} byte classes takes {:.1} MB, more than \
                 one GPU binding ({:.1} MB): use --gpu-kernel trie",
                states,
                cells as f64 * 4.0 / 1e6,
                max_binding as f64 / 1e6
            )));
        }
        let sec = words.len();
        mpw[mp::A] = sec as u32;
        mpw[mp::B] = nc;
        words.resize(sec + cells as usize, 0);
        // Trie node i is state i + 1 (the root is state 1, 0 is dead).
        for (i, ch) in t.children.iter().enumerate() {
            let row = sec + (i + 1) * nc as usize;
            for &(b, child) in ch {
                words[row + class[b as usize] as usize] = child + 1;
            }
        }
        mpw[mp::C] = words.len() as u32;
        words.extend_from_slice(&class);
        mpw[mp::D] = words.len() as u32;
        words.push(0);
        words.extend_from_slice(&t.term);
        Ok(())
    }

    /// Hashed prefixes of up to 4 bytes (prefix_hash.wgsl).
    fn prefix_hash(set: &PatternSet, words: &mut Vec<u32>, mpw: &mut [u32; MP_WORDS]) {
        let k = set.min_len().clamp(1, 4);
        let g = set.uniq.len() as u64;
        let bits = (g * 2).next_power_of_two().trailing_zeros().clamp(8, 24);
        let key = |p: &[u8]| {
            p[..k]
                .iter()
                .enumerate()
                .fold(0u32, |a, (i, &b)| a | (u32::from(b) << (8 * i)))
        };
        let mut ents: Vec<(u32, u32, u32)> = set
            .uniq
            .iter()
            .enumerate()
            .map(|(gi, p)| {
                let kk = key(p);
                (kk.wrapping_mul(0x9E37_79B1) >> (32 - bits), kk, gi as u32)
            })
            .collect();
        ents.sort_unstable();
        let start = bucket_starts(ents.iter().map(|e| e.0), 1 << bits);
        mpw[mp::A] = words.len() as u32;
        for e in &ents {
            words.push(e.1);
            words.push(e.2);
        }
        mpw[mp::C] = words.len() as u32;
        words.extend_from_slice(&start);
        mpw[mp::D] = bits;
        mpw[mp::E] = k as u32;
    }

    /// The bit filter and the hash table of L-byte keys (bloom.wgsl).
    fn bloom(
        set: &PatternSet,
        words: &mut Vec<u32>,
        mpw: &mut [u32; MP_WORDS],
        filter_words: u32,
    ) -> Result<(), Error> {
        let min = set.min_len();
        if min < MultiKernel::BLOOM_MIN_LEN {
            return Err(Error::backend(format!(
                "the bloom kernel needs patterns of at least {} bytes (the shortest has {min})",
                MultiKernel::BLOOM_MIN_LEN
            )));
        }
        let l = min.min(8);
        let keys: Vec<(u32, u32)> = set.uniq.iter().map(|p| bloom_key(p, l)).collect();
        let mut distinct = keys.clone();
        distinct.sort_unstable();
        distinct.dedup();
        let n = distinct.len() as u64;
        // About 256 filter bits per key (two set per key: < 1% of the
        // bits set), as many as the pipeline's filter holds: 10k keys fill
        // 32 KiB to ~6%. Simulated on the benchmark's 1M lines with its
        // 1k and 10k sets (8-byte keys), positions passing the filter:
        // 1k keys 0.32% with 2^15 bits, 0.013% with 2^18; 10k keys 0.53%
        // with 2^18 (0.11% of positions hold a pattern's key). At least
        // 2^12 bits (a load of 512 bytes per workgroup).
        let max_lb = (filter_words.max(1) * 32).ilog2();
        let lb = (n * 256).next_power_of_two().ilog2().max(12).min(max_lb);
        let mut filter = vec![0u32; 1 << (lb - 5)];
        for &(a, b) in &distinct {
            let (w, b1, b2, b3) = bloom_bits(a, b, lb);
            filter[w as usize] |= (1 << b1) | (1 << b2) | (1 << b3);
        }
        // About two buckets per key.
        let bb = (n * 2).next_power_of_two().ilog2().clamp(1, 24);
        let mut ents: Vec<(u32, u32, u32, u32)> = keys
            .iter()
            .enumerate()
            .map(|(g, &(a, b))| (bloom_hash(a, b).1 >> (32 - bb), a, b, g as u32))
            .collect();
        // The pattern's bytes [l, l + 8) as two words (zero past its end)
        // and its length: most keys that match but are not the pattern
        // differ there, so the entry alone rejects them.
        let next = |g: u32| -> [u32; 3] {
            let p = &set.uniq[g as usize];
            let mut c = [0u8; 8];
            for (i, b) in p.iter().skip(l).take(8).enumerate() {
                c[i] = *b;
            }
            [
                u32::from_le_bytes(c[..4].try_into().expect("4")),
                u32::from_le_bytes(c[4..].try_into().expect("4")),
                p.len() as u32,
            ]
        };
        ents.sort_unstable();
        let start = bucket_starts(ents.iter().map(|e| e.0), 1 << bb);
        mpw[mp::A] = words.len() as u32;
        words.extend_from_slice(&filter);
        mpw[mp::B] = lb;
        mpw[mp::C] = words.len() as u32;
        words.extend_from_slice(&start);
        mpw[mp::D] = words.len() as u32;
        for e in &ents {
            let [c, d, len] = next(e.3);
            words.extend_from_slice(&[e.1, e.2, c, d, e.3, len, 0, 0]);
        }
        mpw[mp::E] = bb;
        mpw[mp::F] = l as u32;
        // The verification filter: a bit per hash of the whole key, about
        // 64 bits a key (2^16..2^24 bits, from L2), tested before the
        // bucket walk so that most of the positions that only pass the
        // workgroup filter by chance cost one load instead of several.
        let lb2 = (n * 64).next_power_of_two().ilog2().clamp(16, 24);
        let mut vf = vec![0u32; 1 << (lb2 - 5)];
        for &(a, b) in &distinct {
            let z = bloom_hash3(bloom_hash(a, b).1) >> (32 - lb2);
            vf[(z >> 5) as usize] |= 1 << (z & 31);
        }
        mpw[mp::G] = words.len() as u32;
        words.extend_from_slice(&vf);
        mpw[mp::H] = lb2;
        Ok(())
    }

    /// The uniform for one run.
    pub(crate) fn params(&self, per_pattern: bool) -> Vec<u8> {
        let mut m = self.mp;
        m[mp::PER_PATTERN] = u32::from(per_pattern);
        m[mp::DIAG] = std::env::var("LOGSIEVE_BLOOM_DIAG")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        m.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

/// A pattern set's tables, uploaded, with what they were built from.
pub(crate) struct Uploaded {
    kernel: MultiKernel,
    fold: bool,
    lits: Vec<Vec<u8>>,
    pub(crate) tables: Tables,
    pub(crate) buf: wgpu::Buffer,
}

/// The multi-literal layout and pipelines of one context.
pub(crate) struct MultiPipes {
    pub(crate) layout: wgpu::BindGroupLayout,
    pipes: Vec<wgpu::ComputePipeline>,
    /// Words of the bloom pipeline's filter.
    pub(crate) bloom_words: u32,
    /// The last pattern set's uploaded tables: an IOC list is typically
    /// searched again and again, and 10k patterns cost tens of ms to
    /// build and upload. One set at a time, so that at most one table
    /// stays resident.
    last: Mutex<Option<Arc<Uploaded>>>,
}

impl MultiPipes {
    pub(crate) fn pipe(&self, k: MultiKernel) -> &wgpu::ComputePipeline {
        &self.pipes[k as usize]
    }

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
        let tables = Tables::build(q, kernel, max_binding, self.bloom_words)?;
        let words: Vec<u8> = tables.words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let buf = c
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("multi tables"),
                contents: if words.is_empty() { &[0; 4] } else { &words },
                usage: wgpu::BufferUsages::STORAGE,
            });
        let u = Arc::new(Uploaded {
            kernel,
            fold,
            lits: lits.to_vec(),
            tables,
            buf,
        });
        *last = Some(u.clone());
        Ok(u)
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
    let dev = &c.device;
    let entry = super::context::buffer_entry;
    let storage = |read_only| wgpu::BufferBindingType::Storage { read_only };
    let uniform = wgpu::BufferBindingType::Uniform;
    let layout = dev.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("multi"),
        entries: &[
            entry(1, uniform),
            entry(2, storage(true)),
            entry(3, storage(true)),
            entry(4, storage(true)),
            entry(6, storage(false)),
            entry(10, storage(true)),
            entry(11, storage(false)),
            entry(12, uniform),
        ],
    });
    let pl = dev.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("multi"),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let scope = dev.push_error_scope(wgpu::ErrorFilter::Validation);
    let mut pipes = Vec::new();
    let bloom_words = kernels::bloom::filter_words(c.info.max_compute_workgroup_storage_size);
    // In the order of MultiKernel's variants (`pipe` indexes by them).
    for (m, entry) in [
        (&kernels::trie::MODULE, "trie"),
        (&kernels::ac::MODULE, "ac"),
        (&kernels::prefix_hash::MODULE, "prefix_hash"),
        (&kernels::bloom::MODULE, "bloom"),
    ] {
        let source = if entry == "bloom" {
            kernels::bloom::source(bloom_words)
        } else {
            m.source()
        };
        let module = dev.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(m.label),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        pipes.push(
            dev.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: Some(&pl),
                module: &module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            }),
        );
    }
    if let Some(e) = pollster::block_on(scope.pop()) {
        return Err(Error::backend(format!(
            "GPU multi-literal kernel compilation failed: {e}"
        )));
    }
    Ok(MultiPipes {
        layout,
        pipes,
        bloom_words,
        last: Mutex::new(None),
    })
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
    fn planner_sends_many_literals_to_the_multi_kernel() {
        use crate::planner::{self, Calibration, Choice, DeviceClass, PlanInput, SampleStats};
        let long = vec![b'x'; 70];
        let query = q(&[b"10.0.0.1", &long], false);
        let cal = Calibration::defaults(DeviceClass::Discrete);
        let plan = |query: &Query| {
            planner::plan(&PlanInput {
                query,
                want: crate::Want::Count,
                bytes: 1 << 30,
                lines: Some((1 << 30) / 200),
                threads: 1,
                gpu: Some((DeviceClass::Discrete, "test gpu".into())),
                resident: true,
                gpu_unsupported: crate::gpu::unsupported_reason(query),
                sample: SampleStats::default(),
                calibration: &cal,
            })
        };
        let d = plan(&query);
        assert!(d.inhibitors.is_empty(), "{:?}", d.inhibitors);
        assert_eq!(d.choice, Choice::Gpu(crate::Kernel::Bloom));
        // A pattern shorter than 4 bytes: ac, and --explain says why.
        let short = q(&[b"10.0.0.1", b"ab"], false);
        let d = plan(&short);
        assert_eq!(d.choice, Choice::Gpu(crate::Kernel::Ac));
        assert!(
            d.explain().contains("bloom needs >= 4-byte"),
            "{}",
            d.explain()
        );
        assert_eq!(MultiKernel::choose(None, &short), MultiKernel::Ac);
        assert_eq!(MultiKernel::choose(None, &query), MultiKernel::Bloom);
        assert_eq!(
            planner::multi_kernel(&short).0,
            MultiKernel::Bloom.for_query(&short).into()
        );
        // One pattern longer than 64 bytes is still a CPU query.
        let one = q(&[&long], false);
        assert!(!planner::inhibitors(&one, crate::Want::Count, &SampleStats::default()).is_empty());
    }

    #[test]
    fn names_round_trip() {
        for k in MultiKernel::ALL {
            assert_eq!(MultiKernel::from_name(k.name()), Some(k));
            assert_eq!(
                super::super::GpuKernel::from_name(k.name())
                    .and_then(super::super::GpuKernel::multi),
                Some(k)
            );
        }
    }

    #[test]
    fn trie_is_narrow_when_small_and_wide_when_large() {
        let t = Tables::build(
            &q(&[b"ab", b"abc", b"b"], false),
            MultiKernel::Trie,
            1 << 30,
            4096,
        )
        .unwrap();
        assert_eq!(t.mp[mp::B], 1);
        assert_eq!(t.set.uniq.len(), 3);
        let many: Vec<Vec<u8>> = (0..20_000u32)
            .map(|i| format!("{:08x}{i}", i.wrapping_mul(2_654_435_761)).into_bytes())
            .collect();
        let big = QueryBuilder::new()
            .syntax(Syntax::Fixed)
            .build(&many)
            .unwrap();
        let t = Tables::build(&big, MultiKernel::Trie, 1 << 30, 4096).unwrap();
        assert_eq!(t.mp[mp::B], 0);
    }

    #[test]
    fn oversized_tables_are_an_error_not_a_panic() {
        let e = Tables::build(&q(&[b"abc", b"abd"], false), MultiKernel::Ac, 64, 4096).unwrap_err();
        assert!(e.to_string().contains("trie"), "{e}");
        assert!(
            Tables::build(&q(&[b"", b"abd"], false), MultiKernel::Trie, 1 << 30, 4096).is_err()
        );
        // bloom refuses what it cannot hold (callers resolve to ac first).
        let e = Tables::build(
            &q(&[b"abc", b"abcd"], false),
            MultiKernel::Bloom,
            1 << 30,
            4096,
        )
        .unwrap_err();
        assert!(e.to_string().contains("at least 4 bytes"), "{e}");
    }

    /// bloom's tables on the host, as the kernel reads them: every
    /// pattern's key passes the filter and its bucket lists the pattern;
    /// random keys mostly do not pass.
    #[test]
    fn bloom_tables_hold_every_pattern() {
        let many: Vec<Vec<u8>> = (0..10_000u32)
            .map(|i| {
                let r = i.wrapping_mul(2_654_435_761);
                match i % 3 {
                    0 => format!("{}.{}.{}.{}", r & 255, (r >> 8) & 255, r >> 24, i & 255),
                    1 => format!("{r:08x}{i:08x}{:016x}", u64::from(r) << 7),
                    _ => format!("X{r:08x}-c2.evil{}.example", i % 97),
                }
                .into_bytes()
            })
            .collect();
        for (fold, words) in [(false, 8192), (true, 4096), (false, 64)] {
            let t = Tables::build(
                &QueryBuilder::new()
                    .syntax(Syntax::Fixed)
                    .case_insensitive(fold)
                    .build(&many)
                    .unwrap(),
                MultiKernel::Bloom,
                1 << 30,
                words,
            )
            .unwrap();
            let m = &t.mp;
            let l = m[mp::F] as usize;
            assert_eq!(l, 7, "the shortest IP has 7 bytes");
            let lb = m[mp::B];
            assert!(lb <= (words * 32).ilog2() && lb >= 5);
            let passes = |a: u32, b: u32| {
                let (w, b1, b2, b3) = bloom_bits(a, b, lb);
                let word = t.words[m[mp::A] as usize + w as usize];
                (word >> b1) & (word >> b2) & (word >> b3) & 1 == 1
            };
            let vbit = |a: u32, b: u32| {
                let z = bloom_hash3(bloom_hash(a, b).1) >> (32 - m[mp::H]);
                t.words[m[mp::G] as usize + (z >> 5) as usize] >> (z & 31) & 1
            };
            for (g, p) in t.set.uniq.iter().enumerate() {
                let (a, b) = bloom_key(p, l);
                assert!(passes(a, b), "{:?}", String::from_utf8_lossy(p));
                assert_eq!(vbit(a, b), 1, "{:?}", String::from_utf8_lossy(p));
                let bk = (bloom_hash(a, b).1 >> (32 - m[mp::E])) as usize;
                let (lo, hi) = (
                    t.words[m[mp::C] as usize + bk],
                    t.words[m[mp::C] as usize + bk + 1],
                );
                assert!((lo..hi).any(|e| {
                    let eo = m[mp::D] as usize + 8 * e as usize;
                    t.words[eo..eo + 2] == [a, b]
                        && t.words[eo + 4] == g as u32
                        && t.words[eo + 5] == p.len() as u32
                }));
            }
            if words == 8192 {
                let mut x = 1u32;
                let mut pass = 0;
                let mut vpass = 0;
                for _ in 0..100_000 {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    pass += u32::from(passes(x, x.rotate_left(11)));
                    vpass += vbit(x, x.rotate_left(11));
                }
                // 64 bits a key: ~1.6% of random keys pass the
                // verification filter.
                assert!(vpass < 3000, "{vpass} of 100000 random keys pass");
                // ~11% of the bits set, three in one word: ~0.2% pass.
                assert!(pass < 1500, "{pass} of 100000 random keys pass");
            }
        }
    }
}
