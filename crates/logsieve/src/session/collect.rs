//! One collector per answer kind: the parts of one request (each
//! device's shard, the host tier, the CPU's pieces) add into one answer
//! through [`Collect`], and nothing else merges them. Matching lines
//! ([`RawHits`]: counts and line ids, then [`RawHits::finish`] applies
//! `-v` and `-m` once, in corpus order), per-pattern counts
//! ([`PatternTally`]) and stats ([`Stats`]: groups by key, histogram
//! buckets).

use crate::gpu::readback::RawHits;
use crate::stats::Stats;

/// An answer over some lines that adds the same request's answer over
/// other, disjoint lines.
pub(crate) trait Collect {
    /// Adds `part`, the answer over lines `self` has not seen.
    fn collect(self, part: Self) -> Self;
}

impl Collect for RawHits {
    fn collect(mut self, part: RawHits) -> RawHits {
        self.add(part);
        self
    }
}

impl Collect for Stats {
    fn collect(self, part: Stats) -> Stats {
        self.merge(part)
    }
}

/// Per-pattern counts over some lines: lines with a match and
/// occurrences, one entry per pattern of the query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PatternTally {
    pub(crate) lines: Vec<u64>,
    pub(crate) occurrences: Vec<u64>,
}

impl PatternTally {
    /// No match yet for `n` patterns.
    pub(crate) fn zero(n: usize) -> PatternTally {
        PatternTally {
            lines: vec![0; n],
            occurrences: vec![0; n],
        }
    }
}

impl From<(Vec<u64>, Vec<u64>)> for PatternTally {
    fn from((lines, occurrences): (Vec<u64>, Vec<u64>)) -> PatternTally {
        PatternTally { lines, occurrences }
    }
}

impl Collect for PatternTally {
    fn collect(mut self, part: PatternTally) -> PatternTally {
        let add = |a: &mut Vec<u64>, b: Vec<u64>| {
            if a.len() < b.len() {
                a.resize(b.len(), 0);
            }
            a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
        };
        add(&mut self.lines, part.lines);
        add(&mut self.occurrences, part.occurrences);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tallies_add_per_pattern() {
        let a = PatternTally::from((vec![1, 0, 2], vec![3, 0, 2]))
            .collect(PatternTally::from((vec![0, 4, 1], vec![0, 5, 1])))
            .collect(PatternTally::zero(3));
        assert_eq!(a, PatternTally::from((vec![1, 4, 3], vec![3, 5, 3])));
    }

    #[test]
    fn hits_add_counts_and_line_ids() {
        let mut a = RawHits::empty(2, true);
        a.matched[0] = 1;
        a.lines.as_mut().unwrap()[0].push(7);
        let mut b = RawHits::empty(2, true);
        b.matched = vec![2, 1];
        b.lines = Some(vec![vec![1, 3], vec![0]]);
        let a = a.collect(b);
        assert_eq!(a.matched, vec![3, 1]);
        assert_eq!(a.lines, Some(vec![vec![7, 1, 3], vec![0]]));
    }
}
