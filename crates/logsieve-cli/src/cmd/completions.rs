//! `logsieve completions SHELL` and `logsieve man`: generated from the clap
//! definitions, so they never drift from the flags.

use std::io::{self, Write};

use clap::CommandFactory;

use crate::exit::{err, EXIT_ERROR};
use crate::flags::{Cli, CompletionsArgs};

/// Prints the completion script for the shell; returns the exit code.
pub fn completions(a: &CompletionsArgs) -> i32 {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "logsieve", &mut out);
    write_out(&out)
}

/// Prints the man page (roff); returns the exit code.
pub fn man() -> i32 {
    let mut out = Vec::new();
    if let Err(e) = clap_mangen::Man::new(Cli::command()).render(&mut out) {
        err(e);
        return EXIT_ERROR;
    }
    write_out(&out)
}

fn write_out(bytes: &[u8]) -> i32 {
    match io::stdout().lock().write_all(bytes) {
        Ok(()) => 0,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            err(e);
            EXIT_ERROR
        }
    }
}
