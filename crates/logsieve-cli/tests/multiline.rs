//! `-U/--multiline` against rg 13 byte for byte (skipped, loudly, where rg
//! is missing): every line a match spans, `-n`, `-b`, `-o` (one piece per
//! line), `-c` (matches), `-l`, `-v`, `-m`, `-C`, `--json` (one record per
//! block); random small files; and the route's CPU-only reason.

mod common;

use common::{have, rg, same_as_rg, search, tmp, write};
use serde_json::Value;

const M: &[u8] = b"foo bar\nbaz qux\nfoo\nbar end\nzzz\nabc foo\nbar foo\nbar\n";

fn fixture() -> tempfile::TempDir {
    let d = tmp();
    write(d.path(), "m.txt", M);
    write(d.path(), "n.txt", b"ab\ncd\nab");
    write(d.path(), "c.txt", b"foo\r\nbar\r\n");
    d
}

#[test]
fn multiline_flags_match_rg() {
    let d = fixture();
    for args in [
        &["-U", r"foo\nbar", "m.txt"][..],
        &["-U", "-n", r"foo\nbar", "m.txt"],
        &["-U", "-b", r"foo\nbar", "m.txt"],
        &["-U", "-c", r"foo\nbar", "m.txt"],
        &["-U", "-o", r"foo\nbar", "m.txt"],
        &["-U", "-o", "-n", r"foo\nbar", "m.txt"],
        &["-U", "-o", "-b", r"foo\nbar", "m.txt"],
        &["-U", "-l", r"foo\nbar", "m.txt", "n.txt"],
        &["-U", "-v", r"foo\nbar", "m.txt"],
        &["-U", "-v", "-n", r"foo\nbar", "m.txt"],
        &["-U", "-m1", "-n", r"foo\nbar", "m.txt"],
        &["-U", "-c", "-m1", r"foo\nbar", "m.txt"],
        &["-U", "-C1", r"foo\nbar", "m.txt"],
        &["-U", "-n", r"r\n\w", "m.txt"],
        &["-U", "-c", r"o\n", "m.txt"],
        &["-U", "-o", "-n", r"o\n", "m.txt"],
        &["-U", "-n", r"(?s)o.b", "m.txt"],
        // `.` stops at `\n` without (?s).
        &["-U", "-n", r"o.b", "m.txt"],
        &["-U", "-n", "-i", r"FOO\nBAR", "m.txt"],
        &["-U", "-n", "-w", r"foo\nbar", "m.txt"],
        &["-U", "-n", "-x", r"foo\nbar end", "m.txt"],
        &["-U", "-n", r"b\n?", "n.txt"],
        &["-U", "-o", r"d\nab", "n.txt"],
        &["-U", "-n", r"\z", "m.txt"],
        &["-U", "-c", "^", "m.txt"],
        &["-U", "-n", r"foo\r\nbar", "c.txt"],
        &["-U", "-n", r"nothing\nhere", "m.txt"],
    ] {
        same_as_rg(d.path(), args);
    }
    // A pattern holding a newline is not split under -U (it is without).
    same_as_rg(d.path(), &["-U", "-F", "foo\nbar", "m.txt"]);
    let o = search(d.path(), &["-U", "-c", r"foo\nbar", "m.txt"]);
    assert_eq!(o.out(), "3\n");
}

/// The match records with what rg writes (our submatches also name their
/// patterns; elapsed times differ).
fn records(o: &common::Out) -> Vec<Value> {
    o.lines()
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "match")
        .map(|mut v| {
            for s in v["data"]["submatches"].as_array_mut().unwrap() {
                s.as_object_mut().unwrap().remove("patterns");
            }
            v
        })
        .collect()
}

#[test]
fn multiline_json_has_one_record_per_block() {
    let d = fixture();
    let ours = search(d.path(), &["-U", "--json", r"foo\nbar", "m.txt"]);
    let got = records(&ours);
    assert_eq!(got.len(), 2);
    assert_eq!(got[1]["data"]["lines"]["text"], "abc foo\nbar foo\nbar\n");
    assert_eq!(got[1]["data"]["line_number"], 6);
    assert_eq!(got[1]["data"]["submatches"].as_array().unwrap().len(), 2);
    if have("rg") {
        for args in [
            &["-U", "--json", r"foo\nbar", "m.txt"][..],
            &["-U", "--json", "-m1", r"foo\nbar", "m.txt"],
            &["-U", "--json", r"(?s)b.c", "n.txt"],
        ] {
            let ours = search(d.path(), args);
            assert_eq!(records(&ours), records(&rg(d.path(), args)), "{args:?}");
        }
    } else {
        eprintln!("rg not installed: -U --json not compared");
    }
}

#[test]
fn multiline_on_random_files_matches_rg() {
    if !have("rg") {
        eprintln!("rg not installed: random -U files not compared");
        return;
    }
    let d = tmp();
    // The library's generator: the same 40 files every run.
    let mut rng = logsieve::gen::SplitMix64(7);
    for i in 0..40 {
        let len = 1 + (i * 7) % 60;
        let text: Vec<u8> = (0..len)
            .map(|_| b"ab\n\nc"[rng.below(5) as usize])
            .collect();
        let name = format!("r{i}.txt");
        write(d.path(), &name, &text);
        for pat in [r"a\nb", r"b\n+a", r"(?s)a.c", r"^\n", r"c$\n^a"] {
            same_as_rg(d.path(), &["-U", "-n", pat, &name]);
            same_as_rg(d.path(), &["-U", "-v", "-n", pat, &name]);
            // -c: nothing for a file without a match, as rg 13.
            same_as_rg(d.path(), &["-U", "-c", pat, &name]);
        }
    }
}

#[test]
fn multiline_stays_on_the_cpu_and_says_why() {
    let d = fixture();
    let o = search(d.path(), &["-U", "--backend", "gpu", r"foo\nbar", "m.txt"]);
    assert_eq!(o.code, Some(2));
    assert!(o.stderr.contains("-U/--multiline"), "{}", o.stderr);
    let o = search(d.path(), &["-U", "--explain", r"foo\nbar", "m.txt"]);
    assert_eq!(o.code, Some(0));
    assert!(o.stderr.contains("ran cpu/multiline-regex"), "{}", o.stderr);
    // Front ends that cannot run it refuse it rather than ignore it.
    let o = search(d.path(), &["-U", "--count-per-pattern", "foo", "m.txt"]);
    assert_eq!(o.code, Some(2));
}

/// The files of the output table: LF lines, an empty line and a last line
/// without `\n`, CRLF lines, LF and CRLF mixed, matches on adjacent lines
/// (rg joins them into one block when the pattern can match `\n`).
fn output_fixture() -> tempfile::TempDir {
    let d = fixture();
    write(d.path(), "e.txt", b"ab\n\ncd\nab");
    write(
        d.path(),
        "k.txt",
        b"a\nfoo\nbar\nb\nc\nd\nfoo\nbar\ne\r\nfoo\r\nbar\r\nz",
    );
    write(d.path(), "a.txt", b"a\na\nb\na\n");
    write(d.path(), "f.txt", b"foo\nbar\nfoo\nbar\n");
    d
}

const OUTPUT_FILES: [&str; 7] = [
    "m.txt", "n.txt", "c.txt", "e.txt", "k.txt", "a.txt", "f.txt",
];

/// Multiline regexes: crossing one or two `\n`, ending on one, only a
/// `\n`, `\r\n`, lazy dot-all, line anchors, one that cannot match `\n`
/// (rg searches it line by line: adjacent lines stay apart), a class.
const OUTPUT_PATTERNS: [&str; 15] = [
    r"foo\nbar",
    r"(?s)o.b",
    r"o\n",
    r"b\n\nc",
    r"\n",
    r"oo\nbar end\nz",
    r"foo\r\nbar",
    r"d\nab",
    r"(?s)a.*?d",
    r"bar\r?\n",
    r"a\n?",
    r"\w+\n\w",
    r"bar$\n^foo",
    r"^a",
    r"\ba",
];

/// `-U` text output against rg 13 byte for byte: colour closed at each
/// line end and opened again on the next (`--color always`), with line
/// numbers and context; `--column` (the block's first match, counted from
/// the block's start), `--vimgrep` (a line per match), `-o` pieces with
/// their columns; `-m` counting blocks. Left out, rg 13 quirks: `--crlf`
/// with colour on LF lines (rg adds a `\r`), `-m` with after-context (rg
/// 13 prints the last context line twice), `-w` colour (rg colours the
/// wrapper's match), `-c` on a file without a match (rg prints nothing).
#[test]
fn multiline_text_output_matches_rg() {
    if !have("rg") {
        eprintln!("rg not installed: -U colour and columns not compared");
        return;
    }
    let d = output_fixture();
    for file in OUTPUT_FILES {
        for pat in OUTPUT_PATTERNS {
            for opts in [
                &["--color", "always"][..],
                &["--color", "always", "-n"],
                &["--color", "always", "-C1"],
                &["--color", "always", "-n", "-B2"],
                &["--color", "always", "--crlf", "-n"],
                &["--color", "always", "-o"],
                &["--column"],
                &["--column", "-n", "-m1"],
                &["--vimgrep"],
                &["--vimgrep", "--color", "always"],
                &["-o", "-n", "--column", "-b"],
                &["-m1", "-n"],
            ] {
                if opts.contains(&"--crlf") && file != "c.txt" {
                    continue;
                }
                let mut args = vec!["-U"];
                args.extend_from_slice(opts);
                args.extend([pat, file]);
                same_as_rg(d.path(), &args);
            }
        }
    }
}

/// A run's records as rg writes them, less what cannot agree: the
/// submatches' `patterns` (ours only), elapsed times and the byte counts
/// that depend on them, and the summary (rg writes its keys sorted).
fn all_records(o: &common::Out) -> Vec<Value> {
    o.lines()
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] != "summary")
        .map(|mut v| {
            if let Some(subs) = v["data"]["submatches"].as_array_mut() {
                for s in subs {
                    s.as_object_mut().unwrap().remove("patterns");
                }
            }
            if let Some(stats) = v["data"]["stats"].as_object_mut() {
                for k in ["elapsed", "bytes_printed", "bytes_searched"] {
                    stats.remove(k);
                }
            }
            v
        })
        .collect()
}

/// `-U --json` against rg 13: `begin`, one `match` per block, `context`
/// records before, after and between blocks (a line between two blocks
/// once), `end` with its counts; `-A`, `-B`, `-C`, `-m` with
/// before-context, `-x`, `-i`, CRLF files and a last line without `\n`.
#[test]
fn multiline_json_context_matches_rg() {
    if !have("rg") {
        eprintln!("rg not installed: -U --json context not compared");
        return;
    }
    let d = output_fixture();
    for file in OUTPUT_FILES {
        for pat in OUTPUT_PATTERNS {
            for opts in [
                &[][..],
                &["-C1"],
                &["-A2"],
                &["-B3"],
                &["-C5"],
                &["-m1", "-B1"],
                &["-x", "-C1"],
                &["-i", "-A1"],
            ] {
                let mut args = vec!["-U", "--json"];
                args.extend_from_slice(opts);
                args.extend([pat, file]);
                let (ours, theirs) = (search(d.path(), &args), rg(d.path(), &args));
                assert_eq!(ours.code, theirs.code, "{args:?}");
                assert_eq!(all_records(&ours), all_records(&theirs), "{args:?}");
            }
        }
    }
}

/// What rg 13 printed here (2026-11-25) for the cases above, kept so the
/// output is checked where rg is not installed.
#[test]
fn multiline_output_as_rg_13_printed_it() {
    let d = output_fixture();
    let o = search(
        d.path(),
        &["-U", "--color", "always", "-n", r"foo\nbar", "m.txt"],
    );
    assert_eq!(
        o.out(),
        "\x1b[0m\x1b[32m3\x1b[0m:\x1b[0m\x1b[1m\x1b[31mfoo\x1b[0m\n\
         \x1b[0m\x1b[32m4\x1b[0m:\x1b[0m\x1b[1m\x1b[31mbar\x1b[0m end\n\
         \x1b[0m\x1b[32m6\x1b[0m:abc \x1b[0m\x1b[1m\x1b[31mfoo\x1b[0m\n\
         \x1b[0m\x1b[32m7\x1b[0m:\x1b[0m\x1b[1m\x1b[31mbar\x1b[0m \x1b[0m\x1b[1m\x1b[31mfoo\x1b[0m\n\
         \x1b[0m\x1b[32m8\x1b[0m:\x1b[0m\x1b[1m\x1b[31mbar\x1b[0m\n"
    );
    // Under --crlf the colour stops before the `\r`.
    let o = search(
        d.path(),
        &["-U", "--color", "always", "--crlf", r"foo\r?\nbar", "c.txt"],
    );
    assert_eq!(
        o.out(),
        "\x1b[0m\x1b[1m\x1b[31mfoo\x1b[0m\r\n\x1b[0m\x1b[1m\x1b[31mbar\x1b[0m\r\n"
    );
    let o = search(d.path(), &["-U", "--column", r"(?s)o.b", "m.txt"]);
    assert_eq!(
        o.out(),
        "1:3:foo bar\n3:3:foo\n4:3:bar end\n6:7:abc foo\n7:7:bar foo\n8:7:bar\n"
    );
    let o = search(d.path(), &["-U", "--vimgrep", r"foo\nbar", "m.txt"]);
    assert_eq!(
        o.out(),
        "m.txt:3:1:foo\nm.txt:6:5:abc foo\nm.txt:7:5:bar foo\n"
    );
    // Adjacent lines join when the pattern can match `\n`, not otherwise.
    let o = search(d.path(), &["-U", "-m1", r"a\n", "a.txt"]);
    assert_eq!(o.out(), "a\na\n");
    let o = search(d.path(), &["-U", "-m1", "a", "a.txt"]);
    assert_eq!(o.out(), "a\n");
    let o = search(d.path(), &["-U", "--json", "-C1", r"foo\nbar", "m.txt"]);
    let kinds: Vec<(String, u64)> = all_records(&o)
        .iter()
        .filter(|v| v["type"] == "match" || v["type"] == "context")
        .map(|v| {
            (
                v["type"].as_str().unwrap().to_string(),
                v["data"]["line_number"].as_u64().unwrap(),
            )
        })
        .collect();
    let want = [("context", 2), ("match", 3), ("context", 5), ("match", 6)];
    assert_eq!(
        kinds,
        want.map(|(k, n)| (k.to_string(), n)).to_vec(),
        "{}",
        o.out()
    );
}
