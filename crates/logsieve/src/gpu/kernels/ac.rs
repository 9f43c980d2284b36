//! `ac`: see `ac.wgsl` (many literals).
use super::{set_params as SP, Module, View};
use crate::cpu::multi::PatternSet;
use crate::error::Error;

/// The shader module.
pub(crate) const MODULE: Module = Module {
    label: "ac",
    view: View::U32,
    wgsl: concat!(include_str!("multi_common.wgsl"), include_str!("ac.wgsl")),
    entry_points: &["ac"],
};

/// The dense goto table of failure-free Aho-Corasick (ac.wgsl).
pub(crate) fn table(
    set: &PatternSet,
    words: &mut Vec<u32>,
    mpw: &mut [u32; SP::WORDS],
    max_binding: u64,
) -> Result<(), Error> {
    let t = super::trie::Trie::new(set);
    let mut class = [0u32; 256];
    let mut nc = 1u32;
    for p in &set.uniq {
        for &b in p {
            if class[b as usize] == 0 {
                class[b as usize] = nc;
                nc += 1;
            }
        }
    }
    let states = t.children.len() + 1;
    let cells = states as u64 * u64::from(nc);
    if cells * 4 > max_binding {
        return Err(Error::backend(format!(
            "the ac goto table of {} states x {nc} byte classes takes {:.1} MB, more than \
             one GPU binding ({:.1} MB): use --gpu-kernel trie",
            states,
            cells as f64 * 4.0 / 1e6,
            max_binding as f64 / 1e6
        )));
    }
    let sec = words.len();
    mpw[SP::A] = sec as u32;
    mpw[SP::B] = nc;
    words.resize(sec + cells as usize, 0);
    // Trie node i is state i + 1 (the root is state 1, 0 is dead).
    for (i, ch) in t.children.iter().enumerate() {
        let row = sec + (i + 1) * nc as usize;
        for &(b, child) in ch {
            words[row + class[b as usize] as usize] = child + 1;
        }
    }
    mpw[SP::C] = words.len() as u32;
    words.extend_from_slice(&class);
    mpw[SP::D] = words.len() as u32;
    words.push(0);
    words.extend_from_slice(&t.term);
    Ok(())
}
