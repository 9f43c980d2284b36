//! The naive oracle: each line decided by brute force, by the matching
//! rules of `src/query/mod.rs` (regex: the `regex` crate line by line).

use logsieve::Syntax;
use regex::bytes::{Regex, RegexBuilder};
use regex_syntax::hir::{ClassUnicode, ClassUnicodeRange};

use super::Flags;

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
