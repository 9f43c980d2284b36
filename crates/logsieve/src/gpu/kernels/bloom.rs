//! `bloom`: see `bloom.wgsl` (many literals): 16-byte streaming
//! loads, a two-probe bit filter in workgroup memory, then a global hash
//! table and verification.
use super::{set_params as SP, Module, View};
use crate::cpu::multi::{bucket_starts, PatternSet};
use crate::error::Error;
use crate::gpu::MultiKernel;

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
/// 1.41, 8192 1.54, 16384 1.78 (docs/bench/h100-2026-11-22-multi.md): a
/// filter load per workgroup (up to 32 KiB) is worth sharing over many
/// vec4s. [`crate::gpu::GpuTuning::bloom_groups`] overrides it
/// (benchmarks, and tests that make the grid stride loop).
pub(crate) const MAX_GROUPS: u64 = 512;

/// [`MAX_GROUPS`], or the tuning's override (`None` or 0: the default).
pub(crate) fn max_groups(over: Option<u32>) -> u64 {
    over.map(u64::from).filter(|&n| n > 0).unwrap_or(MAX_GROUPS)
}

/// Below this many workgroup-filter bits a key, bloom's filter may move
/// to global memory ([`table`], with [`DIAG_GLOBAL_FILTER`]).
pub(crate) const GLOBAL_BELOW_BITS_PER_KEY: u64 = 8;

/// [`crate::gpu::GpuTuning::bloom_diag`]'s bit that moves the filter of
/// sets past 8 bits a key to global memory (exact results, unlike bits 1
/// and 4; measured slower, hence not the default).
pub(crate) const DIAG_GLOBAL_FILTER: u32 = 8;

/// [`crate::gpu::GpuTuning::bloom_diag`]'s bit that builds the bloom
/// pipeline with verification compiled out (`VERIFY = false`): results are
/// wrong; against bit 1 (verification skipped at run time, its code
/// still in the kernel) it prices what the code's presence costs.
pub(crate) const DIAG_NO_VERIFY_CODE: u32 = 16;

/// The pipeline constants of bloom for the diagnostic switch `diag`, and
/// for filters in parts when `split`.
pub(crate) fn constants(diag: u32, split: bool) -> Vec<(&'static str, f64)> {
    let mut c = vec![("SPLIT", f64::from(u8::from(split)))];
    if diag & DIAG_NO_VERIFY_CODE != 0 {
        c.push(("VERIFY", 0.0));
    }
    c
}

/// bloom's key of a pattern (or of a corpus position): the little-endian
/// words of bytes [0, 4) and [l - 4, l).
pub(crate) fn bloom_key(p: &[u8], l: usize) -> (u32, u32) {
    let w = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes"));
    (w(&p[..4]), w(&p[l - 4..l]))
}

/// bloom's two hashes of a key, as bloom.wgsl computes them: the first
/// probe's, of bytes [0, 4), and the second's (also the bucket's), of the
/// whole key.
pub(crate) fn bloom_hash(a: u32, b: u32) -> (u32, u32) {
    let x = a.wrapping_mul(0x9E37_79B1);
    (x, (x ^ b).wrapping_mul(0x85EB_CA77))
}

/// At most this many parts (`parts * 2^(lb - 5)` words must stay within
/// 65,536 for the kernel's 32-bit word index, and 8 parts of 32 KiB give
/// 100k keys ~21 bits each).
pub(crate) const MAX_PARTS: u32 = 8;

/// bloom's filter for a key (`parts` parts of `lb` bits each): the word
/// over all parts (its part is the word index >> (lb - 5)) and its three
/// bits, the word and one bit from the first hash (of bytes [0, 4)), two
/// bits from the second. All in one word: one workgroup-memory load a
/// position. One part: [`plain_bits`]; more: the word from the first
/// hash's top 16 bits scaled to the parts' words (the `SPLIT` pipeline).
pub(crate) fn bloom_bits(a: u32, b: u32, lb: u32, parts: u32) -> (u32, u32, u32, u32) {
    if parts <= 1 {
        return plain_bits(a, b, lb);
    }
    let (x, y) = bloom_hash(a, b);
    let words = parts << (lb - 5);
    debug_assert!(words <= 1 << 16);
    (
        ((x >> 16) * words) >> 16,
        (x >> 11) & 31,
        y >> 27,
        (y >> 22) & 31,
    )
}

/// The filter of one part (in workgroup memory, or the global filter of
/// up to 2^24 bits): the word from the first hash's top lb - 5 bits, the
/// first bit from its next five.
pub(crate) fn plain_bits(a: u32, b: u32, lb: u32) -> (u32, u32, u32, u32) {
    let (x, y) = bloom_hash(a, b);
    (
        x >> (32 - (lb - 5)),
        (x >> (27 - (lb - 5))) & 31,
        y >> 27,
        (y >> 22) & 31,
    )
}

/// The parts of a filter of 2^`lb` bits a part: `asked` (from
/// [`crate::gpu::GpuTuning::bloom_parts`]; 0: one) within 1..=[`MAX_PARTS`]
/// and the kernel's word index. One part is the default until the H100
/// shows more parts pay: each part reads the corpus and runs every
/// position's hash again, and the pass's fixed work (~1.2 ms of the 10k
/// count's kernel) is most of its time.
pub(crate) fn parts_for(asked: u32, lb: u32) -> u32 {
    asked
        .clamp(1, MAX_PARTS)
        .min((1u32 << 16).checked_shr(lb - 5).unwrap_or(0))
        .max(1)
}

/// bloom's third hash of a key (from the second), whose top bits index the
/// verification filter.
pub(crate) fn bloom_hash3(y: u32) -> u32 {
    (y ^ (y >> 15)).wrapping_mul(0x2C1B_3C6D)
}

/// The bit filter and the hash table of L-byte keys (bloom.wgsl).
pub(crate) fn table(
    set: &PatternSet,
    words: &mut Vec<u32>,
    mpw: &mut [u32; SP::WORDS],
    filter_words: u32,
    global_ok: bool,
    asked_parts: u32,
) -> Result<(), Error> {
    let min = set.min_len();
    if min < MultiKernel::BLOOM_MIN_LEN {
        return Err(Error::backend(format!(
            "the bloom kernel needs patterns of at least {} bytes (the shortest has {min})",
            MultiKernel::BLOOM_MIN_LEN
        )));
    }
    let l = min.min(8);
    let keys: Vec<(u32, u32)> = set.uniq.iter().map(|p| bloom_key(p, l)).collect();
    let mut distinct = keys.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let n = distinct.len() as u64;
    // About 256 filter bits per key (three set per key, in one word),
    // as many as the pipeline's filter holds: 10k keys fill 32 KiB to
    // ~11%. Simulated on the benchmark's 1M lines with its 1k and 10k
    // sets (8-byte keys), positions passing the filter: 1k keys 0.32%
    // with 2^15 bits, 0.013% with 2^18; 10k keys 0.53% with 2^18 (0.11%
    // of positions hold a pattern's key). At least 2^12 bits (a load of
    // 512 bytes per workgroup).
    //
    // Past 8 bits a key (32k keys in 32 KiB) the workgroup filter
    // saturates: at 100k keys in 2^18 bits ~68% of the bits are set and
    // ~31% of random positions pass. A filter of 32 bits a key in global
    // memory instead (2^22 bits, 512 KiB, for 100k; ~0.1% pass) was
    // measured slower on the H100 (1M lines, 100k patterns, per-pattern
    // counts: kernel 6.3 ms against 2.1 ms: a load through L1/L2 at every
    // position costs more than the chance passes' verification, which
    // most positions' own workgroup-filter load rules out), so it runs
    // only when `global_ok` asks for it (LOGSIEVE_BLOOM_DIAG=8,
    // docs/bench/h100-2026-11-24-watchlists.md).
    let max_lb = (filter_words.max(1) * 32).ilog2();
    let global = global_ok && n * GLOBAL_BELOW_BITS_PER_KEY > 1 << max_lb;
    let lb = if global {
        (n * 32).next_power_of_two().ilog2().clamp(max_lb, 24)
    } else {
        (n * 256).next_power_of_two().ilog2().max(12).min(max_lb)
    };
    mpw[SP::GLOBAL] = u32::from(global);
    // Parts: each a workgroup filter of 2^lb bits, keys split by their
    // word (the global filter is one).
    let parts = if global {
        1
    } else {
        parts_for(asked_parts, lb)
    };
    mpw[SP::PARTS] = parts;
    let mut filter = vec![0u32; (parts as usize) << (lb - 5)];
    for &(a, b) in &distinct {
        let (w, b1, b2, b3) = bloom_bits(a, b, lb, parts);
        filter[w as usize] |= (1 << b1) | (1 << b2) | (1 << b3);
    }
    // About two buckets per key.
    let bb = (n * 2).next_power_of_two().ilog2().clamp(1, 24);
    let mut ents: Vec<(u32, u32, u32, u32)> = keys
        .iter()
        .enumerate()
        .map(|(g, &(a, b))| (bloom_hash(a, b).1 >> (32 - bb), a, b, g as u32))
        .collect();
    // The pattern's bytes [l, l + 8) as two words (zero past its end)
    // and its length: most keys that match but are not the pattern
    // differ there, so the entry alone rejects them.
    let next = |g: u32| -> [u32; 3] {
        let p = &set.uniq[g as usize];
        let mut c = [0u8; 8];
        for (i, b) in p.iter().skip(l).take(8).enumerate() {
            c[i] = *b;
        }
        [
            u32::from_le_bytes(c[..4].try_into().expect("4")),
            u32::from_le_bytes(c[4..].try_into().expect("4")),
            p.len() as u32,
        ]
    };
    ents.sort_unstable();
    let start = bucket_starts(ents.iter().map(|e| e.0), 1 << bb);
    mpw[SP::A] = words.len() as u32;
    words.extend_from_slice(&filter);
    mpw[SP::B] = lb;
    mpw[SP::C] = words.len() as u32;
    words.extend_from_slice(&start);
    mpw[SP::D] = words.len() as u32;
    for e in &ents {
        let [c, d, len] = next(e.3);
        words.extend_from_slice(&[e.1, e.2, c, d, e.3, len, 0, 0]);
    }
    mpw[SP::E] = bb;
    mpw[SP::F] = l as u32;
    // The verification filter: a bit per hash of the whole key, about
    // 64 bits a key (2^16..2^24 bits, from L2), tested before the
    // bucket walk so that most of the positions that only pass the
    // workgroup filter by chance cost one load instead of several.
    let lb2 = (n * 64).next_power_of_two().ilog2().clamp(16, 24);
    let mut vf = vec![0u32; 1 << (lb2 - 5)];
    for &(a, b) in &distinct {
        let z = bloom_hash3(bloom_hash(a, b).1) >> (32 - lb2);
        vf[(z >> 5) as usize] |= 1 << (z & 31);
    }
    mpw[SP::G] = words.len() as u32;
    words.extend_from_slice(&vf);
    mpw[SP::H] = lb2;
    Ok(())
}

/// Positions of a corpus passing each stage of `bloom`'s filters, counted
/// on the host with the kernel's own tables and hashes
/// ([`bloom_stages`]): device independent, the work the kernel does per
/// stage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BloomStages {
    /// Start positions tested (the corpus's bytes).
    pub positions: u64,
    /// The filter's parts.
    pub parts: u32,
    /// The filter's bits a part.
    pub part_bits: u64,
    /// Distinct keys of the set.
    pub keys: u64,
    /// Positions passing the workgroup filter (in their part): each is
    /// verified (the divergent loop of `verify`).
    pub filter: u64,
    /// Of those, positions passing the verification filter (read from
    /// L2): each walks its bucket.
    pub verify_filter: u64,
    /// Of those, positions whose key is a pattern's key.
    pub key_hits: u64,
}

/// [`BloomStages`] of literal set `q` over `data`, with a workgroup
/// filter of `filter_words` words a part (8192 on the H100) split into
/// `parts` parts (0: one). Positions past the end read `\n`, as the
/// kernel's padding.
pub fn bloom_stages(
    q: &crate::query::Query,
    data: &[u8],
    filter_words: u32,
    parts: u32,
) -> Result<BloomStages, Error> {
    use super::multi_common::Tables;
    let t = Tables::build(q, MultiKernel::Bloom, u64::MAX, filter_words, 0, parts)?;
    let m = &t.mp;
    let (l, lb, vb) = (m[SP::F] as usize, m[SP::B], m[SP::H]);
    let parts = m[SP::PARTS];
    let keys: std::collections::HashSet<(u32, u32)> =
        t.set.uniq.iter().map(|p| bloom_key(p, l)).collect();
    let mut st = BloomStages {
        positions: data.len() as u64,
        parts,
        part_bits: 1 << lb,
        keys: keys.len() as u64,
        ..Default::default()
    };
    let mut hay: Vec<u8> = data.to_vec();
    if t.set.fold {
        hay.make_ascii_lowercase();
    }
    hay.extend_from_slice(&[b'\n'; 8]);
    for p in 0..data.len() {
        let (a, b) = bloom_key(&hay[p..], l);
        let (w, b1, b2, b3) = bloom_bits(a, b, lb, parts);
        let word = t.words[m[SP::A] as usize + w as usize];
        if (word >> b1) & (word >> b2) & (word >> b3) & 1 == 0 {
            continue;
        }
        st.filter += 1;
        let z = bloom_hash3(bloom_hash(a, b).1) >> (32 - vb);
        if (t.words[m[SP::G] as usize + (z >> 5) as usize] >> (z & 31)) & 1 == 0 {
            continue;
        }
        st.verify_filter += 1;
        st.key_hits += u64::from(keys.contains(&(a, b)));
    }
    Ok(st)
}

#[cfg(test)]
mod tests {
    use super::super::multi_common::Tables;
    use super::*;
    use crate::query::{QueryBuilder, Syntax};

    /// True when the key (a, b) passes `t`'s filter, as bloom.wgsl tests
    /// it (in whichever part holds its word).
    fn filter_passes(t: &Tables, a: u32, b: u32) -> bool {
        let m = &t.mp;
        let lb = m[SP::B];
        let (w, b1, b2, b3) = bloom_bits(a, b, lb, m[SP::PARTS]);
        let word = t.words[m[SP::A] as usize + w as usize];
        (word >> b1) & (word >> b2) & (word >> b3) & 1 == 1
    }

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
        // And the constants of every diagnostic switch evaluate, as wgpu
        // evaluates them when it builds the pipeline.
        let src = source(8192);
        let (module, info) =
            super::super::tests::validated("bloom", &src, naga::valid::Capabilities::empty());
        for diag in [0, 1, 4, DIAG_GLOBAL_FILTER, DIAG_NO_VERIFY_CODE] {
            for split in [false, true] {
                let mut consts = naga::back::PipelineConstants::default();
                for (k, v) in constants(diag, split) {
                    consts.insert(k.to_string(), v);
                }
                let ep = Some((naga::ShaderStage::Compute, "bloom"));
                naga::back::pipeline_constants::process_overrides(&module, &info, ep, &consts)
                    .unwrap_or_else(|e| panic!("bloom, diag {diag}, split {split}: {e:?}"));
            }
        }
    }

    /// bloom's tables on the host, as the kernel reads them: every
    /// pattern's key passes the filter and its bucket lists the pattern;
    /// random keys mostly do not pass.
    #[test]
    fn bloom_tables_hold_every_pattern() {
        let many: Vec<Vec<u8>> = (0..10_000u32)
            .map(|i| {
                let r = i.wrapping_mul(2_654_435_761);
                match i % 3 {
                    0 => format!("{}.{}.{}.{}", r & 255, (r >> 8) & 255, r >> 24, i & 255),
                    1 => format!("{r:08x}{i:08x}{:016x}", u64::from(r) << 7),
                    _ => format!("X{r:08x}-c2.evil{}.example", i % 97),
                }
                .into_bytes()
            })
            .collect();
        for (fold, words) in [(false, 8192), (true, 4096), (false, 64)] {
            let t = Tables::build(
                &QueryBuilder::new()
                    .syntax(Syntax::Fixed)
                    .case_insensitive(fold)
                    .build(&many)
                    .unwrap(),
                MultiKernel::Bloom,
                1 << 30,
                words,
                DIAG_GLOBAL_FILTER,
                0,
            )
            .unwrap();
            let m = &t.mp;
            let l = m[SP::F] as usize;
            assert_eq!(l, 7, "the shortest IP has 7 bytes");
            let lb = m[SP::B];
            // 10k keys: in workgroup memory at 8192 words (26 bits a
            // key), in global memory at 64 words (when asked for).
            assert_eq!(m[SP::GLOBAL], u32::from(words == 64));
            if words == 64 {
                assert_eq!(lb, 19, "32 bits a key");
            } else {
                assert!(lb <= (words * 32).ilog2() && lb >= 5);
            }
            assert_eq!(m[SP::PARTS], 1);
            let passes = |a: u32, b: u32| filter_passes(&t, a, b);
            let vbit = |a: u32, b: u32| {
                let z = bloom_hash3(bloom_hash(a, b).1) >> (32 - m[SP::H]);
                t.words[m[SP::G] as usize + (z >> 5) as usize] >> (z & 31) & 1
            };
            for (g, p) in t.set.uniq.iter().enumerate() {
                let (a, b) = bloom_key(p, l);
                assert!(passes(a, b), "{:?}", String::from_utf8_lossy(p));
                assert_eq!(vbit(a, b), 1, "{:?}", String::from_utf8_lossy(p));
                let bk = (bloom_hash(a, b).1 >> (32 - m[SP::E])) as usize;
                let (lo, hi) = (
                    t.words[m[SP::C] as usize + bk],
                    t.words[m[SP::C] as usize + bk + 1],
                );
                assert!((lo..hi).any(|e| {
                    let eo = m[SP::D] as usize + 8 * e as usize;
                    t.words[eo..eo + 2] == [a, b]
                        && t.words[eo + 4] == g as u32
                        && t.words[eo + 5] == p.len() as u32
                }));
            }
            if words == 8192 || words == 64 {
                let mut x = 1u32;
                let mut pass = 0;
                let mut vpass = 0;
                for _ in 0..100_000 {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    pass += u32::from(passes(x, x.rotate_left(11)));
                    vpass += vbit(x, x.rotate_left(11));
                }
                // 64 bits a key: ~1.6% of random keys pass the
                // verification filter.
                assert!(vpass < 3000, "{vpass} of 100000 random keys pass");
                // ~11% of the bits set, three in one word: ~0.2% pass.
                assert!(pass < 1500, "{pass} of 100000 random keys pass");
            }
        }
    }

    /// 100k keys saturate the 2^18-bit workgroup filter (~31% of random
    /// keys pass: the default, measured faster on the H100 all the same);
    /// `DIAG_GLOBAL_FILTER` sizes a global one at 32 bits a key, which few
    /// random keys pass.
    #[test]
    fn large_sets_get_a_global_filter_sized_for_them() {
        let many: Vec<Vec<u8>> = (0..100_000u32)
            .map(|i| format!("{:08x}.ioc{i}", i.wrapping_mul(2_654_435_761)).into_bytes())
            .collect();
        let q = QueryBuilder::new()
            .syntax(Syntax::Fixed)
            .build(&many)
            .unwrap();
        let pass_rate = |t: &Tables| {
            let mut x = 7u32;
            let mut pass = 0;
            for _ in 0..100_000 {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                pass += u32::from(filter_passes(t, x, x.rotate_left(11)));
            }
            for p in &t.set.uniq {
                let (a, b) = bloom_key(p, t.mp[SP::F] as usize);
                assert!(filter_passes(t, a, b), "{:?}", String::from_utf8_lossy(p));
            }
            pass
        };
        let t =
            Tables::build(&q, MultiKernel::Bloom, 1 << 30, 8192, DIAG_GLOBAL_FILTER, 0).unwrap();
        assert_eq!(t.mp[SP::GLOBAL], 1);
        assert_eq!(t.mp[SP::B], 22, "2^22 bits: 32 a key or more");
        let global = pass_rate(&t);
        assert!(global < 500, "{global} of 100000 random keys pass");
        let t = Tables::build(&q, MultiKernel::Bloom, 1 << 30, 8192, 0, 0).unwrap();
        assert_eq!((t.mp[SP::GLOBAL], t.mp[SP::B], t.mp[SP::PARTS]), (0, 18, 1));
        let wg = pass_rate(&t);
        assert!(wg > 20_000, "the saturated filter passes {wg} of 100000");
        // Four parts of 2^18 bits (~10 bits a key): every key passes in
        // its part, few random keys do.
        let t = Tables::build(&q, MultiKernel::Bloom, 1 << 30, 8192, 0, 4).unwrap();
        assert_eq!((t.mp[SP::GLOBAL], t.mp[SP::B], t.mp[SP::PARTS]), (0, 18, 4));
        assert_eq!(t.mp[SP::C] - t.mp[SP::A], 4 * 8192, "four parts' words");
        let four = pass_rate(&t);
        assert!(four * 5 < wg, "four parts pass {four}, one {wg} of 100000");
        // Asked for more than the word index allows: clamped.
        assert_eq!(parts_for(100, 18), MAX_PARTS);
        assert_eq!(parts_for(0, 18), 1);
        assert_eq!(parts_for(8, 21), 1, "2^16 words a part: one");
        assert_eq!(parts_for(8, 20), 2, "2^15 words a part: two");
        // The global filter is one part whatever is asked.
        let t =
            Tables::build(&q, MultiKernel::Bloom, 1 << 30, 8192, DIAG_GLOBAL_FILTER, 4).unwrap();
        assert_eq!((t.mp[SP::GLOBAL], t.mp[SP::PARTS]), (1, 1));
    }

    /// The stage counts never lose an occurrence: every position where a
    /// pattern starts passes every stage, for 1 to 8 parts and under -i;
    /// each stage passes no more than the one before.
    #[test]
    fn stages_keep_every_occurrence() {
        let pats: Vec<Vec<u8>> = (0..2000u32)
            .map(|i| format!("ioc{:06x}.x{i}", i.wrapping_mul(2_654_435_761) >> 8).into_bytes())
            .collect();
        let mut corpus = Vec::new();
        for i in 0..400usize {
            corpus.extend_from_slice(format!("line {i} ").as_bytes());
            corpus.extend_from_slice(&pats[(i * 7) % pats.len()].to_ascii_uppercase());
            corpus.extend_from_slice(b" ioc0000 tail\n");
        }
        for fold in [false, true] {
            let q = QueryBuilder::new()
                .syntax(Syntax::Fixed)
                .case_insensitive(fold)
                .build(&pats)
                .unwrap();
            for parts in [1, 2, 3, 8] {
                let st = bloom_stages(&q, &corpus, 8192, parts).unwrap();
                assert_eq!((st.parts, st.positions), (parts, corpus.len() as u64));
                assert!(st.filter >= st.verify_filter && st.verify_filter >= st.key_hits);
                // One key a line, in upper case: -i finds all 400 (each
                // through both filters), exact case none ("ioc0000 " is
                // no pattern's key).
                assert_eq!(st.key_hits, if fold { 400 } else { 0 }, "{st:?}");
            }
        }
    }

    /// Every key passes the filter in exactly the part its word names,
    /// for any number of parts (also not a power of two) and filter size.
    #[test]
    fn every_key_passes_in_its_part() {
        let many: Vec<Vec<u8>> = (0..3000u32)
            .map(|i| format!("k{:07x}.{i}", i.wrapping_mul(2_654_435_761) >> 4).into_bytes())
            .collect();
        let q = QueryBuilder::new()
            .syntax(Syntax::Fixed)
            .build(&many)
            .unwrap();
        for parts in [1, 2, 3, 7, 8] {
            for words in [128, 8192] {
                let t = Tables::build(&q, MultiKernel::Bloom, 1 << 30, words, 0, parts).unwrap();
                let m = &t.mp;
                assert_eq!(m[SP::PARTS], parts);
                let per_part = 1u32 << (m[SP::B] - 5);
                let mut used = vec![0u32; parts as usize];
                for p in &t.set.uniq {
                    let (a, b) = bloom_key(p, m[SP::F] as usize);
                    assert!(filter_passes(&t, a, b));
                    let (w, ..) = bloom_bits(a, b, m[SP::B], parts);
                    used[(w / per_part) as usize] += 1;
                }
                // The split is even: each part holds half to twice its
                // share.
                let n = t.set.uniq.len() as u32;
                assert!(
                    used.iter()
                        .all(|&u| u * 2 * parts >= n && u * parts <= 2 * n),
                    "{parts} parts: {used:?}"
                );
            }
        }
    }
}
