//! Each subcommand's flags: the shared groups flattened in, and the flags
//! only one subcommand has.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Args;

use super::walk::WalkArgs;

use super::shared::{
    ColorChoice, EngineArgs, InputArgs, MatchArgs, PerPatternArgs, PipelineArgs, ReportArgs,
};

/// `logsieve search`.
#[derive(Args, Debug)]
pub struct SearchArgs {
    /// The pattern, then the paths. With -e or -f, every positional
    /// argument is a path. No path: stdin when piped, else the current
    /// directory.
    #[arg(value_name = "PATTERN [PATH]")]
    pub positional: Vec<OsString>,

    /// -e, -F, -i, -w, -v.
    #[command(flatten)]
    pub gpus: super::gpus::GpuArgs,
    #[command(flatten)]
    pub matching: MatchArgs,

    /// Read patterns from FILE, one per line (repeatable; `-` is stdin).
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    pub file: Vec<PathBuf>,

    /// Patterns are wildcards: `*` any run of bytes, `?` one byte.
    #[arg(long, conflicts_with_all = ["fixed_strings", "fuzzy"])]
    pub wildcard: bool,

    /// Lines holding the pattern within K edits (0..=3), like agrep.
    #[arg(long, value_name = "K", conflicts_with = "fixed_strings")]
    pub fuzzy: Option<u8>,

    /// Only match whole lines.
    #[arg(short = 'x', long = "line-regexp")]
    pub line_regexp: bool,

    /// Grep's extended-regex switch, accepted for muscle memory: a no-op,
    /// regex is the default syntax. (rg 13 uses -E for --encoding.)
    #[arg(short = 'E', long = "extended-regexp")]
    pub extended_regexp: bool,

    /// Patterns are PCRE2 regexes (look-around, backreferences); CPU only.
    /// Needs a build with `--features pcre2`, else an error that says so.
    #[arg(short = 'P', long = "pcre2")]
    pub pcre2: bool,

    /// A match may span lines (`.` still stops at `\n` unless `(?s)`);
    /// every line a match spans is printed, `-c` counts matches. CPU only.
    #[arg(short = 'U', long = "multiline")]
    pub multiline: bool,

    /// Treat CRLF as the line terminator: `$` matches before `\r\n`.
    #[arg(long)]
    pub crlf: bool,

    /// Print the number of selected lines per file.
    #[arg(short = 'c', long = "count", conflicts_with = "json")]
    pub count: bool,

    /// Print only the paths of files with a selected line.
    #[arg(short = 'l', long = "files-with-matches", conflicts_with = "json")]
    pub files_with_matches: bool,

    /// Print only the paths of files without a selected line (long only,
    /// as in rg 13: -L is --follow).
    #[arg(
        long = "files-without-match",
        conflicts_with_all = ["json", "files_with_matches", "count"]
    )]
    pub files_without_match: bool,

    /// Print the 0-based byte offset of each line (with -o, of each match)
    /// before it.
    #[arg(short = 'b', long = "byte-offset")]
    pub byte_offset: bool,

    /// Print the 1-based column of the first match (with -o, of each
    /// match); implies -n.
    #[arg(long)]
    pub column: bool,

    /// One line per match: PATH:LINE:COLUMN:LINE (Vim's quickfix format).
    #[arg(long)]
    pub vimgrep: bool,

    /// Follow each file name with a NUL byte instead of `:` or a newline.
    #[arg(short = '0', long = "null")]
    pub null: bool,

    /// File name on its own line above its matches, a blank line between
    /// files (the default on a terminal).
    #[arg(long, overrides_with = "no_heading")]
    pub heading: bool,

    /// The file name on every line (the default when not a terminal).
    #[arg(long = "no-heading")]
    pub no_heading: bool,

    /// Print every line; the matching ones as matches, the others as
    /// context.
    #[arg(long, alias = "passthrough")]
    pub passthru: bool,

    /// Print statistics after the results: matches, lines, files, bytes,
    /// time.
    #[arg(long)]
    pub stats: bool,

    /// Remove leading whitespace (ASCII) from each printed line.
    #[arg(long)]
    pub trim: bool,

    /// Print REPLACEMENT instead of each match; `$1`, `${name}` name
    /// capture groups (`$$` is a `$`).
    #[arg(
        short = 'r',
        long = "replace",
        value_name = "REPLACEMENT",
        allow_hyphen_values = true
    )]
    pub replace: Option<OsString>,

    /// Do not read $LOGSIEVE_CONFIG_PATH.
    #[arg(long = "no-config")]
    pub no_config: bool,

    /// Print only the matched parts, one per line.
    #[arg(short = 'o', long = "only-matching")]
    pub only_matching: bool,

    /// Show line numbers (default when printing to a terminal).
    #[arg(short = 'n', long = "line-number", overrides_with = "no_line_number")]
    pub line_number: bool,

    /// Never show line numbers.
    #[arg(short = 'N', long = "no-line-number")]
    pub no_line_number: bool,

    /// Show the file name for every line (default with several files).
    #[arg(short = 'H', long = "with-filename", overrides_with = "no_filename")]
    pub with_filename: bool,

    /// Never show file names.
    #[arg(short = 'I', long = "no-filename")]
    pub no_filename: bool,

    /// Stop after NUM selected lines per file.
    #[arg(short = 'm', long = "max-count", value_name = "NUM")]
    pub max_count: Option<u64>,

    /// Show NUM lines after each match.
    #[arg(short = 'A', long = "after-context", value_name = "NUM")]
    pub after_context: Option<u64>,

    /// Show NUM lines before each match.
    #[arg(short = 'B', long = "before-context", value_name = "NUM")]
    pub before_context: Option<u64>,

    /// Show NUM lines before and after each match.
    #[arg(short = 'C', long = "context", value_name = "NUM")]
    pub context: Option<u64>,

    /// --json, --explain.
    #[command(flatten)]
    pub report: ReportArgs,

    /// When to use colours.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,

    /// Print nothing; exit 0 on the first match.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,

    /// -j, --backend.
    #[command(flatten)]
    pub engine: EngineArgs,

    /// --no-mmap, -z.
    #[command(flatten)]
    pub input: InputArgs,

    /// GPU kernel (brute-line, brute-byte, two-phase, scan, signature; for
    /// several literals: trie, ac, prefix-hash, bloom).
    #[arg(long = "gpu-kernel", value_name = "NAME")]
    pub gpu_kernel: Option<String>,

    /// --count-per-pattern, --patterns-matched: a per-pattern report
    /// instead of lines.
    #[command(flatten)]
    pub per_pattern: PerPatternArgs,

    /// Time window and aggregation (--since, --until, --count-by,
    /// --histogram, --field, --time-format, --year): print counts instead
    /// of lines.
    #[command(flatten)]
    pub pipeline: PipelineArgs,

    /// Which files are read (--hidden, --no-ignore, -L, -g, -t, --files, ...).
    #[command(flatten)]
    pub walk: WalkArgs,

    /// Ask a running `logsieve serve` at URL (`http://HOST:PORT`) instead
    /// of reading files; paths name its served files. Also
    /// `LOGSIEVE_SERVER`.
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
}

/// `logsieve stats`: the shared flags, some worded for counting.
#[derive(Args, Debug)]
#[command(
    mut_arg("regexp", |a| a.help("Only lines matching PATTERN (repeatable: any of them)")),
    mut_arg("ignore_case", |a| a.help("Case-insensitive search")),
    mut_arg("invert_match", |a| a.help("Select lines NOT matching the patterns")),
    mut_arg("json", |a| a.help("Print the result as one JSON object")),
    mut_arg("threads", |a| a.help("Threads (0 = all cores)")),
    mut_arg("backend", |a| a.help("Which backend runs the pipeline")),
    mut_arg("search_zip", |a| a.help("Read compressed files: gzip, bzip2, xz, lzma, lzip, zstd, lz4")),
    mut_arg("explain", |a| a.help("Print the backend, the detected formats and timings on stderr")),
)]
pub struct StatsArgs {
    /// Files or directories (default: stdin when piped, else `./`).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// -e, -F, -i, -w, -v.
    #[command(flatten)]
    pub gpus: super::gpus::GpuArgs,
    #[command(flatten)]
    pub matching: MatchArgs,

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

    /// --no-mmap, -z.
    #[command(flatten)]
    pub input: InputArgs,

    /// Which files are read (--hidden, --no-ignore, -L, -g, -t, --files, ...).
    #[command(flatten)]
    pub walk: WalkArgs,

    /// Ask a running `logsieve serve` at URL (`http://HOST:PORT`) instead
    /// of reading files; paths name its served files. Also
    /// `LOGSIEVE_SERVER`.
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
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
