//! End to end through the routing point: what a front end pays per request
//! on a resident corpus (`Session::search` / `count_per_pattern` / `stats`
//! with `--backend auto`), for the five reference literals (count and line
//! ids), a 10k-pattern list (per-pattern counts) and a stats query (last 15
//! minutes → `-F 192.168.1.` → count by host). Every answer is checked
//! against the CPU's; the exit status is 1 on a mismatch.
//!
//! Usage: `route [--lines N] [--iters N]`. Medians of `--iters` runs after
//! two warm-ups, back to back (hot), then with 100 ms idle gaps
//! (interactive: the GPU's clocks drop between queries).

use std::time::{Duration, Instant};

use logsieve::gen::{generate, GenOptions};
use logsieve::stats::{ColumnOptions, Columns, FieldSpec, StatsQuery};
use logsieve::{BackendChoice, Corpus, QueryBuilder, SearchOptions, Session, Syntax, Tuning, Want};

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1e3
}

fn timed<T>(iters: usize, gap: Duration, mut f: impl FnMut() -> T) -> (f64, T) {
    let _ = f();
    let mut out = f();
    let mut ts = Vec::with_capacity(iters);
    for _ in 0..iters {
        if !gap.is_zero() {
            std::thread::sleep(gap);
        }
        let t = Instant::now();
        out = f();
        ts.push(t.elapsed());
    }
    (median(ts), out)
}

fn main() {
    let mut lines = 1_000_000u64;
    let mut iters = 30usize;
    let mut tuning = Tuning::default();
    let mut it = std::env::args().skip(1);
    while let Some(f) = it.next() {
        let v = it.next().unwrap_or_default();
        match f.as_str() {
            "--lines" => lines = v.parse().expect("--lines N"),
            "--iters" => iters = v.parse().expect("--iters N"),
            // The corpus in shards over several GPUs (all|N|0,2), and a
            // GPU memory budget (the rest on the CPU tier).
            "--gpus" => tuning.gpu.gpus = logsieve::gpu::GpuSelection::parse(&v).expect("--gpus"),
            "--gpu-memory" => {
                tuning.gpu.gpu_memory = Some(logsieve::gpu::parse_size(&v).expect("--gpu-memory"))
            }
            _ => {
                eprintln!(
                    "usage: route [--lines N] [--iters N] [--gpus all|N|LIST] [--gpu-memory SIZE]"
                );
                std::process::exit(2)
            }
        }
    }
    let data = generate(&GenOptions {
        lines,
        seed: 42,
        ..Default::default()
    });
    let mut session = Session::with_tuning(Corpus::from_bytes("bench", data), tuning);
    if let Err(e) = session.attach_gpu() {
        eprintln!("no GPU: {e}");
    }
    if let Some(l) = session.layout() {
        eprintln!("layout over {} GPUs: {l:?}", session.gpus().len());
    }
    let cols = Columns::build(
        session.corpus(),
        &ColumnOptions {
            fields: vec![FieldSpec::host()],
            ..Default::default()
        },
    );
    let newest = cols.newest().unwrap_or(0);
    session.set_columns(cols);
    let mut bad = 0;
    let auto = |want| SearchOptions {
        backend: BackendChoice::Auto,
        threads: 0,
        want,
        ..Default::default()
    };
    let cpu = |want| SearchOptions {
        backend: BackendChoice::Cpu,
        threads: 0,
        want,
        ..Default::default()
    };
    println!("| request | hot ms | interactive ms | backend | answer |");
    println!("|---|---:|---:|---|---:|");
    for p in [
        "ERROR_503",
        "192.168.1",
        "error",
        "NullPointerException",
        "x",
    ] {
        let q = QueryBuilder::new()
            .syntax(Syntax::Fixed)
            .build(&[p])
            .expect("query");
        for want in [Want::Count, Want::Lines] {
            let reference = session.search(&q, &cpu(want)).expect("cpu");
            let (hot, r) = timed(iters, Duration::ZERO, || {
                session.search(&q, &auto(want)).expect("search")
            });
            let (idle, _) = timed(iters.min(10), Duration::from_millis(100), || {
                session.search(&q, &auto(want)).expect("search")
            });
            if r.docs != reference.docs {
                bad += 1;
            }
            println!(
                "| `{p}` {want:?} | {hot:.3} | {idle:.3} | {} | {} |",
                r.backend.name,
                r.total()
            );
        }
    }
    let pats: Vec<String> = (0..10_000)
        .map(|i| format!("10.{}.{}.{}", (i / 65536) % 256, (i / 256) % 256, i % 256))
        .collect();
    let q = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .build(&pats)
        .expect("query");
    let reference = session
        .count_per_pattern(&q, &cpu(Want::Count))
        .expect("cpu");
    let (hot, r) = timed(iters.min(10), Duration::ZERO, || {
        session
            .count_per_pattern(&q, &auto(Want::Count))
            .expect("per pattern")
    });
    if r.lines != reference.lines || r.occurrences != reference.occurrences {
        bad += 1;
    }
    println!(
        "| 10k patterns, per-pattern counts | {hot:.3} | | {} | {} |",
        r.backend.name,
        r.lines.iter().sum::<u64>()
    );
    let sq = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .build(&["192.168.1."])
        .expect("query");
    let stq = StatsQuery {
        search: Some(&sq),
        since: Some(newest - 15 * 60 * 1000),
        until: None,
        count_by: vec![0],
        histogram: None,
    };
    let (reference, _) = session.stats(&stq, &cpu(Want::Count)).expect("cpu");
    let gpu_opts = SearchOptions {
        backend: if session.has_gpu() {
            BackendChoice::Gpu
        } else {
            BackendChoice::Cpu
        },
        threads: 0,
        want: Want::Count,
        ..Default::default()
    };
    let (hot, (s, rep)) = timed(iters, Duration::ZERO, || {
        session.stats(&stq, &gpu_opts).expect("stats")
    });
    if s.selected != reference.selected || s.groups.len() != reference.groups.len() {
        bad += 1;
    }
    println!(
        "| stats: 15m → 192.168.1. → by host | {hot:.3} | | {} | {} |",
        rep.name, s.selected
    );
    if bad > 0 {
        eprintln!("{bad} answers differ from the CPU's");
        std::process::exit(1);
    }
}
