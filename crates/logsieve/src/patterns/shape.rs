//! Lines grouped by *shape* before Drain sees them: two lines have one
//! shape when they split into the same number of tokens with the same
//! layout (spaces), the same literal tokens, and a token with a digit at
//! the same positions (its value may differ). A group enters the miner
//! once, as its first line with the positions whose digit-token value
//! differs somewhere in the group made variables, and weighs its line
//! count. So the sequential tree walk and similarity run once per shape
//! (560 shapes in 1,000,000 generated lines, 12–477 in each 2,000-line
//! Loghub sample), not once per line; reading the tokens, the shape and
//! the comparison run on every core in one pass over the lines.
//!
//! Grouping is exact: a shape's hash only finds candidates. A line is
//! read once: its digit tokens are found, and the *runs* between them
//! (the literal tokens and the spaces) are hashed; a candidate is
//! compared run by run with the group's first line, and each digit token
//! with the first line's.

use std::collections::HashMap;

use rayon::prelude::*;

use super::has_digit;
use super::tokens::{is_delimiter, tokenize};

/// Lines one thread groups before its groups are merged.
const PART: usize = 16_384;

/// One group of lines of one shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// Its first line (an index into the lines grouped).
    pub first: usize,
    /// Its lines.
    pub count: u64,
    /// Per token of its shape: true where a token with a digit has
    /// different values among its lines.
    pub varies: Vec<bool>,
}

/// Lines grouped by shape.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shapes {
    /// The groups, in order of their first line.
    pub groups: Vec<Group>,
    /// Per line, its group.
    pub of_line: Vec<u32>,
}

/// A token with a digit: its bytes in the line and its token number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Digits {
    start: u32,
    end: u32,
    token: u32,
}

/// A line read for its shape.
#[derive(Clone, Debug, Default)]
struct Read {
    digits: Vec<Digits>,
    tokens: u32,
    key: u64,
}

/// Byte classes of the tokenizer ([`super::tokens`]): a byte continues a
/// token, ends it as a space, or is a token of its own.
const CONTINUE: u8 = 0;
const SPACE: u8 = 1;
const DELIMITER: u8 = 2;
/// Set on the digits' classes.
const DIGIT: u8 = 4;

const CLASS: [u8; 256] = {
    let mut t = [CONTINUE; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if c == b' ' {
            SPACE
        } else if is_delimiter(c) {
            DELIMITER
        } else if c.is_ascii_digit() {
            DIGIT
        } else {
            CONTINUE
        };
        b += 1;
    }
    t
};

fn mix(h: u64, v: u64) -> u64 {
    (h.rotate_left(5) ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// `h` with the bytes of `run` (and its length) mixed in.
fn mix_run(mut h: u64, run: &[u8]) -> u64 {
    h = mix(h, run.len() as u64);
    let mut words = run.chunks_exact(8);
    for w in &mut words {
        h = mix(h, u64::from_le_bytes(w.try_into().expect("8 bytes")));
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = mix(h, u64::from_le_bytes(w));
    }
    h
}

impl Read {
    /// Reads `line` (without its `\r`) into `self`: its tokens as
    /// [`super::tokens`] splits them, those with a digit, and the hash of
    /// its runs.
    fn line(&mut self, line: &[u8]) {
        self.digits.clear();
        let (mut tokens, mut start, mut digit) = (0u32, 0usize, false);
        for (i, &c) in line.iter().enumerate() {
            let k = CLASS[c as usize];
            if k & (SPACE | DELIMITER) == 0 {
                digit |= k == DIGIT;
                continue;
            }
            if i > start {
                if digit {
                    self.digits.push(Digits {
                        start: start as u32,
                        end: i as u32,
                        token: tokens,
                    });
                }
                tokens += 1;
            }
            tokens += u32::from(k == DELIMITER);
            start = i + 1;
            digit = false;
        }
        if start < line.len() {
            if digit {
                self.digits.push(Digits {
                    start: start as u32,
                    end: line.len() as u32,
                    token: tokens,
                });
            }
            tokens += 1;
        }
        self.tokens = tokens;
        let mut h = mix(u64::from(tokens), self.digits.len() as u64);
        let mut from = 0usize;
        for d in &self.digits {
            h = mix_run(h, &line[from..d.start as usize]);
            from = d.end as usize;
        }
        self.key = mix_run(h, &line[from..]);
    }
}

/// True when `a` (read as `ra`) and `b` (`rb`) have one shape: the same
/// digit tokens at the same token numbers and the same runs between them.
fn same_shape(a: &[u8], ra: &[Digits], b: &[u8], rb: &[Digits]) -> bool {
    if ra.len() != rb.len() {
        return false;
    }
    let (mut fa, mut fb) = (0usize, 0usize);
    for (x, y) in ra.iter().zip(rb) {
        if x.token != y.token || a[fa..x.start as usize] != b[fb..y.start as usize] {
            return false;
        }
        (fa, fb) = (x.end as usize, y.end as usize);
    }
    a[fa..] == b[fb..]
}

/// Marks in `varies` the digit tokens of `b` whose values differ from
/// `a`'s (the two of one shape).
fn mark(a: &[u8], ra: &[Digits], b: &[u8], rb: &[Digits], varies: &mut [bool]) {
    for (x, y) in ra.iter().zip(rb) {
        let v = &mut varies[x.token as usize];
        if !*v && a[x.start as usize..x.end as usize] != b[y.start as usize..y.end as usize] {
            *v = true;
        }
    }
}

/// A group as one part of the lines sees it, with its first line's read.
struct Held {
    key: u64,
    group: Group,
    digits: Vec<Digits>,
}

/// Groups by key, each found by comparing with its first line.
#[derive(Default)]
struct Index {
    held: Vec<Held>,
    by_key: HashMap<u64, Vec<u32>>,
}

impl Index {
    /// The group of the line `b` (read as `key`, `rb`) — `lines[first]`
    /// gives a group's first line — marked with `b`'s differences, or
    /// `None`.
    fn find(
        &mut self,
        lines: &[&[u8]],
        base: usize,
        b: &[u8],
        key: u64,
        rb: &[Digits],
    ) -> Option<u32> {
        let ids = self.by_key.get(&key)?;
        let held = &mut self.held;
        ids.iter().copied().find(|&g| {
            let h = &mut held[g as usize];
            let a = bare(lines[h.group.first - base]);
            let same = same_shape(a, &h.digits, b, rb);
            if same {
                mark(a, &h.digits, b, rb, &mut h.group.varies);
            }
            same
        })
    }

    fn push(&mut self, held: Held) -> u32 {
        let g = self.held.len() as u32;
        self.by_key.entry(held.key).or_default().push(g);
        self.held.push(held);
        g
    }
}

/// The groups of one part, and its lines' groups.
struct Part {
    index: Index,
    of_line: Vec<u32>,
}

/// The token count of `line` (without its `\r`) and its tokens with a
/// digit, in order, as (start, end, token number): what a group's
/// `varies` is indexed by, for the GPU's marks (`gpu.rs`), which number
/// the digit tokens.
#[cfg_attr(
    not(all(feature = "gpu", not(target_arch = "wasm32"))),
    allow(dead_code)
)]
pub(crate) fn digit_tokens(line: &[u8]) -> (u32, Vec<[u32; 3]>) {
    let mut r = Read::default();
    r.line(line);
    (
        r.tokens,
        r.digits.iter().map(|d| [d.start, d.end, d.token]).collect(),
    )
}

/// `line` without a trailing `\r` (as the miner reads it).
pub(crate) fn bare(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

impl Part {
    /// Groups `lines` (the first of them is line `base`).
    fn of(lines: &[&[u8]], base: usize) -> Part {
        let mut index = Index::default();
        let mut of_line = Vec::with_capacity(lines.len());
        let mut r = Read::default();
        for (k, l) in lines.iter().enumerate() {
            let l = bare(l);
            r.line(l);
            let g = match index.find(lines, base, l, r.key, &r.digits) {
                Some(g) => {
                    index.held[g as usize].group.count += 1;
                    g
                }
                None => index.push(Held {
                    key: r.key,
                    group: Group {
                        first: base + k,
                        count: 1,
                        varies: vec![false; r.tokens as usize],
                    },
                    digits: r.digits.clone(),
                }),
            };
            of_line.push(g);
        }
        Part { index, of_line }
    }
}

/// Groups `lines` by shape, on every core. A trailing `\r` is not part
/// of a line.
pub fn group(lines: &[&[u8]]) -> Shapes {
    group_in_parts(lines, PART)
}

/// [`group`] with `part` lines a thread.
fn group_in_parts(lines: &[&[u8]], part: usize) -> Shapes {
    let parts: Vec<Part> = lines
        .par_chunks(part)
        .enumerate()
        .map(|(i, c)| Part::of(c, i * part))
        .collect();
    // The parts' groups merged in order: a group's first line is the
    // first part's first line; a later part's first line is compared with
    // it, which with that part's own marks gives every line's difference.
    let mut all = Index::default();
    let maps: Vec<Vec<u32>> = parts
        .iter()
        .map(|part| {
            part.index
                .held
                .iter()
                .map(|h| {
                    let b = bare(lines[h.group.first]);
                    match all.find(lines, 0, b, h.key, &h.digits) {
                        Some(g) => {
                            let into = &mut all.held[g as usize].group;
                            into.count += h.group.count;
                            for (v, &w) in into.varies.iter_mut().zip(&h.group.varies) {
                                *v |= w;
                            }
                            g
                        }
                        None => all.push(Held {
                            key: h.key,
                            group: h.group.clone(),
                            digits: h.digits.clone(),
                        }),
                    }
                })
                .collect()
        })
        .collect();
    let mut of_line = vec![0u32; lines.len()];
    of_line
        .par_chunks_mut(part)
        .zip(parts.par_iter().zip(&maps))
        .for_each(|(out, (part, map))| {
            for (o, &g) in out.iter_mut().zip(&part.of_line) {
                *o = map[g as usize];
            }
        });
    Shapes {
        groups: all.held.into_iter().map(|h| h.group).collect(),
        of_line,
    }
}

/// [`group`]'s reference, one line after another: a map from the shape
/// itself (layout, literal tokens, `None` for a digit token) to its group,
/// each line compared with the group's first.
pub fn group_in_order(lines: &[&[u8]]) -> Shapes {
    type Shape = (u32, Vec<u32>, Vec<Option<Vec<u8>>>);
    let mut index: HashMap<Shape, u32> = HashMap::new();
    let mut s = Shapes::default();
    for (k, l) in lines.iter().enumerate() {
        let l = bare(l);
        let t = tokenize(l);
        let toks: Vec<&[u8]> = (0..t.len()).map(|i| t.token(l, i)).collect();
        let shape: Shape = (
            t.lead,
            t.after.clone(),
            toks.iter()
                .map(|x| (!has_digit(x)).then(|| x.to_vec()))
                .collect(),
        );
        let next = s.groups.len() as u32;
        let g = *index.entry(shape).or_insert(next);
        if g == next {
            s.groups.push(Group {
                first: k,
                count: 0,
                varies: vec![false; toks.len()],
            });
        }
        let grp = &mut s.groups[g as usize];
        grp.count += 1;
        let first = bare(lines[grp.first]);
        let ft = tokenize(first);
        for (i, x) in toks.iter().enumerate() {
            if has_digit(x) && ft.token(first, i) != *x {
                grp.varies[i] = true;
            }
        }
        s.of_line.push(g);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_as_the_oracle_does() {
        let data = crate::gen::generate(&crate::gen::GenOptions {
            lines: 50_000,
            seed: 11,
            ..Default::default()
        });
        let mut lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
        // Across part boundaries: a shape first seen in a later part, a
        // digit token constant within parts but not across them, a
        // digit/letter swap, layout and CRLF differences.
        let extra: [&[u8]; 8] = [
            b"job 7 done",
            b"job 8 done",
            b"job x done",
            b"job  7 done",
            b"job 7 done\r",
            b"",
            b"  ",
            b"k=v1 k=v1",
        ];
        for (i, e) in extra.iter().enumerate() {
            lines.insert((i * 7_001 + 3) % lines.len(), e);
            lines.insert((i * 13_003 + PART - 1) % lines.len(), e);
        }
        lines.push(b"job 7 done");
        let got = group(&lines);
        assert_eq!(got, group_in_order(&lines));
        assert!(got.groups.len() > 20 && got.groups.len() < lines.len() / 10);
        let varies = |l: &[u8]| {
            got.groups[got.of_line[lines.iter().position(|x| *x == l).unwrap()] as usize]
                .varies
                .clone()
        };
        assert_eq!(varies(b"job 7 done"), [false, true, false]);
        assert_eq!(varies(b"k=v1 k=v1"), [false; 6]);
    }

    proptest::proptest! {
        /// Random lines of a few pieces (words, digit tokens, spaces,
        /// delimiters, `\r`, a non-ASCII byte), so that shapes repeat with
        /// other digit values, grouped in parts of 1 to 5 lines: the
        /// reference's groups.
        #[test]
        fn random_lines_group_as_the_oracle_does(
            pieces in proptest::collection::vec(
                proptest::collection::vec(
                    proptest::sample::select(vec![
                        &b"a"[..], b"1", b"2", b"x9", b" ", b" ", b"=", b"\r", b"\xc3",
                    ]),
                    0..5),
                0..60),
            part in 1usize..6,
        ) {
            let lines: Vec<Vec<u8>> = pieces.iter().map(|p| p.concat()).collect();
            let lines: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
            proptest::prop_assert_eq!(group_in_parts(&lines, part), group_in_order(&lines));
        }
    }

    #[test]
    fn small_cases() {
        assert_eq!(group(&[]), Shapes::default());
        let one = group(&[b"a 1"]);
        assert_eq!(one.of_line, [0]);
        assert_eq!(one.groups[0].varies, [false, false]);
        // A later part whose first line equals the group's first, and
        // differs from it further on.
        let lines: [&[u8]; 4] = [b"1", b"x", b"1", b"2"];
        let two = group_in_parts(&lines, 2);
        assert_eq!(two, group_in_order(&lines));
        assert_eq!(two.groups[0].varies, [true]);
    }
}
