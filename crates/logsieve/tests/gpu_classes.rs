//! Class strings on the GPU (`query::classes`, `scan`'s `class_at`): a
//! regex whose matches are a fixed-length run of byte classes runs as one
//! `scan` pass, exact, with nothing to verify. Forced with `--backend gpu`
//! through `Session::search` (lines, counts, `-m`), against the naive
//! oracle (the regex crate line by line): random class strings and
//! corpora in small segments, a boundary sweep of every offset around
//! chunk and segment edges with CRLF and a last line without `\n`, and
//! the fallback on a corpus with bytes >= 0x80. The context forces class
//! strings (`GpuTuning::force_class_scan`): the planner would weigh them
//! against the automaton's verification on these small corpora.

mod common;

use common::gpu::{check_forced, ctx_forcing_class_scan as ctx, session};
use common::{build, naive, Flags};
use logsieve::{BackendChoice, Query, SearchOptions, Session, Syntax};
use proptest::prelude::*;

fn gpu() -> SearchOptions {
    SearchOptions {
        backend: BackendChoice::Gpu,
        ..Default::default()
    }
}

/// `q` forced on the GPU agrees with the oracle (every form
/// `check_forced` runs), and ran as a class string when `class`.
fn check(s: &Session, q: &Query, oracle: &[u64], class: bool, what: &str) {
    let rs = check_forced(s, q, None, oracle, what).unwrap_or_else(|e| panic!("{what}: {e}"));
    for r in rs {
        assert_eq!(
            r.backend.name.ends_with("(class string)"),
            class,
            "{what}: {}",
            r.backend
        );
    }
}

/// One position of a random class string.
fn position() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "a",
        "b",
        "1",
        "-",
        "_",
        " ",
        r"\d",
        "[ab]",
        "[0-9a-f]",
        "(?i:a)",
        r"\w",
        "[^a]",
        ".",
        // Runs after the fixed part (`Step`), where what follows allows.
        r"\d+",
        "[ab]{1,3}",
        "-*",
        r"\w{2,}",
    ])
}

/// A random class string, or two as alternatives (a class set), and the
/// corpus they run on.
fn class_case() -> impl Strategy<Value = (String, Vec<u8>)> {
    (one_class_string(), one_class_string(), any::<bool>()).prop_map(
        |((a, corpus), (b, _), alt)| match alt {
            true => (format!("{a}|{b}"), corpus),
            false => (a, corpus),
        },
    )
}

/// One random class string: 1-8 positions, at least one a byte, an open
/// repetition, `\b` or a line's edge at either end, and a corpus (lines
/// of the positions' bytes and a few others).
fn one_class_string() -> impl Strategy<Value = (String, Vec<u8>)> {
    let ends = prop::sample::select(vec!["", r"\b", "+", "*", "{2}", "^", "$", r"^\s*"]);
    (
        prop::collection::vec(position(), 1..8),
        prop::sample::select(vec!["a", "b", "1", "-"]),
        0usize..8,
        ends.clone(),
        ends,
        prop::collection::vec(prop::sample::select(b"ab1-_ A9f\n\r.".to_vec()), 0..400),
    )
        .prop_map(|(mut pos, byte, at, head, tail, corpus)| {
            pos.insert(at.min(pos.len()), byte);
            let mut re = String::new();
            match head {
                r"\b" | "^" | r"^\s*" => re.push_str(head),
                "+" | "*" | "{2}" => {
                    re.push_str(pos[0]);
                    re.push_str(head);
                }
                _ => {}
            }
            for p in &pos {
                re.push_str(p);
            }
            match tail {
                r"\b" | "$" => re.push_str(tail),
                "+" | "*" | "{2}" => {
                    re.push_str(pos[pos.len() - 1]);
                    re.push_str(tail);
                }
                _ => {}
            }
            (re, corpus)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random class strings over random corpora in segments of 16-80
    /// bytes (matches across the scan's chunks and the segments' edges),
    /// with `-v` drawn: the same lines as the oracle, by the class string
    /// whenever the query is one.
    #[test]
    fn random_class_strings_against_the_oracle((re, corpus) in class_case(), seg in 16u64..80, v in any::<bool>()) {
        let Some(c) = ctx("class strings") else { return Ok(()) };
        let f = Flags { v, ..Flags::default() };
        let p = vec![re.as_bytes().to_vec()];
        let Ok(q) = build(&p, Syntax::Regex, f) else { return Ok(()) };
        let oracle = naive(&corpus, &p, Syntax::Regex, f);
        let s = session(c, &corpus, seg);
        // A class string runs as itself where tier 1 has a literal for it
        // (a byte position; not only letters in either case).
        let class = q.class_set().is_some_and(|c| c.literals().is_some());
        check(&s, &q, &oracle, class, &re);
    }
}

/// A class string with `\b` on both sides and classes in the middle, at
/// every offset of lines padded so that its match, and its near misses,
/// land on every byte of the scan's 16-byte chunks and across segment
/// edges, with runs of digits up to 13 long; CRLF lines and a last line
/// without `\n`.
#[test]
fn boundary_sweep() {
    let Some(c) = ctx("class strings") else {
        return;
    };
    let res = [
        r"\bE\d{2}x\b",
        r"E\d[0-9a-f]x",
        r"(?i:e)\d\dX",
        r"\bE\d(1x|fx)",
        r"E1\dx|e\d4X\b",
        r"E\d+x\b",
        r"^\.*E\d{1,2}x",
        r"E\d+[fx]+$",
        r"E\d+(?i:x)\s*$",
        r"E\d{2,5}x",
        // Steps whose lane test decides them walk four bytes at a time:
        // two ranges, and a fold.
        r"E[0-9a-d]{2,}(?i:[f-x])",
        r"E[0-9]+(?i:[f-x])+\b",
        // A pair of which one string has steps (`WALK`), either order.
        r"e\d4X|E\d+f",
        r"E\d+f|e\d4X",
        // A lane looked up in its class's bits (`LOOK`).
        r"E\w\dx",
    ];
    for re in res {
        let p = vec![re.as_bytes().to_vec()];
        let q = build(&p, Syntax::Regex, Flags::default()).unwrap();
        assert!(q.class_set().is_some(), "{re}");
        for pad in 0..40usize {
            let mut data = Vec::new();
            // Runs of 1 to 13 digits: steps' walks across the chunks'
            // and segments' edges, and `{2,5}`'s bound.
            let hits = [
                &b"E12x"[..],
                b"aE12x",
                b"E12xa",
                b"E1fx",
                b"e34X",
                b"E1x",
                b"E12345x",
                b"E123456x",
                b"E1234567890123fx",
                b"E-1x",
            ];
            for (k, hit) in hits.iter().enumerate() {
                data.extend(std::iter::repeat_n(b'.', pad + k));
                data.extend_from_slice(hit);
                data.extend_from_slice(if k % 2 == 0 { b"\r\n" } else { b" -\n" });
            }
            data.extend(std::iter::repeat_n(b' ', pad));
            data.extend_from_slice(b"E99x");
            let oracle = naive(&data, &p, Syntax::Regex, Flags::default());
            for seg in [16u64, 48, 4096] {
                let s = session(c, &data, seg);
                check(&s, &q, &oracle, true, &format!("{re} pad {pad} seg {seg}"));
            }
        }
    }
}

/// A Unicode class (`\d`, `\b`) is exact on ASCII text only: on a corpus
/// with a byte >= 0x80 the class string is not run as itself (tier 1
/// scans its literal and the automaton verifies, or tier 2 runs), and the
/// answer is still the oracle's; a byte class runs as itself there. After
/// lines are appended the choice follows the corpus.
#[test]
fn non_ascii_corpora_fall_back() {
    let Some(c) = ctx("class strings") else {
        return;
    };
    let data = "ERROR_503 a\nERROR_5\u{663}\u{663} b\ncaf\u{e9} ERROR_599\nERROR_5x1\n".as_bytes();
    let s = session(c, data, 4096);
    for (re, class) in [(r"ERROR_5\d\d", false), (r"(?-u:ERROR_5\d\d)", true)] {
        let p = vec![re.as_bytes().to_vec()];
        let q = build(&p, Syntax::Regex, Flags::default()).unwrap();
        let oracle = naive(data, &p, Syntax::Regex, Flags::default());
        check(&s, &q, &oracle, class, re);
    }
    // ASCII: the Unicode class string runs as itself; once a line with a
    // byte >= 0x80 is appended, no longer.
    let ascii = b"ERROR_503 a\nERROR_5x1\n";
    let mut s = session(c, ascii, 4096);
    let p = vec![br"ERROR_5\d\d".to_vec()];
    let q = build(&p, Syntax::Regex, Flags::default()).unwrap();
    check(&s, &q, &[0], true, "ascii");
    s.append_lines(0, "ERROR_5\u{663}\u{663}\nERROR_512\n".as_bytes())
        .expect("append");
    let all = [
        ascii.as_slice(),
        "ERROR_5\u{663}\u{663}\nERROR_512\n".as_bytes(),
    ]
    .concat();
    let oracle = naive(&all, &p, Syntax::Regex, Flags::default());
    check(&s, &q, &oracle, false, "after a non-ASCII append");
    let r = s.search(&q, &gpu()).unwrap();
    assert_eq!(r.docs[0].lines, oracle);
}

/// Survivors on every other byte (the rarest byte everywhere, the match
/// on a few lines): single strings and pairs, on a big segment and on
/// small ones. The other tests' corpora are under 4 KB a segment, where
/// each `scan` thread's second chunk (a workgroup's width, 4 KB, after
/// its first) is past the end: here 26 KB are one segment.
#[test]
fn dense_survivors_on_big_segments() {
    let Some(c) = ctx("class strings") else {
        return;
    };
    let mut data = Vec::new();
    for i in 0..600usize {
        for j in 0..20usize {
            data.extend_from_slice(if (i * 20 + j) % 53 == 0 { b"a1" } else { b"ax" });
        }
        data.extend_from_slice(if i % 3 == 0 { b"b22\n" } else { b"\n" });
    }
    // Pairs whose rarest bytes are the same byte ('1') and different.
    for re in [
        r"a\d",
        r"a\dax|b\d{2}",
        r"ax\b",
        r"xa\d+",
        r"a1a|xa1",
        r"1ax|b2",
    ] {
        let p = vec![re.as_bytes().to_vec()];
        let q = build(&p, Syntax::Regex, Flags::default()).unwrap();
        let oracle = naive(&data, &p, Syntax::Regex, Flags::default());
        assert!(
            !oracle.is_empty() && oracle.len() < 600,
            "{re}: {}",
            oracle.len()
        );
        for seg in [1u64 << 20, 4096] {
            let s = session(c, &data, seg);
            check(&s, &q, &oracle, true, &format!("{re} seg {seg}"));
        }
    }
}
