//! `logsieve search`: load, plan, search, print — ripgrep's conventions.

use std::ffi::OsString;
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

use logsieve::{
    Answer, BackendChoice, Corpus, Document, Kernel, LoadOptions, Query, QueryBuilder, Request,
    SearchOptions, Session, Syntax, Tuning, Want,
};

use crate::args::{BackendArg, ColorChoice, SearchArgs};
use crate::json::JsonPrinter;

/// Exit codes, as grep and ripgrep.
pub const EXIT_MATCH: i32 = 0;
pub const EXIT_NO_MATCH: i32 = 1;
pub const EXIT_ERROR: i32 = 2;

fn os_to_bytes(s: &OsString) -> Vec<u8> {
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

/// Reads `-f FILE` patterns: one per line, a trailing `\r` kept as grep does.
fn read_pattern_file(path: &PathBuf) -> io::Result<Vec<Vec<u8>>> {
    let data = if path.as_os_str() == "-" {
        let mut v = Vec::new();
        io::Read::read_to_end(&mut io::stdin().lock(), &mut v)?;
        v
    } else {
        std::fs::read(path)?
    };
    let mut out: Vec<Vec<u8>> = data.split(|&b| b == b'\n').map(|l| l.to_vec()).collect();
    if data.ends_with(b"\n") || data.is_empty() {
        out.pop();
    }
    Ok(out)
}

pub(crate) fn err(msg: impl std::fmt::Display) {
    let _ = writeln!(io::stderr(), "logsieve: {msg}");
}

struct Plan {
    query: Query,
    paths: Vec<PathBuf>,
}

fn plan(a: &SearchArgs) -> Result<Plan, String> {
    let mut patterns: Vec<Vec<u8>> = a.regexp.iter().map(os_to_bytes).collect();
    for f in &a.file {
        let ps = read_pattern_file(f).map_err(|e| format!("{}: {e}", f.display()))?;
        patterns.extend(ps);
    }
    let mut positional = a.positional.iter();
    if a.regexp.is_empty() && a.file.is_empty() {
        match positional.next() {
            Some(p) => patterns.push(os_to_bytes(p)),
            None => {
                return Err("no pattern given (usage: logsieve search PATTERN [PATH]...)".into())
            }
        }
    }
    let paths: Vec<PathBuf> = positional.map(PathBuf::from).collect();
    let syntax = if let Some(k) = a.fuzzy {
        Syntax::Fuzzy(k)
    } else if a.wildcard {
        Syntax::Wildcard
    } else if a.fixed_strings {
        Syntax::Fixed
    } else {
        Syntax::Regex
    };
    if patterns.is_empty() {
        // `-f empty-file`: no pattern can match, so no line is selected,
        // not even with -v (ripgrep's behaviour).
        return Err(String::new());
    }
    let query = QueryBuilder::new()
        .syntax(syntax)
        .case_insensitive(a.ignore_case)
        .word(a.word_regexp)
        .whole_line(a.line_regexp)
        .invert(a.invert_match)
        .build(&patterns)
        .map_err(|e| e.to_string())?;
    let read_stdin = paths.is_empty() && !io::stdin().is_terminal()
        || paths.iter().any(|p| p.as_os_str() == "-");
    let paths = if paths.is_empty() && !read_stdin {
        vec![PathBuf::from("./")]
    } else {
        paths
    };
    Ok(Plan { query, paths })
}

/// Runs `logsieve search`; returns the exit code.
pub fn run(a: &SearchArgs) -> i32 {
    if a.walk.lists() {
        return crate::walk_args::list(&a.positional, &a.walk);
    }
    if a.pipeline.active() {
        return crate::stats::run_search(a);
    }
    let plan = match plan(a) {
        Ok(p) => p,
        Err(e) if e.is_empty() => return EXIT_NO_MATCH,
        Err(e) => {
            err(e);
            return EXIT_ERROR;
        }
    };
    let opts = LoadOptions {
        no_mmap: a.no_mmap,
        search_zip: a.search_zip,
    };
    let explicit_many = plan.paths.len() > 1 || plan.paths.iter().any(|p| p.is_dir());
    let (corpus, had_error) = crate::stats::load(&plan.paths, opts, &a.walk);
    let many = explicit_many || corpus.docs().len() > 1;
    let stdout_tty = io::stdout().is_terminal();
    let color = match a.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => stdout_tty && std::env::var_os("NO_COLOR").is_none(),
    };
    let with_filename = (many || a.with_filename) && !a.no_filename;
    let line_number = !a.no_line_number && (a.line_number || stdout_tty);
    let counting = (a.count || a.files_with_matches || a.quiet) && !a.json;
    let search_opts = SearchOptions {
        backend: match a.backend {
            BackendArg::Auto => BackendChoice::Auto,
            BackendArg::Cpu => BackendChoice::Cpu,
            BackendArg::Gpu => BackendChoice::Gpu,
        },
        threads: a.threads,
        want: if counting { Want::Count } else { Want::Lines },
        max_count: if a.quiet || a.files_with_matches {
            Some(a.max_count.map_or(1, |m| m.min(1)))
        } else {
            a.max_count
        },
        explain: a.explain,
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
    let mut session = Session::with_tuning(corpus, Tuning::from_env());
    if a.per_pattern.active() {
        return crate::patterns::run(a, &mut session, &plan.query, &search_opts, had_error, t0);
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
    let result = match session.execute(&req, &route, &search_opts) {
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
    if a.explain {
        let mut s = String::new();
        if let Some(d) = result.plan.as_ref() {
            for l in d.explain().lines() {
                s.push_str(&format!("explain: {l}\n"));
            }
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
    let any = result.total() > 0;
    if a.quiet {
        return if any {
            EXIT_MATCH
        } else if had_error {
            EXIT_ERROR
        } else {
            EXIT_NO_MATCH
        };
    }
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let printer = Printer {
        a,
        query: &plan.query,
        color,
        with_filename,
        line_number,
    };
    let res = if a.json {
        JsonPrinter::new(&plan.query).print(&mut out, session.corpus(), &result, t0)
    } else {
        printer.print(&mut out, session.corpus(), &result)
    };
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

struct Printer<'a> {
    a: &'a SearchArgs,
    query: &'a Query,
    color: bool,
    with_filename: bool,
    line_number: bool,
}

const C_PATH: &str = "\x1b[0m\x1b[35m";
const C_LINE: &str = "\x1b[0m\x1b[32m";
const C_MATCH: &str = "\x1b[0m\x1b[1m\x1b[31m";
const C_RESET: &str = "\x1b[0m";

impl Printer<'_> {
    fn print<W: Write>(
        &self,
        out: &mut W,
        corpus: &Corpus,
        result: &logsieve::SearchResult,
    ) -> io::Result<()> {
        // With context, rg puts `--` between files as well as between
        // groups of one file.
        let a = self.a;
        let context = [a.after_context, a.before_context, a.context]
            .iter()
            .any(|c| c.is_some_and(|n| n > 0));
        let mut printed = false;
        for (doc, hits) in corpus.docs().iter().zip(&result.docs) {
            if self.a.files_with_matches {
                if hits.count > 0 {
                    self.path(out, doc)?;
                    writeln!(out)?;
                }
                continue;
            }
            if self.a.count {
                if self.with_filename {
                    if hits.count > 0 {
                        self.path(out, doc)?;
                        writeln!(out, ":{}", hits.count)?;
                    }
                } else {
                    writeln!(out, "{}", hits.count)?;
                }
                continue;
            }
            if hits.lines.is_empty() {
                continue;
            }
            if context && printed {
                out.write_all(b"--\n")?;
            }
            printed = true;
            if let Some(off) = doc.binary_offset() {
                if self.with_filename {
                    self.path(out, doc)?;
                    write!(out, ": ")?;
                }
                writeln!(
                    out,
                    "binary file matches (found \"\\0\" byte around offset {off})"
                )?;
                continue;
            }
            self.lines(out, doc, &hits.lines)?;
        }
        Ok(())
    }

    fn path<W: Write>(&self, out: &mut W, doc: &Document) -> io::Result<()> {
        if self.color {
            write!(out, "{C_PATH}{}{C_RESET}", doc.name())
        } else {
            write!(out, "{}", doc.name())
        }
    }

    fn prefix<W: Write>(&self, out: &mut W, doc: &Document, id: u64, sep: u8) -> io::Result<()> {
        if self.with_filename {
            self.path(out, doc)?;
            out.write_all(&[sep])?;
        }
        if self.line_number {
            if self.color {
                write!(out, "{C_LINE}{}{C_RESET}", id + 1)?;
            } else {
                write!(out, "{}", id + 1)?;
            }
            out.write_all(&[sep])?;
        }
        Ok(())
    }

    fn lines<W: Write>(&self, out: &mut W, doc: &Document, ids: &[u64]) -> io::Result<()> {
        let a = self.a;
        if a.only_matching {
            if self.query.invert() {
                return Ok(());
            }
            for &id in ids {
                let line = doc.line(id);
                for m in self.query.find_iter_line(line) {
                    if m.is_empty() {
                        continue;
                    }
                    self.prefix(out, doc, id, b':')?;
                    self.matched(out, &line[m])?;
                    out.write_all(b"\n")?;
                }
            }
            return Ok(());
        }
        let after = a.after_context.or(a.context).unwrap_or(0);
        let before = a.before_context.or(a.context).unwrap_or(0);
        let n = doc.lines().len();
        let mut last: Option<u64> = None;
        for (i, &id) in ids.iter().enumerate() {
            let mut start = id.saturating_sub(before);
            if let Some(l) = last {
                start = start.max(l + 1);
                if (after > 0 || before > 0) && start > l + 1 {
                    out.write_all(b"--\n")?;
                }
            }
            for c in start..id {
                self.line(out, doc, c, false)?;
            }
            self.line(out, doc, id, true)?;
            last = Some(id);
            let next = ids.get(i + 1).copied().unwrap_or(u64::MAX);
            let stop = id.saturating_add(after).min(n.saturating_sub(1));
            let mut c = id + 1;
            while c <= stop && c < next {
                self.line(out, doc, c, false)?;
                last = Some(c);
                c += 1;
            }
        }
        Ok(())
    }

    fn matched<W: Write>(&self, out: &mut W, bytes: &[u8]) -> io::Result<()> {
        if self.color {
            out.write_all(C_MATCH.as_bytes())?;
            out.write_all(bytes)?;
            out.write_all(C_RESET.as_bytes())
        } else {
            out.write_all(bytes)
        }
    }

    fn line<W: Write>(
        &self,
        out: &mut W,
        doc: &Document,
        id: u64,
        is_match: bool,
    ) -> io::Result<()> {
        self.prefix(out, doc, id, if is_match { b':' } else { b'-' })?;
        let line = doc.line(id);
        if self.color && is_match && !self.query.invert() {
            // Adjacent matches are one coloured run, as rg prints them.
            let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
            for m in self.query.find_iter_line(line) {
                match runs.last_mut() {
                    Some(r) if r.end == m.start => r.end = m.end,
                    _ => runs.push(m),
                }
            }
            let mut at = 0;
            for m in runs {
                out.write_all(&line[at..m.start])?;
                self.matched(out, &line[m.clone()])?;
                at = m.end;
            }
            out.write_all(&line[at..])?;
        } else {
            out.write_all(line)?;
        }
        out.write_all(b"\n")
    }
}
