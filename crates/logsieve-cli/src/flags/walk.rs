//! The flags that choose which files are read (ripgrep's names and
//! meanings), shared by `search` and `stats`; `--files` / `--type-list`
//! print instead of searching (`cmd/files.rs`).

use clap::{ArgAction, Args, ValueEnum};
use logsieve::corpus::{SortBy, WalkOptions};

use super::heading;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum SortArg {
    /// By path (the default: the same search prints the same bytes).
    #[default]
    Path,
    /// In directory order.
    None,
}

#[derive(Args, Debug, Default, Clone)]
pub struct WalkArgs {
    /// Search hidden files and directories.
    #[arg(long, help_heading = heading::FILTER)]
    pub hidden: bool,

    /// Honour no ignore file (.gitignore, .ignore, .logsieveignore).
    #[arg(long = "no-ignore", help_heading = heading::FILTER)]
    pub no_ignore: bool,

    /// Do not honour .gitignore, .git/info/exclude and git's global excludes.
    #[arg(long = "no-ignore-vcs", help_heading = heading::FILTER)]
    pub no_ignore_vcs: bool,

    /// Do not honour .ignore and .logsieveignore files.
    #[arg(long = "no-ignore-dot", help_heading = heading::FILTER)]
    pub no_ignore_dot: bool,

    /// Do not read ignore files in the parents of a searched directory.
    #[arg(long = "no-ignore-parent", help_heading = heading::FILTER)]
    pub no_ignore_parent: bool,

    /// -u: --no-ignore; -uu: also --hidden.
    #[arg(short = 'u', long = "unrestricted", action = ArgAction::Count, help_heading = heading::FILTER)]
    pub unrestricted: u8,

    /// Follow symbolic links.
    ///
    /// A link loop is reported and skipped. With `search --server URL`:
    /// follow the served corpus instead, printing new matching lines as
    /// they come (`tail -f | grep`; Ctrl-C ends it).
    #[arg(short = 'L', long = "follow", help_heading = heading::FILTER)]
    pub follow: bool,

    /// Only search files matching GLOB; `!GLOB` excludes (repeatable, as rg).
    #[arg(
        short = 'g',
        long = "glob",
        value_name = "GLOB",
        allow_hyphen_values = true,
        help_heading = heading::FILTER
    )]
    pub glob: Vec<String>,

    /// Only search files of TYPE (repeatable).
    ///
    /// See --type-list; `log` also matches rotated and compressed logs.
    #[arg(short = 't', long = "type", value_name = "TYPE", help_heading = heading::FILTER)]
    pub types: Vec<String>,

    /// Do not search files of TYPE (repeatable).
    #[arg(short = 'T', long = "type-not", value_name = "TYPE", help_heading = heading::FILTER)]
    pub type_not: Vec<String>,

    /// Print the file types -t knows, and their globs, then exit.
    #[arg(long = "type-list", help_heading = heading::FILTER)]
    pub type_list: bool,

    /// Descend at most NUM directories below each path given.
    #[arg(long = "max-depth", alias = "maxdepth", value_name = "NUM", help_heading = heading::FILTER)]
    pub max_depth: Option<usize>,

    /// Print the files that would be searched, then exit.
    ///
    /// Every positional argument is a path.
    #[arg(long, help_heading = heading::FILTER)]
    pub files: bool,

    /// The order of the files found in directories.
    #[arg(long, value_enum, default_value_t = SortArg::Path, value_name = "SORTBY", help_heading = heading::FILTER)]
    pub sort: SortArg,
}

impl WalkArgs {
    /// The library's walk options for these flags.
    pub fn options(&self) -> WalkOptions {
        WalkOptions {
            hidden: self.hidden || self.unrestricted >= 2,
            no_ignore: self.no_ignore || self.unrestricted >= 1,
            no_ignore_dot: self.no_ignore_dot,
            no_ignore_vcs: self.no_ignore_vcs,
            no_ignore_parent: self.no_ignore_parent,
            follow: self.follow,
            max_depth: self.max_depth,
            globs: self.glob.clone(),
            types: self.types.clone(),
            type_not: self.type_not.clone(),
            sort: match self.sort {
                SortArg::Path => SortBy::Path,
                SortArg::None => SortBy::None,
            },
            // As rg: `--files > list` lists `list` too.
            skip_stdout: !self.files,
        }
    }

    /// True when a flag asks for a listing instead of a search.
    pub fn lists(&self) -> bool {
        self.files || self.type_list
    }
}
