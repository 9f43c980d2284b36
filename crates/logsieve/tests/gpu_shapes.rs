//! Lines grouped by shape on the GPU (`Session::group_shapes`, the
//! `shape_key` and `shape_mark` kernels) against the CPU's grouping
//! (`patterns::shape::group_in_order`, the reference): the same groups,
//! first lines, varying tokens and per-line groups, on generated logs in
//! small segments, random picks of their lines, random lines over a small
//! alphabet, boundary lines (CRLF, empty, spaces only, delimiters, non-ASCII
//! bytes, a last line without `\n`, digit tokens around the 64th) and the
//! Loghub samples (skipped when absent). The templates mined from the GPU's
//! groups are the CPU's.

mod common;

use logsieve::gen::SplitMix64;
use logsieve::gpu::{GpuContext, UploadOptions};
use logsieve::patterns::shape::{group_in_order, Shapes};
use logsieve::patterns::{Miner, MinerOptions};
use logsieve::{BackendChoice, Corpus, Document, Session};

fn ctx() -> Option<&'static GpuContext> {
    common::gpu::ctx("GPU shape grouping")
}

/// A session over `docs` on the GPU in segments of at most `seg` bytes.
fn session(c: &GpuContext, docs: &[Vec<u8>], seg: u64) -> Session {
    let docs = docs
        .iter()
        .enumerate()
        .map(|(i, d)| Document::from_bytes(format!("d{i}"), d.clone()))
        .collect();
    let mut s = Session::new(Corpus::from_docs(docs));
    s.attach_gpu_with(
        c,
        UploadOptions {
            max_segment: Some(seg),
            ..Default::default()
        },
    )
    .expect("upload");
    s
}

/// Every line of every document.
fn all(s: &Session) -> Vec<(usize, Vec<u64>)> {
    (0..s.corpus().docs().len())
        .map(|d| (d, (0..s.corpus().docs()[d].lines().len()).collect()))
        .collect()
}

/// The picked lines, in order.
fn lines_of<'a>(s: &'a Session, picked: &[(usize, Vec<u64>)]) -> Vec<&'a [u8]> {
    picked
        .iter()
        .flat_map(|(d, ls)| ls.iter().map(move |&l| s.corpus().docs()[*d].line(l)))
        .collect()
}

/// The GPU's groups of `picked` are the reference's, and so are the
/// templates mined from them.
fn check(s: &Session, picked: &[(usize, Vec<u64>)], what: &str) -> Shapes {
    let lines = lines_of(s, picked);
    let want = group_in_order(&lines);
    let got = s
        .group_shapes(picked, BackendChoice::Gpu)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(got.backend, "gpu", "{what}");
    assert_eq!(got.shapes, want, "{what}: {} lines", lines.len());
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let (mut ma, mut mb) = (
        Miner::new(MinerOptions::default()),
        Miner::new(MinerOptions::default()),
    );
    ma.add_grouped(&got.shapes, |i| lines[i], &mut a);
    mb.add_in_order(&lines, &mut b);
    assert_eq!(a, b, "{what}: templates per line");
    assert_eq!(ma.templates(), mb.templates(), "{what}: templates");
    got.shapes
}

#[test]
fn generated_logs_in_small_segments() {
    let Some(c) = ctx() else { return };
    for (lines, seg) in [(3_000u64, 1 << 14), (20_000, 1 << 16), (20_000, 1 << 30)] {
        let docs = vec![
            common::generated(lines, 7),
            common::generated(lines / 3, 11),
        ];
        let s = session(c, &docs, seg);
        let shapes = check(&s, &all(&s), &format!("{lines} lines, segments of {seg}"));
        assert!(shapes.groups.len() > 10, "{} groups", shapes.groups.len());
        assert!(shapes.groups.iter().any(|g| g.varies.contains(&true)));
    }
}

#[test]
fn random_picks_and_orders() {
    let Some(c) = ctx() else { return };
    let docs = vec![common::generated(6_000, 3), common::generated(4_000, 5)];
    let s = session(c, &docs, 1 << 15);
    let mut rng = SplitMix64(9);
    for round in 0..6 {
        let keep = 1 + rng.below(4);
        let mut picked: Vec<(usize, Vec<u64>)> = (0..2)
            .map(|d| {
                let n = s.corpus().docs()[d].lines().len();
                (d, (0..n).filter(|_| rng.below(keep) == 0).collect())
            })
            .collect();
        if round % 2 == 1 {
            picked.reverse();
        }
        if round == 5 {
            picked[0].1.clear();
        }
        check(&s, &picked, &format!("round {round}, one line in {keep}"));
    }
    let none: Vec<(usize, Vec<u64>)> = vec![(0, vec![]), (1, vec![])];
    assert_eq!(check(&s, &none, "no lines"), Shapes::default());
}

#[test]
fn random_lines_over_a_small_alphabet() {
    let Some(c) = ctx() else { return };
    const ALPHABET: &[u8] = b"ab19 =,.:[]\r\t\xc3\xa9";
    let mut rng = SplitMix64(21);
    for seed in 0..8 {
        let mut doc = Vec::new();
        for _ in 0..1_500 {
            // Few shapes, so that groups hold many lines.
            let len = rng.below(if seed % 2 == 0 { 8 } else { 40 });
            for _ in 0..len {
                doc.push(ALPHABET[rng.below(ALPHABET.len() as u64) as usize]);
            }
            doc.push(b'\n');
        }
        if seed % 3 == 0 {
            doc.pop();
        }
        let s = session(c, &[doc], 1 << (10 + seed % 4));
        check(&s, &all(&s), &format!("alphabet, seed {seed}"));
    }
}

#[test]
fn boundary_lines() {
    let Some(c) = ctx() else { return };
    let digits = |n: usize, v: usize| -> Vec<u8> {
        (0..n)
            .map(|i| format!("{}", if i == v { 99 } else { i }))
            .collect::<Vec<_>>()
            .join(" ")
            .into_bytes()
    };
    let mut lines: Vec<Vec<u8>> = vec![
        b"".to_vec(),
        b"   ".to_vec(),
        b"\r".to_vec(),
        b"a 1\r".to_vec(),
        b"a 2\r".to_vec(),
        b"a 2".to_vec(),
        b"  lead and trail  ".to_vec(),
        b"  lead and trail  ".to_vec(),
        b"k=v1 k=v2 [x] (y) {z}".to_vec(),
        b"k=v3 k=v2 [x] (y) {z}".to_vec(),
        b"caf\xc3\xa9 7 \xff\xfe".to_vec(),
        b"caf\xc3\xa9 8 \xff\xfe".to_vec(),
        b"\ttab 1".to_vec(),
        b"\ttab 22".to_vec(),
        b"1".to_vec(),
        b"2".to_vec(),
        b"=".to_vec(),
        b"x".repeat(3_000),
    ];
    // 70 digit tokens: the varying one is the 10th, the 63rd, the 64th.
    for v in [9, 62, 63] {
        lines.push(digits(70, usize::MAX));
        lines.push(digits(70, v));
    }
    let doc: Vec<u8> = lines.join(&b"\n"[..]);
    for seg in [1 << 12, 1 << 20] {
        let s = session(c, std::slice::from_ref(&doc), seg);
        let shapes = check(&s, &all(&s), &format!("boundary lines, segments of {seg}"));
        let g = &shapes.groups[shapes.of_line[lines.len() - 1] as usize];
        assert_eq!(g.count, 6, "the 70-token lines are one shape");
    }
    // A varying digit token past the 64th: that group is compared on the
    // host.
    let wide = [digits(70, usize::MAX), digits(70, 65), digits(70, 3)].join(&b"\n"[..]);
    let s = session(c, &[wide], 1 << 20);
    let shapes = check(&s, &all(&s), "a varying 66th digit token");
    assert_eq!(shapes.groups.len(), 1);
    assert_eq!(shapes.groups[0].varies.iter().filter(|&&v| v).count(), 2);
    // A line longer than a segment is held on the host: the GPU refuses,
    // the CPU groups (`Auto`), and the groups are the reference's.
    let long = [b"a 1".to_vec(), b"y".repeat(5_000), b"a 2".to_vec()].join(&b"\n"[..]);
    let s = session(c, &[long], 1 << 12);
    let picked = all(&s);
    let err = s.group_shapes(&picked, BackendChoice::Gpu).unwrap_err();
    assert!(err.to_string().contains("held on the host"), "{err}");
    let auto = s.group_shapes(&picked, BackendChoice::Auto).expect("auto");
    assert_eq!(auto.backend, "cpu");
    assert!(auto
        .note
        .as_deref()
        .is_some_and(|n| n.contains("held on the host")));
    assert_eq!(auto.shapes, group_in_order(&lines_of(&s, &picked)));
}

#[test]
fn loghub_samples() {
    let Some(c) = ctx() else { return };
    let dir = std::path::Path::new("/work/shared/data/loghub");
    let Ok(entries) = std::fs::read_dir(dir) else {
        eprintln!("skipped: {} is absent", dir.display());
        return;
    };
    let mut files: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with("_2k.log"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no *_2k.log in {}", dir.display());
    for p in files {
        let s = session(c, &[std::fs::read(&p).expect("read")], 1 << 16);
        check(&s, &all(&s), &p.display().to_string());
    }
}
