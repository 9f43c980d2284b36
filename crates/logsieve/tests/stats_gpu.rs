//! The GPU path of the pipeline against the CPU path: identical `Stats` for
//! every window, search, count-by and histogram, over several segments and
//! with oversized lines the GPU hands to the CPU. Runs on whatever adapter
//! exists (lavapipe in CI); without one it says so loudly and passes, unless
//! `LOGSIEVE_REQUIRE_GPU=1`, when it fails.
#![cfg(feature = "gpu")]

use logsieve::gpu::{GpuContext, GpuCorpus, UploadOptions};
use logsieve::stats::gpu::GpuColumns;
use logsieve::stats::{run_cpu, ColumnOptions, Columns, FieldSpec, StatsQuery};
use logsieve::{Corpus, Document, Query, QueryBuilder, Syntax};

fn gpu() -> Option<GpuContext> {
    logsieve::gpu::or_skip("pipeline GPU tests", GpuContext::shared())
}

fn fixed(p: &str, i: bool, v: bool) -> Query {
    QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .case_insensitive(i)
        .invert(v)
        .build(&[p])
        .unwrap()
}

/// Every combination of search, window, count-by and histogram: GPU == CPU.
fn compare(corpus: &Corpus, cols: &Columns, max_segment: Option<u64>, what: &str) -> usize {
    let Some(ctx) = gpu() else { return 0 };
    let g = GpuCorpus::upload_with(
        &ctx,
        corpus,
        UploadOptions {
            max_segment,
            ..Default::default()
        },
    )
    .unwrap();
    let gc = GpuColumns::upload(&g, corpus, cols).unwrap();
    let queries = [
        None,
        Some(fixed("192.168.1.", false, false)),
        Some(fixed("192.168.1.", false, true)),
        Some(fixed("error", true, false)),
        Some(fixed("no such text anywhere", false, false)),
    ];
    let newest = cols.newest().unwrap_or(0);
    let oldest = cols.oldest().unwrap_or(0);
    let windows = [
        (None, None),
        (Some(newest - 15 * 60_000), None),
        (Some(oldest), Some(newest)),
        (Some(newest), None),
        (Some(newest), Some(newest)),
        (None, Some(oldest)),
        (None, Some(oldest + 1)),
        (Some(oldest - 86_400_000), Some(newest + 86_400_000)),
    ];
    let nf = cols.fields().len();
    let by: Vec<Vec<usize>> = match nf {
        0 => vec![vec![]],
        1 => vec![vec![], vec![0]],
        _ => vec![vec![], vec![0], vec![1], vec![0, 1], vec![1, 0]],
    };
    let mut n = 0;
    for query in &queries {
        for &(since, until) in &windows {
            for count_by in &by {
                for histogram in [None, Some(60_000), Some(3_600_000)] {
                    let q = StatsQuery {
                        search: query.as_ref(),
                        since,
                        until,
                        count_by: count_by.clone(),
                        histogram,
                    };
                    let cpu = run_cpu(corpus, cols, &q, 2).unwrap();
                    let got = gc.run(&g, corpus, cols, &q).unwrap();
                    assert_eq!(
                        got.stats,
                        cpu,
                        "{what}: query {:?} window {since:?}..{until:?} by {count_by:?} hist {histogram:?}",
                        query.as_ref().map(|q| q.patterns().to_vec())
                    );
                    n += 1;
                }
            }
        }
    }
    n
}

fn gen_corpus(lines: u64, seed: u64) -> Corpus {
    let data = logsieve::gen::generate(&logsieve::gen::GenOptions {
        lines,
        seed,
        ..Default::default()
    });
    Corpus::from_bytes("gen.log", data)
}

fn build(corpus: &Corpus, fields: Vec<FieldSpec>) -> Columns {
    Columns::build(
        corpus,
        &ColumnOptions {
            year: 2026,
            fields,
            ..Default::default()
        },
    )
}

#[test]
fn gpu_matches_cpu_on_generated_logs() {
    let c = gen_corpus(20_000, 5);
    let cols = build(&c, vec![FieldSpec::host(), FieldSpec::level()]);
    // One segment, then many small ones.
    compare(&c, &cols, None, "one segment");
    let n = compare(&c, &cols, Some(64 << 10), "64 KiB segments");
    if n > 0 {
        eprintln!("pipeline GPU == CPU on {n} queries");
    }
}

#[test]
fn gpu_matches_cpu_with_many_keys_and_oversized_lines() {
    // A user field with thousands of values (global-atomics kernel), an
    // unsorted second document, and lines longer than a segment (searched
    // and counted on the CPU side of the GPU path).
    let mut corpus = Corpus::new();
    let a = logsieve::gen::generate(&logsieve::gen::GenOptions {
        lines: 8_000,
        seed: 9,
        ..Default::default()
    });
    corpus.push(Document::from_bytes("a.log", a));
    let mut b = String::new();
    for i in 0..3000u32 {
        let h = (i * 7919) % 24;
        b.push_str(&format!(
            "2026-11-20T{h:02}:{:02}:00.000Z web-{:02} INFO req client=192.168.1.{} user=u{}\n",
            i % 60,
            i % 5,
            i % 250,
            i
        ));
        if i % 1000 == 0 {
            b.push_str(&format!(
                "2026-11-20T{h:02}:30:00.000Z web-99 ERROR {} 192.168.1.1 error\n",
                "x".repeat(40_000)
            ));
        }
    }
    corpus.push(Document::from_bytes("b.log", b.into_bytes()));
    let cols = build(
        &corpus,
        vec![
            FieldSpec::host(),
            FieldSpec::parse("user=user=(u\\d+)").unwrap(),
        ],
    );
    assert!(cols.fields()[1].values.len() >= 3000);
    compare(
        &corpus,
        &cols,
        Some(32 << 10),
        "32 KiB segments, 3000 users",
    );
}

#[test]
fn gpu_columns_reject_what_they_cannot_run() {
    let Some(ctx) = gpu() else { return };
    let c = gen_corpus(2_000, 1);
    let cols = build(&c, vec![FieldSpec::host()]);
    let g = GpuCorpus::upload(&ctx, &c).unwrap();
    let gc = GpuColumns::upload(&g, &c, &cols).unwrap();
    let re = QueryBuilder::new().build(&["a+b"]).unwrap();
    let q = StatsQuery {
        search: Some(&re),
        ..Default::default()
    };
    assert!(gc.unsupported(&cols, &q).is_some());
    assert!(gc.run(&g, &c, &cols, &q).is_err());
    // REGRESSION: two literals were filtered by the first one only; the
    // GPU now refuses them, and a session answers them on the CPU.
    let two = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .build(&["ERROR", "WARN"])
        .unwrap();
    let q2 = StatsQuery {
        search: Some(&two),
        ..Default::default()
    };
    assert!(gc.unsupported(&cols, &q2).is_some());
    assert!(gc.run(&g, &c, &cols, &q2).is_err());
    let mut session = logsieve::Session::new(gen_corpus(2_000, 1));
    session.attach_gpu_with(&ctx, Default::default()).unwrap();
    session.set_columns(build(session.corpus(), vec![FieldSpec::host()]));
    let cpu =
        logsieve::stats::run_cpu(session.corpus(), session.columns().unwrap(), &q2, 1).unwrap();
    let forced = logsieve::SearchOptions {
        backend: logsieve::BackendChoice::Gpu,
        ..Default::default()
    };
    assert!(session.stats(&q2, &forced).is_err());
    let (auto, report) = session.stats(&q2, &Default::default()).unwrap();
    assert_eq!(auto.selected, cpu.selected);
    assert_eq!(auto.groups.len(), cpu.groups.len());
    assert!(report.name.starts_with("cpu/"), "{}", report.name);
    // Columns of another corpus.
    let other = gen_corpus(100, 2);
    let other_cols = build(&other, vec![FieldSpec::host()]);
    assert!(gc
        .run(&g, &other, &other_cols, &StatsQuery::default())
        .is_err());
}
