//! A few literals by a rare three-byte window of each ([`Windows`]).

/// A few literals found by one three-byte window of each, the window seen
/// least in the document's sample, searched together by Teddy
/// (aho-corasick's packed searcher) and each hit compared with the
/// literals holding that window.
///
/// aho-corasick gives Teddy a fingerprint of the literals' first
/// `min(4, shortest)` bytes. On the build machine's Xeon (2026-11-26, one
/// thread, 194 MB in memory) a fingerprint of 4 ran at 2.1 GB/s
/// (`ERROR_503`, `NullPointerException`, `queue depth`: 72-92 ms; 33 ms
/// by the windows `R_5`, `Nul`, `e d`, 7 hits in the 64 KiB sample), and
/// prefixes that are common cost a verification each (three 10-byte
/// strings cut at random from the log: 150 ms, 37 by their windows).
/// Windows of 2 bytes were as fast when rare (30 ms) but hit 5-10x more
/// often on other sets (`rex` and its case variants, the 3-byte set of
/// `-i nullpointerexception`: 59 ms, 33 with 3 bytes).
pub(super) struct Windows<'n> {
    literals: &'n [Vec<u8>],
    teddy: aho_corasick::packed::Searcher,
    /// Per window (the searcher's pattern id): each literal that holds it,
    /// and where.
    holders: Vec<Vec<(usize, usize)>>,
}

/// The bytes of a window.
const WINDOW: usize = 3;
/// The most literals searched by their windows. Past a few, their
/// windows are seldom all rare, and Teddy's 8 buckets (16 fat) hold more
/// than one window each.
const WINDOW_MAX_SET: usize = 16;
/// The windows are taken when their hits in the sample are under one in
/// this many sampled bytes: each hit costs a compare and a restart.
/// Ten-byte strings cut at random from the 194 MB log (build machine, one
/// thread, in memory, 2026-11-26), windows against aho-corasick: 3
/// strings, 13 hits, 37 ms against 150; 4, 43 hits, 40 against 52; 8, 61
/// hits, 42 against 54; 12 and 16, 334 and 364 hits, 51-52 against 55-59
/// (not taken).
const WINDOW_SHARE: usize = 256;

/// A sampled window's slot in [`Windows::plan`]'s count table (65,536
/// slots: a rare window shares its count with few others).
fn window_slot(w: &[u8]) -> usize {
    let v = u32::from(w[0]) << 16 | u32::from(w[1]) << 8 | u32::from(w[2]);
    (v.wrapping_mul(0x9E37_79B1) >> 16) as usize
}

impl<'n> Windows<'n> {
    /// The windows of `literals` in `sample`, or `None` when some literal
    /// is shorter than a window, holds a line end (a window hit could then
    /// stand for a literal starting lines before it), or the windows are
    /// not rare enough.
    pub(super) fn plan(literals: &'n [Vec<u8>], sample: &[u8]) -> Option<Windows<'n>> {
        if literals.len() < 2
            || literals.len() > WINDOW_MAX_SET
            || literals
                .iter()
                .any(|l| l.len() < WINDOW || l.contains(&b'\n'))
        {
            return None;
        }
        let mut seen = vec![0u16; 1 << 16];
        for w in sample.windows(WINDOW) {
            let c = &mut seen[window_slot(w)];
            *c = c.saturating_add(1);
        }
        let offsets: Vec<usize> = literals
            .iter()
            .map(|lit| {
                (0..=lit.len() - WINDOW)
                    .min_by_key(|&i| (seen[window_slot(&lit[i..])], i))
                    .expect("a literal longer than a window")
            })
            .collect();
        let w = Windows::at(literals, &offsets)?;
        let hits: usize = w
            .teddy_windows()
            .map(|x| usize::from(seen[window_slot(&x)]))
            .sum();
        (hits * WINDOW_SHARE <= sample.len()).then_some(w)
    }

    /// The windows `literals[k][offsets[k]..offsets[k] + WINDOW]`.
    pub(super) fn at(literals: &'n [Vec<u8>], offsets: &[usize]) -> Option<Windows<'n>> {
        let mut windows: Vec<[u8; WINDOW]> = Vec::new();
        let mut holders: Vec<Vec<(usize, usize)>> = Vec::new();
        for (k, (lit, &off)) in literals.iter().zip(offsets).enumerate() {
            let w: [u8; WINDOW] = lit[off..off + WINDOW].try_into().expect("a window's bytes");
            match windows.iter().position(|x| *x == w) {
                Some(i) => holders[i].push((k, off)),
                None => {
                    windows.push(w);
                    holders.push(vec![(k, off)]);
                }
            }
        }
        let teddy = aho_corasick::packed::Config::new()
            .builder()
            .extend(&windows)
            .build()?;
        Some(Windows {
            literals,
            teddy,
            holders,
        })
    }

    /// Each distinct window, by the searcher's pattern id.
    pub(super) fn teddy_windows(&self) -> impl Iterator<Item = [u8; WINDOW]> + '_ {
        self.holders.iter().map(|h| {
            let (k, off) = h[0];
            self.literals[k][off..off + WINDOW]
                .try_into()
                .expect("a window's bytes")
        })
    }

    /// The start of the first literal occurrence found in `hay[at..end]`.
    /// A later literal may start before it, but only on its line: no
    /// literal holds a line end, and both cover the window's hit.
    #[inline]
    pub(super) fn find(&self, hay: &[u8], at: usize, end: usize) -> Option<usize> {
        let mut from = at;
        while from < end {
            let m = self
                .teddy
                .find_in(&hay[..end], aho_corasick::Span::from(from..end))?;
            let hit = m.start();
            for &(k, off) in &self.holders[m.pattern().as_usize()] {
                let lit = &self.literals[k];
                if hit >= at + off
                    && hit - off + lit.len() <= end
                    && hay[hit - off..].starts_with(lit)
                {
                    return Some(hit - off);
                }
            }
            from = hit + 1;
        }
        None
    }
}
