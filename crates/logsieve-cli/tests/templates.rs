//! `logsieve patterns`: the templates printed and as JSON (every line in
//! exactly one template whose text matches it), the library's miner as
//! the oracle, and the exit codes.

mod common;

use std::time::Duration;

use common::{exe, run_limited, tmp, write};

use logsieve::patterns::{Miner, MinerOptions};

const LOG: &str = "\
2026-11-20T10:00:00Z web-01 INFO connected to 10.0.0.1 in 20ms
2026-11-20T10:01:00Z web-02 INFO connected to 10.0.0.7 in 31ms
2026-11-20T10:02:00Z web-01 ERROR disk full on /dev/sda1
2026-11-20T10:03:00Z web-02 INFO connected to 10.0.0.9 in 5ms
2026-11-20T10:04:00Z web-01 ERROR disk full on /dev/sdb2
2026-11-20T10:05:00Z web-03 WARN slow request id=42 took 1.5s
";

fn run(args: &[&str]) -> common::Out {
    let dir = tmp();
    write(dir.path(), "app.log", LOG.as_bytes());
    let mut a: Vec<&str> = vec!["patterns"];
    a.extend_from_slice(args);
    a.push("app.log");
    run_limited(exe(), dir.path(), &a, Duration::from_secs(60))
}

/// Does template `p` match `line`, `<_>` read as one or more characters?
fn matches(p: &str, line: &str) -> bool {
    fn rest(parts: &[&str], s: &str) -> bool {
        match parts {
            [] => s.is_empty(),
            [last] => s.ends_with(last) && s.len() > last.len(),
            [lit, tail @ ..] => (1..=s.len()).any(|i| {
                s.is_char_boundary(i) && s[i..].starts_with(lit) && rest(tail, &s[i + lit.len()..])
            }),
        }
    }
    let parts: Vec<&str> = p.split("<_>").collect();
    match parts.split_first() {
        Some((first, [])) => line == *first,
        Some((first, tail)) => line.starts_with(first) && rest(tail, &line[first.len()..]),
        None => false,
    }
}

#[test]
fn json_is_the_miner_and_every_line_matches_one_template() {
    let o = run(&["--json"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut m = Miner::new(MinerOptions::default());
    let texts: Vec<&[u8]> = LOG.lines().map(str::as_bytes).collect();
    let mut ids = Vec::new();
    m.add_in_order(&texts, &mut ids);
    assert_eq!(v["lines"], 6);
    assert_eq!(v["total"], m.len() as u64);
    let templates = v["templates"].as_array().unwrap();
    let patterns: Vec<&str> = templates
        .iter()
        .map(|t| t["pattern"].as_str().unwrap())
        .collect();
    assert_eq!(
        patterns[0], "<_> <_> INFO connected to <_> in <_>",
        "{patterns:?}"
    );
    assert_eq!(templates[0]["count"], 3);
    for (line, id) in LOG.lines().zip(ids) {
        let p = m.pattern(id);
        assert!(patterns.contains(&p.as_str()), "{p}");
        assert!(matches(&p, line), "{line:?} / {p:?}");
    }
    let sum: u64 = templates
        .iter()
        .map(|t| {
            let per: u64 = t["samples"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s[1].as_u64().unwrap())
                .sum();
            assert_eq!(per, t["count"].as_u64().unwrap());
            per
        })
        .sum();
    assert_eq!(sum, 6);
}

#[test]
fn text_lists_the_largest_with_a_sparkline() {
    let o = run(&["-n", "1", "--width", "6"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let lines = o.lines();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].trim_start().starts_with("3  50.0%"),
        "{}",
        lines[0]
    );
    assert!(lines[0].ends_with("<_> <_> INFO connected to <_> in <_>"));
    assert!(lines[0].contains('█'), "{}", lines[0]);
    assert!(lines[1].starts_with("6 lines, "), "{}", lines[1]);
    assert!(
        lines[1].ends_with("(1 shown; -n 0 for all)"),
        "{}",
        lines[1]
    );
    let bad = run(&["--sim-threshold", "2"]);
    assert_eq!(bad.code, Some(2));
    let dir = tmp();
    write(dir.path(), "empty.log", b"");
    let o = run_limited(
        exe(),
        dir.path(),
        &["patterns", "empty.log"],
        Duration::from_secs(60),
    );
    assert_eq!(o.code, Some(1), "no line: exit 1");
}
