#![recursion_limit = "256"]
//! Faults against the built binary: an unreadable file among
//! good ones (a clear message, the rest searched, exit 2), and SIGKILL of
//! a running `logsieve serve`, then a restart over the same files: the
//! restarted server answers every query kind the same as before. (The
//! library's load faults — deleted, truncated, replaced while loading —
//! are in crates/logsieve/tests/load_faults.rs.)

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../../logsieve-server/tests/common/mod.rs"]
mod server_common;
use server_common::{normalize_elapsed, request};

fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_logsieve")
}

fn naive_count(data: &[u8], needle: &[u8]) -> usize {
    data.split(|&b| b == b'\n')
        .filter(|l| l.windows(needle.len()).any(|w| w == needle))
        .count()
}

fn write_logs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    [("a.log", 2000, 1), ("b.log", 1500, 2)]
        .iter()
        .map(|&(name, lines, seed)| {
            let data = logsieve::gen::generate(&logsieve::gen::GenOptions {
                lines,
                seed,
                ..Default::default()
            });
            std::fs::write(dir.join(name), &data).unwrap();
            (name.to_string(), data)
        })
        .collect()
}

#[test]
fn an_unreadable_file_is_exit_2_with_a_message_and_the_rest_searched() {
    let dir = tempfile::tempdir().unwrap();
    let logs = write_logs(dir.path());
    let a = dir.path().join("a.log");
    // /proc/self/mem fails to read (EIO) even for root.
    let out = Command::new(exe())
        .args(["-c", "ERROR", "/proc/self/mem"])
        .arg(&a)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/proc/self/mem"), "{err}");
    let want = format!("{}:{}\n", a.display(), naive_count(&logs[0].1, b"ERROR"));
    assert_eq!(String::from_utf8_lossy(&out.stdout), want);
}

/// REGRESSION: a file whose reported size is 0 (procfs) was searched
/// empty: `logsieve -c processor /proc/cpuinfo` printed 0.
#[test]
fn regression_procfs_files_are_searched() {
    let data = std::fs::read("/proc/cpuinfo").unwrap();
    let out = Command::new(exe())
        .args(["-c", "processor", "/proc/cpuinfo"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: usize = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert_eq!(got, naive_count(&data, b"processor"));
    assert!(got > 0);
}

struct Serve {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `logsieve serve --gpu off DIR` on 127.0.0.1:0, ready to answer.
fn serve(dir: &Path) -> Serve {
    let mut child = Command::new(exe())
        .args(["serve", "--gpu", "off", "--listen", "127.0.0.1:0"])
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    while !line.contains("listening on") {
        line.clear();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "serve exited before listening"
        );
    }
    let addr: SocketAddr = line
        .split("://")
        .nth(1)
        .unwrap()
        .trim()
        .trim_end_matches('/')
        .parse()
        .unwrap();
    let t0 = Instant::now();
    loop {
        let r = request(addr, "GET", "/api/v1/health", &[], b"");
        if r.status == 200 && r.text().contains("\"ready\"") {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "not ready: {}",
            r.text()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Serve { child, addr }
}

/// One answer per query kind, wall times zeroed.
fn answers(addr: SocketAddr) -> Vec<(u16, String)> {
    let queries: &[(&str, &str)] = &[
        (
            "/api/v1/search",
            r#"{"patterns":["ERROR"],"output":"count"}"#,
        ),
        (
            "/api/v1/search",
            r#"{"patterns":["time.*out"],"output":"lines","limit":50}"#,
        ),
        (
            "/api/v1/search",
            r#"{"patterns":["tmeout"],"syntax":"fuzzy","fuzzy_k":1,"output":"count"}"#,
        ),
        (
            "/api/v1/search",
            r#"{"patterns":["GET"],"output":"files_with_matches"}"#,
        ),
        (
            "/api/v1/stats",
            r#"{"patterns":["ERROR"],"count_by":["level"]}"#,
        ),
        ("/api/v1/patterns", r#"{"patterns":["ERROR","WARN","GET"]}"#),
        ("/api/v1/search", r#"{"patterns":["("]}"#),
    ];
    queries
        .iter()
        .map(|(path, body)| {
            let r = request(addr, "POST", path, &[], body.as_bytes());
            let mut v = normalize_elapsed(r.text());
            // Counts' and stats' wall times are plain numbers.
            if let Ok(mut j) = serde_json::from_str::<serde_json::Value>(&v) {
                zero_times(&mut j);
                v = j.to_string();
            }
            (r.status, v)
        })
        .collect()
}

fn zero_times(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if k.contains("elapsed") || k.ends_with("_ms") {
                    *x = serde_json::Value::Null;
                } else {
                    zero_times(x);
                }
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(zero_times),
        _ => {}
    }
}

#[test]
fn serve_killed_with_sigkill_then_restarted_answers_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let logs = write_logs(dir.path());
    let mut first = serve(dir.path());
    let before = answers(first.addr);
    // The count is the oracle's, not only the same twice.
    let total: usize = logs.iter().map(|(_, d)| naive_count(d, b"ERROR")).sum();
    assert_eq!(before[0].0, 200);
    let j: serde_json::Value = serde_json::from_str(&before[0].1).unwrap();
    assert_eq!(j["total"].as_u64(), Some(total as u64), "{j}");
    assert_eq!(before[6].0, 400);
    // SIGKILL (Child::kill on Unix): no shutdown path runs.
    first.child.kill().unwrap();
    let status = first.child.wait().unwrap();
    assert!(!status.success());
    assert!(TcpStream::connect_timeout(&first.addr, Duration::from_millis(500)).is_err());
    let second = serve(dir.path());
    let after = answers(second.addr);
    assert_eq!(before.len(), after.len());
    for (i, (b, a)) in before.iter().zip(&after).enumerate() {
        assert_eq!(b, a, "query {i} answered differently after the restart");
    }
}
