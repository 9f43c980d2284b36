//! Shared by every integration test, CPU and GPU alike: the naive oracle, the
//! named table of cases, and corpus builders. Nothing here knows about a
//! particular backend.
//!
//! The oracle is deliberately slow and simple (in the spirit of memchr's
//! `tests/substring/naive.rs`): it splits the corpus into lines itself and
//! decides each line by brute force, following the matching rules documented
//! at the top of `src/query/mod.rs`. Regex queries are the one exception: the
//! reference semantics *are* the `regex` crate applied line by line.

// Each test binary uses a different subset of these functions.
#![allow(dead_code)]

use logsieve::{Error, Query, QueryBuilder, Syntax};

// Native only: its shared context is a `static` (wgpu's browser device is
// neither `Send` nor `Sync`); the browser suite includes this module too.
#[cfg(not(target_arch = "wasm32"))]
pub mod gpu;
use regex::bytes::{Regex, RegexBuilder};
use regex_syntax::hir::{ClassUnicode, ClassUnicodeRange};

/// `-i`, `-w`, `-x`, `-v`, written as a string of those letters ("iw").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    /// `-i`
    pub i: bool,
    /// `-w`
    pub w: bool,
    /// `-x`
    pub x: bool,
    /// `-v`
    pub v: bool,
}

impl Flags {
    /// Parses "iwxv"-style flag letters.
    pub fn parse(s: &str) -> Flags {
        let mut f = Flags::default();
        for c in s.chars() {
            match c {
                'i' => f.i = true,
                'w' => f.w = true,
                'x' => f.x = true,
                'v' => f.v = true,
                _ => panic!("unknown flag letter {c:?}"),
            }
        }
        f
    }
}

/// Builds the query the way a caller of the library would.
pub fn build(patterns: &[Vec<u8>], syntax: Syntax, f: Flags) -> Result<Query, Error> {
    QueryBuilder::new()
        .syntax(syntax)
        .case_insensitive(f.i)
        .word(f.w)
        .whole_line(f.x)
        .invert(f.v)
        .build(patterns)
}

/// Owned patterns from string-ish slices.
pub fn pats<P: AsRef<[u8]>>(ps: &[P]) -> Vec<Vec<u8>> {
    ps.iter().map(|p| p.as_ref().to_vec()).collect()
}

// ---------------------------------------------------------------------------
// The naive oracle
// ---------------------------------------------------------------------------

/// The lines of `corpus` by the documented rules: split on `\n`, a `\r`
/// stays in its line, a last line without `\n` counts, no input = no lines.
pub fn naive_lines(corpus: &[u8]) -> Vec<&[u8]> {
    if corpus.is_empty() {
        return Vec::new();
    }
    let mut lines: Vec<&[u8]> = corpus.split(|&b| b == b'\n').collect();
    if corpus.ends_with(b"\n") {
        // `split` yields an empty piece after the final terminator.
        lines.pop();
    }
    lines
}

/// The selected line ids (after `-v`) for `patterns` over `corpus`.
///
/// Panics on queries whose meaning is undefined (the builder rejects them):
/// fuzzy K > 3, or fuzzy K >= 1 with `-w`/`-x`.
pub fn naive(corpus: &[u8], patterns: &[Vec<u8>], syntax: Syntax, f: Flags) -> Vec<u64> {
    let m = NaiveMatcher::new(patterns, syntax, f);
    naive_lines(corpus)
        .iter()
        .enumerate()
        .filter(|(_, line)| m.is_match(line) != f.v)
        .map(|(i, _)| i as u64)
        .collect()
}

/// How literal characters compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fold {
    None,
    Ascii,
    Unicode,
}

/// One element of a literal or wildcard pattern.
#[derive(Clone, Debug)]
enum Item {
    /// `*` in a wildcard: any run of bytes (the line holds no `\n`).
    Star,
    /// `?` in a wildcard: exactly one byte.
    AnyByte,
    /// One raw byte (any byte when not folding by Unicode, else invalid
    /// UTF-8 in the pattern); `true` folds ASCII letters.
    Byte(u8, bool),
    /// One character, compared by Unicode simple case folding: the set of
    /// characters it matches.
    Char(ClassUnicode),
}

/// A line predicate for one query: the oracle's per-line decision, before
/// `-v`.
pub struct NaiveMatcher {
    f: Flags,
    kind: NaiveKind,
}

enum NaiveKind {
    /// Literal or wildcard patterns, as item lists.
    Items(Vec<Vec<Item>>),
    /// Regex patterns: unanchored (for plain search) and anchored at both
    /// ends (to test one exact span for `-w`/`-x`).
    Regex(Vec<(Regex, Regex)>),
    /// Fuzzy patterns (ASCII-folded when `-i`) and K.
    Fuzzy(Vec<Vec<u8>>, usize),
}

/// Splits patterns on `\n` (grep's rule; the empty pattern stays one).
fn split_patterns(patterns: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for p in patterns {
        out.extend(p.split(|&b| b == b'\n').map(|s| s.to_vec()));
    }
    out
}

/// Literal text as items under `fold`.
fn literal_items(p: &[u8], fold: Fold, out: &mut Vec<Item>) {
    if fold != Fold::Unicode {
        out.extend(p.iter().map(|&b| Item::Byte(b, fold == Fold::Ascii)));
        return;
    }
    for chunk in p.utf8_chunks() {
        for c in chunk.valid().chars() {
            let mut class = ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
            class.case_fold_simple();
            out.push(Item::Char(class));
        }
        out.extend(chunk.invalid().iter().map(|&b| Item::Byte(b, false)));
    }
}

impl NaiveMatcher {
    /// The oracle for one query.
    pub fn new(patterns: &[Vec<u8>], syntax: Syntax, f: Flags) -> NaiveMatcher {
        let pats = split_patterns(patterns);
        // `-i` folds ASCII letters only when every pattern is ASCII; one
        // non-ASCII pattern makes the whole query fold by Unicode. (The case
        // mode is a property of the query, see `CaseMode`.)
        let all_ascii = pats.iter().all(|p| p.is_ascii());
        let fold = match (f.i, all_ascii) {
            (false, _) => Fold::None,
            (true, true) => Fold::Ascii,
            (true, false) => Fold::Unicode,
        };
        let kind = match syntax {
            Syntax::Fixed => NaiveKind::Items(
                pats.iter()
                    .map(|p| {
                        let mut v = Vec::new();
                        literal_items(p, fold, &mut v);
                        v
                    })
                    .collect(),
            ),
            Syntax::Wildcard => NaiveKind::Items(
                pats.iter()
                    .map(|p| {
                        let mut v = Vec::new();
                        for piece in split_keep(p) {
                            match piece {
                                b"*" => v.push(Item::Star),
                                b"?" => v.push(Item::AnyByte),
                                lit => literal_items(lit, fold, &mut v),
                            }
                        }
                        v
                    })
                    .collect(),
            ),
            Syntax::Fuzzy(k) => {
                assert!(k <= 3, "oracle: fuzzy K must be <= 3");
                // Fuzzy counts bytes; `-i` folds ASCII letters only, for
                // every K (K = 0 is exact matching with the same folding).
                let fp = pats
                    .iter()
                    .map(|p| {
                        if f.i {
                            p.to_ascii_lowercase()
                        } else {
                            p.clone()
                        }
                    })
                    .collect();
                if k == 0 && (f.w || f.x) {
                    // K = 0 is a literal search; -w/-x apply to it.
                    let fold = if f.i { Fold::Ascii } else { Fold::None };
                    NaiveKind::Items(
                        pats.iter()
                            .map(|p| {
                                let mut v = Vec::new();
                                literal_items(p, fold, &mut v);
                                v
                            })
                            .collect(),
                    )
                } else {
                    assert!(!(f.w || f.x), "oracle: fuzzy K >= 1 with -w/-x");
                    NaiveKind::Fuzzy(fp, k as usize)
                }
            }
            Syntax::Regex => NaiveKind::Regex(
                pats.iter()
                    .map(|p| {
                        let s = std::str::from_utf8(p).expect("oracle: regex must be UTF-8");
                        let b = |src: &str| {
                            RegexBuilder::new(src)
                                .case_insensitive(f.i)
                                .build()
                                .expect("oracle: regex must compile")
                        };
                        (b(s), b(&format!("^(?:{s})$")))
                    })
                    .collect(),
            ),
        };
        NaiveMatcher { f, kind }
    }

    /// Does `line` (no terminator) match, before `-v`?
    pub fn is_match(&self, line: &[u8]) -> bool {
        let f = self.f;
        // Is the span s..e acceptable under -w / -x?
        let span_ok = |s: usize, e: usize| {
            if f.x {
                s == 0 && e == line.len()
            } else if f.w {
                word_boundary_before(line, s) && word_boundary_after(line, e)
            } else {
                true
            }
        };
        match &self.kind {
            NaiveKind::Items(pats) => pats.iter().any(|items| {
                (0..=line.len()).any(|s| items_match(items, line, s, &mut |e| span_ok(s, e)))
            }),
            NaiveKind::Regex(res) => res.iter().any(|(plain, anchored)| {
                if !f.w && !f.x {
                    return plain.is_match(line);
                }
                // Every span that satisfies -w/-x, tested for an exact match.
                (0..=line.len()).any(|s| {
                    (s..=line.len()).any(|e| span_ok(s, e) && anchored.is_match(&line[s..e]))
                })
            }),
            NaiveKind::Fuzzy(pats, k) => {
                pats.iter().any(|p| naive_min_distance(p, line, f.i) <= *k)
            }
        }
    }
}

/// Splits a wildcard pattern into `*`, `?` and literal runs.
fn split_keep(p: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &b) in p.iter().enumerate() {
        if b == b'*' || b == b'?' {
            if start < i {
                out.push(&p[start..i]);
            }
            out.push(&p[i..i + 1]);
            start = i + 1;
        }
    }
    if start < p.len() {
        out.push(&p[start..]);
    }
    out
}

/// Calls `accept(end)` for each way `items` match `line` starting at `pos`,
/// stopping at the first `true`.
fn items_match(
    items: &[Item],
    line: &[u8],
    pos: usize,
    accept: &mut dyn FnMut(usize) -> bool,
) -> bool {
    let Some((first, rest)) = items.split_first() else {
        return accept(pos);
    };
    match first {
        Item::Star => (pos..=line.len()).any(|q| items_match(rest, line, q, accept)),
        Item::AnyByte => pos < line.len() && items_match(rest, line, pos + 1, accept),
        Item::Byte(b, fold) => {
            let ok = match line.get(pos) {
                Some(c) if *fold => c.eq_ignore_ascii_case(b),
                Some(c) => c == b,
                None => false,
            };
            ok && items_match(rest, line, pos + 1, accept)
        }
        Item::Char(class) => match decode_first(&line[pos..]) {
            Some((c, n)) => {
                class
                    .ranges()
                    .iter()
                    .any(|r| r.start() <= c && c <= r.end())
                    && items_match(rest, line, pos + n, accept)
            }
            None => false,
        },
    }
}

/// The first character of `s` and its length, if `s` starts with valid UTF-8.
pub fn decode_first(s: &[u8]) -> Option<(char, usize)> {
    (1..=s.len().min(4)).find_map(|n| {
        std::str::from_utf8(&s[..n])
            .ok()
            .map(|t| (t.chars().next().unwrap(), n))
    })
}

/// The last character of `s` and its length, if `s` ends with valid UTF-8.
pub fn decode_last(s: &[u8]) -> Option<(char, usize)> {
    (1..=s.len().min(4)).find_map(|n| {
        std::str::from_utf8(&s[s.len() - n..])
            .ok()
            .map(|t| (t.chars().next_back().unwrap(), n))
    })
}

/// `-w` left edge at `s`: the line start, or a valid non-word character.
pub fn word_boundary_before(line: &[u8], s: usize) -> bool {
    s == 0 || decode_last(&line[..s]).is_some_and(|(c, _)| !regex_syntax::is_word_character(c))
}

/// `-w` right edge at `e`: the line end, or a valid non-word character.
pub fn word_boundary_after(line: &[u8], e: usize) -> bool {
    e == line.len()
        || decode_first(&line[e..]).is_some_and(|(c, _)| !regex_syntax::is_word_character(c))
}

/// Levenshtein distance of `a` and `b` (full table).
fn levenshtein(a: &[u8], b: &[u8]) -> usize {
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    d[0] = (0..=b.len()).collect();
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j - 1] + cost)
                .min(d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1);
        }
    }
    d[a.len()][b.len()]
}

/// The smallest edit distance between `pat` and any substring of `line`
/// (bytes; ASCII letters folded when `fold`), by brute force over
/// substrings. Substrings longer than `|pat| + 4` are skipped: their
/// distance is at least 5, so the answer is exact whenever it is <= 4 (and
/// K <= 3).
pub fn naive_min_distance(pat: &[u8], line: &[u8], fold: bool) -> usize {
    let (pat, line) = if fold {
        (pat.to_ascii_lowercase(), line.to_ascii_lowercase())
    } else {
        (pat.to_vec(), line.to_vec())
    };
    let max_len = pat.len() + 4;
    let mut best = pat.len();
    for s in 0..=line.len() {
        for e in s..=line.len().min(s + max_len) {
            best = best.min(levenshtein(&pat, &line[s..e]));
        }
    }
    best
}

/// Naive non-overlapping leftmost-first occurrences of literals in `line`:
/// at each position the first pattern (in order) that matches wins, and the
/// scan resumes after it. `-w` spans must have word boundaries.
pub fn naive_find_iter(
    literals: &[Vec<u8>],
    line: &[u8],
    ascii_fold: bool,
    word: bool,
) -> Vec<std::ops::Range<usize>> {
    let eq = |a: &[u8], b: &[u8]| {
        if ascii_fold {
            a.eq_ignore_ascii_case(b)
        } else {
            a == b
        }
    };
    let mut out = Vec::new();
    let mut at = 0;
    while at <= line.len() {
        let hit = literals.iter().find(|l| {
            at + l.len() <= line.len()
                && eq(&line[at..at + l.len()], l)
                && (!word
                    || (word_boundary_before(line, at) && word_boundary_after(line, at + l.len())))
        });
        match hit {
            Some(l) => {
                out.push(at..at + l.len());
                at += l.len().max(1);
            }
            None => at += 1,
        }
    }
    out
}

// ---------------------------------------------------------------------------
// The table of cases
// ---------------------------------------------------------------------------

/// One named case. `expected` is written by hand (never copied from an
/// engine's output); the oracle must agree with it too.
pub struct Case {
    /// Unique name, `group/what`.
    pub name: &'static str,
    /// The whole document.
    pub corpus: &'static [u8],
    /// The patterns (`-e` repeated).
    pub patterns: &'static [&'static [u8]],
    /// How the patterns are read.
    pub syntax: Syntax,
    /// Flag letters among "iwxv".
    pub flags: &'static str,
    /// Selected line ids (after `-v`), 0-based.
    pub expected: &'static [u64],
}

impl Case {
    /// The patterns, owned.
    pub fn patterns(&self) -> Vec<Vec<u8>> {
        pats(self.patterns)
    }

    /// The flags, parsed.
    pub fn flags(&self) -> Flags {
        Flags::parse(self.flags)
    }
}

const F: Syntax = Syntax::Fixed;
const R: Syntax = Syntax::Regex;
const W: Syntax = Syntax::Wildcard;

macro_rules! case {
    ($name:expr, $corpus:expr, [$($p:expr),* $(,)?], $syn:expr, $flags:expr, [$($e:expr),* $(,)?]) => {
        Case {
            name: $name,
            corpus: $corpus,
            patterns: &[$($p),*],
            syntax: $syn,
            flags: $flags,
            expected: &[$($e),*],
        }
    };
}

/// 70 bytes: longer than a 64-bit bit-vector and than one 64-byte block.
const LONG70: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-=+0123";

/// Every configuration of every backend runs these.
pub const CASES: &[Case] = &[
    // --- lines ---
    case!(
        "lines/simple",
        b"foo\nbar\nfoobar\n",
        [b"foo"],
        F,
        "",
        [0, 2]
    ),
    case!(
        "lines/no_trailing_newline",
        b"a\nb\nab",
        [b"b"],
        F,
        "",
        [1, 2]
    ),
    case!("lines/empty_corpus", b"", [b"a"], F, "", []),
    case!("lines/only_newline_empty_pattern", b"\n", [b""], F, "", [0]),
    case!("lines/empty_lines", b"\n\nx\n\n", [b"x"], F, "v", [0, 1, 3]),
    case!("lines/crlf_cr_kept", b"ab\r\ncd\r\n", [b"b\r"], F, "", [0]),
    case!("lines/crlf_x", b"ab\r\nab\n", [b"ab"], F, "x", [1]),
    case!("lines/nul_byte", b"a\0b\nc\n", [b"b"], F, "", [0]),
    case!(
        "lines/invalid_utf8_literal",
        b"\xff\xfe\nx\xfe\n\xfe\xff",
        [b"\xfe\xff"],
        F,
        "",
        [2]
    ),
    case!(
        "lines/match_at_very_end",
        b"xx\nyy\nneedle",
        [b"needle"],
        F,
        "",
        [2]
    ),
    case!(
        "lines/match_at_very_start",
        b"needle\nyy\n",
        [b"needle"],
        F,
        "",
        [0]
    ),
    // --- empty pattern ---
    case!("empty/every_line", b"a\n\nb", [b""], F, "", [0, 1, 2]),
    case!("empty/empty_corpus", b"", [b""], F, "", []),
    case!("empty/inverted", b"a\nb", [b""], F, "v", []),
    case!("empty/regex", b"a\n\nb\n", [b""], R, "", [0, 1, 2]),
    case!("empty/with_other", b"a\nb\n", [b"zzz", b""], F, "", [0, 1]),
    case!(
        "empty/x_only_empty_lines",
        b"a\n\nb\n\n",
        [b""],
        F,
        "x",
        [1, 3]
    ),
    // --- -v ---
    case!("invert/basic", b"a\nb\nc\n", [b"b"], F, "v", [0, 2]),
    case!("invert/none_match", b"a\nb", [b"z"], F, "v", [0, 1]),
    case!("invert/regex", b"1\na\n22\n", [b"^[0-9]+$"], R, "v", [1]),
    // --- many patterns ---
    case!(
        "multi/two",
        b"one\ntwo\nthree\nfour\n",
        [b"two", b"four"],
        F,
        "",
        [1, 3]
    ),
    case!(
        "multi/overlapping",
        b"abcd\nbc\nxx\n",
        [b"abc", b"bcd", b"bc"],
        F,
        "",
        [0, 1]
    ),
    case!(
        "multi/newline_splits",
        b"one\ntwo\nthree\n",
        [b"one\nthree"],
        F,
        "",
        [0, 2]
    ),
    case!(
        "multi/regex_and_literal",
        b"id=1\nfoo\nbar\n",
        [b"id=[0-9]", b"bar"],
        R,
        "",
        [0, 2]
    ),
    case!("multi/x", b"a\nb\nab\n", [b"a", b"b"], F, "x", [0, 1]),
    case!(
        "multi/many_literals",
        b"alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\n",
        [b"lph", b"amm", b"psi", b"eta", b"qqq", b"rrr", b"sss", b"ttt", b"uuu", b"vvv"],
        F,
        "",
        [0, 1, 2, 4, 5, 6, 7]
    ),
    // --- -i ---
    case!(
        "case/ascii",
        b"ERROR x\nerror y\nErRoR\nerr\n",
        [b"error"],
        F,
        "i",
        [0, 1, 2]
    ),
    case!(
        "case/ascii_multi",
        b"FOO\nbar\nBaR\nbaz\n",
        [b"foo", b"bar"],
        F,
        "i",
        [0, 1, 2]
    ),
    // -F -i on an ASCII literal folds ASCII only: KELVIN SIGN is not 'k'.
    case!(
        "case/ascii_no_kelvin",
        b"K\n\xe2\x84\xaa\nk\n",
        [b"k"],
        F,
        "i",
        [0, 2]
    ),
    // A regex folds by Unicode: KELVIN SIGN is 'k'.
    case!(
        "case/regex_kelvin",
        b"K\n\xe2\x84\xaa\nk\n",
        [b"k"],
        R,
        "i",
        [0, 1, 2]
    ),
    case!(
        "case/regex_long_s",
        b"S\n\xc5\xbf\nx\n",
        [b"s"],
        R,
        "i",
        [0, 1]
    ),
    case!(
        "case/unicode_e_acute",
        "café\nCAFÉ\ncafe\n".as_bytes(),
        ["café".as_bytes()],
        F,
        "i",
        [0, 1]
    ),
    case!(
        "case/unicode_sensitive",
        "café\nCAFÉ\n".as_bytes(),
        ["É".as_bytes()],
        F,
        "",
        [1]
    ),
    case!(
        "case/greek",
        "ΣΊΣΥΦΟΣ\nσίσυφος\nsisyphus\n".as_bytes(),
        ["σίσυφος".as_bytes()],
        R,
        "i",
        [0, 1]
    ),
    case!(
        "case/greek_fixed",
        "ΣΊΣΥΦΟΣ\nσίσυφος\n".as_bytes(),
        ["ΊΣ".as_bytes()],
        F,
        "i",
        [0, 1]
    ),
    // --- -w ---
    case!(
        "word/basic",
        b"foo bar\nfoobar\nbar_foo\n(foo)\nfoo",
        [b"foo"],
        F,
        "w",
        [0, 3, 4]
    ),
    case!(
        "word/later_occurrence",
        b"foobar foo\nfoofoo\n",
        [b"foo"],
        F,
        "w",
        [0]
    ),
    case!(
        "word/unicode_neighbour",
        "éfoo\nfoo é\n→foo\nfooé\n".as_bytes(),
        [b"foo"],
        F,
        "w",
        [1, 2]
    ),
    case!(
        "word/invalid_utf8_neighbour",
        b"\xfffoo\nfoo\xff\n foo \n",
        [b"foo"],
        F,
        "w",
        [2]
    ),
    case!(
        "word/digits_are_word",
        b"a1 b\na b1\n",
        [b"a", b"b"],
        F,
        "w",
        [0, 1]
    ),
    case!("word/regex", b"id=42\nid=423x\n", [b"[0-9]+"], R, "w", [0]),
    case!("word/invert", b"foo\nfood\n", [b"foo"], F, "wv", [1]),
    case!("word/ascii_i", b"FOO bar\nFOObar\n", [b"foo"], F, "wi", [0]),
    case!("word/alternatives", b"abc\n", [b"ab", b"abc"], F, "w", [0]),
    // --- -x ---
    case!(
        "line/basic",
        b"abc\nabcd\nxabc\nabc",
        [b"abc"],
        F,
        "x",
        [0, 3]
    ),
    case!("line/regex", b"123\n12a\n", [b"[0-9]+"], R, "x", [0]),
    case!(
        "line/ascii_i",
        b"ABC\nabc\nabcd\n",
        [b"abc"],
        F,
        "xi",
        [0, 1]
    ),
    case!("line/invert", b"abc\nabcd\n", [b"abc"], F, "xv", [1]),
    // --- wildcard ---
    case!(
        "wild/star",
        b"GET /a/b HTTP\nPOST /a HTTP\nGET x\n",
        [b"GET*HTTP"],
        W,
        "",
        [0]
    ),
    case!(
        "wild/question",
        b"cat\ncot\ncoat\nct\n",
        [b"c?t"],
        W,
        "",
        [0, 1]
    ),
    case!("wild/no_cross_line", b"ab\ncd\n", [b"b*c"], W, "", []),
    case!("wild/star_alone", b"x\n\n", [b"*"], W, "", [0, 1]),
    case!(
        "wild/question_is_one_byte",
        "é\ne\n".as_bytes(),
        [b"??"],
        W,
        "x",
        [0]
    ),
    case!(
        "wild/no_metachar_is_literal",
        b"a.b\naxb\n",
        [b"a.b"],
        W,
        "",
        [0]
    ),
    case!(
        "wild/ascii_i",
        b"get /X\nGET /y\n",
        [b"get /?"],
        W,
        "i",
        [0, 1]
    ),
    case!("wild/x", b"a1b\na1bc\n", [b"a*b"], W, "x", [0]),
    // --- fuzzy ---
    case!(
        "fuzzy/k0_is_exact",
        b"hello\nhelo\n",
        [b"hello"],
        Syntax::Fuzzy(0),
        "",
        [0]
    ),
    case!(
        "fuzzy/k1",
        b"hello\nhelo\nhallo\nhxllx\nworld\n",
        [b"hello"],
        Syntax::Fuzzy(1),
        "",
        [0, 1, 2]
    ),
    case!(
        "fuzzy/k2",
        b"hello\nhelo\nhallo\nhxllx\nworld\n",
        [b"hello"],
        Syntax::Fuzzy(2),
        "",
        [0, 1, 2, 3]
    ),
    case!(
        "fuzzy/k3_insertions",
        b"abcXdeYfgZh\nabcd\nefgh\n",
        [b"abcdefgh"],
        Syntax::Fuzzy(3),
        "",
        [0]
    ),
    case!(
        "fuzzy/ascii_i",
        b"HELO\nHALLO\n",
        [b"hello"],
        Syntax::Fuzzy(1),
        "i",
        [0, 1]
    ),
    case!(
        "fuzzy/short_pattern_all",
        b"x\n\nyy\n",
        [b"ab"],
        Syntax::Fuzzy(2),
        "",
        [0, 1, 2]
    ),
    case!(
        "fuzzy/multi",
        b"apple\nbanana\ncherry\n",
        [b"appel", b"chery"],
        Syntax::Fuzzy(1),
        "",
        [0, 2]
    ),
    case!(
        "fuzzy/invert",
        b"hello\nworld\n",
        [b"hellp"],
        Syntax::Fuzzy(1),
        "v",
        [1]
    ),
    case!(
        "fuzzy/long_pattern",
        LONG70,
        [LONG70],
        Syntax::Fuzzy(2),
        "",
        [0]
    ),
    case!(
        "fuzzy/crlf_and_no_final_newline",
        b"helo\r\nworld\r\nhellp",
        [b"hello"],
        Syntax::Fuzzy(1),
        "",
        [0, 2]
    ),
    case!(
        // 33 bytes: the bitap chain's second word.
        "fuzzy/two_word_chain",
        b"abcdefghijklMnopqrstuvwxyz0123456\nXbcdefghijklmnopqrstuvwxyz012345X\nabcdefghijklmnopqrstuvwxyz012345\n",
        [b"abcdefghijklmnopqrstuvwxyz0123456"],
        Syntax::Fuzzy(1),
        "",
        [0, 2]
    ),
    case!(
        // -i folds ASCII only: the 0x89/0xA9 of \xc3\x89/\xc3\xa9 is an edit.
        "fuzzy/ascii_i_non_ascii",
        "CAF\u{c9}\nCAFE\ncaf\u{e9}\n".as_bytes(),
        ["caf\u{e9}".as_bytes()],
        Syntax::Fuzzy(1),
        "i",
        [0, 2]
    ),
    // --- long patterns ---
    case!("long/literal", LONG70, [LONG70], F, "", [0]),
    case!(
        "long/literal_miss_by_one",
        b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-=+012",
        [LONG70],
        F,
        "",
        []
    ),
    case!(
        "long/regex_literal",
        LONG70,
        [b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-=\\+0123"],
        R,
        "",
        [0]
    ),
    // --- regex ---
    case!("regex/class", b"id=42\nid=x\n", [b"id=[0-9]+"], R, "", [0]),
    case!("regex/anchor_start", b"abc\nxabc\n", [b"^abc"], R, "", [0]),
    case!(
        "regex/anchor_end",
        b"abc\nabcx\nabc\r\n",
        [b"abc$"],
        R,
        "",
        [0]
    ),
    case!("regex/empty_line", b"a\n\nb\n\n", [b"^$"], R, "", [1, 3]),
    case!(
        "regex/cross_newline_space",
        b"a\nb\na b\n",
        [b"a\\sb"],
        R,
        "",
        [2]
    ),
    case!(
        "regex/cross_newline_class",
        b"a\nb\n",
        [b"a[\\n]b"],
        R,
        "",
        []
    ),
    case!(
        "regex/cross_newline_negated",
        b"a\nb\naxb\n",
        [b"a[^x]b"],
        R,
        "",
        []
    ),
    case!(
        "regex/cross_newline_later_real",
        b"acx\nb\n",
        [b"a[^z]*\\nb|c"],
        R,
        "",
        [0]
    ),
    case!(
        "regex/alternation",
        b"cat\ndog\nbird\n",
        [b"cat|bird"],
        R,
        "",
        [0, 2]
    ),
    // --- REGRESSION: bugs found by this suite ---
    // A regex that parses to a literal containing `\n` was searched as that
    // literal over the whole buffer, so `\n` matched every terminated line
    // and `a\nb` matched across two lines. Patterns never match across
    // lines.
    case!(
        "REGRESSION/regex_escaped_newline",
        b"a\nb\nc",
        [b"\\n"],
        R,
        "",
        []
    ),
    case!(
        "REGRESSION/regex_literal_across_lines",
        b"a\nb\nab\n",
        [b"a\\nb"],
        R,
        "",
        []
    ),
    case!(
        "REGRESSION/regex_escaped_newline_inverted",
        b"a\nb",
        [b"\\n"],
        R,
        "v",
        [0, 1]
    ),
    // `--fuzzy 0 -i` folded by Unicode when the pattern was non-ASCII, but
    // fuzzy matching counts bytes and folds ASCII only (so K = 0 matched
    // lines that K = 1 did not).
    case!(
        "REGRESSION/fuzzy0_i_ascii_only",
        "S\ns\nſ\n".as_bytes(),
        ["ſ".as_bytes()],
        Syntax::Fuzzy(0),
        "i",
        [2]
    ),
    case!(
        "REGRESSION/fuzzy0_i_w_non_ascii",
        "É x\né x\néx\n".as_bytes(),
        ["é".as_bytes()],
        Syntax::Fuzzy(0),
        "iw",
        [1]
    ),
    // An empty regex match at the very end of a last line without `\n`
    // (position == buffer end) was taken for the start of a next line and
    // dropped: `$` missed the last line, as did `-w ''` on "a ".
    case!(
        "REGRESSION/regex_dollar_last_line_unterminated",
        b"ab\ncd",
        [b"$"],
        R,
        "",
        [0, 1]
    ),
    case!(
        "REGRESSION/regex_optional_at_end",
        b"x\nab",
        [b"z?$"],
        R,
        "",
        [0, 1]
    ),
    case!(
        "REGRESSION/word_empty_pattern_at_end",
        b"a \nb",
        [b""],
        F,
        "w",
        [0]
    ),
    case!(
        "REGRESSION/word_empty_regex_at_end",
        b"a ",
        [b""],
        R,
        "w",
        [0]
    ),
    case!(
        "REGRESSION/fuzzy1_i_ascii_only",
        "S\ns\nſ\n".as_bytes(),
        ["ſ".as_bytes()],
        Syntax::Fuzzy(1),
        "i",
        [2]
    ),
];

// ---------------------------------------------------------------------------
// Corpora
// ---------------------------------------------------------------------------

/// Pieces random corpora are made of: log-like tokens, separators, line
/// ends (LF, CRLF, empty lines), non-ASCII letters with interesting case
/// folds (é/É, Greek sigma, KELVIN SIGN, LONG S), NUL and invalid UTF-8.
pub const PIECES: &[&[u8]] = &[
    b"a",
    b"b",
    b"ab",
    b"ba",
    b"foo",
    b"Foo",
    b"FOO",
    b"bar",
    b"error",
    b"ERROR",
    b"Error",
    b"x",
    b"k",
    b"K",
    b"s",
    b"S",
    b"1",
    b"42",
    b"503",
    b"_",
    b" ",
    b" ",
    b"  ",
    b":",
    b"=",
    b"-",
    b".",
    b"/",
    b"[",
    b"]",
    b"\t",
    b"\n",
    b"\n",
    b"\n",
    b"\r\n",
    b"\n\n",
    b"\r",
    "é".as_bytes(),
    "É".as_bytes(),
    "σ".as_bytes(),
    "Σ".as_bytes(),
    "ς".as_bytes(),
    "\u{212A}".as_bytes(),
    "ſ".as_bytes(),
    "→".as_bytes(),
    b"\0",
    b"\xff",
    b"\xc3",
    b"\xa9",
];

/// Pieces patterns are made of (a subset that occurs in corpora, plus a few
/// that do not).
pub const PATTERN_PIECES: &[&[u8]] = &[
    b"a",
    b"b",
    b"ab",
    b"foo",
    b"FOO",
    b"error",
    b"Error",
    b"x",
    b"k",
    b"s",
    b"1",
    b"42",
    b" ",
    b":",
    b"=",
    b"_",
    b".",
    b"-",
    b"zz",
    "é".as_bytes(),
    "É".as_bytes(),
    "σ".as_bytes(),
    "ſ".as_bytes(),
    b"\xff",
];

/// Concatenates pieces chosen by index.
pub fn assemble(pieces: &[&[u8]], idx: &[usize]) -> Vec<u8> {
    idx.iter()
        .flat_map(|&i| pieces[i % pieces.len()].iter().copied())
        .collect()
}

/// Boundary variations of `hay` (aho-corasick's `variations()` idea): pad
/// the first line with 0..=`max_pad` filler bytes before and the last line
/// after, so matches land on every alignment and every 4-/16-/32-byte word
/// edge; put whole filler lines before and after; drop or add the final
/// newline. The filler `.` is a non-word byte that occurs in no pattern of
/// the sweeps.
pub fn variations(hay: &[u8], max_pad: usize) -> Vec<Vec<u8>> {
    let mut out = vec![hay.to_vec()];
    for pad in 1..=max_pad {
        let fill = vec![b'.'; pad];
        // Same line, before and after.
        out.push([&fill[..], hay].concat());
        out.push([hay, &fill[..]].concat());
        // Own line before; own line after.
        out.push([&fill[..], b"\n", hay].concat());
        let mut after = hay.to_vec();
        if !after.ends_with(b"\n") {
            after.push(b'\n');
        }
        after.extend_from_slice(&fill);
        out.push(after);
    }
    if let Some(h) = hay.strip_suffix(b"\n") {
        out.push(h.to_vec());
    } else {
        out.push([hay, b"\n"].concat());
    }
    out
}

/// A generated log of about `lines * 200` bytes (deterministic).
pub fn generated(lines: u64, seed: u64) -> Vec<u8> {
    logsieve::gen::generate(&logsieve::gen::GenOptions {
        lines,
        seed,
        ..Default::default()
    })
}

// ---------------------------------------------------------------------------
// Random regexes with required literals (the CPU prefilter's and the GPU
// tier 1's property tests)
// ---------------------------------------------------------------------------

// The browser tests include this file and have no proptest.
#[cfg(not(target_arch = "wasm32"))]
use proptest::prelude::*;

/// `-i`, `-w`, `-x`, `-v` at random (`-x` never with `-w`).
#[cfg(not(target_arch = "wasm32"))]
pub fn flags_strategy(allow_wx: bool) -> impl Strategy<Value = Flags> {
    (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()).prop_map(move |(i, w, x, v)| {
        Flags {
            i,
            w: w && allow_wx,
            x: x && allow_wx && !w,
            v,
        }
    })
}

/// Regex fragments for the prefilter property: the required literal sits in
/// alternations, optional groups, `{0,}` and `{1,}` repetitions, next to
/// classes and anchors, over a small alphabet so literals occur often.
pub const PREFILTER_PIECES: &[&str] = &[
    "abc",
    "(abc)?",
    "(?:abc|bca)",
    "(?:ab|cab)",
    "(?:cab){0,}",
    "(?:bcab){1,2}",
    "(?:a|abc)bb",
    "[ab]",
    "[^c]",
    "c+",
    "a*",
    ".",
    "cc",
    "^",
    "$",
    "\\b",
];

#[cfg(not(target_arch = "wasm32"))]
pub fn prefilter_case() -> impl Strategy<Value = (Vec<u8>, Vec<Vec<u8>>, Flags)> {
    let corpus = prop::collection::vec(
        prop::sample::select(&[b'a', b'b', b'c', b'\n', b' ', b'A', b'C'][..]),
        0..400,
    );
    let pattern = prop::collection::vec(0..PREFILTER_PIECES.len(), 1..5).prop_map(|idx| {
        idx.iter()
            .map(|&i| PREFILTER_PIECES[i])
            .collect::<String>()
            .into_bytes()
    });
    (
        corpus,
        prop::collection::vec(pattern, 1..3),
        flags_strategy(true),
    )
        .prop_map(|(c, p, mut f)| {
            // The oracle checks -w spans by slicing the line, where anchors
            // change meaning; anchors are covered without -w.
            if p.iter()
                .any(|p| p.iter().any(|&b| b == b'^' || b == b'$' || b == b'\\'))
            {
                f.w = false;
            }
            (c, p, f)
        })
}

/// xorshift64: the appends' and evictions' random batches (`gpu_append.rs`,
/// `evict.rs`).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// The level and host columns, as `serve` builds them by default.
pub fn copts() -> logsieve::stats::ColumnOptions {
    logsieve::stats::ColumnOptions {
        fields: ["level", "host"]
            .iter()
            .filter_map(|n| logsieve::stats::FieldSpec::builtin(n))
            .collect(),
        ..Default::default()
    }
}

/// Lines wanted, on `backend`.
pub fn opts(backend: logsieve::BackendChoice) -> logsieve::SearchOptions {
    logsieve::SearchOptions {
        backend,
        want: logsieve::Want::Lines,
        ..Default::default()
    }
}
