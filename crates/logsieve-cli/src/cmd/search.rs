//! `logsieve search`: load, plan, search, print — ripgrep's conventions.
//! With a stats flag it hands over to [`super::stats`]; with
//! `--count-per-pattern` / `--patterns-matched` it prints the per-pattern
//! report instead of lines.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

use logsieve::{
    Answer, Kernel, Query, QueryBuilder, Request, SearchOptions, Session, Syntax, Tuning, Want,
};

use crate::exit::{err, EXIT_ERROR, EXIT_MATCH, EXIT_NO_MATCH};
use crate::flags::{ColorChoice, SearchArgs};
use crate::input;
use crate::printer::{per_pattern, Counting, JsonPrinter, Printer, Streamer};

struct Plan {
    query: Query,
    paths: Vec<PathBuf>,
}

fn plan(a: &SearchArgs, tuning: &Tuning) -> Result<Plan, String> {
    if (a.pcre2 || a.multiline) && a.per_pattern.active() {
        return Err("-U/-P: per-pattern counts run literal matchers only".into());
    }
    let m = &a.matching;
    let mut patterns = input::patterns(&m.regexp, &a.file)?;
    let mut positional = a.positional.iter();
    if m.regexp.is_empty() && a.file.is_empty() {
        match positional.next() {
            Some(p) => patterns.push(input::os_to_bytes(p)),
            None => {
                return Err("no pattern given (usage: logsieve search PATTERN [PATH]...)".into())
            }
        }
    }
    let paths: Vec<PathBuf> = positional.map(PathBuf::from).collect();
    let syntax = a.syntax();
    if patterns.is_empty() {
        // `-f empty-file`: no pattern can match, so no line is selected,
        // not even with -v (ripgrep's behaviour).
        return Err(String::new());
    }
    let query = QueryBuilder::new()
        .syntax(syntax)
        .case_insensitive(m.fold_case(&patterns, syntax == Syntax::Regex))
        .crlf(a.crlf)
        .word(m.word_regexp)
        .whole_line(a.line_regexp)
        .invert(m.invert_match)
        .cpu_multi(tuning.cpu_multi)
        .multiline(a.multiline)
        .pcre2(a.pcre2)
        .build(&patterns)
        .map_err(|e| e.to_string())?;
    Ok(Plan { query, paths })
}

/// Runs `logsieve search`; returns the exit code.
pub fn run(a: &SearchArgs, tuning: &Tuning) -> i32 {
    if a.walk.lists() {
        return super::files::list(&a.positional, &a.walk);
    }
    let server = crate::remote::server_url(&a.server);
    if a.pipeline.active() && server.is_some() && !a.walk.follow {
        // A time window or aggregate over a server is `stats --server`
        // (the search endpoint answers lines); without this the flags
        // sent the search to the local stats path, off the server.
        err("--since/--until/--count-by/--histogram with --server: use `logsieve stats --server URL -e PATTERN ...` (or --follow for new lines in a time window)");
        return EXIT_ERROR;
    }
    if a.pipeline.active() && server.is_none() {
        if a.multiline || a.pcre2 {
            err("-U/-P cannot filter stats (they run on whole lines of one regex syntax)");
            return EXIT_ERROR;
        }
        return super::stats::run_search(a, tuning);
    }
    let mut plan = match plan(a, tuning) {
        Ok(p) => p,
        Err(e) if e.is_empty() => return EXIT_NO_MATCH,
        Err(e) => {
            err(e);
            return EXIT_ERROR;
        }
    };
    if let Some(url) = server {
        return remote(a, &plan, &url);
    }
    plan.paths = input::search_paths(std::mem::take(&mut plan.paths));
    let explicit_many = plan.paths.len() > 1 || plan.paths.iter().any(|p| p.is_dir());
    let (corpus, had_error) = input::load(&plan.paths, a.input, &a.walk);
    let many = explicit_many || corpus.docs().len() > 1;
    let stdout_tty = io::stdout().is_terminal();
    let color = match a.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => stdout_tty && std::env::var_os("NO_COLOR").is_none(),
    };
    let with_filename = (many || a.with_filename || a.vimgrep) && !a.no_filename;
    let line_number = !a.no_line_number && (a.line_number || stdout_tty || a.column || a.vimgrep);
    // rg's heading is its default on a terminal; --heading forces it.
    let heading = with_filename && !a.vimgrep && (a.heading || (stdout_tty && !a.no_heading));
    let lists = a.files_with_matches || a.files_without_match;
    let counting = (a.count || lists || a.quiet) && !a.report.json && !a.stats;
    let search_opts = SearchOptions {
        backend: a.engine.backend.choice(),
        threads: a.engine.threads,
        want: if counting { Want::Count } else { Want::Lines },
        max_count: if a.quiet || lists {
            Some(a.max_count.map_or(1, |m| m.min(1)))
        } else {
            a.max_count
        },
        explain: a.report.explain,
        // Line numbers are counted only when printed (rg's rule): the
        // newline count is 26% of a literal search's instructions.
        line_ids: line_number || a.report.json || a.stats,
        ..Default::default()
    };
    let mut search_opts = search_opts;
    if let Some(name) = &a.gpu_kernel {
        match Kernel::from_name(name) {
            Some(k) => search_opts.gpu_kernel = Some(k),
            None => {
                err(format!(
                    "--gpu-kernel {name}: unknown kernel (one of {})",
                    Kernel::names().join(", ")
                ));
                return EXIT_ERROR;
            }
        }
    }
    let t0 = Instant::now();
    let mut session = Session::with_tuning(corpus, tuning.clone());
    let probe_ms = probe_adapter(a, &mut session);
    if a.per_pattern.active() {
        return per_pattern_report(a, &mut session, &plan.query, &search_opts, had_error, t0);
    }
    // One-shot: the routing point starts a GPU only when start-up and
    // upload pay for this one query.
    let req = Request::Search(&plan.query);
    let route = match session.prepare(&req, &search_opts) {
        Ok(r) => r,
        Err(e) => {
            err(e);
            return EXIT_ERROR;
        }
    };
    if let Some(w) = session.calibration_warning() {
        err(w);
    }
    let stdout = io::stdout();
    let mut out = Counting {
        inner: io::BufWriter::with_capacity(1 << 16, stdout.lock()),
        bytes: 0,
    };
    let printer = Printer {
        a,
        query: &plan.query,
        color,
        with_filename,
        line_number,
        heading,
    };
    // Lines are printed while the search runs (rg's way: each line while
    // the CPU still has it in its cache); a reader that goes away cancels.
    let streams = !a.report.json && !counting;
    let (answer, printed) = if streams {
        let cancel = logsieve::Cancel::new();
        let mut sink = Streamer::new(&printer, &mut out, session.corpus(), cancel.clone());
        let answer = session.execute_streamed(&req, &route, &search_opts, &cancel, &mut sink);
        let printed = match &answer {
            Ok(Answer::Search(r)) => sink.finish(r),
            _ => sink.error().map_or(Ok(()), Err),
        };
        (answer, printed)
    } else {
        (session.execute(&req, &route, &search_opts), Ok(()))
    };
    match printed {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            // The reader has what it wanted (`| head`): lines were printed.
            return if had_error { EXIT_ERROR } else { EXIT_MATCH };
        }
        Err(e) => {
            err(e);
            return EXIT_ERROR;
        }
        Ok(()) => {}
    }
    let result = match answer {
        Ok(Answer::Search(r)) => r,
        Ok(_) => unreachable!("a search request is answered by a search result"),
        Err(e) => {
            err(e);
            return EXIT_ERROR;
        }
    };
    if session.has_gpu() {
        // Best effort: a read-only cache directory only costs calibration.
        let _ = session.save_calibration();
    }
    if a.report.explain {
        let mut s = String::new();
        if let Some(d) = result.plan.as_ref() {
            for l in d.explain().lines() {
                s.push_str(&format!("explain: {l}\n"));
            }
        }
        if let Some(ms) = probe_ms {
            s.push_str(&format!(
                "explain: adapter probe {ms:.1} ms (no device started)\n"
            ));
        }
        s.push_str(&format!(
            "explain: ran {} ({})\nexplain: search time {:.3} ms (total {:.3} ms)\n",
            result.backend.name,
            result.backend.reason,
            result.backend.elapsed.as_secs_f64() * 1e3,
            t0.elapsed().as_secs_f64() * 1e3
        ));
        let _ = io::stderr().write_all(s.as_bytes());
    }
    let any = if a.files_without_match {
        // Success means a path was printed, as rg.
        result.docs.iter().any(|d| d.count == 0)
    } else {
        result.total() > 0
    };
    if a.quiet {
        return if any {
            EXIT_MATCH
        } else if had_error {
            EXIT_ERROR
        } else {
            EXIT_NO_MATCH
        };
    }
    let res = if a.report.json {
        let (before, after) = (
            a.before_context.or(a.context).unwrap_or(0),
            a.after_context.or(a.context).unwrap_or(0),
        );
        JsonPrinter::new(&plan.query)
            .context(before, after)
            .max_count(a.max_count)
            .print(&mut out, session.corpus(), &result, t0)
    } else if streams {
        Ok(())
    } else {
        printer.print(&mut out, session.corpus(), &result)
    };
    let res = res.and_then(|_| {
        if a.stats && !a.report.json {
            // rg counts the bytes of printed lines only, none for -c/-l.
            let printed = if a.count || lists { 0 } else { out.bytes };
            stats_block(
                &mut out,
                &plan.query,
                session.corpus(),
                &result,
                printed,
                t0,
            )
        } else {
            Ok(())
        }
    });
    let res = res.and_then(|_| out.flush());
    if let Err(e) = res {
        if e.kind() != io::ErrorKind::BrokenPipe {
            err(e);
            return EXIT_ERROR;
        }
    }
    if had_error {
        EXIT_ERROR
    } else if any {
        EXIT_MATCH
    } else {
        EXIT_NO_MATCH
    }
}

/// `--server URL`: the same search asked of a `logsieve serve`, printed by
/// the same printers; returns the exit code.
fn remote(a: &SearchArgs, plan: &Plan, url: &str) -> i32 {
    match remote_search(a, plan, url) {
        Ok(code) => code,
        Err(e) => {
            err(e);
            EXIT_ERROR
        }
    }
}

fn remote_search(a: &SearchArgs, plan: &Plan, url: &str) -> Result<i32, String> {
    use crate::remote::{self, Server};
    use serde_json::Value;
    // Flags whose work the API does not do: refused, not silently dropped.
    let unsupported = [
        (a.crlf, "--crlf"),
        (a.passthru, "--passthru"),
        (a.stats, "--stats"),
        (a.gpu_kernel.is_some(), "--gpu-kernel"),
        (a.multiline, "-U/--multiline"),
        (a.pcre2, "-P/--pcre2"),
    ];
    if let Some((_, flag)) = unsupported.iter().find(|(on, _)| *on) {
        return Err(format!("{flag} is not supported with --server"));
    }
    let server = Server::parse(url)?;
    let files: Vec<String> = plan
        .paths
        .iter()
        .map(|p| {
            p.to_str()
                .map(str::to_string)
                .ok_or_else(|| format!("{}: not UTF-8, cannot be sent", p.display()))
        })
        .collect::<Result<_, _>>()?;
    if a.walk.follow {
        // With a server, --follow follows its corpus (`tail -f | grep`).
        return super::follow::run(a, &plan.query, &server, &files);
    }
    let backend = remote::backend_name(a.engine.backend);
    if a.per_pattern.active() {
        let mut req = remote::query_fields(&plan.query, true, false)?;
        req.insert("backend".into(), backend.into());
        if !files.is_empty() {
            req.insert("files".into(), files.clone().into());
        }
        let t0 = Instant::now();
        let v: Value = serde_json::from_slice(&server.post("patterns", &Value::Object(req))?.body)
            .map_err(|e| format!("the server's answer is not JSON: {e}"))?;
        let rows = v["patterns"]
            .as_array()
            .map(|a| a.as_slice())
            .unwrap_or_default();
        let counts = logsieve::PatternCounts {
            patterns: rows
                .iter()
                .map(|r| remote::data_bytes(&r["pattern"]))
                .collect(),
            lines: rows
                .iter()
                .map(|r| r["lines"].as_u64().unwrap_or(0))
                .collect(),
            occurrences: rows
                .iter()
                .map(|r| r["occurrences"].as_u64().unwrap_or(0))
                .collect(),
            backend: logsieve::BackendReport {
                name: v["backend"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                reason: v["backend"]["reason"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                elapsed: std::time::Duration::from_secs_f64(
                    v["backend"]["elapsed_ms"].as_f64().unwrap_or(0.0).max(0.0) / 1e3,
                ),
            },
        };
        let stdout = io::stdout();
        let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
        return print_done(per_pattern::print(&mut out, a, &counts, t0).and_then(|_| out.flush()))
            .map(|()| {
                if counts.lines.iter().any(|&n| n > 0) {
                    EXIT_MATCH
                } else {
                    EXIT_NO_MATCH
                }
            });
    }
    let lists = a.files_with_matches || a.files_without_match;
    let counting = (a.count || lists || a.quiet) && !a.report.json;
    let (before, after) = (
        a.before_context.or(a.context).unwrap_or(0),
        a.after_context.or(a.context).unwrap_or(0),
    );
    let max_count = if a.quiet || lists {
        Some(a.max_count.map_or(1, |m| m.min(1)))
    } else {
        a.max_count
    };
    let mut req = remote::query_fields(&plan.query, true, true)?;
    req.insert(
        "output".into(),
        if counting { "count" } else { "lines" }.into(),
    );
    req.insert("backend".into(), backend.into());
    if let Some(m) = max_count {
        req.insert("max_count".into(), m.into());
    }
    if !counting {
        req.insert("before".into(), before.into());
        req.insert("after".into(), after.into());
    }
    if !files.is_empty() {
        req.insert("files".into(), files.clone().into());
    }
    let resp = server.post("search", &Value::Object(req))?;
    if resp.header("x-logsieve-next-cursor").is_some() {
        return Err("the server paged its answer, which this client does not follow yet".into());
    }
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
    if a.report.json {
        // The server's NDJSON is written by the library's encoder, the
        // same bytes as the local `--json` but for the `elapsed` times.
        let any = resp.header("x-logsieve-total").is_some_and(|t| t != "0");
        print_done(out.write_all(&resp.body).and_then(|_| out.flush()))?;
        return Ok(if any { EXIT_MATCH } else { EXIT_NO_MATCH });
    }
    let answer = if counting {
        remote::read_counts(&resp.body)?
    } else {
        remote::read_lines(&resp.body)?
    };
    let any = if a.files_without_match {
        answer.files.iter().any(|(_, h)| h.count == 0)
    } else {
        answer.files.iter().any(|(_, h)| h.count > 0)
    };
    if a.quiet {
        return Ok(if any { EXIT_MATCH } else { EXIT_NO_MATCH });
    }
    // As a local run: file names when several files are searched.
    let many = files.len() > 1 || answer.searched > 1;
    let stdout_tty = io::stdout().is_terminal();
    let color = match a.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => stdout_tty && std::env::var_os("NO_COLOR").is_none(),
    };
    let with_filename = (many || a.with_filename || a.vimgrep) && !a.no_filename;
    let printer = Printer {
        a,
        query: &plan.query,
        color,
        with_filename,
        line_number: !a.no_line_number && (a.line_number || stdout_tty || a.column || a.vimgrep),
        heading: with_filename && !a.vimgrep && (a.heading || (stdout_tty && !a.no_heading)),
    };
    let res = printer.print_files(&mut out, answer.files.iter().map(|(f, h)| (f, h)));
    print_done(res.and_then(|_| out.flush()))?;
    Ok(if any { EXIT_MATCH } else { EXIT_NO_MATCH })
}

/// A write's result: a closed pipe is fine (as `| head`), another error
/// is reported.
fn print_done(res: io::Result<()>) -> Result<(), String> {
    match res {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e.to_string()),
        _ => Ok(()),
    }
}

/// Below this many bytes the probe is skipped unless `--explain` asks: the
/// GPU's start-up (~100 ms or more) cannot pay on less even at 500 GB/s
/// against a CPU at ~10 GB/s, so the plan keeps the CPU whatever the
/// adapter, and the probe (49-71 ms measured on lavapipe, 2 busy cores) would
/// cost more than the search.
const PROBE_MIN_BYTES: u64 = 256 << 20;

/// Tells the session which adapter exists, from a probe that starts no
/// device, when the plan could use it (`--backend auto`) and it is worth
/// its cost; returns the probe's time in ms when it ran.
fn probe_adapter(a: &SearchArgs, session: &mut Session) -> Option<f64> {
    let auto = a.engine.backend == crate::flags::BackendArg::Auto;
    let large = session.corpus().total_bytes() >= PROBE_MIN_BYTES;
    if !auto || !(a.report.explain || large) {
        return None;
    }
    let t = Instant::now();
    session.probe_adapter();
    Some(t.elapsed().as_secs_f64() * 1e3)
}

/// `--stats`: ripgrep's block after the results.
fn stats_block<W: Write>(
    out: &mut W,
    query: &Query,
    corpus: &logsieve::Corpus,
    result: &logsieve::SearchResult,
    bytes_printed: u64,
    t0: Instant,
) -> io::Result<()> {
    let mut matches = 0u64;
    let mut files_matched = 0u64;
    for (doc, hits) in corpus.docs().iter().zip(&result.docs) {
        if hits.count > 0 {
            files_matched += 1;
        }
        if !query.invert() {
            for &id in &hits.lines {
                matches += query
                    .find_iter_line(doc.line(id))
                    .iter()
                    .filter(|m| !m.is_empty())
                    .count() as u64;
            }
        }
    }
    let searched: u64 = corpus.docs().iter().map(|d| d.data().len() as u64).sum();
    write!(
        out,
        "\n{matches} matches\n{} matched lines\n{files_matched} files contained matches\n\
         {} files searched\n{bytes_printed} bytes printed\n{searched} bytes searched\n\
         {:.6} seconds spent searching\n{:.6} seconds\n",
        result.total(),
        corpus.docs().len(),
        result.backend.elapsed.as_secs_f64(),
        t0.elapsed().as_secs_f64(),
    )
}

/// Counts per pattern and prints the report; returns the exit code (0 when
/// some pattern was found, 1 when none, 2 on an error).
fn per_pattern_report(
    a: &SearchArgs,
    session: &mut Session,
    query: &Query,
    opts: &SearchOptions,
    had_error: bool,
    t0: Instant,
) -> i32 {
    let req = Request::PatternCounts(query);
    let answer = session
        .prepare(&req, opts)
        .and_then(|route| session.execute(&req, &route, opts));
    if let Some(w) = session.calibration_warning() {
        err(w);
    }
    let counts = match answer {
        Ok(Answer::PatternCounts(c)) => c,
        Ok(_) => unreachable!("a per-pattern request is answered by per-pattern counts"),
        Err(e) => {
            err(e);
            return EXIT_ERROR;
        }
    };
    if a.report.explain {
        let _ = writeln!(
            io::stderr(),
            "explain: ran {} ({})\nexplain: count time {:.3} ms (total {:.3} ms)",
            counts.backend.name,
            counts.backend.reason,
            counts.backend.elapsed.as_secs_f64() * 1e3,
            t0.elapsed().as_secs_f64() * 1e3
        );
    }
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
    if let Err(e) = per_pattern::print(&mut out, a, &counts, t0).and_then(|_| out.flush()) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            err(e);
            return EXIT_ERROR;
        }
    }
    if had_error {
        EXIT_ERROR
    } else if counts.lines.iter().any(|&n| n > 0) {
        EXIT_MATCH
    } else {
        EXIT_NO_MATCH
    }
}
