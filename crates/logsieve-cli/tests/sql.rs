#![recursion_limit = "256"]
//! `logsieve sql` through its three front ends against the oracle: the
//! table of queries run by the built binary over files, over a served
//! corpus (`--server`, the Arrow stream of `POST /api/v1/sql`) and with
//! pushdown off (DataFusion filters every line: the oracle) give the
//! same CSV; the API's JSON holds as many rows; statements from stdin,
//! exit codes and errors.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use logsieve::WatchlistOptions;
use logsieve_server::{serve_with, AppState, GpuMode, Limits, LoadConfig, Source};

#[path = "../../logsieve-sql/tests/queries/mod.rs"]
mod queries;

const IOCS: &[&str] = &["192.168.1.9", "failed", "timeout", "u7", "ERROR"];

/// A server over `logs/` of a temp dir (a generated file and the edge
/// lines), with the `user` field and the `iocs` watchlist.
fn server() -> &'static (SocketAddr, PathBuf) {
    static SERVER: OnceLock<(SocketAddr, PathBuf)> = OnceLock::new();
    SERVER.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        let logs = dir.join("logs");
        std::fs::create_dir(&logs).unwrap();
        let data = logsieve::gen::generate(&logsieve::gen::GenOptions {
            lines: 3000,
            ..Default::default()
        });
        std::fs::write(logs.join("gen.log"), data).unwrap();
        std::fs::write(logs.join("edge.log"), queries::EDGE).unwrap();
        std::fs::write(dir.join("iocs.txt"), IOCS.join("\n")).unwrap();
        let state = AppState::new(Limits::default(), None);
        let config = LoadConfig {
            source: Source::Paths {
                paths: vec![logs.clone()],
                walk: Default::default(),
                load: Default::default(),
            },
            gpu: GpuMode::Off,
            fields: vec![r"user=user=(u\d+)".into()],
            time_format: None,
            year: Some(2026),
            progress_bar: false,
            tuning: Default::default(),
        };
        logsieve_server::load::load(&config, &state).unwrap();
        state
            .ready()
            .unwrap()
            .session
            .define_watchlist("iocs", IOCS, WatchlistOptions::default())
            .unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(l.local_addr().unwrap()).unwrap();
                serve_with(l, state, std::future::pending::<()>())
                    .await
                    .unwrap();
            });
        });
        (rx.recv_timeout(Duration::from_secs(60)).unwrap(), logs)
    })
}

fn logs() -> &'static Path {
    &server().1
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(args: &[&str], stdin: Option<&str>) -> Out {
    let mut c = Command::new(env!("CARGO_BIN_EXE_logsieve"));
    c.args(args)
        .env_remove("LOGSIEVE_SERVER")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    if let Some(text) = stdin {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    let o = child.wait_with_output().unwrap();
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn local(q: &str, extra: &[&str]) -> Out {
    let logs = logs().to_str().unwrap();
    let iocs = format!("iocs={}", logs.replace("/logs", "/iocs.txt"));
    let mut args = vec![
        "sql",
        q,
        logs,
        "--format",
        "csv",
        "--year",
        "2026",
        "--field",
        r"user=user=(u\d+)",
        "--watchlist",
        &iocs,
    ];
    args.extend_from_slice(extra);
    run(&args, None)
}

fn sorted(s: &str, q: &str) -> String {
    if q.contains("ORDER BY") {
        return s.to_string();
    }
    let mut l: Vec<&str> = s.lines().collect();
    l.sort_unstable();
    l.join("\n")
}

#[test]
fn the_table_answers_the_same_over_files_the_server_and_the_oracle() {
    let url = format!("http://{}", server().0);
    let mut with_rows = 0;
    for q in queries::QUERIES {
        // A LIMIT without ORDER BY may pick other rows.
        if q.contains("LIMIT") && !q.contains("ORDER BY") {
            continue;
        }
        let pushed = local(q, &[]);
        let oracle = local(q, &["--no-pushdown"]);
        let remote = run(&["sql", "--server", &url, q, "--format", "csv"], None);
        assert_eq!(pushed.code, oracle.code, "{q}: {}", pushed.stderr);
        assert!(pushed.code <= 1, "{q}: {}", pushed.stderr);
        assert_eq!(sorted(&pushed.stdout, q), sorted(&oracle.stdout, q), "{q}");
        assert_eq!(remote.code, pushed.code, "{q}: {}", remote.stderr);
        assert_eq!(
            sorted(&remote.stdout, q),
            sorted(&pushed.stdout, q),
            "{q} --server"
        );
        with_rows += usize::from(pushed.stdout.lines().count() > 1);
    }
    assert!(with_rows > 40, "{with_rows} queries had rows");
}

#[test]
fn the_api_answers_json_rows_and_sql_errors_as_400() {
    let addr = server().0;
    let post = |body: &str| {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        use std::io::{Read, Write};
        write!(
            s,
            "POST /api/v1/sql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        let status: u16 = out[9..12].parse().unwrap();
        let body = out.split_once("\r\n\r\n").unwrap().1.to_string();
        (status, body)
    };
    let q = "SELECT level, count(*) AS n FROM logs WHERE line LIKE '%ERROR%' GROUP BY level ORDER BY n DESC, level";
    let (st, body) = post(&serde_json::json!({ "query": q }).to_string());
    assert_eq!(st, 200, "{body}");
    // The JSON object (a chunked body has its sizes around it).
    let (a, b) = (body.find('{').unwrap(), body.rfind('}').unwrap());
    let v: serde_json::Value = serde_json::from_str(&body[a..=b]).unwrap();
    let csv = local(q, &[]).stdout;
    assert_eq!(
        v["row_count"].as_u64().unwrap() as usize,
        csv.lines().count() - 1,
        "{v}"
    );
    assert_eq!(v["columns"][0]["name"], "level");
    assert_eq!(v["truncated"], false);
    for (q, want) in [
        ("SELECT nope FROM logs", "nope"),
        ("SELEC 1", "SQL"),
        (
            "CREATE EXTERNAL TABLE t STORED AS CSV LOCATION '/etc/passwd'",
            "DDL",
        ),
    ] {
        let (st, body) = post(&serde_json::json!({ "query": q }).to_string());
        assert_eq!(st, 400, "{q}: {body}");
        assert!(
            body.contains("invalid_sql") && body.contains(want),
            "{q}: {body}"
        );
    }
    let (st, body) = post(r#"{"query": "SELECT 1", "max_rows": 0}"#);
    assert_eq!(st, 422, "{body}");
    let (st, body) = post(r#"{"query": ""}"#);
    assert_eq!(st, 400, "{body}");
    let (st, body) = post(r#"{"query": "SELECT line FROM logs", "max_rows": 3}"#);
    assert_eq!(st, 200, "{body}");
    assert!(
        body.contains("\"row_count\":3") && body.contains("\"truncated\":true"),
        "{body}"
    );
}

#[test]
fn statements_from_stdin_exit_codes_and_errors() {
    let logs = logs().to_str().unwrap();
    let o = run(
        &["sql", logs, "--format", "csv"],
        Some("SELECT count(*) AS n FROM logs WHERE line LIKE '%ERROR%';\nSELECT 1 AS one\n;"),
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(lines[0], "n");
    assert!(lines[1].parse::<u64>().unwrap() > 0);
    assert_eq!(&lines[2..], ["one", "1"]);
    // No row: 1; an error: 2 with DataFusion's message naming the column.
    let o = run(
        &[
            "sql",
            "SELECT line FROM logs WHERE line LIKE '%no such text%'",
            logs,
        ],
        None,
    );
    assert_eq!(o.code, 1, "{}", o.stderr);
    let o = run(&["sql", "SELECT nope FROM logs", logs], None);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("nope"), "{}", o.stderr);
    // A path that cannot be read: reported, the rest queried, exit 2.
    let o = run(
        &[
            "sql",
            "SELECT count(*) AS n FROM logs",
            logs,
            "/no/such/file.log",
        ],
        None,
    );
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains("/no/such/file.log") && o.stdout.starts_with('+'),
        "{} {}",
        o.stdout,
        o.stderr
    );
    let o = run(&["sql", "SELECT 1", logs, "--watchlist", "bad"], None);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("NAME=FILE"), "{}", o.stderr);
    // Every format writes the rows.
    let q = "SELECT line_number, level FROM logs WHERE level = 'ERROR' ORDER BY 1 LIMIT 2";
    for (f, check) in [
        ("table", "| line_number |"),
        ("json", "[{\"line_number\":"),
        ("ndjson", "{\"line_number\":"),
    ] {
        let o = run(&["sql", q, logs, "--format", f], None);
        assert_eq!(o.code, 0, "{f}: {}", o.stderr);
        assert!(o.stdout.contains(check), "{f}: {}", o.stdout);
    }
    let o = run(&["sql", q, logs, "--format", "arrow"], None);
    assert_eq!(o.code, 0);
    assert!(o.stdout.len() > 100);
}
