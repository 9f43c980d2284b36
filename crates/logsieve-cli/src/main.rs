//! The `logsieve` command: parses flags and dispatches to a subcommand. The
//! search itself lives in the `logsieve` library, the benchmarks in
//! `logsieve-bench`.

mod cmd;
mod exit;
mod flags;
mod input;
mod printer;

use clap::Parser;

use exit::EXIT_ERROR;
use flags::{Cli, Command};

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // Usage errors exit 2 (grep's convention); --help/--version 0.
            let code = if e.use_stderr() { EXIT_ERROR } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    // The environment's tuning (LOGSIEVE_CPU_MULTI, the calibration cache)
    // is read here, once, and passed down.
    let tuning = logsieve::Tuning::from_env();
    let code = match &cli.command {
        Command::Search(a) => cmd::search::run(a, &tuning),
        Command::Gen(a) => cmd::gen::run(a),
        Command::Demo(a) => cmd::demo::run(a, &tuning),
        Command::GpuInfo => cmd::gpu_info::run(),
        Command::Web(a) => cmd::web::run(a),
        Command::Stats(a) => cmd::stats::run(a, &tuning),
        Command::Bench(a) => cmd::bench::run(a, &tuning),
        Command::Serve(a) => cmd::serve::run(a, &tuning),
    };
    std::process::exit(code);
}
