//! The `logsieve` command. It parses flags and prints; the search itself
//! lives in the `logsieve` library.

mod args;
mod bench;
mod demo;
mod json;
mod patterns;
mod search;
mod stats;
mod walk_args;
mod web;

use std::io::Write;

use clap::Parser;

use args::{Cli, Command, GenArgs};
use search::{err, EXIT_ERROR};

fn gen(a: &GenArgs) -> i32 {
    let data = logsieve::gen::generate(&logsieve::gen::GenOptions {
        lines: a.lines,
        seed: a.seed,
        ..Default::default()
    });
    let res = if a.output.as_os_str() == "-" {
        std::io::stdout().lock().write_all(&data)
    } else {
        std::fs::write(&a.output, &data)
    };
    match res {
        Ok(()) => 0,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            err(format!("{}: {e}", a.output.display()));
            EXIT_ERROR
        }
    }
}

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
    let code = match &cli.command {
        Command::Search(a) => search::run(a),
        Command::Gen(a) => gen(a),
        Command::Demo(a) => demo::run(a),
        Command::GpuInfo => demo::gpu_info(),
        Command::Web(a) => web::run(a),
        Command::Stats(a) => stats::run(a),
        Command::Bench(a) => bench::run(a),
    };
    std::process::exit(code);
}
