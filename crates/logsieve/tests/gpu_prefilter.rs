//! Tier 1 of "regex on the GPU": a query the literal kernels cannot run
//! (regex, wildcard, `-w`, `-x`, Unicode `-i`) but that has required
//! literals runs them on the GPU for candidate lines, each verified by the
//! CPU matcher, `-v` and `-m` on the host. Forced with `--backend gpu`
//! through `Session::search`, against the naive oracle (the regex crate
//! line by line): the case table, random regexes and corpora, matches at
//! segment edges, CRLF lines, a last line without `\n`, several devices.

mod common;

use common::{build, flags_strategy, naive, prefilter_case, variations, Flags, CASES};
use logsieve::gpu::{GpuContext, GpuSelection, GpuTuning, UploadOptions};
use logsieve::session::{Layout, LayoutPart, Place};
use logsieve::support::{prefilter_support, Verifier};
use logsieve::{BackendChoice, Corpus, Kernel, Query, SearchOptions, Session, Syntax, Want};
use proptest::prelude::*;

fn ctx() -> Option<&'static GpuContext> {
    common::gpu::ctx("tier 1")
}

/// The automaton's verification, never a class string's one pass.
fn ctx_plain() -> Option<&'static GpuContext> {
    common::gpu::ctx_without_class_scan("tier 1")
}

use common::gpu::session;

/// Runs `q` forced on the GPU over `s` (lines, counts, `-m 1`, `-m 2`) and
/// compares with `oracle`. Returns false when the GPU refused it (then
/// tier 1 must not take it either).
fn check(s: &Session, q: &Query, kernel: Option<Kernel>, oracle: &[u64], what: &str) -> bool {
    match common::gpu::check_forced(s, q, kernel, oracle, what) {
        Ok(rs) => {
            for r in rs {
                assert!(r.backend.name.starts_with("gpu/"), "{what}: {}", r.backend);
            }
            true
        }
        Err(e) => {
            assert!(prefilter_support(q, kernel).is_err(), "{what}: {e}");
            assert!(e.to_string().contains("GPU prefilter"), "{what}: {e}");
            false
        }
    }
}

fn is_tier1(q: &Query) -> bool {
    logsieve::support::gpu_support(q).is_err() && prefilter_support(q, None).is_ok()
}

#[test]
fn every_regex_wildcard_w_x_case_through_tier1() {
    let (Some(c), Some(plain)) = (ctx(), ctx_plain()) else {
        return;
    };
    let (mut ran, mut refused, mut classes) = (0, 0, 0);
    for (c, case) in CASES.iter().flat_map(|case| [(c, case), (plain, case)]) {
        let f = case.flags();
        if !(case.syntax != Syntax::Fixed || f.w || f.x) {
            continue;
        }
        let pats = case.patterns();
        let Ok(q) = build(&pats, case.syntax, f) else {
            continue;
        };
        if logsieve::support::gpu_support(&q).is_ok() {
            continue; // a regex that is a plain literal runs directly
        }
        let oracle = naive(case.corpus, &pats, case.syntax, f);
        let s = session(c, case.corpus, 64);
        for kernel in [None, Some(Kernel::Scan), Some(Kernel::Ac)] {
            if check(&s, &q, kernel, &oracle, case.name) {
                ran += 1;
            } else {
                refused += 1;
            }
        }
        if is_tier1(&q) {
            let r = s
                .search(
                    &q,
                    &SearchOptions {
                        backend: BackendChoice::Gpu,
                        ..Default::default()
                    },
                )
                .unwrap();
            assert!(
                r.backend.name.contains("+verify") || r.backend.name.ends_with("(class string)"),
                "{}",
                r.backend
            );
            // One literal (or a few, a scan each) on scan, an automaton
            // tier 2 takes: verified on the GPU; else on the CPU. The
            // plan is the route's: the set of required literals that finds
            // the fewest lines of this corpus.
            let route = s
                .route(
                    &logsieve::Request::Search(&q),
                    &SearchOptions {
                        backend: BackendChoice::Gpu,
                        ..Default::default()
                    },
                )
                .unwrap();
            let plan = route.prefilter.expect("a tier 1 route carries its plan");
            let gpu_verify =
                plan.kernel == Kernel::Scan && logsieve::support::shift_and_support(&q).is_ok();
            assert_eq!(plan.verify == Verifier::Gpu, gpu_verify, "{}", case.name);
            // A class string on an ASCII corpus may run as itself (where
            // the planner prices it cheaper), but never on the context that
            // turns them off.
            let may = gpu_verify
                && !c.tuning().no_class_scan
                && logsieve::support::class_scan(&q, s.corpus()).is_some();
            assert!(may || plan.classes.is_none(), "{}", case.name);
            if plan.classes.is_some() {
                classes += 1;
                assert!(
                    r.backend.name.ends_with("(class string)"),
                    "{}: {}",
                    case.name,
                    r.backend
                );
                assert!(
                    r.backend.reason.contains("one scan pass"),
                    "{}",
                    r.backend.reason
                );
                continue;
            }
            let by = if gpu_verify {
                "verify gpu/shift-and"
            } else {
                "verify cpu"
            };
            assert!(r.backend.name.contains(by), "{}: {}", case.name, r.backend);
            assert!(r.backend.reason.contains("tier 1"), "{}", r.backend.reason);
            assert!(
                r.backend.reason.contains("candidate"),
                "{}",
                r.backend.reason
            );
        }
    }
    eprintln!("tier 1: {ran} case routes ran, {refused} refused, {classes} class strings");
    assert!(ran > 20, "{ran}");
    assert!(refused > 0, "some cases have no required literal");
    assert!(
        classes > 0,
        "the table's class strings ran as such: {classes}"
    );
}

#[test]
fn forced_route_names_the_literals_and_refuses_without_them() {
    let Some(c) = ctx() else { return };
    let data = b"ERROR_503 x\nERROR_504\nERROR_5\nok\r\nERROR_599";
    let s = session(c, data, 16);
    let q = build(&[br"ERROR_5\d\d".to_vec()], Syntax::Regex, Flags::default()).unwrap();
    assert_eq!(
        q.required_literals().unwrap().literals(),
        &[b"ERROR_5".to_vec()]
    );
    let opts = SearchOptions {
        backend: BackendChoice::Gpu,
        ..Default::default()
    };
    let route = s.route(&logsieve::Request::Search(&q), &opts).unwrap();
    assert_eq!(
        route.backend,
        logsieve::session::Backend::GpuPrefilter(Kernel::Scan)
    );
    assert!(route.reason.contains("\"ERROR_5\""), "{}", route.reason);
    let r = s.search(&q, &opts).unwrap();
    assert_eq!(r.docs[0].lines, vec![0, 1, 4]);
    // No required literal of 3+ bytes (and no class string with a byte to
    // find it by): tier 2 (the regex's automaton) runs it instead; asked
    // for a literal kernel, the route says why not.
    let none = build(
        &[br"\d{2,4}[a-f]+\d".to_vec()],
        Syntax::Regex,
        Flags::default(),
    )
    .unwrap();
    let r = s.search(&none, &opts).unwrap();
    assert_eq!(r.backend.name, "gpu/shift-and");
    let scan = SearchOptions {
        gpu_kernel: Some(Kernel::Scan),
        ..opts.clone()
    };
    let e = s.search(&none, &scan).unwrap_err().to_string();
    assert!(e.contains("regex") && e.contains("GPU prefilter"), "{e}");
    // Fuzzy has no tier 1: `--backend gpu` runs the bitap kernel; asked
    // for a literal kernel, the route says why not.
    let fz = build(&[b"ERROR".to_vec()], Syntax::Fuzzy(1), Flags::default()).unwrap();
    assert_eq!(s.search(&fz, &opts).unwrap().backend.name, "gpu/bitap");
    let e = s.search(&fz, &scan).unwrap_err().to_string();
    assert!(e.contains("fuzzy") && e.contains("GPU prefilter"), "{e}");
}

#[test]
fn segment_edges_crlf_and_a_last_line_without_newline() {
    let Some(c) = ctx() else { return };
    let hay: &[u8] = b"GET /a HTTP/1.1\r\nxx ERROR_503\r\nPOST /b HTTP/2\nERROR_5x9 ERROR_512";
    let queries: &[(&[u8], Syntax, &str)] = &[
        (br"ERROR_5\d\d", Syntax::Regex, ""),
        (br"ERROR_5\d\d", Syntax::Regex, "v"),
        (b"HTTP/[12]", Syntax::Regex, ""),
        (br"\d\r?$", Syntax::Regex, ""),
        (b"GET /*HTTP", Syntax::Wildcard, ""),
        (b"ERROR_503", Syntax::Fixed, "w"),
        (b"ERROR_512", Syntax::Fixed, "wi"),
        (br"ERROR_5x9 ERROR_\d+", Syntax::Regex, "x"),
    ];
    let mut ran = 0;
    for v in variations(hay, 17) {
        for &(p, syntax, flags) in queries {
            let f = Flags::parse(flags);
            let q = build(&[p.to_vec()], syntax, f).unwrap();
            let oracle = naive(&v, &[p.to_vec()], syntax, f);
            for seg in [16, 40] {
                let s = session(c, &v, seg);
                let what = format!("{:?} seg {seg} on {:?}", String::from_utf8_lossy(p), v);
                ran += check(&s, &q, None, &oracle, &what) as usize;
            }
        }
    }
    assert!(ran > 100, "{ran}");
}

/// Tier 1 verified on the GPU (`scan` then `shift-and` over the lines it
/// marked, one submission): a candidate without a match loses its bit, a
/// match keeps it, a line the automaton cannot decide (a byte >= 0x80
/// under a Unicode `\w`) goes to the CPU; and the result bits it leaves
/// do not leak into the next literal count (scan skips its clear after a
/// count-only scan: the clean flag).
#[test]
fn gpu_verify_keeps_matches_drops_candidates_defers_undecided() {
    let Some(c) = ctx_plain() else { return };
    let data = "ERROR_5xx\nERROR_503\nok ERROR_\nERROR_5é1 ERROR_5\u{e9}\nERROR_599 ERROR_5ab\nERROR_\nERROR_5\u{e9}\u{e9}"
        .as_bytes()
        .to_vec();
    let s = session(c, &data, 16);
    let gpu = SearchOptions {
        backend: BackendChoice::Gpu,
        ..Default::default()
    };
    let lit = build(&[b"ERROR_".to_vec()], Syntax::Fixed, Flags::default()).unwrap();
    for (p, unicode) in [(&br"ERROR_5[0-9][0-9]"[..], false), (br"ERROR_5\w\w", true)] {
        let q = build(&[p.to_vec()], Syntax::Regex, Flags::default()).unwrap();
        assert_eq!(prefilter_support(&q, None).unwrap().verify, Verifier::Gpu);
        let oracle = naive(&data, &[p.to_vec()], Syntax::Regex, Flags::default());
        assert!(check(&s, &q, None, &oracle, &String::from_utf8_lossy(p)));
        let r = s.search(&q, &gpu).unwrap();
        assert!(
            r.backend.name.ends_with("+verify gpu/shift-and"),
            "{}",
            r.backend
        );
        assert_eq!(r.docs[0].lines, oracle, "{p:?}");
        // The non-ASCII lines are undecided under Unicode \w only.
        assert_eq!(
            r.backend.reason.contains("undecided"),
            unicode,
            "{}",
            r.backend.reason
        );
        // A literal count after it: every line holding ERROR_.
        let n = s
            .search(
                &lit,
                &SearchOptions {
                    want: Want::Count,
                    ..gpu.clone()
                },
            )
            .unwrap();
        assert_eq!(n.total(), 7, "{p:?} then ERROR_");
    }
}

/// The GPU verifier works from a compacted list of the candidate lines
/// (`compact`, then one thread per listed line): no candidate, every line
/// a candidate, candidates on both sides of every segment edge, lists
/// longer than a workgroup (8,192 lines per `compact` workgroup, 256 per
/// verify workgroup), CRLF lines and a last line without `\n`; after each,
/// a literal count sees clean bits.
#[test]
fn compacted_candidate_lists() {
    let (Some(c), Some(plain)) = (ctx(), ctx_plain()) else {
        return;
    };
    let mut data = Vec::new();
    for i in 0..20_000u32 {
        // Every line holds `web-`; every 7th an ERROR after it, every
        // 13th a WARN elsewhere (a candidate of ` WARN` that may not
        // match), CRLF on every 5th.
        data.extend_from_slice(format!("web-{:02} ", i % 100).as_bytes());
        match (i % 7, i % 13) {
            (0, _) => data.extend_from_slice(b"ERROR x"),
            (_, 0) => data.extend_from_slice(b"ok WARN y"),
            _ => data.extend_from_slice(b"INFO z"),
        }
        data.extend_from_slice(if i % 5 == 0 { b"\r\n" } else { b"\n" });
    }
    data.extend_from_slice(b"web-42 WARN");
    let gpu = SearchOptions {
        backend: BackendChoice::Gpu,
        ..Default::default()
    };
    let count = SearchOptions {
        want: Want::Count,
        ..gpu.clone()
    };
    let lit = build(&[b"web-".to_vec()], Syntax::Fixed, Flags::default()).unwrap();
    let queries: &[&[u8]] = &[
        // The literal on every line (`web-`): every line a candidate.
        br"web-\d\d (ERROR|WARN)",
        br"web-\d\d (ERROR|WARN)\r?$",
        // On some lines.
        br"ok WARN \w$",
        br"ERROR [a-z]",
        // On no line: an empty list.
        br"FATAL_\d+",
        // Candidates that all fail.
        br"web-\d\d\d",
    ];
    // The class strings among them (`ERROR [a-z]`, `FATAL_\d+`,
    // `web-\d\d\d`) run as one scan pass on the first context; the second
    // drives the compacted lists for every query.
    for (c, seg) in [(plain, 4096u64), (plain, 1 << 20), (c, 4096), (c, 1 << 20)] {
        let s = session(c, &data, seg);
        for p in queries {
            let q = build(&[p.to_vec()], Syntax::Regex, Flags::default()).unwrap();
            let plan = prefilter_support(&q, None).unwrap();
            assert_eq!(plan.verify, Verifier::Gpu, "{p:?}");
            let oracle = naive(&data, &[p.to_vec()], Syntax::Regex, Flags::default());
            let what = format!("{} seg {seg}", String::from_utf8_lossy(p));
            assert!(check(&s, &q, None, &oracle, &what));
            let r = s.search(&q, &gpu).unwrap();
            let route = s.route(&logsieve::Request::Search(&q), &gpu).unwrap();
            let class = route.prefilter.is_some_and(|p| p.classes.is_some());
            assert!(!class || !c.tuning().no_class_scan);
            let by = match class {
                true => "(class string)",
                false => "+verify gpu/shift-and",
            };
            assert!(r.backend.name.ends_with(by), "{what}: {}", r.backend);
            assert_eq!(r.docs[0].lines, oracle, "{what}");
            // `web-` is on every line: the route takes the rarer set of
            // the alternation, one scan pass per literal.
            if p.starts_with(b"web-") && !p.starts_with(br"web-\d\d\d") && !class {
                let route = s.route(&logsieve::Request::Search(&q), &gpu).unwrap();
                let chosen = route.prefilter.unwrap();
                let lits = chosen.literals.patterns();
                assert_eq!(lits.len(), 2, "{what}: {}", route.reason);
                assert!(
                    lits.iter().all(|l| !l.starts_with(b"web-")),
                    "{what}: {}",
                    route.reason
                );
                assert!(route.reason.contains("rejected"), "{}", route.reason);
            }
            let n = s.search(&lit, &count).unwrap();
            assert_eq!(n.total(), 20_001, "{what}, then web-");
        }
    }
}

#[test]
fn several_devices_and_a_host_tier() {
    let tuning = GpuTuning {
        gpus: GpuSelection::Count(2),
        ..Default::default()
    };
    let Some(ctxs) = logsieve::gpu::or_skip(
        "the two-device split test",
        GpuContext::open_selected(&tuning),
    ) else {
        return;
    };
    let data = common::generated(600, 11);
    let lines = data.iter().filter(|&&b| b == b'\n').count() as u64;
    let (a, b) = (lines / 3, 2 * lines / 3);
    let part = |r: std::ops::Range<u64>, place| LayoutPart {
        lines: r,
        bytes: 0,
        place,
    };
    let layout = Layout {
        parts: vec![
            part(0..a, Place::Device(0)),
            part(a..b, Place::Host),
            part(b..lines, Place::Device(1)),
        ],
    };
    let mut s = Session::new(Corpus::from_bytes("t1", data.clone()));
    s.attach_gpus_with(
        &ctxs,
        UploadOptions {
            max_segment: Some(4096),
            ..Default::default()
        },
        Some(layout),
    )
    .unwrap();
    for (p, syntax, flags) in [
        (&br"ERROR \w+ 5\d\d"[..], Syntax::Regex, ""),
        (br"user=u1\d", Syntax::Regex, "v"),
        (b"timeout", Syntax::Fixed, "w"),
        (br"(?:GET|POST) /api", Syntax::Regex, "i"),
    ] {
        let f = Flags::parse(flags);
        let q = build(&[p.to_vec()], syntax, f).unwrap();
        assert!(is_tier1(&q), "{p:?}");
        let oracle = naive(&data, &[p.to_vec()], syntax, f);
        assert!(check(&s, &q, None, &oracle, &String::from_utf8_lossy(p)));
        let r = s
            .search(
                &q,
                &SearchOptions {
                    backend: BackendChoice::Gpu,
                    ..Default::default()
                },
            )
            .unwrap();
        assert!(r.backend.name.contains("x2 GPUs"), "{}", r.backend);
        assert!(r.backend.name.contains("+verify"), "{}", r.backend);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Random regexes whose required literals sit in alternations,
    /// optional groups and repetitions, over a small alphabet: tier 1
    /// agrees with the regex crate line by line.
    #[test]
    fn random_regexes_through_tier1((corpus, p, f) in prefilter_case(), seg in 16u64..80) {
        let Some(c) = ctx() else { return Ok(()) };
        let Ok(q) = build(&p, Syntax::Regex, f) else { return Ok(()) };
        let oracle = naive(&corpus, &p, Syntax::Regex, f);
        let s = session(c, &corpus, seg);
        check(&s, &q, None, &oracle, &format!("{p:?} {f:?}"));
    }

    /// The same with -w/-x/-i drawn independently.
    #[test]
    fn random_flags_through_tier1((corpus, p, _) in prefilter_case(), f in flags_strategy(false)) {
        let Some(c) = ctx() else { return Ok(()) };
        let Ok(q) = build(&p, Syntax::Regex, f) else { return Ok(()) };
        let oracle = naive(&corpus, &p, Syntax::Regex, f);
        let s = session(c, &corpus, 64);
        check(&s, &q, None, &oracle, &format!("{p:?} {f:?}"));
    }
}

/// The regex bench's suite (`logsieve-bench`'s `regex` binary, copied:
/// a test cannot import a binary) over generated lines, through tier 1 as
/// the route chooses its literals (GPU default), tier 1 on `ac` and tier 2
/// forced, against the naive oracle. The route's literal sets must each
/// be necessary: every matching line holds one.
#[test]
fn the_bench_suite_through_each_tier_on_generated_lines() {
    const SUITE: &[&str] = &[
        r"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b",
        r"192\.168\.1\.\d+",
        r"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}",
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        r"trace=[0-9a-f]{32}",
        r"[0-9a-f]{32}",
        r"ERROR_5\d\d",
        r"latency_ms=\d{4,}",
        r"(?i)timeout|refused",
        r"\b(GET|POST) /api/v\d/",
        r"user=u1\d*7 ",
        r"at [\w.$]+\(\w+\.java:\d+\)",
        r"Exception: .*(reset|exhausted)",
        r#"HTTP/1\.[01]" [45]\d\d"#,
        r"\d{4}-\d\d-\d\dT\d\d:\d\d",
        r"sshd\[\d+\]: Failed password",
        r"port \d{5} ssh2",
        r"web-\d\d (ERROR|WARN)",
        r"\bu\d{5}\b",
        r"bytes=\d{6,}$",
        r"\[svc-(payments|billing)\]",
        r"[A-Z][a-z]+Exception",
        r"client=10\.\d+\.\d+\.\d+",
        r"latency_ms=1\d{3} ",
    ];
    let Some(c) = ctx() else { return };
    let data = common::generated(3000, 42);
    let s = session(c, &data, 1 << 18);
    let gpu = SearchOptions {
        backend: BackendChoice::Gpu,
        ..Default::default()
    };
    let (mut sets, mut multi) = (0, 0);
    for p in SUITE {
        let pats = vec![p.as_bytes().to_vec()];
        let q = build(&pats, Syntax::Regex, Flags::default()).unwrap();
        let oracle = naive(&data, &pats, Syntax::Regex, Flags::default());
        let route = s.route(&logsieve::Request::Search(&q), &gpu).unwrap();
        if let Some(plan) = &route.prefilter {
            sets += 1;
            multi += (plan.literals.patterns().len() > 1) as usize;
            let lits = plan.literals.patterns();
            // Folded sets (`(?i)timeout|refused`) hold any ASCII case.
            let fold = plan.literals.case() != logsieve::query::CaseMode::Sensitive;
            let same = |w: &[u8], l: &[u8]| {
                if fold {
                    w.eq_ignore_ascii_case(l)
                } else {
                    w == l
                }
            };
            for (i, line) in common::naive_lines(&data).iter().enumerate() {
                if oracle.binary_search(&(i as u64)).is_ok() {
                    assert!(
                        lits.iter()
                            .any(|l| line.windows(l.len()).any(|w| same(w, l))),
                        "{p}: line {i} matches but holds none of {}",
                        plan.describe()
                    );
                }
            }
        }
        for kernel in [None, Some(Kernel::Ac)] {
            check(&s, &q, kernel, &oracle, p);
        }
        // Tier 2 where its automaton fits (the forced route refuses the
        // rest with the reason).
        if logsieve::support::shift_and_support(&q).is_ok() {
            common::gpu::check_forced(&s, &q, Some(Kernel::ShiftAnd), &oracle, p).unwrap();
        }
        let r = s.search(&q, &gpu).unwrap();
        assert_eq!(r.docs[0].lines, oracle, "{p}: {}", r.backend);
    }
    eprintln!("suite: {sets} tier 1 routes, {multi} on several scans");
    assert!(sets >= 15, "{sets}");
    assert!(multi >= 1, "{multi}");
}

/// Several scan passes (a literal set of 2-4) without scan's immediates
/// (`GpuTuning::no_immediates`, as on adapters without them): each pass
/// but the last in a submission of its own after its uniform write, then
/// the automaton over the OR-ed line bits; against the naive oracle, and
/// a literal count after it sees clean bits.
#[test]
fn several_scan_passes_with_uniform_parameters() {
    // The queries below are class sets: without `no_class_scan` they
    // would run as one exact pass each, never the automaton (the class
    // sets' own passes are `tests/gpu_classes.rs`'s).
    let Ok(ctx) = GpuContext::new_with(&GpuTuning {
        no_immediates: true,
        no_class_scan: true,
        ..Default::default()
    }) else {
        // `ctx()` says so loudly (and fails under LOGSIEVE_REQUIRE_GPU=1).
        assert!(ctx().is_none(), "a GPU, but not without immediates");
        return;
    };
    assert!(!ctx.info().scan_immediates);
    let mut data = Vec::new();
    for i in 0..3000u32 {
        data.extend_from_slice(format!("web-{:02} ", i % 100).as_bytes());
        data.extend_from_slice(match (i % 7, i % 11, i % 13) {
            (0, _, _) => b"ERROR x".as_slice(),
            (_, 0, _) => b"WARN y",
            (_, _, 0) => b"FATAL z",
            _ => b"INFO w",
        });
        data.extend_from_slice(if i % 5 == 0 { b"\r\n" } else { b"\n" });
    }
    data.extend_from_slice(b"web-42 WARN");
    let gpu = SearchOptions {
        backend: BackendChoice::Gpu,
        ..Default::default()
    };
    let lit = build(&[b"web-".to_vec()], Syntax::Fixed, Flags::default()).unwrap();
    for seg in [4096u64, 1 << 20] {
        let s = session(&ctx, &data, seg);
        for p in [
            &br"web-\d\d (ERROR|WARN)"[..],
            br"web-\d\d (ERROR|WARN|FATAL) [a-z]\r?$",
            br"web-\d\d (ERROR|FATAL)",
        ] {
            let q = build(&[p.to_vec()], Syntax::Regex, Flags::default()).unwrap();
            let route = s.route(&logsieve::Request::Search(&q), &gpu).unwrap();
            let plan = route.prefilter.clone().unwrap();
            assert!(plan.literals.patterns().len() > 1, "{}", route.reason);
            assert_eq!(plan.verify, Verifier::Gpu);
            let oracle = naive(&data, &[p.to_vec()], Syntax::Regex, Flags::default());
            let what = format!("{} seg {seg}", String::from_utf8_lossy(p));
            assert!(check(&s, &q, None, &oracle, &what));
            let n = s
                .search(
                    &lit,
                    &SearchOptions {
                        want: Want::Count,
                        ..gpu.clone()
                    },
                )
                .unwrap();
            assert_eq!(n.total(), 3001, "{what}, then web-");
        }
    }
}
