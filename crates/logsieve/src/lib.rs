/*!
logsieve searches logs held in memory — on the GPU when one helps, on all CPU
cores otherwise — through one backend-neutral API.

# Overview

* A [`Corpus`] holds the documents (files, stdin, generated data). Each
  [`Document`] has a lazily built [`LineIndex`] and splits into
  [`Segment`]s for backends whose buffers are bounded.
* A [`Query`] is built by a [`QueryBuilder`]: regex (default), fixed strings,
  wildcards or fuzzy, with `-i`, `-w`, `-x`, `-v`. The analysis notices a
  regex that is a plain literal.
* An [`Engine`] owns a corpus and answers queries; [`SearchResult`] says
  which backend ran and why.

# Example

```
use logsieve::{Corpus, Engine, QueryBuilder, SearchOptions, Syntax};

let corpus = Corpus::from_bytes("app.log", b"ok\nERROR_503 upstream\nok\n".to_vec());
let engine = Engine::new(corpus);
let query = QueryBuilder::new().syntax(Syntax::Fixed).build(&["ERROR_503"]).unwrap();
let res = engine.search(&query, &SearchOptions::default()).unwrap();
assert_eq!(res.docs[0].count, 1);
assert_eq!(res.docs[0].lines, vec![1]);
println!("{}", res.backend);
```

# Features

* `gpu` (default): the wgpu backend.
*/
#![deny(missing_docs)]

pub mod corpus;
pub mod cpu;
mod error;
pub mod gen;
pub mod query;

pub use corpus::{Corpus, Document, LineIndex, LoadOptions, Segment};
pub use error::{Error, ErrorKind};
pub use query::{CaseMode, Query, QueryBuilder, QueryKind, Syntax};

use std::time::Duration;

/// What a search should produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Want {
    /// Only the number of selected lines.
    Count,
    /// The selected line ids too.
    #[default]
    Lines,
}

/// Which backend to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// Let the planner decide.
    #[default]
    Auto,
    /// The CPU engine.
    Cpu,
    /// The GPU engine (an error if it cannot run the query).
    Gpu,
}

/// Options for one search.
#[derive(Clone, Debug)]
pub struct SearchOptions {
    /// Which backend.
    pub backend: BackendChoice,
    /// CPU threads for one document; 0 means all cores.
    pub threads: usize,
    /// Count only, or the line ids too.
    pub want: Want,
    /// Stop after this many selected lines per document (`-m`).
    pub max_count: Option<u64>,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            backend: BackendChoice::Auto,
            threads: 1,
            want: Want::Lines,
            max_count: None,
        }
    }
}

/// The selected lines of one document.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DocHits {
    /// Number of selected lines (after `-v` and `-m`).
    pub count: u64,
    /// Selected line ids, ascending (empty when only counting).
    pub lines: Vec<u64>,
}

/// Which backend answered, and why.
#[derive(Clone, Debug)]
pub struct BackendReport {
    /// Short name, e.g. `cpu/memmem` or `gpu/scan`.
    pub name: String,
    /// Why the planner chose it (or "forced").
    pub reason: String,
    /// Wall time of the search.
    pub elapsed: Duration,
}

impl std::fmt::Display for BackendReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.name, self.reason)
    }
}

/// The answer to one query.
#[derive(Clone, Debug)]
pub struct SearchResult {
    /// One entry per document, in corpus order.
    pub docs: Vec<DocHits>,
    /// Which backend ran.
    pub backend: BackendReport,
}

impl SearchResult {
    /// Selected lines over all documents.
    pub fn total(&self) -> u64 {
        self.docs.iter().map(|d| d.count).sum()
    }
}

/// A corpus held for searching, and the backends that can search it.
pub struct Engine {
    corpus: Corpus,
}

impl Engine {
    /// An engine over `corpus` (CPU only until a GPU backend is attached).
    pub fn new(corpus: Corpus) -> Engine {
        Engine { corpus }
    }

    /// The corpus.
    pub fn corpus(&self) -> &Corpus {
        &self.corpus
    }

    /// Runs `query` over every document.
    pub fn search(&self, query: &Query, opts: &SearchOptions) -> Result<SearchResult, Error> {
        match opts.backend {
            BackendChoice::Gpu => Err(Error::backend(
                "the GPU backend is not available in this build",
            )),
            BackendChoice::Cpu => Ok(self.search_cpu(query, opts, "forced with --backend cpu")),
            BackendChoice::Auto => Ok(self.search_cpu(query, opts, "no GPU backend")),
        }
    }

    /// Runs `query` on the CPU engine.
    pub fn search_cpu(&self, query: &Query, opts: &SearchOptions, reason: &str) -> SearchResult {
        let t = std::time::Instant::now();
        let copts = cpu::CpuOptions {
            threads: opts.threads,
            want: opts.want,
            max_count: opts.max_count,
        };
        let docs = self
            .corpus
            .docs()
            .iter()
            .map(|d| cpu::search_doc(d, query, &copts))
            .collect();
        let threads = if opts.threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            opts.threads
        };
        SearchResult {
            docs,
            backend: BackendReport {
                name: format!("cpu/{} x{threads}", query.cpu_matcher_name()),
                reason: reason.to_string(),
                elapsed: t.elapsed(),
            },
        }
    }
}
