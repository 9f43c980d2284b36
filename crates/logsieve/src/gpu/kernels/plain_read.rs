//! `plain-read`: vec4<u32> reads of the resident corpus and a trivial
//! reduction: the memory-bandwidth ceiling that `scan` is measured against.
use super::{Module, View};

/// The shader module.
pub(crate) const MODULE: Module = Module {
    label: "plain-read",
    view: View::Vec4,
    wgsl: include_str!("plain_read.wgsl"),
    entry_points: &["plain_read"],
};

/// A value the XOR of a vec4 is compared with (any value works).
pub(crate) const MAGIC: u32 = 0x9E37_79B9;

/// vec4<u32> loads per thread (`VPT` in plain_read.wgsl). 1 and 4 measured
/// the same on the H100 (0.066 vs 0.067 ms for 194 MB).
pub(crate) const VPT: u64 = 4;
