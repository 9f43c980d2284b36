//! Integration tests for the `logsieve` binary: every flag of
//! `logsieve search`, exit codes, bad input, and agreement with ripgrep and
//! GNU grep where those are installed (each comparison is skipped, loudly,
//! when its tool is missing; the logsieve-only assertions always run).

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use base64::Engine as _;
use serde_json::Value;
use tempfile::TempDir;

// ---------------------------------------------------------------------------
// Harness

/// What one run of a command left behind.
#[derive(Debug)]
struct Out {
    code: i32,
    stdout: Vec<u8>,
    stderr: String,
}

impl Out {
    fn out(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    fn lines(&self) -> Vec<String> {
        self.out().lines().map(str::to_string).collect()
    }
}

fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_logsieve")
}

/// Runs `cmd` with `args` in `dir`, feeding `stdin` (empty when `None`, so
/// that a search without paths never waits on the terminal).
fn run_in<S: AsRef<OsStr>>(cmd: &str, dir: &Path, args: &[S], stdin: Option<&[u8]>) -> Out {
    let mut c = Command::new(cmd);
    c.args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("RIPGREP_CONFIG_PATH")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd}: {e}"));
    let input = stdin.unwrap_or_default().to_vec();
    let mut pipe = child.stdin.take().expect("stdin pipe");
    // A writer thread: a large input must not deadlock against a full
    // stdout pipe.
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let o = child.wait_with_output().expect("wait");
    writer.join().expect("stdin writer");
    Out {
        code: o.status.code().expect("killed by a signal"),
        stdout: o.stdout,
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// `logsieve search ARGS` in `dir`.
fn search<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Out {
    let mut all: Vec<OsString> = vec!["search".into()];
    all.extend(args.iter().map(|a| a.as_ref().to_os_string()));
    run_in(exe(), dir, &all, None)
}

/// `logsieve search ARGS` in `dir` with `input` on stdin.
fn search_stdin(dir: &Path, args: &[&str], input: &[u8]) -> Out {
    let mut all = vec!["search"];
    all.extend_from_slice(args);
    run_in(exe(), dir, &all, Some(input))
}

fn tmp() -> TempDir {
    tempfile::tempdir().expect("tempdir")
}

fn write(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&p, data).unwrap();
    p
}

/// True when `tool --version` runs; otherwise says the comparison is skipped.
fn have(tool: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIPPED: `{tool}` is not installed; comparison not run");
    }
    ok
}

/// `rg` with our conventions pinned: no config file, sorted output, no
/// ignore files.
fn rg<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Out {
    let mut all: Vec<OsString> = vec![
        "--no-config".into(),
        "--sort=path".into(),
        "--no-ignore".into(),
    ];
    all.extend(args.iter().map(|a| a.as_ref().to_os_string()));
    run_in("rg", dir, &all, None)
}

/// Asserts that `logsieve search ARGS` and `rg ARGS` print the same bytes
/// and exit alike (when rg is installed).
fn same_as_rg(dir: &Path, args: &[&str]) {
    if !have("rg") {
        return;
    }
    let ours = search(dir, args);
    let theirs = rg(dir, args);
    assert_eq!(
        ours.out(),
        theirs.out(),
        "stdout differs from rg for {args:?}\nrg stderr: {}",
        theirs.stderr
    );
    assert_eq!(
        ours.code, theirs.code,
        "exit code differs from rg for {args:?}"
    );
}

/// A small fixture with known lines (line numbers in the comments).
const TEXT: &str = "\
alpha start
foo bar
foobar baz
the FOO line
a.c literal
abc regex
foo
bar foo bar foo
last line x
";

fn fixture() -> (TempDir, PathBuf) {
    let d = tmp();
    let p = write(d.path(), "text.log", TEXT.as_bytes());
    (d, p)
}

/// A 50,000-line generated log (seed 3), made once per test process.
fn generated() -> &'static Path {
    static GEN: OnceLock<PathBuf> = OnceLock::new();
    GEN.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("logsieve-cli-tests");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("gen-50000-3.log");
        // Written under a unique name then renamed, so that two test
        // processes never see a half-written file.
        let part = dir.join(format!("gen-50000-3.log.{}", std::process::id()));
        let o = run_in(
            exe(),
            &dir,
            &[
                OsStr::new("gen"),
                OsStr::new("--lines"),
                OsStr::new("50000"),
                OsStr::new("--seed"),
                OsStr::new("3"),
                OsStr::new("-o"),
                part.as_os_str(),
            ],
            None,
        );
        assert_eq!(o.code, 0, "gen failed: {}", o.stderr);
        std::fs::rename(&part, &file).unwrap();
        file
    })
}

fn json_lines(o: &Out) -> Vec<Value> {
    o.out()
        .lines()
        .map(|l| {
            assert!(
                l.starts_with("{\"type\":"),
                "`type` is not the first key: {l}"
            );
            serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l}: {e}"))
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Pattern syntax

#[test]
fn fixed_strings_vs_regex_default() {
    let (d, p) = fixture();
    // Regex by default: `.` is any byte.
    let o = search(d.path(), &["a.c", p.to_str().unwrap()]);
    assert_eq!(o.code, 0);
    assert_eq!(o.lines(), ["a.c literal", "abc regex"]);
    // -F: `.` is a dot.
    let o = search(d.path(), &["-F", "a.c", "text.log"]);
    assert_eq!(o.code, 0);
    assert_eq!(o.lines(), ["a.c literal"]);
    // Long form.
    let o = search(d.path(), &["--fixed-strings", "a.c", "text.log"]);
    assert_eq!(o.lines(), ["a.c literal"]);
    // Regex metacharacters are literal under -F.
    let o = search(d.path(), &["-F", "(foo", "text.log"]);
    assert_eq!(o.code, 1);
    assert!(o.stdout.is_empty());
    same_as_rg(d.path(), &["a.c", "text.log"]);
    same_as_rg(d.path(), &["-F", "a.c", "text.log"]);
}

#[test]
fn regex_that_is_a_literal_matches_like_fixed() {
    let f = generated();
    let dir = f.parent().unwrap();
    let name = f.file_name().unwrap().to_str().unwrap();
    for pat in ["ERROR_503", "NullPointerException", "192", "error"] {
        let re = search(dir, &["-c", pat, name]);
        let fixed = search(dir, &["-c", "-F", pat, name]);
        assert_eq!(re.code, 0, "{pat}: {}", re.stderr);
        assert_eq!(re.out(), fixed.out(), "{pat}");
        let n: u64 = re.out().trim().parse().unwrap();
        assert!(n > 0, "{pat} should occur in the generated log");
    }
    // A regex with a metacharacter is not a literal: `192.168.1.` as a regex
    // matches at least as many lines as the literal.
    let re: u64 = search(dir, &["-c", "192.168.1.", name])
        .out()
        .trim()
        .parse()
        .unwrap();
    let lit: u64 = search(dir, &["-c", "-F", "192.168.1.", name])
        .out()
        .trim()
        .parse()
        .unwrap();
    assert!(re >= lit && lit > 0, "regex {re} literal {lit}");
}

#[test]
fn repeated_e_patterns() {
    let (d, _) = fixture();
    let o = search(d.path(), &["-e", "alpha", "-e", "last", "text.log"]);
    assert_eq!(o.code, 0);
    assert_eq!(o.lines(), ["alpha start", "last line x"]);
    // With -e every positional is a path: `foo` here is a (missing) file.
    let o = search(d.path(), &["-e", "alpha", "text.log", "foo"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("foo"), "{}", o.stderr);
    assert_eq!(o.lines(), ["text.log:alpha start"]);
    // A pattern that starts with a hyphen.
    let d2 = tmp();
    write(d2.path(), "h.txt", b"a -x b\nnone\n");
    let o = search(d2.path(), &["-e", "-x", "h.txt"]);
    assert_eq!(o.lines(), ["a -x b"]);
    // Several -F literals (the multi-literal path), long form too.
    let o = search(
        d.path(),
        &["-F", "--regexp", "a.c", "--regexp", "baz", "text.log"],
    );
    assert_eq!(o.lines(), ["foobar baz", "a.c literal"]);
    same_as_rg(d.path(), &["-e", "alpha", "-e", "last", "text.log"]);
    same_as_rg(
        d.path(),
        &["-n", "-F", "-e", "a.c", "-e", "baz", "text.log"],
    );
}

#[test]
fn pattern_file() {
    let (d, _) = fixture();
    write(d.path(), "pats.txt", b"alpha\nbaz\n");
    let o = search(d.path(), &["-f", "pats.txt", "text.log"]);
    assert_eq!(o.code, 0);
    assert_eq!(o.lines(), ["alpha start", "foobar baz"]);
    // Combined with -e.
    let o = search(d.path(), &["-f", "pats.txt", "-e", "^last", "text.log"]);
    assert_eq!(o.lines(), ["alpha start", "foobar baz", "last line x"]);
    // An empty pattern file: no pattern, no line selected, not even with -v.
    write(d.path(), "empty.txt", b"");
    for extra in [&[][..], &["-v"][..], &["-c"][..]] {
        let mut args = vec!["-f", "empty.txt"];
        args.extend_from_slice(extra);
        args.push("text.log");
        let o = search(d.path(), &args);
        assert_eq!(o.code, 1, "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}: {:?}", o.out());
    }
    // A missing pattern file is an error that names it.
    let o = search(d.path(), &["-f", "nope.txt", "text.log"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("nope.txt"), "{}", o.stderr);
    same_as_rg(d.path(), &["-f", "pats.txt", "text.log"]);
    same_as_rg(d.path(), &["-f", "empty.txt", "text.log"]);
}

#[test]
fn ignore_case_ascii_and_unicode() {
    let d = tmp();
    write(
        d.path(),
        "u.txt",
        "ÉCOLE normale\nécole primaire\nEcole sans accent\nfoo\nFoO\n".as_bytes(),
    );
    let o = search(d.path(), &["-i", "foo", "u.txt"]);
    assert_eq!(o.lines(), ["foo", "FoO"]);
    let o = search(d.path(), &["foo", "u.txt"]);
    assert_eq!(o.lines(), ["foo"]);
    // Unicode folding: É and é are one letter in two cases.
    for args in [
        &["-i", "école", "u.txt"][..],
        &["-i", "ÉCOLE", "u.txt"][..],
        &["-i", "-F", "école", "u.txt"][..],
        &["--ignore-case", "-F", "ÉCOLE", "u.txt"][..],
    ] {
        let o = search(d.path(), args);
        assert_eq!(o.code, 0, "{args:?}");
        assert_eq!(o.lines(), ["ÉCOLE normale", "école primaire"], "{args:?}");
    }
    // Without -i the accented letters differ.
    let o = search(d.path(), &["école", "u.txt"]);
    assert_eq!(o.lines(), ["école primaire"]);
    same_as_rg(d.path(), &["-i", "école", "u.txt"]);
    same_as_rg(d.path(), &["-i", "-F", "ÉCOLE", "u.txt"]);
}

#[test]
fn word_and_line_regexp() {
    let (d, _) = fixture();
    let o = search(d.path(), &["-w", "foo", "text.log"]);
    assert_eq!(o.lines(), ["foo bar", "foo", "bar foo bar foo"]);
    let o = search(d.path(), &["-w", "-i", "foo", "text.log"]);
    assert_eq!(
        o.lines(),
        ["foo bar", "the FOO line", "foo", "bar foo bar foo"]
    );
    let o = search(d.path(), &["-x", "foo", "text.log"]);
    assert_eq!(o.lines(), ["foo"]);
    let o = search(d.path(), &["-x", "-F", "a.c literal", "text.log"]);
    assert_eq!(o.lines(), ["a.c literal"]);
    let o = search(d.path(), &["--line-regexp", "fo", "text.log"]);
    assert_eq!(o.code, 1);
    assert!(o.stdout.is_empty());
    let o = search(d.path(), &["--word-regexp", "-F", "oba", "text.log"]);
    assert_eq!(o.code, 1);
    for args in [
        &["-w", "foo", "text.log"][..],
        &["-w", "-F", "-e", "foo", "-e", "baz", "text.log"][..],
        &["-x", "foo|abc regex", "text.log"][..],
        &["-x", "-F", "foo", "text.log"][..],
    ] {
        same_as_rg(d.path(), args);
    }
}

#[test]
fn invert_match() {
    let (d, _) = fixture();
    let o = search(d.path(), &["-v", "o", "text.log"]);
    assert_eq!(o.code, 0);
    assert_eq!(
        o.lines(),
        [
            "alpha start",
            "the FOO line",
            "a.c literal",
            "abc regex",
            "last line x"
        ]
    );
    let o = search(d.path(), &["-v", "-c", "", "text.log"]);
    assert_eq!(o.code, 1);
    assert_eq!(o.out(), "");
    let o = search(d.path(), &["-v", "-c", "--include-zero", "", "text.log"]);
    assert_eq!((o.code, o.out().as_str()), (1, "0\n"));
    let o = search(d.path(), &["--invert-match", "-c", "-F", "foo", "text.log"]);
    assert_eq!(o.out(), "5\n");
    same_as_rg(d.path(), &["-v", "-n", "o", "text.log"]);
}

#[test]
fn wildcard() {
    let d = tmp();
    write(
        d.path(),
        "w.log",
        b"user=u107 client=192.168.0.1\nuser=u17 client=10.0.0.1\nuser=u1 x7\nabc\nac\na.c\n",
    );
    let o = search(d.path(), &["--wildcard", "user=u1*7 client=192.*", "w.log"]);
    assert_eq!(o.lines(), ["user=u107 client=192.168.0.1"]);
    let o = search(d.path(), &["--wildcard", "u1*7", "w.log"]);
    assert_eq!(
        o.lines(),
        [
            "user=u107 client=192.168.0.1",
            "user=u17 client=10.0.0.1",
            "user=u1 x7"
        ]
    );
    // `?` is exactly one byte; `.` is literal.
    let o = search(d.path(), &["--wildcard", "a?c", "w.log"]);
    assert_eq!(o.lines(), ["abc", "a.c"]);
    let o = search(d.path(), &["--wildcard", "a.c", "w.log"]);
    assert_eq!(o.lines(), ["a.c"]);
    // `*` never crosses a line.
    let o = search(d.path(), &["--wildcard", "-c", "abc*a.c", "w.log"]);
    assert_eq!(o.code, 1);
    assert_eq!(o.out(), "");
    // -i and -x apply.
    let o = search(d.path(), &["--wildcard", "-i", "-x", "A?C", "w.log"]);
    assert_eq!(o.lines(), ["abc", "a.c"]);
    // -F and --wildcard conflict: a usage error.
    let o = search(d.path(), &["--wildcard", "-F", "a", "w.log"]);
    assert_eq!(o.code, 2);
    assert!(!o.stderr.is_empty());
}

#[test]
fn fuzzy() {
    let d = tmp();
    write(
        d.path(),
        "f.log",
        b"connection refused\nconnection refsed\nconnection refuzed\nconnection reffused\n\
          connection rfzd\nNullPointerExceptoin at x\nnothing here\n",
    );
    let o = search(d.path(), &["--fuzzy", "0", "refused", "f.log"]);
    assert_eq!(o.lines(), ["connection refused"]);
    let o = search(d.path(), &["--fuzzy", "1", "refused", "f.log"]);
    assert_eq!(
        o.lines(),
        [
            "connection refused",
            "connection refsed",
            "connection refuzed",
            "connection reffused"
        ]
    );
    // A transposition is two edits.
    let o = search(d.path(), &["--fuzzy", "1", "NullPointerException", "f.log"]);
    assert_eq!(o.code, 1);
    let o = search(d.path(), &["--fuzzy", "2", "NullPointerException", "f.log"]);
    assert_eq!(o.lines(), ["NullPointerExceptoin at x"]);
    // `rfzd` is 4 edits away.
    let o = search(d.path(), &["--fuzzy", "3", "-c", "refused", "f.log"]);
    assert_eq!(o.out(), "4\n");
    // K above 3: exit 2 with a message that says what is allowed.
    let o = search(d.path(), &["--fuzzy", "9", "refused", "f.log"]);
    assert_eq!(o.code, 2);
    assert!(o.stdout.is_empty());
    assert!(o.stderr.contains("fuzzy"), "{}", o.stderr);
    assert!(o.stderr.contains('3'), "{}", o.stderr);
    // Not a number: a usage error.
    let o = search(d.path(), &["--fuzzy", "x", "refused", "f.log"]);
    assert_eq!(o.code, 2);
}

// ---------------------------------------------------------------------------
// Output modes

#[test]
fn count_one_and_many_files() {
    let (d, _) = fixture();
    write(d.path(), "b.log", b"foo\nnothing\n");
    write(d.path(), "c.log", b"nothing\n");
    let o = search(d.path(), &["-c", "foo", "text.log"]);
    assert_eq!(o.code, 0);
    assert_eq!(o.out(), "4\n");
    // Several files: path:count, files with no match left out (as rg).
    let o = search(d.path(), &["-c", "foo", "b.log", "c.log", "text.log"]);
    assert_eq!(o.code, 0);
    assert_eq!(o.out(), "b.log:1\ntext.log:4\n");
    // One file with no match: nothing, exit 1 (as rg 13); --include-zero
    // prints grep's bare 0.
    let o = search(d.path(), &["--count", "foo", "c.log"]);
    assert_eq!(o.code, 1);
    assert_eq!(o.out(), "");
    let o = search(d.path(), &["--count", "--include-zero", "foo", "c.log"]);
    assert_eq!((o.code, o.out().as_str()), (1, "0\n"));
    // -H with one file names it; -I with several does not.
    let o = search(d.path(), &["-c", "-H", "foo", "text.log"]);
    assert_eq!(o.out(), "text.log:4\n");
    // -c counts lines, not matches.
    let o = search(d.path(), &["-c", "-x", "bar foo bar foo|foo", "text.log"]);
    assert_eq!(o.out(), "2\n");
    same_as_rg(d.path(), &["-c", "foo", "text.log"]);
    same_as_rg(d.path(), &["-c", "foo", "b.log", "c.log", "text.log"]);
    same_as_rg(d.path(), &["-c", "-v", "foo", "b.log", "c.log", "text.log"]);
}

/// `-c` (and `--include-zero`) print what rg 13 prints: a file without a
/// selected line prints nothing, alone, among others, on stdin or found in
/// a directory, unless --include-zero.
#[test]
fn count_without_a_match_prints_what_rg_prints() {
    let d = tmp();
    write(d.path(), "a.log", b"foo\nbar\n");
    write(d.path(), "b.log", b"baz\n");
    write(d.path(), "dir/c.log", b"foo foo\n");
    write(d.path(), "dir/d.log", b"qux\n");
    let want: &[(&[&str], &str, i32)] = &[
        // REGRESSION: one file without a match printed `0`.
        (&["-c", "zzz", "a.log"], "", 1),
        (&["-c", "-m", "0", "foo", "a.log"], "", 1),
        (&["-c", "-v", "", "a.log"], "", 1),
        (&["-c", "zzz", "a.log", "b.log"], "", 1),
        (&["-c", "foo", "a.log", "b.log"], "a.log:1\n", 0),
        (&["-c", "-I", "foo", "a.log", "b.log"], "1\n", 0),
        (&["-c", "-H", "zzz", "a.log"], "", 1),
        (&["-c", "foo", "dir"], "dir/c.log:1\n", 0),
        (&["-c", "--include-zero", "zzz", "a.log"], "0\n", 1),
        (
            &["-c", "--include-zero", "-H", "zzz", "a.log"],
            "a.log:0\n",
            1,
        ),
        (
            &["-c", "--include-zero", "foo", "a.log", "b.log"],
            "a.log:1\nb.log:0\n",
            0,
        ),
        (
            &["-c", "--include-zero", "-I", "foo", "a.log", "b.log"],
            "1\n0\n",
            0,
        ),
        (
            &["-c", "--include-zero", "foo", "dir"],
            "dir/c.log:1\ndir/d.log:0\n",
            0,
        ),
        // --include-zero alone changes nothing.
        (&["--include-zero", "zzz", "a.log"], "", 1),
    ];
    for &(args, out, code) in want {
        let o = search(d.path(), args);
        assert_eq!((o.out().as_str(), o.code), (out, code), "{args:?}");
        same_as_rg(d.path(), args);
    }
    // stdin: nothing, or the bare 0 with --include-zero (rg's output).
    let o = search_stdin(d.path(), &["-c", "zzz"], b"x\n");
    assert_eq!((o.out().as_str(), o.code), ("", 1));
    let o = search_stdin(d.path(), &["-c", "--include-zero", "zzz"], b"x\n");
    assert_eq!((o.out().as_str(), o.code), ("0\n", 1));
    if have("rg") {
        for args in [&["-c", "zzz"][..], &["-c", "--include-zero", "zzz"]] {
            let ours = search_stdin(d.path(), args, b"x\n");
            let mut all = vec!["--no-config"];
            all.extend_from_slice(args);
            let theirs = run_in("rg", d.path(), &all, Some(b"x\n"));
            assert_eq!(
                (ours.out(), ours.code),
                (theirs.out(), theirs.code),
                "{args:?}"
            );
        }
    }
}

#[test]
fn files_with_matches() {
    let (d, _) = fixture();
    write(d.path(), "b.log", b"foo\n");
    write(d.path(), "c.log", b"nothing\n");
    let o = search(d.path(), &["-l", "foo", "b.log", "c.log", "text.log"]);
    assert_eq!(o.code, 0);
    assert_eq!(o.out(), "b.log\ntext.log\n");
    let o = search(d.path(), &["--files-with-matches", "foo", "c.log"]);
    assert_eq!(o.code, 1);
    assert!(o.stdout.is_empty());
    let o = search(d.path(), &["-l", "-v", "foo", "b.log", "c.log"]);
    assert_eq!(o.out(), "c.log\n");
    same_as_rg(d.path(), &["-l", "foo", "b.log", "c.log", "text.log"]);
    same_as_rg(d.path(), &["-l", "-v", "foo", "b.log", "c.log", "text.log"]);
}

#[test]
fn only_matching() {
    let (d, _) = fixture();
    let o = search(d.path(), &["-o", "fo+", "text.log"]);
    assert_eq!(o.lines(), ["foo", "foo", "foo", "foo", "foo"]);
    let o = search(d.path(), &["-o", "-n", "ba[rz]", "text.log"]);
    assert_eq!(o.lines(), ["2:bar", "3:bar", "3:baz", "8:bar", "8:bar"]);
    let o = search(
        d.path(),
        &["--only-matching", "-i", "-F", "FOO", "text.log"],
    );
    assert_eq!(o.lines().len(), 6);
    assert!(o.lines().iter().any(|l| l == "FOO"));
    same_as_rg(d.path(), &["-o", "-n", "ba[rz]", "text.log"]);
    same_as_rg(d.path(), &["-o", "-i", "-F", "FOO", "text.log"]);
    same_as_rg(d.path(), &["-o", "-w", "foo", "text.log"]);
}

#[test]
fn line_numbers() {
    let (d, _) = fixture();
    // Not a terminal: no line numbers by default (as rg).
    let o = search(d.path(), &["alpha", "text.log"]);
    assert_eq!(o.out(), "alpha start\n");
    let o = search(d.path(), &["-n", "last", "text.log"]);
    assert_eq!(o.out(), "9:last line x\n");
    let o = search(d.path(), &["--line-number", "-H", "last", "text.log"]);
    assert_eq!(o.out(), "text.log:9:last line x\n");
    // -N wins when last, -n when last.
    let o = search(d.path(), &["-n", "-N", "last", "text.log"]);
    assert_eq!(o.out(), "last line x\n");
    let o = search(d.path(), &["-N", "-n", "last", "text.log"]);
    assert_eq!(o.out(), "9:last line x\n");
    let o = search(d.path(), &["--no-line-number", "last", "text.log"]);
    assert_eq!(o.out(), "last line x\n");
    same_as_rg(d.path(), &["-n", "foo", "text.log"]);
    same_as_rg(d.path(), &["-n", "-N", "foo", "text.log"]);
}

#[test]
fn with_and_without_filename() {
    let (d, _) = fixture();
    write(d.path(), "b.log", b"alpha two\n");
    let o = search(d.path(), &["alpha", "text.log"]);
    assert_eq!(o.out(), "alpha start\n");
    let o = search(d.path(), &["-H", "alpha", "text.log"]);
    assert_eq!(o.out(), "text.log:alpha start\n");
    let o = search(d.path(), &["alpha", "b.log", "text.log"]);
    assert_eq!(o.out(), "b.log:alpha two\ntext.log:alpha start\n");
    let o = search(d.path(), &["-I", "alpha", "b.log", "text.log"]);
    assert_eq!(o.out(), "alpha two\nalpha start\n");
    let o = search(
        d.path(),
        &["--no-filename", "-n", "alpha", "b.log", "text.log"],
    );
    assert_eq!(o.out(), "1:alpha two\n1:alpha start\n");
    let o = search(d.path(), &["--with-filename", "alpha", "text.log"]);
    assert_eq!(o.out(), "text.log:alpha start\n");
    same_as_rg(d.path(), &["-H", "alpha", "text.log"]);
    same_as_rg(d.path(), &["-I", "alpha", "b.log", "text.log"]);
}

#[test]
fn max_count() {
    let (d, _) = fixture();
    write(d.path(), "b.log", b"foo 1\nfoo 2\nfoo 3\n");
    let o = search(d.path(), &["-m", "2", "foo", "text.log"]);
    assert_eq!(o.lines(), ["foo bar", "foobar baz"]);
    // Per file.
    let o = search(d.path(), &["-m", "1", "foo", "b.log", "text.log"]);
    assert_eq!(o.lines(), ["b.log:foo 1", "text.log:foo bar"]);
    let o = search(
        d.path(),
        &["-c", "--max-count", "2", "foo", "b.log", "text.log"],
    );
    assert_eq!(o.out(), "b.log:2\ntext.log:2\n");
    let o = search(d.path(), &["-m", "2", "-v", "foo", "text.log"]);
    assert_eq!(o.lines(), ["alpha start", "the FOO line"]);
    for args in [
        &["-m", "2", "foo", "text.log"][..],
        &["-m", "1", "foo", "b.log", "text.log"][..],
        &["-m", "0", "foo", "text.log"][..],
        &["-c", "-m", "2", "foo", "b.log", "text.log"][..],
    ] {
        same_as_rg(d.path(), args);
    }
    // Trailing context after the last counted match: a later matching line
    // is shown as context, as GNU grep does (rg 13 marks it as a match).
    let o = search(d.path(), &["-n", "-m", "2", "-A", "3", "foo", "b.log"]);
    assert_eq!(o.out(), "1:foo 1\n2:foo 2\n3-foo 3\n");
}

const CTX: &str = "a\nfoo 1\nb\nc\nd\ne\nfoo 2\nf\nfoo 3\ng\nh\n";

#[test]
fn context_lines() {
    let d = tmp();
    write(d.path(), "ctx.txt", CTX.as_bytes());
    write(d.path(), "two.txt", b"x foo\ny\n");
    write(d.path(), "edge.txt", b"foo first\nmid\nfoo last");
    let o = search(d.path(), &["-n", "-C1", "foo", "ctx.txt"]);
    assert_eq!(
        o.out(),
        "1-a\n2:foo 1\n3-b\n--\n6-e\n7:foo 2\n8-f\n9:foo 3\n10-g\n"
    );
    let o = search(d.path(), &["-A1", "foo", "ctx.txt"]);
    assert_eq!(o.out(), "foo 1\nb\n--\nfoo 2\nf\nfoo 3\ng\n");
    let o = search(d.path(), &["-B2", "foo 2", "ctx.txt"]);
    assert_eq!(o.out(), "d\ne\nfoo 2\n");
    // Groups that touch merge without a separator.
    let o = search(d.path(), &["-A", "4", "foo 1", "ctx.txt"]);
    assert_eq!(o.out(), "foo 1\nb\nc\nd\ne\n");
    // Context clipped at both ends of the file.
    let o = search(d.path(), &["-C", "5", "-n", "foo", "edge.txt"]);
    assert_eq!(o.out(), "1:foo first\n2-mid\n3:foo last\n");
    for args in [
        &["-n", "-C1", "foo", "ctx.txt"][..],
        &["-A1", "foo", "ctx.txt"][..],
        &["-B1", "foo", "ctx.txt"][..],
        &["-B3", "-n", "foo", "ctx.txt"][..],
        &["-A2", "-B1", "foo", "ctx.txt"][..],
        &["-C2", "-v", "[a-e]", "ctx.txt"][..],
        &["--context", "1", "-H", "-n", "foo", "ctx.txt"][..],
        &["-A", "0", "foo", "ctx.txt"][..],
        &["-C", "9", "foo", "ctx.txt"][..],
        &["-C1", "foo", "edge.txt"][..],
        // Several files: a `--` between files too.
        &["-C1", "foo", "ctx.txt", "edge.txt", "two.txt"][..],
        &["-A1", "-n", "foo", "ctx.txt", "two.txt"][..],
        &[
            "--after-context",
            "1",
            "--before-context",
            "2",
            "foo",
            "ctx.txt",
        ][..],
    ] {
        same_as_rg(d.path(), args);
    }
}

#[test]
fn context_separator_between_files() {
    let d = tmp();
    write(d.path(), "a.txt", b"x foo\ny\n");
    write(d.path(), "b.txt", b"foo bar\n");
    let o = search(d.path(), &["-A1", "foo", "a.txt", "b.txt"]);
    assert_eq!(o.out(), "a.txt:x foo\na.txt-y\n--\nb.txt:foo bar\n");
    // No context: no separator.
    let o = search(d.path(), &["foo", "a.txt", "b.txt"]);
    assert_eq!(o.out(), "a.txt:x foo\nb.txt:foo bar\n");
}

#[test]
fn json_schema() {
    let d = tmp();
    write(d.path(), "a.log", b"one foo foo\ntwo\nthree foo");
    let mut bad = b"ok\n".to_vec();
    bad.extend_from_slice(b"ab\xffcd foo\n");
    write(d.path(), "bad.log", &bad);
    write(d.path(), "none.log", b"nothing\n");
    let o = search(d.path(), &["--json", "foo", "a.log", "bad.log", "none.log"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v = json_lines(&o);
    let types: Vec<&str> = v.iter().map(|x| x["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        ["begin", "match", "match", "end", "begin", "match", "end", "summary"]
    );
    assert_eq!(v[0]["data"]["path"]["text"], "a.log");
    let m = &v[1]["data"];
    assert_eq!(m["path"]["text"], "a.log");
    assert_eq!(m["lines"]["text"], "one foo foo\n", "terminator included");
    assert_eq!(m["line_number"], 1);
    assert_eq!(m["absolute_offset"], 0);
    let subs = m["submatches"].as_array().unwrap();
    assert_eq!(subs.len(), 2);
    assert_eq!(subs[0]["match"]["text"], "foo");
    assert_eq!(
        (subs[0]["start"].as_u64(), subs[0]["end"].as_u64()),
        (Some(4), Some(7))
    );
    assert_eq!(
        (subs[1]["start"].as_u64(), subs[1]["end"].as_u64()),
        (Some(8), Some(11))
    );
    // The last line has no terminator, so none is added.
    let m = &v[2]["data"];
    assert_eq!(m["lines"]["text"], "three foo");
    assert_eq!(m["line_number"], 3);
    assert_eq!(m["absolute_offset"], 16);
    // end: binary_offset and stats.
    let end = &v[3]["data"];
    assert_eq!(end["path"]["text"], "a.log");
    assert!(end["binary_offset"].is_null());
    assert_eq!(end["stats"]["matched_lines"], 2);
    assert_eq!(end["stats"]["matches"], 3);
    assert_eq!(end["stats"]["searches_with_match"], 1);
    assert!(end["stats"]["elapsed"]["secs"].is_u64());
    // A line that is not UTF-8: base64 bytes, offsets still in bytes.
    let m = &v[5]["data"];
    assert!(m["lines"]["text"].is_null());
    let raw = base64::engine::general_purpose::STANDARD
        .decode(m["lines"]["bytes"].as_str().unwrap())
        .unwrap();
    assert_eq!(raw, b"ab\xffcd foo\n");
    assert_eq!(m["absolute_offset"], 3);
    assert_eq!(m["submatches"][0]["match"]["text"], "foo");
    assert_eq!(m["submatches"][0]["start"], 6);
    // summary: totals over the three files searched.
    let s = &v[7]["data"];
    assert_eq!(s["stats"]["searches"], 3);
    assert_eq!(s["stats"]["searches_with_match"], 2);
    assert_eq!(s["stats"]["matched_lines"], 3);
    assert_eq!(s["stats"]["matches"], 4);
    assert!(s["elapsed_total"]["human"].is_string());

    // No match: only the summary, exit 1.
    let o = search(d.path(), &["--json", "zzz", "a.log"]);
    assert_eq!(o.code, 1);
    let v = json_lines(&o);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0]["type"], "summary");

    // -v: selected lines carry no submatches.
    let o = search(d.path(), &["--json", "-v", "foo", "a.log"]);
    let v = json_lines(&o);
    assert_eq!(v[1]["type"], "match");
    assert_eq!(v[1]["data"]["lines"]["text"], "two\n");
    assert_eq!(v[1]["data"]["submatches"], Value::Array(vec![]));

    // begin and match objects are exactly rg's.
    if have("rg") {
        for args in [
            &["--json", "foo", "a.log", "bad.log", "none.log"][..],
            &["--json", "-v", "foo", "a.log"][..],
            &["--json", "-i", "O", "a.log"][..],
        ] {
            let ours = search(d.path(), args);
            let theirs = rg(d.path(), args);
            let keep = |o: &Out| -> Vec<Value> {
                o.out()
                    .lines()
                    .map(|l| serde_json::from_str::<Value>(l).unwrap())
                    .filter(|x| x["type"] == "begin" || x["type"] == "match")
                    .collect()
            };
            // Our one extension: each submatch names its pattern(s)
            // (many literals); without it the objects are exactly rg's.
            let strip = |mut v: Vec<Value>| -> Vec<Value> {
                for x in &mut v {
                    let subs = x
                        .pointer_mut("/data/submatches")
                        .and_then(|s| s.as_array_mut());
                    if let Some(subs) = subs {
                        for s in subs {
                            assert!(s["patterns"].is_array(), "{s}");
                            s.as_object_mut().unwrap().remove("patterns");
                        }
                    }
                }
                v
            };
            assert_eq!(strip(keep(&ours)), keep(&theirs), "{args:?}");
            assert_eq!(ours.code, theirs.code, "{args:?}");
        }
    }
}

#[test]
fn json_binary_file_reports_offset() {
    let d = tmp();
    write(d.path(), "b.bin", b"foo\x00bar\nfoo\n");
    let o = search(d.path(), &["--json", "foo", "b.bin"]);
    assert_eq!(o.code, 0);
    let v = json_lines(&o);
    let end = v
        .iter()
        .find(|x| x["type"] == "end")
        .expect("an end object");
    assert_eq!(end["data"]["binary_offset"], 3);
}

#[test]
fn color() {
    let (d, _) = fixture();
    let o = search(d.path(), &["--color", "always", "last", "text.log"]);
    let s = o.out();
    assert!(s.contains("\x1b["), "{s:?}");
    // The match is wrapped: an escape before it, a reset right after.
    let at = s.find("last").unwrap();
    assert!(s[..at].ends_with('m'), "{s:?}");
    assert!(s[at..].starts_with("last\x1b[0m"), "{s:?}");
    assert!(s.ends_with(" line x\n"), "{s:?}");
    let o = search(d.path(), &["--color", "never", "last", "text.log"]);
    assert_eq!(o.out(), "last line x\n");
    // auto, not a terminal: no colour.
    let o = search(d.path(), &["--color", "auto", "last", "text.log"]);
    assert_eq!(o.out(), "last line x\n");
    let o = search(d.path(), &["--color", "sometimes", "last", "text.log"]);
    assert_eq!(o.code, 2);
    // The escapes are rg's, byte for byte.
    same_as_rg(
        d.path(),
        &["--color", "always", "-n", "-H", "foo", "text.log"],
    );
    same_as_rg(d.path(), &["--color", "always", "-o", "foo", "text.log"]);
    same_as_rg(
        d.path(),
        &["--color", "always", "-A1", "last|alpha", "text.log"],
    );
    same_as_rg(
        d.path(),
        &["--color", "never", "-n", "-H", "foo", "text.log"],
    );
}

#[test]
fn color_merges_adjacent_matches() {
    let (d, _) = fixture();
    // `foo` and `bar` touch in `foobar`: one coloured run, as rg.
    let o = search(
        d.path(),
        &["--color", "always", "-e", "foo", "-e", "bar", "text.log"],
    );
    assert!(
        o.out().contains("\x1b[31mfoobar\x1b[0m baz"),
        "{:?}",
        o.out()
    );
    same_as_rg(
        d.path(),
        &["--color", "always", "-e", "foo", "-e", "bar", "text.log"],
    );
    same_as_rg(d.path(), &["--color", "always", "o", "text.log"]);
}

#[test]
fn repeated_flags_last_wins() {
    let (d, _) = fixture();
    // A flag given twice is not a usage error (rg accepts it too).
    let o = search(d.path(), &["-F", "-F", "-i", "-i", "a.c", "text.log"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.out(), "a.c literal\n");
    let o = search(d.path(), &["-m", "5", "-m", "1", "foo", "text.log"]);
    assert_eq!(o.out(), "foo bar\n");
    let o = search(
        d.path(),
        &["--color", "always", "--color", "never", "foo", "text.log"],
    );
    assert!(!o.out().contains('\x1b'));
    // -e still accumulates.
    let o = search(d.path(), &["-c", "-e", "alpha", "-e", "last", "text.log"]);
    assert_eq!(o.out(), "2\n");
    same_as_rg(
        d.path(),
        &["-F", "-F", "-o", "-e", "foo", "-e", "FOO", "text.log"],
    );
    let o = search(d.path(), &["-A", "3", "-A", "1", "alpha", "text.log"]);
    assert_eq!(o.out(), "alpha start\nfoo bar\n");
}

#[test]
fn quiet() {
    let (d, _) = fixture();
    let o = search(d.path(), &["-q", "foo", "text.log"]);
    assert_eq!(o.code, 0);
    assert!(o.stdout.is_empty() && o.stderr.is_empty());
    let o = search(d.path(), &["--quiet", "zzz", "text.log"]);
    assert_eq!(o.code, 1);
    assert!(o.stdout.is_empty());
    let o = search(d.path(), &["-q", "-c", "foo", "text.log"]);
    assert_eq!(o.code, 0);
    assert!(o.stdout.is_empty());
    // A match wins over an error (grep and rg agree); no match + error is 2.
    let o = search(d.path(), &["-q", "foo", "text.log", "missing.log"]);
    assert_eq!(o.code, 0);
    assert!(o.stdout.is_empty());
    let o = search(d.path(), &["-q", "zzz", "text.log", "missing.log"]);
    assert_eq!(o.code, 2);
    assert!(o.stdout.is_empty());
    same_as_rg(d.path(), &["-q", "foo", "text.log", "missing.log"]);
    same_as_rg(d.path(), &["-q", "zzz", "text.log", "missing.log"]);
}

// ---------------------------------------------------------------------------
// Inputs

#[test]
fn threads_agree_with_one_thread() {
    let f = generated();
    let dir = f.parent().unwrap();
    let name = f.file_name().unwrap().to_str().unwrap();
    assert!(
        std::fs::metadata(f).unwrap().len() > 5_000_000,
        "multi-MB corpus"
    );
    for args in [
        &["-n", "-F", "ERROR_503"][..],
        &["-c", "-F", "error"][..],
        &["-n", "-i", "nullpointerexception"][..],
        &["-c", "-v", "-F", "a"][..],
        &["-n", r"192\.168\.1\.\d+"][..],
        &["-c", ""][..],
        &["-n", "-m", "100", "-F", "x"][..],
    ] {
        let run = |j: &str| {
            let mut a = vec!["-j", j];
            a.extend_from_slice(args);
            a.push(name);
            search(dir, &a)
        };
        let one = run("1");
        assert_eq!(one.code, 0, "{args:?}: {}", one.stderr);
        assert!(!one.stdout.is_empty());
        for j in ["2", "0"] {
            let many = run(j);
            assert_eq!(many.code, one.code, "-j {j} {args:?}");
            assert!(many.stdout == one.stdout, "-j {j} {args:?}: output differs");
        }
    }
    // 50,000 lines.
    let o = search(dir, &["-c", "", name]);
    assert_eq!(o.out(), "50000\n");
}

#[test]
fn no_mmap_agrees_with_mmap() {
    let f = generated();
    let dir = f.parent().unwrap();
    let name = f.file_name().unwrap().to_str().unwrap();
    for args in [&["-n", "-F", "ERROR_503"][..], &["-c", "-w", "error"][..]] {
        let mut a = args.to_vec();
        a.push(name);
        let mapped = search(dir, &a);
        a.insert(0, "--no-mmap");
        let read = search(dir, &a);
        assert_eq!(mapped.code, 0, "{}", mapped.stderr);
        assert!(read.stdout == mapped.stdout, "{args:?}");
    }
    // Empty file, with and without mmap.
    let d = tmp();
    write(d.path(), "empty.log", b"");
    for extra in [None, Some("--no-mmap")] {
        let mut a: Vec<&str> = extra.into_iter().collect();
        a.extend(["-c", "--include-zero", "", "empty.log"]);
        let o = search(d.path(), &a);
        assert_eq!(o.code, 1, "{a:?}");
        assert_eq!(o.out(), "0\n");
    }
}

fn gzip_member(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[test]
fn search_zip_multi_member() {
    let d = tmp();
    let mut gz = gzip_member(b"first foo\nfirst bar\n");
    gz.extend(gzip_member(b"second foo\nsecond baz\n"));
    write(d.path(), "app.log.gz", &gz);
    write(d.path(), "plain.log", b"plain foo\n");
    let o = search(d.path(), &["-z", "-n", "foo", "app.log.gz"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.out(), "1:first foo\n3:second foo\n");
    let o = search(d.path(), &["--search-zip", "-c", "", "app.log.gz"]);
    assert_eq!(o.out(), "4\n");
    // A plain file next to it is read as is.
    let o = search(d.path(), &["-z", "foo", "app.log.gz", "plain.log"]);
    assert_eq!(
        o.lines(),
        [
            "app.log.gz:first foo",
            "app.log.gz:second foo",
            "plain.log:plain foo"
        ]
    );
    // Without -z the compressed bytes are searched, and "foo" is not there.
    let o = search(d.path(), &["-c", "second foo", "app.log.gz"]);
    assert_eq!(o.code, 1);
    // A corrupt .gz is an error naming the file; the other file still prints.
    write(d.path(), "bad.log.gz", b"\x1f\x8b\x08\x00garbage");
    let o = search(d.path(), &["-z", "foo", "bad.log.gz", "plain.log"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("bad.log.gz"), "{}", o.stderr);
    assert_eq!(o.out(), "plain.log:plain foo\n");
    if have("rg") {
        let ours = search(d.path(), &["-z", "-n", "foo", "app.log.gz"]);
        let theirs = rg(d.path(), &["-z", "-n", "foo", "app.log.gz"]);
        assert_eq!(ours.out(), theirs.out());
    }
}

#[test]
fn stdin_dash_and_piped() {
    let d = tmp();
    let input = b"one foo\ntwo\nthree foo\n";
    let o = search_stdin(d.path(), &["foo"], input);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.out(), "one foo\nthree foo\n");
    let o = search_stdin(d.path(), &["-n", "foo", "-"], input);
    assert_eq!(o.out(), "1:one foo\n3:three foo\n");
    let o = search_stdin(d.path(), &["-c", "-F", "foo"], input);
    assert_eq!(o.out(), "2\n");
    let o = search_stdin(d.path(), &["-H", "two"], input);
    assert_eq!(o.out(), "<stdin>:two\n");
    // `-` among files.
    write(d.path(), "f.log", b"file foo\n");
    let o = search_stdin(d.path(), &["foo", "f.log", "-"], input);
    assert_eq!(
        o.lines(),
        ["f.log:file foo", "<stdin>:one foo", "<stdin>:three foo"]
    );
    let o = search_stdin(d.path(), &["zzz"], input);
    assert_eq!(o.code, 1);
    assert!(o.stdout.is_empty());
    // Empty stdin.
    let o = search_stdin(d.path(), &["-c", ""], b"");
    assert_eq!((o.code, o.out().as_str()), (1, ""));
    let o = search_stdin(d.path(), &["-c", "--include-zero", ""], b"");
    assert_eq!((o.code, o.out().as_str()), (1, "0\n"));
}

#[test]
fn files_and_directories() {
    let d = tmp();
    write(d.path(), "top.log", b"foo top\n");
    write(d.path(), "logs/b.log", b"foo b\n");
    write(d.path(), "logs/a.log", b"foo a\nbar\n");
    write(d.path(), "logs/sub/c.log", b"foo c\n");
    write(d.path(), "logs/.hidden.log", b"foo hidden\n");
    write(d.path(), "logs/none.log", b"nothing\n");
    std::fs::create_dir_all(d.path().join("empty")).unwrap();
    let o = search(d.path(), &["foo", "top.log", "logs"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(
        o.lines(),
        [
            "top.log:foo top",
            "logs/a.log:foo a",
            "logs/b.log:foo b",
            "logs/sub/c.log:foo c"
        ]
    );
    // One directory alone still names files.
    let o = search(d.path(), &["-c", "foo", "logs"]);
    assert_eq!(o.out(), "logs/a.log:1\nlogs/b.log:1\nlogs/sub/c.log:1\n");
    let o = search(d.path(), &["-l", "foo", "logs"]);
    assert_eq!(o.out(), "logs/a.log\nlogs/b.log\nlogs/sub/c.log\n");
    // An empty directory: nothing to search, no match.
    let o = search(d.path(), &["foo", "empty"]);
    assert_eq!(o.code, 1);
    assert!(o.stdout.is_empty());
    // No path and no piped input would search `./`; with -e too.
    same_as_rg(d.path(), &["foo", "top.log", "logs"]);
    same_as_rg(d.path(), &["-c", "foo", "logs"]);
    same_as_rg(d.path(), &["foo", "empty"]);
}

// ---------------------------------------------------------------------------
// Exit codes and bad input

#[test]
fn missing_file_among_good_ones() {
    let d = tmp();
    write(d.path(), "a.log", b"foo a\n");
    write(d.path(), "b.log", b"foo b\n");
    let o = search(d.path(), &["foo", "a.log", "missing.log", "b.log"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("missing.log"), "{}", o.stderr);
    assert!(o.stderr.contains("No such file"), "{}", o.stderr);
    assert_eq!(o.out(), "a.log:foo a\nb.log:foo b\n");
    let o = search(d.path(), &["-c", "foo", "a.log", "missing.log"]);
    assert_eq!(o.code, 2);
    assert_eq!(o.out(), "a.log:1\n");
    // Only a missing file.
    let o = search(d.path(), &["foo", "missing.log"]);
    assert_eq!(o.code, 2);
    assert!(o.stdout.is_empty());
    assert!(o.stderr.contains("missing.log"));
    // A missing file and no match elsewhere: still 2.
    let o = search(d.path(), &["zzz", "a.log", "missing.log"]);
    assert_eq!(o.code, 2);
}

#[test]
fn permission_denied() {
    use std::os::unix::fs::PermissionsExt;
    let d = tmp();
    write(d.path(), "ok.log", b"foo ok\n");
    let locked = write(d.path(), "locked.log", b"foo locked\n");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read(&locked).is_ok() {
        // Root (or a capability) reads mode-000 files: nothing to test.
        eprintln!("SKIPPED: permission_denied: this user can read a mode-000 file (root?)");
        return;
    }
    let o = search(d.path(), &["foo", "locked.log", "ok.log"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("locked.log"), "{}", o.stderr);
    assert!(o.stderr.contains("Permission denied"), "{}", o.stderr);
    assert_eq!(o.out(), "ok.log:foo ok\n");
    for extra in ["--no-mmap", "-c"] {
        let o = search(d.path(), &[extra, "foo", "locked.log", "ok.log"]);
        assert_eq!(o.code, 2, "{extra}");
        assert!(o.stderr.contains("Permission denied"), "{}", o.stderr);
    }
}

#[test]
fn invalid_regex_shows_where() {
    let (d, _) = fixture();
    for pat in ["a(b", "foo[z-a]", "x{2,1}", r"\"] {
        let o = search(d.path(), &[pat, "text.log"]);
        assert_eq!(o.code, 2, "{pat}");
        assert!(o.stdout.is_empty(), "{pat}");
        // The pattern and a caret under the offending position.
        assert!(o.stderr.contains(pat), "{pat}: {}", o.stderr);
        assert!(o.stderr.contains('^'), "{pat}: {}", o.stderr);
    }
    // The caret is under the open group: column of `(` in `a(b`.
    let o = search(d.path(), &["a(b", "text.log"]);
    let lines: Vec<&str> = o.stderr.lines().collect();
    let pat_line = lines.iter().position(|l| l.contains("a(b")).unwrap();
    let caret_line = lines[pat_line + 1];
    let col = lines[pat_line].find("a(b").unwrap() + 1;
    assert_eq!(caret_line.find('^'), Some(col), "{}", o.stderr);
    // The same text under -F is fine.
    let o = search(d.path(), &["-F", "a(b", "text.log"]);
    assert_eq!(o.code, 1);
    // One bad pattern among good ones fails the whole search.
    let o = search(d.path(), &["-e", "foo", "-e", "(", "text.log"]);
    assert_eq!(o.code, 2);
    assert!(o.stdout.is_empty());
}

#[test]
fn empty_pattern_matches_every_line() {
    let (d, _) = fixture();
    let n = TEXT.lines().count();
    for args in [
        &["", "text.log"][..],
        &["-F", "", "text.log"][..],
        &["-e", "", "text.log"][..],
        &["-e", "zzz", "-e", "", "text.log"][..],
    ] {
        let o = search(d.path(), args);
        assert_eq!(o.code, 0, "{args:?}");
        assert_eq!(o.out(), TEXT, "{args:?}");
    }
    let o = search(d.path(), &["-c", "", "text.log"]);
    assert_eq!(o.out(), format!("{n}\n"));
    // An empty pattern in a pattern file too.
    write(d.path(), "p.txt", b"zzz\n\n");
    let o = search(d.path(), &["-c", "-f", "p.txt", "text.log"]);
    assert_eq!(o.out(), format!("{n}\n"));
    // -o with an empty match prints nothing but the line is selected.
    let o = search(d.path(), &["-c", "-x", "", "text.log"]);
    assert_eq!(o.code, 1);
    same_as_rg(d.path(), &["", "text.log"]);
    same_as_rg(d.path(), &["-c", "-f", "p.txt", "text.log"]);
}

#[test]
fn binary_file() {
    let d = tmp();
    write(d.path(), "b.bin", b"foo\x00bar\nfoo again\nnone\n");
    write(d.path(), "t.txt", b"foo text\n");
    let o = search(d.path(), &["foo", "b.bin"]);
    assert_eq!(o.code, 0);
    assert_eq!(
        o.out(),
        "binary file matches (found \"\\0\" byte around offset 3)\n"
    );
    let o = search(d.path(), &["foo", "b.bin", "t.txt"]);
    assert_eq!(
        o.out(),
        "b.bin: binary file matches (found \"\\0\" byte around offset 3)\nt.txt:foo text\n"
    );
    // -c and -l still work on binary files.
    let o = search(d.path(), &["-c", "foo", "b.bin"]);
    assert_eq!(o.out(), "2\n");
    let o = search(d.path(), &["-l", "foo", "b.bin", "t.txt"]);
    assert_eq!(o.out(), "b.bin\nt.txt\n");
    // No match in a binary file: nothing printed.
    let o = search(d.path(), &["zzz", "b.bin"]);
    assert_eq!(o.code, 1);
    assert!(o.stdout.is_empty());
    for args in [
        &["foo", "b.bin"][..],
        &["-c", "foo", "b.bin"][..],
        &["-H", "foo", "b.bin"][..],
        &["foo", "b.bin", "t.txt"][..],
    ] {
        same_as_rg(d.path(), args);
    }
}

#[test]
fn invalid_utf8_is_printed_raw() {
    let d = tmp();
    let data: &[u8] = b"ok line\nbad \xff\xfe foo \xc3\n\xe9cole foo\nend\n";
    write(d.path(), "bad.txt", data);
    let o = search(d.path(), &["foo", "bad.txt"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.stdout, b"bad \xff\xfe foo \xc3\n\xe9cole foo\n");
    let o = search(d.path(), &["-c", "-i", "FOO", "bad.txt"]);
    assert_eq!(o.out(), "2\n");
    let o = search(d.path(), &["-o", "f.o", "bad.txt"]);
    assert_eq!(o.out(), "foo\nfoo\n");
    // Invalid bytes are not U+FFFD: nothing to find.
    let o = search(d.path(), &["-F", "\u{fffd}", "bad.txt"]);
    assert_eq!(o.code, 1);
    let o = search(d.path(), &["-v", "foo", "bad.txt"]);
    assert_eq!(o.out(), "ok line\nend\n");
    let o = search(d.path(), &["--fuzzy", "1", "fox", "bad.txt"]);
    assert_eq!(o.code, 0);
    assert!(o.stderr.is_empty(), "{}", o.stderr);
    // An invalid-UTF-8 pattern (a raw byte) as a fixed string.
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let pat = OsStr::from_bytes(b"\xff\xfe");
        let o = search(d.path(), &[OsStr::new("-F"), pat, OsStr::new("bad.txt")]);
        assert_eq!(o.code, 0, "{}", o.stderr);
        assert_eq!(o.stdout, b"bad \xff\xfe foo \xc3\n");
    }
    for args in [
        &["foo", "bad.txt"][..],
        &["-n", "-i", "FOO", "bad.txt"][..],
        &["-o", "f.o", "bad.txt"][..],
        &["-v", "foo", "bad.txt"][..],
        &["-w", "foo", "bad.txt"][..],
    ] {
        same_as_rg(d.path(), args);
    }
}

#[test]
fn crlf_keeps_carriage_return() {
    let d = tmp();
    write(d.path(), "crlf.txt", b"foo\r\nbar foo\r\nbaz\r\n");
    let o = search(d.path(), &["foo", "crlf.txt"]);
    assert_eq!(o.stdout, b"foo\r\nbar foo\r\n");
    // `foo\r` is not the whole line `foo`.
    let o = search(d.path(), &["-x", "foo", "crlf.txt"]);
    assert_eq!(o.code, 1);
    assert!(o.stdout.is_empty());
    let o = search(d.path(), &["-c", "foo$", "crlf.txt"]);
    assert_eq!((o.code, o.out().as_str()), (1, ""));
    let o = search(d.path(), &["-c", "-x", "foo\r", "crlf.txt"]);
    assert_eq!(o.out(), "1\n");
    let o = search(d.path(), &["-c", "-w", "baz", "crlf.txt"]);
    assert_eq!(o.out(), "1\n");
    let o = search(d.path(), &["--json", "baz", "crlf.txt"]);
    let v = json_lines(&o);
    assert_eq!(v[1]["data"]["lines"]["text"], "baz\r\n");
    for args in [
        &["foo", "crlf.txt"][..],
        &["-x", "foo", "crlf.txt"][..],
        &["foo$", "crlf.txt"][..],
        &["-w", "baz", "crlf.txt"][..],
        &["-o", "o.*", "crlf.txt"][..],
    ] {
        same_as_rg(d.path(), args);
    }
}

#[test]
fn one_megabyte_line() {
    let d = tmp();
    let mut data = vec![b'a'; 1 << 20];
    data.extend_from_slice(b"NEEDLE");
    data.extend_from_slice(&[b'b'; 1000]);
    data.extend_from_slice(b"\nshort NEEDLE\n");
    write(d.path(), "big.txt", &data);
    let o = search(d.path(), &["-c", "-F", "NEEDLE", "big.txt"]);
    assert_eq!(o.out(), "2\n");
    let o = search(d.path(), &["-o", "-n", "NEE+DLE", "big.txt"]);
    assert_eq!(o.out(), "1:NEEDLE\n2:NEEDLE\n");
    let o = search(d.path(), &["-n", "NEEDLE", "big.txt"]);
    assert_eq!(o.stdout.len(), data.len() + 2 + 2);
    assert!(o.out().starts_with("1:aaaa"));
    let o = search(d.path(), &["-c", "-x", "a*NEEDLEb*", "big.txt"]);
    assert_eq!(o.out(), "1\n");
    let o = search(
        d.path(),
        &["-c", "--fuzzy", "1", "NEDLE", "-j", "2", "big.txt"],
    );
    assert_eq!(o.out(), "2\n");
    let o = search(d.path(), &["--json", "Eb{1000}", "big.txt"]);
    let v = json_lines(&o);
    assert_eq!(v[1]["data"]["submatches"][0]["start"], (1 << 20) + 5);
    assert_eq!(v[1]["data"]["submatches"][0]["end"], (1 << 20) + 1006);
}

#[test]
fn pattern_longer_than_64_bytes() {
    let d = tmp();
    let long: String = (0..100).map(|i| (b'a' + (i % 26) as u8) as char).collect();
    assert_eq!(long.len(), 100);
    let mut typo = long.clone().into_bytes();
    typo[70] = b'#';
    let typo = String::from_utf8(typo).unwrap();
    let data = format!(
        "x {long} y\n{}\nno match here\n{typo}\n",
        long.to_uppercase()
    );
    write(d.path(), "l.txt", data.as_bytes());
    let o = search(d.path(), &["-n", "-F", &long, "l.txt"]);
    assert_eq!(o.out(), format!("1:x {long} y\n"));
    let o = search(d.path(), &["-c", &long, "l.txt"]);
    assert_eq!(o.out(), "1\n");
    let o = search(d.path(), &["-c", "-i", "-F", &long, "l.txt"]);
    assert_eq!(o.out(), "2\n");
    let o = search(d.path(), &["-c", "-i", &long, "l.txt"]);
    assert_eq!(o.out(), "2\n");
    let o = search(d.path(), &["-c", "-F", "-e", &long, "-e", &typo, "l.txt"]);
    assert_eq!(o.out(), "2\n");
    let o = search(d.path(), &["-c", "-w", "-F", &long, "l.txt"]);
    assert_eq!(o.out(), "1\n");
    // Fuzzy past one machine word: one substitution at byte 70.
    let o = search(d.path(), &["-n", "--fuzzy", "1", &long, "l.txt"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.out(), format!("1:x {long} y\n4:{typo}\n"));
    let o = search(d.path(), &["-c", "--fuzzy", "0", &long, "l.txt"]);
    assert_eq!(o.out(), "1\n");
    let star = format!("{}*{}", &long[..40], &long[60..]);
    let o = search(d.path(), &["-c", "--wildcard", &star, "l.txt"]);
    assert_eq!(o.out(), "1\n");
}

#[test]
fn no_trailing_newline() {
    let d = tmp();
    write(d.path(), "n.txt", b"first\nlast foo");
    let o = search(d.path(), &["foo", "n.txt"]);
    assert_eq!(o.out(), "last foo\n");
    let o = search(d.path(), &["-c", "", "n.txt"]);
    assert_eq!(o.out(), "2\n");
    let o = search(d.path(), &["-x", "last foo", "n.txt"]);
    assert_eq!(o.out(), "last foo\n");
    let o = search(d.path(), &["-v", "-n", "first", "n.txt"]);
    assert_eq!(o.out(), "2:last foo\n");
    let o = search(d.path(), &["-c", "foo$", "n.txt"]);
    assert_eq!(o.out(), "1\n");
    // A file that is only a newline has one empty line.
    write(d.path(), "nl.txt", b"\n");
    let o = search(d.path(), &["-c", "-x", "", "nl.txt"]);
    assert_eq!(o.out(), "1\n");
    same_as_rg(d.path(), &["-n", "foo", "n.txt"]);
    same_as_rg(d.path(), &["-c", "", "nl.txt"]);
    same_as_rg(d.path(), &["-A1", "first", "n.txt"]);
}

#[test]
fn usage_errors_exit_2() {
    let (d, _) = fixture();
    let o = search::<&str>(d.path(), &[]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("pattern"), "{}", o.stderr);
    let o = search(d.path(), &["--no-such-flag", "foo", "text.log"]);
    assert_eq!(o.code, 2);
    let o = search(d.path(), &["-m", "x", "foo", "text.log"]);
    assert_eq!(o.code, 2);
    let o = run_in(exe(), d.path(), &["search", "--help"], None);
    assert_eq!(o.code, 0);
    for flag in [
        "--fixed-strings",
        "--fuzzy",
        "--wildcard",
        "--json",
        "--search-zip",
    ] {
        assert!(o.out().contains(flag), "--help lacks {flag}");
    }
}

// ---------------------------------------------------------------------------
// Agreement with GNU grep

/// `grep -c ARGS FILE` vs `logsieve search -c --include-zero ARGS FILE`
/// (and the printed lines) for the queries the issue lists. grep runs in
/// the C.UTF-8 locale with -E, so that regex syntax and case folding are
/// comparable; --include-zero prints grep's 0 for no match.
fn agree_with_grep(file: &Path, queries: &[(&[&str], &[&str])]) -> usize {
    let dir = file.parent().unwrap();
    let name = file.file_name().unwrap().to_str().unwrap();
    let mut nonzero = 0;
    for (ours_args, grep_args) in queries {
        let mut a: Vec<&str> = vec!["-c", "--include-zero"];
        a.extend_from_slice(ours_args);
        a.push(name);
        let ours = search(dir, &a);
        let mut g = Command::new("grep");
        g.env("LC_ALL", "C.UTF-8")
            .current_dir(dir)
            .arg("-c")
            .arg("-a")
            .args(*grep_args)
            .arg(name);
        let theirs = g.output().expect("grep");
        let want = String::from_utf8_lossy(&theirs.stdout).into_owned();
        assert_eq!(
            ours.out(),
            want,
            "{}: logsieve {ours_args:?} vs grep {grep_args:?}",
            file.display()
        );
        if want.trim() != "0" {
            nonzero += 1;
            // The lines themselves, not just how many.
            let mut a: Vec<&str> = ours_args.to_vec();
            a.push(name);
            let ours = search(dir, &a);
            let theirs = Command::new("grep")
                .env("LC_ALL", "C.UTF-8")
                .current_dir(dir)
                .arg("-a")
                .args(*grep_args)
                .arg(name)
                .output()
                .unwrap();
            assert!(
                ours.stdout == theirs.stdout,
                "{}: lines differ for {ours_args:?}",
                file.display()
            );
        }
    }
    nonzero
}

#[test]
fn counts_agree_with_grep_on_generated_logs() {
    if !have("grep") {
        return;
    }
    let queries: &[(&[&str], &[&str])] = &[
        (&["-F", "ERROR_503"], &["-F", "ERROR_503"]),
        (
            &["-F", "-i", "nullpointerexception"],
            &["-F", "-i", "nullpointerexception"],
        ),
        (&["-F", "-i", "error"], &["-F", "-i", "error"]),
        (&["-w", "error"], &["-w", "error"]),
        (
            &["-x", "-F", "at java.lang.Thread.run(Thread.java:750)"],
            &["-x", "-F", "at java.lang.Thread.run(Thread.java:750)"],
        ),
        (&["-v", "-F", "INFO"], &["-v", "-F", "INFO"]),
        (&["ERROR_5[0-9][0-9]"], &["-E", "ERROR_5[0-9][0-9]"]),
        (&[r"192\.168\.1\.[0-9]+ "], &["-E", r"192\.168\.1\.[0-9]+ "]),
        (
            &["-e", "ERROR_503", "-e", "NullPointer"],
            &["-e", "ERROR_503", "-e", "NullPointer"],
        ),
        (
            &["-F", "-e", "192.168.1.", "-e", "timeout"],
            &["-F", "-e", "192.168.1.", "-e", "timeout"],
        ),
    ];
    let n = agree_with_grep(generated(), queries);
    assert!(n >= 8, "too few queries matched anything ({n})");
}

#[test]
fn counts_agree_with_grep_on_loghub() {
    let dir = Path::new("/work/shared/data/loghub");
    if !dir.is_dir() {
        eprintln!("SKIPPED: {} is absent", dir.display());
        return;
    }
    if !have("grep") {
        return;
    }
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    let queries: &[(&[&str], &[&str])] = &[
        (&["-F", "error"], &["-F", "error"]),
        (&["-F", "-i", "error"], &["-F", "-i", "error"]),
        (&["-F", "-i", "info"], &["-F", "-i", "info"]),
        (&["-w", "INFO"], &["-w", "INFO"]),
        (&["-w", "-i", "fail"], &["-w", "-i", "fail"]),
        (&["-x", ""], &["-x", ""]),
        (&["-v", "-F", "INFO"], &["-v", "-F", "INFO"]),
        (
            &["[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}"],
            &["-E", "[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}"],
        ),
        (&["(WARN|ERROR|FATAL)"], &["-E", "(WARN|ERROR|FATAL)"]),
        (
            &["-e", "error", "-e", "Exception"],
            &["-e", "error", "-e", "Exception"],
        ),
        (
            &["-i", "-e", "denied", "-e", "refused"],
            &["-i", "-e", "denied", "-e", "refused"],
        ),
    ];
    let mut total = 0;
    for f in &logs {
        total += agree_with_grep(f, queries);
    }
    assert!(
        logs.is_empty() || total > 0,
        "no query matched any loghub file"
    );
}

// ---------------------------------------------------------------------------
// gen and demo

#[test]
fn gen_is_deterministic() {
    let d = tmp();
    let gen = |seed: &str, out: &str| {
        let o = run_in(
            exe(),
            d.path(),
            &["gen", "--lines", "2000", "--seed", seed, "-o", out],
            None,
        );
        assert_eq!(o.code, 0, "{}", o.stderr);
        std::fs::read(d.path().join(out)).unwrap()
    };
    let a = gen("7", "a.log");
    let b = gen("7", "b.log");
    let c = gen("8", "c.log");
    assert!(a == b, "same seed, different bytes");
    assert!(a != c, "different seeds, same bytes");
    assert_eq!(a.iter().filter(|&&b| b == b'\n').count(), 2000);
    // ~200 bytes a line.
    assert!((100_000..600_000).contains(&a.len()), "{} bytes", a.len());
    // stdout is the same stream.
    let o = run_in(
        exe(),
        d.path(),
        &["gen", "--lines", "2000", "--seed", "7"],
        None,
    );
    assert_eq!(o.code, 0);
    assert!(o.stdout == a, "-o - differs from -o FILE");
    // The lines are valid UTF-8 text without NUL.
    assert!(std::str::from_utf8(&a).is_ok());
    assert!(!a.contains(&0));
}

#[test]
fn demo_prints_the_reference_queries() {
    let d = tmp();
    let o = run_in(
        exe(),
        d.path(),
        &["demo", "--lines", "20000", "--runs", "1"],
        None,
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let s = o.out();
    for q in ["ERROR_503", "192.168.1", "error", "NullPointerException"] {
        assert!(s.contains(q), "demo table lacks {q}:\n{s}");
    }
    // `x` as its own cell in a row.
    assert!(
        s.lines()
            .any(|l| l.split_whitespace().next() == Some("x")
                || l.split_whitespace().any(|w| w == "x")),
        "demo table lacks the query `x`:\n{s}"
    );
    assert!(s.contains("cpu"), "no backend column:\n{s}");
    assert!(s.contains("20000"), "{s}");
}
