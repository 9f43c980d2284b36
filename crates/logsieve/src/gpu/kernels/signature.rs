//! `signature`: a per-line 128-bit presence mask of `byte & 127`, built on
//! the GPU once at upload (16 bytes per line, resident); a query's phase 1
//! reads 16 bytes per line instead of the line; phase 2 is two-phase's.
use super::{Module, View};

/// The shader module.
pub(crate) const MODULE: Module = Module {
    label: "signature",
    view: View::U32,
    wgsl: include_str!("signature.wgsl"),
    entry_points: &["build", "phase1"],
};

/// The presence bits a line needs to hold the (already folded) pattern.
pub(crate) fn query_mask(folded: &[u8]) -> [u32; 4] {
    let mut m = [0u32; 4];
    for &b in folded {
        let b = b & 127;
        m[(b >> 5) as usize] |= 1 << (b & 31);
    }
    m
}
