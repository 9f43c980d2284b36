//! Watchlists: a named set of literal patterns (an IOC list) compiled once
//! and kept in the [`Session`](crate::Session), then counted or searched
//! again and again.
//!
//! Defining one builds what a per-pattern count needs, once: the
//! [`Query`] (the CPU matcher), the CPU's one-pass counter (Aho-Corasick,
//! or the hashed-prefix table for large sets) and, on each GPU the session
//! holds, the many-literal kernel's tables, uploaded and kept
//! ([`crate::gpu::PreparedTables`]). A count of a watchlist
//! ([`crate::Request::Watchlist`]) is routed by the one routing point as a
//! per-pattern count of its query and runs with what was built: no
//! pattern is parsed, hashed or uploaded per query (rebuilding a 10k set's
//! tables per query cost 7.9 ms of an 8.9 ms count on the H100).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::options::CpuMulti;
use crate::pattern_counts::CpuCounter;
use crate::query::{Query, QueryBuilder, Syntax};

/// Patterns a watchlist holds at most.
pub const MAX_PATTERNS: usize = 100_000;

/// Bytes a watchlist pattern holds at most.
pub const MAX_PATTERN_BYTES: usize = 1024;

/// Characters a watchlist's name holds at most.
pub const MAX_NAME: usize = 64;

/// How a watchlist's patterns are matched.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WatchlistOptions {
    /// `-i` (ASCII case folding for ASCII patterns).
    pub ignore_case: bool,
    /// The CPU's many-literal matcher (`auto`: by the set's size).
    pub cpu_multi: CpuMulti,
}

/// A named literal set, compiled once (see the module's documentation).
pub struct Watchlist {
    name: String,
    opts: WatchlistOptions,
    query: Arc<Query>,
    patterns: Arc<[Vec<u8>]>,
    distinct: usize,
    cpu: CpuCounter,
    #[cfg(feature = "gpu")]
    gpu: crate::gpu::PreparedTables,
    build: Duration,
}

impl std::fmt::Debug for Watchlist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watchlist")
            .field("name", &self.name)
            .field("patterns", &self.patterns.len())
            .field("ignore_case", &self.opts.ignore_case)
            .finish()
    }
}

/// A watchlist name: 1 to [`MAX_NAME`] characters from `A-Z a-z 0-9 . _ -`
/// (it is a URL path segment).
pub fn check_name(name: &str) -> Result<(), Error> {
    if name.is_empty() || name.len() > MAX_NAME {
        return Err(Error::query(format!(
            "a watchlist name has 1 to {MAX_NAME} characters (got {})",
            name.len()
        )));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(Error::query(format!(
            "watchlist name {name:?}: {c:?} is not allowed (use A-Z a-z 0-9 . _ -)"
        )));
    }
    Ok(())
}

impl Watchlist {
    /// Compiles `patterns` (literals) under `name`. Errors (never panics)
    /// on a bad name, an empty list, more than [`MAX_PATTERNS`] patterns, an
    /// empty pattern, one longer than [`MAX_PATTERN_BYTES`], or one holding
    /// a line break (no line can hold it).
    pub fn new<P: AsRef<[u8]>>(
        name: &str,
        patterns: &[P],
        opts: WatchlistOptions,
    ) -> Result<Watchlist, Error> {
        let t = Instant::now();
        check_name(name)?;
        if patterns.is_empty() {
            return Err(Error::query("a watchlist needs at least one pattern"));
        }
        if patterns.len() > MAX_PATTERNS {
            return Err(Error::query(format!(
                "a watchlist holds at most {MAX_PATTERNS} patterns (got {})",
                patterns.len()
            )));
        }
        for (i, p) in patterns.iter().enumerate() {
            let p = p.as_ref();
            if p.is_empty() {
                return Err(Error::query(format!(
                    "pattern {i} is empty (it would match every line)"
                )));
            }
            if p.len() > MAX_PATTERN_BYTES {
                return Err(Error::query(format!(
                    "pattern {i} has {} bytes, more than {MAX_PATTERN_BYTES}",
                    p.len()
                )));
            }
            if p.contains(&b'\n') || p.contains(&b'\r') {
                return Err(Error::query(format!(
                    "pattern {i} holds a line break (no line can contain it)"
                )));
            }
        }
        let query = QueryBuilder::new()
            .syntax(Syntax::Fixed)
            .case_insensitive(opts.ignore_case)
            .cpu_multi(opts.cpu_multi)
            .build(patterns)?;
        let cpu = CpuCounter::new(&query).ok_or_else(|| {
            // Unicode case folding (-i with a non-ASCII pattern) is not a
            // literal set: it would be counted pattern by pattern.
            Error::query(
                "-i with a non-ASCII pattern: a watchlist is a literal set \
                 (ASCII case folding only)",
            )
        })?;
        let patterns: Arc<[Vec<u8>]> = query.patterns().into();
        let distinct = {
            let mut d: Vec<Vec<u8>> = patterns
                .iter()
                .map(|p| match opts.ignore_case {
                    true => p.to_ascii_lowercase(),
                    false => p.clone(),
                })
                .collect();
            d.sort_unstable();
            d.dedup();
            d.len()
        };
        Ok(Watchlist {
            name: name.to_string(),
            opts,
            query: Arc::new(query),
            patterns,
            distinct,
            cpu,
            #[cfg(feature = "gpu")]
            gpu: Default::default(),
            build: t.elapsed(),
        })
    }

    /// The indices (into [`Watchlist::patterns`], ascending) of the
    /// patterns `line` holds: the CPU automaton built at definition, on
    /// one line (SQL's `matches(line, 'name')`).
    pub fn patterns_in(&self, line: &[u8]) -> Vec<u32> {
        self.cpu.patterns_in(line)
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its options.
    pub fn options(&self) -> WatchlistOptions {
        self.opts
    }

    /// The query of its patterns (a search of the watchlist runs it).
    pub fn query(&self) -> &Query {
        &self.query
    }

    /// The same query, shared (a front end that keeps it past the call).
    pub fn shared_query(&self) -> Arc<Query> {
        self.query.clone()
    }

    /// Its patterns, in order.
    pub fn patterns(&self) -> &Arc<[Vec<u8>]> {
        &self.patterns
    }

    /// Its distinct patterns (after case folding under `-i`).
    pub fn distinct(&self) -> usize {
        self.distinct
    }

    /// The host time the compilation took (the GPU tables not included).
    pub fn build_time(&self) -> Duration {
        self.build
    }

    /// GPU tables uploaded and held for it (one per device).
    pub fn gpu_tables_uploaded(&self) -> usize {
        #[cfg(feature = "gpu")]
        {
            self.gpu.uploaded()
        }
        #[cfg(not(feature = "gpu"))]
        {
            0
        }
    }

    pub(crate) fn cpu(&self) -> &CpuCounter {
        &self.cpu
    }

    #[cfg(feature = "gpu")]
    pub(crate) fn gpu(&self) -> &crate::gpu::PreparedTables {
        &self.gpu
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_lists_are_checked() {
        let ok = WatchlistOptions::default();
        assert!(Watchlist::new("iocs-2026.v1_a", &["abcd"], ok).is_ok());
        for bad in ["", "a/b", "a b", "é", &"x".repeat(MAX_NAME + 1)] {
            let e = Watchlist::new(bad, &["abcd"], ok).unwrap_err();
            assert!(e.to_string().contains("name"), "{bad:?}: {e}");
        }
        let none: [&str; 0] = [];
        assert!(Watchlist::new("w", &none, ok)
            .unwrap_err()
            .to_string()
            .contains("at least one"));
        let too_many: Vec<String> = (0..=MAX_PATTERNS).map(|i| format!("p{i}")).collect();
        assert!(Watchlist::new("w", &too_many, ok)
            .unwrap_err()
            .to_string()
            .contains("at most"));
        assert!(Watchlist::new("w", &["a", ""], ok)
            .unwrap_err()
            .to_string()
            .contains("pattern 1 is empty"));
        assert!(Watchlist::new("w", &["a\nb"], ok)
            .unwrap_err()
            .to_string()
            .contains("line break"));
        let long = "x".repeat(MAX_PATTERN_BYTES + 1);
        assert!(Watchlist::new("w", &[long], ok)
            .unwrap_err()
            .to_string()
            .contains("bytes"));
    }

    #[test]
    fn duplicates_fold_into_distinct_patterns() {
        let w = Watchlist::new(
            "w",
            &["Evil.example", "evil.EXAMPLE", "evil.example", "c2"],
            WatchlistOptions {
                ignore_case: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(w.patterns().len(), 4);
        assert_eq!(w.distinct(), 2);
    }
}
