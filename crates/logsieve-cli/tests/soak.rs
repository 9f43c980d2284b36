//! The short load soak in CI (the 64-client, 10-minute run is
//! `scripts/soak.sh`): the built `logsieve serve --demo` on 127.0.0.1:0,
//! 6 clients for 8 s of every query kind (counts, streamed lines,
//! per-pattern counts, stats, regex, fuzzy, watchlists, hang-ups, 400,
//! 422, 413), Loki's `query_range` (log and metric queries), `/api/v1/tail`
//! streams fed through the test appender, every answer checked against a CPU session over the same
//! logs (`logsieve_bench::soak`), the server's RSS sampled.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use logsieve_bench::soak::{run, SoakConfig};

#[test]
fn a_short_soak_answers_every_kind_right_and_memory_stays_flat() {
    let lines = 20_000u64;
    let mut child = Command::new(env!("CARGO_BIN_EXE_logsieve"))
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
