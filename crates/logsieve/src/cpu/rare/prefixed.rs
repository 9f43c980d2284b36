//! Many literals that share a prefix, by the prefix's pair and a key of
//! the bytes after it ([`Prefixed`]).

use super::*;

/// Many literals that share a prefix (request ids pasted as `req=...`, an
/// IOC list of `user=...`), found by the prefix's bytes with the pair scan,
/// then by the bytes after the prefix: up to 8 of them as a key, looked up
/// in a 65,536-bit table of the literals' keys (a false hit is one load
/// and a bit test), and a key that is set compared with the literals that
/// hold it. aho-corasick with its rare-byte prefilter stops at each `q` of
/// `req=` (1M lines in the 194 MB log) and runs its automaton from there:
/// 100 ids took 41 ms in memory, 29 this way (build machine, one thread,
/// 2026-11-26).
pub(super) struct Prefixed<'n> {
    literals: &'n [Vec<u8>],
    /// The common prefix's length.
    prefix: usize,
    /// The key's length: bytes after the prefix, 1 to 8.
    key_len: usize,
    /// The prefix's pair and third byte (`scan::pair_scan_avx2`).
    bytes: [(usize, u8, u8); 3],
    /// One bit per key hash ([`Prefixed::slot`]).
    table: Vec<u64>,
    /// The literals (indices) holding each key.
    by_key: std::collections::HashMap<u64, Vec<usize>>,
}

/// The sampled pair hits of a prefix are under one in this many bytes: a
/// hit costs a key lookup in the scan's block (~4 ns), not a restart.
/// `req=`'s pair (one a line, 1 in ~190 bytes) passes.
const PREFIX_SHARE: usize = 64;

impl<'n> Prefixed<'n> {
    /// The literals' common prefix and key lengths, when they share a
    /// prefix of 2 bytes or more (no line end in it) and each goes on
    /// past it.
    pub(super) fn shape(literals: &[Vec<u8>]) -> Option<(usize, usize)> {
        let first = literals.first()?;
        let prefix = literals.iter().fold(first.len(), |n, l| {
            n.min(l.iter().zip(first).take_while(|(a, b)| a == b).count())
        });
        let shortest = literals.iter().map(Vec::len).min()?;
        let ok = literals.len() >= 2
            && prefix >= 2
            && shortest > prefix
            && !first[..prefix].contains(&b'\n');
        ok.then(|| (prefix, (shortest - prefix).min(8)))
    }

    /// The finder when the prefix's least seen pair in the sample is under
    /// one in [`PREFIX_SHARE`] bytes.
    pub(super) fn plan(literals: &'n [Vec<u8>], sample: &[u8]) -> Option<Prefixed<'n>> {
        let (prefix, key_len) = Prefixed::shape(literals)?;
        let p = &literals[0][..prefix];
        let mut best = (usize::MAX, 0, 1);
        for i in 0..prefix {
            for j in i + 1..prefix {
                if p[i] != p[j] {
                    let h = pair_hits(sample, p, i, j, false);
                    if h < best.0 {
                        best = (h, i, j);
                    }
                }
            }
        }
        let (hits, i1, i2) = best;
        let scored = sample.len().min(PAIR_SAMPLE);
        if hits == usize::MAX || hits * PREFIX_SHARE > scored {
            return None;
        }
        Some(Prefixed::with_pair(literals, prefix, key_len, i1, i2))
    }

    /// The finder by the prefix's bytes `i1` and `i2` (and a third).
    pub(super) fn with_pair(
        literals: &'n [Vec<u8>],
        prefix: usize,
        key_len: usize,
        i1: usize,
        i2: usize,
    ) -> Prefixed<'n> {
        let p = &literals[0][..prefix];
        let i3 = (0..prefix).find(|&i| i != i1 && i != i2).unwrap_or(i1);
        let mut table = vec![0u64; 1024];
        let mut by_key: std::collections::HashMap<u64, Vec<usize>> = Default::default();
        for (k, lit) in literals.iter().enumerate() {
            let key = key_of(&lit[prefix..prefix + key_len]);
            let s = Prefixed::slot(key);
            table[s >> 6] |= 1 << (s & 63);
            by_key.entry(key).or_default().push(k);
        }
        Prefixed {
            literals,
            prefix,
            key_len,
            bytes: [(i1, p[i1], 0), (i2, p[i2], 0), (i3, p[i3], 0)],
            table,
            by_key,
        }
    }

    /// The key's bytes in a little-endian load of 8.
    #[inline]
    pub(super) fn mask(&self) -> u64 {
        u64::MAX >> (8 * (8 - self.key_len))
    }

    /// A key's bit in the table.
    #[inline]
    pub(super) fn slot(key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 48) as usize
    }

    /// A literal starting at `c` (its prefix's pair and third byte seen
    /// there): the rest of the prefix, the key's bit, then the literals
    /// with that key.
    #[inline]
    pub(super) fn at(&self, hay: &[u8], c: usize) -> bool {
        let k = c + self.prefix;
        let key = match hay.get(k..k + 8) {
            // One load, the bytes past the key masked off.
            Some(b) => u64::from_le_bytes(b.try_into().expect("8 bytes")) & self.mask(),
            None => match hay.get(k..k + self.key_len) {
                Some(b) => key_of(b),
                None => return false,
            },
        };
        let s = Prefixed::slot(key);
        if self.table[s >> 6] >> (s & 63) & 1 == 0 {
            return false;
        }
        let head = &self.literals[0][..self.prefix];
        hay[c..].starts_with(head)
            && self
                .by_key
                .get(&key)
                .is_some_and(|ks| ks.iter().any(|&i| hay[c..].starts_with(&self.literals[i])))
    }

    /// The first literal occurrence in `hay[at..end]`.
    #[inline]
    pub(super) fn find(&self, hay: &[u8], at: usize, end: usize) -> Option<usize> {
        let hay = &hay[..end];
        let n = self.prefix + self.key_len;
        pair_find_by::<false>(hay, at, n, self.bytes, |c| self.at(hay, c))
    }
}
