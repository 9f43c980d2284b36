//! The table of cases through the one routing point: every case, on every
//! backend a caller can ask for (`--backend cpu`, `--backend gpu` with each
//! kernel, `--backend auto`), for line ids, counts and `-m`, through
//! `Session::search`, against the naive oracle and the hand-written
//! expectation. A forced GPU route that cannot run a case must say why
//! (`support::kernel_support`), never answer wrongly; per-pattern counts go
//! through `Session::count_per_pattern` on the CPU and each many-literal
//! kernel.

mod common;

use std::sync::OnceLock;

use common::{build, naive, CASES};
use logsieve::gpu::{GpuContext, UploadOptions};
use logsieve::support::kernel_support;
use logsieve::{BackendChoice, Corpus, Kernel, MultiKernel, SearchOptions, Session, Syntax, Want};

fn ctx() -> Option<&'static GpuContext> {
    static CTX: OnceLock<Option<GpuContext>> = OnceLock::new();
    CTX.get_or_init(|| logsieve::gpu::or_skip("GPU routes tests", GpuContext::new()))
        .as_ref()
}

/// A session over `data`, with the GPU attached in small segments when
/// there is one (so that cases cross segment edges too).
fn session(data: &[u8]) -> Session {
    let mut corpus = Corpus::from_bytes("case", data.to_vec());
    // Routes here depend on the inputs, never on this machine's load.
    corpus.fix_measured_speeds(8.0);
    let mut s = Session::new(corpus);
    if let Some(c) = ctx() {
        s.attach_gpu_with(
            c,
            UploadOptions {
                max_segment: Some(64),
                ..Default::default()
            },
        )
        .expect("upload");
    }
    s
}

/// Every backend a caller can name, with the kernel asked for.
fn backends() -> Vec<(BackendChoice, Option<Kernel>)> {
    let mut v = vec![(BackendChoice::Cpu, None), (BackendChoice::Auto, None)];
    if ctx().is_some() {
        v.push((BackendChoice::Gpu, None));
        for k in Kernel::ALL
            .into_iter()
            .chain(MultiKernel::ALL.map(Kernel::from))
            .chain([Kernel::Bitap])
        {
            v.push((BackendChoice::Gpu, Some(k)));
        }
    }
    v
}

#[test]
fn every_case_on_every_route_agrees_with_the_oracle() {
    let mut checked = 0;
    let mut refused = 0;
    for case in CASES {
        let pats = case.patterns();
        let Ok(q) = build(&pats, case.syntax, case.flags()) else {
            continue;
        };
        let oracle = naive(case.corpus, &pats, case.syntax, case.flags());
        assert_eq!(oracle, case.expected, "{}: the oracle", case.name);
        let s = session(case.corpus);
        for (backend, kernel) in backends() {
            for (want, max_count) in [
                (Want::Lines, None),
                (Want::Count, None),
                (Want::Lines, Some(1)),
            ] {
                let opts = SearchOptions {
                    backend,
                    gpu_kernel: kernel,
                    want,
                    max_count,
                    ..Default::default()
                };
                let what = format!(
                    "{} on {backend:?}/{kernel:?} {want:?} -m {max_count:?}",
                    case.name
                );
                let r = match s.search(&q, &opts) {
                    Ok(r) => r,
                    Err(e) => {
                        // Only a forced GPU route may refuse, and only for
                        // the reason the one support check gives.
                        assert_eq!(backend, BackendChoice::Gpu, "{what}: {e}");
                        let why = kernel_support(&q, kernel).expect_err(&what);
                        assert!(e.to_string().contains(why.reason()), "{what}: {e}");
                        refused += 1;
                        continue;
                    }
                };
                let want_lines: Vec<u64> = match max_count {
                    Some(m) => oracle.iter().copied().take(m as usize).collect(),
                    None => oracle.clone(),
                };
                assert_eq!(r.total(), want_lines.len() as u64, "{what}: count");
                if want == Want::Lines {
                    assert_eq!(r.docs[0].lines, want_lines, "{what}: lines");
                }
                if backend == BackendChoice::Gpu {
                    assert!(
                        r.backend.name.starts_with("gpu/"),
                        "{what}: ran {}",
                        r.backend
                    );
                }
                checked += 1;
            }
        }
    }
    eprintln!("{checked} routes checked, {refused} refused");
    assert!(checked > CASES.len(), "{checked} routes checked");
    if ctx().is_some() {
        assert!(refused > 0, "some forced GPU routes must be refused");
    }
}

#[test]
fn per_pattern_counts_agree_on_every_route() {
    let data = common::generated(3_000, 7);
    let s = session(&data);
    let pats: Vec<&[u8]> = vec![
        b"ERROR", b"10.0.", b"user=u1", b"timeout", b"zz-none", b"GET",
    ];
    let mut b = logsieve::QueryBuilder::new();
    b.syntax(Syntax::Fixed);
    let q = b.build(&pats).unwrap();
    let cpu = s
        .count_per_pattern(
            &q,
            &SearchOptions {
                backend: BackendChoice::Cpu,
                ..Default::default()
            },
        )
        .unwrap();
    // Each pattern alone, through the search route, is the oracle.
    for (i, p) in pats.iter().enumerate() {
        let one = b.build(&[p]).unwrap();
        let lines = naive(&data, &[p.to_vec()], Syntax::Fixed, Default::default());
        assert_eq!(
            cpu.lines[i],
            lines.len() as u64,
            "{}",
            String::from_utf8_lossy(p)
        );
        let _ = one;
    }
    if ctx().is_none() {
        return;
    }
    for k in MultiKernel::ALL {
        let opts = SearchOptions {
            backend: BackendChoice::Gpu,
            gpu_kernel: Some(k.into()),
            ..Default::default()
        };
        let g = s.count_per_pattern(&q, &opts).unwrap();
        assert_eq!(g.lines, cpu.lines, "{}", k.name());
        assert_eq!(g.occurrences, cpu.occurrences, "{}", k.name());
        assert!(g.backend.name.starts_with("gpu/"), "{}", g.backend);
    }
}

/// What a search handed to its sink while it ran.
#[derive(Default)]
struct Recorder {
    /// Per document: the starts and ids handed over in pieces.
    pieces: Vec<(usize, Vec<u64>, Vec<u64>)>,
    /// The documents reported done, in the order reported, with their hits.
    done: Vec<(usize, logsieve::DocHits)>,
}

impl logsieve::HitSink for Recorder {
    fn lines(&mut self, doc: usize, starts: &[u64], ids: &[u64]) {
        match self.pieces.last_mut() {
            Some((d, s, i)) if *d == doc => {
                s.extend_from_slice(starts);
                i.extend_from_slice(ids);
            }
            _ => self.pieces.push((doc, starts.to_vec(), ids.to_vec())),
        }
    }
    fn doc_done(&mut self, doc: usize, hits: &logsieve::DocHits) {
        self.done.push((doc, hits.clone()));
    }
}

/// Every case, three documents to a corpus (the case's, an empty one, the
/// case's again), through `execute_streamed` on every route: the answer is
/// the oracle's; what was handed over in pieces is each document's lines
/// in order (the CPU engine) or nothing; a document reported done carries
/// its answer, and documents are reported in order, after their pieces.
#[test]
fn streamed_lines_are_the_answers_lines_in_order() {
    use logsieve::{Cancel, Document, Request};
    let mut checked = 0;
    for case in CASES {
        let pats = case.patterns();
        let Ok(q) = build(&pats, case.syntax, case.flags()) else {
            continue;
        };
        let oracle = naive(case.corpus, &pats, case.syntax, case.flags());
        let docs = [case.corpus, b"".as_slice(), case.corpus];
        let mut s = Session::new(Corpus::from_docs(
            docs.iter()
                .enumerate()
                .map(|(k, d)| Document::from_bytes(format!("d{k}"), d.to_vec()))
                .collect(),
        ));
        for (backend, max_count, line_ids) in [
            (BackendChoice::Cpu, None, true),
            (BackendChoice::Cpu, None, false),
            (BackendChoice::Cpu, Some(1), true),
            (BackendChoice::Auto, None, true),
        ] {
            let opts = SearchOptions {
                backend,
                want: Want::Lines,
                max_count,
                line_ids,
                ..Default::default()
            };
            let what = format!("{} {backend:?} -m {max_count:?} ids {line_ids}", case.name);
            let req = Request::Search(&q);
            let route = s.prepare(&req, &opts).expect(&what);
            let mut rec = Recorder::default();
            let r = match s.execute_streamed(&req, &route, &opts, &Cancel::new(), &mut rec) {
                Ok(logsieve::Answer::Search(r)) => r,
                other => panic!("{what}: {:?}", other.err()),
            };
            let want: Vec<u64> = oracle
                .iter()
                .copied()
                .take(max_count.map_or(usize::MAX, |m| m as usize))
                .collect();
            for (k, hits) in r.docs.iter().enumerate() {
                let expected: &[u64] = if k == 1 { &[] } else { &want };
                assert_eq!(hits.count, expected.len() as u64, "{what}: doc {k}");
                if line_ids {
                    assert_eq!(hits.lines, expected, "{what}: doc {k}");
                }
            }
            for (k, starts, ids) in &rec.pieces {
                let hits = &r.docs[*k];
                assert!(!q.invert(), "{what}: pieces under -v");
                assert_eq!(starts, &hits.starts, "{what}: doc {k}'s pieces");
                let want_ids: &[u64] = if line_ids { &hits.lines } else { &[] };
                assert_eq!(&ids[..], want_ids, "{what}: doc {k}'s piece ids");
            }
            let order: Vec<usize> = rec.done.iter().map(|(k, _)| *k).collect();
            if r.backend.name.starts_with("cpu/") {
                assert_eq!(order, [0, 1, 2], "{what}");
                // One part a document this small: every line was handed.
                let streamed: Vec<usize> = rec.pieces.iter().map(|p| p.0).collect();
                let with_lines: Vec<usize> = (0..3)
                    .filter(|&k| !q.invert() && r.docs[k].count > 0)
                    .collect();
                assert_eq!(streamed, with_lines, "{what}");
            } else {
                assert!(order.is_empty() && rec.pieces.is_empty(), "{what}");
            }
            for (k, hits) in &rec.done {
                assert_eq!(hits, &r.docs[*k], "{what}: doc {k} done");
                assert_eq!(hits.starts, r.docs[*k].starts, "{what}: doc {k} done");
            }
            checked += 1;
        }
    }
    assert!(checked > CASES.len(), "{checked} streamed searches checked");
}

/// A one-shot plan that would start a GPU it has not seen looks at the
/// adapters first (`Session::prepare`): where the best is a software
/// adapter (lavapipe on CI) or there is none, no device is started and
/// the CPU answers, saying why; a real GPU is started. The query is slow
/// on the CPU (24 patterns `--fuzzy 3`, each of four common 2-byte
/// pieces), so the cold plan weighs a discrete GPU over the CPU.
#[test]
fn prepare_looks_before_it_starts_a_gpu() {
    use logsieve::gen::{generate, GenOptions};
    use logsieve::{QueryBuilder, Request};
    let data = generate(&GenOptions {
        lines: 40_000,
        seed: 5,
        ..Default::default()
    });
    const PIECES: [&str; 8] = ["er", "or", "in", "re", "at", "on", "st", "en"];
    let pats: Vec<String> = (0..24)
        .map(|i| {
            let (a, b) = (i / 3 % 8, (i / 3 + 1 + i % 3) % 8);
            [
                PIECES[a],
                PIECES[b],
                PIECES[(a + 3) % 8],
                PIECES[(b + 5) % 8],
            ]
            .concat()
        })
        .collect();
    let q = QueryBuilder::new()
        .syntax(Syntax::Fuzzy(3))
        .build(&pats)
        .unwrap();
    let mut corpus = Corpus::from_bytes("big", data);
    // The CPU measured slow (as this fuzzy search is: its pigeonhole
    // pieces are 2 bytes), the same on every machine and load.
    corpus.fix_measured_speeds(0.01);
    let mut s = Session::new(corpus);
    let opts = SearchOptions {
        want: Want::Count,
        ..Default::default()
    };
    let req = Request::Search(&q);
    let route = s.prepare(&req, &opts).expect("a route");
    let best = GpuContext::probe_adapters().into_iter().next();
    match best {
        Some(p) if !p.is_software => {
            eprintln!("a GPU adapter ({}): started", p.name);
        }
        Some(p) => {
            assert!(!s.has_gpu(), "software adapter {} started", p.name);
            assert!(
                route.reason.contains("software adapter"),
                "{}",
                route.reason
            );
        }
        None => {
            assert!(!s.has_gpu());
            assert!(route.reason.contains("no GPU adapter"), "{}", route.reason);
        }
    }
    let Ok(logsieve::Answer::Search(r)) = s.execute(&req, &route, &opts) else {
        panic!("a search result");
    };
    let cpu = SearchOptions {
        backend: BackendChoice::Cpu,
        ..opts
    };
    assert_eq!(r.total(), s.search(&q, &cpu).unwrap().total());
}

/// The session keeps the route of a repeated request (`route::Memo`) only
/// while its corpus is the one the route was planned on. Here the kept
/// route runs `u\d\d` as a class string, exact only while every byte is
/// ASCII (Unicode `\d`); after a line with Arabic-Indic digits is
/// appended it must be planned again (the class string would miss that
/// line), on every backend.
#[test]
fn a_kept_route_is_planned_again_when_lines_are_appended() {
    use logsieve::{QueryBuilder, Request};
    let mut s = session(b"user u12 ok\nuser u3 no\nuser u45 ok\n");
    let q = QueryBuilder::new().build(&[r"u\d\d"]).unwrap();
    let req = Request::Search(&q);
    let opts = |backend| SearchOptions {
        backend,
        want: Want::Count,
        threads: 0,
        ..Default::default()
    };
    let mut choices = vec![BackendChoice::Cpu, BackendChoice::Auto];
    if s.has_gpu() {
        choices.push(BackendChoice::Gpu);
        let before = s.route(&req, &opts(BackendChoice::Gpu)).unwrap();
        assert!(before.reason.contains("class string"), "{}", before.reason);
    }
    for &b in &choices {
        for _ in 0..2 {
            assert_eq!(s.search(&q, &opts(b)).unwrap().total(), 2, "{b:?}");
        }
    }
    s.append_lines(0, "user u\u{663}\u{664} ok\nuser u7 no\n".as_bytes())
        .unwrap();
    if s.has_gpu() {
        let after = s.route(&req, &opts(BackendChoice::Gpu)).unwrap();
        assert!(!after.reason.contains("class string"), "{}", after.reason);
    }
    for &b in &choices {
        for _ in 0..2 {
            assert_eq!(s.search(&q, &opts(b)).unwrap().total(), 3, "{b:?}");
        }
    }
}

/// A GPU route carries the work support compiled (`Route::job`): the
/// kernel, and the automaton or bitap chains, which the executor runs as
/// they are. Its answers equal the CPU's; an automatic GPU route carries
/// its job too.
#[test]
fn a_gpu_route_carries_the_work_support_compiled() {
    use logsieve::support::{bitap_support, shift_and_support, GpuWork};
    use logsieve::{QueryBuilder, Request};
    if ctx().is_none() {
        return;
    }
    let data = common::generated(4_000, 11);
    let s = session(&data);
    let q = |p: &str, syntax: Syntax| {
        QueryBuilder::new()
            .syntax(syntax)
            .build(&[p.as_bytes().to_vec()])
            .expect("query")
    };
    let cases = [
        (q("ERROR_503", Syntax::Fixed), None, Kernel::Scan),
        (
            q(r"[0-9]{3} [a-z]+", Syntax::Regex),
            Some(Kernel::ShiftAnd),
            Kernel::ShiftAnd,
        ),
        (
            q("NullPointerExeption", Syntax::Fuzzy(1)),
            None,
            Kernel::Bitap,
        ),
    ];
    for (query, asked, kernel) in &cases {
        let cpu = s
            .search(
                query,
                &SearchOptions {
                    backend: BackendChoice::Cpu,
                    ..Default::default()
                },
            )
            .expect("cpu");
        assert!(cpu.total() > 0, "{kernel}: the case must match some lines");
        for backend in [BackendChoice::Gpu, BackendChoice::Auto] {
            let opts = SearchOptions {
                backend,
                gpu_kernel: *asked,
                ..Default::default()
            };
            let route = s.route(&Request::Search(query), &opts).expect("route");
            let what = format!("{kernel} {backend:?}: {}", route.reason);
            match route.backend.kernel() {
                Some(k)
                    if !matches!(route.backend, logsieve::session::Backend::GpuPrefilter(_)) =>
                {
                    let job = route.job.as_ref().expect(&what);
                    assert_eq!(job.kernel, k, "{what}");
                    match (&job.work, k) {
                        (GpuWork::Automaton(a), Kernel::ShiftAnd) => assert!(
                            std::sync::Arc::ptr_eq(a, &shift_and_support(query).expect(&what)),
                            "{what}: the automaton support compiled"
                        ),
                        (GpuWork::Bitap(b), Kernel::Bitap) => {
                            assert_eq!(**b, bitap_support(query).expect(&what), "{what}")
                        }
                        (GpuWork::Literals, Kernel::Scan) => {}
                        (w, k) => panic!("{what}: {k} with {w:?}"),
                    }
                }
                _ => {
                    assert_eq!(backend, BackendChoice::Auto, "{what}");
                    assert!(route.job.is_none(), "{what}");
                }
            }
            if backend == BackendChoice::Gpu {
                assert_eq!(
                    route.backend,
                    logsieve::session::Backend::Gpu(*kernel),
                    "{what}"
                );
            }
            let got = match s.execute(&Request::Search(query), &route, &opts) {
                Ok(logsieve::Answer::Search(r)) => r,
                other => panic!("{what}: {other:?}"),
            };
            assert_eq!(got.docs[0].lines, cpu.docs[0].lines, "{what}");
        }
    }
}
