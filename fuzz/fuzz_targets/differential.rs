//! Random corpus + random query → every CPU path (1 thread, 2, all
//! threads; Count and Lines; each multi-literal matcher) against the naive
//! oracle of crates/logsieve/tests/common (shared, not copied).
//!
//! Input: byte 0 = flags (-i -w -x -v), byte 1 = syntax, then
//! NUL-separated patterns, and after the last NUL the corpus.
#![no_main]
use libfuzzer_sys::fuzz_target;
use logsieve::cpu::{search_doc, CpuOptions};
use logsieve::{CpuMulti, Document, Syntax, Want};

#[allow(dead_code)]
#[path = "../../crates/logsieve/tests/common/mod.rs"]
mod common;
use common::{naive, Flags};

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let (fl, syn) = (data[0], data[1]);
    let mut parts: Vec<&[u8]> = data[2..].split(|&b| b == 0).collect();
    let corpus = parts.pop().unwrap_or(b"");
    let patterns: Vec<Vec<u8>> = parts.iter().map(|p| p.to_vec()).collect();
    if patterns.is_empty() || patterns.len() > 16 || patterns.iter().any(|p| p.len() > 32) {
        return;
    }
    let f = Flags {
        i: fl & 1 != 0,
        w: fl & 2 != 0,
        x: fl & 4 != 0,
        v: fl & 8 != 0,
    };
    let syntax = match syn % 4 {
        0 => Syntax::Regex,
        1 => Syntax::Fixed,
        2 => Syntax::Wildcard,
        _ => Syntax::Fuzzy((syn >> 2) % 4),
    };
    // The oracle's regex must build where the library's does (size limits).
    let Ok(_) = common::build(&patterns, syntax, f) else {
        return;
    };
    if matches!(syntax, Syntax::Fuzzy(k) if k > 0 && (f.w || f.x)) {
        return;
    }
    let expected = naive(corpus, &patterns, syntax, f);
    let doc = Document::from_bytes("fuzz", corpus.to_vec());
    for multi in [CpuMulti::Auto, CpuMulti::AhoCorasick, CpuMulti::PrefixHash] {
        let q = match logsieve::QueryBuilder::new()
            .syntax(syntax)
            .case_insensitive(f.i)
            .word(f.w)
            .whole_line(f.x)
            .invert(f.v)
            .cpu_multi(multi)
            .build(&patterns)
        {
            Ok(q) => q,
            Err(_) => return,
        };
        for threads in [1, 2, 0] {
            for want in [Want::Count, Want::Lines] {
                let got = search_doc(
                    &doc,
                    &q,
                    &CpuOptions {
                        threads,
                        want,
                        max_count: None,
                        line_ids: true,
                    },
                );
                assert_eq!(
                    got.count,
                    expected.len() as u64,
                    "{multi:?} t{threads} {want:?} count"
                );
                if want == Want::Lines {
                    assert_eq!(got.lines, expected, "{multi:?} t{threads} lines");
                }
            }
        }
    }
});
