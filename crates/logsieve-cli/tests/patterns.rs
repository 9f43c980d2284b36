//! `--count-per-pattern`, `--patterns-matched` and the pattern names of
//! `--json` submatches, through the binary.

use std::process::Command;

fn run(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_logsieve"))
        .current_dir(dir)
        .arg("search")
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run logsieve");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn setup() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!(
        "logsieve-cli-patterns-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(
        d.join("app.log"),
        "a 10.0.0.1 x\nabc 10.0.0.1 10.0.0.1\nfoo\nABC aa aaa\n",
    )
    .unwrap();
    std::fs::write(d.join("iocs.txt"), "abc\n10.0.0.1\nzzz\nABC\naa\n").unwrap();
    d
}

#[test]
fn count_per_pattern_table_and_matched_list() {
    let d = setup();
    let (code, out, err) = run(
        &d,
        &["-F", "-f", "iocs.txt", "--count-per-pattern", "app.log"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "index\tlines\tpattern\n0\t1\tabc\n1\t2\t10.0.0.1\n2\t0\tzzz\n3\t1\tABC\n4\t1\taa\n"
    );
    let (_, out, _) = run(
        &d,
        &[
            "-F",
            "-i",
            "-o",
            "-f",
            "iocs.txt",
            "--count-per-pattern",
            "app.log",
        ],
    );
    // "aa" in "aa aaa": non-overlapping, as `-o` with that pattern alone.
    assert_eq!(
        out,
        "index\tlines\toccurrences\tpattern\n0\t2\t2\tabc\n1\t2\t3\t10.0.0.1\n2\t0\t0\tzzz\n3\t2\t2\tABC\n4\t1\t2\taa\n"
    );
    let (code, out, _) = run(
        &d,
        &["-F", "-f", "iocs.txt", "--patterns-matched", "app.log"],
    );
    assert_eq!(code, 0);
    assert_eq!(out, "abc\n10.0.0.1\nABC\naa\n");
    let (code, out, _) = run(
        &d,
        &[
            "-F",
            "-e",
            "zzz",
            "-e",
            "qqq",
            "--patterns-matched",
            "app.log",
        ],
    );
    assert_eq!((code, out.as_str()), (1, ""));
}

#[test]
fn count_per_pattern_json_and_submatch_names() {
    let d = setup();
    let (code, out, err) = run(
        &d,
        &[
            "-F",
            "-f",
            "iocs.txt",
            "--count-per-pattern",
            "--json",
            "app.log",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let v: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(v.len(), 6);
    assert_eq!(v[1]["data"]["pattern"]["text"], "10.0.0.1");
    assert_eq!(v[1]["data"]["lines"], 2);
    assert_eq!(v[1]["data"]["occurrences"], 3);
    assert_eq!(v[5]["type"], "summary");
    assert_eq!(v[5]["data"]["patterns_matched"], 4);
    let (_, out, _) = run(&d, &["-F", "-i", "-f", "iocs.txt", "--json", "app.log"]);
    let m: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|x| x["type"] == "match")
        .collect();
    // Line 2: "abc" is patterns 0 and 3 under -i.
    let sub = &m[1]["data"]["submatches"][0];
    assert_eq!(sub["match"]["text"], "abc");
    let idx: Vec<u64> = sub["patterns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["index"].as_u64().unwrap())
        .collect();
    assert_eq!(idx, vec![0, 3]);
}

#[test]
fn conflicting_flags_are_usage_errors() {
    let d = setup();
    for extra in ["-v", "-c", "-l", "-q"] {
        let (code, _, err) = run(
            &d,
            &[
                "-F",
                "-f",
                "iocs.txt",
                "--count-per-pattern",
                extra,
                "app.log",
            ],
        );
        assert_eq!(code, 2, "{extra}: {err}");
    }
}

/// `--gpu-kernel bloom` on a set with a pattern shorter than 4 bytes runs
/// ac, and `--explain` says so; a set of longer patterns runs bloom. The
/// results match the CPU's.
#[test]
fn gpu_bloom_falls_back_to_ac_for_short_patterns_and_says_so() {
    let d = setup();
    std::fs::write(d.join("long.txt"), "10.0.0.1\nabc 1\nnope\n").unwrap();
    let gpu = [
        "--backend",
        "gpu",
        "--gpu-kernel",
        "bloom",
        "--explain",
        "-F",
        "-f",
    ];
    for (file, ran, note) in [
        ("iocs.txt", "gpu/ac", true),
        ("long.txt", "gpu/bloom", false),
    ] {
        let mut args = gpu.to_vec();
        args.extend([file, "app.log"]);
        let (code, out, err) = run(&d, &args);
        if code == 2 && err.contains("--backend gpu") {
            logsieve::gpu::or_skip::<(), _>("bloom CLI test", Err(err));
            return;
        }
        assert!(err.contains(&format!("explain: ran {ran} ")), "{err}");
        assert_eq!(
            err.contains("bloom needs patterns of at least 4 bytes"),
            note,
            "{err}"
        );
        let (cpu_code, cpu_out, _) = run(&d, &["--backend", "cpu", "-F", "-f", file, "app.log"]);
        assert_eq!((code, &out), (cpu_code, &cpu_out), "{file}");
    }
}
