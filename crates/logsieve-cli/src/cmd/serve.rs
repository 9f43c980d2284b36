//! `logsieve serve`: turns the flags into a `logsieve_server::ServeConfig`
//! and runs it; the server (loading, routes, limits) is the
//! `logsieve-server` crate.

use std::time::Duration;

use logsieve::Tuning;
use logsieve_server::{GpuMode, Limits, LoadConfig, ServeConfig, Source};

use crate::exit::{err, EXIT_ERROR};
use crate::flags::serve::{GpuArg, ServeArgs};

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
    for (flag, v) in [
        ("--follow-idle", a.follow_idle),
        ("--follow-interval", a.follow_interval),
    ] {
        if !(v > 0.0 && v.is_finite()) {
            err(format!("{flag} {v}: expected a positive number of seconds"));
            return EXIT_ERROR;
        }
    }
    logsieve_server::init_tracing();
    let source = if a.demo {
        Source::Demo { lines: a.lines }
    } else if a.follow_files {
        Source::Follow {
            paths: if a.paths.is_empty() {
                vec!["./".into()]
            } else {
                a.paths.clone()
            },
            walk: a.walk.options(),
            load: a.input.load_options(),
            settings: logsieve_server::follow::FollowSettings {
                idle: Duration::from_secs_f64(a.follow_idle),
                interval: Duration::from_secs_f64(a.follow_interval),
                force_poll: a.follow_poll,
                ..Default::default()
            },
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
        },
        load: LoadConfig {
            source,
            gpu: match a.gpu {
                GpuArg::Auto => GpuMode::Auto,
                GpuArg::On => GpuMode::On,
                GpuArg::Off => GpuMode::Off,
            },
            fields: a.field.clone(),
            time_format: a.time_format.clone(),
            year: a.year,
            progress_bar: true,
            tuning: tuning.clone(),
        },
        web_dir: a.web_dir.clone(),
    };
    match logsieve_server::run(config) {
        Ok(()) => 0,
        Err(e) => {
            err(e);
            EXIT_ERROR
        }
    }
}
