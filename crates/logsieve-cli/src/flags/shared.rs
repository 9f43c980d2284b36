//! Flag groups shared by `search` and `stats`: what matches, how files are
//! read, which engine runs, how the result is reported, and the stats
//! (time window and aggregation) flags.

use std::ffi::OsString;

use clap::{Args, ValueEnum};

use super::heading;

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
        allow_hyphen_values = true,
        help_heading = heading::INPUT
    )]
    pub regexp: Vec<OsString>,

    /// Treat patterns as literal strings.
    #[arg(short = 'F', long = "fixed-strings", help_heading = heading::SEARCH)]
    pub fixed_strings: bool,

    /// Case-insensitive search.
    ///
    /// Unicode-aware; ASCII folding for ASCII literals.
    #[arg(
        short = 'i',
        long = "ignore-case",
        overrides_with_all = ["smart_case", "case_sensitive"],
        help_heading = heading::SEARCH
    )]
    pub ignore_case: bool,

    /// Case-insensitive when every pattern is all lowercase.
    ///
    /// The last of -i, -s and -S wins, as in rg.
    #[arg(
        short = 'S',
        long = "smart-case",
        overrides_with_all = ["ignore_case", "case_sensitive"],
        help_heading = heading::SEARCH
    )]
    pub smart_case: bool,

    /// Case-sensitive search (the default).
    ///
    /// Overrides -i and -S.
    #[arg(
        short = 's',
        long = "case-sensitive",
        overrides_with_all = ["ignore_case", "smart_case"],
        help_heading = heading::SEARCH
    )]
    pub case_sensitive: bool,

    /// Only match whole words.
    #[arg(short = 'w', long = "word-regexp", help_heading = heading::SEARCH)]
    pub word_regexp: bool,

    /// Select non-matching lines.
    #[arg(short = 'v', long = "invert-match", help_heading = heading::SEARCH)]
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
    #[arg(long = "no-mmap", help_heading = heading::INPUT)]
    pub no_mmap: bool,

    /// Search inside compressed files.
    ///
    /// gzip, bzip2, xz, lzma, lzip, zstd and lz4, told by their magic
    /// bytes.
    #[arg(short = 'z', long = "search-zip", help_heading = heading::INPUT)]
    pub search_zip: bool,

    /// Search binary files as if they were text.
    ///
    /// No "binary file matches" line, and binary files found in directories
    /// are not skipped.
    #[arg(short = 'a', long = "text", help_heading = heading::SEARCH)]
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
    /// Threads for one file (0: all cores).
    ///
    /// A file is split into chunks of at least 4 MiB, so small files use
    /// one thread.
    #[arg(
        short = 'j',
        long = "threads",
        value_name = "N",
        default_value_t = 0,
        help_heading = heading::ENGINE
    )]
    pub threads: usize,

    /// Which backend runs the search.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto, help_heading = heading::ENGINE)]
    pub backend: BackendArg,
}

/// How the result is reported: JSON on stdout, the decision on stderr.
#[derive(Args, Debug, Default, Clone, Copy)]
pub struct ReportArgs {
    /// Print results as JSON Lines (ripgrep's schema).
    #[arg(long, help_heading = heading::MODES)]
    pub json: bool,

    /// Print the planner's decision and timing on stderr.
    #[arg(long, help_heading = heading::ENGINE)]
    pub explain: bool,
}

/// `--count-per-pattern`, `--patterns-matched`: a per-pattern report
/// instead of lines (`search` only).
#[derive(Args, Debug, Default)]
pub struct PerPatternArgs {
    /// For each pattern, the lines containing it, as a table.
    ///
    /// With -o also its occurrences: the table's columns are index, lines,
    /// [occurrences,] pattern; with --json, one object per pattern.
    /// Patterns with no hit are included.
    #[arg(
        long = "count-per-pattern",
        conflicts_with_all = ["invert_match", "count", "files_with_matches", "quiet", "max_count"],
        help_heading = heading::MODES
    )]
    pub count_per_pattern: bool,

    /// Print only the patterns found, one per line.
    ///
    /// In pattern order; with --count-per-pattern, only their rows.
    #[arg(
        long = "patterns-matched",
        conflicts_with_all = ["invert_match", "count", "files_with_matches", "quiet", "max_count"],
        help_heading = heading::MODES
    )]
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
    /// Only lines at or after T.
    ///
    /// T is a duration before the newest entry (15m, 2h, 1d, 1h30m) or a
    /// time (2026-11-20T12:00:00Z, 2026-11-20).
    #[arg(long, value_name = "T", allow_hyphen_values = true, help_heading = heading::STATS)]
    pub since: Option<String>,

    /// Only lines before T (same forms as --since).
    #[arg(long, value_name = "T", allow_hyphen_values = true, help_heading = heading::STATS)]
    pub until: Option<String>,

    /// Count selected lines by FIELD (level, host, or a --field).
    ///
    /// Repeat for nested keys.
    #[arg(long = "count-by", value_name = "FIELD", help_heading = heading::STATS)]
    pub count_by: Vec<String>,

    /// Count selected lines per time bucket (e.g. 1m, 15m, 1h), or `auto`.
    ///
    /// `auto` picks the smallest round bucket (1s, 5s, 10s, 30s, 1m, 5m,
    /// 10m, 15m, 30m, 1h, 3h, 6h, 12h, 1d, 1w) that cuts the selected span
    /// into at most 60 buckets, and the text report says which. The text
    /// report skips empty buckets (--include-zero shows them); --json
    /// lists every bucket.
    #[arg(long, value_name = "BUCKET", help_heading = heading::STATS)]
    pub histogram: Option<String>,

    /// With -c, print the 0 of files without a selected line too.
    ///
    /// With --histogram, the text report shows empty buckets too.
    #[arg(long = "include-zero", help_heading = heading::OUTPUT)]
    pub include_zero: bool,

    /// A field NAME=REGEX for --count-by (repeatable).
    ///
    /// Its value is the first capture group, or the whole match.
    #[arg(long = "field", value_name = "NAME=REGEX", help_heading = heading::STATS)]
    pub field: Vec<String>,

    /// Timestamp format (default: detected per file).
    ///
    /// One of iso, apache, clf, slash, compact, dashed, syslog, logcat,
    /// month-dot, epoch.
    #[arg(long = "time-format", value_name = "NAME", help_heading = heading::STATS)]
    pub time_format: Option<String>,

    /// Year of year-less timestamps (syslog, logcat).
    ///
    /// Default: each file's modification year.
    #[arg(long, value_name = "YEAR", help_heading = heading::STATS)]
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

/// `--field`, `--time-format`, `--year`: the columns of a resident
/// corpus (`serve`, `sql`, `cluster worker`; every worker of a cluster
/// needs the same).
#[derive(Args, Clone, Debug, Default)]
pub struct ColumnArgs {
    /// A field column NAME=REGEX (the first capture group, else the
    /// match), besides level and host. Repeatable.
    #[arg(long = "field", value_name = "NAME=REGEX", help_heading = heading::STATS)]
    pub field: Vec<String>,

    /// Force one timestamp format (default: detected per file;
    /// `logsieve stats --help` lists them).
    #[arg(long = "time-format", value_name = "NAME", help_heading = heading::STATS)]
    pub time_format: Option<String>,

    /// The year of year-less timestamps (default: each file's
    /// modification year).
    #[arg(long, value_name = "YEAR", help_heading = heading::STATS)]
    pub year: Option<i32>,
}
