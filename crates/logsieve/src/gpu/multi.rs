//! Which kernel runs a query of many literals at once (issue 5): `trie`,
//! `ac`, `prefix-hash` or `bloom`, and what they cannot run. Their tables,
//! pipelines and driver are in `kernels/multi_common.rs` and each kernel's
//! own file; the corpus runs them in `pattern_set.rs`.

use crate::query::{CaseMode, Query};

use super::GpuKernel;

/// The GPU kernels for many literals (`--gpu-kernel trie|ac|prefix-hash`).
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
    /// on the H100 (194 MB, 1M lines, docs/bench/multi-h100-2026-11-21.md)
    /// `ac` took 0.9 / 5.6 / 7.1 / 8.9 ms kernel time at 10 / 100 / 1k /
    /// 10k patterns, `trie` 1.2-22 ms and `prefix-hash` 1.1-96 ms, so
    /// `prefix-hash`, the fastest on lavapipe (a CPU, where loads are
    /// cheap), was the slowest there. `bloom` reads the corpus as 16-byte
    /// loads and does its per-position work in registers and workgroup
    /// memory; on the same H100 (2026-11-22, docs/bench/multi-h100-2026-11-22.md)
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
        match self {
            MultiKernel::Trie => "trie",
            MultiKernel::Ac => "ac",
            MultiKernel::PrefixHash => "prefix-hash",
            MultiKernel::Bloom => "bloom",
        }
    }

    /// The kernel with this name.
    pub fn from_name(name: &str) -> Option<MultiKernel> {
        MultiKernel::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The multi-literal kernel that runs `q` for a `--gpu-kernel`
    /// choice: the named one, or the default for the single-literal
    /// kernels and none, then [`MultiKernel::for_query`].
    pub fn choose(k: Option<GpuKernel>, q: &Query) -> MultiKernel {
        k.and_then(GpuKernel::multi)
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
    q.literals()?.iter().map(|p| p.len()).min()
}

impl From<MultiKernel> for GpuKernel {
    fn from(k: MultiKernel) -> GpuKernel {
        match k {
            MultiKernel::Trie => GpuKernel::Trie,
            MultiKernel::Ac => GpuKernel::Ac,
            MultiKernel::PrefixHash => GpuKernel::PrefixHash,
            MultiKernel::Bloom => GpuKernel::Bloom,
        }
    }
}

/// Why the multi-literal kernels cannot run `q`, or `None`.
pub(crate) fn unsupported(q: &Query) -> Option<String> {
    let Some(lits) = q.literals() else {
        return Some(format!(
            "the GPU runs literal queries only (this one is a {:?} query)",
            q.kind()
        ));
    };
    if lits.iter().any(|l| l.is_empty()) {
        return Some("the empty pattern matches every line (no GPU needed)".to_string());
    }
    if q.case() == CaseMode::Unicode {
        return Some(
            "Unicode case folding (-i on a non-ASCII pattern) runs on the CPU".to_string(),
        );
    }
    if q.word() {
        return Some("-w (word boundaries) runs on the CPU".to_string());
    }
    if q.whole_line() {
        return Some("-x (whole lines) runs on the CPU".to_string());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::{QueryBuilder, Syntax};

    fn q(p: &[&[u8]], ci: bool) -> Query {
        QueryBuilder::new()
            .syntax(Syntax::Fixed)
            .case_insensitive(ci)
            .build(p)
            .unwrap()
    }

    #[test]
    fn planner_sends_many_literals_to_the_multi_kernel() {
        use crate::planner::{self, Calibration, Choice, DeviceClass, PlanInput, SampleStats};
        assert_eq!(MultiKernel::DEFAULT.name(), planner::MULTI_KERNEL);
        let long = vec![b'x'; 70];
        let query = q(&[b"10.0.0.1", &long], false);
        let cal = Calibration::defaults(DeviceClass::Discrete);
        let plan = |query: &Query| {
            planner::plan(&PlanInput {
                query,
                want: crate::Want::Count,
                bytes: 1 << 30,
                lines: Some((1 << 30) / 200),
                threads: 1,
                gpu: Some((DeviceClass::Discrete, "test gpu".into())),
                resident: true,
                gpu_unsupported: crate::gpu::unsupported_reason(query),
                sample: SampleStats::default(),
                calibration: &cal,
            })
        };
        let d = plan(&query);
        assert!(d.inhibitors.is_empty(), "{:?}", d.inhibitors);
        assert_eq!(d.choice, Choice::Gpu("bloom".into()));
        // A pattern shorter than 4 bytes: ac, and --explain says why.
        let short = q(&[b"10.0.0.1", b"ab"], false);
        let d = plan(&short);
        assert_eq!(d.choice, Choice::Gpu("ac".into()));
        assert!(
            d.explain().contains("bloom needs >= 4-byte"),
            "{}",
            d.explain()
        );
        assert_eq!(MultiKernel::choose(None, &short), MultiKernel::Ac);
        assert_eq!(MultiKernel::choose(None, &query), MultiKernel::Bloom);
        assert_eq!(planner::BLOOM_MIN_PATTERN, MultiKernel::BLOOM_MIN_LEN);
        assert_eq!(
            planner::MULTI_KERNEL_SHORT,
            MultiKernel::Bloom.for_query(&short).name()
        );
        // One pattern longer than 64 bytes is still a CPU query.
        let one = q(&[&long], false);
        assert!(!planner::inhibitors(&one, crate::Want::Count, &SampleStats::default()).is_empty());
    }

    #[test]
    fn names_round_trip() {
        for k in MultiKernel::ALL {
            assert_eq!(MultiKernel::from_name(k.name()), Some(k));
            assert_eq!(
                GpuKernel::from_name(k.name()).and_then(GpuKernel::multi),
                Some(k)
            );
        }
    }
}
