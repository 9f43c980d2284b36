//! Fused GPU counts (`session/fuse.rs`, `gpu/fused.rs`): single-literal
//! counts sharing one submission each answer their own query, checked
//! against the naive oracle — batches of random literals over random
//! corpora cut into tiny segments (with a line too long for a segment,
//! searched on the CPU), and many threads counting at once through the
//! session, mixed with searches that are not fused (line ids, `-w`).

mod common;

use common::{build, naive, pats, Flags};
use logsieve::gpu::{GpuContext, UploadOptions};
use logsieve::{BackendChoice, Corpus, Kernel, SearchOptions, Session, Syntax, Want};
use proptest::prelude::*;

fn ctx() -> Option<GpuContext> {
    logsieve::gpu::or_skip("fused count tests", GpuContext::shared())
}

fn gpu_session(ctx: &GpuContext, data: Vec<u8>, max_segment: u64) -> Session {
    let mut s = Session::new(Corpus::from_bytes("t", data));
    s.attach_gpu_with(
        ctx,
        UploadOptions {
            max_segment: Some(max_segment),
            ..Default::default()
        },
    )
    .unwrap();
    s
}

fn oracle(data: &[u8], p: &[u8], f: Flags, max: Option<u64>) -> u64 {
    let n = naive(data, &pats(&[p]), Syntax::Fixed, f).len() as u64;
    max.map_or(n, |m| n.min(m))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// A batch of 1-12 literals (1-6 bytes of a small alphabet, so they
    /// hit, overlap and repeat), each with its own -i / -v, over a random
    /// corpus in segments of 64-512 bytes: every query's count is the
    /// oracle's.
    #[test]
    fn each_query_of_a_batch_answers_alone(
        lines in proptest::collection::vec("[abAB\\- ]{0,40}", 0..60),
        batch in proptest::collection::vec(("[abAB\\-]{1,6}", any::<bool>(), any::<bool>()), 1..12),
        max_segment in 64u64..512,
        max in proptest::option::of(0u64..4),
    ) {
        let Some(ctx) = ctx() else { return Ok(()) };
        let data = lines.join("\n").into_bytes();
        let s = gpu_session(&ctx, data.clone(), max_segment);
        let mut qs = Vec::new();
        let mut flags = Vec::new();
        for (p, i, v) in &batch {
            let f = Flags { i: *i, v: *v, ..Default::default() };
            qs.push(build(&pats(&[p]), Syntax::Fixed, f).unwrap());
            flags.push(f);
        }
        let refs: Vec<&logsieve::Query> = qs.iter().collect();
        let got = s.count_fused_batch(&refs, max).unwrap();
        for (k, (p, _, _)) in batch.iter().enumerate() {
            prop_assert_eq!(got[k][0], oracle(&data, p.as_bytes(), flags[k], max), "{:?} {:?}", p, flags[k]);
        }
    }
}

/// The corpus of the concurrent test: generated lines, one line longer
/// than a segment (searched on the CPU and merged), no final newline.
fn mixed_corpus() -> Vec<u8> {
    let mut data = common::generated(3_000, 7);
    let long = format!(
        "{} ERROR_503 x 192.168.1.7 {}\n",
        "NullPointerException ".repeat(300),
        "error ".repeat(200)
    );
    let mid = data.len() / 2;
    let at = mid + data[mid..].iter().position(|&b| b == b'\n').unwrap() + 1;
    data.splice(at..at, long.into_bytes());
    data.extend_from_slice(b"last line ERROR_503 without newline");
    data
}

#[test]
fn many_threads_counting_at_once_each_get_their_own_answer() {
    let Some(ctx) = ctx() else { return };
    let data = mixed_corpus();
    let s = gpu_session(&ctx, data.clone(), 64 << 10);
    assert!(s.gpu().unwrap().segment_count() > 4);
    // (pattern, flags, -m, line ids wanted): counts are fused; line ids
    // and -w are not, and leave result bits set between batches.
    let table: Vec<(&str, &str, Option<u64>, bool)> = vec![
        ("ERROR_503", "", None, false),
        ("192.168.1", "", None, false),
        ("error", "", None, false),
        ("NullPointerException", "", None, false),
        ("x", "", None, false),
        ("error", "i", None, false),
        ("ERROR_503", "v", None, false),
        ("e", "", Some(5), false),
        ("timeout", "iv", Some(100), false),
        ("ERROR_503", "", None, true),
        ("error", "w", None, false),
        ("absent-pattern", "", None, false),
    ];
    let want: Vec<u64> = table
        .iter()
        .map(|(p, f, m, _)| oracle(&data, p.as_bytes(), Flags::parse(f), *m))
        .collect();
    let queries: Vec<logsieve::Query> = table
        .iter()
        .map(|(p, f, _, _)| build(&pats(&[p]), Syntax::Fixed, Flags::parse(f)).unwrap())
        .collect();
    // Rounds until some submission counted several queries (on lavapipe
    // a scan takes milliseconds: threads queue behind it at once).
    for round in 0..20 {
        std::thread::scope(|sc| {
            for t in 0..8 {
                let (s, table, want, queries) = (&s, &table, &want, &queries);
                sc.spawn(move || {
                    for k in 0..table.len() {
                        let i = (k + t * 5) % table.len();
                        let (_, _, m, lines) = table[i];
                        let opts = SearchOptions {
                            backend: BackendChoice::Gpu,
                            gpu_kernel: Some(Kernel::Scan),
                            want: if lines { Want::Lines } else { Want::Count },
                            max_count: m,
                            ..Default::default()
                        };
                        let r = s.search(&queries[i], &opts).unwrap();
                        assert_eq!(r.total(), want[i], "{:?} (thread {t})", table[i]);
                    }
                });
            }
        });
        let p = s.fusion_profile();
        assert!(p.batches > 0);
        if p.queries > p.batches {
            eprintln!("fused after {} rounds: {p:?}", round + 1);
            return;
        }
    }
    panic!(
        "no submission counted more than one query: {:?}",
        s.fusion_profile()
    );
}

#[test]
fn a_count_cancelled_before_its_turn_answers_nothing() {
    let Some(ctx) = ctx() else { return };
    let s = gpu_session(&ctx, b"a\nb\na\n".to_vec(), 4096);
    let q = build(&pats(&["a"]), Syntax::Fixed, Flags::default()).unwrap();
    let req = logsieve::Request::Search(&q);
    let opts = SearchOptions {
        backend: BackendChoice::Gpu,
        gpu_kernel: Some(Kernel::Scan),
        want: Want::Count,
        ..Default::default()
    };
    let route = s.route(&req, &opts).unwrap();
    let c = logsieve::Cancel::new();
    c.cancel();
    let e = s.execute_with(&req, &route, &opts, &c).unwrap_err();
    assert!(e.is_cancelled(), "{e}");
    match s
        .execute_with(&req, &route, &opts, &logsieve::Cancel::new())
        .unwrap()
    {
        logsieve::Answer::Search(r) => assert_eq!(r.total(), 2),
        other => panic!("{other:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Several literals of 4-7 bytes (a small alphabet, so they hit,
    /// overlap, repeat and hold one another) counted in one many-literal
    /// pass, each with its own -v and the batch's -m, over one document in
    /// segments of 64-512 bytes with a line too long for a segment: every
    /// query's count is the oracle's, and the scans' of the same batch.
    #[test]
    fn one_pass_counts_equal_separate_counts(
        lines in proptest::collection::vec("[abAB\\- ]{0,40}", 0..60),
        batch in proptest::collection::vec(("[abAB\\-]{4,7}", any::<bool>()), 2..10),
        max_segment in 64u64..512,
        max in proptest::option::of(0u64..4),
    ) {
        let Some(ctx) = ctx() else { return Ok(()) };
        let mut lines = lines;
        lines.push(format!("{}ab-a", "abAB-".repeat(200)));
        let data = lines.join("\n").into_bytes();
        let s = gpu_session(&ctx, data.clone(), max_segment);
        let mut qs = Vec::new();
        let mut flags = Vec::new();
        for (p, v) in &batch {
            let f = Flags { v: *v, ..Default::default() };
            qs.push(build(&pats(&[p]), Syntax::Fixed, f).unwrap());
            flags.push(f);
        }
        let refs: Vec<&logsieve::Query> = qs.iter().collect();
        let got = s.count_in_one_pass_batch(&refs, max).unwrap();
        let scans = s.count_fused_batch(&refs, max).unwrap();
        for (k, (p, _)) in batch.iter().enumerate() {
            prop_assert_eq!(got[k][0], oracle(&data, p.as_bytes(), flags[k], max), "{:?} {:?}", p, flags[k]);
            prop_assert_eq!(&got[k], &scans[k]);
        }
    }
}

/// REGRESSION (the proptest above): a corpus whose every line is longer
/// than a segment has no resident segment, and the one pass refused it.
#[test]
fn one_pass_counts_a_corpus_of_oversized_lines() {
    let Some(ctx) = ctx() else { return };
    let data = format!("{}ab-a", "abAB-".repeat(200)).into_bytes();
    let s = gpu_session(&ctx, data.clone(), 64);
    let q = build(&pats(&["ab-a"]), Syntax::Fixed, Flags::default()).unwrap();
    let v = build(&pats(&["bAB-"]), Syntax::Fixed, Flags::parse("v")).unwrap();
    let got = s.count_in_one_pass_batch(&[&q, &v], None).unwrap();
    assert_eq!(got, s.count_fused_batch(&[&q, &v], None).unwrap());
    assert_eq!(got[0][0], oracle(&data, b"ab-a", Flags::default(), None));
    assert_eq!(got[1][0], oracle(&data, b"bAB-", Flags::parse("v"), None));
}

#[test]
fn one_pass_refuses_what_it_cannot_count() {
    let Some(ctx) = ctx() else { return };
    let s = gpu_session(&ctx, b"abcd\nxyz\n".to_vec(), 4096);
    let short = build(&pats(&["ab"]), Syntax::Fixed, Flags::default()).unwrap();
    let folded = build(&pats(&["abcd"]), Syntax::Fixed, Flags::parse("i")).unwrap();
    let ok = build(&pats(&["abcd"]), Syntax::Fixed, Flags::default()).unwrap();
    assert!(s.count_in_one_pass_batch(&[&ok, &short], None).is_err());
    assert!(s.count_in_one_pass_batch(&[&ok, &folded], None).is_err());
    assert_eq!(
        s.count_in_one_pass_batch(&[&ok, &ok], None).unwrap(),
        vec![vec![1], vec![1]]
    );
}

/// Many threads asking the same count at once: each gets the right
/// answer, and some are answered by another's run (`session/flight.rs`).
#[test]
fn identical_counts_at_once_share_a_run() {
    let Some(ctx) = ctx() else { return };
    let data = mixed_corpus();
    let s = gpu_session(&ctx, data.clone(), 64 << 10);
    let q = build(&pats(&["ERROR_5\\d\\d"]), Syntax::Regex, Flags::default()).unwrap();
    let want = naive(
        &data,
        &pats(&["ERROR_5\\d\\d"]),
        Syntax::Regex,
        Flags::default(),
    )
    .len() as u64;
    let opts = SearchOptions {
        backend: BackendChoice::Gpu,
        want: Want::Count,
        ..Default::default()
    };
    for round in 0..20 {
        std::thread::scope(|sc| {
            for _ in 0..8 {
                sc.spawn(|| {
                    for _ in 0..4 {
                        assert_eq!(s.search(&q, &opts).unwrap().total(), want);
                    }
                });
            }
        });
        if s.coalesced_counts() > 0 {
            eprintln!("coalesced after {} rounds", round + 1);
            return;
        }
    }
    panic!("no count was answered by a concurrent run");
}
