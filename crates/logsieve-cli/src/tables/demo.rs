//! The demo (`logsieve demo`): generate lines in memory, load them, and
//! time the reference queries on every backend that exists here, through
//! the session (each row forces a backend or a GPU kernel).

use std::time::{Duration, Instant};

use logsieve::gen::{generate, GenOptions};
use logsieve::gpu::GpuKernel;
use logsieve::{BackendChoice, Corpus, QueryBuilder, SearchOptions, Session, Syntax, Tuning, Want};

use super::{median, QUERIES};

/// What to run (the flags of `logsieve demo`).
#[derive(Clone, Debug)]
pub struct Options {
    /// Number of lines to generate.
    pub lines: u64,
    /// Runs per query (the median is shown).
    pub runs: usize,
    /// Skip the GPU rows even when an adapter exists.
    pub no_gpu: bool,
    /// Run every GPU kernel even on a software adapter.
    pub all_kernels: bool,
    /// The tuning of the session and its queries.
    pub tuning: Tuning,
}

struct Row {
    query: &'static str,
    backend: String,
    matches: u64,
    time: Duration,
}

/// Runs the demo, printing as it goes on stdout; `Err` names the row that
/// failed or disagreed with the first row's count.
pub fn run(a: &Options) -> Result<(), String> {
    let t = Instant::now();
    let data = generate(&GenOptions {
        lines: a.lines,
        ..Default::default()
    });
    let bytes = data.len();
    println!(
        "generated {} lines, {:.1} MB in {:.2} s",
        a.lines,
        bytes as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    let mut session = Session::with_tuning(Corpus::from_bytes("demo", data), a.tuning.clone());
    let t = Instant::now();
    let lines = session.corpus().docs()[0].lines().len();
    println!(
        "line index: {lines} lines in {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut rows = Vec::new();
    let mut configs: Vec<(String, SearchOptions)> = vec![
        (
            "cpu 1 thread".into(),
            SearchOptions {
                backend: BackendChoice::Cpu,
                threads: 1,
                want: Want::Count,
                ..Default::default()
            },
        ),
        (
            format!("cpu {cores} threads"),
            SearchOptions {
                backend: BackendChoice::Cpu,
                threads: 0,
                want: Want::Count,
                ..Default::default()
            },
        ),
    ];
    if !a.no_gpu {
        let t = Instant::now();
        match session.attach_gpu() {
            Ok(()) => {
                let g = session.gpu().expect("attached");
                println!(
                    "GPU: {} ({}, {}); start-up + upload {:.1} ms, upload {:.2} GB/s",
                    g.context().info().name,
                    g.context().info().device_type,
                    g.context().info().backend,
                    t.elapsed().as_secs_f64() * 1e3,
                    g.upload_gbps()
                );
                let software = g.context().info().is_software;
                if software && !a.all_kernels {
                    println!("software adapter: only the scan kernel runs (--all-kernels for every kernel)");
                }
                for k in GpuKernel::ALL {
                    if software && !a.all_kernels && k != GpuKernel::Scan {
                        continue;
                    }
                    configs.push((
                        format!("gpu {}", k.name()),
                        SearchOptions {
                            backend: BackendChoice::Gpu,
                            want: Want::Count,
                            gpu_kernel: Some(k),
                            ..Default::default()
                        },
                    ));
                }
            }
            Err(e) => println!("GPU rows skipped: {e}"),
        }
    }
    configs.push((
        "auto".into(),
        SearchOptions {
            backend: BackendChoice::Auto,
            threads: 0,
            want: Want::Count,
            ..Default::default()
        },
    ));
    for q in QUERIES {
        let query = QueryBuilder::new()
            .syntax(Syntax::Fixed)
            .cpu_multi(a.tuning.cpu_multi)
            .build(&[q])
            .map_err(|e| e.to_string())?;
        let mut reference = None;
        for (label, opts) in &configs {
            let mut times = Vec::new();
            let mut count = 0;
            let mut name = label.clone();
            for _ in 0..a.runs.max(1) {
                match session.search(&query, opts) {
                    Ok(r) => {
                        times.push(r.backend.elapsed);
                        count = r.total();
                        name = format!("{label} [{}]", r.backend.name);
                    }
                    Err(e) => return Err(format!("{label}: {e}")),
                }
            }
            if *reference.get_or_insert(count) != count {
                return Err(format!(
                    "{label} found {count} lines for {q:?}, the first backend found {}",
                    reference.unwrap()
                ));
            }
            rows.push(Row {
                query: q,
                backend: name,
                matches: count,
                time: median(times),
            });
        }
    }
    // Column widths from the content, so that the header, the rule and
    // every row line up whatever the backend names are.
    let qw = rows.iter().map(|r| r.query.len()).max().unwrap_or(0).max(5);
    let bw = rows
        .iter()
        .map(|r| r.backend.len())
        .max()
        .unwrap_or(0)
        .max(7);
    println!();
    println!(
        "| {:<qw$} | {:<bw$} | {:>9} | {:>10} | {:>8} |",
        "query", "backend", "matches", "time (ms)", "GB/s"
    );
    println!(
        "|{:-<q$}|{:-<b$}|{:->11}|{:->12}|{:->10}|",
        "",
        "",
        "",
        "",
        "",
        q = qw + 2,
        b = bw + 2
    );
    for r in &rows {
        let s = r.time.as_secs_f64();
        println!(
            "| {:<qw$} | {:<bw$} | {:>9} | {:>10.3} | {:>8.2} |",
            r.query,
            r.backend,
            r.matches,
            s * 1e3,
            bytes as f64 / s / 1e9
        );
    }
    println!(
        "\n(median of {} runs; GB/s = corpus bytes ({:.1} MB) / median time; matching-line counts agree across backends)",
        a.runs,
        bytes as f64 / 1e6
    );
    Ok(())
}
