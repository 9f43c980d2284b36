//! What runs on the GPU, typed: [`Kernel`] names every GPU kernel, and a
//! plan carries one from the routing point to the GPU driver unchanged.
//!
//! Names are for the command line and the calibration file only
//! ([`Kernel::name`], [`Kernel::from_name`]); nothing inside the library
//! routes on a string. The type exists with or without the `gpu` feature,
//! so the planner and the routing point compile (and say "no GPU") without
//! the backend.

use crate::query::Query;

/// The GPU kernels (`--gpu-kernel NAME`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kernel {
    /// One thread per line scans its line (the naive baseline).
    BruteLine,
    /// One thread per byte; atomic append of match positions.
    BruteByte,
    /// Per-line histogram prefilter, then one thread per byte.
    TwoPhase,
    /// 16-byte coalesced loads, SWAR tests on two rare bytes (the fastest).
    Scan,
    /// A per-line presence mask built at upload as the prefilter.
    Signature,
    /// Many literals: a walk of the pattern trie per start position.
    Trie,
    /// Many literals: failure-free Aho-Corasick, a dense goto table.
    Ac,
    /// Many literals: a hash of each position's first bytes, then verify.
    PrefixHash,
    /// Many literals: 16-byte streaming loads, a bit filter in workgroup
    /// memory, then a hash table and verification (patterns of at least
    /// [`MultiKernel::BLOOM_MIN_LEN`] bytes; shorter sets run
    /// [`Kernel::Ac`]).
    Bloom,
    /// The stats pipeline: time window, search bits, counts by field and
    /// time bucket in one pass over the resident columns.
    Stats,
    /// Tier 2 of regex: the regex's position automaton run bit-parallel,
    /// one thread per line (`query::glushkov`, `support::shift_and_support`).
    ShiftAnd,
    /// `--fuzzy K`: shift-and with K errors (Wu–Manber bitap), the
    /// patterns packed in a chain of 32-bit words, one thread per line
    /// (`query::bitap`, `support::bitap_support`).
    Bitap,
}

impl Kernel {
    /// The single-literal kernels, in the order benchmarks list them.
    pub const ALL: [Kernel; 5] = [
        Kernel::BruteLine,
        Kernel::BruteByte,
        Kernel::TwoPhase,
        Kernel::Scan,
        Kernel::Signature,
    ];

    /// The kernel's name on the command line and in the calibration file.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::BruteLine => "brute-line",
            Kernel::BruteByte => "brute-byte",
            Kernel::TwoPhase => "two-phase",
            Kernel::Scan => "scan",
            Kernel::Signature => "signature",
            Kernel::Trie => "trie",
            Kernel::Ac => "ac",
            Kernel::PrefixHash => "prefix-hash",
            Kernel::Bloom => "bloom",
            Kernel::Stats => "stats",
            Kernel::ShiftAnd => "shift-and",
            Kernel::Bitap => "bitap",
        }
    }

    /// The search kernel with this name (single- or multi-literal).
    pub fn from_name(name: &str) -> Option<Kernel> {
        Kernel::ALL
            .into_iter()
            .chain(MultiKernel::ALL.map(Kernel::from))
            .chain([Kernel::ShiftAnd, Kernel::Bitap])
            .find(|k| k.name() == name)
    }

    /// Every search kernel's name, for an error message.
    pub fn names() -> Vec<&'static str> {
        Kernel::ALL
            .into_iter()
            .chain(MultiKernel::ALL.map(Kernel::from))
            .chain([Kernel::ShiftAnd, Kernel::Bitap])
            .map(Kernel::name)
            .collect()
    }

    /// The multi-literal kernel this is, if it is one.
    pub fn multi(self) -> Option<MultiKernel> {
        match self {
            Kernel::Trie => Some(MultiKernel::Trie),
            Kernel::Ac => Some(MultiKernel::Ac),
            Kernel::PrefixHash => Some(MultiKernel::PrefixHash),
            Kernel::Bloom => Some(MultiKernel::Bloom),
            _ => None,
        }
    }

    /// The kernel that runs `q` when `k` is asked for: the single-literal
    /// kernels take one pattern, so a query of several literals (or a
    /// multi-literal kernel by name) goes to a multi-literal kernel, and
    /// `bloom` on a set with a pattern shorter than 4 bytes runs `ac`
    /// ([`MultiKernel::for_query`]).
    pub fn effective(k: Option<Kernel>, q: &Query) -> Kernel {
        let many = q.literals().is_some_and(|l| l.len() > 1);
        match k {
            Some(k) => match k.multi() {
                Some(mk) => mk.for_query(q).into(),
                None if many => MultiKernel::choose(Some(k), q).into(),
                None => k,
            },
            None if many => MultiKernel::choose(None, q).into(),
            None => Kernel::Scan,
        }
    }
}

impl std::fmt::Display for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The GPU kernels for many literals (`--gpu-kernel trie|ac|prefix-hash|bloom`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MultiKernel {
    /// A walk of the pattern trie from every start position.
    Trie,
    /// Failure-free Aho-Corasick (PFAC): a dense goto table, one walk per
    /// start byte.
    Ac,
    /// A hash of the first bytes at every position, then verification.
    PrefixHash,
    /// 16-byte streaming loads, every position of a vec4 tested from
    /// registers against a two-probe bit filter in workgroup memory, then
    /// a hash table of L-byte keys and verification. Patterns of at least
    /// [`MultiKernel::BLOOM_MIN_LEN`] bytes; shorter sets run `ac`.
    Bloom,
}

impl MultiKernel {
    /// Every multi-literal kernel, in the order benchmarks list them.
    pub const ALL: [MultiKernel; 4] = [
        MultiKernel::Trie,
        MultiKernel::Ac,
        MultiKernel::PrefixHash,
        MultiKernel::Bloom,
    ];

    /// Used when no kernel is named (then [`MultiKernel::for_query`]: `ac`
    /// for sets with a pattern shorter than 4 bytes). The one-thread-per-
    /// byte kernels are bound by their per-position loads on a real GPU:
    /// on the H100 (194 MB, 1M lines, docs/bench/h100-2026-11-21-multi.md)
    /// `ac` took 0.9 / 5.6 / 7.1 / 8.9 ms kernel time at 10 / 100 / 1k /
    /// 10k patterns, `trie` 1.2-22 ms and `prefix-hash` 1.1-96 ms, so
    /// `prefix-hash`, the fastest on lavapipe (a CPU, where loads are
    /// cheap), was the slowest there. `bloom` reads the corpus as 16-byte
    /// loads and does its per-position work in registers and workgroup
    /// memory; on the same H100 (2026-11-22, docs/bench/h100-2026-11-22-multi.md)
    /// it took 0.40 / 0.44 / 0.77 / 0.93 / 8.0 ms at 10 / 100 / 1k / 10k /
    /// 100k patterns, where `ac` took 0.92 / 1.10 / 1.38 / 1.81 / 12.4.
    /// `ac` is the fallback for short patterns, the fastest of the others
    /// on the H100.
    pub const DEFAULT: MultiKernel = MultiKernel::Bloom;

    /// The shortest pattern `bloom` takes: its filter hashes 4-byte
    /// windows.
    pub const BLOOM_MIN_LEN: usize = 4;

    /// The kernel's name on the command line.
    pub fn name(self) -> &'static str {
        Kernel::from(self).name()
    }

    /// The kernel with this name.
    pub fn from_name(name: &str) -> Option<MultiKernel> {
        MultiKernel::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The multi-literal kernel that runs `q` for a `--gpu-kernel`
    /// choice: the named one, or the default for the single-literal
    /// kernels and none, then [`MultiKernel::for_query`].
    pub fn choose(k: Option<Kernel>, q: &Query) -> MultiKernel {
        k.and_then(Kernel::multi)
            .unwrap_or(MultiKernel::DEFAULT)
            .for_query(q)
    }

    /// The kernel that runs `q` when this one is asked for: itself, but
    /// `ac` for `bloom` when a pattern is shorter than
    /// [`MultiKernel::BLOOM_MIN_LEN`] bytes (a 4-byte window cannot hold
    /// it). The results are the same; [`MultiKernel::fallback_note`] says
    /// why.
    pub fn for_query(self, q: &Query) -> MultiKernel {
        match (self, shortest(q)) {
            (MultiKernel::Bloom, Some(n)) if n < Self::BLOOM_MIN_LEN => MultiKernel::Ac,
            _ => self,
        }
    }

    /// Why `q` runs another kernel than this one, or `None` (for
    /// `--explain`).
    pub fn fallback_note(self, q: &Query) -> Option<String> {
        let k = self.for_query(q);
        (k != self).then(|| {
            format!(
                "{} needs patterns of at least {} bytes (the shortest has {}): {} ran instead",
                self.name(),
                Self::BLOOM_MIN_LEN,
                shortest(q).unwrap_or(0),
                k.name()
            )
        })
    }
}

/// The length of `q`'s shortest literal (folding keeps lengths).
fn shortest(q: &Query) -> Option<usize> {
    q.literal_lens().map(|(min, _)| min)
}

impl From<MultiKernel> for Kernel {
    fn from(k: MultiKernel) -> Kernel {
        match k {
            MultiKernel::Trie => Kernel::Trie,
            MultiKernel::Ac => Kernel::Ac,
            MultiKernel::PrefixHash => Kernel::PrefixHash,
            MultiKernel::Bloom => Kernel::Bloom,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_round_trip() {
        for k in Kernel::ALL
            .into_iter()
            .chain(MultiKernel::ALL.map(Kernel::from))
            .chain([Kernel::ShiftAnd, Kernel::Bitap])
        {
            assert_eq!(Kernel::from_name(k.name()), Some(k));
        }
        for k in MultiKernel::ALL {
            assert_eq!(MultiKernel::from_name(k.name()), Some(k));
        }
        assert_eq!(Kernel::from_name("nope"), None);
        // The stats kernel is not a search kernel.
        assert_eq!(Kernel::from_name("stats"), None);
        assert_eq!(Kernel::names().len(), 11);
    }
}
