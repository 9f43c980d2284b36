//! The WGSL kernels, one `.rs` + `.wgsl` pair each, and what they share.
//!
//! Every module is `common.wgsl` (bindings, the query uniform, helpers) +
//! one corpus view (`bytes_u32.wgsl` or `bytes_vec4.wgsl`) + the kernel's
//! own file. One bind-group layout serves all pipelines, so a segment has a
//! single bind group whatever kernel runs.

pub(crate) mod ac;
pub(crate) mod bloom;
pub(crate) mod brute_byte;
pub(crate) mod brute_line;
pub(crate) mod count;
pub(crate) mod plain_read;
pub(crate) mod prefix_hash;
pub(crate) mod scan;
pub(crate) mod signature;
pub(crate) mod trie;
pub(crate) mod two_phase;

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
pub(crate) const MODULES: [&Module; 11] = [
    &brute_line::MODULE,
    &brute_byte::MODULE,
    &two_phase::MODULE,
    &scan::MODULE,
    &signature::MODULE,
    &plain_read::MODULE,
    &count::MODULE,
    // Many literals (gpu/multi.rs).
    &trie::MODULE,
    &ac::MODULE,
    &prefix_hash::MODULE,
    &bloom::MODULE,
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
    /// Size in u32 words (512 bytes, a multiple of 16 as uniforms need).
    pub(crate) const WORDS: usize = 128;
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
    }
}
