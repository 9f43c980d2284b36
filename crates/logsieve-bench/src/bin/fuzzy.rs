//! `--fuzzy K` on the GPU: what an on-call engineer or a chat
//! moderator types with a typo or an obfuscation in it, over generated
//! lines resident on the GPU, through `Session::search`: auto, the `bitap`
//! kernel forced, the CPU engine (pigeonhole pieces + Myers) on 1 thread
//! and on all cores. Every row's count must agree: the exit status is 1 on
//! a mismatch.
//!
//! Usage: `fuzzy [--lines N] [--iters N]`. Medians of `--iters` runs after
//! one warm-up, back to back; the CPU on one thread runs once.

use std::time::{Duration, Instant};

use logsieve::gen::{generate, GenOptions};
use logsieve::support::bitap_support;
use logsieve::{BackendChoice, Corpus, Kernel, Query, QueryBuilder, Session, Syntax};
use logsieve_bench::timing::{count_opts, timed};

/// The suite: (what the row is called, patterns, K, `-i`).
const SUITE: &[(&str, &[&str], u8, bool)] = &[
    (
        "--fuzzy 2 NullPointerExceptoin",
        &["NullPointerExceptoin"],
        2,
        false,
    ),
    (
        "--fuzzy 1 NulPointerException",
        &["NulPointerException"],
        1,
        false,
    ),
    (
        "--fuzzy 2 'connection refused'",
        &["connection refused"],
        2,
        false,
    ),
    ("-i --fuzzy 1 deadlok", &["deadlok"], 1, true),
    ("-i --fuzzy 1 fr33m0ney (chat)", &["fr33m0ney"], 1, true),
    (
        "--fuzzy 3 'Failed password for invalid user admin' (38 B, 2 words)",
        &["Failed password for invalid user admin"],
        3,
        false,
    ),
    (
        "--fuzzy 1 -e timeout -e refused -e deadlock",
        &["timeout", "refused", "deadlock"],
        1,
        false,
    ),
];

fn main() {
    let mut lines = 1_000_000u64;
    let mut iters = 10usize;
    let mut it = std::env::args().skip(1);
    while let Some(f) = it.next() {
        let v = it.next().unwrap_or_default();
        match f.as_str() {
            "--lines" => lines = v.parse().expect("--lines N"),
            "--iters" => iters = v.parse().expect("--iters N"),
            _ => {
                eprintln!("usage: fuzzy [--lines N] [--iters N]");
                std::process::exit(2)
            }
        }
    }
    let data = generate(&GenOptions {
        lines,
        seed: 42,
        ..Default::default()
    });
    let bytes = data.len();
    let mut session = Session::new(Corpus::from_bytes("bench", data));
    if let Err(e) = session.attach_gpu() {
        eprintln!("no GPU: {e}");
    }
    println!(
        "{lines} generated lines, {:.1} MB; device: {}\n",
        bytes as f64 / 1e6,
        session
            .gpu_state()
            .map_or_else(|| "none".to_string(), |g| g.name)
    );
    let mut bad = 0;
    println!(
        "| query | auto route | auto ms | bitap ms | CPU x1 ms | CPU x16 ms | count | CPU x16 / bitap |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for &(name, pats, k, i) in SUITE {
        let q: Query = QueryBuilder::new()
            .syntax(Syntax::Fuzzy(k))
            .case_insensitive(i)
            .build(pats)
            .expect("query");
        let mut counts = Vec::new();
        let (auto, r) = timed(iters, Duration::ZERO, || {
            session
                .search(&q, &count_opts(BackendChoice::Auto, None, 0))
                .expect("auto")
        });
        counts.push(r.total());
        let route = r.backend.name.clone();
        eprintln!("{name}: auto: {}: {}", r.backend.name, r.backend.reason);
        let gpu = (session.has_gpu() && bitap_support(&q).is_ok()).then(|| {
            let (ms, r) = timed(iters, Duration::ZERO, || {
                session
                    .search(&q, &count_opts(BackendChoice::Gpu, Some(Kernel::Bitap), 0))
                    .expect("bitap")
            });
            counts.push(r.total());
            ms
        });
        let t = Instant::now();
        let r = session
            .search(&q, &count_opts(BackendChoice::Cpu, None, 1))
            .expect("cpu");
        let x1 = t.elapsed().as_secs_f64() * 1e3;
        counts.push(r.total());
        let (x16, r) = timed(iters.min(5), Duration::ZERO, || {
            session
                .search(&q, &count_opts(BackendChoice::Cpu, None, 0))
                .expect("cpu")
        });
        counts.push(r.total());
        let agree = counts.iter().all(|&c| c == counts[0]);
        if !agree {
            bad += 1;
        }
        println!(
            "| `{name}` | {route} | {auto:.3} | {} | {x1:.3} | {x16:.3} | {}{} | {} |",
            gpu.map_or("—".to_string(), |g| format!("{g:.3}")),
            counts[0],
            if agree {
                String::new()
            } else {
                format!(" MISMATCH {counts:?}")
            },
            gpu.map_or("—".to_string(), |g| format!("{:.1}", x16 / g)),
        );
    }
    if bad > 0 {
        eprintln!("{bad} queries' counts differ between rows");
        std::process::exit(1);
    }
}
