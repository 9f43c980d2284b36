//! Shared by every integration test, CPU and GPU alike: the naive oracle
//! (`oracle.rs`), the named table of cases (`cases.rs`), and corpus
//! builders and property-test strategies (`strategies.rs`). Nothing here
//! knows about a particular backend.
//!
//! The oracle is deliberately slow and simple (in the spirit of memchr's
//! `tests/substring/naive.rs`): it splits the corpus into lines itself and
//! decides each line by brute force, following the matching rules documented
//! at the top of `src/query/mod.rs`. Regex queries are the one exception: the
//! reference semantics *are* the `regex` crate applied line by line.

// Each test binary uses a different subset of these functions.
#![allow(dead_code)]

use logsieve::{Error, Query, QueryBuilder, Syntax};

// Native only: its shared context is a `static` (wgpu's browser device is
// neither `Send` nor `Sync`); the browser suite includes this module too.
mod cases;
#[cfg(not(target_arch = "wasm32"))]
pub mod gpu;
mod oracle;
mod strategies;
// Each test binary uses a different subset of these.
#[allow(unused_imports)]
pub use cases::*;
#[allow(unused_imports)]
pub use oracle::*;
#[allow(unused_imports)]
pub use strategies::*;

/// `-i`, `-w`, `-x`, `-v`, written as a string of those letters ("iw").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    /// `-i`
    pub i: bool,
    /// `-w`
    pub w: bool,
    /// `-x`
    pub x: bool,
    /// `-v`
    pub v: bool,
}

impl Flags {
    /// Parses "iwxv"-style flag letters.
    pub fn parse(s: &str) -> Flags {
        let mut f = Flags::default();
        for c in s.chars() {
            match c {
                'i' => f.i = true,
                'w' => f.w = true,
                'x' => f.x = true,
                'v' => f.v = true,
                _ => panic!("unknown flag letter {c:?}"),
            }
        }
        f
    }
}

/// Builds the query the way a caller of the library would.
pub fn build(patterns: &[Vec<u8>], syntax: Syntax, f: Flags) -> Result<Query, Error> {
    QueryBuilder::new()
        .syntax(syntax)
        .case_insensitive(f.i)
        .word(f.w)
        .whole_line(f.x)
        .invert(f.v)
        .build(patterns)
}

/// Owned patterns from string-ish slices.
pub fn pats<P: AsRef<[u8]>>(ps: &[P]) -> Vec<Vec<u8>> {
    ps.iter().map(|p| p.as_ref().to_vec()).collect()
}

/// The random batches of `gpu_append.rs` and `evict.rs`: the library's
/// generator.
#[allow(unused_imports)]
pub use logsieve::gen::SplitMix64 as Rng;

/// The level and host columns, as `serve` builds them by default.
pub fn copts() -> logsieve::stats::ColumnOptions {
    logsieve::stats::ColumnOptions {
        fields: ["level", "host"]
            .iter()
            .filter_map(|n| logsieve::stats::FieldSpec::builtin(n))
            .collect(),
        ..Default::default()
    }
}

/// Lines wanted, on `backend`.
pub fn opts(backend: logsieve::BackendChoice) -> logsieve::SearchOptions {
    logsieve::SearchOptions {
        backend,
        want: logsieve::Want::Lines,
        ..Default::default()
    }
}
