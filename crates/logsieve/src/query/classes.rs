//! Class strings: regexes whose every match is a fixed-length run of byte
//! classes (then, perhaps, greedy runs of a class), which the GPU's `scan`
//! answers exactly in one pass.
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
//! * a repetition of one class at the start, or at the end with nothing
//!   after it, keeps only its minimum (`X\d+` matches a line exactly when
//!   `X\d` does: a match's prefix is one, and one is a match);
//! * bounded repetition with `min == max` is expanded (`\d{4}`);
//! * after the fixed part, a run of one class is a [`Step`] the kernel
//!   takes greedily from a cursor (`client=10\.\d+\.\d+`): exact where
//!   what follows takes at least one byte and none of the run's class, or
//!   is `$`, or is `\b` after a class of word bytes only (or of other
//!   bytes only); a fixed position must share no byte with the runs, so
//!   that two starts' walks never cover the same bytes (linear time);
//! * `\b` is allowed at either end, not beside a cut repetition at the
//!   start (`\b\d+X` is not `\b\dX`: "-11X" matches only the first);
//! * `^` and `$` at the ends (a line's edges, as the automaton reads
//!   them), and `^C*` before the fixed part as its head;
//! * alternations, also inside a concatenation, multiplied out into at
//!   most [`MAX_ALTS`] strings ([`ClassSet`]); no other look-around (an
//!   optional part inside is a step of at most one byte: `xa?b`).
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

/// A regex's matches as a fixed-length run of byte classes, then steps
/// matched greedily, with `\b` and line-edge conditions at its ends. Exact:
/// a line holds a match of the regex if and only if
/// [`ClassString::is_match_line`] says so (on ASCII lines when
/// [`ClassString::unicode`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassString {
    /// Per position of the fixed part, the bytes it takes (never `\n`: a
    /// match is in a line). `scan` finds its rarest bytes.
    pub masks: Vec<ByteSet>,
    /// After the fixed part, in order: runs of one class, each taking as
    /// many bytes as it can (`client=10\.\d+\.\d+`, `bytes=\d{6,}$`).
    pub steps: Vec<Step>,
    /// `\b` before the first position.
    pub word_before: bool,
    /// `\b` after the last step.
    pub word_after: bool,
    /// `^`: the match starts a line, or (with [`ClassString::head`]) only
    /// bytes of the head come before it in its line.
    pub line_start: bool,
    /// `$`: the match ends its line.
    pub line_end: bool,
    /// `^\s*`: the bytes a line may hold before the match.
    pub head: Option<ByteSet>,
    /// Exact on ASCII bytes only (a class with non-ASCII members, or a
    /// Unicode `\b`).
    pub unicode: bool,
    /// Each fixed position's word-wide test ([`LaneTest::of`]), found
    /// once here rather than on every search and every price.
    lanes: Vec<Option<LaneTest>>,
}

/// A run of one class after a class string's fixed part.
///
/// A step takes as many bytes of its class as it can, up to `max`: exact
/// because the next step takes at least one byte and none of this class
/// (so a shorter run could not be followed), or nothing follows but `$`,
/// or `\b` after a class of only word bytes or only other bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The bytes it takes (never `\n`).
    pub mask: ByteSet,
    /// The fewest bytes.
    pub min: u32,
    /// The most, `None` without bound.
    pub max: Option<u32>,
}

/// The largest bound a [`Step`] keeps (the kernel's 8 bits, 255 meaning
/// none).
pub const MAX_STEP_COUNT: u32 = 254;

/// The most alternatives of a class set (one `scan` pass each, line
/// bits OR-ed: `support::MAX_SCANS`).
pub const MAX_ALTS: usize = 4;

/// One item of a flattened concatenation.
#[derive(Clone, Copy)]
enum Item {
    Pos(ByteSet),
    /// A repetition of one class: its minimum and maximum (`None`
    /// unbounded).
    Open(ByteSet, u32, Option<u32>),
    /// `\b`.
    Word,
    /// `^`.
    LineStart,
    /// `$`.
    LineEnd,
}

fn contains(m: &ByteSet, b: u8) -> bool {
    m[usize::from(b >> 6)] >> (b & 63) & 1 == 1
}

fn disjoint(a: &ByteSet, b: &ByteSet) -> bool {
    a.iter().zip(b).all(|(x, y)| x & y == 0)
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
        let line_start = matches!(items.first(), Some(Item::LineStart));
        if line_start {
            items.remove(0);
        }
        let line_end = matches!(items.last(), Some(Item::LineEnd));
        if line_end {
            items.pop();
        }
        let word_before = matches!(items.first(), Some(Item::Word));
        if word_before {
            items.remove(0);
        }
        let word_after = matches!(items.last(), Some(Item::Word));
        if word_after {
            items.pop();
        }
        let mut masks = Vec::new();
        let mut steps: Vec<Step> = Vec::new();
        let mut head = None;
        for (i, it) in items.into_iter().enumerate() {
            match it {
                Item::Pos(m) if steps.is_empty() => masks.push(m),
                Item::Pos(mask) => steps.push(Step {
                    mask,
                    min: 1,
                    max: Some(1),
                }),
                // At the start: any match holds one of its minimum (cut),
                // but `\b` beside it is not (`\b\d+X` is not `\b\dX`:
                // "-11X" matches only the first); after `^` it is the
                // head, the bytes before the match in its line.
                Item::Open(m, min, max) if i == 0 => {
                    if word_before || (line_start && max.is_some()) {
                        return None;
                    }
                    if line_start {
                        head = Some(m);
                    }
                    masks.extend(std::iter::repeat_n(m, min as usize));
                }
                Item::Open(mask, min, max) => {
                    if min > MAX_STEP_COUNT || max.is_some_and(|x| x > MAX_STEP_COUNT) {
                        return None;
                    }
                    if max != Some(0) {
                        steps.push(Step { mask, min, max });
                    }
                }
                Item::Word | Item::LineStart | Item::LineEnd => return None,
            }
            if masks.len() + steps.len() > MAX_LEN {
                return None;
            }
        }
        // A last run with nothing after it: its minimum (a match's prefix
        // of that length is one).
        if let Some(last) = steps.last_mut() {
            if !line_end && !word_after {
                last.max = Some(last.min);
            }
        }
        steps.retain(|s| s.max != Some(0));
        // Steps of a fixed count right after the fixed part are positions.
        while let Some(&Step { mask, min, max }) = steps.first() {
            if max != Some(min) || masks.len() + min as usize + steps.len() > MAX_LEN + 1 {
                break;
            }
            masks.extend(std::iter::repeat_n(mask, min as usize));
            steps.remove(0);
        }
        let no_nl = |m: &mut ByteSet| m[0] &= !(1 << b'\n');
        masks.iter_mut().for_each(no_nl);
        steps.iter_mut().for_each(|s| no_nl(&mut s.mask));
        head.iter_mut().for_each(no_nl);
        if masks.is_empty()
            || masks.iter().any(|m| count(m) == 0)
            || steps.iter().any(|s| count(&s.mask) == 0 && s.min > 0)
        {
            return None;
        }
        // Greedy runs are exact only where what follows cannot start in
        // their class (see `Step`).
        for (i, st) in steps.iter().enumerate() {
            if st.max == Some(st.min) {
                continue;
            }
            let ok = match steps.get(i + 1) {
                Some(next) => next.min >= 1 && disjoint(&st.mask, &next.mask),
                None if word_after => {
                    let mut bytes = (0..=255u8).filter(|&b| contains(&st.mask, b));
                    let first = bytes.next().map(is_word);
                    st.min >= 1 && bytes.all(|b| Some(is_word(b)) == first)
                }
                None => line_end,
            };
            if !ok {
                return None;
            }
        }
        // Linear time: for each walk (the steps forward, the head back)
        // some fixed position takes none of its bytes, so one start's
        // fixed part never lies in another's walk, and a byte is walked
        // only by starts within one fixed part's length of each other.
        let mut forward: ByteSet = [0; 4];
        for st in &steps {
            for (w, m) in forward.iter_mut().zip(&st.mask) {
                *w |= m;
            }
        }
        let apart = |walk: &ByteSet| *walk == [0; 4] || masks.iter().any(|m| disjoint(m, walk));
        if !apart(&forward) || !apart(&head.unwrap_or([0; 4])) {
            return None;
        }
        let cs = ClassString {
            lanes: masks.iter().map(LaneTest::of).collect(),
            masks,
            steps,
            word_before,
            word_after,
            line_start,
            line_end,
            head,
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
        self.tests_of(&self.masks)
    }

    /// How `scan` tests each step's bytes, then the head's (as
    /// [`ClassString::tests`]).
    pub fn walk_tests(&self) -> Option<Vec<PosTest>> {
        let mut v: Vec<ByteSet> = self.steps.iter().map(|s| s.mask).collect();
        v.extend(self.head);
        self.tests_of(&v)
    }

    fn tests_of(&self, masks: &[ByteSet]) -> Option<Vec<PosTest>> {
        let classes = self.classes();
        if classes.len() > MAX_CLASSES {
            return None;
        }
        Some(
            masks
                .iter()
                .map(|m| match test_of(m) {
                    Some(t) => t,
                    None => PosTest::Class(classes.iter().position(|c| c == m).expect("listed")),
                })
                .collect(),
        )
    }

    /// The distinct sets that are neither one byte nor one letter in both
    /// cases, in order of first position (fixed part, steps, head).
    pub fn classes(&self) -> Vec<ByteSet> {
        let mut v: Vec<ByteSet> = Vec::new();
        let all = self
            .masks
            .iter()
            .chain(self.steps.iter().map(|s| &s.mask))
            .chain(&self.head);
        for m in all {
            if test_of(m).is_none() && !v.contains(m) {
                v.push(*m);
            }
        }
        v
    }

    /// Each position's word-wide test ([`LaneTest::of`]), `None` where it
    /// is looked up in its class's bits.
    pub fn lane_tests(&self) -> &[Option<LaneTest>] {
        &self.lanes
    }

    /// What a survivor of `scan`'s byte tests costs to check in full, in
    /// units of one word's range tests: a unit per four positions, one
    /// more per position looked up in its class's bits, two per step and
    /// for a head (the planner's price).
    pub fn test_units(&self) -> usize {
        self.masks.len().div_ceil(4)
            + self.lanes.iter().filter(|t| t.is_none()).count()
            + 2 * (self.steps.len() + usize::from(self.head.is_some()))
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
        let mut q = p + n;
        for st in &self.steps {
            let mut k = 0;
            while st.max.is_none_or(|x| k < x) && q < line.len() && contains(&st.mask, line[q]) {
                q += 1;
                k += 1;
            }
            if k < st.min {
                return false;
            }
        }
        let word = |i: Option<usize>| i.is_some_and(|i| is_word(line[i]));
        if self.word_before && word(p.checked_sub(1)) == word(Some(p)) {
            return false;
        }
        let after = (q < line.len()).then_some(q);
        if self.word_after && word(Some(q - 1)) == word(after) {
            return false;
        }
        if self.line_start {
            let before = &line[..p];
            let ok = match &self.head {
                Some(h) => before.iter().all(|&b| contains(h, b)),
                None => before.is_empty(),
            };
            if !ok {
                return false;
            }
        }
        !(self.line_end && q < line.len())
    }

    /// True when `line` (without its `\n`) holds a match.
    pub fn is_match_line(&self, line: &[u8]) -> bool {
        (0..line.len()).any(|p| self.matches_at(line, p))
    }
}

/// How `scan`'s `class_at` tests a position four to a word: OR 0x20 into
/// the byte when `fold` (an ASCII letter's two cases), then one of up to
/// two inclusive ranges of bytes below 0x80. Two SWAR range tests decide
/// four positions with no lookup; a position with no such test (`\w`'s
/// four ranges, a byte >= 0x80) is looked up in its class's bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaneTest {
    /// OR 0x20 into the byte before the ranges.
    pub fold: bool,
    /// Inclusive ranges, every bound below 0x80; the second may be absent.
    pub ranges: [Option<(u8, u8)>; 2],
}

impl LaneTest {
    /// The test of `m`, if a fold and two ranges take exactly its bytes.
    pub fn of(m: &ByteSet) -> Option<LaneTest> {
        if (0x80..=0xFFu8).any(|b| contains(m, b)) {
            return None;
        }
        // The fewer ranges (`q|Q` folded, not two bytes): the same cost on
        // the GPU, a plainer test to read.
        [false, true]
            .into_iter()
            .filter_map(|fold| {
                let mut img = [false; 128];
                for b in (0..0x80u8).filter(|&b| contains(m, b)) {
                    img[usize::from(if fold { b | 0x20 } else { b })] = true;
                }
                let mut runs = Vec::new();
                let mut b = 0;
                while b < 128 {
                    if img[b] {
                        let s = b;
                        while b + 1 < 128 && img[b + 1] {
                            b += 1;
                        }
                        runs.push((s as u8, b as u8));
                    }
                    b += 1;
                }
                if runs.len() > 2 {
                    return None;
                }
                let t = LaneTest {
                    fold,
                    ranges: [runs.first().copied(), runs.get(1).copied()],
                };
                (0..=255u8)
                    .all(|b| t.contains(b) == contains(m, b))
                    .then_some(t)
            })
            .min_by_key(|t| t.ranges.iter().flatten().count())
    }

    /// True when byte `b` passes (the host's reference for the kernel).
    pub fn contains(&self, b: u8) -> bool {
        let x = if self.fold { b | 0x20 } else { b };
        b < 0x80
            && self
                .ranges
                .iter()
                .flatten()
                .any(|&(lo, hi)| (lo..=hi).contains(&x))
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
    /// positions", "a class string of 10 positions and 5 steps", for
    /// `--explain`.
    pub fn describe(&self) -> String {
        let lens: Vec<String> = self
            .alts
            .iter()
            .map(|a| a.masks.len().to_string())
            .collect();
        let steps: usize = self.alts.iter().map(|a| a.steps.len()).sum();
        let steps = match steps {
            0 => String::new(),
            1 => " and 1 step".to_string(),
            n => format!(" and {n} steps"),
        };
        match self.alts.len() {
            1 => format!("a class string of {} positions{steps}", lens[0]),
            n => format!("{n} class strings of {} positions{steps}", lens.join(", ")),
        }
    }

    /// Exact on ASCII bytes only (some class or `\b` is Unicode).
    pub fn unicode(&self) -> bool {
        self.alts.iter().any(|a| a.unicode)
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
        // As the automaton reads them: a line's edges.
        HirKind::Look(Look::Start | Look::StartLF) => one(vec![Item::LineStart]),
        HirKind::Look(Look::End | Look::EndLF) => one(vec![Item::LineEnd]),
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
                max => match sub.as_slice() {
                    [Item::Pos(m)] if r.min as usize <= MAX_LEN => {
                        out.push(Item::Open(*m, r.min, max));
                        Some(vec![out])
                    }
                    _ => None,
                },
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
            ("\\d{1,3}\\.\\d", 3),
            ("a?b", 1),
            ("^ERROR", 5),
        ] {
            let c = cs(re).unwrap_or_else(|| panic!("{re}"));
            assert_eq!((c.masks.len(), c.steps.len()), (len, 0), "{re}");
        }
        // Runs after the fixed part, taken greedily: each followed by a
        // class it shares no byte with, or by `$`, or by `\b` after word
        // bytes only.
        for (re, len, steps) in [
            ("client=10\\.\\d+\\.\\d+\\.\\d+", 10, 5),
            ("bytes=\\d{6,}$", 6, 1),
            ("sshd\\[\\d+\\]: Failed", 5, 10),
            ("x\\d+\\b", 1, 1),
            ("x\\d{2,4}-", 1, 2),
            ("^\\s+at ", 4, 0),
            ("ERROR$", 5, 0),
            ("xa?b", 1, 2),
        ] {
            let c = cs(re).unwrap_or_else(|| panic!("{re}"));
            assert_eq!((c.masks.len(), c.steps.len()), (len, steps), "{re}");
        }
        let c = cs("^\\s+at \\S+$").unwrap();
        assert!(c.line_start && c.line_end && c.head.is_some());
        for re in [
            "[0-9a-f]{32}",               // no byte to find it by
            "user=u1\\d*7 ",              // a run, then a byte of its class
            "x\\d+\\d*y",                 // a run, then one that may be empty
            "x[a-]+\\b",                  // \b after word and other bytes
            "x[ax]+y",                    // every fixed byte walked: quadratic
            "^\\d{1,3}x",                 // a bounded head
            "timeout|refused",            // alternation
            "a\\bb",                      // \b inside
            "a$b",                        // `$` inside
            "\\b\\d+x",                   // \b beside an open repetition
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
            "ab|\\d+x\\d*x",
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

    /// A lane test takes exactly its class's bytes, and the classes people
    /// type have one.
    #[test]
    fn lane_tests_are_exact() {
        let set = |f: &dyn Fn(u8) -> bool| {
            let mut m: ByteSet = [0; 4];
            for b in (0..=255u8).filter(|&b| f(b)) {
                m[usize::from(b >> 6)] |= 1 << (b & 63);
            }
            m
        };
        let digit = set(&|b| b.is_ascii_digit());
        let t = LaneTest::of(&digit).unwrap();
        assert_eq!((t.fold, t.ranges), (false, [Some((b'0', b'9')), None]));
        assert!(
            LaneTest::of(&set(&|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())).is_some()
        );
        let letter = LaneTest::of(&set(&|b| b == b'q' || b == b'Q')).unwrap();
        assert_eq!(
            (letter.fold, letter.ranges),
            (true, [Some((b'q', b'q')), None])
        );
        // Folding makes room: [A-Za-z] is [a-z] after OR-ing 0x20; but
        // [0-9A-Za-z] folded would take 0x10-0x19 too.
        let alpha = LaneTest::of(&set(&|b| b.is_ascii_alphabetic())).unwrap();
        assert_eq!(
            (alpha.fold, alpha.ranges),
            (true, [Some((b'a', b'z')), None])
        );
        assert!(LaneTest::of(&set(&|b| b.is_ascii_alphanumeric())).is_none());
        assert!(LaneTest::of(&set(&|b| b == 0xE9)).is_none());
        assert!(LaneTest::of(&set(&|b| b.is_ascii_alphanumeric() || b == b'_')).is_none());
        // [0-9A-Fa-f] folded would take 0x10-0x19 too: three ranges, none.
        assert!(LaneTest::of(&set(&|b| b.is_ascii_hexdigit())).is_none());
        // Random sets: whenever there is a test, it is exact.
        let mut rng = crate::gen::SplitMix64(7);
        let mut found = 0;
        for _ in 0..20_000 {
            let x = rng.next_u64();
            let (a, b, c) = (
                (x % 128) as u8,
                ((x >> 8) % 128) as u8,
                ((x >> 16) % 16) as u8,
            );
            let (lo, hi) = (a.min(b), a.max(b));
            let fold = x >> 40 & 1 == 1;
            let m = set(&|y| {
                let z = if fold { y | 0x20 } else { y };
                y < 0x80 && ((lo..=hi).contains(&z) || z == c.wrapping_mul(7))
            });
            if m == [0; 4] {
                continue;
            }
            if let Some(t) = LaneTest::of(&m) {
                found += 1;
                for y in 0..=255u8 {
                    assert_eq!(t.contains(y), contains(&m, y), "{t:?} on {y}");
                }
            }
        }
        assert!(found > 10_000, "{found}");
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
            b"client=10.1.22.3",
            b"client=10.1.22.",
            b"client=10..2.3",
            b"xclient=10.255.0.1 y",
            b"bytes=123456",
            b"bytes=12345",
            b"bytes=1234567 ",
            b"a bytes=99 bytes=1234567",
            b"   at x.y(Z.java:1)",
            b"at x",
            b" x at y",
            b"\tat ",
            b"x12-",
            b"x12345-",
            b"x1-x1234-",
            b"ERROR",
            b"ERROR ",
            b"x ERROR",
            b"xab",
            b"xb",
            b"xaab",
            b"x-ab",
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
            "client=10\\.\\d+\\.\\d+\\.\\d+",
            "bytes=\\d{6,}$",
            "^\\s+at ",
            "^\\s*at \\S+$",
            "x\\d{2,4}-",
            "x\\d+\\b",
            "ERROR$",
            "^ERROR",
            "\\d{1,3}\\.\\d",
            "xa?b",
        ] {
            let c = cs(re).unwrap_or_else(|| panic!("{re}"));
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
