//! The library's encoders against the CLI's printers, byte for byte on the
//! same query: `logsieve::rg_json` against `logsieve search --json`, and
//! `stats::json::stats_json` against `logsieve stats --json` — the
//! server answers with the library's, so its output is the CLI's.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use logsieve::rg_json::RgJson;
use logsieve::stats::{ColumnOptions, Columns, FieldSpec, StatsQuery};
use logsieve::{
    BackendChoice, Corpus, Document, LoadOptions, QueryBuilder, SearchOptions, Session, Syntax,
    Want,
};

/// Every ripgrep duration's numbers replaced (wall times differ).
/// The run's times zeroed, and the summary's `bytes_printed` with them: it
/// counts the bytes of the time strings printed before it, whose lengths
/// vary from run to run (REGRESSION: the comparison failed when the CLI's
/// elapsed time printed one digit more than the library's zero).
fn normalize_elapsed(s: &str) -> String {
    let s = &s
        .lines()
        .map(|l| {
            if !l.starts_with("{\"type\":\"summary\"") {
                return l.to_string();
            }
            match l.rfind("\"bytes_printed\":") {
                Some(i) => {
                    let tail = &l[i + 16..];
                    let end = tail
                        .find(|c: char| !c.is_ascii_digit())
                        .unwrap_or(tail.len());
                    format!("{}\"bytes_printed\":0{}", &l[..i], &tail[end..])
                }
                None => l.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = String::with_capacity(s.len());
    let mut rest: &str = s;
    while let Some(i) = rest.find("{\"secs\":") {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let close = tail.find('}').unwrap();
        out.push_str("{\"secs\":0,\"nanos\":0,\"human\":\"0s\"}");
        rest = &tail[close + 1..];
    }
    out.push_str(rest);
    out
}

fn write_logs(dir: &Path) -> String {
    let data = logsieve::gen::generate(&logsieve::gen::GenOptions {
        lines: 5_000,
        ..Default::default()
    });
    let mut data = data;
    // A line that is not UTF-8 (written as base64 `bytes`).
    data.extend_from_slice(b"2026-11-20T09:00:00Z ERROR_503 \xff\xfe bad bytes\n");
    let p = dir.join("app.log");
    std::fs::write(&p, data).unwrap();
    p.display().to_string()
}

#[test]
fn rg_json_is_the_cli_json_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_logs(dir.path());
    let mut corpus = Corpus::new();
    corpus.push(Document::open(Path::new(&path), LoadOptions::default()).unwrap());
    let session = Session::new(corpus);
    for (args, patterns, syntax) in [
        (vec!["-F"], vec!["ERROR_503"], Syntax::Fixed),
        (vec![], vec![r"user=u\d+7 "], Syntax::Regex),
        (vec!["-F"], vec!["192.168.1.", "timeout"], Syntax::Fixed),
        (vec!["-F"], vec!["absent text"], Syntax::Fixed),
    ] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_logsieve"));
        cmd.arg("search").arg("--json").args(&args);
        for p in &patterns {
            cmd.arg("-e").arg(p);
        }
        let out = cmd.arg(&path).output().unwrap();
        let cli = String::from_utf8(out.stdout).unwrap();
        let q = QueryBuilder::new().syntax(syntax).build(&patterns).unwrap();
        let res = session
            .search(
                &q,
                &SearchOptions {
                    backend: BackendChoice::Cpu,
                    ..Default::default()
                },
            )
            .unwrap();
        let mut lib = Vec::new();
        RgJson::new(&q, session.corpus(), res.backend.elapsed)
            .write_result(&mut lib, &res, Duration::ZERO)
            .unwrap();
        let lib = String::from_utf8(lib).unwrap();
        assert!(lib.lines().count() >= 1);
        assert_eq!(
            normalize_elapsed(&cli),
            normalize_elapsed(&lib),
            "{patterns:?}"
        );
    }
}

#[test]
fn stats_json_is_the_cli_stats_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_logs(dir.path());
    let out = Command::new(env!("CARGO_BIN_EXE_logsieve"))
        .args(["stats", "--json", "--year", "2026", "-F", "-e", "ERROR"])
        .args([
            "--since",
            "30m",
            "--count-by",
            "level",
            "--histogram",
            "5m",
            "--backend",
            "cpu",
        ])
        .arg(&path)
        .output()
        .unwrap();
    let cli = String::from_utf8(out.stdout).unwrap();
    let mut corpus = Corpus::new();
    corpus.push(Document::open(Path::new(&path), LoadOptions::default()).unwrap());
    let cols = Columns::build(
        &corpus,
        &ColumnOptions {
            time_format: None,
            year: 2026,
            doc_years: vec![2026],
            doc_mtimes: vec![None],
            fields: vec![FieldSpec::builtin("level").unwrap()],
        },
    );
    let mut session = Session::new(corpus);
    session.set_columns(cols);
    let cols = session.columns().unwrap();
    let q = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .build(&["ERROR"])
        .unwrap();
    let mut sq = StatsQuery {
        search: Some(&q),
        histogram: Some(5 * 60_000),
        ..Default::default()
    };
    sq.since_spec(cols, "30m").unwrap();
    sq.count_by(cols, &["level"]).unwrap();
    let (st, rep) = session
        .stats(
            &sq,
            &SearchOptions {
                backend: BackendChoice::Cpu,
                want: Want::Count,
                ..Default::default()
            },
        )
        .unwrap();
    let lib =
        logsieve::stats::json::stats_json(cols.span(None), &sq, &st, &["level".into()], &rep.name);
    assert_eq!(cli, format!("{}\n", serde_json::to_string(&lib).unwrap()));
}
