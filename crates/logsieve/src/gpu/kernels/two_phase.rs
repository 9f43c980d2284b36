//! `two-phase`: phase 1 a per-line histogram prefilter (one workgroup per
//! line), phase 2 one thread per byte with a binary search of the line
//! offsets and an exact compare. The design we started from, implemented as
//! specified so that its numbers can be reported.
use super::{Module, View};

/// The shader module.
pub(crate) const MODULE: Module = Module {
    label: "two-phase",
    view: View::U32,
    wgsl: include_str!("two_phase.wgsl"),
    entry_points: &["phase1", "phase2"],
};

/// The count of each `byte & 127` bin that a line must reach to hold the
/// (already folded) pattern, packed four u8 to a u32 as the WGSL reads it.
/// A pattern is at most 64 bytes, so a count fits a u8.
pub(crate) fn need_counts(folded: &[u8]) -> [u32; 32] {
    let mut bins = [0u8; 128];
    for &b in folded {
        bins[(b & 127) as usize] += 1;
    }
    let mut out = [0u32; 32];
    for (i, &c) in bins.iter().enumerate() {
        out[i / 4] |= u32::from(c) << ((i % 4) * 8);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn need_counts_pack_bins() {
        let n = super::need_counts(b"aab\x81");
        // 'a' = 97 -> word 24 lane 1; 'b' = 98 -> lane 2; 0x81 & 127 = 1.
        assert_eq!(n[24], (2 << 8) | (1 << 16));
        assert_eq!(n[0], 1 << 8);
    }
}
