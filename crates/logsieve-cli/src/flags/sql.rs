//! `logsieve sql`: SQL over files (DataFusion), or over a server's corpus.

use std::path::PathBuf;

use clap::Args;

use super::heading;
use super::shared::{ColumnArgs, EngineArgs, InputArgs};
use super::walk::WalkArgs;

/// `logsieve sql ["QUERY"] [PATH]...`.
#[derive(Args, Debug)]
pub struct SqlArgs {
    /// The query, then files or directories (default: stdin when piped,
    /// else `./`).
    ///
    /// The table is `logs`: file, line_number, byte_offset, time (UTC,
    /// ms), level, host, every --field, line, line_bytes. Without a
    /// query (the first argument a path, or none), an interactive prompt
    /// reads statements ending in `;`, with history.
    #[arg(value_name = "QUERY | PATH")]
    pub args: Vec<String>,

    /// How rows are printed.
    #[arg(long, value_name = "FORMAT", default_value = "table",
          value_parser = ["table", "csv", "json", "ndjson", "arrow"], help_heading = heading::OUTPUT)]
    pub format: String,

    /// --field, --time-format, --year.
    #[command(flatten)]
    pub columns: ColumnArgs,

    /// A watchlist NAME from FILE (one literal per line): the table
    /// `watchlist_NAME(idx, pattern)` and `matches(line, 'NAME')`.
    /// Repeatable.
    #[arg(long = "watchlist", value_name = "NAME=FILE", help_heading = heading::SEARCH)]
    pub watchlist: Vec<String>,

    /// After each statement, its time and rows on stderr.
    #[arg(long, help_heading = heading::OUTPUT)]
    pub timing: bool,

    /// DataFusion filters every line itself (no filter runs in the
    /// engine): for comparing answers.
    #[arg(long = "no-pushdown", help_heading = heading::ENGINE)]
    pub no_pushdown: bool,

    /// --no-mmap, -z.
    #[command(flatten)]
    pub input: InputArgs,

    /// Which files are read (--hidden, --no-ignore, -L, -g, -t, ...).
    #[command(flatten)]
    pub walk: WalkArgs,

    /// -j, --backend.
    #[command(flatten)]
    pub engine: EngineArgs,

    /// Ask a running `logsieve serve` at URL (`POST /api/v1/sql`) instead
    /// of reading files. Also `LOGSIEVE_SERVER`.
    #[arg(long, value_name = "URL", help_heading = heading::OTHER)]
    pub server: Option<String>,

    /// Ask the cluster of these workers (`logsieve cluster worker`),
    /// comma-separated HOST:PORT, instead of reading files.
    #[arg(long, value_name = "ADDR[,ADDR...]", conflicts_with = "server",
          help_heading = heading::OTHER)]
    pub cluster: Option<String>,

    /// A file whose first line is the cluster workers' token.
    #[arg(long = "token-file", value_name = "FILE", requires = "cluster",
          help_heading = heading::OTHER)]
    pub token_file: Option<PathBuf>,
}

impl SqlArgs {
    /// The query and the paths: the first argument is the query unless
    /// it names an existing path and holds no space (a query always has
    /// one).
    pub fn query_and_paths(&self) -> (Option<&str>, Vec<PathBuf>) {
        match self.args.split_first() {
            None => (None, Vec::new()),
            Some((first, rest)) => {
                let is_path =
                    !first.contains(char::is_whitespace) && std::path::Path::new(first).exists();
                if is_path {
                    (None, self.args.iter().map(PathBuf::from).collect())
                } else {
                    (
                        Some(first.as_str()),
                        rest.iter().map(PathBuf::from).collect(),
                    )
                }
            }
        }
    }
}
