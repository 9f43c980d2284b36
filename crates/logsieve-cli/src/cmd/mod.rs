//! One module per subcommand: each turns its flags into library calls and
//! hands the result to a printer. Lower modules (`flags`, `input`,
//! `printer`) never import these.

pub mod bench;
pub mod cluster;
pub mod completions;
pub mod demo;
pub mod files;
pub mod follow;
pub mod gen;
pub mod gpu_info;
pub mod patterns;
pub mod search;
pub mod serve;
pub mod sql;
pub mod stats;
pub mod web;
