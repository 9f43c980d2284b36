//! Approximate matching (`--fuzzy K`, like agrep): does a line hold a
//! substring within Levenshtein distance K of the pattern?
//!
//! Prefilter (pigeonhole): split the pattern into K+1 pieces; any substring
//! within K edits contains one piece unchanged, so an Aho-Corasick search for
//! the pieces finds every candidate line. Verification: Myers' bit-vector
//! algorithm (one `u64` word, patterns up to 64 bytes), or the plain dynamic
//! programme for longer patterns.

use aho_corasick::{AhoCorasick, Input, MatchKind};

#[derive(Debug)]
pub(crate) struct Fuzzy {
    pats: Vec<Vec<u8>>,
    k: usize,
    fold: bool,
    /// Pieces of every pattern; `None` when some pattern is no longer than
    /// K (it matches every line).
    prefilter: Option<AhoCorasick>,
}

#[inline]
fn fold_byte(b: u8, fold: bool) -> u8 {
    if fold {
        b.to_ascii_lowercase()
    } else {
        b
    }
}

impl Fuzzy {
    pub(crate) fn new(pats: &[Vec<u8>], k: u8, fold: bool) -> Fuzzy {
        let k = k as usize;
        let pats: Vec<Vec<u8>> = pats
            .iter()
            .map(|p| p.iter().map(|&b| fold_byte(b, fold)).collect())
            .collect();
        let mut pieces = Vec::new();
        let mut all = false;
        for p in &pats {
            if p.len() <= k {
                all = true;
                break;
            }
            let n = k + 1;
            for i in 0..n {
                let (s, e) = (p.len() * i / n, p.len() * (i + 1) / n);
                pieces.push(p[s..e].to_vec());
            }
        }
        let prefilter = if all {
            None
        } else {
            Some(
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostFirst)
                    .ascii_case_insensitive(fold)
                    .build(&pieces)
                    .expect("fuzzy pieces are small"),
            )
        };
        Fuzzy {
            pats,
            k,
            fold,
            prefilter,
        }
    }

    /// A position in `hay[at..end]` whose line may match.
    pub(crate) fn find_candidate(&self, hay: &[u8], at: usize, end: usize) -> Option<usize> {
        match &self.prefilter {
            None => (at < end).then_some(at),
            Some(ac) => ac.find(Input::new(hay).span(at..end)).map(|m| m.start()),
        }
    }

    pub(crate) fn is_match_line(&self, line: &[u8]) -> bool {
        self.pats
            .iter()
            .any(|p| p.len() <= self.k || min_distance(p, line, self.fold, self.k) <= self.k)
    }

    /// Non-overlapping approximate matches: for each, the earliest end with
    /// distance <= K, and the longest start that achieves it.
    pub(crate) fn find_iter_line(&self, line: &[u8]) -> Vec<std::ops::Range<usize>> {
        let mut out = Vec::new();
        let mut at = 0;
        while at <= line.len() {
            let best = self
                .pats
                .iter()
                .filter_map(|p| find_one(p, &line[at..], self.fold, self.k))
                .min_by_key(|r| (r.end, r.start));
            match best {
                Some(r) => {
                    out.push(at + r.start..at + r.end);
                    at += r.end.max(r.start + 1);
                }
                None => break,
            }
        }
        out
    }
}

/// The smallest edit distance between `pat` and any substring of `text`,
/// stopping early once it is <= `k`.
fn min_distance(pat: &[u8], text: &[u8], fold: bool, k: usize) -> usize {
    let m = pat.len();
    if m == 0 {
        return 0;
    }
    if m <= 64 {
        // Myers 1999, with D[0][j] = 0 for every j (a match may start
        // anywhere): no carry-in to the horizontal positive delta.
        let mut peq = [0u64; 256];
        for (i, &c) in pat.iter().enumerate() {
            peq[c as usize] |= 1 << i;
            if fold && c.is_ascii_lowercase() {
                peq[c.to_ascii_uppercase() as usize] |= 1 << i;
            }
        }
        let top = 1u64 << (m - 1);
        let (mut pv, mut mv, mut score) = (!0u64, 0u64, m);
        for &c in text {
            let eq = peq[c as usize];
            let xv = eq | mv;
            let xh = (((eq & pv).wrapping_add(pv)) ^ pv) | eq;
            let mut ph = mv | !(xh | pv);
            let mut mh = pv & xh;
            if ph & top != 0 {
                score += 1;
            } else if mh & top != 0 {
                score -= 1;
            }
            ph <<= 1;
            mh <<= 1;
            pv = mh | !(xv | ph);
            mv = ph & xv;
            if score <= k {
                return score;
            }
        }
        score
    } else {
        // Plain dynamic programme over one column.
        let mut col: Vec<usize> = (0..=m).collect();
        let mut best = m;
        for &c in text {
            let c = fold_byte(c, fold);
            let mut diag = col[0];
            col[0] = 0;
            for i in 1..=m {
                let up = col[i];
                let cost = usize::from(pat[i - 1] != c);
                col[i] = (diag + cost).min(col[i - 1] + 1).min(up + 1);
                diag = up;
            }
            best = best.min(col[m]);
            if best <= k {
                return best;
            }
        }
        best
    }
}

/// The first approximate match in `text`: earliest end with distance <= k,
/// and for that end the earliest start reaching the minimum distance.
fn find_one(pat: &[u8], text: &[u8], fold: bool, k: usize) -> Option<std::ops::Range<usize>> {
    let m = pat.len();
    if m <= k {
        return Some(0..0);
    }
    // col[i] = (distance, start) for pattern prefix i ending at this column.
    let mut col: Vec<(usize, usize)> = (0..=m).map(|i| (i, 0)).collect();
    for (j, &c) in text.iter().enumerate() {
        let c = fold_byte(c, fold);
        let mut diag = col[0];
        col[0] = (0, j + 1);
        for i in 1..=m {
            let up = col[i];
            let cost = usize::from(pat[i - 1] != c);
            let cands = [
                (diag.0 + cost, diag.1),
                (col[i - 1].0 + 1, col[i - 1].1),
                (up.0 + 1, up.1),
            ];
            col[i] = *cands.iter().min().unwrap();
            diag = up;
        }
        if col[m].0 <= k {
            return Some(col[m].1..j + 1);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force: edit distance of pat against every substring.
    fn naive(pat: &[u8], text: &[u8]) -> usize {
        let mut best = pat.len();
        for s in 0..=text.len() {
            for e in s..=text.len() {
                best = best.min(lev(pat, &text[s..e]));
            }
        }
        best
    }

    fn lev(a: &[u8], b: &[u8]) -> usize {
        let mut prev: Vec<usize> = (0..=b.len()).collect();
        for i in 1..=a.len() {
            let mut cur = vec![i; b.len() + 1];
            for j in 1..=b.len() {
                cur[j] = (prev[j - 1] + usize::from(a[i - 1] != b[j - 1]))
                    .min(prev[j] + 1)
                    .min(cur[j - 1] + 1);
            }
            prev = cur;
        }
        prev[b.len()]
    }

    #[test]
    fn myers_agrees_with_brute_force() {
        let texts: [&[u8]; 6] = [
            b"",
            b"helo world",
            b"hello",
            b"xxhe llo",
            b"HELLO there",
            b"abcabcabd",
        ];
        let pats: [&[u8]; 4] = [b"hello", b"abd", b"lo w", b"h"];
        for t in texts {
            for p in pats {
                let want = naive(p, t);
                for k in 0..=3 {
                    let got = min_distance(p, t, false, k);
                    assert_eq!(got <= k, want <= k, "pat {p:?} text {t:?} k {k}");
                    assert_eq!(
                        find_one(p, t, false, k).is_some(),
                        want <= k,
                        "find_one pat {p:?} text {t:?} k {k}"
                    );
                }
            }
        }
    }

    #[test]
    fn long_patterns_use_the_dp() {
        let p = vec![b'a'; 70];
        let mut t = vec![b'a'; 69];
        t.push(b'b');
        assert_eq!(min_distance(&p, &t, false, 1), 1);
        assert!(min_distance(&p, &t, false, 0) > 0);
    }
}
