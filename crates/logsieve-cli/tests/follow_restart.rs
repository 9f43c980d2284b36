//! `logsieve serve --follow` killed with SIGKILL while lines are being
//! appended, then started again: it reads the files again, and every
//! line written — before, during and after the kill — is searchable once,
//! a line cut by the kill included. And an entry that cannot be
//! read appearing in a followed directory: one warning naming it, the
//! rest followed. And `--max-resident` / `--retain` through the binary.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn serve(dir: &std::path::Path) -> (Child, String) {
    serve_with(dir, &[], Stdio::null())
}

fn serve_with(dir: &std::path::Path, extra: &[&str], stderr: Stdio) -> (Child, String) {
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
        .args(extra)
        .arg(dir)
        .env_remove("LOGSIEVE_CONFIG_PATH")
        .stdout(Stdio::piped())
        .stderr(stderr)
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

/// The kill lands while a writer appends in bursts cut at
/// random bytes (a partial line is on disk at the kill); the writer goes
/// on while the server is down. After the restart every numbered line is
/// held once and whole.
#[test]
fn sigkill_mid_append_with_a_partial_line_then_restart() {
    let dir = std::env::temp_dir().join(format!("logsieve-follow-kill-mid-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("app.log");
    append(&log, 0, 500);
    let (mut s, url) = serve(&dir);
    wait_count(&url, "MARK", 500);
    let text: String = (500..3000u64)
        .map(|n| format!("{n:08} line MARK\n"))
        .collect();
    let bytes = text.into_bytes();
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    // Cuts at pseudo-random bytes (not at line ends): the kill comes
    // after the cut that leaves half of line 1700 on disk.
    let half = bytes.len() * 1200 / 2500 + 7;
    let mut at = 0usize;
    let mut x: u64 = 0x9e37_79b9;
    while at < half {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let to = (at + 1 + (x % 400) as usize).min(half);
        f.write_all(&bytes[at..to]).unwrap();
        f.flush().unwrap();
        at = to;
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_ne!(bytes[half - 1], b'\n', "the kill lands inside a line");
    s.kill().unwrap(); // SIGKILL
    s.wait().unwrap();
    f.write_all(&bytes[half..]).unwrap();
    drop(f);
    let (mut s, url) = serve(&dir);
    wait_count(&url, "MARK", 3000);
    let cut_line = 500 + (half / 19) as u64;
    for n in [0, 499, 500, cut_line - 1, cut_line, cut_line + 1, 2999] {
        assert_eq!(count(&url, &format!("{n:08} line MARK")), 1, "line {n}");
    }
    append(&log, 3000, 3100);
    wait_count(&url, "MARK", 3100);
    s.kill().unwrap();
    s.wait().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A dangling link appears in a directory followed with
/// `--follow-links`: one warning naming it (not one per rescan), and the
/// other files are still followed.
#[cfg(unix)]
#[test]
fn an_unreadable_entry_in_a_followed_directory_is_one_warning() {
    let dir = std::env::temp_dir().join(format!("logsieve-follow-bad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("app.log");
    append(&log, 0, 100);
    let err_path = dir.with_extension("stderr");
    let err = std::fs::File::create(&err_path).unwrap();
    let (mut s, url) = serve_with(&dir, &["--follow-links"], Stdio::from(err));
    wait_count(&url, "MARK", 100);
    std::os::unix::fs::symlink("nothere", dir.join("broken.log")).unwrap();
    let other = dir.join("other.log");
    append(&other, 1000, 1100);
    append(&log, 100, 200);
    wait_count(&url, "MARK", 300);
    // Several rescans (one a second by default).
    std::thread::sleep(Duration::from_millis(2500));
    append(&log, 200, 250);
    wait_count(&url, "MARK", 350);
    s.kill().unwrap();
    s.wait().unwrap();
    let text = std::fs::read_to_string(&err_path).unwrap();
    let warned = text.lines().filter(|l| l.contains("broken.log")).count();
    assert_eq!(warned, 1, "{text}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&err_path);
}

/// `--max-resident` reaches the follower: past the bound the oldest lines
/// go, the kept ones keep their numbers in the file (`-n`); bad values
/// and a bound without `--follow` are refused before the server starts.
#[test]
fn max_resident_through_the_binary() {
    let dir = std::env::temp_dir().join(format!("logsieve-follow-bound-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("app.log");
    append(&log, 0, 100);
    let (mut s, url) = serve_with(&dir, &["--max-resident", "1K"], Stdio::null());
    // The load (1,900 bytes) is past the bound: evicted at start.
    let t = Instant::now();
    // (0 while it loads.)
    while !(1..=1024 / 19).contains(&count(&url, "MARK")) {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "no eviction at start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    append(&log, 100, 400);
    wait_count(&url, "00000399 line", 1);
    // 19 bytes a line: at most 1 KiB held.
    let held = count(&url, "MARK");
    assert!(held > 0 && held <= 1024 / 19, "{held} lines held");
    assert_eq!(count(&url, "00000000 line"), 0, "the oldest line went");
    let out = Command::new(env!("CARGO_BIN_EXE_logsieve"))
        .args(["search", "--server", &url, "-n", "-F", "00000399 line"])
        .env_remove("LOGSIEVE_SERVER")
        .env_remove("LOGSIEVE_CONFIG_PATH")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("400:00000399 line MARK"), "{text}");
    s.kill().unwrap();
    s.wait().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    for args in [
        &["serve", "--follow", "--retain", "7x"][..],
        &["serve", "--retain", "7d"],
        &["serve", "--follow", "--max-resident", "lots"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_logsieve"))
            .args(args)
            .env_remove("LOGSIEVE_CONFIG_PATH")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--retain") || err.contains("--max-resident"),
            "{args:?}: {err}"
        );
    }
}
