//! Which two positions of a pattern `scan` tests with its SWAR byte
//! tests: the one decision behind every literal scan and every class
//! string (`kernels/scan.rs` packs what [`RareBytes::pick`] returns).
//!
//! The rarest byte comes from the corpus's byte frequencies, as before.
//! The second test is picked by what the two tests let through *together*
//! on a sample of the corpus: in logs, bytes are not independent. In the
//! generated corpus `[` and `]` are each on every line, 13 bytes apart
//! wherever the service's name has eight letters: `\[svc-payments\]`'s
//! two rarest bytes passed 137,719 starts where 68,721 match, and
//! `\[svc-billing\]`'s 275,334 where 69,018 do; `[` with the `y` of `pay`
//! (the `b` of `bil`) passes only the matches. `client=10\.`: 947,067
//! survivors by frequency, 391,404 with `i` and the `0` (340,776 match).
//! Every survivor is compared in full (`class_at`, `verify_at`): on the
//! H200 the kernels of `svc-`, `client=` and `GET|POST` took 4-8% less
//! (163 -> 150, 242 -> 227, 120 -> 111 µs;
//! docs/bench/h200-2026-11-28-byte-test-pick.md).

use std::collections::HashMap;
use std::sync::Mutex;

use crate::corpus::Corpus;

/// One position's byte test: the byte (lowercase under `fold`) and
/// whether both ASCII cases pass. `None`: a class, which the SWAR tests
/// cannot test.
pub(crate) type ByteTest = Option<(u8, bool)>;

/// The bytes the SWAR tests look for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RarePick {
    /// Pattern index of the rarest byte.
    pub(crate) r1: usize,
    /// Pattern index of the second test, if the pattern has two byte
    /// positions.
    pub(crate) r2: Option<usize>,
    /// The rarest byte is common (more than 1 byte in [`DENSE_SHARE`]):
    /// the second test runs on every chunk, without a branch, since nearly
    /// every warp would take that branch anyway.
    pub(crate) dense: bool,
}

/// Where scan's second test stops being worth a branch: the rarest byte
/// is more than one byte in 128 of the corpus (then it is in more than 12%
/// of the 16-byte chunks, and in most 512-byte warps' worth). Measured on
/// the H200 (kernel ms, branch / no branch): `ERROR_503` (`R`, 0.06% of the
/// bytes) 0.054 / 0.059, `NullPointerException` (`P`, 0.18%) 0.055 / 0.059,
/// `error` (`o`, 1.65%) 0.064 / 0.062, `192.168.1` (`9`, 2.3%) 0.069 /
/// 0.068; on the H100 the same way round, by 0.001-0.005.
pub(crate) const DENSE_SHARE: u64 = 128;

/// Bytes of the pair sample: 16 pieces of 4 KiB spread over the corpus.
/// A pattern's first pick reads it once (the picks are memoised). On the
/// build machine (1M generated lines), with 256 KiB and the three rarest
/// bytes each weighed as the first test, a first pick took 0.05-0.64 ms
/// for the suite's strings and 1.5 ms for a string of `e`s: more than the
/// query it picks for.
pub(crate) const SAMPLE_BYTES: usize = 64 << 10;

/// Starts of the first byte counted before the counts are scaled to the
/// whole sample: a common byte (`e`, 8% of log bytes) would otherwise have
/// 5,000 starts in it, each checked at every position.
const MAX_STARTS: u64 = 1024;

/// Picks memoised before the memo starts over (a server's stream of
/// distinct patterns must not grow it without bound).
const MEMO_LIMIT: usize = 4096;

/// The corpus's byte statistics that pick `scan`'s tests, gathered at
/// upload: every byte's frequency, and a sample of the bytes themselves
/// for the pairs.
#[derive(Debug)]
pub(crate) struct RareBytes {
    /// Byte frequencies (of a sample of large documents).
    pub(crate) freq: Box<[u64; 256]>,
    /// Up to [`SAMPLE_BYTES`] of the corpus, in 4 KiB pieces spread over it.
    sample: Vec<u8>,
    memo: Mutex<HashMap<Vec<ByteTest>, Option<RarePick>>>,
}

impl RareBytes {
    /// The statistics of `corpus`: small documents are counted whole,
    /// large ones 4 KiB in every 256 KiB, which ranks bytes just as well;
    /// the pair sample takes evenly spaced pieces of the same.
    pub(crate) fn of(corpus: &Corpus) -> RareBytes {
        let mut freq = Box::new([0u64; 256]);
        let mut pieces: Vec<&[u8]> = Vec::new();
        for d in corpus.docs() {
            let data = d.data();
            if data.len() <= 4 << 20 {
                data.iter().for_each(|&b| freq[b as usize] += 1);
                pieces.extend(data.chunks(4096));
            } else {
                for c in data.chunks(256 << 10) {
                    let s = &c[..c.len().min(4096)];
                    s.iter().for_each(|&b| freq[b as usize] += 1);
                    pieces.push(s);
                }
            }
        }
        let step = pieces.len().div_ceil(SAMPLE_BYTES / 4096).max(1);
        let sample = pieces
            .iter()
            .step_by(step)
            .flat_map(|p| p.iter())
            .copied()
            .collect();
        RareBytes::new(freq, sample)
    }

    /// Statistics from frequencies and a sample (empty: the frequencies
    /// alone pick, as they did before the sample).
    pub(crate) fn new(freq: Box<[u64; 256]>, sample: Vec<u8>) -> RareBytes {
        RareBytes {
            freq,
            sample,
            memo: Mutex::new(HashMap::new()),
        }
    }

    /// The two positions of `tests` that the SWAR tests check, `None`
    /// when no position has a byte. The first is the rarest byte (by
    /// frequency; a letter under `fold` counts both cases; the earlier on
    /// a tie). The second is the one that the fewest starts of the sample
    /// pass together with the first; on a tie (an empty sample, or the
    /// first byte not in it) a byte other than the first's, then the
    /// rarer, then the earlier. Memoised per `tests`.
    pub(crate) fn pick(&self, tests: &[ByteTest]) -> Option<RarePick> {
        if let Some(p) = self.memo.lock().ok().and_then(|m| m.get(tests).copied()) {
            return p;
        }
        let p = self.pick_uncached(tests);
        if let Ok(mut m) = self.memo.lock() {
            if m.len() >= MEMO_LIMIT {
                m.clear();
            }
            m.insert(tests.to_vec(), p);
        }
        p
    }

    fn pick_uncached(&self, tests: &[ByteTest]) -> Option<RarePick> {
        let f = |i: usize| {
            let (b, fold) = tests[i]?;
            let [lo, up] = cases(b, fold);
            Some(self.freq[lo as usize] + u64::from(up != lo) * self.freq[up as usize])
        };
        let bytes = || (0..tests.len()).filter(|&i| tests[i].is_some());
        let r1 = bytes().min_by_key(|&i| (f(i), i))?;
        let survivors = self.pair_survivors(tests, r1);
        let r2 = bytes()
            .filter(|&j| j != r1)
            .min_by_key(|&j| (survivors[j], tests[j] == tests[r1], f(j), j));
        let total: u64 = self.freq.iter().sum();
        let dense = f(r1).unwrap_or(0).saturating_mul(DENSE_SHARE) > total;
        Some(RarePick { r1, r2, dense })
    }

    /// Per position `j`, the starts in the sample where both `r1`'s and
    /// `j`'s bytes are there (all zero for an empty sample); past
    /// [`MAX_STARTS`] starts of `r1`, counted over the sample read so far
    /// and scaled to the whole.
    fn pair_survivors(&self, tests: &[ByteTest], r1: usize) -> Vec<u64> {
        let mut n = vec![0u64; tests.len()];
        let Some((b, fold)) = tests[r1] else {
            return n;
        };
        let s = &self.sample;
        let hit = |t: ByteTest, x: u8| t.is_some_and(|(b, fold)| cases(b, fold).contains(&x));
        let [lo, up] = cases(b, fold);
        let mut starts = 0;
        for q in memchr::memchr2_iter(lo, up, s) {
            starts += 1;
            if starts > MAX_STARTS {
                let read = q.max(1) as u64;
                n.iter_mut()
                    .for_each(|c| *c = c.saturating_mul(s.len() as u64) / read);
                break;
            }
            let Some(p) = q.checked_sub(r1) else {
                continue;
            };
            let Some(win) = s.get(p..p + tests.len()) else {
                continue;
            };
            for (j, (&t, &x)) in tests.iter().zip(win).enumerate() {
                n[j] += u64::from(hit(t, x));
            }
        }
        n
    }
}

/// The bytes a test takes: `b`, and under `fold` its upper case (`b`
/// twice where it has none).
fn cases(b: u8, fold: bool) -> [u8; 2] {
    [b, if fold { b.to_ascii_uppercase() } else { b }]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(s: &[u8]) -> Vec<ByteTest> {
        s.iter().map(|&b| Some((b, false))).collect()
    }

    /// Without a sample, the frequencies alone: the rarest byte, then the
    /// rarest other byte.
    #[test]
    fn picks_rarest_distinct_bytes() {
        let mut freq = Box::new([100u64; 256]);
        freq[b'x' as usize] = 1;
        freq[b'y' as usize] = 2;
        let r = |f: &[u64; 256]| RareBytes::new(Box::new(*f), Vec::new());
        assert_eq!(
            r(&freq).pick(&lit(b"axbyx")),
            Some(RarePick {
                r1: 1,
                r2: Some(3),
                dense: false
            })
        );
        assert_eq!(
            r(&freq).pick(&lit(b"q")),
            Some(RarePick {
                r1: 0,
                r2: None,
                dense: false
            })
        );
        assert_eq!(r(&freq).pick(&[None, None]), None);
        // A class position is never tested.
        assert_eq!(r(&freq).pick(&[None, Some((b'q', false))]).unwrap().r1, 1);
        // Under -i, 'A' counts towards 'a'.
        freq[b'a' as usize] = 0;
        freq[b'A' as usize] = 500;
        assert_eq!(
            r(&freq)
                .pick(&[Some((b'a', true)), Some((b'b', true))])
                .unwrap()
                .r1,
            1
        );
        assert_eq!(r(&freq).pick(&lit(b"ab")).unwrap().r1, 0);
        // The second test goes without a branch once the rarest byte is
        // more than one byte in 128 of the corpus.
        let total: u64 = freq.iter().sum();
        freq[b'k' as usize] = total / 100;
        assert!(r(&freq).pick(&lit(b"kk")).unwrap().dense);
        freq[b'k' as usize] = total / 200;
        assert!(!r(&freq).pick(&lit(b"kk")).unwrap().dense);
        // Under -i both cases count.
        freq[b'K' as usize] = total / 200;
        assert!(
            r(&freq)
                .pick(&[Some((b'k', true)), Some((b'k', true))])
                .unwrap()
                .dense
        );
    }

    /// With a sample, the pair that lets the fewest starts through: `[`
    /// and `]` are on every line of this corpus and rarer than any letter,
    /// but 13 bytes apart on half the lines; `[` and `y` only where the
    /// pattern is. 8,000 lines: past [`MAX_STARTS`], the counts are scaled.
    #[test]
    fn picks_the_pair_that_passes_fewest() {
        const ALPHA: &str = "abcdefghijklmnopqrstuvwxyz-";
        let mut corpus = Vec::new();
        for i in 0..8000 {
            let svc = ["payments", "shipping", "billing", "auth"][i % 4];
            corpus.extend_from_slice(format!("x [svc-{svc}] {ALPHA} {ALPHA}\n").as_bytes());
        }
        let mut freq = Box::new([0u64; 256]);
        corpus.iter().for_each(|&b| freq[b as usize] += 1);
        let pat = b"[svc-payments]";
        let without = RareBytes::new(freq.clone(), Vec::new())
            .pick(&lit(pat))
            .unwrap();
        let with = RareBytes::new(freq, corpus.clone())
            .pick(&lit(pat))
            .unwrap();
        let passes = |p: RarePick| {
            let (r1, r2) = (p.r1, p.r2.unwrap());
            (0..corpus.len() - pat.len())
                .filter(|&s| corpus[s + r1] == pat[r1] && corpus[s + r2] == pat[r2])
                .count()
        };
        assert_eq!(passes(without), 4000, "{without:?}");
        assert_eq!(passes(with), 2000, "{with:?}");
        // The first test stays on a rare byte.
        assert!(matches!(pat[with.r1], b'[' | b']'), "{with:?}");
    }

    /// The picks are memoised and the memo is bounded.
    #[test]
    fn memo_is_bounded() {
        let r = RareBytes::new(Box::new([1u64; 256]), b"abc\n".repeat(100));
        for i in 0..MEMO_LIMIT + 10 {
            let t = lit(format!("a{i}").as_bytes());
            assert_eq!(r.pick(&t).unwrap().r2, Some(1));
        }
        assert!(r.memo.lock().unwrap().len() <= MEMO_LIMIT);
    }
}
