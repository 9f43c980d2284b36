//! The harness of the walk and changing-file tests: run a command with a
//! deadline, compare with rg, build trees in temporary directories.

#![allow(dead_code)] // each test file uses its part

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// What one run of a command left behind.
#[derive(Debug)]
pub struct Out {
    /// The exit code; `None` when a signal ended the process.
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl Out {
    pub fn out(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    pub fn lines(&self) -> Vec<String> {
        self.out().lines().map(str::to_string).collect()
    }
}

pub fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_logsieve")
}

/// Runs `cmd ARGS` in `dir` with an empty stdin; kills it and panics when
/// it runs past `limit` (a walk that blocks on a FIFO must fail, not hang).
pub fn run_limited<S: AsRef<OsStr>>(cmd: &str, dir: &Path, args: &[S], limit: Duration) -> Out {
    let mut child = Command::new(cmd)
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("RIPGREP_CONFIG_PATH")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd}: {e}"));
    // Readers drain the pipes while we wait: a child with more output than
    // a pipe holds would otherwise block, and look hung.
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("stdout pipe")));
    let stderr = drain(Box::new(child.stderr.take().expect("stderr pipe")));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let args: Vec<_> = args.iter().map(|a| a.as_ref().to_owned()).collect();
            panic!("{cmd} {args:?} ran past {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Out {
        code: status.code(),
        stdout: stdout.join().expect("stdout reader"),
        stderr: String::from_utf8_lossy(&stderr.join().expect("stderr reader")).into_owned(),
    }
}

/// `logsieve search ARGS` in `dir`.
pub fn search<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Out {
    let mut all: Vec<OsString> = vec!["search".into()];
    all.extend(args.iter().map(|a| a.as_ref().to_os_string()));
    run_limited(exe(), dir, &all, Duration::from_secs(20))
}

/// True when `tool --version` runs; otherwise says the comparison is skipped.
pub fn have(tool: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIPPED: `{tool}` is not installed; comparison not run");
    }
    ok
}

/// `rg ARGS` in `dir`, no config file, sorted by path (as we always are).
/// Ignore files stay on: the walk is what these tests compare.
pub fn rg<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Out {
    let mut all: Vec<OsString> = vec!["--no-config".into(), "--sort=path".into()];
    all.extend(args.iter().map(|a| a.as_ref().to_os_string()));
    run_limited("rg", dir, &all, Duration::from_secs(20))
}

/// Asserts that `logsieve search ARGS` and `rg ARGS` print the same bytes
/// on stdout and exit alike; returns our run (rg absent: only ours runs).
pub fn same_as_rg(dir: &Path, args: &[&str]) -> Out {
    let ours = search(dir, args);
    assert!(ours.code.is_some(), "killed by a signal: {args:?}");
    if !have("rg") {
        return ours;
    }
    let theirs = rg(dir, args);
    assert_eq!(
        ours.out(),
        theirs.out(),
        "stdout differs from rg for {args:?}\nour stderr: {}\nrg stderr: {}",
        ours.stderr,
        theirs.stderr
    );
    assert_eq!(
        ours.code, theirs.code,
        "exit code differs from rg for {args:?}\nour stderr: {}\nrg stderr: {}",
        ours.stderr, theirs.stderr
    );
    ours
}

pub fn tmp() -> TempDir {
    tempfile::tempdir().expect("tempdir")
}

/// Writes `data` to `dir/name`, creating the parents.
pub fn write(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&p, data).unwrap();
    p
}

/// Runs a command to make a fixture; false (and a note) when it cannot.
pub fn tool(dir: &Path, cmd: &str, args: &[&str]) -> bool {
    let ok = Command::new(cmd)
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!(
            "SKIPPED: `{cmd} {}` failed or is not installed",
            args.join(" ")
        );
    }
    ok
}
