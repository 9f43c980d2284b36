#![recursion_limit = "256"]
//! `serve --follow` end to end: a writer appends numbered lines in bursts
//! cut at random bytes, rotates by rename and by copytruncate (the rotated
//! file later gzipped), truncates and restarts, while clients query; once
//! the follower has caught up, every count equals the naive count over
//! everything written and each numbered line is held exactly once.

mod common;

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Rng, TestServer};
use logsieve_server::follow::FollowSettings;
use logsieve_server::{GpuMode, Limits, LoadConfig, Source};

fn line(n: u64) -> String {
    let level = ["ERROR", "info", "Error", "WARN", "debug"][(n % 5) as usize];
    format!("{n:08} {level} req={} msg id={n}\n", n % 7)
}

fn open_append(p: &Path) -> File {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(p)
        .unwrap()
}

/// The writer: returns every line written, in order.
fn write_all(dir: &Path, first: u64, total: u64, seed: u64) -> Vec<String> {
    let log = dir.join("app.log");
    let mut rng = Rng(seed);
    let mut f = open_append(&log);
    let mut written = Vec::new();
    let mut rotations = 0;
    let mut n = first;
    while n < first + total {
        // One burst: whole lines, then a cut at a random byte of the next
        // (finished by the next burst).
        let k = 1 + rng.below(100);
        let mut burst = String::new();
        for _ in 0..k {
            if n >= first + total {
                break;
            }
            let l = line(n);
            written.push(l.clone());
            burst.push_str(&l);
            n += 1;
        }
        let cut = rng.below(burst.len() as u64) as usize;
        f.write_all(&burst.as_bytes()[..cut]).unwrap();
        f.flush().unwrap();
        std::thread::sleep(Duration::from_millis(rng.below(4)));
        f.write_all(&burst.as_bytes()[cut..]).unwrap();
        f.flush().unwrap();
        // At a line boundary, now and then: rotate.
        if rng.below(12) == 0 {
            rotations += 1;
            match rotations % 3 {
                // logrotate's default: rename, then the writer reopens.
                1 => {
                    let to = dir.join(format!("app.log.{rotations}"));
                    std::fs::rename(&log, &to).unwrap();
                    // Lines the writer adds before it reopens.
                    let l = line(n);
                    n += 1;
                    written.push(l.clone());
                    f.write_all(l.as_bytes()).unwrap();
                    f = open_append(&log);
                    if rotations % 2 == 1 {
                        gzip_later(&to);
                    }
                }
                // copytruncate: the copy beside, the original truncated.
                2 => {
                    let to = dir.join(format!("app.log.{rotations}"));
                    std::fs::copy(&log, &to).unwrap();
                    File::options()
                        .write(true)
                        .open(&log)
                        .unwrap()
                        .set_len(0)
                        .unwrap();
                }
                // The writer restarts: closes and opens again.
                _ => {
                    drop(f);
                    f = open_append(&log);
                }
            }
        }
    }
    written
}

/// A rotated file compressed a little later (logrotate's `delaycompress`
/// does it at the next rotation), the plain one removed.
fn gzip_later(p: &Path) {
    let p = p.to_path_buf();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(400));
        let Ok(data) = std::fs::read(&p) else { return };
        let mut gz = PathBuf::from(&p).into_os_string();
        gz.push(".gz");
        let tmp = PathBuf::from(format!("{}.tmp", gz.to_string_lossy()));
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(&data).unwrap();
        std::fs::write(&tmp, e.finish().unwrap()).unwrap();
        std::fs::rename(&tmp, PathBuf::from(gz)).unwrap();
        let _ = std::fs::remove_file(&p);
    });
}

fn count(s: &TestServer, body: &str) -> u64 {
    let r = s.post("/api/v1/search", body);
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["total"].as_u64().unwrap()
}

fn settings(force_poll: bool) -> FollowSettings {
    FollowSettings {
        // Long enough that a writer starved by a loaded CI machine
        // between the two halves of a line does not see it cut.
        idle: Duration::from_millis(1000),
        interval: Duration::from_millis(50),
        force_poll,
        rescan: Duration::from_millis(200),
        retention: Default::default(),
    }
}

fn start(dir: &Path, force_poll: bool) -> TestServer {
    logsieve_server::init_tracing();
    let s = TestServer::loading(Limits::default(), None);
    let config = LoadConfig {
        source: Source::Follow {
            paths: vec![dir.to_path_buf()],
            walk: Default::default(),
            load: logsieve::LoadOptions {
                no_mmap: true,
                search_zip: true,
            },
            settings: settings(force_poll),
        },
        gpu: GpuMode::Off,
        fields: vec![],
        time_format: None,
        year: None,
        progress_bar: false,
        tuning: Default::default(),
    };
    logsieve_server::load::load(&config, &s.state).unwrap();
    s
}

fn wait_lines(s: &TestServer, want: u64) {
    let t = Instant::now();
    loop {
        let h = s.get("/api/v1/health").json();
        let have = h["lines"].as_u64().unwrap();
        if have == want {
            return;
        }
        if t.elapsed() > Duration::from_secs(5) {
            // `check` says which lines are missing or doubled.
            eprintln!("the follower holds {have} lines, {want} were written: {h}");
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every numbered line held exactly once, and the counts of a literal, a
/// regex and `-i` equal the naive count over `written`.
fn check(s: &TestServer, written: &[String]) {
    let ready = s.state.ready().unwrap();
    let mut seen: HashMap<u64, u32> = HashMap::new();
    for d in ready.session.corpus().docs() {
        for i in 0..d.lines().len() {
            let l = std::str::from_utf8(d.line(i)).unwrap();
            let n: u64 = l[..8].parse().unwrap_or_else(|_| panic!("{l:?}"));
            *seen.entry(n).or_default() += 1;
        }
    }
    drop(ready);
    for (i, l) in written.iter().enumerate() {
        let n: u64 = l[..8].parse().unwrap();
        if seen.get(&n) != Some(&1) {
            let ready = s.state.ready().unwrap();
            for d in ready.session.corpus().docs() {
                for j in 0..d.lines().len() {
                    if d.line(j).starts_with(&l.as_bytes()[..8]) {
                        eprintln!(
                            "{}:{}: {:?}",
                            d.name(),
                            j + 1,
                            String::from_utf8_lossy(d.line(j))
                        );
                    }
                }
            }
            panic!("line {i} ({l:?}) held {:?} times", seen.get(&n));
        }
    }
    assert_eq!(
        seen.len(),
        written.len(),
        "no line held that was not written"
    );
    let re = regex::Regex::new(r"req=[35] msg id=\d*7$").unwrap();
    let naive =
        |f: &dyn Fn(&str) -> bool| written.iter().filter(|l| f(l.trim_end())).count() as u64;
    assert_eq!(
        count(
            s,
            r#"{"patterns":["ERROR"],"syntax":"literal","output":"count"}"#
        ),
        naive(&|l| l.contains("ERROR"))
    );
    assert_eq!(
        count(
            s,
            r#"{"patterns":["error"],"syntax":"literal","ignore_case":true,"output":"count"}"#
        ),
        naive(&|l| l.to_lowercase().contains("error"))
    );
    assert_eq!(
        count(
            s,
            r#"{"patterns":["req=[35] msg id=\\d*7$"],"output":"count"}"#
        ),
        naive(&|l| re.is_match(l))
    );
    // Lines output agrees with the count.
    let r = s.post(
        "/api/v1/search",
        r#"{"patterns":["WARN"],"syntax":"literal","output":"lines"}"#,
    );
    assert_eq!(r.status, 200);
    let matches = r
        .text()
        .lines()
        .filter(|l| l.contains(r#""type":"match""#))
        .count() as u64;
    assert_eq!(matches, naive(&|l| l.contains("WARN")));
}

fn run(force_poll: bool, seed: u64) {
    let dir = std::env::temp_dir().join(format!(
        "logsieve-follow-{}-{seed}-{force_poll}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // Already there at the load, with a partial last line being written.
    let mut written: Vec<String> = (0..500).map(line).collect();
    let mut start_bytes = written.concat().into_bytes();
    let tail = line(500);
    start_bytes.extend_from_slice(&tail.as_bytes()[..5]);
    std::fs::write(dir.join("app.log"), &start_bytes).unwrap();
    let s = start(&dir, force_poll);
    open_append(&dir.join("app.log"))
        .write_all(&tail.as_bytes()[5..])
        .unwrap();
    written.push(tail);
    // Clients query while the writer writes: counts never go down.
    let stop = Arc::new(AtomicBool::new(false));
    let addr = s.addr;
    let client = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut last = 0;
            let mut queries = 0;
            while !stop.load(Ordering::Relaxed) {
                let r = common::request(
                    addr,
                    "POST",
                    "/api/v1/search",
                    &[],
                    br#"{"patterns":["msg id="],"syntax":"literal","output":"count"}"#,
                );
                assert_eq!(r.status, 200);
                let n = r.json()["total"].as_u64().unwrap();
                assert!(n >= last, "a count went down: {last} then {n}");
                last = n;
                queries += 1;
            }
            queries
        })
    };
    written.extend(write_all(&dir, 501, 12_000, seed));
    // A new file in the served directory.
    let extra: Vec<String> = (1_000_000..1_000_300).map(line).collect();
    std::fs::write(dir.join("new.log"), extra.concat()).unwrap();
    written.extend(extra);
    wait_lines(&s, written.len() as u64);
    stop.store(true, Ordering::Relaxed);
    let queries = client.join().unwrap();
    assert!(queries > 0);
    // The delayed gzips have run: nothing loaded twice.
    std::thread::sleep(Duration::from_millis(800));
    wait_lines(&s, written.len() as u64);
    check(&s, &written);
    let h = s.get("/api/v1/health").json();
    let f = &h["follow"];
    // Polling alone may sleep through a truncation: the copy beside
    // then gives the lines (the counts above are right either way).
    if !force_poll {
        assert!(f["truncations"].as_u64().unwrap() > 0, "{h}");
    }
    assert!(f["copies"].as_u64().unwrap() > 0, "{h}");
    assert!(f["new_files"].as_u64().unwrap() > 0, "{h}");
    assert_eq!(f["events"].as_bool().unwrap(), !force_poll);
    let m = s.get("/metrics");
    assert!(m.text().contains("logsieve_follow_appended_lines_total"));
    drop(s);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn writer_rotations_and_queries_with_events() {
    run(false, 0x9e37_79b9_7f4a_7c15);
}

#[test]
fn writer_rotations_and_queries_polling_only() {
    run(true, 0x2545_f491_4f6c_dd1d);
}
