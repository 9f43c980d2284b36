//! A request's scope (`SearchOptions::scope`: documents and a time
//! window) on every backend against the naive oracle: a search keeps the
//! lines of the scope's documents whose time is inside the window, `-m`
//! counted inside it; per-pattern counts equal the counts over a copy
//! holding the scope's lines alone; stats count the scope's lines. GPU
//! rows run on whatever adapter exists (lavapipe in CI), several
//! segments each; without one they say so and pass, unless
//! `LOGSIEVE_REQUIRE_GPU=1`.

mod common;

use common::{build, copts, generated, naive, pats, Flags};
use logsieve::stats::{Columns, StatsQuery, NO_TIME};
use logsieve::{BackendChoice, Corpus, Document, Scope, SearchOptions, Session, Syntax, Want};

/// Three generated files and one whose lines have no time.
fn corpus() -> Corpus {
    let mut c = Corpus::new();
    for (i, seed) in [3u64, 5, 7].into_iter().enumerate() {
        c.push(Document::from_bytes(
            format!("f{i}.log"),
            generated(1500, seed),
        ));
    }
    c.push(Document::from_bytes(
        "untimed.log",
        b"ERROR no time here\nGET / plain\nuser=7 ERROR again\n".to_vec(),
    ));
    c
}

fn sessions() -> Vec<(Session, BackendChoice)> {
    let mk = || {
        let c = corpus();
        let cols = Columns::build(&c, &copts());
        let mut s = Session::new(c);
        s.set_columns(cols);
        s
    };
    let mut out = vec![(mk(), BackendChoice::Cpu)];
    #[cfg(feature = "gpu")]
    if let Some(ctx) =
        logsieve::gpu::or_skip("scope GPU tests", logsieve::gpu::GpuContext::shared())
    {
        let mut s = mk();
        let small = logsieve::gpu::UploadOptions {
            max_segment: Some(64 << 10),
            ..Default::default()
        };
        s.attach_gpu_with(&ctx, small).unwrap();
        out.push((s, BackendChoice::Gpu));
    }
    out
}

/// The scopes: document subsets × windows over the corpus's times.
fn scopes(cols: &Columns) -> Vec<Scope> {
    let (old, new) = (cols.oldest().unwrap(), cols.newest().unwrap());
    let mid = old + (new - old) / 2;
    let windows = [
        (None, None),
        (Some(mid), None),
        (None, Some(mid)),
        (Some(old + (new - old) / 4), Some(mid)),
        (Some(new + 1), None),
        (Some(old), Some(new + 1)),
    ];
    let mut out = Vec::new();
    for docs in [None, Some(vec![1]), Some(vec![2, 0]), Some(vec![3, 1])] {
        for &(since, until) in &windows {
            out.push(Scope {
                docs: docs.clone(),
                since,
                until,
            });
        }
    }
    out
}

/// The oracle's test: line `l` of document `d` is in `s`.
fn inside(cols: &Columns, s: &Scope, d: usize, l: u64) -> bool {
    if s.docs.as_ref().is_some_and(|ds| !ds.contains(&d)) {
        return false;
    }
    if s.since.is_none() && s.until.is_none() {
        return true;
    }
    let t = cols.docs()[d].times[l as usize];
    t != NO_TIME && s.since.is_none_or(|a| t >= a) && s.until.is_none_or(|b| t < b)
}

#[test]
fn a_scoped_search_keeps_the_lines_of_its_documents_inside_its_window() {
    let cases = [
        (pats(&["ERROR"]), Syntax::Fixed, ""),
        (pats(&["error"]), Syntax::Fixed, "i"),
        (pats(&["GET /"]), Syntax::Fixed, "v"),
        (pats(&[r"user=\d+", "timeout"]), Syntax::Regex, ""),
    ];
    let mut checked = 0;
    for (s, backend) in sessions() {
        let cols = s.columns().unwrap();
        for scope in scopes(cols) {
            for (p, syn, fl) in &cases {
                let f = Flags::parse(fl);
                let q = build(p, *syn, f).unwrap();
                for max_count in [None, Some(3)] {
                    for want in [Want::Lines, Want::Count] {
                        let opts = SearchOptions {
                            backend,
                            want,
                            max_count,
                            scope: scope.clone(),
                            ..Default::default()
                        };
                        let r = s.search(&q, &opts).unwrap();
                        for (d, doc) in s.corpus().docs().iter().enumerate() {
                            let mut lines: Vec<u64> = naive(doc.data(), p, *syn, f)
                                .into_iter()
                                .filter(|&l| inside(cols, &scope, d, l))
                                .collect();
                            lines.truncate(max_count.map_or(usize::MAX, |m| m as usize));
                            let what = format!(
                                "{backend:?} {p:?} -{fl} {scope:?} -m {max_count:?} {want:?} doc {d}"
                            );
                            assert_eq!(r.docs[d].count, lines.len() as u64, "{what}");
                            if want == Want::Lines {
                                assert_eq!(r.docs[d].lines, lines, "{what}");
                            }
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 0);
}

/// The scope's lines copied into a corpus of their own.
fn copy(s: &Session, scope: &Scope) -> Corpus {
    let cols = s.columns().unwrap();
    let mut c = Corpus::new();
    for (d, doc) in s.corpus().docs().iter().enumerate() {
        let mut data = Vec::new();
        for l in 0..doc.lines().len() {
            if inside(cols, scope, d, l) {
                data.extend_from_slice(doc.line(l));
                data.push(b'\n');
            }
        }
        c.push(Document::from_bytes(doc.name(), data));
    }
    c
}

#[test]
fn scoped_per_pattern_counts_equal_the_counts_over_the_scopes_lines() {
    // Two literals (each counted alone), a regex, and a set past the
    // one-pass threshold.
    let many: Vec<String> = (0..12).map(|i| format!("user={i}")).collect();
    let sets = [
        (pats(&["ERROR", "GET"]), Syntax::Fixed),
        (pats(&[r"user=\d", "timeout"]), Syntax::Regex),
        (pats(&many), Syntax::Fixed),
    ];
    for (s, backend) in sessions() {
        for scope in scopes(s.columns().unwrap()) {
            let alone = Session::new(copy(&s, &scope));
            for (p, syn) in &sets {
                let q = build(p, *syn, Flags::default()).unwrap();
                // The GPU counts literals only: a regex set forced there
                // is refused whatever the scope.
                let backend = match (backend, syn) {
                    (BackendChoice::Gpu, Syntax::Regex) => BackendChoice::Auto,
                    _ => backend,
                };
                let opts = SearchOptions {
                    backend,
                    scope: scope.clone(),
                    ..Default::default()
                };
                let got = s.count_per_pattern(&q, &opts).unwrap();
                let want = alone
                    .count_per_pattern(&q, &SearchOptions::default())
                    .unwrap();
                let what = format!("{backend:?} {p:?} {scope:?}");
                assert_eq!(got.lines, want.lines, "{what}");
                assert_eq!(got.occurrences, want.occurrences, "{what}");
            }
        }
    }
}

#[test]
fn scoped_stats_count_the_scopes_lines() {
    for (s, backend) in sessions() {
        let cols = s.columns().unwrap();
        let q = build(&pats(&["ERROR"]), Syntax::Fixed, Flags::default()).unwrap();
        for scope in scopes(cols) {
            for search in [None, Some(&q)] {
                let sq = StatsQuery {
                    search,
                    ..Default::default()
                };
                let opts = SearchOptions {
                    backend,
                    scope: scope.clone(),
                    ..Default::default()
                };
                let (got, _) = s.stats(&sq, &opts).unwrap();
                let mut want = 0u64;
                for (d, doc) in s.corpus().docs().iter().enumerate() {
                    let hits = naive(
                        doc.data(),
                        &pats(&["ERROR"]),
                        Syntax::Fixed,
                        Flags::default(),
                    );
                    for l in 0..doc.lines().len() {
                        if inside(cols, &scope, d, l)
                            && (search.is_none() || hits.binary_search(&l).is_ok())
                        {
                            want += 1;
                        }
                    }
                }
                assert_eq!(
                    got.selected,
                    want,
                    "{backend:?} {scope:?} search {}",
                    search.is_some()
                );
            }
        }
    }
}

/// `Columns::span` of a document subset: the oldest and newest time of the
/// subset's stamped lines, against a pass over every kept line's time
/// (sorted documents, one out of order, and one without times).
#[test]
fn the_span_of_named_documents_is_that_of_their_lines() {
    let mut c = corpus();
    c.push(Document::from_bytes(
        "shuffled.log",
        b"2026-11-24T10:05:00Z b\n2026-11-24T09:00:00Z a\nno time\n2026-11-24T11:00:00Z c\n"
            .to_vec(),
    ));
    let cols = Columns::build(&c, &copts());
    let n = c.docs().len();
    assert_eq!(cols.span(None), (cols.oldest(), cols.newest()));
    for mask in 0u32..(1 << n) {
        let docs: Vec<usize> = (0..n).filter(|d| mask >> d & 1 == 1).collect();
        let times: Vec<i64> = docs
            .iter()
            .flat_map(|&d| cols.docs()[d].times.iter().copied())
            .filter(|&t| t != NO_TIME)
            .collect();
        let want = (times.iter().min().copied(), times.iter().max().copied());
        assert_eq!(cols.span(Some(&docs)), want, "documents {docs:?}");
    }
}
