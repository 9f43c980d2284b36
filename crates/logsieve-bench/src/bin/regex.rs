//! Regex on the GPU: a suite of regexes an SRE or analyst types,
//! over generated lines resident on the GPU, through `Session::search`:
//! auto, the GPU's default tier (tier 1: required literals on the literal
//! kernels + CPU verification; tier 2: the `shift-and` automaton), tier 2
//! forced, the single-literal scan of the required literals (tier 1's
//! floor: the static pick, `Query::required_literals`, as in the runs
//! before; the literals the route chose on this corpus are named in their
//! own column), the CPU engine on 1 thread and on all cores, and `rg -c` as a
//! process (when `rg` is on the PATH). Every row's count must agree: the
//! exit status is 1 on a mismatch.
//!
//! Usage: `regex [--lines N] [--iters N] [--warmup-ms MS] [--only SUBSTRING]
//! [--rg-file PATH] [--timestamps 1]` (`--only`: the regexes holding it). Medians of `--iters` runs, back to back (hot; the GPU
//! columns in interleaved rounds (each column right after each other one
//! equally often: `BALANCED`; `--iters` rounded up to a multiple of 3), after `--warmup-ms` (1500) of each
//! column back to back, so that the GPU's clocks are up: see
//! `timing::warm_up`); the phases' times since the epoch go to stderr
//! (`hot: START..END ms`) to line up with a clock log; auto again repeated alone, back to back
//! ("auto repeated": the same query, nothing between), and with 100 ms
//! idle gaps (interactive); the CPU on one thread runs once. With
//! `--timestamps 1` the GPU passes carry timestamps (the kernel's time in the
//! `LOGSIEVE_TRACE_QUERIES=1` trace, which the bench reads).

use std::time::{Duration, Instant};

use logsieve::gen::{generate, GenOptions};
use logsieve::support::{prefilter_support, shift_and_support};
use logsieve::{BackendChoice, Corpus, Kernel, Query, QueryBuilder, Request, Session};
use logsieve_bench::regex_suite::SUITE;
use logsieve_bench::timing::{count_opts, epoch_ms, timed, warm_up};

/// Three orders of the four columns, run round after round: in the
/// sequence they make (each round's last column followed by the next
/// round's first, the third round's by the first's) each column runs
/// right after each other column exactly once every three rounds. The
/// four rounds of a Williams square used before balanced the pairs within
/// each round only: across the rounds' edges auto ran after the GPU
/// default, and the GPU default after tier 2, twice as often as after
/// the others (auto / GPU default on the same plan: 1.013-1.049 over 11
/// runs, 2026-11-29).
const BALANCED: [[usize; 4]; 3] = [[0, 1, 2, 3], [0, 2, 1, 3], [1, 0, 3, 2]];

fn cell(v: Option<f64>) -> String {
    v.map_or("—".to_string(), |x| format!("{x:.3}"))
}

fn main() {
    let mut lines = 1_000_000u64;
    let mut iters = 10usize;
    let mut rg_file: Option<String> = None;
    let mut timestamps = false;
    let mut warmup_ms = 1500u64;
    let mut only: Option<String> = None;
    let mut it = std::env::args().skip(1);
    while let Some(f) = it.next() {
        let v = it.next().unwrap_or_default();
        match f.as_str() {
            "--lines" => lines = v.parse().expect("--lines N"),
            "--iters" => iters = v.parse().expect("--iters N"),
            "--rg-file" => rg_file = Some(v),
            "--timestamps" => timestamps = v == "1",
            "--warmup-ms" => warmup_ms = v.parse().expect("--warmup-ms MS"),
            "--only" => only = Some(v),
            _ => {
                eprintln!(
                    "usage: regex [--lines N] [--iters N] [--warmup-ms MS] [--only SUBSTRING] [--rg-file PATH] [--timestamps 1]"
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
    let rg = rg_file.as_ref().filter(|_| {
        std::process::Command::new("rg")
            .arg("--version")
            .output()
            .is_ok()
    });
    if let Some(p) = rg {
        std::fs::write(p, &data).expect("write the rg file");
    }
    // The GPU's `LOGSIEVE_*` switches (`LOGSIEVE_TRACE_QUERIES=1`: each
    // query's phases) and nothing else from the environment: no
    // calibration file, as in the runs before.
    let tuning = logsieve::Tuning {
        gpu: logsieve::gpu::GpuTuning::from_env(),
        ..Default::default()
    };
    let mut session = Session::with_tuning(Corpus::from_bytes("bench", data), tuning);
    if let Err(e) = session.attach_gpu() {
        eprintln!("no GPU: {e}");
    }
    if let Some(g) = session.gpu() {
        g.set_timestamps(timestamps);
    }
    let mut bad = 0;
    let mut ratios_x16 = Vec::new();
    // The goals' ratios: best GPU row against the CPU on all cores; the
    // GPU default (tier 1) against its literal scan; auto against the
    // best row.
    let (mut best_gpu_x16, mut default_lit, mut auto_best) = (Vec::new(), Vec::new(), Vec::new());
    println!(
        "| regex | tier (auto) | GPU default tier | tier 1 literals (GPU default) | auto ms | auto repeated ms | auto interactive ms | GPU default ms | tier 2 ms | \
         literal scan ms | CPU x1 ms | CPU x16 ms | rg -c ms | count | CPU x16 / auto | \
         auto / best | GPU default / literal scan |"
    );
    println!("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let suite = SUITE
        .iter()
        .filter(|p| only.as_ref().is_none_or(|o| p.contains(o.as_str())));
    for p in suite {
        let q: Query = QueryBuilder::new().build(&[*p]).expect("query");
        let mut counts = Vec::new();
        // The hot GPU columns in interleaved rounds after one warm-up
        // round (and `--warmup-ms`): a drift of the machine (clocks, another process) falls on
        // every column alike (run 1 of 2026-11-25 measured the UUID regex's
        // auto route, tier 2, at 21.7 ms and forced tier 2 at 4.2 ms a
        // moment later).
        let gpu_on = session.has_gpu();
        let has_t2 = gpu_on && shift_and_support(&q).is_ok();
        let pre = prefilter_support(&q, None).ok().filter(|_| gpu_on);
        let mut ts: [Vec<Duration>; 4] = Default::default();
        let (mut auto_r, mut gpu_r, mut t2_r) = (None, None, None);
        // The CPU rows of the regex before left the GPU idle: its clocks
        // are down until it has worked back to back for about a second.
        if gpu_on {
            let warm = epoch_ms();
            warm_up(warmup_ms, || {
                let _ = session.search(&q, &count_opts(BackendChoice::Gpu, None, 0));
                if has_t2 {
                    let _ = session.search(
                        &q,
                        &count_opts(BackendChoice::Gpu, Some(Kernel::ShiftAnd), 0),
                    );
                }
            });
            eprintln!("{p}: warm-up: {warm}..{} ms", epoch_ms());
        }
        let hot = epoch_ms();
        let routed = session.route_counts();
        // The first query after a different one pays a switch (measured on
        // the H100, 2026-11-25: auto, always first, 0.03-0.04 ms over the
        // same route forced second, and over itself repeated alone). The
        // rounds' orders ([`BALANCED`]) make every column follow every
        // other one equally often, so that no column always runs right
        // after the same route (the GPU default after auto, in the
        // rotation before, paid no switch: auto / best up to 1.26 with
        // auto repeated alone under the GPU default's time). Whole cycles
        // after the first round (a warm-up): `--iters` rounded up to a
        // multiple of three.
        let rounds = iters.div_ceil(BALANCED.len()) * BALANCED.len();
        for round in 0..=rounds {
            for col in BALANCED[round % BALANCED.len()] {
                let t = Instant::now();
                let ran = match col {
                    0 => {
                        auto_r = Some(
                            session
                                .search(&q, &count_opts(BackendChoice::Auto, None, 0))
                                .expect("auto"),
                        );
                        true
                    }
                    1 if gpu_on => {
                        gpu_r = Some(session.search(&q, &count_opts(BackendChoice::Gpu, None, 0)));
                        true
                    }
                    2 if has_t2 => {
                        t2_r = Some(
                            session
                                .search(
                                    &q,
                                    &count_opts(BackendChoice::Gpu, Some(Kernel::ShiftAnd), 0),
                                )
                                .expect("tier 2"),
                        );
                        true
                    }
                    3 => match &pre {
                        Some(pre) => {
                            let _ = session
                                .search(&pre.literals, &count_opts(BackendChoice::Gpu, None, 0));
                            true
                        }
                        None => false,
                    },
                    _ => false,
                };
                if ran && round > 0 {
                    ts[col].push(t.elapsed());
                }
            }
        }
        eprintln!("{p}: hot: {hot}..{} ms", epoch_ms());
        // Every column's routes (a forced one is kept too).
        let now = session.route_counts();
        eprintln!(
            "{p}: hot routes: {} memoised, {} planned",
            now.memoised - routed.memoised,
            now.planned - routed.planned
        );
        let med = |v: &mut Vec<Duration>| {
            v.sort();
            v.get(v.len() / 2).map(|d| d.as_secs_f64() * 1e3)
        };
        let [ta, tg, tt, tl] = &mut ts;
        let auto = med(ta).expect("auto ran");
        let r = auto_r.expect("auto ran");
        counts.push(r.total());
        let tier = r.backend.name.clone();
        eprintln!("{p}: auto: {}: {}", r.backend.name, r.backend.reason);
        let (auto_rep, r) = timed(iters, Duration::ZERO, || {
            session
                .search(&q, &count_opts(BackendChoice::Auto, None, 0))
                .expect("auto")
        });
        counts.push(r.total());
        eprintln!("{p}: auto repeated: {}", r.backend.name);
        let (auto_idle, r) = timed(iters.min(5), Duration::from_millis(100), || {
            session
                .search(&q, &count_opts(BackendChoice::Auto, None, 0))
                .expect("auto")
        });
        counts.push(r.total());
        eprintln!("{p}: auto interactive: {}", r.backend.name);
        let gpu = match (med(tg), gpu_r) {
            (Some(ms), Some(Ok(r))) => Some((ms, r.total(), r.backend.name)),
            _ => None,
        };
        let gpu_tier = gpu.as_ref().map_or("—".to_string(), |g| g.2.clone());
        // The literals the forced route's tier 1 chose on this corpus.
        let chosen = session
            .route(
                &Request::Search(&q),
                &count_opts(BackendChoice::Gpu, None, 0),
            )
            .ok()
            .and_then(|r| r.prefilter)
            .map_or("—".to_string(), |p| p.describe().replace('|', "\\|"));
        let gpu = gpu.map(|g| (g.0, g.1));
        counts.extend(gpu.map(|g| g.1));
        let t2 = med(tt);
        counts.extend(t2_r.map(|r| r.total()));
        let lit = med(tl);
        // One run: a Unicode `\b` keeps the regex crate off its DFA, and
        // one thread then takes seconds.
        let t = Instant::now();
        let r = session
            .search(&q, &count_opts(BackendChoice::Cpu, None, 1))
            .expect("cpu");
        let x1 = t.elapsed().as_secs_f64() * 1e3;
        counts.push(r.total());
        // As many runs as the GPU columns: on the H100 machine's 16-core
        // VM a median of 5 moved by up to 2x between runs of the bench
        // (2026-11-25: the UUID regex 29-50 ms).
        let (x16, r) = timed(iters, Duration::ZERO, || {
            session
                .search(&q, &count_opts(BackendChoice::Cpu, None, 0))
                .expect("cpu")
        });
        counts.push(r.total());
        let rg_ms = rg.map(|path| {
            let (ms, out) = timed(iters.min(3), Duration::ZERO, || {
                std::process::Command::new("rg")
                    .args(["-c", "--no-filename", "-e", p, path])
                    .output()
                    .expect("rg")
            });
            let n: u64 = String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse()
                .unwrap_or(0);
            counts.push(n);
            ms
        });
        let agree = counts.iter().all(|&c| c == counts[0]);
        if !agree {
            bad += 1;
        }
        let best = [Some(auto), gpu.map(|g| g.0), t2, Some(x1), Some(x16), rg_ms]
            .into_iter()
            .flatten()
            .fold(f64::INFINITY, f64::min);
        ratios_x16.push(x16 / auto);
        let best_gpu = [Some(auto), gpu.map(|g| g.0), t2]
            .into_iter()
            .flatten()
            .fold(f64::INFINITY, f64::min);
        best_gpu_x16.push(x16 / best_gpu);
        if let (Some(g), Some(l)) = (gpu, lit) {
            default_lit.push(g.0 / l);
        }
        auto_best.push(auto / best);
        println!(
            "| `{}` | {tier} | {gpu_tier} | {chosen} | {auto:.3} | {auto_rep:.3} | {auto_idle:.3} | {} | {} | {} | {x1:.3} | {x16:.3} | {} | {}{} | {:.1} | {:.2} | {} |",
            p.replace('|', "\\|"),
            cell(gpu.map(|g| g.0)),
            cell(t2),
            cell(lit),
            cell(rg_ms),
            counts[0],
            if agree { String::new() } else { format!(" MISMATCH {counts:?}") },
            x16 / auto,
            auto / best,
            match (gpu, lit) {
                (Some(g), Some(l)) => format!("{:.2}", g.0 / l),
                _ => "—".to_string(),
            }
        );
    }
    ratios_x16.sort_by(f64::total_cmp);
    println!(
        "\nmedian CPU x16 / auto over {} regexes: {:.1}",
        ratios_x16.len(),
        ratios_x16[ratios_x16.len() / 2]
    );
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let n_best = auto_best.len();
    let within = auto_best.iter().filter(|&&r| r <= 1.1).count();
    let worst = auto_best.iter().copied().fold(0.0, f64::max);
    println!(
        "median CPU x16 / best GPU row (auto, GPU default, tier 2): {:.1} (goal >= 20)",
        median(&mut best_gpu_x16)
    );
    println!(
        "median GPU default / literal scan over {} regexes with a required literal: {:.2} (goal <= 2)",
        default_lit.len(),
        median(&mut default_lit)
    );
    println!("auto within 1.1x of the best row: {within} of {n_best} (worst {worst:.2}x)");
    if bad > 0 {
        eprintln!("{bad} regexes' counts differ between rows");
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::BALANCED;

    /// In the rounds' sequence, taken as a cycle, every ordered pair of
    /// two different columns is adjacent exactly once.
    #[test]
    fn each_column_follows_each_other_once_a_cycle() {
        let seq: Vec<usize> = BALANCED.iter().flatten().copied().collect();
        let mut seen = [[0; 4]; 4];
        for (i, &a) in seq.iter().enumerate() {
            seen[a][seq[(i + 1) % seq.len()]] += 1;
        }
        for (a, row) in seen.iter().enumerate() {
            for (b, &n) in row.iter().enumerate() {
                assert_eq!(n, usize::from(a != b), "{a} then {b}");
            }
        }
    }
}
