//! Tier 2's plan (`query/glushkov.rs`): the host run of the position
//! automaton (`Automaton::run_line`, the loop the GPU kernel runs) never
//! rejects a line the CPU matcher (the regex crate) accepts, and agrees
//! with it wherever it claims to decide (`Match`/`NoMatch`, not
//! `Undecided`).
//!
//! Input: byte 0 = flags (bit 0 -i, bit 1 -w, bit 2 -x, bit 3 wildcard
//! syntax, bits 4-7 the parts of `run_parts` less one), then the pattern,
//! a NUL, and the line (up to its first `\n`).
#![no_main]
use libfuzzer_sys::fuzz_target;
use logsieve::query::glushkov::{Automaton, Verdict};
use logsieve::{QueryBuilder, Syntax};

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let Some(nul) = rest.iter().position(|&b| b == 0) else {
        return;
    };
    let (pat, line) = (&rest[..nul], &rest[nul + 1..]);
    let line = line.split(|&b| b == b'\n').next().unwrap_or(b"");
    if pat.len() > 96 || pat.contains(&b'\n') {
        return;
    }
    let syntax = if flags & 8 != 0 {
        Syntax::Wildcard
    } else {
        Syntax::Regex
    };
    let Ok(q) = QueryBuilder::new()
        .syntax(syntax)
        .case_insensitive(flags & 1 != 0)
        .word(flags & 2 != 0)
        .whole_line(flags & 4 != 0)
        .build(&[pat])
    else {
        return;
    };
    let Ok(a) = Automaton::for_query(&q) else {
        return;
    };
    let m = q.is_match_line(line);
    // The whole line, then in parts as tier 1's `verify_split` runs it
    // (`Automaton::run_parts`: each part the matches starting in its share).
    let parts = usize::from(flags >> 4) + 1;
    for (v, how) in [(a.run_line(line), "whole"), (a.run_parts(line, parts), "parts")] {
        match v {
            Verdict::Undecided => {}
            Verdict::Match => assert!(m, "{q:?} ({how}, {parts}): automaton matches {line:?}, the CPU matcher does not"),
            Verdict::NoMatch => assert!(!m, "{q:?} ({how}, {parts}): automaton rejects {line:?}, the CPU matcher accepts it"),
        }
    }
    // Without flags the CPU matcher is the regex crate itself.
    if flags & 15 == 0 {
        if let Ok(pat) = std::str::from_utf8(pat) {
            if let Ok(re) = regex::bytes::RegexBuilder::new(pat).size_limit(1 << 22).build() {
                assert_eq!(re.is_match(line), m, "{pat:?} on {line:?}: CPU matcher vs regex");
            }
        }
    }
});
