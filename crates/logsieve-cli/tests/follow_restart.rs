//! `logsieve serve --follow` killed with SIGKILL while lines are being
//! appended, then started again: it reads the files again, and every
//! line written — before, during and after the kill — is searchable once.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn serve(dir: &std::path::Path) -> (Child, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_logsieve"))
        .args([
            "serve",
            "--follow",
            "--follow-idle",
            "1",
            "--listen",
            "127.0.0.1:0",
            "--gpu",
            "off",
        ])
        .arg(dir)
        .env_remove("LOGSIEVE_CONFIG_PATH")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(c.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .rsplit(' ')
        .next()
        .unwrap()
        .trim_end_matches('/')
        .to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{line:?}");
    (c, url)
}

/// Lines holding `pat` on the server (0 while it loads).
fn count(url: &str, pat: &str) -> u64 {
    let out = Command::new(env!("CARGO_BIN_EXE_logsieve"))
        .args(["search", "--server", url, "-c", "-F", pat])
        .env_remove("LOGSIEVE_SERVER")
        .env_remove("LOGSIEVE_CONFIG_PATH")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.rsplit(':').next()?.trim().parse::<u64>().ok())
        .sum()
}

fn wait_count(url: &str, pat: &str, want: u64) {
    let t = Instant::now();
    loop {
        let n = count(url, pat);
        if n == want {
            return;
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "{pat}: {n} of {want}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn append(p: &std::path::Path, from: u64, to: u64) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(p)
        .unwrap();
    for n in from..to {
        writeln!(f, "{n:08} line MARK").unwrap();
    }
}

#[test]
fn sigkill_then_restart_loses_nothing() {
    let dir = std::env::temp_dir().join(format!("logsieve-follow-kill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("app.log");
    append(&log, 0, 1000);
    let (mut s, url) = serve(&dir);
    wait_count(&url, "MARK", 1000);
    append(&log, 1000, 3000);
    wait_count(&url, "MARK", 3000);
    append(&log, 3000, 3500);
    s.kill().unwrap(); // SIGKILL
    s.wait().unwrap();
    append(&log, 3500, 4000);
    let (mut s, url) = serve(&dir);
    wait_count(&url, "MARK", 4000);
    append(&log, 4000, 4100);
    wait_count(&url, "MARK", 4100);
    assert_eq!(count(&url, "00003999 line"), 1);
    s.kill().unwrap();
    s.wait().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
