//! Lines appended to a GPU-resident corpus in place (`GpuCorpus::append`
//! through `Session::append_lines` / `push_document`): after many appends
//! of random sizes into tiny segments — lines cut at batch edges, a batch
//! larger than a segment, a line larger than a segment, a new document —
//! every query kind answers as a fresh session over the same bytes and as
//! the naive oracle; and an append of N bytes writes O(N) to the device.

mod common;

use common::{build, copts, naive, opts, pats, Flags, Rng};
use logsieve::corpus::Document;
use logsieve::gpu::{GpuContext, UploadOptions};
use logsieve::stats::{Columns, StatsQuery};
use logsieve::{BackendChoice, Corpus, Kernel, Session, Syntax, Want};

fn ctx() -> Option<GpuContext> {
    logsieve::gpu::or_skip("GPU append tests", GpuContext::shared())
}

/// The query kinds checked: (patterns, syntax, flags).
fn cases() -> Vec<(Vec<Vec<u8>>, Syntax, Flags)> {
    let f = Flags::default;
    vec![
        (pats(&["ERROR"]), Syntax::Fixed, f()),
        (pats(&["error"]), Syntax::Fixed, Flags::parse("i")),
        (pats(&["GET /"]), Syntax::Fixed, Flags::parse("v")),
        (pats(&[r"status=5\d\d"]), Syntax::Regex, f()),
        (pats(&[r"\d{3} \w+ms"]), Syntax::Regex, f()),
        (
            pats(&[r"[a-z]+=[0-9]{2}\b"]),
            Syntax::Regex,
            Flags::parse("i"),
        ),
        (
            pats(&["ERROR", "192.168.1", "timeout", "user="]),
            Syntax::Fixed,
            f(),
        ),
        (pats(&["eror"]), Syntax::Fuzzy(1), Flags::parse("i")),
        (pats(&["WARN"]), Syntax::Fixed, Flags::parse("w")),
    ]
}

/// Every query kind on `gpu` (forced) equals `fresh` (CPU) and the naive
/// oracle over `docs`.
fn check(gpu: &Session, fresh: &Session, docs: &[Vec<u8>], what: &str) {
    assert!(gpu.has_gpu(), "{what}: the GPU still holds the corpus");
    let mut tier1 = 0;
    for (p, syn, f) in cases() {
        let q = build(&p, syn, f).unwrap();
        let g = gpu.search(&q, &opts(BackendChoice::Gpu)).unwrap();
        assert!(
            g.backend.name.starts_with("gpu"),
            "{what}: {p:?} ran on {}",
            g.backend.name
        );
        let c = fresh.search(&q, &opts(BackendChoice::Cpu)).unwrap();
        for (di, d) in docs.iter().enumerate() {
            let want = naive(d, &p, syn, f);
            assert_eq!(
                g.docs[di].lines, want,
                "{what}: gpu {p:?} {syn:?} {f:?} doc {di}"
            );
            assert_eq!(c.docs[di].lines, want, "{what}: cpu {p:?} doc {di}");
        }
        // Tier 1 forced (the literal kernel `scan`, verified on the GPU by
        // shift-and over the candidate lists): REGRESSION, the lists were
        // kept across appends that added segments, and the next tier-1
        // query panicked.
        if syn == Syntax::Regex {
            let mut t1 = opts(BackendChoice::Gpu);
            t1.gpu_kernel = Some(Kernel::Scan);
            if let Ok(r) = gpu.search(&q, &t1) {
                tier1 += 1;
                for (di, d) in docs.iter().enumerate() {
                    assert_eq!(
                        r.docs[di].lines,
                        naive(d, &p, syn, f),
                        "{what}: tier 1 {p:?} doc {di} ({})",
                        r.backend.name
                    );
                }
            }
        }
        // Counts only (the count kernels, fused counts for one literal).
        let mut co = opts(BackendChoice::Gpu);
        co.want = Want::Count;
        let gc = gpu.search(&q, &co).unwrap();
        assert_eq!(gc.total(), c.total(), "{what}: gpu count {p:?}");
        if syn == Syntax::Fixed && !f.v && !f.w {
            let a = gpu
                .count_per_pattern(&q, &opts(BackendChoice::Gpu))
                .unwrap();
            let b = fresh
                .count_per_pattern(&q, &opts(BackendChoice::Cpu))
                .unwrap();
            assert_eq!(a.lines, b.lines, "{what}: per-pattern lines {p:?}");
            assert_eq!(
                a.occurrences, b.occurrences,
                "{what}: per-pattern occurrences {p:?}"
            );
        }
    }
    assert!(tier1 > 0, "{what}: no regex ran through tier 1");
    let err = build(&pats(&["ERROR"]), Syntax::Fixed, Flags::default()).unwrap();
    let cols = fresh.columns().expect("columns set");
    for search in [None, Some(&err)] {
        let q = StatsQuery {
            search,
            count_by: vec![0, 1],
            histogram: Some(60_000),
            since: cols.oldest().map(|t| t + 30_000),
            ..Default::default()
        };
        // The GPU's stats against the CPU's over the same (extended)
        // columns: columns extended batch by batch may differ from a
        // rebuild (lines before a document's first timestamp keep none:
        // `Columns::extend`).
        let (a, ra) = gpu.stats(&q, &opts(BackendChoice::Gpu)).unwrap();
        let (b, _) = gpu.stats(&q, &opts(BackendChoice::Cpu)).unwrap();
        assert!(
            ra.name.starts_with("gpu"),
            "{what}: stats ran on {}",
            ra.name
        );
        assert_eq!(a, b, "{what}: stats search={}", search.is_some());
        // Without a time window or histogram: as a fresh session.
        let q = StatsQuery {
            search,
            count_by: vec![0, 1],
            ..Default::default()
        };
        let (a, _) = gpu.stats(&q, &opts(BackendChoice::Gpu)).unwrap();
        let (b, _) = fresh.stats(&q, &opts(BackendChoice::Cpu)).unwrap();
        assert_eq!(a, b, "{what}: stats by field, search={}", search.is_some());
    }
}

fn fresh(docs: &[Vec<u8>]) -> Session {
    let mut c = Corpus::new();
    for (i, d) in docs.iter().enumerate() {
        c.push(Document::from_bytes(format!("d{i}"), d.clone()));
    }
    let cols = Columns::build(&c, &copts());
    let mut s = Session::new(c);
    s.set_columns(cols);
    s
}

/// Random log lines, some short (so segments run out of lines before
/// bytes), with timestamps that mostly increase.
fn lines(rng: &mut Rng, n: usize, t0: &mut u64) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..n {
        *t0 += rng.below(4000);
        let (m, s) = ((*t0 / 60_000) % 60, (*t0 / 1000) % 60);
        let host = format!("web-{:02}", rng.below(5));
        let level = ["INFO", "ERROR", "WARN", "DEBUG"][rng.below(4) as usize];
        match rng.below(6) {
            0 => out.extend_from_slice(b"x\n"),
            1 => out.extend_from_slice(b"\n"),
            2 => out.extend_from_slice(
                format!("2026-11-25T10:{m:02}:{s:02}Z {host} {level} eror timeout user=7{s}\n")
                    .as_bytes(),
            ),
            _ => out.extend_from_slice(
                format!(
                    "2026-11-25T10:{m:02}:{s:02}Z {host} {level} GET /api status=5{:02} {} 12ms from 192.168.1.{}\n",
                    rng.below(100),
                    rng.below(1000),
                    rng.below(255)
                )
                .as_bytes(),
            ),
        }
    }
    out
}

#[test]
fn appends_answer_as_a_fresh_session_and_the_oracle() {
    let Some(ctx) = ctx() else { return };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut t0 = 0u64;
    const SEG: u64 = 4096;
    let mut docs = vec![lines(&mut rng, 300, &mut t0)];
    let c = Corpus::from_bytes("d0", docs[0].clone());
    let cols = Columns::build(&c, &copts());
    let _ = c.docs()[0].lines();
    let mut gpu = Session::new(c);
    gpu.set_columns(cols);
    gpu.attach_gpu_with(
        &ctx,
        UploadOptions {
            max_segment: Some(SEG),
            ..Default::default()
        },
    )
    .unwrap();
    let segs0 = gpu.gpu().unwrap().segment_count();
    // The byte stream of each document, cut at random bytes: what a batch
    // holds is up to its last '\n', the rest waits for the next one.
    let mut pending: Vec<Vec<u8>> = vec![Vec::new()];
    for round in 0..40 {
        if round == 5 {
            gpu.push_document(Document::from_bytes("d1", Vec::new()))
                .unwrap();
            docs.push(Vec::new());
            pending.push(Vec::new());
        }
        let di = (rng.below(docs.len() as u64)) as usize;
        let mut stream = match round {
            // A batch larger than a segment.
            7 => lines(&mut rng, 200, &mut t0),
            // A line larger than a segment (the CPU's, as at upload).
            11 => {
                let mut l = vec![b'a'; SEG as usize + 300];
                l.extend_from_slice(b" ERROR eror 192.168.1.1\n");
                l
            }
            _ => {
                let n = rng.below(12) as usize;
                lines(&mut rng, n, &mut t0)
            }
        };
        let cut = rng.below(stream.len() as u64 + 1) as usize;
        let rest = stream.split_off(cut);
        pending[di].extend_from_slice(&stream);
        let whole = pending[di]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let batch: Vec<u8> = pending[di].drain(..whole).collect();
        pending[di].extend_from_slice(&rest);
        gpu.append_lines(di, &batch).unwrap();
        docs[di].extend_from_slice(&batch);
        if round % 4 == 3 || round == 7 || round == 11 {
            check(&gpu, &fresh(&docs), &docs, &format!("round {round}"));
        }
    }
    // The pending tails as last batches.
    for di in 0..docs.len() {
        let mut b = std::mem::take(&mut pending[di]);
        if !b.is_empty() && !b.ends_with(b"\n") {
            b.push(b'\n');
        }
        gpu.append_lines(di, &b).unwrap();
        docs[di].extend_from_slice(&b);
    }
    check(&gpu, &fresh(&docs), &docs, "end");
    let g = gpu.gpu().unwrap();
    assert!(g.segment_count() > segs0, "appends opened segments");
    eprintln!(
        "segments: {segs0} at upload, {} after appends; {} bytes written by appends",
        g.segment_count(),
        g.appended_bytes_written()
    );
}

/// An append of N bytes writes O(N) bytes to the device, however large
/// the corpus; later appends fill the room of the segment the first one
/// opened (no new segment).
#[test]
fn an_append_writes_what_it_adds() {
    let Some(ctx) = ctx() else { return };
    let mut rng = Rng(42);
    let mut t0 = 0u64;
    let first = lines(&mut rng, 20_000, &mut t0);
    let mut gpu = Session::new(Corpus::from_bytes("d0", first.clone()));
    gpu.attach_gpu_with(
        &ctx,
        UploadOptions {
            max_segment: Some(256 << 10),
            ..Default::default()
        },
    )
    .unwrap();
    let corpus = first.len() as u64;
    let mut all = first;
    let mut segs_after_first = None;
    for i in 0..30 {
        let n = 1 + rng.below(40) as usize;
        let b = lines(&mut rng, n, &mut t0);
        let before = gpu.gpu().unwrap().appended_bytes_written();
        gpu.append_lines(0, &b).unwrap();
        let g = gpu.gpu().unwrap();
        let wrote = g.appended_bytes_written() - before;
        let n = b.len() as u64;
        // The bytes and their padding (at most 16 + 128 + 3), the line
        // offsets (4 a line, one more), the hints (4 per 64 bytes, two
        // more), the segment's uniform; a new segment writes a little
        // more padding.
        let lines = b.iter().filter(|&&c| c == b'\n').count() as u64;
        let bound = n + 4 * (lines + 1) + 4 * (n / 64 + 2) + 16 + 16 + 128 + 4;
        assert!(
            wrote <= bound,
            "append {i}: {n} bytes ({lines} lines) wrote {wrote} > {bound}"
        );
        assert!(
            wrote < corpus / 10,
            "append {i} wrote {wrote} of a {corpus}-byte corpus"
        );
        all.extend_from_slice(&b);
        match segs_after_first {
            None => segs_after_first = Some(g.segment_count()),
            Some(s) => assert_eq!(g.segment_count(), s, "append {i} fills the room"),
        }
    }
    assert_eq!(gpu.gpu().unwrap().resident_bytes(), all.len() as u64);
    let q = build(&pats(&["ERROR"]), Syntax::Fixed, Flags::default()).unwrap();
    let r = gpu.search(&q, &opts(BackendChoice::Gpu)).unwrap();
    assert_eq!(
        r.docs[0].lines,
        naive(&all, &pats(&["ERROR"]), Syntax::Fixed, Flags::default())
    );
}

/// The follower's work under the write lock per batch, on a large corpus
/// (CPU; `cargo test --release --test gpu_append -- --ignored
/// --nocapture`): appending batches without room made beforehand (the
/// document's buffer doubles under the lock: a copy of the corpus) and
/// with it ([`Session::make_room`] outside the lock, then `take_room` and
/// `append_lines` under it). Prints p50/p99/max per batch.
/// `LOGSIEVE_APPEND_LINES` sets the corpus (default 2M lines),
/// `LOGSIEVE_APPEND_COLUMNS=0` leaves the stats columns out.
#[test]
#[ignore]
fn append_time_under_the_lock() {
    let lines_n: u64 = std::env::var("LOGSIEVE_APPEND_LINES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000_000);
    let base = common::generated(lines_n, 7);
    let more = common::generated(lines_n, 8);
    let batches: Vec<&[u8]> = {
        let mut v = Vec::new();
        let mut at = 0;
        while at < more.len() {
            let end = (at + (2 << 20)).min(more.len());
            let end = at + more[at..end].iter().rposition(|&b| b == b'\n').unwrap() + 1;
            v.push(&more[at..end]);
            at = end;
        }
        v
    };
    for with_room in [false, true] {
        let c = Corpus::from_bytes("big", base.clone());
        let _ = c.docs()[0].lines();
        let with_cols = std::env::var("LOGSIEVE_APPEND_COLUMNS").as_deref() != Ok("0");
        let cols = with_cols.then(|| Columns::build(&c, &copts()));
        let mut s = Session::new(c);
        if let Some(cols) = cols {
            s.set_columns(cols);
        }
        let mut times = Vec::new();
        for b in &batches {
            let lines = b.iter().filter(|&&c| c == b'\n').count();
            let room = if with_room {
                s.make_room(0, b.len(), lines)
            } else {
                None
            };
            let t = std::time::Instant::now();
            let old = room.map(|r| s.take_room(0, r));
            s.append_lines(0, b).unwrap();
            times.push(t.elapsed().as_secs_f64() * 1e3);
            drop(old);
        }
        assert_eq!(
            s.corpus().docs()[0].data().len(),
            base.len() + more.len(),
            "every batch appended"
        );
        times.sort_by(f64::total_cmp);
        let q = |p: f64| times[((times.len() - 1) as f64 * p) as usize];
        eprintln!(
            "{} lines + {} batches of ~2 MiB, columns {with_cols}, room made outside the \
             lock: {with_room}: ms under the lock p50 {:.2} p99 {:.2} max {:.2} total {:.0}",
            lines_n,
            batches.len(),
            q(0.5),
            q(0.99),
            q(1.0),
            times.iter().sum::<f64>()
        );
    }
}
