//! Loading the corpus once: files (walked as `search` walks them) or
//! generated logs, the stats columns, and the GPU when one pays.

use std::io::IsTerminal;
use std::path::PathBuf;

use logsieve::corpus::{load_paths, LoadProgress, WalkOptions};
use logsieve::stats::{ColumnOptions, Columns, FieldSpec, TimeFormat};
use logsieve::{Corpus, LoadOptions, Session, Tuning};

use crate::state::{AppState, Ready};

/// What to serve.
#[derive(Clone, Debug)]
pub enum Source {
    /// Files and directories.
    Paths {
        /// As given on the command line.
        paths: Vec<PathBuf>,
        /// How directories are walked.
        walk: WalkOptions,
        /// mmap, `-z`.
        load: LoadOptions,
    },
    /// Files and directories, followed as they grow (`--follow`): read
    /// (not mapped), partial last lines held back, then the follower
    /// thread appends what is written ([`crate::follow`]).
    Follow {
        /// As given on the command line.
        paths: Vec<PathBuf>,
        /// How directories are walked (also for new files).
        walk: WalkOptions,
        /// `-z`.
        load: LoadOptions,
        /// The follower's timers.
        settings: crate::follow::FollowSettings,
    },
    /// `logsieve::gen::generate` with this many lines.
    Demo {
        /// Lines to generate.
        lines: u64,
    },
}

/// Whether the corpus goes to a GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum GpuMode {
    /// Upload when a hardware adapter exists (never a software one).
    #[default]
    Auto,
    /// Upload, or fail.
    On,
    /// CPU only.
    Off,
}

/// Everything the load needs.
#[derive(Clone, Debug)]
pub struct LoadConfig {
    /// What to load.
    pub source: Source,
    /// GPU residency.
    pub gpu: GpuMode,
    /// `--field NAME=REGEX` specs, besides the built-in `level` and `host`.
    pub fields: Vec<String>,
    /// `--time-format`.
    pub time_format: Option<String>,
    /// `--year`.
    pub year: Option<i32>,
    /// A progress bar on stderr (when it is a terminal).
    pub progress_bar: bool,
    /// The environment's tuning.
    pub tuning: Tuning,
}

/// Checks what can be checked before loading: field specs, the time
/// format. Returns the field specs.
pub fn check(config: &LoadConfig) -> Result<(Vec<FieldSpec>, Option<TimeFormat>), String> {
    let fields = FieldSpec::with_builtins(&config.fields).map_err(|e| e.to_string())?;
    let tf = TimeFormat::from_flag(config.time_format.as_deref())?;
    check_paths(&config.source)?;
    Ok((fields, tf))
}

/// The paths of the command line, when none of them can be read: an
/// error naming each (a server with nothing to serve answered every query
/// with 0). Some readable is enough: the rest are reported by the load
/// and in `/api/v1/health`'s `failed`.
fn check_paths(source: &Source) -> Result<(), String> {
    let paths = match source {
        Source::Paths { paths, .. } | Source::Follow { paths, .. } => paths,
        Source::Demo { .. } => return Ok(()),
    };
    let mut failed = Vec::new();
    for p in paths {
        if p.as_os_str() == "-" {
            return Ok(());
        }
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => match std::fs::read_dir(p) {
                Ok(_) => return Ok(()),
                Err(e) => failed.push(format!("{}: {e}", p.display())),
            },
            Ok(_) => match std::fs::File::open(p) {
                Ok(_) => return Ok(()),
                Err(e) => failed.push(format!("{}: {e}", p.display())),
            },
            Err(e) => failed.push(format!("{}: {e}", p.display())),
        }
    }
    if failed.is_empty() {
        return Ok(());
    }
    Err(format!("nothing to serve: {}", failed.join("; ")))
}

/// Loads, builds the columns, attaches the GPU as asked, and makes `state`
/// ready. Runs on a thread of its own (it blocks). Errors (a file that
/// cannot be read) are logged and the rest served; the `Err` is fatal
/// (`--gpu on` without a GPU).
pub fn load(config: &LoadConfig, state: &AppState) -> Result<(), String> {
    let (fields, time_format) = check(config)?;
    let bar = (config.progress_bar && std::io::stderr().is_terminal()).then(|| {
        let b = indicatif::ProgressBar::new(0);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{msg:8} [{bar:40}] {bytes}/{total_bytes} ({eta})",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        b.set_message("loading");
        b
    });
    let mut tracker = None;
    let corpus = match &config.source {
        Source::Follow {
            paths,
            walk,
            load,
            settings,
        } => {
            let (t, corpus, errors) = logsieve::corpus::follow::Tracker::start(
                paths,
                logsieve::corpus::follow::FollowOptions {
                    walk: walk.clone(),
                    load: *load,
                    idle_flush: settings.idle,
                    ..Default::default()
                },
            );
            for e in &errors {
                tracing::warn!("{e}");
                if bar.is_none() {
                    eprintln!("logsieve: {e}");
                }
            }
            state.set_failed(errors.iter().map(ToString::to_string).collect());
            let n = corpus.total_bytes();
            state.set_progress(LoadProgress {
                files_total: corpus.docs().len() as u64,
                files_done: corpus.docs().len() as u64,
                bytes_total: n,
                bytes_done: n,
                bytes_loaded: n,
            });
            tracker = Some((t, paths.clone(), settings.clone()));
            corpus
        }
        Source::Paths { paths, walk, load } => {
            let (corpus, errors) = load_paths(paths, walk, *load, &mut |p: LoadProgress| {
                state.set_progress(p);
                if let Some(b) = &bar {
                    b.set_length(p.bytes_total);
                    b.set_position(p.bytes_done);
                }
            });
            for e in &errors {
                tracing::warn!("{e}");
                if bar.is_none() {
                    eprintln!("logsieve: {e}");
                }
            }
            state.set_failed(errors.iter().map(ToString::to_string).collect());
            corpus
        }
        Source::Demo { lines } => {
            state.set_progress(LoadProgress {
                files_total: 1,
                ..Default::default()
            });
            let data = logsieve::gen::generate(&logsieve::gen::GenOptions {
                lines: *lines,
                ..Default::default()
            });
            let n = data.len() as u64;
            state.set_progress(LoadProgress {
                files_total: 1,
                files_done: 1,
                bytes_total: n,
                bytes_done: n,
                bytes_loaded: n,
            });
            Corpus::from_bytes("demo.log", data)
        }
    };
    if let Some(b) = &bar {
        b.set_message("columns");
    }
    state.set_phase("columns");
    // Generated logs have no modification time: their year-less lines
    // are dated by the newest dated line (a file of the same name in the
    // working directory must not decide it).
    let mtimes = match &config.source {
        Source::Demo { .. } => vec![None; corpus.docs().len()],
        _ => logsieve::stats::file_mtimes(&corpus),
    };
    let cols = Columns::build(
        &corpus,
        &ColumnOptions {
            time_format,
            year: config
                .year
                .unwrap_or_else(logsieve::stats::time::current_year),
            doc_years: config
                .year
                .map_or_else(Vec::new, |y| vec![y; corpus.docs().len()]),
            doc_mtimes: mtimes,
            fields,
        },
    );
    let mut session = Session::with_tuning(corpus, config.tuning.clone());
    session.set_columns(cols);
    state.set_phase("gpu");
    attach_gpu(&mut session, config)?;
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let ready = Ready::new(session);
    tracing::info!(
        files = ready.session.corpus().docs().len(),
        bytes = ready.session.corpus().total_bytes(),
        lines = ready.lines,
        backend = %ready.backend,
        "ready"
    );
    let gpu = ready.session.has_gpu() && ready.session.columns().is_some();
    state.set_phase("ready");
    state.set_stats_columns(if gpu { "uploading" } else { "host" }.into());
    state.set_ready(ready);
    if gpu {
        prepare_stats(state);
    }
    keep_warm(state);
    if let Some((t, paths, settings)) = tracker {
        crate::follow::spawn(state, t, paths, settings);
    }
    Ok(())
}

/// Uploads the stats columns to the GPU beside the first queries (a stats
/// query meanwhile waits for them), and says so in `/health`.
fn prepare_stats(state: &AppState) {
    let Some(ready) = state.ready() else {
        return;
    };
    let state = state.clone();
    std::thread::spawn(move || {
        let s = match ready.session.prepare_stats() {
            Ok(Some(t)) => {
                tracing::info!("stats columns uploaded in {:.2} s", t.as_secs_f64());
                format!("gpu (uploaded in {:.2} s)", t.as_secs_f64())
            }
            Ok(None) => "gpu".to_string(),
            Err(e) => {
                tracing::warn!("stats columns not uploaded: {e}");
                format!("host (upload failed: {e})")
            }
        };
        drop(ready);
        state.set_stats_columns(s);
    });
}

/// `--keep-warm EVERY`: a thread that, while no query runs, runs the
/// session's keep-warm dispatch every `EVERY` (taking the session for a
/// moment each time, so a follower's write never waits on it long).
fn keep_warm(state: &AppState) {
    let Some(every) = state.limits().keep_warm.filter(|d| !d.is_zero()) else {
        return;
    };
    if !state.ready().is_some_and(|r| r.session.has_gpu()) {
        return;
    }
    let state = state.clone();
    let mut seen = state.0.metrics.answered();
    std::thread::spawn(move || loop {
        std::thread::sleep(every);
        // Only when idle for the whole interval: a nudge between
        // back-to-back queries made each wait for it (one client's count
        // at 1M lines, p50 0.228 -> 0.472 ms on the H200, 2026-12-01).
        let now = state.0.metrics.answered();
        if state.in_flight() > 0 || std::mem::replace(&mut seen, now) != now {
            continue;
        }
        let Some(r) = state.ready() else {
            continue;
        };
        if let Err(e) = r.session.keep_warm() {
            tracing::warn!("--keep-warm stopped: {e}");
            return;
        }
    });
}

/// `--gpu auto|on|off`. Auto uploads only to a hardware adapter: a
/// resident server's repeated queries pay for the upload there, and a
/// software adapter (lavapipe) is never faster than the CPU engine.
fn attach_gpu(session: &mut Session, config: &LoadConfig) -> Result<(), String> {
    attach(session, config.gpu, &config.tuning)
}

/// `--gpu MODE` on `session` (serve's load, a cluster worker's): auto
/// uploads to a hardware adapter only, on uploads or fails, off never.
pub fn attach(session: &mut Session, mode: GpuMode, tuning: &Tuning) -> Result<(), String> {
    match mode {
        GpuMode::Off => Ok(()),
        GpuMode::On => session.attach_gpu().map_err(|e| format!("--gpu on: {e}")),
        GpuMode::Auto => {
            {
                match logsieve::gpu::GpuContext::shared_with(&tuning.gpu) {
                    Ok(ctx) if !ctx.info().is_software => {
                        if let Err(e) = session.attach_gpu() {
                            tracing::warn!("GPU not used: {e}");
                        }
                    }
                    Ok(ctx) => {
                        tracing::info!("GPU not used: {} is a software adapter", ctx.info().name)
                    }
                    Err(e) => tracing::info!("GPU not used: {e}"),
                }
            }
            Ok(())
        }
    }
}
