//! `logsieve gen`: deterministic synthetic logs to a file or stdout.

use std::io::Write;

use crate::exit::{err, EXIT_ERROR};
use crate::flags::GenArgs;

/// Runs `logsieve gen`; returns the exit code.
pub fn run(a: &GenArgs) -> i32 {
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
