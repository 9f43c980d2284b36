//! Command-line flags. Names follow ripgrep (and grep where rg agrees).

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// GPU-accelerated log search.
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
    /// Serve the browser page (built by scripts/build-web.sh) on 127.0.0.1.
    Web(crate::web::WebArgs),
    /// Count lines in a time window by field or time bucket (optionally
    /// only those matching -e PATTERN).
    Stats(crate::stats::StatsArgs),
    /// Reproduce the reference tables (CPU, GPU kernels, auto, rg, grep).
    Bench(BenchArgs),
}

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

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    Auto,
    Cpu,
    Gpu,
}

#[derive(Args, Debug)]
pub struct SearchArgs {
    /// The pattern, then the paths. With -e or -f, every positional
    /// argument is a path. No path: stdin when piped, else the current
    /// directory.
    #[arg(value_name = "PATTERN [PATH]")]
    pub positional: Vec<OsString>,

    /// A pattern to search for (repeatable).
    #[arg(
        short = 'e',
        long = "regexp",
        value_name = "PATTERN",
        allow_hyphen_values = true
    )]
    pub regexp: Vec<OsString>,

    /// Read patterns from FILE, one per line (repeatable; `-` is stdin).
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    pub file: Vec<PathBuf>,

    /// Treat patterns as literal strings.
    #[arg(short = 'F', long = "fixed-strings")]
    pub fixed_strings: bool,

    /// Patterns are wildcards: `*` any run of bytes, `?` one byte.
    #[arg(long, conflicts_with_all = ["fixed_strings", "fuzzy"])]
    pub wildcard: bool,

    /// Lines holding the pattern within K edits (0..=3), like agrep.
    #[arg(long, value_name = "K", conflicts_with = "fixed_strings")]
    pub fuzzy: Option<u8>,

    /// Case-insensitive search (Unicode-aware; ASCII folding for ASCII literals).
    #[arg(short = 'i', long = "ignore-case")]
    pub ignore_case: bool,

    /// Only match whole words.
    #[arg(short = 'w', long = "word-regexp")]
    pub word_regexp: bool,

    /// Only match whole lines.
    #[arg(short = 'x', long = "line-regexp")]
    pub line_regexp: bool,

    /// Select non-matching lines.
    #[arg(short = 'v', long = "invert-match")]
    pub invert_match: bool,

    /// Print the number of selected lines per file.
    #[arg(short = 'c', long = "count")]
    pub count: bool,

    /// Print only the paths of files with a selected line.
    #[arg(short = 'l', long = "files-with-matches")]
    pub files_with_matches: bool,

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

    /// Print results as JSON Lines (ripgrep's schema).
    #[arg(long)]
    pub json: bool,

    /// When to use colours.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,

    /// Print nothing; exit 0 on the first match.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,

    /// Threads for one file: 0 = all cores (the default; a file is split
    /// into chunks of at least 4 MiB, so small files use one thread).
    #[arg(short = 'j', long = "threads", value_name = "N", default_value_t = 0)]
    pub threads: usize,

    /// Read files instead of memory-mapping them.
    #[arg(long = "no-mmap")]
    pub no_mmap: bool,

    /// Search inside .gz files (multi-member gzip).
    #[arg(short = 'z', long = "search-zip")]
    pub search_zip: bool,

    /// Which backend runs the search.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,

    /// GPU kernel (brute-line, brute-byte, two-phase, scan, signature; for
    /// several literals: trie, ac, prefix-hash, bloom).
    #[arg(long = "gpu-kernel", value_name = "NAME")]
    pub gpu_kernel: Option<String>,

    /// Print the planner's decision and timing on stderr.
    #[arg(long)]
    pub explain: bool,

    /// --count-per-pattern, --patterns-matched: a per-pattern report
    /// instead of lines.
    #[command(flatten)]
    pub per_pattern: crate::patterns::PatternArgs,

    /// Time window and aggregation (--since, --until, --count-by,
    /// --histogram, --field, --time-format, --year): print counts instead
    /// of lines.
    #[command(flatten)]
    pub pipeline: crate::stats::PipelineArgs,

    /// Which files are read (--hidden, --no-ignore, -L, -g, -t, --files, ...).
    #[command(flatten)]
    pub walk: crate::walk_args::WalkArgs,
}

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
