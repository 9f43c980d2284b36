//! `logsieve stats` and the aggregation flags of `logsieve search`: time
//! window → optional search → count by fields / histogram.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use logsieve::stats::{self, ColumnOptions, Columns, FieldSpec, StatsQuery, TimeFormat};
use logsieve::{
    Answer, Query, QueryBuilder, Request, SearchOptions, Session, Syntax, Tuning, Want,
};

use crate::exit::{err, EXIT_ERROR, EXIT_MATCH, EXIT_NO_MATCH};
use crate::flags::shared::InputArgs;
use crate::flags::walk::WalkArgs;
use crate::flags::{BackendArg, PipelineArgs, SearchArgs, StatsArgs};
use crate::input::{self, load};
use crate::printer::stats::{print_json, print_text, TextOptions};

/// Everything one run needs, from either subcommand.
struct Job<'a> {
    patterns: Vec<Vec<u8>>,
    builder: QueryBuilder,
    paths: Vec<PathBuf>,
    pipe: &'a PipelineArgs,
    json: bool,
    threads: usize,
    backend: BackendArg,
    load: InputArgs,
    walk: &'a WalkArgs,
    explain: bool,
    tuning: &'a Tuning,
}

/// `logsieve stats`; returns the exit code.
pub fn run(a: &StatsArgs, tuning: &Tuning) -> i32 {
    if a.walk.lists() {
        return super::files::list(&a.paths, &a.walk);
    }
    let m = &a.matching;
    let patterns: Vec<Vec<u8>> = m.regexp.iter().map(input::os_to_bytes).collect();
    let mut b = QueryBuilder::new();
    b.syntax(if m.fixed_strings {
        Syntax::Fixed
    } else {
        Syntax::Regex
    })
    .case_insensitive(m.fold_case(&patterns, !m.fixed_strings))
    .word(m.word_regexp)
    .invert(m.invert_match)
    .cpu_multi(tuning.cpu_multi);
    if let Some(url) = crate::remote::server_url(&a.server) {
        return match remote(a, &patterns, &b, &url) {
            Ok(code) => code,
            Err(e) => {
                err(e);
                EXIT_ERROR
            }
        };
    }
    execute(Job {
        patterns,
        builder: b,
        paths: a.paths.clone(),
        pipe: &a.pipeline,
        json: a.report.json,
        threads: a.engine.threads,
        backend: a.engine.backend,
        load: a.input,
        walk: &a.walk,
        explain: a.report.explain,
        tuning,
    })
}

/// `stats --server URL`: `POST /api/v1/stats`; the answer is rebuilt into
/// the `Stats` the text printer reads, or (`--json`) passed through: the
/// server writes it with the same library function as a local run.
fn remote(
    a: &StatsArgs,
    patterns: &[Vec<u8>],
    builder: &QueryBuilder,
    url: &str,
) -> Result<i32, String> {
    use serde_json::Value;
    let pipe = &a.pipeline;
    // Paths name served files (as the server loaded them): stats over
    // those alone.
    let files: Vec<String> = a
        .paths
        .iter()
        .map(|p| {
            p.to_str()
                .map(str::to_string)
                .ok_or_else(|| format!("{}: not UTF-8, cannot be sent", p.display()))
        })
        .collect::<Result<_, _>>()?;
    // The server's columns were built by its own --field/--time-format/--year.
    let fixed = [
        (!pipe.field.is_empty(), "--field"),
        (pipe.time_format.is_some(), "--time-format"),
        (pipe.year.is_some(), "--year"),
    ];
    if let Some((_, flag)) = fixed.iter().find(|(on, _)| *on) {
        return Err(format!(
            "{flag} is not supported with --server: the server's columns decide (logsieve serve {flag})"
        ));
    }
    let mut req = serde_json::Map::new();
    if !patterns.is_empty() {
        let q = builder.build(patterns).map_err(|e| e.to_string())?;
        req = crate::remote::query_fields(&q, false, true)?;
    }
    if let Some(s) = &pipe.since {
        req.insert("since".into(), s.clone().into());
    }
    if let Some(u) = &pipe.until {
        req.insert("until".into(), u.clone().into());
    }
    req.insert(
        "backend".into(),
        crate::remote::backend_name(a.engine.backend).into(),
    );
    if !files.is_empty() {
        req.insert("files".into(), files.into());
    }
    let server = crate::remote::Server::parse(url)?;
    let mut auto_name = None;
    let bucket = match &pipe.histogram {
        Some(h) => Some((h, parse_bucket(h)?)),
        None => None,
    };
    match bucket {
        None => {}
        Some((h, Bucket::Ms(_))) => {
            req.insert("histogram".into(), h.clone().into());
        }
        Some((_, Bucket::Auto)) => {
            // The span is the server's: a count over the same window (no
            // search) says where it lies, then the histogram is asked for.
            let mut probe = serde_json::Map::new();
            for k in ["since", "until", "backend", "files"] {
                if let Some(v) = req.get(k) {
                    probe.insert(k.into(), v.clone());
                }
            }
            let resp = server.post("stats", &Value::Object(probe))?;
            let v: Value = serde_json::from_slice(&resp.body)
                .map_err(|e| format!("the server's answer is not JSON: {e}"))?;
            let ms = |k: &str| v[k]["ms"].as_i64();
            let (lo, hi) = span(ms("since"), ms("until"), ms("oldest"), ms("newest"));
            let (name, _) = auto_bucket(lo, hi);
            req.insert("histogram".into(), name.into());
            auto_name = Some(name);
        }
    }
    req.insert("count_by".into(), pipe.count_by.clone().into());
    let resp = server.post("stats", &Value::Object(req))?;
    let v: Value = serde_json::from_slice(&resp.body)
        .map_err(|e| format!("the server's answer is not JSON: {e}"))?;
    let selected = v["selected"].as_u64().unwrap_or(0);
    let out = io::stdout();
    let mut out = io::BufWriter::new(out.lock());
    let res = if a.report.json {
        out.write_all(&resp.body).and_then(|_| writeln!(out))
    } else {
        let q = StatsQuery {
            since: v["since"]["ms"].as_i64(),
            until: v["until"]["ms"].as_i64(),
            ..Default::default()
        };
        let groups = v["groups"]
            .as_array()
            .map(|a| a.as_slice())
            .unwrap_or_default()
            .iter()
            .map(|g| stats::Group {
                key: pipe
                    .count_by
                    .iter()
                    .map(|n| g["key"][n].as_str().map(|s| s.as_bytes().to_vec()))
                    .collect(),
                count: g["count"].as_u64().unwrap_or(0),
            })
            .collect();
        let histogram = v.get("histogram").map(|h| {
            let buckets = h["buckets"]
                .as_array()
                .map(|a| a.as_slice())
                .unwrap_or_default();
            stats::Histogram {
                start: buckets
                    .first()
                    .and_then(|b| b["start_ms"].as_i64())
                    .unwrap_or(0),
                bucket: h["bucket_ms"].as_i64().unwrap_or(0),
                counts: buckets
                    .iter()
                    .map(|b| b["count"].as_u64().unwrap_or(0))
                    .collect(),
            }
        });
        let stats = stats::Stats {
            selected,
            groups,
            histogram,
        };
        let stamped = !v["newest"].is_null();
        let opts = TextOptions {
            include_zero: pipe.include_zero,
            auto_bucket: auto_name,
        };
        print_text(&mut out, &q, &stats, &pipe.count_by, stamped, opts)
    };
    match res.and_then(|_| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e.to_string()),
        _ => Ok(if selected > 0 {
            EXIT_MATCH
        } else {
            EXIT_NO_MATCH
        }),
    }
}

/// `logsieve search` with a pipeline flag: the same patterns and paths, the
/// aggregate printed instead of the lines.
pub fn run_search(a: &SearchArgs, tuning: &Tuning) -> i32 {
    let m = &a.matching;
    let mut patterns = match input::patterns(&m.regexp, &a.file) {
        Ok(p) => p,
        Err(e) => {
            err(e);
            return EXIT_ERROR;
        }
    };
    let mut positional = a.positional.iter();
    if m.regexp.is_empty() && a.file.is_empty() {
        match positional.next() {
            Some(p) => patterns.push(input::os_to_bytes(p)),
            None => {
                err("no pattern given (without a pattern, use `logsieve stats`)");
                return EXIT_ERROR;
            }
        }
    }
    let syntax = a.syntax();
    let mut b = QueryBuilder::new();
    b.syntax(syntax)
        .case_insensitive(m.fold_case(&patterns, syntax == Syntax::Regex))
        .crlf(a.crlf)
        .word(m.word_regexp)
        .whole_line(a.line_regexp)
        .invert(m.invert_match)
        .cpu_multi(tuning.cpu_multi);
    if patterns.is_empty() {
        // `-f empty-file`: nothing can match.
        return EXIT_NO_MATCH;
    }
    execute(Job {
        patterns,
        builder: b,
        paths: positional.map(PathBuf::from).collect(),
        pipe: &a.pipeline,
        json: a.report.json,
        threads: a.engine.threads,
        backend: a.engine.backend,
        load: a.input,
        walk: &a.walk,
        explain: a.report.explain,
        tuning,
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

/// `--histogram`'s value: a bucket width, or `auto` (chosen from the span).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bucket {
    Auto,
    Ms(i64),
}

fn parse_bucket(s: &str) -> Result<Bucket, String> {
    if s.trim().eq_ignore_ascii_case("auto") {
        return Ok(Bucket::Auto);
    }
    match stats::time::parse_duration(s.trim()) {
        Some(ms) if ms > 0 => Ok(Bucket::Ms(ms)),
        _ => Err(format!(
            "--histogram {s:?}: expected a positive duration (30s, 1m, 15m, 1h, 1d) or auto"
        )),
    }
}

/// The round bucket sizes `--histogram auto` picks from, smallest first.
const AUTO_BUCKETS: [(&str, i64); 15] = [
    ("1s", 1_000),
    ("5s", 5_000),
    ("10s", 10_000),
    ("30s", 30_000),
    ("1m", 60_000),
    ("5m", 300_000),
    ("10m", 600_000),
    ("15m", 900_000),
    ("30m", 1_800_000),
    ("1h", 3_600_000),
    ("3h", 10_800_000),
    ("6h", 21_600_000),
    ("12h", 43_200_000),
    ("1d", 86_400_000),
    ("1w", 604_800_000),
];

/// `--histogram auto` cuts the span into at most this many buckets.
const AUTO_MAX_BUCKETS: i128 = 60;

/// The bucket `--histogram auto` picks for the span `[lo, hi)` (ms): the
/// smallest round size that gives at most [`AUTO_MAX_BUCKETS`] buckets,
/// counted as the histogram lays them out (the first one starts at a
/// multiple of the size, so a span may straddle one bucket more than its
/// length divided by the size); 1w past that. No span (no timestamps): 1m.
fn auto_bucket(lo: Option<i64>, hi: Option<i64>) -> (&'static str, i64) {
    let (Some(lo), Some(hi)) = (lo, hi) else {
        return AUTO_BUCKETS[4];
    };
    let buckets = |b: i64| {
        let start = lo.div_euclid(b) as i128 * b as i128;
        ((hi as i128 - start).max(0) + b as i128 - 1) / b as i128
    };
    AUTO_BUCKETS
        .iter()
        .copied()
        .find(|&(_, b)| buckets(b) <= AUTO_MAX_BUCKETS)
        .unwrap_or(AUTO_BUCKETS[AUTO_BUCKETS.len() - 1])
}

/// The span a histogram covers: the window, else the corpus's oldest and
/// newest times (the newest line in the last bucket).
fn span(
    since: Option<i64>,
    until: Option<i64>,
    oldest: Option<i64>,
    newest: Option<i64>,
) -> (Option<i64>, Option<i64>) {
    (
        since.or(oldest),
        until.or(newest.map(|n| n.saturating_add(1))),
    )
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
        .map(stats::TimeSpec::parse)
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
        .map(stats::TimeSpec::parse)
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
    let time_format = match TimeFormat::from_flag(pipe.time_format.as_deref()) {
        Ok(f) => f,
        Err(e) => {
            err(e);
            return EXIT_ERROR;
        }
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
    let mut session = Session::with_tuning(corpus, job.tuning.clone());
    let cols = Columns::build(
        session.corpus(),
        &ColumnOptions {
            time_format,
            year: pipe.year.unwrap_or_else(stats::time::current_year),
            doc_years: years,
            doc_mtimes: mtimes,
            fields,
        },
    );
    let t_cols = t1.elapsed();
    // A window or a histogram needs timestamps: say which file has none,
    // rather than print a window resolved against 1970.
    let timed = since.is_some() || until.is_some() || bucket.is_some();
    if timed {
        for (d, dc) in session.corpus().docs().iter().zip(cols.docs()) {
            if dc.stamped == 0 {
                err(format!(
                    "no timestamps found in {} (use --time-format)",
                    d.name()
                ));
            }
        }
    }
    let stamped = cols.newest().is_some();
    let newest = cols.newest().unwrap_or(0);
    let (since, until) = (
        since.map(|s| s.resolve(newest)),
        until.map(|s| s.resolve(newest)),
    );
    let (bucket, auto_name) = match bucket {
        None => (None, None),
        Some(Bucket::Ms(b)) => (Some(b), None),
        Some(Bucket::Auto) => {
            let (lo, hi) = span(since, until, cols.oldest(), cols.newest());
            let (name, b) = auto_bucket(lo, hi);
            (Some(b), Some(name))
        }
    };
    let field_idx: Vec<usize> = pipe
        .count_by
        .iter()
        .filter_map(|n| cols.field_index(n))
        .collect();
    session.set_columns(cols);
    let q = StatsQuery {
        search: query.as_ref(),
        since,
        until,
        count_by: field_idx,
        histogram: bucket,
    };
    let opts = SearchOptions {
        backend: job.backend.choice(),
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
            // A year is only news for formats that carry none.
            let year = if dc.rules.rules.iter().any(|(f, _)| f.yearless()) {
                format!(", year {}", dc.year)
            } else {
                String::new()
            };
            s.push_str(&format!(
                "explain: {}: time {} ({} of {} lines stamped, {}{})\n",
                d.name(),
                if rules.is_empty() {
                    "none".to_string()
                } else {
                    rules.join(", ")
                },
                dc.stamped,
                dc.times.len(),
                if dc.sorted { "sorted" } else { "unsorted" },
                year
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
        let opts = TextOptions {
            include_zero: pipe.include_zero,
            auto_bucket: auto_name,
        };
        print_text(&mut out, &q, &stats, &pipe.count_by, stamped, opts)
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
