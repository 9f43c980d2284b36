//! Pipeline benchmark: 1M generated entries resident; last 15
//! minutes → search an IP prefix (`-F 192.168.1.`) → count by host. Rows:
//! the CPU path (1 thread, all cores) and the GPU path, in the same run on
//! the same columns; every row's answer is checked against the CPU's (the
//! exit status is 1 on a mismatch), so the benchmark doubles as a test.
//!
//! Usage: `pipeline [--lines N] [--iters N] [--out FILE.md] [--no-gpu]`
//!
//! Times are medians of wall time: for the CPU, the whole `run_cpu` call;
//! for the GPU, from writing the query uniform to the counts on the host
//! (search kernel, filter + count kernel, one readback of the aggregate).

use std::time::{Duration, Instant};

use logsieve::gen::{generate, GenOptions};
use logsieve::gpu::{GpuContext, GpuCorpus};
use logsieve::stats::gpu::GpuColumns;
use logsieve::stats::{run_cpu, ColumnOptions, Columns, FieldSpec, Stats, StatsQuery};
use logsieve::{Corpus, QueryBuilder, Syntax};

struct Args {
    lines: u64,
    iters: usize,
    out: Option<std::path::PathBuf>,
    gpu: bool,
}

fn usage() -> ! {
    eprintln!("usage: pipeline [--lines N] [--iters N] [--out FILE.md] [--no-gpu]");
    std::process::exit(2)
}

fn parse() -> Args {
    let mut a = Args {
        lines: 1_000_000,
        iters: 30,
        out: None,
        gpu: true,
    };
    let mut it = std::env::args().skip(1);
    while let Some(f) = it.next() {
        match f.as_str() {
            "--no-gpu" => a.gpu = false,
            "--lines" | "--iters" | "--out" => {
                let Some(v) = it.next() else { usage() };
                match f.as_str() {
                    "--lines" => a.lines = v.parse().unwrap_or_else(|_| usage()),
                    "--iters" => a.iters = v.parse().unwrap_or_else(|_| usage()),
                    _ => a.out = Some(v.into()),
                }
            }
            _ => usage(),
        }
    }
    a.iters = a.iters.max(1);
    a
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let a = parse();
    let mut report = String::new();
    let mut line = |s: String| {
        println!("{s}");
        report.push_str(&s);
        report.push('\n');
    };
    let t = Instant::now();
    let data = generate(&GenOptions {
        lines: a.lines,
        ..Default::default()
    });
    let bytes = data.len();
    let corpus = Corpus::from_bytes("gen", data);
    let gen_t = t.elapsed();
    let t = Instant::now();
    let cols = Columns::build(
        &corpus,
        &ColumnOptions {
            year: 2026,
            fields: vec![FieldSpec::host(), FieldSpec::level()],
            ..Default::default()
        },
    );
    let cols_t = t.elapsed();
    let query = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .build(&["192.168.1."])
        .expect("query");
    let mut q = StatsQuery::new(&cols);
    q.search = Some(&query);
    q.since_spec(&cols, "15m").expect("15m");
    q.count_by(&cols, &["host"]).expect("host");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());

    line(format!(
        "corpus: {} lines, {:.1} MB generated in {:.2} s; columns (time, host, level) built in {:.1} ms on {cores} cores",
        a.lines,
        bytes as f64 / 1e6,
        gen_t.as_secs_f64(),
        ms(cols_t)
    ));
    line("query: --since 15m, -F 192.168.1., --count-by host".to_string());
    line(String::new());

    let reference: Stats = run_cpu(&corpus, &cols, &q, 1).expect("cpu");
    let mut ok = true;
    let mut rows: Vec<(String, Duration, u64, usize)> = Vec::new();
    for (name, threads) in [
        ("cpu 1 thread".to_string(), 1),
        (format!("cpu {cores} threads"), 0),
    ] {
        let mut times = Vec::new();
        let mut last = None;
        for _ in 0..a.iters {
            let t = Instant::now();
            let s = run_cpu(&corpus, &cols, &q, threads).expect("cpu");
            times.push(t.elapsed());
            last = Some(s);
        }
        let s = last.expect("ran");
        ok &= s == reference;
        rows.push((name, median(times), s.selected, s.groups.len()));
    }
    // The CPU path without the window's line-range narrowing (the search
    // over the whole corpus), for scale.
    {
        let mut full = q.clone();
        full.since = None;
        let mut times = Vec::new();
        let mut sel = 0;
        for _ in 0..a.iters.min(5) {
            let t = Instant::now();
            let s = run_cpu(&corpus, &cols, &full, 0).expect("cpu");
            times.push(t.elapsed());
            sel = s.selected;
        }
        rows.push((
            format!("cpu {cores} threads, no window (whole corpus)"),
            median(times),
            sel,
            0,
        ));
    }
    let mut gpu_note = String::from("GPU: not run (--no-gpu)");
    if a.gpu {
        match GpuContext::shared() {
            Err(e) => gpu_note = format!("GPU: none ({e})"),
            Ok(ctx) => {
                let info = ctx.info().clone();
                let t = Instant::now();
                let g = GpuCorpus::upload(&ctx, &corpus).expect("upload corpus");
                let up_c = t.elapsed();
                let t = Instant::now();
                let gc = GpuColumns::upload(&g, &corpus, &cols).expect("upload columns");
                let up_k = t.elapsed();
                gpu_note = format!(
                    "GPU: {} ({}, {}); corpus upload {:.1} ms, columns upload {:.1} ms",
                    info.name,
                    info.device_type,
                    info.backend,
                    ms(up_c),
                    ms(up_k)
                );
                // Warm-up (pipeline caches, first-touch of the buffers).
                for _ in 0..3 {
                    let _ = gc.run(&g, &corpus, &cols, &q);
                }
                let mut times = Vec::new();
                let mut last = None;
                for _ in 0..a.iters {
                    let r = gc.run(&g, &corpus, &cols, &q).expect("gpu run");
                    times.push(r.end_to_end);
                    last = Some(r.stats);
                }
                let s = last.expect("ran");
                if s != reference {
                    eprintln!("MISMATCH: GPU {s:?}\nCPU {reference:?}");
                    ok = false;
                }
                rows.push((
                    "gpu end-to-end".to_string(),
                    median(times),
                    s.selected,
                    s.groups.len(),
                ));
            }
        }
    }
    line(gpu_note);
    line(String::new());
    line("| path | median ms | selected | groups | vs cpu 1 thread |".to_string());
    line("|---|---:|---:|---:|---:|".to_string());
    let base = rows[0].1;
    for (name, t, sel, groups) in &rows {
        line(format!(
            "| {name} | {:.3} | {sel} | {groups} | {:.1}x |",
            ms(*t),
            base.as_secs_f64() / t.as_secs_f64().max(1e-9)
        ));
    }
    line(String::new());
    line(format!(
        "answers identical to the CPU 1-thread path: {}",
        if ok { "yes" } else { "NO" }
    ));
    if let Some(p) = &a.out {
        if let Err(e) = std::fs::write(p, &report) {
            eprintln!("{}: {e}", p.display());
            std::process::exit(2);
        }
    }
    if !ok {
        std::process::exit(1);
    }
}
