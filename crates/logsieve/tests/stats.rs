//! The columnar pipeline (time range → search → group-by): timestamp
//! formats, detection on the loghub samples, inheritance, windows, fields,
//! and the CPU path (1 and N threads) against a naive oracle. The GPU path
//! is checked against the CPU path in `stats_gpu.rs`.

// Queries are built up field by field on purpose: each step reads as the
// flag it stands for.
#![allow(clippy::field_reassign_with_default)]

use std::collections::HashMap;

use logsieve::stats::{
    format_ms, run_cpu, ColumnOptions, Columns, FieldSpec, Stats, StatsQuery, TimeFormat,
    TimeRules, NO_TIME,
};
use logsieve::{Corpus, Document, Query, QueryBuilder, Syntax};

/// (format, line, expected time) — year-less formats use the year 2020.
const FORMATS: &[(TimeFormat, &str, &str)] = &[
    (
        TimeFormat::Iso,
        "2015-10-18 18:01:47,978 INFO [main] x",
        "2015-10-18T18:01:47.978Z",
    ),
    (
        TimeFormat::Iso,
        "2026-11-20T00:00:00.123Z web-01 x",
        "2026-11-20T00:00:00.123Z",
    ),
    (
        TimeFormat::Iso,
        "2026-11-20T01:00:00+01:00 x",
        "2026-11-20T00:00:00.000Z",
    ),
    (
        TimeFormat::Iso,
        "2026-11-20T01:00:00.5+0130 x",
        "2026-11-19T23:30:00.500Z",
    ),
    (
        TimeFormat::Iso,
        "2026-11-20 00:00:00-05 x",
        "2026-11-20T05:00:00.000Z",
    ),
    (
        TimeFormat::Iso,
        "2017-05-16 00:00:00.008123 25746 INFO",
        "2017-05-16T00:00:00.008Z",
    ),
    (
        TimeFormat::Iso,
        "2016-09-28 04:30:30, Info CBS",
        "2016-09-28T04:30:30.000Z",
    ),
    (
        TimeFormat::Iso,
        "2024-02-29T23:59:59Z leap day",
        "2024-02-29T23:59:59.000Z",
    ),
    (
        TimeFormat::Apache,
        "[Sun Dec 04 04:47:44 2005] [notice] x",
        "2005-12-04T04:47:44.000Z",
    ),
    (
        TimeFormat::Clf,
        "1.2.3.4 - - [04/Dec/2005:04:47:44 +0100] \"GET /\"",
        "2005-12-04T03:47:44.000Z",
    ),
    (
        TimeFormat::Slash,
        "17/06/09 20:10:40 INFO x",
        "2017-06-09T20:10:40.000Z",
    ),
    (
        TimeFormat::Slash,
        "2017/06/09 20:10:40 INFO x",
        "2017-06-09T20:10:40.000Z",
    ),
    (
        TimeFormat::Compact,
        "081109 203615 148 INFO dfs",
        "2008-11-09T20:36:15.000Z",
    ),
    (
        TimeFormat::Dashed,
        "20171223-22:15:29:606|Step_LSC|1|x",
        "2017-12-23T22:15:29.606Z",
    ),
    (
        TimeFormat::Dashed,
        "20171224-1:2:35:789|x",
        "2017-12-24T01:02:35.789Z",
    ),
    (
        TimeFormat::Syslog,
        "Jun 14 15:16:01 combo sshd[1]: x",
        "2020-06-14T15:16:01.000Z",
    ),
    (
        TimeFormat::Syslog,
        "Jul  1 09:00:55 mac kernel[0]: x",
        "2020-07-01T09:00:55.000Z",
    ),
    (
        TimeFormat::Logcat,
        "03-17 16:13:38.811  1702  2395 D Win: x",
        "2020-03-17T16:13:38.811Z",
    ),
    (
        TimeFormat::MonthDot,
        "[10.30 16:49:06] chrome.exe - x",
        "2020-10-30T16:49:06.000Z",
    ),
    (
        TimeFormat::Epoch,
        "1117838570 x",
        "2005-06-03T22:42:50.000Z",
    ),
    (
        TimeFormat::Epoch,
        "1117838570123 x",
        "2005-06-03T22:42:50.123Z",
    ),
    (
        TimeFormat::Epoch,
        "- 1131566461 2005.11.09 dn228 Nov 9 12:01:01 x",
        "2005-11-09T20:01:01.000Z",
    ),
];

/// Lines no format may accept.
const NOT_TIMES: &[&str] = &[
    "2015-13-18 18:01:47 bad month",
    "2015-02-30 18:01:47 bad day",
    "2015-10-18 25:01:47 bad hour",
    "Foo 14 15:16:01 bad month name",
    "12345678901 eleven digits",
    "081109 203675 bad seconds",
    "\tat com.acme.Foo.bar(Foo.java:12)",
    "",
];

fn doc_of(lines: &[&str]) -> Corpus {
    let mut s = lines.join("\n");
    s.push('\n');
    Corpus::from_bytes("t.log", s.into_bytes())
}

fn cols(corpus: &Corpus, fields: Vec<FieldSpec>) -> Columns {
    Columns::build(
        corpus,
        &ColumnOptions {
            year: 2020,
            fields,
            ..Default::default()
        },
    )
}

#[test]
fn every_format_parses_and_is_detected() {
    for &(f, line, want) in FORMATS {
        // Detected from a one-line sample, and forced with --time-format.
        for only in [None, Some(f)] {
            let r = TimeRules::detect(std::iter::once(line.as_bytes()), only, 2020);
            let st = r
                .stamp(line.as_bytes(), 2020)
                .unwrap_or_else(|| panic!("{f}: no time in {line:?} (rules {r:?})"));
            assert_eq!(format_ms(st.ms), want, "{f} {line:?}");
            if only.is_none() {
                assert_eq!(st.format, f, "{line:?} detected as {}", st.format);
            }
        }
        // The example in the docs parses too.
        assert!(
            f.parse(f.example().as_bytes(), 2020).is_some(),
            "{f} example"
        );
        assert_eq!(TimeFormat::from_name(f.name()), Some(f));
    }
    assert_eq!(TimeFormat::from_name("log4j"), Some(TimeFormat::Iso));
    assert_eq!(TimeFormat::from_name("nope"), None);
}

#[test]
fn non_times_are_rejected() {
    for line in NOT_TIMES {
        let r = TimeRules::detect(std::iter::once(line.as_bytes()), None, 2020);
        assert_eq!(
            r.stamp(line.as_bytes(), 2020),
            None,
            "{line:?} (rules {r:?})"
        );
    }
}

#[test]
fn year_comes_from_the_options() {
    let c = doc_of(&["Jun 14 15:16:01 combo x"]);
    for (year, doc_years, want) in [
        (2020, vec![], "2020-06-14T15:16:01.000Z"),
        (2020, vec![2011], "2011-06-14T15:16:01.000Z"),
        (1999, vec![], "1999-06-14T15:16:01.000Z"),
    ] {
        let opts = ColumnOptions {
            year,
            doc_years,
            ..Default::default()
        };
        let cols = Columns::build(&c, &opts);
        assert_eq!(format_ms(cols.docs()[0].times[0]), want);
    }
}

#[test]
fn yearless_lines_take_the_year_of_the_newest_dated_line() {
    // REGRESSION: in-memory input (no modification time: `serve --demo`)
    // dated its year-less syslog lines in 1970.
    let c = doc_of(&[
        "2026-11-20T10:00:00Z web-01 INFO ok",
        "Nov 20 10:00:05 web-01 sshd[1]: Accepted",
        "2026-11-20T10:00:09Z web-01 INFO ok",
    ]);
    let cols = Columns::build(&c, &ColumnOptions::default());
    let d = &cols.docs()[0];
    assert_eq!(format_ms(d.times[1]), "2026-11-20T10:00:05.000Z");
    assert_eq!(
        format_ms(cols.oldest().unwrap()),
        "2026-11-20T10:00:00.000Z"
    );
    // A year-less document beside a dated one takes the corpus's.
    let mut c = doc_of(&["Dec 30 23:59:00 h a", "Jan  2 00:00:01 h b"]);
    c.push(Document::from_bytes(
        "b",
        b"2026-01-05T00:00:00Z x\n".to_vec(),
    ));
    let cols = Columns::build(&c, &ColumnOptions::default());
    let t: Vec<String> = cols.docs()[0].times.iter().map(|&t| format_ms(t)).collect();
    // A jump back by months is a new year (REGRESSION: Proxifier's
    // 10.30 -> 07.26 came out unsorted).
    assert_eq!(t, ["2025-12-30T23:59:00.000Z", "2026-01-02T00:00:01.000Z"]);
    assert!(cols.docs()[0].sorted);
}

#[test]
fn appended_yearless_lines_keep_the_loaded_lines_year() {
    // REGRESSION: under `serve --follow`, a file written 2026-11-24 had its
    // `Dec 10` lines in 2025 and appended `Dec 10` lines in 2026.
    let mtime = logsieve::stats::time::days_from_civil(2026, 11, 24) * 86_400_000;
    let mut c = doc_of(&["Dec 10 06:55:46 LabSZ sshd[1]: a"]);
    let opts = ColumnOptions {
        doc_mtimes: vec![Some(mtime)],
        ..Default::default()
    };
    let mut cols = Columns::build(&c, &opts);
    c.append(
        0,
        b"Dec 10 11:00:00 LabSZ sshd[2]: b\nJan  3 00:00:00 LabSZ sshd[3]: c\n",
    )
    .unwrap();
    cols.extend(&c);
    let t: Vec<String> = cols.docs()[0].times.iter().map(|&t| format_ms(t)).collect();
    assert_eq!(
        t,
        [
            "2025-12-10T06:55:46.000Z",
            "2025-12-10T11:00:00.000Z",
            "2026-01-03T00:00:00.000Z"
        ]
    );
}

#[test]
fn forced_format_ignores_others() {
    // Forced to syslog, the ISO line has no time and inherits.
    let c = doc_of(&["Jun 14 15:16:01 a x", "2020-06-14T15:17:00Z b y"]);
    let opts = ColumnOptions {
        year: 2020,
        time_format: Some(TimeFormat::Syslog),
        ..Default::default()
    };
    let cols = Columns::build(&c, &opts);
    let d = &cols.docs()[0];
    assert_eq!(d.stamped, 1);
    assert_eq!(d.times[0], d.times[1]);
}

#[test]
fn continuation_lines_inherit() {
    let c = doc_of(&[
        "stray line before any time",
        "2015-10-18 18:01:47,978 ERROR [main] boom",
        "java.lang.NullPointerException: x",
        "\tat com.acme.Foo.bar(Foo.java:12)",
        "",
        "2015-10-18 18:01:48,000 INFO [main] ok",
        "\tat trailing",
    ]);
    let cols = cols(&c, vec![FieldSpec::level()]);
    let d = &cols.docs()[0];
    let t = |s: &str| {
        let r = TimeRules::detect(std::iter::once(s.as_bytes()), None, 2020);
        r.stamp(s.as_bytes(), 2020).unwrap().ms
    };
    let a = t("2015-10-18 18:01:47,978 x");
    let b = t("2015-10-18 18:01:48,000 x");
    assert_eq!(d.times, vec![a, a, a, a, a, b, b]);
    assert_eq!(d.stamped, 2);
    assert!(d.sorted);
    // Continuation lines have no level of their own.
    let lv = &cols.fields()[0];
    let levels: Vec<Option<&[u8]>> = d.codes[0].iter().map(|&c| lv.value(c)).collect();
    assert_eq!(levels[1], Some(&b"ERROR"[..]));
    assert_eq!(levels[2], None);
    assert_eq!(levels[5], Some(&b"INFO"[..]));
}

#[test]
fn a_file_without_times() {
    let c = doc_of(&["no", "times", "here"]);
    let cols = cols(&c, vec![]);
    assert!(cols.docs()[0].times.iter().all(|&t| t == NO_TIME));
    assert_eq!(cols.newest(), None);
    // No window: every line; any window: none.
    let q = StatsQuery::default();
    assert_eq!(run_cpu(&c, &cols, &q, 1).unwrap().selected, 3);
    let mut q = StatsQuery::default();
    q.since_spec(&cols, "1h").unwrap();
    assert_eq!(run_cpu(&c, &cols, &q, 1).unwrap().selected, 0);
    let mut q = StatsQuery::default();
    q.histogram = Some(60_000);
    let s = run_cpu(&c, &cols, &q, 1).unwrap();
    assert_eq!(s.histogram.unwrap().counts, Vec::<u64>::new());
}

// ---- loghub samples -------------------------------------------------------

fn loghub_files() -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/loghub");
    let dir = if dir.exists() {
        dir
    } else {
        std::path::PathBuf::from("/work/shared/data/loghub")
    };
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut v: Vec<_> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    v.sort();
    v
}

/// The expected primary rule of each loghub sample (see FORMATS.md there).
fn loghub_expected(name: &str) -> Option<(TimeFormat, usize)> {
    Some(match name {
        "Android_2k.log" => (TimeFormat::Logcat, 0),
        "Apache_2k.log" => (TimeFormat::Apache, 0),
        "BGL_2k.log" => (TimeFormat::Epoch, 1),
        "HDFS_2k.log" => (TimeFormat::Compact, 0),
        "HPC_2k.log" => (TimeFormat::Epoch, 4),
        "Hadoop_2k.log" => (TimeFormat::Iso, 0),
        "HealthApp_2k.log" => (TimeFormat::Dashed, 0),
        "Linux_2k.log" | "Mac_2k.log" | "OpenSSH_2k.log" => (TimeFormat::Syslog, 0),
        "OpenStack_2k.log" => (TimeFormat::Iso, 1),
        "Proxifier_2k.log" => (TimeFormat::MonthDot, 0),
        "Spark_2k.log" => (TimeFormat::Slash, 0),
        "Thunderbird_2k.log" => (TimeFormat::Epoch, 1),
        "Windows_2k.log" | "Zookeeper_2k.log" => (TimeFormat::Iso, 0),
        _ => return None,
    })
}

#[test]
fn loghub_samples_get_a_format_and_every_line_a_time() {
    let files = loghub_files();
    if files.is_empty() {
        eprintln!("NOTE: loghub samples not found (../shared/data/loghub); skipping");
        return;
    }
    assert_eq!(files.len(), 16, "expected the 16 loghub samples");
    let mut hosts = HashMap::new();
    for p in &files {
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        let mut c = Corpus::new();
        c.push(Document::open(p, Default::default()).unwrap());
        let cols = cols(&c, vec![FieldSpec::level(), FieldSpec::host()]);
        let d = &cols.docs()[0];
        assert_eq!(d.times.len(), 2000, "{name}");
        assert_eq!(
            d.rules.rules.first().copied(),
            loghub_expected(&name),
            "{name}: rules {:?}",
            d.rules.rules
        );
        // Every line of these samples carries its own timestamp.
        assert_eq!(d.stamped, 2000, "{name}");
        assert!(d.times.iter().all(|&t| t != NO_TIME), "{name}");
        hosts.insert(name.clone(), cols.fields()[1].values.len());
        // The window of the whole range selects every line; stats agree
        // between 1 and 2 threads.
        let mut q = StatsQuery::default();
        q.since = cols.oldest();
        q.until = cols.newest().map(|t| t + 1);
        q.count_by = vec![0, 1];
        q.histogram = Some(3_600_000);
        let a = run_cpu(&c, &cols, &q, 1).unwrap();
        assert_eq!(a.selected, 2000, "{name}");
        assert_eq!(a, run_cpu(&c, &cols, &q, 2).unwrap(), "{name}");
        assert_eq!(a.groups.iter().map(|g| g.count).sum::<u64>(), 2000);
    }
    // The host rule: syslog hosts, and loghub's node column after an epoch.
    assert_eq!(hosts["Linux_2k.log"], 1);
    assert_eq!(hosts["OpenSSH_2k.log"], 1);
    assert!(hosts["Thunderbird_2k.log"] > 400);
    assert!(hosts["BGL_2k.log"] > 1500);
    assert_eq!(hosts["Hadoop_2k.log"], 0);
    assert_eq!(hosts["HDFS_2k.log"], 0);
}

// ---- windows, fields, the oracle ------------------------------------------

/// The naive oracle: every line, its time from the columns' own detection
/// redone line by line, a plain substring test, a HashMap of key vectors.
fn oracle(corpus: &Corpus, cols: &Columns, q: &StatsQuery, pat: Option<(&str, bool)>) -> Stats {
    let mut selected = 0;
    let mut groups: HashMap<Vec<Option<Vec<u8>>>, u64> = HashMap::new();
    let mut buckets: HashMap<i64, u64> = HashMap::new();
    for (doc, dc) in corpus.docs().iter().zip(cols.docs()) {
        for l in 0..doc.lines().len() as usize {
            let line = doc.line(l as u64);
            if let Some((p, invert)) = pat {
                let has = p.is_empty() || line.windows(p.len()).any(|w| w == p.as_bytes());
                if has == invert {
                    continue;
                }
            }
            let t = dc.times[l];
            let windowed = q.since.is_some() || q.until.is_some();
            if windowed
                && (t == NO_TIME
                    || q.since.is_some_and(|s| t < s)
                    || q.until.is_some_and(|u| t >= u))
            {
                continue;
            }
            selected += 1;
            if !q.count_by.is_empty() {
                let key = q
                    .count_by
                    .iter()
                    .map(|&f| cols.fields()[f].value(dc.codes[f][l]).map(<[u8]>::to_vec))
                    .collect();
                *groups.entry(key).or_default() += 1;
            }
            if let Some(b) = q.histogram {
                if t != NO_TIME {
                    *buckets.entry(t.div_euclid(b)).or_default() += 1;
                }
            }
        }
    }
    let mut g: Vec<logsieve::stats::Group> = groups
        .into_iter()
        .map(|(key, count)| logsieve::stats::Group { key, count })
        .collect();
    g.sort_by(|a, b| {
        b.count.cmp(&a.count).then_with(|| {
            let ka = a.key.iter().map(|v| (v.is_none(), v.as_deref()));
            let kb = b.key.iter().map(|v| (v.is_none(), v.as_deref()));
            ka.cmp(kb)
        })
    });
    let histogram = q.histogram.map(|b| {
        let lo = q.since.or(cols.oldest());
        let hi = q.until.or(cols.newest().map(|n| n + 1));
        match (lo, hi) {
            (Some(lo), Some(hi)) if hi > lo => {
                let start = lo.div_euclid(b) * b;
                let n = (hi - start + b - 1) / b;
                let counts = (0..n)
                    .map(|k| buckets.get(&(start / b + k)).copied().unwrap_or(0))
                    .collect();
                logsieve::stats::Histogram {
                    start,
                    bucket: b,
                    counts,
                }
            }
            (Some(lo), _) => logsieve::stats::Histogram {
                start: lo.div_euclid(b) * b,
                bucket: b,
                counts: vec![],
            },
            _ => logsieve::stats::Histogram {
                start: 0,
                bucket: b,
                counts: vec![],
            },
        }
    });
    Stats {
        selected,
        groups: g,
        histogram,
    }
}

fn fixed(p: &str, invert: bool) -> Query {
    QueryBuilder::new()
        .syntax(Syntax::Fixed)
        .invert(invert)
        .build(&[p])
        .unwrap()
}

/// Runs `q` with and without the search on 1 and 3 threads, against the
/// oracle.
fn check_all(corpus: &Corpus, cols: &Columns, q: &StatsQuery, what: &str) {
    for pat in [
        None,
        Some(("192.168.1.", false)),
        Some(("192.168.1.", true)),
        Some(("", false)),
    ] {
        let query = pat.map(|(p, v)| fixed(p, v));
        let mut q2 = q.clone();
        q2.search = query.as_ref();
        let want = oracle(corpus, cols, &q2, pat);
        for threads in [1, 3] {
            let got = run_cpu(corpus, cols, &q2, threads).unwrap();
            assert_eq!(got, want, "{what}, pattern {pat:?}, {threads} threads");
        }
    }
}

/// An unsorted log with continuation lines, hosts, levels, IPs.
fn unsorted_corpus() -> Corpus {
    doc_of(&[
        "2026-11-20T10:00:00.000Z web-01 INFO ok client=192.168.1.7",
        "2026-11-20T09:00:00.000Z web-02 ERROR failed client=10.0.0.1",
        "java.lang.IllegalStateException: 192.168.1.9",
        "\tat com.acme.X(X.java:1)",
        "Nov 20 10:30:00 node-01 sshd[1]: Accepted from 192.168.1.8",
        "2026-11-20T10:15:00.000Z web-01 WARN slow client=192.168.1.200",
        "2026-11-20T10:14:59.999Z web-03 INFO ok client=8.8.8.8",
        "10.1.2.3 - - [20/Nov/2026:10:45:00 +0000] \"GET / HTTP/1.1\" 200 1",
        "2026-11-20T08:00:00.000Z web-02 DEBUG early client=192.168.1.1",
    ])
}

#[test]
fn unsorted_input_windows_and_fields() {
    let c = unsorted_corpus();
    let cols = Columns::build(
        &c,
        &ColumnOptions {
            year: 2026,
            fields: vec![
                FieldSpec::host(),
                FieldSpec::level(),
                FieldSpec::parse("never=ZZZ(\\d+)QQQ").unwrap(),
                FieldSpec::parse("ip=client=(\\d+\\.\\d+\\.\\d+)\\.").unwrap(),
            ],
            ..Default::default()
        },
    );
    let d = &cols.docs()[0];
    assert!(!d.sorted);
    assert_eq!(d.stamped, 7);
    // The generator's three line shapes all get their own time.
    assert_eq!(format_ms(d.times[4]), "2026-11-20T10:30:00.000Z");
    assert_eq!(format_ms(d.times[7]), "2026-11-20T10:45:00.000Z");
    assert_eq!(d.times[2], d.times[1]);
    // A field regex that never matches: every code is 0, and counting by
    // it gives one group without a value.
    assert!(cols.fields()[2].values.is_empty());
    let mut q = StatsQuery::default();
    q.count_by = vec![2];
    let s = run_cpu(&c, &cols, &q, 1).unwrap();
    assert_eq!(s.groups.len(), 1);
    assert_eq!(s.groups[0].key, vec![None]);
    assert_eq!(s.groups[0].count, 9);

    let t = |s: &str| logsieve::stats::TimeSpec::parse(s).unwrap().resolve(0);
    let newest = cols.newest().unwrap();
    assert_eq!(format_ms(newest), "2026-11-20T10:45:00.000Z");
    let windows: Vec<(Option<i64>, Option<i64>, &str)> = vec![
        (None, None, "everything"),
        (
            Some(t("2026-11-20T10:15:00Z")),
            None,
            "since exactly at an entry",
        ),
        (
            None,
            Some(t("2026-11-20T10:15:00Z")),
            "until exactly at an entry",
        ),
        (
            Some(t("2026-11-20T10:14:59.999Z")),
            Some(t("2026-11-20T10:15:00Z")),
            "1 ms window",
        ),
        (
            Some(t("2026-11-20T10:15:00Z")),
            Some(t("2026-11-20T10:15:00Z")),
            "empty window",
        ),
        (Some(t("2026-11-20T11:00:00Z")), None, "after everything"),
        (None, Some(t("2026-11-20T07:00:00Z")), "before everything"),
        (
            Some(t("2026-11-20T10:30:00Z")),
            Some(t("2026-11-20T10:00:00Z")),
            "reversed",
        ),
        (Some(newest - 15 * 60_000), None, "last 15 minutes"),
    ];
    for (since, until, what) in windows {
        for count_by in [vec![], vec![0], vec![1], vec![0, 1], vec![3, 2, 0]] {
            for hist in [None, Some(60_000), Some(3_600_000), Some(7_000)] {
                let q = StatsQuery {
                    search: None,
                    since,
                    until,
                    count_by: count_by.clone(),
                    histogram: hist,
                };
                check_all(&c, &cols, &q, what);
            }
        }
    }
    // Edges: since is inclusive, until exclusive.
    let mut q = StatsQuery::default();
    q.since = Some(t("2026-11-20T10:15:00Z"));
    assert_eq!(run_cpu(&c, &cols, &q, 1).unwrap().selected, 3);
    q.since = None;
    q.until = Some(t("2026-11-20T10:15:00Z"));
    assert_eq!(run_cpu(&c, &cols, &q, 1).unwrap().selected, 6);
}

#[test]
fn sorted_input_uses_a_line_range_and_agrees() {
    let data = logsieve::gen::generate(&logsieve::gen::GenOptions {
        lines: 30_000,
        seed: 3,
        ..Default::default()
    });
    let c = Corpus::from_bytes("gen.log", data);
    let cols = Columns::build(
        &c,
        &ColumnOptions {
            year: 2026,
            fields: vec![FieldSpec::host(), FieldSpec::level()],
            ..Default::default()
        },
    );
    let d = &cols.docs()[0];
    // Every generated line has a time of its own except stack traces.
    assert!(d.stamped > 29_000, "stamped {}", d.stamped);
    assert!(d.sorted);
    let newest = cols.newest().unwrap();
    for (since, until) in [
        (Some(newest - 15 * 60_000), None),
        (Some(newest - 3_600_000), Some(newest - 1_800_000)),
        (None, None),
    ] {
        let q = StatsQuery {
            search: None,
            since,
            until,
            count_by: vec![0, 1],
            histogram: Some(60_000),
        };
        check_all(&c, &cols, &q, "generated");
    }
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let c = unsorted_corpus();
    let cols = cols(&c, vec![FieldSpec::host()]);
    let mut q = StatsQuery::default();
    assert!(q.since_spec(&cols, "yesterday").is_err());
    assert!(q.until_spec(&cols, "2026-02-30").is_err());
    assert!(q.count_by(&cols, &["nope"]).is_err());
    q.histogram = Some(0);
    assert!(run_cpu(&c, &cols, &q, 1).is_err());
    q.histogram = Some(1);
    q.since = Some(0);
    assert!(run_cpu(&c, &cols, &q, 1).is_err(), "too many buckets");
    // Columns of another corpus.
    let other = doc_of(&["x"]);
    assert!(run_cpu(&other, &cols, &StatsQuery::default(), 1).is_err());
}

mod random {
    use super::*;
    use proptest::prelude::*;

    fn line() -> impl Strategy<Value = String> {
        let ts = (0u32..4, 0u32..60, 0u32..1000).prop_map(|(h, m, ms)| (h, m, ms));
        (
            0u8..6,
            ts,
            0u8..4,
            0u8..5,
            prop::sample::select(vec!["ok", "192.168.1.5", "x192.168.1.", "192.168.10.1", ""]),
        )
            .prop_map(|(kind, (h, m, ms), host, lvl, msg)| {
                let lv = ["INFO", "WARN", "ERROR", "debug", "x"][lvl as usize];
                match kind {
                    0 | 1 => format!("2026-11-20T{h:02}:{m:02}:00.{ms:03}Z web-0{host} {lv} {msg}"),
                    2 => format!("Nov 20 {h:02}:{m:02}:00 node-{host} sshd[1]: {msg}"),
                    3 => format!("1.2.3.4 - - [20/Nov/2026:{h:02}:{m:02}:00 +0000] \"GET\" {msg}"),
                    4 => format!("\tat frame {msg}"),
                    _ => msg.to_string(),
                }
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
        #[test]
        fn random_logs_match_the_oracle(
            lines in prop::collection::vec(line(), 0..60),
            since in prop::option::of(0i64..4 * 3_600_000),
            len in prop::option::of(0i64..2 * 3_600_000),
            bucket in prop::option::of(prop::sample::select(vec![1000i64, 60_000, 3_600_000])),
            nested in any::<bool>(),
        ) {
            let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
            let c = doc_of(&refs);
            let cols = Columns::build(&c, &ColumnOptions {
                year: 2026,
                fields: vec![FieldSpec::host(), FieldSpec::level()],
                ..Default::default()
            });
            let base = 1_795_132_800_000i64;
            let since = since.map(|s| base + s);
            let until = since.zip(len).map(|(s, l)| s + l);
            let q = StatsQuery {
                search: None,
                since,
                until,
                count_by: if nested { vec![0, 1] } else { vec![1] },
                histogram: bucket,
            };
            check_all(&c, &cols, &q, "random");
        }
    }
}
