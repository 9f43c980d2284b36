//! `bloom`: see `bloom.wgsl` (many literals, issue 5): 16-byte streaming
//! loads, a two-probe bit filter in workgroup memory, then a global hash
//! table and verification.
use super::{Module, View};

/// The shader module (its filter at the default size; the pipeline uses
/// [`source`]).
pub(crate) const MODULE: Module = Module {
    label: "bloom",
    view: View::Vec4,
    wgsl: concat!(
        include_str!("multi_common.wgsl"),
        include_str!("bloom.wgsl")
    ),
    entry_points: &["bloom"],
};

/// The line of `bloom.wgsl` that sizes the filter.
const WORDS_LINE: &str = "const BLOOM_WORDS: u32 = 4096u;";

/// The largest filter: 32 KiB. A larger one (H100: 48 KiB allowed) would
/// cut the workgroups resident per SM (228 KiB of shared memory on an
/// H100: 7 of 32 KiB, 4 of 48 KiB).
pub(crate) const MAX_WORDS: u32 = 8192;

/// The filter's size in words for a device that allows `storage` bytes of
/// workgroup memory: the largest power of two that fits, at most
/// [`MAX_WORDS`] (4096 words under WebGPU's default 16 KiB; 2048 when a
/// device offers only the 16,352 bytes of wgpu's downlevel defaults).
pub(crate) fn filter_words(storage: u32) -> u32 {
    let w = (storage / 4).clamp(1, MAX_WORDS);
    1 << (31 - w.leading_zeros())
}

/// The module's WGSL with a filter of `words` words.
pub(crate) fn source(words: u32) -> String {
    let src = MODULE.source();
    assert!(
        src.contains(WORDS_LINE),
        "bloom.wgsl: the filter size line moved"
    );
    src.replace(WORDS_LINE, &format!("const BLOOM_WORDS: u32 = {words}u;"))
}

/// Workgroups per dispatch at most: each loads the filter once, then
/// loops over the segment with a grid stride (two vec4s an iteration).
/// On the H100 (194 MB, 10k patterns, kernel ms): 512 groups 0.962, 1024
/// 0.990; before the one-word filter, 512 1.37, 1024 1.40, 2048 1.49, 4096
/// 1.41, 8192 1.54, 16384 1.78 (docs/bench/multi-h100-2026-11-22.md): a
/// filter load per workgroup (up to 32 KiB) is worth sharing over many
/// vec4s. `LOGSIEVE_GPU_BLOOM_GROUPS=N` overrides it (benchmarks, and tests
/// that make the grid stride loop).
pub(crate) const MAX_GROUPS: u64 = 512;

/// [`MAX_GROUPS`], or the override from the environment.
pub(crate) fn max_groups() -> u64 {
    std::env::var("LOGSIEVE_GPU_BLOOM_GROUPS")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(MAX_GROUPS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_sizes() {
        assert_eq!(filter_words(16384), 4096);
        assert_eq!(filter_words(16352), 2048);
        assert_eq!(filter_words(32768), 8192);
        assert_eq!(filter_words(49152), 8192);
        assert_eq!(filter_words(0), 1);
    }

    /// Every size the pipeline may ask for validates.
    #[test]
    fn every_filter_size_validates() {
        for words in [1024, 2048, 4096, 8192] {
            let src = source(words);
            assert!(src.contains(&format!("BLOOM_WORDS: u32 = {words}u;")));
            let module = naga::front::wgsl::parse_str(&src)
                .unwrap_or_else(|e| panic!("{words}: {}", e.emit_to_string(&src)));
            naga::valid::Validator::new(
                naga::valid::ValidationFlags::all(),
                naga::valid::Capabilities::empty(),
            )
            .validate(&module)
            .unwrap_or_else(|e| panic!("{words}: {}", e.emit_to_string(&src)));
        }
    }
}
