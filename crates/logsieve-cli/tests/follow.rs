//! `search --server URL --follow`: a `logsieve serve` in-process on
//! 127.0.0.1:0 whose files start empty; the built `logsieve` follows it
//! while lines are appended (file after file, in batches, through the
//! test-only appender), then gets Ctrl-C. Its stdout must be byte for byte
//! what a local search over the appended lines prints with the same flags,
//! and its exit code 0 when a line matched (1 when none did).
// The server state holds the session: proving it `Send + Sync` walks
// wgpu's types, deeper than the default 128 (as in the library).
#![recursion_limit = "256"]

use std::io::Read;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use logsieve::{Corpus, Document, Session};
use logsieve_server::{serve_with, AppState, Limits, Ready};

struct Served {
    addr: SocketAddr,
    state: AppState,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.stop.take().map(|s| s.send(()));
        let _ = self.thread.take().map(|t| t.join());
    }
}

/// A server over empty documents named `names`.
fn serve(names: &[String]) -> Served {
    let state = AppState::new(Limits::default(), None);
    let mut c = Corpus::new();
    for n in names {
        c.push(Document::from_bytes(n.clone(), Vec::new()));
    }
    state.set_ready(Ready::new(Session::new(c)));
    serve_state(state)
}

/// A server over one document `name` holding `first`, with the stats
/// columns that time its lines (what `--since`/`--until` read).
fn serve_timed(name: &str, first: &[u8]) -> Served {
    use logsieve::stats::{ColumnOptions, Columns};
    let state = AppState::new(Limits::default(), None);
    let mut c = Corpus::new();
    c.push(Document::from_bytes(name, first.to_vec()));
    let cols = Columns::build(
        &c,
        &ColumnOptions {
            time_format: None,
            year: 2026,
            doc_years: vec![],
            doc_mtimes: vec![None],
            fields: vec![],
        },
    );
    let mut s = Session::new(c);
    s.set_columns(cols);
    state.set_ready(Ready::new(s));
    serve_state(state)
}

fn serve_state(state: AppState) -> Served {
    let (tx, rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let st = state.clone();
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(l.local_addr().unwrap()).unwrap();
            serve_with(l, st, async {
                let _ = stop_rx.await;
            })
            .await
            .unwrap();
        });
    });
    Served {
        addr: rx.recv().unwrap(),
        state,
        stop: Some(stop_tx),
        thread: Some(thread),
    }
}

fn cmd() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_logsieve"));
    c.env_remove("LOGSIEVE_SERVER")
        .env_remove("LOGSIEVE_CONFIG_PATH")
        .env_remove("RIPGREP_CONFIG_PATH")
        .stdin(Stdio::null());
    c
}

/// Two files of generated lines (what will be appended), by path.
fn files() -> (tempfile::TempDir, Vec<(String, Vec<u8>)>) {
    let dir = tempfile::tempdir().unwrap();
    let mut out = Vec::new();
    for (name, lines, seed) in [("a.log", 300, 3), ("b.log", 200, 9)] {
        let data = logsieve::gen::generate(&logsieve::gen::GenOptions {
            lines,
            seed,
            ..Default::default()
        });
        let p: PathBuf = dir.path().join(name);
        std::fs::write(&p, &data).unwrap();
        out.push((p.to_str().unwrap().to_string(), data));
    }
    (dir, out)
}

/// Appends `data` to `name` in two batches cut at a line boundary.
fn append_in_two(state: &AppState, name: &str, data: &[u8]) {
    let mid = data[..data.len() / 2]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    for part in [&data[..mid], &data[mid..]] {
        if !part.is_empty() {
            logsieve_server::append::append(state, name, part).unwrap();
        }
    }
}

/// How long a step may take before the test calls it a hang: far past
/// any load (the steps wait on events, not on time).
const HANG: Duration = Duration::from_secs(120);

/// Follows with `args` while the files are appended, then Ctrl-C once
/// `expect` bytes came (or [`HANG`] passed): (exit code, stdout).
fn follow(files: &[(String, Vec<u8>)], args: &[&str], expect: usize) -> (i32, Vec<u8>, Vec<u8>) {
    let names: Vec<String> = files.iter().map(|f| f.0.clone()).collect();
    let srv = serve(&names);
    let url = format!("http://{}", srv.addr);
    let mut child = cmd()
        .args(["search", "--server", &url, "--follow"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Subscribed? The tail places its cursors under the session's read
    // lock it subscribed under, so what is appended from now on reaches
    // it. No deadline that could pass under load and let the appends run
    // before the tail (the test's old race): the limit only stops a hang.
    let t0 = Instant::now();
    while srv.state.live().tails() == 0 {
        assert!(
            t0.elapsed() < HANG,
            "{args:?}: the follower never subscribed"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    for (name, data) in files {
        append_in_two(&srv.state, name, data);
    }
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 1 << 16];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    // Ctrl-C once the expected bytes came (nothing expected: after a
    // grace period for the server to match and send). The follower
    // catches Ctrl-C from before it subscribes, so the signal never kills
    // it.
    let mut out = Vec::new();
    let deadline = Instant::now()
        + if expect == 0 {
            Duration::from_secs(1)
        } else {
            HANG
        };
    while out.len() < expect.max(1) && Instant::now() < deadline {
        if let Ok(b) = rx.recv_timeout(Duration::from_millis(50)) {
            out.extend(b);
        }
    }
    let pid = child.id().to_string();
    let _ = Command::new("kill").args(["-INT", &pid]).status();
    let status = child.wait().unwrap();
    while let Ok(b) = rx.recv_timeout(Duration::from_millis(200)) {
        out.extend(b);
    }
    let mut err = Vec::new();
    child.stderr.take().unwrap().read_to_end(&mut err).unwrap();
    (status.code().unwrap_or(-1), out, err)
}

/// The local search over the appended lines.
fn local(args: &[&str], paths: &[String]) -> (i32, Vec<u8>) {
    let o = cmd().arg("search").args(args).args(paths).output().unwrap();
    (o.status.code().unwrap_or(-1), o.stdout)
}

const CASES: &[&[&str]] = &[
    &["ERROR"],
    &["-n", "ERROR"],
    &["-H", "-n", "-b", "WARN"],
    &["-o", "-n", r"user=u\d+"],
    &["-i", "-w", "error"],
    &["-v", "-n", "INFO"],
    &["--color", "always", "-n", "ERROR"],
    &["--column", "-n", "ERROR"],
    &["--vimgrep", "WARN"],
    &["-F", "-e", "ERROR", "-e", "WARN"],
    &["--wildcard", "*timeout*"],
    &["--fuzzy", "1", "eror"],
];

#[test]
fn follow_prints_what_a_local_search_prints() {
    let (_dir, files) = files();
    let paths: Vec<String> = files.iter().map(|f| f.0.clone()).collect();
    for args in CASES {
        let (lcode, lout) = local(args, &paths);
        let (code, out, err) = follow(&files, args, lout.len());
        assert!(
            out == lout,
            "{args:?}: stdout differs\n--- local\n{}\n--- follow\n{}\n--- stderr\n{}",
            String::from_utf8_lossy(&lout),
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&err)
        );
        assert_eq!(code, lcode, "{args:?}: {}", String::from_utf8_lossy(&err));
    }
}

/// A files subset (one served file named after the pattern), and `--json`:
/// the `match` objects a local `--json` prints.
#[test]
fn follow_a_file_subset_and_json() {
    let (_dir, files) = files();
    let a = files[0].0.clone();
    let (_, lout) = local(&["-n", "ERROR"], std::slice::from_ref(&a));
    let (code, out, _) = follow(&files, &["-n", "ERROR", &a], lout.len());
    assert_eq!(out, lout);
    assert_eq!(code, 0);
    let paths: Vec<String> = files.iter().map(|f| f.0.clone()).collect();
    let (_, lout) = local(&["--json", "WARN"], &paths);
    let want: Vec<&[u8]> = lout
        .split(|&b| b == b'\n')
        .filter(|l| l.starts_with(br#"{"type":"match""#))
        .collect();
    let bytes: usize = want.iter().map(|l| l.len() + 1).sum();
    let (code, out, _) = follow(&files, &["--json", "WARN"], bytes);
    let got: Vec<&[u8]> = out
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(got, want);
    assert_eq!(code, 0);
}

/// No match: exit 1 after Ctrl-C; what only an end can print is refused.
#[test]
fn follow_exit_codes_and_refusals() {
    let (_dir, files) = files();
    let (code, out, _) = follow(&files, &["nomatch-xyz"], 0);
    assert_eq!((code, out.len()), (1, 0));
    let srv = serve(&["x.log".to_string()]);
    let url = format!("http://{}", srv.addr);
    for flag in ["-c", "-l", "-C1"] {
        let o = cmd()
            .args(["search", "--server", &url, "--follow", flag, "x"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{flag}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains("not supported with --follow"), "{flag}: {e}");
    }
    // A bad pattern: the server's 400, exit 2.
    let o = cmd()
        .args([
            "search", "--server", &url, "--follow", "-F", "x", "nope.log",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not served"));
}

/// `--since`/`--until` reach the server's tail: only matching lines
/// stamped inside the window are printed, and the first batch holding a
/// line stamped at or after `--until` ends the tail, and the follower
/// with it (exit 0, no "server ended" note), before a later batch.
/// Without the window every matching line would print.
#[test]
fn follow_passes_the_time_window() {
    const SINCE: &str = "2026-11-21T10:00:00";
    const UNTIL: &str = "2026-11-21T12:00:00";
    let first = "2026-11-21T09:00:00Z INFO hit start\n";
    let batches = [
        vec![
            "2026-11-21T09:30:00Z INFO hit early\n",
            "2026-11-21T10:30:00Z INFO hit inside\n",
            "2026-11-21T11:00:00Z INFO miss inside\n",
        ],
        vec![
            "2026-11-21T11:30:00Z WARN hit late\n",
            "2026-11-21T12:30:00Z INFO hit after\n",
            "2026-11-21T11:40:00Z INFO hit same batch\n",
        ],
        vec!["2026-11-21T11:45:00Z INFO hit never\n"],
    ];
    // The oracle: stamps compared as text (one ISO form throughout), the
    // batches up to and with the first holding a stamp at or after UNTIL.
    let mut want = String::new();
    let mut line = 1;
    'batches: for b in &batches {
        let mut ends = false;
        for l in b {
            line += 1;
            let stamp = &l[..19];
            if l.contains("hit") && (SINCE..UNTIL).contains(&stamp) {
                want.push_str(&format!("{line}:{l}"));
            }
            ends |= stamp >= UNTIL;
        }
        if ends {
            break 'batches;
        }
    }
    assert_eq!(
        want,
        "3:2026-11-21T10:30:00Z INFO hit inside\n\
         5:2026-11-21T11:30:00Z WARN hit late\n\
         7:2026-11-21T11:40:00Z INFO hit same batch\n"
    );
    let srv = serve_timed("w.log", first.as_bytes());
    let url = format!("http://{}", srv.addr);
    let mut child = cmd()
        .args(["search", "--server", &url, "--follow", "-n"])
        .args(["--since", SINCE, "--until", UNTIL, "hit", "w.log"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while srv.state.live().tails() == 0 {
        assert!(t0.elapsed() < HANG, "the follower never subscribed");
        std::thread::sleep(Duration::from_millis(10));
    }
    for b in &batches {
        logsieve_server::append::append(&srv.state, "w.log", b.concat().as_bytes()).unwrap();
    }
    // It ends by itself: no Ctrl-C.
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(t0.elapsed() < HANG, "the tail did not end at --until");
        std::thread::sleep(Duration::from_millis(20));
    };
    let (mut out, mut err) = (String::new(), String::new());
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(out, want, "stderr: {err}");
    assert_eq!(status.code(), Some(0), "stderr: {err}");
    assert!(!err.contains("ended the tail"), "{err}");
}

/// What a window cannot do over a live tail, and `--since` over a server
/// without `--follow`, are refused (exit 2), not searched locally.
#[test]
fn follow_window_refusals() {
    let srv = serve(&["x.log".to_string()]);
    let url = format!("http://{}", srv.addr);
    for (args, says) in [
        (
            &["--follow", "--since", "1h", "--count-by", "level", "x"][..],
            "--count-by is not supported with --follow",
        ),
        (
            &["--follow", "--histogram", "1m", "x"],
            "--histogram is not supported with --follow",
        ),
        (
            &["--follow", "--since", "1h", "--year", "2025", "x"],
            "--year is not supported with --server",
        ),
        (&["--since", "1h", "x"], "logsieve stats --server"),
    ] {
        let o = cmd()
            .args(["search", "--server", &url])
            .args(args)
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains(says), "{args:?}: {e}");
    }
}
