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
    run_on(LOG, args)
}

/// `logsieve ARGS FILE`, FILE holding `log`.
fn run_on(log: &str, args: &[&str]) -> Out {
    // One file per run: tests run in parallel, and rewriting a file that
    // another run has memory-mapped would fault it.
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("logsieve-stats-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("app.log");
    std::fs::write(&path, log).unwrap();
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
        (vec!["stats", "--histogram", "automatic"], "--histogram"),
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

/// Three days of a log written in bursts: 2026-11-20 00:00 to 2026-11-22
/// 23:59, 5 stamped lines.
const LONG: &str = "\
2026-11-20T00:00:10.000Z web-01 INFO start
2026-11-20T00:00:50.000Z web-01 INFO again
2026-11-21T12:30:00.000Z web-02 ERROR failed
2026-11-22T23:59:00.000Z web-01 WARN late
2026-11-22T23:59:30.000Z web-01 INFO end
";

/// The text histogram's rows: (bucket start, count).
fn rows(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .skip_while(|l| !l.starts_with("bucket start"))
        .skip(1)
        .filter(|l| l.starts_with("20"))
        .map(|l| {
            let mut f = l.split_whitespace();
            let t = f.next().unwrap().to_string();
            (t, f.next().unwrap().parse().unwrap())
        })
        .collect()
}

fn json_buckets(o: &Out) -> (i64, Vec<u64>) {
    let v: serde_json::Value = serde_json::from_str(o.stdout.trim()).unwrap();
    let counts = v["histogram"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["count"].as_u64().unwrap())
        .collect();
    (v["histogram"]["bucket_ms"].as_i64().unwrap(), counts)
}

/// REGRESSION: `--histogram 1m` over days printed a row per empty minute
/// (tens of thousands); the text report shows the buckets with lines and
/// says how many it left out, --json keeps every bucket.
#[test]
fn histogram_text_skips_empty_buckets_json_keeps_them() {
    let o = run_on(LONG, &["stats", "--backend", "cpu", "--histogram", "1m"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let want = [
        ("2026-11-20T00:00:00.000Z", 2),
        ("2026-11-21T12:30:00.000Z", 1),
        ("2026-11-22T23:59:00.000Z", 2),
    ];
    let got = rows(&o.stdout);
    let got: Vec<(&str, u64)> = got.iter().map(|(t, c)| (t.as_str(), *c)).collect();
    assert_eq!(got, want, "{}", o.stdout);
    // 00:00 on the 20th to 23:59 on the 22nd: 3 days of minutes.
    let all = 3 * 24 * 60;
    assert!(
        o.stdout
            .contains(&format!("({} empty buckets not shown;", all - 3)),
        "{}",
        o.stdout
    );
    assert!(o.stdout.lines().count() < 12, "{}", o.stdout);

    let o = run_on(
        LONG,
        &["stats", "--backend", "cpu", "--histogram", "1m", "--json"],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let (ms, counts) = json_buckets(&o);
    assert_eq!(ms, 60_000);
    assert_eq!(counts.len(), all);
    assert_eq!(counts.iter().filter(|&&c| c > 0).count(), 3);
    assert_eq!(counts.iter().sum::<u64>(), 5);

    // --include-zero: every bucket, in text too (as `search --histogram`).
    let o = run_on(
        LONG,
        &[
            "search",
            "--backend",
            "cpu",
            "--histogram",
            "1h",
            "--include-zero",
            "",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let got = rows(&o.stdout);
    assert_eq!(got.len(), 72, "{}", o.stdout);
    assert_eq!(got.iter().filter(|(_, c)| *c == 0).count(), 69);
    assert!(!o.stdout.contains("not shown"), "{}", o.stdout);
}

/// `--histogram auto`: the smallest round bucket giving at most 60 over
/// the span (the window, else the corpus), said in the text report.
#[test]
fn histogram_auto_picks_a_round_bucket() {
    let year = "2025-01-01T00:00:00Z a\n2025-12-31T00:00:00Z b\n";
    let decade = "2016-01-01T00:00:00Z a\n2025-12-31T00:00:00Z b\n";
    let cases: &[(&str, &[&str], &str, i64)] = &[
        // 10:00 to 10:30 (its last line in the last bucket): 31 buckets
        // of 1 min, 61 of 30 s.
        (LOG, &["--year", "2026"], "1m", 60_000),
        // 10:15 to 10:30: 31 of 30 s, 91 of 10 s.
        (LOG, &["--year", "2026", "--since", "15m"], "30s", 30_000),
        // 10:00 to 10:05 (the end excluded): exactly 60 of 5 s.
        (
            LOG,
            &["--year", "2026", "--until", "2026-11-20T10:05:00Z"],
            "5s",
            5_000,
        ),
        // Three days: 72 hours, 24 of 3 h.
        (LONG, &[], "3h", 10_800_000),
        (LONG, &["--since", "2026-11-22T00:00:00Z"], "30m", 1_800_000),
        (year, &[], "1w", 604_800_000),
        // Past 60 weeks the largest bucket stays.
        (decade, &[], "1w", 604_800_000),
    ];
    for &(log, extra, name, ms) in cases {
        let mut args = vec!["stats", "--backend", "cpu", "--histogram", "auto"];
        args.extend_from_slice(extra);
        let o = run_on(log, &args);
        assert_eq!(o.code, 0, "{extra:?}: {}", o.stderr);
        let said = format!("histogram: {name} buckets (--histogram auto)");
        assert!(o.stdout.contains(&said), "{extra:?}: {}", o.stdout);
        args.push("--json");
        let o = run_on(log, &args);
        let (got, counts) = json_buckets(&o);
        assert_eq!(got, ms, "{extra:?}");
        if log != decade {
            assert!(counts.len() <= 60, "{extra:?}: {} buckets", counts.len());
        }
    }
}
