//! `brute-line`: one thread per line scans its line (the naive baseline).
use super::{Module, View};

/// The shader module.
pub(crate) const MODULE: Module = Module {
    label: "brute-line",
    view: View::U32,
    wgsl: include_str!("brute_line.wgsl"),
    entry_points: &["brute_line"],
};
