//! Required literals: byte strings every match of a pattern must contain,
//! and the [`Prefilter`] that finds them.
//!
//! ripgrep and Hyperscan do not run a regex over every byte when the regex
//! cannot match without some literal: they search for the literal with a
//! SIMD substring search, and run the regex only on the line around each
//! occurrence. `-x '.*rt=1\.879'` holds `rt=1.879`; `\d+\.exe` holds
//! `.exe`; `(foo|bar)\d+` holds one of `foo`, `bar`; `(foo)?bar` only `bar`.
//!
//! [`RequiredLiterals::from_hir`] walks the HIR that is compiled (so `-i`,
//! `-w` and `-x` wrappers are seen as they run: a case-insensitive letter is
//! a class of its case variants, Unicode ones included, and is expanded
//! like any small class). It returns a *set*: every match contains at least
//! one member. [`Prefilter`] searches for the set (`memchr::memmem` for one
//! literal, Teddy for a few) and reports candidate positions.
//!
//! # The contract
//!
//! A [`Prefilter`] may report false positives, never false negatives: a
//! line that matches holds an occurrence of some required literal, so it is
//! reported; a reported line may not match, so the caller verifies every
//! candidate line with the full matcher. The GPU's literal kernels can take
//! the same set (required literals → literal kernel → verify on the host).

use aho_corasick::packed;
use memchr::memmem;
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Capture, Class, Hir, HirKind, Repetition};

/// At most this many literals in a set: Teddy slows down beyond a few
/// dozen, and a set this large rarely beats the regex engine's own scan.
pub const MAX_SET: usize = 32;

/// A set whose shortest literal is shorter than this is not worth a
/// prefilter: one or two bytes occur on nearly every log line.
pub const MIN_LEN: usize = 3;

/// Literals that every match contains at least one of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequiredLiterals {
    literals: Vec<Vec<u8>>,
    /// ASCII case folded ([`folded_alternatives`]): the literals are in
    /// lower case and stand for every ASCII case variant of themselves
    /// (searched case-insensitively). Otherwise exact bytes.
    folded: bool,
}

impl RequiredLiterals {
    /// The best set of required literals of `hir`, if one is worth
    /// searching for: at most [`MAX_SET`] literals, none shorter than
    /// [`MIN_LEN`]. `None` when a match may hold no literal (`\d{4}-\d\d`
    /// only requires `-`; `a*` matches the empty string).
    pub fn from_hir(hir: &Hir) -> Option<RequiredLiterals> {
        let set = required(hir)?;
        if set.is_empty() || set.iter().map(Vec::len).min()? < MIN_LEN {
            return None;
        }
        Some(RequiredLiterals {
            literals: set,
            folded: false,
        })
    }

    /// A set given by hand (tests, the planner's tables): deduplicated.
    pub fn from_literals(mut literals: Vec<Vec<u8>>) -> RequiredLiterals {
        literals.sort();
        literals.dedup();
        RequiredLiterals {
            literals,
            folded: false,
        }
    }

    /// The literals, deduplicated: byte-exact (case variants listed), or
    /// in lower case when [`RequiredLiterals::folded`].
    pub fn literals(&self) -> &[Vec<u8>] {
        &self.literals
    }

    /// Whether the literals stand for all their ASCII case variants (to be
    /// searched ASCII case-insensitively).
    pub fn folded(&self) -> bool {
        self.folded
    }
}

/// How good a set is for a prefilter: longer literals are rarer, and each
/// doubling of the set costs more than a byte of length (more Teddy
/// buckets, more chance hits).
fn score(set: &[Vec<u8>]) -> i64 {
    let min = set.iter().map(|l| l.len().min(8)).min().unwrap_or(0) as i64;
    let log2 = (usize::BITS - set.len().saturating_sub(1).leading_zeros()) as i64;
    min * 16 - log2 * 20
}

/// Shrinks a set to at most [`MAX_SET`] literals by keeping fewer leading
/// bytes (each kept prefix still occurs wherever its literal does).
fn shrink(mut set: Vec<Vec<u8>>) -> Option<Vec<Vec<u8>>> {
    set.sort();
    set.dedup();
    let mut keep = set.iter().map(Vec::len).max()?;
    while set.len() > MAX_SET {
        keep -= 1;
        if keep < MIN_LEN {
            return None;
        }
        for l in &mut set {
            l.truncate(keep);
        }
        set.sort();
        set.dedup();
    }
    Some(set)
}

/// Every match of `hir` begins with a member of the result (the regex
/// crate's prefix extraction; an inexact literal is still a prefix).
fn prefixes(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    let seq = Extractor::new()
        .kind(ExtractKind::Prefix)
        .limit_total(256)
        .extract(hir);
    let lits = seq.literals()?;
    if lits.is_empty() || lits.iter().any(|l| l.as_bytes().is_empty()) {
        return None;
    }
    shrink(lits.iter().map(|l| l.as_bytes().to_vec()).collect())
}

/// How common a byte is in log text, higher is more common: letters by
/// English frequency (case folded), digits, spaces and the punctuation of
/// key=value logs common, the rest rare. A tie-break only: between sets
/// of equal [`score`], the one whose rarest byte is rarer finds fewer
/// candidates (`-i nullpointerexception`: the window `ion` is on 192,403
/// of 1M generated lines, `rex` on 1,677).
fn commonness(b: u8) -> u8 {
    const LETTERS: &[u8] = b"etaoinshrdlcumwfgypbvkjxqz";
    match b.to_ascii_lowercase() {
        c @ b'a'..=b'z' => {
            let i = LETTERS.iter().position(|&l| l == c).unwrap_or(25) as u8;
            200 - 7 * i
        }
        b'0'..=b'9' | b' ' => 230,
        b'=' | b':' | b'.' | b'_' | b'-' | b'/' | b',' | b'"' | b'[' | b']' => 180,
        _ => 20,
    }
}

/// The commonness of a set's weakest member: each literal is as rare as
/// its rarest byte, and the set as common as its most common literal.
fn set_commonness(set: &[Vec<u8>]) -> u8 {
    set.iter()
        .map(|l| l.iter().map(|&b| commonness(b)).min().unwrap_or(255))
        .max()
        .unwrap_or(255)
}

/// The best set among `set` and its members cut to fewer leading bytes
/// (a prefix of a required literal is required too): under `-i` a window
/// of 3 letters in 8 case variants beats a longer one in 32.
fn best_window(set: Option<Vec<Vec<u8>>>) -> Option<Vec<Vec<u8>>> {
    let set = set?;
    let max = set.iter().map(Vec::len).max()?;
    let mut best = Some(set.clone());
    for keep in MIN_LEN..max.min(8) {
        // Cut between characters only (`-i é` keeps `é` whole: its case
        // variants differ in the second byte, and `--explain` prints it).
        if set.iter().any(|l| l.len() > keep && l[keep] & 0xC0 == 0x80) {
            continue;
        }
        let mut cut: Vec<Vec<u8>> = set
            .iter()
            .map(|l| l[..l.len().min(keep)].to_vec())
            .collect();
        cut.sort();
        cut.dedup();
        best = better(best, Some(cut));
    }
    best
}

/// The better of two sets; a set with a literal shorter than [`MIN_LEN`]
/// does not count. Equal scores: the rarer bytes win, else the first.
fn better(a: Option<Vec<Vec<u8>>>, b: Option<Vec<Vec<u8>>>) -> Option<Vec<Vec<u8>>> {
    let ok = |s: &Vec<Vec<u8>>| s.iter().all(|l| l.len() >= MIN_LEN);
    match (a.filter(ok), b.filter(ok)) {
        (Some(a), Some(b)) => {
            let (sa, sb) = (score(&a), score(&b));
            let b_wins = sb > sa || (sb == sa && set_commonness(&b) < set_commonness(&a));
            Some(if b_wins { b } else { a })
        }
        (a, b) => a.or(b),
    }
}

/// A set such that every match of `hir` contains one of its members.
fn required(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    match hir.kind() {
        HirKind::Literal(l) if l.0.len() >= MIN_LEN => Some(vec![l.0.to_vec()]),
        HirKind::Capture(c) => required(&c.sub),
        // `x{0,}` may match without x; `x{1,}` holds what x holds.
        HirKind::Repetition(r) if r.min >= 1 => required(&r.sub),
        HirKind::Class(_) => better(None, prefixes(hir)),
        HirKind::Alternation(alts) => {
            // Every branch must contribute, or a match may avoid them all.
            let mut set = Vec::new();
            for a in alts {
                set.extend(better(None, required(a))?);
            }
            shrink(set)
        }
        HirKind::Concat(parts) => {
            // The literal starting at each part (`.*rt=1\.879` holds
            // `rt=1.879` from its second part on), and what each part
            // holds inside (a group's inner literal).
            let mut best = None;
            for i in 0..parts.len().min(32) {
                let tail = Hir::concat(parts[i..].to_vec());
                best = better(best, best_window(prefixes(&tail)));
                best = better(best, required(&parts[i]));
            }
            best
        }
        _ => None,
    }
}

/// Every candidate necessary set of `hir` that [`RequiredLiterals::from_hir`]
/// weighs, not only its pick: the prefix set of each tail of each
/// concatenation (an inner or suffix literal), what each part holds inside
/// (a group's literal or alternation), the union over an alternation's
/// branches. Every match contains a member of each set; which one finds
/// the fewest candidate lines depends on the corpus
/// (`planner::tier1_literals` measures them on its sample: in
/// `web-\d\d (ERROR|WARN)`, `web-` is on 69% of generated lines, one of
/// `ERROR`, `WARN` on far fewer). Deduplicated; the static pick first.
pub fn alternatives(hir: &Hir) -> Vec<RequiredLiterals> {
    let mut out: Vec<Vec<Vec<u8>>> = Vec::new();
    if let Some(best) = RequiredLiterals::from_hir(hir) {
        out.push(best.literals);
    }
    collect(hir, &mut out, 0);
    let folded = folded_alternatives(hir, &out);
    out.into_iter()
        .map(|literals| RequiredLiterals {
            literals,
            folded: false,
        })
        .chain(folded)
        .chain(rare_byte_sets(hir))
        .collect()
}

/// At most this many [`rare_byte_sets`].
pub const MAX_RARE: usize = 4;

/// Runs of bytes rare in log text (not letters, digits, spaces or the
/// punctuation of key=value logs: `@`, `#`, `|`, `(`...) that every match
/// of `hir` holds, each a set of its own: `[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}` holds `@`
/// and no literal of 3 bytes. Tier 1 weighs them on its sample like any
/// set; the CPU prefilter does not take them. Sound: every match holds a
/// match of every part of a concatenation, of a group's inside and of a
/// repetition's (at least once).
pub fn rare_byte_sets(hir: &Hir) -> Vec<RequiredLiterals> {
    fn walk(hir: &Hir, out: &mut Vec<RequiredLiterals>, depth: usize) {
        if depth > 16 || out.len() >= MAX_RARE {
            return;
        }
        match hir.kind() {
            // Each run of rare bytes in a literal (a piece of a required
            // literal is required too).
            HirKind::Literal(l) => {
                for run in l.0.split(|&b| commonness(b) > 20).filter(|r| !r.is_empty()) {
                    let set = RequiredLiterals::from_literals(vec![run.to_vec()]);
                    if !out.contains(&set) && out.len() < MAX_RARE {
                        out.push(set);
                    }
                }
            }
            HirKind::Capture(c) => walk(&c.sub, out, depth + 1),
            HirKind::Repetition(r) if r.min >= 1 => walk(&r.sub, out, depth + 1),
            HirKind::Concat(parts) => {
                for p in parts {
                    walk(p, out, depth + 1);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(hir, &mut out, 0);
    out
}

/// At most this many ASCII-folded candidate sets ([`folded_alternatives`]),
/// besides the exact ones.
pub const MAX_FOLDED: usize = 8;

/// The candidate sets of `hir` with its ASCII case classes folded: every
/// class that is exactly a letter and its other ASCII case (`(?i)t` is
/// `[Tt]`) read as the lower-case letter, the sets found as [`collect`]
/// finds them, in lower case, each literal to be searched ASCII
/// case-insensitively. `(?i)timeout|refused` gives `timeout`, `refu`
/// (Unicode `-i` makes `s` the class `[Ssſ]`, which stays a class: an
/// ASCII search would miss `ſ`) where the exact sets must list case
/// variants and so keep 3-byte windows ("ref" in 8 variants). Sound: a
/// match holds, at each folded class, one of the two cases, so it holds
/// some member up to ASCII case. Empty when no class folds; a set
/// `exact` already has is left out.
pub fn folded_alternatives(hir: &Hir, exact: &[Vec<Vec<u8>>]) -> Vec<RequiredLiterals> {
    let mut changed = false;
    let f = fold_ascii_case(hir, &mut changed, 0);
    if !changed {
        return Vec::new();
    }
    let mut sets = Vec::new();
    push_set(&mut sets, required(&f));
    collect(&f, &mut sets, 0);
    let mut out: Vec<RequiredLiterals> = Vec::new();
    for mut set in sets {
        // A member with a non-ASCII byte (a class the prefix walk expanded:
        // `refu[Ssſ]ed` gives `refuſed`) is cut before it: a prefix of a
        // required literal is required too.
        for l in &mut set {
            if let Some(i) = l.iter().position(|b| !b.is_ascii()) {
                l.truncate(i);
            }
            l.make_ascii_lowercase();
        }
        if set.iter().any(|l| l.len() < MIN_LEN) {
            continue;
        }
        set.sort();
        set.dedup();
        // A member holding another one adds nothing (`refused` when
        // `refu` is there).
        let all = set.clone();
        set.retain(|l| {
            !all.iter()
                .any(|m| m.len() < l.len() && l.windows(m.len()).any(|w| w == &m[..]))
        });
        let letters = set.iter().any(|l| l.iter().any(u8::is_ascii_alphabetic));
        let fresh = !exact.contains(&set) && !out.iter().any(|o| o.literals == set);
        if letters && fresh && out.len() < MAX_FOLDED {
            out.push(RequiredLiterals {
                literals: set,
                folded: true,
            });
        }
    }
    out
}

/// `hir` with every class of exactly one ASCII letter in both cases
/// replaced by the lower-case letter (`changed` set when one was).
fn fold_ascii_case(hir: &Hir, changed: &mut bool, depth: usize) -> Hir {
    if depth > 64 {
        return hir.clone();
    }
    let sub = |h: &Hir, changed: &mut bool| fold_ascii_case(h, changed, depth + 1);
    match hir.kind() {
        HirKind::Class(c) => match ascii_case_pair(c) {
            Some(lower) => {
                *changed = true;
                Hir::literal([lower])
            }
            None => hir.clone(),
        },
        HirKind::Capture(c) => Hir::capture(Capture {
            index: c.index,
            name: c.name.clone(),
            sub: Box::new(sub(&c.sub, changed)),
        }),
        HirKind::Repetition(r) => Hir::repetition(Repetition {
            min: r.min,
            max: r.max,
            greedy: r.greedy,
            sub: Box::new(sub(&r.sub, changed)),
        }),
        HirKind::Concat(parts) => Hir::concat(parts.iter().map(|p| sub(p, changed)).collect()),
        HirKind::Alternation(alts) => {
            Hir::alternation(alts.iter().map(|a| sub(a, changed)).collect())
        }
        _ => hir.clone(),
    }
}

/// The lower-case letter when `class` is exactly `{l, L}` for an ASCII
/// letter `l`.
fn ascii_case_pair(class: &Class) -> Option<u8> {
    let mut members = Vec::with_capacity(2);
    match class {
        Class::Unicode(u) => {
            for r in u.ranges() {
                for c in r.start()..=r.end() {
                    if members.len() == 2 || !c.is_ascii() {
                        return None;
                    }
                    members.push(c as u8);
                }
            }
        }
        Class::Bytes(b) => {
            for r in b.ranges() {
                for c in r.start()..=r.end() {
                    if members.len() == 2 {
                        return None;
                    }
                    members.push(c);
                }
            }
        }
    }
    match members[..] {
        [a, b] if a.is_ascii_alphabetic() && a.eq_ignore_ascii_case(&b) && a != b => {
            Some(a.to_ascii_lowercase())
        }
        _ => None,
    }
}

/// At most this many candidate sets: each costs a pass over the planner's
/// sample.
pub const MAX_ALTERNATIVES: usize = 16;

fn push_set(out: &mut Vec<Vec<Vec<u8>>>, set: Option<Vec<Vec<u8>>>) {
    let Some(mut set) = set else { return };
    set.sort();
    set.dedup();
    let ok = !set.is_empty() && set.len() <= MAX_SET && set.iter().all(|l| l.len() >= MIN_LEN);
    if ok && out.len() < MAX_ALTERNATIVES && !out.contains(&set) {
        out.push(set);
    }
}

/// [`required`]'s walk, keeping every candidate set it weighs.
fn collect(hir: &Hir, out: &mut Vec<Vec<Vec<u8>>>, depth: usize) {
    if depth > 8 {
        return;
    }
    match hir.kind() {
        HirKind::Capture(c) => collect(&c.sub, out, depth + 1),
        HirKind::Repetition(r) if r.min >= 1 => collect(&r.sub, out, depth + 1),
        HirKind::Concat(parts) => {
            for i in 0..parts.len().min(32) {
                let tail = Hir::concat(parts[i..].to_vec());
                push_set(out, best_window(prefixes(&tail)));
                collect(&parts[i], out, depth + 1);
            }
        }
        _ => push_set(out, required(hir)),
    }
}

/// The static rank of a set when no sample tells (higher is better):
/// [`score`] (length against set size), then the rarer weakest byte.
pub fn static_rank(set: &RequiredLiterals) -> (i64, i16) {
    (
        score(&set.literals),
        -i16::from(set_commonness(&set.literals)),
    )
}

enum Searcher {
    One(memmem::Finder<'static>),
    Teddy(packed::Searcher),
    Automaton(aho_corasick::AhoCorasick),
}

/// Finds candidate positions: occurrences of a [`RequiredLiterals`] set.
///
/// A candidate is only a *candidate*: its line may not match (false
/// positives are allowed, false negatives never). Verify its line.
pub struct Prefilter {
    searcher: Searcher,
    literals: RequiredLiterals,
    /// The HIR the literals came from, for [`Prefilter::alternatives`].
    hir: Option<Hir>,
    /// [`alternatives`] of `hir`, on first use (tier 1 only asks).
    alternatives: std::sync::OnceLock<Vec<RequiredLiterals>>,
}

impl std::fmt::Debug for Prefilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prefilter")
            .field("literals", &self.literals)
            .finish()
    }
}

impl Prefilter {
    /// A searcher for `literals`: `memchr::memmem` for one, Teddy (SIMD,
    /// aho-corasick's packed searcher) for a set, an automaton where Teddy
    /// is unavailable.
    pub fn new(literals: RequiredLiterals) -> Prefilter {
        let lits = literals.literals();
        let searcher = if literals.folded {
            // Teddy and memmem compare bytes exactly.
            Searcher::Automaton(
                aho_corasick::AhoCorasick::builder()
                    .match_kind(aho_corasick::MatchKind::LeftmostFirst)
                    .ascii_case_insensitive(true)
                    .build(lits)
                    .expect("a few short literals always build"),
            )
        } else if lits.len() == 1 {
            Searcher::One(memmem::Finder::new(&lits[0]).into_owned())
        } else if let Some(t) = packed::Config::new().builder().extend(lits).build() {
            Searcher::Teddy(t)
        } else {
            Searcher::Automaton(
                aho_corasick::AhoCorasick::builder()
                    .match_kind(aho_corasick::MatchKind::LeftmostFirst)
                    .build(lits)
                    .expect("a few short literals always build"),
            )
        };
        Prefilter {
            searcher,
            literals,
            hir: None,
            alternatives: Default::default(),
        }
    }

    /// [`Prefilter::new`] for the literals of `hir`, which
    /// [`Prefilter::alternatives`] then walks again on first use.
    pub fn with_hir(literals: RequiredLiterals, hir: Hir) -> Prefilter {
        Prefilter {
            hir: Some(hir),
            ..Prefilter::new(literals)
        }
    }

    /// Every candidate necessary set ([`alternatives`]), this prefilter's
    /// own first; computed once.
    pub fn alternatives(&self) -> &[RequiredLiterals] {
        self.alternatives.get_or_init(|| {
            let mut v = match &self.hir {
                Some(h) => alternatives(h),
                None => Vec::new(),
            };
            v.retain(|a| a != &self.literals);
            v.insert(0, self.literals.clone());
            v
        })
    }

    /// The literals searched for.
    pub fn literals(&self) -> &RequiredLiterals {
        &self.literals
    }

    /// The first candidate position in `hay[at..end]`: the start of an
    /// occurrence of a required literal. May be a false positive.
    #[inline]
    pub fn find(&self, hay: &[u8], at: usize, end: usize) -> Option<usize> {
        match &self.searcher {
            Searcher::One(f) => f.find(&hay[at..end]).map(|i| at + i),
            Searcher::Teddy(t) => t
                .find_in(hay, aho_corasick::Span::from(at..end))
                .map(|m| m.start()),
            Searcher::Automaton(ac) => ac
                .find(aho_corasick::Input::new(hay).span(at..end))
                .map(|m| m.start()),
        }
    }

    /// The literal, when the set is one (searched by `memmem`).
    pub fn single(&self) -> Option<&[u8]> {
        match &self.searcher {
            Searcher::One(f) => Some(f.needle()),
            _ => None,
        }
    }

    /// A short name for reports (`memmem`, `teddy`, `aho-corasick`).
    pub fn name(&self) -> &'static str {
        match self.searcher {
            Searcher::One(_) => "memmem",
            Searcher::Teddy(_) => "teddy",
            Searcher::Automaton(_) => "aho-corasick",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(re: &str, ci: bool) -> Option<Vec<String>> {
        let hir = regex_syntax::ParserBuilder::new()
            .case_insensitive(ci)
            .multi_line(true)
            .utf8(false)
            .build()
            .parse(re)
            .unwrap();
        RequiredLiterals::from_hir(&hir).map(|r| {
            r.literals()
                .iter()
                .map(|l| String::from_utf8_lossy(l).into_owned())
                .collect()
        })
    }

    fn s(v: &[&str]) -> Option<Vec<String>> {
        Some(v.iter().map(|x| x.to_string()).collect())
    }

    #[test]
    fn inner_prefix_and_suffix_literals() {
        assert_eq!(req(r".*rt=1\.879", false), s(&["rt=1.879"]));
        assert_eq!(req(r"^(?:.*rt=1\.879)$", false), s(&["rt=1.879"]));
        assert_eq!(req(r"latency_ms=19\d\d", false), s(&["latency_ms=19"]));
        assert_eq!(req(r"\d+\.exe", false), s(&[".exe"]));
        assert_eq!(req(r"[0-9a-f]{6}dead", false), s(&["dead"]));
    }

    #[test]
    fn optional_parts_are_not_required() {
        assert_eq!(req(r"(foo)?barbaz", false), s(&["barbaz"]));
        assert_eq!(req(r"(?:foo){0,}bar", false), s(&["bar"]));
        assert_eq!(req(r"(?:foox){1,}", false), s(&["foox"]));
        assert_eq!(req(r"a*", false), None);
        assert_eq!(req(r"\d{4}-\d\d", false), None);
    }

    #[test]
    fn alternations_give_sets() {
        assert_eq!(req(r"(?:fooo|barr)\d", false), s(&["barr", "fooo"]));
        // A branch without a literal voids the set.
        assert_eq!(req(r"(?:fooo|\d+)x", false), None);
    }

    #[test]
    fn case_insensitive_literals_are_expanded() {
        let got = req("(?i-u)err_503", false).unwrap();
        assert_eq!(got, vec!["_503".to_string()]);
        // Unicode folding: `k` includes KELVIN SIGN (U+212A), which must be
        // among the variants when the window covers it.
        let got = req("kkk", true).unwrap();
        assert!(got.iter().any(|l| l.contains('\u{212A}')), "{got:?}");
    }

    #[test]
    fn case_insensitive_windows_prefer_rare_bytes() {
        // REGRESSION: `-i nullpointerexception` searched for the last
        // window, `ion` (on 19% of generated log lines), because only a
        // tail's whole prefix set was scored; every 3-byte window is now a
        // candidate and the rarest bytes win a tie.
        let got = req("(?i-u)nullpointerexception", false).unwrap();
        assert_eq!(got.len(), 8, "{got:?}");
        assert!(
            got.iter()
                .all(|l| l.len() == 3 && l.to_ascii_lowercase().contains('x')),
            "{got:?}"
        );
    }

    fn alts(re: &str) -> Vec<Vec<String>> {
        let hir = regex_syntax::ParserBuilder::new()
            .multi_line(true)
            .utf8(false)
            .build()
            .parse(re)
            .unwrap();
        alternatives(&hir)
            .iter()
            .map(|r| {
                r.literals()
                    .iter()
                    .map(|l| String::from_utf8_lossy(l).into_owned())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn alternatives_list_every_necessary_set_the_static_pick_first() {
        let a = alts(r"web-\d\d (ERROR|WARN)");
        assert_eq!(a[0], vec!["web-".to_string()], "{a:?}");
        for want in [&["ERROR", "WARN"][..], &[" ERROR", " WARN"]] {
            let want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
            assert!(a.contains(&want), "{a:?}");
        }
        // Prefix, inner and suffix literals of a concatenation.
        let a = alts(r"start=\d+ middle \w+ endmark$");
        for want in ["start=", " middle ", " endmark"] {
            assert!(
                a.iter().any(|s| s == &vec![want.to_string()]),
                "{want}: {a:?}"
            );
        }
        // No literal: none; an optional part contributes nothing.
        assert!(alts(r"\d{4}-\d\d").is_empty());
        assert!(alts(r"(?:opt)?barbaz").iter().all(|s| s[0] != "opt"));
        // Every set is one of 1-32 literals of 3+ bytes.
        for s in alts(r"(?i)timeout|refused") {
            assert!(!s.is_empty() && s.len() <= MAX_SET, "{s:?}");
            assert!(s.iter().all(|l| l.len() >= MIN_LEN), "{s:?}");
        }
    }

    #[test]
    fn folded_sets_keep_whole_words_under_ascii_case() {
        let hir = regex_syntax::ParserBuilder::new()
            .utf8(false)
            .build()
            .parse(r"(?i)timeout|refused")
            .unwrap();
        let all = alternatives(&hir);
        let folded: Vec<&RequiredLiterals> = all.iter().filter(|r| r.folded()).collect();
        // `s` is `[Ssſ]` under Unicode `-i`: it stays a class, `refu` is
        // the longest folded prefix of that branch.
        assert!(
            folded
                .iter()
                .any(|r| r.literals() == [b"refu".to_vec(), b"timeout".to_vec()]),
            "{all:?}"
        );
        // The exact sets come first; a regex without case classes has no
        // folded set.
        assert!(!all[0].folded());
        let plain = regex_syntax::ParserBuilder::new()
            .build()
            .parse(r"web-\d\d (ERROR|WARN)")
            .unwrap();
        assert!(alternatives(&plain).iter().all(|r| !r.folded()));
        // The folded prefilter finds every ASCII case variant.
        let p = Prefilter::new(folded[0].clone());
        let hay = b"x TimeOUT y\nREFUSED";
        assert_eq!(p.find(hay, 0, hay.len()), Some(2));
        assert_eq!(p.find(hay, 3, hay.len()), Some(12));
    }

    /// Random regexes over a small alphabet (case classes, `-i` groups
    /// around `k`/`s` whose Unicode variants are not ASCII, alternations,
    /// repetitions) and random lines holding those variants: every line
    /// the regex matches holds a member of every candidate set, exact ones
    /// byte for byte, folded ones up to ASCII case.
    #[test]
    fn every_alternative_is_necessary_on_random_regexes_and_lines() {
        const PIECES: &[&str] = &[
            "ab",
            "(?i)ab",
            "(?i:ks)",
            "[aA]bc",
            "(?i:ab|cd)e",
            "x+",
            "(?i)s",
            "K",
            "(?i:abc)?",
            "[bB][cC][dD]",
            "d{2}",
            "(?i:SAKE)",
            "e|x",
            "@",
            "(?:#)+",
            "(a|@)",
            "[ab]+@",
        ];
        const BYTES: &[&str] = &[
            "a", "A", "b", "B", "c", "C", "d", "D", "e", "E", "k", "K", "s", "S", "x", " ",
            "\u{212A}", "ſ", "@", "#",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let (mut checked, mut folded_sets, mut rare_sets) = (0, 0, 0);
        for _ in 0..400 {
            let re: String = (0..1 + next(4))
                .map(|_| PIECES[next(PIECES.len())])
                .collect();
            let Ok(hir) = regex_syntax::ParserBuilder::new()
                .utf8(false)
                .build()
                .parse(&re)
            else {
                continue;
            };
            let matcher = regex::bytes::Regex::new(&re).unwrap();
            let mut sets = alternatives(&hir);
            sets.extend(rare_byte_sets(&hir));
            folded_sets += sets.iter().filter(|s| s.folded()).count();
            rare_sets += sets
                .iter()
                .filter(|s| s.literals().iter().any(|l| l.len() < MIN_LEN))
                .count();
            for _ in 0..60 {
                let line: String = (0..next(14)).map(|_| BYTES[next(BYTES.len())]).collect();
                let line = line.as_bytes();
                if !matcher.is_match(line) {
                    continue;
                }
                checked += 1;
                for set in &sets {
                    let holds = set.literals().iter().any(|l| {
                        line.windows(l.len()).any(|w| match set.folded() {
                            true => w.eq_ignore_ascii_case(l),
                            false => w == &l[..],
                        })
                    });
                    assert!(
                        holds,
                        "{re}: {:?} misses {:?}",
                        set,
                        String::from_utf8_lossy(line)
                    );
                }
            }
        }
        assert!(
            checked > 1000 && folded_sets > 50 && rare_sets > 50,
            "{checked} lines, {folded_sets} folded sets, {rare_sets} rare-byte sets"
        );
    }

    #[test]
    fn rare_bytes_make_sets_of_their_own() {
        let parse = |re: &str| {
            regex_syntax::ParserBuilder::new()
                .build()
                .parse(re)
                .unwrap()
        };
        let email = parse(r"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}");
        assert_eq!(RequiredLiterals::from_hir(&email), None);
        let sets = rare_byte_sets(&email);
        assert_eq!(
            sets,
            vec![RequiredLiterals::from_literals(vec![b"@".to_vec()])]
        );
        // Common bytes, optional parts and alternations give none.
        for re in [r"\d{4}-\d\d", r"\d+\.\d+", r"(?:@)?x", r"a|@", r"\w+=\w+"] {
            assert!(rare_byte_sets(&parse(re)).is_empty(), "{re}");
        }
        // Inside groups and repetitions that must match once.
        assert_eq!(rare_byte_sets(&parse(r"(x#)+\d")).len(), 1);
    }

    #[test]
    fn prefilter_finds_every_literal() {
        let r = RequiredLiterals {
            literals: vec![b"abc".to_vec(), b"xyz".to_vec()],
            folded: false,
        };
        let p = Prefilter::new(r);
        let hay = b"---xyz---abc";
        assert_eq!(p.find(hay, 0, hay.len()), Some(3));
        assert_eq!(p.find(hay, 4, hay.len()), Some(9));
        assert_eq!(p.find(hay, 4, 11), None);
    }
}
