//! Many literals at once on the CPU (IOC lists: 10k–100k IPs, domains,
//! hashes), and the per-pattern counts of `--count-per-pattern`.
//!
//! `aho-corasick` is the right tool for small sets (Teddy, SIMD) but not for
//! large ones over log text: at 100k 32-byte hashes its automaton is visited
//! at every byte and misses the cache, ~10 MB/s on the build machine (its
//! DFA is 350 MB). [`PrefixTable`] instead hashes the first `k` bytes at
//! each position (`k` = the shortest pattern, at most 8: one unaligned
//! 64-bit load, a multiply and a shift), tests one bit in a filter of 32
//! bits per pattern (a few hundred KB, cache-resident: ~3% false positives),
//! and only then looks at the bucket and compares bytes. Cost per byte is
//! constant whatever the number of patterns.
//!
//! Patterns are deduplicated into *groups* (after ASCII folding under `-i`),
//! numbered in order of first appearance, so the lowest group matching at a
//! position is the leftmost-first winner, as `aho-corasick` reports it.

use aho_corasick::{AhoCorasick, MatchKind};

/// Patterns, deduplicated (and folded under ASCII `-i`).
#[derive(Clone, Debug)]
pub(crate) struct PatternSet {
    /// The distinct patterns, folded when `fold`, in order of first use.
    pub(crate) uniq: Vec<Vec<u8>>,
    /// For each pattern as given, its group in `uniq`.
    pub(crate) group_of: Vec<u32>,
    /// ASCII case folding.
    pub(crate) fold: bool,
}

impl PatternSet {
    pub(crate) fn new(pats: &[Vec<u8>], fold: bool) -> PatternSet {
        let mut map: std::collections::HashMap<Vec<u8>, u32> = Default::default();
        let mut uniq = Vec::new();
        let mut group_of = Vec::with_capacity(pats.len());
        for p in pats {
            let f = if fold {
                p.to_ascii_lowercase()
            } else {
                p.clone()
            };
            let g = *map.entry(f.clone()).or_insert_with(|| {
                uniq.push(f);
                (uniq.len() - 1) as u32
            });
            group_of.push(g);
        }
        PatternSet {
            uniq,
            group_of,
            fold,
        }
    }

    /// The shortest pattern's length.
    pub(crate) fn min_len(&self) -> usize {
        self.uniq.iter().map(|p| p.len()).min().unwrap_or(0)
    }
}

/// Lowercases the ASCII letters of eight bytes at once.
#[inline(always)]
fn fold8(x: u64) -> u64 {
    const L: u64 = 0x0101_0101_0101_0101;
    let h = x & (0x7f * L);
    let ge_a = h + (0x80 - u64::from(b'A')) * L;
    let gt_z = h + (0x80 - u64::from(b'Z') - 1) * L;
    let upper = ge_a & !gt_z & !x & (0x80 * L);
    x | (upper >> 2)
}

#[inline(always)]
fn hash(key: u64) -> u64 {
    key.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The hashed-prefix matcher (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct PrefixTable {
    pub(crate) set: PatternSet,
    /// Bytes hashed at each position: the shortest pattern, at most 8.
    k: usize,
    mask: u64,
    /// log2 of the filter's bits and of the bucket count.
    fbits: u32,
    bbits: u32,
    filter: Vec<u64>,
    /// Bucket `b` holds `entries[start[b]..start[b + 1]]`, groups ascending.
    start: Vec<u32>,
    entries: Vec<u32>,
    /// Each group's first `k` bytes as a key.
    keys: Vec<u64>,
}

impl PrefixTable {
    /// `None` when some pattern is empty.
    pub(crate) fn new(set: PatternSet) -> Option<PrefixTable> {
        let k = set.min_len().min(8);
        if k == 0 || set.uniq.is_empty() {
            return None;
        }
        let mask = if k == 8 {
            u64::MAX
        } else {
            (1u64 << (8 * k)) - 1
        };
        let g = set.uniq.len() as u64;
        let fbits = (g * 32).next_power_of_two().trailing_zeros().max(12);
        let bbits = (g * 2).next_power_of_two().trailing_zeros().max(8);
        let mut filter = vec![0u64; 1 << (fbits - 6)];
        let keys: Vec<u64> = set
            .uniq
            .iter()
            .map(|p| {
                let mut b = [0u8; 8];
                b[..k].copy_from_slice(&p[..k]);
                u64::from_le_bytes(b)
            })
            .collect();
        let mut by_bucket: Vec<(u32, u32)> = Vec::with_capacity(keys.len());
        for (gid, &key) in keys.iter().enumerate() {
            let h = hash(key);
            let f = (h >> (64 - fbits)) as usize;
            filter[f >> 6] |= 1 << (f & 63);
            by_bucket.push(((h >> (64 - bbits)) as u32, gid as u32));
        }
        by_bucket.sort_unstable();
        let start = bucket_starts(by_bucket.iter().map(|e| e.0), 1 << bbits);
        let entries = by_bucket.into_iter().map(|(_, g)| g).collect();
        Some(PrefixTable {
            set,
            k,
            mask,
            fbits,
            bbits,
            filter,
            start,
            entries,
            keys,
        })
    }

    /// The key at `p` (requires `p + k <= hay.len()`).
    #[inline(always)]
    fn key_at(&self, hay: &[u8], p: usize) -> u64 {
        let raw = match hay.get(p..p + 8) {
            Some(w) => u64::from_le_bytes(w.try_into().expect("8 bytes")),
            None => {
                let mut b = [0u8; 8];
                let n = hay.len() - p;
                b[..n].copy_from_slice(&hay[p..]);
                u64::from_le_bytes(b)
            }
        };
        let raw = raw & self.mask;
        if self.set.fold {
            fold8(raw)
        } else {
            raw
        }
    }

    /// Groups matching at `p` (ending at or before `end`), ascending; calls
    /// `f` for each until it returns false. Returns whether `f` was called.
    #[inline(always)]
    fn at(&self, hay: &[u8], p: usize, end: usize, mut f: impl FnMut(u32) -> bool) -> bool {
        let key = self.key_at(hay, p);
        let h = hash(key);
        let fi = (h >> (64 - self.fbits)) as usize;
        if self.filter[fi >> 6] & (1 << (fi & 63)) == 0 {
            return false;
        }
        let b = (h >> (64 - self.bbits)) as usize;
        let mut any = false;
        for &gid in &self.entries[self.start[b] as usize..self.start[b + 1] as usize] {
            if self.keys[gid as usize] != key {
                continue;
            }
            let pat = &self.set.uniq[gid as usize];
            let m = pat.len();
            if p + m > end {
                continue;
            }
            let rest = &hay[p + self.k..p + m];
            let ok = if self.set.fold {
                rest.iter()
                    .zip(&pat[self.k..])
                    .all(|(a, b)| a.to_ascii_lowercase() == *b)
            } else {
                rest == &pat[self.k..]
            };
            if ok {
                any = true;
                if !f(gid) {
                    break;
                }
            }
        }
        any
    }

    /// The first position in `hay[at..end]` where some pattern matches
    /// within `..end`, and the leftmost-first group there.
    #[inline]
    pub(crate) fn find(&self, hay: &[u8], at: usize, end: usize) -> Option<(usize, u32)> {
        if end < self.k {
            return None;
        }
        let last = end - self.k;
        let mut p = at;
        while p <= last {
            let mut won = None;
            if self.at(hay, p, end, |g| {
                won = Some(g);
                false
            }) {
                return won.map(|g| (p, g));
            }
            p += 1;
        }
        None
    }

    /// Every (start, group) in `hay[s..e]`, overlapping, by start.
    pub(crate) fn for_each(&self, hay: &[u8], s: usize, e: usize, mut f: impl FnMut(usize, u32)) {
        if e < self.k {
            return;
        }
        for p in s..=e - self.k {
            self.at(hay, p, e, |g| {
                f(p, g);
                true
            });
        }
    }

    pub(crate) fn is_match(&self, line: &[u8]) -> bool {
        self.find(line, 0, line.len()).is_some()
    }

    /// Leftmost-first, non-overlapping matches in one line.
    pub(crate) fn find_iter_line(&self, line: &[u8]) -> Vec<std::ops::Range<usize>> {
        let mut out = Vec::new();
        let mut at = 0;
        while let Some((p, g)) = self.find(line, at, line.len()) {
            let m = self.set.uniq[g as usize].len();
            out.push(p..p + m);
            at = p + m;
        }
        out
    }
}

/// Above this many distinct patterns (and with every pattern at least
/// [`PREFIX_MIN_LEN`] bytes), the CPU uses [`PrefixTable`] instead of
/// `aho-corasick`. Measured on the build machine, 1M generated lines
/// (docs/bench/build-machine-2026-11-21-multi.md): see DESIGN.md, "Many patterns".
pub(crate) const PREFIX_MIN_PATTERNS: usize = 100;
/// The shortest pattern [`PrefixTable`] takes by default: below 4 hashed
/// bytes the filter passes too many positions of ordinary text.
pub(crate) const PREFIX_MIN_LEN: usize = 4;

/// Which CPU matcher runs a set of literals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CpuMulti {
    /// By the size of the set (aho-corasick for small sets, the hashed
    /// prefix table for large ones).
    #[default]
    Auto,
    /// Always aho-corasick.
    AhoCorasick,
    /// Always the hashed-prefix table.
    PrefixHash,
}

/// Which multi-literal matcher to use: `choice` forces one (benchmarks
/// and tests, [`crate::Tuning::cpu_multi`]); otherwise by size.
pub(crate) fn use_prefix_table(set: &PatternSet, choice: CpuMulti) -> bool {
    match choice {
        CpuMulti::AhoCorasick => false,
        CpuMulti::PrefixHash => true,
        CpuMulti::Auto => set.uniq.len() >= PREFIX_MIN_PATTERNS && set.min_len() >= PREFIX_MIN_LEN,
    }
}

/// Enumerates every (start, group) occurrence, overlapping, in line order.
pub(crate) enum Occurrences {
    /// `aho-corasick` with standard semantics over the distinct patterns.
    Ac(AhoCorasick),
    /// The hashed-prefix table.
    Prefix(PrefixTable),
}

impl Occurrences {
    /// `None` for an empty set or when a pattern is empty.
    pub(crate) fn new(set: PatternSet, choice: CpuMulti) -> Option<Occurrences> {
        if set.uniq.is_empty() || set.min_len() == 0 {
            return None;
        }
        if use_prefix_table(&set, choice) {
            return PrefixTable::new(set).map(Occurrences::Prefix);
        }
        AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .ascii_case_insensitive(set.fold)
            .build(&set.uniq)
            .ok()
            .map(Occurrences::Ac)
    }

    pub(crate) fn for_each(&self, hay: &[u8], s: usize, e: usize, mut f: impl FnMut(usize, u32)) {
        match self {
            Occurrences::Ac(ac) => {
                for m in ac.find_overlapping_iter(aho_corasick::Input::new(&hay[..e]).span(s..e)) {
                    f(m.start(), m.pattern().as_u32());
                }
            }
            Occurrences::Prefix(t) => t.for_each(hay, s, e, f),
        }
    }
}

/// Per-group counts: lines containing the group's pattern, and its
/// non-overlapping occurrences (leftmost, as the pattern searched alone).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct GroupCounts {
    pub(crate) lines: Vec<u64>,
    pub(crate) occurrences: Vec<u64>,
}

impl GroupCounts {
    pub(crate) fn zero(groups: usize) -> GroupCounts {
        GroupCounts {
            lines: vec![0; groups],
            occurrences: vec![0; groups],
        }
    }

    pub(crate) fn add(&mut self, o: &GroupCounts) {
        for (a, b) in self.lines.iter_mut().zip(&o.lines) {
            *a += b;
        }
        for (a, b) in self.occurrences.iter_mut().zip(&o.occurrences) {
            *a += b;
        }
    }
}

/// Counts every group in `hay[s..e]` (`s` a line start, `e` a line start
/// or the end). `lens[g]` is group `g`'s length.
pub(crate) fn count_range(
    occ: &Occurrences,
    lens: &[usize],
    hay: &[u8],
    s: usize,
    e: usize,
) -> GroupCounts {
    let n = lens.len();
    let mut c = GroupCounts::zero(n);
    // Per group: the end of the line it was last seen in, and where its
    // next non-overlapping occurrence may start.
    let mut seen_line = vec![usize::MAX; n];
    let mut next_free = vec![0usize; n];
    let mut line_end = 0usize;
    let mut have_line = false;
    occ.for_each(hay, s, e, |p, g| {
        if !have_line || p >= line_end {
            line_end = memchr::memchr(b'\n', &hay[p..e]).map_or(e, |i| p + i);
            have_line = true;
        }
        let g = g as usize;
        if seen_line[g] != line_end {
            seen_line[g] = line_end;
            c.lines[g] += 1;
            c.occurrences[g] += 1;
            next_free[g] = p + lens[g];
        } else if p >= next_free[g] {
            c.occurrences[g] += 1;
            next_free[g] = p + lens[g];
        }
    });
    c
}

/// Counts every group over one document, on `threads` threads (0 = all).
pub(crate) fn count_doc(
    occ: &Occurrences,
    lens: &[usize],
    hay: &[u8],
    threads: usize,
) -> GroupCounts {
    use rayon::prelude::*;
    let threads = if threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        threads
    };
    let parts = super::chunks(hay, threads);
    let run = |&(s, e): &(usize, usize)| count_range(occ, lens, hay, s, e);
    let results: Vec<GroupCounts> = if parts.len() > 1 {
        match super::pool(threads) {
            Some(p) => p.install(|| parts.par_iter().map(run).collect()),
            None => parts.iter().map(run).collect(),
        }
    } else {
        parts.iter().map(run).collect()
    };
    let mut total = GroupCounts::zero(lens.len());
    for r in &results {
        total.add(r);
    }
    total
}

/// Where each of `nb` hash buckets starts in entries sorted by bucket:
/// `start[b]..start[b + 1]` are bucket `b`'s (a counting sort's offsets; the
/// prefix-hash tables of the CPU engine and of two GPU kernels).
pub(crate) fn bucket_starts(buckets: impl IntoIterator<Item = u32>, nb: usize) -> Vec<u32> {
    let mut start = vec![0u32; nb + 1];
    for b in buckets {
        start[b as usize + 1] += 1;
    }
    for i in 0..nb {
        start[i + 1] += start[i];
    }
    start
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold8_lowercases_ascii_letters_only() {
        let x = u64::from_le_bytes(*b"AZaz@[\xC1\xDA");
        assert_eq!(fold8(x).to_le_bytes(), *b"azaz@[\xC1\xDA");
    }

    #[test]
    fn prefix_table_is_leftmost_first() {
        let pats: Vec<Vec<u8>> = [&b"abcd"[..], b"abcdef", b"bcde", b"abcd", b"ABCDX"]
            .iter()
            .map(|p| p.to_vec())
            .collect();
        let set = PatternSet::new(&pats, true);
        assert_eq!(set.group_of, vec![0, 1, 2, 0, 3]);
        let t = PrefixTable::new(set).unwrap();
        assert_eq!(t.find_iter_line(b"xxABCDEF abcdx"), vec![2..6, 9..13]);
        assert!(!t.is_match(b"abc bcd"));
        let mut all = Vec::new();
        t.for_each(b"abcdef", 0, 6, |p, g| all.push((p, g)));
        assert_eq!(all, vec![(0, 0), (0, 1), (1, 2)]);
    }
}
