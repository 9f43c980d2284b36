//! Many literals at once: every backend against the oracle of
//! each pattern searched alone, on random pattern sets with shared
//! prefixes, 1-byte and 64+-byte patterns, binary bytes, case variants,
//! duplicates and patterns that are prefixes of others.
//!
//! GPU tests run on whatever adapter exists (lavapipe in CI); without one
//! they say so loudly and return, unless `LOGSIEVE_REQUIRE_GPU=1`.

mod common;

use common::{naive, naive_find_iter, naive_lines, Flags};
use logsieve::gen::SplitMix64;
use logsieve::{
    BackendChoice, Corpus, PatternCounts, PatternNamer, Query, QueryBuilder, SearchOptions,
    Session, Syntax, Want,
};

/// Deterministic test data: the library's generator, drawn as indices.
struct Rng(SplitMix64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn below(&mut self, n: usize) -> usize {
        self.0.below(n.max(1) as u64) as usize
    }
}

const ALPHABET: &[u8] = b"abcAB.1-_ \t\xff\x00\xc3\xa9";

/// A random pattern set of `n` patterns, with every awkward shape.
fn pattern_set(rng: &mut Rng, n: usize, min_len: usize) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    while out.len() < n {
        let len = match rng.below(10) {
            0 => min_len.max(1),
            1 => 64 + rng.below(40),
            _ => min_len.max(1) + rng.below(8),
        };
        let kind = rng.below(8);
        let p: Vec<u8> = if kind == 0 && !out.is_empty() {
            // A duplicate.
            out[rng.below(out.len())].clone()
        } else if kind == 1 && !out.is_empty() {
            // A case variant.
            let mut p = out[rng.below(out.len())].clone();
            p.iter_mut().for_each(|b| {
                if b.is_ascii_lowercase() {
                    *b = b.to_ascii_uppercase()
                }
            });
            p
        } else if kind == 2 && !out.is_empty() {
            // A prefix of another (kept at min_len).
            let q = &out[rng.below(out.len())];
            q[..q.len().min(min_len.max(1) + rng.below(3))].to_vec()
        } else if kind == 3 && !out.is_empty() {
            // Shares a prefix with another, then diverges.
            let q = out[rng.below(out.len())].clone();
            let keep = rng.below(q.len() + 1).max(min_len.min(q.len()));
            let mut p = q[..keep].to_vec();
            while p.len() < len {
                p.push(ALPHABET[rng.below(ALPHABET.len())]);
            }
            p
        } else {
            (0..len)
                .map(|_| ALPHABET[rng.below(ALPHABET.len())])
                .collect()
        };
        if p.len() >= min_len.max(1) && !p.contains(&b'\n') {
            out.push(p);
        }
    }
    out
}

/// A corpus that holds some of the patterns (whole, cut, case-flipped)
/// amid random bytes, with empty lines and CRLF.
fn corpus_for(rng: &mut Rng, pats: &[Vec<u8>], lines: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..lines {
        let parts = rng.below(5);
        for _ in 0..parts {
            match rng.below(4) {
                0 => {
                    let p = &pats[rng.below(pats.len())];
                    out.extend_from_slice(p);
                }
                1 => {
                    let p = &pats[rng.below(pats.len())];
                    let cut = rng.below(p.len());
                    out.extend(p[..cut].iter().map(|b| b.to_ascii_uppercase()));
                }
                _ => {
                    for _ in 0..rng.below(12) {
                        out.push(ALPHABET[rng.below(ALPHABET.len())]);
                    }
                }
            }
        }
        if rng.below(10) == 0 {
            out.push(b'\r');
        }
        out.push(b'\n');
    }
    if rng.below(2) == 0 {
        out.pop();
    }
    out
}

fn query(pats: &[Vec<u8>], fold: bool) -> Query {
    QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .case_insensitive(fold)
        .build(pats)
        .unwrap()
}

/// The oracle: each pattern searched alone, by the naive matcher.
fn oracle(corpus: &[u8], pats: &[Vec<u8>], fold: bool) -> (Vec<u64>, Vec<u64>) {
    let lines = naive_lines(corpus);
    let mut l = vec![0u64; pats.len()];
    let mut o = vec![0u64; pats.len()];
    for (i, p) in pats.iter().enumerate() {
        let one = std::slice::from_ref(p);
        for line in &lines {
            let ms: Vec<_> = naive_find_iter(one, line, fold, false);
            if !ms.is_empty() {
                l[i] += 1;
            }
            o[i] += ms.iter().filter(|m| !m.is_empty()).count() as u64;
        }
    }
    (l, o)
}

/// Checks the combined search (lines, counts, submatches, pattern names)
/// and the per-pattern counts of `session` with `opts` against the oracle.
fn check(session: &Session, pats: &[Vec<u8>], fold: bool, opts: &SearchOptions, what: &str) {
    let corpus: Vec<u8> = session.corpus().docs()[0].data().to_vec();
    let q = query(pats, fold);
    let flags = Flags {
        i: fold,
        ..Default::default()
    };
    let want_lines = naive(&corpus, pats, Syntax::Fixed, flags);
    for want in [Want::Lines, Want::Count] {
        let o = SearchOptions {
            want,
            ..opts.clone()
        };
        let r = session
            .search(&q, &o)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(
            r.docs[0].count,
            want_lines.len() as u64,
            "{what} {want:?} ({})",
            r.backend.name
        );
        if want == Want::Lines {
            assert_eq!(r.docs[0].lines, want_lines, "{what} ({})", r.backend.name);
        }
    }
    // Submatches (leftmost-first) and the patterns they name.
    let namer = PatternNamer::new(&q);
    let lines = naive_lines(&corpus);
    for &id in &want_lines {
        let line = lines[id as usize];
        let got = q.find_iter_line(line);
        assert_eq!(
            got,
            naive_find_iter(pats, line, fold, false),
            "{what}: submatches of line {id}"
        );
        for m in got {
            let names = namer.patterns_of(&line[m.clone()]);
            assert!(!names.is_empty(), "{what}: submatch names no pattern");
            for i in names {
                let p = &pats[i];
                let eq = if fold {
                    p.eq_ignore_ascii_case(&line[m.clone()])
                } else {
                    p[..] == line[m.clone()]
                };
                assert!(eq, "{what}: pattern {i} named for {:?}", &line[m.clone()]);
            }
        }
    }
    let (l, o) = oracle(&corpus, pats, fold);
    assert!(
        l.iter().any(|&n| n > 0),
        "{what}: no pattern occurs (test data)"
    );
    let c: PatternCounts = session
        .count_per_pattern(&q, opts)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    for i in 0..pats.len() {
        assert_eq!(
            (c.lines[i], c.occurrences[i]),
            (l[i], o[i]),
            "{what} ({}): pattern {i} {:?}",
            c.backend.name,
            String::from_utf8_lossy(&pats[i])
        );
    }
}

fn cpu_opts(threads: usize) -> SearchOptions {
    SearchOptions {
        backend: BackendChoice::Cpu,
        threads,
        ..Default::default()
    }
}

#[test]
fn random_sets_cpu() {
    let mut rng = Rng(SplitMix64(7));
    // Small sets (aho-corasick, 1-byte patterns) and large ones (the
    // hashed-prefix table: >= 100 patterns of >= 4 bytes).
    for (round, &(n, min_len)) in [(3, 1), (12, 1), (40, 2), (150, 4), (400, 6), (120, 8)]
        .iter()
        .enumerate()
    {
        for fold in [false, true] {
            let pats = pattern_set(&mut rng, n, min_len);
            let corpus = corpus_for(&mut rng, &pats, 300);
            let session = Session::new(Corpus::from_bytes("t", corpus));
            for threads in [1, 3] {
                let what = format!("round {round} n {n} fold {fold} threads {threads}");
                check(&session, &pats, fold, &cpu_opts(threads), &what);
            }
        }
    }
}

#[test]
fn large_sets_pick_the_prefix_table_and_small_ones_aho_corasick() {
    let big: Vec<Vec<u8>> = (0..1000)
        .map(|i| format!("10.0.{i}.7").into_bytes())
        .collect();
    assert_eq!(query(&big, false).cpu_matcher_name(), "prefix-table");
    assert_eq!(query(&big, true).cpu_matcher_name(), "prefix-table");
    assert_eq!(query(&big[..10], false).cpu_matcher_name(), "aho-corasick");
    let mut short = big.clone();
    short.push(b"ab".to_vec());
    assert_eq!(query(&short, false).cpu_matcher_name(), "aho-corasick");
}

#[test]
fn per_pattern_counts_by_hand() {
    let corpus = b"aaaa x\nabab ABAB\n\nfoo aa\nzz".to_vec();
    let session = Session::new(Corpus::from_bytes("t", corpus));
    let pats: Vec<Vec<u8>> = vec![
        b"aa".to_vec(),
        b"abab".to_vec(),
        b"aa".to_vec(),
        b"zz".to_vec(),
        b"nope".to_vec(),
        b"".to_vec(),
    ];
    let q = query(&pats, false);
    let c = session.count_per_pattern(&q, &cpu_opts(1)).unwrap();
    assert_eq!(c.lines, vec![2, 1, 2, 1, 0, 5]);
    // "aaaa" holds "aa" twice without overlap; the empty pattern is on
    // every line but never an occurrence.
    assert_eq!(c.occurrences, vec![3, 1, 3, 1, 0, 0]);
    assert_eq!(c.matched(), vec![0, 1, 2, 3, 5]);
    let qi = query(&pats, true);
    let ci = session.count_per_pattern(&qi, &cpu_opts(2)).unwrap();
    assert_eq!(ci.lines[1], 1);
    assert_eq!(ci.occurrences[1], 2);
}

#[test]
fn per_pattern_counts_for_regex_and_word_queries() {
    let corpus = b"error 503\nerrors 404\nERROR 500\n".to_vec();
    let session = Session::new(Corpus::from_bytes("t", corpus));
    let q = QueryBuilder::new()
        .word(true)
        .build(&["error", r"\d{3}"])
        .unwrap();
    let c = session.count_per_pattern(&q, &cpu_opts(1)).unwrap();
    assert_eq!(c.lines, vec![1, 3]);
    assert_eq!(c.occurrences, vec![1, 3]);
    let namer = PatternNamer::new(&q);
    assert_eq!(namer.patterns_of(b"503"), vec![1]);
    assert_eq!(namer.patterns_of(b"error"), vec![0]);
}

#[test]
fn hundred_thousand_patterns_on_the_cpu() {
    // IOC-list shape: 100k hashes, 30 of which occur.
    let mut rng = Rng(SplitMix64(11));
    let hex = |rng: &mut Rng| -> Vec<u8> {
        format!("{:016x}{:016x}", rng.next(), rng.next()).into_bytes()
    };
    let pats: Vec<Vec<u8>> = (0..100_000).map(|_| hex(&mut rng)).collect();
    let mut corpus = Vec::new();
    for i in 0..3000 {
        corpus.extend_from_slice(b"trace=");
        if i % 100 == 0 {
            corpus.extend_from_slice(&pats[i * 7]);
        } else {
            corpus.extend_from_slice(&hex(&mut rng));
        }
        corpus.extend_from_slice(b" ok\n");
    }
    let session = Session::new(Corpus::from_bytes("t", corpus));
    let q = query(&pats, false);
    assert_eq!(q.cpu_matcher_name(), "prefix-table");
    let r = session.search(&q, &cpu_opts(2)).unwrap();
    assert_eq!(r.docs[0].count, 30);
    let c = session.count_per_pattern(&q, &cpu_opts(1)).unwrap();
    assert_eq!(c.matched().len(), 30);
    assert_eq!(c.lines.iter().sum::<u64>(), 30);
}

// ---------------------------------------------------------------------------
// GPU: every multi-literal kernel against the same oracle.
// ---------------------------------------------------------------------------

#[cfg(feature = "gpu")]
mod gpu {
    use super::*;
    use logsieve::gpu::{GpuContext, GpuKernel, MultiKernel, UploadOptions};
    use std::sync::OnceLock;

    /// One context per test binary: lavapipe's start-up is not free.
    fn ctx() -> Option<&'static GpuContext> {
        static CTX: OnceLock<Option<GpuContext>> = OnceLock::new();
        CTX.get_or_init(|| {
            logsieve::gpu::or_skip("multi-pattern GPU tests", GpuContext::new())
                .inspect(|c| eprintln!("GPU tests run on: {}", c.info().name))
        })
        .as_ref()
    }

    fn gpu_engine(ctx: &GpuContext, corpus: Vec<u8>, max_segment: Option<u64>) -> Session {
        let mut e = Session::new(Corpus::from_bytes("t", corpus));
        e.attach_gpu_with(
            ctx,
            UploadOptions {
                max_segment,
                ..Default::default()
            },
        )
        .unwrap();
        e
    }

    fn opts(k: MultiKernel) -> SearchOptions {
        SearchOptions {
            backend: BackendChoice::Gpu,
            gpu_kernel: Some(GpuKernel::from(k)),
            ..Default::default()
        }
    }

    #[test]
    fn random_sets_every_kernel() {
        let Some(ctx) = ctx() else { return };
        let mut rng = Rng(SplitMix64(99));
        // Sets with a pattern shorter than 4 bytes run ac under the name
        // bloom; the rest run bloom itself with keys of L = 4..8 bytes.
        let rounds = [
            (2, 1),
            (25, 1),
            (60, 3),
            (300, 4),
            (40, 5),
            (90, 6),
            (120, 7),
            (200, 8),
            (30, 12),
        ];
        for (round, &(n, min_len)) in rounds.iter().enumerate() {
            for fold in [false, true] {
                let mut pats = pattern_set(&mut rng, n, min_len);
                if fold {
                    // Non-ASCII patterns fold by Unicode: a CPU-only query.
                    // Binary bytes are covered without -i.
                    pats.iter_mut().flatten().for_each(|b| {
                        if !b.is_ascii() {
                            *b = b'z'
                        }
                    });
                }
                let shortest = pats.iter().map(|p| p.len()).min().unwrap();
                let mut corpus = corpus_for(&mut rng, &pats, 120);
                // One line longer than a segment: searched on the CPU.
                corpus.extend_from_slice(b"\n");
                for p in pats.iter().take(6) {
                    corpus.extend_from_slice(p);
                    corpus.extend_from_slice(&[b'.'; 30]);
                }
                corpus.extend_from_slice(b"\nlast ");
                corpus.extend_from_slice(&pats[0]);
                for seg in [None, Some(256)] {
                    let session = gpu_engine(ctx, corpus.clone(), seg);
                    for k in MultiKernel::ALL {
                        let what = format!("round {round} n {n} fold {fold} seg {seg:?} {k:?}");
                        check(&session, &pats, fold, &opts(k), &what);
                        let ran = session.search(&query(&pats, fold), &opts(k)).unwrap();
                        let want = match k {
                            MultiKernel::Bloom if shortest < 4 => MultiKernel::Ac,
                            _ => k,
                        };
                        assert_eq!(ran.backend.name, format!("gpu/{}", want.name()), "{what}");
                    }
                }
            }
        }
    }

    #[test]
    fn self_overlapping_patterns_are_recounted_exactly() {
        let Some(ctx) = ctx() else { return };
        let session = gpu_engine(ctx, b"aaaa x\nabababab\n\nfoo aa\nzz".to_vec(), None);
        let pats: Vec<Vec<u8>> = vec![
            b"aa".to_vec(),
            b"abab".to_vec(),
            b"aa".to_vec(),
            b"zz".to_vec(),
        ];
        let q = query(&pats, false);
        for k in MultiKernel::ALL {
            let c = session.count_per_pattern(&q, &opts(k)).unwrap();
            // bloom takes patterns of 4+ bytes: ac runs, and says why.
            assert_eq!(c.backend.name, format!("gpu/{}", k.for_query(&q).name()));
            if k == MultiKernel::Bloom {
                assert!(
                    c.backend.reason.contains("ac ran instead"),
                    "{}",
                    c.backend.reason
                );
            }
            assert_eq!(c.lines, vec![2, 1, 2, 1], "{k:?}");
            assert_eq!(c.occurrences, vec![3, 2, 3, 1], "{k:?}");
        }
        // The same with patterns bloom takes itself.
        let session = gpu_engine(
            ctx,
            b"aaaaaaa x
abababababab

foo aaaa
zzzz abcabcabca"
                .to_vec(),
            None,
        );
        let pats: Vec<Vec<u8>> = vec![
            b"aaaa".to_vec(),
            b"ababab".to_vec(),
            b"aaaa".to_vec(),
            b"zzzz".to_vec(),
            b"abcabca".to_vec(),
        ];
        let q = query(&pats, false);
        for k in MultiKernel::ALL {
            let c = session.count_per_pattern(&q, &opts(k)).unwrap();
            assert_eq!(c.backend.name, format!("gpu/{}", k.name()));
            assert_eq!(c.lines, vec![2, 1, 2, 1, 1], "{k:?}");
            assert_eq!(c.occurrences, vec![2, 2, 2, 1, 1], "{k:?}");
        }
    }

    /// bloom at every alignment: a pattern (and decoys that share its
    /// first 4 bytes, its key, or all but its last byte) placed at every
    /// offset of a vec4 and of the next one, so that its windows cross
    /// word and vec4 edges; first and last line, CRLF, no trailing
    /// newline, and segments small enough that matches end at segment
    /// edges.
    #[test]
    fn bloom_boundary_sweep() {
        let Some(ctx) = ctx() else { return };
        const ALNUM: &[u8] = b"k0Lm1Nq2Rs3Tu4Vw5Xy6Zabcdefghij";
        for len in [4usize, 5, 6, 7, 8, 9, 12, 15, 16, 17, 33, 70] {
            let pat: Vec<u8> = (0..len)
                .map(|i| ALNUM[(i * 7 + len) % ALNUM.len()])
                .collect();
            let l = len.min(8);
            let with = |i: usize, b: u8| {
                let mut p = pat.clone();
                p[i] = b;
                p
            };
            let mut pats = vec![
                pat.clone(),
                // Same first 4 bytes, another key.
                with(l - 1, b'@'),
                // Same key, another tail (when there is one).
                with(len - 1, b'@'),
                // Another first byte.
                with(0, b'@'),
                // The pattern plus more.
                [&pat[..], b"!!"].concat(),
                // Shares the last 4 key bytes only.
                [b"##".as_slice(), &pat[..len.min(6)], b"##"].concat(),
            ];
            pats.dedup();
            for fold in [false, true] {
                let mut corpus = Vec::new();
                corpus.extend_from_slice(&pat);
                corpus.extend_from_slice(
                    b" first line
",
                );
                for pad in 0..40usize {
                    let dots = vec![b'.'; pad];
                    for (k, p) in pats.iter().enumerate() {
                        if (pad + k) % 3 != 0 {
                            continue;
                        }
                        corpus.extend_from_slice(&dots);
                        let p: Vec<u8> = if fold && pad % 2 == 1 {
                            p.to_ascii_uppercase()
                        } else {
                            p.clone()
                        };
                        corpus.extend_from_slice(&p);
                        if pad % 4 == 0 {
                            corpus.push(b'\r');
                        } else {
                            corpus.extend(std::iter::repeat_n(b'-', pad % 5));
                        }
                        corpus.push(b'\n');
                    }
                    // Cut short by one byte, and split by a newline.
                    corpus.extend_from_slice(&dots);
                    corpus.extend_from_slice(&pat[..len - 1]);
                    corpus.push(b'\n');
                    corpus.extend_from_slice(&pat[..len / 2]);
                    corpus.push(b'\n');
                    corpus.extend_from_slice(&pat[len / 2..]);
                    corpus.push(b'\n');
                }
                corpus.extend_from_slice(b"last ");
                corpus.extend_from_slice(&pat);
                for seg in [None, Some(200), Some(1000)] {
                    let session = gpu_engine(ctx, corpus.clone(), seg);
                    let what = format!("len {len} fold {fold} seg {seg:?}");
                    check(&session, &pats, fold, &opts(MultiKernel::Bloom), &what);
                }
            }
        }
    }

    /// The tables of the last set are reused only for the same patterns
    /// and case mode.
    #[test]
    fn bloom_tables_follow_the_pattern_set() {
        let Some(ctx) = ctx() else { return };
        let corpus = b"alpha beta\ngamma DELTA\nepsilon\nzeta eta\n".to_vec();
        let session = gpu_engine(ctx, corpus.clone(), None);
        let a: Vec<Vec<u8>> = vec![b"beta".to_vec(), b"delta".to_vec()];
        let b: Vec<Vec<u8>> = vec![b"beta".to_vec(), b"zeta".to_vec()];
        let c: Vec<Vec<u8>> = vec![b"beta".to_vec()];
        let o = opts(MultiKernel::Bloom);
        let lines = |p: &[Vec<u8>], fold: bool| {
            let r = session.search(&query(p, fold), &o).unwrap();
            assert_eq!(r.backend.name, "gpu/bloom");
            r.docs[0].lines.clone()
        };
        for _ in 0..2 {
            assert_eq!(lines(&a, false), vec![0]);
            assert_eq!(lines(&a, true), vec![0, 1]);
            assert_eq!(lines(&b, false), vec![0, 3]);
            assert_eq!(lines(&b, false), vec![0, 3]);
            assert_eq!(lines(&c, false), vec![0]);
            assert_eq!(lines(&a, false), vec![0]);
            // Another kernel in between builds its own tables.
            let r = session
                .search(&query(&a, true), &opts(MultiKernel::Ac))
                .unwrap();
            assert_eq!(r.docs[0].lines, vec![0, 1]);
        }
        for p in [&a, &b, &c] {
            check(&session, p, false, &o, "cache");
        }
    }

    #[test]
    fn engine_names_the_kernel_and_refuses_what_it_cannot_run() {
        let Some(ctx) = ctx() else { return };
        let session = gpu_engine(ctx, b"alpha beta\ngamma\n".to_vec(), None);
        let q = query(&[b"beta".to_vec(), b"gamma".to_vec()], false);
        let gpu = SearchOptions {
            backend: BackendChoice::Gpu,
            ..Default::default()
        };
        let r = session.search(&q, &gpu).unwrap();
        assert_eq!(
            r.backend.name,
            format!("gpu/{}", MultiKernel::DEFAULT.name())
        );
        assert_eq!(r.docs[0].lines, vec![0, 1]);
        // The empty pattern stays on the CPU: forced GPU is an error.
        let e = query(&[b"beta".to_vec(), b"".to_vec()], false);
        assert!(session.search(&e, &gpu).is_err());
        assert!(session.count_per_pattern(&e, &gpu).is_err());
    }
}

#[cfg(feature = "gpu")]
#[test]
fn gpu_large_set_uses_wide_trie_offsets() {
    use logsieve::gpu::{GpuContext, GpuKernel, MultiKernel};
    let Some(ctx) = logsieve::gpu::or_skip("wide trie offsets tests", GpuContext::shared()) else {
        return;
    };
    // 20k hashes: the trie outgrows 16-bit offsets.
    let mut rng = Rng(SplitMix64(5));
    let hex = |rng: &mut Rng| -> Vec<u8> {
        format!("{:016x}{:08x}", rng.next(), rng.next() as u32).into_bytes()
    };
    let pats: Vec<Vec<u8>> = (0..20_000).map(|_| hex(&mut rng)).collect();
    let mut corpus = Vec::new();
    for i in 0..2000usize {
        corpus.extend_from_slice(b"id=");
        let p = if i % 50 == 0 {
            pats[i * 3].clone()
        } else {
            hex(&mut rng)
        };
        corpus.extend_from_slice(&p);
        corpus.extend_from_slice(b" ok\n");
    }
    let mut session = Session::new(Corpus::from_bytes("t", corpus));
    session.attach_gpu_with(&ctx, Default::default()).unwrap();
    let q = query(&pats, true);
    let cpu = session.count_per_pattern(&q, &cpu_opts(1)).unwrap();
    assert_eq!(cpu.matched().len(), 40);
    for k in MultiKernel::ALL {
        let o = SearchOptions {
            backend: BackendChoice::Gpu,
            gpu_kernel: Some(GpuKernel::from(k)),
            ..Default::default()
        };
        let c = session.count_per_pattern(&q, &o).unwrap();
        assert_eq!(c.lines, cpu.lines, "{k:?}");
        assert_eq!(c.occurrences, cpu.occurrences, "{k:?}");
        assert_eq!(session.search(&q, &o).unwrap().docs[0].count, 40, "{k:?}");
    }
}
