//! `scan`: 16-byte coalesced loads, SWAR tests on the pattern's two rarest
//! bytes, exact verification of the survivors, per-line result bits.
use super::{Module, View};

/// The shader module.
pub(crate) const MODULE: Module = Module {
    label: "scan",
    view: View::Vec4,
    wgsl: include_str!("scan.wgsl"),
    entry_points: &["scan"],
};

/// The pipeline kinds of `scan` (its `SPEC` constant): one byte, two
/// bytes, longer. Each pipeline holds only the code its patterns need.
pub(crate) const SPECS: [u32; 3] = [1, 2, 3];

/// The kind of pipeline for a pattern of `len` bytes.
pub(crate) fn spec_for(len: usize) -> usize {
    len.clamp(1, 3) - 1
}

/// The bytes the SWAR tests look for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RarePick {
    /// Pattern index of the rarest byte.
    pub(crate) r1: usize,
    /// Pattern index of the second rarest, if the pattern has two bytes.
    pub(crate) r2: Option<usize>,
}

/// Picks the two rarest pattern positions by the corpus's byte frequencies
/// (`freq[b]`, gathered at upload). Under `fold` a letter stands for both of
/// its cases, so its frequency is the sum of the two. A position with the
/// same byte as `r1` is a poor second test (it passes exactly where the first
/// did, shifted), so a distinct byte is preferred.
pub(crate) fn pick_rare(folded: &[u8], fold: bool, freq: &[u64; 256]) -> RarePick {
    let f = |b: u8| -> u64 {
        if fold && b.is_ascii_lowercase() {
            freq[b as usize] + freq[b.to_ascii_uppercase() as usize]
        } else {
            freq[b as usize]
        }
    };
    let by_freq = |skip: Option<usize>, avoid: Option<u8>| {
        (0..folded.len())
            .filter(|&i| Some(i) != skip)
            .min_by_key(|&i| (avoid == Some(folded[i]), f(folded[i]), i))
    };
    let r1 = by_freq(None, None).unwrap_or(0);
    let r2 = by_freq(Some(r1), Some(folded[r1]));
    RarePick { r1, r2 }
}

/// vec4<u32> loads per thread (`VPT` in scan.wgsl). Measured on the H100
/// (194 MB, kernel ms): 2 beat 1 slightly (NullPointerException 0.084 ->
/// 0.078); 4 or 8 in a loop, a prefetch of the next load, a workgroup queue
/// of candidates, or extra per-thread loads of line hints were all slower
/// (0.106-0.152 ms where 2 takes 0.074): per-thread loads, not bytes, are
/// what this kernel is short of.
pub(crate) const VPT: u64 = 2;

/// Workgroups of a scan dispatch over a segment of `n_bytes`.
pub(crate) fn groups(n_bytes: u32) -> u64 {
    u64::from(n_bytes).div_ceil(16).div_ceil(256 * VPT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_rarest_distinct_bytes() {
        let mut freq = [100u64; 256];
        freq[b'x' as usize] = 1;
        freq[b'y' as usize] = 2;
        assert_eq!(
            pick_rare(b"axbyx", false, &freq),
            RarePick { r1: 1, r2: Some(3) }
        );
        assert_eq!(pick_rare(b"q", false, &freq), RarePick { r1: 0, r2: None });
        // Under -i, 'A' counts towards 'a'.
        freq[b'a' as usize] = 0;
        freq[b'A' as usize] = 500;
        assert_eq!(pick_rare(b"ab", true, &freq).r1, 1);
        assert_eq!(pick_rare(b"ab", false, &freq).r1, 0);
    }
}
