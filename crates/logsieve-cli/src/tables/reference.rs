//! The reference tables (`logsieve bench`), reproduced on whatever machine
//! runs them, with ripgrep and grep measured in the same run.
//!
//! 1. End-to-end per query: CPU 1 thread, CPU all cores, every GPU kernel,
//!    auto; `rg -c -F` and `grep -c -F` on the same bytes (as processes).
//! 2. Phase-1 elimination per query type, next to the true match share.
//! 3. GPU memory: every buffer and its size.
//! 4. Auto regret: auto's time over the best backend's.
//! 5. Cold one-shot: process start to answer, small and large file, with
//!    GPU start-up alone.
//!
//! Every row's count is checked against the CPU's; a disagreement makes the
//! run fail (`logsieve bench` exits 1), so `--quick` doubles as a smoke
//! test in CI.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use logsieve::gen::{generate, GenOptions};
use logsieve::gpu::{GpuContext, GpuKernel};
use logsieve::{BackendChoice, Corpus, QueryBuilder, SearchOptions, Session, Syntax, Tuning, Want};
use serde_json::{json, Value};

use super::{median, ms, today, warn as err, QUERIES};

/// What to run (the flags of `logsieve bench`).
#[derive(Clone, Debug)]
pub struct Options {
    /// Lines to generate.
    pub lines: u64,
    /// Timed runs per row (the median is reported); at least 1.
    pub runs: usize,
    /// Skip the GPU rows.
    pub no_gpu: bool,
    /// The `logsieve` executable timed in the cold one-shot table.
    pub logsieve_exe: PathBuf,
    /// The commit named in the report; `None`: asks `git rev-parse`.
    pub commit: Option<String>,
    /// The tuning of the in-process session and its queries.
    pub tuning: Tuning,
}

impl Options {
    /// The defaults of `logsieve bench` (1M lines, 15 runs), or with
    /// `quick` of `logsieve bench --quick` (100k lines, 3 runs).
    pub fn new(quick: bool, logsieve_exe: PathBuf) -> Options {
        Options {
            lines: if quick { 100_000 } else { 1_000_000 },
            runs: if quick { 3 } else { 15 },
            no_gpu: false,
            logsieve_exe,
            commit: None,
            tuning: Tuning::default(),
        }
    }
}

/// The tables of one run.
#[derive(Clone, Debug)]
pub struct Report {
    /// The tables as markdown (what `docs/bench/` holds).
    pub markdown: String,
    /// The same rows as one JSON object.
    pub json: Value,
    /// True when every row of every query found the same count.
    pub counts_agree: bool,
}

struct Row {
    query: &'static str,
    name: String,
    ran: String,
    count: u64,
    time: Duration,
    kernel: Option<Duration>,
    process: bool,
}

fn have(cmd: &str) -> bool {
    Command::new(cmd)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Median wall time of a command and its trimmed stdout.
fn time_process(argv: &[&str], runs: usize) -> Option<(Duration, String)> {
    let mut times = Vec::new();
    let mut out = String::new();
    for i in 0..=runs {
        let t = Instant::now();
        let o = Command::new(argv[0]).args(&argv[1..]).output().ok()?;
        let el = t.elapsed();
        if i > 0 {
            times.push(el);
        }
        out = String::from_utf8_lossy(&o.stdout).trim().to_string();
    }
    Some((median(times), out))
}

/// `git rev-parse --short HEAD`, or "unknown".
fn git_commit() -> String {
    Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// Generates the corpus, times every row and builds the tables. Count
/// mismatches and failed rows are reported on stderr and clear
/// [`Report::counts_agree`]; `Err` is a set-up failure (the scratch files).
pub fn run(a: &Options) -> Result<Report, String> {
    let lines = a.lines;
    let runs = a.runs.max(1);
    let commit = a.commit.clone().unwrap_or_else(git_commit);
    let mut ok = true;
    let mut md = String::new();
    let exe = &a.logsieve_exe;
    let dir = std::env::temp_dir().join(format!("logsieve-bench-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return Err(format!("{}: {e}", dir.display()));
    }
    let data = generate(&GenOptions {
        lines,
        seed: 42,
        ..Default::default()
    });
    let big = dir.join("large.log");
    let small = dir.join("small.log");
    let small_data = generate(&GenOptions {
        lines: 2_600,
        seed: 42,
        ..Default::default()
    });
    if let Err(e) = std::fs::write(&big, &data).and_then(|_| std::fs::write(&small, &small_data)) {
        return Err(format!("{}: {e}", dir.display()));
    }
    let bytes = data.len() as u64;

    // GPU start-up alone: a fresh context (adapter, device, pipelines).
    let t = Instant::now();
    let fresh = if a.no_gpu {
        None
    } else {
        GpuContext::new().ok()
    };
    let startup = fresh.as_ref().map(|_| (t.elapsed(),));
    let gpu_name = fresh
        .as_ref()
        .map(|c| {
            format!(
                "{} ({}, {})",
                c.info().name,
                c.info().device_type,
                c.info().backend
            )
        })
        .unwrap_or_else(|| "none".into());
    drop(fresh);
    let mut session = Session::with_tuning(Corpus::from_bytes("bench", data), a.tuning.clone());
    let n_lines = session.corpus().docs()[0].lines().len();
    let upload = if startup.is_some() {
        match session.attach_gpu() {
            Ok(()) => session.gpu().map(|g| (g.upload_time(), g.upload_gbps())),
            Err(e) => {
                err(format!("GPU upload failed, GPU rows skipped: {e}"));
                None
            }
        }
    } else {
        None
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    md.push_str(&format!(
        "# logsieve bench\n\n- date: {}\n- commit: {}\n- CPU: {} cores\n- GPU: {}\n- corpus: {} lines, {:.1} MB (logsieve gen --seed 42)\n- runs: median of {runs}\n",
        today(),
        commit,
        cores,
        gpu_name,
        n_lines,
        bytes as f64 / 1e6
    ));
    if let Some((t, gbps)) = upload {
        md.push_str(&format!("- upload: {:.1} ms, {:.2} GB/s\n", ms(t), gbps));
    }
    if let Some((t,)) = &startup {
        md.push_str(&format!(
            "- GPU start-up alone (adapter, device, pipelines): {:.1} ms\n",
            ms(*t)
        ));
    }

    // Table 1: end-to-end.
    let mut rows: Vec<Row> = Vec::new();
    let (has_rg, has_grep) = (have("rg"), have("grep"));
    let big_s = big.display().to_string();
    for q in QUERIES {
        let query = QueryBuilder::new()
            .syntax(Syntax::Fixed)
            .cpu_multi(a.tuning.cpu_multi)
            .build(&[q])
            .expect("reference query");
        let mut configs: Vec<(String, SearchOptions)> = vec![
            ("cpu 1 thread".into(), opts(BackendChoice::Cpu, 1, None)),
            (
                format!("cpu {cores} threads"),
                opts(BackendChoice::Cpu, 0, None),
            ),
        ];
        if session.gpu().is_some() {
            for k in GpuKernel::ALL {
                configs.push((
                    format!("gpu {}", k.name()),
                    opts(BackendChoice::Gpu, 1, Some(k)),
                ));
            }
        }
        configs.push(("auto".into(), opts(BackendChoice::Auto, 0, None)));
        let mut reference: Option<u64> = None;
        // Rows are interleaved run by run (one warm-up round first), so that
        // drift in clocks or load hits every row alike: the regret table
        // compares medians of different rows.
        struct Acc {
            times: Vec<Duration>,
            kts: Vec<Duration>,
            count: u64,
            ran: String,
            failed: bool,
        }
        let mut accs: Vec<Acc> = configs
            .iter()
            .map(|_| Acc {
                times: Vec::new(),
                kts: Vec::new(),
                count: 0,
                ran: String::new(),
                failed: false,
            })
            .collect();
        for i in 0..=runs {
            for ((name, o), acc) in configs.iter().zip(accs.iter_mut()) {
                if acc.failed {
                    continue;
                }
                let t = Instant::now();
                let res = match o.backend {
                    BackendChoice::Gpu => {
                        // The GPU rows measure one kernel in isolation, on
                        // purpose: they report the kernel's own time (GPU
                        // timestamps), which only `GpuCorpus::search`
                        // returns, so they call it directly instead of
                        // going through the session's routing point (the
                        // auto row does).
                        let g = session.gpu().expect("attached");
                        g.set_timestamps(true);
                        let k = o.gpu_kernel.expect("kernel");
                        g.search(session.corpus(), &query, k, Want::Count).map(|s| {
                            (
                                s.docs.iter().map(|d| d.count).sum::<u64>(),
                                format!("gpu/{}", k.name()),
                                s.kernel_time,
                            )
                        })
                    }
                    _ => session
                        .search(&query, o)
                        .map(|r| (r.total(), r.backend.name.clone(), None)),
                };
                let el = t.elapsed();
                match res {
                    Ok((c, r, kt)) => {
                        if i > 0 {
                            acc.times.push(el);
                            acc.kts.extend(kt);
                        }
                        acc.count = c;
                        acc.ran = r;
                    }
                    Err(e) => {
                        err(format!("{name} {q}: {e}"));
                        ok = false;
                        acc.failed = true;
                    }
                }
            }
        }
        for ((name, _), acc) in configs.into_iter().zip(accs) {
            if acc.failed || acc.times.is_empty() {
                continue;
            }
            check(&mut ok, &mut reference, q, &name, acc.count);
            rows.push(Row {
                query: q,
                name,
                ran: acc.ran,
                count: acc.count,
                time: median(acc.times),
                kernel: (!acc.kts.is_empty()).then(|| median(acc.kts)),
                process: false,
            });
        }
        for (tool, present) in [("rg", has_rg), ("grep", has_grep)] {
            if !present {
                continue;
            }
            if let Some((t, out)) = time_process(&[tool, "-c", "-F", q, &big_s], runs) {
                let count = out.parse().unwrap_or(u64::MAX);
                check(&mut ok, &mut reference, q, tool, count);
                rows.push(Row {
                    query: q,
                    name: format!("{tool} -c -F (process)"),
                    ran: tool.into(),
                    count,
                    time: t,
                    kernel: None,
                    process: true,
                });
            }
        }
    }
    md.push_str("\n## 1. End-to-end, corpus resident (ratios to the best row of each query)\n\n");
    md.push_str("In-process rows time `Session::search` / `GpuCorpus::search` (write parameters → count on the host); rg and grep rows are whole processes on the same bytes in a file (page cache warm).\n\n");
    md.push_str("| query | row | ran | count | end-to-end ms | kernel ms | GB/s | × best |\n|---|---|---|---|---|---|---|---|\n");
    let mut jrows = Vec::new();
    for q in QUERIES {
        let best = rows
            .iter()
            .filter(|r| r.query == q)
            .map(|r| r.time)
            .min()
            .unwrap_or_default();
        for r in rows.iter().filter(|r| r.query == q) {
            let gbps = bytes as f64 / r.time.as_secs_f64() / 1e9;
            md.push_str(&format!(
                "| `{}` | {} | {} | {} | {:.3} | {} | {:.1} | {:.2} |\n",
                q,
                r.name,
                r.ran,
                r.count,
                ms(r.time),
                r.kernel.map_or("-".into(), |k| format!("{:.3}", ms(k))),
                gbps,
                r.time.as_secs_f64() / best.as_secs_f64()
            ));
            jrows.push(
                json!({"query": q, "row": r.name, "ran": r.ran, "count": r.count,
                "end_to_end_ms": ms(r.time), "kernel_ms": r.kernel.map(ms), "gbps": gbps,
                "process": r.process}),
            );
        }
    }

    // Table 2: elimination.
    md.push_str("\n## 2. Phase-1 elimination (share of lines the 128-bin histogram rejects) vs true matches\n\n");
    md.push_str("| query type | query | rejected by phase 1 (GPU two-phase) | rejected (CPU model, all lines) | truly match |\n|---|---|---|---|---|\n");
    let types = [
        ("error code with digits", "ERROR_503"),
        ("IP prefix", "192.168.1"),
        ("mixed-case identifier", "NullPointerException"),
        ("short common word", "error"),
        ("single character", "x"),
    ];
    let mut jelim = Vec::new();
    for (kind, q) in types {
        let query = QueryBuilder::new()
            .syntax(Syntax::Fixed)
            .cpu_multi(a.tuning.cpu_multi)
            .build(&[q])
            .expect("query");
        let model = logsieve::planner::histogram_elimination(session.corpus(), &query);
        let truth = rows
            .iter()
            .find(|r| r.query == q)
            .map_or(0.0, |r| r.count as f64 / n_lines as f64);
        // Phase 1's survivors (`candidates`) are a kernel detail only
        // `GpuCorpus::search` reports: a direct call, on purpose.
        let gpu = session.gpu().and_then(|g| {
            g.search(session.corpus(), &query, GpuKernel::TwoPhase, Want::Count)
                .ok()
                .and_then(|s| s.candidates)
                .map(|c| 1.0 - c as f64 / n_lines as f64)
        });
        md.push_str(&format!(
            "| {kind} | `{q}` | {} | {:.2}% | {:.2}% |\n",
            gpu.map_or("-".into(), |g| format!("{:.2}%", g * 100.0)),
            model * 100.0,
            truth * 100.0
        ));
        jelim.push(json!({"type": kind, "query": q, "gpu_rejected": gpu, "model_rejected": model, "match_share": truth}));
    }

    // Table 3: memory.
    let mut jmem = Vec::new();
    md.push_str("\n## 3. GPU memory for this corpus\n\n");
    if let Some(g) = session.gpu() {
        md.push_str("| buffer | bytes |\n|---|---|\n");
        let mut total = 0;
        for (name, size) in g.buffers() {
            md.push_str(&format!("| {name} | {size} |\n"));
            total += size;
            jmem.push(json!({"buffer": name, "bytes": size}));
        }
        md.push_str(&format!(
            "| **total** | {total} ({:.2}× corpus) |\n",
            total as f64 / bytes as f64
        ));
    } else {
        md.push_str("no GPU attached\n");
    }

    // Table 4: auto regret.
    md.push_str("\n## 4. Auto regret (auto's time / best in-process backend's time)\n\n| query | auto ran | auto ms | best row | best ms | regret |\n|---|---|---|---|---|---|\n");
    let mut jregret = Vec::new();
    for q in QUERIES {
        let inproc: Vec<&Row> = rows.iter().filter(|r| r.query == q && !r.process).collect();
        let auto = inproc.iter().find(|r| r.name == "auto");
        let best = inproc
            .iter()
            .filter(|r| r.name != "auto")
            .min_by_key(|r| r.time);
        if let (Some(a), Some(b)) = (auto, best) {
            let regret = a.time.as_secs_f64() / b.time.as_secs_f64();
            md.push_str(&format!(
                "| `{q}` | {} | {:.3} | {} | {:.3} | {:.2} |\n",
                a.ran,
                ms(a.time),
                b.name,
                ms(b.time),
                regret
            ));
            jregret.push(json!({"query": q, "auto": a.ran, "auto_ms": ms(a.time), "best": b.name, "best_ms": ms(b.time), "regret": regret}));
        }
    }

    // Table 5: cold one-shot.
    md.push_str("\n## 5. Cold one-shot: process start to answer (`-c`, pattern `ERROR_503`, page cache warm)\n\n| file | logsieve search -c (auto) ms | rg -c ms | grep -c ms | logsieve / rg |\n|---|---|---|---|---|\n");
    let exe_s = exe.display().to_string();
    let mut jcold = Vec::new();
    for (label, path) in [("small", &small), ("large", &big)] {
        let size = std::fs::metadata(path).map_or(0, |m| m.len());
        let p = path.display().to_string();
        let ours = time_process(&[&exe_s, "search", "-c", "ERROR_503", &p], runs);
        let rg = has_rg
            .then(|| time_process(&["rg", "-c", "ERROR_503", &p], runs))
            .flatten();
        let grep = has_grep
            .then(|| time_process(&["grep", "-c", "ERROR_503", &p], runs))
            .flatten();
        let mut reference = None;
        for (n, r) in [("logsieve", &ours), ("rg", &rg), ("grep", &grep)] {
            if let Some((_, out)) = r {
                check(
                    &mut ok,
                    &mut reference,
                    "ERROR_503 (cold)",
                    n,
                    out.parse().unwrap_or(u64::MAX),
                );
            }
        }
        let f = |r: &Option<(Duration, String)>| {
            r.as_ref().map_or("-".into(), |r| format!("{:.2}", ms(r.0)))
        };
        let ratio = match (&ours, &rg) {
            (Some(o), Some(r)) => format!("{:.2}", o.0.as_secs_f64() / r.0.as_secs_f64()),
            _ => "-".into(),
        };
        md.push_str(&format!(
            "| {label} ({:.2} MB) | {} | {} | {} | {ratio} |\n",
            size as f64 / 1e6,
            f(&ours),
            f(&rg),
            f(&grep)
        ));
        jcold.push(
            json!({"file": label, "bytes": size, "logsieve_ms": ours.as_ref().map(|r| ms(r.0)),
            "rg_ms": rg.as_ref().map(|r| ms(r.0)), "grep_ms": grep.as_ref().map(|r| ms(r.0))}),
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    md.push_str(&format!(
        "\ncounts: {}\n",
        if ok {
            "all rows agree"
        } else {
            "MISMATCH (see stderr)"
        }
    ));
    let json = json!({
        "date": today(), "commit": commit, "cores": cores, "gpu": gpu_name,
        "lines": n_lines, "bytes": bytes, "runs": runs,
        "gpu_startup_ms": startup.map(|s| ms(s.0)),
        "upload": upload.map(|(t, g)| json!({"ms": ms(t), "gbps": g})),
        "end_to_end": jrows, "elimination": jelim, "memory": jmem,
        "auto_regret": jregret, "cold": jcold, "counts_agree": ok,
    });
    Ok(Report {
        markdown: md,
        json,
        counts_agree: ok,
    })
}

fn opts(backend: BackendChoice, threads: usize, kernel: Option<GpuKernel>) -> SearchOptions {
    SearchOptions {
        backend,
        threads,
        want: Want::Count,
        gpu_kernel: kernel,
        ..Default::default()
    }
}

fn check(ok: &mut bool, reference: &mut Option<u64>, q: &str, name: &str, count: u64) {
    let r = *reference.get_or_insert(count);
    if r != count {
        err(format!(
            "count mismatch for {q}: {name} found {count}, the first row found {r}"
        ));
        *ok = false;
    }
}
