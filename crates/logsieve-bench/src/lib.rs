//! # logsieve-bench
//!
//! Benchmarks for logsieve, rebar-style: every engine (the CPU on one and
//! all cores, each GPU kernel, auto, ripgrep and GNU grep as processes) on
//! the same generated data in the same run, each row's count checked
//! against the first row's, so a run doubles as a correctness test.
//!
//! The reference tables of `logsieve bench` and `logsieve demo` are the
//! command's own (`crates/logsieve-cli/src/tables/`): nothing depends on
//! this crate but its binaries and its soak test (`tests/soak.rs`, which
//! runs the `logsieve` binary the workspace's tests build).
//!
//! * [`soak`]: the load soak of `logsieve serve` (the `serve-soak` binary).
//! * [`http`]: the HTTP/1.1 client of the soak and `serve-load`.
//! * [`iocs`]: indicator lists (the `multi` and `watchlists` binaries).
//! * [`regex_suite`]: the suite's regexes (the `regex` and `regex-route`
//!   binaries).
//!
//! The binaries in `src/bin/` measure narrower questions (the GPU kernels,
//! many literals, the stats pipeline, the CPU against rg).

#![deny(missing_docs)]

pub mod http;
pub mod iocs;
pub mod regex_suite;
pub mod soak;
pub mod timing;
