//! `logsieve serve`: turns the flags into a `logsieve_server::ServeConfig`
//! and runs it; the server (loading, routes, limits) is the
//! `logsieve-server` crate.

use std::time::Duration;

use logsieve::Tuning;
use logsieve_server::{Limits, LoadConfig, ServeConfig, Source};

use crate::exit::{err, EXIT_ERROR};
use crate::flags::serve::ServeArgs;

/// Runs `logsieve serve`; returns the exit code (0 after a signal, 2 on an
/// error).
pub fn run(a: &ServeArgs, tuning: &Tuning) -> i32 {
    if a.walk.lists() {
        return super::files::list(&a.paths, &a.walk);
    }
    if !(a.timeout > 0.0 && a.timeout.is_finite()) {
        err(format!(
            "--timeout {}: expected a positive number of seconds",
            a.timeout
        ));
        return EXIT_ERROR;
    }
    let follow = match a.follow.settings() {
        Ok(f) => f,
        Err(e) => {
            err(e);
            return EXIT_ERROR;
        }
    };
    let cluster = match &a.cluster {
        None => None,
        Some(addrs) => match crate::input::token(&a.cluster_token_file) {
            Ok(t) => Some((addrs.clone(), t)),
            Err(e) => {
                err(format!("--cluster-token-file: {e}"));
                return EXIT_ERROR;
            }
        },
    };
    limit_malloc_arenas();
    logsieve_server::init_tracing();
    let source = if a.demo {
        Source::Demo { lines: a.lines }
    } else if let Some(settings) = follow {
        Source::Follow {
            paths: if a.paths.is_empty() {
                vec!["./".into()]
            } else {
                a.paths.clone()
            },
            walk: a.walk.options(),
            load: a.input.load_options(),
            settings,
        }
    } else {
        Source::Paths {
            paths: if a.paths.is_empty() {
                vec!["./".into()]
            } else {
                a.paths.clone()
            },
            walk: a.walk.options(),
            load: a.input.load_options(),
        }
    };
    let config = ServeConfig {
        listen: a.listen,
        token_file: a.token_file.clone(),
        tls: a.tls_cert.clone().zip(a.tls_key.clone()),
        cors: a.cors.clone(),
        limits: Limits {
            timeout: Duration::from_secs_f64(a.timeout),
            max_in_flight: a.max_in_flight.max(1),
            max_body: a.max_body,
            threads: 0,
            max_tails: a.max_tails,
            keep_warm: a.keep_warm,
        },
        load: LoadConfig {
            source,
            gpu: a.gpu.into(),
            fields: a.columns.field.clone(),
            time_format: a.columns.time_format.clone(),
            year: a.columns.year,
            progress_bar: true,
            tuning: tuning.clone(),
        },
        web_dir: a.web_dir.clone(),
        cluster,
    };
    match logsieve_server::run(config) {
        Ok(()) => 0,
        Err(e) => {
            err(e);
            EXIT_ERROR
        }
    }
}

/// glibc's malloc arenas a long-running server keeps, unless the user set
/// `MALLOC_ARENA_MAX`.
///
/// glibc gives each thread that meets a locked arena a new one, up to
/// 8 × cores; the server's many threads (tokio workers, the rayon pool,
/// the GPU threads: ~120 on a 16-core machine) then each keep freed
/// result buffers in their own arena, and resident memory only grows. On
/// the H100 machine (64-client soak, 1M lines, 2026-11-25) RSS grew from
/// 1.79 GB after a minute to 2.44 GB after 200 s with `--gpu off`, and
/// from 3.5 GB to 4.8 GB in 180 s with the GPU; with two arenas and the
/// GPU it was 0.996 GB after a minute and 0.997 GB at 200 s, at 732
/// answers/s (645 with the default).
const SERVE_MALLOC_ARENAS: i32 = 2;

/// Caps glibc's malloc arenas at [`SERVE_MALLOC_ARENAS`] before the server
/// starts its threads (arenas are made as threads first allocate).
fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt only sets a malloc tunable; it is called here
        // while the process has one thread.
        let ok = unsafe { libc::mallopt(libc::M_ARENA_MAX, SERVE_MALLOC_ARENAS) };
        if ok != 1 {
            err("warning: mallopt(M_ARENA_MAX) failed; memory may grow under load");
        }
    }
}
