#![recursion_limit = "256"]
//! A cluster of `logsieve cluster worker` processes on loopback against
//! one node: the SQL table of queries over 2 and 3 workers (3 with every
//! shard on two of them) answers as the oracle (one session, pushdown
//! off); every shard's scan runs once per query, on a worker holding it
//! (counted from the workers' status); a worker killed is replaced by
//! its replica, or the query fails naming the shards no worker holds; a
//! restarted worker answers again; bad requests are refused with a
//! message and exit 2.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use logsieve::stats::{ColumnOptions, Columns, FieldSpec};
use logsieve::{Corpus, Document, Session};
use logsieve_cluster::{Cluster, ClusterEngine};
use logsieve_sql::{Answer, Local, SqlEngine, SqlLimits};

#[path = "../../logsieve-sql/tests/queries/mod.rs"]
mod queries;

const FIELD: &str = r"user=user=(u\d+)";
/// The files (shards): generated logs of three lengths and the edge lines.
const FILES: &[(&str, u64, u64)] = &[("a.log", 3000, 1), ("b.log", 2000, 2), ("c.log", 1500, 3)];

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_logsieve")
}

/// The directory of the shards.
fn logs() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        for (name, lines, seed) in FILES {
            let data = logsieve::gen::generate(&logsieve::gen::GenOptions {
                lines: *lines,
                seed: *seed,
                ..Default::default()
            });
            std::fs::write(dir.join(name), data).unwrap();
        }
        std::fs::write(dir.join("edge.log"), queries::EDGE).unwrap();
        dir
    })
}

fn names() -> Vec<&'static str> {
    let mut v: Vec<&str> = FILES.iter().map(|f| f.0).collect();
    v.push("edge.log");
    v.sort();
    v
}

/// A worker process; killed when dropped.
struct Worker {
    child: Child,
    addr: String,
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `cluster worker --shard-of I/N --replicas R` over the shards, on
/// `listen` (port 0: any).
fn worker(i: usize, n: usize, r: usize, listen: &str, extra: &[&str]) -> Worker {
    let mut args: Vec<String> = vec![
        "--listen".into(),
        listen.into(),
        "--shard-of".into(),
        format!("{i}/{n}"),
        "--replicas".into(),
        r.to_string(),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    args.extend(names().iter().map(|a| a.to_string()));
    start(logs(), &args)
}

/// `cluster worker ARGS` in `dir`, with the table's fields and year.
fn start(dir: &Path, args: &[String]) -> Worker {
    let mut cmd = Command::new(bin());
    cmd.current_dir(dir)
        .args(["cluster", "worker", "--gpu", "off", "--year", "2026"])
        .args(["--field", FIELD])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("worker printed {line:?}"))
        .to_string();
    Worker { child, addr }
}

fn cluster_of(n: usize, r: usize) -> Vec<Worker> {
    (0..n)
        .map(|i| worker(i, n, r, "127.0.0.1:0", &[]))
        .collect()
}

fn addrs(ws: &[Worker]) -> String {
    ws.iter()
        .map(|w| w.addr.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// One node over the same files, pushdown off: the oracle.
fn oracle() -> &'static SqlEngine {
    static ORACLE: OnceLock<SqlEngine> = OnceLock::new();
    ORACLE.get_or_init(|| oracle_of(logs(), &names()))
}

/// One node over the files `names` of `dir` as they are now, pushdown
/// off.
fn oracle_of<S: AsRef<str>>(dir: &Path, names: &[S]) -> SqlEngine {
    let mut corpus = Corpus::new();
    for n in names {
        let n = n.as_ref();
        corpus.push(Document::from_bytes(n, std::fs::read(dir.join(n)).unwrap()));
    }
    let cols = Columns::build(
        &corpus,
        &ColumnOptions {
            fields: FieldSpec::with_builtins(&[FIELD.to_string()]).unwrap(),
            year: 2026,
            ..Default::default()
        },
    );
    let mut s = Session::new(corpus);
    s.set_columns(cols);
    let limits = SqlLimits {
        partitions: 3,
        pushdown: false,
        ..SqlLimits::local()
    };
    SqlEngine::new(Local::new(s), Default::default(), limits).unwrap()
}

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

/// The queries a cluster answers: the table without the watchlist ones
/// (watchlists are a single node's).
fn table() -> Vec<&'static str> {
    queries::QUERIES
        .iter()
        .copied()
        .filter(|q| !q.contains("iocs"))
        .collect()
}

/// Every query of the table on `engine` against the oracle.
fn check_table(rt: &tokio::runtime::Runtime, engine: &ClusterEngine, what: &str) {
    check_against(rt, engine, oracle(), what)
}

/// Every query of the table on `engine` against `oracle`.
fn check_against(
    rt: &tokio::runtime::Runtime,
    engine: &ClusterEngine,
    oracle: &SqlEngine,
    what: &str,
) {
    for q in table() {
        let a = rt
            .block_on(engine.query(q))
            .unwrap_or_else(|e| panic!("{what}: {q}: {e}"));
        let b = rt.block_on(oracle.query(q)).unwrap();
        if q.contains("LIMIT") && !q.contains("ORDER BY") {
            assert_eq!(a.rows, b.rows, "{what}: {q}");
            let unlimited = q.split(" LIMIT").next().unwrap();
            let all = csv(&rt.block_on(oracle.query(unlimited)).unwrap(), true);
            for row in csv(&a, true).lines().filter(|l| !l.starts_with("file")) {
                assert!(all.lines().any(|l| l == row), "{what}: {q}: {row}");
            }
            continue;
        }
        let sort = !q.contains("ORDER BY");
        assert_eq!(csv(&a, sort), csv(&b, sort), "{what}: {q}");
    }
}

/// Scans per shard, summed over the workers, and which workers ran them.
fn scans(rt: &tokio::runtime::Runtime, c: &Cluster) -> Vec<(String, u64, Vec<String>)> {
    let mut per: std::collections::BTreeMap<String, (u64, Vec<String>)> = Default::default();
    for (u, s) in rt.block_on(c.statuses()) {
        let s = s.unwrap_or_else(|e| panic!("{u}: {e}"));
        for sh in s.shards {
            let e = per.entry(sh.name).or_default();
            e.0 += sh.scans;
            if sh.scans > 0 {
                e.1.push(u.to_string());
            }
        }
    }
    per.into_iter().map(|(n, (k, w))| (n, k, w)).collect()
}

fn connect(rt: &tokio::runtime::Runtime, ws: &[Worker]) -> ClusterEngine {
    let urls = logsieve_cluster::worker_urls(&addrs(ws)).unwrap();
    rt.block_on(ClusterEngine::connect(
        Arc::new(Cluster::new(urls, None)),
        SqlLimits::local(),
    ))
    .unwrap()
}

#[test]
fn two_workers_answer_the_table_as_one_node_and_each_shard_is_scanned_once_on_its_holder() {
    let ws = cluster_of(2, 1);
    let rt = rt();
    let engine = connect(&rt, &ws);
    let before = scans(&rt, engine.cluster());
    assert!(before.iter().all(|(_, k, _)| *k == 0));
    check_table(&rt, &engine, "2 workers");
    let n = table().len() as u64;
    let after = scans(&rt, engine.cluster());
    assert_eq!(after.len(), names().len(), "every shard is held");
    for (shard, k, on) in after {
        assert_eq!(k, n, "{shard}: one scan per query");
        assert_eq!(on.len(), 1, "{shard}: scanned on one worker: {on:?}");
    }
}

#[test]
fn three_workers_with_two_replicas_answer_the_table_and_survive_a_lost_worker() {
    let mut ws = cluster_of(3, 2);
    let rt = rt();
    let engine = connect(&rt, &ws);
    check_table(&rt, &engine, "3 workers, 2 replicas");
    // Each shard on two workers, scanned on one of them per query.
    let statuses = rt.block_on(engine.cluster().statuses());
    for name in names() {
        let holders = statuses
            .iter()
            .filter(|(_, s)| s.as_ref().unwrap().shards.iter().any(|x| x.name == name))
            .count();
        assert_eq!(holders, 2, "{name}");
    }
    for (shard, k, _) in scans(&rt, engine.cluster()) {
        assert_eq!(k, table().len() as u64, "{shard}");
    }
    // A worker killed: the coordinator still places on it until it
    // fails, then retries on the replicas: the same answers.
    let lost = ws.remove(1);
    let lost_addr = lost.addr.clone();
    drop(lost);
    let q = "SELECT file, count(*) AS n FROM logs WHERE line LIKE '%ERROR%' GROUP BY file ORDER BY file";
    let a = rt
        .block_on(engine.query(q))
        .expect("answered by the replicas");
    let b = rt.block_on(oracle().query(q)).unwrap();
    assert_eq!(csv(&a, false), csv(&b, false));
    // Restarted on its port: it loads its share again and is used.
    let back = worker(1, 3, 2, &lost_addr, &[]);
    ws.insert(1, back);
    std::thread::sleep(Duration::from_millis(1100));
    let a = rt.block_on(engine.query(q)).unwrap();
    assert_eq!(csv(&a, false), csv(&b, false));
    let used = rt
        .block_on(engine.cluster().statuses())
        .into_iter()
        .map(|(_, s)| s.unwrap())
        .find(|s| s.listen == lost_addr)
        .unwrap();
    assert!(
        used.shards.iter().all(|s| s.scans <= 1),
        "a restarted worker starts from no scans"
    );
}

#[test]
fn a_shard_no_live_worker_holds_fails_the_query_naming_it_never_a_partial_count() {
    let mut ws = cluster_of(2, 1);
    let rt = rt();
    let engine = connect(&rt, &ws);
    let q = "SELECT count(*) FROM logs WHERE line LIKE '%ERROR%'";
    rt.block_on(engine.query(q)).unwrap();
    let held: Vec<String> = rt.block_on(engine.cluster().statuses())[1]
        .1
        .as_ref()
        .unwrap()
        .shards
        .iter()
        .map(|s| s.name.clone())
        .collect();
    let all = addrs(&ws);
    drop(ws.remove(1));
    let e = rt.block_on(engine.query(q)).unwrap_err();
    assert!(e.contains("held by no live worker"), "{e}");
    for name in &held {
        assert!(e.contains(name.as_str()), "{e} names {name}");
    }
    // The command line (a new coordinator: the lost worker's shards are
    // unknown to it): exit 2 and the message, no count on stdout.
    let out = Command::new(bin())
        .args(["sql", "--cluster", &all, q])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("shards unknown"), "{err}");
    // The one left, asked alone: its own shards' count.
    let out = Command::new(bin())
        .args(["sql", "--cluster", &addrs(&ws), "--format", "csv", q])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_command_line_queries_a_cluster_and_lists_its_workers() {
    let ws = cluster_of(2, 1);
    let q = "SELECT level, count(*) AS n FROM logs GROUP BY level ORDER BY level NULLS LAST";
    let out = Command::new(bin())
        .args(["sql", "--cluster", &addrs(&ws), "--format", "csv", q])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rt = rt();
    let want = csv(&rt.block_on(oracle().query(q)).unwrap(), false);
    assert_eq!(String::from_utf8_lossy(&out.stdout), want);
    // No rows: exit 1.
    let out = Command::new(bin())
        .args(["sql", "--cluster", &addrs(&ws)])
        .arg("SELECT line FROM logs WHERE line LIKE '%no such text%'")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    // EXPLAIN shows the scan split by worker with the filters pushed.
    let out = Command::new(bin())
        .args(["sql", "--cluster", &addrs(&ws)])
        .arg("EXPLAIN SELECT count(*) FROM logs WHERE line LIKE '%ERROR%'")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("ShardScanExec: engine_filters=[line LIKE"),
        "{text}"
    );
    // Status: each worker, its shards.
    let out = Command::new(bin())
        .args(["cluster", "status", &addrs(&ws)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for name in names() {
        assert!(text.contains(name), "{text}");
    }
    assert!(text.contains("cpu"), "{text}");
    let out = Command::new(bin())
        .args(["cluster", "status", "--json", &addrs(&ws)])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);
    let shards: usize = v
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["status"]["shards"].as_array().unwrap().len())
        .sum();
    assert_eq!(shards, names().len());
}

#[test]
fn bad_requests_are_refused_with_a_message_and_exit_2() {
    let run = |args: &[&str]| {
        let out = Command::new(bin())
            .current_dir(logs())
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    // Nothing listens there.
    let (code, e) = run(&["sql", "--cluster", "127.0.0.1:1", "SELECT 1"]);
    assert_eq!(code, Some(2));
    assert!(e.contains("127.0.0.1:1"), "{e}");
    let (code, e) = run(&["cluster", "status", "127.0.0.1:1"]);
    assert_eq!(code, Some(2));
    assert!(e.contains("cannot connect"), "{e}");
    // Beyond loopback without a token.
    let (code, e) = run(&["cluster", "worker", "--listen", "0.0.0.0:0", "a.log"]);
    assert_eq!(code, Some(2));
    assert!(e.contains("token"), "{e}");
    // A share past the workers, a bad address.
    let (code, e) = run(&["cluster", "worker", "--shard-of", "3/3", "a.log"]);
    assert_eq!(code, Some(2));
    assert!(e.contains("I < N"), "{e}");
    let (code, e) = run(&["sql", "--cluster", "https://h:1", "SELECT 1"]);
    assert_eq!(code, Some(2));
    assert!(e.contains("https"), "{e}");
    // A worker with a token: refused without it, answered with it.
    let tok = logs().join("token");
    std::fs::write(&tok, "s3cret\n").unwrap();
    let w = worker(
        0,
        1,
        1,
        "127.0.0.1:0",
        &["--token-file", tok.to_str().unwrap()],
    );
    let (code, e) = run(&["sql", "--cluster", &w.addr, "SELECT count(*) FROM logs"]);
    assert_eq!(code, Some(2));
    assert!(e.contains("401") || e.contains("token"), "{e}");
    let out = Command::new(bin())
        .args([
            "sql",
            "--cluster",
            &w.addr,
            "--token-file",
            tok.to_str().unwrap(),
        ])
        .args(["--format", "csv", "SELECT count(*) AS n FROM logs"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let total: u64 = FILES.iter().map(|f| f.1).sum::<u64>() + 10;
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("n\n{total}\n")
    );
    // Workers that disagree on the fields.
    let a = worker(0, 2, 1, "127.0.0.1:0", &[]);
    let mut cmd = Command::new(bin());
    let mut b = cmd
        .current_dir(logs())
        .args([
            "cluster",
            "worker",
            "--gpu",
            "off",
            "--listen",
            "127.0.0.1:0",
        ])
        .args(["--shard-of", "1/2"])
        .args(names())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(b.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let b_addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap()
        .to_string();
    let (code, e) = run(&[
        "sql",
        "--cluster",
        &format!("{},{b_addr}", a.addr),
        "SELECT 1",
    ]);
    let _ = b.kill();
    let _ = b.wait();
    assert_eq!(code, Some(2));
    assert!(e.contains("fields"), "{e}");
}

/// Lines of a file as a fresh load counts them (a last line without its
/// newline is one).
fn lines_of(data: &[u8]) -> u64 {
    let n = data.iter().filter(|&&b| b == b'\n').count() as u64;
    n + u64::from(data.last().is_some_and(|&b| b != b'\n'))
}

/// The worker's shards once they hold what `dir`'s files hold now (by
/// name and lines), within 20 s.
fn settled(rt: &tokio::runtime::Runtime, c: &Cluster, dir: &Path, files: usize) -> Vec<String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (_, s) = rt.block_on(c.statuses()).remove(0);
        let s = s.unwrap();
        let held: Vec<(String, u64)> = s.shards.iter().map(|x| (x.name.clone(), x.lines)).collect();
        let want: Vec<(String, u64)> = held
            .iter()
            .map(|(n, _)| (n.clone(), lines_of(&std::fs::read(dir.join(n)).unwrap())))
            .collect();
        if held.len() == files && held == want {
            assert!(s.following, "the status says it follows");
            return held.into_iter().map(|(n, _)| n).collect();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the worker holds {held:?}, the files {want:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_following_worker_answers_appended_lines_and_new_files_as_one_node_over_them() {
    let dir = tempfile::tempdir().unwrap();
    let gen = |lines, seed| {
        logsieve::gen::generate(&logsieve::gen::GenOptions {
            lines,
            seed,
            ..Default::default()
        })
    };
    std::fs::write(dir.path().join("a.log"), gen(1200, 4)).unwrap();
    std::fs::write(dir.path().join("edge.log"), queries::EDGE).unwrap();
    let args = [
        "--follow",
        "--follow-poll",
        "--follow-interval",
        "0.05",
        "--follow-idle",
        "0.2",
        "--listen",
        "127.0.0.1:0",
        ".",
    ];
    let w = start(dir.path(), &args.map(String::from));
    let rt = rt();
    let engine = connect(&rt, std::slice::from_ref(&w));
    // Once the worker holds the files' lines: the table against one node
    // over the files as they are.
    let check = |files: usize, what: &str| {
        let names = settled(&rt, engine.cluster(), dir.path(), files);
        check_against(&rt, &engine, &oracle_of(dir.path(), &names), what);
    };
    check(2, "followed, as loaded");
    // Lines appended to one file, a new file beside it, then a line
    // written in two parts (held back until its newline).
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join("a.log"))
            .unwrap();
        f.write_all(&gen(800, 5)).unwrap();
        std::fs::write(dir.path().join("b.log"), gen(600, 6)).unwrap();
        f.write_all(b"2026-11-20T09:00:00Z web-01 ERROR half of a ")
            .unwrap();
        f.flush().unwrap();
        std::thread::sleep(Duration::from_millis(60));
        f.write_all(b"line user=u7\n").unwrap();
    }
    check(3, "followed, grown");
    let q = "SELECT count(*) AS n FROM logs WHERE line LIKE '%ERROR half of a line%'";
    let a = rt.block_on(engine.query(q)).unwrap();
    assert_eq!(
        csv(&a, false),
        "n\n1\n",
        "the line written in two parts, whole"
    );
    // Files come and go under --follow: no fixed share of them.
    let out = Command::new(bin())
        .current_dir(dir.path())
        .args(["cluster", "worker", "--follow", "--shard-of", "0/2", "."])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("--shard-of"), "{e}");
}

/// A `logsieve serve ARGS` process in `dir` (killed when dropped), once
/// it answers `/api/v1/health` as ready.
fn serve(dir: &Path, args: &[String]) -> Worker {
    let mut child = Command::new(bin())
        .current_dir(dir)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on http://")
        .and_then(|a| a.strip_suffix('/'))
        .unwrap_or_else(|| panic!("serve printed {line:?}"))
        .to_string();
    let w = Worker { child, addr };
    for _ in 0..600 {
        if http(&w.addr, "GET", "/api/v1/health", "").2["status"] == "ready" {
            return w;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("serve {args:?} never became ready");
}

/// One HTTP/1.0 request (no chunking): status, headers, and the body as
/// JSON (NDJSON: an array of its records; other text: a string).
fn http(addr: &str, method: &str, path: &str, body: &str) -> (u16, String, serde_json::Value) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let text = String::from_utf8_lossy(&out).to_string();
    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head[9..12].parse().unwrap();
    let v = serde_json::from_str(rest).unwrap_or_else(|_| {
        let recs: Option<Vec<serde_json::Value>> =
            rest.lines().map(|l| serde_json::from_str(l).ok()).collect();
        recs.map_or(serde_json::Value::String(rest.to_string()), |r| r.into())
    });
    (status, head.to_lowercase(), v)
}

/// A header's value.
fn header(head: &str, name: &str) -> Option<String> {
    head.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}: ")))
        .map(|v| v.trim().to_string())
}

/// The records of a lines answer that do not depend on timing: matches
/// and only-matches whole, `end`s without their stats.
fn records(v: &serde_json::Value) -> Vec<serde_json::Value> {
    let all = v.as_array().cloned().unwrap_or_default();
    all.into_iter()
        .filter_map(|mut r| match r["type"].as_str() {
            Some("match" | "only_match" | "begin") => Some(r),
            Some("end") => {
                r["data"]["stats"] = serde_json::Value::Null;
                Some(r)
            }
            _ => None,
        })
        .collect()
}

/// The searches both servers answer: literals, regexes, `-i -w -x -v`,
/// several patterns, files, `-m` and windows.
const SEARCHES: &[&str] = &[
    r#"{"patterns":["ERROR"]}"#,
    r#"{"patterns":["error"],"ignore_case":true}"#,
    r#"{"patterns":["failed","timeout"],"syntax":"literal","word":true}"#,
    r#"{"patterns":["status=5[0-9]{2}"]}"#,
    r#"{"patterns":["latency_ms=[0-9]{3}"],"invert":true}"#,
    r#"{"patterns":["ok"],"syntax":"literal","files":["edge.log","a.log"]}"#,
    r#"{"patterns":["ERROR","WARN"],"max_count":3}"#,
    r#"{"patterns":["INFO"],"since":"20m"}"#,
    r#"{"patterns":["sshd"],"since":"2026-11-20T10:00","until":"2026-11-20T10:10"}"#,
    r#"{"patterns":[".*ERROR.*"],"line":true}"#,
    r#"{"patterns":["u7"],"syntax":"literal","word":true}"#,
    r#"{"patterns":["bytes"],"files":["edge.log"]}"#,
    r#"{"patterns":["preamble"],"since":"2026-11-20T10:00"}"#,
    r#"{"patterns":["no such text anywhere"]}"#,
];

/// The stats both servers answer.
const STATS: &[&str] = &[
    r#"{}"#,
    r#"{"count_by":["level"]}"#,
    r#"{"patterns":["ERROR"],"count_by":["host","level"],"histogram":"1m"}"#,
    r#"{"histogram":"5m","since":"30m"}"#,
    r#"{"files":["b.log","edge.log"],"count_by":["user"],"histogram":"1h"}"#,
    r#"{"patterns":["error"],"ignore_case":true,"invert":true,"count_by":["level"],"histogram":"10m","until":"15m"}"#,
];

#[test]
fn serve_in_front_of_a_cluster_answers_search_stats_and_sql_as_a_served_node() {
    let ws = cluster_of(2, 1);
    let front = serve(logs(), &["--cluster".into(), addrs(&ws)]);
    let mut args: Vec<String> = ["--gpu", "off", "--year", "2026", "--field", FIELD]
        .map(String::from)
        .to_vec();
    args.extend(names().iter().map(|n| n.to_string()));
    let node = serve(logs(), &args);
    let (f, n) = (front.addr.as_str(), node.addr.as_str());

    let (hf, hn) = (
        http(f, "GET", "/api/v1/health", "").2,
        http(n, "GET", "/api/v1/health", "").2,
    );
    for k in ["files", "lines", "bytes", "status"] {
        assert_eq!(hf[k], hn[k], "health {k}: {hf} vs {hn}");
    }
    assert_eq!(hf["backend"], "cluster");

    let mut with_lines = 0;
    for s in SEARCHES {
        let body = |extra: &str| format!("{},{extra}}}", &s[..s.len() - 1]);
        // Counts, per file.
        let (a, b) = (
            http(f, "POST", "/api/v1/search", &body(r#""output":"count""#)),
            http(n, "POST", "/api/v1/search", &body(r#""output":"count""#)),
        );
        assert_eq!((a.0, b.0), (200, 200), "{s}: {} / {}", a.2, b.2);
        assert_eq!(a.2["total"], b.2["total"], "{s}");
        assert_eq!(a.2["files"], b.2["files"], "{s}");
        let (a, b) = (
            http(
                f,
                "POST",
                "/api/v1/search",
                &body(r#""output":"files_with_matches""#),
            ),
            http(
                n,
                "POST",
                "/api/v1/search",
                &body(r#""output":"files_with_matches""#),
            ),
        );
        assert_eq!(a.2["files"], b.2["files"], "{s}");
        // Lines, two pages, and only the matches.
        let mut cursor = String::new();
        for page in 0..2 {
            let extra = format!(r#""output":"lines","limit":40{cursor}"#);
            let (a, b) = (
                http(f, "POST", "/api/v1/search", &body(&extra)),
                http(n, "POST", "/api/v1/search", &body(&extra)),
            );
            assert_eq!((a.0, b.0), (200, 200), "{s} page {page}");
            for h in ["x-logsieve-total", "x-logsieve-next-cursor"] {
                assert_eq!(header(&a.1, h), header(&b.1, h), "{s} page {page}: {h}");
            }
            assert_eq!(records(&a.2), records(&b.2), "{s} page {page}");
            with_lines += usize::from(!records(&b.2).is_empty());
            match header(&b.1, "x-logsieve-next-cursor") {
                Some(c) => cursor = format!(r#","cursor":"{c}""#),
                None => break,
            }
        }
        let extra = r#""output":"only_matching","limit":25"#;
        let (a, b) = (
            http(f, "POST", "/api/v1/search", &body(extra)),
            http(n, "POST", "/api/v1/search", &body(extra)),
        );
        assert_eq!(records(&a.2), records(&b.2), "{s} only matching");
    }
    assert!(with_lines >= 12, "{with_lines} pages had lines");

    for s in STATS {
        let (mut a, mut b) = (
            http(f, "POST", "/api/v1/stats", s),
            http(n, "POST", "/api/v1/stats", s),
        );
        assert_eq!((a.0, b.0), (200, 200), "{s}: {} / {}", a.2, b.2);
        a.2["backend"] = serde_json::Value::Null;
        b.2["backend"] = serde_json::Value::Null;
        for k in [
            "selected", "since", "until", "oldest", "newest", "count_by", "groups",
        ] {
            assert_eq!(a.2[k], b.2[k], "{s}: {k}");
        }
        let buckets = |v: &serde_json::Value| {
            v["histogram"]["buckets"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        };
        let (x, y) = (buckets(&a.2), buckets(&b.2));
        assert_eq!(x.len(), y.len(), "{s}: buckets");
        if let Some(i) = (0..x.len()).find(|&i| x[i] != y[i]) {
            panic!("{s}: bucket {i}: {} vs {}", x[i], y[i]);
        }
        assert_eq!(a.2, b.2, "{s}");
    }

    for q in table()
        .into_iter()
        .filter(|q| q.contains("ORDER BY"))
        .take(12)
    {
        let body = serde_json::json!({ "query": q }).to_string();
        let (a, b) = (
            http(f, "POST", "/api/v1/sql", &body),
            http(n, "POST", "/api/v1/sql", &body),
        );
        assert_eq!((a.0, b.0), (200, 200), "{q}: {} / {}", a.2, b.2);
        assert_eq!(a.2["rows"], b.2["rows"], "{q}");
    }

    // What the node answers and the front refuses (501), what both
    // refuse (the same 4xx).
    for (path, body) in [
        ("/api/v1/search", r#"{"patterns":["ERROR"],"before":2}"#),
        (
            "/api/v1/search",
            r#"{"patterns":["ERR*"],"syntax":"wildcard"}"#,
        ),
        ("/api/v1/tail", r#"{"patterns":["ERROR"]}"#),
        ("/api/v1/patterns", r#"{"patterns":["ERROR"]}"#),
        ("/loki/api/v1/labels", ""),
    ] {
        let method = if body.is_empty() { "GET" } else { "POST" };
        let (st, _, v) = http(f, method, path, body);
        assert_eq!(st, 501, "{path} {body}: {v}");
        assert!(v.to_string().contains("cluster"), "{path}: {v}");
    }
    for body in [
        r#"{"patterns":["(unclosed"]}"#,
        r#"{"patterns":[]}"#,
        r#"{"patterns":["x"],"files":["nope.log"]}"#,
        r#"{"patterns":["x"],"since":"yesterday"}"#,
        r#"{"patterns":["x"],"nope":1}"#,
        r#"{"patterns":["x"],"cursor":"abc","output":"lines"}"#,
    ] {
        let (a, b) = (
            http(f, "POST", "/api/v1/search", body),
            http(n, "POST", "/api/v1/search", body),
        );
        assert_eq!(a.0, b.0, "{body}: {} / {}", a.2, b.2);
        assert_eq!(a.2["error"]["kind"], b.2["error"]["kind"], "{body}");
    }
    let (st, _, v) = http(f, "POST", "/api/v1/stats", r#"{"count_by":["nope"]}"#);
    assert_eq!(st, 400, "{v}");

    // A worker gone: the front says so (503), never a smaller count.
    drop(ws);
    let (st, _, v) = http(
        f,
        "POST",
        "/api/v1/search",
        r#"{"patterns":["ERROR"],"output":"count"}"#,
    );
    assert_eq!(st, 503, "{v}");
}
