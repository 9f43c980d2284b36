//! The WGSL kernels, one `.rs` + `.wgsl` pair each, and what they share:
//! each `.rs` holds its shader module and its driver, which records the
//! kernel over the resident segments ([`KernelDriver`]).
//!
//! Every module is `common.wgsl` (bindings, the query uniform, shared functions) +
//! one corpus view (`bytes_u32.wgsl` or `bytes_vec4.wgsl`) + the kernel's
//! own file. One bind-group layout serves all pipelines, so a segment has a
//! single bind group whatever kernel runs. The many-literal kernels (`trie`,
//! `ac`, `prefix-hash`, `bloom`) add `multi_common.wgsl` and have their own
//! layout, tables and driver (`multi_common.rs`).
//!
//! A query is one command buffer: each driver's clears, then one compute
//! pass in which every segment gets the kernel's dispatches followed by the
//! pop-count of its result bits (`count.rs`) and then the driver's own
//! last dispatch, if any (the per-pattern list), then the readback copies.

pub(crate) mod ac;
pub(crate) mod bitap;
pub(crate) mod bloom;
pub(crate) mod brute_byte;
pub(crate) mod brute_line;
pub(crate) mod count;
pub(crate) mod multi_common;
pub(crate) mod pattern_list;
pub(crate) mod per_line;
pub(crate) mod plain_read;
pub(crate) mod prefix_hash;
pub(crate) mod scan;
pub(crate) mod shift_and;
pub(crate) mod signature;
pub(crate) mod trie;
pub(crate) mod two_phase;

use super::segment::ResidentSegment;

const COMMON: &str = include_str!("common.wgsl");
const BYTES_U32: &str = include_str!("bytes_u32.wgsl");
const BYTES_VEC4: &str = include_str!("bytes_vec4.wgsl");

/// How a kernel reads the corpus buffer.
#[derive(Clone, Copy)]
pub(crate) enum View {
    /// `array<u32>`: byte-by-byte kernels.
    U32,
    /// `array<vec4<u32>>`: 16-byte streaming kernels.
    Vec4,
}

/// One shader module: its label, the corpus view and its own WGSL.
pub(crate) struct Module {
    pub(crate) label: &'static str,
    pub(crate) view: View,
    pub(crate) wgsl: &'static str,
    /// What the engine asks of the module (checked by the naga test).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) entry_points: &'static [&'static str],
}

impl Module {
    /// The full WGSL text of the module.
    pub(crate) fn source(&self) -> String {
        let view = match self.view {
            View::U32 => BYTES_U32,
            View::Vec4 => BYTES_VEC4,
        };
        format!("{COMMON}\n{view}\n{}", self.wgsl)
    }
}

/// Every module the engine compiles (the naga test walks them).
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) const MODULES: [&Module; 14] = [
    &brute_line::MODULE,
    &brute_byte::MODULE,
    &two_phase::MODULE,
    &scan::MODULE,
    &signature::MODULE,
    &plain_read::MODULE,
    &count::MODULE,
    // Many literals (multi_common.rs and each kernel's table).
    &trie::MODULE,
    &ac::MODULE,
    &prefix_hash::MODULE,
    &bloom::MODULE,
    // Their per-pattern counters, listed.
    &pattern_list::MODULE,
    // Tier 2 of regex (the position automaton).
    &shift_and::MODULE,
    // --fuzzy K (Wu–Manber bitap).
    &bitap::MODULE,
];

/// Word offsets of the fields of the WGSL `Params` uniform.
pub(crate) mod params {
    pub(crate) const PAT: usize = 0;
    pub(crate) const NEED: usize = 64;
    pub(crate) const SIG: usize = 96;
    pub(crate) const PAT_LEN: usize = 100;
    pub(crate) const FOLD: usize = 101;
    pub(crate) const R1: usize = 102;
    pub(crate) const D2: usize = 103;
    pub(crate) const B1: usize = 104;
    pub(crate) const B2: usize = 105;
    pub(crate) const OR1: usize = 106;
    pub(crate) const OR2: usize = 107;
    pub(crate) const DENSE: usize = 108;
    pub(crate) const WIN_LO: usize = 109;
    pub(crate) const WIN_HI: usize = 110;
    pub(crate) const MAGIC: usize = 111;
    pub(crate) const PATW: usize = 112;
    pub(crate) const LANES: usize = 128;
    /// Size in u32 words (1 KiB, a multiple of 16 as uniforms need).
    pub(crate) const WORDS: usize = 256;
}

/// Field offsets of the many-literal kernels' `MParams` uniform
/// (multi_common.wgsl); the meaning of `A`..`H` is each kernel's own.
pub(crate) mod set_params {
    pub(crate) const FOLD: usize = 0;
    pub(crate) const PER_PATTERN: usize = 1;
    pub(crate) const N_GROUPS: usize = 2;
    pub(crate) const PAT_OFF: usize = 3;
    pub(crate) const BYTES_OFF: usize = 4;
    pub(crate) const A: usize = 5;
    pub(crate) const B: usize = 6;
    pub(crate) const C: usize = 7;
    pub(crate) const D: usize = 8;
    pub(crate) const E: usize = 9;
    pub(crate) const F: usize = 10;
    pub(crate) const DIAG: usize = 11;
    pub(crate) const G: usize = 12;
    pub(crate) const H: usize = 13;
    /// bloom: 1 when its filter is read from the tables (global memory).
    pub(crate) const GLOBAL: usize = 14;
    /// bloom: the parts of its workgroup filter.
    pub(crate) const PARTS: usize = 15;
    /// Size in u32 words.
    pub(crate) const WORDS: usize = 16;
}

/// The device's bound on workgroups per dispatch dimension: dispatches
/// beyond it are 2-D.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Grid {
    /// `max_compute_workgroups_per_dimension`.
    pub(crate) max_per_dimension: u32,
}

impl Grid {
    /// The x, y of a 2-D dispatch of `groups` workgroups.
    pub(crate) fn dims(self, groups: u64) -> (u32, u32) {
        let max = u64::from(self.max_per_dimension.max(1));
        let groups = groups.max(1);
        let x = groups.min(max);
        let y = groups.div_ceil(x);
        (x as u32, y as u32)
    }

    /// Records `pipeline` over `groups` workgroups.
    pub(crate) fn run(
        self,
        pass: &mut wgpu::ComputePass<'_>,
        pipeline: &wgpu::ComputePipeline,
        groups: u64,
    ) {
        pass.set_pipeline(pipeline);
        let (x, y) = self.dims(groups);
        pass.dispatch_workgroups(x, y, 1);
    }
}

/// One segment as a driver records it.
pub(crate) struct SegmentRun<'a> {
    /// The segment.
    pub(crate) segment: &'a ResidentSegment,
    /// Its bind group in the engine's layout.
    pub(crate) bind: &'a wgpu::BindGroup,
    /// Its index among the corpus's GPU segments.
    pub(crate) index: usize,
}

/// How a kernel runs over the resident segments: what it clears, what it
/// records per segment in the query's one compute pass, and what of its
/// own it reads back. The corpus owns the order (clears, the pass over
/// every segment, its counters' and bits' readback copies, then the
/// driver's own), so that every kernel's command buffer has one shape.
pub(crate) trait KernelDriver {
    /// The compute pass's label (the kernel's name).
    fn label(&self) -> &'static str;

    /// Encoder commands before any segment's clears (default: none).
    fn prepare(&self, _enc: &mut wgpu::CommandEncoder) {}

    /// Clears what the kernel accumulates into on `seg` (encoder commands:
    /// they cannot go inside the pass).
    fn clear(&self, enc: &mut wgpu::CommandEncoder, seg: &ResidentSegment);

    /// Records the kernel over one segment: bind groups, pipelines,
    /// dispatches, then the pop-count of its result bits (if any).
    fn record(&self, pass: &mut wgpu::ComputePass<'_>, run: SegmentRun<'_>);

    /// Records what runs once after every segment's dispatches, in the
    /// same pass (default: none).
    fn finish(&self, _pass: &mut wgpu::ComputePass<'_>) {}

    /// Copies the kernel's own results to its readback, after the corpus's
    /// readback copies (default: none).
    fn copy_out(&self, _enc: &mut wgpu::CommandEncoder) {}

    /// The kernel's own readback buffer and the bytes to map (default:
    /// none).
    fn readback(&self) -> Option<(&wgpu::Buffer, u64)> {
        None
    }
}

/// A driver chosen at run time (the single-literal kernels) is a driver.
impl<D: KernelDriver + ?Sized> KernelDriver for Box<D> {
    fn label(&self) -> &'static str {
        (**self).label()
    }
    fn prepare(&self, enc: &mut wgpu::CommandEncoder) {
        (**self).prepare(enc)
    }
    fn clear(&self, enc: &mut wgpu::CommandEncoder, seg: &ResidentSegment) {
        (**self).clear(enc, seg)
    }
    fn record(&self, pass: &mut wgpu::ComputePass<'_>, run: SegmentRun<'_>) {
        (**self).record(pass, run)
    }
    fn finish(&self, pass: &mut wgpu::ComputePass<'_>) {
        (**self).finish(pass)
    }
    fn copy_out(&self, enc: &mut wgpu::CommandEncoder) {
        (**self).copy_out(enc)
    }
    fn readback(&self) -> Option<(&wgpu::Buffer, u64)> {
        (**self).readback()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `src` parsed and validated by naga with `caps` (panics with naga's
    /// message, prefixed by `what`).
    pub(crate) fn validated(
        what: &str,
        src: &str,
        caps: naga::valid::Capabilities,
    ) -> (naga::Module, naga::valid::ModuleInfo) {
        let module = naga::front::wgsl::parse_str(src)
            .unwrap_or_else(|e| panic!("{what}: {}", e.emit_to_string(src)));
        let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps)
            .validate(&module)
            .unwrap_or_else(|e| panic!("{what}: {}", e.emit_to_string(src)));
        (module, info)
    }

    /// Every module parses and validates with naga (no adapter needed), and
    /// declares the entry points the engine asks for.
    #[test]
    fn wgsl_validates_with_naga() {
        for m in MODULES {
            let (module, _) = validated(m.label, &m.source(), naga::valid::Capabilities::empty());
            for ep in m.entry_points {
                assert!(
                    module.entry_points.iter().any(|e| e.name == *ep),
                    "{}: no entry point {ep}",
                    m.label
                );
            }
        }
    }

    /// The host's word offsets agree with the WGSL struct's layout.
    #[test]
    fn params_layout_matches_wgsl() {
        let src = scan::MODULE.source();
        let module = naga::front::wgsl::parse_str(&src).unwrap();
        let (_, ty) = module
            .types
            .iter()
            .find(|(_, t)| t.name.as_deref() == Some("Params"))
            .expect("Params struct");
        let naga::TypeInner::Struct { members, span } = &ty.inner else {
            panic!("Params is not a struct");
        };
        assert_eq!(*span as usize, params::WORDS * 4);
        let off = |name: &str| {
            members
                .iter()
                .find(|m| m.name.as_deref() == Some(name))
                .unwrap_or_else(|| panic!("no member {name}"))
                .offset as usize
                / 4
        };
        assert_eq!(off("pat"), params::PAT);
        assert_eq!(off("need"), params::NEED);
        assert_eq!(off("sig"), params::SIG);
        assert_eq!(off("pat_len"), params::PAT_LEN);
        assert_eq!(off("fold"), params::FOLD);
        assert_eq!(off("r1"), params::R1);
        assert_eq!(off("d2"), params::D2);
        assert_eq!(off("b1"), params::B1);
        assert_eq!(off("b2"), params::B2);
        assert_eq!(off("or1"), params::OR1);
        assert_eq!(off("or2"), params::OR2);
        assert_eq!(off("dense"), params::DENSE);
        assert_eq!(off("win_lo"), params::WIN_LO);
        assert_eq!(off("win_hi"), params::WIN_HI);
        assert_eq!(off("magic"), params::MAGIC);
        assert_eq!(off("patw"), params::PATW);
        assert_eq!(off("lanes"), params::LANES);
    }
}
