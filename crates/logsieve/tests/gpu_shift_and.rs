//! Tier 2 of "regex on the GPU": the position automaton
//! (`query::glushkov`) and the bit-parallel `shift-and` kernel that runs
//! it. The automaton's CPU run is checked against the regex crate (the
//! CPU matcher) on random regexes over a small alphabet and random lines;
//! the kernel against the naive oracle through `Session::search`, forced
//! and automatic: the case table, random regexes and corpora, matches at
//! segment edges, CRLF, a last line without `\n`, non-ASCII lines.

mod common;

use common::{build, naive, variations, Flags, CASES};
use logsieve::gpu::GpuContext;
use logsieve::query::glushkov::{Automaton, Verdict};
use logsieve::{BackendChoice, Kernel, Query, SearchOptions, Session, Syntax};
use proptest::prelude::*;

/// Regex atoms over a small alphabet: classes, anchors, word boundaries,
/// groups and repetitions are combined by `regex_strategy`.
const ATOMS: &[&str] = &[
    "a",
    "b",
    "c",
    "ab",
    ".",
    "[ab]",
    "[^a]",
    "[a-c]",
    r"\d",
    r"\w",
    r"\s",
    r"\W",
    "1",
    " ",
    "A",
    "^",
    "$",
    r"\b",
    r"\B",
    r"(?-u:\b)",
    r"(?-u:.)",
    r"\x{e9}",
    "é",
    r"(?i)a",
    "(?i:ab)",
    r"\r",
    r"\<",
    r"\>",
];

fn regex_strategy() -> impl Strategy<Value = String> {
    let leaf = prop::sample::select(ATOMS).prop_map(str::to_string);
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..4).prop_map(|v| v.concat()),
            prop::collection::vec(inner.clone(), 2..4).prop_map(|v| format!("(?:{})", v.join("|"))),
            (inner.clone(), 0..7usize).prop_map(|(a, r)| {
                let rep = ["*", "+", "?", "{2}", "{1,3}", "{0,2}", "{2,}"][r];
                format!("(?:{a}){rep}")
            }),
        ]
    })
}

fn line_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop::sample::select(
            &[
                b'a', b'b', b'c', b'A', b'1', b' ', b'_', b'-', b'\r', 0xC3, 0xA9,
            ][..],
        ),
        0..24,
    )
}

fn check_line(q: &Query, a: &Automaton, line: &[u8], what: &str) -> Result<(), TestCaseError> {
    let want = q.is_match_line(line);
    check_verdict(a, a.run_line(line), want, line, what)?;
    // Tier 1's windows (several threads a line): the same verdicts, for
    // any number of parts.
    for parts in [2, 3, 5, 16] {
        let v = a.run_parts(line, parts);
        check_verdict(a, v, want, line, &format!("{what}, {parts} parts"))?;
    }
    Ok(())
}

fn check_verdict(
    a: &Automaton,
    v: Verdict,
    want: bool,
    line: &[u8],
    what: &str,
) -> Result<(), TestCaseError> {
    match v {
        Verdict::Undecided => {
            prop_assert!(a.unicode, "{what}: undecided without unicode");
            prop_assert!(
                line.iter().any(|&b| b >= 0x80),
                "{what}: undecided on ASCII"
            );
        }
        v => prop_assert_eq!(
            v == Verdict::Match,
            want,
            "{} on {:?}",
            what,
            String::from_utf8_lossy(line)
        ),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    /// The automaton's verdict is the regex crate's on every line it
    /// decides (and it decides every ASCII line).
    #[test]
    fn automaton_agrees_with_the_regex_crate(
        pat in regex_strategy(),
        lines in prop::collection::vec(line_strategy(), 1..12),
        i in any::<bool>(), w in any::<bool>(), x in any::<bool>(),
    ) {
        let f = Flags { i, w, x: x && !w, v: false };
        let Ok(q) = build(&[pat.clone().into_bytes()], Syntax::Regex, f) else { return Ok(()) };
        let a = match Automaton::for_query(&q) {
            Ok(a) => a,
            // A regex that is a plain literal has no regex matcher; only
            // size limits refuse otherwise.
            Err(e) => {
                prop_assert!(e.contains("not a regex") || e.contains("positions"), "{pat}: {e}");
                return Ok(());
            }
        };
        for l in &lines {
            check_line(&q, &a, l, &format!("{pat:?} {f:?}"))?;
        }
    }
}

#[test]
fn automaton_limits_are_errors() {
    let q = build(
        &[br"[0-9a-f]{300}".to_vec()],
        Syntax::Regex,
        Flags::default(),
    )
    .unwrap();
    let e = Automaton::for_query(&q).unwrap_err();
    assert!(e.contains("positions"), "{e}");
    let q = build(
        &[br"[0-9a-f]{32}".to_vec()],
        Syntax::Regex,
        Flags::default(),
    )
    .unwrap();
    let a = Automaton::for_query(&q).unwrap();
    assert_eq!((a.positions, a.words), (33, 2));
    assert!(!a.unicode);
    let q = build(&[br"\d+ms".to_vec()], Syntax::Regex, Flags::default()).unwrap();
    assert!(Automaton::for_query(&q).unwrap().unicode, "Unicode \\d");
}

#[test]
fn automaton_runs_the_case_table() {
    let mut ran = 0;
    for case in CASES {
        let f = case.flags();
        let pats = case.patterns();
        let Ok(q) = build(&pats, case.syntax, f) else {
            continue;
        };
        let Ok(a) = Automaton::for_query(&q) else {
            continue;
        };
        let oracle = naive(case.corpus, &pats, case.syntax, Flags { v: false, ..f });
        let lines = common::naive_lines(case.corpus);
        for (i, l) in lines.iter().enumerate() {
            let want = oracle.contains(&(i as u64));
            match a.run_line(l) {
                Verdict::Undecided => assert!(a.unicode, "{}", case.name),
                v => assert_eq!(v == Verdict::Match, want, "{} line {i}", case.name),
            }
        }
        ran += 1;
    }
    assert!(ran > 30, "{ran}");
}

fn ctx() -> Option<&'static GpuContext> {
    common::gpu::ctx("tier 2")
}

use common::gpu::session;

/// Runs `q` forced on `shift-and` (lines, counts, `-m 1`, `-m 2`) against
/// `oracle`; false when tier 2 refused it (then `shift_and_support` must
/// refuse it too).
fn check(s: &Session, q: &Query, oracle: &[u64], what: &str) -> bool {
    match common::gpu::check_forced(s, q, Some(Kernel::ShiftAnd), oracle, what) {
        Ok(rs) => {
            for r in rs {
                assert_eq!(r.backend.name, "gpu/shift-and", "{what}");
            }
            true
        }
        Err(e) => {
            assert!(
                logsieve::support::shift_and_support(q).is_err(),
                "{what}: {e}"
            );
            false
        }
    }
}

#[test]
fn every_regex_wildcard_w_x_case_through_shift_and() {
    let Some(c) = ctx() else { return };
    let mut ran = 0;
    for case in CASES {
        let f = case.flags();
        let pats = case.patterns();
        let Ok(q) = build(&pats, case.syntax, f) else {
            continue;
        };
        let oracle = naive(case.corpus, &pats, case.syntax, f);
        let s = session(c, case.corpus, 64);
        ran += check(&s, &q, &oracle, case.name) as usize;
    }
    eprintln!("tier 2: {ran} cases ran");
    assert!(ran > 30, "{ran}");
}

/// Every pipeline width (1, 2, 4, 8 state words) on both of the kernel's
/// paths — one or two words in registers (`run_small`), more in arrays
/// (`run_general`) — with the linear (extended shift-and) form and with the
/// follow tables, with and without look-around groups; forced on tier 2
/// and as tier 1's GPU verifier, against the oracle. One session for all,
/// twice over: the second pass runs every automaton from the corpus's
/// cache of resident automata (its tables, uniform and bind groups), each
/// query's on both tiers (the filter is part of the cached uniform).
#[test]
fn every_width_linear_and_tables_on_both_tiers() {
    let Some(c) = ctx() else { return };
    // Lines of hex runs of many lengths behind the prefixes the regexes
    // need, some with non-ASCII bytes and CRLF.
    let mut data = Vec::new();
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    for i in 0..400 {
        let pre = ["ERROR_5", "ERRX_5", "trace=", "x", "y", "q "][next(6) as usize];
        data.extend_from_slice(pre.as_bytes());
        let len = next(230) as usize;
        for _ in 0..len {
            let b = match pre {
                "y" => b"abc"[next(3) as usize],
                _ => b"0123456789abcdef"[next(16) as usize],
            };
            data.push(b);
        }
        if i % 37 == 0 {
            data.extend_from_slice("é".as_bytes());
        }
        data.extend_from_slice(if i % 11 == 0 { b" z\r\n" } else { b" z\n" });
    }
    let pats: &[(&str, usize, bool)] = &[
        (r"ERROR_5[0-9]{2}", 1, true),
        // Linear, no groups, Unicode-dependent (`\d`): `run_linear` with
        // the undecided lines (the `é` after the run) sent to the CPU.
        (r"ERROR_5\d\d", 1, true),
        (r"trace=[0-9a-f]{30}\d\d", 2, true),
        (r"ERR(OR|X)_5[0-9]", 1, false),
        (r"\bERROR_5\d\d", 1, true),
        (r"trace=[0-9a-f]{32}", 2, true),
        (r"trace=[0-9a-f]{20,32}", 2, false),
        (r"\b[0-9a-f]{40}", 2, true),
        (r"x[0-9a-f]{100}", 4, true),
        (r"x[0-9a-f]{80,100} z$", 4, false),
        (r"y[a-c]{200}", 8, true),
        (r"\by[a-c]{150,200}\b", 8, false),
    ];
    let s = session(c, &data, 4096);
    for &(p, words, linear) in pats.iter().chain(pats) {
        let q = build(&[p.as_bytes().to_vec()], Syntax::Regex, Flags::default()).unwrap();
        let a = logsieve::support::shift_and_support(&q).unwrap();
        let width = [1, 2, 4, 8].into_iter().find(|&w| w >= a.words).unwrap();
        assert_eq!((width, a.linear.is_some()), (words, linear), "{p}");
        let oracle = naive(
            &data,
            &[p.as_bytes().to_vec()],
            Syntax::Regex,
            Flags::default(),
        );
        assert!(!oracle.is_empty(), "{p}: the corpus holds matches");
        assert!(check(&s, &q, &oracle, p), "{p}");
        // Tier 1 where it applies (GPU verify when its literal is one).
        let r = s
            .search(
                &q,
                &SearchOptions {
                    backend: BackendChoice::Gpu,
                    ..Default::default()
                },
            )
            .unwrap();
        assert_eq!(r.docs[0].lines, oracle, "{p}: {}", r.backend);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Random regexes over random corpora (non-ASCII bytes, CRLF, no final
    /// newline) on small segments: the kernel agrees with the oracle.
    #[test]
    fn random_regexes_on_the_gpu(
        pat in regex_strategy(),
        corpus in prop::collection::vec(
            prop::sample::select(&[b'a', b'b', b'c', b'A', b'1', b' ', b'\n', b'\r', b'_', 0xC3, 0xA9][..]),
            0..300,
        ),
        i in any::<bool>(), v in any::<bool>(),
        seg in prop::sample::select(&[16u64, 40, 1 << 20][..]),
    ) {
        let Some(c) = ctx() else { return Ok(()) };
        let f = Flags { i, w: false, x: false, v };
        let Ok(q) = build(&[pat.clone().into_bytes()], Syntax::Regex, f) else { return Ok(()) };
        let oracle = naive(&corpus, &[pat.clone().into_bytes()], Syntax::Regex, f);
        let s = session(c, &corpus, seg);
        check(&s, &q, &oracle, &format!("{pat:?} seg {seg}"));
    }
}

#[test]
fn segment_edges_crlf_and_a_last_line_without_newline() {
    let Some(c) = ctx() else { return };
    let hay: &[u8] = b"GET /api/v1/x 200\r\nid=9f86d081884c7d659a2feaa0c55ad015\r\n\xc3\xa9t\xc3\xa9 timeout 12ms\n10.0.0.1 refused\nlatency_ms=12345";
    let queries: &[(&[u8], Syntax, &str)] = &[
        (br"\b(GET|POST) /api/v\d/", Syntax::Regex, ""),
        (br"[0-9a-f]{32}", Syntax::Regex, ""),
        (br"(?i)timeout|refused", Syntax::Regex, ""),
        (br"\d+\.\d+\.\d+\.\d+", Syntax::Regex, "v"),
        (br"latency_ms=\d{4,}$", Syntax::Regex, ""),
        (br"\d\r?$", Syntax::Regex, ""),
        (br"^\d", Syntax::Regex, ""),
        (b"GET*200", Syntax::Wildcard, ""),
        (b"t?t", Syntax::Wildcard, "i"),
        (b"ms", Syntax::Fixed, "w"),
        (br"10\.0\.0\.1 refused", Syntax::Regex, "x"),
    ];
    let mut ran = 0;
    for v in variations(hay, 9) {
        for &(p, syntax, flags) in queries {
            let f = Flags::parse(flags);
            let q = build(&[p.to_vec()], syntax, f).unwrap();
            let oracle = naive(&v, &[p.to_vec()], syntax, f);
            for seg in [16, 40] {
                let s = session(c, &v, seg);
                let what = format!("{:?} seg {seg} on {:?}", String::from_utf8_lossy(p), v);
                ran += check(&s, &q, &oracle, &what) as usize;
            }
        }
    }
    assert!(ran > 100, "{ran}");
}

#[test]
fn the_route_picks_each_tier() {
    let Some(c) = ctx() else { return };
    use logsieve::session::Backend;
    let s = session(c, b"ERROR_503 x\n2026-11-24 ok\nERROR_5x\n", 1 << 20);
    let opts = SearchOptions {
        backend: BackendChoice::Gpu,
        explain: true,
        ..Default::default()
    };
    let route = |p: &[u8], syntax: Syntax, flags: &str| {
        let q = build(&[p.to_vec()], syntax, Flags::parse(flags)).unwrap();
        s.route(&logsieve::Request::Search(&q), &opts).unwrap()
    };
    // Tier 0: a literal; tier 1: a regex with a required literal; tier 2:
    // a regex without one.
    assert_eq!(
        route(b"ERROR", Syntax::Fixed, "").backend,
        Backend::Gpu(Kernel::Scan)
    );
    assert_eq!(
        route(br"ERROR_5\d\d", Syntax::Regex, "").backend,
        Backend::GpuPrefilter(Kernel::Scan)
    );
    // (`\d{4}-\d\d` is a class string: tier 1's, one scan pass on its `-`.)
    let r = route(br"\d{4}-\d\d", Syntax::Regex, "");
    assert_eq!(r.backend, Backend::GpuPrefilter(Kernel::Scan));
    assert!(r.reason.contains("class string"), "{}", r.reason);
    let r = route(br"\d{2,4}[a-f]+\d", Syntax::Regex, "");
    assert_eq!(r.backend, Backend::Gpu(Kernel::ShiftAnd));
    assert!(r.reason.contains("tier 2"), "{}", r.reason);
    // -w / -x / wildcards without a required literal take tier 2 too,
    // unless they are class strings (`-w ok`: `ok` between non-word bytes
    // or a line's edges, four strings in two passes; `-x o?`: `^o.$`).
    assert_eq!(
        route(br"o\d*\d", Syntax::Regex, "w").backend,
        Backend::Gpu(Kernel::ShiftAnd)
    );
    assert_eq!(
        route(b"o*?", Syntax::Wildcard, "x").backend,
        Backend::Gpu(Kernel::ShiftAnd)
    );
    for (p, syntax, flags) in [
        (&b"ok"[..], Syntax::Fixed, "w"),
        (b"o?", Syntax::Wildcard, "x"),
    ] {
        let r = route(p, syntax, flags);
        assert_eq!(r.backend, Backend::GpuPrefilter(Kernel::Scan));
        assert!(r.reason.contains("class string"), "{}", r.reason);
    }
    // Asked by name, tier 2 runs a regex with a literal as well.
    let q = build(&[br"ERROR_5\d\d".to_vec()], Syntax::Regex, Flags::default()).unwrap();
    let named = SearchOptions {
        gpu_kernel: Some(Kernel::ShiftAnd),
        ..opts.clone()
    };
    let r = s.search(&q, &named).unwrap();
    assert_eq!((r.total(), r.backend.name.as_str()), (1, "gpu/shift-and"));
    // Too large an automaton: the forced route says why.
    let big = build(&[br"\d{300}".to_vec()], Syntax::Regex, Flags::default()).unwrap();
    let e = s.search(&big, &named).unwrap_err().to_string();
    assert!(e.contains("positions"), "{e}");
    // Fuzzy stays on the CPU.
    let fz = build(&[b"ERROR".to_vec()], Syntax::Fuzzy(1), Flags::default()).unwrap();
    assert!(s.search(&fz, &named).is_err());
}
