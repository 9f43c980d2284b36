//! Watchlists: per-pattern counts of a 10k and a 100k literal
//! set through the resident `Session`, end to end, hot (back to back) and
//! interactive (100 ms idle before each), with the kernel time beside;
//! the same sets as ad-hoc queries (the query and tables rebuilt per
//! count, as before watchlists), through the CPU's compiled counter, and
//! `rg -c -F -f` as a process. The GPU watchlist's search count must equal
//! rg's and the CPU's per-pattern counts the GPU's, or the run exits 1.
//!
//! Usage: `watchlists --file LOG [--sizes 10000,100000] [--runs N]
//!         [--idle-runs N] [--warmup-ms MS] [--rg PATH] [--out FILE.md]`
//! The hot rows follow `--warmup-ms` (2000) of back-to-back counts, so
//! that the GPU's clocks are up (they fall while the host-only rows run).
//! `LOGSIEVE_BLOOM_DIAG=8` keeps bloom's workgroup filter (the comparison).
//! `--stages P1,P2,..` also counts, on the host, the positions passing each
//! stage of bloom's filters with its filter in each number of parts
//! (`LOGSIEVE_BLOOM_PARTS` sets the parts the GPU rows run with).

use std::process::Command;
use std::time::{Duration, Instant};

use logsieve::gen::SplitMix64;
use logsieve_bench::iocs::{pattern_set, token_lines};
use logsieve_bench::timing::warm_up;

use logsieve::{
    BackendChoice, Corpus, Document, SearchOptions, Session, Tuning, Want, WatchlistOptions,
};

/// Median and 90th percentile, ms.
fn stats(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    (
        ms(v[v.len() / 2]),
        ms(v[(v.len() * 9 / 10).min(v.len() - 1)]),
    )
}

/// The kernel time the executor wrote in the reason ("kernel X ms").
fn kernel_ms(reason: &str) -> Option<f64> {
    let at = reason.rfind("kernel ")? + "kernel ".len();
    reason[at..].split(' ').next()?.parse().ok()
}

/// bloom's stage counts for `pats` over `data` with its filter (at most
/// 32 KiB a part, the H100's) in `parts` parts, as a row.
fn stage_row(n: usize, pats: &[Vec<u8>], data: &[u8], parts: u32, md: &mut String) {
    let q = logsieve::QueryBuilder::new()
        .syntax(logsieve::Syntax::Fixed)
        .build(pats)
        .expect("literals");
    let st = logsieve::gpu::bloom_stages(&q, data, 8192, parts).expect("bloom tables");
    let pc = |k: u64| 100.0 * k as f64 / st.positions.max(1) as f64;
    let r = format!(
        "| {n} | bloom stages, {} part(s) of {} KiB ({:.1} bits a key) | - | - | - | \
         positions passing: filter {:.3}%, verification filter {:.4}%, key {:.4}% |\n",
        st.parts,
        st.part_bits / 8192,
        st.parts as f64 * st.part_bits as f64 / st.keys.max(1) as f64,
        pc(st.filter),
        pc(st.verify_filter),
        pc(st.key_hits)
    );
    print!("{r}");
    md.push_str(&r);
}

fn main() {
    let mut file = None;
    let mut sizes = vec![10_000usize, 100_000];
    let mut runs = 50usize;
    let mut idle_runs = 20usize;
    let mut warmup_ms = 2000u64;
    let mut rg = "rg".to_string();
    let mut out = None;
    let mut stages: Vec<u32> = Vec::new();
    let mut it = std::env::args().skip(1);
    while let Some(f) = it.next() {
        let mut v = || it.next().unwrap_or_default();
        match f.as_str() {
            "--file" => file = Some(v()),
            "--sizes" => sizes = v().split(',').filter_map(|s| s.parse().ok()).collect(),
            "--runs" => runs = v().parse().unwrap_or(50).max(1),
            "--idle-runs" => idle_runs = v().parse().unwrap_or(20).max(1),
            "--warmup-ms" => warmup_ms = v().parse().unwrap_or(2000),
            "--rg" => rg = v(),
            "--out" => out = Some(v()),
            "--stages" => stages = v().split(',').filter_map(|s| s.parse().ok()).collect(),
            _ => {
                eprintln!("watchlists: unknown flag {f}");
                std::process::exit(2)
            }
        }
    }
    let Some(file) = file else {
        eprintln!("watchlists: --file LOG is required (logsieve gen -o LOG)");
        std::process::exit(2)
    };
    let data = std::fs::read(&file).unwrap_or_else(|e| {
        eprintln!("watchlists: {file}: {e}");
        std::process::exit(2)
    });
    let lines = data.iter().filter(|&&b| b == b'\n').count() as u64;
    let freq = token_lines(&data);
    let mut corpus = Corpus::new();
    corpus.push(Document::from_bytes(&file, data.clone()));
    let mut session = Session::with_tuning(corpus, Tuning::from_env());
    let _ = session.corpus().docs()[0].lines();
    let t = Instant::now();
    if let Err(e) = session.attach_gpu() {
        eprintln!("watchlists: no GPU ({e}): GPU rows skipped");
    }
    let device = session
        .gpu_state()
        .map_or_else(|| "none".to_string(), |g| g.name);
    let diag = std::env::var("LOGSIEVE_BLOOM_DIAG").unwrap_or_default();
    let mut md = format!(
        "# Watchlists: {lines} lines ({:.0} MB), device {device}, GPU attach {:.0} ms, \
         LOGSIEVE_BLOOM_DIAG={diag:?}\n\n\
         | set | path | median ms | p90 ms | kernel ms (median) | notes |\n|---|---|---:|---:|---:|---|\n",
        data.len() as f64 / 1e6,
        t.elapsed().as_secs_f64() * 1e3
    );
    let gpu = SearchOptions {
        backend: BackendChoice::Gpu,
        ..Default::default()
    };
    // Every core (the default is one thread).
    let cpu = SearchOptions {
        backend: BackendChoice::Cpu,
        threads: 0,
        ..Default::default()
    };
    let mut rng = SplitMix64(7);
    let mut ok = true;
    let dir = std::env::temp_dir();
    for &n in &sizes {
        let pats = pattern_set(n, lines, &freq, &mut rng);
        for &parts in &stages {
            stage_row(n, &pats, &data, parts, &mut md);
        }
        let tdef = Instant::now();
        let (w, _) = session
            .define_watchlist(&format!("w{n}"), &pats, WatchlistOptions::default())
            .expect("define");
        let define_ms = tdef.elapsed().as_secs_f64() * 1e3;
        let mut row = |path: &str, ts: Vec<Duration>, ks: Vec<f64>, note: String| {
            let (med, p90) = stats(ts);
            let k = if ks.is_empty() {
                "-".to_string()
            } else {
                let mut ks = ks;
                ks.sort_by(f64::total_cmp);
                format!("{:.3}", ks[ks.len() / 2])
            };
            let r = format!("| {n} | {path} | {med:.3} | {p90:.3} | {k} | {note} |\n");
            print!("{r}");
            md.push_str(&r);
        };
        let mut reference = None;
        if session.has_gpu() {
            // The first count (tables uploaded at definition when the
            // route is the GPU; else here).
            let t = Instant::now();
            let first = session.count_watchlist(&w, &gpu).expect("gpu count");
            let first_ms = t.elapsed().as_secs_f64() * 1e3;
            // Hot means the GPU's clocks are up: after the host-only rows
            // of the previous set the H100 sat at 345 MHz and back-to-back
            // counts alone took seconds to raise it (2026-11-25: the 100k
            // kernel 9.6 ms at 345 MHz, 2.0 ms at 1980). Count back to back
            // for `--warmup-ms` first.
            warm_up(warmup_ms, || {
                session.count_watchlist(&w, &gpu).expect("gpu count");
            });
            let (mut ts, mut ks) = (Vec::new(), Vec::new());
            for _ in 0..runs {
                let t = Instant::now();
                let c = session.count_watchlist(&w, &gpu).expect("gpu count");
                ts.push(t.elapsed());
                ks.extend(kernel_ms(&c.backend.reason));
            }
            if std::env::var_os("LOGSIEVE_BENCH_PER_RUN").is_some() {
                let k: Vec<String> = ks.iter().map(|k| format!("{k:.2}")).collect();
                println!("kernel ms per run, hot: {}", k.join(" "));
            }
            row(
                "GPU watchlist, hot",
                ts,
                ks,
                format!(
                    "{} ({}); define {define_ms:.1} ms, first count {first_ms:.3} ms",
                    first.backend.name,
                    first.backend.reason.split("; kernel").next().unwrap_or("")
                ),
            );
            let (mut ts, mut ks) = (Vec::new(), Vec::new());
            for _ in 0..idle_runs {
                std::thread::sleep(Duration::from_millis(100));
                let t = Instant::now();
                let c = session.count_watchlist(&w, &gpu).expect("gpu count");
                ts.push(t.elapsed());
                ks.extend(kernel_ms(&c.backend.reason));
            }
            row("GPU watchlist, 100 ms idle", ts, ks, String::new());
            // Back to back again, after the idle runs: tells a slow start
            // after the definition from a slow back-to-back mode.
            let (mut ts, mut ks) = (Vec::new(), Vec::new());
            for _ in 0..runs {
                let t = Instant::now();
                let c = session.count_watchlist(&w, &gpu).expect("gpu count");
                ts.push(t.elapsed());
                ks.extend(kernel_ms(&c.backend.reason));
            }
            if std::env::var_os("LOGSIEVE_BENCH_PER_RUN").is_some() {
                let k: Vec<String> = ks.iter().map(|k| format!("{k:.2}")).collect();
                println!("kernel ms per run, hot again: {}", k.join(" "));
            }
            row("GPU watchlist, hot again", ts, ks, String::new());
            // The routing point's share of the hot time.
            let mut ts = Vec::new();
            for _ in 0..runs {
                let t = Instant::now();
                let r = session.route(&logsieve::Request::Watchlist(&w), &gpu);
                ts.push(t.elapsed());
                assert!(r.is_ok());
            }
            row(
                "route alone (Session::route)",
                ts,
                Vec::new(),
                String::new(),
            );
            // Before watchlists: the query built and counted per request.
            let (mut ts, mut ks) = (Vec::new(), Vec::new());
            for _ in 0..5 {
                let t = Instant::now();
                let q = logsieve::QueryBuilder::new()
                    .syntax(logsieve::Syntax::Fixed)
                    .build(&pats)
                    .expect("query");
                let c = session.count_per_pattern(&q, &gpu).expect("ad hoc");
                ts.push(t.elapsed());
                ks.extend(kernel_ms(&c.backend.reason));
            }
            row("GPU ad hoc (query built per count)", ts, ks, String::new());
            let s = session
                .search(
                    w.query(),
                    &SearchOptions {
                        want: Want::Count,
                        ..gpu.clone()
                    },
                )
                .expect("gpu search");
            reference = Some((first, s.total()));
        }
        let mut ts = Vec::new();
        let mut last = None;
        for _ in 0..5 {
            let t = Instant::now();
            last = Some(session.count_watchlist(&w, &cpu).expect("cpu count"));
            ts.push(t.elapsed());
        }
        let c = last.expect("ran");
        row(
            "CPU watchlist (compiled counter)",
            ts,
            Vec::new(),
            c.backend.name.clone(),
        );
        let pfile = dir.join(format!("watchlist-{n}.txt"));
        let mut body = pats.join(&b'\n');
        body.push(b'\n');
        std::fs::write(&pfile, &body).expect("write patterns");
        let mut ts = Vec::new();
        let mut rg_count = None;
        for _ in 0..3 {
            let t = Instant::now();
            let o = Command::new(&rg)
                .args(["-c", "-F", "-f"])
                .arg(&pfile)
                .arg(&file)
                .output();
            ts.push(t.elapsed());
            rg_count = o.ok().and_then(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .trim()
                    .parse::<u64>()
                    .ok()
            });
        }
        match rg_count {
            Some(k) => row(
                "rg -c -F -f (process; lines, not per pattern)",
                ts,
                Vec::new(),
                format!("{k} lines"),
            ),
            None => println!("| {n} | rg | - | - | - | not run ({rg}) |"),
        }
        if let Some((g, lines_gpu)) = reference {
            if g.lines != c.lines || g.occurrences != c.occurrences {
                eprintln!("MISMATCH {n}: GPU and CPU per-pattern counts differ");
                ok = false;
            }
            if rg_count.is_some_and(|k| k != lines_gpu) {
                eprintln!("MISMATCH {n}: GPU {lines_gpu} lines, rg {rg_count:?}");
                ok = false;
            }
            println!(
                "| {n} | check | | | | GPU search {lines_gpu} lines, rg {rg_count:?}, {} patterns hit |",
                g.matched().len()
            );
        }
    }
    if let Some(o) = out {
        std::fs::write(o, &md).expect("write --out");
    }
    if !ok {
        std::process::exit(1);
    }
}
