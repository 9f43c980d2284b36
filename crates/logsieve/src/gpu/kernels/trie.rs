//! `trie`: see `trie.wgsl` (many literals).
use super::{set_params as SP, Module, View};
use crate::cpu::multi::PatternSet;

/// The shader module.
pub(crate) const MODULE: Module = Module {
    label: "trie",
    view: View::U32,
    wgsl: concat!(include_str!("multi_common.wgsl"), include_str!("trie.wgsl")),
    entry_points: &["trie"],
};

/// A pointer trie of the groups (node 0 the root), children by label.
pub(crate) struct Trie {
    pub(crate) children: Vec<Vec<(u8, u32)>>,
    /// Group + 1 ending at each node, 0 for none.
    pub(crate) term: Vec<u32>,
}

impl Trie {
    pub(crate) fn new(set: &PatternSet) -> Trie {
        let mut t = Trie {
            children: vec![Vec::new()],
            term: vec![0],
        };
        for (g, p) in set.uniq.iter().enumerate() {
            let mut n = 0usize;
            for &b in p {
                n = match t.children[n].binary_search_by_key(&b, |c| c.0) {
                    Ok(i) => t.children[n][i].1 as usize,
                    Err(i) => {
                        let id = t.children.len() as u32;
                        t.children[n].insert(i, (b, id));
                        t.children.push(Vec::new());
                        t.term.push(0);
                        id as usize
                    }
                };
            }
            t.term[n] = g as u32 + 1;
        }
        t
    }
}

/// The compact trie's words (trie.wgsl describes the layout).
pub(crate) fn table(set: &PatternSet, words: &mut Vec<u32>, mpw: &mut [u32; SP::WORDS]) {
    let t = Trie::new(set);
    let n = t.children.len();
    let size = |i: usize, narrow: bool| {
        let c = t.children[i].len();
        1 + c.div_ceil(4) + if narrow { c.div_ceil(2) } else { c }
    };
    // Offsets relative to the section; word 0 is a dummy so that 0
    // means "no child". The root is not stored (its children are the
    // 256-entry table).
    let total_narrow: usize = 1 + (1..n).map(|i| size(i, true)).sum::<usize>();
    let narrow = total_narrow <= 0xFFFF;
    let mut off = vec![0u32; n];
    let mut at = 1usize;
    for (i, o) in off.iter_mut().enumerate().skip(1) {
        *o = at as u32;
        at += size(i, narrow);
    }
    let sec = words.len();
    mpw[SP::A] = sec as u32;
    mpw[SP::B] = u32::from(narrow);
    words.resize(sec + at, 0);
    for i in 1..n {
        let ch = &t.children[i];
        let c = ch.len();
        let o = sec + off[i] as usize;
        words[o] = c as u32 | (t.term[i] << 9);
        let nl = c.div_ceil(4);
        for w in 0..nl {
            let mut v = 0u32;
            for k in 0..4 {
                // Padded with the last label: the first hit is real.
                let lab = ch[(w * 4 + k).min(c - 1)].0;
                v |= u32::from(lab) << (8 * k);
            }
            words[o + 1 + w] = v;
        }
        let cb = o + 1 + nl;
        for (k, &(_, child)) in ch.iter().enumerate() {
            let co = off[child as usize];
            if narrow {
                words[cb + k / 2] |= co << (16 * (k % 2));
            } else {
                words[cb + k] = co;
            }
        }
    }
    mpw[SP::C] = words.len() as u32;
    let mut root = [0u32; 256];
    for &(b, child) in &t.children[0] {
        root[b as usize] = off[child as usize];
    }
    words.extend_from_slice(&root);
}
