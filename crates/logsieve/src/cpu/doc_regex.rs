//! The regex engines of the CPU-only query kinds: `-U` (a match may span
//! lines: the Rust regex over the whole buffer, or PCRE2) and `-P` (PCRE2
//! through the `pcre2` crate, behind the `pcre2` cargo feature, as in
//! ripgrep). No GPU kernel runs them (`support.rs`).

use std::ops::Range;

use regex::bytes::{Regex, RegexBuilder};

use crate::error::Error;

/// A regex run over a whole buffer.
pub(crate) enum DocRegex {
    /// The `regex` crate; with `word`, the match proper is group 1 of
    /// the `-w` wrapper `(?:^|\W)(pat)(?:$|\W)`.
    /// `newline`: the pattern can match a `\n` (see
    /// [`DocRegex::can_match_newline`]).
    Rust {
        re: Regex,
        word: bool,
        newline: bool,
    },
    /// PCRE2 (`-P`).
    #[cfg(feature = "pcre2")]
    Pcre2(pcre2::bytes::Regex),
}

impl DocRegex {
    /// The Rust regex of `body` (the patterns' alternation, flags inside)
    /// under `-w`/`-x`, `^`/`$` at line boundaries.
    pub(crate) fn rust(body: &str, word: bool, line: bool, ci: bool) -> Result<DocRegex, Error> {
        let pattern = if line {
            format!("^(?:{body})$")
        } else if word {
            format!("(?:^|\\W)({body})(?:$|\\W)")
        } else {
            body.to_string()
        };
        let re = RegexBuilder::new(&pattern)
            .multi_line(true)
            .case_insensitive(ci)
            .size_limit(256 << 20)
            .dfa_size_limit(256 << 20)
            .build()
            .map_err(|e| Error::pattern(format!("regex error:\n{e}")))?;
        // The pattern just compiled, so it parses; a parser that disagrees
        // is taken to match `\n` (the multiline rule, the safe side).
        let newline = regex_syntax::ParserBuilder::new()
            .multi_line(true)
            .case_insensitive(ci)
            .utf8(false)
            .build()
            .parse(&pattern)
            .map_or(true, |hir| hir_matches_newline(&hir));
        Ok(DocRegex::Rust { re, word, newline })
    }

    /// The PCRE2 regex of the patterns, with ripgrep's `-w` and `-x`
    /// wrappers (look-around, so the match proper is the whole match).
    #[cfg(feature = "pcre2")]
    pub(crate) fn pcre2(
        pats: &[String],
        word: bool,
        line: bool,
        ci: bool,
    ) -> Result<DocRegex, Error> {
        let body = pats
            .iter()
            .map(|p| format!("(?:{p})"))
            .collect::<Vec<_>>()
            .join("|");
        let pattern = if line {
            format!("(?m:^)(?:{body})(?m:$)")
        } else if word {
            format!("(?:(?m:^)|(?<=\\W))(?:{body})(?:(?m:$)|(?=\\W))")
        } else {
            body
        };
        let re = pcre2::bytes::RegexBuilder::new()
            .utf(true)
            .ucp(true)
            .caseless(ci)
            .multi_line(true)
            .jit_if_available(true)
            .build(&pattern)
            .map_err(|e| Error::pattern(format!("PCRE2 error: {e}")))?;
        Ok(DocRegex::Pcre2(re))
    }

    /// Without the `pcre2` feature: the error that says how to get it.
    #[cfg(not(feature = "pcre2"))]
    pub(crate) fn pcre2(_: &[String], _: bool, _: bool, _: bool) -> Result<DocRegex, Error> {
        Err(Error::query(
            "-P/--pcre2: this logsieve was built without PCRE2 (rebuild with \
             `cargo install --path crates/logsieve-cli --features pcre2`); \
             without -P patterns use Rust's regex syntax (no look-around or backreferences)",
        ))
    }

    /// False when no match can hold a `\n`: ripgrep then searches a `-U`
    /// query line by line, so matches on adjacent lines stay separate
    /// blocks; when a match can, its multiline searcher joins a match
    /// whose lines start right after the last block's lines into that
    /// block. rg asks PCRE2 nothing: always true there.
    pub(crate) fn can_match_newline(&self) -> bool {
        match self {
            DocRegex::Rust { newline, .. } => *newline,
            #[cfg(feature = "pcre2")]
            DocRegex::Pcre2(_) => true,
        }
    }

    /// True for PCRE2.
    pub(crate) fn is_pcre2(&self) -> bool {
        !matches!(self, DocRegex::Rust { .. })
    }

    /// The leftmost match in `hay[..end]` starting at or after `at`
    /// (`hay[..at]` is context for look-behind). A PCRE2 matching error
    /// (a resource limit) is reported as no match.
    pub(crate) fn find_at(&self, hay: &[u8], at: usize) -> Option<Range<usize>> {
        match self {
            DocRegex::Rust {
                re, word: false, ..
            } => re.find_at(hay, at).map(|m| m.range()),
            DocRegex::Rust { re, word: true, .. } => re
                .captures_at(hay, at)
                .and_then(|c| c.get(1))
                .map(|m| m.range()),
            #[cfg(feature = "pcre2")]
            DocRegex::Pcre2(re) => re
                .find_at(hay, at)
                .ok()
                .flatten()
                .map(|m| m.start()..m.end()),
        }
    }

    /// Every non-overlapping match in `hay`, left to right.
    pub(crate) fn find_iter(&self, hay: &[u8]) -> Vec<Range<usize>> {
        match self {
            DocRegex::Rust {
                re, word: false, ..
            } => re.find_iter(hay).map(|m| m.range()).collect(),
            DocRegex::Rust { re, word: true, .. } => {
                // Resume after the word itself, so adjacent words both count.
                let mut out = Vec::new();
                let mut at = 0;
                while at <= hay.len() {
                    let Some(c) = re.captures_at(hay, at) else {
                        break;
                    };
                    let (g, whole) = (
                        c.get(1).expect("word wrapper has group 1"),
                        c.get(0).unwrap(),
                    );
                    out.push(g.range());
                    at = if g.end() > g.start() {
                        g.end()
                    } else {
                        whole.end().max(at + 1)
                    };
                }
                out
            }
            #[cfg(feature = "pcre2")]
            DocRegex::Pcre2(re) => re
                .find_iter(hay)
                .map_while(Result::ok)
                .map(|m| m.start()..m.end())
                .collect(),
        }
    }
}

/// True when some byte that `hir` can match is `\n` (a literal or a class
/// holding it, or a line anchor, anywhere in the expression): rg 13's
/// test (grep-regex's non-matching bytes) for a pattern that may cross
/// lines.
fn hir_matches_newline(hir: &regex_syntax::hir::Hir) -> bool {
    use regex_syntax::hir::{Class, HirKind, Look};
    match hir.kind() {
        // rg 13 counts a line anchor (`(?m:^)`, `(?m:$)`) as matching
        // `\n` (`-U -x a` joins adjacent lines; `\b` does not).
        HirKind::Look(look) => matches!(
            look,
            Look::StartLF | Look::EndLF | Look::StartCRLF | Look::EndCRLF
        ),
        HirKind::Empty => false,
        HirKind::Literal(lit) => lit.0.contains(&b'\n'),
        HirKind::Class(Class::Unicode(c)) => c
            .ranges()
            .iter()
            .any(|r| r.start() <= '\n' && '\n' <= r.end()),
        HirKind::Class(Class::Bytes(c)) => c
            .ranges()
            .iter()
            .any(|r| r.start() <= b'\n' && b'\n' <= r.end()),
        HirKind::Repetition(rep) => rep.max != Some(0) && hir_matches_newline(&rep.sub),
        HirKind::Capture(cap) => hir_matches_newline(&cap.sub),
        HirKind::Concat(subs) | HirKind::Alternation(subs) => subs.iter().any(hir_matches_newline),
    }
}
