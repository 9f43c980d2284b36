//! `logsieve stats` and the aggregation flags of `logsieve search`: time
//! window → optional search → count by fields / histogram.

use std::ffi::OsString;
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use logsieve::corpus::Walker;
use logsieve::pipeline::{
    self, format_ms, ColumnOptions, Columns, FieldSpec, Stats, StatsQuery, TimeFormat,
};
use logsieve::{
    Answer, BackendChoice, Corpus, Document, LoadOptions, Query, QueryBuilder, Request,
    SearchOptions, Session, Syntax, Tuning, Want,
};

use crate::args::{BackendArg, SearchArgs};
use crate::search::{err, EXIT_ERROR, EXIT_MATCH, EXIT_NO_MATCH};
use crate::walk_args::WalkArgs;

/// The pipeline flags, shared by `search` and `stats`.
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

/// `logsieve stats`.
#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Files or directories (default: stdin when piped, else `./`).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Only lines matching PATTERN (repeatable: any of them).
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

    /// Case-insensitive search.
    #[arg(short = 'i', long = "ignore-case")]
    pub ignore_case: bool,

    /// Only match whole words.
    #[arg(short = 'w', long = "word-regexp")]
    pub word_regexp: bool,

    /// Select lines NOT matching the patterns.
    #[arg(short = 'v', long = "invert-match")]
    pub invert_match: bool,

    #[command(flatten)]
    pub pipeline: PipelineArgs,

    /// Which files are read (--hidden, --no-ignore, -L, -g, -t, --files, ...).
    #[command(flatten)]
    pub walk: WalkArgs,

    /// Print the result as one JSON object.
    #[arg(long)]
    pub json: bool,

    /// Threads (0 = all cores).
    #[arg(short = 'j', long = "threads", value_name = "N", default_value_t = 0)]
    pub threads: usize,

    /// Which backend runs the pipeline.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,

    /// Read files instead of memory-mapping them.
    #[arg(long = "no-mmap")]
    pub no_mmap: bool,

    /// Read .gz files (multi-member gzip).
    #[arg(short = 'z', long = "search-zip")]
    pub search_zip: bool,

    /// Print the backend, the detected formats and timings on stderr.
    #[arg(long)]
    pub explain: bool,
}

/// Everything one run needs, from either subcommand.
struct Job<'a> {
    patterns: Vec<Vec<u8>>,
    builder: QueryBuilder,
    paths: Vec<PathBuf>,
    pipe: &'a PipelineArgs,
    json: bool,
    threads: usize,
    backend: BackendArg,
    load: LoadOptions,
    walk: &'a WalkArgs,
    explain: bool,
}

fn os_bytes(s: &OsString) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        s.as_os_str().as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        s.to_string_lossy().into_owned().into_bytes()
    }
}

/// `logsieve stats`; returns the exit code.
pub fn run(a: &StatsArgs) -> i32 {
    if a.walk.lists() {
        return crate::walk_args::list(&a.paths, &a.walk);
    }
    let mut b = QueryBuilder::new();
    b.syntax(if a.fixed_strings {
        Syntax::Fixed
    } else {
        Syntax::Regex
    })
    .case_insensitive(a.ignore_case)
    .word(a.word_regexp)
    .invert(a.invert_match);
    execute(Job {
        patterns: a.regexp.iter().map(os_bytes).collect(),
        builder: b,
        paths: a.paths.clone(),
        pipe: &a.pipeline,
        json: a.json,
        threads: a.threads,
        backend: a.backend,
        load: LoadOptions {
            no_mmap: a.no_mmap,
            search_zip: a.search_zip,
        },
        walk: &a.walk,
        explain: a.explain,
    })
}

/// `logsieve search` with a pipeline flag: the same patterns and paths, the
/// aggregate printed instead of the lines.
pub fn run_search(a: &SearchArgs) -> i32 {
    let mut patterns: Vec<Vec<u8>> = a.regexp.iter().map(os_bytes).collect();
    for f in &a.file {
        let data = if f.as_os_str() == "-" {
            let mut v = Vec::new();
            io::Read::read_to_end(&mut io::stdin().lock(), &mut v).map(|_| v)
        } else {
            std::fs::read(f)
        };
        match data {
            Ok(d) => {
                let mut ps: Vec<Vec<u8>> = d.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
                if d.ends_with(b"\n") || d.is_empty() {
                    ps.pop();
                }
                patterns.extend(ps);
            }
            Err(e) => {
                err(format!("{}: {e}", f.display()));
                return EXIT_ERROR;
            }
        }
    }
    let mut positional = a.positional.iter();
    if a.regexp.is_empty() && a.file.is_empty() {
        match positional.next() {
            Some(p) => patterns.push(os_bytes(p)),
            None => {
                err("no pattern given (without a pattern, use `logsieve stats`)");
                return EXIT_ERROR;
            }
        }
    }
    let mut b = QueryBuilder::new();
    b.syntax(if let Some(k) = a.fuzzy {
        Syntax::Fuzzy(k)
    } else if a.wildcard {
        Syntax::Wildcard
    } else if a.fixed_strings {
        Syntax::Fixed
    } else {
        Syntax::Regex
    })
    .case_insensitive(a.ignore_case)
    .word(a.word_regexp)
    .whole_line(a.line_regexp)
    .invert(a.invert_match);
    if patterns.is_empty() {
        // `-f empty-file`: nothing can match.
        return EXIT_NO_MATCH;
    }
    execute(Job {
        patterns,
        builder: b,
        paths: positional.map(PathBuf::from).collect(),
        pipe: &a.pipeline,
        json: a.json,
        threads: a.threads,
        backend: a.backend,
        load: LoadOptions {
            no_mmap: a.no_mmap,
            search_zip: a.search_zip,
        },
        walk: &a.walk,
        explain: a.explain,
    })
}

/// The year of a file's modification time (UTC), or of now.
/// A file's modification time in ms since the epoch (now for stdin or an
/// unreadable time): year-less timestamps take the most recent year that
/// does not put them after it.
fn mtime_ms(path: &Path) -> i64 {
    let t = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or_else(|_| std::time::SystemTime::now());
    match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_millis() as i64,
        Err(e) => -(e.duration().as_millis() as i64),
    }
}

fn parse_bucket(s: &str) -> Result<i64, String> {
    match pipeline::time::parse_duration(s.trim()) {
        Some(ms) if ms > 0 => Ok(ms),
        _ => Err(format!(
            "--histogram {s:?}: expected a positive duration (30s, 1m, 15m, 1h, 1d)"
        )),
    }
}

fn execute(job: Job) -> i32 {
    let t0 = Instant::now();
    let pipe = job.pipe;
    // Validate every flag before loading anything.
    let query: Option<Query> = if job.patterns.is_empty() {
        None
    } else {
        match job.builder.build(&job.patterns) {
            Ok(q) => Some(q),
            Err(e) => {
                err(e);
                return EXIT_ERROR;
            }
        }
    };
    let since = match pipe
        .since
        .as_deref()
        .map(pipeline::TimeSpec::parse)
        .transpose()
    {
        Ok(s) => s,
        Err(e) => {
            err(format!("--since: {e}"));
            return EXIT_ERROR;
        }
    };
    let until = match pipe
        .until
        .as_deref()
        .map(pipeline::TimeSpec::parse)
        .transpose()
    {
        Ok(s) => s,
        Err(e) => {
            err(format!("--until: {e}"));
            return EXIT_ERROR;
        }
    };
    let bucket = match pipe.histogram.as_deref().map(parse_bucket).transpose() {
        Ok(b) => b,
        Err(e) => {
            err(e);
            return EXIT_ERROR;
        }
    };
    let time_format = match pipe.time_format.as_deref() {
        None => None,
        Some(n) => match TimeFormat::from_name(n) {
            Some(f) => Some(f),
            None => {
                let names: Vec<&str> = TimeFormat::ALL.iter().map(|f| f.name()).collect();
                err(format!(
                    "--time-format {n:?}: unknown format (one of {})",
                    names.join(", ")
                ));
                return EXIT_ERROR;
            }
        },
    };
    let mut user_fields = Vec::new();
    for f in &pipe.field {
        match FieldSpec::parse(f) {
            Ok(f) => user_fields.push(f),
            Err(e) => {
                err(e);
                return EXIT_ERROR;
            }
        }
    }
    // Only the fields counted by are extracted.
    let mut fields: Vec<FieldSpec> = Vec::new();
    for name in &pipe.count_by {
        if fields.iter().any(|f| &f.name == name) {
            continue;
        }
        let f = user_fields
            .iter()
            .find(|f| &f.name == name)
            .cloned()
            .or_else(|| FieldSpec::builtin(name));
        match f {
            Some(f) => fields.push(f),
            None => {
                err(format!(
                    "--count-by {name:?}: unknown field (built in: level, host; define one with --field {name}=REGEX)"
                ));
                return EXIT_ERROR;
            }
        }
    }

    // Load.
    let (corpus, mut had_error) = load(&job.paths, job.load, job.walk);
    // `--year` decides for every file; otherwise each file's
    // modification time does.
    let years: Vec<i32> = job
        .pipe
        .year
        .map_or_else(Vec::new, |y| vec![y; corpus.docs().len()]);
    let mtimes: Vec<Option<i64>> = corpus
        .docs()
        .iter()
        .map(|d| {
            Some(if d.name() == "<stdin>" {
                mtime_ms(Path::new(""))
            } else {
                mtime_ms(Path::new(d.name()))
            })
        })
        .collect();
    let t_load = t0.elapsed();
    let t1 = Instant::now();
    let mut session = Session::with_tuning(corpus, Tuning::from_env());
    let cols = Columns::build(
        session.corpus(),
        &ColumnOptions {
            time_format,
            year: pipe.year.unwrap_or(1970),
            doc_years: years,
            doc_mtimes: mtimes,
            fields,
        },
    );
    let t_cols = t1.elapsed();
    let newest = cols.newest().unwrap_or(0);
    let field_idx: Vec<usize> = pipe
        .count_by
        .iter()
        .filter_map(|n| cols.field_index(n))
        .collect();
    session.set_columns(cols);
    let q = StatsQuery {
        search: query.as_ref(),
        since: since.map(|s| s.resolve(newest)),
        until: until.map(|s| s.resolve(newest)),
        count_by: field_idx,
        histogram: bucket,
    };
    let opts = SearchOptions {
        backend: match job.backend {
            BackendArg::Auto => BackendChoice::Auto,
            BackendArg::Cpu => BackendChoice::Cpu,
            BackendArg::Gpu => BackendChoice::Gpu,
        },
        threads: job.threads,
        want: Want::Count,
        ..Default::default()
    };
    let t2 = Instant::now();
    let req = Request::Stats(&q);
    let answer = session
        .prepare(&req, &opts)
        .and_then(|route| session.execute(&req, &route, &opts));
    let (stats, report) = match answer {
        Ok(Answer::Stats(s, r)) => (s, r),
        Ok(_) => unreachable!("a stats request is answered by stats"),
        Err(e) => {
            err(e);
            return EXIT_ERROR;
        }
    };
    let (corpus, cols) = (session.corpus(), session.columns().expect("set above"));
    let t_run = t2.elapsed();
    if job.explain {
        let mut s = String::new();
        for (d, dc) in corpus.docs().iter().zip(cols.docs()) {
            let rules: Vec<String> = dc
                .rules
                .rules
                .iter()
                .map(|(f, k)| format!("{f}@field{k}"))
                .collect();
            s.push_str(&format!(
                "explain: {}: time {} ({} of {} lines stamped, {}, year {})\n",
                d.name(),
                if rules.is_empty() {
                    "none".to_string()
                } else {
                    rules.join(", ")
                },
                dc.stamped,
                dc.times.len(),
                if dc.sorted { "sorted" } else { "unsorted" },
                dc.year
            ));
        }
        s.push_str(&format!("explain: backend {report}\n"));
        s.push_str(&format!(
            "explain: load {:.1} ms, columns {:.1} ms, query {:.3} ms\n",
            t_load.as_secs_f64() * 1e3,
            t_cols.as_secs_f64() * 1e3,
            t_run.as_secs_f64() * 1e3
        ));
        let _ = io::stderr().write_all(s.as_bytes());
    }
    let out = io::stdout();
    let mut out = io::BufWriter::new(out.lock());
    let res = if job.json {
        print_json(&mut out, cols, &q, &stats, &pipe.count_by, &report.name)
    } else {
        print_text(&mut out, &q, &stats, &pipe.count_by)
    };
    if let Err(e) = res.and_then(|_| out.flush()) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            err(e);
            had_error = true;
        }
    }
    if had_error {
        EXIT_ERROR
    } else if stats.selected > 0 {
        EXIT_MATCH
    } else {
        EXIT_NO_MATCH
    }
}

/// Loads the paths (stdin when none and piped, `-` for stdin, directories
/// walked as `walk` says, files a walk finds binary skipped as rg does);
/// errors and incomplete files (cut streams, files that shrank) are
/// reported and flagged, the rest is loaded. Shared by `search` and `stats`.
pub(crate) fn load(paths: &[PathBuf], opts: LoadOptions, walk: &WalkArgs) -> (Corpus, bool) {
    let mut corpus = Corpus::new();
    let mut had_error = false;
    let read_stdin = paths.is_empty() && !io::stdin().is_terminal();
    if read_stdin {
        match Document::stdin() {
            Ok(d) => corpus.push(d),
            Err(e) => {
                err(e);
                had_error = true;
            }
        }
        return (corpus, had_error);
    }
    let walker = match Walker::new(&walk.options()) {
        Ok(w) => w,
        Err(e) => {
            err(e);
            return (corpus, true);
        }
    };
    let paths = if paths.is_empty() {
        vec![PathBuf::from("./")]
    } else {
        paths.to_vec()
    };
    for found in walker.walk(&paths) {
        let loaded = found.and_then(|f| {
            if f.path.as_os_str() == "-" {
                Document::stdin().map(Some)
            } else if f.explicit {
                Document::open(&f.path, opts).map(Some)
            } else {
                Document::open_found(&f.path, opts)
            }
        });
        match loaded {
            Ok(Some(d)) => {
                if let Some(w) = d.warning() {
                    err(w);
                    had_error = true;
                }
                corpus.push(d);
            }
            // Binary, found by the walk: skipped without a word (rg).
            Ok(None) => {}
            Err(e) => {
                err(e);
                had_error = true;
            }
        }
    }
    (corpus, had_error)
}

fn show(v: &Option<Vec<u8>>) -> String {
    match v {
        Some(b) => String::from_utf8_lossy(b).into_owned(),
        None => "(none)".to_string(),
    }
}

fn window_line(q: &StatsQuery) -> String {
    match (q.since, q.until) {
        (None, None) => String::new(),
        (s, u) => format!(
            " in [{}, {})",
            s.map_or("-".to_string(), format_ms),
            u.map_or("-".to_string(), format_ms)
        ),
    }
}

fn print_text<W: Write>(
    out: &mut W,
    q: &StatsQuery,
    s: &Stats,
    names: &[String],
) -> io::Result<()> {
    writeln!(out, "selected {} lines{}", s.selected, window_line(q))?;
    if !names.is_empty() {
        writeln!(out)?;
        let cw = s
            .groups
            .iter()
            .map(|g| g.count.to_string().len())
            .max()
            .unwrap_or(0)
            .max(5);
        let mut widths: Vec<usize> = names.iter().map(|n| n.len()).collect();
        for g in &s.groups {
            for (w, v) in widths.iter_mut().zip(&g.key) {
                *w = (*w).max(show(v).chars().count());
            }
        }
        write!(out, "{:>cw$}", "count")?;
        for (n, w) in names.iter().zip(&widths) {
            write!(out, "  {n:<w$}")?;
        }
        writeln!(out)?;
        for g in &s.groups {
            write!(out, "{:>cw$}", g.count)?;
            for (v, w) in g.key.iter().zip(&widths) {
                write!(out, "  {:<w$}", show(v))?;
            }
            writeln!(out)?;
        }
    }
    if let Some(h) = &s.histogram {
        writeln!(out)?;
        let max = h.counts.iter().copied().max().unwrap_or(0);
        let cw = max.to_string().len().max(5);
        const BAR: usize = 50;
        writeln!(out, "{:<24}  {:>cw$}", "bucket start (UTC)", "count")?;
        for (i, &c) in h.counts.iter().enumerate() {
            let t = h.start + i as i64 * h.bucket;
            let n = if max == 0 {
                0
            } else {
                ((c as u128 * BAR as u128).div_ceil(max as u128)) as usize
            };
            writeln!(out, "{:<24}  {c:>cw$} {}", format_ms(t), "█".repeat(n))?;
        }
    }
    Ok(())
}

fn print_json<W: Write>(
    out: &mut W,
    cols: &Columns,
    q: &StatsQuery,
    s: &Stats,
    names: &[String],
    backend: &str,
) -> io::Result<()> {
    use serde_json::{json, Map, Value};
    let t = |v: Option<i64>| v.map_or(Value::Null, |t| json!({"ms": t, "utc": format_ms(t)}));
    let groups: Vec<Value> = s
        .groups
        .iter()
        .map(|g| {
            let mut key = Map::new();
            for (n, v) in names.iter().zip(&g.key) {
                let v = v.as_ref().map_or(Value::Null, |b| {
                    Value::String(String::from_utf8_lossy(b).into())
                });
                key.insert(n.clone(), v);
            }
            json!({"key": key, "count": g.count})
        })
        .collect();
    let mut obj = Map::new();
    obj.insert("selected".into(), json!(s.selected));
    obj.insert("since".into(), t(q.since));
    obj.insert("until".into(), t(q.until));
    obj.insert("oldest".into(), t(cols.oldest()));
    obj.insert("newest".into(), t(cols.newest()));
    if !names.is_empty() {
        obj.insert("count_by".into(), json!(names));
        obj.insert("groups".into(), Value::Array(groups));
    }
    if let Some(h) = &s.histogram {
        let buckets: Vec<Value> = h
            .counts
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let st = h.start + i as i64 * h.bucket;
                json!({"start_ms": st, "start": format_ms(st), "count": c})
            })
            .collect();
        obj.insert(
            "histogram".into(),
            json!({"bucket_ms": h.bucket, "buckets": buckets}),
        );
    }
    obj.insert("backend".into(), json!(backend));
    serde_json::to_writer(&mut *out, &Value::Object(obj))?;
    writeln!(out)
}
