//! A corpus sharded over several GPUs and a host tier, through the
//! session: the case table on 2 and 3 devices, a GPU memory budget that
//! holds a third of the corpus (the rest searched by the CPU), shard edges
//! at every line of a small corpus, per-pattern counts and stats across
//! shards, and a device lost mid-request. On lavapipe the devices are one
//! adapter opened several times (`--gpus N` above the adapters found);
//! their memory is host memory, so the corpora stay small.

mod common;

use std::ops::Range;
use std::sync::OnceLock;

use common::{build, naive, CASES};
use logsieve::gpu::{GpuContext, GpuSelection, GpuTuning, UploadOptions};
use logsieve::session::route::{layout, resident_cost};
use logsieve::session::{Layout, LayoutPart, Place};
use logsieve::stats::{run_cpu, ColumnOptions, Columns, FieldSpec, StatsQuery};
use logsieve::{
    BackendChoice, Corpus, Document, Kernel, MultiKernel, QueryBuilder, SearchOptions, Session,
    Syntax, Tuning, Want,
};

/// `n` devices on whatever adapters exist (the same one opened again when
/// fewer), or `None` without a GPU (an error under LOGSIEVE_REQUIRE_GPU=1).
fn open(n: usize) -> Option<Vec<GpuContext>> {
    let tuning = GpuTuning {
        gpus: GpuSelection::Count(n),
        ..Default::default()
    };
    logsieve::gpu::or_skip("multi-GPU tests", GpuContext::open_selected(&tuning))
        .inspect(|v| assert_eq!(v.len(), n))
}

/// Three devices shared by the tests that lose none.
fn three() -> Option<&'static [GpuContext]> {
    static CTX: OnceLock<Option<Vec<GpuContext>>> = OnceLock::new();
    CTX.get_or_init(|| open(3)).as_deref()
}

fn small_segments() -> UploadOptions {
    UploadOptions {
        max_segment: Some(64),
        ..Default::default()
    }
}

fn forced(kernel: Option<Kernel>, want: Want, max_count: Option<u64>) -> SearchOptions {
    SearchOptions {
        backend: BackendChoice::Gpu,
        gpu_kernel: kernel,
        want,
        max_count,
        ..Default::default()
    }
}

fn cpu(want: Want, max_count: Option<u64>) -> SearchOptions {
    SearchOptions {
        backend: BackendChoice::Cpu,
        want,
        max_count,
        ..Default::default()
    }
}

#[test]
fn case_table_on_two_and_three_devices() {
    let Some(ctx) = three() else { return };
    let mut checked = 0;
    for n in [2, 3] {
        for case in CASES {
            let pats = case.patterns();
            let Ok(q) = build(&pats, case.syntax, case.flags()) else {
                continue;
            };
            let oracle = naive(case.corpus, &pats, case.syntax, case.flags());
            let mut s = Session::new(Corpus::from_bytes("case", case.corpus.to_vec()));
            s.attach_gpus_with(&ctx[..n], small_segments(), None)
                .expect("upload");
            assert_eq!(s.gpus().len(), n);
            for (want, m) in [
                (Want::Lines, None),
                (Want::Count, None),
                (Want::Lines, Some(1)),
                (Want::Count, Some(2)),
            ] {
                let what = format!("{} on {n} devices, {want:?} -m {m:?}", case.name);
                let r = match s.search(&q, &forced(None, want, m)) {
                    Ok(r) => r,
                    // The shape the support check refuses (regex, -w, ...).
                    Err(e) => {
                        assert!(
                            logsieve::support::kernel_support(&q, None).is_err(),
                            "{what}: {e}"
                        );
                        continue;
                    }
                };
                let expect: Vec<u64> = oracle
                    .iter()
                    .copied()
                    .take(m.map_or(usize::MAX, |m| m as usize))
                    .collect();
                assert_eq!(r.total(), expect.len() as u64, "{what}: count");
                if want == Want::Lines {
                    assert_eq!(r.docs[0].lines, expect, "{what}: lines");
                }
                // Every device with lines searches them (shards are cut by
                // bytes: few or uneven lines leave some devices empty).
                let holding = s
                    .layout()
                    .unwrap()
                    .parts
                    .iter()
                    .filter(|p| matches!(p.place, Place::Device(_)))
                    .count();
                assert!(holding <= n && (holding > 0 || case.corpus.is_empty()));
                assert!(
                    r.backend.name.contains(&format!("x{holding} GPUs")),
                    "{what}: {}",
                    r.backend
                );
                checked += 1;
            }
        }
    }
    eprintln!("{checked} sharded routes checked");
    assert!(checked > CASES.len());
}

/// Several documents of a few lines, some without a final newline.
fn small_corpus() -> Corpus {
    let mut c = Corpus::new();
    c.push(Document::from_bytes(
        "a",
        b"ERROR one\nok\nerror two\n\nERROR_503 x\n".to_vec(),
    ));
    c.push(Document::from_bytes("b", b"ok\nERROR three".to_vec()));
    c.push(Document::from_bytes("c", Vec::new()));
    c.push(Document::from_bytes("d", b"WARN ERROR\nok ok\n".to_vec()));
    c
}

fn queries() -> Vec<(String, logsieve::Query)> {
    let mut v = Vec::new();
    for (name, pats, i, inv) in [
        ("ERROR", vec!["ERROR"], false, false),
        ("-i error", vec!["error"], true, false),
        ("-v ERROR", vec!["ERROR"], false, true),
        ("ERROR|WARN|ok", vec!["ERROR", "WARN", "ok"], false, false),
        ("-v ok|two", vec!["ok", "two"], false, true),
    ] {
        let q = QueryBuilder::new()
            .syntax(Syntax::Fixed)
            .case_insensitive(i)
            .invert(inv)
            .build(&pats)
            .unwrap();
        v.push((name.to_string(), q));
    }
    // Fuzzy runs the bitap kernel on each device.
    let q = QueryBuilder::new()
        .syntax(Syntax::Fuzzy(2))
        .case_insensitive(true)
        .build(&["errro"])
        .unwrap();
    v.push(("--fuzzy 2 -i errro".to_string(), q));
    v
}

/// Every answer of `s` on the GPUs equals the CPU's.
fn agrees(s: &Session, what: &str) -> usize {
    let mut n = 0;
    for (name, q) in queries() {
        for (want, m) in [
            (Want::Lines, None),
            (Want::Count, None),
            (Want::Lines, Some(2)),
            (Want::Count, Some(1)),
        ] {
            let c = s.search(&q, &cpu(want, m)).unwrap();
            let g = s.search(&q, &forced(None, want, m)).unwrap();
            assert_eq!(
                g.docs, c.docs,
                "{what}: {name} {want:?} -m {m:?}: {}",
                g.backend
            );
            n += 1;
        }
    }
    n
}

#[test]
fn shard_edges_at_every_line() {
    let Some(ctx) = three() else { return };
    let corpus = small_corpus();
    let total: u64 = corpus.docs().iter().map(|d| d.lines().len()).sum();
    let mut checked = 0;
    // Device 0, device 1, then the host: every pair of cuts.
    for a in 0..=total {
        for b in a..=total {
            let parts: Vec<(Range<u64>, Place)> = vec![
                (0..a, Place::Device(0)),
                (a..b, Place::Device(1)),
                (b..total, Place::Host),
            ];
            let l = Layout {
                parts: parts
                    .into_iter()
                    .filter(|(r, _)| !r.is_empty())
                    .map(|(lines, place)| LayoutPart {
                        lines,
                        bytes: 0,
                        place,
                    })
                    .collect(),
            };
            let mut s = Session::new(small_corpus());
            s.attach_gpus_with(&ctx[..2], small_segments(), Some(l))
                .unwrap();
            checked += agrees(&s, &format!("cuts at {a}, {b}"));
        }
    }
    eprintln!("{checked} answers at every shard edge");
}

#[test]
fn a_budget_for_a_third_keeps_the_rest_on_the_cpu() {
    let Some(ctx) = three() else { return };
    let data = common::generated(3_000, 11);
    let corpus = Corpus::from_bytes("gen.log", data.clone());
    let lines = corpus.docs()[0].lines().len();
    let budget = resident_cost(corpus.total_bytes() / 3, lines / 3);
    let tuning = Tuning {
        gpu: GpuTuning {
            gpu_memory: Some(budget),
            ..Default::default()
        },
        ..Default::default()
    };
    let mut s = Session::with_tuning(corpus, tuning);
    s.attach_gpus_with(&ctx[..2], UploadOptions::default(), None)
        .unwrap();
    let l = s.layout().expect("a layout").clone();
    // The host first (the oldest lines), then the devices' shards.
    assert_eq!(l.parts[0].place, Place::Host, "{l:?}");
    assert_eq!(l.parts.last().unwrap().lines.end, lines);
    let host = l.parts[0].bytes as f64 / s.corpus().total_bytes() as f64;
    assert!((0.6..0.72).contains(&host), "host share {host}");
    let resident: u64 = s.gpus().iter().map(|g| g.resident_bytes()).sum();
    assert!(resident_cost(resident, lines / 3) <= budget + 4096);
    let n = agrees(&s, "a third on the GPUs");
    let q = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .build(&["ERROR"])
        .unwrap();
    let r = s.search(&q, &forced(None, Want::Count, None)).unwrap();
    assert!(r.backend.name.contains("+ cpu"), "{}", r.backend);
    assert!(r.backend.reason.contains("split:"), "{}", r.backend);
    eprintln!("{n} answers; {}", r.backend);
    // The same layout from the routing module.
    assert_eq!(
        layout(s.corpus(), 2, None, Some(budget), true).parts.len(),
        l.parts.len()
    );
}

fn columns(corpus: &Corpus) -> Columns {
    Columns::build(
        corpus,
        &ColumnOptions {
            year: 2026,
            fields: vec![FieldSpec::host(), FieldSpec::level()],
            ..Default::default()
        },
    )
}

#[test]
fn per_pattern_counts_and_stats_across_shards() {
    let Some(ctx) = three() else { return };
    let data = common::generated(2_000, 5);
    let corpus = || Corpus::from_bytes("gen.log", data.clone());
    let c = corpus();
    let lines = c.docs()[0].lines().len();
    let budget = resident_cost(c.total_bytes() / 2, lines / 2);
    let tuning = Tuning {
        gpu: GpuTuning {
            gpu_memory: Some(budget),
            ..Default::default()
        },
        ..Default::default()
    };
    let mut s = Session::with_tuning(corpus(), tuning);
    s.attach_gpus_with(ctx, small_segments_k(), None).unwrap();
    assert_eq!(s.gpus().len(), 3);
    // Per-pattern counts on every many-literal kernel (a pattern that
    // overlaps itself too: the CPU recounts it over each shard only).
    let pats: Vec<&[u8]> = vec![
        b"ERROR", b"10.0.", b"user=u1", b"timeout", b"zz-none", b"00",
    ];
    let q = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .build(&pats)
        .unwrap();
    let want = s.count_per_pattern(&q, &cpu(Want::Count, None)).unwrap();
    for k in MultiKernel::ALL {
        let got = s
            .count_per_pattern(&q, &forced(Some(k.into()), Want::Count, None))
            .unwrap();
        assert_eq!(got.lines, want.lines, "{k:?}: lines");
        assert_eq!(got.occurrences, want.occurrences, "{k:?}: occurrences");
        assert!(got.backend.name.contains("x3 GPUs"), "{}", got.backend);
    }
    // Stats: windows, count-by, histograms, with and without a search.
    let cols = columns(s.corpus());
    s.set_columns(columns(s.corpus()));
    let err = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .build(&["ERROR"])
        .unwrap();
    let inv = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .invert(true)
        .build(&["GET"])
        .unwrap();
    let (lo, hi) = (cols.oldest().unwrap(), cols.newest().unwrap());
    let mut n = 0;
    for search in [None, Some(&err), Some(&inv)] {
        for (since, until) in [
            (None, None),
            (Some(lo + (hi - lo) / 3), Some(hi - (hi - lo) / 4)),
        ] {
            for (count_by, histogram) in [
                (vec![], None),
                (vec![0], Some(60_000)),
                (vec![1, 0], Some(3_600_000)),
            ] {
                let sq = StatsQuery {
                    search,
                    since,
                    until,
                    count_by,
                    histogram,
                };
                let want = run_cpu(s.corpus(), &cols, &sq, 1).unwrap();
                let (got, rep) = s.stats(&sq, &forced(None, Want::Count, None)).unwrap();
                assert_eq!(got, want, "{rep}");
                assert!(rep.name.contains("x3 GPUs"), "{rep}");
                n += 1;
            }
        }
    }
    eprintln!("{n} stats queries across shards");
}

fn small_segments_k() -> UploadOptions {
    UploadOptions {
        max_segment: Some(16 << 10),
        ..Default::default()
    }
}

#[test]
fn a_device_lost_mid_request_leaves_its_shard_to_the_cpu() {
    // Devices of its own: one is destroyed.
    let Some(ctx) = open(2) else { return };
    let data = common::generated(1_500, 3);
    let mut s = Session::new(Corpus::from_bytes("gen.log", data));
    s.attach_gpus_with(&ctx, small_segments_k(), None).unwrap();
    let q = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .build(&["ERROR"])
        .unwrap();
    let want = s.search(&q, &cpu(Want::Lines, None)).unwrap();
    s.lose_device_during_next_request(1);
    let got = s.search(&q, &forced(None, Want::Lines, None)).unwrap();
    assert_eq!(got.docs, want.docs);
    assert!(
        got.backend.reason.contains("device 1") && got.backend.reason.contains("mid-request"),
        "{}",
        got.backend
    );
    assert!(got.backend.name.contains("+ cpu"), "{}", got.backend);
    assert!(ctx[1].is_lost());
    // Later requests leave the lost device out, and still answer.
    let again = s.search(&q, &forced(None, Want::Count, Some(5))).unwrap();
    assert_eq!(again.total(), 5.min(want.total()));
    assert!(
        again.backend.reason.contains("not used"),
        "{}",
        again.backend
    );
    let pats = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .build(&["ERROR", "GET"])
        .unwrap();
    let pc = s
        .count_per_pattern(&pats, &forced(None, Want::Count, None))
        .unwrap();
    let pc_cpu = s.count_per_pattern(&pats, &cpu(Want::Count, None)).unwrap();
    assert_eq!(pc.lines, pc_cpu.lines);
    assert_eq!(pc.occurrences, pc_cpu.occurrences);
    eprintln!("{}", again.backend);
}

/// GPU bytes per corpus byte: every buffer of a resident corpus over its
/// bytes, with the signatures (built by the signature kernel's first run)
/// and without (the default now), and the routing module's estimate.
#[test]
fn gpu_bytes_per_corpus_byte() {
    let Some(ctx) = three() else { return };
    let data = common::generated(100_000, 1);
    let corpus = Corpus::from_bytes("gen.log", data);
    let lines = corpus.docs()[0].lines().len();
    let g = logsieve::gpu::GpuCorpus::upload(&ctx[0], &corpus).unwrap();
    let sum = |g: &logsieve::gpu::GpuCorpus| g.buffers().iter().map(|b| b.1).sum::<u64>();
    let per_byte = |b: u64| b as f64 / corpus.total_bytes() as f64;
    let lean = sum(&g);
    for (name, size) in g.buffers().iter().filter(|b| b.0.starts_with("seg0/")) {
        eprintln!(
            "  {name}: {size} bytes ({:.4} per corpus byte)",
            per_byte(*size)
        );
    }
    let q = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .build(&["ERROR_503"])
        .unwrap();
    let a = g.search(&corpus, &q, Kernel::Scan, Want::Lines).unwrap();
    let b = g
        .search(&corpus, &q, Kernel::Signature, Want::Lines)
        .unwrap();
    assert_eq!(a.docs, b.docs);
    let with_sigs = sum(&g);
    let est = resident_cost(corpus.total_bytes(), lines);
    eprintln!(
        "{} corpus bytes, {lines} lines: {:.4} GPU bytes per corpus byte with signatures, {:.4} without; estimate {:.4}",
        corpus.total_bytes(),
        per_byte(with_sigs),
        per_byte(lean),
        per_byte(est)
    );
    // The signatures replace a 16-byte placeholder.
    assert!(with_sigs - lean >= lines * 16 - 16);
    let err = (est as f64 - lean as f64).abs() / lean as f64;
    assert!(err < 0.02, "estimate {est} vs {lean}");
}

/// Faults: device 1 of 2 lost mid-request for every query kind
/// and every kernel: the answer is the oracle's (its shard went to the
/// CPU) or a clear error, never a wrong answer.
/// REGRESSION: `-F ERROR GET timeout` with the auto kernel answered
/// "a GPU search thread panicked" (wgpu's `create_buffer_init` on the lost
/// device, util/device.rs:72) instead of the CPU answer for the shard;
/// buffers are now written through the queue (`Ctx::buffer_with`).
#[test]
fn a_device_lost_mid_request_for_every_query_kind_and_kernel() {
    let data = common::generated(800, 7);
    let queries: [(&[&str], Syntax, &str); 6] = [
        (&["ERROR"], Syntax::Fixed, ""),
        (&["error"], Syntax::Fixed, "i"),
        (&["ERROR", "GET", "timeout"], Syntax::Fixed, ""),
        (&["ERR(OR)?|WARN"], Syntax::Regex, ""),
        (&["GET*200"], Syntax::Wildcard, ""),
        (&["EROR"], Syntax::Fuzzy(1), ""),
    ];
    let (mut answered, mut refused) = (0, 0);
    for (pats, syntax, flags) in queries {
        let pats = common::pats(pats);
        let f = common::Flags::parse(flags);
        let q = build(&pats, syntax, f).unwrap();
        let oracle = naive(&data, &pats, syntax, f);
        let kernels = std::iter::once(None)
            .chain(Kernel::ALL.into_iter().map(Some))
            .chain([Some(Kernel::Bitap)]);
        for kernel in kernels {
            let Some(ctx) = open(2) else { return };
            let mut s = Session::new(Corpus::from_bytes("gen.log", data.clone()));
            s.attach_gpus_with(&ctx, small_segments_k(), None).unwrap();
            s.lose_device_during_next_request(1);
            let what = format!("{pats:?} {syntax:?} -{flags} kernel {kernel:?}");
            match s.search(&q, &forced(kernel, Want::Lines, None)) {
                Ok(r) => {
                    assert_eq!(r.docs[0].lines, oracle, "{what}: {}", r.backend);
                    answered += 1;
                }
                Err(e) => {
                    // Only a refusal the kernel gives without any loss.
                    assert!(!e.to_string().is_empty(), "{what}: empty error");
                    assert!(
                        logsieve::support::kernel_support(&q, kernel).is_err(),
                        "{what}: supported, yet: {e}"
                    );
                    refused += 1;
                }
            }
        }
    }
    eprintln!("device lost mid-request: {answered} answered as the oracle, {refused} refused");
    assert!(answered > 0);
}

/// `serve --follow` over two devices and a host tier: lines appended to
/// the last document continue the corpus's last part and go there in
/// place (its device appends them; a host part needs nothing uploaded),
/// the layout's other parts unchanged; lines appended to another
/// document upload the shards again by the layout rule. Every answer
/// equals the CPU's and the naive oracle's.
#[test]
fn appends_to_the_last_part_stay_in_place() {
    let Some(ctx) = three() else { return };
    let words = [
        "ERROR one",
        "ok",
        "WARN x error",
        "ERROR_503 y",
        "",
        "ok ok",
    ];
    for host_last in [false, true] {
        let places = if host_last {
            [Place::Device(0), Place::Device(1), Place::Host]
        } else {
            [Place::Host, Place::Device(0), Place::Device(1)]
        };
        let l = Layout {
            parts: [0..3, 3..6, 6..9]
                .into_iter()
                .zip(places)
                .map(|(lines, place)| LayoutPart {
                    lines,
                    bytes: 0,
                    place,
                })
                .collect(),
        };
        let mut s = Session::new(small_corpus());
        s.attach_gpus_with(&ctx[..2], small_segments(), Some(l.clone()))
            .unwrap();
        let mut seed = 7u64;
        let mut end = 9;
        for round in 0..6 {
            let mut b = Vec::new();
            let n = 1 + round % 5;
            for _ in 0..n {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                b.extend_from_slice(words[(seed >> 33) as usize % words.len()].as_bytes());
                b.push(b'\n');
            }
            let before: Vec<u64> = s
                .gpus()
                .iter()
                .map(|g| g.appended_bytes_written())
                .collect();
            s.append_lines(3, &b).unwrap();
            end += n as u64;
            let what = format!("host last {host_last}, round {round}");
            let now = s.layout().expect("still laid out").clone();
            assert_eq!(now.parts.len(), 3, "{what}: {now:?}");
            for (i, (p, q)) in now.parts.iter().zip(&l.parts).enumerate() {
                assert_eq!(p.place, q.place, "{what}: part {i}");
                let want = if i == 2 { 6..end } else { q.lines.clone() };
                assert_eq!(p.lines, want, "{what}: part {i}");
            }
            let after: Vec<u64> = s
                .gpus()
                .iter()
                .map(|g| g.appended_bytes_written())
                .collect();
            if host_last {
                assert_eq!(after, before, "{what}: the host part uploads nothing");
            } else {
                assert_eq!(after[0], before[0], "{what}: device 0 holds older lines");
                assert!(after[1] > before[1], "{what}: device 1 took the lines");
            }
            agrees(&s, &what);
            for p in ["ERROR", "ok", "WARN"] {
                let q =
                    common::build(&common::pats(&[p]), Syntax::Fixed, Default::default()).unwrap();
                let r = s.search(&q, &forced(None, Want::Lines, None)).unwrap();
                for (di, d) in s.corpus().docs().iter().enumerate() {
                    let want = common::naive(
                        d.data(),
                        &common::pats(&[p]),
                        Syntax::Fixed,
                        Default::default(),
                    );
                    assert_eq!(r.docs[di].lines, want, "{what}: {p} doc {di}");
                }
            }
        }
        // Another document grows: its lines are not the newest, the
        // shards are uploaded again by the layout rule (no budget: no
        // host part).
        s.append_lines(0, b"ERROR late\n").unwrap();
        let now = s.layout().expect("laid out").clone();
        assert!(
            now.parts.iter().all(|p| p.place != Place::Host),
            "uploaded again by the rule: {now:?}"
        );
        agrees(
            &s,
            &format!("host last {host_last}, after another document grew"),
        );
    }
}
