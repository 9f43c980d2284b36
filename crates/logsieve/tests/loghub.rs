//! The CPU engine against GNU grep on the Loghub 2k samples in
//! `/work/shared/data/loghub` (read in place, never copied into the repo):
//! counts and line lists for -F, -F -i, -F -w, -F -x, -v, a regex and
//! several `-e` patterns.
//!
//! grep runs with `LC_ALL=C`: its -i and -w are then ASCII, like ours on
//! ASCII data (FORMATS.md: every byte of these files is ASCII). Lines end in
//! CRLF in most files; both tools keep the `\r` in the line.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{build, Flags};
use logsieve::cpu::{search_doc, CpuOptions};
use logsieve::{Document, LoadOptions, Syntax, Want};

const DIR: &str = "/work/shared/data/loghub";

/// Per file: a literal, a word (for -w), a regex (valid as both POSIX ERE
/// and Rust regex), each known to occur in that file.
const PATTERNS: &[(&str, &str, &str, &str)] = &[
    (
        "Android_2k.log",
        "ActivityManager",
        "pid",
        "[0-9]+ +[0-9]+ [DIWE] ",
    ),
    ("Apache_2k.log", "[error]", "child", "slot [0-9]+"),
    ("BGL_2k.log", "KERNEL", "INFO", "R[0-9]+-M[0-9]"),
    ("HDFS_2k.log", "blk_-", "block", "blk_-?[0-9]+"),
    ("HPC_2k.log", "node-", "state", "node-[0-9]{2,3} "),
    (
        "Hadoop_2k.log",
        "MRAppMaster",
        "container",
        "attempt_[0-9_]+",
    ),
    ("HealthApp_2k.log", "Step_", "flush", "[|]30002312[|]"),
    ("Linux_2k.log", "sshd", "root", "rhost=[0-9.]+"),
    ("Mac_2k.log", "kernel", "ARPT", "\\[[0-9]+\\]"),
    (
        "OpenSSH_2k.log",
        "Failed password",
        "root",
        "port [0-9]+ ssh2",
    ),
    ("OpenStack_2k.log", "req-", "INFO", "status: [0-9]{3}"),
    ("Proxifier_2k.log", "chrome.exe", "open", ":[0-9]+ close"),
    ("Spark_2k.log", "BlockManager", "block", "rdd_[0-9]+_[0-9]+"),
    ("Thunderbird_2k.log", "crond", "root", "dn[0-9]+/dn[0-9]+"),
    ("Windows_2k.log", "CBS", "Info", "KB[0-9]+"),
    ("Zookeeper_2k.log", "WARN", "Send", "@[0-9]+\\]"),
];

fn grep_available() -> bool {
    Command::new("grep")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).contains("GNU"))
}

/// Line ids (0-based) that `grep -n <args> <path>` prints.
fn grep_lines(args: &[&[u8]], path: &Path) -> Vec<u64> {
    use std::os::unix::ffi::OsStrExt;
    let out = Command::new("grep")
        .env("LC_ALL", "C")
        .arg("-n")
        .args(args.iter().map(|a| std::ffi::OsStr::from_bytes(a)))
        .arg(path)
        .output()
        .expect("grep runs");
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "grep failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            let colon = l.iter().position(|&b| b == b':').expect("grep -n prefix");
            let n: u64 = std::str::from_utf8(&l[..colon]).unwrap().parse().unwrap();
            n - 1
        })
        .collect()
}

/// One query, as grep flags and as our builder.
struct Q {
    what: String,
    grep: Vec<Vec<u8>>,
    patterns: Vec<Vec<u8>>,
    syntax: Syntax,
    flags: Flags,
}

fn queries(lit: &str, word: &str, re: &str, first_line: &[u8]) -> Vec<Q> {
    let q = |what: &str, grep: &[&[u8]], ps: &[&[u8]], syntax, flags: &str| Q {
        what: what.to_string(),
        grep: grep.iter().map(|a| a.to_vec()).collect(),
        patterns: ps.iter().map(|p| p.to_vec()).collect(),
        syntax,
        flags: Flags::parse(flags),
    };
    let (l, w, r) = (lit.as_bytes(), word.as_bytes(), re.as_bytes());
    let lower = lit.to_ascii_lowercase().into_bytes();
    vec![
        q("-F", &[b"-F", b"-e", l], &[l], Syntax::Fixed, ""),
        q(
            "-F -i",
            &[b"-F", b"-i", b"-e", &lower],
            &[&lower],
            Syntax::Fixed,
            "i",
        ),
        q("-F -w", &[b"-F", b"-w", b"-e", w], &[w], Syntax::Fixed, "w"),
        q(
            "-F -w -i",
            &[b"-F", b"-w", b"-i", b"-e", w],
            &[w],
            Syntax::Fixed,
            "wi",
        ),
        // The first line, `\r` included where the file has CRLF.
        q(
            "-F -x",
            &[b"-F", b"-x", b"-e", first_line],
            &[first_line],
            Syntax::Fixed,
            "x",
        ),
        q("-F -v", &[b"-F", b"-v", b"-e", l], &[l], Syntax::Fixed, "v"),
        q("-E", &[b"-E", b"-e", r], &[r], Syntax::Regex, ""),
        q(
            "-E -v -i",
            &[b"-E", b"-v", b"-i", b"-e", r],
            &[r],
            Syntax::Regex,
            "vi",
        ),
        q(
            "-E -x",
            &[b"-E", b"-x", b"-e", b".*[0-9].*"],
            &[b".*[0-9].*"],
            Syntax::Regex,
            "x",
        ),
        q(
            "-F -e -e",
            &[b"-F", b"-e", l, b"-e", w],
            &[l, w],
            Syntax::Fixed,
            "",
        ),
        q(
            "-E -e -e",
            &[b"-E", b"-e", r, b"-e", w],
            &[r, w],
            Syntax::Regex,
            "",
        ),
    ]
}

#[test]
fn counts_and_lines_agree_with_gnu_grep() {
    let dir = PathBuf::from(DIR);
    if !dir.is_dir() {
        eprintln!("note: {DIR} is absent; skipping the Loghub comparison");
        return;
    }
    if !grep_available() {
        eprintln!("note: GNU grep is not installed; skipping the Loghub comparison");
        return;
    }
    let mut files = 0;
    let mut nonzero = 0;
    for &(name, lit, word, re) in PATTERNS {
        let path = dir.join(name);
        if !path.is_file() {
            eprintln!("note: {} is absent; skipped", path.display());
            continue;
        }
        files += 1;
        let doc = Document::open(&path, LoadOptions::default()).unwrap();
        let first_line = doc.line(0).to_vec();
        for q in queries(lit, word, re, &first_line) {
            let args: Vec<&[u8]> = q.grep.iter().map(|a| a.as_slice()).collect();
            let want = grep_lines(&args, &path);
            let query = build(&q.patterns, q.syntax, q.flags).unwrap();
            for threads in [1, 2] {
                let lines = search_doc(
                    &doc,
                    &query,
                    &CpuOptions {
                        threads,
                        ..Default::default()
                    },
                );
                let count = search_doc(
                    &doc,
                    &query,
                    &CpuOptions {
                        threads,
                        want: Want::Count,
                        max_count: None,
                        line_ids: true,
                    },
                );
                assert_eq!(
                    lines.lines, want,
                    "{name}: {} {:?} (threads {threads})",
                    q.what, q.patterns
                );
                assert_eq!(count.count, want.len() as u64, "{name}: {} count", q.what);
            }
            // Every pattern is chosen to occur in its file (-x included),
            // so an empty answer means a bad pattern, not agreement. (-v may
            // rightly select nothing: every HDFS line names a block.)
            assert!(
                q.flags.v || !want.is_empty(),
                "{name}: {} selects nothing",
                q.what
            );
            nonzero += 1;
        }
    }
    eprintln!("compared {files} files, {nonzero} queries with GNU grep");
}
