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
* A [`Session`] owns a corpus (and, when a GPU pays, its resident copy)
  and answers every request kind through one routing point
  ([`session::route::route`]); [`SearchResult`] says which backend ran and
  why.

# Example

```
use logsieve::{Corpus, QueryBuilder, SearchOptions, Session, Syntax};

let corpus = Corpus::from_bytes("app.log", b"ok\nERROR_503 upstream\nok\n".to_vec());
let session = Session::new(corpus);
let query = QueryBuilder::new().syntax(Syntax::Fixed).build(&["ERROR_503"]).unwrap();
let res = session.search(&query, &SearchOptions::default()).unwrap();
assert_eq!(res.docs[0].count, 1);
assert_eq!(res.docs[0].lines, vec![1]);
println!("{}", res.backend);
```

# Features

* `gpu` (default): the wgpu backend.
* `pcre2` (off by default, as in ripgrep): `-P` through the `pcre2` crate
  (builds PCRE2's C sources); without it a `-P` query is an error that
  says how to get it. `logsieve-cli`'s `pcre2` feature turns it on.
*/
#![deny(missing_docs)]
// In the browser build, the native-only paths (several GPUs, blocking
// uploads on threads) leave some items unused.
#![cfg_attr(
    target_arch = "wasm32",
    allow(unused_imports, dead_code, unused_variables)
)]

pub mod auth;
pub mod cancel;
pub mod corpus;
pub mod cpu;
mod error;
pub mod gen;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod kernel;
pub mod logql;
pub mod options;
pub mod pattern_counts;
pub mod patterns;
pub mod planner;
pub mod query;
pub mod results;
pub mod rg_json;
pub mod session;
pub mod stats;
pub mod support;
pub mod watchlist;

pub use cancel::Cancel;
pub use corpus::{Corpus, Document, LineIndex, LoadOptions, Segment};
pub use error::{Error, ErrorKind};
pub use kernel::{Kernel, MultiKernel};
pub use options::{BackendChoice, CpuMulti, SearchOptions, Tuning};
pub use pattern_counts::{PatternCounts, PatternNamer};
pub use query::{CaseMode, Query, QueryBuilder, QueryKind, Syntax};
pub use results::{BackendReport, DocHits, HitSink, Want};
pub use session::{Answer, Request, Route, Scope, SearchResult, Session};
pub use watchlist::{Watchlist, WatchlistOptions};
