//! The pair scans of [`super::RareByte`]'s pair and prefix finders: three
//! of a literal's bytes at their offsets, tested 64 or 128 starts a step
//! with AVX-512 or AVX2 where the CPU has them, else one start at a time.

/// The first `p >= at` where the three `bytes` hold and `is_match(p)`,
/// for matches of at least `n` bytes ending inside `hay`.
#[inline]
pub(super) fn pair_find_by<const FOLD: bool>(
    hay: &[u8],
    at: usize,
    n: usize,
    bytes: [(usize, u8, u8); 3],
    is_match: impl Fn(usize) -> bool,
) -> Option<usize> {
    pair_find_with::<FOLD>(Simd::detect(), hay, at, n, bytes, is_match)
}

/// The vector scan [`pair_find_by`] runs: the widest this CPU has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) enum Simd {
    Avx512,
    Avx2,
    Scalar,
}

impl Simd {
    #[inline]
    fn detect() -> Simd {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx512bw") {
                return Simd::Avx512;
            }
            if std::is_x86_feature_detected!("avx2") {
                return Simd::Avx2;
            }
        }
        Simd::Scalar
    }

    /// Every scan this CPU can run (the tests run each).
    #[cfg(test)]
    pub(super) fn available() -> Vec<Simd> {
        match Simd::detect() {
            Simd::Avx512 => vec![Simd::Avx512, Simd::Avx2, Simd::Scalar],
            Simd::Avx2 => vec![Simd::Avx2, Simd::Scalar],
            Simd::Scalar => vec![Simd::Scalar],
        }
    }
}

/// [`pair_find_by`] with the scan `simd` (which the CPU must have).
#[inline]
#[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
pub(super) fn pair_find_with<const FOLD: bool>(
    simd: Simd,
    hay: &[u8],
    at: usize,
    n: usize,
    bytes: [(usize, u8, u8); 3],
    is_match: impl Fn(usize) -> bool,
) -> Option<usize> {
    let last = hay.len().checked_sub(n)?;
    let [(i1, b1, m1), (i2, b2, m2), (i3, b3, m3)] = bytes;
    let mut p = at;
    #[cfg(target_arch = "x86_64")]
    if simd != Simd::Scalar {
        loop {
            // SAFETY: the CPU has the scan's features (`Simd::detect`).
            let (block, mut bits) = unsafe {
                match simd {
                    Simd::Avx512 => pair_scan_avx512::<FOLD>(hay, p, bytes),
                    _ => pair_scan_avx2::<FOLD>(hay, p, bytes),
                }
            };
            p = block;
            if bits == 0 {
                break;
            }
            while bits != 0 {
                let c = p + bits.trailing_zeros() as usize;
                if c <= last && is_match(c) {
                    return Some(c);
                }
                bits &= bits - 1;
            }
            p += 64;
        }
    }
    while p <= last {
        if hay[p + i1] | m1 == b1 && hay[p + i2] | m2 == b2 && hay[p + i3] | m3 == b3 && is_match(p)
        {
            return Some(p);
        }
        p += 1;
    }
    None
}

/// [`pair_scan_avx2`] with 64-byte vectors compared into mask registers
/// (AVX-512BW): two loads and two compares a 64 bytes (the second compare
/// masked by the first), no movemask, 128 starts a step. Returns as the
/// AVX2 scan does: a block start and the bits of its 64 starts.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512bw")]
fn pair_scan_avx512<const FOLD: bool>(
    hay: &[u8],
    mut p: usize,
    bytes: [(usize, u8, u8); 3],
) -> (usize, u64) {
    use std::arch::x86_64::*;
    const V: usize = 64;
    let [(i1, b1, m1), (i2, b2, m2), (i3, b3, m3)] = bytes;
    let far = i1.max(i2).max(i3);
    let (v1, v2, v3) = (
        _mm512_set1_epi8(b1 as i8),
        _mm512_set1_epi8(b2 as i8),
        _mm512_set1_epi8(b3 as i8),
    );
    let (f1, f2, f3) = (
        _mm512_set1_epi8(m1 as i8),
        _mm512_set1_epi8(m2 as i8),
        _mm512_set1_epi8(m3 as i8),
    );
    let fold = |x: __m512i, f: __m512i| if FOLD { _mm512_or_si512(x, f) } else { x };
    let base = hay.as_ptr();
    // SAFETY (all three): the loops keep at + far + 64 <= hay.len(), so
    // every 64-byte load below is in bounds.
    let load = |at: usize| unsafe { _mm512_loadu_si512(base.add(at).cast::<__m512i>()) };
    let pair = |at: usize| {
        let k = _mm512_cmpeq_epi8_mask(fold(load(at + i1), f1), v1);
        _mm512_mask_cmpeq_epi8_mask(k, fold(load(at + i2), f2), v2)
    };
    let third = |at: usize, k: u64| _mm512_mask_cmpeq_epi8_mask(k, fold(load(at + i3), f3), v3);
    // One block where it starts, then blocks whose first byte's loads are
    // aligned to 64 (the starts in between are read twice).
    if p + far + V <= hay.len() {
        let k = pair(p);
        if k != 0 {
            let k = third(p, k);
            if k != 0 {
                return (p, k);
            }
        }
        p += V - (base as usize + p + i1) % V;
    }
    while p + far + 2 * V <= hay.len() {
        let (k0, k1) = (pair(p), pair(p + V));
        if k0 | k1 != 0 {
            let k0 = third(p, k0);
            if k0 != 0 {
                return (p, k0);
            }
            let k1 = third(p + V, k1);
            if k1 != 0 {
                return (p + V, k1);
            }
        }
        p += 2 * V;
    }
    while p + far + V <= hay.len() {
        let k = pair(p);
        if k != 0 {
            let k = third(p, k);
            if k != 0 {
                return (p, k);
            }
        }
        p += V;
    }
    (p, 0)
}

/// [`pair_find`]'s scan, 64 candidate starts a step from `p`: the first
/// step with a hit of all three bytes and its bits (bit `k`: a hit at
/// start `p + k`), or where the scalar tail resumes with no bits. The loop
/// tests the pair; the third byte is loaded only for a block with a pair
/// hit. A pair alone stopped the loop 190,321 times for `dead` in the 194
/// MB log (4,416 occurrences; `e` and `d` two apart in hex ids) and
/// 128,459 times for `rt=1.879` (66), each a return, compares and a
/// restart; with the third byte 11,065 and 10,580 times. No call inside,
/// so the broadcast bytes stay in registers (a `bcmp` call in the loop
/// spilled them: 21 instructions a step against 12).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn pair_scan_avx2<const FOLD: bool>(
    hay: &[u8],
    mut p: usize,
    bytes: [(usize, u8, u8); 3],
) -> (usize, u64) {
    use std::arch::x86_64::*;
    const V: usize = 32;
    let [(i1, b1, m1), (i2, b2, m2), (i3, b3, m3)] = bytes;
    let far = i1.max(i2).max(i3);
    let v1 = _mm256_set1_epi8(b1 as i8);
    let v2 = _mm256_set1_epi8(b2 as i8);
    let v3 = _mm256_set1_epi8(b3 as i8);
    let (f1, f2, f3) = (
        _mm256_set1_epi8(m1 as i8),
        _mm256_set1_epi8(m2 as i8),
        _mm256_set1_epi8(m3 as i8),
    );
    // Under -i a letter's byte is ORed with 0x20 first (one more
    // instruction a vector; none without -i).
    let fold = |x: __m256i, f: __m256i| if FOLD { _mm256_or_si256(x, f) } else { x };
    let base = hay.as_ptr();
    // SAFETY (both): the callers keep at + far + 32 <= hay.len(), so
    // every 32-byte load below is in bounds.
    let pair = |at: usize| {
        let (a, b) = unsafe {
            (
                _mm256_loadu_si256(base.add(at + i1).cast::<__m256i>()),
                _mm256_loadu_si256(base.add(at + i2).cast::<__m256i>()),
            )
        };
        _mm256_and_si256(
            _mm256_cmpeq_epi8(fold(a, f1), v1),
            _mm256_cmpeq_epi8(fold(b, f2), v2),
        )
    };
    let third = |at: usize, m: __m256i| {
        let c = unsafe { _mm256_loadu_si256(base.add(at + i3).cast::<__m256i>()) };
        _mm256_and_si256(m, _mm256_cmpeq_epi8(fold(c, f3), v3))
    };
    let bits = |lo: __m256i, hi: __m256i| {
        (_mm256_movemask_epi8(lo) as u32 as u64) | ((_mm256_movemask_epi8(hi) as u32 as u64) << 32)
    };
    // 128 starts a step while every load ends inside `hay`.
    while p + far + 4 * V <= hay.len() {
        let (m0, m1, m2, m3) = (pair(p), pair(p + V), pair(p + 2 * V), pair(p + 3 * V));
        let any = _mm256_or_si256(_mm256_or_si256(m0, m1), _mm256_or_si256(m2, m3));
        if _mm256_movemask_epi8(any) != 0 {
            let (m0, m1) = (third(p, m0), third(p + V, m1));
            let (m2, m3) = (third(p + 2 * V, m2), third(p + 3 * V, m3));
            let first = bits(m0, m1);
            if first != 0 {
                return (p, first);
            }
            let second = bits(m2, m3);
            if second != 0 {
                return (p + 2 * V, second);
            }
        }
        p += 4 * V;
    }
    // Then 64 a step: p + far + 64 <= len.
    while p + far + 2 * V <= hay.len() {
        let (lo, hi) = (pair(p), pair(p + V));
        if _mm256_movemask_epi8(_mm256_or_si256(lo, hi)) != 0 {
            let b = bits(third(p, lo), third(p + V, hi));
            if b != 0 {
                return (p, b);
            }
        }
        p += 2 * V;
    }
    (p, 0)
}
