//! Lines printed while the search runs (`Streamer`): files of several
//! 1 MiB pieces, with matches on piece edges, a NUL on a matching line in a
//! later piece, a last line without `\n`, `-m` inside a piece, compared with
//! rg byte for byte (skipped, loudly, where rg is missing) and with the
//! same search on two threads (a document in two parts is printed whole
//! when searched, not in pieces); and a reader that goes away (`| head`).
//! The large files are settled, so they are memory-mapped.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use common::{same_as_rg, search, tmp, write};

/// `n` bytes of log lines; every `every`-th line matches `needle`.
fn log(n: usize, every: usize, tail: &[u8]) -> Vec<u8> {
    let mut data = Vec::with_capacity(n + 64);
    let mut i = 0usize;
    while data.len() < n {
        if i.is_multiple_of(every) {
            data.extend(format!("{i:08} needle id={} end\n", i * 7).as_bytes());
        } else {
            data.extend(format!("{i:08} plain text {}\n", i * 3).as_bytes());
        }
        i += 1;
    }
    data.extend(tail);
    data
}

#[test]
fn pieces_print_rgs_bytes() {
    let d = tmp();
    // 9 MiB: two parts of at least 4 MiB on two threads.
    write(
        d.path(),
        "a.log",
        &log(9 << 20, 97, b"needle at the end, no newline"),
    );
    // A NUL on a matching line 2.5 MiB in (the third piece).
    let mut b = log(5 << 19, 1013, b"");
    b.extend(b"needle \0 in a later piece\n");
    b.extend(log(1 << 20, 1013, b""));
    write(d.path(), "b.log", &b);
    write(d.path(), "c.log", &log(2 << 20, usize::MAX, b""));
    write(d.path(), "d.log", b"needle small\n");
    // Settled (an old mtime): memory-mapped, each piece's pages mapped
    // ahead of the search (`cpu::POPULATE_FIRST`).
    for name in ["a.log", "b.log", "c.log"] {
        std::fs::File::options()
            .write(true)
            .open(d.path().join(name))
            .and_then(|f| {
                f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(3600))
            })
            .expect("an old mtime");
    }
    let files = ["a.log", "b.log", "c.log", "d.log"];
    let flag_sets: &[&[&str]] = &[
        &["needle"],
        &["-n", "needle"],
        &["-o", "id=\\d+"],
        &["-n", "--heading", "needle"],
        &["-m", "7", "-n", "needle"],
        &["-m", "20000", "-b", "needle"],
        &["--vimgrep", "needle"],
        &["--column", "-o", "needle"],
        &["-c", "needle"],
        &["-l", "needle"],
    ];
    for flags in flag_sets {
        let mut args: Vec<&str> = flags.to_vec();
        args.extend(files);
        let one: Vec<&str> = ["-j", "1"].iter().copied().chain(args.clone()).collect();
        let ours = same_as_rg(d.path(), &one);
        assert_eq!(ours.code, Some(0), "{one:?}: {}", ours.stderr);
        assert!(!ours.stdout.is_empty(), "{one:?}");
        let two: Vec<&str> = ["-j", "2"].iter().copied().chain(args.clone()).collect();
        let theirs = search(d.path(), &two);
        assert_eq!(ours.out(), theirs.out(), "{one:?} against {two:?}");
    }
}

#[test]
fn a_reader_that_goes_away_ends_the_search_quietly() {
    let d = tmp();
    let p = write(d.path(), "big.log", &log(8 << 20, 1, b""));
    let mut child = Command::new(common::exe())
        .args(["-j", "1", "needle"])
        .arg(&p)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("logsieve runs");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut first)
        .expect("a line");
    // The reader is gone (dropped with the BufReader).
    let out = child.wait_with_output().expect("logsieve exits");
    assert!(first.starts_with("00000000 needle"), "{first}");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
