//! The CPU matchers: one per query shape, each chosen for speed.
//!
//! | query                          | matcher                                  |
//! |--------------------------------|------------------------------------------|
//! | one literal, case-sensitive    | `memchr::memmem` (SIMD two-way)          |
//! | many literals, or ASCII `-i`   | `aho-corasick`, leftmost-first (Teddy)   |
//! | 100+ literals of 4+ bytes      | hashed-prefix table (`multi.rs`)         |
//! | regex, wildcard, Unicode `-i`, `-w`, `-x` | `regex::bytes`                |
//! | fuzzy                          | pigeonhole prefilter + Myers bit-vector  |
//!
//! Every matcher finds *candidates* in a whole buffer (fast, no per-line
//! overhead) and confirms them per line only where a candidate could be
//! wrong: a regex match that runs across a `\n`, or a fuzzy prefilter hit.

use aho_corasick::{AhoCorasick, Input, MatchKind};
use memchr::memmem;
use regex::bytes::{Regex, RegexBuilder};

use super::doc_regex::DocRegex;
use super::fuzzy::Fuzzy;
use crate::error::Error;
use crate::query::literals::{Prefilter, RequiredLiterals};
use crate::query::spec::{Analysis, CaseMode, QueryBuilder, QueryKind, Syntax};

/// A candidate position: where the match starts in the buffer, and whether
/// its line must be re-checked.
pub(crate) struct Candidate {
    pub(crate) start: usize,
    /// True when the line containing `start` may not match after all.
    pub(crate) verify: bool,
}

// One matcher per query, never stored in bulk: the size of the memmem
// variant (its SIMD tables inline) costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Matcher {
    /// The empty pattern: every line matches.
    All,
    Memmem(memmem::Finder<'static>),
    Aho(AhoCorasick, Option<Vec<Vec<u8>>>),
    /// Many literals: the hashed-prefix table (`cpu/multi.rs`).
    Multi(super::multi::PrefixTable),
    /// A regex; `word` means it has the `-w` wrapper and the match proper is
    /// capture group 1.
    Regex {
        re: Regex,
        word: bool,
        /// With `-w`: the wrapper without its `^` branch,
        /// `\W(body)(?:$|\W)`, tried at the last character of the previous
        /// match, whose non-word character may be the next match's left
        /// boundary (grep: `,` on `,,` matches twice).
        cont: Option<Regex>,
    },
    Fuzzy(Fuzzy),
    /// The CPU-only kinds (`cpu/doc_regex.rs`): `-U` (`multiline`, run by
    /// `cpu/multiline.rs` over the whole buffer) and `-P` (PCRE2; line
    /// by line like `Regex` when not multiline).
    Doc {
        re: DocRegex,
        multiline: bool,
    },
    /// Candidates from the required literals (`query::literals`), each
    /// candidate's line verified by `inner`: the regex (or the folded
    /// literals) then only runs on lines that hold a required literal.
    Prefiltered {
        pre: Prefilter,
        inner: Box<Matcher>,
    },
}

impl std::fmt::Debug for Matcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Matcher::{}", self.name())
    }
}

/// Escapes literal bytes for the regex parser. Valid UTF-8 is escaped as
/// text (so Unicode case folding applies); other bytes become `\xNN` in a
/// non-Unicode group.
pub(crate) fn escape_bytes(p: &[u8]) -> String {
    match std::str::from_utf8(p) {
        Ok(s) => regex_syntax::escape(s),
        Err(_) => {
            let mut out = String::new();
            for chunk in p.utf8_chunks() {
                out.push_str(&regex_syntax::escape(chunk.valid()));
                for b in chunk.invalid() {
                    out.push_str(&format!("(?-u:\\x{b:02X})"));
                }
            }
            out
        }
    }
}

fn wildcard_to_regex(p: &[u8]) -> String {
    let mut out = String::new();
    let mut lit = Vec::new();
    let flush = |lit: &mut Vec<u8>, out: &mut String| {
        if !lit.is_empty() {
            out.push_str(&escape_bytes(lit));
            lit.clear();
        }
    };
    for &b in p {
        match b {
            b'*' => {
                flush(&mut lit, &mut out);
                out.push_str("(?-u:[^\\n])*");
            }
            b'?' => {
                flush(&mut lit, &mut out);
                out.push_str("(?-u:[^\\n])");
            }
            _ => lit.push(b),
        }
    }
    flush(&mut lit, &mut out);
    out
}

/// `inner` behind a prefilter of the required literals of `pattern` (parsed
/// as the regex crate parses it, with `ci` its case-insensitive flag), or
/// `inner` alone when the pattern has none worth searching for.
fn with_prefilter(pattern: &str, ci: bool, inner: Matcher) -> Matcher {
    let hir = regex_syntax::ParserBuilder::new()
        .utf8(false)
        .multi_line(true)
        .case_insensitive(ci)
        .build()
        .parse(pattern);
    let Ok(hir) = hir else { return inner };
    match RequiredLiterals::from_hir(&hir) {
        Some(lits) => Matcher::Prefiltered {
            pre: Prefilter::with_hir(lits, hir),
            inner: Box::new(inner),
        },
        None => inner,
    }
}

impl Matcher {
    pub(crate) fn new(b: &QueryBuilder, pats: &[Vec<u8>], a: &Analysis) -> Result<Matcher, Error> {
        // -x takes precedence over -w (as in rg and grep): a whole line
        // needs no word boundaries, and the -w wrapper's group 1 does not
        // exist in the -x pattern (REGRESSION: `-i -w -x ''` on a line of
        // invalid UTF-8 panicked, found by the differential fuzz target).
        let (word, line) = (b.word && !b.whole_line, b.whole_line);
        let doc = b.multiline || b.pcre2;
        if a.kind == QueryKind::Literal && !word && !line && !doc {
            let lits = a.literals.as_ref().expect("literal analysis has literals");
            if lits.iter().any(|l| l.is_empty()) {
                return Ok(Matcher::All);
            }
            match a.case {
                CaseMode::Sensitive if lits.len() == 1 => {
                    return Ok(Matcher::Memmem(memmem::Finder::new(&lits[0]).into_owned()));
                }
                CaseMode::Sensitive | CaseMode::Ascii => {
                    let set = super::multi::PatternSet::new(lits, a.case == CaseMode::Ascii);
                    if super::multi::use_prefix_table(&set, b.cpu_multi) {
                        if let Some(t) = super::multi::PrefixTable::new(set) {
                            return Ok(Matcher::Multi(t));
                        }
                    }
                    let ac = AhoCorasick::builder()
                        .match_kind(MatchKind::LeftmostFirst)
                        .ascii_case_insensitive(a.case == CaseMode::Ascii)
                        .build(lits)
                        .map_err(|e| {
                            Error::pattern(format!("cannot build literal matcher: {e}"))
                        })?;
                    let exact = (a.case == CaseMode::Sensitive).then(|| lits.to_vec());
                    let aho = Matcher::Aho(ac, exact);
                    if a.case == CaseMode::Ascii {
                        // aho-corasick folds case byte by byte in its
                        // automaton (~1.3 GB/s here); a window of the
                        // literal in all its case variants runs in Teddy.
                        let body = lits
                            .iter()
                            .map(|l| format!("(?i-u:{})", escape_bytes(l)))
                            .collect::<Vec<_>>()
                            .join("|");
                        return Ok(with_prefilter(&body, false, aho));
                    }
                    return Ok(aho);
                }
                CaseMode::Unicode => {}
            }
        }
        if a.kind == QueryKind::Fuzzy && doc {
            return Err(Error::query("--fuzzy cannot be combined with -U or -P"));
        }
        if a.kind == QueryKind::Fuzzy && !word && !line {
            if let Syntax::Fuzzy(k) = b.syntax {
                return Ok(Matcher::Fuzzy(Fuzzy::new(
                    pats,
                    k,
                    a.case != CaseMode::Sensitive,
                )));
            }
        }
        if a.kind == QueryKind::Fuzzy {
            return Err(Error::query("--fuzzy cannot be combined with -w or -x"));
        }
        // Everything else is a regex.
        let alts: Vec<String> = match a.kind {
            QueryKind::Regex => pats
                .iter()
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect(),
            QueryKind::Literal => a
                .literals
                .as_ref()
                .expect("literal analysis has literals")
                .iter()
                .map(|l| escape_bytes(l))
                .collect(),
            QueryKind::Wildcard => pats.iter().map(|p| wildcard_to_regex(p)).collect(),
            QueryKind::Fuzzy => unreachable!("handled above"),
        };
        let flags = match (a.kind, a.case) {
            (QueryKind::Regex, _) | (_, CaseMode::Sensitive) => "",
            (_, CaseMode::Ascii) => "i-u",
            (_, CaseMode::Unicode) => "i",
        };
        let body = alts
            .iter()
            .map(|p| format!("(?{flags}:{p})"))
            .collect::<Vec<_>>()
            .join("|");
        if doc {
            let re = if b.pcre2 {
                DocRegex::pcre2(&alts, word, line, b.case_insensitive)?
            } else {
                let ci = a.kind == QueryKind::Regex && a.case == CaseMode::Unicode;
                DocRegex::rust(&body, word, line, ci)?
            };
            return Ok(Matcher::Doc {
                re,
                multiline: b.multiline,
            });
        }
        let pattern = if line {
            format!("^(?:{body})$")
        } else if word {
            format!("(?:^|\\W)({body})(?:$|\\W)")
        } else {
            body.clone()
        };
        let build = |pattern: &str| {
            RegexBuilder::new(pattern)
                .multi_line(true)
                .case_insensitive(a.kind == QueryKind::Regex && a.case == CaseMode::Unicode)
                .size_limit(256 << 20)
                .dfa_size_limit(256 << 20)
                .build()
                .map_err(|e| Error::pattern(format!("regex error:\n{e}")))
        };
        let re = build(&pattern)?;
        let cont = if word {
            Some(build(&format!("\\W({body})(?:$|\\W)"))?)
        } else {
            None
        };
        let ci = a.kind == QueryKind::Regex && a.case == CaseMode::Unicode;
        Ok(with_prefilter(
            &pattern,
            ci,
            Matcher::Regex { re, word, cont },
        ))
    }

    pub(crate) fn name(&self) -> &'static str {
        match self {
            Matcher::All => "all-lines",
            Matcher::Memmem(_) => "memmem",
            Matcher::Aho(..) => "aho-corasick",
            Matcher::Multi(_) => "prefix-table",
            Matcher::Regex { .. } => "regex",
            Matcher::Fuzzy(_) => "fuzzy",
            Matcher::Doc { re, multiline } => match (re.is_pcre2(), multiline) {
                (false, _) => "multiline-regex",
                (true, false) => "pcre2",
                (true, true) => "multiline-pcre2",
            },
            Matcher::Prefiltered { inner, .. } => match **inner {
                Matcher::Aho(..) => "aho-corasick+prefilter",
                _ => "regex+prefilter",
            },
        }
    }

    /// This matcher's scan speed relative to the calibrated single-literal
    /// speed ([`crate::planner::Calibration::cpu_gbps`], 8 GB/s before any
    /// run), for the planner's CPU estimate. Per-line costs are the
    /// planner's (`planner::cpu_estimate`).
    pub(crate) fn speed(&self) -> f64 {
        // One thread on the H100 machine's CPU (Xeon, 16 cores, quiet;
        // cpu-shapes, 194 MB, 2026-11-24), GB/s over the 8 GB/s base:
        // memmem 6.1 (0.75), three literals 4.9 (0.6), 100 literals 4.1
        // (0.5), memmem-prefiltered regexes 6.2 (0.75), other prefilters
        // 4.8-6.2 (0.6). Memory-bound matchers (memmem) ran 4x faster on
        // the quiet 2-core build machine (24 GB/s), compute-bound ones
        // 1.3-1.8x: a fixed factor fits one machine's memory. A regex
        // without a literal (`\d{4}-\d\d`, 69% of lines matching) was
        // estimated at 1.5x its run with 0.25 on one 2026-11-26 build
        // machine (`9e28743`) and 2.0-2.6x on another (`19e3983`, 70-73 ms ran); with 0.35
        // (and the planner's 3e-5 ms a matching line) 1.74-1.76x there
        // and 1.18-1.30x on the H100 machine's Xeon. 0.45 made the CPU
        // look as fast as tier 2 for `[0-9a-f]{32}` (27 ms on 16 cores
        // there): `planner::tests::tier2_first_run_averages_in`.
        match self {
            Matcher::All => 4.0,
            Matcher::Memmem(_) => 0.75,
            Matcher::Aho(ac, _) if ac.patterns_len() <= 64 => 0.6,
            Matcher::Aho(..) => 0.5,
            Matcher::Multi(_) => 0.1,
            Matcher::Regex { .. } => 0.35,
            Matcher::Fuzzy(_) => 0.05,
            Matcher::Doc { .. } => 0.25,
            Matcher::Prefiltered { pre, .. } => match pre.name() {
                "memmem" => 0.75,
                _ => 0.6,
            },
        }
    }

    /// The regex the CPU runs (behind its prefilter, if any), when this is
    /// a regex matcher: what the GPU's tier 2 compiles (`query::glushkov`).
    pub(crate) fn regex_pattern(&self) -> Option<&str> {
        match self {
            Matcher::Regex { re, .. } => Some(re.as_str()),
            Matcher::Prefiltered { inner, .. } => inner.regex_pattern(),
            _ => None,
        }
    }

    /// The one literal this matcher finds candidates by (`memmem`: the
    /// query's own, or its one required literal) and whether a candidate's
    /// line is verified.
    pub(crate) fn single_literal(&self) -> Option<(&[u8], bool)> {
        match self {
            Matcher::Memmem(f) => Some((f.needle(), false)),
            Matcher::Prefiltered { pre, .. } => pre.single().map(|n| (n, true)),
            _ => None,
        }
    }

    /// The literals, two or more, this matcher finds candidates by, byte
    /// for byte (the query's own, or its required set when not folded),
    /// and whether a candidate's line is verified.
    pub(crate) fn literal_set(&self) -> Option<(&[Vec<u8>], bool)> {
        let (lits, verify) = match self {
            Matcher::Aho(_, Some(lits)) => (&lits[..], false),
            Matcher::Multi(t) if !t.set.fold => (&t.set.uniq[..], false),
            Matcher::Prefiltered { pre, .. } if !pre.literals().folded() => {
                (pre.literals().literals(), true)
            }
            _ => return None,
        };
        (lits.len() >= 2).then_some((lits, verify))
    }

    /// The whole-buffer regex of a `-U`/`-P` query.
    pub(crate) fn doc_regex(&self) -> Option<&DocRegex> {
        match self {
            Matcher::Doc { re, .. } => Some(re),
            _ => None,
        }
    }

    /// The required-literal prefilter in front of this matcher, if any.
    pub(crate) fn prefilter(&self) -> Option<&Prefilter> {
        match self {
            Matcher::Prefiltered { pre, .. } => Some(pre),
            _ => None,
        }
    }

    /// True when a candidate's line is re-checked by a second matcher (its
    /// per-line cost is higher).
    pub(crate) fn verifies(&self) -> bool {
        matches!(
            self,
            Matcher::Prefiltered { .. }
                | Matcher::Fuzzy(_)
                | Matcher::Regex { .. }
                | Matcher::Doc { .. }
        )
    }

    /// The first candidate in `hay[at..end]` (`at` is a line start; `end` is
    /// a line start or `hay.len()`). `hay[..at]` is context for look-behind.
    #[inline]
    pub(crate) fn find_candidate(&self, hay: &[u8], at: usize, end: usize) -> Option<Candidate> {
        match self {
            Matcher::All => (at < end).then_some(Candidate {
                start: at,
                verify: false,
            }),
            Matcher::Memmem(f) => f.find(&hay[at..end]).map(|i| Candidate {
                start: at + i,
                verify: false,
            }),
            Matcher::Aho(ac, _) => ac.find(Input::new(hay).span(at..end)).map(|m| Candidate {
                start: m.start(),
                verify: false,
            }),
            Matcher::Regex {
                re, word: false, ..
            } => re.find_at(&hay[..end], at).map(|m| Candidate {
                start: m.start(),
                verify: memchr::memchr(b'\n', &hay[m.start()..m.end()]).is_some(),
            }),
            Matcher::Multi(t) => t.find(hay, at, end).map(|(p, _)| Candidate {
                start: p,
                verify: false,
            }),
            Matcher::Regex { re, word: true, .. } => {
                let caps = re.captures_at(&hay[..end], at)?;
                let g = caps.get(1).expect("word wrapper has group 1");
                Some(Candidate {
                    start: g.start(),
                    verify: memchr::memchr(b'\n', &hay[g.start()..g.end()]).is_some(),
                })
            }
            Matcher::Fuzzy(f) => f.find_candidate(hay, at, end).map(|s| Candidate {
                start: s,
                verify: true,
            }),
            // Line by line (`-P`, and `-U` where a caller asks per line):
            // a match across a `\n` is re-checked on its line.
            Matcher::Doc { re, .. } => re.find_at(&hay[..end], at).map(|m| Candidate {
                start: m.start,
                verify: memchr::memchr(b'\n', &hay[m]).is_some(),
            }),
            // A prefilter hit is only a candidate: its line is verified.
            Matcher::Prefiltered { pre, .. } => pre.find(hay, at, end).map(|s| Candidate {
                start: s,
                verify: true,
            }),
        }
    }

    /// Does this single line (no terminator) match?
    pub(crate) fn is_match_line(&self, line: &[u8]) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Memmem(f) => f.find(line).is_some(),
            Matcher::Aho(ac, _) => ac.is_match(line),
            Matcher::Multi(t) => t.is_match(line),
            Matcher::Regex { re, .. } => re.is_match(line),
            Matcher::Fuzzy(f) => f.is_match_line(line),
            Matcher::Doc { re, .. } => re.find_at(line, 0).is_some(),
            Matcher::Prefiltered { inner, .. } => inner.is_match_line(line),
        }
    }

    /// Non-overlapping matches in one line, left to right, appended to
    /// `out` (empty on entry).
    pub(crate) fn find_iter_line_into(&self, line: &[u8], out: &mut Vec<std::ops::Range<usize>>) {
        match self {
            Matcher::All => out.push(0..0),
            Matcher::Memmem(f) => {
                let n = f.needle().len();
                out.extend(f.find_iter(line).map(|s| s..s + n));
            }
            Matcher::Aho(ac, _) => out.extend(ac.find_iter(line).map(|m| m.start()..m.end())),
            Matcher::Multi(t) => out.extend(t.find_iter_line(line)),
            Matcher::Regex {
                re, word: false, ..
            } => {
                out.extend(re.find_iter(line).map(|m| m.start()..m.end()));
            }
            Matcher::Regex {
                re,
                word: true,
                cont,
            } => {
                let mut at = 0;
                while at <= line.len() {
                    // A match right after the previous one, its left
                    // boundary being the previous match's last character.
                    let adjacent = match (cont, out.last()) {
                        (Some(cont), Some(prev)) if prev.end == at && at > 0 => {
                            let mut p0 = at - 1;
                            while p0 > 0 && at - p0 < 4 && (line[p0] & 0xC0) == 0x80 {
                                p0 -= 1;
                            }
                            // Only a word that starts where the previous
                            // one ended counts: a group ending at or
                            // before `at` (the boundary character taken
                            // back over invalid UTF-8) would never move
                            // `at` on (REGRESSION: `--wildcard -w '?'`
                            // looped for ever on a line of invalid UTF-8,
                            // found by the query_build fuzz target).
                            cont.captures_at(line, p0).filter(|c| {
                                c.get(0).is_some_and(|m| m.start() == p0)
                                    && c.get(1).is_some_and(|g| g.start() >= at && g.end() > at)
                            })
                        }
                        _ => None,
                    };
                    let Some(caps) = adjacent.or_else(|| re.captures_at(line, at)) else {
                        break;
                    };
                    let g = caps.get(1).expect("word wrapper has group 1");
                    out.push(g.start()..g.end());
                    // Resume after the word itself, not after the trailing
                    // boundary character, so adjacent words both count.
                    at = if g.end() > g.start() {
                        g.end()
                    } else {
                        caps.get(0).unwrap().end().max(at + 1)
                    };
                }
            }
            Matcher::Fuzzy(f) => out.extend(f.find_iter_line(line)),
            Matcher::Doc { re, .. } => out.extend(re.find_iter(line)),
            Matcher::Prefiltered { inner, .. } => inner.find_iter_line_into(line, out),
        }
    }
}
