//! Tier 2 of "regex on the GPU": the position automaton
//! (`query::glushkov`) and the bit-parallel `shift-and` kernel that runs
//! it. The automaton's CPU run is checked against the regex crate (the
//! CPU matcher) on random regexes over a small alphabet and random lines;
//! the kernel against the naive oracle through `Session::search`, forced
//! and automatic: the case table, random regexes and corpora, matches at
//! segment edges, CRLF, a last line without `\n`, non-ASCII lines.

mod common;

use std::sync::OnceLock;

use common::{build, naive, variations, Flags, CASES};
use logsieve::gpu::{GpuContext, UploadOptions};
use logsieve::query::glushkov::{Automaton, Verdict};
use logsieve::{BackendChoice, Corpus, Kernel, Query, SearchOptions, Session, Syntax, Want};
use proptest::prelude::*;

/// Regex atoms over a small alphabet: classes, anchors, word boundaries,
/// groups and repetitions are combined by `regex_strategy`.
const ATOMS: &[&str] = &[
    "a", "b", "c", "ab", ".", "[ab]", "[^a]", "[a-c]", r"\d", r"\w", r"\s", r"\W", "1", " ", "A",
    "^", "$", r"\b", r"\B", r"(?-u:\b)", r"(?-u:.)", r"\x{e9}", "é", r"(?i)a", "(?i:ab)", r"\r",
    r"\<", r"\>",
];

fn regex_strategy() -> impl Strategy<Value = String> {
    let leaf = prop::sample::select(ATOMS).prop_map(str::to_string);
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..4).prop_map(|v| v.concat()),
            prop::collection::vec(inner.clone(), 2..4).prop_map(|v| format!("(?:{})", v.join("|"))),
            (inner.clone(), 0..7usize).prop_map(|(a, r)| {
                let rep = ["*", "+", "?", "{2}", "{1,3}", "{0,2}", "{2,}"][r];
                format!("(?:{a}){rep}")
            }),
        ]
    })
}

fn line_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop::sample::select(&[b'a', b'b', b'c', b'A', b'1', b' ', b'_', b'-', b'\r', 0xC3, 0xA9][..]),
        0..24,
    )
}

fn check_line(q: &Query, a: &Automaton, line: &[u8], what: &str) -> Result<(), TestCaseError> {
    let want = q.is_match_line(line);
    match a.run_line(line) {
        Verdict::Undecided => {
            prop_assert!(a.unicode, "{what}: undecided without unicode");
            prop_assert!(line.iter().any(|&b| b >= 0x80), "{what}: undecided on ASCII");
        }
        v => prop_assert_eq!(v == Verdict::Match, want, "{} on {:?}", what, String::from_utf8_lossy(line)),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    /// The automaton's verdict is the regex crate's on every line it
    /// decides (and it decides every ASCII line).
    #[test]
    fn automaton_agrees_with_the_regex_crate(
        pat in regex_strategy(),
        lines in prop::collection::vec(line_strategy(), 1..12),
        i in any::<bool>(), w in any::<bool>(), x in any::<bool>(),
    ) {
        let f = Flags { i, w, x: x && !w, v: false };
        let Ok(q) = build(&[pat.clone().into_bytes()], Syntax::Regex, f) else { return Ok(()) };
        let a = match Automaton::for_query(&q) {
            Ok(a) => a,
            // A regex that is a plain literal has no regex matcher; only
            // size limits refuse otherwise.
            Err(e) => {
                prop_assert!(e.contains("not a regex") || e.contains("positions"), "{pat}: {e}");
                return Ok(());
            }
        };
        for l in &lines {
            check_line(&q, &a, l, &format!("{pat:?} {f:?}"))?;
        }
    }
}

#[test]
fn automaton_limits_are_errors() {
    let q = build(&[br"[0-9a-f]{300}".to_vec()], Syntax::Regex, Flags::default()).unwrap();
    let e = Automaton::for_query(&q).unwrap_err();
    assert!(e.contains("positions"), "{e}");
    let q = build(&[br"[0-9a-f]{32}".to_vec()], Syntax::Regex, Flags::default()).unwrap();
    let a = Automaton::for_query(&q).unwrap();
    assert_eq!((a.positions, a.words), (33, 2));
    assert!(!a.unicode);
    let q = build(&[br"\d+ms".to_vec()], Syntax::Regex, Flags::default()).unwrap();
    assert!(Automaton::for_query(&q).unwrap().unicode, "Unicode \\d");
}

#[test]
fn automaton_runs_the_case_table() {
    let mut ran = 0;
    for case in CASES {
        let f = case.flags();
        let pats = case.patterns();
        let Ok(q) = build(&pats, case.syntax, f) else { continue };
        let Ok(a) = Automaton::for_query(&q) else { continue };
        let oracle = naive(case.corpus, &pats, case.syntax, Flags { v: false, ..f });
        let lines = common::naive_lines(case.corpus);
        for (i, l) in lines.iter().enumerate() {
            let want = oracle.contains(&(i as u64));
            match a.run_line(l) {
                Verdict::Undecided => assert!(a.unicode, "{}", case.name),
                v => assert_eq!(v == Verdict::Match, want, "{} line {i}", case.name),
            }
        }
        ran += 1;
    }
    assert!(ran > 30, "{ran}");
}
