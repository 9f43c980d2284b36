//! `logsieve patterns`: every line of the files assigned to one log
//! template (Drain, `logsieve::patterns`), the largest printed with their
//! counts and a sparkline of their lines over time.

use std::io::{self, Write};
use std::path::Path;

use logsieve::patterns::{count_steps, Miner, MinerOptions};
use logsieve::stats::{self, ColumnOptions, Columns, NO_TIME};
use serde_json::json;

use crate::exit::{err, EXIT_ERROR, EXIT_MATCH, EXIT_NO_MATCH};
use crate::flags::patterns::PatternsArgs;
use crate::input::load;

const SPARKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

fn mtime_ms(path: &Path) -> Option<i64> {
    let t = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    t.duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_millis() as i64)
}

/// The sparkline of `counts`: a blank for none, else one of eight heights.
pub fn sparkline(counts: &[u64]) -> String {
    let max = counts.iter().copied().max().unwrap_or(0).max(1);
    counts
        .iter()
        .map(|&n| {
            if n == 0 {
                ' '
            } else {
                SPARKS[((n * 8 - 1) / max).min(7) as usize]
            }
        })
        .collect()
}

/// `logsieve patterns`; returns the exit code (1 when no line was read).
pub fn run(a: &PatternsArgs) -> i32 {
    if a.walk.lists() {
        return super::files::list(&a.paths, &a.walk);
    }
    if !(0.0..=1.0).contains(&a.sim_threshold) {
        err(format!("--sim-threshold {}: from 0 to 1", a.sim_threshold));
        return EXIT_ERROR;
    }
    if a.depth < 3 {
        err(format!("--depth {}: at least 3", a.depth));
        return EXIT_ERROR;
    }
    let (corpus, had_error) = load(&a.paths, a.input, &a.walk);
    let cols = Columns::build(
        &corpus,
        &ColumnOptions {
            year: stats::time::current_year(),
            doc_mtimes: corpus
                .docs()
                .iter()
                .map(|d| mtime_ms(Path::new(d.name())))
                .collect(),
            ..Default::default()
        },
    );
    let mut miner = Miner::new(MinerOptions {
        depth: a.depth,
        sim_threshold: a.sim_threshold,
        ..Default::default()
    });
    let (mut ids, mut times) = (Vec::new(), Vec::new());
    // Every file's lines in one call: a shape is added to the tree once.
    let mut lines: Vec<&[u8]> = Vec::new();
    for (doc, dc) in corpus.docs().iter().zip(cols.docs()) {
        let n = doc.lines().len();
        lines.extend((0..n).map(|l| doc.line(l)));
        times.extend((0..n).map(|l| dc.times.get(l as usize).copied().unwrap_or(NO_TIME)));
    }
    miner.add_many(&lines, &mut ids);
    // Steps over the timestamps' span, or over the line numbers without
    // any timestamp.
    let timed = times.iter().any(|&t| t != NO_TIME);
    let keys: Vec<i64> = if timed {
        times.clone()
    } else {
        (0..ids.len() as i64).collect()
    };
    let known = keys.iter().copied().filter(|&t| t != NO_TIME);
    let (lo, hi) = (known.clone().min().unwrap_or(0), known.max().unwrap_or(0));
    let width = a.width.max(1) as i64;
    let step = ((hi - lo) / width + 1).max(1);
    let per = count_steps(&ids, &keys, miner.len(), lo, step, width as usize);
    let mut order: Vec<u32> = (0..miner.len() as u32).collect();
    order.sort_by(|&x, &y| miner.count(y).cmp(&miner.count(x)).then(x.cmp(&y)));
    let shown = if a.limit == 0 || a.json {
        order.len()
    } else {
        a.limit.min(order.len())
    };
    let out = io::stdout();
    let mut out = out.lock();
    let lines = ids.len() as u64;
    let r = if a.json {
        let templates: Vec<serde_json::Value> = order[..shown]
            .iter()
            .map(|&id| {
                let samples: Vec<[i64; 2]> = per[id as usize]
                    .iter()
                    .enumerate()
                    .filter(|(_, n)| **n > 0)
                    .map(|(k, &n)| [lo + k as i64 * step, n as i64])
                    .collect();
                json!({"pattern": miner.pattern(id), "count": miner.count(id), "samples": samples})
            })
            .collect();
        let v = json!({
            "lines": lines,
            "total": miner.len(),
            "step_ms": if timed { step } else { 0 },
            "templates": templates,
        });
        writeln!(out, "{v}")
    } else {
        (|| {
            for &id in &order[..shown] {
                let n = miner.count(id);
                writeln!(
                    out,
                    "{n:>9} {:>5.1}%  {}  {}",
                    n as f64 * 100.0 / lines.max(1) as f64,
                    sparkline(&per[id as usize]),
                    miner.pattern(id)
                )?;
            }
            writeln!(
                out,
                "{lines} lines, {} templates{}",
                miner.len(),
                if shown < order.len() {
                    format!(" ({shown} shown; -n 0 for all)")
                } else {
                    String::new()
                }
            )
        })()
    };
    if let Err(e) = r {
        if e.kind() != io::ErrorKind::BrokenPipe {
            err(e);
            return EXIT_ERROR;
        }
    }
    if had_error {
        EXIT_ERROR
    } else if lines == 0 {
        EXIT_NO_MATCH
    } else {
        EXIT_MATCH
    }
}

#[cfg(test)]
mod tests {
    use super::sparkline;

    #[test]
    fn sparks() {
        assert_eq!(sparkline(&[0, 1, 4, 8]), " ▁▄█");
    }
}
