//! CPU benchmark, process to process: `logsieve search -c -F` (1 and N
//! threads) against `rg -c -F` and `grep -c -F` on the same generated file,
//! in the same run. Each command's count is checked against the others (the
//! benchmark doubles as a correctness test); the median of N runs is
//! reported with ratios to ripgrep.
//!
//! Usage: `cpu-vs-rg [--lines N] [--runs N] [--logsieve PATH] [--out FILE.md]`

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

struct Args {
    lines: u64,
    runs: usize,
    logsieve: PathBuf,
    out: Option<PathBuf>,
    threads: usize,
}

fn parse() -> Args {
    let mut a = Args {
        lines: 1_000_000,
        runs: 5,
        logsieve: std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().map(|d| d.join("logsieve")))
            .unwrap_or_else(|| PathBuf::from("logsieve")),
        out: None,
        threads: std::thread::available_parallelism().map_or(2, |n| n.get()),
    };
    let mut it = std::env::args().skip(1);
    while let Some(f) = it.next() {
        let v = it.next().unwrap_or_default();
        match f.as_str() {
            "--lines" => a.lines = v.parse().expect("--lines N"),
            "--runs" => a.runs = v.parse().expect("--runs N"),
            "--logsieve" => a.logsieve = v.into(),
            "--out" => a.out = Some(v.into()),
            "--threads" => a.threads = v.parse().expect("--threads N"),
            _ => panic!("unknown flag {f}"),
        }
    }
    a
}

fn have(cmd: &str) -> bool {
    Command::new(cmd).arg("--version").output().is_ok()
}

/// Runs `argv` `runs` times; returns the median wall time and stdout.
fn time(argv: &[String], runs: usize) -> (Duration, String) {
    let mut times = Vec::new();
    let mut out = String::new();
    // One warm-up run: the file is in the page cache for every contender.
    for i in 0..=runs {
        let t = Instant::now();
        let o = Command::new(&argv[0])
            .args(&argv[1..])
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", argv[0]));
        let el = t.elapsed();
        if i > 0 {
            times.push(el);
        }
        out = String::from_utf8_lossy(&o.stdout).trim().to_string();
    }
    times.sort();
    (times[times.len() / 2], out)
}

fn main() {
    let a = parse();
    let dir = std::env::temp_dir().join(format!("logsieve-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("bench.log");
    let data = logsieve::gen::generate(&logsieve::gen::GenOptions {
        lines: a.lines,
        seed: 42,
        ..Default::default()
    });
    std::fs::write(&file, &data).expect("write corpus");
    let f = file.display().to_string();
    let ls = a.logsieve.display().to_string();
    let queries = [
        "ERROR_503",
        "192.168.1",
        "error",
        "NullPointerException",
        "x",
    ];
    let mut md = String::new();
    md.push_str(&format!(
        "corpus: {} lines, {:.1} MB (logsieve gen --seed 42), median of {} runs after one warm-up, wall time per process\n\n",
        a.lines,
        data.len() as f64 / 1e6,
        a.runs
    ));
    md.push_str(&format!(
        "| query | logsieve -j1 (ms) | logsieve -j{} (ms) | rg (ms) | grep (ms) | -j1 / rg | -j{} / -j1 | count |\n|---|---|---|---|---|---|---|---|\n",
        a.threads, a.threads
    ));
    let (has_rg, has_grep) = (have("rg"), have("grep"));
    let mut ok = true;
    for q in queries {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let (t1, c1) = time(&s(&[&ls, "search", "-c", "-F", "-j", "1", q, &f]), a.runs);
        let tn_arg = a.threads.to_string();
        let (tn, cn) = time(
            &s(&[&ls, "search", "-c", "-F", "-j", &tn_arg, q, &f]),
            a.runs,
        );
        let rg = has_rg.then(|| time(&s(&["rg", "-c", "-F", q, &f]), a.runs));
        let gr = has_grep.then(|| time(&s(&["grep", "-c", "-F", q, &f]), a.runs));
        for (name, c) in [
            ("logsieve -jN", Some(&cn)),
            ("rg", rg.as_ref().map(|r| &r.1)),
            ("grep", gr.as_ref().map(|r| &r.1)),
        ] {
            if let Some(c) = c {
                if *c != c1 {
                    eprintln!("count mismatch for {q}: logsieve -j1 {c1}, {name} {c}");
                    ok = false;
                }
            }
        }
        let ms = |d: Duration| format!("{:.1}", d.as_secs_f64() * 1e3);
        let opt = |r: &Option<(Duration, String)>| r.as_ref().map_or("-".into(), |r| ms(r.0));
        let ratio_rg = rg.as_ref().map_or("-".into(), |r| {
            format!("{:.2}", t1.as_secs_f64() / r.0.as_secs_f64())
        });
        md.push_str(&format!(
            "| `{q}` | {} | {} | {} | {} | {ratio_rg} | {:.2} | {c1} |\n",
            ms(t1),
            ms(tn),
            opt(&rg),
            opt(&gr),
            tn.as_secs_f64() / t1.as_secs_f64()
        ));
    }
    print!("{md}");
    if let Some(p) = a.out {
        std::fs::write(&p, &md).expect("write --out");
    }
    let _ = std::fs::remove_dir_all(&dir);
    if !ok {
        std::process::exit(1);
    }
}
