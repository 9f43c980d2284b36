//! `prefix-hash`: see `prefix_hash.wgsl` (many literals).
use super::{set_params as SP, Module, View};
use crate::cpu::multi::{bucket_starts, PatternSet};

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

/// Hashed prefixes of up to 4 bytes (prefix_hash.wgsl).
pub(crate) fn table(set: &PatternSet, words: &mut Vec<u32>, mpw: &mut [u32; SP::WORDS]) {
    let k = set.min_len().clamp(1, 4);
    let g = set.uniq.len() as u64;
    let bits = (g * 2).next_power_of_two().trailing_zeros().clamp(8, 24);
    let key = |p: &[u8]| {
        p[..k]
            .iter()
            .enumerate()
            .fold(0u32, |a, (i, &b)| a | (u32::from(b) << (8 * i)))
    };
    let mut ents: Vec<(u32, u32, u32)> = set
        .uniq
        .iter()
        .enumerate()
        .map(|(gi, p)| {
            let kk = key(p);
            (kk.wrapping_mul(0x9E37_79B1) >> (32 - bits), kk, gi as u32)
        })
        .collect();
    ents.sort_unstable();
    let start = bucket_starts(ents.iter().map(|e| e.0), 1 << bits);
    mpw[SP::A] = words.len() as u32;
    for e in &ents {
        words.push(e.1);
        words.push(e.2);
    }
    mpw[SP::C] = words.len() as u32;
    words.extend_from_slice(&start);
    mpw[SP::D] = bits;
    mpw[SP::E] = k as u32;
}
