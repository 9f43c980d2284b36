//! Class strings: regexes whose every match is a fixed-length run of byte
//! classes, which the GPU's `scan` answers exactly in one pass.
//!
//! Most regexes people type for logs are a literal with a few classes
//! around it: `ERROR_5\d\d`, `port \d{5} ssh2`, `HTTP/1\.[01]" [45]\d\d`,
//! `trace=[0-9a-f]{32}`, a UUID, an ISO timestamp, `\bu\d{5}\b`. Tier 1
//! finds such a regex's required literal and then verifies each candidate
//! line with the automaton, a second dispatch over the candidates. For a
//! class string the verification is the literal comparison itself with a
//! class in some positions: `scan` tests its two rarest literal bytes
//! position by position, as it does for a literal, and compares the
//! survivors against the classes (`kernels/scan.wgsl`, `class_at`). One
//! pass, no candidates, no automaton.
//!
//! What a line matches is preserved exactly (only whether a line matches
//! is asked of the GPU; `-o` and colours find the matches on the CPU):
//!
//! * an unbounded repetition of one class at either end keeps only its
//!   minimum (`X\d+` matches a line exactly when `X\d` does: a match's
//!   prefix is one, and one is a match);
//! * bounded repetition with `min == max` is expanded (`\d{4}`);
//! * `\b` is allowed at either end, not beside an unbounded repetition
//!   (`\b\d+X` is not `\b\dX`: "-11X" matches only the first);
//! * no other look-around, no alternation of strings, no optional part.
//!
//! Unicode: a class with members above 0x7F, and a Unicode `\b`, are exact
//! on ASCII bytes only ([`ClassString::unicode`]): such a class string runs
//! only on a corpus without a byte >= 0x80, where a Unicode match is an
//! ASCII one (the GPU's upload counts every byte, `GpuCorpus::ascii`).

use regex_syntax::hir::{Hir, HirKind, Look};

use super::Query;

/// The most positions: `scan`'s pattern buffer (16 x 4 words).
pub const MAX_LEN: usize = 64;

/// The most distinct classes other than one byte or one ASCII letter in
/// both cases: their 256-bit sets share the scan uniform's 32 spare words.
pub const MAX_CLASSES: usize = 4;

/// A 256-bit byte set, four 64-bit words.
pub type ByteSet = [u64; 4];

/// How `scan` tests one position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PosTest {
    /// This byte exactly.
    Byte(u8),
    /// This ASCII lowercase letter in either case.
    Letter(u8),
    /// Class `i` of [`ClassString::classes`].
    Class(usize),
}

/// A regex's matches as a fixed-length run of byte classes, with `\b`
/// conditions at its ends. Exact: a line holds a match of the regex if and
/// only if [`ClassString::is_match_line`] says so (on ASCII lines when
/// [`ClassString::unicode`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassString {
    /// Per position, the bytes it takes (never `\n`: a match is in a line).
    pub masks: Vec<ByteSet>,
    /// `\b` before the first position.
    pub word_before: bool,
    /// `\b` after the last position.
    pub word_after: bool,
    /// Exact on ASCII bytes only (a class with non-ASCII members, or a
    /// Unicode `\b`).
    pub unicode: bool,
}

/// The most alternatives of a class set (one `scan` pass each, line
/// bits OR-ed: `support::MAX_SCANS`).
pub const MAX_ALTS: usize = 4;

/// One item of a flattened concatenation.
#[derive(Clone, Copy)]
enum Item {
    Pos(ByteSet),
    /// An unbounded repetition of one class, with its minimum.
    Open(ByteSet, u32),
    /// `\b`.
    Word,
}

fn contains(m: &ByteSet, b: u8) -> bool {
    m[usize::from(b >> 6)] >> (b & 63) & 1 == 1
}

fn count(m: &ByteSet) -> u32 {
    m.iter().map(|w| w.count_ones()).sum()
}

/// True for an ASCII word byte (`\b`'s classes on ASCII text).
pub fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl ClassString {
    /// The class string of `q`'s regex (the automaton's own pattern and
    /// flags: `-w`, `-x`, wildcards and `-i` folded in), if it is one.
    pub fn for_query(q: &Query) -> Option<ClassString> {
        let hir = super::glushkov::hir_for_query(q).ok()?;
        ClassString::from_hir(&hir)
    }

    /// The class string of `hir`, if its matches are one.
    pub fn from_hir(hir: &Hir) -> Option<ClassString> {
        let mut set = ClassSet::from_hir(hir)?;
        match set.alts.len() {
            1 => set.alts.pop(),
            _ => None,
        }
    }

    fn from_items(mut items: Vec<Item>, unicode: bool) -> Option<ClassString> {
        let word_before = matches!(items.first(), Some(Item::Word));
        if word_before {
            items.remove(0);
        }
        let word_after = matches!(items.last(), Some(Item::Word));
        if word_after {
            items.pop();
        }
        let mut masks = Vec::new();
        let n = items.len();
        for (i, it) in items.into_iter().enumerate() {
            match it {
                Item::Pos(m) => masks.push(m),
                // Only at an end, and not beside a `\b` there.
                Item::Open(m, min) if (i == 0 && !word_before) || (i + 1 == n && !word_after) => {
                    for _ in 0..min {
                        masks.push(m);
                    }
                }
                _ => return None,
            }
            if masks.len() > MAX_LEN {
                return None;
            }
        }
        for m in &mut masks {
            m[0] &= !(1 << b'\n');
        }
        if masks.is_empty() || masks.iter().any(|m| count(m) == 0) {
            return None;
        }
        let cs = ClassString {
            masks,
            word_before,
            word_after,
            unicode,
        };
        // One position `scan` can find by its byte, and room for the rest.
        let tests = cs.tests()?;
        tests
            .iter()
            .any(|t| !matches!(t, PosTest::Class(_)))
            .then_some(cs)
    }

    /// How `scan` tests each position, or `None` when the classes that are
    /// neither one byte nor one letter in both cases are more than
    /// [`MAX_CLASSES`].
    pub fn tests(&self) -> Option<Vec<PosTest>> {
        let classes = self.classes();
        if classes.len() > MAX_CLASSES {
            return None;
        }
        Some(
            self.masks
                .iter()
                .map(|m| match test_of(m) {
                    Some(t) => t,
                    None => PosTest::Class(classes.iter().position(|c| c == m).expect("listed")),
                })
                .collect(),
        )
    }

    /// The distinct sets that are neither one byte nor one letter in both
    /// cases, in order of first position.
    pub fn classes(&self) -> Vec<ByteSet> {
        let mut v: Vec<ByteSet> = Vec::new();
        for m in &self.masks {
            if test_of(m).is_none() && !v.contains(m) {
                v.push(*m);
            }
        }
        v
    }

    /// The longest run of positions that take one byte each: a literal
    /// every match holds (tier 1's literal for a class string without a
    /// required literal of 3+ bytes, `\bu\d{5}\b`'s `u`, which the
    /// automaton verifies where the class string cannot run as itself).
    pub fn longest_literal(&self) -> Option<Vec<u8>> {
        let mut best: Vec<u8> = Vec::new();
        let mut run = Vec::new();
        for m in &self.masks {
            match test_of(m) {
                Some(PosTest::Byte(b)) => run.push(b),
                _ => run.clear(),
            }
            if run.len() > best.len() {
                best = run.clone();
            }
        }
        (!best.is_empty()).then_some(best)
    }

    /// True when a match starts at `p` of `line` (the host's reference for
    /// the kernel's `class_at`).
    pub fn matches_at(&self, line: &[u8], p: usize) -> bool {
        let n = self.masks.len();
        if p + n > line.len() {
            return false;
        }
        if !self
            .masks
            .iter()
            .zip(&line[p..p + n])
            .all(|(m, &b)| contains(m, b))
        {
            return false;
        }
        let word = |i: Option<usize>| i.is_some_and(|i| is_word(line[i]));
        if self.word_before && word(p.checked_sub(1)) == word(Some(p)) {
            return false;
        }
        let after = (p + n < line.len()).then_some(p + n);
        !(self.word_after && word(Some(p + n - 1)) == word(after))
    }

    /// True when `line` (without its `\n`) holds a match.
    pub fn is_match_line(&self, line: &[u8]) -> bool {
        (0..line.len()).any(|p| self.matches_at(line, p))
    }
}

/// One byte, or one ASCII letter in both cases (found by `scan`'s byte
/// tests: a letter by OR-ing 0x20 into the byte).
fn test_of(m: &ByteSet) -> Option<PosTest> {
    match count(m) {
        1 => (0..=255u8).find(|&b| contains(m, b)).map(PosTest::Byte),
        2 => (b'a'..=b'z')
            .find(|&b| contains(m, b) && contains(m, b.to_ascii_uppercase()))
            .map(PosTest::Letter),
        _ => None,
    }
}

/// Alternatives of class strings (`timeout|refused`,
/// `\[svc-(payments|billing)\]`, `\b(GET|POST) /api/v\d/`): a line
/// matches when it holds a match of one of them. `scan` runs one pass
/// each, OR-ing its line bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassSet {
    /// At least one, at most [`MAX_ALTS`].
    pub alts: Vec<ClassString>,
}

impl ClassSet {
    /// The class set of `q`'s regex (as [`ClassString::for_query`]).
    pub fn for_query(q: &Query) -> Option<ClassSet> {
        let hir = super::glushkov::hir_for_query(q).ok()?;
        ClassSet::from_hir(&hir)
    }

    /// The class set of `hir`: an alternation (also inside a concatenation,
    /// multiplied out) of at most [`MAX_ALTS`] class strings.
    pub fn from_hir(hir: &Hir) -> Option<ClassSet> {
        let mut unicode = false;
        let alts = flatten(hir, &mut unicode)?;
        let alts: Option<Vec<ClassString>> = alts
            .into_iter()
            .map(|items| ClassString::from_items(items, unicode))
            .collect();
        let mut alts = alts?;
        alts.dedup();
        Some(ClassSet { alts })
    }

    /// "a class string of 9 positions", "2 class strings of 14, 13
    /// positions", for `--explain`.
    pub fn describe(&self) -> String {
        let lens: Vec<String> = self
            .alts
            .iter()
            .map(|a| a.masks.len().to_string())
            .collect();
        match self.alts.len() {
            1 => format!("a class string of {} positions", lens[0]),
            n => format!("{n} class strings of {} positions", lens.join(", ")),
        }
    }

    /// Exact on ASCII bytes only (some class or `\b` is Unicode).
    pub fn unicode(&self) -> bool {
        self.alts.iter().any(|a| a.unicode)
    }

    /// Positions in all.
    pub fn positions(&self) -> usize {
        self.alts.iter().map(|a| a.masks.len()).sum()
    }

    /// One literal of each alternative ([`ClassString::longest_literal`]):
    /// every match holds one of them.
    pub fn literals(&self) -> Option<Vec<Vec<u8>>> {
        self.alts.iter().map(ClassString::longest_literal).collect()
    }

    /// True when `line` (without its `\n`) holds a match of one of them.
    pub fn is_match_line(&self, line: &[u8]) -> bool {
        self.alts.iter().any(|a| a.is_match_line(line))
    }
}

/// The alternatives of `h`, each its items in order, or `None` where `h`
/// is no class set.
fn flatten(h: &Hir, unicode: &mut bool) -> Option<Vec<Vec<Item>>> {
    let one = |items: Vec<Item>| Some(vec![items]);
    match h.kind() {
        HirKind::Empty => one(Vec::new()),
        HirKind::Literal(l) => one(l
            .0
            .iter()
            .map(|&b| {
                let mut m = [0u64; 4];
                m[usize::from(b >> 6)] |= 1 << (b & 63);
                Item::Pos(m)
            })
            .collect()),
        HirKind::Class(c) => one(vec![Item::Pos(super::glushkov::class_set(c, unicode))]),
        HirKind::Look(Look::WordAscii) => one(vec![Item::Word]),
        HirKind::Look(Look::WordUnicode) => {
            *unicode = true;
            one(vec![Item::Word])
        }
        HirKind::Look(_) => None,
        HirKind::Capture(c) => flatten(&c.sub, unicode),
        HirKind::Concat(parts) => {
            let mut acc: Vec<Vec<Item>> = vec![Vec::new()];
            for p in parts {
                let alts = flatten(p, unicode)?;
                if acc.len() * alts.len() > MAX_ALTS {
                    return None;
                }
                acc = acc
                    .iter()
                    .flat_map(|a| {
                        alts.iter().map(move |b| {
                            let mut v = a.clone();
                            v.extend_from_slice(b);
                            v
                        })
                    })
                    .collect();
            }
            Some(acc)
        }
        HirKind::Alternation(subs) => {
            let mut acc = Vec::new();
            for sub in subs {
                acc.extend(flatten(sub, unicode)?);
                if acc.len() > MAX_ALTS {
                    return None;
                }
            }
            Some(acc)
        }
        HirKind::Repetition(r) => {
            let mut sub = flatten(&r.sub, unicode)?;
            if sub.len() != 1 {
                return None;
            }
            let sub = sub.pop().expect("one");
            if sub.iter().any(|i| !matches!(i, Item::Pos(_))) {
                return None;
            }
            let mut out = Vec::new();
            match r.max {
                Some(max) if max == r.min => {
                    if (r.min as usize).saturating_mul(sub.len()) > MAX_LEN {
                        return None;
                    }
                    for _ in 0..r.min {
                        out.extend_from_slice(&sub);
                    }
                    Some(vec![out])
                }
                None => match sub.as_slice() {
                    [Item::Pos(m)] if r.min as usize <= MAX_LEN => {
                        out.push(Item::Open(*m, r.min));
                        Some(vec![out])
                    }
                    _ => None,
                },
                Some(_) => None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cs(re: &str) -> Option<ClassString> {
        let hir = regex_syntax::ParserBuilder::new()
            .utf8(false)
            .multi_line(true)
            .build()
            .parse(re)
            .unwrap();
        ClassString::from_hir(&hir)
    }

    #[test]
    fn which_regexes_are_class_strings() {
        for (re, len) in [
            ("ERROR_5\\d\\d", 9),
            ("port \\d{5} ssh2", 15),
            ("HTTP/1\\.[01]\" [45]\\d\\d", 13),
            ("trace=[0-9a-f]{32}", 38),
            (
                "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
                36,
            ),
            ("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d", 16),
            ("\\bu\\d{5}\\b", 6),
            ("latency_ms=\\d{4,}", 15),
            ("latency_ms=1\\d{3} ", 16),
            ("192\\.168\\.1\\.\\d+", 11),
            ("\\d+x", 2),
            ("(?i)timeout", 7),
            ("a(bc){2}", 5),
        ] {
            let c = cs(re).unwrap_or_else(|| panic!("{re}"));
            assert_eq!(c.masks.len(), len, "{re}");
        }
        for re in [
            "[0-9a-f]{32}",               // no byte to find it by
            "\\d{1,3}\\.\\d",             // a bounded range
            "user=u1\\d*7 ",              // an open repetition inside
            "timeout|refused",            // alternation
            "^ERROR",                     // an anchor
            "a\\bb",                      // \b inside
            "\\b\\d+x",                   // \b beside an open repetition
            "x\\d+\\b",                   // the same at the end
            "a?b",                        // an optional part
            "x*",                         // empty
            "[a-e][f-j][k-o][p-t][u-z]x", // five classes
        ] {
            assert!(cs(re).is_none(), "{re}");
        }
        let c = cs("\\bu\\d{5}\\b").unwrap();
        assert!(c.word_before && c.word_after && c.unicode);
        assert!(!cs("(?-u:\\d)x").unwrap().unicode);
    }

    #[test]
    fn alternations_are_class_sets() {
        let set = |re: &str| {
            let hir = regex_syntax::ParserBuilder::new()
                .utf8(false)
                .multi_line(true)
                .build()
                .parse(re)
                .unwrap();
            ClassSet::from_hir(&hir)
        };
        for (re, lens) in [
            ("(?i)timeout|refused", &[7, 7][..]),
            ("\\[svc-(payments|billing)\\]", &[14, 13]),
            ("\\b(GET|POST) /api/v\\d/", &[12, 13]),
            ("web-\\d\\d (ERROR|WARN)", &[12, 11]),
            ("(ab|cd)e(fg|hi)", &[5, 5, 5, 5]),
            ("ERROR_5\\d\\d", &[9]),
        ] {
            let s = set(re).unwrap_or_else(|| panic!("{re}"));
            let got: Vec<usize> = s.alts.iter().map(|a| a.masks.len()).collect();
            assert_eq!(got, lens, "{re}");
            // Letters in either case are no exact literal.
            assert_eq!(s.literals().is_some(), !re.starts_with("(?i)"), "{re}");
        }
        // Too many alternatives, or one that is no class string.
        for re in [
            "(a|b)(c|d)(e|f)",
            "ab|\\d+x\\d+y",
            "ab|(cd)+",
            "ab|[0-9a-f]{4}",
        ] {
            assert!(set(re).is_none(), "{re}");
        }
        let s = set("\\b(GET|POST) /api/v\\d/").unwrap();
        let r = regex::bytes::Regex::new("\\b(GET|POST) /api/v\\d/").unwrap();
        for l in [
            &b"GET /api/v1/"[..],
            b"xPOST /api/v2/",
            b"a POST /api/v9/x",
            b"GET /api/vx/",
        ] {
            assert_eq!(s.is_match_line(l), r.is_match(l));
        }
        assert_eq!(s.describe(), "2 class strings of 12, 13 positions");
    }

    #[test]
    fn tests_name_bytes_letters_and_classes() {
        let c = cs("(?i)a[0-9]x[0-9]").unwrap();
        let t = c.tests().unwrap();
        assert_eq!(
            t,
            vec![
                PosTest::Letter(b'a'),
                PosTest::Class(0),
                PosTest::Letter(b'x'),
                PosTest::Class(0)
            ]
        );
        assert_eq!(c.classes().len(), 1);
    }

    /// Against the regex crate, line by line, on the regexes above and
    /// lines made to sit on their edges.
    #[test]
    fn agrees_with_the_regex_crate() {
        let lines: &[&[u8]] = &[
            b"ERROR_503 x",
            b"xERROR_50",
            b"ERROR_5a3",
            b"u12345",
            b"au12345",
            b"u123456",
            b"-u12345-",
            b"u1234",
            b"latency_ms=123",
            b"latency_ms=12345",
            b"latency_ms=1234 ",
            b"a-11x",
            b"11x",
            b"x",
            b"",
            b"2026-11-28T04:31",
            b"HTTP/1.1\" 503",
            b"HTTP/1.2\" 503",
        ];
        for re in [
            "ERROR_5\\d\\d",
            "\\bu\\d{5}\\b",
            "\\bu\\d{5}",
            "u\\d{5}\\b",
            "latency_ms=\\d{4,}",
            "latency_ms=1\\d{3} ",
            "\\d+x",
            "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d",
            "HTTP/1\\.[01]\" [45]\\d\\d",
        ] {
            let c = cs(re).unwrap();
            let r = regex::bytes::Regex::new(re).unwrap();
            for l in lines {
                assert_eq!(
                    c.is_match_line(l),
                    r.is_match(l),
                    "{re} on {:?}",
                    String::from_utf8_lossy(l)
                );
            }
        }
    }
}
