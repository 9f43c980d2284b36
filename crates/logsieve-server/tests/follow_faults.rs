#![recursion_limit = "256"]
//! Faults while `serve --follow` runs: a followed file deleted,
//! truncated in place (copytruncate), replaced (rename + create, and a new
//! file renamed over it), each while a writer appends. Once the follower
//! has caught up, every numbered line written is held exactly once and the
//! counts of a literal, `-i` and a regex equal the naive count over what
//! the files held.

mod common;

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::TestServer;
use logsieve_server::follow::FollowSettings;
use logsieve_server::{GpuMode, Limits, LoadConfig, Source};

fn line(n: u64) -> String {
    let level = ["ERROR", "info", "Error", "WARN", "debug"][(n % 5) as usize];
    format!("{n:08} {level} req={} msg id={n}\n", n % 7)
}

fn lines(from: u64, to: u64) -> Vec<String> {
    (from..to).map(line).collect()
}

fn append(p: &Path, ls: &[String]) {
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(p)
        .unwrap();
    f.write_all(ls.concat().as_bytes()).unwrap();
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "logsieve-follow-faults-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn start(dir: &Path) -> TestServer {
    logsieve_server::init_tracing();
    let s = TestServer::loading(Limits::default(), None);
    let config = LoadConfig {
        source: Source::Follow {
            paths: vec![dir.to_path_buf()],
            walk: Default::default(),
            load: logsieve::LoadOptions {
                no_mmap: true,
                search_zip: false,
            },
            settings: FollowSettings {
                idle: Duration::from_millis(300),
                interval: Duration::from_millis(30),
                force_poll: false,
                rescan: Duration::from_millis(100),
                retention: Default::default(),
            },
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

fn count(s: &TestServer, body: &str) -> u64 {
    let r = s.post("/api/v1/search", body);
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["total"].as_u64().unwrap()
}

/// How many times each numbered line is held.
fn held(s: &TestServer) -> HashMap<u64, u32> {
    let ready = s.state.ready().unwrap();
    let mut seen: HashMap<u64, u32> = HashMap::new();
    for d in ready.session.corpus().docs() {
        for i in 0..d.lines().len() {
            let l = std::str::from_utf8(d.line(i)).unwrap();
            let n: u64 = l[..8].parse().unwrap_or_else(|_| panic!("{l:?}"));
            *seen.entry(n).or_default() += 1;
        }
    }
    seen
}

/// Waits until the server holds exactly `written` (each line once), then
/// checks the counts against the naive oracle over `written`.
fn check(s: &TestServer, written: &[String]) {
    let t = Instant::now();
    let want: HashMap<u64, u32> = written
        .iter()
        .map(|l| (l[..8].parse().unwrap(), 1))
        .collect();
    assert_eq!(
        want.len(),
        written.len(),
        "the test writes each number once"
    );
    loop {
        let seen = held(s);
        if seen == want {
            break;
        }
        if t.elapsed() > Duration::from_secs(20) {
            let missing: Vec<_> = want
                .keys()
                .filter(|n| !seen.contains_key(n))
                .take(5)
                .collect();
            let twice: Vec<_> = seen.iter().filter(|(_, &c)| c > 1).take(5).collect();
            let extra: Vec<_> = seen
                .keys()
                .filter(|n| !want.contains_key(n))
                .take(5)
                .collect();
            panic!(
                "held {} of {} lines; missing {missing:?}, held more than once {twice:?}, never written {extra:?}",
                seen.len(),
                want.len()
            );
        }
        std::thread::sleep(Duration::from_millis(30));
    }
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
    assert_eq!(
        count(
            s,
            r#"{"patterns":["msg"],"syntax":"literal","output":"count"}"#
        ),
        written.len() as u64
    );
}

#[test]
fn a_followed_file_deleted_keeps_its_lines_and_the_rest_is_followed() {
    let d = dir("deleted");
    let (a, b) = (d.join("a.log"), d.join("b.log"));
    let mut written = lines(0, 400);
    append(&a, &written[..200]);
    append(&b, &written[200..]);
    let s = start(&d);
    check(&s, &written);
    // Lines written to b.log, then b.log deleted at once (before the
    // follower can have read them: its open handle still reads them).
    let late = lines(400, 450);
    append(&b, &late);
    std::fs::remove_file(&b).unwrap();
    written.extend(late);
    let more = lines(450, 700);
    append(&a, &more);
    written.extend(more);
    check(&s, &written);
    // A new b.log at the same path is a new file.
    let again = lines(700, 760);
    append(&b, &again);
    written.extend(again);
    check(&s, &written);
    drop(s);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn copytruncate_while_followed_counts_nothing_twice() {
    let d = dir("copytruncate");
    let a = d.join("a.log");
    let mut written = lines(0, 300);
    append(&a, &written);
    let s = start(&d);
    check(&s, &written);
    for round in 0..3u64 {
        let base = 1000 * (round + 1);
        let burst = lines(base, base + 200);
        append(&a, &burst);
        written.extend(burst);
        // logrotate's copytruncate: the copy beside, the original cut to
        // zero, the writer goes on (in append mode) from offset 0.
        std::fs::copy(&a, d.join(format!("a.log.{round}"))).unwrap();
        File::options()
            .write(true)
            .open(&a)
            .unwrap()
            .set_len(0)
            .unwrap();
        let after = lines(base + 200, base + 260);
        append(&a, &after);
        written.extend(after);
        check(&s, &written);
    }
    let h = s.get("/api/v1/health").json();
    assert!(h["follow"]["copies"].as_u64().unwrap() > 0, "{h}");
    drop(s);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn replaced_by_rename_and_create_and_by_rename_over() {
    let d = dir("replaced");
    let a = d.join("a.log");
    let mut written = lines(0, 300);
    append(&a, &written);
    let s = start(&d);
    check(&s, &written);
    // rename + create: the writer keeps its handle for a moment.
    let mut old = OpenOptions::new().append(true).open(&a).unwrap();
    std::fs::rename(&a, d.join("a.log.1")).unwrap();
    let late = lines(300, 320);
    old.write_all(late.concat().as_bytes()).unwrap();
    drop(old);
    written.extend(late);
    let fresh = lines(320, 500);
    append(&a, &fresh);
    written.extend(fresh);
    check(&s, &written);
    // A new version written beside and renamed over a.log (an atomic
    // replace): the old inode is gone from the directory (its lines stay
    // held), the new one is a new file.
    let tmp = d.join(".a.log.tmp");
    let replacement = lines(500, 800);
    append(&tmp, &replacement);
    std::fs::rename(&tmp, &a).unwrap();
    written.extend(replacement);
    check(&s, &written);
    let more = lines(800, 850);
    append(&a, &more);
    written.extend(more);
    check(&s, &written);
    drop(s);
    let _ = std::fs::remove_dir_all(&d);
}
