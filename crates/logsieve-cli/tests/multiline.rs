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
    // A small xorshift: the same 40 files every run.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..40 {
        let len = 1 + (i * 7) % 60;
        let text: Vec<u8> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                b"ab\n\nc"[(x % 5) as usize]
            })
            .collect();
        let name = format!("r{i}.txt");
        write(d.path(), &name, &text);
        for pat in [r"a\nb", r"b\n+a", r"(?s)a.c", r"^\n", r"c$\n^a"] {
            same_as_rg(d.path(), &["-U", "-n", pat, &name]);
            same_as_rg(d.path(), &["-U", "-v", "-n", pat, &name]);
            // -c: rg 13 prints nothing for a file without a match where
            // logsieve prints 0 (grep's way, as without -U).
            let args = ["-U", "-c", pat, &name];
            let (ours, theirs) = (search(d.path(), &args), rg(d.path(), &args));
            let want = if theirs.out().is_empty() {
                "0\n".to_string()
            } else {
                theirs.out()
            };
            assert_eq!((ours.out(), ours.code), (want, theirs.code), "{args:?}");
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
