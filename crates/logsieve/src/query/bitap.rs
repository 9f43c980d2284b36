//! `--fuzzy K` as a bit-parallel automaton (Wu–Manber bitap, "agrep"):
//! the tables the GPU's `bitap` kernel runs (`gpu/kernels/bitap.wgsl`),
//! and [`Bitap::run_line`], the same loop on the host (the kernel's
//! reference in the tests).
//!
//! A match is the CPU matcher's (`cpu/fuzzy.rs`): a line matches when some
//! substring of it is within Levenshtein distance K of some pattern
//! (insertions, deletions, substitutions, counted in bytes); under `-i`
//! ASCII letters fold (and only they: fuzzy matching counts bytes), so a
//! 256-entry mask table decides every byte and no line is left undecided.
//! A pattern no longer than K matches every line. `-w`/`-x` are refused
//! with fuzzy by the query builder.
//!
//! The patterns are packed one after the other into a chain of 32-bit
//! words (WGSL has no 64-bit integers): pattern `j` occupies bits
//! `off_j .. off_j + len_j`; `S` holds each pattern's first bit, `E` its
//! last. State `R_d` (d = 0..=K) has bit `off_j + i` set when pattern `j`'s
//! prefix of `i + 1` bytes is within `d` edits of a suffix of the text read
//! so far. With `shl(X) = ((X << 1) & !S) | S` over the chain (the empty
//! prefix is always matched, and no carry crosses from one pattern into the
//! next), per byte `c`:
//!
//! ```text
//! R'_0 = shl(R_0) & B[c]
//! R'_d = (shl(R_d) & B[c]) | R_{d-1} | shl(R_{d-1}) | shl(R'_{d-1})
//!        match              insertion  substitution   deletion
//! ```
//!
//! starting from `R_0 = 0`, `R_d = shl(R_{d-1})` (the deletion closure of
//! the empty text). A line matches once `R_K & E != 0`.

use super::{Query, Syntax};

/// The most pattern bytes (all patterns together) the bitap chain holds:
/// 8 words of 32 bits. Longer pattern sets stay on the CPU.
pub const MAX_BITS: usize = 256;

/// The compiled tables of a fuzzy query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bitap {
    /// K, the edit distance (0..=3).
    pub k: u32,
    /// State words of the chain (1..=8).
    pub words: usize,
    /// True when some pattern is no longer than K: every line matches.
    pub all: bool,
    /// `B[c]`, 256 x `words`: the chain bits whose pattern byte matches `c`.
    pub masks: Vec<u32>,
    /// `S`: the first bit of every pattern.
    pub starts: Vec<u32>,
    /// `E`: the last bit of every pattern.
    pub ends: Vec<u32>,
}

impl Bitap {
    /// The tables of `q`, or why it has none: not a fuzzy query, or more
    /// than [`MAX_BITS`] pattern bytes.
    pub fn for_query(q: &Query) -> Result<Bitap, String> {
        let Syntax::Fuzzy(k) = q.syntax() else {
            return Err("not a fuzzy query".to_string());
        };
        let fold = q.case() != super::CaseMode::Sensitive;
        Bitap::new(q.patterns(), u32::from(k), fold)
    }

    /// The tables of `pats` within `k` edits, ASCII letters folded when
    /// `fold`.
    pub fn new(pats: &[Vec<u8>], k: u32, fold: bool) -> Result<Bitap, String> {
        let all = pats.iter().any(|p| p.len() <= k as usize);
        let bits: usize = if all {
            0
        } else {
            pats.iter().map(Vec::len).sum()
        };
        if bits > MAX_BITS {
            return Err(format!(
                "the fuzzy patterns hold {bits} bytes; the GPU bitap chain holds at most {MAX_BITS}"
            ));
        }
        let words = bits.div_ceil(32).max(1);
        let mut masks = vec![0u32; 256 * words];
        let mut starts = vec![0u32; words];
        let mut ends = vec![0u32; words];
        if !all {
            let mut off = 0usize;
            for p in pats {
                starts[off / 32] |= 1 << (off % 32);
                let last = off + p.len() - 1;
                ends[last / 32] |= 1 << (last % 32);
                for (i, &b) in p.iter().enumerate() {
                    let bit = off + i;
                    let (w, m) = (bit / 32, 1u32 << (bit % 32));
                    for c in 0..256usize {
                        let c8 = c as u8;
                        let hit = c8 == b || (fold && c8.eq_ignore_ascii_case(&b));
                        if hit {
                            masks[c * words + w] |= m;
                        }
                    }
                }
                off += p.len();
            }
        }
        Ok(Bitap {
            k,
            words,
            all,
            masks,
            starts,
            ends,
        })
    }

    /// `shl(x)` over the chain into `out` (see the module docs).
    fn shl(&self, x: &[u32], out: &mut [u32]) {
        let mut carry = 0;
        for w in 0..self.words {
            out[w] = (((x[w] << 1) | carry) & !self.starts[w]) | self.starts[w];
            carry = x[w] >> 31;
        }
    }

    /// True when `line` (without its terminator) holds a substring within
    /// K edits of a pattern: the kernel's loop, on the host.
    pub fn run_line(&self, line: &[u8]) -> bool {
        if self.all {
            return true;
        }
        let (n, k) = (self.words, self.k as usize);
        let mut r = vec![vec![0u32; n]; k + 1];
        for d in 1..=k {
            let (lo, hi) = r.split_at_mut(d);
            self.shl(&lo[d - 1], &mut hi[0]);
        }
        let (mut a, mut b, mut c) = (vec![0u32; n], vec![0u32; n], vec![0u32; n]);
        for &byte in line {
            let m = &self.masks[byte as usize * n..(byte as usize + 1) * n];
            // `b` = old R_{d-1}, `c` = new R'_{d-1}.
            for (d, rd) in r.iter_mut().enumerate() {
                self.shl(rd, &mut a);
                let mut nv: Vec<u32> = (0..n).map(|w| a[w] & m[w]).collect();
                if d > 0 {
                    self.shl(&b, &mut a);
                    for w in 0..n {
                        nv[w] |= b[w] | a[w];
                    }
                    self.shl(&c, &mut a);
                    for w in 0..n {
                        nv[w] |= a[w];
                    }
                }
                b.copy_from_slice(rd);
                c.copy_from_slice(&nv);
                *rd = nv;
            }
            if (0..n).any(|w| r[k][w] & self.ends[w] != 0) {
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::QueryBuilder;

    fn fz(pats: &[&str], k: u8, i: bool) -> Query {
        QueryBuilder::new()
            .syntax(Syntax::Fuzzy(k))
            .case_insensitive(i)
            .build(pats)
            .unwrap()
    }

    /// The host run agrees with the CPU matcher on hand-picked lines,
    /// across word edges (31, 32, 33 bytes) and several patterns.
    #[test]
    fn run_line_agrees_with_the_cpu_matcher() {
        let long31 = "a".repeat(30) + "b";
        let long33 = "ab".repeat(16) + "c";
        let lines: &[&[u8]] = &[
            b"",
            b"helo world",
            b"HELLO",
            b"xxhe llo",
            b"abcabcabd",
            long31.as_bytes(),
            long33.as_bytes(),
            b"abababababababababababababababab",
        ];
        let sets: &[&[&str]] = &[
            &["hello"],
            &["abd", "lo w"],
            &["h"],
            &[&long31],
            &[&long33],
            &[&long31, &long33, "xyz"],
        ];
        for pats in sets {
            for k in 0..=3 {
                for i in [false, true] {
                    let q = fz(pats, k, i);
                    let b = Bitap::for_query(&q).unwrap();
                    for l in lines {
                        assert_eq!(
                            b.run_line(l),
                            q.is_match_line(l),
                            "{pats:?} k {k} i {i} on {:?}",
                            String::from_utf8_lossy(l)
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn limits_and_layout() {
        let q = fz(&[&"a".repeat(256)], 2, false);
        assert_eq!(Bitap::for_query(&q).unwrap().words, 8);
        let q = fz(&[&"a".repeat(200), &"b".repeat(57)], 2, false);
        assert!(Bitap::for_query(&q).unwrap_err().contains("256"));
        // A pattern no longer than K: every line, whatever the others.
        let q = fz(&["ab", &"c".repeat(300)], 2, false);
        let b = Bitap::for_query(&q).unwrap();
        assert!(b.all && b.run_line(b""));
        let b = Bitap::for_query(&fz(&["abc", "de"], 1, false)).unwrap();
        assert_eq!((b.starts[0], b.ends[0]), (0b01001, 0b10100));
        let re = QueryBuilder::new().build(&["a+"]).unwrap();
        assert!(Bitap::for_query(&re).is_err());
    }
}
