//! Each subcommand's flags: the shared groups flattened in, and the flags
//! only one subcommand has.
//!
//! Fields are declared in the order of their `--help` headings
//! ([`super::heading`]): clap shows a heading where its first flag is
//! declared, so a flag declared out of its group's place moves the group.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Args;

use super::heading;
use super::walk::WalkArgs;

use super::shared::{
    ColorChoice, EngineArgs, InputArgs, MatchArgs, PerPatternArgs, PipelineArgs, ReportArgs,
};

/// `logsieve search`.
#[derive(Args, Debug)]
pub struct SearchArgs {
    /// The pattern, then the paths.
    ///
    /// With -e or -f, every positional argument is a path. No path: stdin
    /// when piped, else the current directory.
    #[arg(value_name = "PATTERN [PATH]")]
    pub positional: Vec<OsString>,

    // Input options (-e), then search options (-F, -i, -S, -s, -w, -v).
    #[command(flatten)]
    pub matching: MatchArgs,

    /// Read patterns from FILE, one per line (repeatable; `-` is stdin).
    #[arg(short = 'f', long = "file", value_name = "FILE", help_heading = heading::INPUT)]
    pub file: Vec<PathBuf>,

    /// -z, --no-mmap, -a.
    #[command(flatten)]
    pub input: InputArgs,

    // Search options.
    /// Only match whole lines.
    #[arg(short = 'x', long = "line-regexp", help_heading = heading::SEARCH)]
    pub line_regexp: bool,

    /// Patterns are wildcards: `*` any run of bytes, `?` one byte.
    #[arg(long, conflicts_with_all = ["fixed_strings", "fuzzy"], help_heading = heading::SEARCH)]
    pub wildcard: bool,

    /// Lines holding the pattern within K edits (0..=3), like agrep.
    #[arg(
        long,
        value_name = "K",
        conflicts_with = "fixed_strings",
        help_heading = heading::SEARCH
    )]
    pub fuzzy: Option<u8>,

    /// Grep's extended-regex switch: a no-op.
    ///
    /// Accepted for muscle memory: regex is the default syntax. (rg 13
    /// uses -E for --encoding.)
    #[arg(short = 'E', long = "extended-regexp", help_heading = heading::SEARCH)]
    pub extended_regexp: bool,

    /// Patterns are PCRE2 regexes (look-around, backreferences).
    ///
    /// CPU only. Needs a build with `--features pcre2`, else an error that
    /// says so.
    #[arg(short = 'P', long = "pcre2", help_heading = heading::SEARCH)]
    pub pcre2: bool,

    /// A match may span lines.
    ///
    /// `.` still stops at `\n` unless `(?s)`; every line a match spans is
    /// printed, `-c` counts matches. CPU only.
    #[arg(short = 'U', long = "multiline", help_heading = heading::SEARCH)]
    pub multiline: bool,

    /// Treat CRLF as the line terminator: `$` matches before `\r\n`.
    #[arg(long, help_heading = heading::SEARCH)]
    pub crlf: bool,

    /// Stop after NUM selected lines per file.
    #[arg(short = 'm', long = "max-count", value_name = "NUM", help_heading = heading::SEARCH)]
    pub max_count: Option<u64>,

    /// Which files are read (--hidden, --no-ignore, -L, -g, -t, --files, ...).
    #[command(flatten)]
    pub walk: WalkArgs,

    // Output options.
    /// Show NUM lines after each match.
    #[arg(short = 'A', long = "after-context", value_name = "NUM", help_heading = heading::OUTPUT)]
    pub after_context: Option<u64>,

    /// Show NUM lines before each match.
    #[arg(short = 'B', long = "before-context", value_name = "NUM", help_heading = heading::OUTPUT)]
    pub before_context: Option<u64>,

    /// Show NUM lines before and after each match.
    #[arg(short = 'C', long = "context", value_name = "NUM", help_heading = heading::OUTPUT)]
    pub context: Option<u64>,

    /// When to use colours.
    #[arg(
        long,
        value_enum,
        default_value_t = ColorChoice::Auto,
        value_name = "WHEN",
        help_heading = heading::OUTPUT
    )]
    pub color: ColorChoice,

    /// Print the 1-based column of the first match; implies -n.
    ///
    /// With -o, the column of each match.
    #[arg(long, help_heading = heading::OUTPUT)]
    pub column: bool,

    /// File name above its matches, a blank line between files.
    ///
    /// The default on a terminal.
    #[arg(long, overrides_with = "no_heading", help_heading = heading::OUTPUT)]
    pub heading: bool,

    /// The file name on every line.
    ///
    /// The default when not a terminal.
    #[arg(long = "no-heading", help_heading = heading::OUTPUT)]
    pub no_heading: bool,

    /// Show line numbers.
    ///
    /// The default when printing to a terminal.
    #[arg(
        short = 'n',
        long = "line-number",
        overrides_with = "no_line_number",
        help_heading = heading::OUTPUT
    )]
    pub line_number: bool,

    /// Never show line numbers.
    #[arg(short = 'N', long = "no-line-number", help_heading = heading::OUTPUT)]
    pub no_line_number: bool,

    /// Follow each file name with a NUL byte instead of `:` or a newline.
    #[arg(short = '0', long = "null", help_heading = heading::OUTPUT)]
    pub null: bool,

    /// Print only the matched parts, one per line.
    #[arg(short = 'o', long = "only-matching", help_heading = heading::OUTPUT)]
    pub only_matching: bool,

    /// Print every line, the matching ones as matches.
    ///
    /// The other lines are printed as context.
    #[arg(long, alias = "passthrough", help_heading = heading::OUTPUT)]
    pub passthru: bool,

    /// Print nothing; exit 0 on the first match.
    #[arg(short = 'q', long = "quiet", help_heading = heading::OUTPUT)]
    pub quiet: bool,

    /// Print REPLACEMENT instead of each match.
    ///
    /// `$1`, `${name}` name capture groups (`$$` is a `$`).
    #[arg(
        short = 'r',
        long = "replace",
        value_name = "REPLACEMENT",
        allow_hyphen_values = true,
        help_heading = heading::OUTPUT
    )]
    pub replace: Option<OsString>,

    /// Print statistics after the results.
    ///
    /// Matches, matched lines, files, bytes printed and searched, time.
    #[arg(long, help_heading = heading::OUTPUT)]
    pub stats: bool,

    /// Remove leading whitespace (ASCII) from each printed line.
    #[arg(long, help_heading = heading::OUTPUT)]
    pub trim: bool,

    /// One line per match: PATH:LINE:COLUMN:LINE (Vim's quickfix format).
    #[arg(long, help_heading = heading::OUTPUT)]
    pub vimgrep: bool,

    /// Show the file name for every line.
    ///
    /// The default with several files.
    #[arg(
        short = 'H',
        long = "with-filename",
        overrides_with = "no_filename",
        help_heading = heading::OUTPUT
    )]
    pub with_filename: bool,

    /// Never show file names.
    #[arg(short = 'I', long = "no-filename", help_heading = heading::OUTPUT)]
    pub no_filename: bool,

    /// Print the 0-based byte offset of each line before it.
    ///
    /// With -o, the offset of each match.
    #[arg(short = 'b', long = "byte-offset", help_heading = heading::OUTPUT)]
    pub byte_offset: bool,

    // Output modes.
    /// Print the number of selected lines per file.
    ///
    /// Files without a selected line are left out (as rg 13), even a file
    /// searched alone; --include-zero prints their 0.
    #[arg(short = 'c', long = "count", conflicts_with = "json", help_heading = heading::MODES)]
    pub count: bool,

    /// Print only the paths of files with a selected line.
    #[arg(
        short = 'l',
        long = "files-with-matches",
        conflicts_with = "json",
        help_heading = heading::MODES
    )]
    pub files_with_matches: bool,

    /// Print only the paths of files without a selected line.
    ///
    /// Long only, as in rg 13: -L is --follow.
    #[arg(
        long = "files-without-match",
        conflicts_with_all = ["json", "files_with_matches", "count"],
        help_heading = heading::MODES
    )]
    pub files_without_match: bool,

    /// --count-per-pattern, --patterns-matched: a per-pattern report
    /// instead of lines.
    #[command(flatten)]
    pub per_pattern: PerPatternArgs,

    /// Time window and aggregation (--since, --until, --count-by,
    /// --histogram, --field, --time-format, --year): print counts instead
    /// of lines.
    #[command(flatten)]
    pub pipeline: PipelineArgs,

    /// -j, --backend.
    #[command(flatten)]
    pub engine: EngineArgs,

    /// --gpus, --gpu-memory.
    #[command(flatten)]
    pub gpus: super::gpus::GpuArgs,

    /// The GPU kernel to run.
    ///
    /// brute-line, brute-byte, two-phase, scan, signature; for several
    /// literals: trie, ac, prefix-hash, bloom.
    #[arg(long = "gpu-kernel", value_name = "NAME", help_heading = heading::ENGINE)]
    pub gpu_kernel: Option<String>,

    /// --json (with the output modes), --explain.
    #[command(flatten)]
    pub report: ReportArgs,

    // Other behaviors.
    /// Ask a running `logsieve serve` at URL instead of reading files.
    ///
    /// URL is `http://HOST:PORT`; paths name its served files. Also
    /// `LOGSIEVE_SERVER`.
    #[arg(long, value_name = "URL", help_heading = heading::OTHER)]
    pub server: Option<String>,

    /// Do not read $LOGSIEVE_CONFIG_PATH.
    #[arg(long = "no-config", help_heading = heading::OTHER)]
    pub no_config: bool,
}

impl SearchArgs {
    /// How the patterns are read: `--fuzzy K`, `--wildcard`, `-F`, else
    /// a regex (the one place the flags decide it, for `search` and
    /// `stats`).
    pub fn syntax(&self) -> logsieve::Syntax {
        use logsieve::Syntax;
        if let Some(k) = self.fuzzy {
            Syntax::Fuzzy(k)
        } else if self.wildcard {
            Syntax::Wildcard
        } else if self.matching.fixed_strings {
            Syntax::Fixed
        } else {
            Syntax::Regex
        }
    }
}

/// `logsieve stats`: the shared flags, some worded for counting.
#[derive(Args, Debug)]
#[command(mut_args(stats_wording))]
pub struct StatsArgs {
    /// Files or directories (default: stdin when piped, else `./`).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// -e, -F, -i, -w, -v.
    #[command(flatten)]
    pub matching: MatchArgs,

    /// --no-mmap, -z.
    #[command(flatten)]
    pub input: InputArgs,

    /// Which files are read (--hidden, --no-ignore, -L, -g, -t, --files, ...).
    #[command(flatten)]
    pub walk: WalkArgs,

    /// --since, --until, --count-by, --histogram, --field, --time-format,
    /// --year.
    #[command(flatten)]
    pub pipeline: PipelineArgs,

    /// --json, --explain.
    #[command(flatten)]
    pub report: ReportArgs,

    /// -j, --backend.
    #[command(flatten)]
    pub engine: EngineArgs,

    /// --gpus, --gpu-memory.
    #[command(flatten)]
    pub gpus: super::gpus::GpuArgs,

    /// Ask a running `logsieve serve` at URL instead of reading files.
    ///
    /// URL is `http://HOST:PORT`. Also `LOGSIEVE_SERVER`.
    #[arg(long, value_name = "URL", help_heading = heading::OTHER)]
    pub server: Option<String>,
}

/// The shared flags `stats` words for counting: (id, help). Their long
/// text, worded for `search`, is dropped.
pub(crate) const STATS_WORDING: &[(&str, &str)] = &[
    (
        "regexp",
        "Only lines matching PATTERN (repeatable: any of them)",
    ),
    ("invert_match", "Select lines NOT matching the patterns"),
    ("json", "Print the result as one JSON object"),
    ("threads", "Threads (0 = all cores)"),
    ("backend", "Which backend runs the pipeline"),
    (
        "search_zip",
        "Read compressed files: gzip, bzip2, xz, lzma, lzip, zstd, lz4",
    ),
    (
        "explain",
        "Print the backend, the detected formats and timings on stderr",
    ),
    (
        "include_zero",
        "Show empty histogram buckets in the text report too",
    ),
];

/// Rewords a shared flag for `stats` ([`STATS_WORDING`]). In place, unlike
/// `mut_arg`, which moves the flag last and with it its `--help` heading.
fn stats_wording(a: clap::Arg) -> clap::Arg {
    let Some(&(_, help)) = STATS_WORDING.iter().find(|(id, _)| a.get_id() == *id) else {
        return a;
    };
    let a = a.help(help).long_help(None::<&str>);
    if a.get_id() == "include_zero" {
        // Only the histogram's empty buckets: `stats` has no -c.
        a.help_heading(heading::STATS)
    } else {
        a
    }
}

/// `logsieve gen`.
#[derive(Args, Debug)]
pub struct GenArgs {
    /// Number of lines.
    #[arg(long, default_value_t = 1_000_000)]
    pub lines: u64,
    /// Seed (the same seed gives the same bytes).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Output file (`-` for stdout).
    #[arg(short = 'o', long = "output", default_value = "-")]
    pub output: PathBuf,
}

/// `logsieve demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Number of lines to generate.
    #[arg(long, default_value_t = 1_000_000)]
    pub lines: u64,
    /// Runs per query (the median is shown).
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Skip the GPU rows even when an adapter exists.
    #[arg(long)]
    pub no_gpu: bool,
    /// Run every GPU kernel even on a software adapter (slow: lavapipe runs
    /// the baselines at ~0.1 GB/s).
    #[arg(long)]
    pub all_kernels: bool,
}

/// `logsieve bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// A small run (100k lines, 3 runs): under a minute on 2 cores.
    #[arg(long)]
    pub quick: bool,
    /// Lines to generate (default 1M, or 100k with --quick).
    #[arg(long)]
    pub lines: Option<u64>,
    /// Timed runs per row (the median is reported).
    #[arg(long)]
    pub runs: Option<usize>,
    /// Print JSON instead of markdown.
    #[arg(long)]
    pub json: bool,
    /// Also write the markdown report to FILE.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Skip the GPU rows.
    #[arg(long)]
    pub no_gpu: bool,
}

/// `logsieve web`.
#[derive(Args, Debug)]
pub struct WebArgs {
    /// The page's WebAssembly engine, a folder built by scripts/build-web.sh
    /// (default: $LOGSIEVE_WEB_DIR, target/web beside this executable's
    /// folder, ~/.local/share/logsieve/web, ./target/web).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Port on 127.0.0.1 (0: any free port).
    #[arg(long, default_value_t = 8787)]
    pub port: u16,
}

/// `logsieve completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `logsieve man`.
#[derive(Args, Debug)]
pub struct ManArgs {
    /// The subcommand whose page to print (`search`; a nested one as `a b`
    /// or `a-b`). None: the top page.
    #[arg(value_name = "SUBCOMMAND")]
    pub name: Vec<String>,

    /// Write the page and those of the subcommands below it into DIR
    /// (`logsieve.1`, `logsieve-search.1`, ...) instead of printing it.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}
