#![recursion_limit = "256"]
//! `serve --follow --max-resident` end to end: a writer appends numbered,
//! stamped lines in bursts cut at random bytes while a tail is open; the
//! follower evicts the oldest lines past the bound. Afterwards the server
//! holds exactly the newest suffix under the bound, every search answers
//! over it with the line numbers and offsets of the whole file, Loki's
//! `query_range` from before the oldest line held answers over what is
//! held, `/health` and `/metrics` say what was evicted and the oldest time
//! held, and the tail got every matching line once, in order.

mod common;

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Rng, TestServer};
use logsieve::session::Retention;
use logsieve::{QueryBuilder, Syntax, Tuning};
use logsieve_server::follow::FollowSettings;
use logsieve_server::tail::{Tail, TailSpec};
use logsieve_server::{GpuMode, Limits, LoadConfig, Source};

/// Line `n`: stamped 10 ms after line `n - 1`.
fn line(n: u64) -> String {
    let ms = n * 10;
    let level = ["ERROR", "INFO", "WARN", "DEBUG"][(n % 4) as usize];
    format!(
        "2026-11-25T10:{:02}:{:02}.{:03}Z {n:08} {level} req={} msg\n",
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000,
        n % 7
    )
}

fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

const MAX: u64 = 40 << 10;

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
                idle: Duration::from_millis(1000),
                interval: Duration::from_millis(30),
                force_poll: false,
                rescan: Duration::from_millis(200),
                retention: Retention {
                    max_age_ms: None,
                    max_bytes: Some(MAX),
                },
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

#[test]
fn max_resident_keeps_the_newest_lines_with_their_numbers() {
    let dir = std::env::temp_dir().join(format!("logsieve-retain-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("app.log");
    let first: u64 = 200;
    std::fs::write(&log, (0..first).map(line).collect::<String>()).unwrap();
    let s = start(&dir);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let q = QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .build(&["ERROR"])
        .unwrap();
    let mut tail = Tail::start(
        &s.state,
        TailSpec {
            query: Arc::new(q),
            watchlist: None,
            files: None,
            tuning: Tuning::default(),
            since: None,
            until: None,
        },
    );
    // The writer: bursts cut at random bytes.
    let total: u64 = 4_000;
    let mut rng = Rng(17);
    let mut f = OpenOptions::new().append(true).open(&log).unwrap();
    let mut n = first;
    while n < total {
        let k = 1 + rng.below(120);
        let burst: String = (n..(n + k).min(total)).map(line).collect();
        n = (n + k).min(total);
        let cut = rng.below(burst.len() as u64) as usize;
        f.write_all(&burst.as_bytes()[..cut]).unwrap();
        f.flush().unwrap();
        std::thread::sleep(Duration::from_millis(rng.below(6)));
        f.write_all(&burst.as_bytes()[cut..]).unwrap();
        f.flush().unwrap();
    }
    // Wait for the follower to take every line.
    let deadline = Instant::now() + Duration::from_secs(20);
    let health = loop {
        let h = s.get("/api/v1/health").json();
        if h["follow"]["lines_appended"].as_u64() == Some(total - first)
            || Instant::now() > deadline
        {
            break h;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let fh = &health["follow"];
    assert_eq!(
        fh["lines_appended"].as_u64(),
        Some(total - first),
        "{health}"
    );
    let evicted = fh["evicted_lines"].as_u64().unwrap();
    let held = health["lines"].as_u64().unwrap();
    assert!(fh["evictions"].as_u64().unwrap() >= 2, "{health}");
    assert_eq!(evicted + held, total, "{health}");
    let held_bytes = fh["held_bytes"].as_u64().unwrap();
    assert!(held_bytes <= MAX, "{health}");
    assert_eq!(fh["max_resident"].as_u64(), Some(MAX));
    let all: Vec<String> = (0..total).map(line).collect();
    let kept = &all[evicted as usize..];
    assert_eq!(
        held_bytes,
        kept.iter().map(|l| l.len() as u64).sum::<u64>(),
        "{health}"
    );
    assert_eq!(
        fh["evicted_bytes"].as_u64().unwrap(),
        all[..evicted as usize]
            .iter()
            .map(|l| l.len() as u64)
            .sum::<u64>()
    );
    // The oldest time held: the first kept line's.
    let oldest = &kept[0][..24];
    assert_eq!(fh["oldest"].as_str(), Some(oldest), "{health}");

    // Searches answer over the kept lines, numbered as in the file.
    let naive = |pat: &str| kept.iter().filter(|l| l.contains(pat)).count() as u64;
    let r = s.post(
        "/api/v1/search",
        r#"{"patterns":["ERROR"],"syntax":"literal","output":"count"}"#,
    );
    assert_eq!(r.json()["total"].as_u64(), Some(naive("ERROR")));
    let r = s.post(
        "/api/v1/search",
        r#"{"patterns":["req=3 msg"],"syntax":"literal","output":"lines"}"#,
    );
    assert_eq!(r.status, 200);
    let mut got = 0;
    for l in r.text().lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        if v["type"] != "match" {
            continue;
        }
        got += 1;
        let text = v["data"]["lines"]["text"].as_str().unwrap();
        let n: usize = text[25..33].parse().unwrap();
        assert_eq!(v["data"]["line_number"].as_u64(), Some(n as u64 + 1), "{l}");
        let off: usize = all[..n].iter().map(|l| l.len()).sum();
        assert_eq!(
            v["data"]["absolute_offset"].as_u64(),
            Some(off as u64),
            "{l}"
        );
    }
    assert_eq!(got, naive("req=3 msg"));

    // Loki: a start long before the oldest line held answers over what
    // is held (no error).
    let start = "0";
    let end = (2_000_000_000u64 * 1_000_000_000).to_string();
    let path = format!(
        "/loki/api/v1/query_range?query={}&start={start}&end={end}&limit=100000&direction=forward",
        enc(r#"{filename=~".+"} |= "ERROR""#)
    );
    let r = s.get(&path);
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    let values: Vec<String> = v["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|st| st["values"].as_array().unwrap().clone())
        .map(|p| p[1].as_str().unwrap().to_string())
        .collect();
    let want: Vec<String> = kept
        .iter()
        .filter(|l| l.contains("ERROR"))
        .map(|l| l.trim_end().to_string())
        .collect();
    assert_eq!(values, want);

    // `/metrics`.
    let m = s.get("/metrics").text().to_string();
    assert!(
        m.contains(&format!("logsieve_follow_evicted_lines_total {evicted}")),
        "{m}"
    );
    assert!(m.contains("logsieve_follow_oldest_retained_seconds"), "{m}");

    // The tail open across the evictions: every ERROR line appended
    // after it started, once, in order, with its number in the file.
    let want: Vec<u64> = (first..total)
        .filter(|n| n % 4 == 0)
        .map(|n| n + 1)
        .collect();
    let mut hits = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while hits.len() < want.len() && Instant::now() < deadline {
        let r = rt.block_on(async {
            tokio::time::timeout(Duration::from_millis(500), tail.next()).await
        });
        match r {
            Ok(Ok(h)) => hits.extend(h),
            _ => break,
        }
    }
    let got: Vec<u64> = hits.iter().map(|h| h.line_number).collect();
    assert_eq!(got, want, "the tail across evictions");
    for h in &hits {
        let n = (h.line_number - 1) as usize;
        assert_eq!(h.text, all[n].as_bytes());
        let off: usize = all[..n].iter().map(|l| l.len()).sum();
        assert_eq!(h.offset, off as u64);
    }
    drop(s);
    let _ = std::fs::remove_dir_all(&dir);
}
