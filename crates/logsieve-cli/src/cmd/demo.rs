//! `logsieve demo`: times the reference queries on every backend here
//! (`tables::demo`).

use crate::tables::demo;
use logsieve::Tuning;

use crate::exit::{err, EXIT_ERROR};
use crate::flags::DemoArgs;

/// Runs `logsieve demo`; returns the exit code.
pub fn run(a: &DemoArgs, tuning: &Tuning) -> i32 {
    let opts = demo::Options {
        lines: a.lines,
        runs: a.runs,
        no_gpu: a.no_gpu,
        all_kernels: a.all_kernels,
        // As the bench: the default calibration, so runs compare.
        tuning: Tuning {
            cache_dir: None,
            ..tuning.clone()
        },
    };
    match demo::run(&opts) {
        Ok(()) => 0,
        Err(e) => {
            err(e);
            EXIT_ERROR
        }
    }
}
