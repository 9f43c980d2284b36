//! Line output found around the search's line starts (no line index, no
//! newline count unless line numbers are printed) and rg's binary check on
//! a named file (the first 64 KiB, then each printed line): boundary
//! cases compared with rg 13 byte for byte (skipped, loudly, where rg is
//! missing), and the outputs written out for the cases that must hold
//! without rg too.

mod common;

use common::{same_as_rg, tmp, write};

fn fixture() -> tempfile::TempDir {
    let d = tmp();
    // A match on the first line and on a last line without `\n`.
    write(d.path(), "edges.txt", b"foo 1\nbar\nbaz\nqux\nfoo end");
    // CRLF lines; matches two apart so that contexts overlap.
    write(
        d.path(),
        "crlf.txt",
        b"a\r\nfoo\r\nb\r\nfoo\r\nc\r\nd\r\ne\r\nf\r\nfoo\r\n",
    );
    // Empty lines around matches; the file ends with an empty line.
    write(d.path(), "empty.txt", b"foo\n\n\nfoo\n\n");
    // Adjacent matches, and one far away.
    let mut far = b"foo a\nfoo b\nx\n".to_vec();
    for i in 0..50 {
        far.extend(format!("filler {i}\n").as_bytes());
    }
    far.extend(b"foo z\n");
    write(d.path(), "far.txt", &far);
    d
}

const FLAG_SETS: &[&[&str]] = &[
    &[],
    &["-n"],
    &["-C", "1"],
    &["-C", "2", "-n"],
    &["-A", "1"],
    &["-B", "2", "-n"],
    &["-m", "1", "-B", "2"],
    &["-m", "2", "-C", "1", "-n"],
    &["-o"],
    &["-o", "-n", "-b"],
    &["-b", "-C", "1"],
    &["--passthru", "-n"],
    &["-v", "-n", "-C", "1"],
    &["-c"],
];

#[test]
fn context_and_line_numbers_match_rg_at_the_edges() {
    let d = fixture();
    for file in ["edges.txt", "crlf.txt", "empty.txt", "far.txt"] {
        for flags in FLAG_SETS {
            let mut args: Vec<&str> = flags.to_vec();
            args.extend(["foo", file]);
            same_as_rg(d.path(), &args);
        }
    }
    // Several files: `--` between files with context, names on each line.
    for flags in FLAG_SETS {
        let mut args: Vec<&str> = flags.to_vec();
        args.extend(["foo", "edges.txt", "crlf.txt", "empty.txt", "far.txt"]);
        same_as_rg(d.path(), &args);
    }
}

#[test]
fn context_found_by_offset_prints_rgs_bytes() {
    let d = fixture();
    let out = |args: &[&str]| same_as_rg(d.path(), args).out();
    // First and last line (no `\n` at the end: rg adds one).
    assert_eq!(
        out(&["-C", "1", "foo", "edges.txt"]),
        "foo 1\nbar\n--\nqux\nfoo end\n"
    );
    assert_eq!(
        out(&["-n", "-B", "9", "end", "edges.txt"]),
        "1-foo 1\n2-bar\n3-baz\n4-qux\n5:foo end\n"
    );
    // Overlapping contexts are one group; CR kept.
    assert_eq!(
        out(&["-n", "-C", "1", "foo", "crlf.txt"]),
        "1-a\r\n2:foo\r\n3-b\r\n4:foo\r\n5-c\r\n--\n8-f\r\n9:foo\r\n"
    );
    // Empty lines are lines; no line past the last `\n`.
    assert_eq!(
        out(&["-n", "-A", "5", "foo", "empty.txt"]),
        "1:foo\n2-\n3-\n4:foo\n5-\n"
    );
    // -m stops at its match but still prints its after-context.
    assert_eq!(
        out(&["-m", "1", "-A", "1", "foo", "far.txt"]),
        "foo a\nfoo b\n"
    );
    assert_eq!(
        out(&["-m", "3", "-B", "1", "-n", "foo", "far.txt"]),
        "1:foo a\n2:foo b\n--\n53-filler 49\n54:foo z\n"
    );
}

/// 70 KB of text (past the 64 KiB rg checks first), then `tail`.
fn past_the_first_check(tail: &[u8]) -> Vec<u8> {
    let mut data = Vec::new();
    let mut i = 0;
    while data.len() < 70_000 {
        data.extend(format!("text line {i}\n").as_bytes());
        i += 1;
    }
    data.extend(b"foo early\n");
    data.extend(tail);
    data
}

#[test]
fn binary_checks_are_rgs_on_a_named_file() {
    let d = tmp();
    // A NUL in the first 64 KiB: only the message.
    write(d.path(), "head.bin", b"x\0y\nfoo\nfoo again\n");
    // A NUL past 64 KiB on a line nobody prints: every line printed.
    let quiet = past_the_first_check(b"nul \0 here\nfoo late\n");
    write(d.path(), "quiet.bin", &quiet);
    // A NUL past 64 KiB on a matching line: the lines before it, then the
    // message with the NUL's offset.
    let loud = past_the_first_check(b"foo \0 here\nfoo late\n");
    write(d.path(), "loud.bin", &loud);
    // A NUL in the context of the first match: nothing printed.
    let mut ctx = Vec::new();
    while ctx.len() < 70_000 {
        ctx.extend(b"plain\n");
    }
    ctx.extend(b"ctx \0\nfoo\n");
    write(d.path(), "ctx.bin", &ctx);
    // rg 13 exits 1 when a file's only output stopped at a NUL in a
    // context line before its first match (no match was "reached"); we
    // exit 0 (a line was selected): stdout is compared, not the code.
    let same_stdout = |args: &[&str]| {
        let ours = common::search(d.path(), args);
        if common::have("rg") {
            assert_eq!(ours.out(), common::rg(d.path(), args).out(), "{args:?}");
        }
        ours.out()
    };
    for flags in [&[][..], &["-n"], &["-C", "1"], &["-o"], &["-c"]] {
        for file in ["head.bin", "quiet.bin", "loud.bin", "ctx.bin"] {
            let mut args: Vec<&str> = flags.to_vec();
            args.extend(["foo", file]);
            if flags.contains(&"-C") && file != "quiet.bin" && file != "loud.bin" {
                same_stdout(&args);
            } else {
                same_as_rg(d.path(), &args);
            }
        }
        let mut args: Vec<&str> = flags.to_vec();
        args.extend(["foo", "head.bin", "quiet.bin", "loud.bin", "ctx.bin"]);
        same_as_rg(d.path(), &args);
    }
    assert_eq!(same_stdout(&["-C", "1", "foo", "head.bin"]), "");
    let out = |args: &[&str]| same_as_rg(d.path(), args).out();
    assert_eq!(
        out(&["foo", "head.bin"]),
        "binary file matches (found \"\\0\" byte around offset 1)\n"
    );
    assert_eq!(out(&["foo", "quiet.bin"]), "foo early\nfoo late\n");
    let nul = loud.iter().position(|&b| b == 0).unwrap();
    assert_eq!(
        out(&["foo", "loud.bin"]),
        format!("foo early\nbinary file matches (found \"\\0\" byte around offset {nul})\n")
    );
    assert_eq!(same_stdout(&["-B", "1", "foo", "ctx.bin"]), "");
    // -a prints the NUL line as text.
    assert!(out(&["-a", "foo", "loud.bin"]).contains("foo \0 here\n"));
}
