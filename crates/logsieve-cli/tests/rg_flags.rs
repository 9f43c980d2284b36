//! The flags a ripgrep user types, each compared with rg 13 byte for byte
//! (skipped, loudly, where rg is missing), plus the front-end behaviour
//! around them: `logsieve PATTERN`, the defaults file, completions, man.

mod common;

use std::path::Path;

use common::{exe, run_limited, same_as_rg, search, tmp, write};
use std::time::Duration;

fn fixture() -> tempfile::TempDir {
    let d = tmp();
    write(d.path(), "a.txt", b"foo bar\nFoo baz\nnothing\nfoo foo\n");
    write(d.path(), "b.txt", b"xx\nfoo\n");
    write(d.path(), "c.txt", b"line1\r\nfoo\r\n");
    write(d.path(), "d.bin", b"bin\0foo\nfoo2\n");
    write(d.path(), "t.txt", b"  foo trim\n\tbar\n");
    d
}

fn logsieve(dir: &Path, args: &[&str]) -> common::Out {
    run_limited(exe(), dir, args, Duration::from_secs(20))
}

#[test]
fn smart_case_and_case_sensitive_last_wins() {
    let d = fixture();
    for args in [
        &["-S", "foo", "a.txt"][..],
        &["-S", "Foo", "a.txt"],
        &["--smart-case", "-i", "Foo", "a.txt"],
        &["-i", "-s", "foo", "a.txt"],
        &["-s", "-S", "foo", "a.txt"],
        &["-S", "-s", "-i", "FOO", "a.txt"],
        &["-S", r"\Sar", "a.txt"],
    ] {
        same_as_rg(d.path(), args);
    }
    assert_eq!(search(d.path(), &["-S", "foo", "a.txt"]).lines().len(), 3);
}

#[test]
fn text_searches_binary_files() {
    let d = fixture();
    same_as_rg(d.path(), &["foo", "d.bin"]);
    let o = same_as_rg(d.path(), &["-a", "foo", "d.bin"]);
    assert_eq!(o.stdout, b"bin\0foo\nfoo2\n");
    // Walked binary files are skipped, unless -a.
    same_as_rg(d.path(), &["foo", "."]);
    let o = same_as_rg(d.path(), &["--text", "foo", "."]);
    assert!(o.out().contains("./d.bin:foo2"));
}

#[test]
fn files_without_match_is_long_only() {
    let d = fixture();
    // rg 13 exits 0 when a walk skipped a binary file, printing nothing
    // (REGRESSION of theirs, not copied: our status follows what is
    // printed); compared on a tree without one.
    write(
        d.path(),
        "sub/m.txt",
        b"nothing
",
    );
    write(
        d.path(),
        "sub/n.txt",
        b"foo
",
    );
    same_as_rg(d.path(), &["--files-without-match", "foo", "sub"]);
    same_as_rg(d.path(), &["--files-without-match", "nothing", "sub"]);
    same_as_rg(d.path(), &["--files-without-match", "zzz", "a.txt"]);
    let o = same_as_rg(d.path(), &["--files-without-match", "foo", "a.txt"]);
    assert_eq!(o.code, Some(1));
    same_as_rg(
        d.path(),
        &["--files-without-match", "-0", "zzz", "a.txt", "b.txt"],
    );
    // -L stays --follow, as in rg 13.
    let o = search(d.path(), &["-L", "foo", "b.txt"]);
    assert_eq!(o.out(), "foo\n");
}

#[test]
fn byte_offset_column_vimgrep() {
    let d = fixture();
    for args in [
        &["-b", "foo", "a.txt"][..],
        &["-b", "-o", "foo", "a.txt"],
        &["-b", "-A1", "-n", "foo", "a.txt"],
        &["--column", "foo", "a.txt"],
        &["--column", "-o", "foo", "a.txt"],
        &["--column", "-A1", "foo", "b.txt", "a.txt"],
        &["--column", "-n", "-v", "foo", "a.txt"],
        &["-b", "-n", "--column", "-H", "foo", "a.txt"],
        &["--vimgrep", "foo", "a.txt", "b.txt"],
        &["--vimgrep", "foo", "a.txt"],
        &["--vimgrep", "-o", "foo", "a.txt"],
        // Coloured: the column and offset in resets, and --vimgrep
        // colouring only the match its line is printed for.
        &["--color", "always", "-b", "-n", "--column", "o", "a.txt"],
        &["--color", "always", "-b", "-o", "o", "a.txt"],
        &["--color", "always", "--vimgrep", "o", "a.txt", "b.txt"],
    ] {
        same_as_rg(d.path(), args);
    }
}

#[test]
fn null_after_file_names() {
    let d = fixture();
    for args in [
        &["-0", "foo", "a.txt", "b.txt"][..],
        &["-0", "-l", "foo", "a.txt", "b.txt"],
        &["-0", "-c", "foo", "a.txt", "b.txt"],
        &["-0", "-H", "-A1", "foo", "b.txt"],
    ] {
        same_as_rg(d.path(), args);
    }
}

#[test]
fn heading() {
    let d = fixture();
    for args in [
        &["--heading", "foo", "a.txt", "b.txt"][..],
        &["--heading", "-n", "foo", "a.txt", "b.txt"],
        &["--heading", "foo", "a.txt"],
        &["--heading", "-A1", "foo", "a.txt", "b.txt"],
        &["--heading", "-0", "foo", "a.txt", "b.txt"],
        &["--heading", "--no-heading", "foo", "a.txt", "b.txt"],
    ] {
        same_as_rg(d.path(), args);
    }
}

#[test]
fn passthru_trim() {
    let d = fixture();
    for args in [
        &["--passthru", "foo", "a.txt"][..],
        &["--passthru", "-n", "foo", "a.txt"],
        &["--passthrough", "-c", "foo", "a.txt"],
        &["--trim", "-n", "foo|bar", "t.txt"],
        &["--trim", "-o", "bar", "t.txt"],
        &["--trim", "-A1", "foo", "t.txt"],
    ] {
        same_as_rg(d.path(), args);
    }
}

#[test]
fn replace_with_capture_groups() {
    let d = fixture();
    for args in [
        &["-r", "X$1Y", r"(o+) (\w+)", "a.txt"][..],
        &["-r", "[$2|$1]", r"(o+) (\w+)", "a.txt"],
        &["-r", "${w}!", r"(?P<w>f\w+)", "a.txt"],
        &["-F", "-r", "<$0$1>", "foo", "a.txt"],
        &["-o", "-r", "Z", "o", "a.txt"],
        &["-i", "-r", "_", "foo", "a.txt"],
        &["-r", "-", "foo", "b.txt"],
    ] {
        same_as_rg(d.path(), args);
    }
}

#[test]
fn crlf() {
    let d = fixture();
    same_as_rg(d.path(), &["foo$", "c.txt"]);
    let o = same_as_rg(d.path(), &["--crlf", "foo$", "c.txt"]);
    assert_eq!(o.stdout, b"foo\r\n");
    same_as_rg(d.path(), &["--crlf", "-o", "o.*", "c.txt"]);
    same_as_rg(d.path(), &["--crlf", "-c", "^line1$", "c.txt"]);
    same_as_rg(d.path(), &["--crlf", "-H", "-c", "foo", "c.txt"]);
    same_as_rg(d.path(), &["--crlf", "-l", "foo", "c.txt"]);
}

#[test]
fn stats_block() {
    let d = fixture();
    // The two time lines differ run to run; the rest is compared.
    let strip = |s: String| -> String {
        s.lines()
            .filter(|l| !l.ends_with(" seconds") && !l.ends_with("seconds spent searching"))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    for args in [
        &["--stats", "foo", "a.txt", "b.txt"][..],
        &["--stats", "-c", "foo", "a.txt", "b.txt"],
        &["--stats", "zzz", "a.txt"],
    ] {
        let ours = search(d.path(), args);
        assert!(ours.out().contains("files searched"), "{args:?}");
        if common::have("rg") {
            let theirs = common::rg(d.path(), args);
            assert_eq!(strip(ours.out()), strip(theirs.out()), "{args:?}");
            assert_eq!(ours.code, theirs.code, "{args:?}");
        }
    }
}

#[test]
fn extended_regexp_is_a_no_op() {
    let d = fixture();
    // rg 13 reads -E as --encoding; ours is grep's -E. Compare with grep.
    let o = search(d.path(), &["-E", "fo+ (b|f)", "a.txt"]);
    assert_eq!(o.out(), "foo bar\nfoo foo\n");
    if common::have("grep") {
        let g = run_limited(
            "grep",
            d.path(),
            &["-E", "fo+ (b|f)", "a.txt"],
            Duration::from_secs(20),
        );
        assert_eq!(o.stdout, g.stdout);
    }
    // -P: tests/pcre2.rs.
}

#[test]
fn json_refuses_count_and_lists() {
    let d = fixture();
    for flag in ["-c", "-l", "--files-without-match"] {
        let o = search(d.path(), &["--json", flag, "foo", "a.txt"]);
        assert_eq!(o.code, Some(2), "{flag}");
        assert!(o.stdout.is_empty(), "{flag}");
        assert!(
            o.stderr.contains("cannot be used with"),
            "{flag}: {}",
            o.stderr
        );
        if common::have("rg") {
            assert_eq!(
                common::rg(d.path(), &["--json", flag, "foo", "a.txt"]).code,
                Some(2)
            );
        }
    }
}

#[test]
fn json_context_messages() {
    let d = fixture();
    let kinds = |o: &common::Out| -> Vec<(String, u64)> {
        o.lines()
            .iter()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|v| v["type"] == "match" || v["type"] == "context")
            .map(|v| {
                (
                    v["type"].as_str().unwrap().to_string(),
                    v["data"]["line_number"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let ours = search(d.path(), &["--json", "-A1", "foo", "a.txt"]);
    assert_eq!(
        kinds(&ours),
        [
            ("match".into(), 1),
            ("context".into(), 2),
            ("match".into(), 4)
        ]
    );
    if common::have("rg") {
        let theirs = common::rg(d.path(), &["--json", "-A1", "foo", "a.txt"]);
        assert_eq!(kinds(&ours), kinds(&theirs));
    }
}

#[test]
fn pattern_without_the_search_word() {
    let d = fixture();
    let o = logsieve(d.path(), &["foo", "b.txt"]);
    assert_eq!((o.code, o.out()), (Some(0), "foo\n".to_string()));
    let o = logsieve(d.path(), &["-n", "foo", "b.txt"]);
    assert_eq!(o.out(), "2:foo\n");
    // A pattern named like a subcommand: through `search`.
    write(d.path(), "words", b"gen\nstats\n");
    let o = logsieve(d.path(), &["search", "gen", "words"]);
    assert_eq!(o.out(), "gen\n");
    // --help still lists the subcommands.
    let o = logsieve(d.path(), &["--help"]);
    assert!(o.out().contains("completions") && o.out().contains("search"));
}

#[test]
fn defaults_file() {
    let d = fixture();
    write(d.path(), "cfg", b"# defaults\n--ignore-case\n\n  -n  \n");
    let run = |args: &[&str]| {
        let mut c = std::process::Command::new(exe());
        c.args(args)
            .current_dir(d.path())
            .env("LOGSIEVE_CONFIG_PATH", d.path().join("cfg"))
            .stdin(std::process::Stdio::null());
        c.output().unwrap()
    };
    let o = run(&["FOO", "b.txt"]);
    assert_eq!(o.stdout, b"2:foo\n");
    // The command line comes after the file: its last flag wins.
    let o = run(&["search", "-s", "-N", "FOO", "b.txt"]);
    assert_eq!(o.status.code(), Some(1));
    let o = run(&["--no-config", "FOO", "b.txt"]);
    assert_eq!(o.status.code(), Some(1));
    // Other subcommands do not read it.
    let o = run(&["gen", "--lines", "1"]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn completions_and_man() {
    let d = tmp();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = logsieve(d.path(), &["completions", shell]);
        assert_eq!(o.code, Some(0), "{shell}");
        assert!(o.out().contains("logsieve"), "{shell}");
    }
    let o = logsieve(d.path(), &["man"]);
    assert_eq!(o.code, Some(0));
    assert!(o.out().starts_with(".ie") || o.out().contains(".TH logsieve"));
}

#[test]
fn missing_runtime_dir_is_not_reported() {
    let d = tmp();
    let o = std::process::Command::new(exe())
        .args(["gpu-info"])
        .env_remove("XDG_RUNTIME_DIR")
        .current_dir(d.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!stderr.contains("XDG_RUNTIME_DIR"), "{stderr}");
}

#[test]
fn stats_without_timestamps_says_so() {
    let d = fixture();
    write(d.path(), "ts.log", b"2026-11-20T12:00:00Z x\n");
    for args in [
        &["stats", "--since", "15m", "a.txt"][..],
        &["search", "--since", "15m", "foo", "a.txt"],
    ] {
        let o = logsieve(d.path(), args);
        assert!(
            o.stderr
                .contains("no timestamps found in a.txt (use --time-format)"),
            "{args:?}: {}",
            o.stderr
        );
        assert!(
            !o.out().contains("1969") && !o.out().contains("1970"),
            "{}",
            o.out()
        );
    }
    // --explain names a year only for year-less formats.
    let o = logsieve(
        d.path(),
        &["stats", "--explain", "--since", "15m", "ts.log"],
    );
    assert!(o.stderr.contains("lines stamped, sorted)"), "{}", o.stderr);
    write(d.path(), "sys.log", b"Nov 20 12:00:00 host x\n");
    let o = logsieve(
        d.path(),
        &[
            "stats",
            "--explain",
            "--year",
            "2026",
            "--since",
            "15m",
            "sys.log",
        ],
    );
    assert!(o.stderr.contains("year 2026"), "{}", o.stderr);
}

#[test]
fn demo_table_aligns_and_says_what_gb_s_means() {
    let d = tmp();
    let o = logsieve(
        d.path(),
        &["demo", "--lines", "5000", "--runs", "1", "--no-gpu"],
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let table: Vec<String> = o
        .lines()
        .into_iter()
        .filter(|l| l.starts_with('|'))
        .collect();
    assert!(table.len() > 2);
    let widths: Vec<usize> = table.iter().map(|l| l.chars().count()).collect();
    assert!(widths.iter().all(|&w| w == widths[0]), "{table:#?}");
    assert!(o.out().contains("GB/s = corpus bytes"), "{}", o.out());
}

#[test]
fn explain_names_the_adapter_it_found() {
    let d = fixture();
    let o = search(d.path(), &["--explain", "foo", "a.txt"]);
    assert!(o.stderr.contains("adapter probe"), "{}", o.stderr);
    // Whatever adapter this machine has, a GPU that was not seen is never
    // claimed; on a software adapter or none, the note says which.
    assert!(!o.stderr.contains("a GPU (not started)"), "{}", o.stderr);
    if o.stderr.contains("software adapter") {
        assert!(
            o.stderr.contains("never chosen automatically"),
            "{}",
            o.stderr
        );
        assert!(!o.stderr.contains("Discrete"), "{}", o.stderr);
    }
}

/// `logsieve web` serves the page it says it serves: the URL it prints
/// answers with the page and the bundle's wasm; without a bundle it says
/// what to build and exits 2.
#[test]
fn web_serves_the_page_it_prints() {
    use std::io::{BufRead, BufReader, Read, Write};
    let d = tmp();
    let o = logsieve(d.path(), &["web", "--dir", "nothing-here", "--port", "0"]);
    assert_eq!(o.code, Some(2));
    assert!(o.stderr.contains("scripts/build-web.sh"), "{}", o.stderr);
    write(d.path(), "web/pkg/logsieve_web_bg.wasm", b"\0asm-fake");
    let mut child = std::process::Command::new(exe())
        .args(["web", "--dir", "web", "--port", "0"])
        .current_dir(d.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let url = first
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("no URL in {first:?}"));
    let host = url.trim_start_matches("http://").trim_end_matches('/');
    let get = |path: &str| -> String {
        let mut s = std::net::TcpStream::connect(host).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut body = Vec::new();
        s.read_to_end(&mut body).unwrap();
        String::from_utf8_lossy(&body).into_owned()
    };
    let page = get("/");
    let wasm = get("/pkg/logsieve_web_bg.wasm");
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains("<title>logsieve"), "{page}");
    assert!(
        wasm.starts_with("HTTP/1.1 200") && wasm.ends_with("\0asm-fake"),
        "{wasm}"
    );
}
