//! Flag groups shared by `search` and `stats`: what matches, how files are
//! read, which engine runs, how the result is reported, and the stats
//! (time window and aggregation) flags.

use std::ffi::OsString;

use clap::{Args, ValueEnum};

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

impl BackendArg {
    /// The library's choice for this flag value.
    pub fn choice(self) -> logsieve::BackendChoice {
        match self {
            BackendArg::Auto => logsieve::BackendChoice::Auto,
            BackendArg::Cpu => logsieve::BackendChoice::Cpu,
            BackendArg::Gpu => logsieve::BackendChoice::Gpu,
        }
    }
}

/// What matches: the patterns given as flags and how they are read.
#[derive(Args, Debug, Default, Clone)]
pub struct MatchArgs {
    /// A pattern to search for (repeatable).
    #[arg(
        short = 'e',
        long = "regexp",
        value_name = "PATTERN",
        allow_hyphen_values = true
    )]
    pub regexp: Vec<OsString>,

    /// Treat patterns as literal strings.
    #[arg(short = 'F', long = "fixed-strings")]
    pub fixed_strings: bool,

    /// Case-insensitive search (Unicode-aware; ASCII folding for ASCII literals).
    #[arg(short = 'i', long = "ignore-case", overrides_with_all = ["smart_case", "case_sensitive"])]
    pub ignore_case: bool,

    /// Case-insensitive when every pattern is all lowercase (the last of
    /// -i, -s and -S wins, as in rg).
    #[arg(short = 'S', long = "smart-case", overrides_with_all = ["ignore_case", "case_sensitive"])]
    pub smart_case: bool,

    /// Case-sensitive search (the default; overrides -i and -S).
    #[arg(short = 's', long = "case-sensitive", overrides_with_all = ["ignore_case", "smart_case"])]
    pub case_sensitive: bool,

    /// Only match whole words.
    #[arg(short = 'w', long = "word-regexp")]
    pub word_regexp: bool,

    /// Select non-matching lines.
    #[arg(short = 'v', long = "invert-match")]
    pub invert_match: bool,
}

impl MatchArgs {
    /// Whether the search folds case: `-i`, or `-S` with no uppercase
    /// letter in any pattern (ripgrep's smart case; an escape such as `\S`
    /// or `\W` is not a letter of the pattern).
    pub fn fold_case<P: AsRef<[u8]>>(&self, patterns: &[P], regex: bool) -> bool {
        if self.ignore_case {
            return true;
        }
        if !self.smart_case {
            return false;
        }
        !patterns.iter().any(|p| has_uppercase(p.as_ref(), regex))
    }
}

fn has_uppercase(p: &[u8], regex: bool) -> bool {
    let s = String::from_utf8_lossy(p);
    let mut escaped = false;
    for c in s.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        if regex && c == '\\' {
            escaped = true;
            continue;
        }
        if c.is_uppercase() {
            return true;
        }
    }
    false
}

/// How files are read.
#[derive(Args, Debug, Default, Clone, Copy)]
pub struct InputArgs {
    /// Read files instead of memory-mapping them.
    #[arg(long = "no-mmap")]
    pub no_mmap: bool,

    /// Search inside compressed files (gzip, bzip2, xz, lzma, lzip, zstd,
    /// lz4; told by their magic bytes).
    #[arg(short = 'z', long = "search-zip")]
    pub search_zip: bool,

    /// Search binary files as if they were text: no "binary file matches"
    /// line, and binary files found in directories are not skipped.
    #[arg(short = 'a', long = "text")]
    pub text: bool,
}

impl InputArgs {
    /// The library's load options for these flags.
    pub fn load_options(self) -> logsieve::LoadOptions {
        logsieve::LoadOptions {
            no_mmap: self.no_mmap,
            search_zip: self.search_zip,
        }
    }
}

/// Which engine runs, on how many threads.
#[derive(Args, Debug, Clone, Copy)]
pub struct EngineArgs {
    /// Threads for one file: 0 = all cores (the default; a file is split
    /// into chunks of at least 4 MiB, so small files use one thread).
    #[arg(short = 'j', long = "threads", value_name = "N", default_value_t = 0)]
    pub threads: usize,

    /// Which backend runs the search.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,
}

/// How the result is reported: JSON on stdout, the decision on stderr.
#[derive(Args, Debug, Default, Clone, Copy)]
pub struct ReportArgs {
    /// Print results as JSON Lines (ripgrep's schema).
    #[arg(long)]
    pub json: bool,

    /// Print the planner's decision and timing on stderr.
    #[arg(long)]
    pub explain: bool,
}

/// `--count-per-pattern`, `--patterns-matched`: a per-pattern report
/// instead of lines (`search` only).
#[derive(Args, Debug, Default)]
pub struct PerPatternArgs {
    /// For each pattern, the lines containing it (with -o also its
    /// occurrences), as a table (index, lines, [occurrences,] pattern) or
    /// with --json one object per pattern; patterns with no hit included.
    #[arg(long = "count-per-pattern", conflicts_with_all = ["invert_match", "count", "files_with_matches", "quiet", "max_count"])]
    pub count_per_pattern: bool,

    /// Print only the patterns found (one per line, in pattern order); with
    /// --count-per-pattern, only their rows.
    #[arg(long = "patterns-matched", conflicts_with_all = ["invert_match", "count", "files_with_matches", "quiet", "max_count"])]
    pub patterns_matched: bool,
}

impl PerPatternArgs {
    /// True when a per-pattern report replaces the search output.
    pub fn active(&self) -> bool {
        self.count_per_pattern || self.patterns_matched
    }
}

/// The stats flags (time window and aggregation), shared by `search` and
/// `stats`.
#[derive(Args, Debug, Default, Clone)]
pub struct PipelineArgs {
    /// Only lines at or after T: a duration before the newest entry (15m,
    /// 2h, 1d, 1h30m) or a time (2026-11-20T12:00:00Z, 2026-11-20).
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub since: Option<String>,

    /// Only lines before T (same forms as --since).
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub until: Option<String>,

    /// Count selected lines by FIELD (level, host, or a --field);
    /// repeat for nested keys.
    #[arg(long = "count-by", value_name = "FIELD")]
    pub count_by: Vec<String>,

    /// Count selected lines per time bucket (e.g. 1m, 15m, 1h).
    #[arg(long, value_name = "BUCKET")]
    pub histogram: Option<String>,

    /// A field NAME=REGEX: the first capture group, or the whole match
    /// (repeatable).
    #[arg(long = "field", value_name = "NAME=REGEX")]
    pub field: Vec<String>,

    /// Timestamp format (default: detected per file): iso, apache, clf,
    /// slash, compact, dashed, syslog, logcat, month-dot, epoch.
    #[arg(long = "time-format", value_name = "NAME")]
    pub time_format: Option<String>,

    /// Year of year-less timestamps (syslog, logcat); default: each
    /// file's modification year.
    #[arg(long, value_name = "YEAR")]
    pub year: Option<i32>,
}

impl PipelineArgs {
    /// True when a flag asks for the pipeline.
    pub fn active(&self) -> bool {
        self.since.is_some()
            || self.until.is_some()
            || !self.count_by.is_empty()
            || self.histogram.is_some()
    }
}
