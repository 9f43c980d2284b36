//! GPU benchmark: a generated corpus resident on the GPU, the
//! five queries of the issue, rows for the CPU (1 thread, all cores), every
//! GPU kernel and the plain-read bandwidth ceiling. Every row's count is
//! checked against the CPU's (the benchmark doubles as a correctness test:
//! the exit status is 1 on any mismatch); line ids are checked once per
//! kernel and query too.
//!
//! Usage: `gpu [--lines N] [--iters N] [--out FILE.md]`, or
//! `gpu --upload-only [--chunk-mib N] [--slots N]` to time the upload alone
//! (run it in a fresh process per setting: the first upload of a process is
//! the one that counts).
//!
//! Columns: kernel time is the GPU timestamp span of the query's compute
//! pass (median, from runs with timestamps on); end-to-end is the wall time
//! from writing the query uniform to the count on the host (median), from
//! runs with timestamps off (as a query that wants no profile runs) and,
//! for comparison, with them on; GB/s is corpus bytes over kernel time
//! (end-to-end for CPU rows).

use std::time::{Duration, Instant};

use logsieve::cpu::{search_doc, CpuOptions};
use logsieve::gen::{generate, GenOptions};
use logsieve::gpu::{GpuContext, GpuCorpus, GpuKernel, UploadOptions};
use logsieve::{Corpus, QueryBuilder, Syntax, Want};

use logsieve::gen::REFERENCE_QUERIES as QUERIES;

struct Args {
    lines: u64,
    iters: usize,
    out: Option<std::path::PathBuf>,
    upload_only: bool,
    only_scan: bool,
    chunk_mib: Option<u64>,
    slots: Option<usize>,
}

fn parse() -> Args {
    let mut a = Args {
        lines: 1_000_000,
        iters: 30,
        out: None,
        upload_only: false,
        only_scan: false,
        chunk_mib: None,
        slots: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(f) = it.next() {
        if f == "--upload-only" {
            a.upload_only = true;
            continue;
        }
        if f == "--only-scan" {
            a.only_scan = true;
            continue;
        }
        let v = it.next().unwrap_or_default();
        match f.as_str() {
            "--chunk-mib" => a.chunk_mib = Some(v.parse().expect("--chunk-mib N")),
            "--slots" => a.slots = Some(v.parse().expect("--slots N")),
            "--lines" => a.lines = v.parse().expect("--lines N"),
            "--iters" => a.iters = v.parse().expect("--iters N"),
            "--out" => a.out = Some(v.into()),
            _ => {
                eprintln!(
                    "usage: gpu [--lines N] [--iters N] [--out FILE.md] | \
                     gpu --upload-only [--chunk-mib N] [--slots N]"
                );
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

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

fn gbps(bytes: u64, d: Duration) -> f64 {
    bytes as f64 / d.as_secs_f64().max(1e-12) / 1e9
}

fn main() {
    let a = parse();
    let mut out = String::new();
    macro_rules! say {
        ($($t:tt)*) => {{
            let s = format!($($t)*);
            println!("{s}");
            out.push_str(&s);
            out.push('\n');
        }};
    }

    let t = Instant::now();
    let data = generate(&GenOptions {
        lines: a.lines,
        seed: 42,
        ..Default::default()
    });
    let corpus = Corpus::from_bytes("gen", data);
    let doc = &corpus.docs()[0];
    let n_lines = doc.lines().len();
    let bytes = corpus.total_bytes();
    eprintln!(
        "generated {n_lines} lines, {bytes} bytes in {:.1} s",
        t.elapsed().as_secs_f64()
    );

    let ctx = match GpuContext::new() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let info = ctx.info();
    say!("## Device\n\n```\n{info}\n```\n");
    say!(
        "Corpus: `gen::generate(lines={}, seed=42)`: {n_lines} lines, {bytes} bytes ({:.1} MB).\n",
        a.lines,
        bytes as f64 / 1e6
    );

    // Upload twice: the first pays for the driver's first allocations.
    let opts = UploadOptions {
        staging_chunk: a.chunk_mib.map(|m| m << 20),
        staging_slots: a.slots,
        ..Default::default()
    };
    let mut uploads = Vec::new();
    let mut g = None;
    for _ in 0..2 {
        drop(g.take());
        let gc = GpuCorpus::upload_with(&ctx, &corpus, opts).unwrap_or_else(|e| {
            eprintln!("error: {e}");
            std::process::exit(2);
        });
        uploads.push((gc.upload_gbps(), gc.index_time(), gc.upload_stats()));
        g = Some(gc);
    }
    let g = g.expect("uploaded");
    let st = uploads[0].2;
    say!(
        "Upload of the bytes: {:.1} GB/s first, {:.1} GB/s second ({} segment(s); up to {} chunks of \
         {} MiB in flight, each staged through `write_buffer_with` and filled on all cores). Index (line offsets, block hints, signatures): \
         {} ms first, {} ms second.\n",
        uploads[0].0,
        uploads[1].0,
        g.segment_count(),
        st.slots,
        st.chunk >> 20,
        ms(uploads[0].1),
        ms(uploads[1].1)
    );
    for (i, (_, _, st)) in uploads.iter().enumerate() {
        say!(
            "Upload {}: staging memory {} ms, wait for chunks in flight {} ms, fill {} ms, submit {} ms, final wait {} ms.\n",
            i + 1,
            ms(st.stage),
            ms(st.wait),
            ms(st.fill),
            ms(st.submit),
            ms(st.wait_end)
        );
    }
    if a.upload_only {
        if let Some(p) = &a.out {
            std::fs::write(p, &out).expect("write --out");
        }
        return;
    }

    let plain: Vec<Duration> = (0..a.iters.max(5))
        .map(|_| g.plain_read().expect("plain-read"))
        .collect();
    let plain = median(plain);
    let ceiling = gbps(bytes, plain);
    say!(
        "Plain-read ceiling (vec4<u32> loads of the resident corpus): {} ms, {:.0} GB/s.\n",
        ms(plain),
        ceiling
    );

    // The fixed cost of a query: the same path on a one-line corpus, with
    // timestamps and busy waiting each on and off.
    let tiny = Corpus::from_bytes("tiny", b"one line\n".to_vec());
    let gt = GpuCorpus::upload(&ctx, &tiny).expect("upload");
    let tq = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .build(&["line"])
        .expect("query");
    say!("Fixed cost of one query (scan, count, on a one-line corpus), end to end, median:\n");
    say!("| timestamps | busy wait | end-to-end ms |");
    say!("|---|---|---:|");
    for (ts, busy) in [(true, false), (true, true), (false, false), (false, true)] {
        gt.set_timestamps(ts);
        ctx.set_busy_wait(busy);
        let fixed: Vec<Duration> = (0..a.iters.max(5) + 2)
            .map(|_| {
                gt.search(&tiny, &tq, GpuKernel::Scan, Want::Count)
                    .expect("tiny search")
                    .end_to_end
            })
            .skip(2)
            .collect();
        say!("| {ts} | {busy} | {} |", ms(median(fixed)));
    }
    say!("");
    // The defaults from here on: busy waiting on; timestamps as each run says.
    ctx.set_busy_wait(true);

    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut failures = 0;
    say!("| query | engine | kernel ms | end-to-end ms | end-to-end ms, timestamps on | GB/s | % of plain-read | elimination | count |");
    say!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for pat in QUERIES {
        let q = QueryBuilder::new()
            .syntax(Syntax::Fixed)
            .build(&[pat])
            .expect("query");
        let cpu_lines = search_doc(
            doc,
            &q,
            &CpuOptions {
                threads: 0,
                want: Want::Lines,
                max_count: None,
                line_ids: true,
            },
        );
        let expect = cpu_lines.count;
        let cpu_rows: &[(&str, usize, usize)] = if a.only_scan {
            &[]
        } else {
            &[("cpu x1", 1, 3), ("cpu", 0, 7)]
        };
        for &(label, th, runs) in cpu_rows {
            let mut times = Vec::new();
            let mut count = 0;
            for _ in 0..runs {
                let t = Instant::now();
                count = search_doc(
                    doc,
                    &q,
                    &CpuOptions {
                        threads: th,
                        want: Want::Count,
                        max_count: None,
                        line_ids: true,
                    },
                )
                .count;
                times.push(t.elapsed());
            }
            let m = median(times);
            let label = if th == 0 {
                format!("{label} x{threads}")
            } else {
                label.to_string()
            };
            let ok = if count == expect { "" } else { " MISMATCH" };
            failures += usize::from(count != expect);
            say!(
                "| `{pat}` | {label} | | {} | | {:.1} | | | {count}{ok} |",
                ms(m),
                gbps(bytes, m)
            );
        }
        for kernel in GpuKernel::ALL {
            if a.only_scan && kernel != GpuKernel::Scan {
                continue;
            }
            // Line ids once (checked), then timed count-only runs.
            let lines_ok = match g.search(&corpus, &q, kernel, Want::Lines) {
                Ok(r) => r.docs[0].lines == cpu_lines.lines,
                Err(e) => {
                    say!("| `{pat}` | gpu/{kernel} | error: {e} | | | | | | |");
                    failures += 1;
                    continue;
                }
            };
            let mut kt = Vec::new();
            let mut e2e = Vec::new();
            let mut e2e_ts = Vec::new();
            let mut count = 0;
            let mut cand = None;
            let mut bad_count = false;
            for ts in [true, false] {
                g.set_timestamps(ts);
                for i in 0..a.iters + 2 {
                    let r = g
                        .search(&corpus, &q, kernel, Want::Count)
                        .expect("gpu search");
                    count = r.docs[0].count;
                    bad_count |= count != expect;
                    cand = cand.or(r.candidates);
                    if i >= 2 {
                        kt.extend(r.kernel_time);
                        if ts {
                            e2e_ts.push(r.end_to_end);
                        } else {
                            e2e.push(r.end_to_end);
                        }
                    }
                }
            }
            g.set_timestamps(true);
            let e2e = median(e2e);
            let (kms, kg, pct) = if kt.is_empty() {
                ("n/a".to_string(), gbps(bytes, e2e), String::new())
            } else {
                let k = median(kt);
                let gb = gbps(bytes, k);
                (ms(k), gb, format!("{:.0}%", 100.0 * gb / ceiling))
            };
            let elim = cand.map_or(String::new(), |c| {
                format!("{:.2}%", 100.0 * (1.0 - c as f64 / n_lines as f64))
            });
            let bad = bad_count || !lines_ok;
            failures += usize::from(bad);
            let ok = if bad { " MISMATCH" } else { "" };
            say!(
                "| `{pat}` | gpu/{kernel} | {kms} | {} | {} | {kg:.1} | {pct} | {elim} | {count}{ok} |",
                ms(e2e),
                ms(median(e2e_ts))
            );
        }
    }
    if let Some(p) = &a.out {
        std::fs::write(p, &out).expect("write --out");
    }
    if failures > 0 {
        eprintln!("{failures} row(s) disagree with the CPU count");
        std::process::exit(1);
    }
}
