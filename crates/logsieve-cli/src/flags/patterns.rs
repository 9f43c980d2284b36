//! `logsieve patterns`: the log templates of files (Drain).

use std::path::PathBuf;

use clap::Args;

use super::heading;
use super::shared::InputArgs;
use super::walk::WalkArgs;

/// `logsieve patterns [PATH]...`.
#[derive(Args, Debug)]
pub struct PatternsArgs {
    /// Files or directories (default: stdin when piped, else `./`).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// --no-mmap, -z.
    #[command(flatten)]
    pub input: InputArgs,

    /// Which files are read (--hidden, --no-ignore, -L, -g, -t, --files, ...).
    #[command(flatten)]
    pub walk: WalkArgs,

    /// Show the NUM largest templates (0: all).
    #[arg(short = 'n', long, value_name = "NUM", default_value_t = 20, help_heading = heading::OUTPUT)]
    pub limit: usize,

    /// Print the templates as one JSON object (every template, with its
    /// lines per step), the shape of `GET /api/v1/patterns/templates`.
    #[arg(long, help_heading = heading::OUTPUT)]
    pub json: bool,

    /// Steps of the sparkline (the span of the timestamps, or of the lines
    /// without any).
    #[arg(long, value_name = "NUM", default_value_t = 24, help_heading = heading::OUTPUT)]
    pub width: usize,

    /// Drain's similarity threshold: the share of equal tokens a line
    /// needs to join a template.
    #[arg(long, value_name = "X", default_value_t = 0.4, help_heading = heading::SEARCH)]
    pub sim_threshold: f64,

    /// Drain's tree depth: `DEPTH - 3` leading tokens choose the leaf.
    #[arg(long, value_name = "NUM", default_value_t = 4, help_heading = heading::SEARCH)]
    pub depth: usize,
}
