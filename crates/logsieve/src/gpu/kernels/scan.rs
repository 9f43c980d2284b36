//! `scan`: 16-byte coalesced loads, SWAR tests on the pattern's two rarest
//! bytes, exact verification of the survivors, per-line result bits.
use super::count::PopCount;
use super::{params as P, Grid, KernelDriver, Module, SegmentRun, View};
use crate::gpu::segment::ResidentSegment;
use crate::gpu::GpuKernel;

/// The shader module.
pub(crate) const MODULE: Module = Module {
    label: "scan",
    view: View::Vec4,
    wgsl: include_str!("scan.wgsl"),
    entry_points: &["scan"],
};

/// Pipelines of `scan`: one for one-byte patterns, and for two-byte and
/// longer ones one per distance between their two rare bytes modulo 16
/// (the window's shift, a constant of the pipeline) and per way of running
/// the second test (on every chunk, or where the first test hit). Built
/// when first needed (`gpu/pipelines.rs`).
pub(crate) const PIPELINES: usize = 1 + 2 * PER_KIND;

/// Pipelines per kind of two-byte-or-longer pattern: 16 distances, each
/// with and without the branch. Pipeline 0 is the one-byte kind's; then
/// the two-byte kind's, then the longer kind's.
const PER_KIND: usize = 32;

/// The pipeline for a pattern of `len` bytes whose second rare byte is
/// `d2` bytes from the first, with the second test on every chunk when
/// `dense` ([`RarePick::dense`]).
pub(crate) fn pipeline_for(len: usize, d2: i32, dense: bool) -> usize {
    let r = (d2 & 15) as usize + 16 * usize::from(dense);
    match len {
        0 | 1 => 0,
        2 => 1 + r,
        _ => 1 + PER_KIND + r,
    }
}

/// [`pipeline_for`] the query uniform `prm`.
pub(crate) fn pipeline_of(prm: &[u32; P::WORDS]) -> usize {
    pipeline_for(
        prm[P::PAT_LEN] as usize,
        prm[P::D2] as i32,
        prm[P::DENSE] != 0,
    )
}

/// The override constants (`SPEC`, `D2R`, `DENSE`) of pipeline `i`.
pub(crate) fn constants(i: usize) -> [(&'static str, f64); 3] {
    let (spec, r) = match i {
        0 => (1, 0),
        _ => (2 + (i - 1) / PER_KIND, (i - 1) % PER_KIND),
    };
    [
        ("SPEC", spec as f64),
        ("D2R", (r % 16) as f64),
        ("DENSE", (r / 16) as f64),
    ]
}

/// Bytes of the scan's parameters as immediate data (push constants):
/// the pattern packed four bytes to a word, then nine words, padded.
pub(crate) const IMM_SIZE: u32 = 112;

/// The scan module reading its parameters from immediate data instead of
/// the uniform (natively, where the adapter has immediates): a query then
/// writes no buffer, and skips the staging copy and barrier that a
/// `write_buffer` puts before its commands.
pub(crate) fn source_immediate() -> String {
    let src = MODULE
        .source()
        .replace(
            "params.pat[i >> 2u][i & 3u]",
            "((imm.pat[i >> 2u] >> ((i & 3u) * 8u)) & 0xFFu)",
        )
        .replace("params.patw[i >> 4u][(i >> 2u) & 3u]", "imm.pat[i >> 2u]");
    assert!(
        !src.contains("params.pat[") && !src.contains("params.patw["),
        "scan reads the pattern elsewhere"
    );
    let src = src.replace("params.", "imm.");
    format!(
        "{src}
struct Imm {{
    pat: array<u32, 16>,
    pat_len: u32,
    fold: u32,
    r1: u32,
    d2: i32,
    b1: u32,
    b2: u32,
    or1: u32,
    or2: u32,
    dense: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}}
var<immediate> imm: Imm;
"
    )
}

/// The immediate data of a scan with uniform words `prm` (the layout of
/// `Imm` in [`source_immediate`]).
pub(crate) fn immediates(prm: &[u32; P::WORDS]) -> Vec<u8> {
    let mut w = [0u32; IMM_SIZE as usize / 4];
    for i in 0..64 {
        w[i / 4] |= (prm[P::PAT + i] & 0xFF) << ((i % 4) * 8);
    }
    let rest = [
        P::PAT_LEN,
        P::FOLD,
        P::R1,
        P::D2,
        P::B1,
        P::B2,
        P::OR1,
        P::OR2,
        P::DENSE,
    ];
    for (k, &f) in rest.iter().enumerate() {
        w[16 + k] = prm[f];
    }
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The bytes the SWAR tests look for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RarePick {
    /// Pattern index of the rarest byte.
    pub(crate) r1: usize,
    /// Pattern index of the second rarest, if the pattern has two bytes.
    pub(crate) r2: Option<usize>,
    /// The rarest byte is common (more than 1 byte in [`DENSE_SHARE`]):
    /// the second test runs on every chunk, without a branch, since nearly
    /// every warp would take that branch anyway.
    pub(crate) dense: bool,
}

/// Where scan's second test stops being worth a branch: the rarest byte
/// is more than one byte in 128 of the corpus (then it is in more than 12%
/// of the 16-byte chunks, and in most 512-byte warps' worth). Measured on
/// the H200 (kernel ms, branch / no branch): `ERROR_503` (`R`, 0.06% of the
/// bytes) 0.054 / 0.059, `NullPointerException` (`P`, 0.18%) 0.055 / 0.059,
/// `error` (`o`, 1.65%) 0.064 / 0.062, `192.168.1` (`9`, 2.3%) 0.069 /
/// 0.068; on the H100 the same way round, by 0.001-0.005.
pub(crate) const DENSE_SHARE: u64 = 128;

/// Picks the two rarest pattern positions by the corpus's byte frequencies
/// (`freq[b]`, gathered at upload). Under `fold` a letter stands for both of
/// its cases, so its frequency is the sum of the two. A position with the
/// same byte as `r1` is a poor second test (it passes exactly where the first
/// did, shifted), so a distinct byte is preferred.
pub(crate) fn pick_rare(folded: &[u8], fold: bool, freq: &[u64; 256]) -> RarePick {
    let f = |b: u8| -> u64 {
        if fold && b.is_ascii_lowercase() {
            freq[b as usize] + freq[b.to_ascii_uppercase() as usize]
        } else {
            freq[b as usize]
        }
    };
    let by_freq = |skip: Option<usize>, avoid: Option<u8>| {
        (0..folded.len())
            .filter(|&i| Some(i) != skip)
            .min_by_key(|&i| (avoid == Some(folded[i]), f(folded[i]), i))
    };
    let r1 = by_freq(None, None).unwrap_or(0);
    let r2 = by_freq(Some(r1), Some(folded[r1]));
    let total: u64 = freq.iter().sum();
    let dense = folded
        .get(r1)
        .is_some_and(|&b| f(b).saturating_mul(DENSE_SHARE) > total);
    RarePick { r1, r2, dense }
}

/// vec4<u32> loads per thread (scan.wgsl's two chunks, whose hits share
/// one word). Measured on the H100 (194 MB, kernel ms): 2 beat 1 slightly
/// (NullPointerException 0.084 -> 0.078); 4 or 8 in a loop, a prefetch of
/// the next load, or extra per-thread loads of line hints were slower
/// (0.106-0.152 ms where 2 took 0.074, 2026-11-21), and 4 still were with
/// the 2026-11-22 kernel (0.077-0.081 where 2 takes 0.074-0.076).
pub(crate) const VPT: u64 = 2;

/// Workgroups of a scan dispatch over a segment of `n_bytes`.
pub(crate) fn groups(n_bytes: u32) -> u64 {
    u64::from(n_bytes).div_ceil(16).div_ceil(256 * VPT)
}

/// The driver: one pass over every segment's 16-byte chunks.
pub(crate) struct Scan<'a> {
    /// The pipeline of the query ([`pipeline_of`]).
    pub(crate) pipeline: &'a wgpu::ComputePipeline,
    /// The query's immediate data, where scan takes its parameters that
    /// way ([`immediates`]); else they are in the uniform.
    pub(crate) immediates: Option<&'a [u8]>,
    /// Clear the result bits first: not needed when a count-only scan left
    /// them zero. (scan zeroes its own counters.)
    pub(crate) clear_result: bool,
    /// The pop-counts after it; `None` when another kernel consumes the
    /// result bits in the same submission (the stats pipeline).
    pub(crate) count: Option<PopCount<'a>>,
    pub(crate) grid: Grid,
}

impl KernelDriver for Scan<'_> {
    fn label(&self) -> &'static str {
        GpuKernel::Scan.name()
    }

    fn clear(&self, enc: &mut wgpu::CommandEncoder, seg: &ResidentSegment) {
        if self.clear_result {
            enc.clear_buffer(&seg.buffers.result_bits, 0, None);
        }
    }

    fn record(&self, pass: &mut wgpu::ComputePass<'_>, run: SegmentRun<'_>) {
        pass.set_bind_group(0, run.bind, &[]);
        pass.set_pipeline(self.pipeline);
        // Immediates are set after a pipeline (wgpu's rule).
        if let Some(imm) = self.immediates {
            pass.set_immediates(0, imm);
        }
        let (x, y) = self.grid.dims(groups(run.segment.n_bytes));
        pass.dispatch_workgroups(x, y, 1);
        if let Some(count) = &self.count {
            count.record(pass, run.segment, self.grid);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::validated;
    use super::*;

    /// The immediate-data variant parses and validates with naga, and the
    /// host packs what it reads where it reads it.
    #[test]
    fn immediate_variant_validates_and_packs() {
        let (module, _) = validated(
            "scan (immediates)",
            &source_immediate(),
            naga::valid::Capabilities::IMMEDIATES,
        );
        let (_, ty) = module
            .types
            .iter()
            .find(|(_, t)| t.name.as_deref() == Some("Imm"))
            .expect("Imm struct");
        let naga::TypeInner::Struct { members, span } = &ty.inner else {
            panic!("Imm is not a struct");
        };
        assert_eq!(*span, IMM_SIZE);
        let off = |n: &str| {
            members
                .iter()
                .find(|m| m.name.as_deref() == Some(n))
                .unwrap()
                .offset
        };
        assert_eq!(off("pat_len"), 64);
        assert_eq!(off("dense"), 96);
        let mut prm = [0u32; P::WORDS];
        for (i, b) in b"abcde".iter().enumerate() {
            prm[P::PAT + i] = u32::from(*b);
        }
        prm[P::PAT_LEN] = 5;
        prm[P::DENSE] = 1;
        prm[P::D2] = (-3i32) as u32;
        let bytes = immediates(&prm);
        assert_eq!(bytes.len(), IMM_SIZE as usize);
        assert_eq!(&bytes[..6], b"abcde\0");
        assert_eq!(bytes[64], 5);
        assert_eq!(&bytes[76..80], &(-3i32).to_le_bytes());
        assert_eq!(bytes[96], 1);
    }

    /// Every scan pipeline's override constants evaluate and validate, as
    /// wgpu will when it builds the pipeline (naga evaluates constant
    /// expressions in branches not taken too: a shift by 32 there is an
    /// error that validating the module alone does not see).
    #[test]
    fn every_pipeline_builds() {
        for (src, caps) in [
            (MODULE.source(), naga::valid::Capabilities::empty()),
            (source_immediate(), naga::valid::Capabilities::IMMEDIATES),
        ] {
            let (module, info) = validated("scan", &src, caps);
            for i in 0..PIPELINES {
                let mut consts = naga::back::PipelineConstants::default();
                for (k, v) in constants(i) {
                    consts.insert(k.to_string(), v);
                }
                let ep = Some((naga::ShaderStage::Compute, "scan"));
                if let Err(e) =
                    naga::back::pipeline_constants::process_overrides(&module, &info, ep, &consts)
                {
                    panic!("scan pipeline {i} ({:?}): {e:?}", constants(i));
                }
            }
        }
        // Each pattern length, distance and way has its pipeline, and they
        // differ.
        assert_eq!(pipeline_for(1, 0, false), 0);
        assert_eq!(pipeline_for(1, 5, true), 0);
        let mut seen = std::collections::HashSet::new();
        for len in [2, 3, 64] {
            for d2 in -63i32..=63 {
                for dense in [false, true] {
                    if len == 2 && d2.abs() != 1 {
                        continue;
                    }
                    let i = pipeline_for(len, d2, dense);
                    assert!(i < PIPELINES);
                    let [(_, spec), (_, r), (_, d)] = constants(i);
                    assert_eq!(spec, if len == 2 { 2.0 } else { 3.0 });
                    assert_eq!(r as i32, d2 & 15);
                    assert_eq!(d, f64::from(u8::from(dense)));
                    seen.insert(i);
                }
            }
        }
        assert_eq!(seen.len(), (2 + 16) * 2);
    }

    #[test]
    fn picks_rarest_distinct_bytes() {
        let mut freq = [100u64; 256];
        freq[b'x' as usize] = 1;
        freq[b'y' as usize] = 2;
        assert_eq!(
            pick_rare(b"axbyx", false, &freq),
            RarePick {
                r1: 1,
                r2: Some(3),
                dense: false
            }
        );
        assert_eq!(
            pick_rare(b"q", false, &freq),
            RarePick {
                r1: 0,
                r2: None,
                dense: false
            }
        );
        // Under -i, 'A' counts towards 'a'.
        freq[b'a' as usize] = 0;
        freq[b'A' as usize] = 500;
        assert_eq!(pick_rare(b"ab", true, &freq).r1, 1);
        assert_eq!(pick_rare(b"ab", false, &freq).r1, 0);
        // The second test goes without a branch once the rarest byte is
        // more than one byte in 128 of the corpus.
        let total: u64 = freq.iter().sum();
        freq[b'k' as usize] = total / 100;
        assert!(pick_rare(b"kk", false, &freq).dense);
        freq[b'k' as usize] = total / 200;
        assert!(!pick_rare(b"kk", false, &freq).dense);
        // Under -i both cases count.
        freq[b'K' as usize] = total / 200;
        assert!(pick_rare(b"kk", true, &freq).dense);
    }
}
