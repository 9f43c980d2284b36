//! Tier 2 of regex on the GPU: a regex compiled into a position (Glushkov)
//! automaton that a bit-parallel matcher runs, one bit per position, 32
//! positions to a state word (WGSL has no 64-bit integers).
//!
//! The regex is the CPU matcher's own pattern (`-w`, `-x`, `--wildcard` and
//! `-i` already folded into it by `cpu::matcher`), parsed by regex-syntax
//! with the same flags, so the automaton answers exactly what
//! [`crate::Query::is_match_line`] answers, line by line:
//!
//! * Each byte class of the HIR is a position with a 256-bit byte mask;
//!   bounded repetition is expanded (`a{2,4}` is `aaa?a?`) up to
//!   [`MAX_POSITIONS`] positions in all; position 0 is the start, always
//!   active (an unanchored search).
//! * One step is `D' = (follow(D) | conditional(D)) & mask[byte]`:
//!   `follow` is the union of the follow sets of the active positions,
//!   read from split tables (for each byte of the state word, 256 unions
//!   precomputed: Navarro–Raffinot), so a step costs one load per non-zero
//!   state byte.
//! * Look-around (`^`, `$`, `\b`, `\B`, `\<`, `\>`, CRLF anchors) becomes a
//!   condition on an edge, checked at the boundary it stands on from the
//!   previous byte's and the next byte's class (`^`: line start, `$`: line
//!   end: the CPU matcher runs `multi_line` over one line). Conditional
//!   edges are few: [`Group`]s of (source, condition) → targets, at most
//!   [`MAX_GROUPS`].
//! * Unicode: a class with non-ASCII members, and a Unicode word boundary,
//!   are exact on ASCII bytes only. Such an automaton marks the regex
//!   [`Automaton::unicode`]: a line holding a byte >= 0x80 is *undecided*
//!   ([`Verdict::Undecided`]) and the CPU matcher decides it. Byte classes
//!   (`(?-u:…)`, wildcards) and non-ASCII literals are exact bytes.

use regex_syntax::hir::{Class, Hir, HirKind, Look};

use crate::query::{Query, QueryKind};

/// The most positions (the start included): eight 32-bit state words.
pub const MAX_POSITIONS: usize = 256;
/// The most conditional edge groups (look-around).
pub const MAX_GROUPS: usize = 64;
/// The most state words.
pub const MAX_WORDS: usize = MAX_POSITIONS / 32;

/// Conditions on a boundary, one bit each (a condition set must hold as a
/// whole).
pub mod cond {
    /// `\A`, `^`: the line's start.
    pub const START: u16 = 1;
    /// `\z`, `$`: the line's end.
    pub const END: u16 = 2;
    /// `(?R)^`: the line's start or after `\r`.
    pub const START_CR: u16 = 4;
    /// `(?R)$`: the line's end or before `\r`.
    pub const END_CR: u16 = 8;
    /// `\b`.
    pub const WORD: u16 = 16;
    /// `\B`.
    pub const NOT_WORD: u16 = 32;
    /// `\<`, `\b{start}`.
    pub const WORD_START: u16 = 64;
    /// `\>`, `\b{end}`.
    pub const WORD_END: u16 = 128;
    /// `\b{start-half}`.
    pub const START_HALF: u16 = 256;
    /// `\b{end-half}`.
    pub const END_HALF: u16 = 512;
}

/// The conditions satisfied at a boundary. `prev`/`next`: the bytes on
/// either side (`None` at the line's edges).
pub fn satisfied(prev: Option<u8>, next: Option<u8>) -> u16 {
    let w = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_');
    let (pw, nw) = (w(prev), w(next));
    let mut s = 0;
    if prev.is_none() {
        s |= cond::START | cond::START_CR;
    }
    if next.is_none() {
        s |= cond::END | cond::END_CR;
    }
    if prev == Some(b'\r') {
        s |= cond::START_CR;
    }
    if next == Some(b'\r') {
        s |= cond::END_CR;
    }
    s |= if pw != nw { cond::WORD } else { cond::NOT_WORD };
    if !pw && nw {
        s |= cond::WORD_START;
    }
    if pw && !nw {
        s |= cond::WORD_END;
    }
    if !pw {
        s |= cond::START_HALF;
    }
    if !nw {
        s |= cond::END_HALF;
    }
    s
}

/// True when some boundary satisfies all of `c`.
fn satisfiable(c: u16) -> bool {
    const BYTES: [Option<u8>; 4] = [None, Some(b'a'), Some(b' '), Some(b'\r')];
    BYTES
        .iter()
        .any(|&p| BYTES.iter().any(|&n| c & !satisfied(p, n) == 0))
}

/// Conditional edges: from position `from`, when `cond` holds at the
/// boundary, to the positions of `to` (state words), or to acceptance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// The source position.
    pub from: u32,
    /// The conditions ([`cond`]) that must all hold at the boundary.
    pub cond: u16,
    /// True: the line is accepted (and `to` is empty).
    pub accept: bool,
    /// The target positions, as state words.
    pub to: Vec<u32>,
}

/// A compiled position automaton.
#[derive(Clone, Debug)]
pub struct Automaton {
    /// Positions, the start (0) included.
    pub positions: usize,
    /// 32-bit state words.
    pub words: usize,
    /// `masks[b * words + w]`: positions whose class holds byte `b`.
    pub masks: Vec<u32>,
    /// `follow[((w * 4 + k) * 256 + v) * words + u]`: word `u` of the union
    /// of the unconditional follow sets of the positions set in byte `k`
    /// (value `v`) of state word `w`.
    pub follow: Vec<u32>,
    /// Positions after which the line is accepted unconditionally.
    pub last: Vec<u32>,
    /// Conditional edges and acceptances.
    pub groups: Vec<Group>,
    /// Exact on ASCII bytes only: lines with a byte >= 0x80 are undecided.
    pub unicode: bool,
    /// The extended shift-and form of `follow`, when every position's
    /// unconditional follow set is within {itself, the next position}.
    pub linear: Option<Linear>,
}

/// `follow(D) = ((D & shift) << 1) | (D & self_loop)` (Navarro–Raffinot's
/// extended shift-and): one shift and two ANDs a word instead of a table
/// lookup per state byte. Most regexes people type are of this form
/// (`ERROR_5\d\d`, `trace=[0-9a-f]{32}`, `sshd\[\d+\]`); conditional edges
/// (`\b`, `^`, `$`) stay in the groups. Both forms are unions over the set
/// bits, so agreeing on every single position makes them equal
/// (`linear_form_equals_the_tables`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Linear {
    /// Positions `p` whose follow set holds `p + 1`.
    pub shift: Vec<u32>,
    /// Positions whose follow set holds themselves.
    pub self_loop: Vec<u32>,
}

impl Linear {
    /// The form of the follow sets `fol` (one bit set per position), if
    /// they have it.
    fn of(fol: &[Vec<u32>], words: usize) -> Option<Linear> {
        let mut l = Linear {
            shift: vec![0; words],
            self_loop: vec![0; words],
        };
        for (p, f) in fol.iter().enumerate() {
            for (w, &x) in f.iter().enumerate() {
                let mut x = x;
                while x != 0 {
                    let q = w * 32 + x.trailing_zeros() as usize;
                    x &= x - 1;
                    let to = if q == p {
                        &mut l.self_loop
                    } else if q == p + 1 {
                        &mut l.shift
                    } else {
                        return None;
                    };
                    to[p / 32] |= 1 << (p % 32);
                }
            }
        }
        Some(l)
    }

    /// `follow(d)` into `f`.
    pub fn step(&self, d: &[u32], f: &mut [u32]) {
        let mut carry = 0;
        for (u, fu) in f.iter_mut().enumerate() {
            let sh = d[u] & self.shift[u];
            *fu = (sh << 1) | carry | (d[u] & self.self_loop[u]);
            carry = sh >> 31;
        }
    }
}

/// What the automaton says of a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The line matches.
    Match,
    /// The line does not match.
    NoMatch,
    /// A byte >= 0x80 under a Unicode-dependent regex: the CPU decides.
    Undecided,
}

/// A fragment of the construction: its first and last positions (with
/// the conditions passed before / after them) and the conditions under
/// which it matches the empty string (none: not nullable).
#[derive(Clone, Debug, Default)]
struct Frag {
    first: Vec<(u32, u16)>,
    last: Vec<(u32, u16)>,
    null: Vec<u16>,
}

fn dedup<T: Ord>(v: &mut Vec<T>) {
    v.sort();
    v.dedup();
}

struct Builder {
    /// Byte masks of positions 1.. (index 0 is the start's, empty).
    classes: Vec<[u64; 4]>,
    edges: Vec<(u32, u32, u16)>,
    unicode: bool,
}

impl Builder {
    fn position(&mut self, mask: [u64; 4]) -> Result<Frag, String> {
        if self.classes.len() >= MAX_POSITIONS {
            return Err(format!(
                "more than {} positions (bounded repetition is expanded)",
                MAX_POSITIONS - 1
            ));
        }
        let p = self.classes.len() as u32;
        self.classes.push(mask);
        Ok(Frag {
            first: vec![(p, 0)],
            last: vec![(p, 0)],
            null: Vec::new(),
        })
    }

    fn link(&mut self, last: &[(u32, u16)], first: &[(u32, u16)]) -> Result<(), String> {
        for &(l, c1) in last {
            for &(f, c2) in first {
                let c = c1 | c2;
                if satisfiable(c) {
                    self.edges.push((l, f, c));
                }
            }
        }
        if self.edges.len() > 1 << 20 {
            return Err("too many automaton edges".to_string());
        }
        Ok(())
    }

    fn concat(&mut self, a: Frag, b: Frag) -> Result<Frag, String> {
        self.link(&a.last, &b.first)?;
        let mut first = a.first;
        for &n in &a.null {
            for &(f, c) in &b.first {
                if satisfiable(n | c) {
                    first.push((f, n | c));
                }
            }
        }
        let mut last = b.last;
        for &(l, c) in &a.last {
            for &n in &b.null {
                if satisfiable(n | c) {
                    last.push((l, c | n));
                }
            }
        }
        let mut null = Vec::new();
        for &x in &a.null {
            for &y in &b.null {
                if satisfiable(x | y) {
                    null.push(x | y);
                }
            }
        }
        let mut f = Frag { first, last, null };
        dedup(&mut f.first);
        dedup(&mut f.last);
        dedup(&mut f.null);
        Ok(f)
    }

    fn alt(a: Frag, b: Frag) -> Frag {
        let mut f = a;
        f.first.extend(b.first);
        f.last.extend(b.last);
        f.null.extend(b.null);
        dedup(&mut f.first);
        dedup(&mut f.last);
        dedup(&mut f.null);
        f
    }

    fn build(&mut self, h: &Hir) -> Result<Frag, String> {
        match h.kind() {
            HirKind::Empty => Ok(Frag {
                null: vec![0],
                ..Frag::default()
            }),
            HirKind::Literal(l) => {
                let mut f = Frag {
                    null: vec![0],
                    ..Frag::default()
                };
                for &b in l.0.iter() {
                    let mut m = [0u64; 4];
                    m[usize::from(b >> 6)] |= 1 << (b & 63);
                    let p = self.position(m)?;
                    f = self.concat(f, p)?;
                }
                Ok(f)
            }
            HirKind::Class(c) => {
                let m = class_set(c, &mut self.unicode);
                self.position(m)
            }
            HirKind::Look(look) => {
                let c = match look {
                    Look::Start | Look::StartLF => cond::START,
                    Look::End | Look::EndLF => cond::END,
                    Look::StartCRLF => cond::START_CR,
                    Look::EndCRLF => cond::END_CR,
                    Look::WordAscii => cond::WORD,
                    Look::WordAsciiNegate => cond::NOT_WORD,
                    Look::WordStartAscii => cond::WORD_START,
                    Look::WordEndAscii => cond::WORD_END,
                    Look::WordStartHalfAscii => cond::START_HALF,
                    Look::WordEndHalfAscii => cond::END_HALF,
                    Look::WordUnicode => self.uni(cond::WORD),
                    Look::WordUnicodeNegate => self.uni(cond::NOT_WORD),
                    Look::WordStartUnicode => self.uni(cond::WORD_START),
                    Look::WordEndUnicode => self.uni(cond::WORD_END),
                    Look::WordStartHalfUnicode => self.uni(cond::START_HALF),
                    Look::WordEndHalfUnicode => self.uni(cond::END_HALF),
                    #[allow(unreachable_patterns)]
                    _ => return Err(format!("look-around {look:?}")),
                };
                Ok(Frag {
                    null: vec![c],
                    ..Frag::default()
                })
            }
            HirKind::Capture(c) => self.build(&c.sub),
            HirKind::Concat(parts) => {
                let mut f = Frag {
                    null: vec![0],
                    ..Frag::default()
                };
                for p in parts {
                    let g = self.build(p)?;
                    f = self.concat(f, g)?;
                }
                Ok(f)
            }
            HirKind::Alternation(alts) => {
                let mut f = Frag::default();
                for a in alts {
                    let g = self.build(a)?;
                    f = Builder::alt(f, g);
                }
                Ok(f)
            }
            HirKind::Repetition(r) => {
                let mut f = Frag {
                    null: vec![0],
                    ..Frag::default()
                };
                // min copies, then either a looping copy (unbounded) or
                // max - min optional ones.
                let fixed = match r.max {
                    None => r.min.saturating_sub(1),
                    Some(_) => r.min,
                };
                for _ in 0..fixed {
                    if self.classes.len() >= MAX_POSITIONS {
                        return Err(format!("more than {} positions", MAX_POSITIONS - 1));
                    }
                    let g = self.build(&r.sub)?;
                    f = self.concat(f, g)?;
                }
                match r.max {
                    None => {
                        let mut g = self.build(&r.sub)?;
                        let (last, first) = (g.last.clone(), g.first.clone());
                        self.link(&last, &first)?;
                        if r.min == 0 {
                            g.null.push(0);
                            dedup(&mut g.null);
                        }
                        f = self.concat(f, g)?;
                    }
                    Some(max) => {
                        for _ in r.min..max {
                            if self.classes.len() >= MAX_POSITIONS {
                                return Err(format!("more than {} positions", MAX_POSITIONS - 1));
                            }
                            let mut g = self.build(&r.sub)?;
                            g.null.push(0);
                            dedup(&mut g.null);
                            f = self.concat(f, g)?;
                        }
                    }
                }
                Ok(f)
            }
        }
    }

    fn uni(&mut self, c: u16) -> u16 {
        self.unicode = true;
        c
    }
}

/// The HIR of `q`'s CPU matcher, when it is a regex (regexes, wildcards,
/// `-w`, `-x`, Unicode `-i`), parsed as the automaton and the class
/// strings read it, or why not.
pub fn hir_for_query(q: &Query) -> Result<Hir, String> {
    let Some(pattern) = q.matcher.regex_pattern() else {
        return Err("not a regex".to_string());
    };
    let ci = q.kind() == QueryKind::Regex && q.case() == crate::query::CaseMode::Unicode;
    regex_syntax::ParserBuilder::new()
        .utf8(false)
        .multi_line(true)
        .case_insensitive(ci)
        .build()
        .parse(pattern)
        .map_err(|e| e.to_string())
}

impl Automaton {
    /// Compiles `hir`, or says why not (too many positions or groups).
    pub fn from_hir(hir: &Hir) -> Result<Automaton, String> {
        let mut b = Builder {
            classes: vec![[0; 4]],
            edges: Vec::new(),
            unicode: false,
        };
        let f = b.build(hir)?;
        b.link(&[(0, 0)], &f.first)?;
        let positions = b.classes.len();
        let words = positions.div_ceil(32);
        let bit = |v: &mut [u32], p: u32| v[(p / 32) as usize] |= 1 << (p % 32);
        let mut masks = vec![0u32; 256 * words];
        for (p, m) in b.classes.iter().enumerate() {
            for byte in 0..256usize {
                if m[byte >> 6] >> (byte & 63) & 1 == 1 {
                    bit(&mut masks[byte * words..(byte + 1) * words], p as u32);
                }
            }
        }
        // Unconditional follow sets, and groups for the conditional edges.
        let mut fol = vec![vec![0u32; words]; positions];
        let mut groups: Vec<Group> = Vec::new();
        dedup(&mut b.edges);
        let mut group = |from: u32, cond: u16, accept: bool, to: Option<u32>| {
            let i = match groups
                .iter()
                .position(|g| g.from == from && g.cond == cond && g.accept == accept)
            {
                Some(i) => i,
                None => {
                    groups.push(Group {
                        from,
                        cond,
                        accept,
                        to: vec![0; words],
                    });
                    groups.len() - 1
                }
            };
            if let Some(t) = to {
                bit(&mut groups[i].to, t);
            }
        };
        for &(from, to, c) in &b.edges {
            if c == 0 {
                bit(&mut fol[from as usize], to);
            } else {
                group(from, c, false, Some(to));
            }
        }
        let mut last = vec![0u32; words];
        let accepts = f.last.iter().copied().chain(f.null.iter().map(|&c| (0, c)));
        for (l, c) in accepts {
            if c == 0 {
                bit(&mut last, l);
            } else {
                group(l, c, true, None);
            }
        }
        if groups.len() > MAX_GROUPS {
            return Err(format!(
                "{} look-around edge groups (at most {MAX_GROUPS})",
                groups.len()
            ));
        }
        let linear = Linear::of(&fol, words);
        let mut follow = vec![0u32; words * 4 * 256 * words];
        for w in 0..words {
            for k in 0..4 {
                for v in 1..256usize {
                    let at = ((w * 4 + k) * 256 + v) * words;
                    for i in 0..8 {
                        let p = w * 32 + k * 8 + i;
                        if v >> i & 1 == 1 && p < positions {
                            for u in 0..words {
                                follow[at + u] |= fol[p][u];
                            }
                        }
                    }
                }
            }
        }
        Ok(Automaton {
            positions,
            words,
            masks,
            follow,
            last,
            groups,
            unicode: b.unicode,
            linear,
        })
    }

    /// The automaton of `q`'s CPU matcher, when it is a regex (regexes,
    /// wildcards, `-w`, `-x`, Unicode `-i`), or why not.
    pub fn for_query(q: &Query) -> Result<Automaton, String> {
        Automaton::from_hir(&hir_for_query(q)?)
    }

    /// `follow(d)` into `f` from the split tables (any automaton).
    pub fn follow_tables(&self, d: &[u32], f: &mut [u32]) {
        let w = self.words;
        f.iter_mut().for_each(|x| *x = 0);
        for (wi, &x) in d.iter().enumerate() {
            for k in 0..4 {
                let v = (x >> (8 * k)) & 0xFF;
                if v != 0 {
                    let at = ((wi * 4 + k) * 256 + v as usize) * w;
                    for (fu, t) in f.iter_mut().zip(&self.follow[at..at + w]) {
                        *fu |= t;
                    }
                }
            }
        }
    }

    /// The positions one byte can reach from the start alone, by an
    /// unconditional edge or by a conditional one whatever its condition
    /// (`\b`, `^` ... at the regex's start), when the start alone cannot
    /// accept (`None`: an empty match). While the state is the start alone
    /// and a byte's mask misses every one of them, the state stays the
    /// start alone: the kernel skips such bytes with a mask lookup each
    /// instead of a whole step (most bytes of a line, for a regex whose
    /// first class is selective).
    pub fn start_skip(&self) -> Option<Vec<u32>> {
        let accepts = |g: &Group| g.from == 0 && g.accept;
        if self.last[0] & 1 != 0 || self.groups.iter().any(accepts) {
            return None;
        }
        let mut d = vec![0u32; self.words];
        d[0] = 1;
        let mut f = vec![0u32; self.words];
        self.follow_tables(&d, &mut f);
        for g in self.groups.iter().filter(|g| g.from == 0) {
            for (fu, t) in f.iter_mut().zip(&g.to) {
                *fu |= t;
            }
        }
        // The start is always set again after a step: it is not a reason
        // to stop skipping.
        f[0] &= !1;
        Some(f)
    }

    fn any(&self, d: &[u32], m: &[u32]) -> bool {
        d.iter().zip(m).any(|(a, b)| a & b != 0)
    }

    /// True when the kernel runs this automaton on its linear path
    /// (`run_linear` in `shift_and.wgsl`: the extended shift-and form, no
    /// look-around groups, one or two state words), the cheapest step.
    pub fn linear_path(&self) -> bool {
        self.linear.is_some() && self.groups.is_empty() && self.words <= 2
    }

    /// True when a conditional edge looks at word characters (`\b`, `\B`,
    /// `\<` ...), not only at the line's edges (`^`, `$`).
    pub fn looks_at_words(&self) -> bool {
        const WORDS: u16 = cond::WORD
            | cond::NOT_WORD
            | cond::WORD_START
            | cond::WORD_END
            | cond::START_HALF
            | cond::END_HALF;
        self.groups.iter().any(|g| g.cond & WORDS != 0)
    }

    /// Runs the automaton over one line (no terminator), as the GPU kernel
    /// does: the reference the kernel is tested against.
    pub fn run_line(&self, line: &[u8]) -> Verdict {
        self.run_window(line, 0, line.len() + 1)
    }

    /// The matches of `line` that start at a byte in `from..to` (`to` up
    /// to `line.len() + 1`: the line's end is a place a match can start):
    /// the start is set again after each byte only before `to`; past it
    /// the run goes on while a match is under way (a state bit set) and
    /// stops when none is. As the kernel's windows (tier 1's verification
    /// with several threads a line): under a Unicode-dependent regex whose
    /// edges look at word characters, a window after a byte >= 0x80 is
    /// undecided.
    pub fn run_window(&self, line: &[u8], from: usize, to: usize) -> Verdict {
        let w = self.words;
        if self.unicode && from > 0 && line[from - 1] >= 0x80 && self.looks_at_words() {
            return Verdict::Undecided;
        }
        let mut d = vec![0u32; w];
        d[0] = 1;
        let mut f = vec![0u32; w];
        let skip = self.start_skip();
        let mut p = from;
        loop {
            // As the kernel: bytes that leave the start alone as it is
            // (while the start is still set again after them).
            if let Some(first) = &skip {
                if d[0] == 1 && d[1..].iter().all(|&x| x == 0) {
                    while p + 1 < to && p < line.len() {
                        let b = line[p];
                        if self.unicode && b >= 0x80 {
                            return Verdict::Undecided;
                        }
                        if self.any(first, &self.masks[b as usize * w..(b as usize + 1) * w]) {
                            break;
                        }
                        p += 1;
                    }
                }
            }
            let next = line.get(p).copied();
            if self.unicode && next.is_some_and(|b| b >= 0x80) {
                return Verdict::Undecided;
            }
            let prev = p.checked_sub(1).map(|i| line[i]);
            let sat = satisfied(prev, next);
            let active = |g: &Group| d[(g.from / 32) as usize] >> (g.from % 32) & 1 == 1;
            if self.any(&d, &self.last)
                || self
                    .groups
                    .iter()
                    .any(|g| g.accept && g.cond & !sat == 0 && active(g))
            {
                return Verdict::Match;
            }
            let Some(b) = next else { break };
            match &self.linear {
                Some(l) => l.step(&d, &mut f),
                None => self.follow_tables(&d, &mut f),
            }
            for g in &self.groups {
                if !g.accept && g.cond & !sat == 0 && active(g) {
                    for (fu, t) in f.iter_mut().zip(&g.to) {
                        *fu |= t;
                    }
                }
            }
            let m = &self.masks[b as usize * w..(b as usize + 1) * w];
            for u in 0..w {
                d[u] = f[u] & m[u];
            }
            p += 1;
            if p < to {
                d[0] |= 1;
            } else if d.iter().all(|&x| x == 0) {
                break;
            }
        }
        Verdict::NoMatch
    }

    /// Runs the automaton over `line` in `parts` windows, as the kernel's
    /// tier-1 verification does with several threads a line: part `j`
    /// takes the matches starting in `j * c..(j + 1) * c` (`c` the line's
    /// length over `parts`, rounded up; the last part also the line's
    /// end). The line matches when a part matches; otherwise it is
    /// undecided when a part is.
    pub fn run_parts(&self, line: &[u8], parts: usize) -> Verdict {
        let n = line.len();
        let c = n.div_ceil(parts.max(1));
        let mut undecided = false;
        for j in 0..parts.max(1) {
            let from = j * c;
            if j > 0 && from >= n {
                break;
            }
            let to = if from + c >= n { n + 1 } else { from + c };
            match self.run_window(line, from, to) {
                Verdict::Match => return Verdict::Match,
                Verdict::Undecided => undecided = true,
                Verdict::NoMatch => {}
            }
        }
        if undecided {
            Verdict::Undecided
        } else {
            Verdict::NoMatch
        }
    }
}

/// The bytes of a class (its ASCII members for a Unicode class, which
/// sets `unicode` when it has others): the automaton's position, and a
/// class string's (`query::classes`).
pub(crate) fn class_set(c: &Class, unicode: &mut bool) -> [u64; 4] {
    let mut m = [0u64; 4];
    let mut set = |lo: u32, hi: u32| {
        for b in lo..=hi.min(255) {
            m[(b >> 6) as usize] |= 1 << (b & 63);
        }
    };
    match c {
        Class::Bytes(cb) => {
            for r in cb.ranges() {
                set(u32::from(r.start()), u32::from(r.end()));
            }
        }
        Class::Unicode(cu) => {
            for r in cu.ranges() {
                let (lo, hi) = (u32::from(r.start()), u32::from(r.end()));
                if hi > 0x7F {
                    *unicode = true;
                }
                if lo <= 0x7F {
                    set(lo, hi.min(0x7F));
                }
            }
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::QueryBuilder;

    fn automaton(p: &str) -> Automaton {
        Automaton::for_query(&QueryBuilder::new().build(&[p]).unwrap()).unwrap()
    }

    /// The extended shift-and form computes the same follow sets as the
    /// split tables: checked on every single position (both are unions
    /// over the set bits, so that covers every state), across word edges
    /// (`[0-9a-f]{32}` and longer); and the regexes with optional parts
    /// or alternations keep the tables.
    #[test]
    fn linear_form_equals_the_tables() {
        let linear = [
            r"ERROR_5\d\d",
            r"trace=[0-9a-f]{32}",
            r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
            r"sshd\[\d+\]: Failed password",
            r"\bu\d{5}\b",
            r"bytes=\d{6,}$",
            r"latency_ms=\d{4,}",
            r"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}",
            r"x{70}y+",
        ];
        let tables = [
            r"user=u1\d*7 ",
            r"\b\d{1,3}\.\d{1,3}",
            r"web-\d\d (ERROR|WARN)",
            r"(ab)+",
            r"a?b",
            r"a.*b",
        ];
        for p in linear {
            let a = automaton(p);
            let l = a
                .linear
                .as_ref()
                .unwrap_or_else(|| panic!("{p}: not linear"));
            for pos in 0..a.positions {
                let mut d = vec![0u32; a.words];
                d[pos / 32] = 1 << (pos % 32);
                let (mut f1, mut f2) = (vec![0; a.words], vec![0; a.words]);
                l.step(&d, &mut f1);
                a.follow_tables(&d, &mut f2);
                assert_eq!(f1, f2, "{p}: position {pos}");
            }
        }
        for p in tables {
            assert!(automaton(p).linear.is_none(), "{p}");
        }
    }

    /// A window verdict on hand-made lines: a match is found by the part
    /// it starts in, across the parts' edges, at the line's edges.
    #[test]
    fn parts_find_matches_across_their_edges() {
        let a = automaton(r"ERROR_5\d\d");
        let line = b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaERROR_503 zzz";
        for parts in 1..=16 {
            assert_eq!(a.run_parts(line, parts), Verdict::Match, "{parts}");
            assert_eq!(a.run_parts(b"ERROR_50", parts), Verdict::NoMatch);
        }
        let a = automaton(r"\bab$");
        for parts in 1..=8 {
            assert_eq!(a.run_parts(b"xx ab", parts), Verdict::Match);
            assert_eq!(a.run_parts(b"xxab", parts), Verdict::NoMatch);
            assert_eq!(a.run_parts(b"x ab\r", parts), Verdict::NoMatch);
        }
        // Unbounded: a match under way runs on past its part's share.
        let a = automaton(r"a\d*b");
        let line = b"xxa0123456789012345678901234567890b";
        for parts in 1..=16 {
            assert_eq!(a.run_parts(line, parts), Verdict::Match, "{parts}");
            assert_eq!(
                a.run_parts(&line[..line.len() - 1], parts),
                Verdict::NoMatch
            );
        }
        // An empty match at the line's end, whatever the parts.
        let a = automaton(r"$");
        for parts in 1..=8 {
            assert_eq!(a.run_parts(b"abcdefgh", parts), Verdict::Match, "{parts}");
            assert_eq!(a.run_parts(b"", parts), Verdict::Match);
        }
    }
}
