//! Tier 1's required-literal extraction (`query/literals.rs`): no
//! candidate set — the static pick, every exact alternative, the ASCII-folded
//! ones and the rare-byte ones — may reject a line the regex crate accepts.
//!
//! Input: byte 0 = flags (bit 0: case-insensitive), then the pattern, a
//! NUL, and the line.
#![no_main]
use libfuzzer_sys::fuzz_target;
use logsieve::query::literals::{alternatives, rare_byte_sets, Prefilter, RequiredLiterals};

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let Some(nul) = rest.iter().position(|&b| b == 0) else {
        return;
    };
    let (pat, line) = (&rest[..nul], &rest[nul + 1..]);
    let Ok(pat) = std::str::from_utf8(pat) else {
        return;
    };
    if pat.len() > 128 {
        return;
    }
    let ci = flags & 1 != 0;
    // The same reading of the pattern as the regex the line is checked with
    // (bytes regex: Unicode on, invalid UTF-8 allowed in the haystack).
    let Ok(hir) = regex_syntax::ParserBuilder::new()
        .case_insensitive(ci)
        .utf8(false)
        .build()
        .parse(pat)
    else {
        return;
    };
    let Ok(re) = regex::bytes::RegexBuilder::new(pat)
        .case_insensitive(ci)
        .size_limit(1 << 20)
        .build()
    else {
        return;
    };
    if !re.is_match(line) {
        return;
    }
    let sets = RequiredLiterals::from_hir(&hir)
        .into_iter()
        .chain(alternatives(&hir))
        .chain(rare_byte_sets(&hir));
    for lits in sets {
        let pf = Prefilter::new(lits.clone());
        assert!(
            pf.find(line, 0, line.len()).is_some(),
            "{pat:?} matches {line:?} but none of {:?} (folded: {}) occurs",
            lits.literals(),
            lits.folded()
        );
    }
});
