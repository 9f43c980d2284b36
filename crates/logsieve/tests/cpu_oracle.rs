//! The CPU session against the naive oracle: the table of cases, random
//! corpora, boundary sweeps and multi-megabyte corpora, through every CPU
//! path (1, 2 and 4 threads; counts and line lists; `-m`; each matcher).

mod common;

use std::collections::BTreeSet;

use common::{
    assemble, build, flags_strategy, generated, naive, naive_find_iter, naive_lines, pats,
    prefilter_case, variations, Flags, NaiveMatcher, CASES, PATTERN_PIECES, PIECES,
};
use logsieve::cpu::{search_doc, CpuOptions};
use logsieve::{
    BackendChoice, Corpus, Document, ErrorKind, Query, QueryKind, SearchOptions, Session, Syntax,
    Want,
};
use proptest::prelude::*;

/// How hard to drive the CPU paths.
#[derive(Clone, Copy)]
enum Depth {
    /// Threads 1/2/4 × Count/Lines × several `-m` values, and the per-line
    /// matcher.
    Full,
    /// Threads 1/2 × Count/Lines (for sweeps with many corpora).
    Quick,
}

/// The start offset of every line of `corpus` (a last line without `\n`
/// included), by hand.
fn line_starts(corpus: &[u8]) -> Vec<u64> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < corpus.len() {
        out.push(at as u64);
        match corpus[at..].iter().position(|&b| b == b'\n') {
            Some(i) => at += i + 1,
            None => break,
        }
    }
    out
}

/// Runs `q` over `corpus` through every CPU path of `depth` and returns a
/// description of the first disagreement with `expected`.
fn check_paths(corpus: &[u8], q: &Query, expected: &[u64], depth: Depth) -> Result<(), String> {
    let doc = Document::from_bytes("t", corpus.to_vec());
    let (threads, maxes): (&[usize], &[Option<u64>]) = match depth {
        Depth::Full => (&[1, 2, 4], &[None, Some(0), Some(1), Some(3)]),
        Depth::Quick => (&[1, 2], &[None]),
    };
    for &threads in threads {
        for want in [Want::Count, Want::Lines] {
            for &max_count in maxes {
                let got = search_doc(
                    &doc,
                    q,
                    &CpuOptions {
                        threads,
                        want,
                        max_count,
                        line_ids: true,
                    },
                );
                let n = max_count.map_or(expected.len(), |m| expected.len().min(m as usize));
                let want_lines: &[u64] = if want == Want::Lines {
                    &expected[..n]
                } else {
                    &[]
                };
                if got.count != n as u64 || got.lines != want_lines {
                    return Err(format!(
                        "threads {threads} {want:?} max {max_count:?} (matcher {}): \
                         got count {} lines {:?}, want count {n} lines {:?}",
                        q.cpu_matcher_name(),
                        got.count,
                        trunc(&got.lines),
                        trunc(want_lines),
                    ));
                }
            }
        }
        // Starts only (no newline count): the selected lines' offsets, no
        // ids; -v still gives ids.
        for &max_count in maxes {
            let got = search_doc(
                &doc,
                q,
                &CpuOptions {
                    threads,
                    want: Want::Lines,
                    max_count,
                    line_ids: false,
                },
            );
            let n = max_count.map_or(expected.len(), |m| expected.len().min(m as usize));
            let all_starts = line_starts(corpus);
            let want_starts: Vec<u64> = expected[..n]
                .iter()
                .map(|&id| all_starts[id as usize])
                .collect();
            let ok = if q.invert() {
                got.lines == expected[..n]
            } else {
                got.lines.is_empty() && got.starts == want_starts
            };
            if got.count != n as u64 || !ok {
                return Err(format!(
                    "threads {threads} starts only, max {max_count:?} (matcher {}): \
                     got count {} lines {:?} starts {:?}, want count {n} starts {:?}",
                    q.cpu_matcher_name(),
                    got.count,
                    trunc(&got.lines),
                    trunc(&got.starts),
                    trunc(&want_starts),
                ));
            }
        }
    }
    if let Depth::Full = depth {
        // The per-line predicate that verification uses.
        let want: BTreeSet<u64> = expected.iter().copied().collect();
        for (i, line) in naive_lines(corpus).iter().enumerate() {
            let selected = q.is_match_line(line) != q.invert();
            if selected != want.contains(&(i as u64)) {
                return Err(format!("is_match_line disagrees on line {i}: {line:?}"));
            }
        }
    }
    Ok(())
}

fn trunc(v: &[u64]) -> String {
    if v.len() <= 20 {
        format!("{v:?}")
    } else {
        format!("{:?}... ({} ids)", &v[..20], v.len())
    }
}

/// Builds the query, asks the oracle, and checks every CPU path.
fn check_against_oracle(
    corpus: &[u8],
    patterns: &[Vec<u8>],
    syntax: Syntax,
    f: Flags,
    depth: Depth,
) -> Result<(), String> {
    let q = build(patterns, syntax, f).map_err(|e| format!("build failed: {e}"))?;
    let expected = naive(corpus, patterns, syntax, f);
    check_paths(corpus, &q, &expected, depth).map_err(|e| {
        format!(
            "{e}\n  query {:?} {syntax:?} {f:?}\n  corpus {:?}",
            patterns
                .iter()
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect::<Vec<_>>(),
            String::from_utf8_lossy(&corpus[..corpus.len().min(300)]),
        )
    })
}

#[test]
fn table_oracle_agrees_with_hand_written_expectations() {
    let mut names = BTreeSet::new();
    let mut failures = Vec::new();
    for c in CASES {
        assert!(names.insert(c.name), "duplicate case name {}", c.name);
        let got = naive(c.corpus, &c.patterns(), c.syntax, c.flags());
        if got != c.expected {
            failures.push(format!(
                "{}: oracle {got:?}, table {:?}",
                c.name, c.expected
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn table_every_cpu_path() {
    let mut failures = Vec::new();
    for c in CASES {
        let q = match build(&c.patterns(), c.syntax, c.flags()) {
            Ok(q) => q,
            Err(e) => {
                failures.push(format!("{}: build failed: {e}", c.name));
                continue;
            }
        };
        if let Err(e) = check_paths(c.corpus, &q, c.expected, Depth::Full) {
            failures.push(format!("{}: {e}", c.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn table_through_the_engine() {
    for c in CASES {
        let q = build(&c.patterns(), c.syntax, c.flags()).unwrap();
        let mut corpus = Corpus::from_bytes("a", c.corpus.to_vec());
        corpus.push(Document::from_bytes("b", c.corpus.to_vec()));
        let session = Session::new(corpus);
        let opts = SearchOptions {
            backend: BackendChoice::Cpu,
            threads: 2,
            ..Default::default()
        };
        let res = session.search(&q, &opts).unwrap();
        assert_eq!(res.docs.len(), 2, "{}", c.name);
        for d in &res.docs {
            assert_eq!(d.lines, c.expected, "{}", c.name);
            assert_eq!(d.count, c.expected.len() as u64, "{}", c.name);
        }
        assert_eq!(res.total(), 2 * c.expected.len() as u64, "{}", c.name);
        assert!(
            res.backend.name.starts_with("cpu/"),
            "{}: {}",
            c.name,
            res.backend
        );
    }
}

/// A corpus with a bit of everything, for the per-matcher checks.
fn mixed_corpus() -> Vec<u8> {
    let idx: Vec<usize> = (0..600).map(|i| (i * 7 + i / 5) % PIECES.len()).collect();
    assemble(PIECES, &idx)
}

#[test]
fn each_matcher_is_exercised() {
    let corpus = mixed_corpus();
    let cases: &[(&[&str], Syntax, &str, &str)] = &[
        (&["foo"], Syntax::Fixed, "", "memmem"),
        (&["foo"], Syntax::Regex, "", "memmem"),
        (&["error"], Syntax::Wildcard, "", "memmem"),
        (&["ab", "error", "42"], Syntax::Fixed, "", "aho-corasick"),
        (&["foo"], Syntax::Fixed, "i", "aho-corasick+prefilter"),
        (&["fo"], Syntax::Fixed, "i", "aho-corasick"),
        (&["error|ab"], Syntax::Regex, "", "regex"),
        (&["error|abc"], Syntax::Regex, "", "regex+prefilter"),
        (&["é"], Syntax::Fixed, "i", "regex"),
        (&["foo"], Syntax::Fixed, "w", "regex+prefilter"),
        (&["foo"], Syntax::Fixed, "x", "regex+prefilter"),
        (&["f*o"], Syntax::Wildcard, "", "regex"),
        (&["f*ooo"], Syntax::Wildcard, "", "regex+prefilter"),
        (&["error"], Syntax::Fuzzy(1), "", "fuzzy"),
        (&["error"], Syntax::Fuzzy(2), "iv", "fuzzy"),
        (&[""], Syntax::Fixed, "", "all-lines"),
        (&["", "foo"], Syntax::Regex, "v", "all-lines"),
    ];
    let mut seen = BTreeSet::new();
    for &(ps, syntax, flags, name) in cases {
        let p = pats(ps);
        let f = Flags::parse(flags);
        let q = build(&p, syntax, f).unwrap();
        assert_eq!(q.cpu_matcher_name(), name, "{ps:?} {syntax:?} {flags}");
        seen.insert(name);
        check_against_oracle(&corpus, &p, syntax, f, Depth::Full).unwrap();
    }
    assert_eq!(seen.len(), 7, "every matcher: {seen:?}");
}

#[test]
fn query_kind_analysis() {
    let kind = |p: &str, syntax, flags| {
        let q = build(&pats(&[p]), syntax, Flags::parse(flags)).unwrap();
        (q.kind(), q.case())
    };
    use logsieve::CaseMode::*;
    // A regex that is a plain literal is noticed, escapes included.
    assert_eq!(
        kind("ERROR_503", Syntax::Regex, ""),
        (QueryKind::Literal, Sensitive)
    );
    assert_eq!(
        kind(r"192\.168\.1\.", Syntax::Regex, ""),
        (QueryKind::Literal, Sensitive)
    );
    assert_eq!(
        kind("(?:abc)", Syntax::Regex, ""),
        (QueryKind::Literal, Sensitive)
    );
    assert_eq!(
        kind("error", Syntax::Regex, "i"),
        (QueryKind::Literal, Ascii)
    );
    // 'k' and 's' fold to non-ASCII letters: not an ASCII literal under -i.
    assert_eq!(
        kind("kernel", Syntax::Regex, "i"),
        (QueryKind::Regex, Unicode)
    );
    assert_eq!(
        kind("a.b", Syntax::Regex, ""),
        (QueryKind::Regex, Sensitive)
    );
    assert_eq!(
        kind("a.b", Syntax::Fixed, ""),
        (QueryKind::Literal, Sensitive)
    );
    assert_eq!(kind("é", Syntax::Fixed, "i"), (QueryKind::Literal, Unicode));
    assert_eq!(
        kind("abc", Syntax::Wildcard, ""),
        (QueryKind::Literal, Sensitive)
    );
    assert_eq!(
        kind("a*c", Syntax::Wildcard, ""),
        (QueryKind::Wildcard, Sensitive)
    );
    assert_eq!(
        kind("abc", Syntax::Fuzzy(0), "i"),
        (QueryKind::Literal, Ascii)
    );
    assert_eq!(
        kind("abc", Syntax::Fuzzy(2), ""),
        (QueryKind::Fuzzy, Sensitive)
    );
    // REGRESSION: `\n` is a literal newline that no line contains; it must
    // not be treated as a literal searched over the whole buffer.
    assert_eq!(kind(r"\n", Syntax::Regex, "").0, QueryKind::Regex);
    // A pattern with a newline is split into patterns.
    let q = build(&pats(&["a\nb"]), Syntax::Fixed, Flags::default()).unwrap();
    assert_eq!(q.patterns(), &[b"a".to_vec(), b"b".to_vec()]);
}

#[test]
fn errors_are_reported_not_panicked() {
    // An invalid regex: the message quotes the pattern and points at the
    // offending position with a caret.
    let err = build(&pats(&["ab(cd"]), Syntax::Regex, Flags::default()).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Pattern(_)), "{err:?}");
    let msg = err.to_string();
    let lines: Vec<&str> = msg.lines().collect();
    let pat_line = lines
        .iter()
        .position(|l| l.contains("ab(cd"))
        .unwrap_or_else(|| panic!("pattern not quoted: {msg}"));
    let caret = lines[pat_line + 1];
    let col = lines[pat_line].find("ab(cd").unwrap() + 2;
    assert_eq!(caret.find('^'), Some(col), "caret under '(': {msg}");

    let err = build(&pats(&["a{2,1}"]), Syntax::Regex, Flags::default()).unwrap_err();
    assert!(err.to_string().contains('^'), "{err}");

    // --fuzzy 4 is rejected; 3 is fine.
    let err = build(&pats(&["abc"]), Syntax::Fuzzy(4), Flags::default()).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Query(_)), "{err:?}");
    assert!(err.to_string().contains('4'), "{err}");
    assert!(build(&pats(&["abc"]), Syntax::Fuzzy(3), Flags::default()).is_ok());
    assert!(build(&pats(&["abc"]), Syntax::Fuzzy(1), Flags::parse("w")).is_err());
    assert!(build(&pats(&["abc"]), Syntax::Fuzzy(1), Flags::parse("x")).is_err());
    // No pattern at all; a regex that is not UTF-8.
    assert!(build(&[], Syntax::Fixed, Flags::default()).is_err());
    assert!(build(&pats(&[b"\xff"]), Syntax::Regex, Flags::default()).is_err());
    assert!(build(&pats(&[b"\xff"]), Syntax::Fixed, Flags::default()).is_ok());
}

#[test]
fn word_wildcard_over_invalid_utf8_ends() {
    // REGRESSION: `--wildcard -w '?'` (and `-o`, `--json`, colour: every
    // caller of find_iter_line) never returned on this line of invalid
    // UTF-8 (fuzz/findings/, query_build target).
    let corpus: &[u8] = b"e.r\xf8r:\x81\x05\x01\x01t\xea\xff\xff\xff\xff\xff\x8a\x8b\xdf\x90\n";
    for syntax in [Syntax::Wildcard, Syntax::Regex] {
        let p: &[u8] = if syntax == Syntax::Wildcard {
            b"?"
        } else {
            b"."
        };
        for i in [false, true] {
            let f = Flags {
                i,
                w: true,
                x: false,
                v: false,
            };
            check_against_oracle(corpus, &[p.to_vec()], syntax, f, Depth::Full).unwrap();
            let q = build(&[p.to_vec()], syntax, f).unwrap();
            let line = &corpus[..corpus.len() - 1];
            let found = q.find_iter_line(line);
            assert!(found.iter().all(|m| m.start < m.end && m.end <= line.len()));
            assert!(found.windows(2).all(|w| w[0].end <= w[1].start));
        }
    }
}

/// REGRESSION (fuzz/corpus/differential/seed-crash-ed92b4c3): `-w` with
/// `-x` built the `-x` regex but read it as the `-w` wrapper, and panicked
/// ("word wrapper has group 1") on a line of invalid UTF-8. `-x` wins, as
/// in rg and grep; every syntax, with and without `-i`, on valid and
/// invalid UTF-8, against the oracle.
#[test]
fn word_and_whole_line_together() {
    let corpora: [&[u8]; 4] = [
        b"or)\xad\n",
        b"foo\nfoo bar\n\xff\xfe\nfoo\xad\n\n",
        b"",
        b"a\r\nfoo\n foo \nFOO",
    ];
    let pats: [&[u8]; 4] = [b"", b"foo", b"fo.", b"f*"];
    let mut failures = Vec::new();
    for corpus in corpora {
        for p in pats {
            for syntax in [Syntax::Regex, Syntax::Fixed, Syntax::Wildcard] {
                for (i, v) in [(false, false), (true, false), (false, true), (true, true)] {
                    let f = Flags {
                        i,
                        w: true,
                        x: true,
                        v,
                    };
                    if let Err(e) =
                        check_against_oracle(corpus, &[p.to_vec()], syntax, f, Depth::Full)
                    {
                        failures.push(e);
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn find_iter_line_table() {
    let cases: &[(&[&str], &str, &[u8])] = &[
        (&["ab"], "", b"abab xab"),
        (&["aa"], "", b"aaaaa"),
        (&["ab", "abc", "b"], "", b"abcabc b"),
        (&["abc", "ab"], "", b"abcab"),
        (&["ab"], "i", b"AbaB"),
        (&["foo"], "w", b"foo foobar (foo) foo"),
        (&["a"], "w", b"a a a"),
        (&["foo"], "w", b"foo foo"),
    ];
    for &(ps, flags, line) in cases {
        let p = pats(ps);
        let f = Flags::parse(flags);
        let q = build(&p, Syntax::Fixed, f).unwrap();
        let want = naive_find_iter(&p, line, f.i, f.w);
        assert_eq!(q.find_iter_line(line), want, "{ps:?} -{flags} {line:?}");
    }
}

/// Known bug, not fixed yet: with `-w`, the regex wrapper consumes the
/// left boundary character, and the next search resumes after the previous
/// match, so a match whose left boundary is the previous match's last
/// character (a pattern ending in a non-word character) is missed by
/// `find_iter_line` (`-o`, colour, `--json` submatches). Line selection is
/// not affected.
#[test]
fn find_iter_line_word_adjacent_non_word_patterns() {
    for (p, line) in [(",", &b",,"[..]), (", ", b"a, , b")] {
        let p = pats(&[p]);
        let q = build(&p, Syntax::Fixed, Flags::parse("w")).unwrap();
        assert_eq!(
            q.find_iter_line(line),
            naive_find_iter(&p, line, false, true)
        );
    }
}

// ---------------------------------------------------------------------------
// Boundary sweeps
// ---------------------------------------------------------------------------

#[test]
fn sweep_needle_at_every_offset() {
    let queries: &[(&[&str], Syntax, &str)] = &[
        (&["needle"], Syntax::Fixed, ""),
        (&["needle"], Syntax::Fixed, "i"),
        (&["needle"], Syntax::Fixed, "w"),
        (&["needle", "xneedlex"], Syntax::Fixed, ""),
        (&["ne+dle"], Syntax::Regex, ""),
        (&["n*le"], Syntax::Wildcard, ""),
        (&["needle"], Syntax::Fuzzy(1), ""),
    ];
    let mut checked = 0;
    for off in 0..=40usize {
        // The needle at offset `off` of its line, in the middle of the
        // buffer, with a near miss and a folded copy around it.
        let mut hay = b"nedle\nNEEDLE-x\n".to_vec();
        hay.extend(std::iter::repeat_n(b'.', off));
        hay.extend_from_slice(b"needle\nxneedle\n");
        for &(ps, syntax, flags) in queries {
            let p = pats(ps);
            check_against_oracle(&hay, &p, syntax, Flags::parse(flags), Depth::Quick).unwrap();
            checked += 1;
        }
    }
    assert_eq!(checked, 41 * queries.len());
}

#[test]
fn sweep_variations() {
    let bases: &[&[u8]] = &[
        b"needle",
        b"x needle y\nneedle\n",
        b"a\r\nneedle\r\n\r\n",
        "é needle É\n".as_bytes(),
    ];
    let queries: &[(&[&str], Syntax, &str)] = &[
        (&["needle"], Syntax::Fixed, ""),
        (&["NEEDLE"], Syntax::Fixed, "i"),
        (&["needle"], Syntax::Fixed, "w"),
        (&["needle"], Syntax::Fixed, "x"),
        (&["needle"], Syntax::Fixed, "v"),
        (&["needle", "y"], Syntax::Fixed, ""),
        (&["é"], Syntax::Fixed, "i"),
        (&["n[e]+dle$"], Syntax::Regex, ""),
        (&["nee*e"], Syntax::Wildcard, ""),
        (&["neadle"], Syntax::Fuzzy(1), ""),
        (&[""], Syntax::Fixed, ""),
    ];
    for base in bases {
        for v in variations(base, 33) {
            for &(ps, syntax, flags) in queries {
                check_against_oracle(&v, &pats(ps), syntax, Flags::parse(flags), Depth::Quick)
                    .unwrap();
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Multi-chunk corpora (> 16 MiB: chunks are at least 4 MiB, so 4 threads
// really split)
// ---------------------------------------------------------------------------

fn big() -> &'static [u8] {
    use std::sync::OnceLock;
    static BIG: OnceLock<Vec<u8>> = OnceLock::new();
    BIG.get_or_init(|| {
        let data = generated(100_000, 11);
        assert!(data.len() > 16 << 20, "{} bytes", data.len());
        data
    })
}

#[test]
fn big_generated_corpus_every_thread_count() {
    let data = big();
    let queries: &[(&[&str], Syntax, &str, &str)] = &[
        (&["ERROR_503"], Syntax::Fixed, "", "memmem"),
        (&[r"192\.168\.1\."], Syntax::Regex, "", "memmem"),
        (
            &["error", "NullPointerException"],
            Syntax::Fixed,
            "",
            "aho-corasick",
        ),
        (&["ERROR"], Syntax::Fixed, "i", "aho-corasick+prefilter"),
        // -i on one literal: found by a byte or pair in either case
        // (`cpu::rare`, folded), under -v too.
        (
            &["nullpointerexception"],
            Syntax::Fixed,
            "i",
            "aho-corasick+prefilter",
        ),
        (&["TimeOut"], Syntax::Regex, "iv", "aho-corasick+prefilter"),
        // Sets found by a rare two-byte window of each (`cpu::Windows`):
        // the literals themselves, under -v, and a regex's required set.
        (
            &["ERROR_503", "NullPointerException", "queue depth"],
            Syntax::Fixed,
            "",
            "aho-corasick",
        ),
        (
            &["ERROR_503", "NullPointerException"],
            Syntax::Fixed,
            "v",
            "aho-corasick",
        ),
        (
            &[r"(?:ERROR_50[0-9]|NullPointerException)\b"],
            Syntax::Regex,
            "",
            "regex+prefilter",
        ),
        (
            &[r"192\.168\.1\.[0-9]+ "],
            Syntax::Regex,
            "",
            "regex+prefilter",
        ),
        (&[r"[0-9]{4}-[0-9]{2}"], Syntax::Regex, "", "regex"),
        (&["error"], Syntax::Fixed, "w", "regex+prefilter"),
        (&["x"], Syntax::Fixed, "v", "memmem"),
        (&["GET /*HTTP"], Syntax::Wildcard, "", "regex+prefilter"),
        // REGRESSION: `-x '.*rt=1\.879'` ran the regex over every byte (14x
        // rg); the required literal is inside, after `.*`.
        (&[r".*rt=1\.8"], Syntax::Regex, "x", "regex+prefilter"),
        (
            &[r"(?:queue|pool) \w+"],
            Syntax::Regex,
            "i",
            "regex+prefilter",
        ),
        (
            &["error", "timeout"],
            Syntax::Fixed,
            "iv",
            "aho-corasick+prefilter",
        ),
        // Many literals behind one prefix (`cpu::rare::Prefixed`), and
        // as a regex's required set.
        (
            &[
                "user=u10",
                "user=u11",
                "user=u12",
                "user=u13",
                "user=u14",
                "user=u15",
                "user=u16",
                "user=u17",
                "user=u18",
                "user=u19",
                "user=u20",
                "user=u21",
                "user=u22",
                "user=u23",
                "user=u24",
                "user=u25",
                "user=u26",
                "user=u27",
                "user=u280",
                "user=u2999",
            ],
            Syntax::Fixed,
            "",
            "aho-corasick",
        ),
        (
            &[r"user=u(?:10|11|12|13|14|15|16|17|18|19|20|21|22|23|24|25|26|27|28)\d "],
            Syntax::Regex,
            "",
            "regex+prefilter",
        ),
        (&[""], Syntax::Fixed, "", "all-lines"),
    ];
    for &(ps, syntax, flags, name) in queries {
        let p = pats(ps);
        let q = build(&p, syntax, Flags::parse(flags)).unwrap();
        assert_eq!(q.cpu_matcher_name(), name, "{ps:?}");
        check_against_oracle(data, &p, syntax, Flags::parse(flags), Depth::Full)
            .unwrap_or_else(|e| panic!("{ps:?}: {e}"));
    }
}

#[test]
fn big_fuzzy_threads_agree_and_sampled_lines_match_oracle() {
    let data = big();
    let p = pats(&["NullPointerExcepton"]);
    let f = Flags::default();
    let q = build(&p, Syntax::Fuzzy(1), f).unwrap();
    let doc = Document::from_bytes("big", data.to_vec());
    let one = search_doc(&doc, &q, &CpuOptions::default());
    assert!(one.count > 0, "the generator writes NullPointerException");
    for threads in [2, 4] {
        for want in [Want::Count, Want::Lines] {
            let got = search_doc(
                &doc,
                &q,
                &CpuOptions {
                    threads,
                    want,
                    max_count: None,
                    line_ids: true,
                },
            );
            assert_eq!(got.count, one.count, "threads {threads} {want:?}");
            if want == Want::Lines {
                assert_eq!(got.lines, one.lines, "threads {threads}");
            }
        }
    }
    // The oracle is brute force: check every selected line and a sample of
    // the others.
    let oracle = NaiveMatcher::new(&p, Syntax::Fuzzy(1), f);
    let selected: BTreeSet<u64> = one.lines.iter().copied().collect();
    for (i, line) in naive_lines(data).iter().enumerate() {
        if selected.contains(&(i as u64)) || i % 97 == 0 {
            assert_eq!(
                oracle.is_match(line),
                selected.contains(&(i as u64)),
                "line {i}: {:?}",
                String::from_utf8_lossy(line)
            );
        }
    }
}

#[test]
fn big_corpus_with_a_megabyte_line() {
    // Short lines, a 1.5 MiB line with matches at both ends, short lines:
    // 4 chunk targets fall inside the long line.
    let mut data = Vec::new();
    for i in 0..160_000 {
        data.extend_from_slice(format!("short line {i} ok\n").as_bytes());
    }
    data.extend_from_slice(b"needle ");
    data.extend(std::iter::repeat_n(b'z', 3 << 19));
    data.extend_from_slice(b" needle\r\n");
    for i in 0..400_000 {
        data.extend_from_slice(format!("tail {i} needle? no: nee dle\n").as_bytes());
    }
    data.extend_from_slice(b"needle");
    // Chunks are at least 4 MiB: > 16 MiB so that 4 threads split.
    assert!(data.len() > 16 << 20);
    for (ps, syntax, flags) in [
        (&["needle"][..], Syntax::Fixed, ""),
        (&["needle"], Syntax::Fixed, "w"),
        (&["needle$"], Syntax::Regex, ""),
        (&["needle"], Syntax::Fixed, "x"),
        (&["needle", "ok"], Syntax::Fixed, "v"),
    ] {
        check_against_oracle(&data, &pats(ps), syntax, Flags::parse(flags), Depth::Full)
            .unwrap_or_else(|e| panic!("{ps:?} -{flags}: {e}"));
    }
}

// ---------------------------------------------------------------------------
// Random corpora
// ---------------------------------------------------------------------------

fn corpus_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(0..PIECES.len(), 0..80).prop_map(|idx| assemble(PIECES, &idx))
}

fn literal_patterns() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(
        prop::collection::vec(0..PATTERN_PIECES.len(), 0..4)
            .prop_map(|idx| assemble(PATTERN_PIECES, &idx)),
        1..4,
    )
}

/// Regex fragments without look-around (the oracle checks `-w` spans by
/// slicing the line, where `^`/`\b` would change meaning; the table covers
/// anchors).
const REGEX_PIECES: &[&str] = &[
    "a",
    "b",
    "foo",
    "error",
    "k",
    "s",
    "é",
    "σ",
    "a+",
    "[0-9]+",
    "fo+",
    "\\s",
    "\\S",
    "(?:ab|ba)",
    "é|É",
    "[^a]",
    ".",
    "\\w+",
    "\\W",
    "x?",
    "[a-z]{2}",
    "(?i:err)",
    "\\n",
    "[\\s\\S]",
    " ",
    "[^x]*",
];

fn regex_patterns() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(
        prop::collection::vec(0..REGEX_PIECES.len(), 1..4).prop_map(|idx| {
            idx.iter()
                .map(|&i| REGEX_PIECES[i])
                .collect::<String>()
                .into_bytes()
        }),
        1..3,
    )
}

const WILD_PIECES: &[&[u8]] = &[
    b"*",
    b"?",
    b"a",
    b"b",
    b"foo",
    b"error",
    b" ",
    b":",
    b"k",
    "é".as_bytes(),
    b"\xff",
];

fn wildcard_patterns() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(
        prop::collection::vec(0..WILD_PIECES.len(), 1..5)
            .prop_map(|idx| assemble(WILD_PIECES, &idx)),
        1..3,
    )
}

fn run_random(corpus: &[u8], p: &[Vec<u8>], syntax: Syntax, f: Flags) -> Result<(), TestCaseError> {
    check_against_oracle(corpus, p, syntax, f, Depth::Full).map_err(TestCaseError::fail)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn random_literal(corpus in corpus_strategy(), p in literal_patterns(), f in flags_strategy(true)) {
        run_random(&corpus, &p, Syntax::Fixed, f)?;
    }

    #[test]
    fn random_literal_as_regex(corpus in corpus_strategy(), p in literal_patterns(), f in flags_strategy(true)) {
        // Literal text given as a regex (escaped): the analysis must find the
        // literal and keep regex semantics (Unicode -i).
        let escaped: Vec<Vec<u8>> = p
            .iter()
            .filter_map(|l| std::str::from_utf8(l).ok().map(|s| regex_syntax::escape(s).into_bytes()))
            .collect();
        prop_assume!(!escaped.is_empty());
        run_random(&corpus, &escaped, Syntax::Regex, f)?;
    }

    #[test]
    fn random_regex(corpus in corpus_strategy(), p in regex_patterns(), f in flags_strategy(true)) {
        run_random(&corpus, &p, Syntax::Regex, f)?;
    }

    #[test]
    fn random_prefiltered_regex((corpus, p, f) in prefilter_case()) {
        // Prefilter + verify must equal the regex crate alone, line by line.
        run_random(&corpus, &p, Syntax::Regex, f)?;
    }

    #[test]
    fn random_wildcard(corpus in corpus_strategy(), p in wildcard_patterns(), f in flags_strategy(true)) {
        run_random(&corpus, &p, Syntax::Wildcard, f)?;
    }

    #[test]
    fn random_fuzzy(
        corpus in prop::collection::vec(0..PIECES.len(), 0..40).prop_map(|idx| assemble(PIECES, &idx)),
        p in literal_patterns(),
        k in 0u8..=3,
        f in flags_strategy(false),
    ) {
        run_random(&corpus, &p, Syntax::Fuzzy(k), f)?;
    }

    #[test]
    fn random_find_iter_line(
        line in prop::collection::vec(0..PIECES.len(), 0..30)
            .prop_map(|idx| assemble(PIECES, &idx).into_iter().filter(|&b| b != b'\n').collect::<Vec<u8>>()),
        p in literal_patterns(),
        i in any::<bool>(),
        w in any::<bool>(),
    ) {
        // Non-empty ASCII literals: the case where the naive finder's ASCII
        // folding is the documented one.
        let p: Vec<Vec<u8>> = p.into_iter().filter(|l| !l.is_empty() && l.is_ascii()).collect();
        prop_assume!(!p.is_empty());
        let q = build(&p, Syntax::Fixed, Flags { i, w, ..Flags::default() }).unwrap();
        prop_assert_eq!(q.find_iter_line(&line), naive_find_iter(&p, &line, i, w), "matcher {}", q.cpu_matcher_name());
    }
}

/// 150 literals behind one prefix: the prefix table's set (100 or more)
/// found by the prefix and a key (`cpu::rare::Prefixed`), on every thread
/// count, against the oracle.
#[test]
fn big_many_literals_behind_a_prefix() {
    let ps: Vec<String> = (0..150)
        .map(|k| format!("user=u{}", 1000 + k * 7))
        .collect();
    let p: Vec<Vec<u8>> = ps.iter().map(|s| s.clone().into_bytes()).collect();
    let q = build(&p, Syntax::Fixed, Flags::parse("")).unwrap();
    assert_eq!(q.cpu_matcher_name(), "prefix-table");
    check_against_oracle(big(), &p, Syntax::Fixed, Flags::parse(""), Depth::Full)
        .unwrap_or_else(|e| panic!("{e}"));
}
