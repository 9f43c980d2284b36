//! `logsieve stats` and the aggregation flags of `logsieve search`: output,
//! JSON, exit codes and bad input.

use std::process::Command;

const LOG: &str = "\
2026-11-20T10:00:00.000Z web-01 INFO ok client=192.168.1.7
2026-11-20T10:05:00.000Z web-02 ERROR failed client=10.0.0.1
java.lang.IllegalStateException: boom
\tat com.acme.X(X.java:1)
2026-11-20T10:15:00.000Z web-01 WARN slow client=192.168.1.200
Nov 20 10:20:00 node-01 sshd[1]: Accepted from 192.168.1.8
2026-11-20T10:30:00.000Z web-02 INFO ok client=192.168.1.9
";

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(args: &[&str]) -> Out {
    // One file per run: tests run in parallel, and rewriting a file that
    // another run has memory-mapped would fault it.
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("logsieve-stats-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("app.log");
    std::fs::write(&path, LOG).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_logsieve"));
    cmd.args(args)
        .arg(&path)
        .env("XDG_RUNTIME_DIR", "/tmp")
        .stdin(std::process::Stdio::null());
    let o = cmd.output().unwrap();
    let out = Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    };
    let _ = std::fs::remove_dir_all(&dir);
    out
}

#[test]
fn count_by_host_in_a_window() {
    let o = run(&[
        "stats",
        "--backend",
        "cpu",
        "--since",
        "15m",
        "--count-by",
        "host",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout
            .starts_with("selected 3 lines in [2026-11-20T10:15:00.000Z, -)"),
        "{}",
        o.stdout
    );
    for row in ["1  web-01", "1  web-02", "1  node-01"] {
        assert!(o.stdout.contains(row), "{row} in {}", o.stdout);
    }
}

#[test]
fn search_with_aggregation_flags() {
    let o = run(&[
        "search",
        "--backend",
        "cpu",
        "-F",
        "192.168.1.",
        "--since",
        "15m",
        "--count-by",
        "host",
        "--json",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(o.stdout.trim()).unwrap();
    assert_eq!(v["selected"], 3);
    assert_eq!(v["groups"].as_array().unwrap().len(), 3);
    assert_eq!(v["since"]["utc"], "2026-11-20T10:15:00.000Z");
}

#[test]
fn histogram_json_and_bars() {
    let o = run(&["stats", "--backend", "cpu", "--histogram", "10m", "--json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(o.stdout.trim()).unwrap();
    let counts: Vec<u64> = v["histogram"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["count"].as_u64().unwrap())
        .collect();
    // 10:00 (4 lines: two inherit), 10:10 (1), 10:20 (1), 10:30 (1).
    assert_eq!(counts, vec![4, 1, 1, 1]);
    let o = run(&["stats", "--backend", "cpu", "--histogram", "10m"]);
    assert!(
        o.stdout.contains("2026-11-20T10:00:00.000Z      4 ██"),
        "{}",
        o.stdout
    );
}

#[test]
fn empty_window_exits_1() {
    let o = run(&["stats", "--backend", "cpu", "--since", "2030-01-01"]);
    assert_eq!(o.code, 1);
    assert!(o.stdout.starts_with("selected 0 lines"));
}

#[test]
fn bad_input_exits_2_with_a_message() {
    for (args, msg) in [
        (vec!["stats", "--since", "yesterday"], "--since"),
        (vec!["stats", "--until", "2026-02-30"], "--until"),
        (vec!["stats", "--histogram", "0m"], "--histogram"),
        (
            vec!["stats", "--histogram", "1ms", "--since", "2000-01-01"],
            "buckets",
        ),
        (vec!["stats", "--count-by", "nope"], "unknown field"),
        (
            vec!["stats", "--field", "novalue", "--count-by", "x"],
            "NAME=REGEX",
        ),
        (
            vec!["stats", "--field", "x=(", "--count-by", "x"],
            "--field x",
        ),
        (vec!["stats", "--time-format", "nope"], "--time-format"),
    ] {
        let o = run(&args);
        assert_eq!(o.code, 2, "{args:?}: {}", o.stderr);
        assert!(o.stderr.contains(msg), "{args:?}: {}", o.stderr);
    }
}
