//! `prefix-hash`: see `prefix_hash.wgsl` (many literals, issue 5).
use super::{Module, View};

/// The shader module.
pub(crate) const MODULE: Module = Module {
    label: "prefix-hash",
    view: View::U32,
    wgsl: concat!(
        include_str!("multi_common.wgsl"),
        include_str!("prefix_hash.wgsl")
    ),
    entry_points: &["prefix_hash"],
};
