//! `scan`: 16-byte coalesced loads, SWAR tests on the pattern's two rarest
//! bytes, exact verification of the survivors, per-line result bits.
use super::count::PopCount;
use super::{params as P, Grid, KernelDriver, Module, SegmentRun, View};
use crate::gpu::rare::{ByteTest, RareBytes};
use crate::gpu::segment::ResidentSegment;
use crate::gpu::GpuKernel;
use crate::query::classes::{ByteSet, ClassString, LaneTest, PosTest, MAX_CLASSES};

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
/// `dense` ([`crate::gpu::rare::RarePick::dense`]).
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

/// Class-string pipelines of one shape ([`SHAPES`]): the longer kind's,
/// one per distance modulo 16 and way of running the second test, for
/// one string a pass, and for a pair (`CLS2`) one per such pipeline and
/// distance modulo 16 of the second string (`D2R2`).
const CLASS_SHAPE: usize = PER_KIND + 16 * PER_KIND;

/// What code a class-string pass needs beyond the fixed part's range
/// tests, one bit each (the constants `WALK`, `LOOK`, `EDGE`): steps,
/// lanes looked up in a class's bits, and `\b`/`^`/`$`. A pipeline
/// without one leaves its code out.
const SHAPES: usize = 8;

/// Pipelines of a class-string scan (`CLS`): [`CLASS_SHAPE`] a shape.
/// Each is built the first time a query needs it.
pub(crate) const CLASS_PIPELINES: usize = SHAPES * CLASS_SHAPE;

/// Of a word's eight lane words (`lanes`, four positions a word), the one
/// whose lanes are looked up in their class's bits (`class_at`'s `c.z`).
const LOOKED_UP: usize = 6;

/// A string's flags (`win_lo`, or `patw[1].w` for a pair's second): its
/// step count from this bit, and below it `\b` before and after, `^`,
/// `$` and a head (`EDGES`).
const STEPS_AT: u32 = 8;
const EDGES: u32 = 0x1F;

/// The class-string pipeline of the query uniform `prm`
/// ([`class_params`], [`class_pair_params`]).
pub(crate) fn class_pipeline_of(prm: &[u32; P::WORDS]) -> usize {
    let one = (prm[P::D2] as i32 & 15) as usize + 16 * usize::from(prm[P::DENSE] != 0);
    let (i, flags) = match prm[PAIR] {
        0 => (one, prm[P::WIN_LO]),
        _ => (
            PER_KIND + one + PER_KIND * (prm[ALT2 + 3] as i32 & 15) as usize,
            prm[P::WIN_LO] | prm[ALT2 + 7],
        ),
    };
    // Lanes looked up, in any word of both strings.
    let look = (0..16).any(|w| prm[P::LANES + 8 * w + LOOKED_UP] != 0);
    let walk = flags >> STEPS_AT & 0xFF != 0;
    let edge = flags & EDGES != 0;
    let shape = usize::from(walk) | usize::from(look) << 1 | usize::from(edge) << 2;
    i + CLASS_SHAPE * shape
}

/// The byte tests of the uniform `prm` for the query traces: each
/// string's first tested position and byte, and its second's (`r1
/// 'x' +d 'y'`; a pair's strings apart by `;`).
pub(crate) fn describe_tests(prm: &[u32; P::WORDS]) -> String {
    let one = |r1: u32, b1: u32, d2: u32, b2: u32| {
        let b = |w: u32| (w as u8).escape_ascii().to_string();
        format!("{r1} '{}' {:+} '{}'", b(b1), d2 as i32, b(b2))
    };
    let mut s = one(prm[P::R1], prm[P::B1], prm[P::D2], prm[P::B2]);
    if prm[PAIR] != 0 {
        let a = &prm[ALT2..];
        s += &format!("; {}", one(a[0], a[1], a[3], a[4]));
    }
    s
}

/// The override constants of class-string pipeline `i`: the longer
/// kind's, with `CLS` on, `CLS2` and `D2R2` for a pair, and its shape's.
pub(crate) fn class_constants(i: usize) -> [(&'static str, f64); 9] {
    let shape = i / CLASS_SHAPE;
    let i = i % CLASS_SHAPE;
    let (pair, one, d2r2) = match i.checked_sub(PER_KIND) {
        None => (0, i, 0),
        Some(j) => (1, j % PER_KIND, j / PER_KIND),
    };
    [
        ("SPEC", 3.0),
        ("D2R", (one % 16) as f64),
        ("DENSE", (one / 16) as f64),
        ("CLS", 1.0),
        ("CLS2", pair as f64),
        ("D2R2", d2r2 as f64),
        ("WALK", (shape & 1) as f64),
        ("LOOK", (shape >> 1 & 1) as f64),
        ("EDGE", (shape >> 2) as f64),
    ]
}

/// The query uniform of a class string (`query::classes`): each position's
/// test in `pat` (the byte in bits 0-7, the kind in bits 8-10: 0 the byte,
/// 5 an ASCII letter in either case, 1-4 a class), the classes' 256-bit
/// sets in `need` (eight words each), the `\b` conditions in `win_lo`,
/// and the two SWAR tests on the rarest positions that have a byte (or a
/// letter: OR-ing 0x20 folds its cases). With one such position both
/// tests are its own.
pub(crate) fn class_params(cs: &ClassString, rare: &RareBytes) -> [u32; P::WORDS] {
    let mut p = [0u32; P::WORDS];
    let mut classes = Vec::new();
    pack_class_string(cs, rare, 0, &mut classes, &mut p)
        .expect("a class string has room for its classes");
    p
}

/// Positions (fixed part and steps) each string of a pair may have: half
/// of the uniform's 64.
pub(crate) const PAIR_POSITIONS: usize = 32;

/// Where the pair's second string's scalars are (`patw`, unused by class
/// strings): rare byte index, byte, fold, distance; second byte, fold,
/// length, flags; head test.
const ALT2: usize = P::PATW;

/// The bit of a step's word in `pat` set when its lane test decides its
/// class (`class_at` walks it four bytes at a time).
const STEP_RANGED: u32 = 28;

/// Non-zero in a pair's uniform: the pass runs both strings (`CLS2`'s
/// pipelines, [`class_pipeline_of`]).
const PAIR: usize = ALT2 + 11;

/// The uniform of two class strings in one pass (`CLS2`), if both fit
/// ([`PAIR_POSITIONS`] each, at most four classes between them).
pub(crate) fn class_pair_params(
    a: &ClassString,
    b: &ClassString,
    rare: &RareBytes,
) -> Option<[u32; P::WORDS]> {
    let fits = |c: &ClassString| c.masks.len() + c.steps.len() <= PAIR_POSITIONS;
    if !fits(a) || !fits(b) {
        return None;
    }
    let mut p = [0u32; P::WORDS];
    let mut classes = Vec::new();
    pack_class_string(a, rare, 0, &mut classes, &mut p)?;
    pack_class_string(b, rare, 1, &mut classes, &mut p)?;
    p[PAIR] = 1;
    Some(p)
}

/// The passes of a class set: two strings a pass where they fit.
pub(crate) fn class_passes(alts: &[ClassString], rare: &RareBytes) -> Vec<[u32; P::WORDS]> {
    let mut out = Vec::new();
    let mut rest = alts;
    while let [a, tail @ ..] = rest {
        match tail.first().and_then(|b| class_pair_params(a, b, rare)) {
            Some(p) => {
                out.push(p);
                rest = &tail[1..];
            }
            None => {
                out.push(class_params(a, rare));
                rest = tail;
            }
        }
    }
    out
}

/// Packs class string `cs` as string `slot` (0, or 1 of a pair) of the
/// uniform `p`: its positions' tests from `32 * slot` in `pat` (its
/// steps after them), its words' range tests in `lanes`, its classes'
/// bits in `need` (shared: `classes` lists those packed so far), and its
/// byte tests, length and flags. `None` when the classes do not fit.
fn pack_class_string(
    cs: &ClassString,
    rare: &RareBytes,
    slot: usize,
    classes: &mut Vec<ByteSet>,
    p: &mut [u32; P::WORDS],
) -> Option<()> {
    let tests = cs.tests()?;
    let walks = cs.walk_tests()?;
    let own = cs.classes();
    for c in &own {
        if !classes.contains(c) {
            classes.push(*c);
        }
    }
    if classes.len() > MAX_CLASSES {
        return None;
    }
    let code = |t: PosTest| match t {
        PosTest::Byte(b) => u32::from(b),
        PosTest::Letter(b) => u32::from(b) | 5 << 8,
        PosTest::Class(k) => {
            let at = classes.iter().position(|c| *c == own[k]).expect("listed");
            (at as u32 + 1) << 8
        }
    };
    let base = 32 * slot;
    for (i, t) in tests.iter().enumerate() {
        p[P::PAT + base + i] = code(*t);
    }
    // The steps after the fixed part (their counts beside their tests),
    // then the head's test. A step whose class a fold and two ranges
    // decide ([`LaneTest`]) and that may take more than one byte walks
    // four bytes at a time: bit 28, its lane test in the lanes of its own
    // position (below). A step of one byte (`sshd\[\d+\]: Failed`'s
    // bytes after the digits) is cheaper tested as a byte: walked four at
    // a time, that pass took 131 us against 123.
    let step_lanes: Vec<Option<LaneTest>> = cs
        .steps
        .iter()
        .map(|st| LaneTest::of(&st.mask).filter(|_| st.max != Some(1)))
        .collect();
    for (s, st) in cs.steps.iter().enumerate() {
        let max = st.max.unwrap_or(0xFF);
        let ranged = u32::from(step_lanes[s].is_some()) << STEP_RANGED;
        p[P::PAT + base + tests.len() + s] = code(walks[s]) | st.min << 12 | max << 20 | ranged;
    }
    let head = cs.head.map_or(0, |_| code(walks[cs.steps.len()]));
    for (k, c) in classes.iter().enumerate() {
        for (j, &w) in c.iter().enumerate() {
            p[P::NEED + k * 8 + 2 * j] = w as u32;
            p[P::NEED + k * 8 + 2 * j + 1] = (w >> 32) as u32;
        }
    }
    // Four positions a word: each lane's fold and ranges (an absent
    // range is empty: 0x80..0x80), and whether the ranges decide it or its
    // class's bits do.
    // A step's lane test sits in the lanes of its position (after the
    // fixed part's), which the fixed part's words never decide.
    for (i, t) in cs.lane_tests().iter().chain(&step_lanes).enumerate() {
        let (g, sh) = (P::LANES + 2 * (base + i / 4 * 4), 8 * (i % 4));
        let [mut lo1, mut hi1, mut lo2, mut hi2] = [0x80u32; 4];
        let fixed = i < tests.len();
        match t {
            Some(t) => {
                p[g] |= (u32::from(t.fold) * 0x20) << sh;
                if let Some((lo, hi)) = t.ranges[0] {
                    (lo1, hi1) = (u32::from(lo), u32::from(hi) + 1);
                }
                if let Some((lo, hi)) = t.ranges[1] {
                    (lo2, hi2) = (u32::from(lo), u32::from(hi) + 1);
                }
                if fixed {
                    p[g + 5] |= 0x80 << sh;
                }
            }
            None if fixed => p[g + LOOKED_UP] |= 0x80 << sh,
            None => {}
        }
        for (k, v) in [(1, lo1), (2, hi1), (3, lo2), (4, hi2)] {
            p[g + k] |= v << sh;
        }
    }
    let pick = rare.pick(&byte_tests(&tests))?;
    let (r1, r2) = (pick.r1, pick.r2.unwrap_or(pick.r1));
    let byte = |i: usize| match tests[i] {
        PosTest::Byte(b) => (u32::from(b) * 0x0101_0101, 0),
        PosTest::Letter(b) => (u32::from(b) * 0x0101_0101, 0x2020_2020),
        PosTest::Class(_) => unreachable!("picked among byte positions"),
    };
    let flags = u32::from(cs.word_before)
        | u32::from(cs.word_after) << 1
        | u32::from(cs.line_start) << 2
        | u32::from(cs.line_end) << 3
        | u32::from(cs.head.is_some()) << 4
        | (cs.steps.len() as u32) << STEPS_AT;
    let d2 = (r2 as i32 - r1 as i32) as u32;
    let ((b1, or1), (b2, or2)) = (byte(r1), byte(r2));
    if slot == 0 {
        p[P::R1] = r1 as u32;
        (p[P::B1], p[P::OR1], p[P::D2], p[P::B2], p[P::OR2]) = (b1, or1, d2, b2, or2);
        p[P::DENSE] = u32::from(pick.dense);
        p[P::PAT_LEN] = tests.len() as u32;
        p[P::WIN_LO] = flags;
        p[P::SIG] = head;
        p[P::WIN_HI] = u32::MAX;
        p[P::MAGIC] = super::plain_read::MAGIC;
    } else {
        p[ALT2..ALT2 + 9].copy_from_slice(&[
            r1 as u32,
            b1,
            or1,
            d2,
            b2,
            or2,
            tests.len() as u32,
            flags,
            head,
        ]);
    }
    Some(())
}

/// A class string's positions as the SWAR tests see them
/// ([`RareBytes::pick`]): a byte, a letter in either case, or a class
/// (untestable).
fn byte_tests(tests: &[PosTest]) -> Vec<ByteTest> {
    tests
        .iter()
        .map(|t| match *t {
            PosTest::Byte(b) => Some((b, false)),
            PosTest::Letter(b) => Some((b, true)),
            PosTest::Class(_) => None,
        })
        .collect()
}

/// Bytes of the scan's parameters as immediate data (push constants):
/// the pattern packed four bytes to a word, then nine words, padded.
pub(crate) const IMM_SIZE: u32 = 112;

/// The scan module reading its parameters from immediate data instead of
/// the uniform (natively, where the adapter has immediates): a query then
/// writes no buffer, and skips the staging copy and barrier that a
/// `write_buffer` puts before its commands.
pub(crate) fn source_immediate() -> String {
    // Class strings read the uniform (their classes do not fit the
    // immediates): their test is cut from this variant.
    let full = MODULE.source();
    let (a, rest) = full
        .split_once("// CLASS-BEGIN")
        .expect("scan.wgsl marks class_at");
    let (_, b) = rest
        .split_once("// CLASS-END")
        .expect("scan.wgsl marks class_at's end");
    let src = format!(
        "{a}fn class_at(p: u32, k: u32) -> bool {{\n    return false;\n}}\n\
         fn second_string(v0: vec4<u32>, v1: vec4<u32>, base0: u32, base1: u32) {{}}\n{b}"
    )
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
        clear_result_bits(self.clear_result, enc, seg);
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

/// Clears `seg`'s result bits when `clear` (both scan drivers: a
/// count-only scan left them zero).
fn clear_result_bits(clear: bool, enc: &mut wgpu::CommandEncoder, seg: &ResidentSegment) {
    if clear {
        enc.clear_buffer(&seg.buffers.result_bits, 0, None);
    }
}

/// A class set's passes (`search_classes`): one `scan` a class string,
/// each with its parameters in its own uniform (its own bind groups; the
/// first alternative's are the engine's), their line bits OR-ed, then the
/// pop-counts. The passes share the segment's result bits and counters, so
/// whichever bind group is set last serves the pop-count.
pub(crate) struct ClassScans<'a> {
    /// Each pass's pipeline and, after the first, its bind groups.
    pub(crate) passes: Vec<(&'a wgpu::ComputePipeline, Option<&'a [wgpu::BindGroup]>)>,
    /// Clear the result bits first (as [`Scan::clear_result`]).
    pub(crate) clear_result: bool,
    pub(crate) count: PopCount<'a>,
    pub(crate) grid: Grid,
}

impl KernelDriver for ClassScans<'_> {
    fn label(&self) -> &'static str {
        GpuKernel::Scan.name()
    }

    fn clear(&self, enc: &mut wgpu::CommandEncoder, seg: &ResidentSegment) {
        clear_result_bits(self.clear_result, enc, seg);
    }

    fn record(&self, pass: &mut wgpu::ComputePass<'_>, run: SegmentRun<'_>) {
        let (x, y) = self.grid.dims(groups(run.segment.n_bytes));
        for (pipeline, binds) in &self.passes {
            pass.set_bind_group(0, binds.map_or(run.bind, |b| &b[run.index]), &[]);
            pass.set_pipeline(pipeline);
            pass.dispatch_workgroups(x, y, 1);
        }
        self.count.record(pass, run.segment, self.grid);
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
        // The class-string pipelines (the uniform's module only).
        let (module, info) =
            validated("scan", &MODULE.source(), naga::valid::Capabilities::empty());
        for i in 0..CLASS_PIPELINES {
            let mut consts = naga::back::PipelineConstants::default();
            for (k, v) in class_constants(i) {
                consts.insert(k.to_string(), v);
            }
            let ep = Some((naga::ShaderStage::Compute, "scan"));
            if let Err(e) =
                naga::back::pipeline_constants::process_overrides(&module, &info, ep, &consts)
            {
                panic!("class scan pipeline {i}: {e:?}");
            }
        }
        // Each class uniform's pipeline has its distances and way as
        // constants, and no two share one.
        let mut seen = std::collections::HashSet::new();
        // Each string's flags (steps in bits 8-15; `\b`, `^`, `$` and a
        // head in bits 0-4) and whether a word of it is looked up:
        // in the first string, the pair's second, both or neither.
        let mut shapes = Vec::new();
        for k in 0..SHAPES as u32 {
            // Steps, a lookup, `^`: each shape in the first string.
            shapes.push((((k & 1) << 8 | (k >> 2) << 2, k & 2 != 0), (0, false)));
        }
        shapes.extend([
            ((0, false), (1 << 8, false)),
            ((0, false), (0, true)),
            ((0, false), (8, false)),
            ((1, false), (16, false)),
            ((2 << 8 | 4, true), (5 << 8 | 16, true)),
        ]);
        for pair in [false, true] {
            for d2 in -20i32..=20 {
                for dense in [false, true] {
                    for d2b in [-17i32, -3, 0, 5, 15, 31] {
                        for &((f1, l1), (f2, l2)) in &shapes {
                            let mut prm = [0u32; P::WORDS];
                            (prm[P::D2], prm[P::DENSE]) = (d2 as u32, u32::from(dense));
                            (prm[PAIR], prm[ALT2 + 3]) = (u32::from(pair), d2b as u32);
                            (prm[P::WIN_LO], prm[ALT2 + 7]) = (f1, f2);
                            // A lane looked up: the first string's third
                            // word, the second's first (from position 32).
                            prm[P::LANES + 8 * 2 + LOOKED_UP] = u32::from(l1) << 15;
                            prm[P::LANES + 8 * 8 + LOOKED_UP] = u32::from(pair && l2) << 7;
                            let (f2, l2) = if pair { (f2, l2) } else { (0, false) };
                            let walk = (f1 | f2) >> 8 != 0;
                            let edge = (f1 | f2) & EDGES != 0;
                            let i = class_pipeline_of(&prm);
                            assert!(i < CLASS_PIPELINES);
                            let c = class_constants(i).map(|(_, v)| v);
                            let d2r2 = if pair { d2b & 15 } else { 0 };
                            let want = [
                                3,
                                d2 & 15,
                                i32::from(dense),
                                1,
                                i32::from(pair),
                                d2r2,
                                i32::from(walk),
                                i32::from(l1 || l2),
                                i32::from(edge),
                            ];
                            let what = format!("{pair} {d2} {dense} {d2b} {f1:x} {f2:x} {l1} {l2}");
                            assert_eq!(c, want.map(f64::from), "{what}");
                            seen.insert((i, pair, d2 & 15, dense, d2r2, walk, l1 || l2, edge));
                        }
                    }
                }
            }
        }
        let pipes: std::collections::HashSet<usize> = seen.iter().map(|k| k.0).collect();
        assert_eq!(pipes.len(), seen.len());
        assert_eq!(pipes.len(), SHAPES * (32 + 32 * 4));
    }

    /// A class string's uniform: each position's test, the classes' bits,
    /// the `\b` flags, and the SWAR tests on its rarest byte positions.
    #[test]
    fn class_params_pack_tests_classes_and_picks() {
        let hir = regex_syntax::ParserBuilder::new()
            .build()
            .parse("(?i:e)r\\d[0-9a-f]x\\b")
            .unwrap();
        let cs = ClassString::from_hir(&hir).unwrap();
        let mut freq = Box::new([100u64; 256]);
        freq[b'x' as usize] = 1;
        let freq = RareBytes::new(freq, Vec::new());
        let p = class_params(&cs, &freq);
        assert_eq!(p[P::PAT_LEN], 5);
        assert_eq!(p[P::PAT], u32::from(b'e') | 5 << 8);
        assert_eq!(p[P::PAT + 1], u32::from(b'r'));
        assert_eq!(p[P::PAT + 2], 1 << 8);
        assert_eq!(p[P::PAT + 3], 2 << 8);
        // '0'..='9' in class 0: bits 48-57, word 1 (bits 32-63).
        assert_eq!(p[P::NEED + 1], 0x03FF << 16);
        assert_eq!(p[P::NEED + 8 + 3], 0x7E);
        assert_eq!(p[P::WIN_LO], 2);
        // 'x' (position 4) is rarest; then 'r' or 'e' (both 100, 'e' with
        // 'E' counts 200): 'r'.
        assert_eq!(p[P::R1], 4);
        assert_eq!(p[P::D2] as i32, 1 - 4);
        assert_eq!(p[P::B2], u32::from(b'r') * 0x0101_0101);
        // `\b` after it: the pipelines with `EDGE`.
        assert_eq!(
            class_pipeline_of(&p),
            ((1 - 4) & 15) as usize + 4 * CLASS_SHAPE
        );
        // One byte position: both tests are its own.
        let hir = regex_syntax::ParserBuilder::new()
            .build()
            .parse("\\bu\\d{5}\\b")
            .unwrap();
        let p = class_params(&ClassString::from_hir(&hir).unwrap(), &freq);
        assert_eq!((p[P::R1], p[P::D2], p[P::WIN_LO]), (0, 0, 3));
        assert_eq!(p[P::OR1], 0);
    }

    /// `class_at`'s word arithmetic, step for step on the host, over the
    /// uniform `class_params` packs: the same verdict as the class string
    /// itself at every start of random lines (the GPU tests run the kernel
    /// on lavapipe; this one pins the packing without a GPU).
    #[test]
    fn class_lanes_agree_with_the_class_string() {
        fn class_at(p: &[u32; P::WORDS], k: usize, hay: &[u8], at: usize) -> bool {
            let (m, fl, head) = match k {
                0 => (p[P::PAT_LEN], p[P::WIN_LO], p[P::SIG]),
                _ => (p[ALT2 + 6], p[ALT2 + 7], p[ALT2 + 8]),
            };
            let (m, base) = (m as usize, 32 * k);
            if at + m > hay.len() {
                return false;
            }
            let hb = 0x8080_8080u32;
            for i in (0..m).step_by(4) {
                let mut b = [b'\n'; 4];
                for (j, x) in b.iter_mut().enumerate() {
                    *x = hay.get(at + i + j).copied().unwrap_or(b'\n');
                }
                let w = u32::from_le_bytes(b);
                let l = &p[P::LANES + 2 * (base + i)..P::LANES + 2 * (base + i) + 8];
                if lanes_ok(w, l) & l[5] != l[5] {
                    return false;
                }
                let mut slow = l[6];
                while slow != 0 {
                    let j = slow.trailing_zeros() as usize >> 3;
                    slow &= slow - 1;
                    if !class_ok(p, p[P::PAT + base + i + j], b[j]) {
                        return false;
                    }
                }
            }
            let mut q = at + m;
            for s in 0..(fl >> 8 & 0xFF) as usize {
                let e = p[P::PAT + base + m + s];
                let (lo, hi) = (e >> 12 & 0xFF, e >> 20 & 0xFF);
                let hi = if hi == 0xFF { u32::MAX } else { hi };
                let mut k = 0;
                if e >> STEP_RANGED & 1 == 1 {
                    // Four bytes a step, by the lane test of position m + s.
                    let j = base + m + s;
                    let g = P::LANES + 2 * (j / 4 * 4);
                    let l: [u32; 5] =
                        std::array::from_fn(|k| (p[g + k] >> (8 * (j % 4)) & 0xFF) * 0x0101_0101);
                    while k < hi && q < hay.len() {
                        let mut b = [b'\n'; 4];
                        for (i, x) in b.iter_mut().enumerate() {
                            *x = hay.get(q + i).copied().unwrap_or(b'\n');
                        }
                        let w = u32::from_le_bytes(b);
                        let run = (!lanes_ok(w, &l) & hb).trailing_zeros() >> 3;
                        let take = run.min(hi - k).min((hay.len() - q) as u32);
                        q += take as usize;
                        k += take;
                        if run < 4 {
                            break;
                        }
                    }
                } else {
                    while k < hi && q < hay.len() && class_ok(p, e & 0x7FF, hay[q]) {
                        q += 1;
                        k += 1;
                    }
                }
                if k < lo {
                    return false;
                }
            }
            let word = |i: Option<usize>| {
                i.and_then(|i| hay.get(i))
                    .is_some_and(|&b| crate::query::classes::is_word(b))
            };
            if fl & 1 != 0 && word(at.checked_sub(1)) == word(Some(at)) {
                return false;
            }
            if fl & 2 != 0 && word(Some(q - 1)) == word(Some(q)) {
                return false;
            }
            if fl & 8 != 0 && q < hay.len() {
                return false;
            }
            if fl & 4 != 0 {
                let mut s = at;
                while fl & 16 != 0 && s > 0 && class_ok(p, head, hay[s - 1]) {
                    s -= 1;
                }
                if s > 0 {
                    return false;
                }
            }
            true
        }
        /// `lanes_ok`: the lanes of `w` that the lane test in `l` (fold,
        /// lo1, hi1, lo2, hi2) takes, as high bits.
        fn lanes_ok(w: u32, l: &[u32]) -> u32 {
            let x = ((w | l[0]) & 0x7F7F_7F7F) | 0x8080_8080;
            ((x.wrapping_sub(l[1]) & !x.wrapping_sub(l[2]))
                | (x.wrapping_sub(l[3]) & !x.wrapping_sub(l[4])))
                & !w
                & 0x8080_8080
        }
        fn class_ok(p: &[u32; P::WORDS], e: u32, byte: u8) -> bool {
            match e >> 8 {
                0 => u32::from(byte) == e & 0xFF,
                5 => u32::from(byte | 0x20) == e & 0xFF,
                k => {
                    let w = (k as usize - 1) * 8 + usize::from(byte >> 5);
                    p[P::NEED + w] >> (byte & 31) & 1 == 1
                }
            }
        }
        let freq = RareBytes::new(Box::new([100u64; 256]), Vec::new());
        let alphabet = b"aA0b9fF_x- .\xe9zZ\t";
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        let res = [
            r"trace=[0-9a-f]{4}",
            r"\bu\d{5}\b",
            r"(?i)a[0-9]x[0-9]",
            r"\w\d[a-fA-F]z",
            r"[^a]x\w{3}\b",
            r"\d{4}-\d\d-\d\dT",
            r"(?-u:\xe9)[A-Za-z]9",
            r"x[0-9a-f]{11}.",
            r"x\d+-[ab]{1,3}z",
            r"^\s*a\d+$",
            r"^a[^a]*$",
            r"-\w+\b",
            r"(?i)za\d{2,}\b",
            r"-[A-Za-z]{2,}\d",
            r"a\d{1,6}\.",
            r"_[0-9a-f]{3,}$",
            r"_(?i:[a-z])+\b",
            r" [a-z_]{0,9}\d",
        ];
        let parse = |re: &str| {
            let hir = regex_syntax::ParserBuilder::new()
                .utf8(false)
                .build()
                .parse(re)
                .unwrap();
            ClassString::from_hir(&hir).unwrap_or_else(|| panic!("{re}"))
        };
        // Each alone, and each as the second of a pair after the one
        // before it (where the pair's classes fit).
        let (mut pairs, mut ranged, mut looked_up) = (0, 0, 0);
        for (i, re) in res.iter().enumerate() {
            let cs = parse(re);
            let mut packed = vec![(class_params(&cs, &freq), 0)];
            let p = &packed[0].0;
            for s in 0..cs.steps.len() {
                match p[P::PAT + p[P::PAT_LEN] as usize + s] >> STEP_RANGED & 1 {
                    1 => ranged += 1,
                    _ => looked_up += 1,
                }
            }
            let prev = parse(res[(i + res.len() - 1) % res.len()]);
            if let Some(p) = class_pair_params(&prev, &cs, &freq) {
                assert_eq!(class_passes(&[prev.clone(), cs.clone()], &freq), vec![p]);
                packed.push((p, 1));
                pairs += 1;
            }
            for (p, k) in &packed {
                for _ in 0..400 {
                    let line: Vec<u8> = (0..next(24))
                        .map(|_| alphabet[next(alphabet.len())])
                        .collect();
                    for at in 0..line.len() {
                        assert_eq!(
                            class_at(p, *k, &line, at),
                            cs.matches_at(&line, at),
                            "{re} (string {k} of its pass) at {at} of {:?}",
                            String::from_utf8_lossy(&line)
                        );
                        if *k == 1 {
                            assert_eq!(class_at(p, 0, &line, at), prev.matches_at(&line, at));
                        }
                    }
                }
            }
        }
        assert!(pairs >= 8, "{pairs}");
        // Both ways of walking a step ran: four bytes a step (`\d+`,
        // `[ab]{1,3}`) and a byte a step (`\w{3}`, `[^a]*`).
        assert!(ranged >= 8 && looked_up >= 2, "{ranged} {looked_up}");
    }
}
