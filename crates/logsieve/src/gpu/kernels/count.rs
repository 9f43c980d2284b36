//! Population counts of the per-line bit sets (matching and candidate
//! lines), so that a count query reads back 16 bytes per segment.
use super::{Module, View};

/// The shader module.
pub(crate) const MODULE: Module = Module {
    label: "count",
    view: View::U32,
    wgsl: include_str!("count.wgsl"),
    entry_points: &["count_result", "count_cand", "count_result_zero"],
};
