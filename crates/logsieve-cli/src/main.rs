//! The `logsieve` command: parses flags and dispatches to a subcommand. The
//! search itself lives in the `logsieve` library; the tables of `logsieve
//! demo` and `logsieve bench` here (`tables/`), the narrower benchmarks in
//! `logsieve-bench` (a leaf: nothing depends on it).

mod cmd;
mod exit;
mod flags;
mod input;
mod printer;
mod remote;
mod tables;

use std::path::{Path, PathBuf};

use clap::FromArgMatches;

use exit::{err, EXIT_ERROR};
use flags::{Cli, Command};

fn main() {
    ensure_runtime_dir();
    let (args, config_error) = flags::argv::expand(std::env::args_os().collect());
    if let Some(e) = config_error {
        // As rg: an unreadable defaults file is reported, not fatal.
        err(format!("{} {e}", flags::argv::CONFIG_ENV));
    }
    // As `Cli::try_parse_from`, over the definition with its help texts
    // wrapped.
    let mut definition = flags::command();
    let parsed = definition
        .try_get_matches_from_mut(args)
        .and_then(|mut m| Cli::from_arg_matches_mut(&mut m))
        .map_err(|e| e.format(&mut definition));
    let cli = match parsed {
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
        Command::Search(a) => cmd::search::run(a, &a.gpus.tuned(&tuning)),
        Command::Gen(a) => cmd::gen::run(a),
        Command::Demo(a) => cmd::demo::run(a, &tuning),
        Command::GpuInfo => cmd::gpu_info::run(),
        Command::Web(a) => cmd::web::run(a),
        Command::Stats(a) => cmd::stats::run(a, &a.gpus.tuned(&tuning)),
        Command::Patterns(a) => cmd::patterns::run(a),
        Command::Bench(a) => cmd::bench::run(a, &tuning),
        Command::Completions(a) => cmd::completions::completions(a),
        Command::Man(a) => cmd::completions::man(a),
        Command::Serve(a) => cmd::serve::run(a, &tuning),
        Command::Sql(a) => cmd::sql::run(a, &tuning),
        Command::Cluster(a) => cmd::cluster::run(a, &tuning),
    };
    std::process::exit(code);
}

/// Points `XDG_RUNTIME_DIR` at a private directory when it is unset or not a
/// directory.
///
/// Why: the Vulkan loader (and Mesa's WSI layers it loads while wgpu
/// enumerates adapters) prints `error: XDG_RUNTIME_DIR is invalid or not
/// set` on stderr when it is missing, as under `sudo`, `env -i`, cron or a
/// container. That line is noise to a user who only searched logs. Nothing
/// we run needs the directory's content; it only has to exist.
///
/// Why here: `std::env::set_var` is only sound while no other thread reads
/// the environment, so this runs first in `main`, before clap, rayon or
/// wgpu start any thread. It changes this process's environment only.
fn ensure_runtime_dir() {
    let var = "XDG_RUNTIME_DIR";
    if std::env::var_os(var).is_some_and(|d| Path::new(&d).is_dir()) {
        return;
    }
    if let Some(dir) = private_dir() {
        std::env::set_var(var, dir);
    }
}

/// `$TMPDIR/logsieve-runtime-UID`, mode 0700, owned by us; `None` when it
/// cannot be made or someone else owns it.
#[cfg(unix)]
fn private_dir() -> Option<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    // Our uid without libc: the owner of our own /proc entry (Linux).
    let uid = std::fs::metadata("/proc/self").ok()?.uid();
    let dir = std::env::temp_dir().join(format!("logsieve-runtime-{uid}"));
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    let meta = std::fs::symlink_metadata(&dir).ok()?;
    let private = meta.is_dir() && meta.uid() == uid && meta.permissions().mode() & 0o077 == 0;
    private.then_some(dir)
}

#[cfg(not(unix))]
fn private_dir() -> Option<PathBuf> {
    None
}
