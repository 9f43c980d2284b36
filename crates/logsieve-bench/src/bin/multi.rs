//! Many patterns at once: IOC lists of 10 … 100k IPs, domains
//! and hashes over generated logs, about 1% of lines hit.
//!
//! Rows, all on the same data in the same run: each GPU multi-literal
//! kernel (kernel time from GPU timestamps, and end to end), the CPU session
//! on 1 thread and on all cores (its default matcher, and aho-corasick
//! forced for comparison), then `rg -c -F -f` and `grep -c -F -f` as
//! processes on a temp file. Every row's count must agree, or the run
//! exits 1 (the benchmark doubles as a correctness test).
//!
//! Usage: `multi [--lines N] [--runs N] [--sizes 10,100,1000,10000,100000]
//!         [--no-gpu] [--gpu] [--kernels bloom,ac,...] [--no-cpu]
//!         [--no-tools] [--out FILE.md]`
//! `--gpu` runs the GPU rows even on a software adapter (lavapipe: slow).
//! `--kernels` picks the GPU kernels (default: all). `--no-cpu` keeps one
//! CPU row (the default matcher on all threads: the reference count) and
//! drops the others (single-thread, forced aho-corasick, per-pattern
//! counts), for quick GPU runs.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use logsieve::gen::SplitMix64;
use logsieve::gpu::{GpuContext, GpuCorpus, GpuKernel, MultiKernel};
use logsieve::{
    BackendChoice, Corpus, CpuMulti, QueryBuilder, SearchOptions, Session, Syntax, Want,
};
use logsieve_bench::iocs::{pattern_set, token_lines};

struct Args {
    lines: u64,
    runs: usize,
    sizes: Vec<usize>,
    gpu: Option<bool>,
    kernels: Vec<MultiKernel>,
    cpu: bool,
    tools: bool,
    out: Option<PathBuf>,
    /// A pattern file instead of the generated sets (one run, its size).
    patterns: Option<PathBuf>,
}

fn parse() -> Args {
    let mut a = Args {
        lines: 1_000_000,
        runs: 3,
        sizes: vec![10, 100, 1000, 10_000, 100_000],
        gpu: None,
        kernels: MultiKernel::ALL.to_vec(),
        cpu: true,
        tools: true,
        out: None,
        patterns: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(f) = it.next() {
        let mut v = || it.next().unwrap_or_default();
        match f.as_str() {
            "--lines" => a.lines = v().parse().expect("--lines N"),
            "--runs" => a.runs = v().parse::<usize>().expect("--runs N").max(1),
            "--sizes" => {
                a.sizes = v()
                    .split(',')
                    .map(|s| s.trim().parse().expect("--sizes N,N,..."))
                    .collect()
            }
            "--no-gpu" => a.gpu = Some(false),
            "--gpu" => a.gpu = Some(true),
            "--no-tools" => a.tools = false,
            "--no-cpu" => a.cpu = false,
            "--kernels" => {
                a.kernels = v()
                    .split(',')
                    .map(|s| {
                        MultiKernel::from_name(s.trim()).unwrap_or_else(|| {
                            eprintln!("--kernels: unknown kernel {s}");
                            std::process::exit(2)
                        })
                    })
                    .collect()
            }
            "--out" => a.out = Some(v().into()),
            "--patterns" => a.patterns = Some(v().into()),
            _ => {
                eprintln!("unknown flag {f}");
                std::process::exit(2);
            }
        }
    }
    a
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Times `f` `runs` times (once when the first run takes over 5 s).
fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let t = Instant::now();
    let mut last = f();
    let first = t.elapsed();
    if first > Duration::from_secs(5) {
        return (first, last);
    }
    let mut ts = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        last = f();
        ts.push(t.elapsed());
    }
    (median(ts), last)
}

fn tool(argv: &[&str], runs: usize) -> Option<(Duration, u64)> {
    if Command::new(argv[0]).arg("--version").output().is_err() {
        return None;
    }
    let (d, out) = time(runs, || {
        Command::new(argv[0])
            .args(&argv[1..])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    });
    let out = out.ok()?;
    Some((d, out.parse().unwrap_or(0)))
}

struct Row {
    name: String,
    time: Duration,
    /// GPU rows: the first run (tables built and uploaded).
    cold: Option<Duration>,
    kernel: Option<Duration>,
    /// GPU rows: kernel time of back-to-back runs of the built query (the
    /// GPU kept busy; between the end-to-end runs it idles while the host
    /// builds the next query, and its clocks drop).
    warm: Option<Duration>,
    count: u64,
}

fn main() {
    let a = parse();
    let t = Instant::now();
    let data = logsieve::gen::generate(&logsieve::gen::GenOptions {
        lines: a.lines,
        seed: 42,
        ..Default::default()
    });
    let dir = std::env::temp_dir().join(format!("logsieve-multi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("bench.log");
    std::fs::write(&file, &data).expect("write corpus");
    let freq = token_lines(&data);
    eprintln!(
        "{} lines, {:.0} MB, {} distinct indicator tokens ({:.1} s)",
        a.lines,
        data.len() as f64 / 1e6,
        freq.len(),
        t.elapsed().as_secs_f64()
    );
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut session = Session::new(Corpus::from_bytes("bench.log", data.clone()));
    let _ = session.corpus().docs()[0].lines();
    // The GPU: its own upload, kept resident for every set.
    let mut gpu: Option<(GpuContext, GpuCorpus)> = None;
    if a.gpu != Some(false) {
        match GpuContext::new() {
            Ok(ctx) if ctx.info().is_software && a.gpu != Some(true) => {
                eprintln!(
                    "GPU {} is a software adapter: GPU rows skipped (--gpu runs them)",
                    ctx.info().name
                );
            }
            Ok(ctx) => match GpuCorpus::upload(&ctx, session.corpus()) {
                Ok(g) => {
                    eprintln!(
                        "GPU {}: uploaded at {:.1} GB/s",
                        ctx.info().name,
                        g.upload_gbps()
                    );
                    gpu = Some((ctx, g));
                }
                Err(e) => eprintln!("GPU upload failed: {e}"),
            },
            Err(e) => eprintln!("no GPU: {e}"),
        }
    }
    let device = gpu
        .as_ref()
        .map(|(c, _)| c.info().name.clone())
        .unwrap_or_else(|| "none".to_string());
    let _ = &mut session;
    let mut rng = SplitMix64(7);
    let mut md = String::new();
    md.push_str(&format!(
        "# Many patterns: {} generated lines ({:.0} MB), ~1% of lines hit\n\n\
         CPU: {threads} threads available; GPU: {device}. Times are medians of {} runs \
         (one run when a run takes over 5 s) after one run not counted; pattern-set \
         build time is included for the CPU rows (the query is compiled per run, as a \
         one-shot CLI does). GPU rows keep the last set's tables uploaded, so the counted \
         runs reuse the tables the first run built (`cold` is that first run, build \
         and upload included). `kernel` is GPU time from timestamps (median of all \
         runs); `kernel, back to back` is the median of the second half of 2 x max(runs, 5) \
         back-to-back runs of the built query (the GPU kept busy: between end-to-end runs \
         it idles while the host builds the next query, and its clocks drop). lines/s \
         uses the back-to-back kernel time for GPU rows. Ratios: rg time / row time (higher is faster).\n\n",
        a.lines,
        data.len() as f64 / 1e6,
        a.runs
    ));
    let mut ok = true;
    for &n in &a.sizes {
        let pats = match &a.patterns {
            Some(f) => std::fs::read(f)
                .expect("read --patterns")
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .map(<[u8]>::to_vec)
                .collect(),
            None => pattern_set(n, a.lines, &freq, &mut rng),
        };
        let pfile = dir.join(format!("pats-{n}.txt"));
        let mut body = pats.join(&b'\n');
        body.push(b'\n');
        std::fs::write(&pfile, &body).expect("write patterns");
        let build_with = |m: CpuMulti| {
            QueryBuilder::new()
                .syntax(Syntax::Fixed)
                .cpu_multi(m)
                .build(&pats)
                .expect("query")
        };
        let build = || build_with(CpuMulti::Auto);
        let mut rows: Vec<Row> = Vec::new();
        if let Some((_, g)) = &gpu {
            for &k in &a.kernels {
                let mut kt = Vec::new();
                let mut cold = None;
                let r = time(a.runs, || {
                    let t = Instant::now();
                    let q = build();
                    let r = g.search(session.corpus(), &q, GpuKernel::from(k), Want::Count);
                    cold.get_or_insert(t.elapsed());
                    if let Ok(r) = &r {
                        if let Some(t) = r.kernel_time {
                            kt.push(t);
                        }
                    }
                    r
                });
                let q = build();
                let mut wt = Vec::new();
                for _ in 0..a.runs.max(5) * 2 {
                    if let Ok(r) = g.search(session.corpus(), &q, GpuKernel::from(k), Want::Count) {
                        wt.extend(r.kernel_time);
                    }
                }
                let wt = wt.split_off(wt.len() / 2);
                match r {
                    (d, Ok(res)) => rows.push(Row {
                        name: format!("GPU {}", k.name()),
                        time: d,
                        cold,
                        kernel: (!kt.is_empty()).then(|| median(kt)),
                        warm: (!wt.is_empty()).then(|| median(wt)),
                        count: res.docs[0].count,
                    }),
                    (_, Err(e)) => eprintln!("GPU {}: {e}", k.name()),
                }
            }
        }
        for (label, forced) in [("", CpuMulti::Auto), (" (forced)", CpuMulti::AhoCorasick)] {
            let env = (forced != CpuMulti::Auto).then_some(());
            if !a.cpu && env.is_some() {
                continue;
            }
            let matcher = build_with(forced).cpu_matcher_name();
            if env.is_some()
                && matcher == "aho-corasick"
                && rows.iter().any(|r| r.name.contains("aho-corasick"))
            {
                continue;
            }
            for th in [1, threads] {
                if th == threads && threads == 1 {
                    continue;
                }
                if !a.cpu && th == 1 && threads > 1 {
                    continue;
                }
                // aho-corasick at 100k patterns takes minutes on 1 thread.
                if env.is_some() && n >= 100_000 && th == 1 {
                    continue;
                }
                let opts = SearchOptions {
                    backend: BackendChoice::Cpu,
                    threads: th,
                    want: Want::Count,
                    ..Default::default()
                };
                let (d, r) = time(a.runs, || {
                    session.search(&build_with(forced), &opts).expect("cpu")
                });
                rows.push(Row {
                    name: format!("CPU {matcher}{label} x{th}"),
                    time: d,
                    cold: None,
                    kernel: None,
                    warm: None,
                    count: r.total(),
                });
            }
        }
        let opts = SearchOptions {
            backend: BackendChoice::Cpu,
            threads,
            ..Default::default()
        };
        if a.cpu {
            let (d, c) = time(a.runs, || {
                session.count_per_pattern(&build(), &opts).expect("counts")
            });
            let hit = c.matched().len();
            rows.push(Row {
                name: format!("CPU count-per-pattern x{threads} ({hit} patterns hit)"),
                time: d,
                cold: None,
                kernel: None,
                warm: None,
                count: rows.first().map_or(0, |r| r.count),
            });
        }
        if a.tools {
            let (f, p) = (file.to_str().unwrap(), pfile.to_str().unwrap());
            for (name, argv) in [
                ("rg -c -F -f", vec!["rg", "-c", "-F", "-f", p, f]),
                ("grep -c -F -f", vec!["grep", "-c", "-F", "-f", p, f]),
            ] {
                if let Some((d, c)) = tool(&argv, a.runs) {
                    rows.push(Row {
                        name: name.to_string(),
                        time: d,
                        cold: None,
                        kernel: None,
                        warm: None,
                        count: c,
                    });
                }
            }
        }
        let want = rows
            .iter()
            .find(|r| r.name.starts_with("CPU"))
            .map(|r| r.count);
        let rg = rows
            .iter()
            .find(|r| r.name.starts_with("rg"))
            .map(|r| r.time);
        md.push_str(&format!(
            "## {n} patterns ({} lines hit, {:.2}%)\n\n| row | time | cold | kernel | kernel, back to back | lines/s | vs rg | count |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
            want.unwrap_or(0),
            want.unwrap_or(0) as f64 / a.lines as f64 * 100.0
        ));
        for r in &rows {
            let agree = Some(r.count) == want;
            if !agree {
                ok = false;
            }
            let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1e3);
            // Kernel times go down to a tenth of a millisecond.
            let ms3 = |d: Duration| format!("{:.3} ms", d.as_secs_f64() * 1e3);
            let lps = a.lines as f64 / r.warm.or(r.kernel).unwrap_or(r.time).as_secs_f64();
            md.push_str(&format!(
                "| {} | {} | {} | {} | {} | {:.1} M | {} | {}{} |\n",
                r.name,
                ms(r.time),
                r.cold.map(ms).unwrap_or_default(),
                r.kernel.map(ms3).unwrap_or_default(),
                r.warm.map(ms3).unwrap_or_default(),
                lps / 1e6,
                rg.map(|g| format!("{:.2}x", g.as_secs_f64() / r.time.as_secs_f64()))
                    .unwrap_or_default(),
                r.count,
                if agree { "" } else { " **MISMATCH**" }
            ));
        }
        md.push('\n');
        eprint!(
            "{}",
            md.rsplit("## ")
                .next()
                .map(|s| format!("## {s}"))
                .unwrap_or_default()
        );
    }
    if std::env::var_os("LOGSIEVE_BENCH_KEEP").is_some() {
        eprintln!("kept the corpus and pattern files in {}", dir.display());
    } else {
        let _ = std::fs::remove_dir_all(&dir);
    }
    println!("{md}");
    if let Some(out) = &a.out {
        std::fs::write(out, &md).expect("write --out");
    }
    if !ok {
        eprintln!("counts disagree");
        std::process::exit(1);
    }
}
