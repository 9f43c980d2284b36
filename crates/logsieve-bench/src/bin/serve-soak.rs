//! The load soak of `logsieve serve` (`logsieve_bench::soak`):
//! starts `logsieve serve --demo --lines N --listen 127.0.0.1:0`, runs N
//! clients of mixed queries for S seconds, every answer checked against a
//! CPU session over the same generated logs, the server's RSS sampled;
//! prints a Markdown table, stops the server, exits 1 on any failure.
//!
//! Usage: `serve-soak [--clients 64] [--seconds 600] [--lines 1000000]
//! [--gpu auto|on|off] [--logsieve PATH] [--max-in-flight N]`. `--logsieve`
//! defaults to the `logsieve` beside this executable (target/release).

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::Duration;

use logsieve_bench::soak::{run, SoakConfig};

fn main() {
    let mut clients = 64usize;
    let mut seconds = 600.0f64;
    let mut lines = 1_000_000u64;
    let mut gpu = "auto".to_string();
    let mut in_flight: Option<String> = None;
    let mut exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("logsieve")))
        .unwrap_or_else(|| "logsieve".into());
    let mut it = std::env::args().skip(1);
    while let Some(f) = it.next() {
        let v = it.next().unwrap_or_default();
        match f.as_str() {
            "--clients" => clients = v.parse().expect("--clients N"),
            "--seconds" => seconds = v.parse().expect("--seconds S"),
            "--lines" => lines = v.parse().expect("--lines N"),
            "--gpu" => gpu = v,
            "--max-in-flight" => in_flight = Some(v),
            "--logsieve" => exe = v.into(),
            _ => {
                eprintln!("usage: serve-soak [--clients N] [--seconds S] [--lines N] [--gpu auto|on|off] [--logsieve PATH] [--max-in-flight N]");
                std::process::exit(2)
            }
        }
    }
    let mut cmd = Command::new(&exe);
    cmd.args(["serve", "--demo", "--lines", &lines.to_string()])
        .args(["--listen", "127.0.0.1:0", "--gpu", &gpu])
        // The test appender: tail streams (with appends) in the mix.
        .env("LOGSIEVE_TEST_APPEND", "1");
    if let Some(n) = &in_flight {
        cmd.args(["--max-in-flight", n]);
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()));
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("listening on") {
        line.clear();
        if out.read_line(&mut line).unwrap_or(0) == 0 {
            eprintln!("serve exited before listening");
            std::process::exit(1);
        }
    }
    let addr: SocketAddr = line
        .split("://")
        .nth(1)
        .and_then(|a| a.trim().trim_end_matches('/').parse().ok())
        .expect("the listening line names the address");
    // Ready: /api/v1/health says so (the demo corpus is generated first).
    let t0 = std::time::Instant::now();
    while !health_ready(addr) {
        assert!(t0.elapsed() < Duration::from_secs(300), "server not ready");
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!(
        "serve-soak: {clients} clients, {seconds} s, {lines} lines, --gpu {gpu}, server pid {} on {addr}",
        child.id()
    );
    let report = run(&SoakConfig {
        addr,
        pid: Some(child.id()),
        clients,
        duration: Duration::from_secs_f64(seconds),
        lines,
        max_body: 1 << 20,
        live: true,
    });
    let _ = child.kill();
    let _ = child.wait();
    print!("{}", report.table());
    std::process::exit(if report.ok() && report.failures.is_empty() {
        0
    } else {
        1
    });
}

fn health_ready(addr: SocketAddr) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(addr) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let req = format!("GET /api/v1/health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    if s.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut b = String::new();
    let _ = s.read_to_string(&mut b);
    b.contains("\"status\":\"ready\"")
}
