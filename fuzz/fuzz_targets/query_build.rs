//! Patterns × flags → `Query` (`-i`, `-w`, `-x`, `-v`, -F, wildcards,
//! fuzzy): building never panics, and a built query's matches are sane.
//!
//! Input: byte 0 = flags, byte 1 = syntax, then NUL-separated parts: the
//! patterns, and the last part is the line to match.
#![no_main]
use libfuzzer_sys::fuzz_target;
use logsieve::{QueryBuilder, Syntax};

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let (flags, syn) = (data[0], data[1]);
    let mut parts: Vec<&[u8]> = data[2..].split(|&b| b == 0).collect();
    let line = parts.pop().unwrap_or(b"");
    // A newline inside a line is the corpus loader's job, not the matcher's.
    let line: &[u8] = line.split(|&b| b == b'\n').next().unwrap_or(b"");
    if parts.is_empty() || parts.len() > 8 || parts.iter().any(|p| p.len() > 64) {
        return;
    }
    let syntax = match syn % 4 {
        0 => Syntax::Regex,
        1 => Syntax::Fixed,
        2 => Syntax::Wildcard,
        _ => Syntax::Fuzzy((syn >> 2) % 5),
    };
    let mut b = QueryBuilder::new();
    b.syntax(syntax)
        .case_insensitive(flags & 1 != 0)
        .word(flags & 2 != 0)
        .whole_line(flags & 4 != 0)
        .invert(flags & 8 != 0)
        .crlf(flags & 16 != 0);
    let Ok(q) = b.build(&parts) else { return };
    let hit = q.is_match_line(line);
    let ranges = q.find_iter_line(line);
    for r in &ranges {
        assert!(
            r.start <= r.end && r.end <= line.len(),
            "range {r:?} outside the line"
        );
    }
    if !q.invert() && !ranges.is_empty() {
        assert!(
            hit,
            "find_iter_line found {ranges:?} but is_match_line said no"
        );
    }
    // -F, case-sensitive, no -w/-x: the answer is plain substring search.
    if syntax == Syntax::Fixed && flags & 0b1111 == 0 && flags & 16 == 0 {
        // grep's rule: a pattern holding `\n` is several patterns (the
        // target's own check missed it: seed-crash-newline-pattern).
        let naive = parts
            .iter()
            .flat_map(|p| p.split(|&b| b == b'\n'))
            .any(|p| p.is_empty() || line.windows(p.len()).any(|w| w == p));
        assert_eq!(hit, naive, "-F {parts:?} on {line:?}");
    }
});
