//! `logsieve bench`: the reference tables (`tables::reference`),
//! printed as markdown or JSON, optionally also written to a file.

use std::path::PathBuf;

use crate::tables::reference;
use logsieve::Tuning;

use crate::exit::{err, EXIT_ERROR, EXIT_MATCH, EXIT_NO_MATCH};
use crate::flags::BenchArgs;

/// Runs `logsieve bench`; exit 0 when every row agrees, 1 on a count
/// mismatch, 2 on a set-up error.
pub fn run(a: &BenchArgs, tuning: &Tuning) -> i32 {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("logsieve"));
    let mut opts = reference::Options::new(a.quick, exe);
    opts.lines = a.lines.unwrap_or(opts.lines);
    opts.runs = a.runs.unwrap_or(opts.runs).max(1);
    opts.no_gpu = a.no_gpu;
    // A copy of the tree without .git (the GPU machine) passes it in.
    opts.commit = std::env::var("LOGSIEVE_COMMIT").ok();
    // The tables start from the default calibration (no cache file), so
    // that two runs on one machine compare.
    opts.tuning = Tuning {
        cache_dir: None,
        ..tuning.clone()
    };
    let report = match reference::run(&opts) {
        Ok(r) => r,
        Err(e) => {
            err(e);
            return EXIT_ERROR;
        }
    };
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report.json).unwrap_or_default()
        );
    } else {
        print!("{}", report.markdown);
    }
    if let Some(p) = &a.out {
        if let Err(e) = std::fs::write(p, &report.markdown) {
            err(format!("{}: {e}", p.display()));
            return EXIT_ERROR;
        }
    }
    if report.counts_agree {
        EXIT_MATCH
    } else {
        EXIT_NO_MATCH
    }
}
