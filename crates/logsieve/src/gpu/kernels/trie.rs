//! `trie`: see `trie.wgsl` (many literals, issue 5).
use super::{Module, View};

/// The shader module.
pub(crate) const MODULE: Module = Module {
    label: "trie",
    view: View::U32,
    wgsl: concat!(include_str!("multi_common.wgsl"), include_str!("trie.wgsl")),
    entry_points: &["trie"],
};
