//! `logsieve cluster worker|status` and `logsieve sql --cluster`.
//!
//! A worker loads its share of the files once (each file a shard; on the
//! GPU as `--gpu` says), prints `listening on ADDR` and serves their
//! scans until it is stopped (`sql --cluster` is in `cmd/sql.rs`). With
//! `--follow` the server's follower appends to its session as files
//! grow, and new files are new shards.

use std::io::Write;
use std::sync::Arc;

use logsieve::{SearchOptions, Tuning};
use logsieve_cluster::{Cluster, WorkerStatus};
use parking_lot::RwLock;

use crate::exit::{err, EXIT_ERROR};
use crate::flags::cluster::{ClusterArgs, ClusterCommand, StatusArgs, WorkerArgs};

/// `logsieve cluster ...`; returns the exit code.
pub fn run(a: &ClusterArgs, tuning: &Tuning) -> i32 {
    let code = match &a.command {
        ClusterCommand::Worker(w) => worker(w, tuning),
        ClusterCommand::Status(s) => status(s),
    };
    code.unwrap_or_else(|e| {
        err(e);
        EXIT_ERROR
    })
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Runtime::new().map_err(|e| format!("cannot start the runtime: {e}"))
}

fn worker(a: &WorkerArgs, tuning: &Tuning) -> Result<i32, String> {
    let token = crate::input::token(&a.token_file)?;
    logsieve::auth::check_listen(&a.listen, token.is_some())?;
    let replicas = a.replicas as usize;
    let keep = a
        .shard_of
        .map(|(i, n)| move |k: usize| logsieve_cluster::holds(k, i, n, replicas));
    let follow = a.follow.settings()?;
    // The follower's warnings (a file that cannot be read) go to stderr.
    logsieve_server::init_tracing();
    let (corpus, had_error, tracker) = match &follow {
        Some(settings) => {
            let (t, corpus, errors) = logsieve::corpus::follow::Tracker::start(
                &a.paths,
                logsieve::corpus::follow::FollowOptions {
                    walk: a.walk.options(),
                    load: a.input.load_options(),
                    idle_flush: settings.idle,
                    ..Default::default()
                },
            );
            for e in &errors {
                err(e);
            }
            (corpus, !errors.is_empty(), Some(t))
        }
        None => {
            let (corpus, had_error) = crate::input::load_share(
                &a.paths,
                a.input,
                &a.walk,
                keep.as_ref().map(|f| f as &dyn Fn(usize) -> bool),
            );
            (corpus, had_error, None)
        }
    };
    if corpus.docs().is_empty() && follow.is_none() {
        return Err(match a.shard_of {
            Some((i, n)) => {
                format!("--shard-of {i}/{n}: no file is this worker's (fewer files than workers?)")
            }
            None => "no file could be read: nothing to serve".into(),
        });
    }
    let mut session = crate::cmd::sql::session(corpus, &a.columns, tuning)?;
    logsieve_server::load::attach(&mut session, a.gpu.into(), tuning)?;
    let device = session
        .gpu_state()
        .map_or_else(|| "cpu".to_string(), |g| g.name);
    let config = logsieve_cluster::worker::WorkerConfig {
        token,
        device,
        opts: SearchOptions {
            backend: a.engine.backend.choice(),
            threads: a.engine.threads,
            ..Default::default()
        },
        following: follow.is_some(),
    };
    let shards = session.corpus().docs().len();
    let bytes = session.corpus().total_bytes();
    let session = Arc::new(RwLock::new(session));
    if let (Some(t), Some(settings)) = (tracker, follow) {
        let owner = logsieve_server::follow::Alone(Arc::downgrade(&session));
        logsieve_server::follow::spawn_for(owner, t, a.paths.clone(), settings);
    }
    let rt = runtime()?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(a.listen)
            .await
            .map_err(|e| format!("--listen {}: {e}", a.listen))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        eprintln!("{shards} shard(s), {bytes} bytes, on {}", config.device);
        println!("listening on {addr}");
        let _ = std::io::stdout().flush();
        logsieve_cluster::worker::serve(session, config, listener).await
    })?;
    Ok(if had_error { EXIT_ERROR } else { 0 })
}

fn status(a: &StatusArgs) -> Result<i32, String> {
    let urls = logsieve_cluster::worker_urls(&a.addrs)?;
    let cluster = Cluster::new(urls, crate::input::token(&a.token_file)?);
    let answers = runtime()?.block_on(cluster.statuses());
    let mut code = 0;
    if a.json {
        let v: Vec<serde_json::Value> = answers
            .iter()
            .map(|(u, s)| match s {
                Ok(s) => serde_json::json!({"worker": u.as_str(), "status": s}),
                Err(e) => serde_json::json!({"worker": u.as_str(), "error": e}),
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?
        );
    }
    for (u, s) in &answers {
        match s {
            Ok(s) if !a.json => print_status(u, s),
            Ok(_) => {}
            Err(e) => {
                err(format!("{u}: {e}"));
                code = EXIT_ERROR;
            }
        }
    }
    Ok(code)
}

fn print_status(u: &url::Url, s: &WorkerStatus) {
    let bytes: u64 = s.shards.iter().map(|x| x.bytes).sum();
    let lines: u64 = s.shards.iter().map(|x| x.lines).sum();
    println!(
        "{}  {}  {} shard(s)  {bytes} bytes  {lines} lines  fields [{}]",
        u.as_str().trim_end_matches('/'),
        s.device,
        s.shards.len(),
        s.fields.join(", ")
    );
    if s.following {
        println!("  following its files");
    }
    for sh in &s.shards {
        println!(
            "  {}  {} bytes  {} lines  {} scan(s)",
            sh.name, sh.bytes, sh.lines, sh.scans
        );
    }
}
