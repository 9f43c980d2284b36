//! Field extraction (`--count-by`, stats/fields.rs): a field spec (the
//! first line: a built-in name, `name=regex`, ...) parsed, then extracted
//! from every other line with and without a detected timestamp: no panic,
//! and an extracted value is a piece of its line.
#![no_main]
use libfuzzer_sys::fuzz_target;
use logsieve::stats::fields::{host_of, level_of, FieldSpec};
use logsieve::stats::time::TimeRules;

fuzz_target!(|data: &[u8]| {
    let mut lines = data.split(|&b| b == b'\n');
    let spec = lines.next().unwrap_or(b"");
    let body: Vec<&[u8]> = lines.take(64).collect();
    let rules = TimeRules::detect(body.iter().copied(), None, 2026);
    let spec = std::str::from_utf8(spec)
        .ok()
        .and_then(|s| FieldSpec::parse(s).ok());
    for l in &body {
        for stamp in [None, rules.stamp(l, 2026)] {
            let _ = level_of(l, stamp);
            if let Some(h) = host_of(l, stamp) {
                assert!(is_within(h, l), "host outside its line");
            }
            if let Some(spec) = &spec {
                if let Some(v) = spec.extract(l, stamp) {
                    assert!(is_within(v, l), "field outside its line");
                }
            }
        }
    }
});

/// `part` borrows from `whole` (the extractors return slices of the line).
fn is_within(part: &[u8], whole: &[u8]) -> bool {
    let (p, w) = (part.as_ptr() as usize, whole.as_ptr() as usize);
    part.is_empty() || (p >= w && p + part.len() <= w + whole.len())
}
