//! Finders chosen for one document from a sample of its bytes: a single
//! literal by its rarest byte or pair, a few literals by a rare window of
//! each ([`RareByte`]). The engine's loop (`for_each_match_rare`) takes
//! them in place of the query's own finder on documents of 1 MiB or more.

use crate::query::{CaseMode, Query, QueryKind};

mod prefixed;
mod scan;
mod windows;

use prefixed::Prefixed;
use scan::pair_find_by;
#[cfg(test)]
use scan::{pair_find_with, Simd};
use windows::Windows;

/// Documents under this size are searched by the query's own finder:
/// sampling costs more than it saves.
const RARE_MIN_DOC: usize = 1 << 20;
/// The sample of a document's bytes the rare byte is chosen on.
const RARE_SAMPLE: usize = 64 << 10;
/// The sample a pair of bytes is scored on (each of the literal's 4 rarest
/// bytes with each other byte: 48 pairs of a 13-byte literal, ~0.1 ms).
const PAIR_SAMPLE: usize = 8 << 10;
/// A byte is rare under one in this many sampled bytes.
const RARE_SHARE: usize = 512;

/// A single literal (the query's, or its one required literal) found by
/// what its bytes are worth in this document, not in English text:
///
/// - **rare byte**: `memchr` on the literal's rarest byte, then the literal
///   compared where it would start. Taken when that byte is under 1/512 of
///   the document's first 64 KiB: memchr's loop costs ~0.2 instructions a
///   byte against ~0.47 for memmem's packed pair, ~80 a hit (callgrind,
///   194 MB generated log: `ERROR_503` by its `R`, 0.06% of bytes, 39M
///   instructions against 92M; by a byte at 0.4%, 123M against 101M).
///   When the byte stops more than twice as often as the pair below
///   (`R`: every 1.7 KB, `R_` on 0.4% of lines), which one is faster
///   depends on the machine, so both are kept and the search times them on
///   the document's first MiB ([`RareByte::settle`]).
/// - **document pair**: otherwise two of the literal's bytes at their
///   distance (one of its four rarest bytes in the sample and another, the
///   pair seen together least in the sample's first 8 KiB), tested 128
///   bytes a step with AVX-512 or AVX2 ([`pair_find`]).
///   memmem's packed pair ranks bytes by English text and tests 32 bytes
///   a step: 94M instructions on the 194 MB log for `rt=1.879`, `dead` or
///   `latency_ms=19` (0.48 a byte), against 66M for the whole of
///   `rg -c -x '.*rt=1\.879'`.
pub(crate) struct RareByte<'n> {
    finder: DocFinder<'n>,
    /// The pair for a rare byte that stops often enough for the pair to
    /// be faster on some machines: [`RareByte::settle`] times the two on
    /// the document and keeps the faster.
    pair: Option<DocFinder<'n>>,
    /// The candidate's line is verified (a required literal's regex).
    pub(super) verify: bool,
}

enum DocFinder<'n> {
    Byte {
        needle: &'n [u8],
        offset: usize,
        byte: u8,
        /// `-i` on an ASCII literal: letters match either case.
        fold: bool,
    },
    /// Three of the literal's bytes at their offsets, each with the mask
    /// a byte is ORed with before the compare (`0x20` for a letter under
    /// `-i`, its byte then lower case; else 0).
    Pair {
        needle: &'n [u8],
        bytes: [(usize, u8, u8); 3],
        fold: bool,
    },
    Windows(Windows<'n>),
    Prefixed(Prefixed<'n>),
}

/// The OR mask that folds `b`'s case under `-i` (ASCII letters only).
fn fold_mask(b: u8, fold: bool) -> u8 {
    if fold && b.is_ascii_alphabetic() {
        0x20
    } else {
        0
    }
}

/// The literal of a `-i` search for one literal under ASCII case folding
/// (`(?i-u)`: letters match either case, other bytes themselves), which
/// a finder may look for by its bytes in either case.
fn folded_literal(q: &Query) -> Option<&[u8]> {
    let plain = q.kind() == QueryKind::Literal
        && q.case() == CaseMode::Ascii
        && !q.word()
        && !q.whole_line()
        && q.matcher.doc_regex().is_none();
    match q.literals() {
        Some([lit]) if plain && lit.iter().any(u8::is_ascii_alphabetic) => Some(lit),
        _ => None,
    }
}

/// The literal at `hay[p..]`, its letters in either case under `fold`.
#[inline]
fn literal_at(hay: &[u8], p: usize, needle: &[u8], fold: bool) -> bool {
    let Some(h) = hay.get(p..p + needle.len()) else {
        return false;
    };
    if fold {
        h.eq_ignore_ascii_case(needle)
    } else {
        h == needle
    }
}

/// Up to 8 bytes as a little-endian number (zero above them).
#[inline]
fn key_of(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(b)
}

/// How many sample positions hold `needle[i]` and `needle[j]` at their
/// distance: the false hits a pair finder would stop at.
fn pair_hits(sample: &[u8], needle: &[u8], i: usize, j: usize, fold: bool) -> usize {
    let n = needle.len();
    let sample = &sample[..sample.len().min(PAIR_SAMPLE)];
    if sample.len() < n {
        return 0;
    }
    let (mx, my) = (fold_mask(needle[i], fold), fold_mask(needle[j], fold));
    let (x, y) = (needle[i] | mx, needle[j] | my);
    let len = sample.len() - n + 1;
    let (a, b) = (&sample[i..i + len], &sample[j..j + len]);
    // Counted in bytes, 255 positions at a time: the compiler keeps 16
    // counters in a vector register. Summed as `usize` a position at a
    // time (two positions a step), the choice of a pair for a 12-byte
    // literal (44 pairs over 8 KiB) took 0.37-0.90 ms against 20-34 us,
    // and it is made twice a one-shot search (1.25% of `-o 'error
    // count=\d+'`'s samples; build machine, 2026-11-25).
    let mut hits = 0usize;
    for (ca, cb) in a.chunks(255).zip(b.chunks(255)) {
        let c = ca.iter().zip(cb).fold(0u8, |c, (&p, &q)| {
            c + u8::from(((p | mx) == x) & ((q | my) == y))
        });
        hits += usize::from(c);
    }
    hits
}

impl<'n> RareByte<'n> {
    /// The plan for `q` on `hay`, when it has a single literal and the
    /// document is large enough to be worth sampling.
    pub(crate) fn plan(q: &'n Query, hay: &[u8]) -> Option<RareByte<'n>> {
        if hay.len() < RARE_MIN_DOC {
            return None;
        }
        let sample = &hay[..hay.len().min(RARE_SAMPLE)];
        // `-i` on one ASCII literal: its bytes in either case (the
        // matcher's own finder is Teddy over case variants of a prefix,
        // ~5 GB/s here, where a byte or pair scan reads at memory speed).
        let folded = folded_literal(q);
        if let (None, Some((literals, verify))) = (folded, q.matcher.literal_set()) {
            let finder = match Windows::plan(literals, sample) {
                Some(w) => DocFinder::Windows(w),
                None => DocFinder::Prefixed(Prefixed::plan(literals, sample)?),
            };
            return Some(RareByte {
                finder,
                pair: None,
                verify,
            });
        }
        let (needle, verify, fold) = match folded {
            Some(lit) => (lit, false, true),
            None => {
                let (needle, verify) = q.matcher.single_literal()?;
                (needle, verify, false)
            }
        };
        if needle.len() < 2 {
            return None;
        }
        let mut freq = [0u32; 256];
        for &b in sample {
            freq[b as usize] += 1;
        }
        if fold {
            // A letter counts in both cases.
            for b in b'a'..=b'z' {
                let both = freq[b as usize] + freq[(b ^ 0x20) as usize];
                freq[b as usize] = both;
                freq[(b ^ 0x20) as usize] = both;
            }
        }
        let mut by_rarity: Vec<usize> = (0..needle.len()).collect();
        by_rarity.sort_by_key(|&i| (freq[needle[i] as usize], i));
        let (offset, byte) = (by_rarity[0], needle[by_rarity[0]]);
        // One of the four rarest bytes and any other: the pair seen
        // together least (two digits side by side in a number are not
        // rare together, `79` in `rt=1.879`; `latency_ms=19`'s four
        // rarest bytes are all in `latency_ms=`, on 34% of lines, and
        // only its `9` tells the 3.5% apart).
        let mut best = (usize::MAX, 0, 1);
        for &i in &by_rarity[..by_rarity.len().min(4)] {
            for &j in &by_rarity {
                let folded = |k: usize| needle[k] | fold_mask(needle[k], fold);
                if j == i || folded(i) == folded(j) {
                    continue;
                }
                let (i, j) = (i.min(j), i.max(j));
                let h = pair_hits(sample, needle, i, j, fold);
                if h < best.0 {
                    best = (h, i, j);
                }
            }
        }
        let (pair_stops, i1, i2) = best;
        // The rare byte's stops scaled to the pair's shorter sample.
        let scored = sample.len().min(PAIR_SAMPLE);
        let byte_stops = freq[byte as usize] as usize * scored / sample.len();
        let rare_byte = freq[byte as usize] as usize * RARE_SHARE <= sample.len();
        let pair = || {
            // A third byte sifts the pair's hits before they leave the
            // vector loop: the rarest of the others (the literal's own
            // first when it has only two bytes).
            let i3 = by_rarity
                .iter()
                .copied()
                .find(|&i| i != i1 && i != i2)
                .unwrap_or(i1);
            let at = |i: usize| {
                let m = fold_mask(needle[i], fold);
                (i, needle[i] | m, m)
            };
            DocFinder::Pair {
                needle,
                bytes: [at(i1), at(i2), at(i3)],
                fold,
            }
        };
        let by_byte = DocFinder::Byte {
            needle,
            offset,
            byte,
            fold: fold && byte.is_ascii_alphabetic(),
        };
        // A rare byte that stops more than twice as often as the pair
        // (plus one stop in 8 KiB): which is faster depends on the machine
        // (`ERROR_503` by its `R`, a stop every 1.7 KB, against `R_`: 0.82x
        // rg's time against 1.01x on the H100 host's Xeon, 1.11x against
        // 0.98x on an AMD EPYC build machine, 2026-11-26), so both are
        // kept and the search times them ([`RareByte::settle`]).
        let (finder, pair) = match (rare_byte, byte_stops > 2 * pair_stops.min(scored) + 1) {
            (true, false) => (by_byte, None),
            (true, true) => (by_byte, Some(pair())),
            (false, _) => (pair(), None),
        };
        Some(RareByte {
            finder,
            pair,
            verify,
        })
    }

    /// What finds the literal (`--explain`'s name for it; before
    /// [`RareByte::settle`] a byte with a pair to time is both).
    pub(crate) fn name(&self) -> &'static str {
        match self.finder {
            DocFinder::Byte { .. } if self.pair.is_some() => "rare-byte-or-pair",
            DocFinder::Byte { .. } => "rare-byte",
            DocFinder::Pair { .. } => "rare-pair",
            DocFinder::Windows(_) => "rare-windows",
            DocFinder::Prefixed(_) => "prefix-keys",
        }
    }

    /// The first occurrence of the literal inside `hay[at..end]` (of a
    /// set: the first found, see [`Windows::find`]).
    #[inline]
    pub(super) fn find(&self, hay: &[u8], at: usize, end: usize) -> Option<usize> {
        find_by(&self.finder, hay, at, end)
    }

    /// Whether [`RareByte::settle`] has two finders to time.
    pub(super) fn can_settle(&self) -> bool {
        self.pair.is_some()
    }

    /// Keeps the faster of the rare byte and its pair, timed over the
    /// first [`SETTLE_BYTES`] of `hay` (mapped by the caller): four
    /// windows in the order byte, pair, pair, byte, so that a drift of the
    /// machine and the prefetcher's warming fall on both. The two find the
    /// same occurrences; only the time differs. A document too short, or
    /// a build without a clock, keeps the byte.
    pub(super) fn settle(&mut self, hay: &[u8]) {
        let Some(pair) = self.pair.take() else {
            return;
        };

        if hay.len() < SETTLE_BYTES || cfg!(target_arch = "wasm32") {
            return;
        }
        let w = SETTLE_BYTES / 4;
        let time = |f: &DocFinder<'_>, k: usize| {
            let (s, e) = (k * w, (k + 1) * w);
            let t = std::time::Instant::now();
            let mut p = s;
            while let Some(i) = find_by(f, hay, p, e) {
                p = i + 1;
            }
            t.elapsed()
        };
        let by_byte = time(&self.finder, 0) + time(&self.finder, 3);
        let by_pair = time(&pair, 1) + time(&pair, 2);
        if by_pair < by_byte {
            self.finder = pair;
        }
    }
}

/// The bytes [`RareByte::settle`] times its two finders on: 0.05-0.1 ms
/// of a search that reads 16 MiB or more ([`SETTLE_MIN_DOC`]).
pub(super) const SETTLE_BYTES: usize = 1 << 20;

/// Documents from this size on time a rare byte against its pair.
pub(super) const SETTLE_MIN_DOC: usize = 16 << 20;

/// The first occurrence of `finder`'s literal inside `hay[at..end]` (of a
/// set: the first found, see [`Windows::find`]).
#[inline]
fn find_by(finder: &DocFinder<'_>, hay: &[u8], at: usize, end: usize) -> Option<usize> {
    let (needle, offset, byte, fold) = match *finder {
        DocFinder::Pair {
            needle,
            bytes,
            fold: false,
        } => return pair_find::<false>(&hay[..end], at, needle, bytes),
        DocFinder::Pair {
            needle,
            bytes,
            fold: true,
        } => return pair_find::<true>(&hay[..end], at, needle, bytes),
        DocFinder::Windows(ref w) => return w.find(hay, at, end),
        DocFinder::Prefixed(ref p) => return p.find(hay, at, end),
        DocFinder::Byte {
            needle,
            offset,
            byte,
            fold,
        } => (needle, offset, byte, fold),
    };
    let n = needle.len();
    let mut from = at + offset;
    while from < end {
        let i = from
            + if fold {
                memchr::memchr2(byte, byte ^ 0x20, &hay[from..end])?
            } else {
                memchr::memchr(byte, &hay[from..end])?
            };
        let p = i - offset;
        if p + n <= end && literal_at(hay, p, needle, fold) {
            return Some(p);
        }
        from = i + 1;
    }
    None
}

/// The first `p >= at` with `hay[p..p + needle.len()] == needle` (its
/// letters in either case under `FOLD`), found by two of its bytes at
/// their offsets, the pair's hits sifted by a third: `bytes[k] = (i, b,
/// m)` holds where `hay[p + i] | m == b`.
fn pair_find<const FOLD: bool>(
    hay: &[u8],
    at: usize,
    needle: &[u8],
    bytes: [(usize, u8, u8); 3],
) -> Option<usize> {
    pair_find_by::<FOLD>(hay, at, needle.len(), bytes, |c| {
        literal_at(hay, c, needle, FOLD)
    })
}

/// A rare byte's finder's speed over the planner's single-literal base
/// ([`doc_speed`]): `memchr` on one byte, the planner's probe
/// (`planner::scan_probe`) divided by it is the base.
pub(crate) const RARE_BYTE_SPEED: f64 = 1.5;

/// [`Windows`]' speed over the planner's base. At 0.6 the three literals
/// of cpu-shapes were estimated at 1.41-1.64x their run on the 2026-11-26
/// build machine (`19e3983`) (43-45 ms ran) and 1.69x on the H100 machine's Xeon (31
/// ms), `-i` literals at 1.47-1.69x and 1.82-1.93x.
pub(crate) const WINDOWS_SPEED: f64 = 0.8;

/// [`Prefixed`]'s speed over the planner's base: 100 request ids, 29 ms
/// in memory on the build machine, where the base literal scan reads the
/// same 194 MB in ~20.
pub(crate) const PREFIXED_SPEED: f64 = 0.7;

/// The speed of the CPU finder that runs `q` on `hay`, over the calibrated
/// single-literal speed (the planner's CPU estimate). One thread on the
/// H100 machine's Xeon (cpu-shapes, 194 MB, 2026-11-25): `ERROR_503` by
/// its rare byte ran at 12.7 GB/s (1.6 of the 8 GB/s base; the 0.75 of
/// memmem made the estimate 2.1x the run). The pair scan takes 0.56x
/// memmem's instructions on the build machine (`-x '.*rt=1\.879'`: 56M
/// against 102M in all), taken as 10 GB/s (1.25) until measured there.
pub(crate) fn doc_speed(q: &Query, hay: &[u8]) -> f64 {
    match RareByte::plan(q, hay).map(|r| r.finder) {
        Some(DocFinder::Byte { .. }) => RARE_BYTE_SPEED,
        Some(DocFinder::Pair { .. }) => 1.25,
        Some(DocFinder::Windows(_)) => WINDOWS_SPEED,
        Some(DocFinder::Prefixed(_)) => PREFIXED_SPEED,
        None => q.matcher.speed(),
    }
}

/// The name of the CPU matcher that runs `q` on `hay` (`--explain`): the
/// query's own, its single literal's finder named as chosen for this
/// document ([`RareByte`]).
pub(crate) fn matcher_name(q: &Query, hay: &[u8]) -> String {
    let name = q.cpu_matcher_name();
    match RareByte::plan(q, hay) {
        Some(r) if matches!(name, "memmem" | "aho-corasick" | "prefix-table") => {
            r.name().to_string()
        }
        Some(r) => name.replace("prefilter", r.name()),
        None => name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::for_each_match_rare;
    use super::*;
    use crate::cancel::Cancel;

    /// [`pair_hits`] against a position-by-position count, on random
    /// samples of every length around its 255-byte blocks and its cut.
    #[test]
    fn pair_hits_counts_every_position() {
        let mut rng = crate::gen::SplitMix64(7);
        let needle = b"aBba\n";
        for len in [
            0, 1, 4, 5, 6, 254, 255, 256, 259, 510, 511, 600, 8191, 8192, 9000,
        ] {
            let sample: Vec<u8> = (0..len).map(|_| b"abAB\n"[rng.below(5) as usize]).collect();
            let cut = &sample[..sample.len().min(PAIR_SAMPLE)];
            let n = needle.len();
            for fold in [false, true] {
                let eq = |a: u8, b: u8| {
                    if fold {
                        a.eq_ignore_ascii_case(&b)
                    } else {
                        a == b
                    }
                };
                for i in 0..n {
                    for j in i + 1..n {
                        let want = (0..(cut.len() + 1).saturating_sub(n))
                            .filter(|&p| eq(cut[p + i], needle[i]) && eq(cut[p + j], needle[j]))
                            .count();
                        let got = pair_hits(&sample, needle, i, j, fold);
                        assert_eq!(got, want, "{len} {i} {j} fold {fold}");
                    }
                }
            }
        }
    }

    /// A rare byte that stops far more often than its pair keeps both
    /// (`rare-byte-or-pair`), and each, and whichever `settle` keeps,
    /// finds the lines memmem finds: `Q` and `Z` once in each 600-byte
    /// filler line (rare, under 1/512), `QZ` on one line in 50.
    #[test]
    fn byte_or_pair_is_settled_on_either() {
        let filler = format!(
            "{}Q{}Z{}\n",
            "a".repeat(300),
            "b".repeat(150),
            "c".repeat(147)
        );
        let mut hay = Vec::new();
        let mut i = 0;
        while hay.len() < SETTLE_BYTES + RARE_MIN_DOC {
            if i % 50 == 7 {
                hay.extend_from_slice(format!("x QZ {i}\n").as_bytes());
            } else {
                hay.extend_from_slice(filler.as_bytes());
            }
            i += 1;
        }
        hay.extend_from_slice(b"QZ");
        let q = crate::QueryBuilder::new()
            .syntax(crate::Syntax::Fixed)
            .build(&["QZ"])
            .unwrap();
        let want = rare_lines(&q, &hay, None);
        assert!(want.len() > 50, "{}", want.len());
        let plan = || RareByte::plan(&q, &hay).expect("a literal on a large document");
        let r = plan();
        assert!(r.can_settle());
        assert_eq!(r.name(), "rare-byte-or-pair");
        assert_eq!(rare_lines(&q, &hay, Some(&r)), want, "by the byte");
        let mut p = plan();
        p.finder = p.pair.take().expect("a pair to time");
        assert_eq!(p.name(), "rare-pair");
        assert_eq!(rare_lines(&q, &hay, Some(&p)), want, "by the pair");
        let mut s = plan();
        s.settle(&hay);
        assert!(!s.can_settle());
        assert!(
            matches!(s.name(), "rare-byte" | "rare-pair"),
            "{}",
            s.name()
        );
        assert_eq!(
            rare_lines(&q, &hay, Some(&s)),
            want,
            "settled: {}",
            s.name()
        );
        // A document shorter than the timed bytes keeps the byte.
        let mut short = plan();
        short.settle(&hay[..SETTLE_BYTES - 1]);
        assert_eq!(short.name(), "rare-byte");
    }

    #[test]
    fn rare_byte_finds_what_memmem_finds() {
        // A document over RARE_MIN_DOC whose literal has a rare byte
        // (`Q`), occurrences at the edges, across piece boundaries and
        // straddling a line; counts and starts equal memmem's.
        let mut hay = b"QQxQ\n".to_vec();
        let mut i = 0;
        while hay.len() < RARE_MIN_DOC + 1000 {
            hay.extend_from_slice(match i % 100 {
                0 => &b"abc def QxQ ghi\n"[..],
                50 => b"Qx\nxQ\n",
                _ => b"nothing here at all\n",
            });
            i += 1;
        }
        hay.extend_from_slice(b"QxQ");
        let q = crate::QueryBuilder::new()
            .syntax(crate::Syntax::Fixed)
            .build(&["QxQ"])
            .unwrap();
        let r = RareByte::plan(&q, &hay).expect("x and Q are rare");
        assert!(
            matches!(
                r.finder,
                DocFinder::Byte {
                    needle: b"QxQ",
                    byte: b'x' | b'Q',
                    ..
                }
            ),
            "{}",
            r.name()
        );
        let a = rare_lines(&q, &hay, Some(&r));
        assert_eq!(a, rare_lines(&q, &hay, None));
        assert!(a.len() > 400, "{}", a.len());
        // Inside a range that cuts an occurrence: not found.
        assert_eq!(r.find(&hay, 0, 3), None);
        assert_eq!(r.find(&hay, 1, 4), Some(1));
    }

    /// `-i` on one ASCII literal: found by a byte or a pair in either
    /// case (the plan says which, folded), with the lines the query's own
    /// finder (Teddy over case variants, verified by aho-corasick) finds:
    /// every case mix, a literal cut short, at the document's edges.
    #[test]
    fn folded_finders_find_what_the_matcher_finds() {
        for (pat, filler, byte) in [
            // `x` is rare in the filler: the byte finder, in both cases.
            (
                "nullPointerException",
                &b"some ordinary text, no match\n"[..],
                true,
            ),
            // Every byte of `timeout` is common: a pair.
            (
                "TimeOut",
                &b"time out, tim eout, timeou t: item mouton\n"[..],
                false,
            ),
        ] {
            let mut hay = format!("{}\n", pat.to_uppercase()).into_bytes();
            // The first line, the last, and two lines in 97.
            let mut want = 2;
            let mut i = 0;
            while hay.len() < RARE_MIN_DOC + 1000 {
                let line = match i % 97 {
                    0 => format!("a {} b\n", pat.to_lowercase()),
                    13 => format!("{}{}\n", &pat[..3].to_uppercase(), &pat[3..].to_lowercase()),
                    29 => format!("cut {}\n", &pat[..pat.len() - 1]),
                    41 => format!("{}@{}\n", &pat[..2], &pat[2..]),
                    _ => String::from_utf8(filler.to_vec()).unwrap(),
                };
                hay.extend_from_slice(line.as_bytes());
                want += usize::from(i % 97 == 0 || i % 97 == 13);
                i += 1;
            }
            hay.extend_from_slice(pat.to_ascii_lowercase().as_bytes());
            let q = crate::QueryBuilder::new()
                .syntax(crate::Syntax::Fixed)
                .case_insensitive(true)
                .build(&[pat])
                .unwrap();
            let r = RareByte::plan(&q, &hay).expect("a literal on a large document");
            let folded = match r.finder {
                DocFinder::Byte { fold, .. } => byte && fold,
                DocFinder::Pair { fold, .. } => !byte && fold,
                DocFinder::Windows(_) | DocFinder::Prefixed(_) => false,
            };
            assert!(folded, "{pat}: {}", r.name());
            let a = rare_lines(&q, &hay, Some(&r));
            assert_eq!(a, rare_lines(&q, &hay, None), "{pat}");
            assert_eq!(a.len(), want, "{pat}");
        }
    }

    proptest::proptest! {
        /// Each pair scan this CPU has (AVX-512 and AVX2: 128 and 64
        /// starts a step, then the scalar tail; the scalar loop alone)
        /// finds the first occurrence a naive loop finds, for every
        /// pair of needle positions and every third byte that sifts it,
        /// every start and haystack length around the step edges; under
        /// -i (`FOLD`) letters in either case, `@` and `` ` `` (one bit
        /// apart as `a` and `A` are) and `\n` as themselves.
        #[test]
        fn pair_find_agrees_with_a_naive_search(
            hay in proptest::collection::vec(proptest::sample::select(b"abAB\nc@`".to_vec()), 0..400),
            needle in proptest::collection::vec(proptest::sample::select(b"abcA@".to_vec()), 2..6),
            at in 0usize..64,
            fold: bool,
        ) {
            let n = needle.len();
            let same = |h: &[u8]| if fold { h.eq_ignore_ascii_case(&needle) } else { h == &needle[..] };
            for i1 in 0..n {
                for i2 in i1 + 1..n {
                    for len in [hay.len(), hay.len().saturating_sub(1), hay.len() / 2] {
                        let h = &hay[..len];
                        let at = at.min(len);
                        let want = (at..=len.saturating_sub(n))
                            .find(|&p| p + n <= len && same(&h[p..p + n]));
                        for i3 in 0..n {
                            let at3 = |i: usize| {
                                let m = fold_mask(needle[i], fold);
                                (i, needle[i] | m, m)
                            };
                            let bytes = [at3(i1), at3(i2), at3(i3)];
                            for simd in Simd::available() {
                                let is = |c: usize| literal_at(h, c, &needle, fold);
                                let got = if fold {
                                    pair_find_with::<true>(simd, h, at, n, bytes, is)
                                } else {
                                    pair_find_with::<false>(simd, h, at, n, bytes, is)
                                };
                                proptest::prop_assert_eq!(got, want, "{:?} i1 {} i2 {} i3 {} len {}", simd, i1, i2, i3, len);
                            }
                        }
                    }
                }
            }
        }
    }

    /// The lines [`for_each_match_rare`] selects in `hay`, by `rare` or
    /// by the query's own finder.
    fn rare_lines(q: &Query, hay: &[u8], rare: Option<&RareByte>) -> Vec<usize> {
        let mut out = Vec::new();
        for_each_match_rare(q, hay, 0, hay.len(), &Cancel::never(), rare, |s, _| {
            out.push(s);
            true
        });
        out
    }

    /// [`Windows::find`] in `hay[at..end]` against a naive search: an
    /// occurrence when there is one, on the line of the first.
    fn windows_check(
        w: &Windows,
        lits: &[Vec<u8>],
        hay: &[u8],
        at: usize,
        end: usize,
    ) -> Result<(), String> {
        let occurs = |p: usize| {
            lits.iter()
                .any(|l| p + l.len() <= end && hay[p..].starts_with(l))
        };
        let first = (at..end).find(|&p| occurs(p));
        match (first, w.find(hay, at, end)) {
            (None, None) => Ok(()),
            (Some(f), Some(p))
                if p >= at && occurs(p) && !hay[f.min(p)..f.max(p)].contains(&b'\n') =>
            {
                Ok(())
            }
            (f, p) => Err(format!("[{at}, {end}): first {f:?}, found {p:?}")),
        }
    }

    #[test]
    fn windows_sweep_every_range_and_window() {
        // Overlapping literals sharing windows, on and across line ends.
        let hay = b"xabcab\nabc\ncabca\nbbcacab";
        let lits = [b"abca".to_vec(), b"cab".to_vec(), b"bcaca".to_vec()];
        for o0 in 0..2 {
            for o1 in 0..1 {
                for o2 in 0..3 {
                    let w = Windows::at(&lits, &[o0, o1, o2]).expect("builds");
                    for at in 0..=hay.len() {
                        for end in at..=hay.len() {
                            windows_check(&w, &lits, hay, at, end)
                                .unwrap_or_else(|e| panic!("windows {o0} {o1} {o2}: {e}"));
                        }
                    }
                }
            }
        }
    }

    /// The first occurrence of any of `lits` inside `hay[at..end]`.
    fn first_of(lits: &[Vec<u8>], hay: &[u8], at: usize, end: usize) -> Option<usize> {
        (at..end).find(|&p| lits.iter().any(|l| hay[p..end].starts_with(l)))
    }

    proptest::proptest! {
        /// [`Prefixed::find`], by any pair of the prefix's bytes, finds
        /// the first occurrence inside `[at, end)`: literals of several
        /// lengths (keys of 1 to 8 bytes, cut at the shortest), keys that
        /// two literals share, occurrences at both ends.
        #[test]
        fn prefixed_find_the_first_occurrence(
            hay in proptest::collection::vec(proptest::sample::select(b"ab\nc".to_vec()), 0..120),
            tails in proptest::collection::vec(
                proptest::collection::vec(proptest::sample::select(b"abc".to_vec()), 1..11),
                2..8,
            ),
            prefix in proptest::collection::vec(proptest::sample::select(b"abc".to_vec()), 2..4),
            at in 0usize..120,
            len in 0usize..120,
        ) {
            let lits: Vec<Vec<u8>> = tails.iter().map(|t| [&prefix[..], t].concat()).collect();
            let Some((p, key_len)) = Prefixed::shape(&lits) else {
                // The tails share a first byte: the common prefix is longer.
                return Ok(());
            };
            let at = at.min(hay.len());
            let end = at + len % (hay.len() - at + 1);
            let want = first_of(&lits, &hay, at, end);
            for i1 in 0..p {
                for i2 in i1 + 1..p {
                    let f = Prefixed::with_pair(&lits, p, key_len, i1, i2);
                    proptest::prop_assert_eq!(f.find(&hay, at, end), want, "{} {}", i1, i2);
                }
            }
        }
    }

    /// A set of 40 ids behind one prefix on a large document: planned as
    /// [`Prefixed`] (the prefix on every line), the lines the query's own
    /// finder selects; a short prefix seen everywhere is declined.
    #[test]
    fn prefixed_plan_finds_what_the_literals_find() {
        let mut hay = Vec::new();
        let mut i = 0u64;
        while hay.len() < RARE_MIN_DOC + 1000 {
            let id = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
            // ~150 bytes a line, as a log's: `req=` once.
            hay.extend_from_slice(
                format!("t={i} host=web-{:02} level=info req={id:06x} msg=ok path=/api/v1/items/{} status=200 bytes={}\n", i % 50, i % 977, i * 31 % 100_000)
                    .as_bytes(),
            );
            i += 1;
        }
        hay.extend_from_slice(b"req=00000");
        let mut pats: Vec<String> = (0..40u64)
            .map(|k| {
                format!(
                    "req={:06x}",
                    (k * 997).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40
                )
            })
            .collect();
        // Not in the document; one cut short at its end; one longer than
        // another with the same key.
        pats.extend(["req=zzzzzz".into(), "req=00000x".into()]);
        pats.push(format!("{} msg=ok", pats[3]));
        let q = crate::QueryBuilder::new()
            .syntax(crate::Syntax::Fixed)
            .build(&pats)
            .unwrap();
        let r = RareByte::plan(&q, &hay).expect("a set on a large document");
        assert_eq!(r.name(), "prefix-keys");
        let a = rare_lines(&q, &hay, Some(&r));
        assert_eq!(a, rare_lines(&q, &hay, None));
        // The ids of lines 0, 997, ... 6979 at least.
        assert!(a.len() >= 8, "{}", a.len());
        // `t=` is on every line twice, 1 in ~75 bytes: over PREFIX_SHARE.
        let many: Vec<String> = (0..40).map(|k| format!("t={k}")).collect();
        let q = crate::QueryBuilder::new()
            .syntax(crate::Syntax::Fixed)
            .build(&many)
            .unwrap();
        assert!(RareByte::plan(&q, &hay).is_none_or(|r| r.name() != "prefix-keys"));
    }

    proptest::proptest! {
        /// [`Windows::find`], with any window of each literal, finds an
        /// occurrence inside `[at, end)` exactly when there is one, on the
        /// line of the first; [`for_each_match_rare`] by it selects the
        /// lines the query's own finder selects.
        #[test]
        fn windows_find_what_the_literals_find(
            hay in proptest::collection::vec(proptest::sample::select(b"ab\nc".to_vec()), 0..80),
            lits in proptest::collection::vec(
                proptest::collection::vec(proptest::sample::select(b"abc".to_vec()), 3..7),
                2..6,
            ),
            offs in proptest::collection::vec(0usize..8, 6),
            at in 0usize..80,
            len in 0usize..80,
        ) {
            let offsets: Vec<usize> =
                lits.iter().zip(&offs).map(|(l, &o)| o % (l.len() - 2)).collect();
            let w = Windows::at(&lits, &offsets).expect("Teddy or Rabin-Karp builds");
            let at = at.min(hay.len());
            let end = at + len % (hay.len() - at + 1);
            let got = windows_check(&w, &lits, &hay, at, end);
            proptest::prop_assert!(got.is_ok(), "{}", got.unwrap_err());
            let strs: Vec<String> =
                lits.iter().map(|l| String::from_utf8(l.clone()).unwrap()).collect();
            let q = crate::QueryBuilder::new()
                .syntax(crate::Syntax::Fixed)
                .build(&strs)
                .unwrap();
            let rare = RareByte {
                finder: DocFinder::Windows(w),
                pair: None,
                verify: false,
            };
            proptest::prop_assert_eq!(rare_lines(&q, &hay, Some(&rare)), rare_lines(&q, &hay, None));
        }
    }

    #[test]
    fn rare_windows_find_what_the_literals_find() {
        // The generator's log (over RARE_MIN_DOC): three literals as a
        // fixed-string set, and two as the required set of a regex
        // (candidates verified); lines equal the query's own finder's.
        let hay = crate::gen::generate(&crate::gen::GenOptions {
            lines: 20_000,
            seed: 7,
            ..Default::default()
        });
        assert!(hay.len() > RARE_MIN_DOC);
        let cases: &[(crate::Syntax, &[&str])] = &[
            (
                crate::Syntax::Fixed,
                &["ERROR_503", "NullPointerException", "queue depth"],
            ),
            (
                crate::Syntax::Regex,
                &[r"(?:ERROR_50[0-9]|NullPointerException)\b"],
            ),
        ];
        for &(syntax, pats) in cases {
            let q = crate::QueryBuilder::new()
                .syntax(syntax)
                .build(pats)
                .unwrap();
            let r = RareByte::plan(&q, &hay).expect("a set on a large document");
            assert_eq!(r.name(), "rare-windows", "{pats:?}");
            let got = rare_lines(&q, &hay, Some(&r));
            assert_eq!(got, rare_lines(&q, &hay, None), "{pats:?}");
            assert!(got.len() > 50, "{pats:?}: {}", got.len());
        }
        // Windows on every other line are not rare: not taken.
        let hay = b"abcd\nxyz\n".repeat(RARE_MIN_DOC / 9 + 1);
        let q = crate::QueryBuilder::new()
            .syntax(crate::Syntax::Fixed)
            .build(&["abcd", "xyz!"])
            .unwrap();
        assert!(RareByte::plan(&q, &hay).is_none());
    }

    #[test]
    fn rare_pair_finds_what_memmem_finds() {
        // No byte of the literal is rare (all are on every line), so the
        // document pair runs; occurrences at the edges and on many
        // alignments, counts and starts equal memmem's.
        let mut hay = b"rt=1.879 ".to_vec();
        let mut i = 0u64;
        while hay.len() < RARE_MIN_DOC + 1000 {
            let pad = " ".repeat((i % 37) as usize);
            let line = if i.is_multiple_of(97) {
                format!("x{pad} rt=1.879 y=1.{}\n", i % 1000)
            } else {
                format!("x{pad} rt=1.{} y=8.79 t=0.1\n", i % 1000)
            };
            hay.extend_from_slice(line.as_bytes());
            i += 1;
        }
        hay.extend_from_slice(b"rt=1.879");
        let q = crate::QueryBuilder::new()
            .syntax(crate::Syntax::Fixed)
            .build(&["rt=1.879"])
            .unwrap();
        let r = RareByte::plan(&q, &hay).expect("a single literal on a large document");
        assert_eq!(r.name(), "rare-pair");
        let a = rare_lines(&q, &hay, Some(&r));
        assert_eq!(a, rare_lines(&q, &hay, None));
        assert!(a.len() > 100, "{}", a.len());
        assert_eq!(r.find(&hay, 0, 7), None);
        assert_eq!(r.find(&hay, 0, 8), Some(0));
        let second = memchr::memmem::find(&hay[1..], b"rt=1.879").map(|i| i + 1);
        assert_eq!(r.find(&hay, 1, hay.len()), second);
    }
}
