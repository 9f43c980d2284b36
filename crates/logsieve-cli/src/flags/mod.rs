//! Command-line flags (clap definitions), each defined once. Names follow
//! ripgrep (and grep where rg agrees).
//!
//! Flags used by more than one subcommand live in [`shared`] as small
//! `#[derive(Args)]` groups, flattened into each subcommand's struct. Where a
//! subcommand words a shared flag's help differently (`stats` counts lines,
//! `search` prints them), the subcommand rewords it with `mut_arg` and keeps
//! the flag's names and default.

pub mod argv;
pub mod cluster;
pub mod gpus;
pub mod patterns;
pub mod serve;
pub mod shared;
pub mod sql;
pub mod subcommands;
pub mod walk;

use clap::{CommandFactory, Parser, Subcommand};

/// The `--help` headings, in the order `search --help` shows them
/// (ripgrep's groups, then the time window and the engine).
pub mod heading {
    pub const INPUT: &str = "Input options";
    pub const SEARCH: &str = "Search options";
    pub const FILTER: &str = "Filter options";
    pub const OUTPUT: &str = "Output options";
    pub const MODES: &str = "Output modes";
    pub const STATS: &str = "Time window and stats options";
    pub const ENGINE: &str = "GPU and engine options";
    pub const OTHER: &str = "Other behaviors";
}

pub use serve::ServeArgs;
pub use shared::{BackendArg, ColorChoice, PipelineArgs};
pub use subcommands::{
    BenchArgs, CompletionsArgs, DemoArgs, GenArgs, ManArgs, SearchArgs, StatsArgs, WebArgs,
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
    /// Group lines into log templates (Drain; `<_>` for variable parts)
    /// and print the largest with their counts over time.
    Patterns(patterns::PatternsArgs),
    /// Reproduce the reference tables (CPU, GPU kernels, auto, rg, grep).
    Bench(BenchArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(CompletionsArgs),
    /// Print the man page (roff) of logsieve or of one subcommand, or
    /// write them all into a directory.
    Man(ManArgs),
    /// Load logs once and answer queries over HTTP (JSON API under /api/v1).
    Serve(ServeArgs),
    /// SQL over files (table `logs`), line filters and time windows run by
    /// the search engine.
    Sql(sql::SqlArgs),
    /// A cluster: workers holding their shards resident (`cluster worker`),
    /// and their status; `sql --cluster` queries them.
    Cluster(cluster::ClusterArgs),
}

/// The command line's definition as parsed and as `--help` prints it.
///
/// `--help` prints each flag's long text as is: clap, built without its
/// terminal-width feature, does not wrap, so the long texts are wrapped
/// here to fit 80 columns beside clap's indent. The man pages take
/// [`Cli::command`] unwrapped: roff fills its lines itself.
pub fn command() -> clap::Command {
    wrap_long_help(Cli::command())
}

/// Columns of a long help text, after clap's 10-column indent.
const LONG_HELP_WIDTH: usize = 70;

fn wrap_long_help(cmd: clap::Command) -> clap::Command {
    let cmd = cmd.mut_args(|a| match a.get_long_help() {
        Some(text) => {
            let text = wrap(&text.to_string(), LONG_HELP_WIDTH);
            a.long_help(text)
        }
        None => a,
    });
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    subs.iter()
        .fold(cmd, |cmd, name| cmd.mut_subcommand(name, wrap_long_help))
}

/// `text` with each paragraph (paragraphs are split by a blank line)
/// filled to `width` columns; a word longer than that has a line of its own.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / width);
    for (i, para) in text.split("\n\n").enumerate() {
        if i > 0 {
            out.push_str("\n\n");
        }
        let mut col = 0;
        for word in para.split_whitespace() {
            let n = word.chars().count();
            if col > 0 && col + 1 + n > width {
                out.push('\n');
                col = 0;
            } else if col > 0 {
                out.push(' ');
                col += 1;
            }
            out.push_str(word);
            col += n;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_fills_paragraphs() {
        assert_eq!(wrap("a bb ccc dd e", 6), "a bb\nccc dd\ne");
        assert_eq!(wrap("one two\n\nthree", 80), "one two\n\nthree");
        assert_eq!(
            wrap("tiny averyverylongword x", 5),
            "tiny\naveryverylongword\nx"
        );
    }

    #[test]
    fn definition_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn stats_rewords_flags_it_has() {
        let cmd = command();
        let stats = cmd.find_subcommand("stats").expect("stats");
        for (id, help) in subcommands::STATS_WORDING {
            let arg = stats.get_arguments().find(|a| a.get_id() == *id);
            let arg = arg.unwrap_or_else(|| panic!("stats has no {id}"));
            assert_eq!(
                arg.get_help().map(|h| h.to_string()).as_deref(),
                Some(*help)
            );
        }
    }
}
