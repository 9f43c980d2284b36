//! `list_patterns`: see `pattern_list.wgsl`. The per-pattern counters of
//! the many-literal kernels, listed on the GPU so that a count reads back
//! the patterns that hit, not every counter; its buffers live with the
//! set's uploaded tables (`multi_common.rs`).
use super::{Module, View};

/// The shader module.
pub(crate) const MODULE: Module = Module {
    label: "pattern_list",
    view: View::U32,
    wgsl: include_str!("pattern_list.wgsl"),
    entry_points: &["list_patterns"],
};

/// Words before the first entry (`LIST_HEAD` in the WGSL; word 0 is how
/// many groups were listed).
pub(crate) const HEAD: usize = 4;
/// Words per entry (`LIST_ENTRY`): the group (bit 31: its overlap flag),
/// lines lo, hi, occurrences lo, hi.
pub(crate) const ENTRY: usize = 5;

/// Entries read back by a set's first count: an eighth of its groups (the
/// watchlist bench's sets hit a tenth), at least [`MIN_ENTRIES`].
const FIRST_SHARE: usize = 8;
/// Entries read back at least (20 KiB): below this the readback is one
/// small copy whatever its size.
pub(crate) const MIN_ENTRIES: usize = 1024;

/// The entries a count reads back of a set of `groups` distinct patterns:
/// `forced` when given (tests and the before/after switch; 0 reads the
/// full counters always), else half again the last count's hits (`last`;
/// `None` before the first count: an eighth of the groups), at least
/// [`MIN_ENTRIES`], at most `groups` (then it never overflows).
pub(crate) fn capacity(groups: usize, last: Option<usize>, forced: Option<usize>) -> usize {
    if let Some(f) = forced {
        return f.min(groups);
    }
    let want = match last {
        Some(h) => h.saturating_add(h / 2),
        None => groups / FIRST_SHARE,
    };
    want.max(MIN_ENTRIES).min(groups)
}

/// One listed group's counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Listed {
    /// The group (distinct pattern).
    pub(crate) group: u32,
    /// An occurrence overlapped an earlier one of the same pattern (the
    /// host recounts its occurrences).
    pub(crate) flagged: bool,
    pub(crate) lines: u64,
    pub(crate) occurrences: u64,
}

/// The entries of a list read back with room for `capacity` entries
/// (`words`: its head and those entries), or `None` when more groups
/// were listed than were read back (the caller reads the full counters).
pub(crate) fn entries(words: &[u32], capacity: usize) -> Option<Vec<Listed>> {
    let n = *words.first()? as usize;
    if n > capacity || words.len() < HEAD + ENTRY * n {
        return None;
    }
    let w64 = |lo: u32, hi: u32| u64::from(lo) | (u64::from(hi) << 32);
    Some(
        words[HEAD..HEAD + ENTRY * n]
            .chunks_exact(ENTRY)
            .map(|e| Listed {
                group: e[0] & 0x7FFF_FFFF,
                flagged: e[0] >> 31 != 0,
                lines: w64(e[1], e[2]),
                occurrences: w64(e[3], e[4]),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_follows_the_last_hits_within_bounds() {
        assert_eq!(capacity(100_000, None, None), 12_500);
        assert_eq!(capacity(100_000, Some(10_020), None), 15_030);
        assert_eq!(capacity(100_000, Some(0), None), MIN_ENTRIES);
        assert_eq!(capacity(100_000, Some(90_000), None), 100_000);
        assert_eq!(capacity(10, None, None), 10);
        assert_eq!(capacity(10, Some(7), Some(3)), 3);
        assert_eq!(capacity(10, None, Some(50)), 10);
        assert_eq!(capacity(10, None, Some(0)), 0);
    }

    #[test]
    fn entries_decode_and_overflow_is_none() {
        let mut w = vec![2u32, 0, 0, 0];
        w.extend([7 | 1 << 31, 3, 0, 5, 1]);
        w.extend([9, u32::MAX, 2, 1, 0]);
        let e = entries(&w, 2).unwrap();
        assert_eq!(
            e,
            vec![
                Listed {
                    group: 7,
                    flagged: true,
                    lines: 3,
                    occurrences: 5 | 1 << 32
                },
                Listed {
                    group: 9,
                    flagged: false,
                    lines: u64::from(u32::MAX) | 2 << 32,
                    occurrences: 1
                }
            ]
        );
        // More listed than read back: the full counters.
        assert_eq!(entries(&w, 1), None);
        assert_eq!(entries(&w[..8], 2), None);
        assert_eq!(entries(&[0, 0, 0, 0], 0), Some(Vec::new()));
        assert_eq!(entries(&[], 0), None);
    }
}
