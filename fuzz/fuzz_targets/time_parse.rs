//! Timestamp detection and parsing, `--since/--until` expressions and
//! durations (stats/time.rs): never a panic, and stamps are sane.
//!
//! Input: the first line is a `--since` expression, the rest are log lines.
#![no_main]
use libfuzzer_sys::fuzz_target;
use logsieve::stats::time::{parse_duration, TimeRules, TimeSpec};

fuzz_target!(|data: &[u8]| {
    let mut lines = data.split(|&b| b == b'\n');
    let expr = lines.next().unwrap_or(b"");
    if let Ok(s) = std::str::from_utf8(expr) {
        let _ = parse_duration(s);
        if let Ok(spec) = TimeSpec::parse(s) {
            let _ = spec.resolve(1_795_000_000_000);
        }
    }
    let body: Vec<&[u8]> = lines.take(64).collect();
    for year in [1970, 2026] {
        let rules = TimeRules::detect(body.iter().copied(), None, year);
        for l in &body {
            if let Some(st) = rules.stamp(l, year) {
                assert!(st.end <= l.len(), "stamp ends past the line");
            }
        }
    }
});
