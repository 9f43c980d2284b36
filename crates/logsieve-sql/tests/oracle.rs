//! SQL with filters pushed down to the engine against the same SQL with
//! pushdown off (DataFusion filters every line itself: the oracle), on
//! one table of queries: each pushed filter kind alone and combined,
//! negations, group-by, order by + limit, time windows, watchlist joins,
//! non-pushable predicates beside pushable ones. Over generated logs, a
//! hand-made file of edge lines, the loghub files when present, random
//! lines (proptest) and a sweep of time bounds; on the CPU engine and,
//! when there is an adapter, on the GPU.

use std::sync::Arc;

use logsieve::gen::{generate, GenOptions};
use logsieve::stats::{ColumnOptions, Columns, FieldSpec};
use logsieve::{BackendChoice, Corpus, SearchOptions, Session, WatchlistOptions};
use logsieve_sql::{Answer, Local, SqlEngine, SqlLimits};
use proptest::prelude::*;

mod queries;
use queries::{EDGE, QUERIES};

fn session_of(docs: Vec<(&str, Vec<u8>)>) -> Session {
    let mut corpus = Corpus::from_bytes(docs[0].0, docs[0].1.clone());
    for (name, data) in docs.into_iter().skip(1) {
        corpus.push(logsieve::Document::from_bytes(name, data));
    }
    let mut fields = vec![FieldSpec::level(), FieldSpec::host()];
    fields.push(FieldSpec::parse("user=user=(u\\d+)").unwrap());
    let cols = Columns::build(
        &corpus,
        &ColumnOptions {
            fields,
            year: 2026,
            ..Default::default()
        },
    );
    let mut s = Session::new(corpus);
    s.set_columns(cols);
    s.define_watchlist(
        "iocs",
        &["192.168.1.9", "failed", "timeout", "u7", "ERROR"],
        WatchlistOptions::default(),
    )
    .unwrap();
    s
}

fn generated() -> Session {
    let data = generate(&GenOptions {
        lines: 3000,
        ..Default::default()
    });
    session_of(vec![("gen.log", data), ("edge.log", EDGE.to_vec())])
}

fn engine(source: Arc<Local>, backend: BackendChoice, pushdown: bool) -> SqlEngine {
    let limits = SqlLimits {
        partitions: 3,
        pushdown,
        ..SqlLimits::local()
    };
    let opts = SearchOptions {
        backend,
        threads: 2,
        ..Default::default()
    };
    SqlEngine::new(source, opts, limits).unwrap()
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap()
}

/// The answer as CSV text (row order kept: queries without ORDER BY
/// are compared as sorted lines).
fn csv(a: &Answer, sort: bool) -> String {
    let mut out = Vec::new();
    logsieve_sql::format::write(&mut out, a, logsieve_sql::format::Format::Csv).unwrap();
    let text = String::from_utf8(out).unwrap();
    if !sort {
        return text;
    }
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    lines.join("\n")
}

/// Every query of `queries` with pushdown and without: the same rows.
fn check(source: Arc<Local>, backend: BackendChoice, queries: &[&str], what: &str) -> Vec<String> {
    let rt = rt();
    let pushed = engine(source.clone(), backend, true);
    let oracle = engine(source, BackendChoice::Cpu, false);
    let mut answers = Vec::new();
    for q in queries {
        let sort = !q.contains("ORDER BY");
        let a = rt
            .block_on(pushed.query(q))
            .unwrap_or_else(|e| panic!("{what}: {q}: {e}"));
        let b = rt
            .block_on(oracle.query(q))
            .unwrap_or_else(|e| panic!("{what} (oracle): {q}: {e}"));
        // A LIMIT without ORDER BY picks any rows: only the count is
        // compared, and that every row is one the oracle selects.
        if q.contains("LIMIT") && !q.contains("ORDER BY") {
            assert_eq!(a.rows, b.rows, "{what}: {q}");
            let unlimited = q.split(" LIMIT").next().unwrap();
            let all = rt.block_on(oracle.query(unlimited)).unwrap();
            let all = csv(&all, true);
            for row in csv(&a, true).lines().filter(|l| !l.starts_with("file")) {
                assert!(
                    all.lines().any(|l| l == row),
                    "{what}: {q}: {row} not selected"
                );
            }
            answers.push(format!("{} rows", a.rows));
            continue;
        }
        let (x, y) = (csv(&a, sort), csv(&b, sort));
        assert_eq!(x, y, "{what}: {q}");
        answers.push(x);
    }
    answers
}

#[test]
fn every_query_of_the_table_answers_as_the_oracle_on_the_cpu() {
    let answers = check(Local::new(generated()), BackendChoice::Cpu, QUERIES, "cpu");
    // The table is not vacuous: most queries select something.
    let nonzero = answers
        .iter()
        .filter(|a| !a.ends_with("\n0\n") && a.lines().count() > 1)
        .count();
    assert!(
        nonzero * 10 >= answers.len() * 8,
        "{nonzero} of {}",
        answers.len()
    );
}

#[test]
fn every_query_of_the_table_answers_as_the_oracle_on_the_gpu() {
    let mut s = generated();
    let Some(()) = logsieve::gpu::or_skip("SQL on the GPU", s.attach_gpu()) else {
        return;
    };
    let source = Local::new(s);
    check(source.clone(), BackendChoice::Gpu, QUERIES, "gpu");
    // The searches ran there.
    let e = engine(source, BackendChoice::Gpu, true);
    let a =
        rt().block_on(e.query(
            "EXPLAIN SELECT line FROM logs WHERE line LIKE '%ERROR%' OR line ~ 'fail(ed)?'",
        ))
        .unwrap();
    let plan = csv(&a, false);
    assert!(plan.contains("backends=[gpu"), "{plan}");
}

#[test]
fn pushed_filters_are_shown_by_explain_and_the_rest_are_not() {
    let rt = rt();
    let e = engine(Local::new(generated()), BackendChoice::Cpu, true);
    let plan = |q: &str| {
        let a = rt.block_on(e.query(&format!("EXPLAIN {q}"))).unwrap();
        csv(&a, false).replace("\"\"", "\"")
    };
    let p = plan("SELECT line FROM logs WHERE line LIKE '%ERROR%' AND level = 'ERROR'");
    assert!(p.contains("LogScanExec: engine_filters=["), "{p}");
    assert!(
        p.contains("level = Utf8(\"ERROR\")") && p.contains("line LIKE Utf8(\"%ERROR%\")"),
        "{p}"
    );
    assert!(!p.contains("FilterExec"), "{p}");
    let p = plan("SELECT line FROM logs WHERE line LIKE '%ERROR%' AND length(line) > 100");
    assert!(
        p.contains("engine_filters=[line LIKE Utf8(\"%ERROR%\")]"),
        "{p}"
    );
    assert!(p.contains("FilterExec: character_length(line"), "{p}");
    // count(*) over pushed filters: from the scan's exact row count.
    let p = plan("SELECT count(*) FROM logs WHERE line LIKE '%ERROR%'");
    assert!(!p.contains("AggregateExec"), "{p}");
    // Only the projected columns: count(*) builds no line.
    let p = plan("SELECT count(*) FROM logs WHERE line LIKE '%ERROR%' AND length(line) > 100");
    assert!(p.contains("projection=[line]"), "{p}");
}

#[test]
fn errors_are_datafusion_messages_naming_the_column() {
    let rt = rt();
    let e = engine(Local::new(generated()), BackendChoice::Cpu, true);
    let err = rt.block_on(e.query("SELECT nope FROM logs")).unwrap_err();
    assert!(err.contains("nope"), "{err}");
    let err = rt.block_on(e.query("SELEC 1")).unwrap_err();
    assert!(err.to_lowercase().contains("sql"), "{err}");
    let err = rt
        .block_on(e.query("SELECT count(*) FROM logs WHERE regexp_like(line, '(')"))
        .unwrap_err();
    assert!(!err.is_empty());
    let err = rt
        .block_on(e.query("SELECT matches(line, 'nope') FROM logs"))
        .unwrap_err();
    assert!(
        err.contains("no watchlist \"nope\"") && err.contains("iocs"),
        "{err}"
    );
    // A server's engine runs queries only.
    let server = SqlEngine::new(
        Local::new(generated()),
        SearchOptions::default(),
        SqlLimits::server(1 << 30, 10, 2),
    )
    .unwrap();
    for q in [
        "CREATE EXTERNAL TABLE t STORED AS CSV LOCATION '/etc/passwd'",
        "CREATE TABLE t AS SELECT 1",
        "SET datafusion.execution.batch_size = 1",
    ] {
        let err = rt.block_on(server.query(q)).unwrap_err();
        assert!(
            err.contains("not supported") || err.contains("disabled"),
            "{q}: {err}"
        );
    }
    // The row cap: 10 kept, the rest cut and said.
    let a = rt.block_on(server.query("SELECT line FROM logs")).unwrap();
    assert_eq!(a.rows, 10);
    assert!(a.truncated);
}

#[test]
fn time_bounds_swept_over_every_stamp() {
    let s = generated();
    let cols = s.columns().unwrap();
    let mut times: Vec<i64> = cols.docs().iter().flat_map(|d| d.times.clone()).collect();
    times.sort_unstable();
    times.dedup();
    let picks: Vec<i64> = times
        .iter()
        .step_by(times.len() / 12 + 1)
        .copied()
        .collect();
    let mut qs = Vec::new();
    for t in picks {
        for d in [-1, 0, 1] {
            let ms = t + d;
            for op in [">", ">=", "<", "<=", "="] {
                qs.push(format!(
                    "SELECT count(*) FROM logs WHERE time {op} to_timestamp_millis({ms})"
                ));
            }
            qs.push(format!(
                "SELECT count(*) FROM logs WHERE time >= to_timestamp_millis({ms}) AND line LIKE '%ERROR%'"
            ));
        }
    }
    let refs: Vec<&str> = qs.iter().map(String::as_str).collect();
    check(Local::new(s), BackendChoice::Cpu, &refs, "time sweep");
}

#[test]
fn loghub_files_when_present() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/loghub");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("loghub data not found at {}: skipped", dir.display());
        return;
    };
    let mut files: Vec<_> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    files.sort();
    let docs: Vec<(String, Vec<u8>)> = files
        .iter()
        .take(16)
        .filter_map(|p| {
            Some((
                p.file_name()?.to_string_lossy().into_owned(),
                std::fs::read(p).ok()?,
            ))
        })
        .map(|(n, mut d)| {
            d.truncate(d.len().min(400_000));
            (n, d)
        })
        .collect();
    if docs.is_empty() {
        eprintln!("no .log files in {}: skipped", dir.display());
        return;
    }
    let refs: Vec<(&str, Vec<u8>)> = docs.iter().map(|(n, d)| (n.as_str(), d.clone())).collect();
    let qs = [
        "SELECT file, count(*) FROM logs GROUP BY file ORDER BY file",
        "SELECT file, count(*) FROM logs WHERE line ILIKE '%error%' GROUP BY file ORDER BY file",
        "SELECT file, count(*) FROM logs WHERE line ~ '[0-9]+\\.[0-9]+\\.[0-9]+\\.[0-9]+' GROUP BY file ORDER BY file",
        "SELECT level, count(*) FROM logs GROUP BY level ORDER BY level NULLS LAST",
        "SELECT file, count(*) FROM logs WHERE time IS NULL GROUP BY file ORDER BY file",
        "SELECT count(*) FROM logs WHERE level = 'WARN' AND NOT line LIKE '%WARN%'",
        "SELECT file, min(time), max(time) FROM logs GROUP BY file ORDER BY file",
    ];
    check(
        Local::new(session_of(refs)),
        BackendChoice::Cpu,
        &qs,
        "loghub",
    );
}

/// Random lines over a small alphabet, and random patterns over it.
fn line() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop::sample::select(vec!['a', 'b', 'A', '_', '%', ' ', 'é']),
        0..12,
    )
    .prop_map(|v| v.into_iter().collect())
}

fn pattern() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop::sample::select(vec!["a", "b", "A", "%", "_", " ", "é", "\\%"]),
        0..5,
    )
    .prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn random_like_patterns_answer_as_the_oracle(
        lines in proptest::collection::vec(line(), 1..40),
        pats in proptest::collection::vec(pattern(), 1..4),
    ) {
        let data = lines.join("\n").into_bytes();
        let s = session_of(vec![("r.log", data)]);
        let mut qs = Vec::new();
        for p in &pats {
            let p = p.replace('\'', "''");
            qs.push(format!("SELECT line_number FROM logs WHERE line LIKE '{p}' ORDER BY line_number"));
            qs.push(format!("SELECT line_number FROM logs WHERE line ILIKE '{p}' ORDER BY line_number"));
            qs.push(format!("SELECT line_number FROM logs WHERE line NOT LIKE '{p}' ORDER BY line_number"));
        }
        if pats.len() > 1 {
            let ors: Vec<String> = pats.iter().map(|p| format!("line LIKE '{}'", p.replace('\'', "''"))).collect();
            qs.push(format!("SELECT line_number FROM logs WHERE {} ORDER BY line_number", ors.join(" OR ")));
            qs.push(format!("SELECT line_number FROM logs WHERE NOT ({}) ORDER BY line_number", ors.join(" AND ")));
        }
        let refs: Vec<&str> = qs.iter().map(String::as_str).collect();
        check(Local::new(s), BackendChoice::Cpu, &refs, "random");
    }
}

#[test]
fn answers_checked_by_hand_on_the_edge_file() {
    let rt = rt();
    let e = engine(
        Local::new(session_of(vec![("edge.log", EDGE.to_vec())])),
        BackendChoice::Cpu,
        true,
    );
    let one = |q: &str| {
        let a = rt
            .block_on(e.query(q))
            .unwrap_or_else(|e| panic!("{q}: {e}"));
        csv(&a, false).lines().skip(1).collect::<Vec<_>>().join("|")
    };
    assert_eq!(one("SELECT count(*) FROM logs"), "10");
    // The two preamble lines have no time; the empty line and the
    // continuation inherit the line before them.
    assert_eq!(
        one("SELECT line_number FROM logs WHERE time IS NULL ORDER BY 1"),
        "1|2"
    );
    assert_eq!(
        one("SELECT line_number FROM logs WHERE line LIKE '%ERROR%' ORDER BY 1"),
        "2|6|8"
    );
    assert_eq!(
        one("SELECT line_number FROM logs WHERE line LIKE '%bytes ERROR'"),
        "8"
    );
    assert_eq!(
        one(
            "SELECT line_number FROM logs WHERE time > TIMESTAMP '2026-11-20T10:05:00Z' ORDER BY 1"
        ),
        "8|9|10"
    );
    assert_eq!(one("SELECT line_number FROM logs WHERE time = TIMESTAMP '2026-11-20T10:00:00.500Z' ORDER BY 1"), "4|5");
    assert_eq!(
        one("SELECT byte_offset FROM logs WHERE line_number = 3"),
        "66"
    );
    assert_eq!(
        one("SELECT host, count(*) FROM logs WHERE host IS NOT NULL GROUP BY host ORDER BY host"),
        "web-01,4|web-02,1|web-03,1"
    );
    assert_eq!(
        one("SELECT count(*) FROM logs WHERE line LIKE '%50\\%\\_x\r'"),
        "1"
    );
    // Invalid bytes: kept in line_bytes, each replaced by U+FFFD in line.
    assert_eq!(one("SELECT length(encode(line_bytes, 'hex')) / 2, octet_length(line) FROM logs WHERE line_number = 8"), "46,50");
}
