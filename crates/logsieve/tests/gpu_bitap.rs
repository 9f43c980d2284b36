//! `--fuzzy K` on the GPU: the packed bitap chain (`query::bitap`) and the
//! `bitap` kernel that runs it. The chain's host run is checked against
//! the naive oracle's edit distance on random patterns (lengths 1, 31, 32,
//! 33, 64 and over) x K 0..=3 x random lines over a small alphabet; the
//! kernel against the oracle through `Session::search`, forced by name and
//! by `--backend gpu` alone: the case table, random patterns and corpora
//! on small segments, and boundary sweeps (segment edges, CRLF, a last
//! line without `\n`, empty lines, lines shorter than the pattern).

mod common;

use common::{build, naive, naive_min_distance, variations, Flags, CASES};
use logsieve::gpu::GpuContext;
use logsieve::query::bitap::Bitap;
use logsieve::{BackendChoice, Kernel, Query, SearchOptions, Session, Syntax};
use proptest::prelude::*;

const ALPHABET: &[u8] = b"abcA \r";

fn bytes_of(len: impl Into<prop::collection::SizeRange>) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(ALPHABET), len)
}

/// Pattern lengths at the chain's word edges, and short ones.
fn pattern_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop::sample::select(&[1usize, 2, 3, 5, 8, 31, 32, 33, 64, 65, 70][..]).prop_flat_map(bytes_of)
}

/// Lines over the same alphabet, sometimes holding a mutated copy of
/// `pat` so that matches within K edits are common.
fn lines_for(pat: Vec<u8>) -> impl Strategy<Value = Vec<Vec<u8>>> {
    let n = pat.len();
    let mutated = (
        bytes_of(0..6),
        prop::collection::vec((0..n.max(1), 0..3u8, prop::sample::select(ALPHABET)), 0..5),
        bytes_of(0..6),
    )
        .prop_map(move |(pre, edits, post)| {
            let mut p = pat.clone();
            for (at, op, b) in edits {
                let at = at.min(p.len());
                match op {
                    0 if at < p.len() => p[at] = b,
                    1 if at < p.len() => {
                        p.remove(at);
                    }
                    _ => p.insert(at, b),
                }
            }
            [pre, p, post].concat()
        });
    prop::collection::vec(prop_oneof![bytes_of(0..40), mutated], 1..10)
}

fn fuzzy(pats: &[Vec<u8>], k: u8, i: bool) -> Query {
    build(
        pats,
        Syntax::Fuzzy(k),
        Flags {
            i,
            ..Flags::default()
        },
    )
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, ..ProptestConfig::default() })]

    /// The chain's host run decides every line as the naive oracle's edit
    /// distance does (and as the CPU matcher).
    #[test]
    fn bitap_agrees_with_the_oracle(
        (pat, lines) in pattern_strategy().prop_flat_map(|p| (Just(p.clone()), lines_for(p))),
        other in prop::option::of(pattern_strategy()),
        k in 0..=3u8, i in any::<bool>(),
    ) {
        let mut pats = vec![pat];
        pats.extend(other);
        let q = fuzzy(&pats, k, i);
        let b = Bitap::for_query(&q).unwrap();
        for l in &lines {
            let want = pats.iter().any(|p| naive_min_distance(p, l, i) <= k as usize);
            prop_assert_eq!(b.run_line(l), want, "{:?} k {} i {} on {:?}", pats, k, i, l);
            prop_assert_eq!(q.is_match_line(l), want);
        }
    }
}

#[test]
fn bitap_runs_the_case_table() {
    let mut ran = 0;
    for case in CASES {
        let f = case.flags();
        let pats = case.patterns();
        let Ok(q) = build(&pats, case.syntax, f) else {
            continue;
        };
        let Ok(b) = logsieve::support::bitap_support(&q) else {
            continue;
        };
        let oracle = naive(case.corpus, &pats, case.syntax, Flags { v: false, ..f });
        for (i, l) in common::naive_lines(case.corpus).iter().enumerate() {
            assert_eq!(
                b.run_line(l),
                oracle.contains(&(i as u64)),
                "{} line {i}",
                case.name
            );
        }
        ran += 1;
    }
    assert!(ran >= 10, "{ran}");
}

fn ctx() -> Option<&'static GpuContext> {
    common::gpu::ctx("bitap")
}

use common::gpu::session;

/// Runs `q` forced on `bitap` (by name, and by `--backend gpu` alone;
/// lines, counts, `-m 1`, `-m 2`) against `oracle`; false when bitap
/// refused it by name (then `bitap_support` must refuse it too). A refusal
/// must be the one support check's.
fn check(s: &Session, q: &Query, oracle: &[u64], what: &str) -> bool {
    let mut ran = false;
    for kernel in [Some(Kernel::Bitap), None] {
        let w = format!("{what} {kernel:?}");
        match common::gpu::check_forced(s, q, kernel, oracle, what) {
            Ok(rs) => {
                // K = 0 is a literal: `--backend gpu` alone runs scan.
                if kernel.is_some() || q.kind() == logsieve::QueryKind::Fuzzy {
                    for r in rs {
                        assert_eq!(r.backend.name, "gpu/bitap", "{w}");
                    }
                }
                ran |= kernel.is_some();
            }
            Err(e) => {
                let why = logsieve::support::kernel_support(q, kernel).expect_err(&w);
                assert!(e.to_string().contains(why.reason()), "{w}: {e}");
            }
        }
    }
    ran
}

#[test]
fn every_fuzzy_case_through_bitap() {
    let Some(c) = ctx() else { return };
    let mut ran = 0;
    // Other cases' refusals by name are checked in tests/session_routes.rs.
    for case in CASES
        .iter()
        .filter(|c| matches!(c.syntax, Syntax::Fuzzy(_)))
    {
        let f = case.flags();
        let pats = case.patterns();
        let Ok(q) = build(&pats, case.syntax, f) else {
            continue;
        };
        let oracle = naive(case.corpus, &pats, case.syntax, f);
        for seg in [16, 64] {
            let s = session(c, case.corpus, seg);
            ran += check(&s, &q, &oracle, case.name) as usize;
        }
    }
    eprintln!("bitap: {ran} case runs");
    assert!(ran >= 2 * 12, "{ran}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Random patterns over random corpora (CRLF, empty lines, no final
    /// newline) on small segments: the kernel agrees with the oracle.
    #[test]
    fn random_fuzzy_queries_on_the_gpu(
        pat in pattern_strategy(),
        corpus in prop::collection::vec(prop::sample::select(&b"abcA \r\n\n"[..]), 0..400),
        k in 0..=3u8, i in any::<bool>(), v in any::<bool>(),
        seg in prop::sample::select(&[16u64, 40, 1 << 20][..]),
    ) {
        let Some(c) = ctx() else { return Ok(()) };
        let f = Flags { i, v, ..Flags::default() };
        let pats = vec![pat];
        let q = build(&pats, Syntax::Fuzzy(k), f).unwrap();
        let oracle = naive(&corpus, &pats, Syntax::Fuzzy(k), f);
        let s = session(c, &corpus, seg);
        let what = format!("{:?} k {k} seg {seg}", pats[0]);
        prop_assert!(check(&s, &q, &oracle, &what));
    }
}

#[test]
fn segment_edges_crlf_empty_and_short_lines() {
    let Some(c) = ctx() else { return };
    let hay: &[u8] = b"java.lang.NullPointerExceptoin at x\r\n\nconnection refsued by 10.0.0.1\nab\r\nfrEE m0ney\nNullPointerException";
    let queries: &[(&[u8], u8, &str)] = &[
        (b"NullPointerException", 1, ""),
        (b"connection refused", 2, ""),
        (b"free money", 1, "i"),
        (b"xyz", 3, "v"),
    ];
    let mut ran = 0;
    for v in variations(hay, 3) {
        for &(p, k, flags) in queries {
            let f = Flags::parse(flags);
            let pats = vec![p.to_vec()];
            let q = build(&pats, Syntax::Fuzzy(k), f).unwrap();
            let oracle = naive(&v, &pats, Syntax::Fuzzy(k), f);
            for seg in [16, 40] {
                let s = session(c, &v, seg);
                let what = format!(
                    "{:?} k {k} seg {seg} on {:?}",
                    String::from_utf8_lossy(p),
                    v
                );
                ran += check(&s, &q, &oracle, &what) as usize;
            }
        }
    }
    assert!(ran > 50, "{ran}");
}

#[test]
fn the_route_names_bitap_and_long_patterns_stay_on_the_cpu() {
    let Some(c) = ctx() else { return };
    let s = session(c, b"NullPointerExceptoin\nok\n", 1 << 20);
    let opts = SearchOptions {
        backend: BackendChoice::Gpu,
        explain: true,
        ..Default::default()
    };
    // A transposition is two edits.
    let q = fuzzy(&[b"NullPointerException".to_vec()], 2, false);
    let one = fuzzy(&[b"NullPointerException".to_vec()], 1, false);
    assert_eq!(s.search(&one, &opts).unwrap().total(), 0);
    let r = s.route(&logsieve::Request::Search(&q), &opts).unwrap();
    assert_eq!(r.backend, logsieve::session::Backend::Gpu(Kernel::Bitap));
    assert!(r.reason.contains("bitap"), "{}", r.reason);
    assert_eq!(s.search(&q, &opts).unwrap().total(), 1);
    // Auto on a software adapter: the CPU answers, the same lines.
    let auto = SearchOptions {
        backend: BackendChoice::Auto,
        ..Default::default()
    };
    assert_eq!(s.search(&q, &auto).unwrap().total(), 1);
    // Over the chain (256 bytes): the forced route says why.
    let long = fuzzy(&[vec![b'a'; 300]], 2, false);
    let e = s.search(&long, &opts).unwrap_err().to_string();
    assert!(e.contains("256"), "{e}");
}
