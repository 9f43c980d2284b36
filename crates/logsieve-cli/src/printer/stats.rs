//! The stats printers: the aggregate (selected lines, groups, histogram)
//! as a text report or one JSON object.

use std::io::{self, Write};

use logsieve::stats::{format_ms, Columns, Stats, StatsQuery};

fn show(v: &Option<Vec<u8>>) -> String {
    match v {
        Some(b) => String::from_utf8_lossy(b).into_owned(),
        None => "(none)".to_string(),
    }
}

fn window_line(q: &StatsQuery, stamped: bool) -> String {
    match (q.since, q.until) {
        (None, None) => String::new(),
        // Resolved against no timestamp at all: no window to show.
        _ if !stamped => " (no timestamps found)".to_string(),
        (s, u) => format!(
            " in [{}, {})",
            s.map_or("-".to_string(), format_ms),
            u.map_or("-".to_string(), format_ms)
        ),
    }
}

/// How the text report shows the histogram.
#[derive(Clone, Copy, Debug, Default)]
pub struct TextOptions {
    /// Show empty buckets too (`--include-zero`); by default they are
    /// skipped, and a line after the table says how many were.
    pub include_zero: bool,
    /// The bucket `--histogram auto` picked (`5m`), said above the table.
    pub auto_bucket: Option<&'static str>,
}

/// The text report: the selected count, the groups table, the histogram.
/// `stamped`: some line had a timestamp (else the window is not shown).
pub fn print_text<W: Write>(
    out: &mut W,
    q: &StatsQuery,
    s: &Stats,
    names: &[String],
    stamped: bool,
    opts: TextOptions,
) -> io::Result<()> {
    writeln!(
        out,
        "selected {} lines{}",
        s.selected,
        window_line(q, stamped)
    )?;
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
        if let Some(name) = opts.auto_bucket {
            writeln!(out, "histogram: {name} buckets (--histogram auto)")?;
        }
        let max = h.counts.iter().copied().max().unwrap_or(0);
        let cw = max.to_string().len().max(5);
        const BAR: usize = 50;
        writeln!(out, "{:<24}  {:>cw$}", "bucket start (UTC)", "count")?;
        let mut skipped = 0u64;
        for (i, &c) in h.counts.iter().enumerate() {
            if c == 0 && !opts.include_zero {
                // A long span in small buckets is mostly empty ones: the
                // rows shown are the buckets with lines (JSON keeps all).
                skipped += 1;
                continue;
            }
            let t = h.start + i as i64 * h.bucket;
            let n = if max == 0 {
                0
            } else {
                ((c as u128 * BAR as u128).div_ceil(max as u128)) as usize
            };
            writeln!(out, "{:<24}  {c:>cw$} {}", format_ms(t), "█".repeat(n))?;
        }
        if skipped > 0 {
            let s = if skipped == 1 { "" } else { "s" };
            writeln!(
                out,
                "({skipped} empty bucket{s} not shown; --include-zero shows them)"
            )?;
        }
    }
    Ok(())
}

/// The JSON report: one object.
pub fn print_json<W: Write>(
    out: &mut W,
    cols: &Columns,
    q: &StatsQuery,
    s: &Stats,
    names: &[String],
    backend: &str,
) -> io::Result<()> {
    // The library's encoder, which the server uses too: one shape.
    let v = logsieve::stats::json::stats_json(cols.span(None), q, s, names, backend);
    serde_json::to_writer(&mut *out, &v)?;
    writeln!(out)
}
