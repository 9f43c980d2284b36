//! Fuzzy matching's GPU plan (`query/bitap.rs`): the host run of the
//! bitap tables (`Bitap::run_line`, the loop the GPU kernel runs) decides
//! every line, so it must equal the CPU fuzzy matcher (`is_match_line`,
//! Myers' algorithm) on every line: never a line rejected that the CPU
//! accepts, never one accepted that it rejects. Both are checked against
//! the naive oracle of crates/logsieve/tests/common (the smallest edit
//! distance over every substring, by brute force) on lines up to 96
//! bytes and patterns up to 24 (it is cubic).
//!
//! Input: byte 0 = K (bits 0-1) and -i (bit 2); then the patterns
//! (separated by `\n`, at most 8), a NUL, and the line (up to its first
//! `\n`).
#![no_main]
use libfuzzer_sys::fuzz_target;
use logsieve::query::bitap::Bitap;
use logsieve::{QueryBuilder, Syntax};

#[allow(dead_code)]
#[path = "../../crates/logsieve/tests/common/mod.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let Some(nul) = rest.iter().position(|&b| b == 0) else {
        return;
    };
    let (pats, line) = (&rest[..nul], &rest[nul + 1..]);
    let line = line.split(|&b| b == b'\n').next().unwrap_or(b"");
    let pats: Vec<Vec<u8>> = pats.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    if pats.len() > 8 || pats.iter().any(|p| p.len() > 64) || line.len() > 512 {
        return;
    }
    let k = flags & 3;
    let fold = flags & 4 != 0;
    let Ok(q) = QueryBuilder::new()
        .syntax(Syntax::Fuzzy(k))
        .case_insensitive(fold)
        .build(&pats)
    else {
        return;
    };
    let Ok(b) = Bitap::for_query(&q) else {
        // More than MAX_BITS pattern bytes: the query stays on the CPU.
        let bits: usize = q.patterns().iter().map(Vec::len).sum();
        assert!(
            bits > logsieve::query::bitap::MAX_BITS,
            "{q:?}: no bitap plan"
        );
        return;
    };
    let cpu = q.is_match_line(line);
    let gpu = b.run_line(line);
    assert_eq!(
        gpu,
        cpu,
        "{q:?} on {:?}: bitap {gpu}, CPU matcher {cpu}",
        String::from_utf8_lossy(line)
    );
    // The brute-force oracle is cubic: only on short lines and patterns
    // (at 512 bytes it held the run to 40 executions a second).
    if line.len() <= 96 && q.patterns().iter().all(|p| p.len() <= 24) {
        let naive = q
            .patterns()
            .iter()
            .any(|p| common::naive_min_distance(p, line, fold) <= usize::from(k));
        assert_eq!(
            cpu,
            naive,
            "{q:?} on {:?}: CPU matcher {cpu}, naive {naive}",
            String::from_utf8_lossy(line)
        );
    }
});
