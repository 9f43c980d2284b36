//! The retention bound (`serve --follow --retain` / `--max-resident`,
//! `Session::prepare_eviction` + `apply_eviction`): after appends past
//! the bound, every query kind answers as a fresh session over the kept
//! suffix and as the naive oracle over it, with the line numbers of the
//! whole file; on the CPU, on one GPU (lavapipe forced, 4 KiB segments)
//! and on two devices with a host tier. Boundary sweeps: the bound at a
//! line edge, a line larger than the bound, everything evicted but the
//! newest line, every bound over one corpus.

mod common;

use common::{build, copts, naive, opts, pats, Flags, Rng};
use logsieve::corpus::Document;
use logsieve::gpu::{GpuContext, GpuSelection, GpuTuning, UploadOptions};
use logsieve::rg_json::RgJson;
use logsieve::session::Retention;
use logsieve::stats::{Columns, StatsQuery};
use logsieve::{BackendChoice, Corpus, Session, Syntax, Tuning, Want};

/// 2026-11-25T00:00:00Z in ms.
const T0: u64 = 1_795_564_800_000;

/// Random stamped log lines (every line has its own time, increasing),
/// their times appended to `times`.
fn lines(rng: &mut Rng, n: usize, t: &mut u64, times: &mut Vec<i64>) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..n {
        *t += rng.below(4000);
        let ms = *t;
        let (h, m, s) = (ms / 3_600_000 % 24, ms / 60_000 % 60, ms / 1000 % 60);
        let host = format!("web-{:02}", rng.below(5));
        let level = ["INFO", "ERROR", "WARN", "DEBUG"][rng.below(4) as usize];
        let ts = format!("2026-11-25T{h:02}:{m:02}:{s:02}Z");
        let line = match rng.below(5) {
            0 => format!("{ts} {host} {level} x\n"),
            1 => format!("{ts} {host} {level} eror timeout user=7{s}\n"),
            _ => format!(
                "{ts} {host} {level} GET /api status=5{:02} {} 12ms from 192.168.1.{}\n",
                rng.below(100),
                rng.below(1000),
                rng.below(255)
            ),
        };
        out.extend_from_slice(line.as_bytes());
        times.push((T0 + ms) as i64);
    }
    out
}

fn cases() -> Vec<(Vec<Vec<u8>>, Syntax, Flags)> {
    let f = Flags::default;
    vec![
        (pats(&["ERROR"]), Syntax::Fixed, f()),
        (pats(&["error"]), Syntax::Fixed, Flags::parse("i")),
        (pats(&["GET /"]), Syntax::Fixed, Flags::parse("v")),
        (pats(&[r"status=5\d\d"]), Syntax::Regex, f()),
        (
            pats(&["ERROR", "192.168.1", "timeout", "user="]),
            Syntax::Fixed,
            f(),
        ),
        (pats(&["eror"]), Syntax::Fuzzy(1), Flags::parse("i")),
        (pats(&["WARN"]), Syntax::Fixed, Flags::parse("w")),
    ]
}

/// The whole history of one document: every byte appended, each line's
/// time.
#[derive(Default, Clone)]
struct History {
    bytes: Vec<u8>,
    times: Vec<i64>,
}

impl History {
    /// Byte offset of line `l` (0-based).
    fn offset_of(&self, l: u64) -> usize {
        let mut n = 0;
        let mut at = 0;
        while n < l {
            at += memchr::memchr(b'\n', &self.bytes[at..]).unwrap() + 1;
            n += 1;
        }
        at
    }
}

fn fresh(s: &Session) -> Session {
    let mut c = Corpus::new();
    for d in s.corpus().docs() {
        c.push(Document::from_bytes(d.name(), d.data().to_vec()));
    }
    let cols = Columns::build(&c, &copts());
    let mut f = Session::new(c);
    f.set_columns(cols);
    f
}

/// `s` holds exactly a suffix of each history, numbered as in the
/// history; every query kind on `backend` equals a fresh session over the
/// kept suffix and the naive oracle (numbers shifted by the evicted
/// lines); the `--json` line numbers are those of the whole file.
fn check(s: &Session, hist: &[History], backend: BackendChoice, what: &str) {
    let fresh = fresh(s);
    for (di, (d, h)) in s.corpus().docs().iter().zip(hist).enumerate() {
        let off = d.first_offset() as usize;
        assert_eq!(
            h.offset_of(d.first_line()),
            off,
            "{what}: doc {di} first line/offset"
        );
        assert_eq!(d.data(), &h.bytes[off..], "{what}: doc {di} kept suffix");
    }
    for (p, syn, f) in cases() {
        let q = build(&p, syn, f).unwrap();
        let r = s.search(&q, &opts(backend)).unwrap();
        if backend == BackendChoice::Gpu {
            assert!(
                r.backend.name.starts_with("gpu"),
                "{what}: {p:?} on {}",
                r.backend.name
            );
        }
        let c = fresh.search(&q, &opts(BackendChoice::Cpu)).unwrap();
        for (di, d) in s.corpus().docs().iter().enumerate() {
            let want = naive(d.data(), &p, syn, f);
            assert_eq!(
                r.docs[di].lines, want,
                "{what}: {p:?} {syn:?} {f:?} doc {di}"
            );
            assert_eq!(c.docs[di].lines, want, "{what}: fresh {p:?} doc {di}");
            // Line numbers of the whole file: the oracle over the whole
            // history, its lines past the evicted ones.
            let all = naive(&hist[di].bytes, &p, syn, f);
            let abs: Vec<u64> = want.iter().map(|l| l + d.first_line()).collect();
            let kept: Vec<u64> = all.into_iter().filter(|&l| l >= d.first_line()).collect();
            if !f.v {
                assert_eq!(abs, kept, "{what}: absolute numbers {p:?} doc {di}");
            }
        }
        let mut co = opts(backend);
        co.want = Want::Count;
        assert_eq!(
            s.search(&q, &co).unwrap().total(),
            c.total(),
            "{what}: count {p:?}"
        );
        if syn == Syntax::Fixed && !f.v && !f.w {
            let a = s.count_per_pattern(&q, &opts(backend)).unwrap();
            let b = fresh
                .count_per_pattern(&q, &opts(BackendChoice::Cpu))
                .unwrap();
            assert_eq!(a.lines, b.lines, "{what}: per-pattern {p:?}");
            assert_eq!(a.occurrences, b.occurrences, "{what}: occurrences {p:?}");
        }
        // `--json`: line_number and absolute_offset of the whole file.
        if syn == Syntax::Fixed && !f.v && !f.i && p.len() == 1 {
            let mut out = Vec::new();
            RgJson::new(&q, s.corpus(), std::time::Duration::ZERO)
                .write_result(&mut out, &r, std::time::Duration::ZERO)
                .unwrap();
            let mut got = Vec::new();
            for l in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                let v: serde_json::Value = serde_json::from_slice(l).unwrap();
                if v["type"] == "match" {
                    got.push((
                        v["data"]["path"]["text"].as_str().unwrap().to_string(),
                        v["data"]["line_number"].as_u64().unwrap(),
                        v["data"]["absolute_offset"].as_u64().unwrap(),
                    ));
                }
            }
            let mut want = Vec::new();
            for (di, d) in s.corpus().docs().iter().enumerate() {
                for l in naive(&hist[di].bytes, &p, syn, f) {
                    if l >= d.first_line() {
                        want.push((d.name().to_string(), l + 1, hist[di].offset_of(l) as u64));
                    }
                }
            }
            assert_eq!(got, want, "{what}: --json numbers {p:?}");
        }
    }
    let err = build(&pats(&["ERROR"]), Syntax::Fixed, Flags::default()).unwrap();
    let cols = fresh.columns().unwrap();
    assert_eq!(
        s.columns().unwrap().oldest(),
        cols.oldest(),
        "{what}: oldest"
    );
    assert_eq!(
        s.columns().unwrap().newest(),
        cols.newest(),
        "{what}: newest"
    );
    for search in [None, Some(&err)] {
        let q = StatsQuery {
            search,
            count_by: vec![0, 1],
            histogram: Some(60_000),
            since: cols.oldest().map(|t| t + 30_000),
            ..Default::default()
        };
        let (a, _) = s.stats(&q, &opts(backend)).unwrap();
        let (b, _) = fresh.stats(&q, &opts(BackendChoice::Cpu)).unwrap();
        assert_eq!(a, b, "{what}: stats search={}", search.is_some());
    }
}

/// Appends random batches to two documents (a third added later), with
/// `r` applied after each; `check` after every eviction. Returns the
/// evictions seen.
fn run(mut s: Session, r: Retention, backend: BackendChoice, seed: u64, what: &str) -> u64 {
    let mut rng = Rng(seed);
    let mut t = 0u64;
    let mut hist = vec![History::default(); s.corpus().docs().len()];
    let mut evictions = 0;
    for round in 0..36 {
        if round == 9 {
            s.push_document(Document::from_bytes("c.log", Vec::new()))
                .unwrap();
            hist.push(History::default());
        }
        let di = rng.below(hist.len() as u64) as usize;
        let n = 1 + rng.below(if round % 7 == 0 { 120 } else { 25 }) as usize;
        let mut times = Vec::new();
        let b = lines(&mut rng, n, &mut t, &mut times);
        let first = s.append_lines(di, &b).unwrap();
        assert_eq!(
            first,
            hist[di].times.len() as u64,
            "{what}: append_lines numbers lines of the whole file"
        );
        hist[di].bytes.extend_from_slice(&b);
        hist[di].times.extend(times);
        let held_before = s.corpus().total_bytes();
        let newest = s.columns().and_then(|c| c.newest());
        if let Some(ev) = s.evict(&r).unwrap() {
            evictions += 1;
            assert!(ev.lines > 0 && ev.bytes > 0);
            let held = s.corpus().total_bytes();
            assert_eq!(held_before - held, ev.bytes, "{what}: evicted bytes");
            if let Some(max) = r.max_bytes {
                assert!(held_before > max, "{what}: evicted under the bound");
                let lines: u64 = s.corpus().docs().iter().map(|d| d.lines().len()).sum();
                assert!(
                    held <= max - max / 8 || lines == 1,
                    "{what}: {held} held after evicting for {max}"
                );
            }
            if let (Some(age), None) = (r.max_age_ms, r.max_bytes) {
                // Exactly the lines older than the newest minus the age
                // went (every line is stamped, times increase per file).
                let cutoff = newest.unwrap() - age;
                for (di, d) in s.corpus().docs().iter().enumerate() {
                    let gone = hist[di].times.iter().filter(|&&t| t < cutoff).count() as u64;
                    assert_eq!(d.first_line(), gone, "{what}: doc {di} kept by age");
                }
            }
            check(&s, &hist, backend, &format!("{what} round {round}"));
        }
    }
    check(&s, &hist, backend, &format!("{what} end"));
    evictions
}

fn start(tuning: Tuning) -> Session {
    let mut c = Corpus::new();
    c.push(Document::from_bytes("a.log", Vec::new()));
    c.push(Document::from_bytes("b.log", Vec::new()));
    let cols = Columns::build(&c, &copts());
    let mut s = Session::with_tuning(c, tuning);
    s.set_columns(cols);
    s
}

const BYTES: Retention = Retention {
    max_age_ms: None,
    max_bytes: Some(6_000),
};
const AGE: Retention = Retention {
    max_age_ms: Some(600_000),
    max_bytes: None,
};
const BOTH: Retention = Retention {
    max_age_ms: Some(900_000),
    max_bytes: Some(9_000),
};

#[test]
fn cpu_evictions_answer_as_a_fresh_session_over_the_kept_suffix() {
    for (r, what) in [(BYTES, "bytes"), (AGE, "age"), (BOTH, "both")] {
        let n = run(start(Tuning::default()), r, BackendChoice::Cpu, 7, what);
        assert!(n >= 2, "{what}: only {n} evictions");
    }
}

fn gpu_ctxs(n: usize) -> Option<Vec<GpuContext>> {
    let tuning = GpuTuning {
        gpus: GpuSelection::Count(n),
        ..Default::default()
    };
    logsieve::gpu::or_skip("eviction GPU tests", GpuContext::open_selected(&tuning))
}

fn small() -> UploadOptions {
    UploadOptions {
        max_segment: Some(4096),
        ..Default::default()
    }
}

#[test]
fn gpu_evictions_answer_as_a_fresh_session_over_the_kept_suffix() {
    let Some(ctx) = gpu_ctxs(1) else { return };
    for (r, what) in [(BYTES, "gpu bytes"), (AGE, "gpu age")] {
        let mut s = start(Tuning::default());
        s.attach_gpu_with(&ctx[0], small()).unwrap();
        let n = run(s, r, BackendChoice::Gpu, 11, what);
        assert!(n >= 2, "{what}: only {n} evictions");
    }
}

/// Two devices and a host tier (a GPU memory budget): the kept corpus is
/// laid out again by the same rule.
#[test]
fn two_devices_and_a_host_tier_after_evictions() {
    let Some(ctx) = gpu_ctxs(2) else { return };
    let tuning = Tuning {
        gpu: GpuTuning {
            gpu_memory: Some(4_000),
            ..Default::default()
        },
        ..Default::default()
    };
    let mut s = start(tuning);
    s.attach_gpus_with(&ctx, small(), None).unwrap();
    let n = run(s, BOTH, BackendChoice::Auto, 13, "shards");
    assert!(n >= 2, "shards: only {n} evictions");
}

/// One document of 10-byte lines (`NNNNNNNNN\n`).
fn numbered(from: u64, n: u64) -> Vec<u8> {
    (from..from + n)
        .flat_map(|i| format!("{i:09}\n").into_bytes())
        .collect()
}

fn one_doc() -> Session {
    Session::new(Corpus::from_docs(vec![Document::from_bytes(
        "n.log",
        Vec::new(),
    )]))
}

#[test]
fn bound_at_a_line_edge() {
    let mut s = one_doc();
    let r = Retention {
        max_bytes: Some(100),
        ..Default::default()
    };
    s.append_lines(0, &numbered(0, 10)).unwrap();
    // Exactly the bound: nothing goes.
    assert_eq!(s.evict(&r).unwrap(), None);
    s.append_lines(0, &numbered(10, 1)).unwrap();
    // 110 held: down to 100 - 100/8 = 88 at most: 8 lines (80 bytes).
    let ev = s.evict(&r).unwrap().unwrap();
    assert_eq!((ev.lines, ev.bytes), (3, 30));
    let d = &s.corpus().docs()[0];
    assert_eq!((d.first_line(), d.first_offset()), (3, 30));
    assert_eq!(d.line(0), b"000000003");
    let first = s.append_lines(0, &numbered(11, 1)).unwrap();
    assert_eq!(first, 11, "numbers go on after an eviction");
}

#[test]
fn a_line_larger_than_the_bound_is_kept_alone() {
    let mut s = one_doc();
    let r = Retention {
        max_bytes: Some(50),
        ..Default::default()
    };
    s.append_lines(0, &numbered(0, 3)).unwrap();
    let mut big = vec![b'z'; 99];
    big.push(b'\n');
    s.append_lines(0, &big).unwrap();
    let ev = s.evict(&r).unwrap().unwrap();
    assert_eq!(ev.lines, 3);
    let d = &s.corpus().docs()[0];
    assert_eq!((d.first_line(), d.lines().len()), (3, 1));
    assert_eq!(d.data(), &big[..]);
    // Still over the bound with only the newest line: nothing more goes.
    assert_eq!(s.evict(&r).unwrap(), None);
    // A newer line: the large one goes.
    s.append_lines(0, &numbered(4, 1)).unwrap();
    let ev = s.evict(&r).unwrap().unwrap();
    assert_eq!((ev.lines, ev.bytes), (1, 100));
    assert_eq!(s.corpus().docs()[0].data(), b"000000004\n");
}

/// A bound under one line: everything but the newest line goes; a
/// pending partial line, once whole, is appended with the next number.
/// By age, every line can go (a document left empty keeps its numbers).
#[test]
fn everything_but_the_newest_line() {
    let mut s = one_doc();
    let r = Retention {
        max_bytes: Some(1),
        ..Default::default()
    };
    s.append_lines(0, &numbered(0, 20)).unwrap();
    let ev = s.evict(&r).unwrap().unwrap();
    assert_eq!(ev.lines, 19);
    // The partial line "000000020" completes later.
    let first = s.append_lines(0, b"000000020\n").unwrap();
    assert_eq!(first, 20);
    let q = build(&pats(&["0000000"]), Syntax::Fixed, Flags::default()).unwrap();
    let hits = s.search(&q, &opts(BackendChoice::Cpu)).unwrap();
    let d = &s.corpus().docs()[0];
    let abs: Vec<u64> = hits.docs[0]
        .lines
        .iter()
        .map(|l| l + d.first_line())
        .collect();
    assert_eq!(abs, vec![19, 20]);

    // By age: every line older than the bound, the document emptied.
    let mut c = Corpus::new();
    let mut t = 0;
    let mut times = Vec::new();
    let mut rng = Rng(3);
    c.push(Document::from_bytes(
        "a.log",
        lines(&mut rng, 30, &mut t, &mut times),
    ));
    c.push(Document::from_bytes("b.log", Vec::new()));
    let cols = Columns::build(&c, &copts());
    let mut s = Session::new(c);
    s.set_columns(cols);
    // b.log gets one line an hour later: a.log is older than 10 minutes.
    let late = format!(
        "2026-11-25T{:02}:00:00Z web-01 INFO late\n",
        (t / 3_600_000) + 2
    );
    s.append_lines(1, late.as_bytes()).unwrap();
    let ev = s.evict(&AGE).unwrap().unwrap();
    assert_eq!(ev.lines, 30);
    let a = &s.corpus().docs()[0];
    assert_eq!((a.first_line(), a.data().len()), (30, 0));
    let first = s
        .append_lines(
            0,
            format!(
                "2026-11-25T{:02}:00:01Z web-01 INFO again\n",
                (t / 3_600_000) + 2
            )
            .as_bytes(),
        )
        .unwrap();
    assert_eq!(first, 30);
    let q = build(&pats(&["again"]), Syntax::Fixed, Flags::default()).unwrap();
    let r = s.search(&q, &opts(BackendChoice::Cpu)).unwrap();
    assert_eq!(r.docs[0].lines, vec![0]);
    assert_eq!(s.columns().unwrap().docs()[0].times.len(), 1);
}

/// Every byte bound over one corpus of lines of varied length: held after
/// is at most 7/8 of the bound (or the newest line alone), the minimal
/// prefix went, what is held is a suffix numbered as the whole file.
#[test]
fn every_byte_bound_over_one_corpus() {
    let mut rng = Rng(5);
    let mut data = Vec::new();
    for i in 0..40u64 {
        let n = rng.below(30) as usize;
        data.extend_from_slice(format!("{i:03}").as_bytes());
        data.extend(std::iter::repeat_n(b'.', n));
        data.push(b'\n');
    }
    let total = data.len() as u64;
    let ends: Vec<u64> = data
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .map(|(i, _)| i as u64 + 1)
        .collect();
    for max in 0..=total + 1 {
        let mut s = one_doc();
        s.append_lines(0, &data).unwrap();
        let r = Retention {
            max_bytes: Some(max),
            ..Default::default()
        };
        let ev = s.evict(&r).unwrap();
        if total <= max {
            assert_eq!(ev, None, "max {max}");
            continue;
        }
        let ev = ev.unwrap();
        let target = max - max / 8;
        // The fewest lines whose removal leaves at most the target (the
        // last line always kept).
        let want = ends
            .iter()
            .position(|&e| total - e <= target)
            .map_or(ends.len() as u64 - 1, |i| {
                (i as u64 + 1).min(ends.len() as u64 - 1)
            });
        assert_eq!(ev.lines, want, "max {max}");
        let d = &s.corpus().docs()[0];
        assert_eq!(d.first_line(), want);
        assert_eq!(d.data(), &data[d.first_offset() as usize..], "max {max}");
        assert_eq!(d.first_offset(), ends[want as usize - 1], "max {max}");
    }
}

/// What an eviction costs: 200k generated lines (~39 MB;
/// `LOGSIEVE_EVICT_LINES` sets another count) in one document, a byte
/// bound just under it (1/8 evicted): the preparation beside readers
/// (the kept suffix copied, the columns cut, the GPU upload) and the
/// swap under the lock, CPU and one GPU. Run with `cargo test
/// --workspace --release --test evict -- --ignored eviction_time
/// --nocapture`.
#[test]
#[ignore]
fn eviction_time() {
    let lines = std::env::var("LOGSIEVE_EVICT_LINES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200_000);
    let data = common::generated(lines, 1);
    let total = data.len() as u64;
    for gpu in [false, true] {
        let c = Corpus::from_bytes("g.log", data.clone());
        let cols = Columns::build(&c, &copts());
        let mut s = Session::new(c);
        s.set_columns(cols);
        if gpu {
            let Some(ctx) = gpu_ctxs(1) else { continue };
            s.attach_gpu_with(&ctx[0], UploadOptions::default())
                .unwrap();
        }
        let r = Retention {
            max_bytes: Some(total - 1),
            ..Default::default()
        };
        let t = std::time::Instant::now();
        let mut e = s.prepare_eviction(&r).unwrap().unwrap();
        let prepare = t.elapsed();
        let t = std::time::Instant::now();
        let ev = s.apply_eviction(&mut e).unwrap();
        let swap = t.elapsed();
        let t = std::time::Instant::now();
        drop(e);
        let free = t.elapsed();
        eprintln!(
            "gpu {gpu}: {} of {total} bytes evicted; prepare {prepare:?}, swap under the lock {swap:?}, free after it {free:?}",
            ev.bytes
        );
        assert_eq!(s.has_gpu(), gpu);
    }
}
