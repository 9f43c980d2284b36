//! The per-pattern report (`--count-per-pattern`, `--patterns-matched`):
//! which of many patterns (an IOC list) occur, in how many lines, how often.

use std::io::{self, Write};
use std::time::Instant;

use logsieve::PatternCounts;
use serde_json::json;

use crate::flags::SearchArgs;

fn text(p: &[u8]) -> serde_json::Value {
    match std::str::from_utf8(p) {
        Ok(s) => json!({ "text": s }),
        Err(_) => {
            use base64::Engine as _;
            json!({ "bytes": base64::engine::general_purpose::STANDARD.encode(p) })
        }
    }
}

/// Prints the per-pattern report (text table, pattern list or JSON).
pub fn print<W: Write>(
    out: &mut W,
    a: &SearchArgs,
    c: &PatternCounts,
    t0: Instant,
) -> io::Result<()> {
    let only_hits = a.per_pattern.patterns_matched;
    let rows = (0..c.patterns.len()).filter(|&i| !only_hits || c.lines[i] > 0);
    if a.report.json {
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
