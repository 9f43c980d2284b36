//! The follower's file tracker (`corpus::follow`): identity, rotation,
//! truncation, partial lines, new files; and the corpus growing in place
//! (`Session::append_lines`): line index, stats columns, CPU and GPU
//! answers equal to a session built over the final bytes.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use logsieve::corpus::follow::{Change, FollowOptions, Tracker};
use logsieve::corpus::{Document, LineIndex};
use logsieve::stats::{ColumnOptions, Columns, FieldSpec};
use logsieve::{Corpus, QueryBuilder, SearchOptions, Session, Syntax};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("logsieve-tracker-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn opts(idle_ms: u64) -> FollowOptions {
    FollowOptions {
        idle_flush: Duration::from_millis(idle_ms),
        load: logsieve::LoadOptions {
            no_mmap: true,
            search_zip: true,
        },
        ..Default::default()
    }
}

fn append(p: &Path, b: &[u8]) {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(p)
        .unwrap()
        .write_all(b)
        .unwrap();
}

fn lines(from: u64, to: u64) -> Vec<u8> {
    (from..to)
        .map(|n| format!("{n:06} some log text for line {n}\n"))
        .collect::<String>()
        .into_bytes()
}

/// Applies the changes as the server does.
fn apply(corpus: &mut Corpus, changes: Vec<Change>) {
    for c in changes {
        match c {
            Change::NewDoc { doc, name, bytes } => {
                assert_eq!(doc, corpus.docs().len());
                corpus.push(Document::from_bytes(name, bytes));
            }
            Change::Append { doc, bytes } => {
                corpus.append(doc, &bytes).unwrap();
            }
        }
    }
}

fn poll(t: &mut Tracker, c: &mut Corpus) {
    let (changes, errors) = t.poll(c, true);
    assert!(errors.is_empty(), "{errors:?}");
    apply(c, changes);
}

/// Every line of the corpus, in order.
fn all(c: &Corpus) -> Vec<u8> {
    c.docs().iter().flat_map(|d| d.data().to_vec()).collect()
}

fn sorted_lines(b: &[u8]) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = b
        .split(|&c| c == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    v.sort();
    v
}

#[test]
fn partial_line_held_back_until_complete() {
    let d = dir("partial");
    let p = d.join("a.log");
    append(&p, b"one\ntw");
    let (mut t, mut c, e) = Tracker::start(std::slice::from_ref(&d), opts(60_000));
    assert!(e.is_empty());
    assert_eq!(all(&c), b"one\n");
    append(&p, b"o\nthr");
    poll(&mut t, &mut c);
    assert_eq!(all(&c), b"one\ntwo\n");
    append(&p, b"ee\n");
    poll(&mut t, &mut c);
    assert_eq!(all(&c), b"one\ntwo\nthree\n");
}

#[test]
fn idle_partial_line_becomes_a_line() {
    let d = dir("idle");
    let p = d.join("a.log");
    append(&p, b"one\n");
    let (mut t, mut c, _) = Tracker::start(std::slice::from_ref(&d), opts(100));
    append(&p, b"half");
    poll(&mut t, &mut c);
    assert_eq!(all(&c), b"one\n");
    std::thread::sleep(Duration::from_millis(150));
    poll(&mut t, &mut c);
    // Served as the file has it: a last line without a terminator.
    assert_eq!(all(&c), b"one\nhalf");
    assert_eq!(c.docs()[0].lines().len(), 2);
    // REGRESSION: bytes written later became a new line (line numbers
    // stayed one off from a fresh read of the file); they continue it.
    append(&p, b" more\n");
    poll(&mut t, &mut c);
    assert_eq!(all(&c), b"one\nhalf more\n");
    assert_eq!(c.docs()[0].lines().len(), 2);
    assert_eq!(c.docs()[0].line(1), b"half more");
    assert_eq!(t.stats().idle_flushes, 1);
}

#[test]
fn a_settled_file_keeps_its_last_line_at_the_start() {
    let d = dir("settled");
    let p = d.join("a.log");
    append(&p, b"one\nlast");
    // Older than the idle time: the last line is a line now, as a fresh
    // read has it (no terminator added).
    std::thread::sleep(Duration::from_millis(120));
    let (mut t, mut c, _) = Tracker::start(std::slice::from_ref(&d), opts(100));
    assert_eq!(all(&c), b"one\nlast");
    // REGRESSION: appended bytes continue the last line, as in the file.
    append(&p, b" line\nnext\n");
    poll(&mut t, &mut c);
    assert_eq!(all(&c), b"one\nlast line\nnext\n");
    assert_eq!(c.docs()[0].lines().len(), 3);
}

#[test]
fn the_corpus_agrees_with_a_fresh_read_after_every_poll() {
    // Random writes, some ending mid-line, polled with no idle time (a
    // partial line is served at once): the document is the file, and its
    // lines are the file's.
    let d = dir("fresh");
    let p = d.join("a.log");
    append(&p, b"first line\nsecond without end");
    std::thread::sleep(Duration::from_millis(20));
    let (mut t, mut c, _) = Tracker::start(std::slice::from_ref(&d), opts(0));
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..60 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let n = (seed >> 33) % 40;
        let bytes: Vec<u8> = (0..n)
            .map(|i| {
                let r = (seed >> (i % 50)) % 7;
                if r == 0 {
                    b'\n'
                } else {
                    b'a' + (r as u8)
                }
            })
            .collect();
        append(&p, &bytes);
        // A poll reads; the next (no growth, idle) serves a partial line.
        poll(&mut t, &mut c);
        poll(&mut t, &mut c);
        let file = std::fs::read(&p).unwrap();
        assert_eq!(all(&c), file);
        let fresh = Document::from_bytes("x", file);
        assert_eq!(c.docs()[0].lines().len(), fresh.lines().len());
        let l = fresh.lines().len();
        if l > 0 {
            assert_eq!(c.docs()[0].line(l - 1), fresh.line(l - 1));
        }
    }
}

#[test]
fn rename_and_create_no_line_lost_or_doubled() {
    let d = dir("rename");
    let p = d.join("app.log");
    append(&p, &lines(0, 100));
    let (mut t, mut c, _) = Tracker::start(std::slice::from_ref(&d), opts(50));
    std::fs::rename(&p, d.join("app.log.1")).unwrap();
    // The writer still has the old file open.
    append(&d.join("app.log.1"), &lines(100, 120));
    append(&p, &lines(120, 200));
    poll(&mut t, &mut c);
    std::thread::sleep(Duration::from_millis(80));
    poll(&mut t, &mut c);
    poll(&mut t, &mut c);
    assert_eq!(sorted_lines(&all(&c)), sorted_lines(&lines(0, 200)));
    assert_eq!(t.stats().renames, 1);
    assert_eq!(c.docs().len(), 2);
}

#[test]
fn copytruncate_copy_is_not_ingested_and_old_content_stays() {
    let d = dir("copytruncate");
    let p = d.join("app.log");
    append(&p, &lines(0, 100));
    let (mut t, mut c, _) = Tracker::start(std::slice::from_ref(&d), opts(50));
    append(&p, &lines(100, 150));
    // copy, then truncate, before the follower looks: lines 100..150
    // come back from the copy.
    std::fs::copy(&p, d.join("app.log.1")).unwrap();
    File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(0)
        .unwrap();
    append(&p, &lines(150, 160));
    for _ in 0..3 {
        poll(&mut t, &mut c);
    }
    assert_eq!(sorted_lines(&all(&c)), sorted_lines(&lines(0, 160)));
    let s = t.stats();
    assert_eq!(s.truncations, 1);
    assert_eq!(s.copies, 1);
    assert_eq!(c.docs().len(), 1, "the copy is no document of its own");
}

#[test]
fn truncated_and_rewritten_between_polls() {
    let d = dir("rewrite");
    let p = d.join("app.log");
    append(&p, &lines(0, 10));
    let (mut t, mut c, _) = Tracker::start(std::slice::from_ref(&d), opts(50));
    // Truncated and written past the old size before the next poll: the
    // size alone cannot tell; the fingerprint does.
    std::fs::write(&p, lines(10, 40)).unwrap();
    poll(&mut t, &mut c);
    assert_eq!(sorted_lines(&all(&c)), sorted_lines(&lines(0, 40)));
    assert_eq!(t.stats().truncations, 1);
}

/// Found by `crates/logsieve-server/tests/follow_faults.rs` (the fault tests):
/// copytruncate, then the writer writes exactly as many bytes as the file
/// held, all before the next poll. The size alone says nothing changed;
/// the modification time and the fingerprint say it was rewritten. The
/// copy's lines past what was read are recovered, and the new ones read.
#[test]
fn regression_truncated_and_rewritten_to_the_same_size_between_polls() {
    let d = dir("same-size");
    let p = d.join("app.log");
    append(&p, &lines(10, 20));
    let (mut t, mut c, _) = Tracker::start(std::slice::from_ref(&d), opts(50));
    // More lines, the copy, the truncation, and as many bytes as the
    // tracker read (the numbers have the same width: the same size).
    std::thread::sleep(Duration::from_millis(20));
    append(&p, &lines(20, 30));
    std::fs::copy(&p, d.join("app.log.1")).unwrap();
    std::fs::write(&p, lines(30, 40)).unwrap();
    assert_eq!(
        std::fs::metadata(&p).unwrap().len(),
        lines(10, 20).len() as u64
    );
    for _ in 0..3 {
        poll(&mut t, &mut c);
        std::thread::sleep(Duration::from_millis(60));
    }
    assert_eq!(sorted_lines(&all(&c)), sorted_lines(&lines(10, 40)));
    assert_eq!(t.stats().truncations, 1);
}

#[test]
fn small_new_file_waits_then_is_adopted() {
    let d = dir("newfile");
    append(&d.join("a.log"), b"a\n");
    let (mut t, mut c, _) = Tracker::start(std::slice::from_ref(&d), opts(100));
    append(&d.join("b.log"), b"small\n");
    poll(&mut t, &mut c);
    assert_eq!(c.docs().len(), 1, "under 1 KiB and not idle yet: waits");
    std::thread::sleep(Duration::from_millis(150));
    poll(&mut t, &mut c);
    assert_eq!(c.docs().len(), 2);
    assert_eq!(c.docs()[1].data(), b"small\n");
    // A large one at once.
    append(&d.join("c.log"), &lines(0, 100));
    poll(&mut t, &mut c);
    assert_eq!(c.docs().len(), 3);
    assert_eq!(t.stats().new_files, 2);
}

#[test]
fn rotated_gz_is_not_loaded_twice() {
    let d = dir("gz");
    let p = d.join("app.log");
    append(&p, &lines(0, 100));
    let (mut t, mut c, _) = Tracker::start(std::slice::from_ref(&d), opts(50));
    std::fs::rename(&p, d.join("app.log.1")).unwrap();
    poll(&mut t, &mut c);
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(&lines(0, 100)).unwrap();
    std::fs::write(d.join("app.log.1.gz"), e.finish().unwrap()).unwrap();
    std::fs::remove_file(d.join("app.log.1")).unwrap();
    // Under 1 KiB compressed: adopted once idle.
    for _ in 0..2 {
        std::thread::sleep(Duration::from_millis(80));
        poll(&mut t, &mut c);
    }
    assert_eq!(sorted_lines(&all(&c)), sorted_lines(&lines(0, 100)));
    assert_eq!(t.stats().copies, 1);
    // A gzip of something new is loaded.
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(&lines(500, 600)).unwrap();
    std::fs::write(d.join("old.log.gz"), e.finish().unwrap()).unwrap();
    for _ in 0..2 {
        std::thread::sleep(Duration::from_millis(80));
        poll(&mut t, &mut c);
    }
    assert_eq!(
        sorted_lines(&all(&c)),
        sorted_lines(&[lines(0, 100), lines(500, 600)].concat())
    );
}

#[test]
fn appended_line_index_and_columns_equal_a_rebuild() {
    let mut data = Vec::new();
    let mut doc = Document::from_bytes("t", Vec::new());
    let _ = doc.lines();
    let mut rng = 0x1234_5678u64;
    for i in 0..50 {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let mut b = Vec::new();
        for k in 0..(rng % 7) {
            let host = format!("web-{:02}", (rng >> 8) % 5);
            let level = ["INFO", "ERROR", "WARN"][((rng >> 16) % 3) as usize];
            b.extend_from_slice(
                format!(
                    "2026-11-25T08:{:02}:{:02}Z {host} {level} batch {i} line {k}\n",
                    i % 60,
                    (k * 7 + (rng >> 20) % 3) % 60
                )
                .as_bytes(),
            );
        }
        if i % 9 == 0 {
            b.extend_from_slice(b"no timestamp here\n\n");
        }
        doc.append(&b).unwrap();
        data.extend_from_slice(&b);
        assert_eq!(doc.lines().starts(), LineIndex::new(&data).starts());
    }
    // REGRESSION: bytes appended after a last line without a terminator
    // continue it, as in the file (they were refused, and the follower
    // added a `\n`: line numbers stayed one off from a fresh read).
    let mut partial = Document::from_bytes("p", b"x".to_vec());
    assert_eq!(partial.append(b"y\nz").unwrap(), 0);
    assert_eq!(partial.append(b"z\n").unwrap(), 1);
    assert_eq!(partial.data(), b"xy\nzz\n");
    assert_eq!(
        partial.lines().starts(),
        LineIndex::new(b"xy\nzz\n").starts()
    );
    // Cut anywhere, appends give the index of the whole.
    let mut cutdoc = Document::from_bytes("c", Vec::new());
    let _ = cutdoc.lines();
    let mut at = 0;
    while at < data.len() {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let next = (at + 1 + (rng % 90) as usize).min(data.len());
        cutdoc.append(&data[at..next]).unwrap();
        assert_eq!(
            cutdoc.lines().starts(),
            LineIndex::new(&data[..next]).starts()
        );
        at = next;
    }

    // Columns extended batch by batch equal columns built over the end.
    let fields: Vec<FieldSpec> = ["level", "host"]
        .iter()
        .filter_map(|n| FieldSpec::builtin(n))
        .collect();
    let copts = ColumnOptions {
        fields,
        ..Default::default()
    };
    let whole = Corpus::from_bytes("t", data.clone());
    let built = Columns::build(&whole, &copts);
    let cut = memchr_last_nl(&data[..data.len() / 3]);
    let mut grown = Corpus::from_bytes("t", data[..cut].to_vec());
    let mut cols = Columns::build(&grown, &copts);
    let mut at = cut;
    while at < data.len() {
        // Cut anywhere: a batch may end mid-line, the next continue it.
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let next = (at + 1 + (rng % 200) as usize).min(data.len());
        grown.append(0, &data[at..next]).unwrap();
        cols.extend(&grown);
        at = next;
    }
    let (a, b) = (&cols.docs()[0], &built.docs()[0]);
    assert_eq!(a.times, b.times);
    assert_eq!(a.sorted, b.sorted);
    assert_eq!(a.disorder, b.disorder);
    assert_eq!(a.stamped, b.stamped);
    for f in 0..2 {
        let va: Vec<&[u8]> = a.codes[f].iter().map(|&c| value(&cols, f, c)).collect();
        let vb: Vec<&[u8]> = b.codes[f].iter().map(|&c| value(&built, f, c)).collect();
        assert_eq!(va, vb, "field {f}");
    }
    assert_eq!(cols.oldest(), built.oldest());
}

fn value(c: &Columns, f: usize, code: u32) -> &[u8] {
    if code == 0 {
        b""
    } else {
        &c.fields()[f].values[code as usize - 1]
    }
}

fn memchr_last_nl(b: &[u8]) -> usize {
    b.iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1)
}

fn counts(s: &Session, pats: &[&str], syntax: Syntax, icase: bool, gpu: bool) -> Vec<u64> {
    pats.iter()
        .map(|p| {
            let mut b = QueryBuilder::new();
            b.syntax(syntax).case_insensitive(icase);
            let q = b.build(&[p.as_bytes()]).unwrap();
            let opts = SearchOptions {
                // lavapipe is never chosen automatically: force it.
                backend: if gpu {
                    logsieve::BackendChoice::Gpu
                } else {
                    logsieve::BackendChoice::Auto
                },
                ..Default::default()
            };
            let r = s.search(&q, &opts).unwrap();
            if gpu {
                assert!(r.backend.name.starts_with("gpu"), "{}", r.backend.name);
            }
            r.total()
        })
        .collect()
}

/// Appends through the session (CPU, then a GPU when there is one, e.g.
/// lavapipe) answer as a session built over the final bytes.
#[test]
fn session_appends_answer_as_a_fresh_session() {
    let gen = |lines: u64, seed: u64| {
        logsieve::gen::generate(&logsieve::gen::GenOptions {
            lines,
            seed,
            ..Default::default()
        })
    };
    let first = gen(2000, 1);
    let mut cpu = Session::new(Corpus::from_bytes("a", first.clone()));
    let mut gpu = Session::new(Corpus::from_bytes("a", first.clone()));
    let have_gpu = logsieve::gpu::GpuContext::shared()
        .ok()
        .map(|ctx| {
            gpu.attach_gpu_with(
                &ctx,
                logsieve::gpu::UploadOptions {
                    max_segment: Some(64 << 10),
                    ..Default::default()
                },
            )
        })
        .is_some_and(|r| r.is_ok());
    let mut all_a = first;
    let mut all_b = Vec::new();
    let new_b = gen(700, 3);
    cpu.push_document(Document::from_bytes("b", Vec::new()))
        .unwrap();
    gpu.push_document(Document::from_bytes("b", Vec::new()))
        .unwrap();
    for (i, chunk) in gen(3000, 2)
        .split_inclusive(|&c| c == b'\n')
        .collect::<Vec<_>>()
        .chunks(500)
        .enumerate()
    {
        let bytes: Vec<u8> = chunk.concat();
        for s in [&mut cpu, &mut gpu] {
            s.append_lines(0, &bytes).unwrap();
        }
        all_a.extend_from_slice(&bytes);
        if i % 2 == 0 {
            let window = &new_b[all_b.len()..(all_b.len() + 20_000).min(new_b.len())];
            // Every other batch ends mid-line; the next continues it (the
            // GPUs take the corpus again then).
            let take = if i % 4 == 0 {
                memchr_last_nl(window)
            } else {
                window.len() * 2 / 3
            };
            let b = new_b[all_b.len()..all_b.len() + take].to_vec();
            for s in [&mut cpu, &mut gpu] {
                s.append_lines(1, &b).unwrap();
            }
            all_b.extend_from_slice(&b);
        }
        let mut fresh = Corpus::from_bytes("a", all_a.clone());
        fresh.push(Document::from_bytes("b", all_b.clone()));
        let fresh = Session::new(fresh);
        for (pats, syn, ic) in [
            (&["ERROR", "192.168.1", "GET /"][..], Syntax::Fixed, false),
            (&["error"][..], Syntax::Fixed, true),
            (&[r"status=5\d\d", r"\bPOST\b"][..], Syntax::Regex, false),
        ] {
            let want = counts(&fresh, pats, syn, ic, false);
            assert_eq!(counts(&cpu, pats, syn, ic, false), want, "cpu {pats:?}");
            assert_eq!(
                counts(&gpu, pats, syn, ic, have_gpu),
                want,
                "gpu={have_gpu} {pats:?}"
            );
        }
    }
    assert_eq!(gpu.has_gpu(), have_gpu, "the GPU still holds the corpus");
    eprintln!("GPU attached: {have_gpu}");
}

/// REGRESSION: a partial line read before a copytruncate was made a line
/// of its own at the truncation, and the copy then gave the whole line
/// again (line 9166 twice in the server's writer test).
#[test]
fn partial_line_cut_by_copytruncate_is_held_once() {
    let d = dir("cut-tail");
    let p = d.join("app.log");
    append(&p, &lines(0, 10));
    let (mut t, mut c, _) = Tracker::start(std::slice::from_ref(&d), opts(100));
    let l10 = lines(10, 11);
    append(&p, &l10[..7]);
    poll(&mut t, &mut c);
    append(&p, &l10[7..]);
    std::fs::copy(&p, d.join("app.log.1")).unwrap();
    File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(0)
        .unwrap();
    append(&p, &lines(11, 40));
    for _ in 0..3 {
        poll(&mut t, &mut c);
        std::thread::sleep(Duration::from_millis(60));
    }
    assert_eq!(sorted_lines(&all(&c)), sorted_lines(&lines(0, 40)));
}

/// REGRESSION: bytes recovered from a copy, appended between two runs of
/// the next generation in the same document, made that generation's copy
/// compare unequal: its gzip was loaded again (line 5757 twice).
#[test]
fn recovered_bytes_do_not_hide_the_next_copy() {
    let d = dir("runs");
    let p = d.join("app.log");
    append(&p, &lines(0, 50));
    let (mut t, mut c, _) = Tracker::start(std::slice::from_ref(&d), opts(50));
    // copytruncate before the last lines were read: they are recovered.
    append(&p, &lines(50, 60));
    std::fs::copy(&p, d.join("app.log.1")).unwrap();
    File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(0)
        .unwrap();
    append(&p, &lines(60, 70));
    poll(&mut t, &mut c);
    append(&p, &lines(70, 80));
    poll(&mut t, &mut c);
    poll(&mut t, &mut c);
    // The new generation rotated and compressed.
    std::fs::rename(&p, d.join("app.log.2")).unwrap();
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(&lines(60, 80)).unwrap();
    std::fs::write(d.join("app.log.2.gz"), e.finish().unwrap()).unwrap();
    std::fs::remove_file(d.join("app.log.2")).unwrap();
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(60));
        poll(&mut t, &mut c);
    }
    assert_eq!(sorted_lines(&all(&c)), sorted_lines(&lines(0, 80)));
}

/// REGRESSION: a new file and its copy found in the same poll: the copy
/// was compared with a corpus that did not hold the file yet, and both
/// were ingested (line 2971 twice in the server's writer test).
#[test]
fn a_new_file_and_its_copy_in_one_poll() {
    let d = dir("same-poll");
    append(&d.join("a.log"), b"a\n");
    let (mut t, mut c, _) = Tracker::start(std::slice::from_ref(&d), opts(50));
    append(&d.join("app.log"), &lines(0, 100));
    std::fs::copy(d.join("app.log"), d.join("app.log.1")).unwrap();
    for _ in 0..3 {
        poll(&mut t, &mut c);
    }
    assert_eq!(
        c.docs().len(),
        2,
        "{:?}",
        c.docs().iter().map(|d| d.name()).collect::<Vec<_>>()
    );
    assert_eq!(t.stats().copies, 1);
}

/// Every new file one poll finds is adopted in that poll (before, each
/// new file after the first waited for the next poll), and copies among
/// them are still recognised (a logrotate-style copy, walked after its
/// original). Then the new files are followed.
#[test]
fn new_files_are_all_adopted_in_one_poll() {
    let d = dir("many-new");
    append(&d.join("a.log"), b"a\n");
    let (mut t, mut c, _) = Tracker::start(std::slice::from_ref(&d), opts(5_000));
    let n = 7u64;
    for k in 0..n {
        append(
            &d.join(format!("n{k}.log")),
            &lines(k * 1000, k * 1000 + 40),
        );
    }
    std::fs::copy(d.join("n2.log"), d.join("n2.log.1")).unwrap();
    poll(&mut t, &mut c);
    let mut want = b"a\n".to_vec();
    for k in 0..n {
        want.extend(lines(k * 1000, k * 1000 + 40));
    }
    assert_eq!(
        c.docs().len() as u64,
        1 + n,
        "{:?}",
        c.docs().iter().map(|d| d.name()).collect::<Vec<_>>()
    );
    assert_eq!(sorted_lines(&all(&c)), sorted_lines(&want));
    assert_eq!(t.stats().new_files, n);
    assert_eq!(t.stats().copies, 1);
    // A second poll finds nothing new.
    poll(&mut t, &mut c);
    assert_eq!(c.docs().len() as u64, 1 + n);
    // Each is followed from there.
    for k in 0..n {
        append(
            &d.join(format!("n{k}.log")),
            &lines(k * 1000 + 40, k * 1000 + 50),
        );
        want.extend(lines(k * 1000 + 40, k * 1000 + 50));
    }
    poll(&mut t, &mut c);
    assert_eq!(sorted_lines(&all(&c)), sorted_lines(&want));
}

/// Hardening: an entry that cannot be read appears in a followed directory
/// (a dangling link and a link loop, with links followed; a file without
/// read permission where the user is not root): each is reported once,
/// naming it, not at every poll, and every other file is still followed.
#[cfg(unix)]
#[test]
fn an_unreadable_entry_in_a_followed_directory_is_reported_once_and_the_rest_followed() {
    use std::os::unix::fs::{symlink, PermissionsExt};
    let d = dir("unreadable");
    let a = d.join("a.log");
    append(&a, &lines(0, 10));
    let mut o = opts(50);
    o.walk.follow = true;
    let (mut t, mut c, e) = Tracker::start(std::slice::from_ref(&d), o);
    assert!(e.is_empty(), "{e:?}");
    symlink("nothere", d.join("broken.log")).unwrap();
    symlink(&d, d.join("loop")).unwrap();
    let locked = d.join("locked.log");
    append(&locked, &lines(500, 600));
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    // Root reads it anyway: then it is an ordinary file.
    let root_reads = File::open(&locked).is_ok();
    let b = d.join("b.log");
    append(&b, &lines(100, 150));
    let mut msgs = Vec::new();
    for k in 0..6 {
        append(&a, &lines(10 + k * 10, 20 + k * 10));
        let (changes, errors) = t.poll(&c, true);
        apply(&mut c, changes);
        msgs.extend(errors.iter().map(ToString::to_string));
        std::thread::sleep(Duration::from_millis(20));
    }
    let named = |s: &str| msgs.iter().filter(|m| m.contains(s)).count();
    assert_eq!(named("broken.log"), 1, "{msgs:?}");
    assert_eq!(named("loop"), 1, "{msgs:?}");
    let mut want = [lines(0, 70), lines(100, 150)].concat();
    if root_reads {
        want.extend(lines(500, 600));
    } else {
        assert_eq!(named("locked.log"), 1, "{msgs:?}");
    }
    assert_eq!(sorted_lines(&all(&c)), sorted_lines(&want));
    let _ = std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o644));
    let _ = std::fs::remove_dir_all(&d);
}

/// Polls and applies the changes to a session (the server's path).
fn poll_session(t: &mut Tracker, s: &mut Session) {
    let (changes, errors) = t.poll(s.corpus(), true);
    assert!(errors.is_empty(), "{errors:?}");
    for c in changes {
        match c {
            Change::NewDoc { doc, name, bytes } => {
                let i = s.push_document(Document::from_bytes(name, bytes)).unwrap();
                assert_eq!(i, doc);
            }
            Change::Append { doc, bytes } => {
                s.append_lines(doc, &bytes).unwrap();
            }
        }
    }
}

/// The tracker's offsets count the whole file (`--retain`): after the
/// first lines were evicted, a copytruncate copy whose start is no
/// longer held is still recognised as a copy (the fingerprint and the
/// held part compared), and its lines the original lost are recovered
/// once, numbered after the held ones.
#[test]
fn a_copy_of_partly_evicted_content_is_still_a_copy() {
    let d = dir("evicted-copy");
    let p = d.join("app.log");
    append(&p, &lines(0, 100));
    let (mut t, c, _) = Tracker::start(std::slice::from_ref(&d), opts(50));
    let mut s = Session::new(c);
    append(&p, &lines(100, 150));
    poll_session(&mut t, &mut s);
    let mut e = s.prepare_cuts(vec![120]).unwrap();
    let ev = s.apply_eviction(&mut e).unwrap();
    assert_eq!(ev.lines, 120);
    append(&p, &lines(150, 160));
    std::fs::copy(&p, d.join("app.log.1")).unwrap();
    File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(0)
        .unwrap();
    append(&p, &lines(160, 170));
    for _ in 0..3 {
        poll_session(&mut t, &mut s);
    }
    assert_eq!(s.corpus().docs().len(), 1, "the copy is no document");
    assert_eq!(
        sorted_lines(s.corpus().docs()[0].data()),
        sorted_lines(&lines(120, 170))
    );
    assert_eq!(t.stats().copies, 1);
    // A copy that differs in the held part is not a copy.
    let mut other = lines(0, 130);
    let at = other.len() - 20;
    other[at] = b'#';
    std::fs::write(d.join("other.log"), &other).unwrap();
    std::thread::sleep(Duration::from_millis(60));
    for _ in 0..3 {
        poll_session(&mut t, &mut s);
    }
    assert_eq!(s.corpus().docs().len(), 2, "a different file is a document");
    assert_eq!(s.corpus().docs()[1].data(), &other[..]);
}
