//! Every GPU kernel against the CPU oracle (`cpu::search_doc`) and the
//! naive oracle of `common/`: the shared case table, boundary sweeps, forced
//! tiny segments, oversized lines, random corpora, and the loghub logs.
//!
//! Runs on whatever adapter exists (lavapipe in CI). Without one the tests
//! say so loudly and pass, unless `LOGSIEVE_REQUIRE_GPU=1`, when they fail.

mod common;

use std::sync::OnceLock;

use common::{build, naive, Flags, CASES};
use logsieve::cpu::{search_doc, CpuOptions};
use logsieve::gpu::{unsupported_reason, GpuContext, GpuCorpus, GpuKernel, UploadOptions};
use logsieve::{Corpus, Document, Query, QueryBuilder, Syntax, Want};
use proptest::prelude::*;

/// One context per test binary: lavapipe's start-up is not free.
fn ctx() -> Option<&'static GpuContext> {
    static CTX: OnceLock<Option<GpuContext>> = OnceLock::new();
    CTX.get_or_init(|| {
        logsieve::gpu::or_skip("GPU kernel tests", GpuContext::new()).inspect(|c| {
            eprintln!(
                "GPU tests run on: {} ({})",
                c.info().name,
                c.info().device_type
            )
        })
    })
    .as_ref()
}

fn fixed(p: &[u8], flags: &str) -> Query {
    build(&[p.to_vec()], Syntax::Fixed, Flags::parse(flags)).unwrap()
}

/// Match starts (overlapping) of the folded pattern, by brute force.
fn naive_positions(data: &[u8], pat: &[u8], fold: bool) -> Vec<u64> {
    let m = pat.len();
    let eq = |a: u8, b: u8| {
        if fold {
            a.eq_ignore_ascii_case(&b)
        } else {
            a == b
        }
    };
    if data.len() < m {
        return Vec::new();
    }
    (0..=data.len() - m)
        .filter(|&p| data[p..p + m].iter().zip(pat).all(|(&a, &b)| eq(a, b)))
        .map(|p| p as u64)
        .collect()
}

/// Runs every kernel, for counts and for line ids, on `corpus` uploaded
/// with `max_segment`, and compares each with the CPU engine (and
/// brute-byte's positions with a brute-force search).
fn check_corpus(
    ctx: &GpuContext,
    corpus: &Corpus,
    q: &Query,
    max_segment: Option<u64>,
    what: &str,
) {
    let g = GpuCorpus::upload_with(
        ctx,
        corpus,
        UploadOptions {
            max_segment,
            // With forced small segments, force a small staging chunk too,
            // so the upload waits for chunks in flight many times ...
            staging_chunk: max_segment.map(|_| 4096),
            // ... with 1, 2 or 3 in flight.
            staging_slots: max_segment.map(|m| (m % 3) as usize + 1),
            // Line hints every 16 bytes (a line spans many blocks), every
            // 4 KiB (a block holds many lines) or the default.
            block_shift: [Some(4), Some(12), None][what.len() % 3],
        },
    )
    .unwrap_or_else(|e| panic!("{what}: upload failed: {e}"));
    let want_docs: Vec<_> = corpus
        .docs()
        .iter()
        .map(|d| search_doc(d, q, &CpuOptions::default()))
        .collect();
    for kernel in GpuKernel::ALL {
        for want in [Want::Count, Want::Lines] {
            let r = g
                .search(corpus, q, kernel, want)
                .unwrap_or_else(|e| panic!("{what}: {kernel} {want:?}: {e}"));
            assert_eq!(r.docs.len(), want_docs.len());
            for (got, exp) in r.docs.iter().zip(&want_docs) {
                assert_eq!(
                    got.count, exp.count,
                    "{what}: {kernel} {want:?} count (seg {max_segment:?})"
                );
                if want == Want::Lines {
                    assert_eq!(
                        got.lines, exp.lines,
                        "{what}: {kernel} lines (seg {max_segment:?})"
                    );
                }
            }
            // Several literals run on a multi-literal kernel,
            // which reports neither candidates nor positions.
            let one = q.literals().is_some_and(|l| l.len() == 1);
            if matches!(kernel, GpuKernel::TwoPhase | GpuKernel::Signature) && one {
                let cand = r.candidates.expect("phase-1 kernels report candidates");
                let matched: u64 = want_docs
                    .iter()
                    .zip(corpus.docs())
                    .map(|(h, d)| {
                        if q.invert() {
                            d.lines().len() - h.count
                        } else {
                            h.count
                        }
                    })
                    .sum();
                // A prefilter never loses a matching line.
                assert!(
                    cand >= matched,
                    "{what}: {kernel}: {cand} candidates < {matched} matches"
                );
            }
            if kernel == GpuKernel::BruteByte && want == Want::Lines && one {
                let pos = r.positions.expect("brute-byte reports positions");
                let lit = &q.literals().unwrap()[0];
                let fold = q.case() == logsieve::CaseMode::Ascii;
                for (d, got) in corpus.docs().iter().zip(&pos) {
                    assert_eq!(
                        got,
                        &naive_positions(d.data(), lit, fold),
                        "{what}: positions"
                    );
                }
            }
        }
    }
}

fn check(data: &[u8], q: &Query, max_segment: Option<u64>, what: &str) {
    let Some(ctx) = ctx() else { return };
    let corpus = Corpus::from_bytes("t", data.to_vec());
    check_corpus(ctx, &corpus, q, max_segment, what);
}

#[test]
fn case_table_every_kernel() {
    let Some(ctx) = ctx() else { return };
    let mut ran = 0;
    for case in CASES {
        let Ok(q) = build(&case.patterns(), case.syntax, case.flags()) else {
            continue;
        };
        let corpus = Corpus::from_bytes(case.name, case.corpus.to_vec());
        let g = GpuCorpus::upload(ctx, &corpus).unwrap();
        // The literal kernels' answer (a regex that tier 2 runs is no
        // literal kernel's: tests/gpu_shift_and.rs).
        if let Err(why) = logsieve::support::kernel_support(&q, Some(GpuKernel::Scan)) {
            // The GPU refuses, with the reason, rather than answering.
            let err = g
                .search(&corpus, &q, GpuKernel::Scan, Want::Lines)
                .unwrap_err();
            assert!(
                err.to_string().contains(why.reason()),
                "{}: {err}",
                case.name
            );
            continue;
        }
        for kernel in GpuKernel::ALL {
            let r = g.search(&corpus, &q, kernel, Want::Lines).unwrap();
            assert_eq!(r.docs[0].lines, case.expected, "{}: {kernel}", case.name);
        }
        check_corpus(ctx, &corpus, &q, Some(16), case.name);
        ran += 1;
    }
    assert!(ran >= 10, "only {ran} GPU-capable cases in the table");
}

/// The pattern at every alignment: pad 0..=16 bytes before it (every u32
/// word and vec4 edge), on the first line, the last line, between empty
/// lines, with CRLF and without a final newline; segments of the whole
/// corpus and forced tiny ones (a segment edge next to every line).
#[test]
fn boundary_sweep() {
    if ctx().is_none() {
        return;
    }
    for pat in [&b"E"[..], b"ER", b"ERR", b"ERROR_503", b"needle-of-17-byte"] {
        // Near misses: each of the pattern's bytes wrong in turn, and the
        // pattern less its first or last byte (scan tests two bytes and
        // verifies the rest; one- and two-byte patterns are decided by the
        // tests alone).
        let n = pat.len();
        let mut decoys: Vec<Vec<u8>> = (0..n)
            .map(|i| {
                let mut d = pat.to_vec();
                d[i] = b'#';
                d
            })
            .collect();
        decoys.push(pat[1..].to_vec());
        decoys.push(pat[..n - 1].to_vec());
        let mut hay = Vec::new();
        for pad in 0..=16 {
            hay.extend(std::iter::repeat_n(b'.', pad));
            hay.extend_from_slice(&decoys[pad % decoys.len()]);
            hay.push(b' ');
            hay.extend_from_slice(pat);
            hay.extend_from_slice(if pad % 3 == 0 { b"\r\n" } else { b"\n" });
            hay.extend(std::iter::repeat_n(b'.', pad));
            hay.extend_from_slice(&decoys[(pad + 1) % decoys.len()]);
            hay.push(b'\n');
            if pad % 4 == 0 {
                hay.extend_from_slice(b"\n\n");
            }
        }
        let mut hay = [pat, b"\n", &hay[..], b"tail.", pat].concat();
        for flags in ["", "i", "v", "iv"] {
            // Under -i the query is in lower case, the corpus in upper.
            let p = if flags.contains('i') {
                pat.to_ascii_lowercase()
            } else {
                pat.to_vec()
            };
            let q = fixed(&p, flags);
            for seg in [None, Some(16), Some(37), Some(64)] {
                check(
                    &hay,
                    &q,
                    seg,
                    &format!("sweep {:?} -{flags}", String::from_utf8_lossy(pat)),
                );
            }
        }
        hay.push(b'\n');
        check(&hay, &fixed(pat, ""), Some(24), "sweep with final newline");
    }
}

/// The rarer byte of a two-byte pattern second, so scan's second test looks
/// one byte back: at the start of a segment that byte is before the buffer,
/// and the candidate must be verified instead (a near miss there, "xR", is
/// not a match of "ER"). Every line starts a segment.
#[test]
fn second_test_before_a_segment_start() {
    if ctx().is_none() {
        return;
    }
    let mut hay = b"xR\nER\nR\n".to_vec();
    hay.extend(std::iter::repeat_n(b'E', 300));
    hay.extend_from_slice(b"\nzR\nER");
    for flags in ["", "i", "v"] {
        let p: &[u8] = if flags == "i" { b"er" } else { b"ER" };
        for seg in [Some(3), Some(4), None] {
            check(
                &hay,
                &fixed(p, flags),
                seg,
                &format!("ER -{flags} seg {seg:?}"),
            );
        }
    }
}

/// scan builds a pipeline per distance between its two rare bytes modulo
/// 16 (the second test's window shift is a constant of the pipeline), so
/// every distance from -63 to 63 is tried: a pattern `a` + filler + `b`,
/// where `a` is the corpus's rarest byte and `b` the next, and the pattern
/// reversed, at every alignment of a 32-byte thread, with near misses (the
/// second rare byte wrong, a filler byte wrong), in one segment or many.
/// `a`/`b` are letters (with -i too), then bytes above 0x7F (the SWAR test
/// for non-ASCII bytes). Each corpus is tried as is, where `a` is about 1%
/// of the bytes (the second test runs on every chunk), and after 16 KiB of
/// filler lines, where it is under 0.3% (the second test only where the
/// first hit).
#[test]
fn second_test_at_every_distance() {
    let Some(ctx) = ctx() else { return };
    let filler = |k: usize| -> Vec<u8> { (0..k).map(|i| b"abcdefghij"[i % 10]).collect() };
    let mut cases: Vec<(u8, u8, Vec<usize>)> = vec![(b'Q', b'Z', (0..=62).collect())];
    cases.push((0xF1, 0xE9, vec![0, 1, 3, 4, 15, 16, 17, 62]));
    let mut ran = 0;
    for (a, b, ks) in cases {
        for k in ks {
            for rev in [false, true] {
                let (x, y) = if rev { (b, a) } else { (a, b) };
                let pat = [&[x][..], &filler(k), &[y]].concat();
                let mut miss_end = pat.clone();
                *miss_end.last_mut().unwrap() = b'#';
                let mut miss_first = pat.clone();
                miss_first[0] = b'#';
                // (With no filler: the first rare byte repeated.)
                let mut miss_mid = [&[x][..], &pat].concat();
                miss_mid[1 + k / 2] = b'#';
                let decoys = [miss_end, miss_first, miss_mid];
                // Every line holds `b` twice and `a` not at all, and much
                // filler: `a` is the rarest byte, `b` the second.
                let mut hay = Vec::new();
                for pad in 0..32 {
                    hay.extend_from_slice(&[b, b' ', b]);
                    hay.extend_from_slice(b" abcdefghij abcdefghij ");
                    hay.extend(std::iter::repeat_n(b'.', pad));
                    hay.extend_from_slice(&decoys[pad % 3]);
                    if pad % 2 == 0 {
                        hay.push(b' ');
                        hay.extend_from_slice(&pat);
                    }
                    hay.push(b'\n');
                }
                let letters = a.is_ascii_alphabetic();
                for extra in [0, 16 << 10] {
                    let mut hay = hay.clone();
                    while hay.len() < extra {
                        hay.extend_from_slice(b"abcdefghij abcdefghij ..........\n");
                    }
                    for flags in if letters { &["", "i"][..] } else { &[""][..] } {
                        let p = if flags.is_empty() {
                            pat.clone()
                        } else {
                            pat.to_ascii_lowercase()
                        };
                        let q = fixed(&p, flags);
                        let corpus = Corpus::from_bytes("d", hay.clone());
                        let want = search_doc(&corpus.docs()[0], &q, &CpuOptions::default());
                        assert_eq!(want.count, 16, "the corpus holds the pattern 16 times");
                        for seg in [None, Some(100 + k as u64)] {
                            let g = GpuCorpus::upload_with(
                                ctx,
                                &corpus,
                                UploadOptions {
                                    max_segment: seg,
                                    ..Default::default()
                                },
                            )
                            .unwrap();
                            for w in [Want::Count, Want::Lines] {
                                let r = g.search(&corpus, &q, GpuKernel::Scan, w).unwrap();
                                let what = format!("{pat:?} -{flags} seg {seg:?} {w:?}");
                                assert_eq!(r.docs[0].count, want.count, "{what}");
                                if w == Want::Lines {
                                    assert_eq!(r.docs[0].lines, want.lines, "{what}");
                                }
                                ran += 1;
                            }
                        }
                    }
                }
            }
        }
    }
    assert_eq!(ran, (63 * 2 * 2 + 8 * 2) * 2 * 2 * 2);
}

#[test]
fn boundary_variations_from_common() {
    if ctx().is_none() {
        return;
    }
    let base = b"xx ERROR_503 yy\nerror_503\n\nERROR_50\nE";
    for (i, v) in common::variations(base, 16).iter().enumerate() {
        let q = fixed(b"ERROR_503", "");
        check(v, &q, Some(32), &format!("variation {i}"));
        let q = fixed(b"error_503", "i");
        check(v, &q, None, &format!("variation {i} -i"));
    }
}

#[test]
fn pattern_of_64_bytes_and_65_rejected() {
    let p64: Vec<u8> = (0..64u8).map(|i| b'a' + i % 26).collect();
    let mut hay = Vec::new();
    hay.extend_from_slice(b"before\n");
    hay.extend_from_slice(&p64);
    hay.extend_from_slice(b"\nx");
    hay.extend_from_slice(&p64[..63]);
    hay.extend_from_slice(b"\n...");
    hay.extend_from_slice(&p64);
    let q = fixed(&p64, "");
    assert_eq!(unsupported_reason(&q), None);
    check(&hay, &q, None, "64-byte pattern");
    check(
        &hay,
        &fixed(&p64.to_ascii_uppercase(), "i"),
        Some(70),
        "64-byte pattern -i",
    );
    let p65 = [&p64[..], b"z"].concat();
    let q65 = fixed(&p65, "");
    let why = unsupported_reason(&q65).expect("65 bytes is too long for the GPU");
    assert!(why.contains("64"), "{why}");
}

/// A generated log split into many segments, and several documents.
#[test]
fn corpus_larger_than_one_segment() {
    let Some(ctx) = ctx() else { return };
    let data = common::generated(3000, 7);
    let mut corpus = Corpus::new();
    corpus.push(Document::from_bytes("a", data.clone()));
    corpus.push(Document::from_bytes("empty", Vec::new()));
    corpus.push(Document::from_bytes("b", data[..data.len() / 3].to_vec()));
    for (p, f) in [
        (&b"ERROR_503"[..], ""),
        (b"192.168.1", ""),
        (b"error", "i"),
        (b"NullPointerException", ""),
        (b"x", ""),
        (b"timeout", "v"),
    ] {
        let q = fixed(p, f);
        check_corpus(
            ctx,
            &corpus,
            &q,
            Some(64 << 10),
            "generated, 64 KiB segments",
        );
    }
    let g = GpuCorpus::upload_with(
        ctx,
        &corpus,
        UploadOptions {
            max_segment: Some(64 << 10),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(g.segment_count() > 3, "{} segments", g.segment_count());
    assert!(g.upload_gbps() > 0.0);
    let bufs = g.buffers();
    let data_bytes: u64 = bufs
        .iter()
        .filter(|(n, _)| n.ends_with("/data"))
        .map(|b| b.1)
        .sum();
    assert!(
        data_bytes >= corpus.total_bytes(),
        "{data_bytes} < {}",
        corpus.total_bytes()
    );
    assert!(g.plain_read().is_ok());
}

/// A count-only scan zeroes the result bits as it counts them, so the next
/// scan skips the clear, and scan zeroes its own counters: queries run back
/// to back on one upload, dense then sparse then absent, interleaved with
/// other kernels, several literals (the many-pattern kernels) and both
/// output kinds, each equal to the CPU's, on one segment and on many.
#[test]
fn scan_after_other_searches_starts_clean() {
    let Some(ctx) = ctx() else { return };
    let data = common::generated(2000, 11);
    let corpus = Corpus::from_bytes("g", data);
    let cpu = |q: &Query| search_doc(&corpus.docs()[0], q, &CpuOptions::default());
    let many = build(
        &[b"ERROR".to_vec(), b"timeout".to_vec(), b"x".to_vec()],
        Syntax::Fixed,
        Flags::parse(""),
    )
    .unwrap();
    for max_segment in [None, Some(8 << 10)] {
        let g = GpuCorpus::upload_with(
            ctx,
            &corpus,
            UploadOptions {
                max_segment,
                ..Default::default()
            },
        )
        .unwrap();
        let queries = [
            (&b"e"[..], ""),
            (b"ERROR_503", ""),
            (b"x", "i"),
            (b"no such thing", ""),
            (b"e", "v"),
            (b"NullPointerException", ""),
        ];
        for (i, (p, f)) in queries.into_iter().enumerate() {
            let q = fixed(p, f);
            let exp = cpu(&q);
            let between = [GpuKernel::TwoPhase, GpuKernel::BruteByte, GpuKernel::Scan][i % 3];
            for (kernel, want) in [
                (GpuKernel::Scan, Want::Count),
                (GpuKernel::Scan, Want::Count),
                (between, Want::Lines),
                (GpuKernel::Scan, Want::Count),
                (GpuKernel::Scan, Want::Lines),
                (GpuKernel::Scan, Want::Count),
            ] {
                let r = g.search(&corpus, &q, kernel, want).unwrap();
                let what = format!("{p:?} {f} {kernel} {want:?} {max_segment:?}");
                assert_eq!(r.docs[0].count, exp.count, "{what}");
                if want == Want::Lines {
                    assert_eq!(r.docs[0].lines, exp.lines, "{what}");
                }
            }
            // Several literals leave their own bits behind.
            let r = g
                .search(&corpus, &many, GpuKernel::Scan, Want::Lines)
                .unwrap();
            assert_eq!(r.docs[0].lines, cpu(&many).lines, "many {max_segment:?}");
            let r = g.search(&corpus, &q, GpuKernel::Scan, Want::Count).unwrap();
            assert_eq!(r.docs[0].count, exp.count, "{p:?} after many");
        }
    }
}

/// A line larger than the segment maximum is searched on the CPU and merged.
#[test]
fn oversized_line_goes_to_the_cpu() {
    let mut hay = b"short needle\nno\n".to_vec();
    hay.extend(std::iter::repeat_n(b'z', 200));
    hay.extend_from_slice(b"needle");
    hay.extend(std::iter::repeat_n(b'z', 50));
    hay.extend_from_slice(b"\nneedle again\n");
    hay.extend(std::iter::repeat_n(b'q', 300));
    for f in ["", "v", "i"] {
        check(
            &hay,
            &fixed(b"needle", f),
            Some(64),
            &format!("oversized -{f}"),
        );
    }
}

#[test]
fn max_count_applies_after_invert() {
    let Some(ctx) = ctx() else { return };
    let corpus = Corpus::from_bytes("t", b"a\nb\na\nb\na\n".to_vec());
    let g = GpuCorpus::upload(ctx, &corpus).unwrap();
    for (flags, m) in [("", 2u64), ("v", 1)] {
        let q = fixed(b"a", flags);
        let exp = search_doc(
            &corpus.docs()[0],
            &q,
            &CpuOptions {
                max_count: Some(m),
                ..Default::default()
            },
        );
        for want in [Want::Count, Want::Lines] {
            let r = g
                .search_max(&corpus, &q, GpuKernel::Scan, want, Some(m))
                .unwrap();
            assert_eq!(r.docs[0].count, exp.count);
            if want == Want::Lines {
                assert_eq!(r.docs[0].lines, exp.lines);
            }
        }
    }
}

/// Many matches: brute-byte's append buffer overflows and is re-run with
/// an exact allocation, dropping nothing.
#[test]
fn brute_byte_overflow_retries() {
    let Some(ctx) = ctx() else { return };
    let hay: Vec<u8> = b"aaaaaaaaaaaaaaa\n".repeat(10_000);
    let corpus = Corpus::from_bytes("t", hay.clone());
    let g = GpuCorpus::upload(ctx, &corpus).unwrap();
    let q = fixed(b"aa", "");
    let r = g
        .search(&corpus, &q, GpuKernel::BruteByte, Want::Lines)
        .unwrap();
    let pos = r.positions.unwrap();
    assert_eq!(pos[0], naive_positions(&hay, b"aa", false));
    assert!(pos[0].len() > 65_536);
    assert_eq!(r.docs[0].count, 10_000);
    // Dense candidates also overflow scan's workgroup queue (2048 entries
    // for 4096 bytes): the overflow is verified in place.
    let r = g
        .search(&corpus, &fixed(b"a", ""), GpuKernel::Scan, Want::Lines)
        .unwrap();
    assert_eq!(r.docs[0].count, 10_000);
    let small = Corpus::from_bytes("t", hay[..20_000].to_vec());
    check_corpus(ctx, &small, &fixed(b"a", "i"), None, "dense candidates");
}

#[test]
fn loghub_logs() {
    let Some(ctx) = ctx() else { return };
    let dir = std::path::Path::new("/work/shared/data/loghub");
    let Ok(rd) = std::fs::read_dir(dir) else {
        eprintln!("loghub logs absent: skipped");
        return;
    };
    let mut corpus = Corpus::new();
    let mut names: Vec<_> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    names.sort();
    for p in &names {
        corpus.push(Document::open(p, Default::default()).unwrap());
    }
    if corpus.docs().is_empty() {
        eprintln!("loghub logs absent: skipped");
        return;
    }
    for (p, f) in [
        (&b"error"[..], "i"),
        (b"INFO", ""),
        (b"block", "v"),
        (b"java.lang", ""),
        (b"x", ""),
        (b"Exception", "i"),
    ] {
        check_corpus(ctx, &corpus, &fixed(p, f), Some(100 << 10), "loghub");
    }
}

fn arb_corpus() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(b"abAB \n\r.x".to_vec()), 0..400)
}

fn arb_pattern() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(b"abAB .x".to_vec()), 1..6)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_corpora_match_the_oracles(
        data in arb_corpus(),
        pat in arb_pattern(),
        i in any::<bool>(),
        v in any::<bool>(),
        seg in prop::sample::select(vec![None, Some(8u64), Some(33), Some(128)]),
    ) {
        let Some(ctx) = ctx() else { return Ok(()) };
        let flags = format!("{}{}", if i { "i" } else { "" }, if v { "v" } else { "" });
        let q = fixed(&pat, &flags);
        let corpus = Corpus::from_bytes("p", data.clone());
        check_corpus(ctx, &corpus, &q, seg, "proptest");
        // And the naive oracle of common/ agrees with the GPU's scan.
        let g = GpuCorpus::upload(ctx, &corpus).unwrap();
        let r = g.search(&corpus, &q, GpuKernel::Scan, Want::Lines).unwrap();
        let exp = naive(&data, std::slice::from_ref(&pat), Syntax::Fixed, Flags::parse(&flags));
        prop_assert_eq!(&r.docs[0].lines, &exp);
    }
}

#[test]
fn regex_literal_is_gpu_capable() {
    let q = QueryBuilder::new().build(&["ERROR_503"]).unwrap();
    assert_eq!(unsupported_reason(&q), None);
    check(b"a ERROR_503\nb\nERROR_503", &q, None, "regex literal");
}

/// ASCII -i folds exactly the 26 letters: every letter in either case, and
/// the bytes next to them (`@ [ \` {`, whose codes differ from a letter's by
/// 0x20 or 1) must not fold. Catches a folding mask off by one letter.
#[test]
fn every_letter_folds_and_nothing_else() {
    let Some(ctx) = ctx() else { return };
    let mut hay = Vec::new();
    for c in (b'A'..=b'Z').chain(b'a'..=b'z').chain(*b"@[`{^~_") {
        hay.extend_from_slice(&[b'.', c, b'.', b'\n']);
    }
    let corpus = Corpus::from_bytes("letters", hay);
    for c in (b'a'..=b'z').chain(b'A'..=b'Z').chain(*b"@[`{") {
        for flags in ["i", ""] {
            for pat in [vec![c], vec![b'.', c, b'.']] {
                check_corpus(ctx, &corpus, &fixed(&pat, flags), None, "letters");
            }
        }
    }
}
