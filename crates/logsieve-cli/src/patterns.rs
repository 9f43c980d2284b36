//! `--count-per-pattern` and `--patterns-matched`: which of many patterns
//! (an IOC list) occur, in how many lines, how often.

use std::io::{self, Write};
use std::time::Instant;

use clap::Args;
use logsieve::{Answer, PatternCounts, Query, Request, SearchOptions, Session};
use serde_json::json;

use crate::args::SearchArgs;
use crate::search::{err, EXIT_ERROR, EXIT_MATCH, EXIT_NO_MATCH};

#[derive(Args, Debug, Default)]
pub struct PatternArgs {
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

impl PatternArgs {
    /// True when a per-pattern report replaces the search output.
    pub fn active(&self) -> bool {
        self.count_per_pattern || self.patterns_matched
    }
}

fn text(p: &[u8]) -> serde_json::Value {
    match std::str::from_utf8(p) {
        Ok(s) => json!({ "text": s }),
        Err(_) => {
            use base64::Engine as _;
            json!({ "bytes": base64::engine::general_purpose::STANDARD.encode(p) })
        }
    }
}

fn print<W: Write>(out: &mut W, a: &SearchArgs, c: &PatternCounts, t0: Instant) -> io::Result<()> {
    let only_hits = a.per_pattern.patterns_matched;
    let rows = (0..c.patterns.len()).filter(|&i| !only_hits || c.lines[i] > 0);
    if a.json {
        for i in rows {
            let v = json!({
                "type": "pattern",
                "data": {
                    "index": i,
                    "pattern": text(&c.patterns[i]),
                    "lines": c.lines[i],
                    "occurrences": c.occurrences[i],
                }
            });
            writeln!(out, "{v}")?;
        }
        let el = t0.elapsed();
        let v = json!({
            "type": "summary",
            "data": {
                "patterns": c.patterns.len(),
                "patterns_matched": c.matched().len(),
                "backend": c.backend.name,
                "elapsed_total": {
                    "secs": el.as_secs(),
                    "nanos": el.subsec_nanos(),
                    "human": format!("{:.6}s", el.as_secs_f64()),
                },
            }
        });
        return writeln!(out, "{v}");
    }
    if !a.per_pattern.count_per_pattern {
        for i in rows {
            out.write_all(&c.patterns[i])?;
            out.write_all(b"\n")?;
        }
        return Ok(());
    }
    // Tab-separated, the pattern last: it may hold tabs or spaces.
    if a.only_matching {
        writeln!(out, "index\tlines\toccurrences\tpattern")?;
    } else {
        writeln!(out, "index\tlines\tpattern")?;
    }
    for i in rows {
        if a.only_matching {
            write!(out, "{i}\t{}\t{}\t", c.lines[i], c.occurrences[i])?;
        } else {
            write!(out, "{i}\t{}\t", c.lines[i])?;
        }
        out.write_all(&c.patterns[i])?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// Counts per pattern and prints the report; returns the exit code (0 when
/// some pattern was found, 1 when none, 2 on an error).
pub fn run(
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
    if a.explain {
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
    if let Err(e) = print(&mut out, a, &counts, t0).and_then(|_| out.flush()) {
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
