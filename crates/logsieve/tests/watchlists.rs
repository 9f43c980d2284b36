//! Watchlists: a literal set compiled once in the session and
//! counted per pattern again and again. Every backend and kernel that takes
//! one (the CPU's one-pass counter; on the GPU `bloom`, `ac`, `trie`,
//! `prefix-hash`, and bloom's global filter for sets past 32k keys) against
//! the oracle of each pattern searched alone, on the table of cases,
//! random data and boundary cases; and what a watchlist refuses.
//!
//! GPU tests run on whatever adapter exists (lavapipe in CI); without one
//! they say so loudly and return, unless `LOGSIEVE_REQUIRE_GPU=1`.

mod common;

use common::{naive_find_iter, naive_lines, CASES, PATTERN_PIECES, PIECES};
use logsieve::{
    BackendChoice, Corpus, QueryBuilder, SearchOptions, Session, Syntax, Watchlist,
    WatchlistOptions,
};
use proptest::prelude::*;

/// The oracle: each pattern searched alone, by the naive matcher.
fn oracle(corpus: &[u8], pats: &[Vec<u8>], fold: bool) -> (Vec<u64>, Vec<u64>) {
    let lines = naive_lines(corpus);
    let mut l = vec![0u64; pats.len()];
    let mut o = vec![0u64; pats.len()];
    for (i, p) in pats.iter().enumerate() {
        let one = std::slice::from_ref(p);
        for line in &lines {
            let ms = naive_find_iter(one, line, fold, false);
            l[i] += u64::from(!ms.is_empty());
            o[i] += ms.len() as u64;
        }
    }
    (l, o)
}

fn wl_opts(fold: bool) -> WatchlistOptions {
    WatchlistOptions {
        ignore_case: fold,
        ..Default::default()
    }
}

fn cpu() -> SearchOptions {
    SearchOptions {
        backend: BackendChoice::Cpu,
        threads: 2,
        ..Default::default()
    }
}

/// Defines `pats` as a watchlist in `session`, counts it with `opts`, and
/// checks every pattern against the oracle (and against the same patterns
/// counted as an ad-hoc query).
fn check(session: &Session, pats: &[Vec<u8>], fold: bool, opts: &SearchOptions, what: &str) {
    let corpus: Vec<u8> = session
        .corpus()
        .docs()
        .iter()
        .flat_map(|d| d.data().iter().copied())
        .collect();
    let (w, _) = session
        .define_watchlist("w", pats, wl_opts(fold))
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let (l, o) = oracle(&corpus, pats, fold);
    // Twice: the second count runs on what the first kept.
    for round in 0..2 {
        let c = session
            .count_watchlist(&w, opts)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(&c.patterns[..], pats, "{what}");
        for i in 0..pats.len() {
            assert_eq!(
                (c.lines[i], c.occurrences[i]),
                (l[i], o[i]),
                "{what} round {round} ({}): pattern {i} {:?}",
                c.backend.name,
                String::from_utf8_lossy(&pats[i])
            );
        }
    }
    let q = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .case_insensitive(fold)
        .build(pats)
        .unwrap();
    let adhoc = session.count_per_pattern(&q, opts).unwrap();
    assert_eq!((adhoc.lines, adhoc.occurrences), (l, o), "{what}: ad hoc");
}

/// The table's literal cases a watchlist can hold (no `-w`/`-x`/`-v`, no
/// empty pattern, ASCII folding only), on the CPU.
#[test]
fn table_of_cases_cpu() {
    let mut ran = 0;
    for case in CASES {
        let f = case.flags();
        let pats = case.patterns();
        if case.syntax != Syntax::Fixed
            || f.w
            || f.x
            || f.v
            || pats
                .iter()
                .any(|p| p.is_empty() || p.contains(&b'\n') || p.contains(&b'\r'))
            || (f.i && pats.iter().any(|p| !p.is_ascii()))
        {
            continue;
        }
        let session = Session::new(Corpus::from_bytes("t", case.corpus.to_vec()));
        check(&session, &pats, f.i, &cpu(), case.name);
        ran += 1;
    }
    assert!(ran >= 10, "only {ran} cases ran");
}

#[test]
fn boundary_cases_cpu() {
    let corpus = b"abcd abcdef ABCD\nxabcdefx\n\nabcdabcd\nzzzz\nab".to_vec();
    let session = Session::new(Corpus::from_bytes("t", corpus));
    let sets: Vec<Vec<&[u8]>> = vec![
        // Duplicates, and case variants of one another.
        vec![b"abcd", b"abcd", b"ABCD", b"zzzz", b"abcd"],
        // A pattern that is a prefix of another, and a suffix.
        vec![b"abcd", b"abcdef", b"bcdef", b"ab"],
        // Self-overlapping.
        vec![b"zz", b"zzz", b"abcdabcd"],
        // None occurs.
        vec![b"qqqq", b"rrrr"],
    ];
    for (k, s) in sets.iter().enumerate() {
        let pats: Vec<Vec<u8>> = s.iter().map(|p| p.to_vec()).collect();
        for fold in [false, true] {
            check(
                &session,
                &pats,
                fold,
                &cpu(),
                &format!("set {k} fold {fold}"),
            );
        }
    }
}

#[test]
fn refused_lists_and_the_registry() {
    let session = Session::new(Corpus::from_bytes("t", b"abcd\n".to_vec()));
    let none: Vec<Vec<u8>> = Vec::new();
    let e = session
        .define_watchlist("w", &none, wl_opts(false))
        .unwrap_err();
    assert!(e.to_string().contains("at least one"), "{e}");
    let too_many: Vec<String> = (0..=logsieve::watchlist::MAX_PATTERNS)
        .map(|i| format!("p{i:06}"))
        .collect();
    let e = session
        .define_watchlist("w", &too_many, wl_opts(false))
        .unwrap_err();
    assert!(e.to_string().contains("at most 100000"), "{e}");
    assert!(session
        .define_watchlist("w", &["ok", ""], wl_opts(false))
        .is_err());
    assert!(session
        .define_watchlist("a/b", &["abcd"], wl_opts(false))
        .is_err());
    assert!(session
        .define_watchlist("w", &["é"], wl_opts(true))
        .unwrap_err()
        .to_string()
        .contains("non-ASCII"));
    assert!(session.watchlists().is_empty(), "nothing refused is kept");
    let (_, replaced) = session
        .define_watchlist("b", &["abcd"], wl_opts(false))
        .unwrap();
    assert!(!replaced);
    let (w, replaced) = session
        .define_watchlist("b", &["bcd", "x"], wl_opts(false))
        .unwrap();
    assert!(replaced);
    session
        .define_watchlist("a", &["a"], wl_opts(true))
        .unwrap();
    let names: Vec<String> = session
        .watchlists()
        .iter()
        .map(|w| w.name().to_string())
        .collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(session.watchlist("b").unwrap().patterns().len(), 2);
    let c = session.count_watchlist(&w, &cpu()).unwrap();
    assert_eq!((c.lines, c.occurrences), (vec![1, 0], vec![1, 0]));
    assert!(session.remove_watchlist("b"));
    assert!(!session.remove_watchlist("b"));
    assert!(session.watchlist("b").is_none());
    // The maximum is accepted.
    let max: Vec<String> = (0..logsieve::watchlist::MAX_PATTERNS)
        .map(|i| format!("p{i:06}"))
        .collect();
    let w = Watchlist::new("max", &max, wl_opts(false)).unwrap();
    assert_eq!(w.distinct(), logsieve::watchlist::MAX_PATTERNS);
}

fn corpus_strategy() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(0..PIECES.len(), 0..120)
        .prop_map(|idx| common::assemble(PIECES, &idx))
}

fn patterns_strategy() -> impl Strategy<Value = Vec<Vec<u8>>> {
    proptest::collection::vec(
        proptest::collection::vec(0..PATTERN_PIECES.len(), 1..4),
        1..12,
    )
    .prop_map(|ps| {
        ps.iter()
            .map(|idx| common::assemble(PATTERN_PIECES, idx))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn random_cpu(corpus in corpus_strategy(), pats in patterns_strategy(), fold in any::<bool>()) {
        prop_assume!(!fold || pats.iter().all(|p| p.is_ascii()));
        let session = Session::new(Corpus::from_bytes("t", corpus));
        check(&session, &pats, fold, &cpu(), "random");
    }
}

// ---------------------------------------------------------------------------
// GPU
// ---------------------------------------------------------------------------

#[cfg(feature = "gpu")]
mod gpu {
    use super::*;
    use logsieve::gpu::{GpuContext, GpuKernel, MultiKernel, UploadOptions};
    use std::sync::OnceLock;

    fn ctx() -> Option<&'static GpuContext> {
        static CTX: OnceLock<Option<GpuContext>> = OnceLock::new();
        CTX.get_or_init(|| logsieve::gpu::or_skip("watchlist GPU tests", GpuContext::new()))
            .as_ref()
    }

    fn session(ctx: &GpuContext, corpus: Vec<u8>, max_segment: Option<u64>) -> Session {
        let mut s = Session::new(Corpus::from_bytes("t", corpus));
        s.attach_gpu_with(
            ctx,
            UploadOptions {
                max_segment,
                ..Default::default()
            },
        )
        .unwrap();
        s
    }

    fn gpu(k: MultiKernel) -> SearchOptions {
        SearchOptions {
            backend: BackendChoice::Gpu,
            gpu_kernel: Some(GpuKernel::from(k)),
            ..Default::default()
        }
    }

    #[test]
    fn table_and_boundary_cases_every_kernel() {
        let Some(ctx) = ctx() else { return };
        let corpus = b"abcd abcdef ABCD\nxabcdefx\n\nabcdabcd\nzzzz\r\nab".to_vec();
        let sets: Vec<Vec<&[u8]>> = vec![
            vec![b"abcd", b"abcd", b"ABCD", b"zzzz", b"abcd"],
            vec![b"abcd", b"abcdef", b"bcdef", b"abcdefx"],
            vec![b"zz", b"zzz", b"abcdabcd", b"ab"],
        ];
        for seg in [None, Some(16)] {
            let s = session(ctx, corpus.clone(), seg);
            for (n, set) in sets.iter().enumerate() {
                let pats: Vec<Vec<u8>> = set.iter().map(|p| p.to_vec()).collect();
                for fold in [false, true] {
                    for k in MultiKernel::ALL {
                        let what = format!("set {n} fold {fold} seg {seg:?} {k:?}");
                        check(&s, &pats, fold, &gpu(k), &what);
                    }
                }
            }
        }
        let mut ran = 0;
        for case in CASES {
            let f = case.flags();
            let pats = case.patterns();
            if case.syntax != Syntax::Fixed
                || f.w
                || f.x
                || f.v
                || pats
                    .iter()
                    .any(|p| p.is_empty() || p.contains(&b'\n') || p.contains(&b'\r'))
                || (f.i && pats.iter().any(|p| !p.is_ascii()))
            {
                continue;
            }
            let s = session(ctx, case.corpus.to_vec(), None);
            check(&s, &pats, f.i, &gpu(MultiKernel::Bloom), case.name);
            check(&s, &pats, f.i, &gpu(MultiKernel::Ac), case.name);
            ran += 1;
        }
        assert!(ran >= 10);
    }

    /// The tables are uploaded once per kernel and kept: counting again
    /// does not add any, and the answer stays the same.
    #[test]
    fn tables_are_uploaded_once_and_kept() {
        let Some(ctx) = ctx() else { return };
        let s = session(ctx, b"evil.example.com 10.1.2.3\nok\n".to_vec(), None);
        let pats: Vec<Vec<u8>> = vec![b"evil.example".to_vec(), b"10.1.2.3".to_vec()];
        let (w, _) = s.define_watchlist("iocs", &pats, wl_opts(false)).unwrap();
        for _ in 0..3 {
            let c = s.count_watchlist(&w, &gpu(MultiKernel::Bloom)).unwrap();
            assert_eq!(c.lines, vec![1, 1]);
            assert_eq!(c.backend.name, "gpu/bloom (watchlist)");
        }
        assert_eq!(w.gpu_tables_uploaded(), 1);
        s.count_watchlist(&w, &gpu(MultiKernel::Trie)).unwrap();
        s.count_watchlist(&w, &gpu(MultiKernel::Trie)).unwrap();
        assert_eq!(w.gpu_tables_uploaded(), 2);
    }

    /// 40k patterns against the oracle, every one of them: bloom's
    /// saturated workgroup filter (the default past 32k keys) and, with
    /// `LOGSIEVE_BLOOM_DIAG=8`'s tuning, its global filter of 32 bits a key.
    #[test]
    fn forty_thousand_patterns_both_filters() {
        let Some(ctx) = ctx() else { return };
        let global = GpuContext::new_with(&logsieve::gpu::GpuTuning {
            bloom_diag: 8,
            ..Default::default()
        })
        .expect("a second context");
        let pats: Vec<Vec<u8>> = (0..40_000u32)
            .map(|i| format!("{:08x}-ioc{i}", i.wrapping_mul(2_654_435_761)).into_bytes())
            .collect();
        let mut corpus = Vec::new();
        for i in 0..300usize {
            corpus.extend_from_slice(format!("line {i} ").as_bytes());
            if i % 3 == 0 {
                corpus.extend_from_slice(&pats[i * 97]);
            }
            if i % 5 == 0 {
                // Its prefix only (the key, not the pattern).
                corpus.extend_from_slice(&pats[i * 31][..10]);
            }
            corpus.extend_from_slice(b" tail\n");
        }
        for (c, what) in [(ctx, "workgroup filter"), (&global, "global filter")] {
            let s = session(c, corpus.clone(), None);
            check(&s, &pats, false, &gpu(MultiKernel::Bloom), what);
            check(&s, &pats, true, &gpu(MultiKernel::Bloom), what);
        }
    }

    /// A context whose bloom filter is split into `parts` parts
    /// (`GpuTuning::bloom_parts`), with `groups` workgroups per part (few:
    /// the grid-stride loop walks many strides), one per value and test
    /// binary.
    fn parts_ctx(parts: u32, groups: Option<u32>) -> Option<&'static GpuContext> {
        use std::sync::Mutex;
        static CTXS: Mutex<Vec<(u32, Option<u32>, &'static GpuContext)>> = Mutex::new(Vec::new());
        ctx()?;
        let mut v = CTXS.lock().unwrap();
        if let Some(&(.., c)) = v.iter().find(|(p, g, _)| (*p, *g) == (parts, groups)) {
            return Some(c);
        }
        let c = GpuContext::new_with(&logsieve::gpu::GpuTuning {
            bloom_parts: Some(parts),
            bloom_groups: groups,
            ..Default::default()
        })
        .expect("a context with bloom parts");
        let c: &'static GpuContext = Box::leak(Box::new(c));
        v.push((parts, groups, c));
        Some(c)
    }

    /// `check`, and the lines that hold any pattern (a search of the same
    /// patterns on bloom) against the CPU's.
    fn check_with_lines(s: &Session, pats: &[Vec<u8>], fold: bool, what: &str) {
        check(s, pats, fold, &gpu(MultiKernel::Bloom), what);
        let q = QueryBuilder::new()
            .syntax(Syntax::Fixed)
            .case_insensitive(fold)
            .build(pats)
            .unwrap();
        let g = s.search(&q, &gpu(MultiKernel::Bloom)).unwrap();
        assert_eq!(g.backend.name, "gpu/bloom", "{what}");
        let c = s.search(&q, &cpu()).unwrap();
        assert_eq!(g.docs[0].lines, c.docs[0].lines, "{what}: lines");
    }

    /// bloom's filter split into 2, 3 and 7 parts (and 1, the default):
    /// every count equals the oracle's on the small sets, the table of
    /// cases, segment edges (16-byte segments), -i, keys of 4 to 7 bytes,
    /// and a walk of many grid strides.
    #[test]
    fn filter_parts_small_cases() {
        let corpus =
            b"abcd abcdef ABCD\nxabcdefx\n\nabcdabcd\nzzzz\r\nab 1.2.3.4 10.1.2.3x\n".to_vec();
        let sets: Vec<Vec<&[u8]>> = vec![
            vec![b"abcd", b"abcd", b"ABCD", b"zzzz", b"abcd"],
            vec![b"abcd", b"abcdef", b"bcdef", b"abcdefx"],
            vec![b"1.2.3.4", b"10.1.2.3", b"0.1.2.3x", b"abcdabcd"],
            vec![b"abcde", b"bcdab", b"cdabcd", b"dabcdabc"],
        ];
        for (parts, groups) in [(1, None), (2, None), (3, Some(1)), (7, None), (7, Some(2))] {
            let Some(ctx) = parts_ctx(parts, groups) else {
                return;
            };
            for seg in [None, Some(16)] {
                let s = session(ctx, corpus.clone(), seg);
                for (n, set) in sets.iter().enumerate() {
                    let pats: Vec<Vec<u8>> = set.iter().map(|p| p.to_vec()).collect();
                    for fold in [false, true] {
                        let what = format!(
                            "parts {parts} groups {groups:?} set {n} fold {fold} seg {seg:?}"
                        );
                        check_with_lines(&s, &pats, fold, &what);
                    }
                }
            }
            let mut ran = 0;
            for case in CASES {
                let f = case.flags();
                let pats = case.patterns();
                if case.syntax != Syntax::Fixed
                    || f.w
                    || f.x
                    || f.v
                    || pats
                        .iter()
                        .any(|p| p.len() < 4 || p.contains(&b'\n') || p.contains(&b'\r'))
                    || (f.i && pats.iter().any(|p| !p.is_ascii()))
                {
                    continue;
                }
                for seg in [None, Some(16)] {
                    let s = session(ctx, case.corpus.to_vec(), seg);
                    check_with_lines(&s, &pats, f.i, &format!("parts {parts}: {}", case.name));
                }
                ran += 1;
            }
            assert!(ran >= 5, "{ran} cases ran");
        }
    }

    /// Thousands of keys that collide (IPs sharing their first bytes,
    /// patterns sharing their 8-byte key and differing after it, keys
    /// that are prefixes of each other) over lines holding them, their
    /// keys alone and near misses, cut into segments at odd sizes: split
    /// into 2, 3 and 7 parts, every pattern's count equals the oracle's.
    #[test]
    fn filter_parts_colliding_keys() {
        let mut pats: Vec<Vec<u8>> = Vec::new();
        for i in 0..1500u32 {
            pats.push(format!("192.168.{}.{}", i % 7, i / 7).into_bytes());
            pats.push(format!("deadbeef{:04x}", i.wrapping_mul(40503) & 0xffff).into_bytes());
            if i % 3 == 0 {
                pats.push(format!("evil{:03}.example", i % 1000).into_bytes());
                pats.push(format!("Evil{:03}", i % 1000).into_bytes());
            }
        }
        let mut corpus = Vec::new();
        for i in 0..900usize {
            corpus.extend_from_slice(format!("l{i} src=").as_bytes());
            corpus.extend_from_slice(&pats[(i * 37) % pats.len()]);
            corpus.extend_from_slice(b" key=");
            // The key (first 8 bytes) without the rest, or a near miss.
            let p = &pats[(i * 53) % pats.len()];
            corpus.extend_from_slice(&p[..p.len().min(8)]);
            corpus.extend_from_slice(if i % 2 == 0 { b"Z" } else { b"" });
            corpus.extend_from_slice(format!(" 192.168.{}.{}9", i % 9, i % 300).as_bytes());
            corpus.extend_from_slice(b"\n");
        }
        for parts in [2, 3, 7] {
            let Some(ctx) = parts_ctx(parts, None) else {
                return;
            };
            for seg in [None, Some(4099)] {
                let s = session(ctx, corpus.clone(), seg);
                for fold in [false, true] {
                    let what = format!("parts {parts} seg {seg:?} fold {fold}");
                    check_with_lines(&s, &pats, fold, &what);
                }
            }
        }
    }

    /// 100,000 patterns (a watchlist's limit) in 2 and 3 parts: each
    /// part's filter is dense (~45% and ~33% of its bits set), so a
    /// position tested outside its own part would often pass there by
    /// chance and count twice. Every count equals the CPU counter's (the
    /// oracle above checks it), and the lines the CPU's.
    #[test]
    fn filter_parts_hundred_thousand_patterns() {
        let pats: Vec<Vec<u8>> = (0..100_000u32)
            .map(|i| format!("{:08x}-ioc{i}", i.wrapping_mul(2_654_435_761)).into_bytes())
            .collect();
        let mut corpus = Vec::new();
        for i in 0..2000usize {
            corpus.extend_from_slice(format!("line {i} ").as_bytes());
            corpus.extend_from_slice(&pats[(i * 47) % pats.len()]);
            corpus.extend_from_slice(b" key=");
            corpus.extend_from_slice(&pats[(i * 89) % pats.len()][..9]);
            corpus.extend_from_slice(b"x tail\n");
        }
        for parts in [2, 3] {
            let Some(ctx) = parts_ctx(parts, None) else {
                return;
            };
            let s = session(ctx, corpus.clone(), None);
            let (w, _) = s.define_watchlist("w", &pats, wl_opts(false)).unwrap();
            let g = s.count_watchlist(&w, &gpu(MultiKernel::Bloom)).unwrap();
            assert_eq!(g.backend.name, "gpu/bloom (watchlist)");
            let c = s.count_watchlist(&w, &cpu()).unwrap();
            assert!(c.lines.iter().filter(|&&l| l > 0).count() >= 1900);
            for (i, p) in pats.iter().enumerate() {
                assert_eq!(
                    (g.lines[i], g.occurrences[i]),
                    (c.lines[i], c.occurrences[i]),
                    "{parts} parts: pattern {i} {:?}",
                    String::from_utf8_lossy(p)
                );
            }
            let gl = s.search(w.query(), &gpu(MultiKernel::Bloom)).unwrap();
            let cl = s.search(w.query(), &cpu()).unwrap();
            assert_eq!(gl.docs[0].lines, cl.docs[0].lines, "{parts} parts: lines");
        }
    }

    /// A context whose per-pattern counts read back `cap` listed patterns
    /// (`GpuTuning::pattern_list`; 0: every counter), one per value and
    /// test binary.
    fn list_ctx(cap: usize) -> Option<&'static GpuContext> {
        use std::sync::Mutex;
        static CTXS: Mutex<Vec<(usize, &'static GpuContext)>> = Mutex::new(Vec::new());
        ctx()?;
        let mut v = CTXS.lock().unwrap();
        if let Some(&(_, c)) = v.iter().find(|(k, _)| *k == cap) {
            return Some(c);
        }
        let c = GpuContext::new_with(&logsieve::gpu::GpuTuning {
            pattern_list: Some(cap),
            ..Default::default()
        })
        .expect("a context with a fixed pattern list");
        let c: &'static GpuContext = Box::leak(Box::new(c));
        v.push((cap, c));
        Some(c)
    }

    /// How the counters came back, from the report's reason.
    fn how(reason: &str) -> &'static str {
        if reason.contains("listed on the GPU") {
            "listed"
        } else if reason.contains("more than the list read back held") {
            "overflow"
        } else if reason.contains("list off") {
            "off"
        } else {
            panic!("no counters note in {reason:?}")
        }
    }

    /// The patterns that hit cross the list's readback: with room for
    /// `cap` listed patterns, 0..=9 of 9 patterns hit (each on its own
    /// number of lines and occurrences, with duplicates and a
    /// self-overlapping pattern among them, in segments of 64 bytes and
    /// whole): at most `cap` come back listed, more read every counter,
    /// and every count equals the oracle's either way, on every kernel.
    #[test]
    fn listed_counts_cross_the_readback_bound() {
        let pats: Vec<Vec<u8>> = [
            &b"alpha-1"[..],
            b"bravo-22",
            b"zzzz",
            b"charlie",
            b"alpha-1",
            b"delta.example",
            b"echo 10.0.0.1",
            b"BRAVO-22",
            b"foxtrot",
        ]
        .iter()
        .map(|p| p.to_vec())
        .collect();
        // Distinct: 8 groups without -i, 7 with.
        for hit in 0..=pats.len() {
            let mut corpus = Vec::new();
            for (i, p) in pats.iter().take(hit).enumerate() {
                for r in 0..=i % 3 {
                    corpus.extend_from_slice(format!("l{i}.{r} ").as_bytes());
                    corpus.extend_from_slice(p);
                    if i % 2 == 0 {
                        corpus.extend_from_slice(b" and ");
                        corpus.extend_from_slice(p);
                    }
                    corpus.extend_from_slice(b"z\n");
                }
            }
            corpus.extend_from_slice(b"nothing here\n");
            for cap in [0usize, 1, 3, 6, 7] {
                let Some(c) = list_ctx(cap) else { return };
                for seg in [None, Some(64)] {
                    let s = session(c, corpus.clone(), seg);
                    for fold in [false, true] {
                        let mut distinct: Vec<Vec<u8>> = pats
                            .iter()
                            .map(|p| {
                                if fold {
                                    p.to_ascii_lowercase()
                                } else {
                                    p.clone()
                                }
                            })
                            .collect();
                        distinct.sort();
                        distinct.dedup();
                        let groups = distinct.len();
                        let oracle = oracle(&corpus, &pats, fold);
                        for k in MultiKernel::ALL {
                            let what = format!("hit {hit} cap {cap} seg {seg:?} fold {fold} {k:?}");
                            check(&s, &pats, fold, &gpu(k), &what);
                            let (w, _) = s.define_watchlist("w", &pats, wl_opts(fold)).unwrap();
                            let r = s.count_watchlist(&w, &gpu(k)).unwrap();
                            assert_eq!(
                                (&r.lines, &r.occurrences),
                                (&oracle.0, &oracle.1),
                                "{what}"
                            );
                            // The groups that hit (duplicates count once).
                            let mut hit_groups: Vec<Vec<u8>> = pats
                                .iter()
                                .zip(&oracle.0)
                                .filter(|(_, &l)| l > 0)
                                .map(|(p, _)| {
                                    if fold {
                                        p.to_ascii_lowercase()
                                    } else {
                                        p.clone()
                                    }
                                })
                                .collect();
                            hit_groups.sort();
                            hit_groups.dedup();
                            let expect = match cap {
                                0 => "off",
                                _ if hit_groups.len() <= cap.min(groups) => "listed",
                                _ => "overflow",
                            };
                            assert_eq!(
                                how(&r.backend.reason),
                                expect,
                                "{what}: {}",
                                r.backend.reason
                            );
                            if expect == "listed" {
                                let n = format!("{} patterns hit", hit_groups.len());
                                assert!(
                                    r.backend.reason.contains(&n),
                                    "{what}: {}",
                                    r.backend.reason
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    /// The list's readback follows the hits: a set of 10,000 patterns
    /// reads back an eighth of them at first (1,250), so 2,000 hits
    /// overflow once (every counter read), and the next count lists them
    /// (room for half again the last hits); exact both times.
    #[test]
    fn list_readback_grows_with_the_hits() {
        let Some(ctx) = ctx() else { return };
        let pats: Vec<Vec<u8>> = (0..10_000u32)
            .map(|i| format!("{:08x}-ioc{i}", i.wrapping_mul(2_654_435_761)).into_bytes())
            .collect();
        let mut corpus = Vec::new();
        for i in 0..2000usize {
            corpus.extend_from_slice(format!("line {i} ").as_bytes());
            corpus.extend_from_slice(&pats[i * 5]);
            corpus.extend_from_slice(b" tail\n");
        }
        let s = session(ctx, corpus.clone(), None);
        let (w, _) = s.define_watchlist("w", &pats, wl_opts(false)).unwrap();
        let (l, o) = oracle(&corpus, &pats, false);
        for (round, expect) in [(0, "overflow"), (1, "listed"), (2, "listed")] {
            let r = s.count_watchlist(&w, &gpu(MultiKernel::Bloom)).unwrap();
            assert_eq!(
                how(&r.backend.reason),
                expect,
                "round {round}: {}",
                r.backend.reason
            );
            assert!(
                r.backend.reason.contains("2000 patterns hit"),
                "{}",
                r.backend.reason
            );
            assert_eq!((&r.lines, &r.occurrences), (&l, &o), "round {round}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// Random corpora and patterns with bloom's filter in 2, 3 or 7
        /// parts, against the oracle.
        #[test]
        fn random_filter_parts(corpus in corpus_strategy(), pats in patterns_strategy(), fold in any::<bool>(), pi in 0..3usize, seg in prop_oneof![Just(None), Just(Some(16u64)), Just(Some(40u64))]) {
            prop_assume!(!fold || pats.iter().all(|p| p.is_ascii()));
            let parts = [2, 3, 7][pi];
            let Some(ctx) = parts_ctx(parts, Some(1)) else { return Ok(()) };
            let s = session(ctx, corpus, seg);
            check(&s, &pats, fold, &gpu(MultiKernel::Bloom), &format!("random, {parts} parts, seg {seg:?}"));
        }

        /// Random corpora and patterns with room for 0, 1 or 2 listed
        /// patterns: the list, its overflow and the full counters.
        #[test]
        fn random_short_list(corpus in corpus_strategy(), pats in patterns_strategy(), fold in any::<bool>(), cap in 0..3usize, seg in prop_oneof![Just(None), Just(Some(16u64))]) {
            prop_assume!(!fold || pats.iter().all(|p| p.is_ascii()));
            let Some(ctx) = list_ctx(cap) else { return Ok(()) };
            let s = session(ctx, corpus, seg);
            for k in [MultiKernel::Bloom, MultiKernel::Ac] {
                check(&s, &pats, fold, &gpu(k), &format!("random, list of {cap}, seg {seg:?} {k:?}"));
            }
        }

        #[test]
        fn random_every_kernel(corpus in corpus_strategy(), pats in patterns_strategy(), fold in any::<bool>()) {
            prop_assume!(!fold || pats.iter().all(|p| p.is_ascii()));
            let Some(ctx) = ctx() else { return Ok(()) };
            let s = session(ctx, corpus, None);
            for k in MultiKernel::ALL {
                check(&s, &pats, fold, &gpu(k), &format!("random {k:?}"));
            }
        }
    }
}
