//! What the routing point costs per regex query, step by step, on the CPU
//! alone: the regex suite over generated lines, routed as if a discrete
//! GPU held the corpus (no adapter needed: routing is host work), each
//! step timed over `--iters` calls after one warm-up (so the memoised
//! sample and literal shares are warm, as for a repeated query):
//!
//! * `kernel`: `support::kernel_support` (can a kernel run it directly?);
//! * `tier 2`: `support::shift_and_support` (the position automaton);
//! * `tier 1`: `planner::tier1_literals` (every candidate set's plan and
//!   estimate, the shares memoised);
//! * `sample`: `planner::sample` (memoised);
//! * `auto` and `forced`: `route::route` whole, `--backend auto` and
//!   `--backend gpu`; `auto - forced` is auto's own cost;
//! * `memo`: auto through `route::Memo::route` (what `Session::route`
//!   calls), the repeated query's route kept.
//!
//! Usage: `regex-route [--lines N] [--iters N]`. Mean microseconds a call.

use std::time::Instant;

use logsieve::gen::{generate, GenOptions};
use logsieve::planner::{self, Calibration, DeviceClass};
use logsieve::session::route::{route, GpuState, Memo, RequestKind, RouteInput};
use logsieve::{BackendChoice, Corpus, Query, QueryBuilder};
use logsieve_bench::regex_suite::SUITE;
use logsieve_bench::timing::count_opts;

fn us<T>(iters: usize, mut f: impl FnMut() -> T) -> f64 {
    std::hint::black_box(f());
    let t = Instant::now();
    for _ in 0..iters {
        std::hint::black_box(f());
    }
    t.elapsed().as_secs_f64() * 1e6 / iters as f64
}

fn main() {
    let mut lines = 200_000u64;
    let mut iters = 1000usize;
    let mut it = std::env::args().skip(1);
    while let Some(f) = it.next() {
        let v = it.next().unwrap_or_default();
        match f.as_str() {
            "--lines" => lines = v.parse().expect("--lines N"),
            "--iters" => iters = v.parse().expect("--iters N"),
            _ => {
                eprintln!("usage: regex-route [--lines N] [--iters N]");
                std::process::exit(2)
            }
        }
    }
    let corpus = Corpus::from_bytes(
        "bench",
        generate(&GenOptions {
            lines,
            seed: 42,
            ..Default::default()
        }),
    );
    let cal = Calibration::defaults(DeviceClass::Discrete);
    let gpu = Some(GpuState {
        class: DeviceClass::Discrete,
        name: "discrete (routing only)".to_string(),
        resident: true,
        class_scan: true,
        force_class_scan: false,
    });
    let auto = count_opts(BackendChoice::Auto, None, 0);
    let forced = count_opts(BackendChoice::Gpu, None, 0);
    println!(
        "| regex | route (auto) | kernel us | tier 2 us | tier 1 us | sample us | auto us | forced us | auto - forced us | memo us |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut sums = [0.0f64; 7];
    let memo = Memo::default();
    for p in SUITE {
        let q: Query = QueryBuilder::new().build(&[*p]).expect("query");
        let input = |opts| RouteInput {
            request: RequestKind::Search(&q),
            opts,
            corpus: &corpus,
            gpu: gpu.clone(),
            calibration: &cal,
        };
        let t1 = planner::Tier1Input {
            corpus: &corpus,
            asked: None,
            bytes: corpus.total_bytes() as f64,
            lines: lines as f64,
            threads: 16.0,
            calibration: &cal,
            sample: true,
            class_scan: true,
            force_classes: false,
        };
        let step = [
            us(iters, || logsieve::support::kernel_support(&q, None)),
            us(iters, || logsieve::support::shift_and_support(&q)),
            us(iters, || planner::tier1_literals(&q, &t1)),
            us(iters, || planner::sample(&corpus, &q, 16, false)),
            us(iters, || route(&input(&auto))),
            us(iters, || route(&input(&forced))),
            us(iters, || memo.route(&input(&auto))),
        ];
        for (s, v) in sums.iter_mut().zip(step) {
            *s += v;
        }
        let r = route(&input(&auto)).expect("route");
        println!(
            "| `{}` | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
            p.replace('|', "\\|"),
            r.backend,
            step[0],
            step[1],
            step[2],
            step[3],
            step[4],
            step[5],
            step[4] - step[5],
            step[6]
        );
        eprintln!("{p}: {}", r.reason);
    }
    let n = SUITE.len() as f64;
    println!(
        "| mean | | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
        sums[0] / n,
        sums[1] / n,
        sums[2] / n,
        sums[3] / n,
        sums[4] / n,
        sums[5] / n,
        (sums[4] - sums[5]) / n,
        sums[6] / n
    );
}
