//! The short load soak in CI (the 64-client, 10-minute run is
//! `scripts/soak.sh`): `logsieve serve --demo` on 127.0.0.1:0 (the binary
//! `cargo test --workspace` builds beside this test, or `LOGSIEVE_BIN`),
//! 6 clients for 8 s of every query kind (counts, streamed lines,
//! per-pattern counts, stats, regex, fuzzy, watchlists, hang-ups, 400,
//! 422, 413), Loki's `query_range` (log and metric queries), `/api/v1/tail`
//! streams fed through the test appender, every answer checked against a CPU session over the same
//! logs (`logsieve_bench::soak`), the server's RSS sampled.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use logsieve_bench::soak::{run, SoakConfig};

/// The `logsieve` binary: `LOGSIEVE_BIN`, else the one in this test's
/// target directory (`target/<profile>/logsieve`, which `cargo test
/// --workspace` builds with the CLI's tests). This crate is a leaf: it
/// cannot name the CLI's binary through Cargo without depending on it.
fn logsieve_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("LOGSIEVE_BIN") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/soak-HASH
    let dir = exe.parent().and_then(|d| d.parent()).unwrap();
    let bin = dir.join(format!("logsieve{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "{} is missing: run the workspace's tests (cargo test --workspace --release) or set LOGSIEVE_BIN",
        bin.display()
    );
    bin
}

#[test]
fn a_short_soak_answers_every_kind_right_and_memory_stays_flat() {
    let lines = 20_000u64;
    let mut child = Command::new(logsieve_bin())
        .args(["serve", "--demo", "--lines", &lines.to_string()])
        .args(["--listen", "127.0.0.1:0", "--gpu", "off"])
        .env("LOGSIEVE_TEST_APPEND", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("listening on") {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "serve exited");
    }
    let addr: SocketAddr = line
        .split("://")
        .nth(1)
        .unwrap()
        .trim()
        .trim_end_matches('/')
        .parse()
        .unwrap();
    // Ready once a count answers (503 while loading).
    let t0 = Instant::now();
    loop {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        use std::io::{Read, Write};
        s.write_all(b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut b = String::new();
        let _ = s.read_to_string(&mut b);
        if b.contains("\"status\":\"ready\"") {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "not ready");
        std::thread::sleep(Duration::from_millis(50));
    }
    let report = run(&SoakConfig {
        addr,
        pid: Some(child.id()),
        clients: 6,
        duration: Duration::from_secs(8),
        lines,
        max_body: 1 << 20,
        live: true,
    });
    let _ = child.kill();
    let _ = child.wait();
    let table = report.table();
    eprintln!("{table}");
    assert!(report.ok() && report.failures.is_empty(), "{table}");
    for kind in [
        "count",
        "regex",
        "fuzzy",
        "lines",
        "patterns",
        "stats",
        "watchlist",
        "cancelled",
        "invalid",
        "oversized",
        "loki-metric",
        "loki-lines",
        "tail",
    ] {
        let k = &report.kinds[kind];
        assert!(k.ok > 0, "{kind} never answered: {table}");
    }
    let rss = report.rss.unwrap();
    // Flat: no growth past the warm state beyond allocator noise.
    assert!(
        rss.end <= rss.warm * 1.5 + 64.0,
        "server RSS grew from {:.1} MiB (warm) to {:.1} MiB",
        rss.warm,
        rss.end
    );
}
