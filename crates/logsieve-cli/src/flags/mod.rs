//! Command-line flags (clap definitions), each defined once. Names follow
//! ripgrep (and grep where rg agrees).
//!
//! Flags used by more than one subcommand live in [`shared`] as small
//! `#[derive(Args)]` groups, flattened into each subcommand's struct. Where a
//! subcommand words a shared flag's help differently (`stats` counts lines,
//! `search` prints them), the subcommand rewords it with `mut_arg` and keeps
//! the flag's names and default.

pub mod argv;
pub mod gpus;
pub mod serve;
pub mod shared;
pub mod subcommands;
pub mod walk;

use clap::{Parser, Subcommand};

pub use serve::ServeArgs;
pub use shared::{BackendArg, ColorChoice, PipelineArgs};
pub use subcommands::{
    BenchArgs, CompletionsArgs, DemoArgs, GenArgs, SearchArgs, StatsArgs, WebArgs,
};

/// GPU-accelerated log search. `logsieve PATTERN [PATH]...` is
/// `logsieve search PATTERN [PATH]...`.
#[derive(Parser, Debug)]
// A flag given twice is not an error, the last one wins (as rg: `alias
// g='logsieve search -F'` then `g -F ...` must work).
#[command(
    name = "logsieve",
    version,
    about,
    long_about = None,
    args_override_self = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Search files (or stdin) for lines matching a pattern.
    Search(SearchArgs),
    /// Write deterministic synthetic logs.
    Gen(GenArgs),
    /// Generate 1M lines in memory and time the reference queries.
    Demo(DemoArgs),
    /// Print the GPU adapter, its limits and features.
    GpuInfo,
    /// Serve the browser page (files searched in the tab) on 127.0.0.1.
    Web(WebArgs),
    /// Count lines in a time window by field or time bucket (optionally
    /// only those matching -e PATTERN).
    Stats(StatsArgs),
    /// Reproduce the reference tables (CPU, GPU kernels, auto, rg, grep).
    Bench(BenchArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(CompletionsArgs),
    /// Print the man page (roff) on stdout.
    Man,
    /// Load logs once and answer queries over HTTP (JSON API under /api/v1).
    Serve(ServeArgs),
}
