//! `ac`: see `ac.wgsl` (many literals, issue 5).
use super::{Module, View};

/// The shader module.
pub(crate) const MODULE: Module = Module {
    label: "ac",
    view: View::U32,
    wgsl: concat!(include_str!("multi_common.wgsl"), include_str!("ac.wgsl")),
    entry_points: &["ac"],
};
